"""Stiffness of displacement fields evaluated on each element's deformation (its rigid motion removed).

Why.  ``X^T K X`` of the bending shapes of a slender solid mesh, formed with the assembled ``K``, keeps
few correct digits: an element's nodal displacements are mostly its rigid motion, which ``K``
annihilates only to its round-off, so the product cancels ``|X|^T |K| |X| / X^T K X`` to one: 1e13
for the in-plane bending mode of the X2 beam (8 m long, 2 mm thick, hexahedron20), 1e16 for its
flapwise mode.  Measured on one Craig-Bampton subspace with two OpenBLAS kernels: in-plane
frequency 2.913194 and 2.913201 rad/s, flapwise 0.15783 and 0.15822 rad/s, where the element-wise
form below gives 2.91324323347 and 0.1576019903 with both (agreeing to 1e-12 and 6e-9).

How.  For each element, the least-squares rigid motion of its nodes (translation: the mean; small
rotation: the 3x3 normal equations about the centroid) is subtracted and the element matrix applied
to the rest, the deformation ``d_e``: ``X^T K X = sum_e d_e^T K_e d_e`` exactly (``K_e`` annihilates
rigid motions), and the cancellation left is the element's own (1e4 on X2).

:func:`stiffness_energy` is that sum; :func:`reduced_stiffness` uses it when ``K`` is the mesh's own
stiffness (checked on a probe vector) and falls back to ``X^T K X`` otherwise.

Shells and beams (6 DOFs per node) are summed the same way on their element matrices
(:func:`flexmb.fe.elements.mixed.element_blocks`), the rigid motion ``(t, w)`` fitted to all their
DOFs (translations ``t + w x r``, rotations ``w`` weighted by the element's squared radius, so that a
2-node beam has a unique fit); springs (not invariant under rotation when they act on one DOF of
non-coincident nodes) enter as ``X^T K_s X``. A model of solids keeps its classic layout.

Cost.  The element products are batches of small matrices (24 x 24 times 24 x m for hex8); with
several OpenBLAS threads each call pays a thread synchronization, which on a loaded 2-core machine
dominated: 42 s of the 109 s Craig-Bampton reduction of the 92k-DOF block (benchmarks/modes.py), 4.8
s against 1.0 s with one thread on a 19^3 hex8 cube (m = 32). The sums run with one BLAS thread.
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.fe.elements.assembly import Materials, element_stiffness
from flexmb.fe.elements.mixed import element_blocks
from flexmb.fe.elements.point import spring_matrices
from flexmb.fe.spd_solve import blas_threads

__all__ = ["reduced_stiffness", "stiffness_energy", "stiffness_product"]

logger = logging.getLogger(__name__)

#: node pairs per chunk of cells, divided by the number of fields (bounds the deformation arrays)
_ENTRIES = 4_000_000
#: the mesh's stiffness is taken for ``K`` when their products with a random vector agree to this
#: (relative): the same assembly agrees to round-off (1e-16), another material or model does not
SAME_MODEL_TOL = 1e-10


def _deformations(x: NDArray, U: NDArray) -> NDArray:
    """Element displacements ``U (c, k, 3, m)`` less their least-squares rigid motion on the element
    nodes ``x (c, k, 3)``: ``(c, 3k, m)``."""
    c, k = x.shape[:2]
    r = x - x.mean(axis=1, keepdims=True)
    V = U - U.mean(axis=1, keepdims=True)
    A = np.zeros((c, k, 3, 3))  # A theta = theta x r
    A[:, :, 0, 1], A[:, :, 0, 2] = r[..., 2], -r[..., 1]
    A[:, :, 1, 0], A[:, :, 1, 2] = -r[..., 2], r[..., 0]
    A[:, :, 2, 0], A[:, :, 2, 1] = r[..., 1], -r[..., 0]
    A = A.reshape(c, 3 * k, 3)
    V = V.reshape(c, 3 * k, -1)
    theta = np.linalg.solve(np.matmul(A.transpose(0, 2, 1), A), np.matmul(A.transpose(0, 2, 1), V))
    return V - np.matmul(A, theta)


def _deformations6(x: NDArray, U: NDArray) -> NDArray:
    """Element DOFs ``U (c, 6k, m)`` of nodes with rotations at ``x (c, k, 3)`` less their weighted
    least-squares rigid motion (translations ``t + w x r``, rotations ``w`` with weight ``l^2``, ``l``
    the r.m.s. node radius): ``(c, 6k, m)``."""
    c, k = x.shape[:2]
    r = x - x.mean(axis=1, keepdims=True)
    ell = np.sqrt(np.maximum((r ** 2).sum(axis=2).mean(axis=1), 1e-300))  # (c,)
    A = np.zeros((c, k, 6, 6))  # rows (node, dof), columns (t, w)
    A[:, :, [0, 1, 2], [0, 1, 2]] = 1.0
    A[:, :, 0, 4], A[:, :, 0, 5] = r[..., 2], -r[..., 1]
    A[:, :, 1, 3], A[:, :, 1, 5] = -r[..., 2], r[..., 0]
    A[:, :, 2, 3], A[:, :, 2, 4] = r[..., 1], -r[..., 0]
    A[:, :, [3, 4, 5], [3, 4, 5]] = 1.0
    A = A.reshape(c, 6 * k, 6)
    w = np.tile(np.r_[np.ones(3), np.zeros(3)], k)[None, :] + np.tile(np.r_[np.zeros(3), np.ones(3)], k)[None, :] \
        * (ell ** 2)[:, None]  # (c, 6k) row weights
    AtW = A.transpose(0, 2, 1) * w[:, None, :]
    q = np.linalg.solve(np.matmul(AtW, A), np.matmul(AtW, U))
    return U - np.matmul(A, q)


def _element_terms(mesh, X: NDArray, materials: Materials):
    """Yields ``(dofs (c, d), Ke (c, d, d), D (c, d, m))`` by chunks of cells: the solid cells
    (``d = 3k``, their nodes' translations), then the shells and beams (``d = 6k``)."""
    m = X.shape[1]
    dmap = mesh.dof_map
    Xn = X[dmap.translations()]  # (n, 3, m)
    for t, sl, ke in element_stiffness(mesh, materials, max(_ENTRIES // max(m, 1), 1)):
        conn = mesh.cells[t][sl]
        c, k = conn.shape
        dofs = dmap.translations(conn.ravel()).reshape(c, 3 * k)
        yield dofs, ke.reshape(c, 3 * k, 3 * k), _deformations(mesh.points[conn], Xn[conn])
    if dmap.has_rotations:
        for conn, dofs, ke in element_blocks(mesh, "K", materials):
            yield dofs, ke, _deformations6(mesh.points[conn], X[dofs])


def _spring_stiffness(mesh) -> sp.csr_array | None:
    """The springs' stiffness on ``mesh.dof_map`` (None without springs)."""
    if getattr(mesh, "springs", None) is None:
        return None
    dofs, mats = spring_matrices(mesh.springs, mesh.dof_map)
    r, c = np.broadcast_arrays(dofs[:, :, None], dofs[:, None, :])
    keep = (r >= 0) & (c >= 0)
    return sp.csr_array(sp.coo_array((mats[keep], (r[keep], c[keep])), shape=(mesh.n_dofs,) * 2).tocsr())


def stiffness_energy(mesh, X, materials: Materials = None) -> NDArray[np.float64]:
    """``X^T K X (m, m)`` of the mesh's stiffness ``K`` for the displacement fields ``X (n_dofs, m)``
    on ``mesh.dof_map``, summed over the elements on their deformations (module docstring)."""
    X = np.asarray(X, dtype=float).reshape(mesh.n_dofs, -1)
    m = X.shape[1]
    out = np.zeros((m, m))
    with blas_threads(1):  # many small products: one OpenBLAS thread is 5x faster (module docstring)
        for _, Ke, D in _element_terms(mesh, X, materials):
            out += D.reshape(-1, m).T @ np.matmul(Ke, D).reshape(-1, m)
    ks = _spring_stiffness(mesh)
    if ks is not None:
        out += X.T @ (ks @ X)
    return 0.5 * (out + out.T)


def stiffness_product(mesh, X, materials: Materials = None) -> NDArray[np.float64]:
    """``K X (n_dofs, m)`` of the mesh's stiffness, element by element on the deformations."""
    X = np.asarray(X, dtype=float).reshape(mesh.n_dofs, -1)
    m = X.shape[1]
    out = np.zeros((mesh.n_dofs, m))
    with blas_threads(1):
        for dofs, Ke, D in _element_terms(mesh, X, materials):
            F = np.matmul(Ke, D).reshape(-1, m)
            for c in range(m):
                out[:, c] += np.bincount(dofs.reshape(-1), weights=F[:, c], minlength=out.shape[0])
    ks = _spring_stiffness(mesh)
    return out if ks is None else out + ks @ X


def _energy_and_product(mesh, X: NDArray, v: NDArray, materials: Materials = None):
    """:func:`stiffness_energy` of ``X (n_dofs, m)`` and :func:`stiffness_product` of ``v (n_dofs, 1)``
    in one pass over the elements (their stiffness is computed once: half the time of two calls)."""
    m = X.shape[1]
    Xa = np.hstack([X, v])
    out = np.zeros((m, m))
    kv = np.zeros(mesh.n_dofs)
    with blas_threads(1):
        for dofs, Ke, D in _element_terms(mesh, Xa, materials):
            F = np.matmul(Ke, D).reshape(-1, m + 1)
            Dm = D.reshape(-1, m + 1)
            out += Dm[:, :m].T @ F[:, :m]
            kv += np.bincount(dofs.reshape(-1), weights=F[:, m], minlength=kv.size)
    ks = _spring_stiffness(mesh)
    if ks is not None:
        out += X.T @ (ks @ X)
        kv += ks @ v[:, 0]
    return 0.5 * (out + out.T), kv[:, None]


def reduced_stiffness(K, mesh, X) -> NDArray[np.float64]:
    """``X^T K X (m, m)`` for fields ``X (n_dofs, m)``: :func:`stiffness_energy` when the
    mesh (its cells and materials) assembles to ``K`` (their products with a random vector agree to
    :data:`SAME_MODEL_TOL`), else the plain product with ``K`` (DEBUG line)."""
    X = np.asarray(X, dtype=float)
    cells = getattr(mesh, "cells", None) or getattr(mesh, "shells", None) or getattr(mesh, "beams", None)
    if cells and getattr(mesh, "n_dofs", -1) == K.shape[0]:
        try:
            v = np.random.default_rng(1).standard_normal((K.shape[0], 1))
            Kv = np.asarray(K @ v)
            energy, Kv_e = _energy_and_product(mesh, X.reshape(K.shape[0], -1), v)
            diff = np.linalg.norm(Kv_e - Kv) / max(np.linalg.norm(Kv), 1e-300)
        except Exception as exc:  # no materials, a cell type without stiffness: not the mesh's K
            logger.debug("reduced_stiffness: the mesh's element stiffness is not available (%s)", exc)
            diff = np.inf
        if diff <= SAME_MODEL_TOL:
            return energy
        logger.debug("reduced_stiffness: K is not the mesh's stiffness (relative difference %.2e): X^T K X", diff)
    Kr = X.T @ (K @ X)
    return 0.5 * (Kr + Kr.T)
