import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.ml.models import MaxoutWindowEncoder, MultiHashEmbed, build_Tok2Vec_model
from spacy.tokens import Doc, DocBin
from thinc.api import Model, chain, list2ragged, reduce_mean

from spacy_siamese import hooks, make_pair_example, restore_hooks
from spacy_siamese.component import Verdict, get_lexical_weight, set_lexical_weight
from spacy_siamese.encoding import canonical_order
from spacy_siamese.labelled import labelled_doc_example
from spacy_siamese.layers.heads import predicting_head
from spacy_siamese.pair_examples import get_partner
from spacy_siamese.pairwise import vector_similarity_matrix
from spacy_siamese.space import vector_space
from spacy_siamese.vectors import VECTOR_KEY, stored_vector

from .conftest import (
    CONFIGS,
    PAIRS,
    SMALL_MODEL,
    cauchy_reference,
    config_pipeline,
    make_nlp,
    pair_examples,
    set_random_vectors,
    train,
)
from .search.conftest import COSINE_RAW, build_nlp, hybrid, hybrid_nlp

TEXTS = [p[0] for p in PAIRS] + [p[1] for p in PAIRS]


def sims(nlp, texts=TEXTS):
    docs = list(nlp.pipe(texts))
    return numpy.array([[a.similarity(b) for b in docs] for a in docs])


def vectors_nlp(*, width=16, vector_width=16, proj_width=0, static=True, comparison=None):
    """A blank pipeline with a tiny static vectors table over the words of PAIRS."""
    nlp = spacy.blank("en")
    set_random_vectors(nlp, sorted({t.text for text in TEXTS for t in nlp.make_doc(text)}), vector_width)
    encoder = {
        **SMALL_MODEL["model"]["encoder"],
        "width": width,
        "include_static_vectors": static,
        "proj_width": proj_width,
    }
    config = {"model": {"encoder": encoder}}
    if comparison is not None:
        config["model"]["comparison"] = comparison
    nlp.add_pipe("siamese_similarity", config=config)
    return nlp


def test_overfits_tiny_pair_set(trained):
    nlp, losses = trained
    assert losses["siamese_similarity"] < 0.05
    scores = nlp.evaluate(pair_examples(nlp))
    assert scores["sim_acc"] == 1.0
    assert scores["sim_auc"] == 1.0
    for a, b, label in PAIRS:
        sim = nlp(a).similarity(nlp(b))
        assert (sim >= 0.5) == bool(label), (a, b, sim)


def test_verdict_is_the_score_judged_at_the_pipes_threshold(nlp):
    pipe = nlp.get_pipe("siamese_similarity")
    a, b = nlp(TEXTS[0]), nlp(TEXTS[1])
    score = a.similarity(b)
    assert pipe.verdict(a, b) == Verdict(score, pipe.threshold, score >= pipe.threshold)
    assert pipe.verdict(a, b, threshold=score) == (score, score, True) and pipe.is_duplicate(a, b, threshold=score)
    assert not pipe.is_duplicate(a, b, threshold=score + 1e-3)
    assert pipe.is_duplicate(a, b) == (score >= pipe.threshold)


def test_similarity_is_symmetric_and_the_cauchy_formula(nlp):
    matrix = sims(nlp)
    assert numpy.array_equal(matrix, matrix.T)
    docs = list(nlp.pipe(TEXTS))
    expected = [[cauchy_reference(nlp, a, b) for b in docs] for a in docs]
    numpy.testing.assert_allclose(matrix, expected, rtol=1e-5)
    doc = nlp(TEXTS[0])
    assert doc.similarity(doc) == pytest.approx(1.0)


def test_doc_vector_and_has_vector(nlp):
    doc = nlp("How do I learn Python fast?")
    assert doc.has_vector
    assert doc.vector.shape == (64,)  # mean + max of width 32
    assert doc.vector.dtype == numpy.float32
    numpy.testing.assert_array_equal(stored_vector(doc, nlp.get_pipe("siamese_similarity").model_id), doc.vector)


def test_span_similarity(nlp):
    a, b = nlp("How do I learn Python fast?"), nlp("What is the quickest way to learn Python?")
    span = a[0:4]
    sim = span.similarity(b)
    assert sim == pytest.approx(cauchy_reference(nlp, span, b), rel=1e-5)
    assert sim == b.similarity(span)
    assert span.has_vector and span.vector.shape == (64,)
    # a span covering the whole doc is the doc
    assert a[:].similarity(b) == a.similarity(b)
    # a span is encoded as its own text
    assert span.similarity(b) == pytest.approx(nlp(span.text).similarity(b), abs=1e-6)
    # tokens compare as one-token spans
    assert b.similarity(a[3]) == pytest.approx(cauchy_reference(nlp, b, a[3]), rel=1e-5)


