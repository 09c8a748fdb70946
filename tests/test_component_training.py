"""Training the pipe end to end: in-batch negatives, labelled docs with triplet losses, the
LSTM encoder with each comparison, and several datasets with a loss each."""

import shutil

import numpy
import pytest
import spacy
from scipy.stats import spearmanr

from spacy_siamese import get_lexical_weight, make_pair_example, set_lexical_weight
from spacy_siamese.labelled import labelled_doc_example
from spacy_siamese.metrics import best_threshold
from spacy_siamese.teacher.loss import save_teacher_table

from .architectures.test_lstm import SMALL
from .conftest import GRADED, PAIRS, SMALL_MODEL, exp_l1_reference, make_nlp, pair_examples, train
from .search.conftest import COSINE_RAW, hybrid, hybrid_nlp


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


def test_pipe_trains_any_encoder_on_labelled_docs():
    """The MWE encoder with Cauchy similarity, from labelled docs; pair training is unchanged."""
    spacy.util.fix_random_seed(0)
    nlp = make_nlp(loss={"@losses": "spacy-siamese.TripletLoss.v1", "form": "margin", "mining": "hard"})
    texts = [("the cat sat", "pets"), ("a cat and a dog", "pets"), ("stocks fell", "money"), ("markets rose", "money")]
    examples = [labelled_doc_example(nlp.make_doc(t), [label]) for t, label in texts]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first
    with pytest.raises(ValueError, match="mixes labelled docs and pairs"):
        nlp.update(examples[:2] + pair_examples(nlp)[:2], sgd=optimizer)
    log_loss = make_nlp()
    log_loss.initialize(lambda: pair_examples(log_loss))
    with pytest.raises(ValueError, match="need a loss that mines triplets"):
        log_loss.update(examples)


def test_triplet_loss_with_in_batch_scores_trains_pairs():
    spacy.util.fix_random_seed(0)
    comparison = {
        "@architectures": "spacy-siamese.WithInBatchScores.v1",
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    }
    nlp = make_nlp(comparison=comparison, loss={"@losses": "spacy-siamese.TripletLoss.v1", "scale": 5.0})
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores(examples)
    assert scores[labels == 1].min() < scores[labels == 0].max()  # untrained: some negative outranks a positive
    losses = [nlp.update(examples, sgd=optimizer)["siamese_similarity"] for _ in range(10)]
    assert losses[-1] < losses[0]
    scores, labels = pipe.pair_scores(pair_examples(nlp))
    assert scores[labels == 1].min() > scores[labels == 0].max()  # trained: every duplicate above every non-duplicate


def _graded_nlp(comparison=None):
    nlp = spacy.blank("en")
    config = {
        "model": {"encoder": {"@architectures": "spacy-siamese.LSTMEncoder.v1", **SMALL}},
        "loss": {"@losses": "spacy-siamese.SquaredError.v1"},
    }
    config["model"]["comparison"] = comparison or {"@architectures": "spacy-siamese.ExpL1Similarity.v1"}
    nlp.add_pipe("siamese_similarity", config=config)
    return nlp


def test_lstm_expl1_overfits_a_tiny_graded_set():
    spacy.util.fix_random_seed(0)
    nlp = _graded_nlp()
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in GRADED]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(150):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first / 5
    scores = [nlp(a).similarity(nlp(b)) for a, b, _ in GRADED]
    assert spearmanr(scores, [y for _, _, y in GRADED])[0] > 0.9
    a, b = nlp("A man is playing a guitar."), nlp("A woman is slicing an onion.")
    assert a.similarity(b) == b.similarity(a)
    empty = nlp("")
    assert empty.similarity(a) == pytest.approx(exp_l1_reference(empty, a), rel=1e-5)
    assert empty.similarity(nlp("")) == 1.0
    metrics = nlp.evaluate(examples)
    assert {"sim_pearson", "sim_spearman", "sim_mse", "sim_mae"} <= set(metrics)
    assert metrics["sim_mse"] < 0.05 and metrics["sim_mae"] < 0.2


