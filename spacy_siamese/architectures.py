"""Registered model builders: encoders, comparisons and the siamese wrapper."""
from typing import List, Optional, Sequence, Tuple, Union

from spacy.ml.models.tok2vec import MaxoutWindowEncoder, MultiHashEmbed, build_Tok2Vec_model
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Logistic, Maxout, Model, Sigmoid, chain, list2ragged, residual
from thinc.types import Floats2d

from .layers import (
    cauchy_similarity,
    cosine_similarity,
    mean_max_pool,
    pair_features,
    projection,
    siamese,
    tfidf,
    train_calibrated,
    with_auxiliary,
)

Comparison = Model[Tuple[Floats2d, Floats2d], Floats2d]


@registry.architectures("spacy-siamese.MWEEncoder.v1")
def build_mwe_encoder(
    *,
    width: int = 128,
    depth: int = 2,
    window_size: int = 1,
    maxout_pieces: int = 3,
    attrs: Sequence[str] = ("NORM", "PREFIX", "SUFFIX", "SHAPE"),
    rows: Union[int, Sequence[int]] = (10000, 2500, 2500, 2500),
    include_static_vectors: bool = False,
    post_depth: int = 0,
    proj_width: int = 0,
    squash: bool = False,
) -> Model[List[Doc], Floats2d]:
    """Hash embeddings (+ static vectors) -> Maxout Window Encoding x depth -> mean+max pooling
    -> `post_depth` residual Maxout layers -> optional Maxout projection to `proj_width`
    -> optional sigmoid squash (as in Thinc's Quora example).

    Output: one vector of width `proj_width` (if > 0) or 2 * `width` per doc. Only lexical
    attributes are used, so the partner docs built during training need no other pipe.
    (On Quora dev, `proj_width = 768` with the auxiliary feature head of
    configs/quora_cauchy.cfg added 0.25 AUC points at step 6,000; see the README.)
    """
    attrs = list(attrs)
    rows = [rows] * len(attrs) if isinstance(rows, int) else list(rows)
    if len(rows) != len(attrs):
        raise ValueError(f"MWEEncoder: got {len(rows)} row counts for {len(attrs)} attrs {attrs}")
    embed = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    encode = MaxoutWindowEncoder(width=width, window_size=window_size, maxout_pieces=maxout_pieces, depth=depth)
    layers = [build_Tok2Vec_model(embed, encode), list2ragged(), mean_max_pool()]
    for _ in range(post_depth):
        layers.append(residual(Maxout(nO=2 * width, nI=2 * width, nP=maxout_pieces, normalize=True)))
    if proj_width > 0:
        layers.append(Maxout(nO=proj_width, nI=2 * width, nP=maxout_pieces, normalize=True))
    if squash:
        layers.append(Logistic())
    model = chain(*layers)
    model.set_dim("nO", proj_width if proj_width > 0 else 2 * width)
    return model


@registry.architectures("spacy-siamese.CauchySimilarity.v1")
def build_cauchy_similarity(*, nI: Optional[int] = None) -> Comparison:
    """1 / (1 + sum_i w_i (a_i - b_i)^2) with learned positive weights."""
    return cauchy_similarity(nI=nI)


@registry.architectures("spacy-siamese.FeatureHead.v1")
def build_feature_head(
    *, hidden_width: int = 128, maxout_pieces: int = 2, dropout: float = 0.0, nI: Optional[int] = None
) -> Comparison:
    """|a - b| and a * b -> Maxout -> sigmoid: a symmetric learned comparison."""
    return chain(
        pair_features(nI=nI),
        Maxout(nO=hidden_width, nP=maxout_pieces, dropout=dropout, normalize=True),
        Sigmoid(nO=1),
    )


@registry.architectures("spacy-siamese.WithAuxiliary.v1")
def build_with_auxiliary(*, main: Comparison, auxiliary: Comparison, weight: float = 1.0) -> Comparison:
    """Multi-task training: `auxiliary` (e.g. a FeatureHead) is trained beside `main` on the
    shared encoder, with its loss scaled by `weight`; only `main` scores at prediction."""
    return with_auxiliary(main, auxiliary, weight=weight)


@registry.architectures("spacy-siamese.TrainCalibrated.v1")
def build_train_calibrated(*, comparison: Comparison, eps: float = 1e-6) -> Comparison:
    """Train `comparison` through a learned, increasing Platt scaling of its score; predict
    with its raw score (same ranking). For Cauchy this frees the slope of the log distance."""
    return train_calibrated(comparison, eps=eps)


@registry.architectures("spacy-siamese.Siamese.v1")
def build_siamese(
    *, encoder: Model[List[Doc], Floats2d], comparison: Comparison
) -> Model[Tuple[List[Doc], List[Doc]], Floats2d]:
    """One encoder with shared weights on both sides of a pair, then `comparison`."""
    return siamese(encoder, comparison)


@registry.architectures("spacy-siamese.S2NetEncoder.v1")
def build_s2net_encoder(
    *,
    width: int = 300,
    attr: str = "lower",
    drop_stop: bool = False,
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
    sublinear_tf: bool = True,
    normalize: bool = True,
    init: str = "lsa",
    seed: int = 0,
) -> Model[List[Doc], Floats2d]:
    """S2Net (Yih et al. 2011): TF-IDF term vector f -> concept vector A^T f of `width` dims.

    The TF-IDF vocabulary and idf are fitted on every training doc when the pipe is
    initialized (`attrs["fit_on_corpus"]`), and A starts as the LSA projection of those
    docs (`init="lsa"`) or at random (`init="random"`).
    """
    model = chain(
        tfidf(
            attr=attr,
            drop_stop=drop_stop,
            drop_punct=drop_punct,
            min_df=min_df,
            max_vocab=max_vocab,
            sublinear_tf=sublinear_tf,
            normalize=normalize,
        ),
        projection(nO=width, init=init, seed=seed),
    )
    model.set_dim("nO", width)
    model.attrs["fit_on_corpus"] = True
    return model


@registry.architectures("spacy-siamese.CosineSimilarity.v1")
def build_cosine_similarity(*, rescale: bool = False, nI: Optional[int] = None) -> Comparison:
    """Cosine of the two vectors, in [-1, 1], or (1 + cos) / 2 in [0, 1] with `rescale`."""
    return cosine_similarity(rescale=rescale, nI=nI)
