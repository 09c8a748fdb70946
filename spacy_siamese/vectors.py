"""The vector store in `doc.user_data[VECTOR_KEY]`: each model's vector by model id, tagged with
a fingerprint of the text, and which model answers `doc.similarity`."""

import zlib
from typing import Any, Dict, Optional

import numpy
from spacy.tokens import Doc

VECTOR_KEY = "spacy_siamese.vector"
FORMAT = "spacy_siamese.vectors.v1"


def stored_data(doc: Doc) -> Optional[Dict[str, Any]]:
    """The doc's stored vectors (format, hooked model, vectors by model id), or None."""
    data = doc.user_data.get(VECTOR_KEY)
    return data if is_stored_data(data) else None


def is_stored_data(obj: Any) -> bool:
    """Whether `obj` is the vector store of a doc (e.g. while msgpack decodes it)."""
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def store_vector(doc: Doc, model_id: str, vector: numpy.ndarray) -> None:
    """Store `vector` as model `model_id`'s vector of `doc`, and make that model answer the doc's similarity."""
    old = stored_data(doc)
    vectors = dict(old["vectors"]) if old else {}  # a new dict: copies of a doc may share the old one
    vectors[model_id] = {"vector": vector, "fingerprint": _fingerprint(doc)}
    doc.user_data[VECTOR_KEY] = {"format": FORMAT, "hooked": model_id, "vectors": vectors}


def stored_vector(doc: Doc, model_id: str) -> Optional[numpy.ndarray]:
    """Model `model_id`'s stored vector of `doc`, or None if it has none or the doc changed since."""
    data = stored_data(doc)
    entry = data["vectors"].get(model_id) if data else None
    return None if entry is None or entry["fingerprint"] != _fingerprint(doc) else entry["vector"]


def stored_owner(doc: Doc) -> Optional[str]:
    """The model id that last stored a vector on `doc`, or None."""
    data = stored_data(doc)
    return data["hooked"] if data is not None else None


def drop_vectors(doc: Doc) -> None:
    """Remove every stored vector from `doc` (e.g. from a gold copy)."""
    doc.user_data.pop(VECTOR_KEY, None)


def _fingerprint(doc: Doc) -> int:
    return zlib.crc32(doc.text.encode("utf8"), len(doc))
