import gzip
import hashlib
import json

import numpy
import pytest
import srsly

from spacy_siamese import SimilarityIndex
from spacy_siamese.layers.heads import predicting_head
from spacy_siamese.pairwise import vector_similarity_matrix
from spacy_siamese.search import encode_with_texts
from spacy_siamese.space import COSINE, OTHER, vector_space

from ..conftest import make_nlp, train
from .conftest import CORPUS, exact_matrix

QUERIES = ["How can I learn Python quickly?", "best way to learn chess", "Why is the sky blue?", CORPUS[0], ""]


def brute_force(pipe, query_docs, docs, k):
    """Each query's k best docs; none for an empty query."""
    matrix = exact_matrix(pipe.pipeline(), query_docs, docs)
    hits = []
    for query, row in zip(query_docs, matrix):
        order = numpy.lexsort((numpy.arange(len(row)), -row.astype("float64")))[: k if query.text.strip() else 0]
        hits.append([(int(j), float(row[j])) for j in order])
    return hits


@pytest.mark.parametrize("k", [1, 5, 10, 200])
def test_exact_backend_is_brute_force(model, k):
    _, nlp = model
    pipe = nlp.get_pipe("siamese_similarity")
    docs = list(nlp.pipe(CORPUS))
    query_docs = list(nlp.pipe(QUERIES))
    index = SimilarityIndex.build(nlp, docs, progress=False)
    hits = index.search(query_docs, k=k)
    assert hits == brute_force(pipe, query_docs, docs, k)
    for query, row in zip(query_docs, hits):
        assert len(row) == (min(k, len(docs)) if query.text else 0)
        for j, score in row:
            assert score == query.similarity(docs[j])


def test_items_scored_in_blocks_give_the_same_hits(model, monkeypatch):
    """Keys computed a few items at a time (a large index in bounded memory) rank as in one block."""
    from spacy_siamese.search import index as index_module

    _, nlp = model
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    whole = index.search(QUERIES, k=7)
    monkeypatch.setattr(index_module, "ITEM_BLOCK_BYTES", 8 * index.vectors.shape[1] * 3)
    assert index._item_step() == 3
    assert index.search(QUERIES, k=7) == whole


def test_texts_and_docs_give_one_index(models):
    nlp = models["cauchy"]
    by_text = SimilarityIndex.build(nlp, CORPUS, progress=False, batch_size=7)
    by_doc = SimilarityIndex.build(nlp, list(nlp.pipe(CORPUS)), progress=False)
    numpy.testing.assert_array_equal(by_text.vectors, by_doc.vectors)
    assert by_text.texts == CORPUS
    assert by_text.search(QUERIES, k=4) == by_doc.search(list(nlp.pipe(QUERIES)), k=4)


def test_add_extends_ids(models):
    nlp = models["cosine"]
    index = SimilarityIndex.build(nlp, CORPUS[:20], progress=False)
    assert index.add(CORPUS[20:], progress=False) == list(range(20, len(CORPUS)))
    whole = SimilarityIndex.build(nlp, CORPUS, progress=False)
    assert index.search(QUERIES, k=6) == whole.search(QUERIES, k=6)
    assert index.texts == CORPUS


def test_texts_are_collected_only_when_kept(models):
    nlp = models["cosine"]
    pipe = nlp.get_pipe("siamese_similarity")
    vectors, texts = encode_with_texts(nlp, CORPUS[:5], batch_size=2, progress=False)
    assert texts == CORPUS[:5]
    numpy.testing.assert_array_equal(vectors, pipe.encode(CORPUS[:5]))
    same, none = encode_with_texts(nlp, CORPUS[:5], batch_size=2, progress=False, keep_texts=False)
    assert none is None
    numpy.testing.assert_array_equal(same, vectors)
    empty, no_texts = encode_with_texts(nlp, [], progress=False)
    assert empty.shape == (0, vectors.shape[1]) and no_texts == []
    index = SimilarityIndex.build(nlp, CORPUS[:5], store_texts=False, progress=False)
    assert index.texts is None
    numpy.testing.assert_array_equal(index.vectors, vectors)


