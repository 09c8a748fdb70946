import numpy
import spacy
from spacy.vectors import Vectors

from spacy_siamese.layers import sentence_vectors

from ..conftest import set_random_vectors


def test_sentence_vectors_average_each_sentence():
    nlp = set_random_vectors(spacy.blank("en"), "the cat sat dog ran far away .".split(), 6)
    doc = nlp.make_doc("the cat sat . the dog ran far away . unknownword")
    model = sentence_vectors()
    model.initialize(X=[doc])
    (S,) = model.predict([doc])
    assert S.shape == (3, 6)
    expected = numpy.mean([nlp.vocab.get_vector(w) for w in ["the", "cat", "sat", "."]], axis=0)
    numpy.testing.assert_allclose(S[0], expected, rtol=1e-6)
    assert not S[2].any()  # no token with a vector
    assert model.predict([nlp.make_doc("")])[0].shape == (0, 6)
    assert not doc.has_annotation("SENT_START")  # the doc is not changed


def test_sentence_vectors_look_words_up_as_the_vectors_are_keyed():
    """A table keyed by LOWER (Vectors(attr="LOWER")) gives "The" the vector of "the", as spaCy's
    StaticVectors and token.vector do; looking up by ORTH found no vector at all."""
    nlp = spacy.blank("en")
    table = Vectors(strings=nlp.vocab.strings, shape=(2, 3), attr="LOWER")
    table.add("the", vector=numpy.ones(3, dtype="f"))
    table.add("cat", vector=numpy.full(3, 3.0, dtype="f"))
    nlp.vocab.vectors = table
    doc = nlp.make_doc("The Cat .")
    model = sentence_vectors()
    model.initialize(X=[doc])
    numpy.testing.assert_allclose(model.predict([doc])[0], [[4 / 3] * 3], rtol=1e-6)
