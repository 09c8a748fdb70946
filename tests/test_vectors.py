"""The vector store alone, on bare docs: vectors kept in doc.user_data by model id."""

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_siamese.hooks import LostHooksWarning
from spacy_siamese.vectors import (
    VECTOR_KEY,
    drop_vectors,
    is_stored_data,
    store_vector,
    stored_data,
    stored_owner,
    stored_vector,
)

A = numpy.arange(4, dtype="f")
B = numpy.ones(3, dtype="f")


@pytest.fixture
def nlp():
    return spacy.blank("en")


def test_a_doc_starts_with_no_stored_vectors(nlp):
    doc = nlp("How do I learn Python?")
    assert stored_data(doc) is None and stored_owner(doc) is None and stored_vector(doc, "a") is None


def test_store_and_read_by_model_id(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    numpy.testing.assert_array_equal(stored_vector(doc, "a"), A)
    assert stored_vector(doc, "b") is None
    assert stored_owner(doc) == "a"


def test_two_models_on_one_doc_and_the_owner_is_the_last_stored(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    store_vector(doc, "b", B)
    numpy.testing.assert_array_equal(stored_vector(doc, "a"), A)
    numpy.testing.assert_array_equal(stored_vector(doc, "b"), B)
    assert stored_owner(doc) == "b"
    store_vector(doc, "a", 2 * A)  # storing again replaces the vector and takes the doc back
    numpy.testing.assert_array_equal(stored_vector(doc, "a"), 2 * A)
    numpy.testing.assert_array_equal(stored_vector(doc, "b"), B)
    assert stored_owner(doc) == "a"
    assert set(stored_data(doc)["vectors"]) == {"a", "b"}


def test_a_doc_whose_text_changed_reads_none(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    other = Doc(doc.vocab, words=["Where", "is", "Paris", "?"])
    other.user_data.update(doc.user_data)  # the store, carried over to other words
    assert stored_vector(other, "a") is None
    assert stored_owner(other) == "a"  # the owner is recorded, but its vector no longer applies
    merged = nlp("How do I learn Python?")
    store_vector(merged, "a", A)
    with merged.retokenize() as retokenizer:  # the same text in fewer tokens
        retokenizer.merge(merged[0:2])
    assert stored_vector(merged, "a") is None
    numpy.testing.assert_array_equal(stored_vector(doc, "a"), A)  # the original is untouched


def test_a_copy_keeps_the_vector_and_storing_on_it_leaves_the_original(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    copy = doc.copy()
    numpy.testing.assert_array_equal(stored_vector(copy, "a"), A)
    store_vector(copy, "b", B)
    assert stored_vector(doc, "b") is None and stored_owner(doc) == "a"


def test_drop_vectors(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    store_vector(doc, "b", B)
    drop_vectors(doc)
    assert VECTOR_KEY not in doc.user_data
    assert stored_vector(doc, "a") is None and stored_vector(doc, "b") is None and stored_owner(doc) is None
    drop_vectors(doc)  # nothing to drop: no error
    drop_vectors(nlp("untouched"))


@pytest.mark.filterwarnings("ignore::spacy_siamese.hooks.LostHooksWarning")
def test_docbin_and_doc_to_bytes_keep_the_store(nlp):
    docs = [nlp("How do I learn Python?"), nlp("What makes the sky blue?")]
    for i, doc in enumerate(docs):
        store_vector(doc, "a", A + i)
        store_vector(doc, "b", B - i)
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    restored = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    restored.append(Doc(nlp.vocab).from_bytes(docs[0].to_bytes()))
    for old, new in zip(docs + docs[:1], restored):
        for model_id in ("a", "b"):
            numpy.testing.assert_array_equal(stored_vector(new, model_id), stored_vector(old, model_id))
            assert stored_vector(new, model_id).dtype == numpy.float32
        assert stored_owner(new) == "b"


def test_decoding_the_store_warns_that_hooks_are_lost(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    with pytest.warns(LostHooksWarning):
        Doc(nlp.vocab).from_bytes(doc.to_bytes())


def test_is_stored_data(nlp):
    doc = nlp("How do I learn Python?")
    store_vector(doc, "a", A)
    assert is_stored_data(doc.user_data[VECTOR_KEY])
    assert is_stored_data(stored_data(doc))
    for obj in (None, {}, {"vectors": {}}, {"format": "something.else"}, [("format", "x")], "spacy_siamese"):
        assert not is_stored_data(obj)
    doc.user_data[VECTOR_KEY] = {"format": "old"}  # not this store's format: read as no store
    assert stored_data(doc) is None and stored_vector(doc, "a") is None
