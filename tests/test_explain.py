import pytest
import spacy

from spacy_siamese.explain import explain_pair, tweak_weights

from .conftest import PAIRS, make_nlp, pair_examples

ENCODERS = {
    "tweak": {"@architectures": "spacy-siamese.TweakEncoder.v1", "width": 4096, "min_df": 1},
    "s2net": {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 8, "min_df": 1},
}


def _trained(kind: str, rescale: bool = False, calibrated: bool = False):
    nlp = spacy.blank("en")
    comparison = {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": rescale}
    if calibrated:
        comparison = {"@architectures": "spacy-siamese.TrainCalibrated.v1", "comparison": comparison}
    config = {
        "model": {"@architectures": "spacy-siamese.Siamese.v1", "encoder": ENCODERS[kind], "comparison": comparison}
    }
    nlp.add_pipe("siamese_similarity", config=config)
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    return nlp


@pytest.fixture(scope="module")
def tweak_nlp():
    return _trained("tweak")


@pytest.mark.parametrize(
    "kind,rescale,calibrated",
    [("tweak", False, False), ("tweak", True, False), ("tweak", False, True), ("s2net", False, False)],
)
def test_contributions_sum_to_the_score(kind, rescale, calibrated, tweak_nlp):
    nlp = tweak_nlp if (kind, rescale, calibrated) == ("tweak", False, False) else _trained(kind, rescale, calibrated)
    for a, b, _ in PAIRS[:6] + [("learn python learn", "Python, learn!", 1), ("", "python", 0)]:
        ex = explain_pair(nlp, a, b)
        total = ex.offset + sum(v for _, v in ex.contributions) + ex.rest
        assert total == pytest.approx(ex.score, abs=1e-5)
        assert ex.score == pytest.approx(nlp(a).similarity(nlp(b)))
        if kind == "tweak":
            shared = {t.lower_ for t in nlp(a) if not t.is_punct} & {t.lower_ for t in nlp(b) if not t.is_punct}
            assert {term for term, _ in ex.contributions} == shared
            assert all(v >= 0 for _, v in ex.contributions)
            assert abs(ex.rest) < 1e-6  # no two of these terms share a column at width 4096


def test_tweak_weights_and_errors(tweak_nlp):
    weights = tweak_weights(tweak_nlp)
    assert list(weights)[:3] == ["bias", "log_tf", "log_df"]
    with pytest.raises(ValueError, match="TWEAK and S2Net"):
        explain_pair(make_nlp(comparison={"@architectures": "spacy-siamese.CosineSimilarity.v1"}), "a", "b")
