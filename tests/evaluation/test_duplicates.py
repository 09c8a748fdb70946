import numpy
import pytest
import spacy

from spacy_siamese.corpora import PairRecord
from spacy_siamese.evaluation import evaluate_duplicates
from spacy_siamese.evaluation.duplicates import (
    DuplicateQueries,
    duplicate_queries,
    index_metrics,
    partner_ranks,
    pipe_score_rows,
    pipe_vectors,
    rank_metrics,
    tfidf_score_rows,
)
from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF

from ..conftest import PAIRS, train

RECORDS = [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(PAIRS)]


def test_collection_is_the_distinct_texts_and_queries_are_duplicates():
    dq = duplicate_queries(RECORDS + RECORDS[:2], n_pairs=100, seed=0)
    assert len(dq.texts) == len({t for r in RECORDS for t in (r.text1, r.text2)})
    assert len(dq.queries) == 5  # each duplicate pair once
    for q, p in zip(dq.queries, dq.partners):
        assert (dq.texts[q], dq.texts[p], 1) in PAIRS


def test_sample_is_seeded():
    a = duplicate_queries(RECORDS, n_pairs=3, seed=0)
    b = duplicate_queries(RECORDS, n_pairs=3, seed=0)
    c = duplicate_queries(RECORDS, n_pairs=3, seed=5)
    assert list(a.queries) == list(b.queries)
    assert len(a.queries) == 3 and (list(a.queries) != list(c.queries) or list(a.partners) != list(c.partners))
    with pytest.raises(ValueError, match="duplicate"):
        duplicate_queries([r for r in RECORDS if r.label == 0])
    for n_pairs in (0, -1):  # not an empty sample whose float index array fails in numpy
        with pytest.raises(ValueError, match=f"n_pairs must be at least 1, got {n_pairs}"):
            duplicate_queries(RECORDS, n_pairs=n_pairs)


def test_ranks_exclude_the_query_and_count_ties_against_the_partner():
    dq = DuplicateQueries(["q", "p", "x", "y"], numpy.array([0, 0]), numpy.array([1, 1]))
    rows = {
        0: numpy.array([9.0, 0.5, 0.1, 0.2]),  # the query's own score is ignored: rank 1
    }
    assert list(partner_ranks(lambda q: numpy.vstack([rows[i] for i in q]), dq)) == [1, 1]
    tied = numpy.array([9.0, 0.5, 0.5, 0.7])
    assert list(partner_ranks(lambda q: numpy.vstack([tied for _ in q]), dq)) == [3, 3]
    for block in (0, -1):  # not a range error (0) or ranks of 0 (negative: no block scored)
        with pytest.raises(ValueError, match=f"block must be at least 1, got {block}"):
            partner_ranks(lambda q: numpy.vstack([tied for _ in q]), dq, block=block)


def test_rank_metrics():
    out = rank_metrics([1, 2, 11, 4], ks=(1, 10))
    assert out["recall@1"] == 0.25 and out["recall@10"] == 0.75
    assert out["mrr@10"] == pytest.approx((1 + 0.5 + 0 + 0.25) / 4)
    assert out["mrr"] == pytest.approx((1 + 0.5 + 1 / 11 + 0.25) / 4)
    assert out["n_queries"] == 4
    with pytest.raises(ValueError, match="ks: each k must be an integer of at least 1, got 0"):
        rank_metrics([1, 2], ks=(0, 10))


def test_nothing_to_rank_with_is_an_error():
    """No pipeline, no fit_texts and nothing to compare: not an empty report."""
    with pytest.raises(ValueError, match=r"give fit_texts \(--fit-texts\)"):
        evaluate_duplicates(None, RECORDS)
    with pytest.raises(ValueError, match=r"give fit_texts"):
        evaluate_duplicates(None, RECORDS, compare={})


@pytest.mark.parametrize("ks,bad", [((0, 10), 0), ((1, 2.5), 2.5)])
def test_cut_offs_are_checked_before_any_ranking(trained, monkeypatch, ks, bad):
    import spacy_siamese.evaluation.duplicates as duplicates

    monkeypatch.setattr(duplicates, "pipe_vectors", lambda *args, **kwargs: pytest.fail("encoded"))
    with pytest.raises(ValueError, match=f"ks: each k must be an integer of at least 1, got {bad}"):
        evaluate_duplicates(trained[0], RECORDS, ks=ks)


def test_index_metrics_needs_a_positive_k(trained):
    """Not numpy's error of an argmax over no search results."""
    nlp = trained[0]
    dq = duplicate_queries(RECORDS)
    vectors = pipe_vectors(nlp, dq.texts)
    with pytest.raises(ValueError, match="k: each k must be an integer of at least 1, got 0"):
        index_metrics(nlp, dq, vectors, k=0)
    assert set(index_metrics(nlp, dq, vectors, k=2)) == {"mrr@2", "recall@2"}


