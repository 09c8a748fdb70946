import numpy
import pytest

from spacy_siamese.layers import cauchy_similarity, cosine_similarity, hybrid_similarity
from spacy_siamese.layers.heads import score_range
from spacy_siamese.layers.hybrid import set_hybrid_weight
from spacy_siamese.space import CAUCHY, COSINE, HYBRID, vector_space

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
N_LEX = 3


def vectors(n=6, learned=4):
    lexical = numpy.abs(rng.normal(size=(n, N_LEX)))
    lexical /= numpy.linalg.norm(lexical, axis=1, keepdims=True)
    lexical[2] = 0.0  # a doc without a known term
    return numpy.hstack([rng.normal(size=(n, learned)), lexical])


@pytest.mark.parametrize("inner", [cauchy_similarity, cosine_similarity])
def test_prediction_mixes_learned_and_lexical(inner):
    A, B = vectors(), vectors()
    model = hybrid_similarity(comparison=inner(), lexical_width=N_LEX, weight=0.25)
    model.initialize(X=(A, B))
    learned = model.get_ref("comparison").predict((A[:, :-N_LEX], B[:, :-N_LEX]))[:, 0]
    lexical = numpy.clip((A[:, -N_LEX:] * B[:, -N_LEX:]).sum(axis=1), 0, 1)
    numpy.testing.assert_allclose(model.predict((A, B))[:, 0], 0.75 * learned + 0.25 * lexical, rtol=1e-12)
    numpy.testing.assert_allclose(model.predict((A, B)), model.predict((B, A)), rtol=1e-12)


def test_training_output_and_gradient_are_the_learned_parts():
    A, B = vectors(), vectors()
    model = hybrid_similarity(comparison=cauchy_similarity(), lexical_width=N_LEX, weight=0.25)
    model.initialize(X=(A, B))
    inner = model.get_ref("comparison")
    Y, backprop = model((A, B), is_train=True)
    numpy.testing.assert_allclose(Y, inner.predict((A[:, :-N_LEX], B[:, :-N_LEX])))
    R = rng.normal(size=Y.shape)
    dA, dB = backprop(R)
    assert dA.shape == A.shape and not dA[:, -N_LEX:].any() and not dB[:, -N_LEX:].any()
    loss = lambda: float((model((A, B), is_train=True)[0] * R).sum())  # noqa: E731
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))


def test_score_range_and_space():
    cosine = hybrid_similarity(comparison=cosine_similarity(), lexical_width=N_LEX, weight=0.25)
    assert score_range(cosine) == (-0.75, 1.0)
    A, B = vectors(), vectors()
    for inner, kind in [(cauchy_similarity(), CAUCHY), (cosine_similarity(rescale=True), COSINE)]:
        model = hybrid_similarity(comparison=inner, lexical_width=N_LEX, weight=0.25)
        model.initialize(X=(A, B))
        space = vector_space(model)
        assert space.kind == HYBRID and space.inner.kind == kind and space.scores_exactly
        matrix = space.scores(A, B)
        for i in range(len(A)):
            numpy.testing.assert_allclose(
                matrix[i], model.predict((numpy.repeat(A[i : i + 1], len(B), 0), B))[:, 0], rtol=1e-6
            )


def test_space_mixes_its_parts_at_any_weight():
    """`mix` of `score_parts` is `scores` at the space's weight, and at another weight the scores of
    the same comparison built with that weight (cosine has no parameters to differ)."""
    A, B = vectors(), vectors()
    spaces = {}
    for weight in (0.25, 0.6):
        model = hybrid_similarity(comparison=cosine_similarity(rescale=True), lexical_width=N_LEX, weight=weight)
        model.initialize(X=(A, B))
        spaces[weight] = vector_space(model)
    learned, lexical = spaces[0.25].score_parts(A, B)
    numpy.testing.assert_allclose(spaces[0.25].mix(learned, lexical), spaces[0.25].scores(A, B))
    numpy.testing.assert_allclose(spaces[0.25].mix(learned, lexical, 0.6), spaces[0.6].scores(A, B))
    numpy.testing.assert_allclose(spaces[0.25].mix(learned, lexical, 0.0), learned)


@pytest.mark.parametrize("inner", [cauchy_similarity, lambda: cosine_similarity(rescale=True), cosine_similarity])
def test_paired_parts_are_the_diagonals(inner):
    """`paired_score_parts(A, B)` scores row i of A with row i of B: the diagonals of
    `score_parts(A, B)`, and mixed at the space's weight the model's own prediction."""
    A, B = vectors(), vectors()
    model = hybrid_similarity(comparison=inner(), lexical_width=N_LEX, weight=0.25)
    model.initialize(X=(A, B))
    space = vector_space(model)
    learned, lexical = space.paired_score_parts(A, B)
    assert learned.shape == lexical.shape == (len(A),) and lexical[2] == 0.0
    for paired, matrix in zip((learned, lexical), space.score_parts(A, B)):
        numpy.testing.assert_allclose(paired, numpy.diag(matrix), rtol=1e-6, atol=1e-7)  # float32 sums
    numpy.testing.assert_allclose(space.mix(learned, lexical), model.predict((A, B))[:, 0], rtol=1e-6)
    with pytest.raises(ValueError, match="as many rows"):
        space.paired_score_parts(A, B[:-1])


def test_bad_settings():
    with pytest.raises(ValueError, match="weight"):
        hybrid_similarity(comparison=cosine_similarity(), lexical_width=3, weight=1.5)
    model = hybrid_similarity(comparison=cosine_similarity(), lexical_width=8)
    with pytest.raises(ValueError, match="no learned part"):
        model.initialize(X=(numpy.zeros((2, 8)), numpy.zeros((2, 8))))


@pytest.mark.parametrize("inner", [cauchy_similarity, cosine_similarity])
def test_set_hybrid_weight_mixes_at_the_new_weight(inner):
    """Set on a built layer, the weight gives the predictions and score range of the layer built with it."""
    A, B = vectors(), vectors()
    model = hybrid_similarity(comparison=inner(), lexical_width=N_LEX, weight=0.25)
    model.initialize(X=(A, B))
    built = hybrid_similarity(comparison=inner(), lexical_width=N_LEX, weight=0.6)
    built.initialize(X=(A, B))
    built.get_ref("comparison").from_bytes(model.get_ref("comparison").to_bytes())
    set_hybrid_weight(model, 0.6)
    assert model.attrs["weight"] == 0.6 and score_range(model) == score_range(built)
    numpy.testing.assert_allclose(model.predict((A, B)), built.predict((A, B)), rtol=1e-12)
    with pytest.raises(ValueError, match="weight must be in"):
        set_hybrid_weight(model, float("nan"))
    assert model.attrs["weight"] == 0.6