def test_adding_one_at_a_time_gives_the_same_index_without_copying_it_each_time(models, tmp_path):
    nlp = models["cauchy"]
    whole = SimilarityIndex.build(nlp, CORPUS, progress=False)
    index = SimilarityIndex(nlp)
    views = []
    for i, vector in enumerate(whole.vectors):
        assert index.add_vectors(vector[None, :], [CORPUS[i]]) == [i]
        views.append(index.vectors)
    numpy.testing.assert_array_equal(index.vectors, whole.vectors)
    assert index.texts == CORPUS and len(index) == len(CORPUS)
    assert index.search(QUERIES, k=5) == whole.search(QUERIES, k=5)
    # the rows grow geometrically: most adds write into the rows already there
    reused = sum(numpy.shares_memory(a, b) for a, b in zip(views, views[1:]))
    assert reused >= len(views) - 1 - numpy.ceil(numpy.log2(len(views)))
    index.save(tmp_path / "index")
    loaded = SimilarityIndex.load(tmp_path / "index", nlp)
    numpy.testing.assert_array_equal(loaded.vectors, whole.vectors)
    assert loaded.add_vectors(whole.vectors[:2]) == [len(CORPUS), len(CORPUS) + 1]
    numpy.testing.assert_array_equal(loaded.vectors[-2:], whole.vectors[:2])


def test_spaces(models):
    assert vector_space(models["cosine"].get_pipe("siamese_similarity").comparison).kind == COSINE
    assert vector_space(models["feature"].get_pipe("siamese_similarity").comparison).kind == OTHER
    calibrated = models["calibrated"].get_pipe("siamese_similarity").comparison
    assert predicting_head(calibrated).name == "cauchy_similarity"
    space = vector_space(calibrated)
    assert space.metric == "l2" and space.exact and space.scale.shape == (64,)


def test_feature_head_candidates_are_rescored(models):
    nlp = models["feature"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False, c=len(CORPUS))
    exact = SimilarityIndex.build(nlp, CORPUS, progress=False)
    assert index.search(QUERIES, k=5) == exact.search(QUERIES, k=5)
    few = SimilarityIndex.build(nlp, CORPUS, progress=False, c=8)
    docs = list(nlp.pipe(CORPUS))
    for query, row in zip(nlp.pipe(QUERIES), few.search(list(nlp.pipe(QUERIES)), k=5)):
        assert len(row) == (5 if query.text else 0)
        assert [s for _, s in row] == sorted((s for _, s in row), reverse=True)
        for j, score in row:
            assert score == query.similarity(docs[j])


def test_save_load_round_trip(model, tmp_path):
    _, nlp = model
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    index.save(tmp_path / "index", model="somewhere")
    loaded = SimilarityIndex.load(tmp_path / "index", nlp)
    numpy.testing.assert_array_equal(loaded.vectors, index.vectors)
    assert loaded.texts == CORPUS
    assert loaded.search(QUERIES, k=7) == index.search(QUERIES, k=7)
    assert not list((tmp_path / "index").glob("*.pkl"))


@pytest.mark.parametrize("c", [0, -3, 2.5, True, "8"])
def test_candidates_per_query_are_a_positive_count(models, c):
    """`c` as in `find_duplicates`; 0 was taken as "none" and a float as its integer part."""
    with pytest.raises(ValueError, match=r"c \(candidates re-scored per query\) must be None or at least 1"):
        SimilarityIndex(models["feature"], c=c)


def test_an_index_of_the_old_format_is_named_with_the_fix(models, tmp_path):
    """A directory `index` wrote before the one format (index.json, vectors.npy, texts.jsonl)."""
    nlp = models["cauchy"]
    path = tmp_path / "old"
    path.mkdir()
    vectors = SimilarityIndex.build(nlp, CORPUS[:5], progress=False).vectors
    numpy.save(path / "vectors.npy", vectors)
    srsly.write_jsonl(path / "texts.jsonl", [{"text": t} for t in CORPUS[:5]])
    meta = {"format": "spacy_siamese.index.v1", "model_id": nlp.get_pipe("siamese_similarity").model_id}
    srsly.write_json(path / "index.json", {**meta, "pipe_name": "siamese_similarity", "backend": "exact", "size": 5})
    message = r"is an index of an earlier version \(spacy_siamese.index.v1, with index.json\).*build it again"
    with pytest.raises(ValueError, match=message):
        SimilarityIndex.load(path, nlp)


def test_a_dedupe_work_dir_is_an_index(models, tmp_path):
    """One format: the vector store `find_duplicates` leaves in its work dir loads as an index."""
    from spacy_siamese import find_duplicates

    nlp = models["cauchy"]
    find_duplicates(nlp, CORPUS, threshold=0.9, work_dir=tmp_path / "work", progress=False)
    index = SimilarityIndex.load(tmp_path / "work", nlp)
    assert index.texts is None and index.search(QUERIES, k=4) == SimilarityIndex.build(
        nlp, CORPUS, progress=False
    ).search(QUERIES, k=4)


def test_load_refuses_another_model(models, tmp_path):
    SimilarityIndex.build(models["cauchy"], CORPUS, progress=False).save(tmp_path / "index")
    other = train(make_nlp(), n_iter=2)[0]
    with pytest.raises(ValueError, match="was built by siamese_similarity model"):
        SimilarityIndex.load(tmp_path / "index", other)
    with pytest.raises(ValueError, match="not a saved SimilarityIndex"):
        SimilarityIndex.load(tmp_path, other)


