"""Corpus-scale dedupe: compact vectors with a bound, exact re-scoring, every comparison."""

import contextlib
import io
import itertools

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_siamese.files import atomic_write
from spacy_siamese.pairwise import vector_similarity_matrix
from spacy_siamese.search import CorpusIndex, VectorStore, compact, encode_collection
from spacy_siamese.search.compact import CompactSpace, distance_bound
from spacy_siamese.search.store import write_store
from spacy_siamese.space import vector_space

from .conftest import COMPARISONS, CORPUS


def brute_force(pipe, vectors, threshold, k):
    """find_duplicates' definition on vectors: each item's k best others (ties by id) at or
    above the threshold, scored with pipe.compare."""
    matrix = vector_similarity_matrix(pipe.compare, vectors)
    numpy.fill_diagonal(matrix, -numpy.inf)
    found = {}
    for i, row in enumerate(matrix):
        order = numpy.lexsort((numpy.arange(len(row)), -row.astype("float64")))[:k]
        for j in order:
            if row[j] >= threshold:
                found[(min(i, int(j)), max(i, int(j)))] = float(row[j])
    return found


def random_vectors(pipe, n, seed):
    """Random vectors of the pipe's width; a hybrid's lexical part is sparse and unit-length,
    like hashed TF-IDF rows."""
    rng = numpy.random.default_rng(seed)
    space = vector_space(pipe.comparison)
    width = pipe.encoder.get_dim("nO")
    vectors = rng.normal(size=(n, width)).astype("f") * 0.3
    if space.lexical_width:
        lexical = vectors[:, -space.lexical_width :]
        lexical[rng.random(lexical.shape) > 0.1] = 0.0
        norms = numpy.linalg.norm(lexical, axis=1, keepdims=True)
        lexical /= numpy.where(norms > 0, norms, 1.0)
    vectors[n // 2] = vectors[0]  # an exact duplicate
    return vectors


@pytest.mark.parametrize("name", list(COMPARISONS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 40), seed=st.integers(0, 2**16), quantile=st.floats(0.5, 0.99), k=st.integers(1, 8))
def test_flat_candidates_equal_brute_force_on_random_vectors(models, tmp_path_factory, name, n, seed, quantile, k):
    nlp = models[name]
    pipe = nlp.get_pipe("siamese_similarity")
    vectors = random_vectors(pipe, n, seed)
    space = vector_space(pipe.comparison)
    store = write_store(tmp_path_factory.mktemp("store"), vectors, model_id=pipe.model_id, space=space, chunk_size=7)
    scores = vector_similarity_matrix(pipe.compare, vectors)
    threshold = float(numpy.quantile(scores[numpy.triu_indices(n, 1)], quantile))
    index = CorpusIndex(nlp, store, candidates="flat", dims=4)
    got = {(i, j): s for i, j, s in index.duplicates(threshold, k=k)}
    assert got == brute_force(pipe, vectors, threshold, k)


@pytest.mark.parametrize("name", ["cauchy", "cosine", "exp_l1", "hybrid_cauchy", "feature"])
def test_approximate_candidates_rescore_exactly(models, tmp_path, name):
    """With IVF candidates every returned score is doc.similarity of the two texts, and with
    every item a candidate the pairs are the brute-force ones."""
    pytest.importorskip("faiss")
    nlp = models[name]
    pipe = nlp.get_pipe("siamese_similarity")
    store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "store", chunk_size=16, progress=False)
    docs = list(nlp.pipe(CORPUS))
    matrix = pipe.similarity_matrix(docs)
    threshold = float(numpy.quantile(matrix[numpy.triu_indices(len(docs), 1)], 0.8))
    index = CorpusIndex(nlp, store, candidates="ivf", dims=8)
    pairs = index.duplicates(threshold, k=len(CORPUS), c=len(CORPUS))
    assert pairs and all(s == docs[i].similarity(docs[j]) for i, j, s in pairs)
    assert {(i, j) for i, j, _ in pairs} == {
        (i, j) for i, j in itertools.combinations(range(len(docs)), 2) if matrix[i, j] >= threshold
    }


def test_a_rerun_reads_the_candidate_index_back(models, tmp_path, monkeypatch):
    """The IVF index is kept in the store directory: a second index over the same store reads
    it instead of training again, and finds the same pairs."""
    pytest.importorskip("faiss")
    nlp = models["hybrid_cauchy"]
    pipe = nlp.get_pipe("siamese_similarity")
    store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "store", chunk_size=16, progress=False)
    matrix = pipe.similarity_matrix(CORPUS)
    threshold = float(numpy.quantile(matrix[numpy.triu_indices(len(CORPUS), 1)], 0.8))
    first = CorpusIndex(nlp, store, candidates="ivf", dims=8).duplicates(threshold, k=5, c=10)
    assert (
        "compact-8/ivf.faiss" in store.manifest["files"] and (tmp_path / "store" / "compact-8" / "ivf.faiss").exists()
    )

    def no_training(*args, **kwargs):
        raise AssertionError("the saved index was trained again")

    monkeypatch.setattr(compact, "build_ivf", no_training)
    again = CorpusIndex(nlp, store, candidates="ivf", dims=8)
    assert again.candidates is not None and again.candidates.settings["nlist"] > 0
    assert again.duplicates(threshold, k=5, c=10) == first and first


