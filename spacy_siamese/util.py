"""Small helpers shared across layers: progress bars, optional extras, batches by tokens, distinct texts and
the rows of pair sides among them, graph components, files written whole or not at all."""

import sys
import time
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Sequence, Sized, Tuple, TypeVar, Union

import numpy
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components
from thinc.api import Model
from thinc.types import Floats2d, Ints1d

from .files import atomic_write  # noqa: F401  (re-exported: the place the search modules import it from)

T = TypeVar("T", bound=Sized)


def token_batches(items: Iterable[T], max_tokens: int) -> Iterator[List[T]]:
    """Consecutive batches of items (in order) of at most `max_tokens` tokens by `len` (e.g. of a doc); an item
    longer than that is a batch alone."""
    batch: List[T] = []
    size = 0
    for item in items:
        if batch and size + len(item) > max_tokens:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += len(item)
    if batch:
        yield batch


def check_n_process(n_process: int) -> int:
    """nlp.pipe's n_process: -1 (one process per CPU core) or at least 1; others fail deep inside spaCy."""
    if n_process == 0 or n_process < -1:
        raise ValueError(f"n_process must be -1 (one process per CPU core) or at least 1, got {n_process}.")
    return n_process


def show_progress(progress: bool) -> bool:
    """Progress bars only when asked for and stderr is a terminal."""
    return progress and sys.stderr.isatty()


def given_path(path: Union[str, Path], *, parts: int = 1) -> str:
    """A path as given if relative, else its last `parts` parts: a results file names no machine path."""
    path = Path(path)
    return str(path) if not path.is_absolute() else "/".join(path.parts[-parts:])


def distinct_texts(texts: Iterable[str], *, keep_blank: bool = False) -> List[str]:
    """The distinct texts, in first-seen order; blank ones only with `keep_blank`."""
    return list(dict.fromkeys(text for text in texts if keep_blank or text.strip()))


def distinct_pair_texts(pairs: Iterable[Sequence[str]]) -> List[str]:
    """Both sides of every (text1, text2, ...) pair, deduplicated (blanks kept), in first-seen order."""
    return distinct_texts((side for pair in pairs for side in pair[:2]), keep_blank=True)


def pair_rows(texts: Sequence[str], pairs: Iterable[Sequence[str]]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The rows in `texts` (e.g. `distinct_pair_texts` of the pairs) of each (text1, text2, ...)
    pair's two sides, to gather the pairs' vectors from the vectors of `texts`."""
    row = {text: i for i, text in enumerate(texts)}
    pairs = list(pairs)
    a = numpy.asarray([row[pair[0]] for pair in pairs], dtype="int64")
    b = numpy.asarray([row[pair[1]] for pair in pairs], dtype="int64")
    return a, b


def import_extra(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency, or raise an ImportError naming the extra that installs it."""
    try:
        return import_module(module)
    except ImportError as err:
        raise ImportError(f"{what} needs {module.split('.')[0]}: pip install 'spacy-siamese[{extra}]'") from err


def one_thread() -> None:
    """Limit this process to one BLAS (and faiss) thread: for worker processes that each get
    one CPU, which BLAS and faiss would otherwise share with every other worker."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    try:
        import faiss
    except ImportError:
        return
    faiss.omp_set_num_threads(1)


def component_labels(
    n: int, rows: Union[Sequence[int], numpy.ndarray], cols: Union[Sequence[int], numpy.ndarray]
) -> numpy.ndarray:
    """The connected component (0, 1, ...) of each of n nodes of the undirected graph with edges (rows[t], cols[t])."""
    edges = (numpy.asarray(rows, dtype="int64"), numpy.asarray(cols, dtype="int64"))
    graph = coo_matrix((numpy.ones(len(edges[0]), dtype="int8"), edges), shape=(n, n))
    return connected_components(graph.tocsr(), directed=False)[1]


@contextmanager
def timed(timing: Dict[str, float], key: str) -> Iterator[None]:
    """Set `timing[key]` to the seconds the block takes."""
    start = time.perf_counter()
    yield
    timing[key] = time.perf_counter() - start


def unique_rows(X: csr_matrix) -> csr_matrix:
    """X without repeated rows (a doc that occurs in many training pairs counts once)."""
    X.sort_indices()
    keys: Dict[Tuple[bytes, bytes], int] = {}
    for i in range(X.shape[0]):
        start, end = X.indptr[i], X.indptr[i + 1]
        keys.setdefault((X.indices[start:end].tobytes(), X.data[start:end].tobytes()), i)
    return X[sorted(keys.values())]


def scatter_grad(model: Model, name: str, rows: Ints1d, values: Floats2d) -> None:
    """Add each row of `values` to row `rows[i]` of the gradient of the table `name`, in place.
    `inc_grad` would take a whole table of zeros and add it to the gradient, two passes over every
    row for the few a batch touches; thinc's optimizer zeroes a gradient in place after each update,
    so after the first step the array is there to add into."""
    if model.has_grad(name):
        model.ops.scatter_add(model.get_grad(name), rows, values)
    else:
        table = model.get_param(name)
        gradient = model.ops.alloc2f(*table.shape, dtype=table.dtype)
        model.ops.scatter_add(gradient, rows, values)
        model.set_grad(name, gradient)


def is_uri(path: str) -> bool:
    """Whether `path` is a URI (s3://, gs://, ...), which Ray and pyarrow read and write themselves."""
    return "://" in path
