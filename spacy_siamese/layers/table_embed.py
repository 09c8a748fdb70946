from functools import lru_cache
from itertools import chain
from typing import Any, Callable, List, Optional, Tuple, cast

import numpy
from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats2d, Ints1d, Ragged

from ..util import scatter_grad


@registry.layers("spacy-siamese.table_embed.v1")
def table_embed(*, width: Optional[int] = None, path: Optional[str] = None) -> Model[List[Doc], Ragged]:
    """The rows of a trainable embedding table for each doc's subword tokens, as one Ragged (a doc
    with no known token has length 0). The table and its tokenizer start from the model2vec model
    directory `path`, read when the model is initialized (a loaded pipeline keeps both and never reads
    `path`); `width` is the table's, or checked against it. It reads only each doc's text, so it
    takes texts as well."""
    return table_layer("table_embed", forward, width=width, path=path)


def table_layer(name: str, forward: Callable, *, width: Optional[int], path: Optional[str]) -> Model:
    """A layer `name` over a model2vec table (param `E`, its tokenizer in attrs) with this module's init."""
    if width is not None and width < 1:
        raise ValueError(f"{name}: need width >= 1, got {width}")
    return Model(
        name,
        forward,
        init=init,
        params={"E": None},
        dims={"nO": width, "nV": None},
        attrs={"path": path or "", "tokenizer": "", "unk": -1, "max_length": 0},
    )


def init(model: Model, X: object = None, Y: object = None) -> None:
    if model.has_param("E"):  # loaded or initialized before
        return
    path = model.attrs["path"]
    if not path:
        raise ValueError(f"{model.name}: no model2vec model directory to start from (`path`)")
    try:
        from model2vec import StaticModel
    except ImportError as err:
        raise ImportError(
            f"{model.name}: starting from a model2vec model needs pip install 'spacy-siamese[teacher]'"
        ) from err
    try:
        static = StaticModel.from_pretrained(path, force_download=False)
    except Exception as err:
        raise ValueError(f"{model.name}: {path} is not a model2vec model directory: {err}") from err
    if static.token_mapping is not None or static.weights is not None:
        raise ValueError(f"{model.name}: {path} has a quantized vocabulary, which is not supported")
    table = model.ops.asarray2f(cast(Floats2d, static.embedding.astype("float32")))
    width = model.get_dim("nO") if model.has_dim("nO") else None
    if width is not None and table.shape[1] != width:
        raise ValueError(f"{model.name}: {path} has {table.shape[1]} dimensions, the config says width {width}")
    model.set_dim("nO", table.shape[1], force=True)
    model.set_dim("nV", table.shape[0])
    model.set_param("E", table)
    model.attrs["tokenizer"] = static.tokenizer.to_str()
    model.attrs["unk"] = -1 if static.unk_token_id is None else int(static.unk_token_id)
    model.attrs["max_length"] = int(static.max_length or 0)


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[Ragged, Callable]:
    E = cast(Floats2d, model.get_param("E"))
    ids, lengths = token_ids(model, docs)
    X = model.ops.xp.take(E, ids, axis=0) if len(ids) else model.ops.alloc2f(0, E.shape[1])

    def backprop(dY: Ragged) -> List[Doc]:
        if len(ids):
            scatter_grad(model, "E", ids, cast(Floats2d, dY.dataXd))
        return []

    return Ragged(X, lengths), backprop


def token_ids(model: Model, docs: List[Doc]) -> Tuple[Ints1d, Ints1d]:
    """The table rows of every doc's subword tokens (model2vec's tokenization of `doc.text`, without
    special or unknown tokens, cut at its max length), concatenated, and each doc's count."""
    encodings = tokenizer(model.attrs["tokenizer"]).encode_batch_fast(
        [doc if isinstance(doc, str) else doc.text for doc in docs], add_special_tokens=False
    )
    lengths = numpy.fromiter((len(encoding) for encoding in encodings), dtype="int32", count=len(encodings))
    ids = numpy.fromiter(
        chain.from_iterable(encoding.ids for encoding in encodings), dtype="int32", count=int(lengths.sum())
    )
    unk, max_length = model.attrs["unk"], model.attrs["max_length"]
    if unk >= 0 or max_length:
        doc_of = numpy.repeat(numpy.arange(len(lengths)), lengths)
        keep = ids != unk
        ids, doc_of = ids[keep], doc_of[keep]
        lengths = numpy.bincount(doc_of, minlength=len(lengths)).astype("int32")
        if max_length:
            # a token's position among its doc's kept tokens: its index less its doc's first index
            first = numpy.cumsum(lengths) - lengths
            ids = ids[numpy.arange(len(ids)) - first[doc_of] < max_length]
            lengths = numpy.minimum(lengths, max_length)
    return model.ops.asarray1i(cast(Ints1d, ids)), model.ops.asarray1i(cast(Ints1d, lengths))


@lru_cache(maxsize=4)
def tokenizer(serialized: str) -> Any:
    """The Hugging Face tokenizer stored with the layer (built once per process)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as err:
        raise ImportError("This pipeline's encoder reads a model2vec table: pip install tokenizers") from err
    if not serialized:
        raise ValueError("The embedding table has no tokenizer: initialize it from a model2vec directory first")
    built = Tokenizer.from_str(serialized)
    built.no_padding()
    built.no_truncation()
    return built
