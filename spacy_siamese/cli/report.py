"""`report`: one summary of saved evaluations."""

from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from .app import OUTPUT_MD, app, errors, expand_paths, fail


@app.command("report")
def report_command(
    paths: List[str] = typer.Argument(
        ...,
        help="--output-json files of evaluate, evaluate-retrieval or evaluate-duplicates, directories or glob patterns",
    ),
    output_md: Optional[Path] = OUTPUT_MD,
) -> None:
    """Summarise saved evaluations (evaluate, evaluate-retrieval, evaluate-duplicates --output-json) in tables."""
    from ..evaluation.report import DETAILS, read_json, summary_markdown, write_text
    from ..files import check_outputs

    with errors():
        reports: Dict[str, Dict[str, Any]] = {}
        sources: Dict[str, Path] = {}
        for arg in paths:
            named = Path(arg).is_file()
            files = (
                [Path(arg)] if named else sorted(Path(arg).glob("*.json")) if Path(arg).is_dir() else expand_paths(arg)
            )
            if not files:
                fail(f"No evaluation JSON files found at {arg}")
            check_outputs(files, [output_md])
            for path in files:
                try:
                    rep = read_json(path)
                except ValueError as err:  # not JSON, or not UTF-8: say which file of a directory or pattern
                    fail(f"{path}: not a JSON file ({err})")
                if isinstance(rep, dict) and rep.get("task") in DETAILS and "results" in rep:
                    name = rep.get("name") or path.stem
                    if name in sources and sources[name].resolve() != path.resolve():
                        fail(
                            f"{sources[name]} and {path} are both named {name!r}: one would hide the other in "
                            "the summary. Give the evaluations distinct --name values."
                        )
                    reports[name], sources[name] = rep, path
                elif named:
                    fail(f"{path} is not an evaluation written by an evaluate command's --output-json")
        if not reports:
            fail(f"No evaluation results in {', '.join(paths)}")
        text = summary_markdown(reports)
        if output_md:
            write_text(text, output_md)
        typer.echo(text)
