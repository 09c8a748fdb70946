"""The batchers: clusters of duplicates (for in-batch negatives) and groups of one label."""

import pytest
import spacy
from spacy.util import registry

from spacy_siamese.batching import Clusters, cluster_batches, configure_batch_by_labels, pair_texts
from spacy_siamese.labelled import get_doc_labels, labelled_doc_example

from .conftest import PAIRS, make_nlp, pair_examples

CLUSTER_PAIRS = [
    ("a1", "a2", 1),
    ("a2", "a3", 1),
    ("a1", "x", 0),
    ("b1", "b2", 1),
    ("c1", "c2", 0),
    ("d1", "d2", 1),
    ("e1", "a3", 0),
    ("f1", "f2", 1),
]


def test_clusters_join_texts_through_duplicates_only():
    clusters = Clusters()
    for a, b, y in CLUSTER_PAIRS:
        clusters.find(a), clusters.find(b)
        if y:
            clusters.union(a, b)
    assert clusters.find("a1") == clusters.find("a3")
    assert clusters.find("x") != clusters.find("a1")
    assert clusters.find("c1") != clusters.find("c2")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_batch_holds_two_pairs_of_one_cluster(seed):
    nlp = make_nlp()
    examples = pair_examples(nlp, CLUSTER_PAIRS)
    batches = list(cluster_batches(examples, 3, seed=seed))
    assert sorted(eg.predicted.text for batch in batches for eg in batch) == sorted(a for a, _, _ in CLUSTER_PAIRS)
    clusters = Clusters()
    for a, b, y in CLUSTER_PAIRS:
        if y:
            clusters.union(a, b)
    for batch in batches:
        roots = [r for eg in batch for r in {clusters.find(t) for t in pair_texts(eg)}]
        assert len(roots) == len(set(roots)), [pair_texts(eg) for eg in batch]
    assert all(len(batch) <= 3 for batch in batches)


def test_batches_are_seeded_and_full_when_possible():
    nlp = make_nlp()
    examples = pair_examples(nlp, PAIRS)  # two pairs share each side-A question
    first = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=3)]
    again = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=3)]
    other = [[eg.predicted.text for eg in b] for b in cluster_batches(examples, 4, seed=4)]
    assert first == again and first != other
    for batch in first:
        assert len(batch) == len(set(batch))
    assert [len(b) for b in first][:2] == [4, 4]


def test_pair_texts_rebuild_side_b():
    nlp = make_nlp()
    eg = pair_examples(nlp, PAIRS[:1])[0]
    assert pair_texts(eg) == (PAIRS[0][0], PAIRS[0][1])


def test_registered_batcher_changes_order_between_epochs():
    batcher = registry.resolve({"b": {"@batchers": "spacy-siamese.batch_by_clusters.v1", "size": 4, "seed": 0}})["b"]
    examples = pair_examples(make_nlp(), PAIRS)
    epoch1 = [eg.predicted.text for batch in batcher(examples) for eg in batch]
    epoch2 = [eg.predicted.text for batch in batcher(examples) for eg in batch]
    assert sorted(epoch1) == sorted(epoch2) and epoch1 != epoch2


def test_batch_by_labels_groups_docs_of_one_label():
    nlp = spacy.blank("en")
    examples = [labelled_doc_example(nlp.make_doc(f"doc {i}"), [f"story{i % 5}"]) for i in range(40)]
    make = registry.batchers.get("spacy-siamese.batch_by_labels.v1")
    assert make is configure_batch_by_labels
    batches = list(make(size=8, per_label=4, seed=0)(examples))
    assert sorted(eg.predicted.text for b in batches for eg in b) == sorted(eg.predicted.text for eg in examples)
    assert all(len(b) == 8 for b in batches)
    for batch in batches:  # groups of 4 docs of one story
        labels = [get_doc_labels(eg)[0] for eg in batch]
        assert labels[:4] == [labels[0]] * 4 and labels[4:] == [labels[4]] * 4
    again = make(size=8, per_label=4, seed=0)
    assert [eg.predicted.text for eg in next(again(examples))] == [eg.predicted.text for eg in batches[0]]
    with pytest.raises(ValueError, match="per_label"):
        make(size=8, per_label=0)