@pytest.mark.parametrize(
    "comparison",
    [
        {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
        {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
        {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 8},
        {"@architectures": "spacy-siamese.ExpL1Similarity.v1", "norm": "l2"},
    ],
    ids=["cauchy", "cosine", "feature_head", "exp_l2"],
)
def test_other_comparisons_work_with_the_lstm_encoder(comparison):
    spacy.util.fix_random_seed(0)
    nlp = _graded_nlp(comparison)
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in GRADED]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first
    a, b = nlp("Two kids are swimming."), nlp("A man is riding a horse.")
    assert a.similarity(b) == b.similarity(a)
    # GRADED pairs up each sentence with a closer and a farther one: the closer one scores higher
    scores = [nlp(x).similarity(nlp(y)) for x, y, _ in GRADED]
    assert all(closer > farther for closer, farther in zip(scores[::2], scores[1::2])), scores


# -- several datasets, a loss per dataset ---------------------------------------

IN_BATCH_COSINE = {
    "@architectures": "spacy-siamese.WithInBatchScores.v1",
    "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
}
DATASET_LOSSES = {
    "@losses": "spacy-siamese.DatasetLosses.v1",
    "default": {"@losses": "spacy-siamese.InBatchNegatives.v1", "scale": 10.0},
    "losses": {"sts": {"@losses": "spacy-siamese.CoSENTLoss.v1", "scale": 20.0}},
}


def two_datasets(nlp):
    return [make_pair_example(nlp, a, b, y, dataset="quora") for a, b, y in PAIRS] + [
        make_pair_example(nlp, a, b, y, dataset="sts") for a, b, y in GRADED
    ]


class Spy:
    """A loss that records the shape of the scores it is given."""

    def __init__(self, loss):
        self.loss = loss
        self.shapes = []
        self.uses_in_batch_scores = getattr(loss, "uses_in_batch_scores", False)

    def __call__(self, scores, truths):
        self.shapes.append(scores.shape)
        return self.loss(scores, truths)


def test_each_batch_is_trained_with_its_datasets_loss():
    nlp = make_nlp(IN_BATCH_COSINE, loss=DATASET_LOSSES, scorer={"@scorers": "spacy-siamese.dataset_scorer.v1"})
    pipe = nlp.get_pipe("siamese_similarity")
    examples = two_datasets(nlp)
    optimizer = nlp.initialize(lambda: examples)
    quora, sts = Spy(pipe.loss.default), Spy(pipe.loss.losses["sts"])
    pipe.loss.default, pipe.loss.losses["sts"] = quora, sts
    first = {name: nlp.update(examples[i:j], sgd=optimizer)["siamese_similarity"] for name, i, j in
             (("quora", 0, 10), ("sts", 10, 18))}  # fmt: skip
    for _ in range(30):
        for i, j in ((0, 10), (10, 18)):
            last = nlp.update(examples[i:j], sgd=optimizer)["siamese_similarity"]
    assert last < first["sts"]
    assert quora.shapes[0] == (10, 1 + 10)  # the pair column and the in-batch scores
    assert sts.shapes[0] == (8, 1)  # the pair column only
    scores = nlp.evaluate(examples, scorer_cfg={"tune_threshold": True})
    assert scores["sim_quora_auc"] > 0.9 and scores["sim_sts_spearman"] > 0.8


def test_a_matryoshka_pipe_trains_each_cut_with_its_datasets_loss_and_predicts_the_whole_vectors(tmp_path):
    comparison = {"@architectures": "spacy-siamese.MatryoshkaScores.v1", "comparison": IN_BATCH_COSINE, "dims": [8, 16]}
    loss = {"@losses": "spacy-siamese.MatryoshkaLoss.v1", "loss": DATASET_LOSSES, "prefixes": 2, "weight": 0.5}
    nlp = make_nlp(comparison, loss=loss)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = two_datasets(nlp)
    optimizer = nlp.initialize(lambda: examples)
    quora, sts = Spy(pipe.loss.loss.default), Spy(pipe.loss.loss.losses["sts"])
    pipe.loss.loss.default, pipe.loss.loss.losses["sts"] = quora, sts
    first = nlp.update(examples[10:18], sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        for i, j in ((0, 10), (10, 18)):
            last = nlp.update(examples[i:j], sgd=optimizer)["siamese_similarity"]
    assert last < first
    assert quora.shapes[:3] == [(10, 1 + 10)] * 3  # the whole vectors, then each cut: pair column and in-batch
    assert sts.shapes[:3] == [(8, 1)] * 3
    a, b = nlp(PAIRS[0][0]), nlp(PAIRS[0][1])
    cosine = (1 + a.vector @ b.vector / (numpy.linalg.norm(a.vector) * numpy.linalg.norm(b.vector))) / 2
    assert a.similarity(b) == pytest.approx(float(cosine), abs=1e-6)
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded(PAIRS[0][0]).similarity(loaded(PAIRS[0][1])) == pytest.approx(a.similarity(b))


def test_a_matryoshka_comparison_without_its_loss_is_refused_when_the_pipe_is_made():
    comparison = {"@architectures": "spacy-siamese.MatryoshkaScores.v1", "comparison": IN_BATCH_COSINE, "dims": [8]}
    with pytest.raises(ValueError, match="loss must be spacy-siamese.MatryoshkaLoss.v1 with prefixes = 1"):
        make_nlp(comparison, loss=DATASET_LOSSES)


def test_a_batch_that_mixes_datasets_is_refused():
    nlp = make_nlp(IN_BATCH_COSINE, loss=DATASET_LOSSES)
    examples = two_datasets(nlp)
    optimizer = nlp.initialize(lambda: examples)
    with pytest.raises(ValueError, match="mixes pairs of datasets quora, sts.*spacy-siamese.batch_by_dataset.v1"):
        nlp.update(examples[8:12], sgd=optimizer)


def test_a_loss_for_a_dataset_the_corpus_lacks_is_refused_at_initialize():
    loss = {**DATASET_LOSSES, "losses": {"stsb": {"@losses": "spacy-siamese.CoSENTLoss.v1"}}}
    nlp = make_nlp(IN_BATCH_COSINE, loss=loss)
    examples = two_datasets(nlp)
    with pytest.raises(ValueError, match="names dataset\\(s\\) 'stsb' that the training corpus does not have"):
        nlp.initialize(lambda: examples)


def test_the_threshold_is_tuned_on_the_0_1_datasets():
    nlp = make_nlp(IN_BATCH_COSINE, loss=DATASET_LOSSES, scorer={"@scorers": "spacy-siamese.dataset_scorer.v1"})
    pipe = nlp.get_pipe("siamese_similarity")
    examples = two_datasets(nlp)
    nlp.initialize(lambda: examples)
    scores, labels = pipe.pair_scores(examples)
    result = pipe.tune_thresholds(examples)
    assert pipe.threshold == pytest.approx(best_threshold(scores[:10], labels[:10]), abs=1e-6)
    assert result["sim_threshold"] == pipe.threshold and "sim_avg" in result
    plain = make_nlp(IN_BATCH_COSINE, loss=DATASET_LOSSES)  # graded pairs alone: no threshold to tune
    plain.initialize(lambda: two_datasets(plain))
    plain.get_pipe("siamese_similarity").tune_thresholds(two_datasets(plain)[10:])
    assert plain.get_pipe("siamese_similarity").threshold == 0.5


def test_teacher_scores_get_the_batchs_texts_and_train_the_in_batch_scores(tmp_path):
    """A dataset trained with TeacherScores.v1: the pipe hands the loss the texts of both sides,
    and training moves the student's in-batch scores towards the teacher's."""
    texts = sorted({t for a, b, _ in GRADED for t in (a, b)})
    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(len(texts), 8))
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    save_teacher_table(tmp_path / "teacher", texts, vectors)
    loss = {**DATASET_LOSSES, "losses": {"teacher": {"@losses": "spacy-siamese.TeacherScores.v1",
                                                     "vectors": str(tmp_path / "teacher"), "scale": 5.0}}}  # fmt: skip
    nlp = make_nlp(IN_BATCH_COSINE, loss=loss)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = [make_pair_example(nlp, a, b, y, dataset="teacher") for a, b, y in GRADED]
    optimizer = nlp.initialize(lambda: examples)
    seen = []
    for_texts = pipe.loss.losses["teacher"].for_texts
    pipe.loss.losses["teacher"].for_texts = lambda a, b: seen.append((a, b)) or for_texts(a, b)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(40):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert seen[0] == ([a for a, _, _ in GRADED], [b for _, b, _ in GRADED]) and last < first
    # the trained pipeline loads and predicts where the table is gone
    nlp.to_disk(tmp_path / "model")
    shutil.rmtree(tmp_path / "teacher")
    again = spacy.load(tmp_path / "model")
    a, b = GRADED[0][:2]
    assert again(a).similarity(again(b)) == nlp(a).similarity(nlp(b))


def test_init_weights_trains_on_from_a_pipeline_with_this_configs_loss(tmp_path):
    source = make_nlp(IN_BATCH_COSINE, loss={"@losses": "spacy-siamese.InBatchNegatives.v1", "scale": 10.0})
    optimizer = source.initialize(lambda: pair_examples(source))
    for _ in range(20):
        source.update(pair_examples(source), sgd=optimizer)
    source.get_pipe("siamese_similarity").cfg["threshold"] = 0.625
    source.to_disk(tmp_path / "source")
    nlp = make_nlp(IN_BATCH_COSINE, loss=DATASET_LOSSES, scorer={"@scorers": "spacy-siamese.dataset_scorer.v1"})
    nlp.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(tmp_path / "source")}
    examples = two_datasets(nlp)
    optimizer = nlp.initialize(lambda: examples)
    pipe, before = nlp.get_pipe("siamese_similarity"), source.get_pipe("siamese_similarity")
    numpy.testing.assert_allclose(pipe.pair_scores(examples)[0], before.pair_scores(examples)[0], atol=1e-6)
    assert pipe.threshold == 0.625 and pipe.model_id != before.model_id
    sts = Spy(pipe.loss.losses["sts"])  # this config's per-dataset loss, not the source's
    pipe.loss.losses["sts"] = sts
    nlp.update(examples[10:18], sgd=optimizer)
    assert sts.shapes == [(8, 1)]
    assert not numpy.allclose(pipe.pair_scores(examples)[0], before.pair_scores(examples)[0])


