import pickle

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_siamese import restore_hooks
from spacy_siamese.hooks import VECTOR_KEY, pipe_for

from .conftest import PAIRS, SMALL_MODEL, make_nlp, pair_examples, train

TEXTS = [p[0] for p in PAIRS] + [p[1] for p in PAIRS]


def sims(nlp, texts=TEXTS):
    docs = list(nlp.pipe(texts))
    return numpy.array([[a.similarity(b) for b in docs] for a in docs])


def test_overfits_tiny_pair_set(trained):
    nlp, losses = trained
    assert losses["siamese_similarity"] < 0.05
    scores = nlp.evaluate(pair_examples(nlp))
    assert scores["sim_acc"] == 1.0
    assert scores["sim_auc"] == 1.0
    for a, b, label in PAIRS:
        sim = nlp(a).similarity(nlp(b))
        assert (sim >= 0.5) == bool(label), (a, b, sim)


def test_similarity_is_symmetric_and_bounded(nlp):
    matrix = sims(nlp)
    assert numpy.array_equal(matrix, matrix.T)
    assert numpy.all(matrix > 0) and numpy.all(matrix <= 1)
    doc = nlp(TEXTS[0])
    assert doc.similarity(doc) == pytest.approx(1.0)


def test_doc_vector_and_has_vector(nlp):
    doc = nlp("How do I learn Python fast?")
    assert doc.has_vector
    assert doc.vector.shape == (64,)  # mean + max of width 32
    assert doc.vector.dtype == numpy.float32
    assert doc.user_data[VECTOR_KEY]["model"] == nlp.get_pipe("siamese_similarity").model_id


def test_span_similarity(nlp):
    a, b = nlp("How do I learn Python fast?"), nlp("What is the quickest way to learn Python?")
    span = a[0:4]
    sim = span.similarity(b)
    assert 0 < sim <= 1
    assert sim == b.similarity(span)
    assert span.has_vector and span.vector.shape == (64,)
    # a span covering the whole doc is the doc
    assert a[:].similarity(b) == a.similarity(b)
    # a span is encoded as its own text
    assert span.similarity(b) == pytest.approx(nlp(span.text).similarity(b), abs=1e-6)
    # tokens compare as one-token spans
    assert 0 < b.similarity(a[3]) <= 1


@pytest.mark.parametrize("text", ["", " ", "   \n\t ", "\n"])
def test_empty_and_whitespace_docs(nlp, text):
    doc = nlp(text)
    other = nlp("What is the meaning of love?")
    assert numpy.all(numpy.isfinite(doc.vector))
    sim = doc.similarity(other)
    assert 0 < sim <= 1 and sim == other.similarity(doc)
    assert doc.similarity(nlp(text)) == pytest.approx(1.0)


def test_empty_docs_in_a_mixed_batch(nlp):
    texts = ["", "What is love?", " ", "", "Why is the sky blue?"]
    batched = [d.vector for d in nlp.pipe(texts, batch_size=5)]
    single = [nlp(t).vector for t in texts]
    numpy.testing.assert_allclose(batched, single, atol=1e-5)
    numpy.testing.assert_array_equal(batched[0], batched[3])  # every empty doc gets the same vector


def test_long_doc(nlp):
    doc = nlp("word " * 20000 + "end")
    assert len(doc) > 20000
    assert numpy.all(numpy.isfinite(doc.vector))
    assert 0 < doc.similarity(nlp("a short question?")) <= 1


def test_unknown_words(nlp):
    doc = nlp("Zxqvb flurmpt gnarfle wibbleton?")
    assert 0 < doc.similarity(nlp("How do I learn Python fast?")) <= 1


def test_batched_equals_unbatched(nlp):
    batched = numpy.array([d.vector for d in nlp.pipe(TEXTS, batch_size=7)])
    single = numpy.array([nlp(t).vector for t in TEXTS])
    numpy.testing.assert_allclose(batched, single, atol=1e-5)


def test_to_disk_and_spacy_load(nlp, tmp_path):
    nlp.to_disk(tmp_path / "model")
    nlp2 = spacy.load(tmp_path / "model")
    assert nlp2.get_pipe("siamese_similarity").threshold == nlp.get_pipe("siamese_similarity").threshold
    numpy.testing.assert_allclose(sims(nlp2), sims(nlp), atol=1e-6)


def test_to_bytes_and_from_bytes(nlp):
    nlp2 = spacy.util.load_model_from_config(nlp.config, auto_fill=True)
    nlp2.from_bytes(nlp.to_bytes())
    numpy.testing.assert_allclose(sims(nlp2), sims(nlp), atol=1e-6)


def test_docbin_keeps_vector(nlp):
    docs = list(nlp.pipe(TEXTS[:4]))
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    restored = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    for old, new in zip(docs, restored):
        numpy.testing.assert_array_equal(old.user_data[VECTOR_KEY]["vector"], new.user_data[VECTOR_KEY]["vector"])
    assert restore_hooks(restored) == 4
    assert restored[0].similarity(restored[1]) == docs[0].similarity(docs[1])
    numpy.testing.assert_array_equal(restored[2].vector, docs[2].vector)


