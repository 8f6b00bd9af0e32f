"""Helpers shared by the sparse backends (flexmb.dynamics.solve.linsolve) and the small-system paths
(flexmb.dynamics.solve.dense_solve): canonical CSC form, "same pattern" by the index arrays, the solve of a column-permuted factorization."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def as_csc(A) -> sp.csc_matrix:
    """``A`` as a canonical CSC matrix (sorted indices, no duplicates); no copy when it already is."""
    A = A if (sp.issparse(A) and A.format == "csc") else sp.csc_matrix(A)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def same_pattern(A: sp.csc_matrix, indptr: np.ndarray, indices: np.ndarray) -> bool:
    """``A`` has the CSC index arrays ``indptr`` / ``indices`` (the same objects, or equal)."""
    if A.indptr is indptr and A.indices is indices:
        return True
    return (A.shape[0] + 1 == indptr.size and A.indices.size == indices.size
            and np.array_equal(A.indptr, indptr) and np.array_equal(A.indices, indices))


def permuted_solve(lu, q: np.ndarray):
    """``b -> x`` for a factorization ``lu`` of the column-permuted matrix ``A[:, q]``: ``x[q] = lu.solve(b)``."""

    def solve(b):
        y = lu.solve(np.asarray(b, dtype=float))
        x = np.empty_like(y)
        x[q] = y
        return x

    return solve
