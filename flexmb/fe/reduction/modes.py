"""Normal modes of a linear-elastic FE model: free-free (rigid-body modes separated) and clamped.

Also the value types of a reduced basis (:class:`ModalBasis`, :class:`InterfaceFrame`), the exact
rigid-body displacement fields, and modal damping. Conventions: see :mod:`flexmb.fe.reduction`
(node-major DOFs, shapes (3 n_nodes, nm), body frame = mesh coordinates, SI units, omega2 in
(rad/s)^2).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.reduction.clusters import CLUSTER_EXTRA, aligned, truncated
from flexmb.fe.spd_solve import blas_threads, factorize_spd

__all__ = [
    "InterfaceFrame",
    "ModalBasis",
    "clamped_modes",
    "free_free_modes",
    "modal_damping",
    "rigid_body_modes",
]

logger = logging.getLogger(__name__)

#: default shift of ``free_free_modes``: sigma = -AUTO_SHIFT * lambda_est, with lambda_est >= lambda_1
#: the Rayleigh-Ritz estimate of the first elastic eigenvalue on linear and quadratic fields
AUTO_SHIFT = 1e-2
#: without node coordinates: sigma = -AUTO_SHIFT_TRACE * trace(K) / trace(M) (that ratio is of the
#: order of the mesh's highest eigenvalues, so this lands far below the first elastic one)
AUTO_SHIFT_TRACE = 1e-10
#: a shift larger than this fraction of the first elastic eigenvalue is replaced (refactorization)
MAX_SHIFT_FRACTION = 0.1
#: zero-frequency modes must lie at least this many decades below the first elastic eigenvalue
ZERO_GAP_DECADES = 3.0


# ============================================================================================
# small helpers
# ============================================================================================


def cross_matrices(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Batched cross-product matrices: (..., 3) -> (..., 3, 3) with skew(a) @ b = a x b."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def rigid_body_modes(points: ArrayLike, origin: ArrayLike | None = None) -> NDArray[np.float64]:
    """Exact rigid-body displacement fields of a node cloud.

    Parameters
    ----------
    points : array_like, shape (n_nodes, 3)
        Node coordinates (m).
    origin : array_like, shape (3,), optional
        Point the rotations are about (m); default the coordinate origin.

    Returns
    -------
    R : ndarray, shape (3 n_nodes, 6)
        Node-major columns: unit translations along x, y, z (m/m), then unit small rotations about
        x, y, z through ``origin`` (m/rad): ``u = e_k x (x - origin)``.
    """
    x = np.asarray(points, dtype=float)
    r = x - (np.zeros(3) if origin is None else np.asarray(origin, dtype=float))
    n = x.shape[0]
    out = np.zeros((n, 3, 6))
    out[:, :, :3] = np.eye(3)
    out[:, :, 3:] = -cross_matrices(r)  # e_k x r = -skew(r) e_k
    return out.reshape(3 * n, 6)



@dataclass(frozen=True, eq=False)
class InterfaceFrame:
    """An interface frame of a reduced basis.

    Attributes
    ----------
    name : str
    nodes : ndarray of int, shape (m,)
        0-based node indices of the set.
    position : ndarray, shape (3,)
        Frame point in the body frame (m).
    kind : str
        "rigid" or "average".
    weights : ndarray, shape (m,)
        Nodal weights of the least-squares average (1 for rigid frames).
    modal_map : ndarray, shape (6, nm)
        Frame translation (m) and small rotation (rad) per unit modal coordinate:
        ``q = modal_map @ eta``. Zero for the reference interface.
    is_reference : bool
        True for the interface the floating frame is attached to: its motion is the body frame's
        rigid motion (the identity map), transported to ``position``.
    """

    name: str
    nodes: NDArray[np.int64]
    position: NDArray[np.float64]
    kind: str
    weights: NDArray[np.float64]
    modal_map: NDArray[np.float64]
    is_reference: bool = False


@dataclass(frozen=True, eq=False)
class ModalBasis:
    """Mass-normalized shape functions of a reduced FE model.

    Attributes
    ----------
    kind : str
        "free-free", "clamped" or "craig-bampton".
    shapes : ndarray, shape (n_dofs, nm)
        Shape functions, node-major (3 DOFs per node, or ``dof_map``); ``shapes.T @ M @ shapes = I`` and
        ``shapes.T @ K @ shapes = diag(omega2)``.
    omega2 : ndarray, shape (nm,)
        Eigenvalues (rad/s)^2 of the reduced model, ascending.
    rigid_modes : ndarray, shape (n_dofs, nr)
        Separated zero-frequency modes, M-orthonormal and M-orthogonal to ``shapes``: the six exact
        rigid-body motions first, then any extra zero modes (free-free, or Craig-Bampton with
        ``reference=None``); empty otherwise.
    interfaces : tuple of InterfaceFrame
    reference : str or None
        Name of the interface the floating frame is attached to.
    n_extra_zero_modes : int
        Zero-frequency modes beyond the six rigid-body ones (disconnected parts, mechanisms).
    settings : dict
        How the basis was made (JSON-serializable): counts, shift, backend, ...
    dof_map : DofMap or None
        The DOF layout of ``shapes`` for a model with rotational DOFs (shells, beams:
        :attr:`flexmb.fe.mesh.FEMesh.dof_map`); None: 3 DOFs per node.
    """

    kind: str
    shapes: NDArray[np.float64]
    omega2: NDArray[np.float64]
    rigid_modes: NDArray[np.float64]
    interfaces: tuple[InterfaceFrame, ...] = ()
    reference: str | None = None
    n_extra_zero_modes: int = 0
    settings: dict = field(default_factory=dict)
    dof_map: Any = None

    @property
    def n_modes(self) -> int:
        """Number of shape functions, nm."""
        return int(self.shapes.shape[1])

    @property
    def frequencies(self) -> NDArray[np.float64]:
        """Natural frequencies (Hz), shape (nm,)."""
        return np.sqrt(np.maximum(self.omega2, 0.0)) / (2.0 * np.pi)

    def nodal_shapes(self) -> NDArray[np.float64]:
        """Nodal translations of the shapes, (n_nodes, 3, nm) (m per unit modal coordinate)."""
        if self.dof_map is not None:
            return self.shapes[self.dof_map.translations()]
        return self.shapes.reshape(-1, 3, self.n_modes)

    def nodal_rotations(self) -> NDArray[np.float64] | None:
        """Nodal rotations of the shapes, (n_nodes, 3, nm) (rad per unit modal coordinate), zero at
        nodes without rotational DOFs; None for a model without them."""
        if self.dof_map is None or not self.dof_map.has_rotations:
            return None
        out = np.zeros((self.dof_map.n_nodes, 3, self.n_modes))
        rot = self.dof_map.rotational_nodes
        out[rot] = self.shapes[self.dof_map.rotations(rot)]
        return out

    def interface(self, name: str) -> InterfaceFrame:
        """The interface frame called ``name``."""
        for f in self.interfaces:
            if f.name == name:
                return f
        raise ModelError(f"no interface {name!r}; the basis has {[f.name for f in self.interfaces]}.")


# ============================================================================================
# checks
# ============================================================================================


def check_km(K, M, n_dofs: int | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """K and M as CSR, square, of ``n_dofs`` rows (when given), with a positive mass diagonal."""
    K = sp.csr_matrix(K, dtype=float)
    M = sp.csr_matrix(M, dtype=float)
    n = K.shape[0]
    if K.shape != (n, n) or M.shape != (n, n):
        raise ModelError(f"K {K.shape} and M {M.shape} must be square and of the same size.")
    if n_dofs is not None and n != n_dofs:
        raise ModelError(
            f"K has {n} rows but the mesh has {n_dofs} DOFs (3 per node, 6 at the nodes of shells and beams). For a "
            "model with shells or beams pass dof_map=mesh.dof_map (K and M from assemble_stiffness and "
            "assemble_mass of the same mesh).")
    dm = M.diagonal()
    if np.any(dm <= 0.0):
        bad = np.flatnonzero(dm <= 0.0)
        raise ModelError(
            f"M has {bad.size} zero diagonal entries (DOFs {bad[:6].tolist()}...): nodes without solid cells. "
            "Remove them first with mesh.compacted()."
        )
    return K, M


def _trace_ratio(K, M) -> float:
    return float(K.diagonal().sum() / M.diagonal().sum())


def m_orthonormalize(V: NDArray[np.float64], M, *, drop_tol: float = 1e-10) -> NDArray[np.float64]:
    """M-orthonormal basis of span(V) (columns), dropping numerically dependent directions."""
    if V.shape[1] == 0:
        return V
    G = V.T @ (M @ V)
    G = 0.5 * (G + G.T)
    d, E = np.linalg.eigh(G)
    keep = d > drop_tol * d.max()
    E, d = E[:, keep], d[keep]
    return V @ (E / np.sqrt(d))


def _same(X):
    return X


def _deterministic_start(n: int) -> NDArray[np.float64]:
    # a fixed start vector makes runs reproducible (same K, M -> same modes bit for bit)
    return np.random.default_rng(20240917).standard_normal(n)


def eigsh_shift_invert(op_solve, M, n: int, k: int, sigma: float, what: str):
    """k eigenpairs of K x = lam M x nearest ``sigma``, with ``op_solve(b) = (K - sigma M)^{-1} b``."""
    if k >= n - 1:
        raise ModelError(f"{what}: asked for {k} modes but the model has only {n} DOFs; ask for fewer.")
    op = spla.LinearOperator((n, n), matvec=op_solve, dtype=float)
    ncv = min(n - 1, max(2 * k + 1, k + 20))
    try:
        with blas_threads(1):  # ARPACK's small BLAS-2 calls: threads cost more than they give
            vals, vecs = spla.eigsh(
                op, k=k, M=M, sigma=sigma, which="LM", OPinv=op, v0=_deterministic_start(n), ncv=ncv,
                maxiter=max(1000, 10 * n // max(ncv, 1)),
            )
    except spla.ArpackNoConvergence as exc:  # pragma: no cover - rare with shift-invert
        raise ModelError(
            f"{what}: ARPACK did not converge ({len(exc.eigenvalues)} of {k} modes); try fewer modes or "
            "another `shift`."
        ) from exc
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def _rayleigh_ritz(V: NDArray[np.float64], K, M) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Re-diagonalize a basis: returns (omega2 ascending, V Q) with (VQ)^T M (VQ) = I, K diagonal."""
    W = m_orthonormalize(V, M)
    Kr = W.T @ (K @ W)
    vals, Q = np.linalg.eigh(0.5 * (Kr + Kr.T))
    return vals, W @ Q


