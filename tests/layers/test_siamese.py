import numpy
import pytest
from thinc.api import Model

from spacy_siamese.layers import cauchy_similarity, siamese

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def _toy_encoder(width_in=3, width_out=4):
    """A List[vector] -> Floats2d encoder with one weight matrix, standing in for the doc encoder."""

    def forward(model, X, is_train):
        W = model.get_param("W")
        stacked = numpy.vstack(X)
        Y = stacked @ W.T

        def backprop(dY):
            model.inc_grad("W", dY.T @ stacked)
            return X

        return Y, backprop

    model = Model("toy", forward, params={"W": None}, dims={"nO": width_out})
    model.set_param("W", rng.normal(size=(width_out, width_in)))
    return model


def test_siamese_routes_both_sides_to_the_shared_encoder():
    encoder = _toy_encoder()
    model = siamese(encoder=encoder, comparison=cauchy_similarity(nI=4))
    model.get_ref("comparison").initialize()
    model.get_ref("comparison").set_param("v", rng.normal(size=(4,)))
    docs_a = [rng.normal(size=(3,)) for _ in range(5)]
    docs_b = [rng.normal(size=(3,)) for _ in range(5)]
    R = rng.normal(size=(5, 1))
    Y, backprop = model((docs_a, docs_b), is_train=True)
    assert Y.shape == (5, 1)
    backprop(R)
    W = encoder.get_param("W")
    numeric = numeric_grad(lambda: float((model.predict((docs_a, docs_b)) * R).sum()), W, 1e-6)
    assert_grad_close(encoder.get_grad("W"), numeric)
    # swapping the sides changes nothing
    numpy.testing.assert_array_equal(model.predict((docs_a, docs_b)), model.predict((docs_b, docs_a)))


def test_siamese_rejects_unequal_sides():
    model = siamese(encoder=_toy_encoder(), comparison=cauchy_similarity(nI=4))
    model.get_ref("comparison").initialize()
    with pytest.raises(ValueError, match="2 docs on side A but 1 on side B"):
        model.predict(([numpy.ones(3), numpy.ones(3)], [numpy.ones(3)]))


def _hybrid_encoder(lexical_width):
    from spacy_siamese.architectures import build_hybrid_encoder, build_mwe_encoder

    encoder = build_mwe_encoder(width=8, depth=1, rows=50, post_depth=0)
    return build_hybrid_encoder(encoder=encoder, lexical_width=lexical_width, min_df=1)


@pytest.mark.parametrize("encoder_width", [16, 80])
def test_siamese_refuses_a_hybrid_similarity_of_another_lexical_width(encoder_width):
    """The comparison would silently read learned columns as lexical ones (or the reverse)."""
    from spacy_siamese.layers import hybrid_similarity
    from spacy_siamese.layers.in_batch import with_in_batch_scores

    comparison = hybrid_similarity(comparison=cauchy_similarity(), lexical_width=64)
    with pytest.raises(
        ValueError,
        match=f"lexical_width = 64 but the encoder is a HybridEncoder.v1 with lexical_width = {encoder_width}",
    ):
        siamese(encoder=_hybrid_encoder(encoder_width), comparison=comparison)
    wrapped = with_in_batch_scores(comparison=hybrid_similarity(comparison=cauchy_similarity(), lexical_width=64))
    with pytest.raises(ValueError, match="lexical_width = 64 but the encoder is another encoder"):
        siamese(encoder=_toy_encoder(width_out=96), comparison=wrapped)
    siamese(encoder=_hybrid_encoder(64), comparison=wrapped)
