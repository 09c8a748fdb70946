"""The batchers: clusters of duplicates (for in-batch negatives), groups of one label, and batches of
one dataset each."""

import time

import pytest
import spacy
from spacy.util import registry

from spacy_siamese.batching import (
    cluster_batches,
    configure_batch_by_clusters,
    configure_batch_by_dataset,
    configure_batch_by_labels,
    configure_batch_by_topics,
    dataset_batches,
    duplicate_clusters,
    pair_texts,
    text_topics,
    topic_batches,
)
from spacy_siamese.labelled import get_doc_labels, labelled_doc_example
from spacy_siamese.pair_examples import get_dataset, make_pair_example

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


def clusters_of(pairs):
    return duplicate_clusters([(a, b) for a, b, _ in pairs], [y for _, _, y in pairs])


def test_clusters_join_texts_through_duplicates_only():
    cluster = clusters_of(CLUSTER_PAIRS)
    assert cluster["a1"] == cluster["a3"]
    assert cluster["x"] != cluster["a1"]
    assert cluster["c1"] != cluster["c2"]
    assert len(set(cluster.values())) == 8  # a, x, b, c1, c2, d, e1 and f: e1 meets a3 in a pair labelled 0 only


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_batch_holds_two_pairs_of_one_cluster(seed):
    nlp = make_nlp()
    examples = pair_examples(nlp, CLUSTER_PAIRS)
    batches = list(cluster_batches(examples, 3, seed=seed))
    assert sorted(eg.predicted.text for batch in batches for eg in batch) == sorted(a for a, _, _ in CLUSTER_PAIRS)
    cluster = clusters_of(CLUSTER_PAIRS)
    for batch in batches:
        roots = [r for eg in batch for r in {cluster[t] for t in pair_texts(eg)}]
        assert len(roots) == len(set(roots)), [pair_texts(eg) for eg in batch]
    assert all(len(batch) <= 3 for batch in batches)


def test_graded_pairs_chain_no_clusters_and_keep_batches_full():
    nlp = make_nlp()
    disjoint = [(f"t{i}", f"t{i + 1}", 0.6 + 0.01 * (i % 10)) for i in range(0, 40, 2)]
    batches = list(cluster_batches(pair_examples(nlp, disjoint), 5, seed=0))
    assert [len(batch) for batch in batches] == [5, 5, 5, 5]
    # a chain of texts whose every link scores >= 0.5: as duplicates they would be one cluster (a batch per
    # pair); graded, only the pairs that share a text are kept apart
    chain = [(f"c{i}", f"c{i + 1}", 0.6 + 0.01 * (i % 10)) for i in range(20)]
    batches = list(cluster_batches(pair_examples(nlp, chain), 5, seed=0))
    assert sorted(pair_texts(eg) for batch in batches for eg in batch) == sorted((a, b) for a, b, _ in chain)
    assert len(batches) <= 5, [len(batch) for batch in batches]
    for batch in batches:
        texts = [t for eg in batch for t in pair_texts(eg)]
        assert len(texts) == len(set(texts))
    shared = [("s", f"u{i}", 0.7) for i in range(4)] + [(f"v{i}", f"w{i}", 0.2) for i in range(4)]
    for batch in cluster_batches(pair_examples(nlp, shared), 4, seed=0):  # a shared text still parts them
        assert sum(eg.predicted.text == "s" for eg in batch) <= 1


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


TOPIC_WORDS = {
    "cat": "cats kitten purr whiskers litter",
    "car": "cars engine brake tyre fuel",
    "tax": "taxes income refund return deduction",
}


def topic_pairs(n_per_topic=12):
    """Pairs whose texts use the words of one topic each; every fourth pair a duplicate."""
    pairs = []
    for topic, words in TOPIC_WORDS.items():
        w = words.split()
        for i in range(n_per_topic):
            a = f"{topic} {w[i % 5]} {w[(i + 1) % 5]} {topic}{i}"
            b = f"{topic} {w[(i + 2) % 5]} {w[(i + 3) % 5]} {topic}{i}b"
            pairs.append((a, b, int(i % 4 == 0)))
    return pairs