# ============================================================================================
# free-free and clamped modes
# ============================================================================================


def free_free_modes(
    K,
    M,
    n_modes: int,
    *,
    shift: float | None = None,
    points: ArrayLike | None = None,
    backend: str = "auto",
    dof_map=None,
) -> ModalBasis:
    """Free-free normal modes with the rigid-body modes separated.

    Shift-invert Lanczos (ARPACK ``eigsh`` in mode 3) with ``OPinv = (K - sigma M)^{-1}`` from one
    CHOLMOD factorization, ``sigma < 0``. The ``n_modes + 6`` lowest eigenpairs are computed; the
    zero-frequency ones are identified by the gap (at least ``ZERO_GAP_DECADES`` decades below the
    first elastic eigenvalue) and, when ``points`` is given, checked by projecting the six exact
    rigid-body motions on them. They are separated; extra zero modes (disconnected parts,
    mechanisms) are reported in the log and in ``n_extra_zero_modes``. The elastic modes are made
    M-orthogonal to all zero modes (i.e. they satisfy the linearized mean-axis conditions
    ``int rho phi dV = 0``, ``int rho x0 x phi dV = 0``) and re-diagonalized.

    Parameters
    ----------
    K, M : sparse matrix, shape (n, n)
        Stiffness (N/m) and consistent mass (kg) of an unconstrained model.
    n_modes : int
        Number of elastic modes wanted, nm.
    shift : float, optional
        sigma < 0 ((rad/s)^2). Default ``-AUTO_SHIFT * lambda_est`` (1 %), where ``lambda_est`` is an
        upper bound of the first elastic eigenvalue from a Rayleigh-Ritz step on the linear and
        quadratic displacement fields (M-orthogonal to the rigid motions); without ``points``,
        ``-AUTO_SHIFT_TRACE * trace(K)/trace(M)``. If the shift turns out larger than
        ``MAX_SHIFT_FRACTION`` of the computed first elastic eigenvalue, the run is repeated with
        ``sigma = -1e-3 * lambda_1``.
    points : array_like, shape (n_nodes, 3), optional
        Node coordinates (m), for the exact rigid-body motions (strongly recommended).
    backend : str
        Factorization backend, see :func:`flexmb.fe.spd_solve.factorize_spd`.
    dof_map : DofMap, optional
        DOF layout of K and M when nodes carry rotations (``mesh.dof_map`` of a model with shells or
        beams); with ``points``, the rigid motions then turn the rotational DOFs too
        (:meth:`~flexmb.fe.elements.dofs.DofMap.rigid_body_modes`). Default: 3 DOFs per node.

    Returns
    -------
    ModalBasis
        ``kind="free-free"``; ``rigid_modes`` (n, 6 + extra).

    Raises
    ------
    ModelError
        If fewer than six zero modes are found (K is constrained) or the zero modes do not contain
        the rigid-body motions of ``points``.
    """
    dof_map = rotational_dof_map(dof_map)
    n_expected = dof_map.n_dofs if dof_map is not None else None if points is None else 3 * len(np.asarray(points))
    K, M = check_km(K, M, n_expected)
    n = K.shape[0]
    if n_modes < 0:
        raise ModelError(f"free_free_modes: `n_modes` = {n_modes} must be >= 0.")
    if shift is not None and not shift < 0:
        raise ModelError(f"free_free_modes: `shift` = {shift} must be < 0 (K is singular at 0).")
    if points is None:
        R = None
    else:
        R = rigid_body_modes(points) if dof_map is None else dof_map.rigid_body_modes(points)
    if shift is not None:
        sigma = float(shift)
    elif points is not None:
        sigma = -AUTO_SHIFT * _estimate_first_eigenvalue(K, M, np.asarray(points, dtype=float), R, dof_map)
    else:
        sigma = -AUTO_SHIFT_TRACE * _trace_ratio(K, M)
    n_zero_guess = 6
    factor, factor_sigma = None, None
    for attempt in range(6):
        if factor_sigma != sigma:
            factor = factorize_spd(K - sigma * M, backend=backend, what="K - sigma*M")
            factor_sigma = sigma
        k = min(n - 2, max(n_modes, 1) + n_zero_guess + CLUSTER_EXTRA)  # extra: a cluster cut at n_modes
        vals, vecs = eigsh_shift_invert(factor.solve, M, n, k, sigma, "free_free_modes")
        by_size = np.argsort(np.abs(vals), kind="stable")
        vals, vecs = vals[by_size], vecs[:, by_size]
        n_zero = _count_zero_modes(vals)
        if n_zero == 0 and np.abs(vals).max() < 1e-12 * _trace_ratio(K, M):
            n_zero = k  # no gap yet: every computed eigenvalue is round-off around zero
        lam1 = vals[n_zero] if n_zero < len(vals) else np.nan
        if attempt < 5 and k - n_zero < max(n_modes, 1) and k < n - 2:
            n_zero_guess = n_zero + 6  # more zero modes than room for them: ask for more
            continue
        if shift is None and lam1 > 0 and -sigma > MAX_SHIFT_FRACTION * lam1 and attempt < 5:
            logger.info("free_free_modes: shift %.3g too large for lambda_1 = %.3g; refactorizing", sigma, lam1)
            sigma = -1e-3 * lam1
            continue
        break
    if n_zero < 6:
        raise ModelError(
            f"free_free_modes: found {n_zero} zero-frequency modes, expected at least 6 (lowest eigenvalues "
            f"{np.array2string(vals[:8], precision=3)} (rad/s)^2): K is constrained. Use clamped_modes() or "
            "craig_bampton() for supported structures."
        )
    Z = vecs[:, :n_zero]
    if R is not None:
        # each exact rigid motion must lie in the span of the computed zero modes
        MR = M @ R
        coef = Z.T @ MR  # Z is M-orthonormal
        resid = R - Z @ coef
        rel = np.sqrt(np.einsum("ij,ij->j", resid, M @ resid) / np.einsum("ij,ij->j", R, MR))
        if rel.max() > 1e-4:
            raise ModelError(
                f"free_free_modes: the zero-frequency modes do not contain the rigid-body motions "
                f"(relative residual {rel.max():.2e}); check that K and M belong to `points`."
            )
        # keep the exact rigid motions first (M-orthonormalized), then the extra zero modes
        Rm = m_orthonormalize(R, M)
        extra = Z - Rm @ (Rm.T @ (M @ Z))
        extra = m_orthonormalize(extra, M, drop_tol=1e-8)[:, : n_zero - 6]
        zero_basis = np.hstack([Rm, extra])
    else:
        zero_basis = Z
    n_extra = n_zero - 6
    if n_extra:
        logger.warning(
            "free_free_modes: %d zero-frequency modes beyond the six rigid-body modes: the mesh has "
            "disconnected parts or mechanisms (see flexmb.fe.mesh.connected_components); they are kept "
            "out of the elastic basis.", n_extra,
        )
    _, E = truncated(vals[n_zero:], vecs[:, n_zero:], n_modes, _same, M, "free_free_modes")
    E = E - zero_basis @ (zero_basis.T @ (M @ E))
    omega2, E = _rayleigh_ritz(E, K, M)
    E, omega2 = aligned(E, omega2, _same, M)  # degenerate clusters rotated to the axes
    fix_signs(E)
    logger.info(
        "free_free_modes: %d elastic modes, %.4g..%.4g Hz (sigma = %.3g, %s)", E.shape[1],
        *(np.sqrt(max(omega2[0], 0)) / 2 / np.pi, np.sqrt(max(omega2[-1], 0)) / 2 / np.pi) if len(omega2) else (0, 0),
        sigma, factor.backend,
    )
    return ModalBasis(
        kind="free-free",
        shapes=E,
        omega2=omega2,
        rigid_modes=zero_basis,
        n_extra_zero_modes=n_extra,
        settings=dict(n_modes=int(n_modes), shift=float(sigma), backend=factor.backend,
                      zero_eigenvalues=[float(v) for v in vals[:n_zero]]),
        dof_map=dof_map,
    )


