from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d

from ..layers.bag_of_words import bag_of_words
from ..layers.dae import denoising_autoencoder


@registry.architectures("spacy-siamese.DAEEncoder.v1")
def build_dae_encoder(
    *,
    width: int = 50,
    max_vocab: int = 10000,
    attr: str = "lower",
    drop_stop: bool = True,
    drop_punct: bool = True,
    min_df: int = 2,
    noise: float = 0.3,
    reconstruction_weight: float = 1.0,
    seed: int = 0,
) -> Model[List[Doc], Floats2d]:
    """DAE + triplet (Tajima et al. 2016): a binary bag of the `max_vocab` most frequent terms ->
    dae.v1 with `width` hidden units. Train with TripletLoss.v1; compare with DotSimilarity.v1."""
    model: Model[List[Doc], Floats2d] = chain(
        bag_of_words(attr=attr, drop_stop=drop_stop, drop_punct=drop_punct, min_df=min_df, max_vocab=max_vocab),
        denoising_autoencoder(nO=width, noise=noise, reconstruction_weight=reconstruction_weight, seed=seed),
    )
    model.set_dim("nO", width)
    model.attrs["fit_on_corpus"] = True
    return model
