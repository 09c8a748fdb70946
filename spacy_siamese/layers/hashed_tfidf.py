from typing import Callable, List, Optional, Tuple, cast

import numpy
from scipy.sparse import csr_matrix
from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats2d

# Bit of a term's 64-bit hash that gives its sign (the column comes from the low bits).
SIGN_BIT = numpy.uint64(32)


@registry.layers("spacy-siamese.hashed_tfidf.v1")
def hashed_tfidf(*, tfidf: Model[List[Doc], csr_matrix], width: int = 2048) -> Model[List[Doc], Floats2d]:
    """Dense lexical vectors: `tfidf` rows signed-hashed into `width` columns, l2-normalised, so
    an inner product is the TF-IDF cosine up to hash collisions. No parameters."""
    if width < 1:
        raise ValueError(f"hashed_tfidf: width must be positive, got {width}")
    return Model("hashed_tfidf", forward, init=init, layers=[tfidf], dims={"nO": width})


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    model.layers[0].initialize(X=X)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    tfidf = model.layers[0]
    rows = tfidf.predict(X)
    width = model.get_dim("nO")
    cols, signs = hash_columns(tfidf.attrs["table"].hashes[rows.indices], width)  # the batch's terms only
    Y = numpy.zeros((len(X), width), dtype="float32")
    row_ids = numpy.repeat(numpy.arange(len(X)), numpy.diff(rows.indptr))
    numpy.add.at(Y, (row_ids, cols), signs * rows.data)
    norms = numpy.linalg.norm(Y, axis=1, keepdims=True)
    Y /= numpy.where(norms > 0, norms, 1.0)
    return model.ops.asarray2f(cast(Floats2d, Y)), lambda dY: X  # no parameters


def hash_columns(hashes: numpy.ndarray, width: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The column (low bits modulo `width`) and the sign (bit SIGN_BIT) of each 64-bit term hash."""
    cols = (hashes % numpy.uint64(width)).astype("int64")
    signs = numpy.where((hashes >> SIGN_BIT) & numpy.uint64(1), 1.0, -1.0).astype("float32")
    return cols, signs
