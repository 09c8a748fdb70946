"""`python -m spacy_siamese dedupe`."""

import json
import os
import re
import sys
import types

import pytest
import spacy

from spacy_siamese import cluster_duplicates, find_duplicates
from spacy_siamese.search import resumable

from .conftest import INPUT_ERRORS, TEXTS, invoke, read_jsonl


def test_dedupe_pairs_and_groups(collection, tmp_path):
    nlp = spacy.load(collection / "model")
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.jsonl", "--output", out, "--threshold", 0.6, "-k", 5]
    result = invoke(*args, "--stats-json", tmp_path / "stats.json")
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    expected = find_duplicates(nlp, TEXTS, threshold=0.6, k=5, progress=False)
    assert rows and [(r["id1"], r["id2"], r["score"]) for r in rows] == [(f"q{i}", f"q{j}", s) for i, j, s in expected]
    assert all(r["text1"] == TEXTS[int(r["id1"][1:])] and r["text2"] == TEXTS[int(r["id2"][1:])] for r in rows)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["n_pairs"] == len(rows) and set(stats["stages_s"]) >= {"encode", "index", "search", "pairs"}
    assert stats["n_scored"] >= stats["n_pairs"]
    out = tmp_path / "p.jsonl"
    result = invoke(
        "dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6, "--groups", tmp_path / "g.jsonl"
    )
    assert result.exit_code == 0, result.output
    groups = read_jsonl(tmp_path / "g.jsonl")
    expected_groups = cluster_duplicates(nlp, TEXTS, threshold=0.6, progress=False)
    assert groups and [[m["id"] for m in g["members"]] for g in groups] == expected_groups  # ids are positions


def test_blank_lines_are_reported_and_ids_stay_positions(collection, tmp_path):
    texts = (collection / "texts.txt").read_text(encoding="utf8").splitlines()
    path = tmp_path / "gaps.txt"
    path.write_text("\n".join(texts[:3] + ["", "  "] + texts[3:]) + "\n", encoding="utf8")
    out = tmp_path / "pairs.jsonl"
    result = invoke("dedupe", collection / "model", path, "-o", out, "-t", 0.6)
    assert result.exit_code == 0, result.output
    assert "Skipped 2 blank line(s)" in result.output and "line 4, 5" in result.output
    plain = tmp_path / "plain.jsonl"
    assert invoke("dedupe", collection / "model", collection / "texts.txt", "-o", plain, "-t", 0.6).exit_code == 0
    assert read_jsonl(out) == read_jsonl(plain)


def test_duplicate_ids_are_an_error(collection, tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": 1, "text": "a b"}\n{"id": 1, "text": "c d"}\n', encoding="utf8")
    result = invoke("dedupe", collection / "model", path, "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 1 and "dup.jsonl:2: id 1 was already used on line 1" in result.output


def test_a_rerun_resumes_the_work_dir(collection, tmp_path, monkeypatch):
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6, "--chunk-size", 8]
    args += ["--keep-work-dir"]
    assert invoke(*args).exit_code == 0
    path = tmp_path / "pairs.jsonl.work" / "manifest.json"
    manifest = json.loads(path.read_text())
    n_chunks = len(manifest["done"])
    assert manifest["done"] == list(range(n_chunks)) and n_chunks > 1
    first = read_jsonl(out)
    assert first
    encoded = []
    encode_chunk = resumable._encode_chunk
    monkeypatch.setattr(resumable, "_encode_chunk", lambda task: encoded.append(task[0]) or encode_chunk(task))
    rerun = [*args, "--n-process", 1]  # in this process: the chunks it encodes are seen
    assert invoke(*rerun).exit_code == 0 and read_jsonl(out) == first
    assert encoded == []  # a finished store: nothing encoded again
    manifest["done"] = manifest["done"][:-1]  # as if stopped before the last chunk
    path.write_text(json.dumps(manifest))
    result = invoke(*rerun)
    assert result.exit_code == 0, result.output
    assert encoded == [n_chunks - 1] and read_jsonl(out) == first  # only the chunk not listed as done


def test_a_finished_run_removes_its_work_dir_unless_kept(collection, tmp_path):
    """Before: a finished run left OUTPUT.work (62 MB for a large collection) behind."""
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6]
    assert invoke(*args).exit_code == 0 and read_jsonl(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]
    assert invoke(*args, "--keep-work-dir").exit_code == 0
    assert (tmp_path / "pairs.jsonl.work" / "manifest.json").exists()
    assert invoke(*args, "--work-dir", tmp_path / "store").exit_code == 0  # a work dir named is kept
    assert (tmp_path / "store" / "manifest.json").exists()


