"""benchmarks/dedupe_collection.py: the dedupe benchmark collection, built from the tiny data
mirror (Quora, StackExchange, STS-B, SICK; the other sources are missing there and skipped), so
the build has fewer real texts than the size asked for and the top-up path runs too."""

import json
import random

import pytest

from . import ROOT, load_benchmark

MIRROR = ROOT / "tests" / "data" / "project_mirror"
SIZE = 2000


dc = load_benchmark("dedupe_collection")


def _read(output):
    items = [json.loads(line) for line in (output / "collection.jsonl").read_text(encoding="utf8").splitlines()]
    truth = json.loads((output / "truth.json").read_text(encoding="utf8"))
    return items, truth


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    output = tmp_path_factory.mktemp("dedupe") / "out"
    collection = dc.build_collection(MIRROR, SIZE, seed=0)
    collection.write(output)
    items, truth = _read(output)
    return collection, output, items, truth


def test_size_exact_and_ids_unique(built):
    collection, _, items, truth = built
    assert len(collection) == len(items) == SIZE
    ids = [item["id"] for item in items]
    assert len(set(ids)) == SIZE
    assert all(isinstance(i, str) and isinstance(item["text"], str) and item["text"] for i, item in zip(ids, items))
    assert len({item["text"] for item in items}) == SIZE  # exact duplicates removed, copies all new
    assert truth["counts"]["items"] == truth["size"] == SIZE
    assert truth["counts"]["real"] + truth["counts"]["planted"] == SIZE


def test_sources_counted_and_missing_ones_listed(built):
    _, _, items, truth = built
    sources = truth["sources"]
    assert sources["quora_train"]["distinct"] > 0 and sources["sick"]["distinct"] > 0
    assert sources["20news"]["texts_read"] == 0 and sources["20news"]["missing_files"]
    real = sum(s["in_collection"] for s in sources.values())
    assert real == truth["counts"]["real"] == truth["counts"]["real_distinct_available"] < SIZE  # top-up ran
    assert items[0]["text"] == "How is the life of a math student? Could you describe your own experiences?"


def test_planted_copies_differ_from_originals_and_both_are_in_the_file(built):
    _, _, items, truth = built
    planted = truth["planted"]
    assert len(planted) == truth["counts"]["planted"] >= SIZE // dc.BLOCK
    by_id = {item["id"]: (i, item["text"]) for i, item in enumerate(items)}
    names = {"word_drop", "word_swap", "case:lower", "case:toggle"} | {
        f"typo:{k}" for k in ("insert", "delete", "substitute", "transpose")
    }
    for p in planted:
        copy_index, copy_text = by_id[p["id"]]
        original_index, original_text = by_id[p["original_id"]]
        assert (copy_index, original_index) == (p["position"], p["original_position"])
        assert original_index < copy_index
        assert copy_text != original_text
        assert 1 <= len(p["perturbations"]) <= 3 and set(p["perturbations"]) <= names
    originals = {p["original_id"] for p in planted}
    assert not originals & {p["id"] for p in planted}  # copies are never copied


def test_prefixes_contain_planted_pairs(built):
    _, _, _, truth = built
    for n in (100, 300, 1000, SIZE):
        inside = [p for p in truth["planted"] if p["position"] < n]
        assert len(inside) >= n // dc.BLOCK
        assert all(p["original_position"] < n for p in inside)  # both sides inside the prefix


def test_quora_duplicates_are_labelled_pairs_in_the_collection(built):
    _, _, items, truth = built
    pairs = truth["quora_pairs"]
    assert pairs and len(pairs) == truth["counts"]["quora_duplicates"]
    for pair in pairs:
        i, j = pair["position1"], pair["position2"]
        assert (items[i]["id"], items[j]["id"]) == (pair["id1"], pair["id2"]) and i != j
        assert pair["split"] in ("train", "dev")
    # the first pair of the mirror's train file that is labelled 1 is among them
    first = next(line.split("\t") for line in (MIRROR / "quora" / "train.tsv").open(encoding="utf8") if line[0] == "1")
    texts = {item["text"]: item["id"] for item in items}
    assert [texts[" ".join(first[1].split())], texts[" ".join(first[2].split())]] in [
        [p["id1"], p["id2"]] for p in pairs
    ]