def rotational_dof_map(dof_map):
    """``dof_map`` if it gives some node rotations, else None (the 3-DOFs-per-node layout)."""
    return dof_map if dof_map is not None and dof_map.has_rotations else None


def _estimate_first_eigenvalue(K, M, points: NDArray[np.float64], R: NDArray[np.float64], dof_map=None) -> float:
    """Upper bound of the first elastic eigenvalue (Rayleigh-Ritz on 18 quadratic fields).

    Fields: each displacement component equal to each of the 6 quadratic monomials of the centred,
    scaled coordinates, made M-orthogonal to the rigid motions ``R`` (n, 6). They contain uniform
    bending and twisting of beams and plates (with the matching rotation of the sections), so the
    bound is within a factor of a few of lambda_1 (1.1 for the FV12 plate, 2 for a 150:1 bar, 7 for
    a connecting rod); it costs 2 x 18 sparse products. At nodes with rotations (``dof_map``) the
    fields turn the sections by their infinitesimal rotation ``curl(u) / 2`` (for ``u = m(x) e_i``:
    ``grad(m) x e_i / 2``), so a bent beam or plate keeps its sections normal to the bent axis.
    """
    scale = max(float(np.abs(points - points.mean(axis=0)).max()), 1e-300)
    x = (points - points.mean(axis=0)) / scale
    pairs = [(j, k) for j in range(3) for k in range(j, 3)]
    mono = [x[:, j] * x[:, k] for j, k in pairs]
    n = len(points)
    T = np.zeros((n, 3, 3 * len(mono)))
    for c, (i, m) in enumerate((i, m) for i in range(3) for m in mono):  # 18 fields
        T[:, i, c] = m
    T = T.reshape(3 * n, -1)
    if dof_map is not None:
        T = dof_map.embed_translations(T)
        rot = dof_map.rotational_nodes
        xr = x[rot]
        for c, (i, (j, k)) in enumerate((i, p) for i in range(3) for p in pairs):
            grad = np.zeros((rot.size, 3))  # grad(x_j x_k) in scaled coordinates, per metre: / scale
            grad[:, j] += xr[:, k]
            grad[:, k] += xr[:, j]
            T[dof_map.rotations(rot), c] = 0.5 * np.cross(grad, np.eye(3)[i]) / scale
    MR = M @ R
    T = T - R @ np.linalg.solve(R.T @ MR, MR.T @ T)
    W = m_orthonormalize(T, M, drop_tol=1e-8)
    vals = np.linalg.eigvalsh(W.T @ (K @ W))
    pos = vals[vals > 1e-14 * vals.max()]  # rigid motions are projected out: only round-off is below
    return float(pos[0]) if pos.size else _trace_ratio(K, M)


