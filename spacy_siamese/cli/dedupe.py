"""`dedupe`: the duplicate pairs (and groups) of a collection, at corpus scale."""

import os
import shutil
from pathlib import Path
from typing import Dict, Optional

import typer

from ..defaults import CHUNK_SIZE
from .app import (
    BATCH,
    CANDIDATES_HELP,
    COLLECTION,
    DIMS,
    FIELD,
    MODEL,
    N_CANDIDATES,
    N_PROCESS_HELP,
    PRECISION,
    PROGRESS,
    TEXTS_FORMAT,
    THRESHOLD,
    K,
    app,
    dedupe_limit,
    errors,
    load_pipeline,
    read_collection,
    valid_n_process,
    versions,
    warnings_as_lines,
)


@app.command("dedupe")
def dedupe_command(
    model: str = MODEL,
    input: Path = COLLECTION,
    output: Path = typer.Option(..., "--output", "-o", help="JSONL of duplicate pairs: id1, id2, score, text1, text2"),
    threshold: Optional[float] = THRESHOLD,
    k: int = K,
    candidates: str = typer.Option("auto", "--candidates", help=CANDIDATES_HELP),
    n_candidates: int = N_CANDIDATES,
    groups: Optional[Path] = typer.Option(None, "--groups", help="Also write groups of duplicates (JSONL) here"),
    group_method: str = typer.Option(
        "communities", "--group-method", help="Groups: communities (no chaining) or components (connected)"
    ),
    min_size: int = typer.Option(2, "--min-size", help="Smallest group to write"),
    work_dir: Optional[Path] = typer.Option(
        None, "--work-dir", help="Vector store; a rerun resumes it (default: OUTPUT.work, removed after a finished run)"
    ),
    keep_work_dir: bool = typer.Option(
        False, "--keep-work-dir", help="Keep the default work dir after a finished run (e.g. to `search` it)"
    ),
    fresh: bool = typer.Option(False, "--fresh", help="Encode again from the start, not resuming --work-dir"),
    format: str = TEXTS_FORMAT,
    field: str = FIELD,
    batch_size: int = BATCH,
    chunk_size: int = typer.Option(CHUNK_SIZE, "--chunk-size", help="Docs per chunk of the vector store"),
    n_process: int = typer.Option(
        -1,
        "--n-process",
        "-n",
        callback=valid_n_process,
        help=f"{N_PROCESS_HELP}; -1 by default here, as dedupe is built for whole collections (encode and index: 1)",
    ),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write stage timings and settings as JSON"),
    precision: str = PRECISION,
    dims: Optional[int] = DIMS,
    progress: bool = PROGRESS,
) -> None:
    """Find the duplicate pairs of a collection with a trained pipeline.

    A doc's id is its JSONL record's 'id', else its position (0 for the first text; blank lines
    are skipped and reported). The collection is encoded in chunks into --work-dir: a stopped run,
    even a killed one, resumes there and gives the same pairs. A finished run removes the default
    work dir (OUTPUT.work) unless --keep-work-dir; a --work-dir given is kept. A score is the pipe's
    similarity."""
    from ..evaluation.report import write_json
    from ..files import check_outputs
    from ..search.corpus import check_candidates
    from ..search.dedupe import dedupe_collection
    from ..search.precision import check_precision
    from ..search.store import check_replaceable
    from ..util import timed

    with errors(), warnings_as_lines():
        keep_work_dir = keep_work_dir or work_dir is not None
        work_dir = work_dir or output.with_name(output.name + ".work")
        pipeline = [model] if Path(model).exists() else []  # a directory, not a package name
        check_outputs([input, *pipeline], [output, groups, stats_json], output_dirs=[work_dir])
        check_candidates(candidates)
        check_precision(precision, dims, 10**9)
        check_replaceable(work_dir)
        stages: Dict[str, float] = {}
        with timed(stages, "scan"):
            collection = read_collection(input, format, field)
        with timed(stages, "load"):
            nlp = load_pipeline(model)
            limit = dedupe_limit(nlp, threshold)
        stats = dedupe_collection(
            nlp, collection, output, work_dir, threshold=limit, groups=groups, k=k, candidates=candidates,
            c=n_candidates, method=group_method, min_size=min_size, fresh=fresh, chunk_size=chunk_size,
            batch_size=batch_size, n_process=n_process if n_process > 0 else os.cpu_count() or 1, progress=progress,
            precision=precision, dims=dims,
        )  # fmt: skip
        typer.echo(f"Wrote {stats['n_pairs']:,} duplicate pairs among {collection.n:,} docs to {output}")
        if groups is not None:
            typer.echo(f"Wrote {stats['n_groups']:,} groups to {groups}")
        if stats_json is not None:
            stats["stages_s"] = {**{name: round(seconds, 2) for name, seconds in stages.items()}, **stats["stages_s"]}
            write_json({**stats, "versions": versions()}, stats_json)
        if not keep_work_dir:  # ours, and of no more use: only a stopped run resumes it
            shutil.rmtree(work_dir)