@pytest.mark.parametrize("last", ["error.npy", "ivf.faiss"])
def test_a_run_killed_while_saving_the_compact_files_is_rerun(models, tmp_path, last):
    """A kill while the compact vectors or the candidate index are written leaves no listed
    partial file that the rerun would read (before: numpy's 'Failed to read all data' on every
    rerun, or faiss's "Aborted.")."""
    pytest.importorskip("faiss")
    from spacy_siamese.search import store as store_module

    nlp = models["cauchy"]
    store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "store", chunk_size=16, progress=False)
    expected = CorpusIndex(nlp, store, candidates="ivf", dims=8).duplicates(0.5, k=5, c=10)
    store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "fresh", chunk_size=16, progress=False)

    class Killed(BaseException):
        pass

    @contextlib.contextmanager
    def killed_while_writing(path):
        if not str(path).endswith(last):
            with atomic_write(path) as file:
                yield file
            return
        with open(path, "wb") as file:  # half the bytes at the final path, as a non-atomic write would
            buffer = io.BytesIO()
            yield buffer
            file.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        raise Killed()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "atomic_write", killed_while_writing)
        with pytest.raises(Killed):
            CorpusIndex(nlp, store, candidates="ivf", dims=8)
    again = VectorStore(tmp_path / "fresh")
    assert CorpusIndex(nlp, again, candidates="ivf", dims=8).duplicates(0.5, k=5, c=10) == expected


@pytest.mark.parametrize("n", [300, 3000])
def test_ivf_candidates_have_exact_float16_distances(n):
    """The IVF index (4-bit codes re-ranked by float16 vectors from PQ_MIN_ITEMS items up, the
    vectors themselves below) returns the squared distances of the rounded vectors, nearest
    first, and a serialized copy keeps its settings and answers alike."""
    pytest.importorskip("faiss")
    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(n, 16)).astype("float16")
    index = compact.CandidateIndex(vectors, nprobe=4)
    ids, d2 = index.search(vectors[:50], 10)
    assert (ids >= 0).all() and (numpy.diff(d2, axis=1) >= 0).all()
    decoded = vectors.astype("float32")
    exact = ((decoded[ids] - decoded[:50, None, :]) ** 2).sum(axis=2)
    numpy.testing.assert_allclose(d2, exact, rtol=1e-5, atol=1e-5)
    assert (ids[:, 0] == numpy.arange(50)).all()  # each item is its own nearest
    kind = "PQ8x4fs,Refine(SQfp16)" if n >= compact.PQ_MIN_ITEMS else "Flat"
    assert index.settings["index"] == f"IVF{index.settings['nlist']},{kind}"
    again = compact.CandidateIndex(vectors, nprobe=4, serialized=index.serialize())
    assert again.settings == index.settings
    assert all(numpy.array_equal(x, y) for x, y in zip(again.search(vectors[:50], 10), (ids, d2)))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 30), width=st.integers(2, 12), dims=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_the_distance_bound_never_exceeds_the_distance(n, width, dims, seed):
    """From float16 compact vectors, residual norms and rounding errors, the bound is at most
    the true squared distance, at any scale."""
    rng = numpy.random.default_rng(seed)
    x = rng.normal(size=(n, width)) * rng.uniform(0.01, 100)
    space = CompactSpace.fit(x[: max(2, n // 2)], dims=dims)
    compact, residual, error = space.project(x)
    assert compact.dtype == numpy.float16
    true = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    c = compact.astype("f8")
    d2c = ((c[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
    bound = distance_bound(d2c, residual[:, None], residual[None, :], error[:, None], error[None, :])
    assert (bound <= true * (1 + 1e-4) + 1e-6).all()


def test_the_compact_space_is_the_principal_subspace():
    """The fitted components are orthonormal and span the top principal directions: the
    projection keeps as much variance as an SVD of the centred sample does."""
    rng = numpy.random.default_rng(0)
    sample = (rng.normal(size=(500, 24)) * numpy.linspace(3.0, 0.1, 24)) @ numpy.linalg.qr(rng.normal(size=(24, 24)))[0]
    space = CompactSpace.fit(sample, dims=5)
    numpy.testing.assert_allclose(space.components @ space.components.T, numpy.eye(5), atol=1e-5)
    centred = sample - sample.mean(axis=0)
    singular = numpy.linalg.svd(centred, compute_uv=False)
    kept = ((centred @ space.components.T.astype("f8")) ** 2).sum()
    numpy.testing.assert_allclose(kept, (singular[:5] ** 2).sum(), rtol=1e-4)


def test_store_refuses_another_model(models, tmp_path):
    nlp = models["cauchy"]
    store = encode_collection(nlp, CORPUS[:5], 5, tmp_path / "store", progress=False)
    with pytest.raises(ValueError, match="encode the collection again"):
        CorpusIndex(models["cosine"], store)


@pytest.mark.parametrize("name", ["cauchy", "cosine_raw", "hybrid_cosine", "exp_l2"])
def test_flat_without_faiss_equals_brute_force(models, tmp_path, monkeypatch, name):
    """The numpy path of "flat" (no faiss range search) gives the same pairs."""
    monkeypatch.setattr(CorpusIndex, "_flat_faiss", lambda self: None)
    nlp = models[name]
    pipe = nlp.get_pipe("siamese_similarity")
    vectors = random_vectors(pipe, 60, seed=1)
    store = write_store(tmp_path / "s", vectors, model_id=pipe.model_id, space=vector_space(pipe.comparison))
    scores = vector_similarity_matrix(pipe.compare, vectors)
    threshold = float(numpy.quantile(scores[numpy.triu_indices(60, 1)], 0.8))
    got = {(i, j): s for i, j, s in CorpusIndex(nlp, store, candidates="flat", dims=6).duplicates(threshold, k=5)}
    assert got and got == brute_force(pipe, vectors, threshold, 5)
