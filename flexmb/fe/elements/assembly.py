"""Vectorized assembly of linear-elastic solid matrices and loads on an FEMesh.

Everything is computed per cell type for all cells at once (loops run only over cell types and
chunks of cells, never over single elements) and scattered with one sparse conversion.

DOF order (the layout of every displacement vector and matrix here): node-major,
``[ux0, uy0, uz0, ux1, uy1, uz1, ...]``, length ``3 * n_nodes``; node ``a`` owns DOFs
``3a, 3a+1, 3a+2``. Stress (Voigt) order: ``[xx, yy, zz, yz, xz, xy]``.

Units: whatever consistent system the mesh and materials use; for SI, K in N/m, M in kg, stresses
in Pa, forces in N.

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
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements.solid import get_element, isoparametric_map
from flexmb.fe.mesh.femesh import FEMesh, Material

__all__ = [
    "assemble_geometric_stiffness",
    "assemble_mass",
    "assemble_scalar_mass",
    "assemble_stiffness",
    "body_force_vector",
    "element_stresses",
    "nodal_stress_operator",
    "nodal_stresses",
    "quadrature_jacobians",
]

Materials = Material | Mapping[str, Material] | None

#: upper bound on (cells x k x k) node-pair entries handled per chunk (bounds temporary memory to
#: roughly CHUNK_ENTRIES * 9 * 8 bytes for the stiffness blocks)
CHUNK_ENTRIES = 1_500_000

_VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


# ============================================================================================
# node-pair sparsity pattern
# ============================================================================================


@dataclass(frozen=True, eq=False)
class _Pattern:
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


_PATTERNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pattern(mesh: FEMesh) -> _Pattern:
    cached = _PATTERNS.get(mesh)
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
    pat = _Pattern(n, indptr, (uniq % n).astype(np.int32), slot)
    _PATTERNS[mesh] = pat
    return pat


def _chunks(n_cells: int, k: int, entries: int = CHUNK_ENTRIES):
    size = max(1, entries // (k * k))
    for s in range(0, n_cells, size):
        yield slice(s, min(s + size, n_cells))


def _accumulate(slots: NDArray[np.int64], data: NDArray[np.float64], nnz: int, out: NDArray[np.float64]) -> None:
    """out[slots[i], ...] += data[i, ...] for all i (data: (m, ...) matching out's trailing shape)."""
    flat = data.reshape(len(slots), -1)
    out2 = out.reshape(nnz, -1)
    for c in range(flat.shape[1]):
        out2[:, c] += np.bincount(slots, weights=flat[:, c], minlength=nnz)


def _lame(fields: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    e, nu = fields[:, 0], fields[:, 1]
    lam = e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))
    mu = e / (2.0 * (1.0 + nu))
    return lam, mu


def _geometry(mesh: FEMesh, t: str, sl: slice, xi: NDArray[np.float64]):
    conn = mesh.cells[t][sl]
    return isoparametric_map(t, mesh.points[conn], xi)


# ============================================================================================
# matrices
# ============================================================================================


