"""The vector store: chunks written in place, a manifest, and runs that resume after kill -9."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy
import pytest
import spacy
import srsly

from spacy_siamese.search import CorpusIndex, VectorStore, encode_collection, find_duplicates
from spacy_siamese.search.store import MANIFEST, write_store

from .conftest import CORPUS


def test_rows_are_the_docs_vectors(models, tmp_path):
    for name in ("cauchy", "hybrid_cauchy"):
        nlp = models[name]
        store = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / name, chunk_size=9, progress=False)
        expected = numpy.vstack([doc.vector for doc in nlp.pipe(CORPUS)])
        numpy.testing.assert_array_equal(store.rows(numpy.arange(len(CORPUS))), expected)
        assert len(store) == len(CORPUS) and store.complete
        if name.startswith("hybrid"):
            assert store.lexical is not None and store.lexical.nnz < store.lexical.shape[0] * store.lexical.shape[1] / 2


def test_docs_and_two_processes_give_the_same_store(models, tmp_path):
    nlp = models["cauchy"]
    one = encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "one", chunk_size=8, progress=False)
    items = [nlp(t) if i % 3 == 0 else t for i, t in enumerate(CORPUS)]
    two = encode_collection(nlp, items, len(items), tmp_path / "two", chunk_size=8, n_process=2, progress=False)
    numpy.testing.assert_allclose(one.rows(range(len(CORPUS))), two.rows(range(len(CORPUS))), rtol=1e-5, atol=1e-6)


def test_a_listed_chunk_is_reused_and_an_unlisted_one_redone(models, tmp_path):
    nlp = models["cauchy"]
    path = tmp_path / "store"
    store = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    expected = store.rows(range(len(CORPUS)))
    manifest = srsly.read_json(path / MANIFEST)
    manifest["done"] = [0, 2]  # as if killed after chunks 0 and 2
    srsly.write_json(path / MANIFEST, manifest)
    learned = numpy.load(path / "learned.npy", mmap_mode="r+")
    learned[10:20] = 7.0  # chunk 1 half-written: must be encoded again
    learned[0:10] = 5.0  # chunk 0 is listed: reused as it is (proves no re-encoding)
    learned.flush()
    del learned
    resumed = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    rows = resumed.rows(range(len(CORPUS)))
    assert (rows[0:10] == 5.0).all()
    numpy.testing.assert_array_equal(rows[10:], expected[10:])


def test_other_settings_start_a_new_store(models, tmp_path):
    nlp = models["cauchy"]
    path = tmp_path / "store"
    encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, source={"name": "a"}, progress=False)
    store = encode_collection(nlp, CORPUS[:7], 7, path, chunk_size=10, source={"name": "b"}, progress=False)
    assert len(store) == 7 and store.manifest["source"] == {"name": "b"}


def test_a_directory_that_is_not_a_store_is_never_deleted(models, tmp_path):
    """A work dir that holds the user's files is refused, not replaced by a store."""
    nlp = models["cauchy"]
    (tmp_path / "notes.txt").write_text("keep me", encoding="utf8")
    with pytest.raises(ValueError, match="not a vector store .*notes.txt"):
        encode_collection(nlp, CORPUS, len(CORPUS), tmp_path, chunk_size=10, progress=False)
    with pytest.raises(ValueError, match="not a vector store .*notes.txt"):
        find_duplicates(nlp, CORPUS, threshold=0.5, work_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="not a vector store .*notes.txt"):
        write_store(tmp_path, numpy.zeros((3, 4), dtype="f"), model_id="m")
    assert (tmp_path / "notes.txt").read_text(encoding="utf8") == "keep me"
    with pytest.raises(ValueError, match="not a directory"):
        encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "notes.txt", progress=False)
    # an empty directory, or a store of other settings, is used
    (tmp_path / "empty").mkdir()
    assert len(encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "empty", progress=False)) == len(CORPUS)
    assert len(encode_collection(nlp, CORPUS[:5], 5, tmp_path / "empty", progress=False)) == 5


def test_an_incomplete_store_does_not_open(models, tmp_path):
    nlp = models["cauchy"]
    path = tmp_path / "store"
    encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    manifest = srsly.read_json(path / MANIFEST)
    manifest["done"] = [0]
    srsly.write_json(path / MANIFEST, manifest)
    with pytest.raises(ValueError, match="not complete"):
        VectorStore(path)
    with pytest.raises(ValueError, match="not a vector store"):
        VectorStore(tmp_path)


CHILD = """
import sys, time, spacy
from spacy_siamese.search import store
encode = store._encode_chunk
def slow(task):
    time.sleep(0.3)
    return encode(task)
store._encode_chunk = slow
nlp = spacy.load(sys.argv[1])
texts = [line.rstrip("\\n") for line in open(sys.argv[2], encoding="utf8")]
store.encode_collection(nlp, texts, len(texts), sys.argv[3], chunk_size=4, progress=False)
print("finished")
"""


@pytest.mark.slow
def test_kill_9_and_resume_gives_the_same_pairs(models, tmp_path):
    nlp = models["hybrid_cauchy"]
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "texts.txt").write_text("\n".join(CORPUS) + "\n", encoding="utf8")
    (tmp_path / "child.py").write_text(textwrap.dedent(CHILD), encoding="utf8")
    path = tmp_path / "store"
    args = [sys.executable, str(tmp_path / "child.py"), str(tmp_path / "model"), str(tmp_path / "texts.txt"), str(path)]
    child = subprocess.Popen(args, stdout=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:
        if (path / MANIFEST).exists() and len(json.loads((path / MANIFEST).read_text())["done"]) >= 3:
            break
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done = json.loads((path / MANIFEST).read_text())["done"]
    assert 3 <= len(done) < (len(CORPUS) + 3) // 4, "the child was killed part way"
    resumed_nlp = spacy.load(tmp_path / "model")
    resumed = encode_collection(resumed_nlp, CORPUS, len(CORPUS), path, chunk_size=4, progress=False)
    fresh = encode_collection(resumed_nlp, CORPUS, len(CORPUS), tmp_path / "fresh", chunk_size=4, progress=False)
    numpy.testing.assert_array_equal(resumed.rows(range(len(CORPUS))), fresh.rows(range(len(CORPUS))))
    scores = resumed_nlp.get_pipe("siamese_similarity").similarity_matrix(list(resumed_nlp.pipe(CORPUS)))
    threshold = float(numpy.median(scores))
    pairs = CorpusIndex(resumed_nlp, resumed).duplicates(threshold)
    assert pairs and pairs == CorpusIndex(resumed_nlp, fresh).duplicates(threshold)
