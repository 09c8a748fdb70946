"""In-batch negatives: the loss, the cluster batcher and training through the pipe."""

import numpy
import pytest
from spacy.util import registry

from spacy_siamese.batching import Clusters, cluster_batches, pair_texts
from spacy_siamese.losses import InBatchNegativesLoss, PairLogLoss, ranking_loss

from .conftest import PAIRS, make_nlp, pair_examples
from .gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TRUTHS = numpy.array([1, 0, 1, 1, 0], dtype="f8")


def batch_output(k: int = 1) -> numpy.ndarray:
    return rng.uniform(0.05, 0.95, size=(len(TRUTHS), k + len(TRUTHS)))


@pytest.mark.parametrize("logits", ["scaled", "logit"])
@pytest.mark.parametrize("k", [1, 2])
def test_loss_gradients(logits, k):
    loss_fn = InBatchNegativesLoss(PairLogLoss(), scale=3.0, logits=logits, weight=0.7)
    scores = batch_output(k)
    d, _ = loss_fn(scores, TRUTHS)
    numeric = numeric_grad(lambda: loss_fn(scores, TRUTHS)[1], scores, 1e-7)
    assert_grad_close(d, numeric, rtol=1e-4, atol=1e-7)


def test_loss_is_the_pair_loss_plus_the_weighted_ranking_loss():
    scores = batch_output(2)
    pair_d, pair_loss = PairLogLoss()(scores[:, :2], TRUTHS)
    rank_d, rank_loss = ranking_loss(4.0 * scores[:, 2:], TRUTHS >= 0.5)
    d, loss = InBatchNegativesLoss(scale=4.0, weight=0.5)(scores, TRUTHS)
    assert loss == pytest.approx(pair_loss + 0.5 * rank_loss)
    numpy.testing.assert_allclose(d[:, :2], pair_d)
    numpy.testing.assert_allclose(d[:, 2:], 0.5 * 4.0 * rank_d)


def test_ranking_loss_value_and_symmetry():
    Z = rng.normal(size=(4, 4))
    positive = numpy.array([True, False, True, False])
    _, loss = ranking_loss(Z, positive)
    rows = [Z[i, i] - numpy.log(numpy.exp(Z[i]).sum()) for i in (0, 2)]
    cols = [Z[i, i] - numpy.log(numpy.exp(Z[:, i]).sum()) for i in (0, 2)]
    assert loss == pytest.approx(-(sum(rows) + sum(cols)) / 4)
    assert ranking_loss(Z.T, positive)[1] == pytest.approx(loss)  # swapping the sides
    d, _ = ranking_loss(Z, positive)
    d_t, _ = ranking_loss(Z.T, positive)
    numpy.testing.assert_allclose(d, d_t.T)


def test_only_duplicate_pairs_are_queries():
    Z = rng.normal(size=(3, 3))
    d, loss = ranking_loss(Z, numpy.zeros(3, dtype=bool))
    assert loss == 0.0 and not d.any()
    d, _ = ranking_loss(Z, numpy.array([True, False, False]))
    # non-duplicates are candidates in the duplicate's row and column, nothing else
    assert d[0].any() and d[:, 0].any()
    assert not d[1:, 1:].any()


def test_a_well_separated_batch_has_a_small_loss():
    M = numpy.full((4, 4), 0.1)
    numpy.fill_diagonal(M, 0.95)
    scores = numpy.hstack([numpy.diag(M)[:, None], M])
    _, good = InBatchNegativesLoss(scale=20.0, weight=1.0)(scores, numpy.ones(4))
    _, bad = InBatchNegativesLoss(scale=20.0, weight=1.0)(numpy.hstack([scores[:, :1], M.T[::-1]]), numpy.ones(4))
    assert good < bad


def test_loss_needs_the_batch_matrix():
    with pytest.raises(ValueError, match="WithInBatchScores"):
        InBatchNegativesLoss()(rng.uniform(size=(4, 1)), numpy.ones(4))
    with pytest.raises(ValueError, match="logits"):
        InBatchNegativesLoss(logits="cosine")


def test_registered_with_a_nested_pair_loss():
    loss = registry.resolve(
        {
            "loss": {
                "@losses": "spacy-siamese.InBatchNegatives.v1",
                "scale": 10.0,
                "pair_loss": {"@losses": "spacy-siamese.LogLoss.v2", "label_smoothing": 0.1},
            }
        }
    )["loss"]
    assert isinstance(loss, InBatchNegativesLoss) and loss.pair_loss.label_smoothing == 0.1


