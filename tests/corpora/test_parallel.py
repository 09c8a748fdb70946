"""Parallel text: line-aligned files, JSON lines, the dev split and pseudo-documents."""

import warnings

import pytest
import spacy
import srsly
from hypothesis import given
from hypothesis import strategies as st

from spacy_siamese.corpora import PairFormatError
from spacy_siamese.corpora.parallel import (
    ParallelPair,
    create_parallel_corpus,
    crosslingual_corpus,
    pseudo_documents,
    read_parallel,
    read_parallel_jsonl,
    split_parallel,
    write_parallel_jsonl,
)
from spacy_siamese.pair_examples import get_label, partner_text

from .util import PROFILES


def _write(path, lines, end="\n"):
    path.write_text("".join(line + end for line in lines), encoding="utf8", newline="")
    return path


def test_read_parallel_pairs_lines_and_origins(tmp_path):
    en = _write(tmp_path / "train.en", ["One cat.", "Two dogs."])
    es = _write(tmp_path / "train.es", ["Un gato.", "Dos perros."])
    src = _write(tmp_path / "train.source", ["tatoeba", "newstest2012"])
    pairs = read_parallel(en, es, origins=src)
    assert pairs == [
        ParallelPair("One cat.", "Un gato.", 1, "tatoeba"),
        ParallelPair("Two dogs.", "Dos perros.", 2, "newstest2012"),
    ]


def test_read_parallel_unequal_line_counts_name_the_short_file_and_line(tmp_path):
    en = _write(tmp_path / "train.en", ["a", "b", "c"])
    es = _write(tmp_path / "train.es", ["x", "y"])
    with pytest.raises(PairFormatError) as err:
        read_parallel(en, es)
    assert err.value.path == str(es) and err.value.line == 3
    assert str(en) in str(err.value) and "3 lines" in str(err.value)


def test_read_parallel_no_final_newline_is_the_same_file(tmp_path):
    en = tmp_path / "a.en"
    en.write_text("a\nb", encoding="utf8")
    es = _write(tmp_path / "a.es", ["x", "y"])
    assert [p.text_a for p in read_parallel(en, es)] == ["a", "b"]


def test_read_parallel_empty_line_names_file_and_line(tmp_path):
    en = _write(tmp_path / "train.en", ["a", "  ", "c"])
    es = _write(tmp_path / "train.es", ["x", "y", "z"])
    with pytest.raises(PairFormatError, match=r"train\.en:2: empty line"):
        read_parallel(en, es)


# Issue 75, defect 4: a stray CR ended a line, so one in each file (at different lines) kept the
# counts equal and misaligned every pair between them.


def test_read_parallel_a_cr_inside_a_line_keeps_the_pairs_aligned(tmp_path):
    en = [f"English sentence {i}." for i in range(1, 13)]
    es = [f"Frase española {i}." for i in range(1, 13)]
    en[2] = "English\rsentence 3."
    es[8] = "Frase\respañola 9."
    pairs = read_parallel(_write(tmp_path / "a.en", en, "\r\n"), _write(tmp_path / "a.es", es))
    assert [(p.text_a, p.text_b, p.line) for p in pairs] == list(zip(en, es, range(1, 13)))


_CR_TEXT = st.text(st.sampled_from(list("ab é\r\t")), min_size=1, max_size=12).filter(lambda t: t.strip(" \t\r"))


@pytest.mark.parametrize("profile", PROFILES)
def test_read_parallel_crs_in_random_texts_are_text(tmp_path, profile):
    @profile
    @given(texts=st.lists(st.tuples(_CR_TEXT, _CR_TEXT), min_size=1, max_size=8), crlf=st.booleans())
    def check(texts, crlf):
        end = "\r\n" if crlf else "\n"
        en = _write(tmp_path / "r.en", [a for a, _ in texts], end)
        es = _write(tmp_path / "r.es", [b for _, b in texts])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the length report
            pairs = read_parallel(en, es)
        # a text's own final CR and the "\n" after it read as a Windows line end
        strip = lambda t: t[:-1] if t.endswith("\r") else t  # noqa: E731
        assert [(p.text_a, p.text_b, p.line) for p in pairs] == [
            (a if crlf else strip(a), strip(b), n) for n, (a, b) in enumerate(texts, 1)
        ]

    check()


