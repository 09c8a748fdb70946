"""The vector store: chunks written in place, a manifest, and runs that resume after kill -9."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy
import pytest
import spacy
import srsly

from spacy_siamese.search import (
    CorpusIndex,
    SimilarityIndex,
    VectorStore,
    encode_collection,
    find_duplicates,
    resumable,
)
from spacy_siamese.search.resumable import StoreWarning
from spacy_siamese.search.store import MANIFEST, write_store
from spacy_siamese.space import OTHER, VectorSpace

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


def test_a_listed_chunk_is_reused_and_an_unlisted_one_redone(models, tmp_path, monkeypatch):
    nlp = models["cauchy"]
    path = tmp_path / "store"
    store = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    expected = store.rows(range(len(CORPUS)))
    manifest = srsly.read_json(path / MANIFEST)
    manifest["done"] = [0, 2]  # as if killed after chunks 0 and 2
    srsly.write_json(path / MANIFEST, manifest)
    learned = numpy.load(path / "learned.npy", mmap_mode="r+")
    learned[10:20] = 7.0  # chunk 1 half-written: must be encoded again
    learned.flush()
    del learned
    encoded = []
    encode_chunk = resumable._encode_chunk
    monkeypatch.setattr(resumable, "_encode_chunk", lambda task: encoded.append(task[0]) or encode_chunk(task))
    resumed = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    assert encoded == [1, *range(3, (len(CORPUS) + 9) // 10)]
    numpy.testing.assert_array_equal(resumed.rows(range(len(CORPUS))), expected)


DAMAGES = ["flip learned", "truncate learned", "empty learned", "empty lexical", "bad manifest", "no lexical"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_file_is_named_with_the_fix(models, tmp_path, damage):
    """Flipped bytes, a truncated or empty learned.npy, an empty lexical-NNNNN.npz or a manifest
    that is not JSON: an error naming the file and the fix (before: 2,283 pairs instead of 2,526
    from flipped bytes, BadZipFile, 'mmap length is greater than file size', KeyError, and numpy's
    EOFError from an empty learned.npy, which the CLI printed as a bare "Aborted.")."""
    nlp = models["hybrid_cauchy"]
    path = tmp_path / "store"
    encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    learned, lexical, manifest = path / "learned.npy", path / "lexical-00003.npz", path / MANIFEST
    if damage == "flip learned":
        data = bytearray(learned.read_bytes())
        data[-7] ^= 0x10
        learned.write_bytes(bytes(data))
    elif damage == "truncate learned":
        learned.write_bytes(learned.read_bytes()[:-40])
    elif damage == "empty learned":
        learned.write_bytes(b"")
    elif damage == "empty lexical":
        lexical.write_bytes(b"")
    elif damage == "no lexical":
        lexical.unlink()
    else:
        manifest.write_text('{"format": ', encoding="utf8")
    name = {"learned": learned, "lexical": lexical, "manifest": manifest}[damage.split()[-1]]
    message = rf"{re.escape(str(name))} is damaged or missing \(.*\): delete {re.escape(str(path))} or pass --fresh"
    with pytest.raises(ValueError, match=message):
        VectorStore(path)
    with pytest.raises(ValueError, match=message):
        encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, progress=False)
    assert len(encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, fresh=True, progress=False)) == len(
        CORPUS
    )


def test_other_settings_start_a_new_store_with_a_warning(models, tmp_path):
    nlp = models["cauchy"]
    path = tmp_path / "store"
    encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, source={"name": "a"}, progress=False)
    with pytest.warns(StoreWarning, match=f"{re.escape(str(path))} holds vectors of other settings \\(n, source\\)"):
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
        write_store(tmp_path, numpy.zeros((3, 4), dtype="f"), model_id="m", space=VectorSpace(OTHER))
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
from spacy_siamese.search import resumable
encode = resumable._encode_chunk
def slow(task):
    time.sleep(0.3)
    return encode(task)
resumable._encode_chunk = slow
nlp = spacy.load(sys.argv[1])
texts = [line.rstrip("\\n") for line in open(sys.argv[2], encoding="utf8")]
resumable.encode_collection(nlp, texts, len(texts), sys.argv[3], chunk_size=4, progress=False)
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


@pytest.mark.parametrize("n_process", [1, 2])
def test_a_full_disk_ends_the_run_with_a_message_naming_the_file(models, tmp_path, monkeypatch, n_process):
    """ENOSPC while a chunk is written (mocked: fsync of learned.npy opened for update fails) is an
    OSError naming the file, in the parent and in forked workers alike (before: a hang with
    n_process > 1, "Bus error" with 1); no chunk is listed that was not written, and a rerun
    finishes the store."""
    import errno
    import fcntl

    nlp = models["hybrid_cauchy"]
    path = tmp_path / "store"
    fsync = os.fsync

    def full(fd):
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith("learned.npy") and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match=f"Could not write {re.escape(str(path / 'learned.npy'))}: No space left"):
        encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, n_process=n_process, progress=False)
    assert srsly.read_json(path / MANIFEST)["done"] == []
    monkeypatch.setattr(os, "fsync", fsync)
    store = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, n_process=n_process, progress=False)
    expected = numpy.vstack([doc.vector for doc in nlp.pipe(CORPUS)])
    numpy.testing.assert_allclose(store.rows(range(len(CORPUS))), expected, rtol=1e-5, atol=1e-6)


def test_a_worker_that_dies_ends_the_run_with_a_message_and_a_rerun_finishes(models, tmp_path, monkeypatch):
    """A worker killed mid-chunk (kill -9; the kernel's OOM killer) used to leave the run waiting for
    its chunk forever; it is a ChildProcessError (an OSError: the CLI prints it), its chunk is not
    listed, and a rerun finishes the store."""
    nlp = models["hybrid_cauchy"]
    path = tmp_path / "store"
    write_chunk = resumable.write_chunk

    def dies(path, key, i, full):
        if i == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return write_chunk(path, key, i, full)

    monkeypatch.setattr(resumable, "write_chunk", dies)
    with pytest.raises(ChildProcessError, match="An encoding process died .* Run again to resume"):
        encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, n_process=2, progress=False)
    assert 1 not in srsly.read_json(path / MANIFEST)["done"]
    monkeypatch.undo()
    store = encode_collection(nlp, CORPUS, len(CORPUS), path, chunk_size=10, n_process=2, progress=False)
    expected = numpy.vstack([doc.vector for doc in nlp.pipe(CORPUS)])
    numpy.testing.assert_allclose(store.rows(range(len(CORPUS))), expected, rtol=1e-5, atol=1e-6)


def test_a_saved_index_is_never_started_afresh_as_a_work_dir(models, tmp_path):
    """`dedupe --work-dir IDX` (or --fresh) used to replace the user's index (texts, ids) with a bare
    store, exit 0 with a warning; the index is refused and kept."""
    nlp = models["cauchy"]
    SimilarityIndex.build(nlp, CORPUS[:9], progress=False).save(tmp_path / "idx", ids=list(range(9)))
    before = sorted(p.name for p in (tmp_path / "idx").iterdir())
    for fresh in (False, True):
        with pytest.raises(ValueError, match="idx is a saved index, not a work dir"):
            encode_collection(nlp, CORPUS, len(CORPUS), tmp_path / "idx", fresh=fresh, progress=False)
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == before
    assert len(SimilarityIndex.load(tmp_path / "idx", nlp)) == 9
