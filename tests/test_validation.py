"""Checks of pair labels, settings, model sizes and score ranges, alone and in the pipe."""

import math

import numpy
import pytest
import spacy
from thinc.api import Linear, Relu, chain

from spacy_siamese.layers import cosine_similarity
from spacy_siamese.validation import RANGE_TOLERANCE, check_label, check_scores, check_settings, check_sizes

from .conftest import SMALL_MODEL, make_nlp
from .test_component import COSINE, sims

SETTINGS = {"threshold": 0.5, "on_unknown": "encode", "tune_threshold": True, "model_id": "abc"}
WHERE = "model/cfg"


@pytest.mark.parametrize("label,expected", [(0, 0.0), (1, 1.0), (0.25, 0.25), (True, 1.0), (False, 0.0)])
def test_check_label_accepts_numbers_in_the_unit_interval(label, expected):
    value = check_label(label)
    assert value == expected and type(value) is float


@pytest.mark.parametrize("label", [-0.1, 1.5, math.nan, math.inf, "1", None, [1]])
def test_check_label_refuses_anything_else(label):
    with pytest.raises(ValueError, match=r"finite number in \[0, 1\], got " + repr(label).replace("[", r"\[")):
        check_label(label)


def test_check_scores_clips_rounding_and_refuses_broken_scores():
    scores = numpy.array([-RANGE_TOLERANCE / 2, 0.3, 1 + RANGE_TOLERANCE / 2], dtype="f")
    numpy.testing.assert_array_equal(check_scores(scores, (0.0, 1.0), "cmp"), numpy.array([0.0, 0.3, 1.0], dtype="f"))
    with pytest.raises(ValueError, match=r"'cmp' comparison gave scores in \[0, 1.5\], outside its range \[0, 1\]"):
        check_scores(numpy.array([0.0, 1.5]), (0.0, 1.0), "cmp")
    with pytest.raises(ValueError, match="'cmp' comparison gave a similarity that is not finite"):
        check_scores(numpy.array([0.5, numpy.nan]), (0.0, 1.0), "cmp")
    numpy.testing.assert_array_equal(check_scores(numpy.array([-1.0, 1.0]), (-1.0, 1.0), "cmp"), [-1.0, 1.0])


def test_check_settings_accepts_valid_settings():
    check_settings(SETTINGS, where=WHERE, scores=(0.0, 1.0), saved=True)
    check_settings({**SETTINGS, "model_id": None}, where=WHERE, scores=(0.0, 1.0), saved=False)  # not initialized
    check_settings({**SETTINGS, "threshold": -0.5}, where=WHERE, scores=(-1.0, 1.0), saved=True)


@pytest.mark.parametrize(
    "field,value,saved",
    [
        ("threshold", 1.5, False),
        ("threshold", -0.5, False),  # within a cosine's range, not a Cauchy's
        ("threshold", True, False),
        ("threshold", math.nan, False),
        ("on_unknown", "ignore", False),
        ("tune_threshold", 1, False),
        ("model_id", "", False),
        ("model_id", "", True),
    ],
)
def test_check_settings_names_where_and_the_field(field, value, saved):
    with pytest.raises(ValueError, match=rf"^{WHERE}: field '{field}' must be"):
        check_settings({**SETTINGS, field: value}, where=WHERE, scores=(0.0, 1.0), saved=saved)


@pytest.mark.parametrize("model_id", ["absent", None])
def test_check_settings_wants_a_model_id_when_saved(model_id):
    settings = {key: value for key, value in SETTINGS.items() if key != "model_id"}
    if model_id is None:
        settings["model_id"] = None  # what an untrained pipe saves
    check_settings(settings, where=WHERE, scores=(0.0, 1.0), saved=False)
    with pytest.raises(ValueError, match=f"{WHERE}: no 'model_id': the pipe was saved before it was initialized"):
        check_settings(settings, where=WHERE, scores=(0.0, 1.0), saved=True)


def test_check_sizes_refuses_a_layer_of_size_zero():
    check_sizes(chain(Relu(nO=4, nI=3), Linear(nO=2, nI=4)), "pipe")
    check_sizes(Linear(), "pipe")  # unset sizes are not checked
    with pytest.raises(ValueError, match=r"'pipe' model's layer 'relu' has nO = 0"):
        check_sizes(chain(Relu(nO=0, nI=3), Linear(nO=2)), "pipe")


# -- in the pipe ---------------------------------------------------------------------


def test_invalid_settings():
    with pytest.raises(ValueError, match="on_unknown"):
        make_nlp(on_unknown="ignore")
    with pytest.raises(ValueError, match="threshold"):
        make_nlp(threshold=1.5)


def test_threshold_is_checked_against_the_comparison_range():
    make_nlp(comparison=COSINE, threshold=-0.25)
    with pytest.raises(ValueError, match="threshold"):
        make_nlp(threshold=-0.25)
    with pytest.raises(ValueError, match="threshold"):
        make_nlp(comparison=COSINE, threshold=1.5)


@pytest.mark.parametrize("setting", [{"width": 0}, {"rows": [0, 10, 10, 10]}])
def test_zero_sized_encoder_is_refused_clearly(setting):
    nlp = spacy.blank("en")
    encoder = {**SMALL_MODEL["model"]["encoder"], **setting}
    with pytest.raises(ValueError, match=r"siamese_similarity.*= 0"):
        nlp.add_pipe("siamese_similarity", config={"model": {"encoder": encoder}})


def test_cosine_never_exceeds_one_through_rounding():
    layer = cosine_similarity(rescale=False)
    layer.initialize()
    rng = numpy.random.default_rng(0)
    vectors = rng.normal(size=(200, 64)).astype("f")
    raw = layer.predict((vectors, vectors))[:, 0]
    assert raw.max() > 1.0  # the layer alone rounds above 1
    nlp = make_nlp(comparison=COSINE)
    nlp.initialize()
    scores = nlp.get_pipe("siamese_similarity").compare(vectors, vectors)
    assert scores.max() == 1.0 and scores.min() >= -1.0
    matrix = sims(nlp)
    assert matrix.max() <= 1.0 and matrix.min() >= -1.0
    assert numpy.array_equal(matrix, matrix.T)
