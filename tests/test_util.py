"""Small helpers: graph components, progress bars, optional extras, batches by tokens."""

import io
import json

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacy_siamese.util import (
    check_n_process,
    component_labels,
    distinct_pair_texts,
    distinct_texts,
    import_extra,
    pair_rows,
    show_progress,
    token_batches,
)


def reference_components(n, edges):
    """Components by a plain union-find, as sets of nodes."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in edges:
        parent[find(i)] = find(j)
    groups = {}
    for i in range(n):
        groups.setdefault(find(i), set()).add(i)
    return sorted(map(frozenset, groups.values()), key=min)


def components(labels):
    groups = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, set()).add(i)
    return sorted(map(frozenset, groups.values()), key=min)


def test_component_labels_of_a_hand_made_graph():
    # 0-1-2 a path (one edge given backwards), 3 alone, 4-5 twice, 6 with a self-loop
    labels = component_labels(7, [0, 2, 4, 5, 6], [1, 1, 5, 4, 6])
    assert labels.shape == (7,)
    assert components(labels) == [{0, 1, 2}, {3}, {4, 5}, {6}]
    assert sorted(set(labels.tolist())) == [0, 1, 2, 3]
    numpy.testing.assert_array_equal(component_labels(3, [], []), component_labels(3, numpy.array([]), numpy.array([])))
    assert components(component_labels(3, [], [])) == [{0}, {1}, {2}]


@given(
    st.integers(min_value=1, max_value=25).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40))
    )
)
def test_component_labels_match_a_union_find(graph):
    n, edges = graph
    labels = component_labels(n, [i for i, _ in edges], [j for _, j in edges])
    found = components(labels)
    assert found == reference_components(n, edges)
    assert sorted(set(labels.tolist())) == list(range(len(found)))  # labels 0, 1, ...


def test_show_progress(monkeypatch):
    assert show_progress(False) is False
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal
    assert show_progress(True) is False

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stderr", Terminal())
    assert show_progress(True) is True and show_progress(False) is False


def test_import_extra():
    assert import_extra("json", "extra", "Reading JSON") is json
    with pytest.raises(ImportError, match=r"The frobnicator needs no_such_module_xyz: .*spacy-siamese\[extra\]"):
        import_extra("no_such_module_xyz.sub", "extra", "The frobnicator")


@given(st.lists(st.integers(0, 30)), st.integers(1, 40))
def test_token_batches_keep_order_and_bound_each_batch(lengths, max_tokens):
    items = [[0] * n for n in lengths]
    batches = list(token_batches(items, max_tokens))
    assert [item for batch in batches for item in batch] == items
    assert all(batch for batch in batches)
    for batch, following in zip(batches, batches[1:] + [None]):
        assert sum(map(len, batch)) <= max_tokens or len(batch) == 1
        if following is not None:  # a batch ends only when the next item would not fit
            assert sum(map(len, batch)) + len(following[0]) > max_tokens


@pytest.mark.parametrize("n_process", [-1, 1, 2])
def test_check_n_process_takes_what_nlp_pipe_runs(n_process):
    assert check_n_process(n_process) == n_process


@pytest.mark.parametrize("n_process", [0, -2])
def test_check_n_process_refuses_what_fails_inside_spacy(n_process):
    with pytest.raises(
        ValueError, match=rf"n_process must be -1 \(one process per CPU core\) or at least 1, got {n_process}"
    ):
        check_n_process(n_process)


def test_distinct_texts():
    assert distinct_texts(["a", " ", "b", "a", ""]) == ["a", "b"]
    assert distinct_texts(["a", " ", "b", "a", ""], keep_blank=True) == ["a", " ", "b", ""]


@given(st.lists(st.sampled_from(["a", "b", "c", "", " ", "\t"]), max_size=20), st.booleans())
def test_distinct_texts_keep_each_first_occurrence_in_order(texts, keep_blank):
    kept = distinct_texts(texts, keep_blank=keep_blank)
    assert len(kept) == len(set(kept))
    assert sorted(kept, key=texts.index) == kept
    assert set(kept) == {t for t in texts if keep_blank or t.strip()}


def test_distinct_pair_texts_and_their_rows():
    pairs = [("a", "b", 1.0), ("b", "c", 0.0), ("a", "a", 1.0), (" ", "a", 0.0)]
    texts = distinct_pair_texts(pairs)
    assert texts == ["a", "b", "c", " "]
    a, b = pair_rows(texts, pairs)
    assert a.dtype == b.dtype == numpy.int64
    assert [(texts[i], texts[j]) for i, j in zip(a, b)] == [pair[:2] for pair in pairs]
    assert [len(rows) for rows in pair_rows(texts, [])] == [0, 0]
    with pytest.raises(KeyError):
        pair_rows(["a"], [("a", "z")])


SIDES = st.sampled_from(["a", "b", "c", "", " "])


@given(st.lists(st.tuples(SIDES, SIDES), max_size=20))
def test_pair_rows_gather_each_pair_from_its_distinct_texts(pairs):
    texts = distinct_pair_texts(pairs)
    assert texts == distinct_texts([side for pair in pairs for side in pair], keep_blank=True)
    a, b = pair_rows(texts, pairs)
    assert [(texts[i], texts[j]) for i, j in zip(a, b)] == pairs
