"""Factorizations of sparse symmetric positive definite matrices: CHOLMOD, or SciPy ``splu`` as fallback.

CHOLMOD (scikit-sparse) is imported lazily, on the first factorization. When it is missing, or when
``backend="splu"`` is asked for, SciPy's SuperLU is used with a symmetric fill-reducing ordering
(``MMD_AT_PLUS_A``) and diagonal pivoting, which is several times slower and uses more memory on
3-D meshes but gives the same results to round-off. The fallback is logged once, at INFO level,
with the command that installs CHOLMOD.

Only symmetric positive definite matrices belong here (FE stiffness plus a negative shift times the
mass, grounded stiffness matrices). The Newton matrices of the time integration are indefinite and
unsymmetric: they use ``splu`` elsewhere.
"""
from __future__ import annotations

import ctypes
import functools
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.errors import ModelError

__all__ = ["SPDFactor", "blas_threads", "cholmod_available", "factorize_spd"]

logger = logging.getLogger(__name__)

_CHOLMOD_STATE: dict[str, object] = {}  # "module" -> sksparse.cholmod or "error" -> message


def cholmod_available() -> bool:
    """True when scikit-sparse's CHOLMOD can be imported (the import is attempted once)."""
    return _cholmod() is not None


def _cholmod():
    if "module" in _CHOLMOD_STATE:
        return _CHOLMOD_STATE["module"]
    if "error" in _CHOLMOD_STATE:
        return None
    try:
        from sksparse import cholmod  # lazy: optional dependency (extra "sparse")
    except ImportError as exc:  # pragma: no cover - depends on the installation
        _CHOLMOD_STATE["error"] = str(exc)
        logger.info(
            "CHOLMOD (scikit-sparse) is not available (%s): symmetric positive definite factorizations "
            "fall back to SciPy splu, slower and more memory hungry on large meshes. Install it with "
            "`pip install 'flexmb[sparse]'` (needs libsuitesparse-dev).",
            exc,
        )
        return None
    _CHOLMOD_STATE["module"] = cholmod
    return cholmod


