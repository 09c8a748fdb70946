"""Doc, Span and Token hooks that answer `similarity` (and `vector`) from learned vectors: module functions bound to a
model id (they pickle by name). Docs that lost them are re-hooked by `restore_hooks`, `hooked_docs` and
`docs_from_docbin`, else warn (`LostHooksWarning`)."""

import threading
import warnings
import weakref
from functools import partial
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Protocol, Tuple, TypeVar, Union

import numpy
import srsly
from spacy.tokens import Doc, DocBin, Span, Token
from spacy.vocab import Vocab

from .vectors import is_stored_data, stored_owner, stored_vector


class SimilarityPipe(Protocol):
    """What the hooks need of a pipe: its similarity and the vector of a doc, span or token."""

    def similarity(self, obj: Union[Doc, Span, Token], other: Union[Doc, Span, Token]) -> float: ...

    def vector_of(self, obj: Union[Doc, Span, Token]) -> numpy.ndarray: ...


# Several copies of one model may be loaded (same id, same weights): any live one will do.
_PIPES: Dict[str, "weakref.WeakSet[SimilarityPipe]"] = {}
_quiet = threading.local()
_END: Any = object()  # the end of `hooked_docs` input (None is an item, refused)
# What `hooked_docs` yields: docs, or the (doc, context) pairs of `nlp.pipe(..., as_tuples=True)`.
DocOrPair = TypeVar("DocOrPair", Doc, Tuple[Doc, Any])


class LostHooksWarning(UserWarning):
    """Docs with learned vectors were deserialized without their similarity hooks."""


# -- the pipes in this process ----------------------------------------------------


def register_pipe(model_id: str, pipe: "SimilarityPipe") -> None:
    for key in [key for key, pipes in _PIPES.items() if not pipes]:
        del _PIPES[key]
    _PIPES.setdefault(model_id, weakref.WeakSet()).add(pipe)


def unregister_pipe(model_id: str, pipe: "SimilarityPipe") -> None:
    pipes = _PIPES.get(model_id)
    if pipes is not None:
        pipes.discard(pipe)
        if not pipes:
            del _PIPES[model_id]


def pipe_for(model_id: str) -> "SimilarityPipe":
    pipe = next(iter(_PIPES.get(model_id, ())), None)
    if pipe is None:
        raise RuntimeError(
            f"This doc's learned vector was made by siamese_similarity model '{model_id}', "
            "which is not loaded in this process (or whose weights changed since). Load the "
            "pipeline that made it (spacy.load) before comparing; doc.vector works without it."
        )
    return pipe


# -- which model answers a doc's similarity ------------------------------------


def owner(doc: Doc) -> Optional[str]:
    """The model that answers `doc.similarity`: from the stored data, or from the hooks of a
    doc without data (a span's `as_doc()`); None for a doc no model processed."""
    model_id = stored_owner(doc)
    if model_id is not None:
        return model_id
    hook = doc.user_hooks.get("similarity")
    return hook.args[0] if isinstance(hook, partial) and hook.func is _similarity else None


# -- the hooks --------------------------------------------------------------------


def install_hooks(doc: Doc, model_id: str) -> None:
    similarity = partial(_similarity, model_id)
    # new dicts: a span's as_doc() shares its doc's hook dicts
    doc.user_hooks = {
        **doc.user_hooks,
        "similarity": similarity,
        "vector": partial(_doc_vector, model_id),
        "has_vector": _has_vector,
        "vector_norm": _vector_norm,
    }
    doc.user_span_hooks = {
        **doc.user_span_hooks,
        "similarity": similarity,
        "vector": partial(_span_vector, model_id),
        "has_vector": _has_vector,
    }
    doc.user_token_hooks = {**doc.user_token_hooks, "similarity": similarity}


def restore_hooks(docs: Union[Doc, Iterable[Doc]]) -> int:
    """Reinstall the hooks on docs that lost them (e.g. after `DocBin`); returns how many were hooked."""
    if isinstance(docs, Doc) or not isinstance(docs, Iterable):
        docs = [docs]
    count = 0
    for doc in docs:
        if not isinstance(doc, Doc):
            raise TypeError(f"restore_hooks takes Doc objects, got {type(doc).__name__}")
        model_id = owner(doc)
        if model_id is not None:
            install_hooks(doc, model_id)
            count += 1
    return count


def hooked_docs(docs: Iterable[DocOrPair]) -> Iterator[DocOrPair]:
    """Yield `docs` with their hooks restored, without `LostHooksWarning`: wrap
    `nlp.pipe(texts, n_process=2)` (also with `as_tuples=True`) or `doc_bin.get_docs(vocab)` in it."""
    items = iter(docs)
    while True:
        _quiet.depth = getattr(_quiet, "depth", 0) + 1
        try:
            item = next(items, _END)
        finally:
            _quiet.depth -= 1
        if item is _END:
            return
        restore_hooks(item[0] if isinstance(item, tuple) else item)
        yield item


def docs_from_docbin(doc_bin: DocBin, vocab: Vocab) -> Iterator[Doc]:
    """`doc_bin.get_docs(vocab)` with the similarity hooks restored."""
    return hooked_docs(doc_bin.get_docs(vocab))


def _similarity(model_id: str, obj: Union[Doc, Span, Token], other: Any) -> float:
    other_doc = other if isinstance(other, Doc) else getattr(other, "doc", None)
    other_owner = owner(other_doc) if isinstance(other_doc, Doc) else None
    if other_owner is not None and other_owner != model_id:
        raise ValueError(
            f"Cannot compare docs made by two different siamese_similarity models ('{model_id}' and "
            f"'{other_owner}'): their vectors live in different spaces. Process both docs with the same pipeline."
        )
    return pipe_for(model_id).similarity(obj, other)


def _doc_vector(model_id: str, doc: Doc) -> numpy.ndarray:
    vector = stored_vector(doc, model_id)
    return vector if vector is not None else pipe_for(model_id).vector_of(doc)


def _span_vector(model_id: str, span: Span) -> numpy.ndarray:
    return pipe_for(model_id).vector_of(span)


def _has_vector(obj: Union[Doc, Span]) -> bool:
    return True


def _vector_norm(doc: Doc) -> float:
    # spaCy's own similarity of a doc this pipeline never processed reads `other.vector_norm`
    # and would compare that doc's word-vector average with the learned vector.
    raise ValueError(
        "A doc that was not processed by this siamese_similarity pipeline cannot be compared with "
        "one that was: spaCy's own similarity would mix word vectors with learned vectors. Compare "
        "from the processed side (processed.similarity(other)) or run both through the pipeline. "
        "(doc.vector_norm is disabled on processed docs for this reason: use numpy.linalg.norm(doc.vector).)"
    )


# -- warn when docs are deserialized without their hooks ----------------------------


@srsly.msgpack_decoders("spacy_siamese.vectors")
def _decode(obj: Any, chain: Optional[Callable] = None) -> Any:
    if is_stored_data(obj) and not getattr(_quiet, "depth", 0):
        warnings.warn(
            "Docs with learned siamese_similarity vectors were deserialized without their similarity "
            "hooks (DocBin, Doc.from_bytes or nlp.pipe(n_process>1)): until restored, doc.similarity is "
            "spaCy's default, not the learned similarity. Call spacy_siamese.restore_hooks(docs), or read "
            "them with spacy_siamese.docs_from_docbin(doc_bin, vocab) or spacy_siamese.hooked_docs(docs).",
            LostHooksWarning,
            stacklevel=2,
        )
    return obj if chain is None else chain(obj)