@pytest.mark.parametrize("text", ["", " ", "   \n\t ", "\n"])
def test_empty_and_whitespace_docs(nlp, text):
    doc = nlp(text)
    other = nlp("What is the meaning of love?")
    assert numpy.all(numpy.isfinite(doc.vector))
    sim = doc.similarity(other)
    assert sim == pytest.approx(cauchy_reference(nlp, doc, other), rel=1e-5) and sim == other.similarity(doc)
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
    short = nlp("a short question?")
    assert doc.similarity(short) == pytest.approx(cauchy_reference(nlp, doc, short), rel=1e-5)


def test_unknown_words(nlp):
    doc = nlp("Zxqvb flurmpt gnarfle wibbleton?")
    known = nlp("How do I learn Python fast?")
    assert doc.similarity(known) == pytest.approx(cauchy_reference(nlp, doc, known), rel=1e-5)
    assert not numpy.array_equal(doc.vector, nlp("Qwzzy blorptang snerfle wobbleton?").vector)


def test_a_batch_of_long_docs_is_encoded_a_few_tokens_at_a_time(nlp, monkeypatch):
    """The encoder runs on at most PREDICT_TOKENS tokens at once (a longer doc alone), in order,
    and the vectors are those of each doc alone, empty docs included."""
    from spacy_siamese import component

    pipe = nlp.get_pipe("siamese_similarity")
    texts = ["", "What is love?", "word " * 30, " ", "Why is the sky blue? " * 2, "", "a b c d e f g h i j k l"]
    docs = list(nlp.pipe(texts))
    single = numpy.vstack([pipe.predict([doc]) for doc in docs])
    monkeypatch.setattr(component, "PREDICT_TOKENS", 12)
    sizes = []
    encode = pipe._encode
    monkeypatch.setattr(pipe, "_encode", lambda batch: sizes.append([len(d) for d in batch]) or encode(batch))
    numpy.testing.assert_allclose(pipe.predict(docs), single, atol=1e-5)
    assert [n for batch in sizes for n in batch] == [len(d) for d in docs]
    assert all(sum(batch) <= 12 or len(batch) == 1 for batch in sizes)
    assert len(sizes) > 3


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
    with pytest.warns(hooks.LostHooksWarning):
        restored = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
    model_id = nlp.get_pipe("siamese_similarity").model_id
    for old, new in zip(docs, restored):
        numpy.testing.assert_array_equal(stored_vector(old, model_id), stored_vector(new, model_id))
    assert restore_hooks(restored) == 4
    assert restored[0].similarity(restored[1]) == docs[0].similarity(docs[1])
    numpy.testing.assert_array_equal(restored[2].vector, docs[2].vector)


@pytest.mark.filterwarnings("ignore:.*W109")
def test_doc_to_bytes_keeps_vector(nlp):
    doc = nlp(TEXTS[0])
    with pytest.warns(hooks.LostHooksWarning):
        new = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    restore_hooks(new)
    assert new.similarity(nlp(TEXTS[1])) == doc.similarity(nlp(TEXTS[1]))


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
    assert VECTOR_KEY not in foreign.user_data and not foreign.user_hooks  # not modified


def test_spans_and_foreign_docs_keep_the_norms_of_tokenizer_exceptions(nlp):
    """A doc rebuilt in the pipe's vocab (a span, a doc of another pipeline) keeps its token
    norms ("n't" -> "not"): the encoder reads NORM, so it is encoded as the same text processed."""
    text = "I don't know, can't you?"
    doc, ref = nlp(text), nlp("How do I learn Python fast?")
    assert doc[2].norm_ == "not"
    assert ref.similarity(spacy.blank("en")(text)) == pytest.approx(ref.similarity(doc), abs=1e-6)
    longer = nlp(text + " Really.")
    assert ref.similarity(longer[: len(doc)]) == pytest.approx(ref.similarity(doc), abs=1e-6)


def test_doc_from_another_pipeline_refused_when_asked():
    nlp, _ = train(make_nlp(on_unknown="error"), n_iter=2)
    foreign = spacy.blank("en")("What is love?")
    with pytest.raises(ValueError, match="not processed by"):
        nlp("Why is the sky blue?").similarity(foreign)


def test_untrained_pipe_raises_clear_error():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="not initialized"):
        nlp("Hello world")


