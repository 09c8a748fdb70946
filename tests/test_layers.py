import numpy
import pytest
from thinc.api import NumpyOps, Ragged

from spacy_siamese.architectures import build_feature_head
from spacy_siamese.layers import cauchy_similarity, mean_max_pool, pair_features
from spacy_siamese.losses import PairLogLoss, PairSquaredError

from .gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def _pair(n=4, width=5, dtype="f8"):
    return rng.normal(size=(n, width)).astype(dtype), rng.normal(size=(n, width)).astype(dtype)


def test_cauchy_values_and_positive_weights():
    model = cauchy_similarity()
    A, B = _pair(dtype="f")
    model.initialize(X=(A, B))
    model.set_param("v", numpy.full((5,), -30.0, dtype="f"))  # softplus(v) ~ 0 but > 0
    Y = model.predict((A, B))
    assert Y.shape == (4, 1)
    assert numpy.all(Y > 0) and numpy.all(Y <= 1)
    model.set_param("v", numpy.zeros((5,), dtype="f"))
    w = numpy.log(2.0)
    expected = 1.0 / (1.0 + w * ((A - B) ** 2).sum(axis=1))
    numpy.testing.assert_allclose(model.predict((A, B))[:, 0], expected, rtol=1e-5)
    numpy.testing.assert_allclose(model.predict((A, A))[:, 0], 1.0)


def test_cauchy_gradients():
    model = cauchy_similarity()
    A, B = _pair()
    model.initialize(X=(A, B))
    model.set_param("v", rng.normal(size=(5,)))  # float64 for a precise check
    R = rng.normal(size=(4, 1))
    loss = lambda: float((model.predict((A, B)) * R).sum())
    Y, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    v = model.get_param("v")
    numeric_v = numeric_grad(lambda: (model.set_param("v", v), loss())[1], v, 1e-6)
    assert_grad_close(model.get_grad("v"), numeric_v)


def test_cauchy_is_symmetric():
    model = cauchy_similarity()
    A, B = _pair(dtype="f")
    model.initialize(X=(A, B))
    assert numpy.array_equal(model.predict((A, B)), model.predict((B, A)))


def test_pair_features_gradients_and_symmetry():
    model = pair_features()
    A, B = _pair()
    model.initialize(X=(A, B))
    Y = model.predict((A, B))
    assert Y.shape == (4, 10)
    numpy.testing.assert_array_equal(Y, model.predict((B, A)))
    R = rng.normal(size=Y.shape)
    loss = lambda: float((model.predict((A, B)) * R).sum())
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))


def test_feature_head_is_symmetric_and_trains():
    head = build_feature_head(hidden_width=8)
    A, B = _pair(n=6, dtype="f")
    head.initialize(X=(A, B))
    numpy.testing.assert_array_equal(head.predict((A, B)), head.predict((B, A)))
    Y, backprop = head((A, B), is_train=True)
    dA, dB = backprop(numpy.ones_like(Y))
    assert dA.shape == A.shape and dB.shape == B.shape


def test_mean_max_pool_values_with_empty_sequences():
    ops = NumpyOps()
    X = rng.normal(size=(5, 3)).astype("f")
    lengths = ops.asarray1i([2, 0, 3, 0])
    model = mean_max_pool()
    model.initialize(X=Ragged(X, lengths))
    Y = model.predict(Ragged(X, lengths))
    assert Y.shape == (4, 6)
    numpy.testing.assert_allclose(Y[0], numpy.concatenate([X[:2].mean(0), X[:2].max(0)]), rtol=1e-6)
    numpy.testing.assert_allclose(Y[2], numpy.concatenate([X[2:].mean(0), X[2:].max(0)]), rtol=1e-6)
    assert not Y[1].any() and not Y[3].any()
    all_empty = model.predict(Ragged(ops.alloc2f(0, 3), ops.asarray1i([0, 0])))
    assert all_empty.shape == (2, 6) and not all_empty.any()


