"""The registered scorers: one set of pairs (pair_scorer.v1) and the datasets of a multi-dataset
dev corpus with their average (dataset_scorer.v1)."""

import numpy
import pytest
import spacy
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score
from spacy.util import registry

from spacy_siamese.pair_examples import make_pair_example
from spacy_siamese.scoring import binary_pairs, make_dataset_scorer, score_datasets, score_pairs

NLP = spacy.blank("en")
QUORA = ([0.9, 0.2, 0.7, 0.4], [1.0, 0.0, 0.0, 1.0])
STS = ([0.1, 0.5, 0.4, 0.9, 0.8], [0.0, 0.25, 0.5, 0.75, 1.0])
MRPC = ([0.3, 0.6, 0.8], [0.0, 1.0, 1.0])


def examples_of(**datasets):
    """Tagged pair examples, and the function that gives their (scores, labels)."""
    examples, scores, labels = [], [], []
    for name, (s, y) in datasets.items():
        for i, (score, label) in enumerate(zip(s, y)):
            examples.append(make_pair_example(NLP, f"{name} {i}", "other", label, dataset=name))
            scores.append(score)
            labels.append(label)
    return examples, lambda _: (numpy.asarray(scores), numpy.asarray(labels))


def test_each_dataset_is_scored_on_its_own_and_the_main_metrics_averaged():
    examples, pair_scores = examples_of(quora=QUORA, sts=STS, mrpc=MRPC)
    result = score_datasets(examples, pair_scores=pair_scores, threshold=0.5)
    quora_auc = roc_auc_score(QUORA[1], QUORA[0])
    mrpc_auc = roc_auc_score(MRPC[1], MRPC[0])
    sts_spearman = spearmanr(STS[0], STS[1])[0]
    assert result["sim_quora_auc"] == pytest.approx(quora_auc)
    assert result["sim_quora_acc"] == pytest.approx(0.5)  # 0.9 and 0.2 right, 0.7 and 0.4 wrong
    assert result["sim_sts_spearman"] == pytest.approx(sts_spearman)
    assert result["sim_mrpc_auc"] == pytest.approx(mrpc_auc)
    assert result["sim_avg"] == pytest.approx((quora_auc + sts_spearman + mrpc_auc) / 3)
    assert result["sim_threshold"] == 0.5
    assert {"sim_sts_pearson", "sim_sts_mse", "sim_sts_mae"} <= set(result)
    assert "sim_quora_spearman" not in result and "sim_acc" not in result


def test_untagged_pairs_are_one_set_with_the_keys_of_pair_scorer_v1():
    examples = [make_pair_example(NLP, f"q {i}", "other", y) for i, y in enumerate(QUORA[1])]
    pair_scores = lambda _: (numpy.asarray(QUORA[0]), numpy.asarray(QUORA[1]))  # noqa: E731
    one = score_pairs(examples, pair_scores=pair_scores, threshold=0.5)
    result = score_datasets(examples, pair_scores=pair_scores, threshold=0.5)
    assert result == {**one, "sim_avg": one["sim_auc"]}


def test_a_dataset_without_its_main_metric_is_left_out_of_the_average():
    examples, pair_scores = examples_of(quora=QUORA, mrpc=([0.2, 0.3], [1.0, 1.0]))  # one class: no AUC
    result = score_datasets(examples, pair_scores=pair_scores)
    assert result["sim_mrpc_auc"] is None
    assert result["sim_avg"] == pytest.approx(result["sim_quora_auc"])


def test_tagged_and_untagged_pairs_do_not_mix():
    examples, pair_scores = examples_of(quora=QUORA)
    untagged = make_pair_example(NLP, "q", "other", 1.0)
    with pytest.raises(ValueError, match="Some pair examples have a dataset tag \\(quora\\) and 1 have none"):
        score_datasets(examples + [untagged], pair_scores=lambda _: (numpy.zeros(5), numpy.ones(5)))


def test_the_threshold_pairs_are_those_of_the_0_1_datasets():
    examples, pair_scores = examples_of(quora=QUORA, sts=STS)
    assert binary_pairs(examples, pair_scores(examples)[1]).tolist() == [True] * 4 + [False] * 5
    examples, pair_scores = examples_of(sts=([0.1, 0.9], [0.0, 1.0]))  # labels, not names, decide
    assert binary_pairs(examples, pair_scores(examples)[1]).all()


def test_dataset_scorer_is_registered():
    assert registry.scorers.get("spacy-siamese.dataset_scorer.v1") is make_dataset_scorer
    assert make_dataset_scorer() is score_datasets
