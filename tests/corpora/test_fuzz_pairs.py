"""Property-based tests of the pair readers (issue 14).

Every input either raises a PairFormatError naming the file and the line, or yields
exactly one record per data line whose fields round-trip; in lenient mode the skipped
lines plus the records equal the data lines.
"""

import csv
import json
import math
import re
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from spacy_siamese.corpora import PAIR_FORMATS, PairFormatError, PairRecord, read_pairs, stackexchange_text
from spacy_siamese.corpora.bimpm import detokenize_ptb
from spacy_siamese.corpora.tsv import is_quoted

from .util import PROFILES, check_empty_text_warning, read_warned, skipped_count

ENDINGS = st.sampled_from(["\n", "\r\n"])
BREAK = re.compile(r"\r?\n")  # a CR elsewhere is text
# Text for line formats: anything but tabs and line breaks, sometimes huge.
PLAIN = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\t\r\n"), max_size=30)
HUGE = st.integers(70_000, 150_000).map(lambda n: "huge " * (n // 5))
# Text for CSV-quoted fields: quotes and line breaks included.
QUOTED_TEXT = st.text(st.sampled_from(list('ab "\r\n,\u2028é')), max_size=12)
HEADERS = {
    "tsv": ("label", "question1", "question2"),
    "sick": ("relatedness_score", "sentence_A", "sentence_B"),
    "mrpc": ("Quality", "#1 String", "#2 String"),
}


def _lines(text: str) -> List[str]:
    """The physical lines of a file as the readers number them."""
    text = text[1:] if text.startswith("\ufeff") else text
    lines = BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _data_lines(text: str, fmt: str) -> int:
    def blank(line: str) -> bool:
        return not line.strip() if fmt == "jsonl" else not line.strip() and "\t" not in line

    count = sum(1 for line in _lines(text) if not blank(line))
    return count - 1 if fmt in HEADERS and count else count


def _write(path: Path, text: str, bom: bool = False) -> Path:
    path.write_bytes((("\ufeff" if bom else "") + text).encode("utf8"))
    return path


def _join(rows: Sequence[str], endings: Sequence[str]) -> str:
    return "".join(row + endings[i % len(endings)] for i, row in enumerate(rows))


def _line_of(text: str, offset: int) -> int:
    return len(BREAK.findall(text[:offset])) + 1


def _check_error(err: PairFormatError, path: Path, n_lines: int) -> None:
    assert err.path == str(path)
    if err.line is None:
        assert str(path) in str(err)
    else:
        assert 1 <= err.line <= max(n_lines, 1)
        assert str(err).startswith(f"{path}:{err.line}: ")


def _check_records(records: List[PairRecord], n_lines: int) -> None:
    lines = [r.line for r in records]
    assert lines == sorted(set(lines)) and all(1 <= n <= n_lines for n in lines)
    for r in records:
        assert isinstance(r.text1, str) and isinstance(r.text2, str)
        assert math.isfinite(r.label) and 0.0 <= r.label <= 1.0


def _read_both(path: Path, fmt: str) -> Tuple[Optional[List[PairRecord]], Optional[Tuple[List[PairRecord], int]]]:
    """(strict records or None if it raised, (lenient records, skipped) or None if it raised)."""
    n_lines = len(_lines(path.read_bytes().decode("utf8", errors="replace")))
    strict: Optional[List[PairRecord]] = None
    try:
        strict, caught = read_warned(path, format=fmt)
        _check_records(strict, n_lines)
        check_empty_text_warning(caught, path, strict)
    except PairFormatError as err:
        _check_error(err, path, n_lines)
    lenient = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            records = list(read_pairs(path, format=fmt, lenient=True))
            _check_records(records, n_lines)
            check_empty_text_warning(caught, path, records)
            lenient = (records, skipped_count(caught))
        except PairFormatError as err:  # header problems, or no pairs at all
            _check_error(err, path, n_lines)
    if strict is not None:
        assert lenient is not None and lenient == (strict, 0)
    return strict, lenient


# Random input, every line format


# A well-formed data line of each headerless format (the header formats: "1" in every column).
VALID_LINE = {
    "bimpm": "1\ta\tb\t7",
    "stackexchange": "duplicate\ta\tb",
    "sts": "main-news\theadlines\t2013\t0001\t2.5\ta\tb",
    "jsonl": '{"text1": "a", "text2": "b", "label": 1}',
}


@st.composite
def noisy_text(draw, fmt: str) -> str:
    names: List[str] = []
    if fmt in HEADERS and draw(st.integers(0, 3)):  # a header, mostly
        extra = draw(st.lists(st.sampled_from(["id", "label", "pair_ID", "x"]), max_size=2))
        names = draw(st.permutations(list(HEADERS[fmt]) + extra))
    # Noise mixed with well-formed lines, or well-formed lines alone, so that some files read.
    record = "\n" + VALID_LINE.get(fmt, "\t".join(["1"] * max(len(names), 3))) + "\n"
    pieces = st.sampled_from(["\t", '"', '""', "\n", "\r\n", "\r", " ", "{", "}", ":", ",", "0", "1", "2.5", "x"])
    clean = st.sampled_from([record, "\n", "\r\n", "\r", " "])
    noise = st.lists(st.one_of(pieces, PLAIN, st.just(record)), max_size=40)
    body = "".join(draw(noise | st.lists(clean, max_size=10)))
    if names:
        body = "\t".join(names) + draw(ENDINGS) + body
    return body


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fmt", [f for f in PAIR_FORMATS if f != "twitter_url"])
def test_random_input(tmp_path, profile, fmt):
    @profile
    @given(text=noisy_text(fmt), raw=st.binary(max_size=200), use_raw=st.booleans(), bom=st.booleans())
    def check(text, raw, use_raw, bom):
        path = tmp_path / "pairs.txt"
        if use_raw:
            path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + raw)
            decoded = raw.decode("utf8", errors="replace")
        else:
            _write(path, text, bom)
            decoded = text
        strict, lenient = _read_both(path, fmt)
        has_quotes = '"' in decoded
        data_lines = _data_lines(decoded, fmt)
        if fmt != "tsv" or not has_quotes:  # tsv: a quoted field may span lines
            if strict is not None:
                assert len(strict) == data_lines
            if lenient is not None:
                assert len(lenient[0]) + lenient[1] == data_lines

    check()


# Well-formed files round-trip, each format


def _tsv_field(text: str, mode: str) -> str:
    if mode == "all" or (mode == "minimal" and any(c in text for c in '\t\r\n"')):
        return '"' + text.replace('"', '""') + '"'
    return text


@st.composite
def tsv_file(draw, strict_texts: bool) -> Tuple[str, List[PairRecord]]:
    """A header TSV and the records it holds. With `strict_texts` the file is unambiguous:
    texts hold no tabs and the first column is not a text column."""
    mode = draw(st.sampled_from(["minimal", "all", "raw"]))
    if mode == "raw":
        text = PLAIN.filter(lambda t: not is_quoted(t) and not (strict_texts and t.startswith('"')))
    elif strict_texts:
        text = st.one_of(QUOTED_TEXT, PLAIN)
    else:
        text = st.one_of(QUOTED_TEXT, PLAIN, st.text(st.sampled_from(list('a"\t\n')), max_size=8))
    names = draw(st.permutations(["label", "question1", "question2", "quora_id"]))
    if strict_texts:
        assume(names[0] in ("label", "quora_id"))
    if draw(st.booleans()):
        names = [n.upper() if n == "label" else n for n in names] + ["quora_id"]  # case, duplicate unused column
    n = draw(st.integers(1, 8))
    texts = _texts(draw, 2 * n, text)
    if strict_texts:  # the csv module reads a record over several lines: keep it under its field limit
        for k in range(0, 2 * n, 2):
            if len(texts[k]) + len(texts[k + 1]) > csv.field_size_limit():
                texts[k : k + 2] = [t.replace("\r", "").replace("\n", "") for t in texts[k : k + 2]]
    labels = [draw(st.sampled_from(["0", "1", "0.25", " 1 "])) for _ in range(n)]
    rows = list(zip(texts[::2], texts[1::2], labels))
    endings = draw(st.lists(ENDINGS, min_size=1, max_size=3))
    out, records = "\t".join(names) + endings[0], []
    for k, (t1, t2, label) in enumerate(rows):
        if draw(st.booleans()):
            out += draw(st.sampled_from(["", "  "])) + endings[-1]  # a blank line
        values = {"label": label, "question1": t1, "question2": t2, "quora_id": str(k)}
        fields = [values[n.lower()] if n.lower() in ("label", "question1", "question2") else str(k) for n in names]
        records.append(PairRecord(t1, t2, float(label), _line_of(out, len(out))))
        out += "\t".join(_tsv_field(f, mode) for f in fields) + endings[k % len(endings)]
    return out, records


@pytest.mark.parametrize("profile", PROFILES)
def test_tsv_round_trip(tmp_path, profile):
    @profile
    @given(data=tsv_file(strict_texts=True), bom=st.booleans())
    def check(data, bom):
        text, expected = data
        path = _write(tmp_path / "pairs.tsv", text, bom)
        records, caught = read_warned(path)
        assert records == expected
        check_empty_text_warning(caught, path, expected)  # the pairs with an empty side are kept, and named

    check()


@pytest.mark.parametrize("profile", PROFILES)
def test_tsv_any_quoting_round_trips_or_names_the_line(tmp_path, profile):
    @profile
    @given(data=tsv_file(strict_texts=False))
    def check(data):
        text, expected = data
        path = _write(tmp_path / "pairs.tsv", text)
        try:
            records, caught = read_warned(path, format="tsv")
            assert records == expected
            check_empty_text_warning(caught, path, expected)
        except PairFormatError as err:
            _check_error(err, path, len(_lines(text)))
            assert err.line in [r.line for r in expected]  # the line where a record starts

    check()


def _texts(draw, n: int, text=PLAIN) -> List[str]:
    """`n` texts, one of them sometimes huge."""
    texts = [draw(text) for _ in range(n)]
    if draw(st.integers(0, 4)) == 0:
        texts[draw(st.integers(0, n - 1))] = draw(HUGE)
    return texts


def _plain_rows(fmt: str, draw) -> Tuple[List[str], List[Tuple[str, str, float]]]:
    """(header lines, [(line, text1, text2, label)]) for the tab-separated formats without quoting."""
    header: List[str] = []
    rows = []
    n = draw(st.integers(1, 6))
    texts = _texts(draw, 2 * n)
    if fmt in ("sick", "mrpc"):
        extra = {"sick": ["pair_ID", "entailment_judgment"], "mrpc": ["#1 ID", "#2 ID"]}[fmt]
        names = draw(st.permutations(list(HEADERS[fmt]) + extra))
        header = ["\t".join(names)]
    for k in range(n):
        t1, t2 = texts[2 * k], texts[2 * k + 1]
        if fmt == "bimpm":
            label = draw(st.sampled_from(["0", "1"]))
            line, expected = f"{label}\t{t1}\t{t2}\t{k}", (detokenize_ptb(t1), detokenize_ptb(t2), float(label))
        elif fmt == "stackexchange":
            label = draw(st.sampled_from(["duplicate", "non-duplicate", "Duplicate"]))
            value = 1.0 if label.lower() == "duplicate" else 0.0
            line, expected = f"{label}\t{t1}\t{t2}", (stackexchange_text(t1), stackexchange_text(t2), value)
        elif fmt == "sts":
            score = draw(st.floats(0, 5)).__format__(".3f")
            extra = draw(st.sampled_from(["", "\tsource\tlicence"]))
            line = f"main-news\theadlines\t2013\t{k:04d}\t{score}\t{t1}\t{t2}{extra}"
            expected = (t1, t2, float(score) / 5.0)
        else:
            score = draw(st.floats(1, 5)).__format__(".1f") if fmt == "sick" else draw(st.sampled_from(["0", "1"]))
            values = {HEADERS[fmt][0]: score, HEADERS[fmt][1]: t1, HEADERS[fmt][2]: t2}
            line = "\t".join(values.get(name, "7") for name in names)
            expected = (t1, t2, (float(score) - 1) / 4 if fmt == "sick" else float(score))
        rows.append((line, *expected))
    return header, rows


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fmt", ["bimpm", "stackexchange", "sts", "sick", "mrpc"])
def test_line_formats_round_trip_and_lenient_count(tmp_path, profile, fmt):
    @profile
    @given(data=st.data(), bom=st.booleans())
    def check(data, bom):
        header, rows = _plain_rows(fmt, data.draw)
        # entries: ("row", index) / ("bad", line) / ("blank", line), after the header
        entries: List[Tuple[str, object]] = [("row", i) for i in range(len(rows))]
        bad = data.draw(st.lists(st.sampled_from(["x\ty", "bad line", "1\t2"]), max_size=3))
        for extra in [("bad", line) for line in bad] + [("blank", "   ")]:
            entries.insert(data.draw(st.integers(0, len(entries))), extra)
        lines = header + [rows[v][0] if kind == "row" else str(v) for kind, v in entries]  # type: ignore[index]
        numbers = {kind + str(v): len(header) + k + 1 for k, (kind, v) in enumerate(entries)}
        path = _write(tmp_path / "pairs.txt", _join(lines, data.draw(st.lists(ENDINGS, min_size=1, max_size=3))), bom)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            records = list(read_pairs(path, format=fmt, lenient=True))
        assert skipped_count(caught) == len(bad)
        assert [(r.text1, r.text2, r.label) for r in records] == [row[1:] for row in rows]
        assert [r.line for r in records] == [numbers[f"row{i}"] for i in range(len(rows))]
        check_empty_text_warning(caught, path, records)
        if bad:
            first_bad = min(len(header) + k + 1 for k, (kind, _) in enumerate(entries) if kind == "bad")
            with pytest.raises(PairFormatError) as excinfo:
                read_warned(path, format=fmt)
            assert excinfo.value.line == first_bad and str(excinfo.value).startswith(f"{path}:{first_bad}: ")
        else:
            assert read_warned(path)[0] == records  # auto-detection finds the format

    check()


JSON_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    PLAIN,
    st.lists(PLAIN, max_size=3),
    st.dictionaries(PLAIN, st.integers(), max_size=3),
)


