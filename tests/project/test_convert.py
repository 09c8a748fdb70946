"""The convert steps: the question-disjoint split, and the error exits on malformed or empty data."""

import json
import subprocess
import sys

import pytest

from .conftest import PROJECT

pytestmark = pytest.mark.slow


def test_malformed_line_fails(project):
    path = project.mirror / "stackexchange/askubuntu.tsv"
    n_lines = len(path.read_text(encoding="utf8").splitlines())
    with path.open("a", encoding="utf8") as file_:
        file_.write("duplicate\tonly one question here\n")
    project.write_checksums()  # a well-copied file with a bad line
    assert project("assets").returncode == 0
    result = project("convert-stackexchange")
    assert result.returncode != 0
    assert f"askubuntu.tsv:{n_lines + 1}: expected 3 tab-separated fields" in result.output
    assert "malformed pair file" in result.output


def test_empty_dataset_fails(project):
    (project.mirror / "quora/dev.tsv").write_text("", encoding="utf8")
    project.write_checksums()
    assert project("assets", dataset="quora").returncode == 0
    result = project("convert-quora")
    assert result.returncode != 0
    assert "empty dataset: no pairs found in" in result.output and "quora/dev.tsv" in result.output


@pytest.mark.parametrize(
    "script,name,step", [("convert.py", "quora", "assets"), ("convert_documents.py", "reuters", "convert-documents")]
)
def test_convert_without_assets_says_which_step_to_run(tmp_path, script, name, step):
    script = str(PROJECT / "scripts" / script)
    cmd = [sys.executable, script, name, str(tmp_path / "sources.json"), str(tmp_path / "out")]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 1
    assert f"sources.json not found. Run the assets step first: spacy project run {step}" in result.stderr


def test_malformed_collection_fails_with_file_and_record(project):
    """A malformed document that passes the checksum (listed as is) stops convert-documents."""
    sgm = project.mirror / "documents/reuters21578/reut2-003.sgm"
    sgm.write_text(sgm.read_text(encoding="latin-1")[:200], encoding="latin-1")
    project.write_checksums()
    result = project("convert-documents")
    assert result.returncode != 0 and "OK documents/reuters21578/reut2-003.sgm" in result.output  # it passed the check
    assert "malformed reuters collection" in result.output
    assert "reut2-003.sgm" in result.output and "not closed" in result.output


def _official_quora_file(path, n=300):
    rows = ['"id"\t"qid1"\t"qid2"\t"question1"\t"question2"\t"is_duplicate"']
    for i in range(n):  # chains of questions, so components have several pairs
        a, b = f"Question number {i // 3}?", f"question number {i // 3 + 1000} ?"
        if i % 3 == 2:
            b = f"Another question {i}"
        rows.append(f'"{i}"\t"{2 * i}"\t"{2 * i + 1}"\t"{a}"\t"{b}"\t"{i % 2}"')
    path.write_text("\n".join(rows) + "\n", encoding="utf8")


def _convert(sources, out, seed):
    cmd = [sys.executable, str(PROJECT / "scripts/convert.py"), "quora", str(sources), str(out),
           "--seed", str(seed), "--dev-fraction", "0.1"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "stats.json").read_text())


def test_official_quora_file_gets_a_seeded_question_disjoint_split(tmp_path):
    raw = tmp_path / "quora_duplicate_questions.tsv"
    _official_quora_file(raw)
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({"source": "official", "files": [
        {"name": "quora/quora_duplicate_questions.tsv", "path": str(raw)}]}))  # fmt: skip
    stats = _convert(sources, tmp_path / "out", seed=1)
    assert stats["questions_on_both_sides"] == 0
    assert stats["train"]["pairs"] + stats["dev"]["pairs"] == 300
    assert 20 <= stats["dev"]["pairs"] <= 30
    dev = [json.loads(line) for line in (tmp_path / "out/dev.jsonl").read_text().splitlines()]
    train = [json.loads(line) for line in (tmp_path / "out/train.jsonl").read_text().splitlines()]
    numbers = lambda pairs: {t.lower().strip(" ?") for p in pairs for t in (p["text1"], p["text2"])}  # noqa: E731
    assert not numbers(dev) & numbers(train)
    _convert(sources, tmp_path / "again", seed=1)
    assert (tmp_path / "again/dev.jsonl").read_bytes() == (tmp_path / "out/dev.jsonl").read_bytes()
    _convert(sources, tmp_path / "other", seed=2)
    assert (tmp_path / "other/dev.jsonl").read_bytes() != (tmp_path / "out/dev.jsonl").read_bytes()


def _write_pairs(path, pairs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"text1": a, "text2": b, "label": y}) + "\n" for a, b, y in pairs), "utf8")


def _sources(path, files):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"source": "mirror", "files": [{"name": n, "path": str(p)} for n, p in files.items()]}))


