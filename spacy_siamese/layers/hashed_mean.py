from typing import Callable, List, Sequence, Tuple, cast

from spacy.attrs import IDS
from spacy.tokens import Doc
from thinc.api import Model, registry, uniform_init
from thinc.types import Floats2d, Ints1d, Ints2d

from ..util import scatter_grad

DEFAULT_ATTRS = ("NORM", "PREFIX", "SUFFIX", "SHAPE")


@registry.layers("spacy-siamese.hashed_mean.v1")
def hashed_mean(
    *, width: int, rows: int, attrs: Sequence[str] = DEFAULT_ATTRS, seed: int = 0
) -> Model[List[Doc], Floats2d]:
    """The mean over a doc's tokens of the summed hash embeddings (`rows` rows) of their `attrs`:
    a learned static embedding, as in model2vec; an empty doc gets zeros."""
    if not attrs or any(attr.upper() not in IDS for attr in attrs):
        raise ValueError(f"hashed_mean: need spaCy token attributes (e.g. NORM, PREFIX), got {list(attrs)}")
    if width < 1 or rows < 1:
        raise ValueError(f"hashed_mean: need width >= 1 and rows >= 1, got {width} and {rows}")
    return Model(
        "hashed_mean",
        forward,
        init=init,
        params={"E": None},
        dims={"nO": width, "nV": rows},
        attrs={"attrs": [IDS[attr.upper()] for attr in attrs], "seed": seed},
    )


def init(model: Model[List[Doc], Floats2d], X: object = None, Y: object = None) -> None:
    model.set_param("E", uniform_init(model.ops, (model.get_dim("nV"), model.get_dim("nO"))))


def forward(model: Model[List[Doc], Floats2d], docs: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    E = model.get_param("E")
    keys = hashed_keys(model, docs)  # (n_tokens, n_attrs) rows of E
    lengths: Ints1d = model.ops.asarray1i([len(doc) for doc in docs])
    if not len(keys):  # no doc has a token: each gets the mean of nothing, a zero vector
        return model.ops.alloc2f(len(docs), model.get_dim("nO")), lambda dY: []
    Y = model.ops.reduce_mean(cast(Floats2d, model.ops.xp.take(E, keys, axis=0).sum(axis=1)), lengths)

    def backprop(dY: Floats2d) -> List[Doc]:
        d_summed = model.ops.backprop_reduce_mean(dY, lengths)
        for column in range(keys.shape[1]):  # each attribute adds the token's gradient to its row
            scatter_grad(model, "E", keys[:, column], d_summed)
        return []

    return Y, backprop


def hashed_keys(model: Model, docs: List[Doc]) -> Ints2d:
    """The table rows of each token's attributes, int (n_tokens, n_attrs)."""
    attrs, seed, rows = model.attrs["attrs"], model.attrs["seed"], model.get_dim("nV")
    arrays = [doc.to_array(attrs).reshape(len(doc), len(attrs)) for doc in docs if len(doc)]
    if not arrays:
        return model.ops.alloc2i(0, len(attrs))
    ids = model.ops.xp.concatenate(arrays).astype("uint64")
    columns = [
        model.ops.hash(model.ops.xp.ascontiguousarray(ids[:, i]), seed + i)[:, 0] % rows for i in range(len(attrs))
    ]
    return model.ops.xp.stack(columns, axis=1).astype("int64")
