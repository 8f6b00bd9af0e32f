"""Sparse linear solvers for the Newton matrix (unsymmetric, indefinite): factories returning
``factor(A) -> solve(b)`` callables.

``"superlu"`` (default) is SciPy's SuperLU with COLAMD column ordering.  ``"umfpack"`` uses
scikit-umfpack when it is installed.  The choice is measured in ``benchmarks/chain.py``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

Factor = Callable[[sp.spmatrix], Callable[[np.ndarray], np.ndarray]]


class SingularMatrixError(RuntimeError):
    """The Newton matrix is singular (dependent equations)."""


def superlu(A: sp.spmatrix):
    try:
        lu = spla.splu(sp.csc_matrix(A), permc_spec="COLAMD", options={"SymmetricMode": False})
    except RuntimeError as exc:  # "Factor is exactly singular"
        raise SingularMatrixError(str(exc)) from exc
    superlu.last_nnz = lu.L.nnz + lu.U.nnz
    return lu.solve


superlu.last_nnz = 0


def umfpack(A: sp.spmatrix):  # pragma: no cover - optional backend
    try:
        import scikits.umfpack as um
    except ImportError as exc:
        raise ImportError("linear_solver='umfpack' needs scikit-umfpack (pip install scikit-umfpack); "
                          "use the default 'superlu'") from exc
    lu = um.splu(sp.csc_matrix(A))
    return lu.solve


LINEAR_SOLVERS: dict[str, Factor] = {"superlu": superlu, "umfpack": umfpack}


def linear_solver(spec: str | Factor) -> Factor:
    if callable(spec):
        return spec
    try:
        return LINEAR_SOLVERS[spec]
    except KeyError:
        raise ValueError(f"linear_solver={spec!r} is unknown; use one of {sorted(LINEAR_SOLVERS)} or a callable") from None
