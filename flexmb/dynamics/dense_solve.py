"""The Newton matrix of small models: dense LAPACK LU below a measured size, and SuperLU called
without SciPy's per-call wrapper above it (same factorization, bit for bit).

For a few hundred unknowns the work of the sparse LU is a few tens of microseconds and the
per-call overhead of ``scipy.sparse.linalg.splu`` (format checks, ``sum_duplicates``, index casts,
option dictionaries: ~25-40 us) is as large as the factorization.  :class:`LeanSuperLU` is the
``"superlu"`` backend of :mod:`flexmb.dynamics.linsolve` with two changes:

* ``n <= DENSE_MAX`` unknowns: the matrix is scattered into a dense array (positions computed once
  per pattern) and factored by LAPACK ``dgetrf`` (partial pivoting), solved by ``dgetrs``;
* above: the matrices of the cached pattern go straight to SuperLU's ``gstrf`` with the options
  ``splu`` would pass (``NATURAL`` on the pre-ordered columns, ``relax``, ``panel_size``,
  ``diag_pivot_thresh``): the same factorization as :class:`~flexmb.dynamics.linsolve.SuperLU`.

Measured (``benchmarks/README.md``, "Small models"; one factorization of the Newton matrix, best of
5 x 300, load ~1): 48 unknowns (one body, one joint, p = 1): splu 45 us, gstrf 20 us, dense 11 us;
96 (pendulum p = 2): 59 / 33 / 45 us; 144: 73 / 46 / 124 us; 480 (10-link chain p = 1):
172 / 134 / 3 970 us.  Hence ``DENSE_MAX = 64``.

``gstrf`` is SciPy's private entry point (``scipy.sparse.linalg._dsolve._superlu``); if it is
missing or its signature changes, the backend falls back to ``splu`` (logged once).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from flexmb.dynamics.linsolve import SingularMatrixError, SuperLU, _csc, _same_pattern

log = logging.getLogger(__name__)

#: largest system factored as a dense matrix (measured crossover, module docstring)
DENSE_MAX = 64

try:  # SciPy's own SuperLU binding, without splu's per-call checks
    from scipy.sparse import csc_array as _csc_array
    from scipy.sparse.linalg._dsolve import _superlu
except ImportError:  # pragma: no cover - depends on the SciPy version
    _superlu = None


class DenseLU:
    """``factor(A) -> solve`` by LAPACK ``dgetrf``/``dgetrs`` for a small square sparse ``A`` (any
    format; CSC with a fixed pattern is scattered through positions computed once)."""

    def __init__(self) -> None:
        self._key = None
        self._flat = None

    def __call__(self, A):
        A = _csc(A)
        n = A.shape[0]
        if self._key is None or not _same_pattern(A, *self._key):
            cols = np.repeat(np.arange(n), np.diff(A.indptr))
            # Fortran order: column j is contiguous (LAPACK's layout, no copy in dgetrf)
            self._flat = cols.astype(np.int64) * n + A.indices
            self._key = (A.indptr.copy(), A.indices.copy())
        D = np.zeros(n * n)
        D[self._flat] = A.data
        lu, piv, info = lapack.dgetrf(D.reshape(n, n, order="F"), overwrite_a=True)
        if info > 0:
            raise SingularMatrixError(f"dense LU: exactly zero pivot in column {info - 1} of {n}")

        def solve(b, lu=lu, piv=piv):
            return lapack.dgetrs(lu, piv, np.asarray(b, dtype=float))[0]

        return solve


class LeanSuperLU(SuperLU):
    """:class:`~flexmb.dynamics.linsolve.SuperLU` (cached COLAMD ordering) with the dense path for
    ``n <= dense_max`` and direct ``gstrf`` calls for the matrices of the cached pattern."""

    def __init__(self, *args, dense_max: int = DENSE_MAX, **kw) -> None:
        super().__init__(*args, **kw)
        self.dense_max = dense_max
        self._dense = DenseLU()
        self._opts = dict(DiagPivotThresh=self.diag_pivot_thresh, ColPerm="NATURAL", PanelSize=self.panel_size,
                          Relax=self.relax, SymmetricMode=True)  # what splu passes for NATURAL
        self._direct = _superlu is not None

    _src = (None, None)

    def _known(self, A) -> bool:
        """``A`` has the cached pattern: the very index arrays it was first seen with (the matrices of a
        :class:`~flexmb.dynamics.layout.Pattern` share them), else compared entry by entry."""
        if A.indptr is self._src[0] and A.indices is self._src[1]:
            return True
        return _same_pattern(A, *self._key)

    def __call__(self, A):
        n = A.shape[0]
        if n <= self.dense_max:
            return self._dense(A)
        if not (self._direct and self.reuse_ordering and self._key is not None and sp.issparse(A)
                and A.format == "csc" and self._known(A)):
            lu = super().__call__(A)
            if self._key is not None and sp.issparse(A) and A.format == "csc" and _same_pattern(A, *self._key):
                self._src = (A.indptr, A.indices)  # e.g. a Pattern's template arrays, shared by its matrices
            return lu
        data = A.data[self._gather]
        try:
            lu = _superlu.gstrf(n, data.size, data, self._pindices, self._pindptr, csc_construct_func=_csc_array,
                                ilu=False, options=self._opts)
        except RuntimeError as exc:  # "Factor is exactly singular"
            raise SingularMatrixError(str(exc)) from exc
        except TypeError as exc:  # pragma: no cover - a SciPy whose private binding changed
            log.info("direct SuperLU call unavailable (%s); using scipy.sparse.linalg.splu", exc)
            self._direct = False
            return super().__call__(A)
        self._lu = lu
        q = self._q

        def solve(b, lu=lu, q=q):
            y = lu.solve(np.asarray(b, dtype=float))
            x = np.empty_like(y)
            x[q] = y
            return x

        return solve
