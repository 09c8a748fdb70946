import itertools
import re
import sys
import warnings

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese import cluster_duplicates, find_duplicates
from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.search import group_pairs
from spacy_siamese.search.dedupe import LargeGroupWarning

from .conftest import CORPUS, exact_matrix


def brute_pairs(nlp, texts, threshold):
    matrix = exact_matrix(nlp, texts)
    return {
        (i, j): float(matrix[i, j])
        for i, j in itertools.combinations(range(len(texts)), 2)
        if matrix[i, j] >= threshold
    }


def test_find_duplicates_is_brute_force_with_large_k(model):
    _, nlp = model
    threshold = float(numpy.median(exact_matrix(nlp, CORPUS)))
    pairs = find_duplicates(nlp, CORPUS, threshold=threshold, k=len(CORPUS), progress=False)
    assert {(i, j): s for i, j, s in pairs} == brute_pairs(nlp, CORPUS, threshold)
    assert all(i < j and s >= threshold for i, j, s in pairs)
    assert len({(i, j) for i, j, _ in pairs}) == len(pairs)
    assert [s for _, _, s in pairs] == sorted((s for _, _, s in pairs), reverse=True)


def test_find_duplicates_small_k_is_a_subset(models):
    nlp = models["cauchy"]
    pipe = nlp.get_pipe("siamese_similarity")
    pairs = find_duplicates(nlp, CORPUS, k=2, threshold=pipe.threshold, progress=False)
    reference = brute_pairs(nlp, CORPUS, pipe.threshold)
    assert pairs and all(reference[(i, j)] == s for i, j, s in pairs)
    # each item's best other item above the threshold is found
    matrix = exact_matrix(nlp, CORPUS)
    numpy.fill_diagonal(matrix, -1)
    found = {(i, j) for i, j, _ in pairs}
    for i, row in enumerate(matrix):
        j = int(numpy.lexsort((numpy.arange(len(row)), -row.astype("float64")))[0])
        if row[j] >= pipe.threshold:
            assert (min(i, j), max(i, j)) in found


def test_default_threshold_is_the_pipes_dedupe_threshold(models):
    nlp = models["cosine"]
    pipe = nlp.get_pipe("siamese_similarity")
    assert pipe.dedupe_threshold is None  # trained with nlp.update, never evaluated
    with pytest.warns(UserWarning, match="no dedupe threshold"):
        assert find_duplicates(nlp, CORPUS, progress=False) == find_duplicates(
            nlp, CORPUS, threshold=pipe.threshold, progress=False
        )
    pipe.cfg["dedupe_threshold"] = 0.97
    try:
        pairs = find_duplicates(nlp, CORPUS, progress=False)
        assert pairs == find_duplicates(nlp, CORPUS, threshold=0.97, progress=False)
        assert all(s >= 0.97 for _, _, s in pairs)
    finally:
        pipe.cfg["dedupe_threshold"] = None


@pytest.mark.parametrize("name", ["cauchy", "cosine", "calibrated"])
def test_exact_duplicates_are_found(models, name):
    nlp = models[name]
    pairs = find_duplicates(nlp, CORPUS, threshold=0.0, k=3, progress=False)
    found = {(i, j) for i, j, _ in pairs}
    assert (0, len(CORPUS) - 3) in found and (3, len(CORPUS) - 2) in found


def test_group_pairs_components_and_ranking():
    pairs = [(0, 1, 0.9), (1, 2, 0.8), (3, 4, 0.95), (5, 6, 0.6), (6, 7, 0.7), (5, 7, 0.99)]
    groups = group_pairs(pairs, 9)
    assert groups == [[1, 0, 2], [7, 5, 6], [3, 4]]
    assert group_pairs(pairs, 9, min_size=3) == [[1, 0, 2], [7, 5, 6]]
    assert group_pairs(pairs, 9, min_size=1)[-1] == [8]


def test_group_pairs_communities():
    # a chain 0-1-2-3-4 where 2 has the most neighbours: one community around 2
    pairs = [(0, 1, 0.9), (1, 2, 0.9), (2, 3, 0.8), (3, 4, 0.9), (2, 5, 0.7), (6, 7, 0.9)]
    groups = group_pairs(pairs, 8, method="communities")
    assert groups[0] == [2, 1, 3, 5]
    assert [6, 7] in groups
    assert all(len(set(a) & set(b)) == 0 for a, b in itertools.combinations(groups, 2))
    with pytest.raises(ValueError, match="method"):
        group_pairs(pairs, 8, method="louvain")


def reference_communities(pairs, n, min_size):
    """The greedy communities, item by item: each neighbourhood (its centre, then neighbours by falling
    score, then id), the largest first, then the highest mean score, then the lowest centre."""
    scores = {}
    for i, j, s in pairs:
        if i != j:
            scores.setdefault(i, {})[j] = scores.setdefault(j, {})[i] = s
    candidates = []
    for centre in range(n):
        near = scores.get(centre, {})
        members = [centre] + sorted(near, key=lambda m: (-near[m], m))
        mean = sum(near.values()) / len(near) if near else 0.0
        candidates.append((-len(members), -mean, centre, members))
    taken, groups = set(), []
    for *_, members in sorted(candidates):
        kept = [m for m in members if m not in taken]
        if len(kept) >= max(1, min_size):
            taken.update(kept)
            groups.append(kept)
    return sorted(groups, key=lambda g: (-len(g), min(g)))


