import pytest

from spacy_siamese.corpora import PairFormatError, PairRecord, detect_format, read_pairs

from .util import error_for, read_lenient


def _corpus(tmp_path, a, b, sim):
    root = tmp_path / "twitter_url_train"
    root.mkdir(exist_ok=True)
    for name, lines in (("a.toks", a), ("b.toks", b), ("sim.txt", sim)):
        (root / name).write_text("".join(line + "\n" for line in lines), encoding="utf8")
    return root


def test_twitter_url_directory(tmp_path):
    root = _corpus(tmp_path, ["first tweet", "", "third ? tweet"], ["a paraphrase", "", "other"], ["1", "", "0"])
    assert detect_format(root) == "twitter_url"
    expected = [PairRecord("first tweet", "a paraphrase", 1.0, 1), PairRecord("third ? tweet", "other", 0.0, 3)]
    assert list(read_pairs(root)) == expected
    assert list(read_pairs(root / "sim.txt", format="twitter_url")) == expected


def test_twitter_url_misaligned_files(tmp_path):
    root = _corpus(tmp_path, ["a", "b", "c"], ["a", "b"], ["1", "0", "1"])
    err = error_for(root)
    assert str(err) == f"{root / 'b.toks'}:3: b.toks ends before line 3 of a.toks"
    records, skipped = read_lenient(root)
    assert len(records) == 2 and skipped == 1


def test_twitter_url_empty_line_against_a_text(tmp_path):
    root = _corpus(tmp_path, ["a", "", "c"], ["x", "y", "z"], ["1", "0", "1"])
    err = error_for(root)
    assert str(err) == f"{root / 'a.toks'}:2: empty line in a.toks, but not in the other files of the pair"
    records, skipped = read_lenient(root)
    assert [r.line for r in records] == [1, 3] and skipped == 1


def test_twitter_url_bad_label_and_missing_file(tmp_path):
    root = _corpus(tmp_path, ["a", "b"], ["a", "b"], ["1", "3"])
    err = error_for(root)
    assert str(err) == f"{root / 'sim.txt'}:2: label '3' is outside [0, 1]"
    (root / "b.toks").unlink()
    with pytest.raises(PairFormatError, match="lacks b.toks"):
        list(read_pairs(root, format="twitter_url"))
    with pytest.raises(PairFormatError, match="nor a directory with a.toks"):
        detect_format(root)