def test_dedupe_ivf_candidates(collection, tmp_path):
    pytest.importorskip("faiss")
    nlp = spacy.load(collection / "model")
    out = tmp_path / "pairs.jsonl"
    result = invoke(
        "dedupe",
        collection / "model",
        collection / "texts.txt",
        "-o",
        out,
        "--candidates",
        "ivf",
        "-t",
        0.6,
        "--n-candidates",
        100,
    )
    assert result.exit_code == 0, result.output
    expected = find_duplicates(nlp, TEXTS, threshold=0.6, progress=False)
    assert [(r["id1"], r["id2"], r["score"]) for r in read_jsonl(out)] == expected


def test_dedupe_without_faiss_names_the_extra(collection, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` raises ImportError
    out = tmp_path / "pairs.jsonl"
    result = invoke(
        "dedupe", collection / "model", collection / "texts.txt", "-o", out, "--candidates", "ivf", "-t", 0.5
    )
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0, result.output  # one line
    assert "pip install 'spacy-siamese[ann]'" in result.output and "Traceback" not in result.output


def test_backend_help_shows_the_extra():
    result = invoke("dedupe", "--help")
    assert result.exit_code == 0
    assert "pip install 'spacy-siamese[ann]'" in re.sub(r"[\s│]+", " ", result.output)


@pytest.mark.parametrize("input,message", INPUT_ERRORS)
def test_input_errors(collection, tmp_path, input, message):
    result = invoke("dedupe", collection / "model", collection / input, "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_model_without_pipe(collection, tmp_path):
    result = invoke("dedupe", collection / "blank", collection / "texts.txt", "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 1
    assert "no 'siamese_similarity' component" in result.output


def test_a_threshold_outside_the_score_range_is_an_error(collection, tmp_path):
    """A Cauchy pipe scores in (0, 1]: 85 (a percentage) would find nothing, -1 everything."""
    for threshold in (85, -1):
        result = invoke(
            "dedupe", collection / "model", collection / "texts.txt", "-o", tmp_path / "p.jsonl", "-t", threshold
        )
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert f"threshold {float(threshold):g} is outside the range of the pipe's scores, [0, 1]" in result.output
    assert not (tmp_path / "p.jsonl").exists() and not (tmp_path / "p.jsonl.work").exists()


@pytest.mark.parametrize("k", [0, -1])
def test_k_must_be_positive(collection, tmp_path, k):
    result = invoke("dedupe", collection / "model", collection / "texts.txt", "-o", tmp_path / "p.jsonl", "-k", k)
    assert result.exit_code == 2 and "Invalid value for '--top-k' / '-k'" in result.output, result.output


def test_threshold_help_names_the_dedupe_threshold():
    for command in ("dedupe", "dedupe-ray"):
        result = invoke(command, "--help")
        assert result.exit_code == 0
        assert "default: the pipe's dedupe threshold, not its pair threshold" in re.sub(r"[\s│]+", " ", result.output)


def test_n_process_minus_one_is_every_core_as_in_encode(collection, tmp_path):
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", tmp_path / "pairs.jsonl", "-t", 0.6]
    result = invoke(*args, "--n-process", -1)
    assert result.exit_code == 0, result.output
    for value in (-2, 0):  # 0 was every core here and an error in encode and index
        result = invoke(*args, "--n-process", value)
        assert result.exit_code == 2 and "Invalid value for '--n-process'" in result.output, result.output


def test_outputs_that_are_inputs_are_refused_before_any_work(collection, tmp_path):
    """Before: `dedupe M q.jsonl -o q.jsonl` cut a 3,000-line input to 14 pairs, and --groups equal
    to the input or to -o did the same."""
    texts = tmp_path / "q.jsonl"
    texts.write_bytes((collection / "texts.jsonl").read_bytes())
    before = texts.read_bytes()
    out = tmp_path / "pairs.jsonl"
    for extra, message in (
        (["-o", texts], "is also an input"),
        (["-o", out, "--groups", texts], "is also an input"),
        (["-o", out, "--groups", out], "Two outputs are the same file"),
        (["-o", out, "--work-dir", tmp_path], "would replace the input"),
    ):
        result = invoke("dedupe", collection / "model", texts, *extra, "-t", 0.6)
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output, result.output
    assert texts.read_bytes() == before and not out.exists() and not (tmp_path / "pairs.jsonl.work").exists()


def test_the_pairs_file_is_never_left_half_written(collection, tmp_path, monkeypatch):
    """A run that fails while writing the pairs (a kill, a full disk) leaves the earlier file at the
    output path, not a part of the new one that looks complete."""
    files_module = sys.modules["spacy_siamese.files"]

    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6]
    assert invoke(*args).exit_code == 0
    before = out.read_bytes()
    dumps = files_module.json.dumps
    calls = []

    def full_disk(row, **kwargs):
        calls.append(row)
        if len(calls) > 3:
            raise OSError(28, "No space left on device")
        return dumps(row, **kwargs)

    monkeypatch.setattr(files_module, "json", types.SimpleNamespace(dumps=full_disk))
    result = invoke(*args, "-t", 0.5)
    assert result.exit_code == 1 and f"Could not write {out}: No space left on device" in result.output, result.output
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "pairs.jsonl",
        "pairs.jsonl.work",
    ]


def test_a_resumed_work_dir_of_other_settings_starts_afresh(collection, tmp_path):
    """Before: a JSONL file named .txt run as text, then with --format jsonl, reused the vectors of
    the raw JSON lines; a same-size edit with the modification time kept reused a stale store."""
    path = tmp_path / "texts.txt"
    path.write_bytes((collection / "texts.jsonl").read_bytes())
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", path, "-o", out, "-t", 0.9, "-k", 3, "--keep-work-dir"]
    assert invoke(*args).exit_code == 0
    result = invoke(*args, "--format", "jsonl")
    assert result.exit_code == 0, result.output
    assert "holds vectors of other settings (source): starting afresh" in result.output
    fresh = tmp_path / "fresh.jsonl"
    assert (
        invoke("dedupe", collection / "model", collection / "texts.jsonl", "-o", fresh, "-t", 0.9, "-k", 3).exit_code
        == 0
    )
    assert read_jsonl(out) == read_jsonl(fresh)
    # a same-size edit that keeps the modification time: "Python" -> "Pascal" in every line
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Python", b"Pascal"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    result = invoke(*args, "--format", "jsonl")
    assert result.exit_code == 0 and "starting afresh" in result.output, result.output
    assert all("Python" not in r["text1"] for r in read_jsonl(out))


@pytest.mark.parametrize("learned", ["truncated", "empty"])
def test_a_damaged_work_dir_is_named_with_the_fix(collection, tmp_path, learned):
    """Before: an empty learned.npy printed a bare "Aborted." (numpy's EOFError)."""
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6, "--chunk-size", 8]
    args += ["--keep-work-dir"]
    assert invoke(*args).exit_code == 0
    first = read_jsonl(out)
    work = tmp_path / "pairs.jsonl.work"
    (work / "learned.npy").write_bytes((work / "learned.npy").read_bytes()[:-100] if learned == "truncated" else b"")
    result = invoke(*args)
    assert result.exit_code == 1 and "Traceback" not in result.output and "Aborted" not in result.output, result.output
    assert f"{work / 'learned.npy'} is damaged or missing" in result.output
    assert f"delete {work} or pass --fresh" in result.output
    (work / "manifest.json").write_text("{", encoding="utf8")
    result = invoke(*args)
    assert result.exit_code == 1 and f"{work / 'manifest.json'} is damaged or missing" in result.output
    result = invoke(*args, "--fresh")
    assert result.exit_code == 0, result.output
    assert read_jsonl(out) == first


@pytest.mark.parametrize("n_process", [1, 2])
def test_a_full_disk_while_encoding_is_a_message_naming_the_file(collection, tmp_path, monkeypatch, n_process):
    """Before: with the default --n-process the run hung, with --n-process 1 it died of "Bus error"."""
    import errno
    import fcntl

    fsync = os.fsync

    def full(fd):  # fsync of learned.npy opened to write a chunk's rows
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith("learned.npy") and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return fsync(fd)

    monkeypatch.setattr(os, "fsync", full)  # in this process and in the forked workers
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.txt", "-o", out, "-t", 0.6, "--chunk-size", 8]
    result = invoke(*args, "--n-process", n_process)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"Could not write {tmp_path / 'pairs.jsonl.work' / 'learned.npy'}: No space left on device" in result.output
    assert not out.exists()
