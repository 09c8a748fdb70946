"""Averaging the weights of trained pipelines (`spacy_siamese.averaging`)."""

import re

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese import set_lexical_weight
from spacy_siamese.averaging import average_pipelines

from .conftest import GRADED, PAIRS, fine_tune, make_nlp, pair_examples, set_random_vectors, train
from .search.conftest import HYBRID_CAUCHY, hybrid_nlp


@pytest.fixture(scope="module")
def parent():
    return train(make_nlp(), n_iter=20)[0].to_bytes()


@pytest.fixture(scope="module")
def tuned(parent):
    """Two pipelines trained further from one parent, as bytes."""
    return [fine_tune(parent, seed).to_bytes() for seed in (1, 2)]


def load(data, **cfg):
    nlp = make_nlp(**cfg)
    nlp.initialize(lambda: pair_examples(nlp))
    return nlp.from_bytes(data)


def params(nlp):
    return {
        (i, node.name, key): numpy.asarray(node.get_param(key), dtype="f8")
        for i, node in enumerate(nlp.get_pipe("siamese_similarity").model.walk())
        for key in node.param_names
        if node.has_param(key)
    }


def test_average_is_the_weighted_mean_of_each_parameter(tuned):
    a, b = load(tuned[0]), load(tuned[1])
    before_a, before_b, old_id = params(a), params(b), a.get_pipe("siamese_similarity").model_id
    assert any(not numpy.allclose(before_a[k], before_b[k]) for k in before_a)  # the fine-tunes differ
    averaged = average_pipelines([a, b], weights=[1, 3])
    assert averaged is a
    for key, value in params(averaged).items():
        numpy.testing.assert_allclose(value, 0.25 * before_a[key] + 0.75 * before_b[key], rtol=1e-5, atol=1e-6)
    pipe = averaged.get_pipe("siamese_similarity")
    assert pipe.model_id != old_id  # vectors stored by the first pipeline's weights are not these
    doc1, doc2 = averaged("How do I learn Python fast?"), averaged("What is the quickest way to learn Python?")
    assert 0.0 <= doc1.similarity(doc2) <= 1.0


def test_average_of_a_pipeline_with_itself_scores_as_it(tuned):
    a, copy, reference = load(tuned[0]), load(tuned[0]), load(tuned[0])
    average_pipelines([a, copy])
    examples = pair_examples(a)
    numpy.testing.assert_allclose(
        a.get_pipe("siamese_similarity").pair_scores(examples)[0],
        reference.get_pipe("siamese_similarity").pair_scores(pair_examples(reference))[0],
        atol=1e-6,
    )


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=100.0), min_size=2, max_size=2).filter(lambda w: sum(w) > 1e-3))
def test_each_averaged_parameter_lies_between_the_pipelines(tuned, weights):
    a, b = load(tuned[0]), load(tuned[1])
    low = {k: numpy.minimum(v, params(b)[k]) for k, v in params(a).items()}
    high = {k: numpy.maximum(v, params(b)[k]) for k, v in params(a).items()}
    for key, value in params(average_pipelines([a, b], weights=weights)).items():
        assert (value >= low[key] - 1e-6).all() and (value <= high[key] + 1e-6).all()


@pytest.mark.parametrize(
    "weights,message",
    [
        ([1.0], "1 weights for 2 pipelines"),
        ([1.0, -1.0], "at least 0"),
        ([0.0, 0.0], "not all 0"),
        ([1.0, float("nan")], "finite"),
    ],
)
def test_bad_weights_are_refused(tuned, weights, message):
    with pytest.raises(ValueError, match=message):
        average_pipelines([load(tuned[0]), load(tuned[1])], weights=weights)


def test_one_pipeline_is_refused(tuned):
    with pytest.raises(ValueError, match="at least two pipelines, got 1"):
        average_pipelines([load(tuned[0])])


