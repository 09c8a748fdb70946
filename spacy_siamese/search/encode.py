"""Texts or docs -> the pipe's learned vectors, streamed through the pipeline."""

from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..hooks import hooked_docs
from ..util import show_progress

TextOrDoc = Union[str, Doc]


def iter_docs(nlp: Language, items: Sequence[TextOrDoc], *, batch_size: int, n_process: int) -> Iterator[Doc]:
    """Docs in input order: strings go through `nlp.pipe`, docs are kept as they are."""
    texts = (item for item in items if not isinstance(item, Doc))
    processed = hooked_docs(nlp.pipe(texts, batch_size=batch_size, n_process=n_process))
    for item in items:
        yield item if isinstance(item, Doc) else next(processed)


def encode(
    nlp: Language,
    items: Iterable[TextOrDoc],
    *,
    pipe_name: str = PIPE_NAME,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    desc: str = "encoding",
) -> Tuple[numpy.ndarray, List[str]]:
    """(vectors, texts) of texts or docs. Strings are processed by the pipeline; docs give the
    vector `pipe.vectors` gives (stored by this model, else encoded now)."""
    items = list(items)
    for item in items:
        if not isinstance(item, (str, Doc)):
            raise TypeError(f"Expected texts (str) or Doc objects, got {type(item).__name__}")
    pipe = get_similarity_pipe(nlp, pipe_name)
    chunks: List[numpy.ndarray] = []
    texts: List[str] = []
    bar = tqdm(total=len(items), desc=desc, unit="doc", disable=not show_progress(progress))
    with bar:
        docs = iter_docs(nlp, items, batch_size=batch_size, n_process=n_process)
        for batch in minibatch(docs, batch_size):
            chunks.append(pipe.vectors(batch))
            texts.extend(doc.text for doc in batch)
            bar.update(len(batch))
    width = pipe.encoder.get_dim("nO")
    vectors = numpy.vstack(chunks) if chunks else numpy.zeros((0, width), dtype="float32")
    return numpy.ascontiguousarray(vectors, dtype="float32"), texts


def as_list(items: Optional[Iterable[TextOrDoc]]) -> List[TextOrDoc]:
    if isinstance(items, (str, Doc)):
        return [items]
    return list(items or [])
