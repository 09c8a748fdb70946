import numpy
import pytest

from spacy_siamese import SimilarityIndex

from .conftest import CORPUS
from .test_index import QUERIES

faiss = pytest.importorskip("faiss")


def test_faiss_flat_matches_exact(model):
    _, nlp = model
    exact = SimilarityIndex.build(nlp, CORPUS, progress=False)
    flat = SimilarityIndex.build(nlp, CORPUS, backend="faiss-flat", progress=False)
    for a, b in zip(exact.search(QUERIES, k=5), flat.search(QUERIES, k=5)):
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-6)


def test_hnsw_recall(model):
    name, nlp = model
    rng = numpy.random.default_rng(0)
    exact = SimilarityIndex.build(nlp, CORPUS, progress=False)
    width = exact.vectors.shape[1]
    # a larger collection: the corpus plus noisy copies of its vectors
    noisy = exact.vectors[rng.integers(0, len(CORPUS), 2000)] + rng.normal(scale=0.05, size=(2000, width)).astype("f")
    exact.add_vectors(noisy)
    hnsw = SimilarityIndex(nlp, exact.vectors, backend="faiss", hnsw_m=16)
    queries = exact.vectors[rng.integers(0, len(exact), 100)]
    if not exact.space.exact:  # the feature head, a hybrid over Cauchy: the reference is the same
        # candidate space, searched exhaustively
        exact = SimilarityIndex(nlp, exact.vectors, backend="faiss-flat")
    ids_exact, scores_exact = exact.search_vectors(queries, 10)
    ids_hnsw, scores_hnsw = hnsw.search_vectors(queries, 10)
    recall = numpy.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids_exact, ids_hnsw)])
    assert recall >= (0.85 if name == "feature" or name.startswith("hybrid") else 0.95), (name, recall)
    found = ids_hnsw == ids_exact
    numpy.testing.assert_array_equal(scores_hnsw[found], scores_exact[found])


def test_faiss_save_load(models, tmp_path):
    nlp = models["cosine"]
    index = SimilarityIndex.build(nlp, CORPUS, backend="faiss", progress=False)
    index.save(tmp_path / "idx")
    assert (tmp_path / "idx" / "faiss.index").exists()
    loaded = SimilarityIndex.load(tmp_path / "idx", nlp)
    assert loaded.backend == "faiss"
    assert loaded.search(QUERIES, k=5) == index.search(QUERIES, k=5)


def test_faiss_load_refuses_a_corrupt_index(models, tmp_path):
    nlp = models["cosine"]
    index = SimilarityIndex.build(nlp, CORPUS, backend="faiss", progress=False)
    index.save(tmp_path / "idx")
    data = (tmp_path / "idx" / "faiss.index").read_bytes()
    (tmp_path / "idx" / "faiss.index").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="incomplete or corrupt: .*faiss.index"):
        SimilarityIndex.load(tmp_path / "idx", nlp)
    (tmp_path / "idx" / "faiss.index").unlink()
    with pytest.raises(ValueError, match="incomplete or corrupt: .*faiss.index"):
        SimilarityIndex.load(tmp_path / "idx", nlp)
    # an index of fewer items than the vectors (e.g. copied from another save)
    SimilarityIndex(nlp, index.vectors[:5], backend="faiss").save(tmp_path / "small")
    (tmp_path / "small" / "faiss.index").replace(tmp_path / "idx" / "faiss.index")
    with pytest.raises(ValueError, match=f"faiss.index holds 5 items, but the index has {len(CORPUS)} items"):
        SimilarityIndex.load(tmp_path / "idx", nlp)
