"""Cross-lingual retrieval metrics and baselines."""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.sparse import csr_matrix

from spacy_siamese.evaluation.crosslingual import (
    CL_LSI,
    OPCA,
    cl_lsi_and_opca,
    cosine_matrix,
    crosslingual_markdown,
    translation_metrics,
)


def test_translation_metrics_both_directions():
    S = numpy.asarray([[0.9, 0.1, 0.0], [0.95, 0.5, 0.2], [0.0, 0.3, 0.8]])
    m = translation_metrics(S)
    # rows: ranks 1, 2, 1; columns: ranks 2 (0.95 > 0.9), 1, 1
    assert m["acc@1_a_b"] == pytest.approx(2 / 3) and m["acc@1_b_a"] == pytest.approx(2 / 3)
    assert m["mrr_a_b"] == pytest.approx((1 + 0.5 + 1) / 3) and m["mrr_b_a"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert m["acc@1"] == pytest.approx(2 / 3) and m["mrr"] == pytest.approx(2.5 / 3)


def test_ties_count_against_the_answer():
    m = translation_metrics(numpy.zeros((4, 4)))  # e.g. texts without a shared term
    assert m["acc@1"] == 0.0 and m["mrr"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="square"):
        translation_metrics(numpy.zeros((2, 3)))


# Issue 75, defect 6: a dev text in two pairs tied with its copy, so every copy counted as wrong.


def test_a_copy_of_the_answer_is_right():
    texts_a, texts_b = ["a", "a", "c"], ["x", "x", "z"]
    S = numpy.asarray([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.2, 0.2, 0.8]])
    assert translation_metrics(S)["acc@1"] == pytest.approx(1 / 3)  # without the texts: ties count against
    assert translation_metrics(S, texts_a, texts_b)["acc@1"] == 1.0
    # one query text with two translations: either is right; a wrong text scoring as high is not
    S = numpy.asarray([[0.5, 0.9, 0.9], [0.5, 0.4, 0.1], [0.1, 0.1, 0.8]])
    m = translation_metrics(S, ["a", "a", "c"], ["x", "y", "z"])
    assert m["acc@1_a_b"] == pytest.approx(2 / 3) and m["mrr_a_b"] == pytest.approx((0.5 + 1 + 1) / 3)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(
    M=st.integers(2, 6).flatmap(lambda n: arrays("f8", (n, n), elements=st.sampled_from([0.0, 0.5, 1.0]))),
    copies=st.lists(st.integers(1, 3), min_size=6, max_size=6),
)
def test_repeating_pairs_keeps_acc_at_1(M, copies):
    """Each dev pair k repeated copies[k] times, scored as its texts are: the same acc@1."""
    n = len(M)
    rows = numpy.repeat(numpy.arange(n), copies[:n])
    texts_a, texts_b = [f"a{k}" for k in rows], [f"b{k}" for k in rows]
    once = translation_metrics(M)
    repeated = translation_metrics(M[numpy.ix_(rows, rows)], texts_a, texts_b)
    weights = numpy.asarray(copies[:n], dtype="f8")
    for name in ("a_b", "b_a"):
        S = M if name == "a_b" else M.T
        alone = (S >= numpy.diag(S)[:, None]).sum(axis=1) == 1  # each query's acc@1 without copies
        assert repeated[f"acc@1_{name}"] == pytest.approx((alone * weights).sum() / weights.sum())
    assert translation_metrics(M, [f"a{k}" for k in range(n)], [f"b{k}" for k in range(n)]) == once


def test_cosine_matrix_sparse_and_dense_agree():
    rng = numpy.random.default_rng(0)
    A, B = rng.random((5, 7)), rng.random((4, 7))
    A[2] = 0.0
    dense = cosine_matrix(A, B)
    numpy.testing.assert_allclose(cosine_matrix(csr_matrix(A), csr_matrix(B)), dense, atol=1e-12)
    assert (dense[2] == 0).all() and dense.max() <= 1.0 + 1e-12


def test_cl_lsi_and_opca_shapes_and_pairs():
    rng = numpy.random.default_rng(0)
    topics = rng.random((30, 40)) * (rng.random((30, 40)) < 0.2)
    F_a = csr_matrix(topics + 0.05 * rng.random((30, 40)))
    F_b = csr_matrix(topics + 0.05 * rng.random((30, 40)))
    fitted = cl_lsi_and_opca(F_a, F_b, width=5)
    assert set(fitted) == {CL_LSI, OPCA} and all(W.shape == (40, 5) for W in fitted.values())
    for W in fitted.values():
        assert translation_metrics(cosine_matrix(F_a @ W, F_b @ W))["acc@1"] > 0.5
    assert set(cl_lsi_and_opca(F_a, F_b, width=5, opca=False)) == {CL_LSI}


def test_markdown_has_a_row_per_method():
    metrics = translation_metrics(numpy.eye(3))
    report = {"langs": ["en", "es"], "groups": {"news": {"n": 3, "results": {"a": metrics, "b": metrics}}}}
    text = crosslingual_markdown(report)
    assert (
        "## news (3 pairs)" in text
        and "acc@1 en->es" in text
        and text.count("| 1.000 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |") == 2
    )
