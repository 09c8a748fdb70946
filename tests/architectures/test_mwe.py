"""spacy-siamese.MWEEncoder.v1/v2, PooledTok2Vec.v1, and a pipeline saved with the .v1 names."""

import inspect
import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry
from thinc.api import chain

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import build_mwe_encoder, build_mwe_encoder_v1, build_pooled_tok2vec
from spacy_siamese.architectures.mwe import DEFAULT_ATTRS

from ..conftest import PAIRS, set_random_vectors

V1_PIPELINE = Path(__file__).parent.parent / "data" / "v1_pipeline"


def _mwe_encoder(docs, **settings):
    spacy.util.fix_random_seed(0)
    model = build_mwe_encoder(width=8, depth=1, rows=50, post_depth=1, **settings)
    model.initialize(X=docs)
    return model


def character_tok2vec(*, static_vectors: bool) -> dict:
    """A small spaCy Tok2Vec config with character features, for PooledTok2Vec.v1."""
    return {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.CharacterEmbed.v2",
            "width": 8,
            "rows": 50,
            "nM": 4,
            "nC": 3,
            "include_static_vectors": static_vectors,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 8,
            "window_size": 1,
            "maxout_pieces": 2,
            "depth": 1,
        },
    }


@pytest.mark.parametrize("proj_width,squash", [(0, False), (12, True)])
def test_mwe_encoder_output_width(proj_width, squash):
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS] + [nlp(""), nlp(" ")]
    model = _mwe_encoder(docs, proj_width=proj_width, squash=squash)
    Y = model.predict(docs)
    assert Y.shape == (len(docs), proj_width or 16) and model.get_dim("nO") == (proj_width or 16)
    if squash:  # the logistic of what the same weights give unsquashed
        raw = _mwe_encoder(docs, proj_width=proj_width, squash=False).predict(docs)
        numpy.testing.assert_allclose(Y, 1.0 / (1.0 + numpy.exp(-raw.astype("f8"))), rtol=1e-6)


def test_pooled_tok2vec_pools_any_spacy_tok2vec_such_as_character_embeddings():
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS] + [nlp(""), nlp(" "), nlp("Überraschung!!")]
    config = {
        "encoder": {
            "@architectures": "spacy-siamese.PooledTok2Vec.v1",
            "post_depth": 1,
            "proj_width": 12,
            "tok2vec": character_tok2vec(static_vectors=False),
        }
    }
    assert registry.architectures.get("spacy-siamese.PooledTok2Vec.v1") is build_pooled_tok2vec
    model = registry.resolve(config)["encoder"]
    model.initialize(X=docs)
    Y = model.predict(docs)
    assert Y.shape == (len(docs), 12) and model.get_dim("nO") == 12 and numpy.isfinite(Y).all()
    assert not numpy.allclose(Y[0], Y[-1])  # different texts, different vectors


def test_mwe_encoder_is_pooled_tok2vec_over_its_hash_embeddings():
    """The same layers in the same order: pipelines saved with MWEEncoder load unchanged."""
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS]
    mwe = _mwe_encoder(docs)
    # PooledTok2Vec over spaCy's Tok2Vec with the encoder's hash embeddings, built on its own
    embed = {
        "@architectures": "spacy.MultiHashEmbed.v2",
        "width": 8,
        "attrs": list(DEFAULT_ATTRS),
        "rows": [50] * len(DEFAULT_ATTRS),
        "include_static_vectors": False,
    }
    encode = {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 8, "window_size": 1, "maxout_pieces": 3}
    tok2vec = {"@architectures": "spacy.Tok2Vec.v2", "embed": embed, "encode": {**encode, "depth": 1}}
    config = {"encoder": {"@architectures": "spacy-siamese.PooledTok2Vec.v1", "post_depth": 1, "tok2vec": tok2vec}}
    pooled = registry.resolve(config)["encoder"]
    assert [layer.name for layer in pooled.layers] == [layer.name for layer in mwe.layers]
    pooled.from_bytes(mwe.to_bytes())
    numpy.testing.assert_array_equal(pooled.predict(docs), mwe.predict(docs))


