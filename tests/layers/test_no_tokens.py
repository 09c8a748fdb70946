import numpy
import pytest
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import Model

from spacy_siamese.layers.no_tokens import encode_docs

WIDTH = 3


def _counting_encoder(*, fail_without_tokens: bool):
    """Each doc's vector is (its number of tokens, 1, 1) times a weight; it records the gradient
    it is given. Like a user's MultiHashEmbed with static vectors, it can fail on a batch
    without a single token."""

    def forward(model, docs, is_train):
        if fail_without_tokens and not any(len(doc) for doc in docs):
            raise ValueError("Shape mismatch for blis.gemm")
        w = model.attrs["w"]
        Y = numpy.array([[len(doc) * w, w, w] for doc in docs], dtype="f")

        def backprop(dY):
            model.attrs["seen"].append(dY.copy())
            return docs

        return Y, backprop

    return Model("counting", forward, dims={"nO": WIDTH}, attrs={"w": 2.0, "seen": []})


def _docs(*texts):
    vocab = Vocab()
    return [Doc(vocab, words=text.split()) for text in texts]


@pytest.mark.parametrize("fail", [False, True])
def test_a_batch_without_a_token_gets_the_rows_it_gets_beside_others(fail):
    encoder = _counting_encoder(fail_without_tokens=fail)
    docs = _docs("", "")
    V, backprop = encode_docs(encoder, docs, True)
    numpy.testing.assert_array_equal(V, [[0, 2, 2], [0, 2, 2]])
    numpy.testing.assert_array_equal(V[:1], encode_docs(encoder, _docs("", "a b"), False)[0][:1])
    dY = numpy.arange(6, dtype="f").reshape(2, WIDTH)
    assert backprop(dY) is docs
    (seen,) = encoder.attrs["seen"]
    # the one-token doc's row, when there was one, gets no gradient
    expected = numpy.vstack([dY, numpy.zeros((1, WIDTH), dtype="f")]) if fail else dY
    numpy.testing.assert_array_equal(seen, expected)


def test_docs_with_tokens_and_no_docs():
    encoder = _counting_encoder(fail_without_tokens=True)
    V, _ = encode_docs(encoder, _docs("a b", ""), False)
    numpy.testing.assert_array_equal(V, [[4, 2, 2], [0, 2, 2]])
    V, backprop = encode_docs(encoder, [], True)
    assert V.shape == (0, WIDTH) and backprop(V) == []


@pytest.mark.parametrize("texts", [("a",), ("",)])
def test_an_encoder_giving_rows_of_another_shape_is_named(texts):
    def forward(model, docs, is_train):
        return numpy.zeros((len(docs), WIDTH + 1), dtype="f"), None

    encoder = Model("too_wide", forward, dims={"nO": WIDTH})
    with pytest.raises(ValueError, match=r"encoder 'too_wide' gave an array of shape \(\d, 4\) for \d docs"):
        encode_docs(encoder, _docs(*texts), False)