def test_doc_to_bytes_keeps_vector(nlp):
    doc = nlp(TEXTS[0])
    new = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    restore_hooks(new)
    assert new.similarity(nlp(TEXTS[1])) == doc.similarity(nlp(TEXTS[1]))


def test_n_process_keeps_vector(nlp):
    single = [d.vector.copy() for d in nlp.pipe(TEXTS)]
    docs = list(nlp.pipe(TEXTS, n_process=2, batch_size=4))
    restore_hooks(docs)
    numpy.testing.assert_allclose([d.vector for d in docs], single, atol=1e-5)
    assert docs[0].similarity(docs[1]) == pytest.approx(nlp(TEXTS[0]).similarity(nlp(TEXTS[1])), abs=1e-6)


def test_pickled_doc_is_light_and_works(nlp):
    doc = nlp(TEXTS[0])
    data = pickle.dumps(doc)
    bare = doc.copy()
    bare.user_hooks.clear()
    bare.user_span_hooks.clear()
    assert len(data) < len(pickle.dumps(bare)) + 1000  # the hooks do not drag the model along
    doc2 = pickle.loads(data)
    assert doc2.similarity(nlp(TEXTS[1])) == doc.similarity(nlp(TEXTS[1]))


def test_two_models_do_not_mix(nlp):
    other, _ = train(make_nlp(), n_iter=2)
    a, b = nlp(TEXTS[0]), other(TEXTS[1])
    with pytest.raises(ValueError, match="two different siamese_similarity models"):
        a.similarity(b)
    with pytest.raises(ValueError, match="two different siamese_similarity models"):
        b.similarity(a)
    with pytest.raises(ValueError, match="two different siamese_similarity models"):
        a[0:2].similarity(b)


def test_doc_from_another_pipeline_is_encoded(nlp):
    foreign = spacy.blank("en")("What is the quickest way to learn Python?")
    doc = nlp("How do I learn Python fast?")
    expected = doc.similarity(nlp(foreign.text))
    assert doc.similarity(foreign) == pytest.approx(expected, abs=1e-6)
    assert VECTOR_KEY not in foreign.user_data  # the foreign doc is not modified


def test_doc_from_another_pipeline_refused_when_asked():
    nlp, _ = train(make_nlp(on_unknown="error"), n_iter=2)
    foreign = spacy.blank("en")("What is love?")
    with pytest.raises(ValueError, match="not processed by"):
        nlp("Why is the sky blue?").similarity(foreign)


def test_untrained_pipe_raises_clear_error():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="not initialized"):
        nlp("Hello world")


def test_bare_initialize_without_pairs_works():
    nlp = make_nlp()
    nlp.initialize()
    a, b = nlp("Hello world"), nlp("Goodbye")
    assert 0 < a.similarity(b) <= 1


def test_initialize_with_static_vectors_but_none_loaded():
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": {"include_static_vectors": True}}})
    with pytest.raises(ValueError, match="no word vectors"):
        nlp.initialize()


def test_update_rejects_examples_that_are_not_pairs():
    nlp = make_nlp()
    nlp.initialize()
    from spacy.training import Example

    eg = Example.from_dict(nlp.make_doc("just one text"), {})
    with pytest.raises(ValueError, match="not a labelled pair"):
        nlp.update([eg])


def test_corrupt_model_directory(nlp, tmp_path):
    path = tmp_path / "model"
    nlp.to_disk(path)
    (path / "siamese_similarity" / "model").write_bytes(b"this is not a model")
    with pytest.raises(ValueError, match="Could not load the 'siamese_similarity' pipe"):
        spacy.load(path)


def test_model_not_loaded_in_process():
    with pytest.raises(RuntimeError, match="not loaded in this process"):
        pipe_for("no-such-model-id")


def test_threshold_tuned_during_training_but_not_after_loading(nlp, tmp_path):
    nlp2, _ = train(make_nlp(), n_iter=30)
    pipe = nlp2.get_pipe("siamese_similarity")
    examples = pair_examples(nlp2)
    scores = nlp2.evaluate(examples)
    assert scores["sim_threshold"] == pipe.threshold
    tuned = pipe.threshold
    nlp2.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    lpipe = loaded.get_pipe("siamese_similarity")
    lpipe.cfg["threshold"] = 0.123
    assert loaded.evaluate(pair_examples(loaded))["sim_threshold"] == 0.123
    assert tuned != 0.123


def test_feature_head_comparison_trains_and_is_symmetric():
    nlp, losses = train(
        make_nlp(comparison={"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 32}), n_iter=100
    )
    assert losses["siamese_similarity"] < 0.1
    matrix = sims(nlp)
    assert numpy.array_equal(matrix, matrix.T)


def test_projection_before_cauchy_widens_the_vector_and_trains():
    nlp = spacy.blank("en")
    encoder = {**SMALL_MODEL["model"]["encoder"], "proj_width": 48}
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder}})
    nlp, losses = train(nlp, n_iter=100)
    assert losses["siamese_similarity"] < 0.1
    assert nlp("How do I learn Python fast?").vector.shape == (48,)
    matrix = sims(nlp)
    assert numpy.array_equal(matrix, matrix.T)


