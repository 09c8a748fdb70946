"""Read labelled text pairs from files and feed them to spaCy's training loop.

`read_pairs` yields `PairRecord`s from four formats:

- "tsv": tab-separated with a header naming the columns (Quora release, QQP-style
  mirrors): text columns question1/question2, text1/text2 or sentence1/sentence2,
  label column is_duplicate or label. CSV quoting is honoured.
- "bimpm": no header, `label<TAB>text1<TAB>text2<TAB>id`, CoreNLP-tokenized text
  (BiMPM's Quora split). PTB escapes are undone and the text is detokenized.
- "jsonl": one `{"text1": ..., "text2": ..., "label": ...}` object per line.
- "stackexchange": no header, `label<TAB>question1<TAB>question2` with labels
  duplicate/non-duplicate and texts that are a title followed by an HTML body.

The reader "spacy-siamese.PairCorpus.v1" turns the records into pair Examples
(see `spacy_siamese.pairs`).
"""
import csv
import html
import json
import math
import re
import warnings
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from typing import (
    Any,
    Callable,
    Deque,
    Dict,
    Generator,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Tuple,
    Union,
)

from spacy.language import Language
from spacy.training import Example
from spacy.util import ensure_path, registry

from .pairs import make_pair_example

FORMATS = ("tsv", "bimpm", "jsonl", "stackexchange")
TEXT_COLUMNS = (("question1", "question2"), ("text1", "text2"), ("sentence1", "sentence2"))
LABEL_COLUMNS = ("is_duplicate", "label")
STACKEXCHANGE_LABELS = {"duplicate": 1.0, "non-duplicate": 0.0}
MAX_REPORTED = 5  # skipped lines listed in the lenient-mode warning
MAX_RECORD_LINES = 100  # lines a quoted TSV field may span


class PairFormatError(ValueError):
    """A pair file is malformed. The message reads `path:line: what was wrong`
    (file-level problems without a line name the path in `reason`)."""

    def __init__(self, path: Union[str, Path], line: Optional[int], reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}" if line is not None else reason)

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.reason))


class PairRecord(NamedTuple):
    text1: str
    text2: str
    label: float
    line: int  # 1-based line on which the record starts


class _Malformed(ValueError):
    """Raised by the per-line parsers; turned into a PairFormatError with the line."""


def read_pairs(
    path: Union[str, Path], *, format: str = "auto", lenient: bool = False
) -> Generator[PairRecord, None, None]:
    """Lazily read the labelled pairs in `path`.

    format (str): "auto", "tsv", "bimpm", "jsonl" or "stackexchange".
    lenient (bool): skip malformed lines and warn once at the end, instead of
        raising a PairFormatError at the first one. Header problems always raise.
    """
    path = _check_path(path)
    if format not in ("auto",) + FORMATS:
        choices = ", ".join(("auto",) + FORMATS)
        raise ValueError(f"Unknown pair format {format!r}. Choose one of: {choices}.")
    return _read_pairs(path, format, lenient)


def detect_format(path: Union[str, Path]) -> str:
    """Guess the format of a pair file from its extension or its first line."""
    path = _check_path(path)
    if path.suffix.lower() in (".jsonl", ".json"):
        return "jsonl"
    bad: Dict[int, str] = {}
    for i, text in _numbered_lines(path, bad):
        if i in bad:
            raise PairFormatError(path, i, bad[i])
        line = text.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        first = fields[0].strip()
        if _find_columns([f.strip().strip('"') for f in fields]) is not None:
            return "tsv"
        if len(fields) == 3 and first.lower() in STACKEXCHANGE_LABELS:
            return "stackexchange"
        if len(fields) == 4 and first in ("0", "1"):
            return "bimpm"
        if line.lstrip().startswith("{"):
            return "jsonl"
        raise PairFormatError(
            path,
            i,
            f"could not detect the pair format (found {len(fields)} tab-separated fields "
            f"starting with {first[:40]!r}). Expected one of: tsv (header naming "
            "question1/question2 or text1/text2 or sentence1/sentence2 and is_duplicate or "
            "label), bimpm (label 0/1, text1, text2, id), stackexchange (duplicate/"
            "non-duplicate, question1, question2), jsonl (.jsonl file of objects). "
            "Pass format= explicitly.",
        )
    raise PairFormatError(path, None, f"no pairs found in {path}")


