"""The first factorization of a Newton matrix pattern (:class:`~flexmb.dynamics.solve.linsolve.Refactor`):
SuperLU's column order and row pivots and the structure of ``L`` and ``U`` under them, kept by a digest
of their inputs (:mod:`flexmb.memo`).

Both are deterministic functions of their inputs: the pivots of the matrix's pattern, values and
SuperLU's options; the structure (:class:`~flexmb.dynamics.solve.refactor_lu.Structure`) of the pattern and
the permutations.  A run of a model that was run before (a benchmark's repeated runs, a sweep that
rebuilds the same model) meets the same first matrix and gets the same answer without SuperLU and the
symbolic analysis: X3, 378 unknowns, 5,808 nonzeros: 0.84 ms for SuperLU and 0.6 ms for the structure,
~0.05 ms for the two digests.  A matrix that differs in any value is factored afresh.
"""
from __future__ import annotations

import copy

import numpy as np
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.dynamics.solve.refactor_lu import Structure
from flexmb.memo import Memo, digest

#: patterns with more nonzeros are not kept (a large model's run is long, and its structure takes
#: megabytes: 8 kept structures of 50,000 nonzeros and ~5x fill take ~25 MB)
MAX_NNZ = 50_000

_PIVOTS = Memo(8)
_STRUCTURES = Memo(8)


def superlu_pivots(A, **options) -> tuple[NDArray, NDArray]:
    """``(perm_c, perm_r)`` of ``scipy.sparse.linalg.splu(A, **options)`` (``A`` CSC; its RuntimeError on
    a singular matrix passes through, nothing kept)."""

    def make():
        lu = spla.splu(A, **options)
        return lu.perm_c.copy(), lu.perm_r.copy()

    if A.nnz > MAX_NNZ:
        return make()
    key = digest("splu", A.shape, A.indptr, A.indices, A.data, sorted(options.items()))
    return _PIVOTS.get(key, make)


def structure(indptr: NDArray, indices: NDArray, q: NDArray, perm_r: NDArray) -> Structure:
    """``Structure(indptr, indices, q, perm_r)``: a new object (its own ``last_ratio``, ``ordering``) over
    the arrays kept for these inputs (never written after the analysis)."""
    if np.asarray(indices).size > MAX_NNZ:
        return Structure(indptr, indices, q, perm_r)
    key = digest("structure", np.asarray(indptr), np.asarray(indices), np.asarray(q), np.asarray(perm_r))
    return copy.copy(_STRUCTURES.get(key, lambda: Structure(indptr, indices, q, perm_r)))
