"""Clusters of (near-)equal eigenvalues: their shapes made independent of the eigensolver's round-off.

Within a cluster of equal eigenvalues (the bending pair of a square or round section, ...) every
M-orthonormal basis of the cluster's span is a set of modes, and the one an eigensolver returns is
decided by its round-off (BLAS kernels, thread count): measured on the 1 m, 0.05 x 0.05 m steel beam
clamped at its root, 45/55 % y/z mixtures with one OpenBLAS kernel.  Whatever reads single modes (a
selection by direction, a per-mode treatment, a truncation) then depends on the machine.  Here the
span is kept and its basis rotated to a canonical one: the eigenvectors of ``C = A_y + 2 A_z`` with
``A_d = Phi_c^T M_d Phi_c`` the cluster's mass-weighted participation along axis ``d`` (``M_d``: the
rows and columns of the DOFs along ``d``), ascending, i.e. modes aligned with the mesh axes, x first,
then y, then z (a beam along x: its y-bending mode, then its z-bending one).  Axes alone cannot order
a cluster whose participations are isotropic (``C`` degenerate too): such a cluster keeps the
eigensolver's basis.

A truncation inside a cluster keeps a deterministic part of it (:func:`truncated`: the first aligned
ones) and says so (WARNING): asking for the whole cluster is the fix.

Functions: :func:`clusters` (index groups), :func:`aligned` (rotate every cluster of a basis),
:func:`truncated` (the ``n`` lowest of more computed eigenpairs, a cut cluster aligned first).
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["CLUSTER_RTOL", "CLUSTER_EXTRA", "clusters", "aligned", "truncated"]

logger = logging.getLogger(__name__)

#: consecutive eigenvalues ``omega2`` closer than this (relative) belong to one cluster: the measured
#: splits of exactly symmetric pairs are round-off and solver tolerance (7e-14 .. 1.2e-10 on the beam
#: above), a physical split (a section 0.1 % off square: 4e-3) is far above; between, the modes of a
#: pair are decided by less than 1e-6 of their frequency, i.e. by the round-off they are computed with.
#: (:data:`flexmb.fe.reduction.mode_directions.CLUSTER_RTOL`, 1e-4, is looser on purpose: it acts only
#: when the user selects modes by direction, and records the coupling it drops.)
CLUSTER_RTOL = 1e-6
#: eigenpairs computed beyond the requested ones, to see a cluster that the truncation cuts
CLUSTER_EXTRA = 3


def clusters(omega2, rtol: float = CLUSTER_RTOL) -> list[NDArray[np.int64]]:
    """Index arrays of the runs of two or more consecutive (ascending) eigenvalues ``omega2 (nm,)``
    closer than ``rtol`` relative to their size (floored at 1e-12 of the largest)."""
    w = np.asarray(omega2, dtype=float).reshape(-1)
    floor = 1e-12 * max(float(np.abs(w).max(initial=0.0)), 1e-300)
    out, start = [], 0
    for i in range(1, w.size + 1):
        if i == w.size or abs(w[i] - w[i - 1]) > rtol * max(abs(w[i]), abs(w[i - 1]), floor):
            if i - start > 1:
                out.append(np.arange(start, i))
            start = i
    return out


def _axis_rotation(P: NDArray, MP: NDArray, component: NDArray) -> NDArray:
    """Orthogonal ``Q (m, m)`` that rotates the cluster shapes ``P (ndof, m)`` (``MP = M P``,
    ``component (ndof,)`` the axis 0/1/2 of each DOF) to the eigenvectors of ``A_y + 2 A_z``,
    ascending."""
    C = sum(w * (P[component == d].T @ MP[component == d]) for w, d in ((1.0, 1), (2.0, 2)))
    _, Q = np.linalg.eigh(0.5 * (C + C.T))
    return Q


def aligned(X: NDArray, omega2, nodal: Callable[[NDArray], NDArray], M, rtol: float = CLUSTER_RTOL):
    """Every cluster of a basis rotated to the axes.

    Parameters
    ----------
    X : ndarray, shape (n, nm)
        Coefficients of the shapes in any coordinates (M-orthonormal shapes, K-diagonal to round-off).
    omega2 : array_like, shape (nm,)
        Their eigenvalues (rad/s)^2, ascending.
    nodal : callable
        ``nodal(X[:, c]) -> (3 n_nodes, m)`` node-major displacements of columns ``c``.
    M : sparse matrix, shape (3 n_nodes, 3 n_nodes)
        Mass of those displacements.

    Returns
    -------
    X, omega2 : ndarray
        ``X`` with each cluster's columns rotated (span unchanged); ``omega2`` with each cluster's
        entries replaced by their mean (the spread, below ``rtol``, is dropped: ``X^T K X`` differs from
        ``diag(omega2)`` by at most that spread inside the cluster).
    """
    X = np.array(X, dtype=float, copy=True)
    w = np.array(omega2, dtype=float, copy=True)
    for c in clusters(w, rtol):
        P = nodal(X[:, c])
        X[:, c] = X[:, c] @ _axis_rotation(P, M @ P, np.arange(P.shape[0]) % 3)
        w[c] = w[c].mean()
    return X, w


def truncated(vals, vecs: NDArray, n: int, nodal: Callable[[NDArray], NDArray], M, what: str,
              rtol: float = CLUSTER_RTOL):
    """The ``n`` lowest of more computed eigenpairs ``vals (k,)`` ascending, ``vecs (ndof, k)``.

    A cluster that the cut at ``n`` splits is rotated to the axes first (:func:`aligned`), so that the
    part kept does not depend on the eigensolver's round-off, and a WARNING names it (``what``: the
    caller, for the message).  A cluster that reaches the last computed pair may be incomplete: its
    alignment is then not canonical (WARNING too).  Returns ``(vals[:n], vecs[:, :n])``.
    """
    vals = np.asarray(vals, dtype=float)
    vecs = np.array(vecs, dtype=float, copy=True)
    for c in clusters(vals, rtol):
        if not c[0] < n <= c[-1]:
            continue
        P = nodal(vecs[:, c])
        vecs[:, c] = vecs[:, c] @ _axis_rotation(P, M @ P, np.arange(P.shape[0]) % 3)
        f = np.sqrt(np.maximum(vals[c], 0.0)) / (2.0 * np.pi)
        incomplete = c[-1] == vals.size - 1
        logger.warning(
            "%s: the %d modes asked for cut a cluster of %s%d equal frequencies (%.6g Hz, relative spread %.1e: "
            "a symmetric pair or group): %d of them kept, aligned with the mesh axes (x, then y, then z)%s. Ask "
            "for %s%d modes to keep the cluster whole",
            what, n, "at least " if incomplete else "", c.size, f.mean(), np.ptp(vals[c]) / max(abs(vals[c]).max(), 1e-300),
            n - c[0], "; the cluster may extend beyond the computed modes, so this choice is not canonical"
            if incomplete else "", "more than " if incomplete else "", c[-1] + 1)
    return vals[:n], vecs[:, :n]