def assemble_stiffness(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Linear-elastic stiffness matrix of an isotropic solid.

    K = sum_e int_e B^T D B dV with each element's stiffness quadrature rule.

    Parameters
    ----------
    mesh : FEMesh
    materials : Material or dict of str to Material, optional
        Overrides ``mesh.materials`` (see :meth:`FEMesh.cell_materials`).

    Returns
    -------
    K : scipy.sparse.csr_array, shape (3 n_nodes, 3 n_nodes)
        Symmetric positive semi-definite (N/m in SI); six zero eigenvalues per connected part.
    """
    pat = _pattern(mesh)
    acc = np.zeros((pat.nnz, 3, 3))
    for t, sl, p, lam, mu in stiffness_integrals(mesh, materials):
        k = p.shape[1]
        s_ab = mu * (p[:, :, 0, :, 0] + p[:, :, 1, :, 1] + p[:, :, 2, :, 2])
        slots = pat.slot[t][sl.start * k * k : sl.stop * k * k]
        for i in range(3):
            for j in range(3):
                comp = lam * p[:, :, i, :, j] + mu * p[:, :, j, :, i]
                if i == j:
                    comp += s_ab
                acc[:, i, j] += np.bincount(slots, weights=comp.ravel(), minlength=pat.nnz)
    return pat.blocks(acc)


def stiffness_integrals(mesh: FEMesh, materials: Materials = None, chunk_entries: int = CHUNK_ENTRIES):
    """The stiffness integrals of the cells, by type and chunk: yields ``(t, sl, P, lam, mu)`` with ``sl``
    the slice of the cells of type ``t``, ``P (c, k, 3, k, 3)`` = int dNa/dx_i dNb/dx_j dV and ``lam``,
    ``mu`` ``(c, 1, 1)`` their Lame constants.  Block ``(a, b)`` of an element matrix is
    ``K_ij = lam P[a, i, b, j] + mu P[a, j, b, i] + mu delta_ij sum_d P[a, d, b, d]``; at most
    ``chunk_entries`` node pairs (c k^2) per chunk."""
    fields = mesh.cell_materials(materials)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.stiffness_rule
        lam_all, mu_all = _lame(fields[t])
        k = elem.n_nodes
        for sl in _chunks(len(conn), k, chunk_entries):
            det_j, g = _geometry(mesh, t, sl, rule.points)  # (c, q), (c, q, k, 3)
            c, q = det_j.shape
            wd = det_j * rule.weights
            a = (g * wd[:, :, None, None]).reshape(c, q, 3 * k)
            p = np.matmul(a.transpose(0, 2, 1), g.reshape(c, q, 3 * k)).reshape(c, k, 3, k, 3)
            yield t, sl, p, lam_all[sl, None, None], mu_all[sl, None, None]


def _scalar_mass_values(mesh: FEMesh, materials: Materials) -> tuple[_Pattern, NDArray[np.float64]]:
    fields = mesh.cell_materials(materials)
    pat = _pattern(mesh)
    acc = np.zeros(pat.nnz)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.mass_rule
        k = elem.n_nodes
        n_shape = elem.shape(rule.points)  # (q, k)
        nn = (n_shape[:, :, None] * n_shape[:, None, :]).reshape(len(rule.weights), k * k)
        for sl in _chunks(len(conn), k):
            det_j, _ = _geometry(mesh, t, sl, rule.points)
            wd = det_j * rule.weights * fields[t][sl, 2:3]
            me = wd @ nn  # (c, k*k)
            s0 = sl.start * k * k
            acc += np.bincount(pat.slot[t][s0 : s0 + me.size], weights=me.ravel(), minlength=pat.nnz)
    return pat, acc


def assemble_scalar_mass(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Scalar consistent mass matrix Ms_ab = int rho N_a N_b dV.

    Returns
    -------
    Ms : scipy.sparse.csr_array, shape (n_nodes, n_nodes)
        Symmetric positive (semi-)definite (kg); ``Ms.sum()`` is the total mass, and
        ``x^T Ms 1`` / ``x^T Ms x`` give first / second mass moments of the interpolated geometry.
        The vector mass matrix is ``kron(Ms, I3)``.
    """
    pat, acc = _scalar_mass_values(mesh, materials)
    return pat.scalar(acc)


def assemble_mass(mesh: FEMesh, materials: Materials = None) -> sp.csr_array:
    """Consistent mass matrix M = kron(Ms, I3) (see :func:`assemble_scalar_mass`).

    Returns
    -------
    M : scipy.sparse.csr_array, shape (3 n_nodes, 3 n_nodes)
        Symmetric positive definite on the used nodes (kg).
    """
    pat, acc = _scalar_mass_values(mesh, materials)
    return pat.isotropic(acc)


def assemble_geometric_stiffness(
    mesh: FEMesh, stresses: Mapping[str, NDArray[np.float64]]
) -> sp.csr_array:
    """Geometric (stress-stiffening) matrix of a given stress state.

    K_sigma = sum_e int_e G^T S G dV, S = blockdiag(sigma, sigma, sigma), i.e.
    K_sigma[3a+i, 3b+j] = delta_ij int dN_a/dx_k sigma_kl dN_b/dx_l dV.

    Parameters
    ----------
    mesh : FEMesh
    stresses : dict of str to ndarray, shape (n_cells, n_qp, 6)
        Cauchy stress (Pa) in Voigt order [xx, yy, zz, yz, xz, xy] at the stiffness quadrature
        points of each cell type, as returned by :func:`element_stresses`.

    Returns
    -------
    K_sigma : scipy.sparse.csr_array, shape (3 n_nodes, 3 n_nodes)
        Symmetric (N/m in SI); linear in ``stresses``.
    """
    pat = _pattern(mesh)
    acc = np.zeros(pat.nnz)
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        rule = elem.stiffness_rule
        k = elem.n_nodes
        if t not in stresses:
            raise ModelError(f"assemble_geometric_stiffness: `stresses` has no entry for cell type {t!r}.")
        s_all = np.asarray(stresses[t], dtype=float)
        if s_all.shape != (len(conn), rule.n_points, 6):
            raise ModelError(
                f"assemble_geometric_stiffness: stresses[{t!r}] has shape {s_all.shape}, expected "
                f"{(len(conn), rule.n_points, 6)} (cells, quadrature points, Voigt); use element_stresses()."
            )
        for sl in _chunks(len(conn), k):
            det_j, g = _geometry(mesh, t, sl, rule.points)
            c, q = det_j.shape
            s = _voigt_to_tensor(s_all[sl]) * (det_j * rule.weights)[:, :, None, None]
            gs = np.einsum("cqad,cqde->cqae", g, s)  # (c, q, k, 3)
            a = gs.transpose(0, 2, 1, 3).reshape(c, k, 3 * q)
            b = g.transpose(0, 2, 1, 3).reshape(c, k, 3 * q)
            ke = np.matmul(a, b.transpose(0, 2, 1))  # (c, k, k)
            s0 = sl.start * k * k
            acc += np.bincount(pat.slot[t][s0 : s0 + ke.size], weights=ke.ravel(), minlength=pat.nnz)
    return pat.isotropic(acc)


def _voigt_to_tensor(s: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.empty(s.shape[:-1] + (3, 3))
    for v, (i, j) in enumerate(_VOIGT):
        out[..., i, j] = s[..., v]
        out[..., j, i] = s[..., v]
    return out


# ============================================================================================
# stresses
# ============================================================================================


def _displacements(mesh: FEMesh, u: ArrayLike) -> NDArray[np.float64]:
    u = np.asarray(u, dtype=float)
    if u.shape == (mesh.n_dofs,):
        return u.reshape(mesh.n_nodes, 3)
    if u.shape == (mesh.n_nodes, 3):
        return u
    raise ModelError(
        f"displacement `u` has shape {u.shape}; expected ({mesh.n_dofs},) (node-major DOFs) or ({mesh.n_nodes}, 3)."
    )


def element_stresses(mesh: FEMesh, u: ArrayLike, materials: Materials = None) -> dict[str, NDArray[np.float64]]:
    """Cauchy stresses of a displacement field at the stiffness quadrature points.

    Parameters
    ----------
    mesh : FEMesh
    u : ndarray, shape (3 n_nodes,) or (n_nodes, 3)
        Displacements (m), node-major.
    materials : optional, see :func:`assemble_stiffness`

    Returns
    -------
    dict of str to ndarray, shape (n_cells, n_qp, 6)
        Stress (Pa), Voigt order [xx, yy, zz, yz, xz, xy], at ``ELEMENTS[type].stiffness_rule``
        points.
    """
    fields = mesh.cell_materials(materials)
    un = _displacements(mesh, u)
    out = {}
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        lam, mu = _lame(fields[t])
        res = np.empty((len(conn), elem.stiffness_rule.n_points, 6))
        for sl in _chunks(len(conn), elem.n_nodes):
            _, g = _geometry(mesh, t, sl, elem.stiffness_rule.points)
            h = np.einsum("cai,cqaj->cqij", un[conn[sl]], g)  # displacement gradient
            eps = 0.5 * (h + h.transpose(0, 1, 3, 2))
            tr = np.trace(eps, axis1=2, axis2=3)
            for v, (i, j) in enumerate(_VOIGT):
                res[sl, :, v] = 2.0 * mu[sl, None] * eps[:, :, i, j] + (lam[sl, None] * tr if i == j else 0.0)
        out[t] = res
    return out


def _local_stress_operators(mesh: FEMesh, t: str, fields, sl: slice | None = None) -> NDArray[np.float64]:
    """(c, k_pts, 6, k, 3) operators from element displacements to stresses at the element nodes."""
    elem = get_element(t)
    conn = mesh.cells[t]
    sl = slice(0, len(conn)) if sl is None else sl
    _, g = _geometry(mesh, t, sl, elem.ref_nodes)  # (c, p, k, 3)
    lam, mu = _lame(fields[t][sl])
    c, p, k, _ = g.shape
    op = np.zeros((c, p, 6, k, 3))
    lam_ = lam[:, None, None]
    mu_ = mu[:, None, None]
    for m in range(3):  # normal stresses: lam * div u + 2 mu du_m/dx_m
        for i in range(3):
            op[:, :, m, :, i] = lam_ * g[:, :, :, i]
        op[:, :, m, :, m] += 2.0 * mu_ * g[:, :, :, m]
    for v, (m, n) in enumerate(_VOIGT[3:], start=3):  # shear: mu (du_m/dx_n + du_n/dx_m)
        op[:, :, v, :, m] += mu_ * g[:, :, :, n]
        op[:, :, v, :, n] += mu_ * g[:, :, :, m]
    return op


def nodal_stress_operator(mesh: FEMesh, materials: Materials = None, *, form: str = "sparse"):
    """Operator from displacements to stresses at the nodes (for modal stress recovery).

    Stresses are evaluated directly at each element's nodes (shape-function gradients at the
    reference node coordinates; no extrapolation), then, for ``form="sparse"``, averaged with equal
    weights over the elements that share a node. Averages across material interfaces smear the
    (physically discontinuous) stress there.

    Parameters
    ----------
    mesh : FEMesh
    materials : optional, see :func:`assemble_stiffness`
    form : {"sparse", "local"}
        "sparse": one averaged matrix; "local": per-element operators (memory ~ 18 k^2 floats per
        cell: prefer :func:`nodal_stresses` for large meshes).

    Returns
    -------
    scipy.sparse.csr_array, shape (6 n_nodes, 3 n_nodes)
        For "sparse": rows ``6a + v`` (node a, Voigt component v), columns the node-major DOFs;
        rows of nodes without solid cells are zero.
    dict of str to ndarray, shape (n_cells, k, 6, 3 k)
        For "local": ``sigma_nodes[c] = op[c] @ u[dofs of cell c]`` with the cell's DOFs node-major.
    """
    fields = mesh.cell_materials(materials)
    if form == "local":
        return {
            t: _local_stress_operators(mesh, t, fields).reshape(len(c), c.shape[1], 6, 3 * c.shape[1])
            for t, c in mesh.cells.items()
        }
    if form != "sparse":
        raise ModelError(f"nodal_stress_operator: `form` = {form!r}; use 'sparse' or 'local'.")
    count = _node_cell_count(mesh)
    inv = np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)
    rows_all, cols_all, data_all = [], [], []
    for t, conn in mesh.cells.items():
        k = conn.shape[1]
        for sl in _chunks(len(conn), 3 * k):
            op = _local_stress_operators(mesh, t, fields, sl)  # (c, p, 6, k, 3)
            cc = conn[sl]
            rows = (6 * cc[:, :, None, None, None] + np.arange(6)[None, None, :, None, None])
            cols = (3 * cc[:, None, None, :, None] + np.arange(3)[None, None, None, None, :])
            rows, cols = np.broadcast_arrays(rows, cols)
            rows_all.append(rows.ravel())
            cols_all.append(cols.ravel())
            data_all.append((op * inv[cc][:, :, None, None, None]).ravel())
    n = mesh.n_nodes
    if not rows_all:
        return sp.csr_array((6 * n, 3 * n))
    return sp.csr_array(
        sp.coo_array(
            (np.concatenate(data_all), (np.concatenate(rows_all), np.concatenate(cols_all))), shape=(6 * n, 3 * n)
        ).tocsr()
    )


def _node_cell_count(mesh: FEMesh) -> NDArray[np.float64]:
    count = np.zeros(mesh.n_nodes)
    for conn in mesh.cells.values():
        count += np.bincount(conn.ravel(), minlength=mesh.n_nodes)
    return count


def nodal_stresses(mesh: FEMesh, u: ArrayLike, materials: Materials = None) -> NDArray[np.float64]:
    """Averaged nodal stresses of one or several displacement fields (memory-light).

    Same values as ``nodal_stress_operator(mesh) @ u``, without forming the operator.

    Parameters
    ----------
    u : ndarray, shape (3 n_nodes,) or (3 n_nodes, m)
        Node-major displacements (m), e.g. m mode shapes.

    Returns
    -------
    ndarray, shape (n_nodes, 6) or (n_nodes, 6, m)
        Stress (Pa), Voigt order [xx, yy, zz, yz, xz, xy].
    """
    fields = mesh.cell_materials(materials)
    u = np.asarray(u, dtype=float)
    single = u.ndim == 1
    if u.shape[0] != mesh.n_dofs:
        raise ModelError(f"nodal_stresses: `u` has {u.shape[0]} rows, expected {mesh.n_dofs} (3 per node).")
    um = u.reshape(mesh.n_nodes, 3, -1)
    m = um.shape[2]
    out = np.zeros((mesh.n_nodes * 6, m))
    for t, conn in mesh.cells.items():
        k = conn.shape[1]
        for sl in _chunks(len(conn), 3 * k):
            op = _local_stress_operators(mesh, t, fields, sl)  # (c, p, 6, k, 3)
            s = np.einsum("cpvai,caim->cpvm", op, um[conn[sl]])
            rows = (6 * conn[sl][:, :, None] + np.arange(6)).ravel()
            for j in range(m):
                out[:, j] += np.bincount(rows, weights=s[..., j].ravel(), minlength=6 * mesh.n_nodes)
    count = _node_cell_count(mesh)
    inv = np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)
    out = out.reshape(mesh.n_nodes, 6, m) * inv[:, None, None]
    return out[..., 0] if single else out