def test_pipe_rows_are_doc_similarity(trained):
    nlp = trained[0]
    texts = [t for pair in PAIRS[:4] for t in pair[:2]]
    texts = list(dict.fromkeys(texts))
    rows = pipe_score_rows(nlp, texts)(numpy.arange(len(texts)))
    docs = [nlp(t) for t in texts]
    expected = numpy.array([[a.similarity(b) for b in docs] for a in docs])
    numpy.testing.assert_allclose(rows, expected, rtol=1e-6, atol=1e-7)


def test_tfidf_rows_are_cosines():
    texts = ["how do I learn python", "learn python fast", "buy a car", "a fast car", "zebra"]
    fit = texts + ["I buy python"]
    rows = tfidf_score_rows(spacy.blank("en"), texts, fit)(numpy.arange(5))
    numpy.testing.assert_allclose(numpy.diag(rows)[:4], 1.0)
    assert rows[0, 1] > rows[0, 2] == 0.0
    assert not rows[4].any()  # no known term: a zero vector
    numpy.testing.assert_allclose(rows, rows.T)


def test_evaluate_duplicates_reports_model_and_tfidf(trained):
    report = evaluate_duplicates(trained[0], RECORDS, fit_texts=[t for r in RECORDS for t in (r.text1, r.text2)])
    assert report["n_queries"] == 5 and report["n_texts"] == 15
    for result in report["results"].values():
        assert 0 < result["mrr"] <= 1 and result["recall@1"] <= result["recall@10"]
    assert set(report["results"]) == {"siamese_similarity (trained)", "TF-IDF cosine"}
    baseline = evaluate_duplicates(None, RECORDS, fit_texts=[r.text1 for r in RECORDS])
    assert set(baseline["results"]) == {"TF-IDF cosine"}
    assert baseline["tfidf"]["fitted_on"] == f"{len({r.text1 for r in RECORDS})} distinct texts"
    noted = evaluate_duplicates(None, RECORDS, fit_texts=[r.text1 for r in RECORDS], fit_note="the questions")
    assert noted["tfidf"]["fitted_on"] == "the questions" and noted["results"] == baseline["results"]


def test_compared_pipelines_rank_the_same_queries_with_intervals(trained):
    nlp = trained[0]
    texts = [t for r in RECORDS for t in (r.text1, r.text2)]
    with pytest.raises(ValueError, match="bootstrap"):
        evaluate_duplicates(nlp, RECORDS, bootstrap=-1)
    report = evaluate_duplicates(nlp, RECORDS, fit_texts=texts, compare={"again": nlp}, bootstrap=100)
    method = "compared: again"
    assert report["results"][method] == report["results"][MODEL]  # the same pipeline: the same ranks
    assert report["compared"][method] == report["model"]
    lead = report["bootstrap"]["differences"]
    assert lead[method]["value"] == 0 and lead[method]["interval"] == [0.0, 0.0]
    assert set(report["bootstrap"]["intervals"]) == {MODEL, method, TFIDF}
    baseline = evaluate_duplicates(None, RECORDS, fit_texts=texts, bootstrap=100)
    assert baseline["bootstrap"]["differences"] == {} and list(baseline["bootstrap"]["intervals"]) == [TFIDF]
    assert "bootstrap" not in evaluate_duplicates(nlp, RECORDS)


def test_hybrid_rows_are_the_pipe_scores_and_the_index_agrees():
    from ..search.conftest import build_nlp

    nlp = train(build_nlp("hybrid_cauchy"), n_iter=10)[0]
    dq = duplicate_queries(RECORDS)
    pipe = nlp.get_pipe("siamese_similarity")
    V = pipe.vectors([nlp.make_doc(t) for t in dq.texts])
    rows = pipe_score_rows(nlp, dq.texts)(dq.queries)
    for row, q in zip(rows, dq.queries):
        expected = pipe.compare(numpy.repeat(V[q : q + 1], len(V), axis=0), V)
        numpy.testing.assert_allclose(row, expected, atol=1e-6)
    report = evaluate_duplicates(nlp, RECORDS)
    assert report["model"]["lexical_weight"] == 0.3  # the weight the figures are at
    result = report["results"]["siamese_similarity (trained)"]
    assert result["index"]["mrr@10"] == pytest.approx(result["mrr@10"], abs=0.05)
    assert 0.0 <= result["index"]["recall@10"] <= 1.0
