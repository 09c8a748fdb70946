"""A static encoder: hashed word and subword embeddings, averaged, no convolution (model2vec's idea)."""

from typing import List, Sequence

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain
from thinc.types import Floats2d

from ..layers.hashed_mean import DEFAULT_ATTRS, hashed_mean


@registry.architectures("spacy-siamese.StaticEncoder.v1")
def build_static_encoder(
    *, width: int = 256, rows: int = 200000, attrs: Sequence[str] = DEFAULT_ATTRS, proj_width: int = 0, seed: int = 0
) -> Model[List[Doc], Floats2d]:
    """`hashed_mean.v1` (a context-blind average of hashed embeddings), then, if `proj_width` > 0,
    a linear map to that width."""
    if proj_width < 0:
        raise ValueError(f"StaticEncoder: need proj_width >= 0, got {proj_width}")
    embed = hashed_mean(width=width, rows=rows, attrs=attrs, seed=seed)
    model: Model[List[Doc], Floats2d] = chain(embed, Linear(nO=proj_width, nI=width)) if proj_width else embed
    model.set_dim("nO", proj_width or width)
    return model