def test_pooled_tok2vec_needs_the_width_of_its_tok2vec():
    from thinc.api import chain, list2ragged, ragged2list

    with pytest.raises(ValueError, match="must declare its output width"):
        build_pooled_tok2vec(tok2vec=chain(list2ragged(), ragged2list()))


@pytest.mark.parametrize(
    "settings,message",
    [
        ({"depth": 0}, "depth >= 1"),  # was a KeyError from Thinc's noop layer
        ({"depth": -1}, "depth >= 1"),  # was a TypeError from Thinc's clone
        ({"window_size": -1}, "window_size >= 0"),
        ({"post_depth": -1}, "post_depth >= 0"),  # was silently 0
        ({"proj_width": -4}, "proj_width >= 0"),  # was silently no projection
        (
            {"attrs": ["NORM", "FOO"], "rows": 50},
            r"unknown token attribute\(s\) \['FOO'\]",
        ),  # was E983 at the first doc
    ],
)
def test_mwe_encoder_refuses_nonsense_settings_naming_them(settings, message):
    with pytest.raises(ValueError, match=message):
        build_mwe_encoder(**{"width": 8, "depth": 1, "rows": 50, **settings})


def test_mwe_encoder_takes_attribute_names_in_any_case():
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS]
    model = _mwe_encoder(docs, attrs=["norm", "shape"], window_size=0)
    assert model.predict(docs).shape == (len(docs), 16)


def test_mwe_encoder_v1_keeps_its_defaults():
    """v2 differs from v1 only in the default post_depth (2, the factory default)."""
    v1 = inspect.signature(build_mwe_encoder_v1).parameters
    v2 = inspect.signature(build_mwe_encoder).parameters
    assert list(v1) == list(v2)
    assert {name for name in v1 if v1[name].default != v2[name].default} == {"post_depth"}
    assert v1["post_depth"].default == 0 and v2["post_depth"].default == 2


def test_mwe_encoder_v1_and_v2_build_the_same_model():
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS]
    settings = {"width": 8, "depth": 1, "rows": [50, 20, 20, 20], "post_depth": 1, "proj_width": 12, "squash": True}
    outputs = []
    for name in ("spacy-siamese.MWEEncoder.v1", "spacy-siamese.MWEEncoder.v2"):
        spacy.util.fix_random_seed(0)
        model = registry.architectures.get(name)(**settings)
        model.initialize(X=docs)
        outputs.append((model.to_bytes(), model.predict(docs)))
    assert outputs[0][0] == outputs[1][0]
    numpy.testing.assert_array_equal(outputs[0][1], outputs[1][1])


def test_pipeline_saved_with_v1_names_loads_and_scores_the_same():
    """tests/data/v1_pipeline was trained and saved before the .v2 names existed (MWEEncoder.v1
    with post_depth/proj_width/squash, LogLoss.v1, WithAuxiliary,
    TrainCalibrated, Cauchy, FeatureHead); its similarities were recorded then."""
    config = (V1_PIPELINE / "config.cfg").read_text(encoding="utf8")
    assert '"spacy-siamese.MWEEncoder.v1"' in config and '"spacy-siamese.LogLoss.v1"' in config
    expected = json.loads((V1_PIPELINE / "similarities.json").read_text(encoding="utf8"))["similarities"]
    nlp = spacy.load(V1_PIPELINE, exclude=["tokenizer", "vocab"])  # the fixture stores neither
    got = [nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS]
    numpy.testing.assert_allclose(got, expected, rtol=1e-6)


WORDS = ["the", "cat", "sat", "dog", "a"]
WITHOUT_TOKENS = [[""], ["", ""], []]
ENCODERS = {
    "v2": {"@architectures": "spacy-siamese.MWEEncoder.v2", "width": 8, "depth": 1, "rows": 50},
    "v1_projected": {"@architectures": "spacy-siamese.MWEEncoder.v1", "width": 8, "rows": 50, "proj_width": 12},
    "pooled_characters": {
        "@architectures": "spacy-siamese.PooledTok2Vec.v1",
        "tok2vec": character_tok2vec(static_vectors=True),
    },
}


