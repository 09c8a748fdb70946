import numpy
import pytest

from spacy_siamese.layers import cauchy_similarity, cosine_similarity, matryoshka_scores
from spacy_siamese.layers.heads import predicting_head
from spacy_siamese.layers.in_batch import with_in_batch_scores

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def test_training_scores_the_whole_vectors_then_each_cut_and_predicts_the_whole():
    model = matryoshka_scores(comparison=cosine_similarity(), dims=[2, 4])
    A, B = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    model.initialize(X=(A, B))
    cosine = cosine_similarity()
    numpy.testing.assert_array_equal(model.predict((A, B)), cosine.predict((A, B)))
    Y, _ = model((A, B), is_train=True)
    assert Y.shape == (5, 3)
    for column, d in enumerate([6, 2, 4]):
        numpy.testing.assert_allclose(Y[:, column], cosine.predict((A[:, :d], B[:, :d]))[:, 0])
    assert predicting_head(model) is model.get_ref("comparison")


def test_the_gradient_adds_each_cut_into_its_first_columns():
    model = matryoshka_scores(comparison=with_in_batch_scores(comparison=cosine_similarity()), dims=[1, 3])
    A, B = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    model.initialize(X=(A, B))
    Y, backprop = model((A, B), is_train=True)
    assert Y.shape == (3, 3 * (1 + 3))  # per block: the pair column and the 3 x 3 in-batch matrix
    R = rng.normal(size=Y.shape)
    dA, dB = backprop(R)
    loss = lambda: float((model((A, B), is_train=True)[0] * R).sum())  # noqa: E731
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))


def test_the_scores_are_symmetric():
    model = matryoshka_scores(comparison=cosine_similarity(rescale=True), dims=[2])
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    model.initialize(X=(A, B))
    numpy.testing.assert_allclose(model((A, B), is_train=True)[0], model((B, A), is_train=True)[0])


@pytest.mark.parametrize("dims", [[], [0, 2], [4, 2], [2, 2]])
def test_dims_must_be_increasing_widths(dims):
    with pytest.raises(ValueError, match="MatryoshkaScores: dims must be increasing widths >= 1"):
        matryoshka_scores(comparison=cosine_similarity(), dims=dims)


def test_a_comparison_with_weights_is_refused():
    with pytest.raises(ValueError, match=r"comparison has weights \(cauchy_similarity\).*CosineSimilarity"):
        matryoshka_scores(comparison=cauchy_similarity(), dims=[2])


def test_a_cut_as_wide_as_the_vectors_is_an_error():
    model = matryoshka_scores(comparison=cosine_similarity(), dims=[2, 4])
    A = rng.normal(size=(2, 4))
    model.initialize(X=(A, A))
    with pytest.raises(ValueError, match=r"dims \[2, 4\] must be below the vectors' width 4"):
        model((A, A), is_train=True)