def test_every_entry_point_of_an_untrained_pipe_names_the_cause():
    """Not Thinc's "Parameter 'v' ... has not been allocated yet" from deep inside the comparison."""
    nlp = make_nlp()
    pipe = nlp.get_pipe("siamese_similarity")
    width = pipe.encoder.get_dim("nO")
    doc = nlp.make_doc("Hello world")
    calls = [
        lambda: pipe.compare(numpy.zeros((1, width)), numpy.zeros((1, width))),
        lambda: pipe.similarity(doc, doc),
        lambda: pipe.similarity_matrix([doc]),
        lambda: pipe.encode(["Hello world"]),
        lambda: pipe.predict([doc]),
        lambda: list(nlp.pipe([("Hello world", 0)], as_tuples=True, batch_size=1)),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="'siamese_similarity' pipe is not initialized"):
            call()


def test_a_doc_of_another_vocab_is_encoded_as_its_words_in_the_pipes_vocab():
    """The pipe called on a doc of another pipeline (or nlp(doc)) reads this pipeline's static
    vectors, not the other vocab's (empty: an IndexError from inside the encoder)."""
    nlp, _ = train(vectors_nlp(), n_iter=2)
    text = "How do I learn Python fast?"
    expected = nlp(text).vector
    for call in (nlp, nlp.get_pipe("siamese_similarity")):
        foreign = spacy.blank("en").make_doc(text)
        numpy.testing.assert_allclose(call(foreign).vector, expected, atol=1e-6)
        assert foreign.similarity(nlp(text)) == pytest.approx(1.0)


def test_bare_initialize_without_pairs_works():
    nlp = make_nlp()
    nlp.initialize()
    a, b = nlp("Hello world"), nlp("Goodbye")
    assert a.similarity(b) == pytest.approx(cauchy_reference(nlp, a, b), rel=1e-5) and a.similarity(b) < 1


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
    a, b = nlp("a b"), nlp("a c")
    assert a.similarity(b) == pytest.approx(cauchy_reference(nlp, a, b), rel=1e-5)


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
    nlp, _ = train(make_nlp(loss={"@losses": "spacy-siamese.SquaredError.v1"}), n_iter=60, pairs=pairs)
    scores = nlp.evaluate(pair_examples(nlp, pairs))
    assert scores["sim_pearson"] > 0.9
    assert scores["sim_auc"] is None  # ranking metrics need binary labels


