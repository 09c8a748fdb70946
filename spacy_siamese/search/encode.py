"""Texts or docs -> the pipe's learned vectors, streamed through the pipeline."""

from typing import Iterable, List, Optional, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc

from ..component import PIPE_NAME, get_similarity_pipe

TextOrDoc = Union[str, Doc]


def encode_with_texts(
    nlp: Language,
    items: Iterable[TextOrDoc],
    *,
    pipe_name: str = PIPE_NAME,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    keep_texts: bool = True,
) -> Tuple[numpy.ndarray, Optional[List[str]]]:
    """(vectors, texts) of texts or docs: `pipe.encode` and each item's text, None with `keep_texts=False`."""
    items = list(items)
    pipe = get_similarity_pipe(nlp, pipe_name)
    vectors = pipe.encode(items, batch_size=batch_size, n_process=n_process, progress=progress)
    return vectors, [item if isinstance(item, str) else item.text for item in items] if keep_texts else None
