from typing import List, Optional, Sequence

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain
from thinc.types import Floats2d

from ..layers.hashed_mean import DEFAULT_ATTRS, hashed_mean
from ..layers.table_mean import table_mean


@registry.architectures("spacy-siamese.StaticEncoder.v1")
def build_static_encoder(
    *, width: int = 256, rows: int = 200000, attrs: Sequence[str] = DEFAULT_ATTRS, proj_width: int = 0, seed: int = 0
) -> Model[List[Doc], Floats2d]:
    """`hashed_mean.v1` (a context-blind average of hashed embeddings), then a linear map to `proj_width` if > 0."""
    return build_static_encoder_v2(width=width, rows=rows, attrs=attrs, proj_width=proj_width, seed=seed)


@registry.architectures("spacy-siamese.StaticEncoder.v2")
def build_static_encoder_v2(
    *,
    width: Optional[int] = 256,
    rows: int = 200000,
    attrs: Sequence[str] = DEFAULT_ATTRS,
    proj_width: int = 0,
    seed: int = 0,
    table: Optional[str] = None,
) -> Model[List[Doc], Floats2d]:
    """v1, or, with `table` (a model2vec model directory, e.g. all-MiniLM-L6-v2 or a fine-tuned teacher distilled by
    `model2vec.distill`), `table_mean.v1`: that model's embedding table over its subword tokens, trained on from there
    (`width`: the table's, or null to take it from the table); `rows`, `attrs` and `seed` are then unused."""
    if proj_width < 0:
        raise ValueError(f"StaticEncoder: need proj_width >= 0, got {proj_width}")
    if table:
        embed = table_mean(width=width, path=table)
    elif width is None:
        raise ValueError("StaticEncoder: need a width for hashed embeddings (only a `table` gives its own)")
    else:
        embed = hashed_mean(width=width, rows=rows, attrs=attrs, seed=seed)
    model: Model[List[Doc], Floats2d] = chain(embed, Linear(nO=proj_width, nI=width)) if proj_width else embed
    model.attrs["reads_text"] = bool(table)  # the pipe encodes texts without making docs
    n_out = proj_width or width
    if n_out:
        model.set_dim("nO", n_out)
    return model
