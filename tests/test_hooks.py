"""Doc, Span and Token hooks: symmetry, docs the pipe never saw, and persistence round trips."""

import gc
import pickle
import warnings

import numpy
import pytest
import spacy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin

from spacy_siamese.hooks import LostHooksWarning, docs_from_docbin, hooked_docs, pipe_for, restore_hooks
from spacy_siamese.vectors import VECTOR_KEY, stored_vector

from .conftest import PAIRS, cauchy_reference, make_nlp, train
from .test_component import TEXTS, vectors_nlp

MIXING = "two different siamese_similarity models"


@pytest.fixture(scope="module")
def other_nlp():
    """A second model: its docs must never be compared with those of `nlp`."""
    return train(make_nlp(), n_iter=2)[0]


@pytest.fixture(scope="module")
def vec_nlp():
    """A trained pipe whose vocab has static vectors as wide as its learned vectors, so spaCy's
    own word-vector similarity gives a plausible number instead of a shape error."""
    return train(vectors_nlp(width=8, vector_width=16), n_iter=20)[0]


# -- tokens ---------------------------------------------------------------------


def test_token_similarity_is_learned_and_symmetric(nlp):
    a, b = nlp(TEXTS[0]), nlp(TEXTS[10])
    token = a[4]
    assert token.text == "Python"
    sim = token.similarity(b)
    assert sim == b.similarity(token)
    assert sim == pytest.approx(nlp("Python").similarity(b), abs=1e-6)
    assert token.similarity(b[0:3]) == b[0:3].similarity(token)
    assert token.similarity(b[2]) == b[2].similarity(token)
    assert sim == pytest.approx(cauchy_reference(nlp, token, b), rel=1e-5)


def test_token_path_detects_two_models(nlp, other_nlp):
    a, b = nlp(TEXTS[0]), other_nlp(TEXTS[10])
    for left, right in [(a[0], b), (b, a[0]), (a[0], b[0]), (a[0:2], b[1]), (b[1], a[0:2])]:
        with pytest.raises(ValueError, match=MIXING):
            left.similarity(right)


# -- docs the pipe never processed ------------------------------------------------


def test_processed_side_encodes_a_doc_it_never_saw(nlp):
    doc = nlp(TEXTS[0])
    blank = nlp.make_doc(TEXTS[10])
    assert doc.similarity(blank) == pytest.approx(doc.similarity(nlp(TEXTS[10])), abs=1e-6)
    assert doc[0:3].similarity(blank) == pytest.approx(doc[0:3].similarity(nlp(TEXTS[10])), abs=1e-6)


def test_unprocessed_side_fails_clearly_when_the_vocab_has_vectors(vec_nlp):
    """spaCy's own similarity of a doc the pipe never saw would compare its word-vector average
    with the learned vector (a plausible wrong number when the widths agree): it must raise."""
    hooked = vec_nlp(TEXTS[0])
    assert len(hooked.vector) == vec_nlp.vocab.vectors.shape[1]
    blank = vec_nlp.make_doc(TEXTS[10])
    for unprocessed in (blank, blank[0:3], blank[2]):
        with pytest.raises(ValueError, match="not processed by"):
            unprocessed.similarity(hooked)
    with pytest.raises(ValueError, match=r"numpy.linalg.norm"):
        _ = hooked.vector_norm


def test_unprocessed_side_without_word_vectors_is_spacys_zero_with_a_warning(nlp):
    """The known limit: with no word vectors spaCy answers 0.0 before looking at the other doc;
    the package cannot reach that code, spaCy warns (W007/W008)."""
    hooked = nlp(TEXTS[0])
    blank = nlp.make_doc(TEXTS[10])
    with pytest.warns(UserWarning, match=r"W00[78]"):
        assert blank.similarity(hooked) == 0.0


# -- spans turned into docs, docs changed after processing ------------------------


