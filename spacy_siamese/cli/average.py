"""`average`: average the weights of trained pipelines and save the result (a "model soup")."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import (
    OUTPUT_PIPELINE,
    PAIRS_FORMAT,
    app,
    errors,
    fail,
    load_pipeline,
    pipeline_target,
    read_pair_records,
    save_pipeline,
)


@app.command("average")
def average_command(
    models: List[str] = typer.Argument(
        ..., help="Two or more trained pipelines of one config (directories or packages)"
    ),
    dev: Path = typer.Option(..., "--dev", help="Labelled dev pairs: the scores printed, and the thresholds tuned"),
    output: Optional[Path] = OUTPUT_PIPELINE,
    in_place: bool = typer.Option(False, "--in-place", help="Save the average over the first pipeline instead"),
    weights: Optional[str] = typer.Option(
        None, "--weights", help="Comma-separated weight of each pipeline, in order (default: equal)"
    ),
    format: str = PAIRS_FORMAT,
) -> None:
    """Average the weights of trained pipelines of one architecture and save the result with its
    decision and dedupe thresholds tuned on the dev pairs; print each pipeline's dev figures and
    the average's.

    Average pipelines trained further from one trained pipeline (e.g. `spacy train` with
    `--paths.init_weights`, other seeds, losses or teachers), not ones from different random
    starts. The config, settings and vocabulary are the first pipeline's; its meta gets the dev
    scores (`performance`) and what was averaged (`averaged`). Saved whole or not at all."""
    from ..averaging import average_on_dev, normalized_weights
    from ..evaluation.report import SCORE_COLUMNS as COLUMNS
    from ..evaluation.report import markdown_table
    from ..metrics import is_binary

    with errors():
        try:
            parsed = None if weights is None else [float(part) for part in weights.split(",")]
        except ValueError:
            fail(f"--weights: give numbers separated by commas, got {weights!r}")
        mix = normalized_weights(parsed, len(models))  # before the slow part
        others = [Path(model) for model in models[1:] if Path(model).exists()]  # not installed packages
        target = pipeline_target(Path(models[0]), output, in_place, [dev, *others])
        records = read_pair_records(dev, format=format)
        if len({r.label for r in records}) < 2:  # thresholds tuned on one kind are meaningless
            fail(
                f"Thresholds are tuned on duplicates and non-duplicates: all {len(records):,} pairs of {dev} are alike"
            )
        nlps = [load_pipeline(model) for model in models]
        averaged, scores = average_on_dev(nlps, records, weights=mix)
        rows = dict(zip([*models, f"average (saved to {target})"], scores))
        averaged.meta["averaged"] = {"pipelines": list(models), "weights": mix, "dev": str(dev)}
        save_pipeline(averaged, target)
        binary = is_binary([r.label for r in records])
        columns = COLUMNS["binary" if binary else "graded"]
        shown = [f"{w:.3g}" for w in mix] + [""]
        tuned = "thresholds tuned on them for every row" if binary else "graded: no threshold tuned"
        typer.echo(f"Dev pairs: {dev} ({len(records):,}; {tuned}).\n")
        table = [
            [name, weight, *("-" if row.get(key) is None else f"{row[key]:.3f}" for key in columns)]
            for (name, row), weight in zip(rows.items(), shown)
        ]
        typer.echo("\n".join(markdown_table(["pipeline", "weight", *columns.values()], table)))