def test_mean_max_pool_gradients():
    ops = NumpyOps()
    X = rng.normal(size=(6, 3)).astype("f")  # distinct values: no ties for max
    lengths = ops.asarray1i([1, 0, 3, 2])
    model = mean_max_pool()
    model.initialize(X=Ragged(X, lengths))
    R = rng.normal(size=(4, 6)).astype("f")
    loss = lambda: float((model.predict(Ragged(X, lengths)).astype("f8") * R).sum())
    _, backprop = model(Ragged(X, lengths), is_train=True)
    dX = backprop(R).dataXd
    # pooling is piecewise linear, so float32 central differences are accurate
    assert_grad_close(dX, numeric_grad(loss, X, 1e-2), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("loss_fn", [PairLogLoss(), PairLogLoss(label_smoothing=0.1), PairSquaredError()])
@pytest.mark.parametrize("n_heads", [1, 2])
def test_loss_gradients(loss_fn, n_heads):
    scores = rng.uniform(0.05, 0.95, size=(6, n_heads))
    truths = numpy.array([0, 1, 1, 0, 1, 0], dtype="f8")
    d, _ = loss_fn(scores, truths)
    numeric = numeric_grad(lambda: loss_fn(scores, truths)[1], scores, 1e-7)
    assert_grad_close(d, numeric, rtol=1e-4)


def test_log_loss_is_finite_at_the_edges():
    scores = numpy.array([[1.0], [0.0]], dtype="f")
    d, loss = PairLogLoss()(scores, numpy.array([0.0, 1.0], dtype="f"))
    assert numpy.isfinite(loss) and numpy.all(numpy.isfinite(d))


def test_label_smoothing_moves_the_optimum_off_0_and_1():
    loss_fn = PairLogLoss(label_smoothing=0.1)
    d, _ = loss_fn(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    numpy.testing.assert_allclose(d, 0.0, atol=1e-12)
    d, _ = PairLogLoss()(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    assert d[0, 0] > 0 and d[1, 0] < 0
    with pytest.raises(ValueError, match="label_smoothing"):
        PairLogLoss(label_smoothing=1.0)


def test_distill_targets_the_main_head_at_the_auxiliary_score():
    scores = rng.uniform(0.05, 0.95, size=(6, 2))
    truths = numpy.array([0, 1, 1, 0, 1, 0], dtype="f8")
    d, _ = PairLogLoss(distill=0.5)(scores, truths)
    d_plain, _ = PairLogLoss()(scores, truths)
    numpy.testing.assert_allclose(d[:, 1], d_plain[:, 1])  # the auxiliary head learns from the labels
    target = 0.5 * truths + 0.5 * scores[:, 1]  # held constant: no gradient into the auxiliary head
    main_scores = scores[:, :1].copy()
    main = lambda: PairLogLoss()(main_scores, target)[1]
    assert_grad_close(d[:, :1], numeric_grad(main, main_scores, 1e-7), rtol=1e-4)
    with pytest.raises(ValueError, match="distill"):
        PairLogLoss(distill=1.5)


def test_pairwise_loss_refuses_two_heads():
    from spacy_siamese.losses import PairwiseLogisticLoss

    with pytest.raises(ValueError, match="one score column, got 2"):
        PairwiseLogisticLoss()(rng.uniform(size=(4, 2)), numpy.array([0.0, 1.0, 1.0, 0.0]))


@pytest.mark.parametrize("weight", [1.0, 0.3])
def test_with_auxiliary_trains_both_heads_and_predicts_with_main(weight):
    from spacy_siamese.layers import with_auxiliary

    # a second Cauchy head as the auxiliary: float64 throughout, for a precise check
    main, aux = cauchy_similarity(), cauchy_similarity()
    model = with_auxiliary(main, aux, weight=weight)
    A, B = _pair()
    model.initialize(X=(A, B))
    assert model.get_dim("nI") == 5
    main.set_param("v", rng.normal(size=(5,)))
    aux.set_param("v", rng.normal(size=(5,)))
    # prediction: the main head alone; training: both heads, side by side
    numpy.testing.assert_array_equal(model.predict((A, B)), main.predict((A, B)))
    Y, backprop = model((A, B), is_train=True)
    assert Y.shape == (4, 2)
    numpy.testing.assert_allclose(Y[:, 1:], aux.predict((A, B)))
    R = rng.normal(size=(4, 2))
    dA, dB = backprop(R)
    # the gradient is main's plus `weight` times the auxiliary head's
    weights = numpy.array([1.0, weight])
    loss = lambda: float((model((A, B), is_train=True)[0] * R * weights).sum())
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    assert numpy.array_equal(model.predict((A, B)), model.predict((B, A)))


def _toy_encoder(width_in=3, width_out=4):
    """A List[vector] -> Floats2d encoder with one weight matrix, standing in for the doc encoder."""
    from thinc.api import Model

    def forward(model, X, is_train):
        W = model.get_param("W")
        stacked = numpy.vstack(X)
        Y = stacked @ W.T

        def backprop(dY):
            model.inc_grad("W", dY.T @ stacked)
            return X

        return Y, backprop

    model = Model("toy", forward, params={"W": None}, dims={"nO": width_out})
    model.set_param("W", rng.normal(size=(width_out, width_in)))
    return model


def test_siamese_routes_both_sides_to_the_shared_encoder():
    from spacy_siamese.layers import siamese

    encoder = _toy_encoder()
    model = siamese(encoder, cauchy_similarity(nI=4))
    model.get_ref("comparison").initialize()
    model.get_ref("comparison").set_param("v", rng.normal(size=(4,)))
    docs_a = [rng.normal(size=(3,)) for _ in range(5)]
    docs_b = [rng.normal(size=(3,)) for _ in range(5)]
    R = rng.normal(size=(5, 1))
    Y, backprop = model((docs_a, docs_b), is_train=True)
    assert Y.shape == (5, 1)
    backprop(R)
    W = encoder.get_param("W")
    numeric = numeric_grad(lambda: float((model.predict((docs_a, docs_b)) * R).sum()), W, 1e-6)
    assert_grad_close(encoder.get_grad("W"), numeric)
    # swapping the sides changes nothing
    numpy.testing.assert_array_equal(model.predict((docs_a, docs_b)), model.predict((docs_b, docs_a)))


def test_siamese_rejects_unequal_sides():
    from spacy_siamese.layers import siamese

    model = siamese(_toy_encoder(), cauchy_similarity(nI=4))
    model.get_ref("comparison").initialize()
    with pytest.raises(ValueError, match="2 docs on side A but 1 on side B"):
        model.predict(([numpy.ones(3), numpy.ones(3)], [numpy.ones(3)]))


def test_train_calibrated_gradients_and_prediction():
    from spacy_siamese.layers import train_calibrated

    inner = cauchy_similarity()
    model = train_calibrated(inner)
    A, B = _pair()
    model.initialize(X=(A, B))
    inner.set_param("v", rng.normal(size=(5,)))
    # starts as the identity map; prediction is always the inner score
    numpy.testing.assert_allclose(model((A, B), is_train=True)[0], inner.predict((A, B)), rtol=1e-6)
    model.set_param("a", numpy.array([0.3]))
    model.set_param("b", numpy.array([0.8]))
    numpy.testing.assert_array_equal(model.predict((A, B)), inner.predict((A, B)))
    # training: sigmoid(a + softplus(b) * logit(s)), an increasing map of s
    s = inner.predict((A, B))
    expected = 1.0 / (1.0 + numpy.exp(-(0.3 + numpy.log1p(numpy.exp(0.8)) * numpy.log(s / (1 - s)))))
    numpy.testing.assert_allclose(model((A, B), is_train=True)[0], expected, rtol=1e-6)
    R = rng.normal(size=(4, 1))
    loss = lambda: float((model((A, B), is_train=True)[0] * R).sum())
    Y, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    for name in ("a", "b"):
        p = model.get_param(name)
        numeric = numeric_grad(lambda: (model.set_param(name, p), loss())[1], p, 1e-6)
        assert_grad_close(model.get_grad(name), numeric)
    v = inner.get_param("v")
    numeric_v = numeric_grad(lambda: (inner.set_param("v", v), loss())[1], v, 1e-6)
    assert_grad_close(inner.get_grad("v"), numeric_v)
    assert numpy.array_equal(model((A, B), is_train=True)[0], model((B, A), is_train=True)[0])
