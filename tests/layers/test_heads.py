"""Which head predicts: one walk for the pipe's score range, search, explanations, in-batch
scores and triplet mining."""

import pytest

from spacy_siamese.layers import (
    cauchy_similarity,
    cosine_similarity,
    hybrid_similarity,
    train_calibrated,
    with_auxiliary,
)
from spacy_siamese.layers.heads import predicting_head, score_range
from spacy_siamese.layers.in_batch import with_in_batch_scores


def structures():
    """(name, comparison, head at prediction, head in training)."""
    cauchy = cauchy_similarity()
    yield "plain", cauchy, cauchy, cauchy
    cauchy = cauchy_similarity()
    calibrated = train_calibrated(comparison=cauchy)
    yield "calibrated", calibrated, cauchy, calibrated
    cauchy, aux = cauchy_similarity(), cosine_similarity(rescale=True)
    calibrated = train_calibrated(comparison=cauchy)
    yield "auxiliary(calibrated)", with_auxiliary(main=calibrated, auxiliary=aux), cauchy, calibrated
    cauchy = cauchy_similarity()
    calibrated = train_calibrated(comparison=cauchy)
    yield "in_batch(calibrated)", with_in_batch_scores(comparison=calibrated), cauchy, calibrated
    cosine, aux = cosine_similarity(), cauchy_similarity()
    nested = with_in_batch_scores(comparison=with_auxiliary(main=cosine, auxiliary=aux))
    yield "in_batch(auxiliary)", nested, cosine, cosine
    # the hybrid's mixed score predicts: it is not looked through
    hybrid = hybrid_similarity(comparison=with_in_batch_scores(comparison=cauchy_similarity()), lexical_width=4)
    yield "hybrid", hybrid, hybrid, hybrid


@pytest.mark.parametrize("name,comparison,at_prediction,in_training", list(structures()), ids=lambda x: str(x))
def test_predicting_head(name, comparison, at_prediction, in_training):
    assert predicting_head(comparison) is at_prediction, name
    assert predicting_head(comparison, training=True) is in_training, name


def test_in_batch_scores_use_the_training_head():
    """In-batch scores (and triplet mining, through the pipe) see what the loss trains: the
    calibrated score of TrainCalibrated, the main head of WithAuxiliary."""
    cauchy = cauchy_similarity()
    calibrated = train_calibrated(comparison=cauchy)
    model = with_in_batch_scores(comparison=with_auxiliary(main=calibrated, auxiliary=cauchy_similarity()))
    assert model.get_ref("scorer") is calibrated


def test_score_range_follows_the_predicting_head():
    assert score_range(cosine_similarity()) == (-1.0, 1.0)
    assert score_range(cosine_similarity(rescale=True)) == (0.0, 1.0)
    assert score_range(train_calibrated(comparison=cauchy_similarity())) == (0.0, 1.0)
    assert score_range(with_auxiliary(main=cosine_similarity(), auxiliary=cauchy_similarity())) == (-1.0, 1.0)
    assert score_range(with_in_batch_scores(comparison=cosine_similarity())) == (-1.0, 1.0)
    hybrid = hybrid_similarity(comparison=cosine_similarity(), lexical_width=4, weight=0.25)
    assert score_range(hybrid) == (-0.75, 1.0)