AUXILIARY = {
    "@architectures": "spacy-siamese.WithAuxiliary.v1",
    "main": {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
    "auxiliary": {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 32},
    "weight": 0.5,
}


def test_auxiliary_head_with_bare_initialize():
    nlp = make_nlp(comparison=AUXILIARY)
    nlp.initialize()
    assert 0 < nlp("a b").similarity(nlp("a c")) <= 1


def _assert_fits_and_scores_with_cauchy_alone(nlp, get_cauchy, tmp_path):
    """The trained pipe fits PAIRS, doc.similarity is the Cauchy layer's score alone, the
    similarity matrix is symmetric, and it survives to_disk -> spacy.load."""
    assert nlp.evaluate(pair_examples(nlp))["sim_acc"] == 1.0
    pipe = nlp.get_pipe("siamese_similarity")
    a, b = nlp(TEXTS[0]), nlp(TEXTS[1])
    cauchy = get_cauchy(pipe.comparison).predict((a.vector[None, :], b.vector[None, :]))
    assert a.similarity(b) == pytest.approx(float(cauchy[0, 0]))
    matrix = sims(nlp)
    assert numpy.array_equal(matrix, matrix.T)
    nlp.to_disk(tmp_path / "m")
    numpy.testing.assert_array_equal(sims(spacy.load(tmp_path / "m")), matrix)


def test_auxiliary_head_trains_the_encoder_and_cauchy_scores_alone(tmp_path):
    nlp, losses = train(make_nlp(comparison=AUXILIARY), n_iter=100)
    assert losses["siamese_similarity"] < 0.1  # both heads fit
    _assert_fits_and_scores_with_cauchy_alone(nlp, lambda comparison: comparison.get_ref("main"), tmp_path)


def test_graded_labels_with_squared_error():
    pairs = [(a, b, 0.8 if y else 0.1) for a, b, y in PAIRS]
    nlp, losses = train(make_nlp(loss={"@losses": "spacy-siamese.SquaredError.v1"}), n_iter=60, pairs=pairs)
    scores = nlp.evaluate(pair_examples(nlp, pairs))
    assert scores["sim_pearson"] > 0.9
    assert scores["sim_auc"] is None  # ranking metrics need binary labels


def test_invalid_settings():
    with pytest.raises(ValueError, match="on_unknown"):
        make_nlp(on_unknown="ignore")
    with pytest.raises(ValueError, match="threshold"):
        make_nlp(threshold=1.5)


def test_fine_tuning_a_loaded_pipe_gives_it_a_new_identity(nlp, tmp_path):
    nlp.to_disk(tmp_path / "m")
    tuned = spacy.load(tmp_path / "m")
    pipe = tuned.get_pipe("siamese_similarity")
    before = tuned(TEXTS[0])
    assert pipe.model_id == nlp.get_pipe("siamese_similarity").model_id
    tuned.update(pair_examples(tuned), sgd=tuned.resume_training())
    assert pipe.model_id != nlp.get_pipe("siamese_similarity").model_id
    with pytest.raises(ValueError, match="two different siamese_similarity models"):
        before.similarity(tuned(TEXTS[1]))


TRAIN_CALIBRATED = {
    "@architectures": "spacy-siamese.TrainCalibrated.v1",
    "comparison": {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
}


def test_train_calibrated_with_bare_initialize():
    comparison = dict(AUXILIARY, main=TRAIN_CALIBRATED)
    nlp = make_nlp(comparison=comparison)
    nlp.initialize()
    assert 0 < nlp("a b").similarity(nlp("a c")) <= 1


def test_train_calibrated_cauchy_trains_and_predicts_the_raw_cauchy_score(tmp_path):
    nlp, losses = train(make_nlp(comparison=TRAIN_CALIBRATED), n_iter=100)
    _assert_fits_and_scores_with_cauchy_alone(nlp, lambda comparison: comparison.layers[0], tmp_path)


def test_numpy_blas_callback(tmp_path):
    config = make_nlp().config.copy()
    config["nlp"]["after_pipeline_creation"] = {"@callbacks": "spacy-siamese.numpy_blas.v1"}
    nlp, _ = train(spacy.util.load_model_from_config(config), n_iter=20)
    nodes = list(nlp.get_pipe("siamese_similarity").model.walk())
    assert all(node.ops.use_blis is False for node in nodes)
    # the same weights under Thinc's default ops give the same similarities, up to rounding
    blis = make_nlp()
    blis.initialize(lambda: pair_examples(blis))
    blis.get_pipe("siamese_similarity").from_bytes(nlp.get_pipe("siamese_similarity").to_bytes())
    assert all(node.ops.use_blis for node in blis.get_pipe("siamese_similarity").model.walk())
    numpy.testing.assert_allclose(sims(nlp), sims(blis), rtol=1e-4, atol=1e-6)
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    assert all(node.ops.use_blis is False for node in loaded.get_pipe("siamese_similarity").model.walk())
    numpy.testing.assert_array_equal(sims(loaded), sims(nlp))
