from typing import List, Optional, Sequence, cast

from spacy.ml.models.tok2vec import MaxoutWindowEncoder
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, list2ragged, ragged2list, with_array, zero_init
from thinc.layers.chain import forward as chain_forward
from thinc.layers.chain import init as chain_init
from thinc.types import Floats2d, Ragged

from ..layers.add_ragged import add_ragged
from ..layers.hashed_mean import DEFAULT_ATTRS, hashed_mean
from ..layers.mean_pool import mean_pool
from ..layers.pooling import mean_max_pool
from ..layers.skip_empty import skip_empty
from ..layers.table_embed import table_embed
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


@registry.architectures("spacy-siamese.TableCNNEncoder.v1")
def build_table_cnn_encoder(
    *, table: Optional[str], width: int = 128, depth: int = 1, window_size: int = 1, maxout_pieces: int = 3
) -> Model[List[Doc], Floats2d]:
    """A model2vec table's subword embeddings (`table_embed.v1`, started from the model directory
    `table`), their mean (StaticEncoder.v2's vector) plus what the MWE CNN (Honnibal 2017) reads in
    them: a linear map to `width`, `depth` residual maxout window layers, mean+max pooling and a
    linear map back to the table's width whose weights start at zero, so training starts from the
    static student and the CNN adds context (word order, negation) to it. Reads only the text."""
    if width < 1 or depth < 1 or window_size < 0:
        raise ValueError(
            f"TableCNNEncoder: need width >= 1, depth >= 1 and window_size >= 0, got {width}, {depth} and {window_size}"
        )
    encode = MaxoutWindowEncoder(width=width, window_size=window_size, maxout_pieces=maxout_pieces, depth=depth)
    context: Model[Ragged, Floats2d] = chain(
        cast(Model[Ragged, Ragged], with_array(Linear(nO=width))),
        skip_empty(chain(ragged2list(), encode, list2ragged())),  # the windows stop at each doc's edge
        mean_max_pool(),
        Linear(nI=2 * width, init_W=zero_init),
    )
    embed = table_embed(path=table)
    model: Model[List[Doc], Floats2d] = Model(
        "table_cnn",
        chain_forward,
        init=_init_table_cnn,
        layers=[embed, add_ragged(context, mean_pool())],
        dims={"nO": None},
        refs={"embed": embed, "out": context.layers[-1]},
        attrs={"reads_text": True},
    )
    return model


def _init_table_cnn(model: Model, X: Optional[List[Doc]] = None, Y: Optional[Floats2d] = None) -> None:
    """The table first: its width is the output's (the CNN's last layer maps back to it)."""
    embed = model.get_ref("embed")
    embed.initialize()
    model.get_ref("out").set_dim("nO", embed.get_dim("nO"))
    model.set_dim("nO", embed.get_dim("nO"), force=True)
    chain_init(model, X, Y)
