"""`encode`, `index` and `dedupe` with --precision and --dims."""

import numpy
import pytest
import spacy
import srsly

from spacy_siamese.search.precision import dequantize, load_vectors, quantize

from .conftest import TEXTS, invoke, read_jsonl


@pytest.mark.parametrize("precision,dims", [("int8", None), ("binary", 20), ("float16", None)])
def test_encode_writes_compact_vectors_that_read_back(collection, tmp_path, precision, dims):
    out = tmp_path / "v.npy"
    args = ["--precision", precision] + (["--dims", dims] if dims else [])
    result = invoke("encode", collection / "model", collection / "texts.txt", "-o", out, "--no-progress", *args)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(collection / "model")
    full = nlp.get_pipe("siamese_similarity").encode(TEXTS)
    width = full.shape[1]
    expected = dequantize(quantize(full, precision, dims or width), precision, dims or width, width)
    numpy.testing.assert_array_equal(load_vectors(out), expected)
    assert srsly.read_json(tmp_path / "v.npy.precision.json")["precision"] == precision
    settings = srsly.read_json(tmp_path / "v.npy.precision.json")
    srsly.write_json(tmp_path / "v.npy.precision.json", {**settings, "precision": "int3"})
    with pytest.raises(ValueError, match="v.npy.precision.json records vectors this version cannot read"):
        load_vectors(out)


@pytest.mark.parametrize("command", ["encode", "index", "dedupe"])
@pytest.mark.parametrize(
    "option,value,message", [("--precision", "int4", "precision must be one of"), ("--dims", 0, "dims must be")]
)
def test_a_bad_precision_or_dims_is_a_message(collection, tmp_path, command, option, value, message):
    out = tmp_path / ("v.npy" if command == "encode" else "out.jsonl")
    result = invoke(command, collection / "model", collection / "texts.txt", "-o", out, option, value)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_index_and_dedupe_with_int8(collection, tmp_path):
    result = invoke(
        "index",
        collection / "model",
        collection / "texts.jsonl",
        "-o",
        tmp_path / "idx",
        "--precision",
        "int8",
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    assert srsly.read_json(tmp_path / "idx" / "manifest.json")["precision"] == "int8"
    for precision in ("float32", "int8"):
        out = tmp_path / f"{precision}.jsonl"
        args = ["--precision", precision, "--threshold", 0.6, "--no-progress", "--n-process", 1]
        result = invoke("dedupe", collection / "model", collection / "texts.jsonl", "-o", out, *args)
        assert result.exit_code == 0, result.output
    exact, compact = (
        {(r["id1"], r["id2"]): r["score"] for r in read_jsonl(tmp_path / f"{p}.jsonl")} for p in ("float32", "int8")
    )
    # the k best of each doc are ranked on int8 vectors: a near tie may swap one
    assert exact and len(exact.keys() & compact.keys()) >= 0.9 * len(exact)
    for pair in exact.keys() & compact.keys():
        assert compact[pair] == pytest.approx(exact[pair], abs=1e-6)
