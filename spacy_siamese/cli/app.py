"""The typer app, its shared options and helpers (written once for every command file).

The command modules import spaCy and the library inside their functions, so that `--help` and
`--version` import only typer and the option definitions (tests/cli/test_app.py checks it)."""

from __future__ import annotations

import platform
import warnings
from contextlib import closing, contextmanager
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, NoReturn, Optional, Sequence, Tuple

import typer
import typer.core

from .. import __version__
from ..defaults import BATCH_SIZE, CANDIDATES, FLAT_LIMIT, JSONL_SUFFIXES, TEACHER_KINDS

if TYPE_CHECKING:
    from spacy.language import Language

    from ..corpora import PairRecord
    from ..search.texts import Collection

# One name, short flag and default per meaning in every command (tests/cli/test_options.py); a
# short flag that spaCy's commands use means what it means there (-n: --n-process, -b: --batch-size,
# -o: --output, -l: --lang; -g is spaCy's --gpu-id). The library's defaults come from
# spacy_siamese.defaults, which imports nothing: `--help` imports no library module.
KINDS = TEACHER_KINDS  # teacher-train's --kind

app = typer.Typer(
    name="spacy_siamese",
    help="Evaluate siamese_similarity pipelines, convert pair files, index, search and deduplicate collections.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help is rich markup (and wraps at spaces only): write a literal "[" as "\\[".
    rich_markup_mode="rich",
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"spacy-siamese {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True, help="Show the version"),
) -> None:
    """Options before the command: --version."""


def _flag_type(option: typer.core.TyperOption, ctx: Any) -> Optional[str]:
    """No type column for a flag, which takes no value (typer's rich help shows `<bool>` there)."""
    return None if option.is_flag or option.count else _option_type(option, ctx)


_option_type = typer.core.TyperOption.display_type_rich
typer.core.TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign,assignment]

MODEL = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe (directory or package)")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Show progress bars (only on a terminal)")
OUTPUT_JSON = typer.Option(None, "--output-json", help="Write every number as JSON")
OUTPUT_MD = typer.Option(None, "--output-md", help="Write the Markdown table")
NAME = typer.Option("", "--name", help="A name for the evaluation, used in titles")
PAIRS_FORMAT = typer.Option("auto", "--format", "-f", help="Pair file format")
# Collections (index, dedupe, dedupe-ray)
COLLECTION = typer.Argument(..., help="Text file (one doc a line) or JSONL with a text field")
TEXTS_FORMATS = f"auto (JSONL for {', '.join(JSONL_SUFFIXES)}), text (one doc a line) or jsonl"
TEXTS_FORMAT = typer.Option("auto", "--format", "-f", help=TEXTS_FORMATS)
FIELD = typer.Option("text", "--field", help="JSONL field with the text (an 'id' field is kept)")
CANDIDATES_HELP = (
    "Where each doc's nearest docs are looked for: flat (every doc: exact), ivf or hnsw (a faiss index: "
    f"approximate; pip install 'spacy-siamese\\[ann]'), auto (flat up to {FLAT_LIMIT:,} docs, then ivf)"
)


def at_least(low: int) -> Callable[[int], int]:
    """An option's check of its lower bound (min= would widen the help's type column)."""

    def check(value: int) -> int:
        if value < low:
            raise typer.BadParameter(f"must be at least {low}, got {value}")
        return value

    return check


K = typer.Option(10, "--top-k", "-k", callback=at_least(1), help="Compare each doc with its k most similar others")
N_CANDIDATES = typer.Option(
    CANDIDATES, "--n-candidates", callback=at_least(1), help="Candidates per doc that ivf and hnsw re-score"
)
THRESHOLD = typer.Option(
    None, "--threshold", "-t", help="Minimum score (default: the pipe's dedupe threshold, not its pair threshold)"
)
PRECISION = typer.Option(
    "float32",
    "--precision",
    help="Stored learned columns: float32, float16, int8 (a scale a row) or binary (sign bits)",
)
DIMS = typer.Option(
    None, "--dims", help="Keep only the first N learned columns (a hybrid's lexical columns are kept whole)"
)
BATCH = typer.Option(BATCH_SIZE, "--batch-size", "-b", help="Docs per batch when encoding")


def valid_n_process(value: int) -> int:
    """A usage error before the model loads, by the pipe's own rule."""
    from ..util import check_n_process

    try:
        return check_n_process(value)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None


N_PROCESS_HELP = "Processes for encoding (nlp.pipe n_process; -1: one per CPU core)"
N_PROCESS = typer.Option(1, "--n-process", "-n", callback=valid_n_process, help=N_PROCESS_HELP)
COMPARE = typer.Option(
    None, "--compare", help="Also score another trained pipeline (repeat for several; e.g. an earlier model)"
)
CONFIDENCE = typer.Option(
    0.95, "--confidence", min=0.5, max=0.999, help="Confidence level of the --bootstrap intervals"
)
FIT_LIMIT = typer.Option(
    50000, "--fit-limit", min=0, help="Fit the TF-IDF on the texts of the first N pairs of --fit-texts (0 = all)"
)


def load_pipeline(model: str) -> Language:
    """A trained pipeline with a siamese_similarity pipe, or a clear error (naming a damaged one's empty files)."""
    import spacy

    from ..component import get_similarity_pipe

    if not Path(model).exists() and not spacy.util.is_package(model):
        from ..files import recover

        recover(model)  # a save killed between its two renames (where renameat2 is missing)
        if not Path(model).exists():
            fail(f"Model not found: {model} (give a pipeline directory or an installed package)")
    if Path(model).is_dir() and not (Path(model) / "config.cfg").is_file():
        fail(f"{model} is not a spaCy pipeline (it has no config.cfg)")
    try:
        nlp = spacy.load(model)
    except Exception as err:  # srsly, thinc and numpy name no file when one is cut short
        if not Path(model).is_dir():
            raise
        empty = sorted(str(p) for p in Path(model).rglob("*") if p.is_file() and p.stat().st_size == 0)
        hint = f" (empty: {', '.join(empty)})" if empty else ""
        fail(f"Cannot load the pipeline {model}{hint}: {type(err).__name__}: {err}")
    get_similarity_pipe(nlp)
    return nlp