# The batcher

CLUSTER_PAIRS = [
    ("a1", "a2", 1),
    ("a2", "a3", 1),
    ("a1", "x", 0),
    ("b1", "b2", 1),
    ("c1", "c2", 0),
    ("d1", "d2", 1),
    ("e1", "a3", 0),
    ("f1", "f2", 1),
]


def test_clusters_join_texts_through_duplicates_only():
    clusters = Clusters()
    for a, b, y in CLUSTER_PAIRS:
        clusters.find(a), clusters.find(b)
        if y:
            clusters.union(a, b)
    assert clusters.find("a1") == clusters.find("a3")
    assert clusters.find("x") != clusters.find("a1")
    assert clusters.find("c1") != clusters.find("c2")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_batch_holds_two_pairs_of_one_cluster(seed):
    nlp = make_nlp()
    examples = pair_examples(nlp, CLUSTER_PAIRS)
    batches = list(cluster_batches(examples, 3, seed=seed))
    assert sorted(eg.predicted.text for batch in batches for eg in batch) == sorted(a for a, _, _ in CLUSTER_PAIRS)
    clusters = Clusters()
    for a, b, y in CLUSTER_PAIRS:
        if y:
            clusters.union(a, b)
    for batch in batches:
        roots = [r for eg in batch for r in {clusters.find(t) for t in pair_texts(eg)}]
        assert len(roots) == len(set(roots)), [pair_texts(eg) for eg in batch]
    assert all(len(batch) <= 3 for batch in batches)


def test_batches_are_seeded_and_full_when_possible():
    nlp = make_nlp()
    examples = pair_examples(nlp, PAIRS)  # two pairs share each side-A question
    first = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=3)]
    again = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=3)]
    other = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=4)]
    assert first == again and first != other
    for batch in first:
        assert len(batch) == len(set(batch))
    assert [len(b) for b in first][:2] == [4, 4]


def test_pair_texts_rebuild_side_b():
    nlp = make_nlp()
    eg = pair_examples(nlp, PAIRS[:1])[0]
    assert pair_texts(eg) == (PAIRS[0][0], PAIRS[0][1])


def test_registered_batcher_changes_order_between_epochs():
    batcher = registry.resolve({"b": {"@batchers": "spacy-siamese.batch_by_clusters.v1", "size": 4, "seed": 0}})["b"]
    examples = pair_examples(make_nlp(), PAIRS)
    epoch1 = [eg.predicted.text for batch in batcher(examples) for eg in batch]
    epoch2 = [eg.predicted.text for batch in batcher(examples) for eg in batch]
    assert sorted(epoch1) == sorted(epoch2) and epoch1 != epoch2


# Through the pipe


@pytest.mark.parametrize(
    "comparison",
    [
        {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
        {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
        {
            "@architectures": "spacy-siamese.WithAuxiliary.v1",
            "main": {
                "@architectures": "spacy-siamese.TrainCalibrated.v1",
                "comparison": {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
            },
            "auxiliary": {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 16},
        },
    ],
    ids=["cauchy", "cosine", "calibrated+auxiliary"],
)
def test_pipe_trains_with_in_batch_negatives(comparison):
    nlp = make_nlp(
        {"@architectures": "spacy-siamese.WithInBatchScores.v1", "comparison": comparison},
        loss={"@losses": "spacy-siamese.InBatchNegatives.v1", "scale": 10.0},
    )
    examples = pair_examples(nlp, PAIRS)
    optimizer = nlp.initialize(lambda: examples)
    batch = [examples[i] for i in (0, 2, 4, 6, 8, 1)]  # five duplicates and one non-duplicate
    first = nlp.update(batch, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(batch, sgd=optimizer)["siamese_similarity"]
    assert last < first
    a, b = nlp(PAIRS[0][0]), nlp(PAIRS[0][1])
    pipe = nlp.get_pipe("siamese_similarity")
    assert a.similarity(b) == pytest.approx(float(pipe.comparison.predict((a.vector[None], b.vector[None]))[0, 0]))
    assert a.similarity(b) == b.similarity(a)
