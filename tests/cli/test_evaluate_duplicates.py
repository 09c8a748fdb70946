"""`python -m spacy_siamese evaluate-duplicates`: duplicate retrieval on a pair file."""

import json

import pytest

from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF

from .conftest import invoke


def test_model_and_baseline(files, tmp_path):
    out = tmp_path / "out.json"
    result = invoke(
        "evaluate-duplicates", files / "model", files / "dev.jsonl", "--fit-texts", files / "dev.jsonl",
        "--output-json", out, "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf8"))
    assert report["n_queries"] == 5 and "TF-IDF cosine" in report["results"]
    assert set(report["results"]) == {MODEL, TFIDF}
    assert json.loads(result.stdout) == report  # the same report, printed
    assert report["model_path"] == "model" and report["pairs"] == "dev.jsonl"  # no machine path
    assert set(report["versions"]) == {"python", "spacy", "spacy_siamese"}


def test_markdown_table(files, tmp_path):
    out = tmp_path / "out.md"
    result = invoke("evaluate-duplicates", files / "model", files / "dev.jsonl", "--name", "tiny", "--output-md", out)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["name"] == "tiny"
    assert out.read_text(encoding="utf8").startswith("### Duplicate retrieval on tiny: 5 duplicate pairs")


def test_baseline_only_and_options(files, tmp_path):
    result = invoke(
        "evaluate-duplicates", "-", files / "dev.jsonl", "--fit-texts", files / "train.tsv", "--n-pairs", 3,
        "--seed", 1,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["results"]) == {TFIDF} and report["n_queries"] == 3 and report["seed"] == 1
    assert report["model_path"] == "-" and "model" not in report


def test_tfidf_is_fitted_as_evaluate_fits_it(files, tmp_path):
    """The first --fit-limit pairs' distinct texts, the rule and note of `evaluate --baselines`."""
    fitted_on = {}
    for limit in (2, 0):
        fit = ["--fit-texts", files / "train.tsv", "--fit-limit", limit]
        out = tmp_path / f"pairs{limit}.json"
        result = invoke("evaluate", files / "model", files / "dev.jsonl", "--baselines", *fit, "--output-json", out)
        assert result.exit_code == 0, result.output
        pairs = json.loads(out.read_text(encoding="utf8"))["tfidf"]
        result = invoke("evaluate-duplicates", files / "model", files / "dev.jsonl", *fit)
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["fit_limit"] == limit
        assert report["tfidf"]["fitted_on"] == pairs["fitted_on"]
        assert report["tfidf"]["n_terms"] == pairs["n_terms"]
        fitted_on[limit] = pairs["fitted_on"]
    assert fitted_on[2].endswith("of the first 2 pairs of train.tsv") and fitted_on[0] != fitted_on[2]


def test_relative_paths_are_kept_as_given(files, monkeypatch):
    monkeypatch.chdir(files)
    result = invoke("evaluate-duplicates", "model", "dev.jsonl")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["model_path"] == "model" and report["pairs"] == "dev.jsonl" and list(report["results"]) == [MODEL]


def test_errors_are_messages(files):
    for args, message in (
        (["-", files / "missing.jsonl"], "File not found"),
        ([files / "missing_model", files / "dev.jsonl"], "Model not found"),
        ([files / "model", files / "empty.jsonl"], "o pairs"),
        (["-", files / "dev.jsonl", "--fit-texts", files / "missing.tsv"], "File not found"),
    ):
        result = invoke("evaluate-duplicates", *args)
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output


def test_compare_and_bootstrap_rank_the_same_queries(files, search_models, tmp_path):
    other = tmp_path / "other"
    search_models["cosine"].to_disk(other)
    args = ["evaluate-duplicates", files / "model", files / "dev.jsonl", "--fit-texts", files / "dev.jsonl"]
    result = invoke(*args, "--compare", other, "--bootstrap", 50, "--confidence", 0.9, "--no-progress")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    method = f"compared: {other}"
    assert list(report["results"]) == [MODEL, method, TFIDF]
    assert report["compared"][method]["comparison"] == "spacy-siamese.CosineSimilarity.v1"
    assert report["results"][method]["n_queries"] == report["n_queries"] == 5
    bootstrap = report["bootstrap"]
    assert bootstrap["confidence"] == 0.9 and bootstrap["n_resamples"] == 50
    assert bootstrap["kind"] == "percentile bootstrap over the queries"
    assert set(bootstrap["intervals"]) == set(report["results"])  # every method's figures
    for name, intervals in bootstrap["intervals"].items():
        low, high = intervals["recall@10"]
        assert low <= report["results"][name]["recall@10"] <= high
    assert set(bootstrap["differences"]) == {method, TFIDF}
    lead = bootstrap["differences"][TFIDF]
    assert lead["metric"] == "mrr@10" and lead["of"] == MODEL
    assert lead["value"] == pytest.approx(report["results"][MODEL]["mrr@10"] - report["results"][TFIDF]["mrr@10"])
    for compare, message in [([files / "model"], "the evaluated one"), ([other, other], "twice")]:
        failed = invoke(*args, *[x for path in compare for x in ("--compare", path)])
        assert failed.exit_code == 1 and message in failed.output and "Traceback" not in failed.output


def test_nothing_to_rank_with_is_an_error(files):
    """'-' without --fit-texts (or --compare) ranks with no method: not an empty report (the library's check)."""
    result = invoke("evaluate-duplicates", "-", files / "dev.jsonl")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "'-' on the command line" in result.output and "(--fit-texts)" in result.output


@pytest.mark.parametrize("n_pairs", [0, -3])
def test_n_pairs_must_be_positive(files, n_pairs):
    result = invoke("evaluate-duplicates", files / "model", files / "dev.jsonl", "--n-pairs", n_pairs)
    assert result.exit_code == 2 and "Invalid value for '--n-pairs'" in result.output, result.output


def test_graded_labels_need_a_label_threshold(files, tmp_path):
    """A graded file (STS scores) is not read as duplicates at labels >= 0.5 unasked."""
    rows = [json.loads(line) for line in (files / "dev.jsonl").read_text(encoding="utf8").splitlines()]
    graded = tmp_path / "graded.jsonl"
    graded.write_text(
        "".join(json.dumps({**row, "label": 0.2 + 0.6 * row["label"]}) + "\n" for row in rows), encoding="utf8"
    )
    result = invoke("evaluate-duplicates", files / "model", graded, "--no-progress")
    assert result.exit_code == 1 and f"{graded}:1: label 0.8 is graded, not 0 or 1: give --label-threshold" in (
        result.output
    )

    def run(pairs, out, *options):
        return invoke("evaluate-duplicates", files / "model", pairs, "--output-json", out, "--no-progress", *options)

    result = run(graded, tmp_path / "graded.json", "--label-threshold", 0.7)
    assert result.exit_code == 0, result.output
    assert run(files / "dev.jsonl", tmp_path / "binary.json").exit_code == 0
    report, expected = (
        json.loads((tmp_path / name).read_text(encoding="utf8")) for name in ("graded.json", "binary.json")
    )
    assert report["results"] == expected["results"] and report["label_threshold"] == 0.7
    result = run(graded, tmp_path / "zero.json", "--label-threshold", 0)
    assert result.exit_code == 1 and "--label-threshold must be in (0, 1]" in result.output