def test_text_topics_group_texts_by_their_words():
    pairs = topic_pairs()
    texts = [a for a, _, _ in pairs]
    topics = text_topics(texts, 3, seed=0)
    assert topics.shape == (len(texts),)
    by_word = {}
    for text, topic in zip(texts, topics):
        by_word.setdefault(text.split()[0], set()).add(int(topic))
    assert all(len(found) == 1 for found in by_word.values()), by_word
    assert len({next(iter(found)) for found in by_word.values()}) == 3
    assert (text_topics(texts, 3, seed=0) == topics).all()


@pytest.mark.parametrize(
    "texts,n_topics",
    [([], 4), (["one text"], 4), (["", " ", ""], 2), (["alpha", "beta", "gamma"], 2), (["a b", "a b"], 5)],
)
def test_text_topics_with_nothing_to_group_by(texts, n_topics):
    topics = text_topics(texts, n_topics)
    assert topics.shape == (len(texts),) and topics.dtype == "int64"
    assert ((topics >= 0) & (topics < max(1, n_topics))).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_topic_batches_take_one_topic_at_a_time(seed):
    pairs = topic_pairs()
    examples = pair_examples(make_nlp(), pairs)
    topics = [int(a.split()[0] == "car") + 2 * int(a.split()[0] == "tax") for a, _, _ in pairs]
    batches = list(topic_batches(examples, 4, topics, seed=seed))
    assert sorted(eg.predicted.text for batch in batches for eg in batch) == sorted(a for a, _, _ in pairs)
    # 12 pairs per topic in batches of 4: every batch holds one topic
    assert all(len({eg.predicted.text.split()[0] for eg in batch}) == 1 for batch in batches)
    assert [len(batch) for batch in batches] == [4] * 9
    again = [[eg.predicted.text for eg in batch] for batch in topic_batches(examples, 4, topics, seed=seed)]
    assert again == [[eg.predicted.text for eg in batch] for batch in batches]


def test_topic_batches_keep_a_duplicate_cluster_out_of_each_batch():
    examples = pair_examples(make_nlp(), CLUSTER_PAIRS)
    cluster = clusters_of(CLUSTER_PAIRS)
    batches = list(topic_batches(examples, 3, [0] * len(CLUSTER_PAIRS), seed=0))
    assert sorted(eg.predicted.text for batch in batches for eg in batch) == sorted(a for a, _, _ in CLUSTER_PAIRS)
    for batch in batches:
        roots = [r for eg in batch for r in {cluster[t] for t in pair_texts(eg)}]
        assert len(roots) == len(set(roots))


def test_batch_by_topics_finds_topics_once_and_changes_order_between_epochs(monkeypatch):
    from spacy_siamese import batching

    calls = []
    monkeypatch.setattr(batching, "text_topics", lambda texts, n, seed: calls.append(n) or text_topics(texts, n))
    batcher = registry.resolve(
        {"b": {"@batchers": "spacy-siamese.batch_by_topics.v1", "size": 4, "topic_size": 12, "seed": 0}}
    )["b"]
    examples = pair_examples(make_nlp(), topic_pairs())
    epoch1 = [[eg.predicted.text for eg in batch] for batch in batcher(examples)]
    epoch2 = [[eg.predicted.text for eg in batch] for batch in batcher(list(reversed(examples)))]
    assert calls == [3]  # 36 pairs / topic_size 12, found in the first epoch only
    assert sorted(t for b in epoch1 for t in b) == sorted(t for b in epoch2 for t in b) and epoch1 != epoch2
    assert all(len({text.split()[0] for text in batch}) == 1 for batch in epoch1)
    list(batcher(pair_examples(make_nlp(), [("a new text", "another", 0)] + topic_pairs())))
    assert calls == [3, 3]  # a text it has not seen: topics found again


