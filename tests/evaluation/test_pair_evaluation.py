import numpy
import pytest
import spacy
from sklearn.metrics import roc_auc_score

from spacy_siamese.corpora import PairRecord
from spacy_siamese.evaluation import evaluate_pairs
from spacy_siamese.evaluation.pair_evaluation import (
    COMPARED,
    MODEL,
    STORED,
    TFIDF,
    TUNED,
    VECTORS,
    pick_examples,
    teacher_method,
)

from ..conftest import PAIRS, FakeTeacher, pair_examples


def records(pairs=PAIRS):
    return [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(pairs)]


def test_model_scores_are_the_pipe_scores_at_its_threshold(nlp):
    result = evaluate_pairs(nlp, records(), n_examples=4)
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores(pair_examples(nlp))
    assert result.scores[MODEL] == pytest.approx(scores)
    assert list(result.scores) == [MODEL]
    report = result.report
    ours = report["results"][MODEL]
    assert ours["threshold"] == pipe.threshold and ours["threshold_source"] == STORED
    assert ours["acc"] == pytest.approx(numpy.mean((scores >= pipe.threshold) == (labels >= 0.5)))
    assert ours["at_best_threshold_on_this_file"]["acc"] >= ours["acc"]
    assert report["n_pairs"] == len(PAIRS) and report["n_positive"] == 5 and report["binary"]
    assert report["main_metric"] == "auc"
    assert report["similarity_check"]["max_abs_diff"] < 1e-5
    assert report["model"]["comparison"] == "spacy-siamese.CauchySimilarity.v1"
    assert "lexical_weight" not in report["model"]  # not a hybrid
    assert len(report["examples"]) == 4 and {e["label"] for e in report["examples"]} == {0.0, 1.0}


def test_each_teacher_scores_the_pairs(nlp):
    teacher = FakeTeacher()
    seen = []

    def cosine(pairs):
        seen.append(list(pairs))
        a = teacher.encode([p[0] for p in pairs], 64, True, True, False)
        b = teacher.encode([p[1] for p in pairs], 64, True, True, False)
        return (a * b).sum(axis=1)

    result = evaluate_pairs(nlp, records(), teachers={"fake": cosine, "half": lambda pairs: [0.5] * len(pairs)})
    assert list(result.scores) == [MODEL, teacher_method("fake"), teacher_method("half")]
    assert seen == [[(r.text1, r.text2) for r in records()]]
    assert result.scores[teacher_method("fake")] == pytest.approx(cosine(seen[0]))
    assert result.report["results"][teacher_method("fake")]["threshold_source"] == TUNED


def test_a_teacher_with_too_few_scores_is_an_error(nlp):
    with pytest.raises(ValueError, match=r"The teacher t gave \(1,\) scores for 10 pairs"):
        evaluate_pairs(nlp, records(), teachers={"t": lambda pairs: numpy.ones(1)})


def test_baselines_without_vectors_skip_them_with_a_note(nlp):
    result = evaluate_pairs(nlp, records(), baselines=True)
    assert list(result.scores) == [MODEL, TFIDF]
    assert result.report["results"][TFIDF]["threshold_source"] == TUNED
    assert "evaluated texts" in result.report["tfidf"]["fitted_on"]
    assert any("Skipped the averaged word vectors" in note for note in result.notes)


def test_vectors_baseline_with_given_vectors(nlp):
    vectors = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    for word in ("python", "learn", "love", "sky", "blue", "books", "weight"):
        vectors.vocab.set_vector(word, rng.normal(size=4).astype("f4"))
    result = evaluate_pairs(
        nlp, records(), baselines=True, vectors=vectors, fit_texts=["learn python", "learn python fast", "blue sky"]
    )
    assert list(result.scores) == [MODEL, TFIDF, VECTORS]
    assert result.report["vectors"]["source"] == "the --vectors pipeline"
    assert result.report["tfidf"]["fitted_on"].startswith("3 distinct texts")
    fit = ["learn python", "learn python fast"]
    noted = evaluate_pairs(nlp, records(), baselines=True, fit_texts=fit, fit_note="two texts")
    assert noted.report["tfidf"]["fitted_on"] == "two texts"


