"""Records, format errors (naming the file and line) and line-numbered reading for the corpus formats."""

import json
import math
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

from spacy.util import ensure_path

MAX_REPORTED = 5  # skipped records listed in the lenient-mode warning
R = TypeVar("R")


class PairFormatError(ValueError):
    """A pair file is malformed. The message reads `path:line: what was wrong`
    (file-level problems without a line name the path in `reason`)."""

    def __init__(self, path: Union[str, Path], line: Optional[int], reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}" if line is not None else reason)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.path, self.line, self.reason))


class DocumentFormatError(PairFormatError):
    """A document collection is malformed. The message reads `path:record: what was
    wrong`, where record is a line number, an archive member or a document id."""

    def __init__(self, path: Union[str, Path], record: Optional[Union[int, str]], reason: str) -> None:
        ValueError.__init__(self, f"{path}:{record}: {reason}" if record is not None else f"{path}: {reason}")
        self.path = str(path)
        self.line = record  # type: ignore[assignment]
        self.reason = reason


class EmptyTextWarning(UserWarning):
    """Pairs of a pair file have an empty or whitespace-only text1 or text2. They are kept (a
    pipe scores an empty doc like any other); the warning names the file and the first lines."""


class PairRecord(NamedTuple):
    """One labelled pair: `label` in [0, 1], its 1-based first `line`, and the `group` (part of
    the file, e.g. STS's "MSRvid") where the format says."""

    text1: str
    text2: str
    label: float
    line: int
    group: str = ""


class DocRecord(NamedTuple):
    """One document of a labelled collection."""

    text: str
    labels: Tuple[str, ...]  # documents sharing a label are similar
    group: str = ""  # coarser class: same group but no shared label = hard negative
    id: str = ""  # where the record came from (member, NEWID, ID, line)


PairItem = Union[PairRecord, PairFormatError]
DocItem = Union[DocRecord, DocumentFormatError]


class Malformed(ValueError):
    """Raised by per-line parsers; the caller turns it into a format error with the line."""


class Line(NamedTuple):
    """A physical line: its number, its text without the line ending, the ending
    ("\\n", "\\r\\n" or "" at the end of the file) and a decoding problem, if any."""

    number: int
    text: str
    end: str
    error: Optional[str]


# How files that are not UTF-8 text start: a compressed file or another encoding given by mistake.
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip)"),
    (b"BZh", "bzip2-compressed: decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first (unzstd)"),
    (b"PK\x03\x04", "a zip archive: extract the file from it first"),
    (b"\xff\xfe", "UTF-16 text: save it as UTF-8"),
    (b"\xfe\xff", "UTF-16 text: save it as UTF-8"),
)


def not_text(head: bytes) -> Optional[str]:
    """What a file is if its first bytes say it is not UTF-8 text (e.g. "gzip-compressed: ..."), else None."""
    for magic, what in _NOT_TEXT:
        if head.startswith(magic) and (magic != b"BZh" or head[4:10] == b"1AY&SY"):
            return f"the file is {what}"
    return None


def numbered_lines(path: Path) -> Iterator[Line]:
    """The lines of a UTF-8 file, ended by "\\n" or "\\r\\n" (a lone CR is text), without a leading
    BOM; a line that does not decode, or a compressed or UTF-16 file, has its `error` set."""
    with path.open("rb") as file_:
        problem = not_text(file_.read(16))
        if problem is not None:
            yield Line(1, "", "", problem)
            return
        file_.seek(0)
        for number, raw in enumerate(file_, 1):
            end = "\r\n" if raw.endswith(b"\r\n") else "\n" if raw.endswith(b"\n") else ""
            body = raw[: len(raw) - len(end)]
            error = None
            try:
                text = body.decode("utf8")
            except UnicodeDecodeError as err:
                error = f"invalid UTF-8 (byte {body[err.start]:#04x} at column {err.start + 1})"
                text = body.decode("utf8", errors="replace")
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            if number == 1 and not end and "\r" in text.strip():
                error = "the file ends its lines with a bare CR (\\r) and never with \\n: convert it (tr '\\r' '\\n')"
            yield Line(number, text, end, error)


