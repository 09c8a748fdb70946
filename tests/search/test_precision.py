"""Compact stored vectors: float16, int8 and binary rows, truncated to dims, and exact rescoring."""

import numpy
import pytest
import srsly

from spacy_siamese.search import SimilarityIndex, VectorStore, encode_collection, find_duplicates
from spacy_siamese.search.precision import PRECISIONS, dequantize, layout, quantize
from spacy_siamese.search.store import MANIFEST

from .conftest import CORPUS

BYTES_A_ROW = {"float32": 4 * 32, "float16": 2 * 32, "int8": 4 + 32, "binary": 4 + 4}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("dims", [40, 32, 13])
def test_rows_round_trip_within_the_precision(precision, dims):
    learned = numpy.random.default_rng(0).normal(size=(50, 40)).astype("float32")
    rows = quantize(learned, precision, dims)
    dtype, tail = layout(precision, dims)
    assert rows.dtype == dtype and rows.shape == (50, *tail)
    back = dequantize(rows, precision, dims, 40)
    assert back.shape == (50, 40) and back.dtype == numpy.float32
    assert not back[:, dims:].any()  # truncated columns read as zeros
    error = numpy.abs(back[:, :dims] - learned[:, :dims])
    if precision == "float32":
        assert error.max() == 0
    elif precision == "float16":
        assert error.max() <= 1e-3 * numpy.abs(learned).max()
    elif precision == "int8":  # half a step of the row's scale
        assert (error <= numpy.abs(learned[:, :dims]).max(axis=1, keepdims=True) / 254 + 1e-6).all()
    else:  # the signs are kept, the magnitude is the row's mean
        assert (numpy.sign(back[:, :dims]) == numpy.sign(learned[:, :dims])).all()
        numpy.testing.assert_allclose(
            numpy.abs(back[:, :dims]).mean(axis=1), numpy.abs(learned[:, :dims]).mean(axis=1), rtol=1e-6
        )


@pytest.mark.parametrize("precision", PRECISIONS)
def test_a_store_reads_back_its_precision(models, tmp_path, precision):
    nlp = models["hybrid_cauchy"]
    full = numpy.vstack([doc.vector for doc in nlp.pipe(CORPUS)])
    learned_width = full.shape[1] - 64
    store = encode_collection(
        nlp, CORPUS, len(CORPUS), tmp_path / "s", chunk_size=9, progress=False, precision=precision
    )
    rows = store.rows(numpy.arange(len(CORPUS)))
    expected = dequantize(
        quantize(full[:, :learned_width], precision, learned_width), precision, learned_width, learned_width
    )
    numpy.testing.assert_array_equal(rows[:, :learned_width], expected)
    numpy.testing.assert_array_equal(rows[:, learned_width:], full[:, learned_width:])  # lexical: whole and exact
    assert store.exact == (precision == "float32")
    manifest = srsly.read_json(tmp_path / "s" / MANIFEST)
    assert (manifest["precision"], manifest["dims"]) == (precision, learned_width)
    if precision != "float32":
        assert (tmp_path / "s" / "learned.npy").stat().st_size < 0.6 * len(CORPUS) * 4 * learned_width


def test_dims_truncates_the_learned_columns_only(models, tmp_path):
    nlp = models["hybrid_cauchy"]
    full = numpy.vstack([doc.vector for doc in nlp.pipe(CORPUS)])
    store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "s", progress=False, dims=5)
    rows = store.rows(numpy.arange(len(CORPUS)))
    numpy.testing.assert_array_equal(rows[:, :5], full[:, :5])
    assert not rows[:, 5:-64].any() and not store.exact
    numpy.testing.assert_array_equal(rows[:, -64:], full[:, -64:])


