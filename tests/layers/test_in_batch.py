import numpy
import pytest

from spacy_siamese.architectures.feature_head import build_feature_head
from spacy_siamese.layers import cauchy_similarity, cosine_similarity, train_calibrated, with_auxiliary
from spacy_siamese.layers.heads import score_range
from spacy_siamese.layers.in_batch import with_in_batch_scores

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def cauchy():
    layer = cauchy_similarity()
    layer.initialize(X=(rng.normal(size=(3, 5)), rng.normal(size=(3, 5))))
    layer.set_param("v", rng.normal(size=(5,)))
    return layer


COMPARISONS = {
    "cauchy": cauchy,
    "cosine": lambda: cosine_similarity(rescale=True),
    "calibrated": lambda: train_calibrated(comparison=cauchy()),
    "auxiliary": lambda: with_auxiliary(main=train_calibrated(comparison=cauchy()), auxiliary=cauchy(), weight=0.5),
}


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_training_output_is_pair_columns_then_the_batch_matrix(name):
    inner = COMPARISONS[name]()
    model = with_in_batch_scores(comparison=inner)
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    Y, _ = model((A, B), is_train=True)
    own, _ = inner((A, B), is_train=True)
    k = own.shape[1]
    assert Y.shape == (4, k + 4)
    numpy.testing.assert_allclose(Y[:, :k], own)
    scorer = inner.get_ref("main") if inner.has_ref("main") else inner
    for i in range(4):
        row, _ = scorer((numpy.repeat(A[i : i + 1], 4, axis=0), B), is_train=True)
        numpy.testing.assert_allclose(Y[i, k:], row[:, 0])
    # the diagonal is the paired score of the predicting head
    numpy.testing.assert_allclose(numpy.diag(Y[:, k:]), scorer((A, B), is_train=True)[0][:, 0])


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_prediction_is_the_plain_comparison(name):
    inner = COMPARISONS[name]()
    model = with_in_batch_scores(comparison=inner)
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    numpy.testing.assert_array_equal(model.predict((A, B)), inner.predict((A, B)))
    assert score_range(model) == score_range(inner)


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_swapping_the_sides_transposes_the_matrix(name):
    model = with_in_batch_scores(comparison=COMPARISONS[name]())
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    Y_ab, _ = model((A, B), is_train=True)
    Y_ba, _ = model((B, A), is_train=True)
    numpy.testing.assert_allclose(Y_ab[:, -4:], Y_ba[:, -4:].T, rtol=1e-10)


@pytest.mark.parametrize("name", list(COMPARISONS))
def test_gradients_match_finite_differences(name):
    model = with_in_batch_scores(comparison=COMPARISONS[name]())
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    Y, backprop = model((A, B), is_train=True)
    R = rng.normal(size=Y.shape)
    dA, dB = backprop(R)
    weights = numpy.ones(Y.shape[1])
    if name == "auxiliary":
        weights[1] = 0.5  # WithAuxiliary scales the auxiliary head's gradient by its weight
    loss = lambda: float((model((A, B), is_train=True)[0] * R * weights).sum())  # noqa: E731
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6), rtol=1e-4, atol=1e-6)
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6), rtol=1e-4, atol=1e-6)


def test_parameter_gradients_match_finite_differences():
    inner = train_calibrated(comparison=cauchy())
    model = with_in_batch_scores(comparison=inner)
    A, B = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    model.initialize(X=(A, B))
    cauchy_layer = inner.layers[0]
    v = numpy.asarray(cauchy_layer.get_param("v"), dtype="f8").copy()
    cauchy_layer.set_param("v", v)
    Y, backprop = model((A, B), is_train=True)
    R = rng.normal(size=Y.shape)
    backprop(R)
    analytic = cauchy_layer.get_grad("v").copy()
    loss = lambda: float((model((A, B), is_train=True)[0] * R).sum())  # noqa: E731
    assert_grad_close(analytic, numeric_grad(loss, cauchy_layer.get_param("v"), 1e-6), rtol=1e-4, atol=1e-6)


def test_feature_head_works_inside():
    head = build_feature_head(hidden_width=8, maxout_pieces=2, dropout=0.0)
    model = with_in_batch_scores(comparison=head)
    A, B = rng.normal(size=(3, 6)).astype("f"), rng.normal(size=(3, 6)).astype("f")
    model.initialize(X=(A, B))
    Y, backprop = model((A, B), is_train=True)
    assert Y.shape == (3, 4)
    dA, dB = backprop(numpy.ones_like(Y))
    assert dA.shape == A.shape and dB.shape == B.shape
    numpy.testing.assert_allclose(model.predict((A, B)), head.predict((A, B)))
