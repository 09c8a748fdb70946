from typing import List, Sequence

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.tweak import FEATURE_GROUPS, tweak


@registry.architectures("spacy-siamese.TweakEncoder.v1")
def build_tweak_encoder(
    *,
    width: int = 4096,
    attr: str = "lower",
    features: Sequence[str] = tuple(FEATURE_GROUPS),
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
) -> Model[List[Doc], Floats2d]:
    """TWEAK (Yih 2009): the `tweak.v1` layer fitted on every training doc; compare with CosineSimilarity.v1."""
    model = tweak(width=width, attr=attr, features=features, drop_punct=drop_punct, min_df=min_df, max_vocab=max_vocab)
    model.attrs["fit_on_corpus"] = True
    return model
