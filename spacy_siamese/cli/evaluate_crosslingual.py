"""`evaluate-crosslingual`: find each dev text's translation in the other language."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import MODEL, NAME, OUTPUT_JSON, OUTPUT_MD, app, errors, load_pipeline, require_file, versions


@app.command("evaluate-crosslingual")
def evaluate_crosslingual_command(
    model: str = MODEL,
    dev: Path = typer.Argument(..., help="Parallel JSONL of dev pairs (e.g. convert_crosslingual.py's dev.jsonl)"),
    langs: str = typer.Option("en,es", "--langs", help="The two languages' keys in the JSONL, comma-separated"),
    train: Optional[Path] = typer.Option(
        None, "--train", help="Parallel JSONL of the training pairs the baselines are fitted on"
    ),
    group: Optional[List[str]] = typer.Option(
        None, "--group", help="Evaluate only the dev pairs of this group (repeat for several; default: all)"
    ),
    opca: bool = typer.Option(True, "--opca/--no-opca", help="Also fit OPCA (with --train)"),
    seed: int = typer.Option(0, "--seed", help="Seed of the baselines' SVD"),
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
) -> None:
    """Cross-lingual retrieval: each dev text of one language is a query against all dev texts of
    the other, per dev group (sentences, news lines, pseudo-documents).

    acc@1 and MRR in both directions and their mean; --train adds TF-IDF cosine (words; and the
    pipe's words + n-grams), CL-LSI and OPCA fitted on the training pairs. A text that occurs in
    several dev pairs is not a wrong answer for itself: retrieving any copy of the answer, or any
    translation of a copy of the query, counts as right. A JSONL row with both the languages'
    keys and text1/text2/label is refused as ambiguous."""
    from ..corpora.parallel import read_parallel_jsonl
    from ..evaluation.crosslingual import crosslingual_markdown, evaluate_crosslingual
    from ..evaluation.report import write_report
    from ..files import check_outputs

    with errors():
        require_file(dev, train)
        check_outputs([dev, train, model], [output_json, output_md])
        pair = tuple(part.strip() for part in langs.split(","))
        if len(pair) != 2 or not all(pair) or pair[0] == pair[1]:
            raise ValueError(f"--langs takes two different language keys, e.g. en,es; got {langs!r}")
        dev_pairs = read_parallel_jsonl(dev, (pair[0], pair[1]))
        if group:
            dev_pairs = [p for p in dev_pairs if p.group in group]
            if not dev_pairs:
                raise ValueError(f"{dev} has no pair of group(s) {', '.join(group)}.")
        train_pairs = read_parallel_jsonl(train, (pair[0], pair[1])) if train is not None else []
        nlp = load_pipeline(model)
        report = evaluate_crosslingual(nlp, train_pairs, dev_pairs, baselines=train is not None, opca=opca, seed=seed)
        files = {"dev": str(dev), "train": None if train is None else str(train), "model": model}
        report.update(name=name, langs=list(pair), seed=seed, files=files, versions=versions())
        table = crosslingual_markdown(report)
        write_report(report, table, output_json, output_md)
        typer.echo(table)