TRAIN_CALIBRATED = {
    "@architectures": "spacy-siamese.TrainCalibrated.v1",
    "comparison": {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
}


def test_train_calibrated_with_bare_initialize():
    comparison = dict(AUXILIARY, main=TRAIN_CALIBRATED)
    nlp = make_nlp(comparison=comparison)
    nlp.initialize()
    a, b = nlp("a b"), nlp("a c")
    assert a.similarity(b) == pytest.approx(cauchy_reference(nlp, a, b), rel=1e-5)


def test_train_calibrated_cauchy_trains_and_predicts_the_raw_cauchy_score(tmp_path):
    nlp, _ = train(make_nlp(comparison=TRAIN_CALIBRATED), n_iter=100)
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


# -- issue 14 -------------------------------------------------------------------------


def test_non_finite_loss_stops_the_update_and_keeps_the_weights():
    nlp, _ = train(make_nlp(), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    weights = pipe.model.to_bytes()
    pipe.loss = lambda scores, labels: (scores * numpy.nan, float("nan"))
    with pytest.raises(ValueError, match=r"'siamese_similarity'.*nan"):
        nlp.update(pair_examples(nlp), sgd=nlp.create_optimizer())
    assert pipe.model.to_bytes() == weights


def test_non_finite_weights_are_refused():
    nlp, _ = train(make_nlp(), n_iter=2)
    model = nlp.get_pipe("siamese_similarity").model
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                node.set_param(name, node.get_param(name) * numpy.nan)
    with pytest.raises(ValueError, match="not finite"):
        nlp("How are you?")


COSINE = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": False}
COSINE_RESCALED = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True}
FEATURE_HEAD = {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 16}
CAUCHY = {"@architectures": "spacy-siamese.CauchySimilarity.v1"}
COMPARISONS = {
    "cauchy": (CAUCHY, (0.0, 1.0)),
    "cosine": (COSINE, (-1.0, 1.0)),
    "cosine_rescaled": (COSINE_RESCALED, (0.0, 1.0)),
    "feature_head": (FEATURE_HEAD, (0.0, 1.0)),
    "auxiliary_cosine": (dict(AUXILIARY, main=COSINE), (-1.0, 1.0)),
    "calibrated_cauchy": (dict(AUXILIARY, main=TRAIN_CALIBRATED), (0.0, 1.0)),
}


@pytest.mark.parametrize("name", COMPARISONS)
def test_score_range_per_comparison(name):
    comparison, expected = COMPARISONS[name]
    assert make_nlp(comparison=comparison).get_pipe("siamese_similarity").score_range == expected


def test_two_similarity_pipes_in_one_pipeline():
    """Each pipe keeps its own vector; doc.similarity is answered by the last one."""
    nlp = spacy.blank("en")
    encoder = dict(SMALL_MODEL["model"]["encoder"])
    nlp.add_pipe("siamese_similarity", name="sim_a", config={"model": {"encoder": encoder}})
    nlp.add_pipe(
        "siamese_similarity", name="sim_b", config={"model": {"encoder": encoder, "comparison": COSINE_RESCALED}}
    )
    nlp, _ = train(nlp, n_iter=30)
    scores = nlp.evaluate(pair_examples(nlp), per_component=True)
    assert set(scores) >= {"sim_a", "sim_b"}
    assert scores["sim_a"]["sim_acc"] == 1.0
    pipe_a, pipe_b = nlp.get_pipe("sim_a"), nlp.get_pipe("sim_b")
    a, b = nlp(TEXTS[0]), nlp(TEXTS[10])
    fresh_a = pipe_a.predict([nlp.make_doc(TEXTS[0])])[0]
    numpy.testing.assert_allclose(stored_vector(a, pipe_a.model_id), fresh_a, atol=1e-6)
    assert a.similarity(b) == pipe_b.similarity(a, b) == b.similarity(a)
    assert pipe_a.similarity(a, b) != pipe_b.similarity(a, b)
    numpy.testing.assert_array_equal(a.vector, stored_vector(a, pipe_b.model_id))


def test_evaluate_reports_tuned_figures_on_an_explicit_switch_and_tune_thresholds_stores_them():
    nlp, _ = train(make_nlp(), n_iter=30)
    pipe = nlp.get_pipe("siamese_similarity")
    scores = nlp.evaluate(pair_examples(nlp), scorer_cfg={"tune_threshold": True})
    assert pipe.threshold == 0.5 != scores["sim_threshold"]
    assert pipe.tune_thresholds(pair_examples(nlp))["sim_threshold"] == pipe.threshold == scores["sim_threshold"]


@pytest.mark.parametrize("proj_width", [0, 24])
@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("name", COMPARISONS)
def test_empty_doc_alone_and_in_batches(name, static, proj_width):
    comparison, _ = COMPARISONS[name]
    nlp = vectors_nlp(width=8, proj_width=proj_width, static=static, comparison=comparison)
    nlp.initialize(lambda: pair_examples(nlp))
    width = proj_width or 16
    empty = nlp("")
    assert empty.vector.shape == (width,) and numpy.all(numpy.isfinite(empty.vector))
    for batch in (["", ""], ["", "How do I learn Python fast?", "", " "]):
        docs = list(nlp.pipe(batch))
        for doc, text in zip(docs, batch):
            numpy.testing.assert_allclose(doc.vector, nlp(text).vector, atol=1e-5)
    other = nlp("How do I learn Python fast?")
    head = predicting_head(nlp.get_pipe("siamese_similarity").comparison)

    def reference(a, b) -> float:  # the comparison's score of the two stored vectors, without the hooks
        return float(head.predict((a.vector[None, :], b.vector[None, :]))[0, 0])

    sim = empty.similarity(other)
    assert sim == pytest.approx(reference(empty, other), abs=1e-6) and sim == other.similarity(empty)
    assert empty.similarity(nlp("")) == pytest.approx(reference(empty, empty), abs=1e-6)


@spacy.registry.architectures("test-siamese.UserEncoder.v1")
def user_encoder(*, width: int = 8, static: bool = False) -> Model:
    """A user's own encoder from spaCy's layers, without the package's care for a batch without a
    token: static vectors make blis raise on it, hash features alone give a (1, 0) array."""
    tok2vec = build_Tok2Vec_model(
        MultiHashEmbed(width=width, attrs=["NORM"], rows=[100], include_static_vectors=static),
        MaxoutWindowEncoder(width=width, depth=1, window_size=1, maxout_pieces=2),
    )
    model = chain(tok2vec, list2ragged(), reduce_mean())
    model.set_dim("nO", width)
    return model


@spacy.registry.architectures("test-siamese.RowTooMany.v1")
def row_too_many() -> Model:
    def forward(model, docs, is_train):
        return model.ops.alloc2f(len(docs) + 1, 4), None

    return Model("row_too_many", forward, dims={"nO": 4})


@pytest.mark.parametrize("static", [False, True])
def test_a_users_encoder_that_cannot_take_a_batch_without_a_token(static):
    """Each empty doc gets the vector it gets beside other docs, alone or in a batch of empty docs."""
    nlp = vectors_nlp()
    nlp.remove_pipe("siamese_similarity")
    encoder = {"@architectures": "test-siamese.UserEncoder.v1", "static": static}
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder}})
    nlp.initialize(lambda: pair_examples(nlp))
    beside = [doc.vector for doc in nlp.pipe(["", "How do I learn Python fast?", ""])]
    for batch in ([""], ["", ""]):
        for doc in nlp.pipe(batch):
            assert doc.vector.shape == (8,)
            numpy.testing.assert_allclose(doc.vector, beside[0], atol=1e-6)
    empty, other = nlp(""), nlp("Why is the sky blue?")
    assert empty.similarity(other) == other.similarity(empty)
    assert nlp.get_pipe("siamese_similarity").encode(["", ""]).shape == (2, 8)


