import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import (
    CoSENTLoss,
    DatasetLosses,
    InBatchNegativesLoss,
    PairColumns,
    PairLogLoss,
    PairSquaredError,
    make_dataset_losses,
)

rng = numpy.random.default_rng(0)
GRADED = numpy.array([0.0, 0.25, 0.5, 1.0])


def test_each_dataset_gets_its_loss_and_the_rest_the_default():
    cosent, log_loss = CoSENTLoss(), PairLogLoss()
    losses = DatasetLosses({"sts": cosent}, default=log_loss)
    assert losses.for_dataset("sts") is cosent
    assert losses.for_dataset("quora") is log_loss
    assert losses.for_dataset(None) is log_loss  # untagged pairs
    scores = rng.uniform(0.1, 0.9, size=(4, 1))
    assert losses(scores, GRADED)[1] == pytest.approx(log_loss(scores, GRADED)[1])


def test_a_dataset_without_a_loss_is_an_error():
    losses = DatasetLosses({"sts": CoSENTLoss()})
    with pytest.raises(ValueError, match="no loss for dataset 'quora' and no default loss.*losses for: sts"):
        losses.for_dataset("quora")
    with pytest.raises(ValueError, match="no loss for pairs without a dataset tag"):
        losses(numpy.zeros((2, 1)), numpy.zeros(2))


def test_a_loss_for_a_dataset_the_corpus_lacks_is_an_error():
    losses = DatasetLosses({"sts": CoSENTLoss(), "stsb": CoSENTLoss()}, default=PairLogLoss())
    losses.check_datasets({"sts", "quora", "stsb"})
    with pytest.raises(ValueError, match=r"dataset\(s\) 'stsb' that the training corpus does not have.*quora, sts"):
        losses.check_datasets({"sts", "quora"})
    with pytest.raises(ValueError, match="no loss for dataset 'quora'"):
        DatasetLosses({"sts": CoSENTLoss()}).check_datasets({"sts", "quora"})


def test_with_in_batch_scores_a_pair_loss_sees_the_pair_columns_only():
    n, k = 4, 2
    scores = rng.uniform(0.1, 0.9, size=(n, k + n))
    losses = DatasetLosses({"sts": PairSquaredError()}, default=InBatchNegativesLoss())
    in_batch = losses.for_dataset("quora", in_batch=True)
    assert isinstance(in_batch, InBatchNegativesLoss)  # uses the in-batch columns itself
    graded = losses.for_dataset("sts", in_batch=True)
    assert isinstance(graded, PairColumns)
    d, loss = graded(scores, GRADED)
    d_pair, loss_pair = PairSquaredError()(scores[:, :k], GRADED)
    assert loss == pytest.approx(loss_pair) and d.shape == scores.shape
    numpy.testing.assert_allclose(d[:, :k], d_pair)
    assert not d[:, k:].any()
    assert isinstance(losses.for_dataset("sts", in_batch=False), PairSquaredError)


def test_registered_with_a_loss_per_dataset_from_config():
    config = {
        "loss": {
            "@losses": "spacy-siamese.DatasetLosses.v1",
            "default": {"@losses": "spacy-siamese.InBatchNegatives.v1", "scale": 10.0},
            "losses": {"sts": {"@losses": "spacy-siamese.CoSENTLoss.v1", "scale": 40.0}},
        }
    }
    assert registry.losses.get("spacy-siamese.DatasetLosses.v1") is make_dataset_losses
    losses = registry.resolve(config)["loss"]
    assert isinstance(losses.default, InBatchNegativesLoss) and losses.default.scale == 10.0
    assert isinstance(losses.losses["sts"], CoSENTLoss) and losses.losses["sts"].scale == 40.0


def test_bad_settings():
    with pytest.raises(ValueError, match="at least one dataset, or a default"):
        DatasetLosses({})
    with pytest.raises(ValueError, match="lower-case letters, digits and underscores"):
        DatasetLosses({"STS-B": CoSENTLoss()})
    with pytest.raises(ValueError, match="not a loss function"):
        DatasetLosses({"sts": 1.0})  # type: ignore[dict-item]