def test_init_weights_still_checks_this_configs_datasets(tmp_path):
    source = make_nlp(IN_BATCH_COSINE)
    source.initialize(lambda: pair_examples(source))
    source.to_disk(tmp_path / "source")
    loss = {**DATASET_LOSSES, "losses": {"stsb": {"@losses": "spacy-siamese.CoSENTLoss.v1"}}}
    nlp = make_nlp(IN_BATCH_COSINE, loss=loss)
    nlp.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(tmp_path / "source")}
    examples = two_datasets(nlp)
    with pytest.raises(ValueError, match="names dataset\\(s\\) 'stsb' that the training corpus does not have"):
        nlp.initialize(lambda: examples)


def test_init_weights_keeps_the_sources_fitted_tfidf_vocabulary(tmp_path):
    """A hybrid pipe's TF-IDF is fitted on the source's texts; this config's other texts (another
    vocabulary size) neither refit it nor fail to load it."""
    lexical = 32
    model = {
        "encoder": {
            "@architectures": "spacy-siamese.HybridEncoder.v1",
            "encoder": {"@architectures": "spacy-siamese.MWEEncoder.v2", **SMALL_MODEL["model"]["encoder"]},
            "lexical_width": lexical,
            "min_df": 1,
        },
        "comparison": {
            "@architectures": "spacy-siamese.HybridSimilarity.v1",
            "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
            "lexical_width": lexical,
            "weight": 0.3,
        },
    }
    source = make_nlp(model=model)
    source.initialize(lambda: pair_examples(source))
    source.to_disk(tmp_path / "source")
    nlp = make_nlp(model=model)
    nlp.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(tmp_path / "source")}
    graded = [make_pair_example(nlp, a, b, float(y > 0.5)) for a, b, y in GRADED]  # other words than PAIRS
    nlp.initialize(lambda: graded)
    own = make_nlp(model=model)
    own.initialize(lambda: graded)  # fitted on these texts instead

    def n_terms(nlp):
        return next(n for n in nlp.get_pipe("siamese_similarity").model.walk() if n.name == "tfidf").get_dim("nO")

    assert n_terms(nlp) == n_terms(source) != n_terms(own)
    pipe, before = nlp.get_pipe("siamese_similarity"), source.get_pipe("siamese_similarity")
    numpy.testing.assert_allclose(pipe.pair_scores(graded)[0], before.pair_scores(graded)[0], atol=1e-6)


