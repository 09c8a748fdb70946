"""spacy-siamese.MWEEncoder.v1/v2, PooledTok2Vec.v1, and a pipeline saved with the .v1 names."""

import inspect
import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry

from spacy_siamese.architectures import build_mwe_encoder, build_mwe_encoder_v1, build_pooled_tok2vec
from spacy_siamese.architectures.mwe import DEFAULT_ATTRS

from ..conftest import PAIRS

V1_PIPELINE = Path(__file__).parent.parent / "data" / "v1_pipeline"


def _mwe_encoder(docs, **settings):
    spacy.util.fix_random_seed(0)
    model = build_mwe_encoder(width=8, depth=1, rows=50, post_depth=1, **settings)
    model.initialize(X=docs)
    return model


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
            "tok2vec": {
                "@architectures": "spacy.Tok2Vec.v2",
                "embed": {
                    "@architectures": "spacy.CharacterEmbed.v2",
                    "width": 8,
                    "rows": 50,
                    "nM": 4,
                    "nC": 3,
                    "include_static_vectors": False,
                },
                "encode": {
                    "@architectures": "spacy.MaxoutWindowEncoder.v2",
                    "width": 8,
                    "window_size": 1,
                    "maxout_pieces": 2,
                    "depth": 1,
                },
            },
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
