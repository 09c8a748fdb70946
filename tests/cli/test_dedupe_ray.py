"""`python -m spacy_siamese dedupe-ray`: the Ray Data engine from the command line."""

import sys

import pytest
import spacy
import srsly

from spacy_siamese import find_duplicates

from ..search.conftest import CORPUS
from .conftest import INPUT_ERRORS, invoke, read_jsonl


def test_without_ray_names_the_extra(collection, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    monkeypatch.setitem(sys.modules, "ray.data", None)
    result = invoke(
        "dedupe-ray", collection / "model", collection / "texts.jsonl", "--vectors-output", tmp_path / "vectors",
        "--output", tmp_path / "pairs.jsonl",
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0, result.output  # one line
    assert "pip install 'spacy-siamese[ray]'" in result.output and "Traceback" not in result.output


def test_missing_input_is_a_message(collection, tmp_path):
    result = invoke(
        "dedupe-ray",
        collection / "model",
        tmp_path / "missing.jsonl",
        "--vectors-output",
        tmp_path / "v",
        "-o",
        tmp_path / "o",
    )
    assert result.exit_code == 1 and "File not found" in result.output


@pytest.mark.parametrize(
    "input,message",
    [
        *[case for case in INPUT_ERRORS if case[0].endswith(".jsonl")],
        ("{tmp}/noids.jsonl", "noids.jsonl: no 'id' field: dedupe-ray keys the pairs by the records' ids"),
        ("{tmp}/latin1.jsonl", "latin1.jsonl:2: invalid UTF-8"),
    ],
)
def test_input_errors_are_reported_before_ray_starts(collection, tmp_path, monkeypatch, input, message):
    pytest.importorskip("ray.data")
    import ray

    srsly.write_jsonl(tmp_path / "noids.jsonl", [{"text": t} for t in ["a", "b"]])
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": 1, "text": "a"}\n{"id": 2, "text": "caf\xe9"}\n')
    monkeypatch.setattr(ray, "init", lambda *a, **kw: pytest.fail("Ray started"))
    path = input.format(tmp=tmp_path) if input.startswith("{tmp}") else collection / input
    result = invoke("dedupe-ray", collection / "model", path, "--vectors-output", tmp_path / "v", "-o", tmp_path / "o")
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_ray_dedupe_equals_single_process(search_models, tmp_path):
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    nlp = search_models["cauchy"]
    nlp.to_disk(tmp_path / "model")
    texts = CORPUS * 2  # exact duplicates across the two halves
    srsly.write_jsonl(tmp_path / "texts.jsonl", [{"id": i, "text": t} for i, t in enumerate(texts)][::-1])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        result = invoke(
            "dedupe-ray", tmp_path / "model", tmp_path / "texts.jsonl", "--vectors-output", tmp_path / "vectors",
            "--output", tmp_path / "pairs.jsonl", "-k", 3, "--threshold", 0.5, "--workers", 2,
            "--stats-json", tmp_path / "stats.json",
        )  # fmt: skip
    finally:
        ray.shutdown()
    assert result.exit_code == 0, result.output
    assert list((tmp_path / "vectors").glob("*.parquet"))
    rows = read_jsonl(tmp_path / "pairs.jsonl")
    expected = find_duplicates(nlp, texts, k=3, threshold=0.5, progress=False)
    assert [(r["id1"], r["id2"], r["score"]) for r in rows] == expected and rows
    assert f"Wrote {len(rows)} duplicate pairs" in result.output
    stats = srsly.read_json(tmp_path / "stats.json")
    assert list(stats["stages_s"]) == ["start", "encode", "collect", "index", "search"]
    assert stats["n_pairs"] == len(rows) and stats["settings"]["workers"] == 2


@pytest.mark.parametrize(
    "options,message",
    [
        (
            ["--vectors-output", "{tmp}/file"],
            "--vectors-output {tmp}/file is a file, not a directory for the Parquet vectors",
        ),
        (
            ["--vectors-output", "{tmp}/nothing"],
            "--vectors-output {tmp}/nothing holds other files than the Parquet vectors",
        ),
        (["-t", "2"], "The dedupe threshold 2 is outside the range of the pipe's scores, [0, 1]"),
        (["--candidates", "exact"], "candidates must be one of auto, flat, ivf, hnsw, got 'exact'"),
        (["--input", "{tmp}/nothing"], "{tmp}/nothing: no .jsonl, .ndjson or .json files"),
        (["--input", "{tmp}/nested"], "{tmp}/nested: no .jsonl, .ndjson or .json files (plain or compressed) in the"),
    ],
)
def test_settings_errors_are_reported_before_ray_starts(collection, tmp_path, monkeypatch, options, message):
    """A bad --vectors-output, threshold or --candidates, or a directory without JSONL files, stops the
    command before Ray encodes the collection (it did after, or failed in a task naming the input).
    Files in subdirectories are not read (Ray read them, unchecked)."""
    pytest.importorskip("ray.data")
    import ray

    (tmp_path / "file").write_text("x\n", encoding="utf8")
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "notes.txt").write_text('{"id": 1, "text": "a"}\n', encoding="utf8")
    (tmp_path / "nested" / "part").mkdir(parents=True)
    (tmp_path / "nested" / "part" / "a.jsonl").write_text('{"id": 1, "text": "a"}\n', encoding="utf8")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda *a, **kw: pytest.fail("Ray started"))
    options = [str(o).format(tmp=tmp_path) for o in options]
    if options[0] == "--input":
        input, options = options[1], options[2:]
    else:
        input = collection / "texts.jsonl"
    if "--vectors-output" not in options:
        options += ["--vectors-output", tmp_path / "v"]
    result = invoke("dedupe-ray", collection / "model", input, "-o", tmp_path / "o", *options)
    assert result.exit_code == 1, result.output
    assert message.format(tmp=tmp_path) in result.output and "Traceback" not in result.output


