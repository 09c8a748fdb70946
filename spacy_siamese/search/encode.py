"""Texts or docs -> the pipe's learned vectors, streamed through the pipeline."""

from typing import Iterable, List, Optional, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..util import show_progress

TextOrDoc = Union[str, Doc]


def encode_with_texts(
    nlp: Language,
    items: Iterable[TextOrDoc],
    *,
    pipe_name: str = PIPE_NAME,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    desc: str = "encoding",
) -> Tuple[numpy.ndarray, List[str]]:
    """(vectors, texts) of texts or docs, as `pipe.encode` gives the vectors, with a progress bar."""
    items = list(items)
    pipe = get_similarity_pipe(nlp, pipe_name)
    chunks: List[numpy.ndarray] = []
    texts: List[str] = []
    bar = tqdm(total=len(items), desc=desc, unit="doc", disable=not show_progress(progress))
    with bar:
        docs = pipe.processed(items, batch_size=batch_size, n_process=n_process)
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
