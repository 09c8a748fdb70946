"""Labelled docs: examples that carry labels instead of a partner."""

import pytest
import spacy

from spacy_siamese.labelled import get_doc_labels, is_labelled_doc, labelled_doc_example, same_label_matrix
from spacy_siamese.pair_examples import is_pair_example

from .conftest import pair_examples

LABELS = [["a"], ["a"], ["b"], ["b", "c"], ["c"], ["a"]]


def test_same_label_matrix_is_multilabel():
    same = same_label_matrix(LABELS)
    assert same[2, 3] and same[3, 4] and not same[2, 4] and same.diagonal().all()


def test_labelled_doc_example_is_a_labelled_doc_not_a_pair():
    nlp = spacy.blank("en")
    eg = labelled_doc_example(nlp.make_doc("the cat sat"), ["pets", "animals"])
    assert is_labelled_doc(eg) and not is_pair_example(eg)
    assert get_doc_labels(eg) == ["pets", "animals"]
    assert eg.predicted.text == eg.reference.text == "the cat sat"
    assert not is_labelled_doc(pair_examples(nlp)[0])


def test_labelled_doc_example_errors():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="non-empty string labels"):
        labelled_doc_example(nlp.make_doc("x"), [])
    with pytest.raises(ValueError, match="a list of labels, not one string"):
        labelled_doc_example(nlp.make_doc("x"), "sports")  # not the labels 's', 'p', 'o', ...
    with pytest.raises(ValueError, match="not a labelled doc"):
        get_doc_labels(pair_examples(nlp)[0])
