import itertools

import numpy
import pytest

from spacy_siamese import cluster_duplicates, find_duplicates
from spacy_siamese.search import group_pairs

from .conftest import CORPUS


def brute_pairs(nlp, texts, threshold):
    matrix = nlp.get_pipe("siamese_similarity").similarity_matrix(list(nlp.pipe(texts)))
    return {
        (i, j): float(matrix[i, j])
        for i, j in itertools.combinations(range(len(texts)), 2)
        if matrix[i, j] >= threshold
    }


def test_find_duplicates_is_brute_force_with_large_k(model):
    _, nlp = model
    threshold = float(numpy.median(nlp.get_pipe("siamese_similarity").similarity_matrix(list(nlp.pipe(CORPUS)))))
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
    matrix = pipe.similarity_matrix(list(nlp.pipe(CORPUS)))
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


def test_cluster_duplicates_end_to_end(models):
    nlp = models["cauchy"]
    texts = ["How do I learn Python?", "How do I learn Python?", "Why is the sky blue?", "Why is the sky blue?", "x"]
    for method in ("components", "communities"):
        groups = cluster_duplicates(nlp, texts, threshold=0.999, method=method, progress=False)
        assert sorted(sorted(g) for g in groups) == [[0, 1], [2, 3]]