def test_span_as_doc_answers_for_the_span(nlp):
    a, b = nlp(TEXTS[0]), nlp(TEXTS[10])
    span = a[0:4]
    expected = span.similarity(b)
    assert span.as_doc().similarity(b) == pytest.approx(expected, abs=1e-6)
    # the copied user data holds the whole doc's vector: it must not be used for the span
    assert span.as_doc(copy_user_data=True).similarity(b) == pytest.approx(expected, abs=1e-6)
    assert b.similarity(span.as_doc(copy_user_data=True)) == pytest.approx(expected, abs=1e-6)


def test_doc_changed_after_processing_is_encoded_again(nlp):
    pipe = nlp.get_pipe("siamese_similarity")
    doc = nlp(TEXTS[0])
    before = doc.vector.copy()
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[0:2])
    assert stored_vector(doc, pipe.model_id) is None
    words = Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    numpy.testing.assert_allclose(doc.vector, pipe.predict([words])[0], atol=1e-6)
    assert not numpy.allclose(doc.vector, before)


# -- docs that lost their hooks ---------------------------------------------------


def _serialized(docs):
    return DocBin(docs=docs, store_user_data=True).to_bytes()


def test_docbin_without_restore_warns(vec_nlp):
    docs = list(vec_nlp.pipe(TEXTS[:3]))
    with pytest.warns(LostHooksWarning, match="docs_from_docbin"):
        restored = list(DocBin().from_bytes(_serialized(docs)).get_docs(vec_nlp.vocab))
    assert not restored[0].user_hooks
    assert restore_hooks(restored) == 3
    assert restored[0].similarity(restored[1]) == docs[0].similarity(docs[1])


@pytest.mark.filterwarnings("ignore:.*W109")
def test_doc_from_bytes_without_restore_warns(vec_nlp):
    data = vec_nlp(TEXTS[0]).to_bytes()
    with pytest.warns(LostHooksWarning):
        Doc(vec_nlp.vocab).from_bytes(data)


