from typing import List, Sequence, Union

from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.ml.staticvectors import StaticVectors
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Model, chain, ragged2list
from thinc.types import Floats2d

from ..layers.no_tokens import skip_features_without_tokens
from ..layers.recurrent import lstm
from ..layers.sentence_vectors import sentence_vectors
from ..layers.sequence_pool import POOLINGS, sequence_pool
from .mwe import DEFAULT_ATTRS, DEFAULT_ROWS, check_attrs, check_rows


@registry.architectures("spacy-siamese.LSTMEncoder.v1")
def build_lstm_encoder(
    *,
    width: int = 128,
    hidden_width: int = 128,
    depth: int = 1,
    bidirectional: bool = False,
    pooling: str = "last",
    attrs: Sequence[str] = DEFAULT_ATTRS,
    rows: Union[int, Sequence[int]] = DEFAULT_ROWS,
    include_static_vectors: bool = True,
    dropout: float = 0.0,
) -> Model[List[Doc], Floats2d]:
    """MaLSTM (Mueller & Thyagarajan 2016): token features of `width` (hash embeddings of `attrs` and/or static
    vectors) -> LSTM.v1 of `depth` layers and `hidden_width` outputs -> one vector per doc by `pooling` ("last",
    "mean" or "max"). An empty doc gives the zero vector."""
    check_lstm("LSTMEncoder", pooling=pooling, bidirectional=bidirectional, hidden_width=hidden_width, dropout=dropout)
    attrs = check_attrs("LSTMEncoder", attrs)
    embed: Model[List[Doc], List[Floats2d]]
    if attrs:
        rows = check_rows("LSTMEncoder", attrs, rows)
        embed = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    elif include_static_vectors:
        embed = chain(StaticVectors(nO=width, dropout=0.0), ragged2list())
    else:
        raise ValueError("LSTMEncoder: no token features: give attrs or set include_static_vectors = true")
    model = skip_features_without_tokens(
        chain(
            embed,
            Dropout(dropout),
            lstm(nO=hidden_width, nI=width, bidirectional=bidirectional, depth=depth),
            sequence_pool(mode=pooling, bidirectional=bidirectional),
        ),
        width,
    )
    model.set_dim("nO", hidden_width)
    return model


@registry.architectures("spacy-siamese.SentenceLSTMEncoder.v1")
def build_sentence_lstm_encoder(
    *, hidden_width: int = 128, depth: int = 1, bidirectional: bool = False, pooling: str = "last", dropout: float = 0.0
) -> Model[List[Doc], Floats2d]:
    """Document-level LSTM encoder (Patel 2017) over the doc's sentence vectors
    (sentence_vectors.v1, needs static vectors); options as in LSTMEncoder.v1."""
    check_lstm(
        "SentenceLSTMEncoder", pooling=pooling, bidirectional=bidirectional, hidden_width=hidden_width, dropout=dropout
    )
    model: Model[List[Doc], Floats2d] = chain(
        sentence_vectors(),
        Dropout(dropout),
        lstm(nO=hidden_width, bidirectional=bidirectional, depth=depth),
        sequence_pool(mode=pooling, bidirectional=bidirectional),
    )
    model.set_dim("nO", hidden_width)
    return model


def check_lstm(name: str, *, pooling: str, bidirectional: bool, hidden_width: int, dropout: float) -> None:
    """Raise on LSTM settings an encoder cannot be built with."""
    if pooling not in POOLINGS:
        raise ValueError(f"{name}: pooling must be one of {', '.join(map(repr, POOLINGS))}, got {pooling!r}")
    if bidirectional and hidden_width % 2:
        raise ValueError(f"{name}: a bidirectional LSTM needs an even hidden_width, got {hidden_width}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout}")