@given(
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), st.sampled_from([0.5, 0.625, 0.75, 1.0])), max_size=30),
    st.integers(0, 3),
)
@settings(max_examples=200, deadline=None)
def test_communities_equal_the_item_by_item_greedy(raw, min_size):
    """Scores are sums of powers of two, so every mean is exact whatever the order of summation (0.7s
    tied two means up to rounding, which the two sums broke differently)."""
    pairs = list({(min(i, j), max(i, j)): (min(i, j), max(i, j), s) for i, j, s in raw}.values())
    assert group_pairs(pairs, 12, method="communities", min_size=min_size) == reference_communities(pairs, 12, min_size)


def test_cluster_duplicates_end_to_end(models):
    nlp = models["cauchy"]
    texts = ["How do I learn Python?", "How do I learn Python?", "Why is the sky blue?", "Why is the sky blue?", "x"]
    for method in ("components", "communities"):
        groups = cluster_duplicates(nlp, texts, threshold=0.999, method=method, progress=False)
        assert sorted(sorted(g) for g in groups) == [[0, 1], [2, 3]]


def test_cluster_duplicates_of_found_duplicates_encodes_once(models, monkeypatch):
    """Before: `cluster_duplicates` encoded the collection again after `find_duplicates`."""
    nlp = models["hybrid_cauchy"]
    pipe = get_similarity_pipe(nlp)
    expected = {method: cluster_duplicates(nlp, CORPUS, threshold=0.8, method=method, progress=False)
                for method in ("components", "communities")}  # fmt: skip
    encoded = []
    predict = pipe.predict
    monkeypatch.setattr(pipe, "predict", lambda docs: encoded.extend(docs) or predict(docs))
    found = find_duplicates(nlp, CORPUS, threshold=0.8, progress=False)
    assert (found.n, found.threshold, found.k) == (len(CORPUS), 0.8, 10)
    once = len(encoded)
    assert once > 0
    for method in ("components", "communities"):
        assert cluster_duplicates(nlp, found, method=method) == expected[method]
    higher = cluster_duplicates(nlp, found, threshold=0.9)
    assert higher == group_pairs([p for p in found if p[2] >= 0.9], len(CORPUS))
    assert higher != expected["communities"]
    for changed in ({"threshold": 0.7}, {"threshold": float("nan")}, {"k": 5}):
        with pytest.raises(ValueError, match="found at threshold 0.8 and k=10"):
            cluster_duplicates(nlp, found, **changed)
    assert len(encoded) == once


def test_bad_settings_are_refused_before_encoding(models, monkeypatch):
    nlp = models["cauchy"]
    with pytest.raises(ValueError, match="threshold nan is outside the range"):
        find_duplicates(nlp, CORPUS, threshold=float("nan"), progress=False)  # before: no pairs, no word
    for k in (-1, 0, None, 1.5, "10", True):  # before: None a TypeError, 1.5 accepted
        with pytest.raises(ValueError, match=f"k: each k must be an integer of at least 1, got {k!r}"):
            find_duplicates(nlp, CORPUS, threshold=0.5, k=k, progress=False)
    with pytest.raises(ValueError, match="c: each k must be an integer of at least 1, got -1"):
        find_duplicates(nlp, CORPUS, threshold=0.5, candidates="hnsw", c=-1, progress=False)
    for threshold in ("0.9", True, [0.9]):  # before: "0.9" accepted
        with pytest.raises(
            ValueError, match=f"The dedupe threshold must be a number, got {re.escape(repr(threshold))}"
        ):
            find_duplicates(nlp, CORPUS, threshold=threshold, progress=False)
    # without faiss, an ivf search fails before the collection is encoded, not after
    from spacy_siamese.search import dedupe

    def no_encoding(*args, **kwargs):
        raise AssertionError("encoded before failing")

    monkeypatch.setitem(sys.modules, "faiss", None)  # as if the [ann] extra were not installed
    monkeypatch.setattr(dedupe, "encode_collection", no_encoding)
    with pytest.raises(ImportError, match=r"pip install 'spacy-siamese\[ann\]'"):
        find_duplicates(nlp, CORPUS, threshold=0.5, candidates="ivf", progress=False)
    with pytest.raises(ValueError, match="candidates must be one of"):
        find_duplicates(nlp, CORPUS, threshold=0.5, candidates="annoy", progress=False)


def test_group_pairs_refuses_ids_outside_the_collection_and_ignores_self_pairs():
    with pytest.raises(ValueError, match=r"Pair 1 \(2, 5\) names an item outside the 3 items"):
        group_pairs([(0, 1, 0.9), (2, 5, 0.9)], 3)  # before: scipy's 'index 5 exceeds matrix dimension 3'
    with pytest.raises(ValueError, match="outside the 3 items"):
        group_pairs([(-1, 1, 0.9)], 3, method="components")
    for method in ("communities", "components"):  # before: [[1, 1]], an item listed twice
        assert group_pairs([(1, 1, 1.0), (0, 2, 0.9)], 3, method=method) == [[0, 2]]