def test_batch_by_topics_later_epochs_cost_less_than_the_first():
    """Later epochs look the corpus's topics up once: a lookup per pair compared the corpus with
    the first epoch's, text by text, which stalled the main command's Quora training at its
    second epoch. Times within one run: the first epoch also finds the topics."""
    nlp = spacy.blank("en")
    examples = [make_pair_example(nlp, f"question {i} on topic{i % 50} word{i % 7}", f"q {i}", 0) for i in range(20000)]
    batcher = configure_batch_by_topics(size=128, topic_size=128)
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        assert sum(len(batch) for batch in batcher(list(examples))) == len(examples)
        seconds.append(time.perf_counter() - start)
    assert min(seconds[1:]) < seconds[0], seconds


def test_batch_by_topics_inside_batch_by_dataset_finds_each_datasets_topics_once(monkeypatch):
    from spacy_siamese import batching

    calls = []
    monkeypatch.setattr(
        batching, "text_topics", lambda texts, n, seed: calls.append(len(texts)) or text_topics(texts, n)
    )
    examples = tagged_examples({"quora": 8, "sts": 6})
    batcher = configure_batch_by_dataset(batcher=configure_batch_by_topics(size=2, topic_size=3), seed=0)
    epochs = [
        [[eg.predicted.text for eg in b] for b in batcher(list(reversed(examples)) if e else examples)]
        for e in range(3)
    ]
    assert sorted(calls) == [6, 8]  # each dataset's 6 or 8 distinct side-A texts, in the first epoch only
    assert all(sorted(t for b in epoch for t in b) == sorted(eg.predicted.text for eg in examples) for epoch in epochs)


@pytest.mark.parametrize("size,topic_size", [(0, 128), (128, 0)])
def test_batch_by_topics_rejects_bad_sizes(size, topic_size):
    with pytest.raises(ValueError, match="batch_by_topics: size and topic_size must be >= 1"):
        configure_batch_by_topics(size=size, topic_size=topic_size)


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


# -- batches of one dataset each ------------------------------------------------


def tagged_examples(sizes):
    """Pairs of several datasets: `sizes` maps a dataset name to its number of pairs."""
    nlp = spacy.blank("en")
    return [
        make_pair_example(nlp, f"{name} question {i}", f"{name} other {i}", i % 2, dataset=name)
        for name, n in sizes.items()
        for i in range(n)
    ]


def chunks(size):
    """A batcher that cuts its examples into runs of `size`, in the order given."""
    return lambda items: (list(items)[i : i + size] for i in range(0, len(list(items)), size))


def names_of(batches):
    return [get_dataset(batch[0]) for batch in batches]


def test_every_batch_holds_one_dataset_and_every_pair_comes_once():
    examples = tagged_examples({"quora": 9, "sts": 4, "mrpc": 2})
    batches = list(dataset_batches(examples, configure_batch_by_clusters(size=2), seed=0))
    for batch in batches:
        assert len({get_dataset(eg) for eg in batch}) == 1
    assert sorted(eg.predicted.text for b in batches for eg in b) == sorted(eg.predicted.text for eg in examples)
    assert names_of(batches).count("quora") == 5 and names_of(batches).count("sts") == 2


def test_proportional_batches_follow_size_times_weight():
    examples = tagged_examples({"quora": 20, "sts": 4, "mrpc": 4, "sick": 4})
    weights = {"sts": 2.0, "mrpc": 0.5, "sick": 0.0}
    batches = list(dataset_batches(examples, chunks(2), weights=weights, seed=0))
    counts = {name: names_of(batches).count(name) for name in ("quora", "sts", "mrpc", "sick")}
    assert counts == {"quora": 10, "sts": 4, "mrpc": 1, "sick": 0}
    sts = [eg.predicted.text for b in batches if get_dataset(b[0]) == "sts" for eg in b]
    assert sorted(sts) == sorted(2 * [f"sts question {i}" for i in range(4)])  # the dataset twice over
    assert names_of(batches)[:10] != sorted(names_of(batches))[:10]  # mixed, not dataset after dataset


