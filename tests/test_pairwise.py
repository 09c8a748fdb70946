import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese.pairwise import default_block_size, vector_pair_scores, vector_similarity_matrix


def dot(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    return (a * b).sum(axis=1)


def counting(compare):
    calls = []

    def wrapped(a, b):
        calls.append(len(a))
        return compare(a, b)

    return wrapped, calls


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 12), m=st.integers(0, 12), block=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_matrix_equals_brute_force_in_any_blocks(n, m, block, seed):
    rng = numpy.random.default_rng(seed)
    a = rng.normal(size=(n, 3)).astype("f")
    b = rng.normal(size=(m, 3)).astype("f")
    compare, calls = counting(dot)
    matrix = vector_similarity_matrix(compare, a, b, block_size=block)
    expected = numpy.array([[float(dot(x[None], y[None])[0]) for y in b] for x in a], dtype="f").reshape(n, m)
    numpy.testing.assert_allclose(matrix, expected, rtol=1e-5, atol=1e-5)
    assert all(size <= block for size in calls)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), block=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_symmetric_matrix_scores_each_unordered_pair_once(n, block, seed):
    a = numpy.random.default_rng(seed).normal(size=(n, 4)).astype("f")
    compare, calls = counting(dot)
    matrix = vector_similarity_matrix(compare, a, block_size=block)
    numpy.testing.assert_array_equal(matrix, matrix.T)
    numpy.testing.assert_allclose(matrix, a @ a.T, rtol=1e-5, atol=1e-5)
    side = max(1, int(block**0.5))
    tiles = -(-n // side)
    assert len(calls) == tiles * (tiles + 1) // 2


def test_pair_scores_of_chosen_rows():
    rng = numpy.random.default_rng(0)
    a, b = rng.normal(size=(5, 3)).astype("f"), rng.normal(size=(7, 3)).astype("f")
    rows, cols = numpy.array([0, 4, 4, 2]), numpy.array([6, 0, 1, 2])
    scores = vector_pair_scores(dot, a, b, rows, cols, block_size=3)
    numpy.testing.assert_allclose(scores, [a[i] @ b[j] for i, j in zip(rows, cols)], rtol=1e-6)


def test_block_size_bounds():
    assert default_block_size(1) % 32 == 0
    assert default_block_size(10**9) == 32
    ones = numpy.ones((2, 2), "f")
    for block in (-1, 0):  # 0 is not "the default"
        with pytest.raises(ValueError, match="block_size must be positive"):
            vector_similarity_matrix(dot, ones, block_size=block)
        with pytest.raises(ValueError, match="block_size must be positive"):  # not zeros without a word
            vector_pair_scores(dot, ones, ones, numpy.array([0, 1]), numpy.array([1, 0]), block_size=block)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 12), m=st.integers(0, 12), block=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_matrix_scorer_in_bounded_tiles_and_symmetric(n, m, block, seed):
    """A `matrix` scorer replaces `compare`; a symmetric result is exactly symmetric even where the
    scorer rounds (p, q) and (q, p) differently (here: skewed on purpose)."""
    rng = numpy.random.default_rng(seed)
    a, b = rng.normal(size=(n, 3)).astype("f"), rng.normal(size=(m, 3)).astype("f")
    tiles = []

    def matrix(x, y):
        tiles.append(len(x) * len(y))
        return x @ y.T

    compare, calls = counting(dot)
    numpy.testing.assert_allclose(
        vector_similarity_matrix(compare, a, b, block_size=block, matrix=matrix), a @ b.T, atol=1e-5
    )
    assert not calls and all(size <= block for size in tiles)

    def skewed(x, y):  # score(p, q) != score(q, p)
        return x @ y.T + 0.01 * (x[:, :1] > y[:, :1].T)

    matrix = vector_similarity_matrix(compare, a, block_size=block, matrix=skewed)
    numpy.testing.assert_array_equal(matrix, matrix.T)
    full = skewed(a, a)
    numpy.testing.assert_allclose(matrix, numpy.triu(full) + numpy.triu(full, 1).T, atol=1e-5)
