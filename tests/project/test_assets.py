"""The asset checks: a missing, wrong or truncated file stops the workflow with a clear message."""

import pytest

pytestmark = pytest.mark.slow


def test_wrong_checksum_fails(project):
    train = project.mirror / "quora/train.tsv"
    train.write_bytes(train.read_bytes()[:1000])  # truncated after the checksums were taken
    result = project("assets")
    assert result.returncode != 0
    assert "Wrong checksum for" in result.output and "quora/train.tsv" in result.output
    assert "truncated?" in result.output and "spacy project run assets" in result.output


def test_missing_asset_fails(project):
    (project.mirror / "stackexchange/meta.tsv").unlink()
    result = project("assets")
    assert result.returncode != 0
    assert "Missing asset: stackexchange/meta.tsv" in result.output
    assert str(project.mirror) in result.output


def test_official_download_with_wrong_checksum_fails(project):
    """Without a mirror, the official files are fetched with weasel's asset fetcher, which only
    prints a checksum mismatch. A file already in place is not downloaded again (so this test
    needs no network), and our check must fail on it."""
    dest = project.dir / "assets/quora/quora_duplicate_questions.tsv"
    dest.parent.mkdir(parents=True)
    dest.write_text('"id"\t"qid1"\t"qid2"\t"question1"\t"question2"\t"is_duplicate"\n"0"\t"1"\t"2"\t"a"\t"b"\t"0"\n')
    result = project("assets", mirror="none", dataset="quora")
    assert result.returncode != 0
    assert "Wrong checksum for assets/quora/quora_duplicate_questions.tsv" in result.output
    assert "expected MD5 b6d5672bd9dc1e66ab2bb020ebeafb8d" in result.output
    assert "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv" in result.output


def test_truncated_sgm_fails_the_checksum(project):
    sgm = project.mirror / "documents/reuters21578/reut2-003.sgm"
    sgm.write_text(sgm.read_text(encoding="latin-1")[:200], encoding="latin-1")
    result = project("convert-documents")
    assert result.returncode != 0
    assert "Wrong checksum for" in result.output and "reut2-003.sgm" in result.output


def test_sts_assets_are_copied_and_verified(project):
    result = project("convert-sts")
    assert result.returncode == 0, result.output[-3000:]
    for name in ("sts-train.csv", "sts-dev.csv", "SICK_train.txt", "SICK_trial.txt"):
        copied = project.dir / "assets/sts" / name
        assert copied.read_bytes() == (project.mirror / "sts" / name).read_bytes()
    assert "OK sts/SICK_trial.txt" in result.output


def test_missing_sts_file_fails_and_names_it(project):
    (project.mirror / "sts/SICK_trial.txt").unlink()
    result = project("convert-sts")
    assert result.returncode != 0
    assert "Missing asset: sts/SICK_trial.txt" in result.output


def test_sts_files_without_a_mirror_must_be_placed_by_hand(project):
    """The official STS Benchmark and SICK releases are archives: without a mirror, the check asks
    for the extracted files in assets/sts/ and never tries the network."""
    result = project("convert-sts", mirror="none")
    assert result.returncode != 0
    assert "Missing asset: sts/sts-train.csv is not in assets" in result.output
    assert "place the file there yourself" in result.output
    # Each file names its official source (it said "see project.yml" and to run the assets step,
    # which never downloads these files)
    assert "get it from its official source: STS Benchmark dev split" in result.output
    assert "http://ixa2.si.ehu.es/stswiki/index.php/STSbenchmark" in result.output
    assert "SICK trial split, used as dev (https://marcobaroni.org/composes/sick.html)" in result.output
    assert "needs network" not in result.output and "see project.yml" not in result.output


def test_failed_official_download_is_a_message(project):
    """Without a mirror, a download that fails (no network, a 404) is reported with its URL and
    the check names the missing file: no traceback from requests."""
    config = project.dir / "project.yml"
    url = "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv"
    config.write_text(config.read_text(encoding="utf8").replace(url, "http://127.0.0.1:9/quora.tsv"), encoding="utf8")
    result = project("assets", mirror="none", dataset="quora")
    assert result.returncode != 0
    assert (
        "Download failed: assets/quora/quora_duplicate_questions.tsv from http://127.0.0.1:9/quora.tsv" in result.output
    )
    assert "Missing asset: quora/quora_duplicate_questions.tsv" in result.output
    assert "Traceback" not in result.output
    assert not (project.dir / "assets/quora/quora_duplicate_questions.tsv").exists()


def test_paraphrase_assets_are_copied_and_verified(project):
    for step in ("assets", "convert-quora", "convert-stackexchange", "convert-sts"):  # what convert-general reads
        assert project(step).returncode == 0
    result = project("convert-general", mrpc_dev_pairs=10, twitter_dev_fraction=0.2)
    assert result.returncode == 0, result.output[-3000:]
    for name in ("msr_paraphrase_train.txt", "twitter_url_train/a.toks", "twitter_url_train/sim.txt"):
        copied = project.dir / "assets/paraphrase" / name
        assert copied.read_bytes() == (project.mirror / "paraphrase" / name).read_bytes()
    assert (project.dir / "corpus/paraphrase/sources.json").exists()
