import numpy
import pytest

from spacy_siamese.layers import exp_l1_similarity
from spacy_siamese.layers.heads import score_range

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def _pair(n=4, width=5, dtype="f8"):
    return rng.normal(size=(n, width)).astype(dtype), rng.normal(size=(n, width)).astype(dtype)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_exp_similarity_values(norm):
    model = exp_l1_similarity(norm=norm, scale=0.5)
    A, B = _pair()
    model.initialize(X=(A, B))
    dist = numpy.abs(A - B).sum(axis=1) if norm == "l1" else numpy.linalg.norm(A - B, axis=1)
    numpy.testing.assert_allclose(model.predict((A, B))[:, 0], numpy.exp(-0.5 * dist), rtol=1e-12)
    numpy.testing.assert_array_equal(model.predict((A, A)), 1.0)
    Y = model.predict((A, B))
    assert Y.shape == (4, 1) and ((Y > 0) & (Y <= 1)).all()
    assert score_range(model) == (0.0, 1.0)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_exp_similarity_gradients(norm):
    model = exp_l1_similarity(norm=norm, scale=0.3)
    A, B = _pair()
    model.initialize(X=(A, B))
    R = rng.normal(size=(4, 1))
    loss = lambda: float((model.predict((A, B)) * R).sum())  # noqa: E731
    dA, dB = model((A, B), is_train=True)[1](R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_exp_similarity_identical_rows_have_zero_gradient(norm):
    model = exp_l1_similarity(norm=norm)
    A, _ = _pair()
    model.initialize(X=(A, A))
    dA, dB = model((A, A.copy()), is_train=True)[1](numpy.ones((4, 1)))
    assert numpy.isfinite(dA).all() and not dA.any() and not dB.any()


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_exp_similarity_is_symmetric(norm):
    model = exp_l1_similarity(norm=norm)
    A, B = _pair(dtype="f")
    model.initialize(X=(A, B))
    assert numpy.array_equal(model.predict((A, B)), model.predict((B, A)))


def test_exp_similarity_rejects_bad_settings():
    with pytest.raises(ValueError, match="norm must be one of 'l1', 'l2', got 'l3'"):
        exp_l1_similarity(norm="l3")
    with pytest.raises(ValueError, match="scale must be a finite non-negative number, got -1.0"):
        exp_l1_similarity(scale=-1.0)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_exp_similarity_refuses_an_infinite_scale(norm):
    """exp(-inf * 0) is NaN: an infinite scale scored identical vectors NaN (and all others 0)."""
    with pytest.raises(ValueError, match="ExpL1Similarity: scale must be a finite non-negative number, got inf"):
        exp_l1_similarity(norm=norm, scale=float("inf"))
