import numpy
import pytest

from spacy_siamese.space import VectorSpace

from .conftest import CORPUS

# Comparisons that need the pair, scored pair by pair; the others by matrix products.
PAIR_WISE = {"feature", "exp_l1"}


def record_compare(pipe, monkeypatch):
    """The sizes of the calls to `pipe.compare` from now on."""
    sizes = []
    compare = pipe.compare

    def recording(a, b):
        sizes.append(len(a))
        return compare(a, b)

    monkeypatch.setattr(pipe, "compare", recording)
    return sizes


def test_matrix_equals_doc_similarity(model, monkeypatch):
    """Before: every comparison went pair by pair through `compare` (5 s for 100 x 2,000 texts)."""
    name, nlp = model
    pipe = nlp.get_pipe("siamese_similarity")
    docs_a = list(nlp.pipe(CORPUS[:23]))
    docs_b = list(nlp.pipe(CORPUS[23:60]))
    calls = record_compare(pipe, monkeypatch)
    matrix = pipe.similarity_matrix(docs_a, docs_b, block_size=50)
    assert bool(calls) == (name in PAIR_WISE)
    expected = numpy.array([[a.similarity(b) for b in docs_b] for a in docs_a], dtype="float32")
    assert matrix.shape == (23, 37)
    assert matrix.dtype == numpy.float32
    numpy.testing.assert_allclose(matrix, expected, rtol=0, atol=1e-6)
    if name in PAIR_WISE:
        numpy.testing.assert_array_equal(matrix, expected)


def test_matrix_symmetric_without_docs_b(model):
    _, nlp = model
    pipe = nlp.get_pipe("siamese_similarity")
    docs = list(nlp.pipe(CORPUS[:40]))
    for block in (64, None):
        matrix = pipe.similarity_matrix(docs, block_size=block)
        numpy.testing.assert_array_equal(matrix, matrix.T)
        expected = numpy.array([[a.similarity(b) for b in docs] for a in docs], dtype="float32")
        numpy.testing.assert_allclose(matrix, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["feature", "hybrid_cauchy"])
def test_matrix_block_size_bounds_every_call(models, monkeypatch, name):
    nlp = models[name]
    pipe = nlp.get_pipe("siamese_similarity")
    docs = list(nlp.pipe(CORPUS[:30]))
    full = pipe.similarity_matrix(docs, docs[:7])
    sizes = record_compare(pipe, monkeypatch)
    scores = VectorSpace.scores

    def recording(space, a, b):
        sizes.append(len(a) * len(b))
        return scores(space, a, b)

    monkeypatch.setattr(VectorSpace, "scores", recording)
    for block in (1, 5, 16, 100):
        sizes.clear()
        tolerance = 0 if name == "feature" else 1e-6  # matrix products of other shapes may round otherwise
        numpy.testing.assert_allclose(pipe.similarity_matrix(docs, docs[:7], block_size=block), full, atol=tolerance)
        assert sizes and max(sizes) <= block
        sizes.clear()
        pipe.similarity_matrix(docs, block_size=block)
        assert max(sizes) <= block


def test_matrix_of_unprocessed_docs_encodes_them(models):
    nlp = models["feature"]
    pipe = nlp.get_pipe("siamese_similarity")
    raw = [nlp.make_doc(t) for t in CORPUS[:6]]
    numpy.testing.assert_array_equal(pipe.similarity_matrix(raw), pipe.similarity_matrix(list(nlp.pipe(CORPUS[:6]))))


def test_matrix_empty_sides(models):
    pipe = models["cauchy"].get_pipe("siamese_similarity")
    docs = list(models["cauchy"].pipe(CORPUS[:3]))
    assert pipe.similarity_matrix([], docs).shape == (0, 3)
    assert pipe.similarity_matrix(docs, []).shape == (3, 0)


def test_bad_block_size(models):
    pipe = models["cauchy"].get_pipe("siamese_similarity")
    docs = list(models["cauchy"].pipe(CORPUS[:3]))
    with pytest.raises(ValueError, match="block_size"):
        pipe.similarity_matrix(docs, block_size=-1)


def test_compare_does_not_depend_on_the_other_pairs(model):
    _, nlp = model
    pipe = nlp.get_pipe("siamese_similarity")
    rng = numpy.random.default_rng(0)
    width = pipe.encoder.get_dim("nO")
    a = rng.normal(size=(301, width)).astype("f")
    b = (a + rng.normal(scale=0.3, size=a.shape)).astype("f")
    whole = pipe.compare(a, b)
    for size in (1, 2, 3, 5, 33, 100):
        parts = numpy.concatenate([pipe.compare(a[s : s + size], b[s : s + size]) for s in range(0, len(a), size)])
        numpy.testing.assert_array_equal(parts, whole)


def test_matrix_of_texts_equals_the_matrix_of_their_docs(models):
    nlp = models["hybrid_cauchy"]
    pipe = nlp.get_pipe("siamese_similarity")
    docs = list(nlp.pipe(CORPUS[:9]))
    numpy.testing.assert_array_equal(
        pipe.similarity_matrix(CORPUS[:9], docs[:4]), pipe.similarity_matrix(docs, docs[:4])
    )