@pytest.mark.parametrize("profile", PROFILES)
def test_jsonl_round_trip(tmp_path, profile):
    text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
    label = st.booleans() | st.sampled_from([0, 1]) | st.floats(0, 1)
    obj = st.fixed_dictionaries({"text1": text, "text2": text, "label": label}, optional={"extra": JSON_VALUE})

    @profile
    @given(objs=st.lists(obj, min_size=1, max_size=6), data=st.data())
    def check(objs, data):
        out, expected = "", []
        if data.draw(st.integers(0, 4)) == 0:
            objs[0]["text1"] = data.draw(HUGE)
        for obj in objs:
            if data.draw(st.booleans()):
                out += data.draw(st.sampled_from(["", " ", "\t", " \t "])) + data.draw(ENDINGS)  # blank
            keys = data.draw(st.permutations(list(obj)))
            pad = data.draw(st.sampled_from(["", " ", "\t"]))
            line = json.dumps({k: obj[k] for k in keys}, ensure_ascii=data.draw(st.booleans()))
            expected.append(PairRecord(obj["text1"], obj["text2"], float(obj["label"]), _line_of(out, len(out))))
            out += pad + line + pad + data.draw(ENDINGS)
        path = _write(tmp_path / "pairs.jsonl", out, data.draw(st.booleans()))
        records, caught = read_warned(path)
        assert records == expected
        check_empty_text_warning(caught, path, expected)

    check()