def test_load_refuses_an_incomplete_or_corrupt_index(models, tmp_path):
    nlp = models["cauchy"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    path = tmp_path / "index"

    def broken(damage, name):
        index.save(path)
        damage(path / name)
        return pytest.raises(ValueError, match=f"{path / name} is damaged or missing .*: build the index again")

    def flip(file):
        data = bytearray(file.read_bytes())
        data[-3] ^= 1
        file.write_bytes(bytes(data))

    with broken(flip, "learned.npy"):  # before: other vectors, silently
        SimilarityIndex.load(path, nlp)
    with broken(lambda file: file.write_bytes(file.read_bytes()[:300]), "learned.npy"):
        SimilarityIndex.load(path, nlp)
    with broken(lambda file: file.unlink(), "learned.npy"):
        SimilarityIndex.load(path, nlp)
    with broken(lambda file: file.write_bytes(b""), "learned.npy"):  # before: numpy's EOFError ("Aborted.")
        SimilarityIndex.load(path, nlp)
    with broken(lambda file: file.write_bytes(gzip.compress(b'{"text": "other"}\n')), "texts.jsonl.gz"):
        SimilarityIndex.load(path, nlp)  # texts that are not the items' texts
    with broken(lambda file: file.write_text("{", encoding="utf8"), "manifest.json"):
        SimilarityIndex.load(path, nlp)
    index.save(path)
    srsly.write_json(path / "manifest.json", {"format": "spacy_siamese.vector_store.v2"})
    with pytest.raises(ValueError, match=f"{path}.*damaged or missing .*: build the index again"):
        SimilarityIndex.load(path, nlp)


def test_texts_are_saved_gzipped_and_an_index_saved_before_loads_its_plain_texts(models, tmp_path):
    nlp = models["cauchy"]
    SimilarityIndex.build(nlp, CORPUS, progress=False).save(tmp_path / "index")
    packed = (tmp_path / "index" / "texts.jsonl.gz").read_bytes()
    assert [json.loads(line)["text"] for line in gzip.decompress(packed).splitlines()] == CORPUS
    manifest = srsly.read_json(tmp_path / "index" / "manifest.json")
    (tmp_path / "index" / "texts.jsonl.gz").rename(tmp_path / "index" / "texts.jsonl")
    (tmp_path / "index" / "texts.jsonl").write_bytes(gzip.decompress(packed))
    del manifest["files"]["texts.jsonl.gz"]
    manifest["files"]["texts.jsonl"] = hashlib.sha256(gzip.decompress(packed)).hexdigest()
    srsly.write_json(tmp_path / "index" / "manifest.json", manifest)
    assert SimilarityIndex.load(tmp_path / "index", nlp).texts == CORPUS


def test_save_replaces_an_index_whole_and_never_a_directory_of_other_files(models, tmp_path):
    nlp = models["cauchy"]
    SimilarityIndex.build(nlp, CORPUS, progress=False).save(tmp_path / "index")
    SimilarityIndex.build(nlp, CORPUS[:5], progress=False).save(tmp_path / "index")
    assert len(SimilarityIndex.load(tmp_path / "index", nlp)) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    (tmp_path / "notes.txt").write_text("keep me", encoding="utf8")
    with pytest.raises(ValueError, match="not a vector store .*notes.txt"):
        SimilarityIndex.build(nlp, CORPUS[:5], progress=False).save(tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf8") == "keep me"


def test_vectors_of_another_width_or_not_finite_are_refused(models):
    nlp = models["cauchy"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    width = index.vectors.shape[1]
    nan = index.vectors[:3].copy()
    nan[1, 0] = numpy.nan
    with pytest.raises(ValueError, match=r"1 vectors are not finite \(NaN or inf\): rows 1"):
        index.add_vectors(nan)  # one NaN item hid every hit of a query with k = len(index)
    assert len(index) == len(CORPUS)
    with pytest.raises(ValueError, match="1 query vectors are not finite"):
        index.search_vectors(nan, 3)
    with pytest.raises(ValueError, match=rf"Expected query vectors of shape \(n, {width}\), got \(2, {width + 1}\)"):
        index.search_vectors(numpy.zeros((2, width + 1), dtype="f"), 3)
    for k in (-1, 0, 1.5, None, "3", True):
        with pytest.raises(ValueError, match=f"k: each k must be an integer of at least 1, got {k!r}"):
            index.search(QUERIES, k=k)  # before: k=0 gave no hits, None and 1.5 a TypeError


def test_k_is_clamped_to_the_index_before_allocating(models, monkeypatch):
    """k = 10**9 over a small index allocates (queries x len(index)), not (queries x k)."""
    nlp = models["cauchy"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    full = numpy.full
    shapes = []
    monkeypatch.setattr(numpy, "full", lambda shape, *a, **kw: shapes.append(shape) or full(shape, *a, **kw))
    hits = index.search(QUERIES, k=10**9)
    assert [len(row) for row in hits] == [len(CORPUS) if q else 0 for q in QUERIES]
    assert max(n for shape in shapes if isinstance(shape, tuple) for n in shape) <= len(CORPUS)


def test_index_refuses_changed_weights(models):
    nlp = train(make_nlp(), n_iter=2)[0]
    index = SimilarityIndex.build(nlp, CORPUS[:10], progress=False)
    pipe = nlp.get_pipe("siamese_similarity")
    pipe._set_model_id("changed")
    with pytest.raises(ValueError, match="weights changed"):
        index.search(QUERIES)


def test_bad_backend_and_inputs(models):
    nlp = models["cauchy"]
    with pytest.raises(ValueError, match="candidates must be one of auto, flat, ivf, hnsw, got 'annoy'"):
        SimilarityIndex.build(nlp, CORPUS, candidates="annoy", progress=False)
    with pytest.raises(TypeError, match="texts"):
        SimilarityIndex.build(nlp, [1, 2], progress=False)
    empty = SimilarityIndex.build(nlp, [], progress=False)
    assert len(empty) == 0 and empty.search(QUERIES, k=3) == [[]] * len(QUERIES)


def test_arrays_of_texts_are_texts_and_none_is_a_type_error(models):
    """Before: a numpy array of texts raised "truth value of an array is ambiguous", and None gave []."""
    nlp = models["cauchy"]
    index = SimilarityIndex.build(nlp, numpy.array(CORPUS), progress=False)
    assert index.texts == CORPUS and isinstance(index.texts[0], str)
    assert index.search(numpy.array(QUERIES), k=3) == index.search(QUERIES, k=3)
    assert index.add(numpy.array(CORPUS[:2]), progress=False) == [len(CORPUS), len(CORPUS) + 1]
    for call in (index.search, index.add):
        with pytest.raises(TypeError, match="texts .*not NoneType"):
            call(None)


def test_an_empty_or_blank_query_has_no_hits(models):
    """Before: the empty text's vector found k arbitrary items (the page returned none)."""
    index = SimilarityIndex.build(models["cauchy"], CORPUS, progress=False)
    hits = index.search(["", " \t\n", CORPUS[0]], k=3)
    assert hits[:2] == [[], []] and hits[2][0][0] == 0 and len(hits[2]) == 3


def test_n_process_two(models):
    nlp = models["cauchy"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False, n_process=2, batch_size=8)
    numpy.testing.assert_array_equal(index.vectors, SimilarityIndex.build(nlp, CORPUS, progress=False).vectors)


def test_a_search_maps_the_items_once_and_again_after_an_add(model, monkeypatch):
    """The items' vectors are mapped to the search space once, not at every search (a served index
    answers each query with the queries' own work); an add maps them again."""
    _, nlp = model
    index = SimilarityIndex.build(nlp, CORPUS[:30], progress=False)
    mapped = []
    transform = index.space.transform
    monkeypatch.setattr(index.space, "transform", lambda vectors: mapped.append(len(vectors)) or transform(vectors))
    first = index.search(QUERIES, k=3)
    mapped.clear()
    assert index.search(QUERIES, k=3) == first and sum(mapped) <= len(QUERIES)
    index.add([CORPUS[40]], progress=False)
    again = SimilarityIndex.build(nlp, CORPUS[:30] + [CORPUS[40]], progress=False)
    assert index.search(QUERIES + [CORPUS[40]], k=31) == again.search(QUERIES + [CORPUS[40]], k=31)


def test_sparse_queries_get_the_brute_force_hits(model):
    """Queries with few non-zero columns (as TWEAK's) are scored on those columns only: the same hits."""
    _, nlp = model
    pipe = nlp.get_pipe("siamese_similarity")
    index = SimilarityIndex.build(nlp, CORPUS, progress=False)
    queries = pipe.encode(QUERIES[:4])
    queries[:, 3:] = 0.0
    ids, scores = index.search_vectors(queries, k=5)
    full = vector_similarity_matrix(pipe.compare, queries, index.vectors)
    for row, row_ids, row_scores in zip(full, ids, scores):
        order = numpy.lexsort((numpy.arange(len(row)), -row.astype("float64")))[:5]
        assert row_ids.tolist() == order.tolist() and row_scores.tolist() == row[order].tolist()
