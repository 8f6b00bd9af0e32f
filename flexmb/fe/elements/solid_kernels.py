"""Shared pieces of the solid-cell assembly: the node-pair sparsity pattern (cached per mesh),
chunking, the isotropic material constants, the isoparametric geometry of a chunk of cells and the
incompatible-mode hooks. Used by :mod:`.assembly` (matrices) and :mod:`.stresses` (stress recovery).

Implementation note: the element matrices of an isotropic solid are 3x3 blocks per node pair, so
assembly works on the node-pair pattern (k^2 keys per cell instead of 9 k^2), which is sorted once
per mesh (cached) and reused by K, M and K_sigma; each chunk of cells is accumulated into it with
``numpy.bincount``. Memory per chunk is bounded by ``CHUNK_ENTRIES``.
"""
from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.fe.elements.incompatible import condensation
from flexmb.fe.elements.solid import get_element, isoparametric_map
from flexmb.fe.mesh.femesh import FEMesh, Material

__all__ = ["CHUNK_ENTRIES", "Materials", "Pattern", "VOIGT", "chunks", "enhanced", "geometry", "internal_modes",
           "lame", "pattern", "stress_operator", "voigt_to_tensor"]

#: a Material, element set -> Material, or None (the mesh's own)
Materials = Material | Mapping[str, Material] | None

#: upper bound on (cells x k x k) node-pair entries handled per chunk (bounds temporary memory to
#: roughly CHUNK_ENTRIES * 9 * 8 bytes for the stiffness blocks)
CHUNK_ENTRIES = 1_500_000

VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


# ============================================================================================
# node-pair sparsity pattern
# ============================================================================================


@dataclass(frozen=True, eq=False)
class Pattern:
    """Sorted unique node pairs of a mesh and, per cell type, where each (cell, a, b) pair goes."""

    n_nodes: int
    indptr: NDArray[np.int64]  # (n_nodes + 1,)
    indices: NDArray[np.int32]  # (nnz_pairs,)
    slot: dict[str, NDArray[np.int64]]  # type -> (n_cells * k * k,) position in indices

    @property
    def nnz(self) -> int:
        return int(self.indices.size)

    def scalar(self, values: NDArray[np.float64]) -> sp.csr_array:
        """(nnz,) accumulated values -> (n_nodes, n_nodes) CSR."""
        n = self.n_nodes
        return sp.csr_array((values, self.indices, self.indptr), shape=(n, n))

    def isotropic(self, values: NDArray[np.float64]) -> sp.csr_array:
        """(nnz,) accumulated scalar values s -> kron(S, I3) as (3 n_nodes, 3 n_nodes) CSR, with
        only the diagonal entries of each 3x3 block stored."""
        n = self.n_nodes
        ptr = self.indptr
        length = np.diff(ptr)
        row_of = np.repeat(np.arange(n), length)
        pos = np.arange(self.nnz) - ptr[row_of]  # position within its scalar row
        indptr = np.empty(3 * n + 1, dtype=np.int64)
        indices = np.empty(3 * self.nnz, dtype=np.int32)
        data = np.empty(3 * self.nnz)
        for i in range(3):
            indptr[i : 3 * n : 3] = 3 * ptr[:-1] + i * length
            dest = 3 * ptr[row_of] + i * length[row_of] + pos
            indices[dest] = 3 * self.indices + i
            data[dest] = values
        indptr[-1] = 3 * self.nnz
        return sp.csr_array((data, indices, indptr), shape=(3 * n, 3 * n))

    def blocks(self, values: NDArray[np.float64]) -> sp.csr_array:
        """(nnz, 3, 3) accumulated blocks -> (3 n_nodes, 3 n_nodes) CSR."""
        n = self.n_nodes
        bsr = sp.bsr_array((values, self.indices, self.indptr), shape=(3 * n, 3 * n))
        return sp.csr_array(bsr.tocsr())


PATTERNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pattern(mesh: FEMesh) -> Pattern:
    cached = PATTERNS.get(mesh)
    if cached is not None:
        return cached
    n = mesh.n_nodes
    keys = []
    for conn in mesh.cells.values():
        k = conn.shape[1]
        rows = np.repeat(conn, k, axis=1)  # (m, k*k): a-major
        cols = np.tile(conn, (1, k))
        keys.append((rows.astype(np.int64) * n + cols).ravel())
    all_keys = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    uniq, inverse = np.unique(all_keys, return_inverse=True)
    inverse = inverse.ravel()
    rows_u = uniq // n
    indptr = np.searchsorted(rows_u, np.arange(n + 1)).astype(np.int64)
    slot = {}
    start = 0
    for t, conn in mesh.cells.items():
        size = conn.shape[0] * conn.shape[1] ** 2
        slot[t] = inverse[start : start + size]
        start += size
    pat = Pattern(n, indptr, (uniq % n).astype(np.int32), slot)
    PATTERNS[mesh] = pat
    return pat


def chunks(n_cells: int, k: int, factor: int = 1, entries: int | None = None):
    """Slices of at most ``entries`` (default :data:`CHUNK_ENTRIES`) / ``factor`` node pairs."""
    size = max(1, (CHUNK_ENTRIES if entries is None else entries) // (k * k * factor))
    for s in range(0, n_cells, size):
        yield slice(s, min(s + size, n_cells))


def lame(fields: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    e, nu = fields[:, 0], fields[:, 1]
    lam = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    mu = e / (2.0 * (1.0 + nu))
    return lam, mu


def geometry(mesh: FEMesh, t: str, sl: slice, xi: NDArray[np.float64]):
    conn = mesh.cells[t][sl]
    return isoparametric_map(t, mesh.points[conn], xi)


def enhanced(mesh: FEMesh, t: str) -> bool:
    """Whether cells of type ``t`` are assembled with condensed incompatible modes."""
    return get_element(t).incompatible_modes > 0 and mesh.formulation(t) == "incompatible"


def internal_modes(mesh: FEMesh, t: str, sl: slice, g, det_j, lam, mu, ue) -> NDArray[np.float64]:
    """Condensed incompatible-mode amplitudes alpha = -S u_e, shape (c, m, 3), of cells ``sl``."""
    elem = get_element(t)
    conn = mesh.cells[t][sl]
    _, rec = condensation(elem, mesh.points[conn], g, det_j, elem.stiffness_rule.weights, lam, mu)
    c = len(conn)
    return -np.matmul(rec, ue.reshape(c, -1, 1)).reshape(c, elem.incompatible_modes, 3)


def voigt_to_tensor(s: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.empty(s.shape[:-1] + (3, 3))
    for v, (i, j) in enumerate(VOIGT):
        out[..., i, j] = s[..., v]
        out[..., j, i] = s[..., v]
    return out


def stress_operator(g: NDArray[np.float64], lam: NDArray[np.float64], mu: NDArray[np.float64]) -> NDArray[np.float64]:
    """(c, p, 6, k, 3) Voigt stresses of an isotropic solid from the gradients g (c, p, k, 3)."""
    c, p, k, _ = g.shape
    op = np.zeros((c, p, 6, k, 3))
    lam_ = lam[:, None, None]
    mu_ = mu[:, None, None]
    for m in range(3):  # normal stresses: lam * div u + 2 mu du_m/dx_m
        for i in range(3):
            op[:, :, m, :, i] = lam_ * g[:, :, :, i]
        op[:, :, m, :, m] += 2.0 * mu_ * g[:, :, :, m]
    for v, (m, n) in enumerate(VOIGT[3:], start=3):  # shear: mu (du_m/dx_n + du_n/dx_m)
        op[:, :, v, :, m] += mu_ * g[:, :, :, n]
        op[:, :, v, :, n] += mu_ * g[:, :, :, m]
    return op
