import tracemalloc

import numpy
import pytest
from thinc.api import Model, chain

from spacy_siamese.layers import exp_l1_similarity, lstm, sequence_pool, siamese

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def _model(bidirectional=False, depth=1, nO=4, nI=3):
    model = lstm(nO=nO, nI=nI, bidirectional=bidirectional, depth=depth)
    model.initialize()
    for name in model.param_names:  # float64 weights for a precise check
        model.set_param(name, rng.normal(size=model.get_param(name).shape) * 0.5)
    return model


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("lengths", [[3], [3, 2, 0], [1], [4, 1], [2, 5, 0, 1]])
def test_lstm_gradients(bidirectional, depth, lengths):
    model = _model(bidirectional, depth)
    X = [rng.normal(size=(n, 3)) for n in lengths]
    Y, backprop = model(X, is_train=True)
    assert [y.shape for y in Y] == [(n, 4) for n in lengths]
    R = [rng.normal(size=y.shape) for y in Y]
    dX = backprop(R)
    loss = lambda: float(sum((y * r).sum() for y, r in zip(model.predict(X), R)))  # noqa: E731
    for name in model.param_names:
        assert_grad_close(model.get_grad(name), numeric_grad(loss, model.get_param(name), 1e-6))
    assert len(dX) == len(X)
    for x, dx in zip(X, dX):
        assert dx.shape == x.shape
        if len(x):
            assert_grad_close(dx, numeric_grad(loss, x, 1e-6))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_sequences_do_not_see_each_other(bidirectional):
    """Padding in a batch changes nothing: each sequence's output is its output alone."""
    model = _model(bidirectional, depth=2)
    X = [rng.normal(size=(n, 3)) for n in (5, 2, 0, 3)]
    together = model.predict(X)
    assert len(together) == len(X)
    for x, y in zip(X, together):
        numpy.testing.assert_allclose(model.predict([x])[0], y, rtol=1e-12, atol=1e-12)


def test_lstm_float32_short_sequence_alone_and_beside_a_long_one():
    """float32 stays float32, and a sequence's output and input gradient do not depend on a much
    longer sequence sharing its batch."""
    model = lstm(nO=6, nI=3, bidirectional=True, depth=2)
    model.initialize()
    short, long = (rng.normal(size=(n, 3)).astype("f") for n in (3, 2000))
    (alone,), backprop_alone = model([short], is_train=True)
    (beside, beside_long), backprop = model([short, long], is_train=True)
    assert alone.dtype == beside.dtype == numpy.float32 and numpy.isfinite(beside_long).all()
    numpy.testing.assert_allclose(beside, alone, rtol=1e-5, atol=1e-6)
    R = rng.normal(size=alone.shape).astype("f")
    (d_alone,) = backprop_alone([R])
    d_beside, d_long = backprop([R, numpy.zeros_like(beside_long)])
    assert d_beside.dtype == numpy.float32 and not d_long.any()
    numpy.testing.assert_allclose(d_beside, d_alone, rtol=1e-5, atol=1e-6)
    assert all(model.get_grad(name).dtype == numpy.float32 for name in model.param_names)


def test_lstm_memory_follows_the_tokens_not_the_longest_sequence():
    """One long sequence beside many one-token ones costs what as many tokens in short sequences
    cost (padding every sequence to the longest took length x batch size: quadratic)."""
    model = lstm(nO=16, nI=8, bidirectional=True)
    model.initialize()

    def peak_memory(lengths):
        X = [numpy.ones((n, 8), dtype="f") for n in lengths]
        tracemalloc.start()
        try:
            Y, backprop = model(X, is_train=True)
            backprop(Y)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert peak_memory([300] + [1] * 300) < 2 * peak_memory([2] * 300)


def test_bidirectional_backward_half_reads_the_reversed_sequence():
    model = _model(bidirectional=True)
    x = rng.normal(size=(4, 3))
    out = model.predict([x])[0]
    # the backward half is a forward LSTM with the backward weights over the reversed sequence
    first = lstm(nO=2, nI=3)
    first.initialize()
    for name in ("W", "U", "b"):
        first.set_param(f"{name}0_0", model.get_param(f"{name}0_1"))
    numpy.testing.assert_allclose(out[:, 2:], first.predict([x[::-1].copy()])[0][::-1], rtol=1e-12)


def test_lstm_rejects_bad_settings():
    with pytest.raises(ValueError, match="even nO"):
        lstm(nO=3, bidirectional=True)
    with pytest.raises(ValueError, match="depth must be at least 1"):
        lstm(nO=4, depth=0)


def _recording(grads):
    """An identity layer that keeps the gradient passed back through it."""

    def forward(model, X, is_train):
        def backprop(dX):
            grads.append(dX)
            return dX

        return X, backprop

    return Model("recording", forward)


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_gradients_through_the_siamese_lstm(norm, pooling):
    """Finite differences through Siamese(LSTM -> pooling, exp(-L1/L2)) on float64 sequences
    standing in for the token features: the LSTM weights and the inputs of both sides."""
    rng = numpy.random.default_rng(0)
    grads = []
    recurrent = lstm(nO=6, nI=3, bidirectional=True)
    encoder = chain(_recording(grads), recurrent, sequence_pool(mode=pooling, bidirectional=True))
    model = siamese(encoder=encoder, comparison=exp_l1_similarity(norm=norm, scale=0.5))
    side_a = [rng.normal(size=(n, 3)) for n in (4, 2, 0)]
    side_b = [rng.normal(size=(n, 3)) for n in (3, 2, 1)]
    model.initialize(X=(side_a, side_b))
    for name in recurrent.param_names:
        recurrent.set_param(name, rng.normal(size=recurrent.get_param(name).shape) * 0.5)
    R = rng.normal(size=(3, 1))
    _, backprop = model((side_a, side_b), is_train=True)
    backprop(R)
    loss = lambda: float((model.predict((side_a, side_b)) * R).sum())  # noqa: E731
    for name in recurrent.param_names:
        assert_grad_close(recurrent.get_grad(name), numeric_grad(loss, recurrent.get_param(name), 1e-6))
    (dX,) = grads  # the encoder's input gradient: side A's sequences, then side B's
    assert [dx.shape for dx in dX] == [x.shape for x in side_a + side_b]
    for x, dx in zip(side_a + side_b, dX):
        assert_grad_close(dx, numeric_grad(loss, x, 1e-6))


@pytest.mark.parametrize("mode", ["last", "mean", "max"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_sequence_pool_values_and_gradients(mode, bidirectional):
    model = sequence_pool(mode=mode, bidirectional=bidirectional)
    X = [rng.normal(size=(n, 4)) for n in (3, 0, 1)]
    model.initialize(X=X)
    Y, backprop = model(X, is_train=True)
    assert Y.shape == (3, 4) and not Y[1].any()
    x = X[0]
    expected = {
        "last": numpy.concatenate([x[-1, :2], x[0, 2:]]) if bidirectional else x[-1],
        "mean": x.mean(axis=0),
        "max": x.max(axis=0),
    }[mode]
    numpy.testing.assert_allclose(Y[0], expected)
    R = rng.normal(size=Y.shape)
    dX = backprop(R)
    assert dX[1].shape == (0, 4)
    loss = lambda: float((model.predict(X) * R).sum())  # noqa: E731
    assert_grad_close(dX[0], numeric_grad(loss, X[0], 1e-6))


def test_sequence_pool_rejects_a_bad_mode():
    with pytest.raises(ValueError, match="mode must be one of"):
        sequence_pool(mode="first")
