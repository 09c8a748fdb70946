from typing import Callable, List, Optional, Tuple, cast

from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats2d, Ragged

from .table_mean import init, token_ids


@registry.layers("spacy-siamese.table_embed.v1")
def table_embed(*, width: Optional[int] = None, path: Optional[str] = None) -> Model[List[Doc], Ragged]:
    """The rows of a trainable embedding table for each doc's subword tokens, as one Ragged (a doc
    with no known token has length 0). Table, tokenizer, `width` and `path` as in `table_mean.v1`,
    which is this layer followed by the mean; it reads only each doc's text, so it takes texts too."""
    if width is not None and width < 1:
        raise ValueError(f"table_embed: need width >= 1, got {width}")
    return Model(
        "table_embed",
        forward,
        init=init,
        params={"E": None},
        dims={"nO": width, "nV": None},
        attrs={"path": path or "", "tokenizer": "", "unk": -1, "max_length": 0},
    )


def forward(model: Model[List[Doc], Ragged], docs: List[Doc], is_train: bool) -> Tuple[Ragged, Callable]:
    E = cast(Floats2d, model.get_param("E"))
    ids, lengths = token_ids(model, docs)
    X = model.ops.xp.take(E, ids, axis=0) if len(ids) else model.ops.alloc2f(0, E.shape[1])

    def backprop(dY: Ragged) -> List[Doc]:
        if len(ids):
            dE = model.ops.alloc2f(*E.shape)
            model.ops.scatter_add(dE, ids, cast(Floats2d, dY.dataXd))
            model.inc_grad("E", dE)
        return []

    return Ragged(X, lengths), backprop
