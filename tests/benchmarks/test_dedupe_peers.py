"""benchmarks/dedupe_peers.py on a tiny collection: our dedupe and SemHash (on a model2vec model
over the collection's words) run side by side, SemHash also at the threshold matching our number of
pairs; the recall of planted copies directly and in groups."""

import json
import re

import numpy
import pytest
import spacy

from ..conftest import pair_examples
from ..tiny_transformer import require_model2vec
from . import ROOT, load_benchmark

pytest.importorskip("semhash")
pytestmark = pytest.mark.slow

MIRROR = ROOT / "tests" / "data" / "project_mirror"
SIZE = 600
peers = load_benchmark("dedupe_peers")
collection = load_benchmark("dedupe_collection")


def test_groups_chain_pairs_and_recall_counts_direct_and_grouped_pairs():
    groups = peers.groups_of_pairs([("a", "b"), ("b", "c"), ("d", "e")])
    assert groups["a"] == groups["c"] != groups["d"] == groups["e"]
    found = peers.found({("a", "b")}, groups, [("b", "a"), ("a", "c"), ("a", "d"), ("x", "y")])
    assert found == {"n": 4, "direct": 0.25, "in_groups": 0.5}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The collection, a model2vec model over its words, and a pipe started from that table."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    model2vec = require_model2vec()
    tmp = tmp_path_factory.mktemp("peers")
    out = tmp / "collection"
    collection.build_collection(MIRROR, SIZE, seed=0).write(out)
    texts = [json.loads(line)["text"] for line in (out / "collection.jsonl").read_text(encoding="utf8").splitlines()]
    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t)})
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["[UNK]", *words])}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    vectors = numpy.random.default_rng(0).normal(size=(len(words) + 1, 16)).astype("f")
    model2vec.StaticModel(vectors=vectors, tokenizer=tokenizer).save_pretrained(tmp / "m2v")
    nlp = spacy.blank("en")
    encoder = {"@architectures": "spacy-siamese.StaticEncoder.v2", "width": None, "table": str(tmp / "m2v")}
    model = {"@architectures": "spacy-siamese.Siamese.v1", "encoder": encoder}
    model["comparison"] = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True}
    pipe = nlp.add_pipe("siamese_similarity", config={"model": model})
    nlp.initialize(lambda: pair_examples(nlp, [(texts[0], texts[1], 0.0)]))
    pipe.cfg["dedupe_threshold"] = 0.95
    nlp.to_disk(tmp / "pipe")
    return tmp, out


def test_both_systems_run_and_semhash_matches_our_number_of_pairs(setup, monkeypatch):
    tmp, out = setup
    report_path = tmp / "report.json"
    argv = ["dedupe_peers.py", str(tmp / "pipe"), "--semhash-model", str(tmp / "m2v"), "--collection-dir", str(out)]
    argv += ["--sizes", str(SIZE), "--match-sizes", str(SIZE), "--output-json", str(report_path)]
    monkeypatch.setattr("sys.argv", argv)
    (out / "peers-work").mkdir()  # a directory of the user's, named as the work dir was
    (out / "peers-work" / "notes.txt").write_text("keep", encoding="utf8")
    peers.main()
    assert (out / "peers-work" / "notes.txt").read_text(encoding="utf8") == "keep"
    assert not list(out.glob("peers-work-*"))  # its own work dir: removed
    rows = json.loads(report_path.read_text())["results"][str(SIZE)]
    ours = rows[next(name for name in rows if name.startswith("ours"))]
    default = rows["semhash 0.9"]
    matched = rows[next(name for name in rows if name.endswith("(pairs matched)"))]
    assert ours["threshold"] == pytest.approx(0.95) and ours["n_pairs"] > 0
    assert ours["planted"]["n"] == default["planted"]["n"] == SIZE // 100  # one planted copy a block of 100
    for row in (ours, default, matched):
        assert row["wall_s"] > 0 and row["peak_rss_gb"] > 0
        assert all(
            0 <= row[kind][how] <= 1 for kind in ("planted", "quora_labelled") for how in ("direct", "in_groups")
        )
    for row in (default, matched):  # a SemHash pair is always in one group
        assert row["planted"]["direct"] <= row["planted"]["in_groups"]
    assert set(default["stages_s"]) == {"encode_and_index", "search"}
    assert abs(matched["n_pairs"] - ours["n_pairs"]) <= max(2, 0.1 * ours["n_pairs"])