@pytest.mark.parametrize("field,value", [("precision", "int4"), ("precision", None), ("dims", 0), ("dims", "all")])
def test_an_unknown_precision_in_the_manifest_is_a_clear_error(models, tmp_path, field, value):
    path = tmp_path / "s"
    encode_collection(models["cauchy"], CORPUS, len(CORPUS), path, progress=False, precision="int8")
    manifest = srsly.read_json(path / MANIFEST)
    manifest[field] = value
    srsly.write_json(path / MANIFEST, manifest)
    with pytest.raises(ValueError, match=f"{MANIFEST} records vectors this version cannot read .*{field}"):
        VectorStore(path)


def test_bad_precision_or_dims_are_refused_before_encoding(models, tmp_path):
    for settings, match in [({"precision": "int4"}, "precision must be one of"), ({"dims": 10**6}, "dims must be")]:
        with pytest.raises(ValueError, match=match):
            find_duplicates(models["cauchy"], CORPUS, threshold=0.5, progress=False, **settings)
        assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("name", ["cauchy", "cosine", "hybrid_cauchy"])
@pytest.mark.parametrize("precision", ["float16", "int8", "binary"])
def test_compact_pairs_are_rescored_to_doc_similarity(models, name, precision):
    nlp = models[name]
    docs = list(nlp.pipe(CORPUS))
    threshold = 0.6
    exact = find_duplicates(nlp, CORPUS, threshold=threshold, k=5, candidates="flat", progress=False)
    compact = find_duplicates(
        nlp, CORPUS, threshold=threshold, k=5, candidates="flat", progress=False, precision=precision
    )
    for i, j, score in compact:
        assert score == pytest.approx(docs[i].similarity(docs[j]), abs=1e-6) and score >= threshold
    found = {(i, j) for i, j, _ in compact}
    recall = len(found & {(i, j) for i, j, _ in exact}) / max(1, len(exact))
    assert recall >= {"float16": 0.99, "int8": 0.97, "binary": 0.5}[precision], recall  # 64 bits a text here


@pytest.mark.parametrize("precision,dims", [("int8", None), ("binary", None), ("float16", 20)])
def test_a_compact_index_saves_small_and_its_search_scores_are_doc_similarity(models, tmp_path, precision, dims):
    nlp = models["hybrid_cauchy"]
    index = SimilarityIndex.build(nlp, CORPUS, progress=False, precision=precision, dims=dims)
    exact = SimilarityIndex.build(nlp, CORPUS, progress=False)
    index.save(tmp_path / "compact")
    exact.save(tmp_path / "exact")
    loaded = SimilarityIndex.load(tmp_path / "compact", nlp)
    assert (loaded.precision, loaded.exact) == (precision, False)
    numpy.testing.assert_array_equal(loaded.vectors, index.vectors)
    size = (tmp_path / "compact" / "learned.npy").stat().st_size
    assert size < 0.6 * (tmp_path / "exact" / "learned.npy").stat().st_size
    queries = CORPUS[:12]
    docs = {t: nlp(t) for t in CORPUS}
    for q, hits in zip(queries, loaded.search(queries, k=5)):
        assert len(hits) == 5
        for i, score in hits:
            assert score == pytest.approx(docs[q].similarity(docs[CORPUS[i]]), abs=1e-6)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_a_compact_index_keeps_its_texts(models):
    with pytest.raises(ValueError, match="keeps its texts to rescore"):
        SimilarityIndex.build(models["cauchy"], CORPUS, progress=False, precision="int8", store_texts=False)


def test_a_compact_work_dir_keeps_no_float16_cache(models, tmp_path):
    """The compact candidates' cache (float16 PCA vectors, 264 bytes a text) would outweigh int8 rows."""
    nlp = models["cauchy"]
    for precision in ("float32", "int8"):
        find_duplicates(nlp, CORPUS, threshold=0.6, work_dir=tmp_path / precision, progress=False, precision=precision)
    assert any(p.name.startswith("compact-") for p in (tmp_path / "float32").iterdir())
    assert not any(p.name.startswith("compact-") for p in (tmp_path / "int8").iterdir())