@pytest.mark.parametrize("static", [False, True])
def test_a_users_encoder_trains_on_a_batch_of_pairs_without_a_token(static):
    """A batch whose every text is empty (the readers keep such pairs, with a warning) is a
    training step like any other: encoded beside a one-token doc whose row is left out."""
    nlp = vectors_nlp()
    nlp.remove_pipe("siamese_similarity")
    encoder = {"@architectures": "test-siamese.UserEncoder.v1", "static": static}
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder}})
    optimizer = nlp.initialize(lambda: pair_examples(nlp))
    pipe = nlp.get_pipe("siamese_similarity")
    batch = [make_pair_example(nlp, "", "", 1), make_pair_example(nlp, "", "", 0)]
    losses = nlp.update(batch, sgd=optimizer)
    assert numpy.isfinite(losses["siamese_similarity"]) and losses["siamese_similarity"] > 0
    after = pipe.encode([""])
    assert after.shape == (1, 8)
    numpy.testing.assert_allclose(after, pipe.encode(["", "How do I learn Python fast?"])[:1], atol=1e-6)


def test_an_encoder_giving_rows_of_another_shape_is_named():
    """Found as soon as the pipe is initialized, naming the encoder."""
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": {"@architectures": "test-siamese.RowTooMany.v1"}}})
    with pytest.raises(ValueError, match=r"encoder 'row_too_many' gave an array of shape \(3, 4\) for 2 docs"):
        nlp.initialize()


def test_score_ignores_examples_that_are_not_pairs(trained):
    """Text classification examples of another pipe in the pipeline get no sim_* scores."""
    from spacy.training import Example

    nlp, _ = trained
    doc = nlp.make_doc("Why is the sky blue?")
    reference = nlp.make_doc("Why is the sky blue?")
    reference.cats = {"science": 1.0}
    assert nlp.get_pipe("siamese_similarity").score([Example(doc, reference)]) == {}


def test_score_and_dedupe_threshold_from_given_pair_scores(nlp, monkeypatch):
    """`pair_vectors` encodes the pairs once; `score` and `calibrate_dedupe_threshold` then take
    `compare` of them instead of encoding the pairs again, with the same results."""
    pipe = nlp.get_pipe("siamese_similarity")
    monkeypatch.setattr(pipe, "cfg", dict(pipe.cfg))  # the shared pipeline keeps its thresholds
    examples = pair_examples(nlp)
    vectors_a, vectors_b, labels = pipe.pair_vectors(examples)
    assert vectors_a.shape == vectors_b.shape == (len(examples), pipe.encoder.get_dim("nO"))
    given = pipe.compare(vectors_a, vectors_b), labels
    numpy.testing.assert_array_equal(given[0], pipe.pair_scores(examples)[0])
    numpy.testing.assert_array_equal(given[1], pipe.pair_scores(examples)[1])
    calls = []

    def pair_scores(egs):
        calls.append(len(egs))
        return given

    assert pipe.score(examples, pair_scores=pair_scores) == pipe.score(examples)
    threshold = pipe.calibrate_dedupe_threshold(examples, precision=0.75, pair_scores=pair_scores)
    assert threshold == pipe.calibrate_dedupe_threshold(examples, precision=0.75)
    assert calls == [len(examples), len(examples)]


