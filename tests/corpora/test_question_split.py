"""The question-disjoint split of labelled pairs (`grouped_split`), used by the project's
convert step and by benchmarks/tweak.py."""

import pytest

from spacy_siamese.corpora import PairRecord
from spacy_siamese.corpora.sampling import grouped_split, normalize, question_components, questions, title_key


def _pairs(n=120):
    """Chains of questions (q_i - q_{i+1} inside blocks of 3 pairs), from two sources."""
    pairs = []
    for i in range(n):
        block = i // 3
        a, b = f"Question {block}-{i % 3}\nbody {i}", f"question {block}-{i % 3 + 1}?\nother body"
        pairs.append(("askubuntu" if i % 2 else "meta", PairRecord(a, b, float(i % 4 < 2), i + 1)))
    return pairs


def test_keys_ignore_case_punctuation_and_body():
    assert normalize("How do I  install Ubuntu?!") == "how do i install ubuntu"
    assert title_key("Install Ubuntu?\nA long body, with <b>words</b>") == "install ubuntu"
    assert title_key("No body at all") == "no body at all"


def test_components_join_questions_of_the_same_chain():
    comps = question_components(_pairs(9), title_key)
    assert comps == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_split_is_seeded_question_disjoint_and_stratified():
    pairs = _pairs()
    train, dev = grouped_split(pairs, title_key, 0.25, seed=0)
    assert len(train) + len(dev) == len(pairs) and dev
    assert not questions(train, title_key) & questions(dev, title_key)
    for site in ("askubuntu", "meta"):
        for label in (0.0, 1.0):
            n_all = sum(s == site and p.label == label for s, p in pairs)
            n_dev = sum(s == site and p.label == label for s, p in dev)
            assert n_dev <= round(0.25 * n_all)
    assert [p for p in pairs if p in dev] == dev  # input order kept
    assert grouped_split(pairs, title_key, 0.25, seed=0) == (train, dev)
    assert grouped_split(pairs, title_key, 0.25, seed=1)[1] != dev


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1])
def test_bad_dev_fraction(fraction):
    with pytest.raises(ValueError, match="dev_fraction must be between 0 and 1"):
        grouped_split(_pairs(), title_key, fraction, seed=0)


def test_too_small_to_split():
    linked = [("meta", PairRecord("A\nx", "B\ny", 1.0, 1)), ("meta", PairRecord("B\nz", "A\nw", 0.0, 2))]
    with pytest.raises(ValueError, match="Cannot split 2 pair"):
        grouped_split(linked, title_key, 0.5, seed=0)
