import numpy
import pytest
import spacy
from spacy.tokens import Doc

from spacy_siamese.layers.hashed_tfidf import hash_columns
from spacy_siamese.layers.tweak import FEATURE_GROUPS, term_features, tweak

from ..conftest import PAIRS
from ..gradcheck import assert_grad_close, numeric_grad

TEXTS = [a for a, _, _ in PAIRS] + [b for _, b, _ in PAIRS]


@pytest.fixture(scope="module")
def blank():
    return spacy.blank("en")


def _fitted(blank, texts=TEXTS, **kwargs):
    model = tweak(**{"width": 256, "min_df": 1, **kwargs})
    model.initialize(X=[blank.make_doc(t) for t in texts])
    return model


def test_tweak_features_and_df_table(blank):
    model = _fitted(blank)
    assert model.attrs["feature_names"][:3] == ["bias", "log_tf", "log_df"]
    doc = blank.make_doc("Python, python and zebra!")
    terms = term_features(model, [doc])
    names = model.attrs["feature_names"]
    table = model.attrs["table"]
    rows = {doc.vocab.strings[int(k)]: dict(zip(names, row)) for k, row in zip(terms.keys, terms.phi)}
    assert set(rows) == {"python", "and", "zebra"}  # punctuation dropped, lower-case terms
    py = rows["python"]
    assert py["log_tf"] == pytest.approx(numpy.log(3)) and py["capitalized"] == 1 and py["log_loc"] == 0
    df = table.df[table.terms.index("python")]
    assert df == 2 and py["log_df"] == pytest.approx(numpy.log1p(df)) and py["oov"] == 0
    assert rows["zebra"]["oov"] == 1 and rows["zebra"]["log_df"] == 0
    assert rows["zebra"]["rel_loc"] == pytest.approx(3 / 4) and rows["zebra"]["log_len"] == pytest.approx(numpy.log(5))
    assert rows["and"]["stop"] == 1 and rows["zebra"]["stop"] == 0
    assert all(r["first_sent"] == 1 for r in rows.values())  # no sentence boundaries: one sentence
    assert all(r["pos_NOUN"] == 0 and r["ent"] == 0 for r in rows.values())  # no POS, no entities here
    only_paper = _fitted(blank, features=["paper"])
    assert only_paper.attrs["feature_names"] == ["bias", *FEATURE_GROUPS["paper"]]
    with pytest.raises(ValueError, match="feature group"):
        tweak(features=["paper", "shape"])


def test_tweak_spacy_annotations(blank):
    model = _fitted(blank)
    words = ["Paris", "is", "big", ".", "Paris", "rocks"]
    doc = Doc(blank.vocab, words=words, pos=["PROPN", "AUX", "ADJ", "PUNCT", "PROPN", "VERB"])
    doc.ents = [doc.char_span(0, 5, label="GPE")]
    doc[4].is_sent_start = True
    for i in (1, 2, 3, 5):
        doc[i].is_sent_start = False
    terms = term_features(model, [doc])
    names = model.attrs["feature_names"]
    rows = {doc.vocab.strings[int(k)]: dict(zip(names, row)) for k, row in zip(terms.keys, terms.phi)}
    assert rows["paris"]["pos_PROPN"] == 1 and rows["big"]["pos_ADJ"] == 1
    assert rows["paris"]["ent"] == 1 and rows["big"]["ent"] == 0
    assert rows["big"]["first_sent"] == 1 and rows["rocks"]["first_sent"] == 0


def test_tweak_gradient_and_nonnegative_weights(blank):
    model = _fitted(blank)
    rng = numpy.random.default_rng(0)
    model.set_param("w", rng.normal(scale=0.5, size=model.get_dim("nF")).astype("float32"))
    docs = [blank.make_doc(t) for t in TEXTS[:6]]
    Y, backprop = model(docs, is_train=True)
    R = rng.normal(size=Y.shape)
    backprop(R)
    w = model.get_param("w").astype("f8")

    def loss() -> float:
        model.set_param("w", w.astype("float32"))
        return float((model.predict(docs).astype("f8") * R).sum())

    assert_grad_close(model.get_grad("w"), numeric_grad(loss, w, 1e-2), rtol=2e-2, atol=1e-3)
    model.set_param("w", numpy.full(model.get_dim("nF"), -5.0, dtype="float32"))  # every linear score negative
    terms = term_features(model, docs)
    cols, signs = hash_columns(terms.keys, 256)
    Y = model.predict(docs)
    tw = Y[terms.doc_ids, cols] * signs
    assert (tw > 0).all()  # softplus: positive even where the linear score is negative


def test_tweak_initial_weights_rank_like_idf(blank):
    model = _fitted(blank)
    w = dict(zip(model.attrs["feature_names"], model.get_param("w")))
    assert w["bias"] == pytest.approx(numpy.log(model.attrs["table"].n_docs + 1))
    assert w["log_tf"] > 0 > w["log_df"]


def test_tweak_empty_docs(blank):
    model = _fitted(blank)
    docs = [blank.make_doc(t) for t in ("", "   ", "?!", "learn python")]
    Y = model.predict(docs)
    assert Y.shape == (4, 256) and not Y[:3].any() and Y[3].any()
    assert not model.predict([blank.make_doc("")]).any()


def test_tweak_serialization(blank):
    model = _fitted(blank, features=["paper", "oov"])
    model.set_param("w", model.get_param("w") + 0.25)
    fresh = tweak(width=256, min_df=1, features=["paper", "oov"])
    fresh.from_bytes(model.to_bytes())
    assert fresh.attrs["table"].terms == model.attrs["table"].terms
    assert fresh.attrs["table"].n_docs == model.attrs["table"].n_docs
    numpy.testing.assert_array_equal(fresh.attrs["table"].df, model.attrs["table"].df)
    docs = [blank.make_doc(t) for t in TEXTS]
    numpy.testing.assert_array_equal(fresh.predict(docs), model.predict(docs))
    with pytest.raises(ValueError, match="initialize"):
        tweak().predict(docs)


def test_tweak_with_no_term_frequent_enough_names_min_df(blank):
    """An empty df table was an IndexError from inside term_features at the first prediction."""
    model = tweak(width=256, min_df=100)
    with pytest.raises(ValueError, match=f"tweak: no term occurs in at least min_df=100 of the {len(set(TEXTS))} docs"):
        model.initialize(X=[blank.make_doc(t) for t in TEXTS])
