import numpy
import pytest

from spacy_siamese import SimilarityIndex

from .conftest import CORPUS
from .test_index import QUERIES

faiss = pytest.importorskip("faiss")


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_candidates_recall(model, kind):
    name, nlp = model
    rng = numpy.random.default_rng(0)
    exact = SimilarityIndex.build(nlp, CORPUS, progress=False)
    width = exact.vectors.shape[1]
    # a larger collection: the corpus plus noisy copies of its vectors
    noisy = exact.vectors[rng.integers(0, len(CORPUS), 2000)] + rng.normal(scale=0.05, size=(2000, width)).astype("f")
    exact.add_vectors(noisy)
    approximate = SimilarityIndex(nlp, exact.vectors, candidates=kind)
    queries = exact.vectors[rng.integers(0, len(exact), 100)]
    if not exact.space.exact:  # the feature head, a hybrid over Cauchy: the reference is the same
        # candidate space (the 100 nearest by L2), searched exhaustively
        exact = SimilarityIndex(nlp, exact.vectors, c=100)
    ids_exact, scores_exact = exact.search_vectors(queries, 10)
    ids_found, scores_found = approximate.search_vectors(queries, 10)
    recall = numpy.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids_exact, ids_found)])
    assert recall >= (0.8 if name == "feature" or name.startswith("hybrid") else 0.95), (name, recall)
    found = ids_found == ids_exact
    numpy.testing.assert_array_equal(scores_found[found], scores_exact[found])


def test_candidates_are_saved_and_loaded(models, tmp_path):
    nlp = models["cosine"]
    index = SimilarityIndex.build(nlp, CORPUS, candidates="hnsw", progress=False)
    hits = index.search(QUERIES, k=5)
    index.save(tmp_path / "idx")
    assert (tmp_path / "idx" / "candidates-hnsw.faiss").exists()
    loaded = SimilarityIndex.load(tmp_path / "idx", nlp)
    assert loaded.candidates == "hnsw" and loaded._ann is not None
    assert loaded.search(QUERIES, k=5) == hits


def test_a_damaged_candidate_index_is_named(models, tmp_path):
    """Flipped bytes in the faiss file are found by its checksum (before: faiss read them, or
    the process aborted with a bare "Aborted.")."""
    nlp = models["cosine"]
    index = SimilarityIndex.build(nlp, CORPUS, candidates="hnsw", progress=False)
    index.search(QUERIES, k=5)
    index.save(tmp_path / "idx")
    file = tmp_path / "idx" / "candidates-hnsw.faiss"
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"{file} is damaged or missing .*: build the index again"):
        SimilarityIndex.load(tmp_path / "idx", nlp)
    file.write_bytes(b"")
    with pytest.raises(ValueError, match=f"{file} is damaged or missing"):
        SimilarityIndex.load(tmp_path / "idx", nlp)