def test_encode_texts_and_docs_in_input_order(nlp):
    pipe = nlp.get_pipe("siamese_similarity")
    texts = ["How do I learn Python fast?", "", "Why is the sky blue?"]
    vectors = pipe.encode(texts, batch_size=2)
    assert vectors.shape == (3, pipe.encoder.get_dim("nO")) and vectors.dtype == numpy.float32
    numpy.testing.assert_array_equal(vectors, numpy.vstack([nlp(t).vector for t in texts]))
    mixed = pipe.encode([texts[0], nlp(texts[2])])
    numpy.testing.assert_array_equal(mixed, vectors[[0, 2]])
    numpy.testing.assert_array_equal(pipe.encode(texts[2]), vectors[2:])
    assert pipe.encode([]).shape == (0, vectors.shape[1])
    with pytest.raises(TypeError, match="texts .str. or Doc objects"):
        pipe.encode([3])


def test_encode_names_what_it_cannot_take_and_takes_numpy_strings(nlp):
    """bytes, a Span or None are named (not "got int" or "got Token" for their items, nor "not
    iterable"); numpy.str_ texts (a numpy array of str) are encoded as str, not refused by the tokenizer."""
    pipe = nlp.get_pipe("siamese_similarity")
    doc = nlp("How do I learn Python fast?")
    for bad, name in ((b"bytes", "bytes"), (doc[0:2], "Span"), (None, "NoneType"), (3, "int")):
        with pytest.raises(TypeError, match=rf"texts .str. or Doc objects, or an iterable of them, not {name}$"):
            pipe.encode(bad)
    texts = numpy.array(["How do I learn Python fast?", "Why is the sky blue?"])
    numpy.testing.assert_array_equal(pipe.encode(texts), pipe.encode([str(t) for t in texts]))


@pytest.mark.parametrize(
    "setting,message",
    [
        ({"batch_size": 0}, "batch_size must be at least 1, got 0"),
        ({"batch_size": -4}, "batch_size must be at least 1, got -4"),
        ({"n_process": 0}, r"n_process must be -1 \(one process per CPU core\) or at least 1, got 0"),
        ({"n_process": -2}, "n_process must be -1 .* got -2"),
    ],
)
def test_encode_refuses_batch_sizes_and_process_counts_nlp_pipe_cannot_run(nlp, setting, message):
    """A clear error, not one from deep inside spaCy, for texts and docs alike."""
    pipe = nlp.get_pipe("siamese_similarity")
    for items in (["How do I learn Python fast?"], [nlp.make_doc("Why is the sky blue?")]):
        with pytest.raises(ValueError, match=message):
            pipe.encode(items, **setting)
        with pytest.raises(ValueError, match=message):
            list(pipe.processed(items, **setting))


def test_encode_streams_docs_a_batch_at_a_time(nlp, monkeypatch):
    """A corpus is encoded without holding all its docs: each call encodes at most one batch."""
    pipe = nlp.get_pipe("siamese_similarity")
    texts = [f"question number {i}" for i in range(7)]
    expected = numpy.vstack([nlp(t).vector for t in texts])
    seen = []
    vectors = pipe.vectors
    monkeypatch.setattr(pipe, "vectors", lambda docs: seen.append(len(docs)) or vectors(docs))
    numpy.testing.assert_array_equal(pipe.encode(texts, batch_size=3), expected)
    assert seen == [3, 3, 1]


def test_compare_and_similarity_matrix_refuse_vectors_that_do_not_pair_up(nlp):
    """Arrays of other lengths, other widths or one dimension are named, not a numpy or Thinc traceback."""
    pipe = nlp.get_pipe("siamese_similarity")
    vectors = pipe.encode(TEXTS[:3])
    for a, b in ((vectors, vectors[:2]), (vectors[:, :16], vectors[:, :16]), (vectors[0], vectors[1])):
        with pytest.raises(ValueError, match=r"compare takes two arrays of paired rows .*\(n, 64\)"):
            pipe.compare(a, b)
    with pytest.raises(ValueError, match="compare takes two arrays"):
        vector_similarity_matrix(pipe.compare, vectors, vectors[:, :16])
    assert pipe.compare(vectors[:0], vectors[:0]).shape == (0,)


