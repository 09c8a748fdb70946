"""spacy-siamese.LazyAdam.v1: thinc's Adam, updating only the table rows a batch touched."""

import numpy
import pytest
from thinc.api import Adam, registry

from spacy_siamese.optimizers import make_lazy_adam

SETTINGS = {"learn_rate": 0.01, "L2": 0.0, "grad_clip": 1.0}


def steps(optimizer, gradients, key=(1, "E"), shape=(6, 3)):
    """The weights, and their averages, after one update per gradient."""
    weights = numpy.random.default_rng(0).normal(size=shape).astype("f")
    for gradient in gradients:
        weights, _ = optimizer(key, weights, gradient.astype("f").copy())
    return weights, optimizer.averages[key]


def test_a_table_whose_every_row_is_touched_updates_as_thinc_adam():
    rng = numpy.random.default_rng(1)
    gradients = [rng.normal(size=(6, 3)) for _ in range(5)]
    lazy, dense = steps(make_lazy_adam(**SETTINGS), gradients), steps(Adam(**SETTINGS), gradients)
    numpy.testing.assert_allclose(lazy[0], dense[0], rtol=1e-6)
    numpy.testing.assert_allclose(lazy[1], dense[1], rtol=1e-6)


def test_a_row_without_gradient_keeps_its_weights_and_moments():
    rng = numpy.random.default_rng(2)
    gradients = [rng.normal(size=(6, 3)) for _ in range(3)]
    gradients[1][2] = 0.0  # row 2 is not in the second batch
    gradients[2][2] = 0.0
    optimizer = make_lazy_adam(**SETTINGS)
    key, weights = (1, "E"), numpy.random.default_rng(0).normal(size=(6, 3)).astype("f")
    weights, _ = optimizer(key, weights, gradients[0].astype("f"))
    after_first = weights[2].copy(), optimizer.mom1[key].reshape(6, 3)[2].copy()
    for later in gradients[1:]:
        gradient = later.astype("f")
        weights, _ = optimizer(key, weights, gradient)
    numpy.testing.assert_array_equal(weights[2], after_first[0])
    numpy.testing.assert_array_equal(optimizer.mom1[key].reshape(6, 3)[2], after_first[1])
    assert not gradient.any()  # the model's own array, zeroed in place as thinc's optimizer leaves it
    dense = steps(Adam(**SETTINGS), gradients)[0]
    assert not numpy.allclose(dense[2], after_first[0])  # thinc's Adam moves it on its momentum
    others = [0, 1, 3, 4, 5]
    numpy.testing.assert_allclose(weights[others], dense[others], rtol=1e-6)


@pytest.mark.parametrize("key,settings", [((1, "W"), SETTINGS), ((1, "E"), {**SETTINGS, "L2": 0.01})])
def test_other_params_and_l2_take_thinc_adam(key, settings):
    rng = numpy.random.default_rng(3)
    gradients = [rng.normal(size=(6, 3)) for _ in range(3)]
    for gradient in gradients:
        gradient[4] = 0.0
    lazy = steps(make_lazy_adam(**settings), gradients, key=key)
    dense = steps(Adam(**settings), gradients, key=key)
    numpy.testing.assert_array_equal(lazy[0], dense[0])


def test_it_is_registered():
    optimizer = registry.resolve({"o": {"@optimizers": "spacy-siamese.LazyAdam.v1", "tables": ["E", "T"]}})["o"]
    assert optimizer.tables == ("E", "T") and optimizer.learn_rate == 0.001