def test_graded_labels_get_correlation_and_errors(nlp):
    graded = [(a, b, 0.8 if y else 0.2) for a, b, y in PAIRS]
    result = evaluate_pairs(nlp, records(graded))
    ours = result.report["results"][MODEL]
    assert not result.report["binary"] and result.report["main_metric"] == "spearman"
    assert {"pearson", "spearman", "mse", "mae"} <= set(ours) and ours["auc"] is None


def test_errors(nlp):
    with pytest.raises(ValueError, match="empty"):
        evaluate_pairs(nlp, [])
    with pytest.raises(ValueError, match="no 'siamese_similarity' component"):
        evaluate_pairs(spacy.blank("en"), records())


def test_pick_examples_balances_classes():
    labels = numpy.asarray([1, 1, 1, 1, 0, 0])
    chosen = pick_examples(labels, 4)
    assert len(chosen) == 4 and sum(labels[chosen]) == 2
    assert len(pick_examples(labels, 10)) == 6 and pick_examples(labels, 0) == []
    assert pick_examples(labels, 4, seed=1) == pick_examples(labels, 4, seed=1)


def test_groups_are_scored_on_their_own_and_bootstrap_adds_intervals(nlp):
    # groups "a" (pairs 0, 1, 4, 5, 8, 9) and "b" (2, 3, 6, 7), each with both classes
    grouped = [r._replace(group="ab"[(i // 2) % 2]) for i, r in enumerate(records())]
    result = evaluate_pairs(nlp, grouped, baselines=True, bootstrap=200, seed=1)
    report = result.report
    assert list(report["groups"]) == ["a", "b"] and report["groups"]["b"]["n_pairs"] == 4
    rows = [2, 3, 6, 7]
    expected = roc_auc_score(result.labels[rows], result.scores[TFIDF][rows])
    assert report["groups"]["b"]["results"][TFIDF]["auc"] == pytest.approx(expected)
    boot = report["bootstrap"]
    assert boot["n_resamples"] == 200 and set(boot["intervals"]) == {MODEL, TFIDF}
    low, high = boot["intervals"][MODEL]["acc"]
    assert low <= report["results"][MODEL]["acc"] <= high
    assert list(boot["differences"]) == [TFIDF] and boot["differences"][TFIDF]["of"] == MODEL
    assert "bootstrap" in report["groups"]["b"] and report["timing"]["bootstrap_s"] >= 0


def test_one_group_or_none_adds_no_group_figures_and_bad_settings_are_errors(nlp):
    assert "groups" not in evaluate_pairs(nlp, records()).report
    assert "bootstrap" not in evaluate_pairs(nlp, records()).report
    with pytest.raises(ValueError, match="bootstrap must be >= 0 and confidence in"):
        evaluate_pairs(nlp, records(), bootstrap=-1)
    with pytest.raises(ValueError, match="confidence in"):
        evaluate_pairs(nlp, records(), bootstrap=10, confidence=1.0)


def test_another_pipeline_is_scored_at_its_own_threshold_and_the_lead_over_it_resampled(nlp, tmp_path):
    nlp.to_disk(tmp_path / "copy")
    copy = spacy.load(tmp_path / "copy")
    copy.get_pipe("siamese_similarity").cfg["threshold"] = 0.25
    result = evaluate_pairs(nlp, records(), compare={"earlier": copy}, bootstrap=50)
    method = COMPARED.format("earlier")
    assert list(result.scores) == [MODEL, method]
    assert result.scores[method] == pytest.approx(result.scores[MODEL])  # the same weights
    report = result.report
    assert report["results"][method]["threshold"] == 0.25 and report["results"][method]["threshold_source"] == STORED
    assert report["results"][MODEL]["threshold"] == nlp.get_pipe("siamese_similarity").threshold
    assert report["compared"][method]["comparison"] == "spacy-siamese.CauchySimilarity.v1"
    lead = report["bootstrap"]["differences"][method]
    assert lead["value"] == 0.0 and lead["interval"] == [0.0, 0.0]
    with pytest.raises(ValueError, match="siamese_similarity"):
        evaluate_pairs(nlp, records(), compare={"blank": spacy.blank("en")})