def _count_zero_modes(vals: NDArray[np.float64]) -> int:
    """Number of zero eigenvalues: those below the largest gap (>= ZERO_GAP_DECADES) of sorted |vals|.

    ``vals`` must be sorted by magnitude. Computed zero eigenvalues are round-off of either sign and
    may spread over several decades; the gap to the first elastic eigenvalue is much wider.
    """
    a = np.abs(vals)
    if a.size < 2:
        return 0
    la = np.log10(np.maximum(a, a.max() * 1e-300 + 1e-300))
    jumps = np.diff(la)
    i = int(np.argmax(jumps))
    return i + 1 if jumps[i] >= ZERO_GAP_DECADES else 0


def fix_signs(E: NDArray[np.float64]) -> None:
    """Deterministic sign: the largest-magnitude entry of each column is positive (in place).  Entries
    within 1e-6 of the largest tie (a symmetric mesh has mirror pairs of equal magnitude and opposite
    sign, told apart only by round-off) and the first of them decides."""
    if E.size == 0:
        return
    A = np.abs(E)
    idx = np.argmax(A >= (1.0 - 1e-6) * A.max(axis=0), axis=0)
    s = np.sign(E[idx, np.arange(E.shape[1])])
    s[s == 0] = 1.0
    E *= s


def clamped_modes(K, M, fixed_nodes: ArrayLike, n_modes: int, *, backend: str = "auto", dof_map=None) -> ModalBasis:
    """Fixed-base normal modes: all DOFs of ``fixed_nodes`` clamped (translations, and rotations where
    the nodes have them).

    Parameters
    ----------
    K, M : sparse matrix, shape (n_dofs, n_dofs)
    fixed_nodes : array_like of int
        0-based indices of the clamped nodes.
    n_modes : int
    dof_map : DofMap, optional
        DOF layout (``mesh.dof_map``) of a model with shells or beams; default 3 DOFs per node.

    Returns
    -------
    ModalBasis
        ``kind="clamped"``; shapes are zero at the clamped DOFs.
    """
    dof_map = rotational_dof_map(dof_map)
    K, M = check_km(K, M, None if dof_map is None else dof_map.n_dofs)
    n = K.shape[0]
    fixed = np.unique(np.asarray(fixed_nodes, dtype=np.int64).reshape(-1))
    if fixed.size == 0:
        raise ModelError("clamped_modes: `fixed_nodes` is empty; pass the node set to clamp.")
    dofs = (3 * fixed[:, None] + np.arange(3)).ravel() if dof_map is None else dof_map.dofs(fixed)
    free = np.setdiff1d(np.arange(n), dofs)
    Kf = K[free][:, free]
    Mf = M[free][:, free]
    factor = factorize_spd(Kf, backend=backend, what="clamped K")
    def nodal(X):
        out = np.zeros((n, X.shape[1]))
        out[free] = X
        return out

    k = min(n_modes + CLUSTER_EXTRA, free.size - 2)  # extra: a cluster cut at n_modes
    vals, vecs = eigsh_shift_invert(factor.solve, Mf, free.size, max(k, n_modes), 0.0, "clamped_modes")
    vals, vecs = truncated(vals, vecs, n_modes, nodal, M, "clamped_modes")
    omega2, vecs = _rayleigh_ritz(vecs, Kf, Mf)
    vecs, omega2 = aligned(vecs, omega2, nodal, M)  # degenerate clusters rotated to the axes
    fix_signs(vecs)
    shapes = nodal(vecs)
    return ModalBasis(
        kind="clamped", shapes=shapes, omega2=omega2, rigid_modes=np.zeros((n, 0)),
        settings=dict(n_modes=int(n_modes), fixed_nodes=[int(v) for v in fixed], backend=factor.backend),
        dof_map=dof_map,
    )



