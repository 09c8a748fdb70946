"""Compact stored vectors: the learned columns at a lower precision, and optionally fewer of them.

- float32: as encoded; float16: rounded.
- int8: round(x / s) with one scale s = max|x| / 127 a row. Per row, not per column: rows are written
  chunk by chunk by forked workers, by a resumed run or by `SimilarityIndex.add_vectors`, and a per-row
  scale needs no pass over the collection before the first row, nor a refit when rows are added;
  each column's error is at most s / 2.
- binary: the sign bit of each column (8 a byte) and the row's mean |x|: sign(x) * mean|x| is the
  closest vector with those signs in L2, which is what a reader's dequantised row is.
- dims N: only the first N learned columns are kept and a reader pads the rest with zeros. A
  hybrid's lexical columns are stored whole at any precision (sparse and exact).

Scores of dequantised rows are approximate: candidates found with them are rescored on full vectors.
"""

from pathlib import Path
from typing import Any, Optional, Tuple, Union

import numpy
import srsly
from scipy.sparse import csr_matrix, load_npz, save_npz

from ..files import atomic_write

PRECISIONS = ("float32", "float16", "int8", "binary")
# Candidates are searched this far below the threshold on dequantised vectors (scores in [0, 1]),
# then rescored on full vectors; binary rescores each item's k nearest by (mean-scaled) Hamming distance.
# Truncation alone lowers no Cauchy or exp(-L2) score (a distance over fewer columns is no longer).
RESCORE_MARGIN = {"float32": 0.0, "float16": 0.005, "int8": 0.03, "binary": 1.0}


def check_precision(precision: Any, dims: Any, width: int) -> int:
    """The learned columns kept (`dims`, or `width` if None); ValueError for a bad precision or dims not 1..width."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if dims is None:
        return width
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= width:
        raise ValueError(f"dims must be between 1 and the {width} learned columns, got {dims!r}")
    return dims


def is_full(precision: str, dims: int, width: int) -> bool:
    """Whether rows at `precision` with `dims` of `width` learned columns are the full vectors."""
    return precision == "float32" and dims == width


def stored_precision(manifest: Any) -> Tuple[str, int]:
    """A store manifest's (precision, dims); a store of an earlier version has neither: float32, every column."""
    return manifest.get("precision", "float32"), manifest.get("dims", manifest["learned_width"])


def layout(precision: str, dims: int) -> Tuple[numpy.dtype, Tuple[int, ...]]:
    """The dtype and the per-row shape of stored rows: (dims,) floats, or one int8 / binary record."""
    if precision in ("float32", "float16"):
        return numpy.dtype("<f4" if precision == "float32" else "<f2"), (dims,)
    codes = ("codes", "i1", (dims,)) if precision == "int8" else ("bits", "u1", ((dims + 7) // 8,))
    return numpy.dtype([("scale", "<f4"), codes]), ()


def quantize(learned: numpy.ndarray, precision: str, dims: int) -> numpy.ndarray:
    """Stored rows (see `layout`) of float32 learned vectors (n, width)."""
    learned = numpy.asarray(learned, dtype="float32")[:, :dims]
    dtype, _ = layout(precision, dims)
    if precision in ("float32", "float16"):
        return numpy.ascontiguousarray(learned, dtype=dtype)
    out = numpy.zeros(len(learned), dtype=dtype)
    if precision == "int8":
        out["scale"] = numpy.abs(learned).max(axis=1, initial=0.0) / 127.0
        safe = numpy.where(out["scale"] > 0, out["scale"], 1.0)[:, None]
        out["codes"] = numpy.clip(numpy.rint(learned / safe), -127, 127)
    else:
        out["scale"] = numpy.abs(learned).mean(axis=1, dtype="float64") if dims else 0.0
        out["bits"] = numpy.packbits(learned > 0, axis=1)
    return out


def dequantize(rows: numpy.ndarray, precision: str, dims: int, width: int) -> numpy.ndarray:
    """float32 (n, width) vectors of stored rows of `dims` columns, the columns past dims zero."""
    if precision in ("float32", "float16"):
        values = numpy.asarray(rows, dtype="float32")
    elif precision == "int8":
        values = rows["codes"].astype("float32") * rows["scale"][:, None]
    else:
        signs = numpy.unpackbits(rows["bits"], axis=1, count=dims).astype("float32") * 2.0 - 1.0
        values = signs * rows["scale"][:, None]
    return values if values.shape[1] == width else numpy.pad(values, ((0, 0), (0, width - values.shape[1])))


class Dequantized:
    """Stored rows read as float32 (n, width) learned vectors: indexing dequantises the rows asked for."""

    def __init__(self, rows: numpy.ndarray, precision: str, dims: int, width: int) -> None:
        self.rows, self.precision, self.dims, self.width = rows, precision, dims, width
        self.shape = (len(rows), width)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> numpy.ndarray:
        """The dequantised rows of a slice or an array of ids."""
        return dequantize(self.rows[index], self.precision, self.dims, self.width)


def save_vectors(path: Path, vectors: numpy.ndarray, precision: str, dims: Optional[int], lexical_width: int) -> None:
    """Write full vectors compactly: the learned columns' stored rows at `path` (.npy), a hybrid's
    lexical columns at PATH.lexical.npz (sparse, exact) and the settings at PATH.precision.json."""
    width = vectors.shape[1] - lexical_width
    dims = check_precision(precision, dims, width)
    with atomic_write(path) as file:
        numpy.save(file, quantize(vectors[:, :width], precision, dims), allow_pickle=False)
    if lexical_width:
        with atomic_write(path.with_name(path.name + ".lexical.npz")) as file:
            save_npz(file, csr_matrix(vectors[:, width:]))
    settings = {"precision": precision, "dims": dims, "learned_width": width, "lexical_width": lexical_width}
    with atomic_write(path.with_name(path.name + ".precision.json")) as file:
        file.write(srsly.json_dumps(settings, indent=2).encode("utf8"))


def load_vectors(path: Union[str, Path]) -> numpy.ndarray:
    """float32 (n, width) vectors written by `save_vectors` (`encode --precision`); a ValueError naming
    PATH.precision.json when it records a precision or dims this version cannot read."""
    path = Path(path)
    file = path.with_name(path.name + ".precision.json")
    settings = srsly.read_json(file)
    try:
        precision, width, lexical = settings["precision"], settings["learned_width"], settings["lexical_width"]
        dims = check_precision(precision, settings["dims"], width)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{file} records vectors this version cannot read ({err})") from None
    rows = numpy.load(path, allow_pickle=False)
    if rows.dtype != layout(precision, dims)[0]:
        raise ValueError(f"{path} holds {rows.dtype} rows, not the {precision} rows that {file} records")
    learned = dequantize(rows, precision, dims, width)
    if not lexical:
        return learned
    return numpy.hstack([learned, load_npz(path.with_name(path.name + ".lexical.npz")).toarray()])
