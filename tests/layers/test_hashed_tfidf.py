import numpy
import pytest
import spacy

from spacy_siamese.layers import hashed_tfidf, tfidf
from spacy_siamese.layers.tfidf import TermTable

from .test_tfidf import TEXTS


@pytest.fixture(scope="module")
def blank():
    return spacy.blank("en")


def fitted(blank, width):
    model = hashed_tfidf(tfidf=tfidf(min_df=1), width=width)
    model.initialize(X=[blank.make_doc(t) for t in TEXTS])
    return model


def test_rows_are_unit_and_wide_hashing_keeps_the_tfidf_cosine(blank):
    docs = [blank.make_doc(t) for t in TEXTS]
    model = fitted(blank, 1 << 20)  # no collisions among these few terms
    Y = model.predict(docs)
    assert Y.shape == (len(TEXTS), 1 << 20) and Y.dtype == numpy.float32
    numpy.testing.assert_allclose(numpy.linalg.norm(Y, axis=1), 1.0, rtol=1e-6)
    X = model.layers[0].predict(docs).toarray()
    numpy.testing.assert_allclose(Y @ Y.T, X @ X.T, atol=1e-6)


def test_collisions_sum_the_signed_terms_into_unit_rows(blank):
    docs = [blank.make_doc(t) for t in TEXTS]
    model = fitted(blank, 4)
    Y = model.predict(docs)
    assert Y.shape == (len(TEXTS), 4)
    numpy.testing.assert_allclose(numpy.linalg.norm(Y, axis=1), 1.0, rtol=1e-6)
    # by hand: term t goes to column hash(t) % 4 with sign +1 if bit 32 of its hash is set, else -1
    hashes = [int(h) for h in model.layers[0].attrs["table"].hashes]
    assert len({h % 4 for h in hashes}) < len(hashes)  # collisions do happen
    fold = numpy.zeros((len(hashes), 4))
    for term, h in enumerate(hashes):
        fold[term, h % 4] = 1.0 if (h >> 32) & 1 else -1.0
    expected = model.layers[0].predict(docs).toarray() @ fold
    expected /= numpy.linalg.norm(expected, axis=1, keepdims=True)
    numpy.testing.assert_allclose(Y, expected, rtol=1e-5, atol=1e-6)


def test_empty_and_unknown_docs_are_zero_rows(blank):
    model = fitted(blank, 64)
    Y = model.predict([blank.make_doc(""), blank.make_doc("   "), blank.make_doc("zebra quux"), blank.make_doc("cat")])
    assert not Y[:3].any()
    assert numpy.linalg.norm(Y[3]) == pytest.approx(1.0)


def test_round_trip(blank):
    docs = [blank.make_doc(t) for t in TEXTS]
    model = fitted(blank, 64)
    loaded = hashed_tfidf(tfidf=tfidf(min_df=1), width=64).from_bytes(model.to_bytes())
    numpy.testing.assert_array_equal(loaded.predict(docs), model.predict(docs))


def test_term_table_hashes_are_by_column():
    table = TermTable(["b", "a", "c"], [1.0, 2.0, 3.0])
    cols = table.lookup(table.hashes)
    numpy.testing.assert_array_equal(cols, [0, 1, 2])


def test_bad_width():
    with pytest.raises(ValueError, match="width"):
        hashed_tfidf(tfidf=tfidf(), width=0)