# ============================================================================================
# damping
# ============================================================================================


def modal_damping(omega2: ArrayLike, *, ratio: float | ArrayLike | None = None,
                  rayleigh: tuple[float, float] | None = None) -> NDArray[np.float64]:
    """Modal damping matrix of mass-normalized modes.

    Parameters
    ----------
    omega2 : array_like, shape (nm,)
        Eigenvalues (rad/s)^2 (diagonal of the modal stiffness).
    ratio : float or array_like, shape (nm,), optional
        Critical damping ratio per mode: ``C = diag(2 zeta omega)`` (1/s).
    rayleigh : (alpha, beta), optional
        ``C = alpha I + beta diag(omega2)`` (alpha in 1/s, beta in s).

    Returns
    -------
    C : ndarray, shape (nm, nm)
        Diagonal modal damping (1/s per unit modal mass).
    """
    w2 = np.maximum(np.asarray(omega2, dtype=float).reshape(-1), 0.0)
    if (ratio is None) == (rayleigh is None):
        if ratio is None and rayleigh is None:
            return np.zeros((w2.size, w2.size))
        raise ModelError("modal_damping: give either `ratio` or `rayleigh`, not both.")
    if ratio is not None:
        z = np.broadcast_to(np.asarray(ratio, dtype=float), w2.shape) if np.ndim(ratio) == 0 else np.asarray(ratio, float)
        if z.shape != w2.shape or np.any(z < 0):
            raise ModelError(f"modal_damping: `ratio` must be >= 0, scalar or shape ({w2.size},); got {np.shape(ratio)}.")
        return np.diag(2.0 * z * np.sqrt(w2))
    alpha, beta = (float(v) for v in rayleigh)
    if alpha < 0 or beta < 0:
        raise ModelError(f"modal_damping: Rayleigh coefficients must be >= 0, got alpha={alpha}, beta={beta}.")
    return np.diag(alpha + beta * w2)