@pytest.mark.parametrize("name", ["cauchy", "cosine", "hybrid_cauchy"])
@pytest.mark.filterwarnings("error")
def test_thresholds_at_the_ends_of_the_score_range(models, name):
    nlp = models[name]
    low, high = get_similarity_pipe(nlp).score_range
    identical = find_duplicates(nlp, ["How do I learn Python?"] * 3, threshold=high, progress=False)
    assert [(i, j) for i, j, _ in identical] == [(0, 1), (0, 2), (1, 2)]
    assert len(find_duplicates(nlp, CORPUS[:12], threshold=low, k=20, progress=False)) == 66
    for outside in (high + 0.5, low - 1.0, float("nan")):  # before: no pair (and sqrt's RuntimeWarning), every pair
        with pytest.raises(ValueError, match="outside the range of the pipe's scores"):
            find_duplicates(nlp, CORPUS, threshold=outside, progress=False)


@pytest.mark.parametrize(
    "method,why,advice",
    [
        ("components", "duplicates chained into it", "method='communities' with a smaller k"),
        ("communities", "one item has that many duplicates", "a smaller k"),  # a community does not chain
    ],
)
def test_a_group_of_many_items_warns_with_advice_for_its_method(method, why, advice):
    chain = [(i, i + 1, 0.9) for i in range(29)]  # 30 of 100 items chained into one group by components
    star = [(0, i, 0.9) for i in range(1, 30)]  # and one community around item 0
    message = rf"One group holds 30 of 100 items \(30%\): {why} \({method}\)\. "
    message += rf"Raise the threshold or use {re.escape(advice)}\."
    with pytest.warns(LargeGroupWarning, match=message):
        group_pairs(chain if method == "components" else star, 100, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            len(group_pairs(chain[:19] if method == "components" else star[:19], 100, method=method)[0]) == 20
        )  # not > 20


@pytest.mark.parametrize("name", ["cauchy", "feature", "hybrid_cosine"])
def test_copies_collapse_and_get_the_brute_force_pairs(models, name):
    """Groups of identical texts (here 30, 12 and 2 copies) are searched once; every copy still gets
    the pairs a search over every item gives it: its k best others, ties by id."""
    nlp = models[name]
    texts = list(CORPUS)
    for copies, source in ((30, 5), (12, 17), (2, 40)):
        texts += [CORPUS[source]] * copies
    texts = [texts[i] for i in numpy.random.default_rng(0).permutation(len(texts))]
    matrix = exact_matrix(nlp, texts)
    threshold = float(numpy.quantile(matrix, 0.7))
    for k in (1, 5, 40):
        pairs = find_duplicates(nlp, texts, threshold=threshold, k=k, candidates="flat", progress=False)
        numpy.fill_diagonal(matrix, -numpy.inf)
        expected = {}
        for i, row in enumerate(matrix):
            for j in numpy.lexsort((numpy.arange(len(row)), -row.astype("float64")))[:k]:
                if row[j] >= threshold:
                    expected[(min(i, int(j)), max(i, int(j)))] = float(row[j])
        assert {(i, j): s for i, j, s in pairs} == expected


def test_ten_thousand_copies_in_twenty_thousand_texts_take_seconds(monkeypatch):
    """Before: flat candidates were quadratic inside a cluster of identical texts (2,000 copies
    among 20,000 texts took 248 s of search; 10,000 were not done after 900 s)."""
    import time

    from spacy_siamese.search import CorpusIndex

    from ..conftest import make_nlp, train

    nlp = train(make_nlp(), n_iter=2)[0]
    words = ["cat", "dog", "car", "tree", "house", "river", "book", "phone", "music", "bread"]
    others = [f"{words[i % 10]} {words[i // 10 % 10]} {words[i // 100 % 10]} number {i}" for i in range(10_000)]
    texts = [t for pair in zip(["How do I learn Python fast?"] * 10_000, others) for t in pair]
    scored = []
    duplicates = CorpusIndex.duplicates
    monkeypatch.setattr(
        CorpusIndex, "duplicates", lambda self, *a, **kw: scored.append(self) or duplicates(self, *a, **kw)
    )
    start = time.perf_counter()
    pairs = find_duplicates(nlp, texts, threshold=0.99, k=10, candidates="flat", progress=False)
    assert time.perf_counter() - start < 120
    assert scored[0].n_scored < 20 * len(texts)  # not 10,000 x 10,000
    copies = {(i, j) for i, j, _ in pairs if i % 2 == 0 and j % 2 == 0}
    # each copy is paired with the first 10 other copies (ties by id): the pairs within the first 11
    # copies, and each later copy with the first 10
    first = list(range(0, 22, 2))
    assert copies == {(a, b) for a in first for b in first if a < b} | {
        (a, b) for a in first[:10] for b in range(22, 20_000, 2)
    }
