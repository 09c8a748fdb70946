from typing import Optional, Tuple

from spacy.util import registry
from thinc.api import Maxout, Model, Sigmoid, chain
from thinc.types import Floats2d

from ..layers import pair_features


@registry.architectures("spacy-siamese.FeatureHead.v1")
def build_feature_head(
    *, hidden_width: int = 128, maxout_pieces: int = 2, dropout: float = 0.0, nI: Optional[int] = None
) -> Model[Tuple[Floats2d, Floats2d], Floats2d]:
    """|a - b| and a * b -> Maxout -> sigmoid: a symmetric learned comparison."""
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"FeatureHead: dropout must be in [0, 1), got {dropout}")
    return chain(
        pair_features(nI=nI), Maxout(nO=hidden_width, nP=maxout_pieces, dropout=dropout, normalize=True), Sigmoid(nO=1)
    )
