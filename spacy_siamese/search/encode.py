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
    keep_texts: bool = True,
) -> Tuple[numpy.ndarray, Optional[List[str]]]:
    """(vectors, texts) of texts or docs, as `pipe.encode` gives the vectors, with a progress bar.
    With `keep_texts=False` the texts are not collected and None is returned for them."""
    items = list(items)
    pipe = get_similarity_pipe(nlp, pipe_name)
    width = pipe.encode([]).shape[1]  # refuses an uninitialized pipe
    vectors = numpy.zeros((len(items), width), dtype="float32")
    texts: Optional[List[str]] = [] if keep_texts else None
    start = 0
    bar = tqdm(total=len(items), desc=desc, unit="doc", disable=not show_progress(progress))
    with bar:
        docs = pipe.processed(items, batch_size=batch_size, n_process=n_process)
        for batch in minibatch(docs, batch_size):
            vectors[start : start + len(batch)] = pipe.vectors(batch)
            start += len(batch)
            if texts is not None:
                texts.extend(doc.text for doc in batch)
            bar.update(len(batch))
    return vectors, texts


def as_list(items: Optional[Iterable[TextOrDoc]]) -> List[TextOrDoc]:
    if isinstance(items, (str, Doc)):
        return [items]
    return list(items or [])
