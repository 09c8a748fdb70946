from typing import List, Sequence, Union

from spacy.attrs import IDS
from spacy.ml.models.tok2vec import MaxoutWindowEncoder, MultiHashEmbed, build_Tok2Vec_model
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Logistic, Maxout, Model, chain, list2ragged, residual
from thinc.types import Floats2d

from ..layers import mean_max_pool
from ..layers.no_tokens import skip_features_without_tokens

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
    """The MWE CNN encoder (Honnibal 2017): hash embeddings (+ static vectors) -> MaxoutWindowEncoder x depth ->
    mean+max pooling -> `post_depth` residual Maxout layers -> optional `proj_width` projection and sigmoid squash."""
    if depth < 1 or window_size < 0:
        raise ValueError(f"MWEEncoder: need depth >= 1 and window_size >= 0, got {depth} and {window_size}")
    attrs = check_attrs("MWEEncoder", attrs)
    rows = check_rows("MWEEncoder", attrs, rows)
    embed = MultiHashEmbed(width=width, attrs=attrs, rows=rows, include_static_vectors=include_static_vectors)
    encode = MaxoutWindowEncoder(width=width, window_size=window_size, maxout_pieces=maxout_pieces, depth=depth)
    return build_pooled_tok2vec(
        tok2vec=build_Tok2Vec_model(embed, encode),
        post_depth=post_depth,
        proj_width=proj_width,
        maxout_pieces=maxout_pieces,
        squash=squash,
    )


@registry.architectures("spacy-siamese.PooledTok2Vec.v1")
def build_pooled_tok2vec(
    *,
    tok2vec: Model[List[Doc], List[Floats2d]],
    post_depth: int = 2,
    proj_width: int = 0,
    maxout_pieces: int = 3,
    squash: bool = False,
) -> Model[List[Doc], Floats2d]:
    """The MWE encoder's pooling and the layers after it on any spaCy tok2vec of lexical
    features (e.g. `spacy.Tok2Vec.v2` with `spacy.CharacterEmbed.v2`) that declares its nO."""
    if post_depth < 0 or proj_width < 0:
        raise ValueError(f"PooledTok2Vec: need post_depth >= 0 and proj_width >= 0, got {post_depth} and {proj_width}")
    if not tok2vec.has_dim("nO"):  # unknown or unset; a width of 0 is reported by the pipe, naming the setting
        raise ValueError("PooledTok2Vec: the tok2vec model must declare its output width (nO)")
    width = tok2vec.get_dim("nO")
    layers: List[Model] = [tok2vec, list2ragged(), mean_max_pool()]
    for _ in range(post_depth):
        layers.append(residual(Maxout(nO=2 * width, nI=2 * width, nP=maxout_pieces, normalize=True)))
    if proj_width > 0:
        layers.append(Maxout(nO=proj_width, nI=2 * width, nP=maxout_pieces, normalize=True))
    if squash:
        layers.append(Logistic())
    model: Model[List[Doc], Floats2d] = skip_features_without_tokens(chain(*layers), width)
    model.set_dim("nO", proj_width if proj_width > 0 else 2 * width)
    return model


def check_attrs(name: str, attrs: Sequence[str]) -> List[str]:
    """The token attributes of hash embeddings as a list; raise, at config time, for one spaCy does not know."""
    unknown = [attr for attr in attrs if isinstance(attr, str) and attr.upper() not in IDS]
    if unknown:
        raise ValueError(
            f"{name}: unknown token attribute(s) {unknown} in attrs; use spaCy's attribute names, "
            "e.g. NORM, LOWER, PREFIX, SUFFIX, SHAPE"
        )
    return list(attrs)


def check_rows(name: str, attrs: List[str], rows: Union[int, Sequence[int]]) -> List[int]:
    """The hash embeddings' row count of each attribute (one int for all), or a ValueError."""
    rows = [rows] * len(attrs) if isinstance(rows, int) else list(rows)
    if len(rows) != len(attrs):
        raise ValueError(f"{name}: got {len(rows)} row counts for {len(attrs)} attrs {attrs}")
    return rows


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
    return build_mwe_encoder(**locals())  # every argument, as given