def detokenize_ptb(text: str) -> str:
    """Undo Stanford CoreNLP / PTB tokenization: escapes, quotes and the spaces
    around punctuation, so the text reads like the raw original."""
    tokens = _undo_csv_quoting([_PTB_ESCAPES.get(t, t) for t in text.split(" ") if t])
    out: List[str] = []
    glue = False  # the previous token asked for no space after it
    double_open = single_open = False
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        attach, glue_next = glue, False
        if tok == "``":
            tok, double_open, glue_next = '"', True, True
        elif tok in ("''", '"'):
            if double_open:
                attach, double_open = True, False
            elif prev[-1:].isdigit() and (
                tokens[i - 2 : i - 1] == ["'"] or _NO_SPACE_BEFORE.match(nxt or ".")
            ):
                attach = True  # inches: 5'8" or 6"
            else:  # an opening quote written as ''
                double_open, glue_next = True, True
            tok = '"'
        elif tok in ("`", "'") and nxt.lower() in _APOSTROPHE_SUFFIXES:  # what ' s
            tok, attach, glue_next = "'", True, True
        elif tok == "`":
            tok, single_open, glue_next = "'", True, True
        elif tok == "'":
            if single_open:
                attach, single_open = True, False
            elif prev[-1:].isdigit():  # feet: 5'8"
                attach, glue_next = True, nxt[:1].isdigit()
            elif prev[-1:] in ("s", "S"):  # plural possessive: the Jews'
                attach = True
        elif tok.lower() in _CLITICS or _NO_SPACE_BEFORE.match(tok):
            attach = True
        elif tok in _NO_SPACE_AFTER:
            glue_next = True
        if out and not attach:
            out.append(" ")
        out.append(tok)
        glue = glue_next
    return _MATH_CLOSE.sub("[/math]", "".join(out))


def _undo_csv_quoting(tokens: List[str]) -> List[str]:
    """BiMPM tokenized some Quora texts with their CSV quoting: `"say ""hi"" now"`
    became `` `` say '' `` hi '' '' now '' ``. Drop the outer quotes and turn each
    doubled quote back into one '"' (opening or closing, decided later)."""
    if len(tokens) < 3 or tokens[0] != "``" or tokens[-1] != "''":
        return tokens
    inner, out, i = tokens[1:-1], [], 0
    while i < len(inner):
        if inner[i] in _PTB_QUOTES and i + 1 < len(inner) and inner[i + 1] in _PTB_QUOTES:
            out.append('"')
            i += 2
        else:
            out.append(inner[i])
            i += 1
    return out if len(out) < len(inner) else tokens


def stackexchange_text(field: str) -> str:
    """Title + HTML body -> plain text: the title, a newline, the body's text."""
    match = _BODY_START.search(field)
    if match is None:
        return html_to_text(field)
    title = " ".join(html.unescape(field[: match.start()]).split())
    body = html_to_text(field[match.start() :])
    return f"{title}\n{body}" if title and body else title or body