def test_deterministic_for_the_seed_and_prefix_of_larger_sizes(built, tmp_path):
    _, output, _, _ = built
    dc.build_collection(MIRROR, SIZE, seed=0).write(tmp_path / "again")
    for name in ("collection.jsonl", "truth.json"):
        assert (tmp_path / "again" / name).read_bytes() == (output / name).read_bytes()
    dc.build_collection(MIRROR, SIZE, seed=1).write(tmp_path / "other")
    assert (tmp_path / "other" / "collection.jsonl").read_bytes() != (output / "collection.jsonl").read_bytes()
    smaller = dc.build_collection(MIRROR, 700, seed=0)
    smaller.write(tmp_path / "small")
    lines = (output / "collection.jsonl").read_text(encoding="utf8").splitlines(keepends=True)
    assert (tmp_path / "small" / "collection.jsonl").read_text(encoding="utf8") == "".join(lines[:700])


def test_enough_real_texts_still_plants_one_copy_per_block():
    collection = dc.build_collection(MIRROR, 500, seed=0)
    assert len(collection) == 500 and len(collection.planted) == 500 // dc.BLOCK
    assert collection.positions_source[: dc.BLOCK // 2].count("quora_train") >= dc.BLOCK // 2 - 1  # Quora first
    sources = collection.truth()["sources"]
    assert sum(s["in_collection"] for s in sources.values()) == 500 - len(collection.planted)


def test_truth_records_the_data_dir_only_as_given(built, tmp_path):
    collection, output, _, truth = built
    assert "data_dir" not in truth["settings"]
    text = (output / "truth.json").read_text(encoding="utf8")
    assert str(MIRROR) not in text and str(ROOT) not in text
    collection.write(tmp_path, data_dir="tests/data/project_mirror")
    assert json.loads((tmp_path / "truth.json").read_text())["settings"]["data_dir"] == "tests/data/project_mirror"
    assert set(truth["versions"]) >= {"python", "spacy-siamese", "spacy"}


def test_sentences_split_and_filter():
    text = (
        'First sentence is here. "Second one, also quoted!" Third line\nwraps here? no split here.\n\n  Too short.\nA'
    )
    assert list(dc.sentences(text)) == [
        "First sentence is here.",
        '"Second one, also quoted!"',
        "Third line wraps here? no split here.",
    ]
    reuters = "Shares rose two pct on the\n    news of the merger, it said"
    assert list(dc.sentences(reuters)) == ["Shares rose two pct on the news of the merger, it said"]
    assert list(dc.sentences(reuters, indented_paragraphs=True)) == [
        "Shares rose two pct on the",
        "news of the merger, it said",
    ]
    assert list(dc.sentences("12 34 56 78 90 ab")) == []  # mostly numbers
    assert list(dc.sentences(" ".join(["word"] * 61) + ".")) == []


def test_perturb_changes_the_text_and_names_what_it_did():
    rng = random.Random(0)
    text = "How do I learn Python fast and well?"
    words = text.split(" ")
    names = {"word_drop", "word_swap", "case:lower", "case:toggle"} | {
        f"typo:{k}" for k in ("insert", "delete", "substitute", "transpose")
    }
    seen = set()
    for _ in range(200):
        copy, ops = dc.perturb(text, rng)
        assert 1 <= len(ops) <= 3 and copy and set(ops) <= names
        if len(ops) > 1:
            continue  # several may cancel out (the caller checks)
        (op,) = ops
        seen.add(op)
        got = copy.split(" ")
        changed = [i for i, (a, b) in enumerate(zip(words, got)) if a != b]
        assert copy != text, op  # one perturbation always changes the text, in the way it names
        if op == "word_drop":
            assert len(got) == len(words) - 1 and all(w in words for w in got)
        elif op == "word_swap":
            assert sorted(got) == sorted(words) and len(changed) == 2 and changed[1] == changed[0] + 1
        elif op == "case:lower":
            assert copy == text.lower()
        elif op == "case:toggle":
            assert copy.lower() == text.lower() and len(changed) == 1
        else:  # a typo: one word, one letter
            assert len(got) == len(words) and len(changed) == 1
            growth = {"typo:insert": 1, "typo:delete": -1}.get(op, 0)
            assert len(got[changed[0]]) - len(words[changed[0]]) == growth
    assert seen == names  # each perturbation was checked on its own
