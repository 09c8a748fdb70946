"""Light Doc/Span hooks that answer `similarity` and `vector` from stored learned vectors.

Each processed doc carries `user_data[VECTOR_KEY] = {"model": <model id>, "vector": array}`,
which survives `DocBin`, `Doc.to_bytes` and `nlp.pipe(n_process=...)`. The hooks are
module-level functions (they pickle by name, not with the model) that find the pipe
which made a vector through a process-wide table keyed by model id.
"""
import weakref
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Union

import numpy
from spacy.tokens import Doc, Span, Token

if TYPE_CHECKING:  # pragma: no cover
    from .component import SiameseSimilarity

VECTOR_KEY = "spacy_siamese.vector"
# Several copies of one trained model may be loaded (same id, same weights): any live one will do.
_PIPES: Dict[str, "weakref.WeakSet[SiameseSimilarity]"] = {}


def register_pipe(model_id: str, pipe: "SiameseSimilarity") -> None:
    _PIPES.setdefault(model_id, weakref.WeakSet()).add(pipe)


def stored(doc: Doc) -> Optional[Dict[str, Any]]:
    """The {"model", "vector"} entry the pipe stored on `doc`, if any."""
    return doc.user_data.get(VECTOR_KEY)


def set_vector(doc: Doc, model_id: str, vector: numpy.ndarray) -> None:
    doc.user_data[VECTOR_KEY] = {"model": model_id, "vector": vector}
    install_hooks(doc)


def install_hooks(doc: Doc) -> None:
    doc.user_hooks["similarity"] = _similarity
    doc.user_hooks["vector"] = _doc_vector
    doc.user_hooks["has_vector"] = _has_vector
    doc.user_span_hooks["similarity"] = _similarity
    doc.user_span_hooks["vector"] = _span_vector
    doc.user_span_hooks["has_vector"] = _has_vector


def restore_hooks(docs: Union[Doc, Iterable[Doc]]) -> int:
    """Reinstall the hooks on docs that lost them (after `DocBin`, `Doc.from_bytes` or
    `nlp.pipe(n_process=2)`). Returns how many docs were hooked; docs without a stored
    vector are left alone."""
    if isinstance(docs, Doc):
        docs = [docs]
    count = 0
    for doc in docs:
        if stored(doc) is not None:
            install_hooks(doc)
            count += 1
    return count


def pipe_for(model_id: str) -> "SiameseSimilarity":
    pipe = next(iter(_PIPES.get(model_id, ())), None)
    if pipe is None:
        raise RuntimeError(
            f"This doc's learned vector was made by siamese_similarity model '{model_id}', "
            "which is not loaded in this process. Load the pipeline that made it "
            "(spacy.load) before comparing or encoding spans; doc.vector works without it."
        )
    return pipe


def _owner(obj: Union[Doc, Span]) -> str:
    doc = obj if isinstance(obj, Doc) else obj.doc
    data = stored(doc)
    if data is None:  # a hook on a doc without data: only if a user copied hooks by hand
        raise ValueError("This doc has siamese_similarity hooks but no stored vector; run the pipeline on it.")
    return data["model"]


def _similarity(obj: Union[Doc, Span], other: Union[Doc, Span, Token]) -> float:
    return pipe_for(_owner(obj)).similarity(obj, other)


def _doc_vector(doc: Doc) -> numpy.ndarray:
    return stored(doc)["vector"]  # type: ignore[index]


def _span_vector(span: Span) -> numpy.ndarray:
    return pipe_for(_owner(span)).vector_of(span)


def _has_vector(obj: Union[Doc, Span]) -> bool:
    return True