OUTPUT_PIPELINE = typer.Option(None, "--output", "-o", help="Save the pipeline to this new directory")
IN_PLACE = typer.Option(False, "--in-place", help="Save the pipeline over MODEL instead (whole or not at all)")


def pipeline_target(model: Path, output: Optional[Path], in_place: bool, inputs: Sequence[Path]) -> Path:
    """Where a command that edits a pipeline saves it: --output, or MODEL with --in-place; refused
    before any work if it would replace MODEL unasked or one of the `inputs`."""
    if (output is None) == (not in_place):
        fail("Give --output DIR for the new pipeline, or --in-place to replace MODEL" + (", not both" * in_place))
    if in_place and not model.is_dir():
        fail(f"--in-place saves over a pipeline directory, and {model} is none")
    from ..files import PIPELINE, check_outputs

    target = model if output is None else output
    check_outputs([*inputs, *([] if in_place else [model])], [], output_dirs=[target], kind=PIPELINE)
    return target


def save_pipeline(nlp: Language, target: Path) -> None:
    """Save a pipeline whole or not at all (`files.atomic_directory`): a kill while saving leaves
    the directory that was there. An existing directory is replaced only if it is a pipeline."""
    from ..files import PIPELINE, atomic_directory

    with atomic_directory(target, kind=PIPELINE) as tmp:
        nlp.to_disk(tmp)


def compared_pipelines(model: str, compare: Sequence[str]) -> Dict[str, Language]:
    """The --compare pipelines by the name they were given; each once, and not the evaluated one."""
    same = [_pipeline_key(name) for name in compare]  # model/, ./model and model are one pipeline
    repeated = sorted({name for name, key in zip(compare, same) if same.count(key) > 1 or key == _pipeline_key(model)})
    if repeated:
        fail(f"--compare names a pipeline twice or the evaluated one: {', '.join(repeated)}")
    return {name: load_pipeline(name) for name in compare}


def dedupe_limit(nlp: Language, threshold: Optional[float]) -> float:
    """The threshold a dedupe command mines with (`dedupe_threshold`), its warning printed as a line."""
    from ..component import get_similarity_pipe
    from ..search.dedupe import dedupe_threshold

    with warnings_as_lines():
        return dedupe_threshold(get_similarity_pipe(nlp, initialized=True), threshold)


@contextmanager
def warnings_as_lines() -> Iterator[None]:
    """Print each warning raised in the block as a `Warning: ...` line, also when the block raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for warning in caught:
                typer.echo(f"Warning: {warning.message}", err=True)


def _pipeline_key(model: str) -> str:
    return str(Path(model).resolve()) if Path(model).exists() else model


def versions() -> Dict[str, str]:
    import spacy

    return {"python": platform.python_version(), "spacy": spacy.__version__, "spacy_siamese": __version__}


def read_pair_records(path: Path, *, format: str = "auto", limit: int = 0, lenient: bool = False) -> List[PairRecord]:
    from ..corpora import read_pairs

    require_file(path)
    # closed in the block: the reader's warnings (skipped lines, empty texts) now, not at garbage collection
    with warnings_as_lines(), closing(read_pairs(path, format=format, lenient=lenient)) as reader:
        records = list(islice(reader, limit or None))
    if not records:
        fail(f"No pairs read from {path}")
    return records


def read_fit_texts(path: Optional[Path], limit: int) -> Tuple[Optional[List[str]], Optional[str]]:
    """The distinct texts of the first `limit` pairs (0 = all) of the pair file that a TF-IDF
    baseline is fitted on, and a note saying so; (None, None) without a file."""
    from ..util import distinct_pair_texts, given_path

    if path is None:
        return None, None
    records = read_pair_records(path, limit=limit)
    texts = distinct_pair_texts((r.text1, r.text2) for r in records)
    return texts, f"the {len(texts):,} distinct texts of the first {len(records):,} pairs of {given_path(path)}"


def read_collection(path: Path, format: str, field: str) -> Collection:
    """A collection file, checked line by line; skipped blank lines are reported on stderr."""
    from ..search.texts import scan_collection

    require_file(path)
    collection = scan_collection(path, format=format, field=field)
    note = collection.blank_note()
    if note:
        typer.echo(note, err=True)
    return collection


def expand_paths(pattern: str) -> List[Path]:
    """Files matching a glob pattern (which a project command passes unexpanded)."""
    path = Path(pattern)
    root, parts = (Path(path.anchor), path.parts[1:]) if path.is_absolute() else (Path("."), path.parts)
    return sorted(p for p in root.glob(str(Path(*parts))) if p.is_file()) if parts else []


def require_file(*paths: Optional[Path]) -> None:
    """Fail on the first of the given paths (None: not given) that does not exist."""
    for path in paths:
        if path is not None and not Path(path).exists():
            fail(f"File not found: {path}")


class _Failure(Exception):
    """An error to report as a message (exit code 1), not a traceback."""


def fail(message: str) -> NoReturn:
    raise _Failure(message)


@contextmanager
def errors() -> Iterator[None]:
    """Report expected errors, a missing optional extra included, as one line (exit code 1)."""
    try:
        yield
    except (_Failure, OSError, ValueError, ImportError, EOFError) as err:  # EOFError: click would say "Aborted."
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1) from err