def test_a_refused_calibration_leaves_the_settings_as_they_were():
    """A precision out of range, or graded pairs, raise without changing `dedupe_precision`: the
    pipe still saves and loads."""
    nlp, _ = train(make_nlp(), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    graded = pair_examples(nlp, [(PAIRS[0][0], PAIRS[0][1], 0.4)])
    for examples, precision, message in ((pair_examples(nlp), 95, "dedupe_precision"), (graded, 0.5, "0 or 1")):
        with pytest.raises(ValueError, match=message):
            pipe.calibrate_dedupe_threshold(examples, precision=precision)
        assert pipe.cfg["dedupe_precision"] == 0.9
    make_nlp().get_pipe("siamese_similarity").from_bytes(pipe.to_bytes())


def test_encode_texts_needs_the_pipeline_and_pickles_without_it(nlp):
    import pickle

    from spacy_siamese import SiameseSimilarity

    pipe = nlp.get_pipe("siamese_similarity")
    standalone = SiameseSimilarity(nlp.vocab, pipe.model, loss=pipe.loss)
    with pytest.raises(ValueError, match="encodes texts through its pipeline"):
        standalone.encode(["a text"])
    assert pickle.loads(pickle.dumps(nlp)).get_pipe("siamese_similarity").threshold == pipe.threshold


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), width=st.integers(1, 5), rows=st.integers(0, 16), seed=st.integers(0, 2**16))
def test_canonical_order_puts_each_pair_one_way_and_pads_with_the_first(n, width, rows, seed):
    """Each pair in one order whichever side it came on (decided at the first column where its
    rows differ, also when leading columns tie), padded with copies of the first pair."""
    rng = numpy.random.default_rng(seed)
    a = rng.integers(0, 2, size=(n, width)).astype("f")  # small values: many tied columns
    b = rng.integers(0, 2, size=(n, width)).astype("f")
    out_a, out_b = canonical_order(a, b, rows=rows)
    back_b, back_a = canonical_order(b, a, rows=rows)
    assert out_a.shape == (max(n, rows), width)
    assert numpy.array_equal(out_a, back_b) and numpy.array_equal(out_b, back_a)
    for i in range(n):
        assert {tuple(out_a[i]), tuple(out_b[i])} == {tuple(a[i]), tuple(b[i])}
        assert tuple(out_a[i]) <= tuple(out_b[i])  # the first differing column decides
    assert (out_a[n:] == out_a[0]).all() and (out_b[n:] == out_b[0]).all()


@pytest.mark.parametrize("path", CONFIGS, ids=[c.name for c in CONFIGS])
def test_every_shipped_config_trains_and_encodes_a_batch_of_empty_texts(path, data_files, monkeypatch):
    """Every encoder takes a batch without a single token, in training and in prediction, and
    the pipe gives it those docs alone (no stand-in doc with a token): a finite loss, and an
    empty doc's vector as beside a non-empty doc."""
    nlp = config_pipeline(path, data_files)
    if nlp.config["corpora"]["train"]["@readers"] == "spacy-siamese.LabelledDocuments.v1":
        examples = [labelled_doc_example(nlp.make_doc(""), [label]) for label in ("a", "b", "a")]
    else:
        examples = [make_pair_example(nlp, "", "", 0.5), make_pair_example(nlp, "", "", 0.5)]
    assert numpy.isfinite(nlp.update(examples)["siamese_similarity"])
    pipe = nlp.get_pipe("siamese_similarity")
    beside = pipe.predict([nlp.make_doc("How do I learn Python fast?"), nlp.make_doc("")])[1]
    batches = []
    call = Model.__call__

    def spy(model, X, is_train):
        if model is pipe.encoder:
            batches.append([len(doc) for doc in X])
        return call(model, X, is_train)

    monkeypatch.setattr(Model, "__call__", spy)
    numpy.testing.assert_array_equal([doc.vector for doc in nlp.pipe(["", ""])], [beside, beside])
    assert batches == [[0, 0]]


def test_set_lexical_weight_changes_the_scores_config_and_id(tmp_path):
    """A trained hybrid pipe mixed at another weight scores (1 - w) * learned + w * lexical, keeps
    it in its config and through spacy.load, and gets a new model id."""
    nlp, _ = train(build_nlp("hybrid_cauchy"), n_iter=5)
    pipe = nlp.get_pipe("siamese_similarity")
    examples = pair_examples(nlp)
    assert get_lexical_weight(nlp) == 0.3
    vectors_a = pipe.vectors([eg.predicted for eg in examples])
    vectors_b = pipe.vectors([get_partner(eg, nlp.vocab) for eg in examples])
    learned, lexical = vector_space(pipe.comparison).paired_score_parts(vectors_a, vectors_b)
    old_id = pipe.model_id
    set_lexical_weight(nlp, 0.6)
    assert get_lexical_weight(nlp) == 0.6 and pipe.model_id != old_id
    scores = pipe.pair_scores(examples)[0]
    numpy.testing.assert_allclose(scores, 0.4 * learned + 0.6 * lexical, rtol=1e-5)
    assert nlp.config["components"]["siamese_similarity"]["model"]["comparison"]["weight"] == 0.6
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert get_lexical_weight(loaded) == 0.6 and loaded.get_pipe("siamese_similarity").model_id == pipe.model_id
    numpy.testing.assert_allclose(loaded.get_pipe("siamese_similarity").pair_scores(examples)[0], scores, rtol=1e-6)


