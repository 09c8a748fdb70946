"""doc.similarity of saved pipelines, equal to the values recorded from the code before the pipe
was split into the pipe contract, the encoding API, post-hoc edits and weight loading (issue 68):
a refactor of the pipe must not change a single score. "Equal" is to 1e-6: the last float32 bits
follow the CPU kernels that BLIS and OpenBLAS pick on the machine (a few 1e-7 between two
machines), while a changed computation moves a score far more."""

from pathlib import Path

import pytest
import spacy

from spacy_siamese import set_lexical_weight

from .conftest import PAIRS, train
from .search.conftest import COSINE_RAW, hybrid, hybrid_nlp

V1_PIPELINE = Path(__file__).parent / "data" / "v1_pipeline"
OVERRIDE = {"components": {"siamese_similarity": {"model": {"comparison": {"comparison": {"weight": 0.6}}}}}}
RECORDED = {
    "v1": [
        0.852588951587677,
        0.15495626628398895,
        0.8714312314987183,
        0.15782292187213898,
        0.8607089519500732,
        0.1753910481929779,
        0.8487932085990906,
        0.15761390328407288,
        0.8655072450637817,
        0.15718074142932892,
        0.5670877695083618,
    ],
    "hybrid": [
        0.4916233420372009,
        0.41528770327568054,
        0.4860917329788208,
        0.31073957681655884,
        0.5959280729293823,
        0.3299184739589691,
        0.5849566459655762,
        0.23214289546012878,
        0.5653766393661499,
        0.17285247147083282,
        0.4278010129928589,
    ],
    "override": [
        0.41904526948928833,
        0.33277225494384766,
        0.3636486232280731,
        0.22364109754562378,
        0.5158555507659912,
        0.2653150260448456,
        0.5473651885986328,
        0.13265308737754822,
        0.4747251868247986,
        0.09877284616231918,
        0.24445772171020508,
    ],
    "edited": [
        0.34646719694137573,
        0.25025674700737,
        0.24120548367500305,
        0.13654255867004395,
        0.4357829988002777,
        0.20071156322956085,
        0.5097737312316895,
        0.033163271844387054,
        0.3840736448764801,
        0.024693211540579796,
        0.06111443042755127,
    ],
}
RANGES = {"hybrid": (-0.7, 1.0), "override": (-0.4, 1.0), "edited": (-0.09999999999999998, 1.0)}


def similarities(nlp):
    return [nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS] + [nlp(PAIRS[0][0])[:3].similarity(nlp(PAIRS[0][1]))]


def recorded(name):
    return pytest.approx(RECORDED[name], rel=0, abs=1e-6)


def saved_hybrid(tmp_path):
    """A hybrid over a raw cosine inside WithInBatchScores.v1 (a wrapper that passes the hybrid's
    score range on), trained a few seeded steps and saved."""
    comparison = {"@architectures": "spacy-siamese.WithInBatchScores.v1", "comparison": hybrid(COSINE_RAW)}
    nlp, _ = train(hybrid_nlp(comparison), n_iter=5)
    nlp.to_disk(tmp_path / "hybrid")
    return nlp


def test_a_saved_v1_pipeline_saved_again(tmp_path):
    spacy.load(V1_PIPELINE, exclude=["tokenizer", "vocab"]).to_disk(tmp_path / "v1")
    assert similarities(spacy.load(tmp_path / "v1")) == recorded("v1")


def test_a_saved_hybrid(tmp_path):
    saved_hybrid(tmp_path)
    loaded = spacy.load(tmp_path / "hybrid")
    assert similarities(loaded) == recorded("hybrid")
    assert loaded.get_pipe("siamese_similarity").score_range == RANGES["hybrid"]
    assert similarities(type(loaded).from_config(loaded.config).from_bytes(loaded.to_bytes())) == recorded("hybrid")


def test_a_saved_hybrid_loaded_at_another_weight(tmp_path):
    saved_hybrid(tmp_path)
    loaded = spacy.load(tmp_path / "hybrid", config=OVERRIDE)
    assert similarities(loaded) == recorded("override")
    assert loaded.get_pipe("siamese_similarity").score_range == RANGES["override"]


def test_a_hybrid_mixed_at_another_weight_and_saved(tmp_path):
    nlp = saved_hybrid(tmp_path)
    set_lexical_weight(nlp, 0.9)
    nlp.to_disk(tmp_path / "edited")
    loaded = spacy.load(tmp_path / "edited")
    assert similarities(loaded) == recorded("edited")
    assert loaded.get_pipe("siamese_similarity").score_range == RANGES["edited"]
