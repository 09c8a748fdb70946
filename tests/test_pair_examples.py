import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_siamese.pair_examples import (
    PAIR_KEY,
    dataset_groups,
    get_dataset,
    get_label,
    get_partner,
    make_pair_example,
    pair_example,
)
from spacy_siamese.vectors import VECTOR_KEY


def test_partner_keeps_words_spaces_and_tokenizer_norms():
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "Why can't I sleep?", "I can't sleep and don't know why ", 1)
    partner = get_partner(eg)
    expected = nlp.make_doc("I can't sleep and don't know why ")
    assert partner.text == expected.text
    assert [t.norm_ for t in partner] == [t.norm_ for t in expected]
    assert [t.norm_ for t in partner][1:3] == ["can", "not"]
    assert get_label(eg) == 1.0


def test_pair_survives_docbin():
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "a b", "We won't go", 0)
    data = DocBin(docs=[eg.reference], store_user_data=True).to_bytes()
    reference = next(iter(DocBin().from_bytes(data).get_docs(nlp.vocab)))
    restored = Example(nlp.make_doc(reference.text), reference)
    assert [t.norm_ for t in get_partner(restored)] == [t.norm_ for t in nlp.make_doc("We won't go")]
    assert get_label(restored) == 0.0


@pytest.mark.parametrize("label", [float("nan"), float("inf"), -float("inf"), 5, 1.5, -0.1, "1", None, [1]])
def test_make_pair_example_rejects_bad_labels(label):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=r"label must be a finite number in \[0, 1\]"):
        make_pair_example(nlp, "a b", "c d", label)


@pytest.mark.parametrize("label", [0, 1, 0.25, True, numpy.float32(0.5), numpy.int64(1)])
def test_make_pair_example_accepts_labels_in_range(label):
    eg = make_pair_example(spacy.blank("en"), "a b", "c d", label)
    assert get_label(eg) == float(label)


def test_get_label_rejects_a_bad_stored_label():
    """A label that bypassed make_pair_example (an old .spacy file, hand-made user_data) is
    refused when read, before it reaches the loss."""
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "How are you?", "c d", 1)
    eg.reference.user_data[PAIR_KEY]["label"] = float("nan")
    with pytest.raises(ValueError, match="How are you"):
        get_label(eg)


def test_reference_does_not_carry_a_stored_vector(nlp):
    """Side A may be a processed doc: the reference copy does not take its stored vector along."""
    doc = nlp("How do I learn Python fast?")
    eg = pair_example(doc, nlp.make_doc("c d"), 1)
    assert VECTOR_KEY not in eg.reference.user_data
    assert not eg.reference.user_hooks


def test_dataset_tag_is_kept_beside_the_label_and_survives_docbin():
    nlp = spacy.blank("en")
    eg = make_pair_example(nlp, "a b", "We won't go", 0.25, dataset="sts")
    assert get_dataset(eg) == "sts" and eg.reference.user_data[PAIR_KEY]["dataset"] == "sts"
    data = DocBin(docs=[eg.reference], store_user_data=True).to_bytes()
    reference = next(iter(DocBin().from_bytes(data).get_docs(nlp.vocab)))
    restored = Example(nlp.make_doc(reference.text), reference)
    assert get_dataset(restored) == "sts" and get_label(restored) == 0.25
    untagged = make_pair_example(nlp, "a", "b", 1)
    assert get_dataset(untagged) is None and "dataset" not in untagged.reference.user_data[PAIR_KEY]
    not_a_pair = Example(nlp.make_doc("a"), nlp.make_doc("a"))
    assert get_dataset(not_a_pair) is None
    assert dataset_groups([eg, untagged, eg]) == {"sts": [0, 2], None: [1]}


@pytest.mark.parametrize("name", ["STS", "sts-b", "", "_x", 3])
def test_dataset_names_are_checked(name):
    with pytest.raises(ValueError, match="lower-case letters, digits and underscores"):
        make_pair_example(spacy.blank("en"), "a", "b", 1, dataset=name)