@dataclass(frozen=True)
class SPDFactor:
    """A factorization of a sparse SPD matrix ``A`` (n, n).

    Attributes
    ----------
    solve : callable
        ``solve(b)`` returns ``A^{-1} b`` for ``b`` of shape (n,) or (n, k), same shape out.
    backend : str
        ``"cholmod"`` or ``"splu"``.
    n : int
        Size of ``A``.
    factor_nnz : int
        Nonzeros of the factor (a memory measure; -1 when unknown).
    """

    solve: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    backend: str
    n: int
    factor_nnz: int = -1

    def __call__(self, b: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.solve(b)


def factorize_spd(A: sp.spmatrix | sp.sparray, *, backend: str = "auto", what: str = "matrix") -> SPDFactor:
    """Factorize a sparse symmetric positive definite matrix.

    Parameters
    ----------
    A : sparse matrix, shape (n, n)
        Symmetric positive definite (only the values matter; any sparse format).
    backend : {"auto", "cholmod", "splu"}
        ``"auto"``: CHOLMOD when scikit-sparse imports, else ``splu`` (logged once).
        ``"cholmod"``: CHOLMOD or an ``ImportError`` naming the extra to install.
    what : str
        What ``A`` is, for error messages (e.g. ``"K - sigma*M"``).

    Returns
    -------
    SPDFactor

    Raises
    ------
    ModelError
        If ``A`` is not square, or not positive definite (CHOLMOD) / singular (splu); the message
        names ``what`` and the usual causes (rigid-body motion not removed, unused nodes, a
        disconnected part).
    """
    if backend not in ("auto", "cholmod", "splu"):
        raise ModelError(f"factorize_spd: `backend` = {backend!r}; use 'auto', 'cholmod' or 'splu'.")
    A = sp.csc_matrix(A, dtype=float)
    n = A.shape[0]
    if A.shape != (n, n):
        raise ModelError(f"factorize_spd: {what} must be square, got shape {A.shape}.")
    cholmod = None if backend == "splu" else _cholmod()
    if backend == "cholmod" and cholmod is None:
        raise ImportError(
            f"factorize_spd(backend='cholmod'): scikit-sparse is not importable ({_CHOLMOD_STATE.get('error')}); "
            "install it with `pip install 'flexmb[sparse]'` or use backend='auto'."
        )
    hint = (
        "It must be symmetric positive definite: check that rigid-body motion is removed (shift or "
        "constraints), that every node belongs to a solid cell (mesh.compacted()), and that the mesh "
        "is one connected part (flexmb.fe.mesh.connected_components)."
    )
    if cholmod is not None:
        try:
            # supernodal LL^T: fails on a non-SPD matrix (simplicial LDL^T would silently accept it)
            factor = cholmod.cholesky(A, mode="supernodal", ordering_method="default")
        except cholmod.CholmodNotPositiveDefiniteError as exc:
            raise ModelError(f"CHOLMOD: {what} ({n}x{n}) is not positive definite ({exc}). {hint}") from exc
        # (the supernodal factor's size is not exposed without a costly conversion: factor_nnz = -1)
        return SPDFactor(solve=factor, backend="cholmod", n=n)
    try:
        lu = spla.splu(
            A,
            permc_spec="MMD_AT_PLUS_A",
            diag_pivot_thresh=0.0,
            options=dict(SymmetricMode=True),
        )
    except RuntimeError as exc:
        raise ModelError(f"splu: {what} ({n}x{n}) is singular ({exc}). {hint}") from exc
    return SPDFactor(solve=lu.solve, backend="splu", n=n, factor_nnz=int(lu.L.nnz + lu.U.nnz))


#: the last scan of the loaded OpenBLAS libraries: (number of imported modules then, their handles)
_SCAN: list = [-1, []]


def _openblas_handles() -> list[tuple[Callable, Callable]]:
    """(get, set) thread-count functions of the OpenBLAS libraries loaded in this process, from
    ``/proc/self/maps``.  Kept while no module has been imported since (an OpenBLAS comes with the
    extension module that links it, numpy's and scipy's at their import): reading the maps costs 2.2 ms,
    and ``simulate`` asks twice per run (X3's run to its first maximum takes ~45 ms)."""
    n_modules = len(sys.modules)
    if _SCAN[0] == n_modules:
        return _SCAN[1]
    try:
        with open("/proc/self/maps") as fh:
            files = (line.split()[-1] for line in fh if line.strip())
            paths = {f for f in files if "openblas" in f.lower() and ".so" in f}
    except OSError:  # not Linux: nothing to do
        return []
    out = [fn for fn in map(_thread_functions, sorted(paths)) if fn is not None]
    _SCAN[:] = [n_modules, out]
    return out


def _thread_functions(path: str) -> tuple[Callable, Callable] | None:
    """(get, set) thread-count functions of the OpenBLAS library at ``path``, or None."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for prefix in ("scipy_", ""):
        for suffix in ("64_", ""):
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            set_ = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                return get, set_
    return None


@functools.cache
def _threadpoolctl() -> Callable | None:
    """``threadpoolctl.threadpool_limits`` when the optional package is installed, else None; looked for once
    (a failed import is not remembered by Python: it searched the path again at every call, 0.2-0.5 ms, twice
    per ``simulate``)."""
    try:
        from threadpoolctl import threadpool_limits  # optional
    except ImportError:
        return None
    return threadpool_limits


@contextmanager
def blas_threads(n: int = 1) -> Iterator[None]:
    """Limit the OpenBLAS libraries of numpy/scipy to ``n`` threads inside the block.

    ARPACK (``eigsh``) makes hundreds of small level-2 BLAS calls per eigenproblem; with several
    OpenBLAS threads they cost more than they save, and much more on a loaded machine (measured:
    100k-DOF modal reduction 67 s -> 44 s on 2 busy cores). Uses ``threadpoolctl`` when installed,
    else the OpenBLAS entry points found in the loaded libraries; a no-op when there are none.
    CHOLMOD's own BLAS is not affected.
    """
    threadpool_limits = _threadpoolctl()
    if threadpool_limits is not None:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
        return
    handles = _openblas_handles()
    saved = [get() for get, _ in handles]
    for _, set_ in handles:
        set_(n)
    try:
        yield
    finally:
        for (_, set_), old in zip(handles, saved):
            set_(old)
