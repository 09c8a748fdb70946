import pytest

from spacy_siamese.corpora import DocRecord, sample_pairs, split_documents


def _docs():
    docs = [DocRecord(f"doc {i}", (f"l{i % 4}",), f"g{i % 2}", str(i)) for i in range(40)]
    docs.append(DocRecord("two labels", ("l0", "l1"), "g0", "40"))
    return docs


def test_sample_pairs_seeded_and_labelled():
    docs = _docs()
    pairs = sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=1)
    assert pairs == sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=1)
    assert pairs != sample_pairs(docs, n_pairs=200, positive_ratio=0.3, seed=2)
    assert sum(p.label for p in pairs) == 60
    for i, j, label in pairs:
        assert i != j
        assert bool(set(docs[i].labels) & set(docs[j].labels)) == (label == 1.0)
    hard = sample_pairs(docs, n_pairs=100, positive_ratio=0.0, hard_negative_ratio=1.0, seed=0)
    assert all(docs[i].group == docs[j].group for i, j, _ in hard)
    with pytest.raises(ValueError, match="no two documents share a label"):
        sample_pairs([DocRecord("a", ("x",)), DocRecord("b", ("y",))], n_pairs=2)
    with pytest.raises(ValueError, match="shares a label with every other document"):
        sample_pairs([DocRecord("a", ("x",)), DocRecord("b", ("x",))], n_pairs=2)
    with pytest.raises(ValueError, match="must be in"):
        sample_pairs(docs, n_pairs=2, positive_ratio=1.5)
    for n_pairs in (0, -5):  # not an empty corpus without a word
        with pytest.raises(ValueError, match=f"n_pairs must be >= 1, got {n_pairs}"):
            sample_pairs(docs, n_pairs=n_pairs)


def test_split_documents():
    docs = _docs()
    train, dev = split_documents(docs, dev_fraction=0.25, seed=3)
    assert (train, dev) == split_documents(docs, dev_fraction=0.25, seed=3)
    assert len(dev) == 10 and not {d.id for d in train} & {d.id for d in dev}
    assert len(train) + len(dev) == len(docs)
    with pytest.raises(ValueError, match="dev_fraction"):
        split_documents(docs, dev_fraction=1.0)