def test_round_robin_takes_turns_until_the_largest_is_done():
    examples = tagged_examples({"quora": 6, "sts": 2})
    batches = list(dataset_batches(examples, chunks(2), schedule="round_robin"))
    assert names_of(batches) == ["quora", "sts"] * 3  # sts (one batch) starts again each round
    assert [eg.predicted.text for eg in batches[3]] == [eg.predicted.text for eg in batches[1]]


def test_dataset_batches_are_seeded_and_each_epoch_differs():
    examples = tagged_examples({"quora": 12, "sts": 12, "mrpc": 12})
    make = lambda: configure_batch_by_dataset(batcher=configure_batch_by_clusters(size=3, seed=0), seed=5)  # noqa: E731
    texts = lambda batches: [[eg.predicted.text for eg in b] for b in batches]  # noqa: E731
    first, again = make(), make()
    epoch1, epoch1_again = texts(first(examples)), texts(again(examples))
    assert epoch1 == epoch1_again
    assert texts(first(examples)) != epoch1  # the next epoch, the next seed
    other = configure_batch_by_dataset(batcher=configure_batch_by_clusters(size=3, seed=0), seed=6)
    assert texts(other(examples)) != epoch1


def test_batch_by_dataset_from_config():
    config = {
        "batcher": {
            "@batchers": "spacy-siamese.batch_by_dataset.v1",
            "schedule": "proportional",
            "weights": {"sts": 3.0},
            "seed": 0,
            "batcher": {"@batchers": "spacy-siamese.batch_by_clusters.v1", "size": 2, "seed": 0},
        }
    }
    batcher = registry.resolve(config)["batcher"]
    batches = list(batcher(tagged_examples({"quora": 4, "sts": 2})))
    assert sorted(names_of(batches)) == ["quora", "quora", "sts", "sts", "sts"]


def test_batch_by_dataset_errors():
    examples = tagged_examples({"quora": 4, "sts": 2})
    batcher = configure_batch_by_dataset(batcher=chunks(2), weights={"stsb": 2.0})
    with pytest.raises(ValueError, match="weights name dataset.*stsb.*its datasets: quora, sts"):
        list(batcher(examples))
    untagged = pair_examples(spacy.blank("en"))
    with pytest.raises(ValueError, match="have no dataset tag; read the corpus with spacy-siamese.MultiPairCorpus.v1"):
        list(configure_batch_by_dataset(batcher=chunks(2))(examples + untagged))
    with pytest.raises(ValueError, match='weights apply to schedule = "proportional" only'):
        list(configure_batch_by_dataset(batcher=chunks(2), schedule="round_robin", weights={"sts": 2.0})(examples))
    with pytest.raises(ValueError, match="schedule must be one of proportional, round_robin"):
        configure_batch_by_dataset(batcher=chunks(2), schedule="random")
    with pytest.raises(ValueError, match="a weight must be >= 0"):
        configure_batch_by_dataset(batcher=chunks(2), weights={"sts": -1.0})
    with pytest.raises(ValueError, match="a weight must be >= 0 and finite, got inf"):
        configure_batch_by_dataset(batcher=chunks(2), weights={"sts": float("inf")})  # was an OverflowError


def test_batch_by_dataset_refuses_weights_that_leave_no_batch():
    """With every weight 0 an epoch had no batch: spacy train (max_epochs = 0) waited forever in silence."""
    examples = tagged_examples({"quora": 4, "sts": 2})
    batcher = configure_batch_by_dataset(batcher=chunks(2), weights={"quora": 0.0, "sts": 0.0})
    with pytest.raises(ValueError, match=r"no batches: the weights give every dataset \(quora, sts\) 0 batches"):
        list(batcher(examples))
    assert names_of(configure_batch_by_dataset(batcher=chunks(2), weights={"quora": 0.0})(examples)) == ["sts"]