def test_convert_general_keeps_msrpar_and_dev_pairs_out_of_training(tmp_path):
    corpus, raw = tmp_path / "corpus", tmp_path / "raw"
    for name in ("quora", "stackexchange"):
        _write_pairs(corpus / name / "train.jsonl", [(f"{name} a{i}", f"{name} b{i}", i % 2) for i in range(6)])
        _write_pairs(corpus / name / "dev.jsonl", [(f"{name} c{i}", f"{name} d{i}", i % 2) for i in range(4)])
    sts_row = "main-news\t{}\t2012\t{:04d}\t{}\t{}\t{}\n"
    raw.mkdir()
    (raw / "sts-train.csv").write_text(
        sts_row.format("MSRvid", 1, "5.0", "A plane takes off.", "A plane is taking off.")
        + sts_row.format("MSRpar", 2, "4.0", "Shares rose 5 percent.", "Stocks gained 5 percent.")
        + sts_row.format("headlines", 3, "1.0", "A dog barks.", "A cat sleeps."),  # also a SICK trial pair
        encoding="utf8",
    )
    (raw / "sts-dev.csv").write_text(
        sts_row.format("MSRvid", 4, "2.5", "A man sings.", "A woman dances.")
        + sts_row.format("MSRpar", 5, "3.0", "The court ruled on Monday.", "On Monday the court gave its ruling."),
        encoding="utf8",
    )
    sick_head = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    (raw / "SICK_train.txt").write_text(
        sick_head + "1\tA woman dances.\tA man sings.\t2.0\tNEUTRAL\n2\tKids play.\tChildren play.\t4.6\tENTAILMENT\n",
        encoding="utf8",
    )  # pair 1 is an STS-B dev pair, sides swapped
    (raw / "SICK_trial.txt").write_text(sick_head + "3\ta dog barks\ta cat sleeps\t1.5\tNEUTRAL\n", encoding="utf8")
    mrpc_rows = [("1", "The court ruled on Monday.", "On Monday the court gave its ruling.")]  # STS-B dev MSRpar
    mrpc_rows += [(str(i % 2), f"Sentence {i} here.", f"Sentence {i} there.") for i in range(6)]
    (raw / "msr.txt").write_text(
        "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
        + "".join(f"{y}\t{i}\t{i + 100}\t{a}\t{b}\n" for i, (y, a, b) in enumerate(mrpc_rows)),
        encoding="utf8",
    )
    twitter = raw / "twitter_url_train"
    twitter.mkdir()
    firsts = [f"headline number {i // 4}" for i in range(40)]
    (twitter / "a.toks").write_text("".join(f"{a}\n" for a in firsts), encoding="utf8")
    (twitter / "b.toks").write_text("".join(f"tweet {i} about it\n" for i in range(40)), encoding="utf8")
    (twitter / "sim.txt").write_text("".join(f"{int(i % 4 == 0)}\n" for i in range(40)), encoding="utf8")
    _sources(corpus / "sts/sources.json", {f"sts/{p.name}": p for p in raw.glob("*.*") if p.name != "msr.txt"})
    _sources(corpus / "paraphrase/sources.json", {
        "paraphrase/msr_paraphrase_train.txt": raw / "msr.txt",
        **{f"paraphrase/twitter_url_train/{n}": twitter / n for n in ("a.toks", "b.toks", "sim.txt")}})  # fmt: skip
    out = tmp_path / "general"
    cmd = [sys.executable, str(PROJECT / "scripts/convert_general.py"), str(corpus), str(out),
           "--mrpc-dev-pairs", "2", "--twitter-dev-fraction", "0.25"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    read = lambda name, part: [json.loads(x) for x in (out / name / f"{part}.jsonl").read_text().splitlines()]  # noqa: E731
    assert [p["text1"] for p in read("sts", "train")] == ["A plane takes off."]  # MSRpar and a SICK trial pair out
    assert [p["text1"] for p in read("sts", "dev")] == ["A man sings."]
    assert [p["text1"] for p in read("sick", "train")] == ["Kids play."]
    assert "The court ruled on Monday." not in {p["text1"] for p in read("mrpc", "train")}
    assert len(read("mrpc", "dev")) == 2 and len(read("twitter_url", "dev")) == 8  # two headlines of 4 tweets
    assert not {p["text1"] for p in read("twitter_url", "dev")} & {p["text1"] for p in read("twitter_url", "train")}
    stats = json.loads((out / "stats.json").read_text())
    assert stats["sts_msrpar_rows_dropped"] == {"train": 1, "dev": 1}
    dropped = {name: info["train_pairs_dropped_as_dev_pairs"] for name, info in stats["datasets"].items()}
    assert dropped == {"quora": 0, "stackexchange": 0, "sts": 1, "sick": 1, "mrpc": 1, "twitter_url": 0}


@pytest.mark.parametrize(
    "script,name", [("convert.py", "quora"), ("convert_documents.py", "20news"), ("convert_general.py", None)]
)
def test_convert_into_a_file_says_so(tmp_path, script, name):
    """An output directory that is a file stops the step with a message (it was a FileExistsError
    traceback, after the whole dataset had been read)."""
    mirror = PROJECT.parent / "tests/data/project_mirror"
    _sources(tmp_path / "sources.json", {f"quora/{n}.tsv": mirror / f"quora/{n}.tsv" for n in ("train", "dev")})
    for part in ("sts", "paraphrase"):
        _sources(tmp_path / part / "sources.json", {})
    (tmp_path / "out").write_text("not a directory\n", encoding="utf8")
    args = [str(tmp_path)] if name is None else [name, str(tmp_path / "sources.json")]
    cmd = [sys.executable, str(PROJECT / "scripts" / script), *args, str(tmp_path / "out")]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 1
    assert f"Error: {tmp_path / 'out'} is a file: the converted files go in a directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_convert_stackexchange_leaves_no_site_file_of_an_earlier_run(project):
    """The per-site dev files are the sites of this run's dev split: one left by an earlier run
    (another seed or data) would be read as current."""
    assert project("assets").returncode == 0
    corpus = project.dir / "corpus/stackexchange"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "dev_superuser.jsonl").write_text('{"text1": "a", "text2": "b", "label": 1}\n', encoding="utf8")
    result = project("convert-stackexchange")
    assert result.returncode == 0, result.output[-3000:]
    assert sorted(p.name for p in corpus.glob("dev_*.jsonl")) == ["dev_askubuntu.jsonl", "dev_meta.jsonl"]
