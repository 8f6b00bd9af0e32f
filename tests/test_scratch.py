"""kernels.scratch / scratch_zeros: a compiled kernel's fixed-shape scratch on its own stack behaves as
np.empty / np.zeros (flexmb.dynamics.kernels): zeros at every call inside a loop, its own slot per call
site, the same values as the Python function, and no numba runtime allocation."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numba.core.runtime import rtsys

from flexmb.dynamics.kernels import scratch, scratch_zeros


def _rows_kernel(empty, zeros):
    """Per row of ``a (n, 3)``: the sum of ``zeros(3) + a[i]`` and of a 3 x 3 outer product held in
    ``empty((3, 3))``; a fresh zero vector at every iteration (accumulating into it would add the previous
    rows).  Compiled with the scratch functions, or with NumPy's as the control."""

    @njit(cache=False)
    def rows(a):
        out = np.empty((a.shape[0], 2))
        for i in range(a.shape[0]):
            v = zeros(3)
            M = empty((3, 3))
            for d in range(3):
                v[d] += a[i, d]
                for e in range(3):
                    M[d, e] = a[i, d] * a[i, e]
            out[i, 0] = v.sum()
            out[i, 1] = M.sum()
        return out

    return rows


_rows_sums = _rows_kernel(scratch, scratch_zeros)
_rows_sums_heap = _rows_kernel(np.empty, np.zeros)


@njit(cache=False)
def _two_sites(x):
    """Two scratch arrays of one shape are two slots (writing one leaves the other)."""
    a = scratch(3)
    b = scratch(3)
    for d in range(3):
        a[d] = x
        b[d] = -x
    return a[0] + a[1] + a[2], b[0]


def test_scratch_matches_numpy_and_zeroes_every_call():
    a = np.arange(12.0).reshape(4, 3) - 5.0
    got = _rows_sums(a)
    ref = np.column_stack([a.sum(axis=1), np.array([np.outer(r, r).sum() for r in a])])
    assert np.array_equal(got, ref)
    assert np.array_equal(_rows_sums.py_func(a), ref)  # Python: np.empty / np.zeros


def test_scratch_sites_are_distinct():
    assert _two_sites(2.0) == (6.0, -2.0)


@njit(cache=False)
def _out_only(a):
    return np.empty((a.shape[0], 2))


def _allocations(fn, a) -> int:
    fn(a)
    before = rtsys.get_allocation_stats().alloc
    fn(a)
    return rtsys.get_allocation_stats().alloc - before


def check_allocations() -> None:
    """The scratch kernel allocates what a kernel making only its output does (the call's own arrays); the
    same kernel with np.zeros / np.empty two more per row (needs numba's NRT statistics on)."""
    a = np.ones((50, 3))
    base = _allocations(_out_only, a)
    assert _allocations(_rows_sums, a) == base
    assert _allocations(_rows_sums_heap, a) == base + 2 * a.shape[0]
    assert np.array_equal(_rows_sums(a), _rows_sums_heap(a))


def test_scratch_makes_no_runtime_allocation():
    """:func:`check_allocations`, in a process with numba's allocation statistics on (they are read at
    numba's start)."""
    try:
        rtsys.get_allocation_stats()
    except RuntimeError:
        env = dict(os.environ, NUMBA_NRT_STATS="1")
        code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_scratch; "
                f"test_scratch.check_allocations()")
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return
    check_allocations()


def test_scratch_needs_a_literal_shape():
    @njit(cache=False)
    def bad(n):
        return scratch((n, 3)).shape[0]

    with pytest.raises(Exception, match="scratch"):
        bad(3)
