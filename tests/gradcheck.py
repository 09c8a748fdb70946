"""Finite-difference gradient checks for hand-written layers and losses."""

from typing import Callable

import numpy


def numeric_grad(f: Callable[[], float], x: numpy.ndarray, eps: float) -> numpy.ndarray:
    """Central differences of the scalar f() with respect to every entry of x (changed in place)."""
    grad = numpy.zeros_like(x, dtype="f8")
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return grad


def assert_grad_close(analytic, numeric, rtol: float = 1e-4, atol: float = 1e-6) -> None:
    numpy.testing.assert_allclose(numpy.asarray(analytic, dtype="f8"), numeric, rtol=rtol, atol=atol)