def is_blank(text: str) -> bool:
    """A line without content and without tabs is skipped by every line format."""
    return not text.strip() and "\t" not in text


def check_path(path: Union[str, Path], *, what: str = "pair file", allow_dir: bool = False) -> Path:
    loc = ensure_path(path)
    if not isinstance(loc, Path):
        raise ValueError(f"Expected a path to a {what}, got {path!r}")
    if not loc.exists():
        raise FileNotFoundError(f"{what[0].upper()}{what[1:]} not found: {loc}")
    if not (loc.is_file() or (allow_dir and loc.is_dir())):
        raise ValueError(f"Expected a {what}, but {loc} is a directory or special file")
    return loc


def parse_lines(path: Path, parse: Callable[[str], Tuple[Any, ...]]) -> Iterator[PairItem]:
    """Apply a one-record-per-line parser to every non-blank line: `parse` returns
    (text1, text2, label) or (text1, text2, label, group)."""
    for line in numbered_lines(path):
        if line.error:
            yield PairFormatError(path, line.number, line.error)
        elif not is_blank(line.text):
            try:
                text1, text2, label, *group = parse(line.text)
                yield PairRecord(text1, text2, label, line.number, *group)
            except Malformed as err:
                yield PairFormatError(path, line.number, str(err))


def split_fields(line: str, names: Sequence[str]) -> List[str]:
    """Split a line on tabs into exactly `len(names)` fields."""
    fields = line.split("\t")
    if len(fields) != len(names):
        raise Malformed(f"expected {len(names)} tab-separated fields ({', '.join(names)}), found {len(fields)}")
    return fields


def header_columns(names: Sequence[str], wanted: Sequence[Sequence[str]]) -> Optional[List[int]]:
    """Indices of the wanted columns (each by its accepted names, case-insensitively) in a
    header, or None if one is missing; a column named twice raises Malformed."""
    lower = [name.strip().lower() for name in names]
    found: List[int] = []
    for alternatives in wanted:
        for alt in alternatives:
            hits = [i for i, name in enumerate(lower) if name == alt.lower()]
            if len(hits) > 1:
                cols = " and ".join(str(i + 1) for i in hits)
                raise Malformed(f"the header names column {alt!r} more than once (columns {cols})")
            if hits:
                found.append(hits[0])
                break
        else:
            return None
    return found


def check_header(
    path: Path, number: int, header: List[str], find: Callable[[List[str]], Optional[R]], missing: str
) -> R:
    """The columns `find` locates in the header on line `number`; a header problem raises PairFormatError."""
    try:
        found = find(header)
    except Malformed as err:
        raise PairFormatError(path, number, str(err)) from None
    if found is None:
        raise PairFormatError(path, number, missing)
    return found


def shorten(value: Any, limit: int = 60) -> str:
    """repr(value) for a message, cut to about `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}...{text[-1]}"


def scaled_label(raw: str, *, low: float = 0.0, high: float = 1.0, binary: bool = False) -> float:
    """A label written as a number in [low, high], mapped linearly to [0, 1]."""
    try:
        value = float(raw.strip())
    except ValueError:
        raise Malformed(f"label {shorten(raw)} is not a number") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise Malformed(f"label {shorten(raw)} is outside [{low:g}, {high:g}]")
    if binary and value not in (low, high):
        raise Malformed(f"expected label {low:g} or {high:g}, found {shorten(raw)}")
    return (value - low) / (high - low)


def check_label(value: float, raw: Any) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise Malformed(f"label {shorten(raw)} is outside [0, 1]")
    return value


def json_value(line: str) -> Any:
    """One JSONL line parsed; Malformed says what is wrong with it."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise Malformed(f"invalid JSON: {err.msg} (column {err.colno})") from None
    except (ValueError, RecursionError) as err:  # e.g. an integer too long, nesting too deep
        raise Malformed(f"invalid JSON: {err}") from None


def json_object(line: str) -> Dict[str, Any]:
    """One JSONL line as a dict; Malformed says what is wrong with it."""
    obj = json_value(line)
    if not isinstance(obj, dict):
        raise Malformed(f"expected a JSON object, found {json_type(obj)}")
    return obj


