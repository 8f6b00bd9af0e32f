"""The Newton matrix of small models: dense LAPACK LU below a measured size, and SuperLU called
without SciPy's per-call wrapper above it (the same factorization, bit for bit).

For a few hundred unknowns the work of the sparse LU is a few tens of microseconds, and the
per-call overhead of ``scipy.sparse.linalg.splu`` (format checks, ``sum_duplicates``, index casts,
option dictionaries: ~25-40 us) is as large as the factorization.  :func:`small_first` wraps the
default backend of :func:`flexmb.dynamics.solve.linsolve.linear_solver` (:class:`SmallFirst`):

* ``n <= DENSE_MAX`` unknowns: the matrix is scattered into a dense array (positions computed once
  per pattern) and factored by LAPACK ``dgetrf`` (partial pivoting), solved by ``dgetrs``
  (:class:`DenseLU`);
* above, when the wrapped backend is :class:`~flexmb.dynamics.solve.linsolve.SuperLU` with its cached
  column ordering: the matrices of the cached pattern go straight to SuperLU's ``gstrf`` with the
  options ``splu`` would pass (``NATURAL`` on the pre-ordered columns, ``relax``, ``panel_size``,
  ``diag_pivot_thresh``, ``SymmetricMode``), i.e. the same factorization;
* anything else (the first matrix of a pattern, other backends): the wrapped backend itself.
  The default backend is now :class:`~flexmb.dynamics.solve.linsolve.Refactor` (refactorization along
  the first factorization's pivots), so by default only the dense path applies; the direct
  ``gstrf`` path serves a wrapped plain ``SuperLU``.

Attributes the run reads from its backend (``last_nnz``, the cached ordering ``_q`` and
``adopt_ordering`` for checkpoints, ...) are those of the wrapped backend.

Measured (``benchmarks/README.md``, "Small models"; one factorization of the Newton matrices of the
runs, best of 5 x 300 calls, load ~1): 48 unknowns (one body, one joint, p = 1): ``splu`` 45 us,
direct ``gstrf`` 20 us, dense 11 us; 96 (IFToMM pendulum, p = 2): 59 / 33 / 45 us; 144: 73 / 46 /
124 us; 480 (10-link chain, p = 1): 172 / 134 / 3 970 us.  Hence ``DENSE_MAX = 64``.

``gstrf`` is SciPy's private entry point (``scipy.sparse.linalg._dsolve._superlu``); if it is
missing or its signature changes, the wrapped backend is called instead (logged once).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from flexmb.dynamics.solve.csc_pattern import as_csc, same_pattern, permuted_solve
from flexmb.errors import SingularMatrixError

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
        A = as_csc(A)
        n = A.shape[0]
        if self._key is None or not same_pattern(A, *self._key):
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


class SmallFirst:
    """A backend ``inner`` with the dense path for ``n <= dense_max`` and, when ``inner`` is a plain
    :class:`~flexmb.dynamics.solve.linsolve.SuperLU` with a cached ordering, direct ``gstrf`` calls for the
    matrices of its cached pattern (module docstring)."""

    def __init__(self, inner, dense_max: int = DENSE_MAX) -> None:
        self.inner = inner
        self.dense_max = dense_max
        self.dense = DenseLU()
        # a plain cached-ordering SuperLU (linsolve.SuperLU.direct_gstrf; not its subclasses or other backends)
        self._direct = (_superlu is not None and type(inner).__dict__.get("direct_gstrf", False)
                        and inner.reuse_ordering)
        self._src = (None, None)

    def __getattr__(self, name):  # last_nnz, _q, adopt_ordering, n_orderings, ...: the wrapped backend's
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _known(self, A) -> bool:
        """``A`` has the inner SuperLU's cached pattern: the very index arrays it was seen with (the
        matrices of a :class:`~flexmb.dynamics.layout.Pattern` share them), else compared entry by entry."""
        if A.indptr is self._src[0] and A.indices is self._src[1]:
            return True
        return same_pattern(A, *self.inner._key)

    def __call__(self, A):
        n = A.shape[0]
        if n <= self.dense_max:
            return self.dense(A)
        slu = self.inner
        csc = sp.issparse(A) and A.format == "csc"
        if not (self._direct and csc and slu._key is not None and self._known(A)):
            solve = slu(A)
            if self._direct and csc and slu._key is not None and same_pattern(A, *slu._key):
                self._src = (A.indptr, A.indices)
            return solve
        data = A.data[slu._gather]
        opts = dict(DiagPivotThresh=slu.diag_pivot_thresh, ColPerm="NATURAL", PanelSize=slu.panel_size,
                    Relax=slu.relax, SymmetricMode=True)  # what splu passes for NATURAL
        try:
            lu = _superlu.gstrf(n, data.size, data, slu._pindices, slu._pindptr, csc_construct_func=_csc_array,
                                ilu=False, options=opts)
        except RuntimeError as exc:  # "Factor is exactly singular"
            raise SingularMatrixError(str(exc)) from exc
        except TypeError as exc:  # pragma: no cover - a SciPy whose private binding changed
            log.info("direct SuperLU call unavailable (%s); using scipy.sparse.linalg.splu", exc)
            self._direct = False
            return slu(A)
        slu._lu = lu
        return permuted_solve(lu, slu._q)


def small_first(inner, dense_max: int = DENSE_MAX) -> SmallFirst:
    """``inner`` with the small-system paths of :class:`SmallFirst`."""
    return SmallFirst(inner, dense_max)
