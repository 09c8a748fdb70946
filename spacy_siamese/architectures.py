"""Registered encoders and the feature head. The comparisons (Cauchy, cosine, WithAuxiliary,
TrainCalibrated) and the Siamese wrapper are registered in their own files in `layers/`."""

from typing import List, Optional, Sequence, Tuple, Union

from spacy.ml.models.tok2vec import MaxoutWindowEncoder, MultiHashEmbed, build_Tok2Vec_model
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Logistic, Maxout, Model, Sigmoid, chain, list2ragged, residual
from thinc.types import Floats2d

from .layers import mean_max_pool, pair_features, projection, tfidf

Comparison = Model[Tuple[Floats2d, Floats2d], Floats2d]
DEFAULT_ATTRS = ("NORM", "PREFIX", "SUFFIX", "SHAPE")
DEFAULT_ROWS = (10000, 2500, 2500, 2500)


@registry.architectures("spacy-siamese.MWEEncoder.v2")
def build_mwe_encoder(
    *,
    width: int = 128,
    depth: int = 2,
    window_size: int = 1,
    maxout_pieces: int = 3,
    attrs: Sequence[str] = DEFAULT_ATTRS,
    rows: Union[int, Sequence[int]] = DEFAULT_ROWS,
    include_static_vectors: bool = False,
    post_depth: int = 2,
    proj_width: int = 0,
    squash: bool = False,
) -> Model[List[Doc], Floats2d]:
    """Hash embeddings (+ static vectors) -> Maxout Window Encoding x depth -> mean+max pooling
    -> `post_depth` residual Maxout layers -> optional Maxout projection to `proj_width`
    -> optional sigmoid squash (as in Thinc's Quora example).

    Output: one vector of width `proj_width` (if > 0) or 2 * `width` per doc. Only lexical
    attributes are used, so the partner docs built during training need no other pipe.
    """
    attrs = list(attrs)
    rows = [rows] * len(attrs) if isinstance(rows, int) else list(rows)
    if len(rows) != len(attrs):
        raise ValueError(f"MWEEncoder: got {len(rows)} row counts for {len(attrs)} attrs {attrs}")
    embed = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    encode = MaxoutWindowEncoder(width=width, window_size=window_size, maxout_pieces=maxout_pieces, depth=depth)
    layers: List[Model] = [build_Tok2Vec_model(embed, encode), list2ragged(), mean_max_pool()]
    for _ in range(post_depth):
        layers.append(residual(Maxout(nO=2 * width, nI=2 * width, nP=maxout_pieces, normalize=True)))
    if proj_width > 0:
        layers.append(Maxout(nO=proj_width, nI=2 * width, nP=maxout_pieces, normalize=True))
    if squash:
        layers.append(Logistic())
    model: Model[List[Doc], Floats2d] = chain(*layers)
    model.set_dim("nO", proj_width if proj_width > 0 else 2 * width)
    return model


@registry.architectures("spacy-siamese.MWEEncoder.v1")
def build_mwe_encoder_v1(
    *,
    width: int = 128,
    depth: int = 2,
    window_size: int = 1,
    maxout_pieces: int = 3,
    attrs: Sequence[str] = DEFAULT_ATTRS,
    rows: Union[int, Sequence[int]] = DEFAULT_ROWS,
    include_static_vectors: bool = False,
    post_depth: int = 0,
    proj_width: int = 0,
    squash: bool = False,
) -> Model[List[Doc], Floats2d]:
    """MWEEncoder.v2 with `post_depth = 0` by default: kept for pipelines trained with it."""
    return build_mwe_encoder(
        width=width,
        depth=depth,
        window_size=window_size,
        maxout_pieces=maxout_pieces,
        attrs=attrs,
        rows=rows,
        include_static_vectors=include_static_vectors,
        post_depth=post_depth,
        proj_width=proj_width,
        squash=squash,
    )


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
    model: Model[List[Doc], Floats2d] = chain(
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