def json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    if type(value) in names:
        return names[type(value)]
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def json_string(obj: Dict[str, Any], key: str, *, required: bool = True) -> str:
    """obj[key]: a string (it may be empty) of valid Unicode; "" if absent and not `required`."""
    if required and key not in obj:
        raise Malformed(f"missing key {key!r}; keys found: {list(obj)}")
    return unicode_string(obj.get(key, ""), key)


def unicode_string(value: Any, key: str) -> str:
    """`value` if it is a string of valid Unicode; Malformed names `key` otherwise."""
    if not isinstance(value, str):
        raise Malformed(f"{key!r} must be a string, found {json_type(value)}")
    try:
        value.encode("utf8")
    except UnicodeEncodeError as err:  # "\ud800" alone: JSON allows it, spaCy cannot hash it
        raise Malformed(f"{key!r} holds {value[err.start]!r}, an unpaired surrogate: not valid Unicode") from None
    return value


def skip_malformed(
    items: Iterable[Union[R, PairFormatError]], lenient: bool, skipped: List[PairFormatError]
) -> Iterator[R]:
    """Pass records through; raise the first error, or with `lenient` collect errors in `skipped`."""
    for item in items:
        if isinstance(item, PairFormatError):
            if not lenient:
                raise item
            skipped.append(item)
        else:
            yield item


def warn_skipped(skipped: Sequence[PairFormatError], message: str, *, prefix: str = "") -> None:
    """One warning listing the first skipped records: `message: rec: reason; ...`."""
    if not skipped:
        return
    shown = "; ".join(f"{prefix}{e.line}: {e.reason}" for e in skipped[:MAX_REPORTED])
    more = f"; and {len(skipped) - MAX_REPORTED} more" if len(skipped) > MAX_REPORTED else ""
    warnings.warn(f"{message}: {shown}{more}", UserWarning, stacklevel=3)


def first_lines(lines: Sequence[int]) -> str:
    """The first line numbers for a message: "3, 7, 9" or "3, 7, 9, 12, 20 and 4 more"."""
    more = f" and {len(lines) - MAX_REPORTED:,} more" if len(lines) > MAX_REPORTED else ""
    return ", ".join(map(str, lines[:MAX_REPORTED])) + more


def warn_empty_texts(path: Path, lines: Sequence[int], n_pairs: int) -> None:
    """One `EmptyTextWarning` naming the lines of the pairs with an empty side, if any."""
    if not lines:
        return
    warnings.warn(
        f"{len(lines)} of the {n_pairs} pair(s) read from {path} have an empty or whitespace-only text1 or "
        f"text2 (line {first_lines(lines)}). They are kept and scored like any other pair; remove them from the file "
        "if they should not be.",
        EmptyTextWarning,
        stacklevel=3,
    )


def named_columns(
    path: Path,
    wanted: Sequence[Sequence[str]],
    *,
    low: float = 0.0,
    high: float = 1.0,
    binary: bool = False,
    what: str = "",
) -> Iterator[PairItem]:
    """Tab-separated lines under a header that names (text1, text2, label) among its
    columns; quotes are text. Header problems raise at once."""
    header: Optional[List[str]] = None
    cols: List[int] = []
    for line in numbered_lines(path):
        if line.error:
            if header is None:
                raise PairFormatError(path, line.number, line.error)
            yield PairFormatError(path, line.number, line.error)
        elif is_blank(line.text):
            continue
        elif header is None:
            header = [name.strip() for name in line.text.split("\t")]
            needed = ", ".join(alts[0] for alts in wanted)
            missing = f"the {what} header must name the columns {needed}; found: {', '.join(header)}"
            cols = check_header(path, line.number, header, lambda names: header_columns(names, wanted), missing)
        else:
            try:
                fields = split_fields(line.text, header)
                label = scaled_label(fields[cols[2]], low=low, high=high, binary=binary)
            except Malformed as err:
                yield PairFormatError(path, line.number, str(err))
            else:
                yield PairRecord(fields[cols[0]], fields[cols[1]], label, line.number)
