"""Encoded rows as Arrow tables and Parquet files, the Ray Data engine's vectors on disk (extra
`spacy-siamese[ray]`, which brings pyarrow): written a block a file, read back by id."""

import hashlib
import re
import uuid
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import numpy
from scipy.sparse import csr_matrix

from ..search.store import MemoryStore
from ..util import is_uri

# The names of the files `write_part` writes, and of its temporary files (hidden).
PART = re.compile(r"part-[0-9a-f]{24}\.parquet|\.part-[0-9a-f]{24}\.parquet\.[0-9a-f]{32}\.tmp")


def write_part(table: Any, directory: str) -> str:
    """Write encoded rows as one Parquet file in `directory` (a local path or a URI pyarrow knows) and return
    its name, which comes from the rows' ids: a block that Ray runs again replaces its own file."""
    import pyarrow.parquet

    fs, root = _filesystem(directory)
    fs.create_dir(root, recursive=True)
    name = "part-" + hashlib.sha1(repr(table.column("id").to_pylist()).encode("utf8")).hexdigest()[:24] + ".parquet"
    tmp = f"{root}/.{name}.{uuid.uuid4().hex}.tmp"  # hidden: readers of the directory skip it
    pyarrow.parquet.write_table(table, tmp, filesystem=fs, compression="none", use_dictionary=False)
    fs.move(tmp, f"{root}/{name}")
    return name


def _filesystem(directory: str) -> Tuple[Any, str]:
    """(pyarrow filesystem, path in it) of a local directory or a URI."""
    import pyarrow.fs

    if is_uri(directory):
        return pyarrow.fs.FileSystem.from_uri(directory)
    return pyarrow.fs.LocalFileSystem(), str(Path(directory).absolute())


def encoded_table(ids: numpy.ndarray, vectors: numpy.ndarray, lexical_width: int, model_id: str) -> Any:
    """Encoded rows as an Arrow table: id, the learned columns ("vector", fixed-size list), a hybrid's
    lexical columns as sparse rows ("lexical_indices", "lexical_values", "lexical_width"), model_id."""
    import pyarrow

    n, width = vectors.shape
    learned = numpy.ascontiguousarray(vectors[:, : width - lexical_width], dtype="float32")
    columns = {
        "id": pyarrow.array(ids),
        "vector": pyarrow.FixedSizeListArray.from_arrays(pyarrow.array(learned.reshape(-1)), learned.shape[1]),
        "model_id": pyarrow.array([model_id] * n, type=pyarrow.string()),
        "lexical_width": pyarrow.array(numpy.full(n, lexical_width, dtype="int32")),
    }
    if lexical_width:
        lexical = csr_matrix(vectors[:, width - lexical_width :], dtype="float32")
        offsets = pyarrow.array(lexical.indptr.astype("int32"))
        columns["lexical_indices"] = pyarrow.ListArray.from_arrays(offsets, pyarrow.array(lexical.indices, "int32"))
        columns["lexical_values"] = pyarrow.ListArray.from_arrays(offsets, pyarrow.array(lexical.data, "float32"))
    return pyarrow.table(columns)


def collect_vectors(encoded: Any, *, files: Optional[Sequence[str]] = None) -> Tuple[List[Any], MemoryStore]:
    """(ids, vectors) of an encoded Dataset, or of the directory of Parquet files `write_encoded` wrote (its
    `files` only, if given; read with pyarrow), ordered by id (ids must be unique); the vectors a `MemoryStore`."""
    import pyarrow

    if isinstance(encoded, (str, Path)):
        import pyarrow.dataset

        fs, root = _filesystem(str(encoded))
        source = root if files is None else [f"{root}/{name}" for name in files]
        table = pyarrow.dataset.dataset(source, format="parquet", filesystem=fs).to_table()
    else:
        batches = list(encoded.iter_batches(batch_format="pyarrow", batch_size=None))
        table = pyarrow.concat_tables(batches) if batches else pyarrow.table({"id": pyarrow.array([])})
    ids = table.column("id").to_pylist()
    if not ids:
        return [], MemoryStore(numpy.zeros((0, 0), dtype="float32"), None, "")
    model_ids = sorted(set(map(str, table.column("model_id").unique().to_pylist())))
    if len(model_ids) > 1:
        raise ValueError(f"The encoded rows come from {len(model_ids)} different models: {model_ids}")
    if len(set(ids)) != len(ids):
        raise ValueError("The ids of the encoded rows are not unique")
    order = numpy.asarray(sorted(range(len(ids)), key=lambda i: ids[i]), dtype="int64")
    learned = _list_values(table.column("vector").combine_chunks()).reshape(len(ids), -1)[order]
    lexical = None
    lexical_width = int(table.column("lexical_width")[0].as_py())
    if lexical_width:
        indices = table.column("lexical_indices").combine_chunks()
        offsets = numpy.asarray(indices.offsets.to_numpy(), dtype="int64")
        values = _list_values(table.column("lexical_values").combine_chunks())
        columns = _list_values(indices, "int32")
        lexical = csr_matrix((values, columns, offsets - offsets[0]), shape=(len(ids), lexical_width))[order]
    store = MemoryStore(numpy.ascontiguousarray(learned, dtype="float32"), lexical, model_ids[0])
    return [ids[i] for i in order], store


def _list_values(array: Any, dtype: str = "float32") -> numpy.ndarray:
    """The values of a (fixed-size) list array, concatenated, as `dtype`."""
    return numpy.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype=dtype)
