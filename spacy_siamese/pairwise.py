"""Scores of many pairs of vectors with a pipe's comparison (`compare(vectors_a, vectors_b)` of
paired rows, or a `matrix` of every row with every row at once), in blocks of bounded size: every
pair of two collections, or chosen pairs."""

import math
from functools import partial
from typing import Callable, Optional

import numpy

Compare = Callable[[numpy.ndarray, numpy.ndarray], numpy.ndarray]
# Bytes a block may use: each pair of a block holds a few float32 rows of the vector width (a
# `matrix` block: a few float64 scores a pair, beside float64 copies of its rows).
BLOCK_BYTES = 256 * 2**20
ROWS_PER_PAIR = 8
MATRIX_BYTES_PER_PAIR = 64


def default_block_size(width: int, *, matrix: bool = False) -> int:
    """Pairs per block for vectors of `width` dims within BLOCK_BYTES (a multiple of 32)."""
    per_pair = MATRIX_BYTES_PER_PAIR if matrix else 4 * ROWS_PER_PAIR * max(1, width)
    return max(32, BLOCK_BYTES // per_pair // 32 * 32)


def check_block_size(block_size: Optional[int], width: int, *, matrix: bool = False) -> int:
    """`block_size`, or the default for vectors of `width` dims when it is None; a ValueError if not positive."""
    if block_size is None:
        return default_block_size(width, matrix=matrix)
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    return block_size


def vector_similarity_matrix(
    compare: Compare,
    vectors_a: numpy.ndarray,
    vectors_b: Optional[numpy.ndarray] = None,
    *,
    block_size: Optional[int] = None,
    matrix: Optional[Compare] = None,
) -> numpy.ndarray:
    """(N, M) scores of every row of vectors_a against every row of vectors_b (`None`: vectors_a
    against themselves, each unordered pair computed once), by `matrix` where given, else pair by
    pair with `compare`; at most `block_size` pairs are scored at once."""
    symmetric = vectors_b is None
    b = vectors_a if vectors_b is None else vectors_b
    n, m = len(vectors_a), len(b)
    out = numpy.zeros((n, m), dtype="float32")
    if n == 0 or m == 0:
        return out
    width = vectors_a.shape[1]
    block = check_block_size(block_size, width, matrix=matrix is not None)
    score = partial(score_tile, compare) if matrix is None else matrix
    most_rows = max(1, BLOCK_BYTES // (8 * width)) if matrix is not None else max(n, m)  # per side
    if symmetric:
        side = max(1, min(math.isqrt(block), most_rows))
        for i in range(0, n, side):
            for j in range(i, n, side):
                tile = score(vectors_a[i : i + side], b[j : j + side])
                if i == j:  # a matrix product may round (p, q) and (q, p) differently
                    tile = numpy.triu(tile) + numpy.triu(tile, 1).T
                out[i : i + side, j : j + side] = tile
                out[j : j + side, i : i + side] = tile.T
        return out
    cols = min(m, block, most_rows)
    rows = min(max(1, block // cols), most_rows)
    for i in range(0, n, rows):
        for j in range(0, m, cols):
            out[i : i + rows, j : j + cols] = score(vectors_a[i : i + rows], b[j : j + cols])
    return out


def score_tile(compare: Compare, a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """(len(a), len(b)) scores in one `compare` call."""
    return compare(numpy.repeat(a, len(b), axis=0), numpy.tile(b, (len(a), 1))).reshape(len(a), len(b))


def vector_pair_scores(
    compare: Compare,
    vectors_a: numpy.ndarray,
    vectors_b: numpy.ndarray,
    rows: numpy.ndarray,
    cols: numpy.ndarray,
    *,
    block_size: Optional[int] = None,
) -> numpy.ndarray:
    """Scores of the pairs (vectors_a[rows[t]], vectors_b[cols[t]]), in bounded blocks."""
    block = check_block_size(block_size, vectors_a.shape[1])
    out = numpy.zeros((len(rows),), dtype="float32")
    for s in range(0, len(rows), block):
        out[s : s + block] = compare(vectors_a[rows[s : s + block]], vectors_b[cols[s : s + block]])
    return out