def html_to_text(markup: str) -> str:
    """Strip tags, unescape entities and collapse whitespace."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    return " ".join("".join(parser.parts).split())


@registry.readers("spacy-siamese.PairCorpus.v1")
def create_pair_corpus(
    path: Optional[Path], *, format: str = "auto", limit: int = 0, lenient: bool = False
) -> Callable[[Language], Iterator[Example]]:
    """Read a pair file as pair Examples, re-reading it on every call (epoch)."""
    if path is None:
        raise ValueError(
            "spacy-siamese.PairCorpus.v1: the corpus path is None. Set paths.train and "
            "paths.dev in the config, or on the command line, e.g. "
            "`python -m spacy train config.cfg --paths.train train.tsv --paths.dev dev.tsv`."
        )
    return PairCorpus(path, format=format, limit=limit, lenient=lenient)


class PairCorpus:
    """Callable corpus like spacy.training.Corpus: `corpus(nlp)` yields one pair
    Example per record in the file, at most `limit` if limit > 0."""

    def __init__(
        self, path: Union[str, Path], *, format: str = "auto", limit: int = 0, lenient: bool = False
    ) -> None:
        self.path = ensure_path(path)
        self.format = format
        self.limit = limit
        self.lenient = lenient

    def __call__(self, nlp: Language) -> Iterator[Example]:
        records = read_pairs(self.path, format=self.format, lenient=self.lenient)
        try:
            for i, record in enumerate(records):
                if self.limit > 0 and i >= self.limit:
                    break
                yield make_pair_example(nlp, record.text1, record.text2, record.label)
        finally:
            records.close()  # emit the lenient-mode warning now, not at garbage collection


def read_pair_examples(
    nlp: Language,
    path: Union[str, Path],
    *,
    format: str = "auto",
    limit: int = 0,
    lenient: bool = False,
) -> List[Example]:
    """Read a pair file into a list of pair Examples (for scripts)."""
    return list(PairCorpus(path, format=format, limit=limit, lenient=lenient)(nlp))


# Reading


def _check_path(path: Union[str, Path]) -> Path:
    loc = ensure_path(path)
    if not isinstance(loc, Path):
        raise ValueError(f"Expected a path to a pair file, got {path!r}")
    if not loc.exists():
        raise FileNotFoundError(f"Pair file not found: {loc}")
    if not loc.is_file():
        raise ValueError(f"Expected a pair file, but {loc} is a directory or special file")
    return loc


def _read_pairs(path: Path, format: str, lenient: bool) -> Generator[PairRecord, None, None]:
    if format == "auto":
        format = detect_format(path)
    skipped: List[PairFormatError] = []
    n_pairs = 0
    try:
        for item in _PARSERS[format](path):
            if isinstance(item, PairFormatError):
                if not lenient:
                    raise item
                skipped.append(item)
            else:
                n_pairs += 1
                yield item
    finally:
        if skipped:
            shown = "; ".join(f"line {e.line}: {e.reason}" for e in skipped[:MAX_REPORTED])
            n_more = len(skipped) - MAX_REPORTED
            more = f"; and {n_more} more" if n_more > 0 else ""
            warnings.warn(
                f"Skipped {len(skipped)} malformed line(s) in {path} ({format} format, "
                f"lenient=True): {shown}{more}",
                UserWarning,
                stacklevel=2,
            )
    if n_pairs == 0:
        raise PairFormatError(path, None, f"no pairs found in {path}")


def _numbered_lines(path: Path, bad: Dict[int, str]) -> Iterator[Tuple[int, str]]:
    """Yield (line number, line with its ending) decoded as UTF-8. A line that
    does not decode is yielded with replacement characters and noted in `bad`."""
    with path.open("rb") as file_:
        for i, raw in enumerate(file_, 1):
            try:
                text = raw.decode("utf8")
            except UnicodeDecodeError as err:
                bad[i] = f"invalid UTF-8 (byte {raw[err.start]:#04x} at column {err.start + 1})"
                text = raw.decode("utf8", errors="replace")
            if i == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield i, text


Item = Union[PairRecord, PairFormatError]


def _iter_lines(path: Path, parse_line: Callable[[str], Tuple[str, str, float]]) -> Iterator[Item]:
    """Apply a one-record-per-line parser, skipping blank lines."""
    bad: Dict[int, str] = {}
    for i, text in _numbered_lines(path, bad):
        line = text.rstrip("\r\n")
        if i in bad:
            yield PairFormatError(path, i, bad[i])
        elif line.strip() or "\t" in line:
            try:
                yield PairRecord(*parse_line(line), line=i)
            except _Malformed as err:
                yield PairFormatError(path, i, str(err))


def _iter_tsv(path: Path) -> Iterator[Item]:
    """Tab-separated with a header. Each line is split on tabs; CSV-quoted fields
    are unquoted. A line with too few fields may open a quoted field that spans
    lines (the official Quora release): then it is re-read with the csv module."""
    bad: Dict[int, str] = {}
    lines = _numbered_lines(path, bad)
    pending: Deque[Tuple[int, str]] = deque()  # lines read ahead and given back

    def take() -> Optional[Tuple[int, str]]:
        return pending.popleft() if pending else next(lines, None)

    header: Optional[List[str]] = None
    i1 = i2 = il = 0
    while True:
        item = take()
        if item is None:
            return
        start, text = item
        line = text.rstrip("\r\n")
        fields = line.split("\t")
        if start in bad:
            error = PairFormatError(path, start, bad[start])
            if header is None:
                raise error
            yield error
            continue
        if not line.strip() and len(fields) == 1:
            continue  # blank line
        if header is None:
            header = [_unquote(name).strip() for name in fields]
            found = _find_columns(header)
            if found is None:
                raise PairFormatError(
                    path,
                    start,
                    "the header must name two text columns (question1/question2, text1/text2 "
                    "or sentence1/sentence2) and a label column (is_duplicate or label); "
                    f"columns found: {', '.join(header)}. For a file without a header pass "
                    "format='bimpm' or 'stackexchange'.",
                )
            i1, i2, il = found
            continue
        if len(fields) == len(header):
            row = [_unquote(field) for field in fields]
        else:
            row, taken = _read_csv_record(text, take)
            if len(row) != len(header):
                pending.extendleft(reversed(taken))
                yield PairFormatError(
                    path,
                    start,
                    f"expected {len(header)} tab-separated fields ({', '.join(header)}), "
                    f"found {len(fields)}",
                )
                continue
            undecodable = [i for i, _ in taken if i in bad]
            if undecodable:
                yield PairFormatError(path, undecodable[0], bad[undecodable[0]])
                continue
        try:
            label = _text_label(row[il])
        except _Malformed as err:
            yield PairFormatError(path, start, str(err))
        else:
            yield PairRecord(row[i1], row[i2], label, start)


def _read_csv_record(
    first: str, take: Callable[[], Optional[Tuple[int, str]]]
) -> Tuple[List[str], List[Tuple[int, str]]]:
    """Parse one CSV record starting with line `first`, pulling continuation
    lines from `take` (at most MAX_RECORD_LINES). Returns (fields, lines taken)."""
    taken: List[Tuple[int, str]] = []

    def feed() -> Iterator[str]:
        yield first
        while len(taken) < MAX_RECORD_LINES:
            item = take()
            if item is None:
                return
            taken.append(item)
            yield item[1]

    try:
        row = next(csv.reader(feed(), delimiter="\t"), [])
    except csv.Error:
        row = []
    return row, taken


def _unquote(field: str) -> str:
    """Undo CSV quoting of a whole field (`"a ""b"" c"` -> `a "b" c`); else return it as is."""
    inner = field[1:-1]
    if len(field) >= 2 and field[0] == field[-1] == '"' and '"' not in inner.replace('""', ""):
        return inner.replace('""', '"')
    return field


def _find_columns(names: List[str]) -> Optional[Tuple[int, int, int]]:
    """Indices of (text1, text2, label) in a header, or None."""
    lower = [name.lower() for name in names]
    label = next((lower.index(c) for c in LABEL_COLUMNS if c in lower), None)
    for c1, c2 in TEXT_COLUMNS:
        if c1 in lower and c2 in lower and label is not None:
            return lower.index(c1), lower.index(c2), label
    return None


def _split(line: str, names: Tuple[str, ...]) -> List[str]:
    fields = line.split("\t")
    if len(fields) != len(names):
        raise _Malformed(
            f"expected {len(names)} tab-separated fields ({', '.join(names)}), found {len(fields)}"
        )
    return fields


def _bimpm_line(line: str) -> Tuple[str, str, float]:
    label, text1, text2, _ = _split(line, ("label", "text1", "text2", "id"))
    return detokenize_ptb(text1), detokenize_ptb(text2), _text_label(label, binary=True)


def _stackexchange_line(line: str) -> Tuple[str, str, float]:
    label, text1, text2 = _split(line, ("label", "question1", "question2"))
    value = STACKEXCHANGE_LABELS.get(label.strip().lower())
    if value is None:
        raise _Malformed(f"expected label 'duplicate' or 'non-duplicate', found {label!r}")
    return stackexchange_text(text1), stackexchange_text(text2), value


def json_object(line: str) -> Dict[str, Any]:
    """One JSONL line as a dict; a ValueError says what is wrong with it."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as err:
        raise _Malformed(f"invalid JSON: {err.msg} (column {err.colno})") from None
    if not isinstance(obj, dict):
        raise _Malformed(f"expected a JSON object, found {_json_type(obj)}")
    return obj