@pytest.mark.parametrize("profile", PROFILES)
def test_twitter_url_round_trip_or_names_the_file(tmp_path, profile):
    @profile
    @given(
        pairs=st.lists(st.tuples(PLAIN, PLAIN, st.sampled_from(["0", "1", "2", "", "x"])), min_size=1, max_size=6),
        cut=st.sampled_from([None, "a.toks", "b.toks", "sim.txt"]),
        end=ENDINGS,
    )
    def check(pairs, cut, end):
        root = tmp_path / "twitter"
        root.mkdir(exist_ok=True)
        columns: Dict[str, List[str]] = {"a.toks": [], "b.toks": [], "sim.txt": []}
        for a, b, sim in pairs:
            for name, value in zip(columns, (a, b, sim)):
                columns[name].append(value)
        if cut is not None:
            columns[cut] = columns[cut][:-1]
        for name, lines in columns.items():
            _write(root / name, "".join(line + end for line in lines))
        files = {name: root / name for name in columns}
        n_lines = len(pairs)
        blank = [not (a.strip() or b.strip() or s.strip()) for a, b, s in pairs]
        good = [
            PairRecord(a, b, float(s), k + 1)
            for k, ((a, b, s), is_blank) in enumerate(zip(pairs, blank))
            if not is_blank and s in ("0", "1") and a.strip() and b.strip()
        ]
        # an error is due when a file is cut short, a pair has no 0/1 label or an empty text against the
        # others, or there is no pair at all
        malformed = cut is not None or len(good) < blank.count(False) or not good
        try:
            records, caught = read_warned(root)
        except PairFormatError as err:
            assert malformed, f"well-formed corpus rejected: {err}"
            assert err.path in {str(p) for p in files.values()} | {str(root)}
            if err.line is not None:
                assert 1 <= err.line <= n_lines and str(err).startswith(f"{err.path}:{err.line}: ")
            return
        assert not malformed and records == good
        check_empty_text_warning(caught, root, good)

    check()
