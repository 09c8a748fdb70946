"""spacy-siamese.FeatureHead.v1: a learned symmetric comparison of two vectors."""

import numpy
import pytest
from thinc.api import Adam

from spacy_siamese.architectures import build_feature_head

rng = numpy.random.default_rng(0)


def test_feature_head_is_symmetric_and_trains():
    head = build_feature_head(hidden_width=8)
    A, B = rng.normal(size=(6, 5)).astype("f"), rng.normal(size=(6, 5)).astype("f")
    labels = numpy.array([[1], [0], [1], [0], [1], [0]], dtype="f")
    head.initialize(X=(A, B))
    numpy.testing.assert_array_equal(head.predict((A, B)), head.predict((B, A)))

    def log_loss() -> float:
        P = head.predict((A, B)).astype("f8")
        return float(-(labels * numpy.log(P) + (1 - labels) * numpy.log(1 - P)).mean())

    Y, backprop = head((A, B), is_train=True)
    assert Y.shape == (6, 1)
    numpy.testing.assert_array_equal(Y, 0.5)  # the output layer starts at zero: sigmoid(0) for every pair
    dA, dB = backprop((Y - labels) / len(labels))  # the gradient of the mean log loss
    assert dA.shape == A.shape and dB.shape == B.shape
    assert head.layers[-1].get_grad("W").any()  # the output layer starts at zero, so dA does too
    first = log_loss()
    optimizer = Adam(0.05)
    head.finish_update(optimizer)
    for _ in range(30):
        Y, backprop = head((A, B), is_train=True)
        backprop((Y - labels) / len(labels))
        head.finish_update(optimizer)
    assert log_loss() < first / 10
    numpy.testing.assert_array_equal(head.predict((A, B)) > 0.5, labels == 1)
    numpy.testing.assert_array_equal(head.predict((A, B)), head.predict((B, A)))  # still symmetric


@pytest.mark.parametrize("dropout", [1.0, 1.5, -0.5])
def test_feature_head_refuses_a_dropout_outside_0_1(dropout):
    """A rate of 1 or more silently zeroed the hidden layer in training: the head never learnt."""
    with pytest.raises(ValueError, match=f"FeatureHead: dropout must be in \\[0, 1\\), got {dropout}"):
        build_feature_head(hidden_width=8, dropout=dropout)
