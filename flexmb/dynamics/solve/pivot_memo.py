"""The structure of ``L`` and ``U`` under the first factorization's pivots of a Newton matrix pattern
(:class:`~flexmb.dynamics.solve.linsolve.Refactor`; SuperLU's column order and row pivots are computed
every time), kept by a digest of its inputs (:mod:`flexmb.memo`).

The structure (:class:`~flexmb.dynamics.solve.refactor_lu.Structure`) is a deterministic function of the
pattern and the permutations: a run of a model of the same structure whose first matrix pivots alike (a
sweep, a model rebuilt) gets it without the symbolic analysis (X3, 378 unknowns, 5,808 nonzeros: 0.6 ms).
SuperLU's pivots depend on the matrix's values; keeping them would only serve a run of the very same
matrix again (a benchmark's repeats), so they are not kept: a timed repeat costs what a new run costs.
"""
from __future__ import annotations

import copy

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.solve.refactor_lu import Structure
from flexmb.memo import Memo, digest

#: patterns with more nonzeros are not kept (a large model's run is long, and its structure takes
#: megabytes: 8 kept structures of 50,000 nonzeros and ~5x fill take ~25 MB)
MAX_NNZ = 50_000

_STRUCTURES = Memo(8)


def structure(indptr: NDArray, indices: NDArray, q: NDArray, perm_r: NDArray) -> Structure:
    """``Structure(indptr, indices, q, perm_r)``: a new object (its own ``last_ratio``, ``ordering``) over
    the arrays kept for these inputs (never written after the analysis)."""
    if np.asarray(indices).size > MAX_NNZ:
        return Structure(indptr, indices, q, perm_r)
    key = digest("structure", np.asarray(indptr), np.asarray(indices), np.asarray(q), np.asarray(perm_r))
    return copy.copy(_STRUCTURES.get(key, lambda: Structure(indptr, indices, q, perm_r)))
