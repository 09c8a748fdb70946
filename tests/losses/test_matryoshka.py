import numpy
import pytest
from spacy.util import registry

from spacy_siamese.layers import cosine_similarity, matryoshka_scores
from spacy_siamese.losses import CoSENTLoss, DatasetLosses, InBatchNegativesLoss, MatryoshkaLoss, PairLogLoss
from spacy_siamese.losses.matryoshka import check_matryoshka

rng = numpy.random.default_rng(0)
GRADED = numpy.array([0.0, 0.25, 0.5, 1.0])


@pytest.mark.parametrize("weight", [1.0, 0.5, 0.0])
def test_each_block_gets_the_loss_and_the_cuts_their_weight(weight):
    cosent = CoSENTLoss(scale=20.0)
    loss = MatryoshkaLoss(cosent, prefixes=2, weight=weight)
    scores = rng.uniform(0.1, 0.9, size=(4, 3))
    d, total = loss(scores, GRADED)
    expected = 0.0
    for column, w in enumerate([1.0, weight, weight]):
        d_column, value = cosent(scores[:, column : column + 1], GRADED)
        numpy.testing.assert_allclose(d[:, column : column + 1], w * d_column)
        expected += w * value
    assert total == pytest.approx(expected)


def test_blocks_of_in_batch_scores_each_get_the_in_batch_loss():
    in_batch = InBatchNegativesLoss(PairLogLoss(), scale=20.0)
    loss = MatryoshkaLoss(in_batch, prefixes=1)
    truths = numpy.array([1.0, 1.0, 0.0])
    scores = rng.uniform(0.1, 0.9, size=(3, 2 * (1 + 3)))
    d, total = loss(scores, truths)
    first, second = in_batch(scores[:, :4], truths), in_batch(scores[:, 4:], truths)
    numpy.testing.assert_allclose(d, numpy.hstack([first[0], second[0]]))
    assert total == pytest.approx(first[1] + second[1])


def test_a_dataset_and_texts_reach_the_wrapped_loss_and_stay_wrapped():
    cosent, in_batch = CoSENTLoss(), InBatchNegativesLoss(PairLogLoss())
    loss = MatryoshkaLoss(DatasetLosses({"silver": cosent}, default=in_batch), prefixes=2, weight=0.5)
    silver = loss.for_dataset("silver", in_batch=True)
    assert isinstance(silver, MatryoshkaLoss) and (silver.prefixes, silver.weight) == (2, 0.5)
    gold = loss.for_dataset("gold", in_batch=True)
    assert gold.loss is in_batch and hasattr(gold, "for_texts")
    assert isinstance(gold.for_texts(["a", "b"], ["c", "d"]), MatryoshkaLoss)
    loss.check_datasets({"silver", "gold"})
    plain = MatryoshkaLoss(cosent, prefixes=1)
    assert not hasattr(plain, "for_dataset") and not hasattr(plain, "for_texts")
    assert not hasattr(plain, "check_datasets") and not hasattr(plain, "from_labels")


def test_scores_that_are_not_whole_blocks_are_an_error():
    loss = MatryoshkaLoss(CoSENTLoss(), prefixes=2)
    with pytest.raises(ValueError, match=r"shape \(4, 2\), not 3 equal blocks.*MatryoshkaScores.v1 with 2 dims"):
        loss(numpy.zeros((4, 2)), GRADED)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prefixes": 0}, "prefixes must be an integer >= 1"),
        ({"prefixes": True}, "prefixes must be an integer >= 1"),
        ({"prefixes": 1, "weight": -1.0}, "weight must be >= 0"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MatryoshkaLoss(CoSENTLoss(), **kwargs)


def test_the_registered_name_builds_it():
    loss = registry.losses.get("spacy-siamese.MatryoshkaLoss.v1")(loss=CoSENTLoss(), prefixes=3, weight=0.5)
    assert isinstance(loss, MatryoshkaLoss) and (loss.prefixes, loss.weight) == (3, 0.5)


def test_the_layer_and_the_loss_go_together_with_one_prefix_a_cut():
    layer = matryoshka_scores(comparison=cosine_similarity(), dims=[2, 4])
    check_matryoshka(layer, MatryoshkaLoss(CoSENTLoss(), prefixes=2))
    check_matryoshka(cosine_similarity(), CoSENTLoss())
    with pytest.raises(ValueError, match=r"scores 2 cuts \(\[2, 4\]\).*prefixes = 2, got prefixes = 1"):
        check_matryoshka(layer, MatryoshkaLoss(CoSENTLoss(), prefixes=1))
    with pytest.raises(ValueError, match="must be spacy-siamese.MatryoshkaLoss.v1 with prefixes = 2, got CoSENTLoss"):
        check_matryoshka(layer, CoSENTLoss())
    with pytest.raises(ValueError, match="needs the comparison wrapped in spacy-siamese.MatryoshkaScores.v1"):
        check_matryoshka(cosine_similarity(), MatryoshkaLoss(CoSENTLoss(), prefixes=1))