def test_a_config_override_at_load_sets_the_lexical_weight(tmp_path):
    """The weight is a config setting: spacy.load with another one mixes at it, under a new model id."""
    nlp, _ = train(build_nlp("hybrid_cauchy"), n_iter=5)
    nlp.to_disk(tmp_path / "nlp")
    override = {"components": {"siamese_similarity": {"model": {"comparison": {"weight": 0.6}}}}}
    loaded = spacy.load(tmp_path / "nlp", config=override)
    assert get_lexical_weight(loaded) == 0.6
    assert loaded.config["components"]["siamese_similarity"]["model"]["comparison"]["weight"] == 0.6
    set_lexical_weight(nlp, 0.6)
    examples = pair_examples(nlp)
    expected = nlp.get_pipe("siamese_similarity").pair_scores(examples)[0]
    pipe = loaded.get_pipe("siamese_similarity")
    numpy.testing.assert_allclose(pipe.pair_scores(pair_examples(loaded))[0], expected, rtol=1e-6)
    assert pipe.model_id != spacy.load(tmp_path / "nlp").get_pipe("siamese_similarity").model_id


def test_set_lexical_weight_sets_the_range_of_a_wrapper_around_the_hybrid(tmp_path):
    """WithInBatchScores.v1 declares its comparison's score range: outside the hybrid, it follows the weight."""
    nlp, _ = train(
        hybrid_nlp({"@architectures": "spacy-siamese.WithInBatchScores.v1", "comparison": hybrid(COSINE_RAW)}), n_iter=0
    )
    set_lexical_weight(nlp, 0.9)
    assert nlp.get_pipe("siamese_similarity").score_range == pytest.approx((-0.1, 1.0))
    nlp.to_disk(tmp_path / "nlp")
    assert spacy.load(tmp_path / "nlp").get_pipe("siamese_similarity").score_range == pytest.approx((-0.1, 1.0))


def test_set_lexical_weight_keeps_the_thresholds_in_the_new_range():
    """Over a raw cosine the score range starts at -(1 - w): thresholds below it are moved up to it."""
    nlp, _ = train(hybrid_nlp(hybrid(COSINE_RAW)), n_iter=2)
    pipe = nlp.get_pipe("siamese_similarity")
    pipe.cfg["threshold"] = pipe.cfg["dedupe_threshold"] = -0.5
    set_lexical_weight(nlp, 0.9)
    assert pipe.score_range == pytest.approx((-0.1, 1.0))
    assert pipe.threshold == pytest.approx(-0.1) and pipe.dedupe_threshold == pytest.approx(-0.1)


def test_set_lexical_weight_refuses_other_pipes_and_weights(nlp):
    with pytest.raises(ValueError, match="cauchy_similarity, not spacy-siamese.HybridSimilarity.v1"):
        set_lexical_weight(nlp, 0.2)
    with pytest.raises(ValueError, match="no lexical weight"):
        get_lexical_weight(nlp)
    hybrid, _ = train(build_nlp("hybrid_cauchy"), n_iter=1)
    model_id = hybrid.get_pipe("siamese_similarity").model_id
    with pytest.raises(ValueError, match=r"weight must be in \[0, 1\]"):
        set_lexical_weight(hybrid, 1.5)
    assert get_lexical_weight(hybrid) == 0.3 and hybrid.get_pipe("siamese_similarity").model_id == model_id
    assert hybrid.config["components"]["siamese_similarity"]["model"]["comparison"]["weight"] == 0.3
    with pytest.raises(ValueError, match="not initialized"):
        set_lexical_weight(build_nlp("hybrid_cauchy"), 0.2)
    del hybrid.get_pipe_config("siamese_similarity")["model"]["comparison"]["@architectures"]
    with pytest.raises(ValueError, match="config has 0 spacy-siamese.HybridSimilarity.v1 blocks, not one"):
        set_lexical_weight(hybrid, 0.2)  # its saved config could not say the weight it mixes at
    assert get_lexical_weight(hybrid) == 0.3