def test_read_parallel_empty_against_a_text_names_both_files(tmp_path):
    en = _write(tmp_path / "train.en", ["a", "", "c", "d"])
    es = _write(tmp_path / "train.es", ["x", "", "  ", "w"])
    with pytest.raises(PairFormatError) as err:
        read_parallel(en, es)
    assert err.value.path == str(es) and err.value.line == 3
    assert f"empty line in {es}, but not in {en}" in str(err.value)
    src = _write(tmp_path / "train.source", ["o", "", "", "o"])
    es = _write(tmp_path / "train.es", ["x", "", "z", "w"])
    with pytest.raises(PairFormatError, match=rf"train\.source:3: empty line in {src}, but not in {en}, {es}"):
        read_parallel(en, es, origins=src)
    # a line empty in every file is no pair: skipped, the others keep their lines
    assert [(p.text_a, p.line) for p in read_parallel(en, es)] == [("a", 1), ("c", 3), ("d", 4)]


def test_read_parallel_reports_length_outliers(tmp_path):
    en = [f"A sentence of some length, number {i}." for i in range(12)]
    es = [f"Una frase de cierta longitud, número {i}." for i in range(12)]
    es[4], es[7] = "Sí.", "No."
    with pytest.warns(UserWarning, match=r"2 of the 12 pairs of .*a\.en and .*a\.es differ in length .*line 5, 8"):
        pairs = read_parallel(_write(tmp_path / "a.en", en), _write(tmp_path / "a.es", es))
    assert len(pairs) == 12  # reported, not dropped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_parallel(_write(tmp_path / "b.en", ["OK", "Yes."]), _write(tmp_path / "b.es", ["De acuerdo", "Sí."]))


def test_read_parallel_invalid_utf8_names_file_and_line(tmp_path):
    en = _write(tmp_path / "train.en", ["a", "b"])
    es = tmp_path / "train.es"
    es.write_bytes(b"x\n\xff\xfey\n")
    with pytest.raises(PairFormatError, match=r"train\.es:2: invalid UTF-8"):
        read_parallel(en, es)


def test_read_parallel_missing_file():
    with pytest.raises(FileNotFoundError, match="Parallel file not found"):
        read_parallel("nowhere.en", "nowhere.es")


def test_jsonl_round_trip_and_errors(tmp_path):
    pairs = [ParallelPair("One cat.", "Un gato.", 1, "tatoeba", "sentences")]
    path = tmp_path / "dev.jsonl"
    write_parallel_jsonl(pairs, path, ("en", "es"))
    assert read_parallel_jsonl(path, ("en", "es")) == pairs
    srsly.write_jsonl(path, [{"en": "a", "es": "b"}, {"en": "c", "fr": "d"}])
    with pytest.raises(PairFormatError, match=r"dev\.jsonl:2: missing key 'es'"):
        read_parallel_jsonl(path, ("en", "es"))
    path.write_text('{"en": "a", "es": ""}\n', encoding="utf8")
    with pytest.raises(PairFormatError, match=r"dev\.jsonl:1: 'es' is empty"):
        read_parallel_jsonl(path, ("en", "es"))
    path.write_text('{"en": "a", "es": "b"}\n{"en": \n', encoding="utf8")
    with pytest.raises(PairFormatError, match=r"dev\.jsonl:2:"):
        read_parallel_jsonl(path, ("en", "es"))


def test_jsonl_refuses_degenerate_input(tmp_path):
    path = tmp_path / "dev.jsonl"
    srsly.write_jsonl(path, [{"en": "a", "es": "b"}, {"en": "c", "es": "d", "text1": "c", "text2": "d", "label": 0}])
    with pytest.raises(
        PairFormatError, match=r"dev\.jsonl:2: ambiguous row: .*\['en', 'es'\] .*\['text1', 'text2', 'label'\]"
    ):
        read_parallel_jsonl(path, ("en", "es"))
    path.write_text("\n \n", encoding="utf8")
    with pytest.raises(PairFormatError, match=r"no pairs found in .*dev\.jsonl"):
        read_parallel_jsonl(path, ("en", "es"))
    with pytest.raises(ValueError, match="'en' twice"):
        read_parallel_jsonl(path, ("en", "en"))


def _corpus():
    pairs = [ParallelPair(f"sentence {i}", f"frase {i}", i + 1, "tatoeba") for i in range(20)]
    start = len(pairs) + 1
    for k, origin in enumerate(["news1"] * 7 + ["news2"] * 6):
        pairs.append(ParallelPair(f"news line {k}", f"linea {k}", start + k, origin))
    return pairs