# ============================================================================================
# loads and geometry
# ============================================================================================


def body_force_vector(mesh: FEMesh, accel: ArrayLike, materials: Materials = None) -> NDArray[np.float64]:
    """Consistent nodal load of a body-force density rho * accel.

    f_a = int N_a rho b dV with b interpolated from nodal values, i.e. ``f = M @ b``.

    Parameters
    ----------
    accel : ndarray, shape (3,) or (n_nodes, 3)
        Acceleration field (m/s^2), e.g. gravity (0, 0, -9.81): uniform or per node.

    Returns
    -------
    f : ndarray, shape (3 n_nodes,)
        Node-major forces (N); the sum of its x components is the total body force in x.
    """
    a = np.asarray(accel, dtype=float)
    if a.shape == (3,):
        b = np.tile(a, mesh.n_nodes)
    elif a.shape == (mesh.n_nodes, 3):
        b = a.ravel()
    else:
        raise ModelError(f"body_force_vector: `accel` has shape {a.shape}; expected (3,) or ({mesh.n_nodes}, 3).")
    ms = assemble_scalar_mass(mesh, materials)
    return (ms @ b.reshape(mesh.n_nodes, 3)).ravel()


def quadrature_jacobians(mesh: FEMesh) -> dict[str, NDArray[np.float64]]:
    """Jacobian determinants at the stiffness quadrature points.

    Returns
    -------
    dict of str to ndarray, shape (n_cells, n_qp)
        det(dx/dxi) per cell type (m^3 per unit reference volume); <= 0 for inverted/degenerate cells.
    """
    out = {}
    for t, conn in mesh.cells.items():
        elem = get_element(t)
        det = np.empty((len(conn), elem.stiffness_rule.n_points))
        for sl in _chunks(len(conn), elem.n_nodes):
            det[sl], _ = _geometry(mesh, t, sl, elem.stiffness_rule.points)
        out[t] = det
    return out