def test_docs_from_docbin_restores_without_warning(vec_nlp):
    docs = list(vec_nlp.pipe(TEXTS[:4]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = list(docs_from_docbin(DocBin().from_bytes(_serialized(docs)), vec_nlp.vocab))
    assert [d.text for d in restored] == TEXTS[:4]
    assert restored[0].similarity(restored[1]) == docs[0].similarity(docs[1])
    assert restored[2].similarity(docs[3]) == docs[2].similarity(docs[3])
    numpy.testing.assert_array_equal(restored[2].vector, docs[2].vector)


def test_n_process_with_hooked_docs(nlp):
    single = [d.vector.copy() for d in nlp.pipe(TEXTS)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LostHooksWarning)
        docs = list(hooked_docs(nlp.pipe(TEXTS, n_process=2, batch_size=4)))
    numpy.testing.assert_allclose([d.vector for d in docs], single, atol=1e-5)
    assert docs[0].similarity(docs[10]) == pytest.approx(nlp(TEXTS[0]).similarity(nlp(TEXTS[10])), abs=1e-6)


def test_hooked_docs_with_as_tuples_and_n_process(nlp):
    """The (doc, context) pairs of nlp.pipe(..., as_tuples=True) are restored and passed on as pairs."""
    pairs = [(text, i) for i, text in enumerate(TEXTS[:4])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LostHooksWarning)
        out = list(hooked_docs(nlp.pipe(pairs, as_tuples=True, n_process=2, batch_size=2)))
    assert [context for _, context in out] == [0, 1, 2, 3]
    assert out[0][0].similarity(out[2][0]) == pytest.approx(nlp(TEXTS[0]).similarity(nlp(TEXTS[2])), abs=1e-6)


def test_restore_hooks_names_what_is_not_a_doc_and_hooked_docs_does_not_stop_at_none(nlp):
    doc = nlp(TEXTS[0])
    for bad in (["a text"], doc[0:2], [(doc, 0)]):
        with pytest.raises(TypeError, match="restore_hooks takes Doc objects, got"):
            restore_hooks(bad)
    with pytest.raises(TypeError, match="got NoneType"):
        list(hooked_docs([doc, None, doc]))  # not a silent end of the stream


def test_pickled_doc_keeps_its_hooks_and_is_light(nlp):
    doc = nlp(TEXTS[0])
    data = pickle.dumps(doc)
    bare = doc.copy()
    bare.user_hooks.clear()
    bare.user_span_hooks.clear()
    bare.user_token_hooks.clear()
    assert len(data) < len(pickle.dumps(bare)) + 1000  # the hooks do not drag the model along
    doc2 = pickle.loads(data)
    assert doc2.similarity(nlp(TEXTS[10])) == doc.similarity(nlp(TEXTS[10]))
    assert doc2[0].similarity(doc) == doc[0].similarity(doc)


def _doc_of_a_model_then_unloaded():
    """(model id, vector, DocBin bytes) of a doc of a model that is gone when this returns."""
    model = train(make_nlp(), n_iter=2)[0]
    doc = model(TEXTS[0])
    return model.get_pipe("siamese_similarity").model_id, doc.vector.copy(), _serialized([doc])


def test_vector_of_a_model_not_loaded_still_reads():
    model_id, vector, data = _doc_of_a_model_then_unloaded()
    gc.collect()
    with pytest.raises(RuntimeError, match="not loaded in this process"):
        pipe_for(model_id)  # the premise: no pipe of this model is left to encode the doc again
    restored = next(docs_from_docbin(DocBin().from_bytes(data), spacy.blank("en").vocab))
    assert VECTOR_KEY in restored.user_data
    numpy.testing.assert_array_equal(restored.vector, vector)
    with pytest.raises(RuntimeError, match="not loaded in this process"):
        restored.similarity(restored)


# -- property: round trips keep the similarity --------------------------------------


@pytest.fixture(scope="module")
def loaded(nlp, tmp_path_factory):
    path = tmp_path_factory.mktemp("hooks") / "model"
    nlp.to_disk(path)
    return spacy.load(path)


def _round_trip(kind, docs, nlp, loaded):
    if kind == "docbin":
        return list(docs_from_docbin(DocBin().from_bytes(_serialized(docs)), nlp.vocab))
    if kind == "bytes":
        return list(hooked_docs(Doc(nlp.vocab).from_bytes(doc.to_bytes()) for doc in docs))
    if kind == "pickle":
        return pickle.loads(pickle.dumps(docs))
    if kind == "restore":
        copies = [doc.copy() for doc in docs]
        for doc in copies:
            doc.user_hooks.clear()
        restore_hooks(copies)
        return copies
    assert kind == "disk"
    return [loaded(doc.text) for doc in docs]


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30) | st.sampled_from(
    [p[0] for p in PAIRS] + ["", " ", "\n\t"]
)


def _check_round_trip(nlp, loaded, a, b, kind):
    low, high = nlp.get_pipe("siamese_similarity").score_range
    docs = [nlp(a), nlp(b)]
    expected = docs[0].similarity(docs[1])
    new = _round_trip(kind, docs, nlp, loaded)
    for x, y in [(new[0], new[1]), (new[0], docs[1]), (docs[0], new[1])]:
        sim = x.similarity(y)
        assert sim == y.similarity(x)
        assert numpy.isfinite(sim) and low <= sim <= high
        assert sim == pytest.approx(expected, abs=1e-6)
    assert new[0].similarity(new[0]) == pytest.approx(high, abs=1e-6)


KINDS = st.sampled_from(["docbin", "bytes", "pickle", "restore", "disk"])


@pytest.mark.filterwarnings("ignore:.*W109")
@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=TEXT, b=TEXT, kind=KINDS)
def test_round_trips_keep_similarity_symmetric_finite_and_in_range(nlp, loaded, a, b, kind):
    _check_round_trip(nlp, loaded, a, b, kind)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*W109")
@settings(max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=TEXT, b=TEXT, kind=KINDS)
def test_round_trips_keep_similarity_long(nlp, loaded, a, b, kind):
    _check_round_trip(nlp, loaded, a, b, kind)