def test_split_keeps_dev_news_whole_and_no_text_in_both():
    pairs = _corpus()
    # a training pair that repeats a dev text (case and spaces differ) must leave train
    pairs.append(ParallelPair("NEWS  line 8", "otra", len(pairs) + 1, "tatoeba"))
    train, dev = split_parallel(pairs, dev_origins=["news2"], dev_sentences=5, seed=1)
    assert [p.origin for p in dev].count("news2") == 6
    assert [p.line for p in dev if p.origin == "news2"] == list(range(28, 34))  # document order
    assert sum(p.origin == "tatoeba" for p in dev) == 5
    dev_texts = {t.lower() for p in dev for t in (p.text_a, p.text_b)}
    assert not any(" ".join(t.lower().split()) in dev_texts for p in train for t in (p.text_a, p.text_b))
    assert len(train) + len(dev) == len(pairs) - 1
    assert split_parallel(pairs, dev_origins=["news2"], dev_sentences=5, seed=1) == (train, dev)


def test_split_errors():
    with pytest.raises(ValueError, match="dev origin"):
        split_parallel(_corpus(), dev_origins=["newstest2099"])
    with pytest.raises(ValueError, match="dev sentences asked for"):
        split_parallel(_corpus(), dev_origins=["news2"], dev_sentences=21)


def test_pseudo_documents_are_windows_of_consecutive_news_lines():
    pairs = _corpus()
    del pairs[23]  # a gap in news1: lines 21-23 and 25-27 are separate runs
    docs = pseudo_documents(pairs, size=3)
    assert [(d.origin, d.line) for d in docs] == [("news1", 21), ("news1", 25), ("news2", 28), ("news2", 31)]
    assert docs[0].text_a == "news line 0 news line 1 news line 2"
    assert docs[0].text_b == "linea 0 linea 1 linea 2"
    assert pseudo_documents(pairs, size=7) == []
    with pytest.raises(ValueError):
        pseudo_documents(pairs, size=0)


def test_crosslingual_corpus_groups():
    train, dev = crosslingual_corpus(_corpus(), window=3, dev_origins=["news2"], dev_sentences=4)
    assert {p.group for p in train} == {"sentences", "news", "documents"}
    assert [p.group for p in dev].count("documents") == 2 and [p.group for p in dev].count("news") == 6


def test_parallel_corpus_reader(tmp_path):
    path = tmp_path / "train.jsonl"
    pairs = [ParallelPair(f"text {i}", f"texto {i}", i, "o", "sentences" if i % 2 else "news") for i in range(1, 7)]
    write_parallel_jsonl(pairs, path, ("en", "es"))
    nlp = spacy.blank("xx")
    examples = list(create_parallel_corpus(path, langs=["en", "es"], groups=["sentences"])(nlp))
    assert [eg.predicted.text for eg in examples] == ["text 1", "text 3", "text 5"]
    assert [get_label(eg) for eg in examples] == [1.0] * 3
    with_negatives = list(create_parallel_corpus(path, langs=["en", "es"], negatives=True, seed=3)(nlp))
    negatives = [eg for eg in with_negatives if get_label(eg) == 0.0]
    assert len(negatives) == 6
    assert all(partner_text(eg).split()[1] != eg.predicted.text.split()[1] for eg in negatives)
    with pytest.raises(ValueError, match="langs"):
        create_parallel_corpus(path, langs=["en"])


def test_jsonl_pair_format_keeps_its_labels(tmp_path):
    path = tmp_path / "pairs.jsonl"
    srsly.write_jsonl(
        path, [{"text1": "a cat", "text2": "un gato", "label": 1}, {"text1": "a", "text2": "b", "label": 0}]
    )
    pairs = read_parallel_jsonl(path, ("en", "es"))
    assert [(p.text_a, p.label) for p in pairs] == [("a cat", 1.0), ("a", 0.0)]
    labels = [get_label(eg) for eg in create_parallel_corpus(path, langs=["en", "es"])(spacy.blank("xx"))]
    assert labels == [1.0, 0.0]
    srsly.write_jsonl(path, [{"text1": "a", "text2": "b"}])
    with pytest.raises(PairFormatError, match=r"pairs\.jsonl:1: a text1/text2 pair needs a number 'label'"):
        read_parallel_jsonl(path, ("en", "es"))