def test_init_weights_from_another_architecture_or_no_pipeline_is_a_clear_error(tmp_path, nlp):
    nlp.to_disk(tmp_path / "cauchy")  # the Cauchy test model: another comparison
    other = make_nlp(IN_BATCH_COSINE)
    examples = pair_examples(other)
    for path, message in ((tmp_path / "cauchy", "has another architecture"), (tmp_path, "no trained pipeline")):
        other.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(path)}
        with pytest.raises(ValueError, match=message):
            other.initialize(lambda: examples)
    # a plain cosine has as many layers as Cauchy: Thinc alone would load the weights into it
    cosine = make_nlp({"@architectures": "spacy-siamese.CosineSimilarity.v1"})
    cosine.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(tmp_path / "cauchy")}
    with pytest.raises(ValueError, match="has another architecture"):
        cosine.initialize(lambda: examples)


def test_init_weights_that_fail_to_load_leave_the_pipe_as_it_was(tmp_path, nlp):
    """After an init_weights of another architecture, the pipe still has its own layers: the
    right source loads, and a trained pipe keeps its scores."""
    nlp.to_disk(tmp_path / "cauchy")
    cosine_config = {"@architectures": "spacy-siamese.CosineSimilarity.v1"}
    source = make_nlp(cosine_config)
    source.initialize(lambda: pair_examples(source))
    source.to_disk(tmp_path / "cosine")
    cosine = make_nlp(cosine_config)
    examples = pair_examples(cosine)
    init = cosine.config["initialize"]["components"]["siamese_similarity"] = {}
    init["init_weights"] = str(tmp_path / "cauchy")
    with pytest.raises(ValueError, match="has another architecture"):
        cosine.initialize(lambda: examples)
    init["init_weights"] = str(tmp_path / "cosine")
    cosine.initialize(lambda: examples)
    pipe, before = cosine.get_pipe("siamese_similarity"), source.get_pipe("siamese_similarity")
    numpy.testing.assert_allclose(pipe.pair_scores(examples)[0], before.pair_scores(examples)[0], atol=1e-6)
    init["init_weights"] = str(tmp_path / "cauchy")
    with pytest.raises(ValueError, match="has another architecture"):
        cosine.initialize(lambda: examples)
    numpy.testing.assert_allclose(pipe.pair_scores(examples)[0], before.pair_scores(examples)[0], atol=1e-6)


def test_init_weights_keeps_this_configs_lexical_weight(tmp_path):
    """A source mixed at another lexical weight (set_lexical_weight) gives its weights, not its weight."""
    source, _ = train(hybrid_nlp(hybrid(COSINE_RAW)), n_iter=5)
    examples = pair_examples(source)
    at_config_weight = source.get_pipe("siamese_similarity").pair_scores(examples)[0]
    set_lexical_weight(source, 0.1)  # scores from -0.9: a threshold this config's range (from -0.7) cannot hold
    source.get_pipe("siamese_similarity").cfg["threshold"] = -0.8
    source.to_disk(tmp_path / "source")
    nlp = hybrid_nlp(hybrid(COSINE_RAW))
    nlp.config["initialize"]["components"]["siamese_similarity"] = {"init_weights": str(tmp_path / "source")}
    nlp.initialize(lambda: pair_examples(nlp))
    pipe = nlp.get_pipe("siamese_similarity")
    assert get_lexical_weight(nlp) == 0.3 and pipe.score_range == pytest.approx((-0.7, 1.0))
    assert pipe.threshold == pytest.approx(-0.7)
    numpy.testing.assert_allclose(pipe.pair_scores(pair_examples(nlp))[0], at_config_weight, atol=1e-6)