def _jsonl_line(line: str) -> Tuple[str, str, float]:
    obj = json_object(line)
    missing = [key for key in ("text1", "text2", "label") if key not in obj]
    if missing:
        raise _Malformed(f"missing key(s) {', '.join(map(repr, missing))}; keys found: {list(obj)}")
    for key in ("text1", "text2"):
        if not isinstance(obj[key], str):
            raise _Malformed(f"{key!r} must be a string, found {_json_type(obj[key])}")
    label = obj["label"]
    if not isinstance(label, (bool, int, float)):
        raise _Malformed(f"'label' must be a number or boolean, found {_json_type(label)}")
    return obj["text1"], obj["text2"], _check_label(float(label), label)


def _text_label(raw: str, *, binary: bool = False) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise _Malformed(f"label {raw!r} is not a number") from None
    value = _check_label(value, raw)
    if binary and value not in (0.0, 1.0):
        raise _Malformed(f"expected label 0 or 1, found {raw!r}")
    return value


def _check_label(value: float, raw: Any) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise _Malformed(f"label {raw!r} is outside [0, 1]")
    return value


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    if type(value) in names:
        return names[type(value)]
    return "number" if isinstance(value, (int, float)) else type(value).__name__


_PARSERS: Dict[str, Callable[[Path], Iterator[Item]]] = {
    "tsv": _iter_tsv,
    "bimpm": lambda path: _iter_lines(path, _bimpm_line),
    "jsonl": lambda path: _iter_lines(path, _jsonl_line),
    "stackexchange": lambda path: _iter_lines(path, _stackexchange_line),
}

# PTB detokenization

_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_PTB_QUOTES = ("``", "''")
_CLITICS = {"'s", "'m", "'re", "'ve", "'ll", "'d", "n't"}
_APOSTROPHE_SUFFIXES = {"s", "t", "m", "re", "ve", "ll", "d"}
_NO_SPACE_BEFORE = re.compile(r"^(?:[.,?!:;]+|[)\]}%])$")
_NO_SPACE_AFTER = {"(", "[", "{", "$", "\\"}
_MATH_CLOSE = re.compile(r"\[/ math\]")

# HTML

_BODY_START = re.compile(r"<(?:p|pre|blockquote|ul|ol|h[1-6]|div|table|hr|dl)[\s/>]", re.IGNORECASE)
_BLOCK_TAGS = {
    "p", "pre", "blockquote", "ul", "ol", "li", "div", "table", "tr", "td", "th", "br",
    "hr", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
}  # fmt: skip


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append(" ")
