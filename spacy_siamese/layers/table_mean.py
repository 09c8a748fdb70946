from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats2d

from .mean_pool import forward as mean_forward
from .table_embed import forward as embed_forward
from .table_embed import table_layer


@registry.layers("spacy-siamese.table_mean.v1")
def table_mean(*, width: Optional[int] = None, path: Optional[str] = None) -> Model[List[Doc], Floats2d]:
    """The mean over a doc's subword tokens of a trainable embedding table: `table_embed.v1` (its
    table, tokenizer, `width` and `path`) and then `mean_pool.v1`, in one layer, so a doc with no
    known token gets zeros. It reads only each doc's text, so it takes texts as well."""
    return table_layer("table_mean", forward, width=width, path=path)


def forward(model: Model[List[Doc], Floats2d], docs: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    X, backprop_embed = embed_forward(model, docs, is_train)
    Y, backprop_mean = mean_forward(model, X, is_train)

    def backprop(dY: Floats2d) -> List[Doc]:
        return backprop_embed(backprop_mean(dY))

    return Y, backprop