def _randomized(model, docs):
    """`model` initialized on `docs`, every weight seeded random: an empty doc's vector, zero
    after the pooling, is then not zero after the layers behind it."""
    model.initialize(X=docs)
    rng = numpy.random.default_rng(0)
    for node in model.walk():
        for name in node.param_names:
            if node.has_param(name):
                param = node.get_param(name)
                node.set_param(name, rng.normal(scale=0.5, size=param.shape).astype(param.dtype))
    return model


def _encoder(name, static_vectors):
    config = dict(ENCODERS[name])
    if name != "pooled_characters":
        config["include_static_vectors"] = static_vectors
    return registry.resolve({"encoder": config})["encoder"]


@pytest.mark.parametrize(
    "name,static_vectors",
    [("v2", True), ("v2", False), ("v1_projected", True), ("v1_projected", False), ("pooled_characters", True)],
)
def test_encoders_encode_a_batch_without_tokens_as_beside_other_docs(name, static_vectors):
    """spaCy's StaticVectors gives no sequences for a batch without a single token and
    MultiHashEmbed then failed inside blis (as did hash features alone on no docs): the tok2vec
    is now skipped for such a batch, and an empty doc gets the vector it gets beside others."""
    nlp = set_random_vectors(spacy.blank("en"), WORDS, 6)
    model = _randomized(_encoder(name, static_vectors), [nlp("the cat sat"), nlp("a dog")])
    width = model.get_dim("nO")
    beside = model.predict([nlp("the cat sat"), nlp(""), nlp("a dog")])[1]
    assert beside.any() and numpy.isfinite(beside).all()
    for texts in WITHOUT_TOKENS:
        docs = [nlp(text) for text in texts]
        Y, backprop = model(docs, is_train=True)
        assert Y.shape == (len(texts), width) and Y.dtype == numpy.float32 and numpy.isfinite(Y).all()
        numpy.testing.assert_array_equal(Y, numpy.tile(beside, (len(texts), 1)))
        assert backprop(numpy.ones_like(Y)) == []
        numpy.testing.assert_array_equal(model.predict(docs), Y)


def test_encoder_without_tokens_keeps_the_layers_of_the_plain_chain():
    """The guard keeps the chain's name, layers and dims: weights saved with the plain chain
    (as before the guard) load into the encoder and back, with the same vectors."""
    nlp = set_random_vectors(spacy.blank("en"), WORDS, 6)
    docs = [nlp("the cat sat"), nlp(""), nlp("a dog sat")]
    settings = {"width": 8, "depth": 1, "rows": 50, "include_static_vectors": True, "proj_width": 12}
    model = _randomized(build_mwe_encoder(**settings), docs)
    plain = chain(*build_mwe_encoder(**settings).layers)  # the layer tree before the guard
    assert plain.name == model.name
    plain.from_bytes(model.to_bytes())
    numpy.testing.assert_array_equal(plain.predict(docs), model.predict(docs))
    fresh = build_mwe_encoder(**settings).from_bytes(plain.to_bytes())
    assert fresh.to_bytes() == model.to_bytes()
    numpy.testing.assert_array_equal(fresh.predict(docs), model.predict(docs))
    numpy.testing.assert_array_equal(fresh.predict([nlp("")]), model.predict(docs)[1:2])


def test_pipe_trains_on_a_batch_of_empty_texts_with_static_vectors():
    nlp = set_random_vectors(spacy.blank("en"), WORDS, 6)
    encoder = {**ENCODERS["v2"], "include_static_vectors": True, "post_depth": 1}
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder}})
    optimizer = nlp.initialize(lambda: [make_pair_example(nlp, "the cat", "a dog", 1.0)])
    for pairs in ([("", "", 1.0)], [("", "", 1.0), ("", " ", 0.0)]):
        losses = nlp.update([make_pair_example(nlp, a, b, y) for a, b, y in pairs], sgd=optimizer)
        assert numpy.isfinite(losses["siamese_similarity"])
    pipe = nlp.get_pipe("siamese_similarity")
    beside = pipe.predict([nlp.make_doc("the cat"), nlp.make_doc("")])[1]
    for docs in (list(pipe.pipe([nlp.make_doc(""), nlp.make_doc("")])), list(nlp.pipe(["", ""]))):
        numpy.testing.assert_array_equal([doc.vector for doc in docs], [beside, beside])
    assert 0.0 <= nlp("").similarity(nlp(" ")) <= 1.0