def test_pipelines_of_other_pipes_or_architectures_are_refused(tuned):
    other_pipes = load(tuned[1])
    other_pipes.add_pipe("sentencizer")
    with pytest.raises(ValueError, match="Pipeline 2 has the pipes .*'sentencizer'.*average one kind of pipeline"):
        average_pipelines([load(tuned[0]), other_pipes])
    wider = make_nlp(
        model={"encoder": {"width": 16, "depth": 1, "rows": [500, 200, 200, 200], "include_static_vectors": False}}
    )
    wider.initialize(lambda: pair_examples(wider))
    with pytest.raises(ValueError, match="pipeline 2 has other layers or sizes than pipeline 1's"):
        average_pipelines([load(tuned[0]), wider])


def test_other_fitted_state_is_refused(tuned):
    """Weights beside another fitted state (here a layer setting changed by hand) are not averaged."""
    other = load(tuned[1])
    node = next(n for n in other.get_pipe("siamese_similarity").model.walk() if n.attrs)
    key = next(iter(node.attrs))
    node.attrs[key] = "changed"
    layer = re.escape(f"fitted state of its '{node.name}' layer ({key})")
    with pytest.raises(ValueError, match=f"differs from pipeline 1's in the {layer}"):
        average_pipelines([load(tuned[0]), other])


def test_an_untrained_pipe_is_refused(tuned):
    untrained = make_nlp()
    with pytest.raises(ValueError, match="Pipeline 2: The 'siamese_similarity' pipe is not initialized"):
        average_pipelines([load(tuned[0]), untrained])


def test_pipes_that_read_other_static_vectors_are_refused():
    cfg = {"model": {"encoder": {"width": 16, "depth": 1, "rows": [50, 20, 20, 20], "include_static_vectors": True}}}
    words = sorted({w for a, b, _ in PAIRS for w in (a + " " + b).split()})
    pipelines = []
    for skip in (0, 1):
        nlp = set_random_vectors(make_nlp(**cfg), words[skip:], 8)  # the second without the first word
        nlp.initialize(lambda nlp=nlp: pair_examples(nlp))
        pipelines.append(nlp)
    with pytest.raises(ValueError, match="reads static vectors, and pipeline 2's .* are not pipeline 1's"):
        average_pipelines(pipelines)


def test_a_tfidf_fitted_on_other_texts_is_refused():
    """S2Net pipes whose TF-IDF vocabularies have one size but other terms."""
    encoder = {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 4, "min_df": 1, "max_vocab": 6}
    pipelines = []
    for pairs in (PAIRS, GRADED):
        nlp = make_nlp(model={"encoder": encoder})
        nlp.initialize(lambda nlp=nlp, pairs=pairs: pair_examples(nlp, pairs))
        pipelines.append(nlp)
    with pytest.raises(ValueError, match=re.escape("in the fitted state of its 'tfidf' layer (table)")):
        average_pipelines(pipelines)
    same = make_nlp(model={"encoder": encoder})
    same.initialize(lambda: pair_examples(same, PAIRS))
    average_pipelines([same, pipelines[0]])  # one vocabulary: averaged


def test_an_error_leaves_the_pipelines_as_they_were(tuned):
    """The second pipe does not match: the first pipe, which does, is not averaged either."""
    first, second = load(tuned[0]), load(tuned[1])
    for nlp, width in ((first, 32), (second, 16)):
        other = nlp.add_pipe("siamese_similarity", name="other", config={"model": {"encoder": {"width": width}}})
        other.initialize(lambda nlp=nlp: pair_examples(nlp))
    before = params(first)
    with pytest.raises(ValueError, match="The 'other' pipe of pipeline 2 has other layers or sizes"):
        average_pipelines([first, second])
    for key, value in params(first).items():
        numpy.testing.assert_array_equal(value, before[key])


def test_hybrids_mixed_at_other_lexical_weights_are_refused():
    """The lexical weight is a setting, not a weight: the message says how to make it one."""
    pipelines = [train(hybrid_nlp(HYBRID_CAUCHY), n_iter=1)[0] for _ in range(2)]
    pipelines[1].from_bytes(pipelines[0].to_bytes())
    set_lexical_weight(pipelines[1], 0.1)
    with pytest.raises(ValueError, match=r"lexical part at weight 0.1, pipeline 1's at 0.3: set one weight first"):
        average_pipelines(pipelines)
    set_lexical_weight(pipelines[0], 0.1)
    average_pipelines(pipelines)