def test_workers_below_one_is_a_usage_error(collection, tmp_path):
    result = invoke(
        "dedupe-ray", collection / "model", collection / "texts.jsonl", "--vectors-output", tmp_path / "v",
        "-o", tmp_path / "o", "--workers", 0,
    )  # fmt: skip
    assert result.exit_code == 2 and "must be at least 1, got 0" in result.output


def test_stats_record_the_threshold_used(collection, tmp_path, monkeypatch):
    """Without --threshold, the pipe's own threshold is passed on and recorded (it recorded null),
    and the missing dedupe threshold is a Warning line, as in `dedupe`."""
    from spacy_siamese import distributed  # the command imports dedupe_jsonl when it runs

    used = {}

    def fake_dedupe_jsonl(model, input, vectors, *, threshold, stages, **kwargs):
        used["threshold"] = threshold
        stages["encode"] = 0.0
        return []

    monkeypatch.setattr(distributed, "dedupe_jsonl", fake_dedupe_jsonl)
    result = invoke(
        "dedupe-ray", collection / "model", collection / "texts.jsonl", "--vectors-output", tmp_path / "v",
        "-o", tmp_path / "o.jsonl", "--stats-json", tmp_path / "stats.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    pipe = spacy.load(collection / "model").get_pipe("siamese_similarity")
    expected = pipe.threshold if pipe.dedupe_threshold is None else pipe.dedupe_threshold
    assert used["threshold"] == expected == srsly.read_json(tmp_path / "stats.json")["settings"]["threshold"]
    assert ("Warning: " in result.output) == (pipe.dedupe_threshold is None)


def test_outputs_that_are_inputs_are_refused_before_ray_starts(collection, tmp_path, monkeypatch):
    pytest.importorskip("ray.data")
    import ray

    monkeypatch.setattr(ray, "init", lambda *a, **kw: pytest.fail("Ray started"))
    texts = tmp_path / "texts.jsonl"
    texts.write_bytes((collection / "texts.jsonl").read_bytes())
    for options, message in (
        (["-o", texts, "--vectors-output", tmp_path / "v"], "is also an input"),
        (["-o", tmp_path / "p.jsonl", "--vectors-output", tmp_path], "would replace the input"),
        (["-o", tmp_path / "p.jsonl", "--vectors-output", tmp_path / "v", "--stats-json", tmp_path / "p.jsonl"], "Two"),
    ):
        result = invoke("dedupe-ray", collection / "model", texts, *options)
        assert result.exit_code == 1 and message in result.output, result.output
    assert texts.read_bytes() == (collection / "texts.jsonl").read_bytes()
