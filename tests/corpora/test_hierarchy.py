"""Hierarchy-graded document pairs: the group tree, LCA depths, scores, balance, bad names,
and the registered reader spacy-siamese.HierarchyPairs.v1."""

from collections import Counter

import pytest
import spacy
import srsly
from spacy.util import registry

from spacy_siamese.corpora import DocRecord, DocumentFormatError
from spacy_siamese.corpora.hierarchy import (
    GroupTree,
    group_path,
    hierarchy_score,
    sample_hierarchy_pairs,
    shared_depth,
)
from spacy_siamese.pair_examples import get_label

GROUPS = [
    "alt.atheism",
    "comp.graphics",
    "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware",
    "rec.sport.baseball",
    "rec.sport.hockey",
    "sci.space",
]


def _docs(n=6, groups=GROUPS):
    return [DocRecord(f"{i} in {g}", (g,), g, f"{g}/{i}") for g in groups for i in range(n)]


def test_tree_depth_and_lca():
    tree = GroupTree(GROUPS)
    assert group_path("comp.sys.ibm.pc.hardware") == ("comp", "sys", "ibm", "pc", "hardware")
    assert shared_depth(group_path("comp.sys.ibm.pc.hardware"), group_path("comp.sys.mac.hardware")) == 2
    assert tree.depth == 3  # deepest shared node (comp.sys, rec.sport) is at depth 2
    assert tree.lca_depth("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware") == 2
    assert tree.lca_depth("comp.graphics", "comp.sys.mac.hardware") == 1
    assert tree.lca_depth("alt.atheism", "sci.space") == 0
    assert tree.lca_depth("sci.space", "sci.space") == 3
    assert tree.lca_depth("comp.graphics", "comp.sys.mac.hardware") == tree.lca_depth(
        "comp.sys.mac.hardware", "comp.graphics"
    )
    levels = tree.levels()
    assert set(levels) == {0, 1, 2, 3}
    assert len(levels[3]) == len(GROUPS)
    assert sorted(levels[2]) == [
        ("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"),
        ("rec.sport.baseball", "rec.sport.hockey"),
    ]
    assert sum(len(v) for v in levels.values()) == len(GROUPS) * (len(GROUPS) + 1) // 2


def test_explicit_depth():
    deep = GroupTree(GROUPS, depth=5)
    assert deep.score("sci.space", "sci.space") == 1.0
    assert deep.score("comp.graphics", "comp.sys.mac.hardware") == 2.0**-4
    shallow = GroupTree(GROUPS, depth=2)  # comp.sys merged into comp
    assert shallow.lca_depth("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware") == 1
    with pytest.raises(ValueError, match="depth"):
        GroupTree(GROUPS, depth=-1)


def test_scores():
    # d / 2^(d - l) divided by d
    for d in (1, 3, 5):
        for level in range(d + 1):
            assert hierarchy_score(level, d) == pytest.approx((d / 2 ** (d - level)) / d)
    tree = GroupTree(GROUPS)
    assert tree.score("sci.space", "sci.space") == 1.0
    assert tree.score("rec.sport.baseball", "rec.sport.hockey") == 0.5
    assert tree.score("comp.graphics", "comp.sys.ibm.pc.hardware") == 0.25
    assert tree.score("alt.atheism", "comp.graphics") == 0.125
    with pytest.raises(ValueError):
        hierarchy_score(4, 3)


def test_sample_balanced_and_seeded():
    docs = _docs()
    pairs, tree = sample_hierarchy_pairs(docs, n_pairs=402, seed=1)
    assert pairs == sample_hierarchy_pairs(docs, n_pairs=402, seed=1)[0]
    assert pairs != sample_hierarchy_pairs(docs, n_pairs=402, seed=2)[0]
    counts = Counter(p.label for p in pairs)
    assert sorted(counts) == [0.125, 0.25, 0.5, 1.0]
    assert max(counts.values()) - min(counts.values()) <= 1 and sum(counts.values()) == 402
    for i, j, label in pairs:
        assert i != j
        assert label == tree.score(docs[i].group, docs[j].group)


def test_sample_skips_levels_without_pairs():
    # one document per group: no same-group pairs, so only the other levels are drawn
    docs = _docs(n=1)
    pairs, _ = sample_hierarchy_pairs(docs, n_pairs=30, seed=0)
    assert 1.0 not in {p.label for p in pairs} and len(pairs) == 30
    with pytest.raises(ValueError, match="no two documents"):
        sample_hierarchy_pairs(_docs(n=1, groups=["sci.space"]), n_pairs=3)
    with pytest.raises(ValueError, match="n_pairs"):
        sample_hierarchy_pairs(docs, n_pairs=0)


@pytest.mark.parametrize("bad", ["", "  ", "comp..graphics", ".comp", "comp."])
def test_bad_group_names(bad):
    with pytest.raises(ValueError, match="group name"):
        group_path(bad)
    docs = _docs(n=2) + [DocRecord("x", (bad or "x.",), bad, "the-bad-one")]
    with pytest.raises(ValueError, match="document the-bad-one"):
        sample_hierarchy_pairs(docs, n_pairs=10)


def test_a_document_without_a_group_is_placed_by_its_label():
    docs = [DocRecord(f"t{i}", (f"topic{i % 3}",), "", str(i)) for i in range(12)]
    pairs, tree = sample_hierarchy_pairs(docs, n_pairs=20)
    assert tree.groups == ["topic0", "topic1", "topic2"] and tree.depth == 1
    assert {p.label for p in pairs} == {0.5, 1.0}


def _collection(tmp_path, docs):
    path = tmp_path / "documents.jsonl"
    srsly.write_jsonl(path, [{"text": d.text, "labels": list(d.labels), "group": d.group, "id": d.id} for d in docs])
    return path


def test_reader_splits_and_examples(tmp_path):
    path = _collection(tmp_path, _docs(n=20))
    make = registry.readers.get("spacy-siamese.HierarchyPairs.v1")
    nlp = spacy.blank("en")
    parts = {}
    for split in ("train", "dev", "test"):
        corpus = make(path, split=split, n_pairs=40, test_fraction=0.2, dev_fraction=0.25, seed=0, max_chars=30)
        texts, pairs = corpus.pairs()
        parts[split] = set(texts)
        assert all(len(t) <= 30 for t in texts)
        examples = list(corpus(nlp))
        assert len(examples) == 40
        assert sorted({get_label(eg) for eg in examples}) == [0.125, 0.25, 0.5, 1.0]
    assert len(parts["test"]) == 28 and len(parts["dev"]) == 28 and len(parts["train"]) == 84
    assert not parts["test"] & parts["train"] and not parts["test"] & parts["dev"]
    with pytest.raises(ValueError, match="split"):
        make(path, split="validation")
    with pytest.raises(ValueError, match="path is None"):
        make(None)


def test_reader_names_the_record_with_a_bad_group(tmp_path):
    path = _collection(tmp_path, _docs(n=2) + [DocRecord("x", ("x",), "comp..x", "bad-7")])
    corpus = registry.readers.get("spacy-siamese.HierarchyPairs.v1")(path, n_pairs=5)
    with pytest.raises(DocumentFormatError, match=r"documents\.jsonl:bad-7: group name 'comp\.\.x'"):
        list(corpus(spacy.blank("en")))
