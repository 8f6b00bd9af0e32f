"""Modal reduction of a linear-elastic FE model into floating-frame shape functions.

Free-free normal modes (rigid-body modes identified and separated), clamped (fixed-base) modes, and
Craig-Bampton bases with six-DOF interface frames; the inertia invariants of the floating frame of
reference formulation, exact for the consistent mass; projected geometric stiffness (of the modes'
own stresses and of unit inertial preloads); modal stresses; modal damping.

Conventions
-----------
DOFs are node-major, ``[ux0, uy0, uz0, ux1, ...]`` (``3 n_nodes``), as in :mod:`flexmb.fe.assembly`.
A mode-shape matrix ``Phi`` has shape ``(3 n_nodes, nm)``; its nodal view ``(n_nodes, 3, nm)``.
The body (floating) frame is the mesh coordinate system: ``x0`` = ``mesh.points``; all moments are
about the mesh origin. Units are those of the model (SI: m, kg, s, N, Pa); frequencies in Hz,
eigenvalues ``omega2`` in (rad/s)^2.

Interface frames
----------------
An interface is a node set condensed to one frame with 6 DOFs ``q = (t, theta)`` at a point ``p``
(default the set's centroid): translation ``t`` (m) and small rotation ``theta`` (rad). A node at
``x`` moves with a rigid frame as ``u = t + theta x (x - p)``.

* ``kind="rigid"`` (RBE2-like): the nodes follow the frame rigidly. Implemented by a sparse
  transformation ``u = T x`` that replaces the set's nodal DOFs by the 6 frame DOFs; it stiffens
  the set.
* ``kind="average"`` (RBE3-like): the frame motion is the weighted least-squares fit of a rigid
  motion to the nodal displacements, ``q = A u_set`` with
  ``A = (sum_i w_i H_i^T H_i)^{-1} [w_1 H_1^T ... w_m H_m^T]``, ``H_i = [I, -skew(x_i - p)]``. It
  does not stiffen the set. Implemented with 6 Lagrange multipliers per interface (the stiffness
  stays sparse); a load ``F`` (force, moment about ``p``) on the frame acts on the nodes as
  ``A^T F``, the RBE3 force distribution.

Static problems with a singular stiffness and multipliers are solved by grounding a few DOFs with
springs (the frame DOFs of rigid interfaces, three far-apart nodes of averaging ones), factorizing
the grounded stiffness once with CHOLMOD, and removing the springs exactly through a small dense
bordered system (a Woodbury-type identity), so all results are exact to round-off.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.spd_solve import SPDFactor, blas_threads, factorize_spd

__all__ = [
    "PRELOAD_NAMES",
    "Interface",
    "InterfaceFrame",
    "InertiaInvariants",
    "ModalBasis",
    "attach_interfaces",
    "averaging_operator",
    "clamped_modes",
    "craig_bampton",
    "free_free_modes",
    "frame_static_response",
    "inertia_invariants",
    "inertial_load_vectors",
    "load_geometric_stiffness",
    "modal_damping",
    "modal_geometric_stiffness",
    "modal_stresses",
    "preload_geometric_stiffness",
    "rigid_body_modes",
    "static_preload_displacements",
    "von_mises",
]

logger = logging.getLogger(__name__)

#: Order of the 12 unit inertial preload cases of :func:`preload_geometric_stiffness`: the six
#: products of body-frame angular velocity components, the three angular accelerations and the
#: three linear accelerations of the frame origin (see that function for the scaling formula).
PRELOAD_NAMES: tuple[str, ...] = (
    "wx*wx", "wy*wy", "wz*wz", "wx*wy", "wy*wz", "wx*wz",
    "alpha_x", "alpha_y", "alpha_z",
    "a_x", "a_y", "a_z",
)

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


def _skew(v: NDArray[np.float64]) -> NDArray[np.float64]:
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
    out[:, :, 3:] = -_skew(r)  # e_k x r = -skew(r) e_k
    return out.reshape(3 * n, 6)


def _frame_rigid_map(r: NDArray[np.float64]) -> NDArray[np.float64]:
    """H_i = [I, -skew(r_i)], shape (m, 3, 6): nodal displacement of frame motion (t, theta)."""
    h = np.zeros(r.shape[:-1] + (3, 6))
    h[..., :, :3] = np.eye(3)
    h[..., :, 3:] = -_skew(r)
    return h


def averaging_operator(
    points: ArrayLike, position: ArrayLike, weights: ArrayLike | None = None, *, name: str = "interface"
) -> NDArray[np.float64]:
    """RBE3-like weighted least-squares rigid fit of nodal displacements.

    Parameters
    ----------
    points : array_like, shape (m, 3)
        Coordinates of the interface nodes (m).
    position : array_like, shape (3,)
        Frame point ``p`` (m).
    weights : array_like, shape (m,), optional
        Positive nodal weights (default 1).
    name : str
        For error messages.

    Returns
    -------
    A : ndarray, shape (6, 3 m)
        ``q = A @ u_set`` (node-major ``u_set``), ``q = (t, theta)`` (m, rad). Exact for rigid
        motions: ``A @ (H q) = q``.

    Raises
    ------
    ModelError
        If the nodes cannot define six frame motions (fewer than 3 nodes, or collinear).
    """
    x = np.asarray(points, dtype=float).reshape(-1, 3)
    m = x.shape[0]
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    if w.shape != (m,) or np.any(w <= 0) or not np.all(np.isfinite(w)):
        raise ModelError(f"interface {name!r}: `weights` must be {m} positive numbers, got shape {w.shape}.")
    r = x - np.asarray(position, dtype=float)
    h = _frame_rigid_map(r)  # (m, 3, 6)
    g = np.einsum("i,iab,iac->bc", w, h, h)
    # scale rotations by the set's radius so the conditioning check is unit-free
    rad = math.sqrt(float(np.average((r ** 2).sum(axis=1), weights=w))) or 1.0
    s = np.r_[np.ones(3), np.full(3, rad)]
    gs = g / np.outer(s, s)
    ev = np.linalg.eigvalsh(gs)
    if m < 3 or ev[0] <= 1e-10 * ev[-1]:
        raise ModelError(
            f"interface {name!r}: its {m} node(s) are collinear or too few to define a frame's six motions "
            "(rotation about their line is undetermined). Use a node set spanning a surface (at least 3 "
            "non-collinear nodes)."
        )
    a = np.linalg.solve(g, (w[:, None, None] * h).transpose(2, 0, 1).reshape(6, 3 * m))
    return a


# ============================================================================================
# values
# ============================================================================================


@dataclass(frozen=True)
class Interface:
    """Specification of an interface frame (input of :func:`craig_bampton`).

    Attributes
    ----------
    name : str
        Frame name; also the node set used when ``nodes`` is None.
    nodes : str or array_like of int, optional
        Node set name or 0-based node indices (default: the node set ``name``).
    position : array_like, shape (3,), optional
        Frame point ``p`` (m); default the (weighted) centroid of the nodes.
    kind : {"rigid", "average"}
        RBE2-like rigid coupling or RBE3-like averaging (see the module docstring).
    weights : array_like, shape (m,), optional
        Nodal weights of an averaging interface (default 1 each).
    """

    name: str
    nodes: Any = None
    position: Any = None
    kind: str = "rigid"
    weights: Any = None


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
    shapes : ndarray, shape (3 n_nodes, nm)
        Shape functions, node-major; ``shapes.T @ M @ shapes = I`` and
        ``shapes.T @ K @ shapes = diag(omega2)``.
    omega2 : ndarray, shape (nm,)
        Eigenvalues (rad/s)^2 of the reduced model, ascending.
    rigid_modes : ndarray, shape (3 n_nodes, nr)
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
    """

    kind: str
    shapes: NDArray[np.float64]
    omega2: NDArray[np.float64]
    rigid_modes: NDArray[np.float64]
    interfaces: tuple[InterfaceFrame, ...] = ()
    reference: str | None = None
    n_extra_zero_modes: int = 0
    settings: dict = field(default_factory=dict)

    @property
    def n_modes(self) -> int:
        """Number of shape functions, nm."""
        return int(self.shapes.shape[1])

    @property
    def frequencies(self) -> NDArray[np.float64]:
        """Natural frequencies (Hz), shape (nm,)."""
        return np.sqrt(np.maximum(self.omega2, 0.0)) / (2.0 * np.pi)

    def nodal_shapes(self) -> NDArray[np.float64]:
        """Shapes as (n_nodes, 3, nm) (m per unit modal coordinate)."""
        return self.shapes.reshape(-1, 3, self.n_modes)

    def interface(self, name: str) -> InterfaceFrame:
        """The interface frame called ``name``."""
        for f in self.interfaces:
            if f.name == name:
                return f
        raise ModelError(f"no interface {name!r}; the basis has {[f.name for f in self.interfaces]}.")


# ============================================================================================
# checks
# ============================================================================================


def _check_km(K, M, n_dofs: int | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    K = sp.csr_matrix(K, dtype=float)
    M = sp.csr_matrix(M, dtype=float)
    n = K.shape[0]
    if K.shape != (n, n) or M.shape != (n, n):
        raise ModelError(f"K {K.shape} and M {M.shape} must be square and of the same size.")
    if n_dofs is not None and n != n_dofs:
        raise ModelError(f"K has {n} rows but the mesh has {n_dofs} DOFs (3 per node).")
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


def _m_orthonormalize(V: NDArray[np.float64], M, *, drop_tol: float = 1e-10) -> NDArray[np.float64]:
    """M-orthonormal basis of span(V) (columns), dropping numerically dependent directions."""
    if V.shape[1] == 0:
        return V
    G = V.T @ (M @ V)
    G = 0.5 * (G + G.T)
    d, E = np.linalg.eigh(G)
    keep = d > drop_tol * d.max()
    E, d = E[:, keep], d[keep]
    return V @ (E / np.sqrt(d))


def _deterministic_start(n: int) -> NDArray[np.float64]:
    # a fixed start vector makes runs reproducible (same K, M -> same modes bit for bit)
    return np.random.default_rng(20240917).standard_normal(n)


def _eigsh_shift_invert(op_solve, M, n: int, k: int, sigma: float, what: str):
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
    W = _m_orthonormalize(V, M)
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
    points : array_like, shape (n/3, 3), optional
        Node coordinates (m), for the exact rigid-body motions (strongly recommended).
    backend : str
        Factorization backend, see :func:`flexmb.fe.spd_solve.factorize_spd`.

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
    K, M = _check_km(K, M, None if points is None else 3 * len(np.asarray(points)))
    n = K.shape[0]
    if n_modes < 0:
        raise ModelError(f"free_free_modes: `n_modes` = {n_modes} must be >= 0.")
    if shift is not None and not shift < 0:
        raise ModelError(f"free_free_modes: `shift` = {shift} must be < 0 (K is singular at 0).")
    R = None if points is None else rigid_body_modes(points)
    if shift is not None:
        sigma = float(shift)
    elif points is not None:
        sigma = -AUTO_SHIFT * _estimate_first_eigenvalue(K, M, np.asarray(points, dtype=float), R)
    else:
        sigma = -AUTO_SHIFT_TRACE * _trace_ratio(K, M)
    n_zero_guess = 6
    factor, factor_sigma = None, None
    for attempt in range(6):
        if factor_sigma != sigma:
            factor = factorize_spd(K - sigma * M, backend=backend, what="K - sigma*M")
            factor_sigma = sigma
        k = min(n - 2, max(n_modes, 1) + n_zero_guess)
        vals, vecs = _eigsh_shift_invert(factor.solve, M, n, k, sigma, "free_free_modes")
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
        Rm = _m_orthonormalize(R, M)
        extra = Z - Rm @ (Rm.T @ (M @ Z))
        extra = _m_orthonormalize(extra, M, drop_tol=1e-8)[:, : n_zero - 6]
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
    E = vecs[:, n_zero : n_zero + n_modes]
    E = E - zero_basis @ (zero_basis.T @ (M @ E))
    omega2, E = _rayleigh_ritz(E, K, M)
    _fix_signs(E)
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
    )


def _estimate_first_eigenvalue(K, M, points: NDArray[np.float64], R: NDArray[np.float64]) -> float:
    """Upper bound of the first elastic eigenvalue (Rayleigh-Ritz on 18 quadratic fields).

    Fields: each displacement component equal to each of the 6 quadratic monomials of the centred,
    scaled coordinates, made M-orthogonal to the rigid motions ``R`` (3n, 6). They contain uniform
    bending and twisting of beams and plates (with the matching rotation of the sections), so the
    bound is within a factor of a few of lambda_1 (1.1 for the FV12 plate, 2 for a 150:1 bar, 7 for
    a connecting rod); it costs 2 x 18 sparse products.
    """
    x = points - points.mean(axis=0)
    x = x / max(float(np.abs(x).max()), 1e-300)
    mono = [x[:, j] * x[:, k] for j in range(3) for k in range(j, 3)]
    n = len(points)
    T = np.zeros((n, 3, 3 * len(mono)))
    for c, (i, m) in enumerate((i, m) for i in range(3) for m in mono):  # 18 fields
        T[:, i, c] = m
    T = T.reshape(3 * n, -1)
    MR = M @ R
    T = T - R @ np.linalg.solve(R.T @ MR, MR.T @ T)
    W = _m_orthonormalize(T, M, drop_tol=1e-8)
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


def _fix_signs(E: NDArray[np.float64]) -> None:
    """Deterministic sign: the largest-magnitude entry of each column is positive (in place)."""
    if E.size == 0:
        return
    idx = np.argmax(np.abs(E), axis=0)
    s = np.sign(E[idx, np.arange(E.shape[1])])
    s[s == 0] = 1.0
    E *= s


def clamped_modes(K, M, fixed_nodes: ArrayLike, n_modes: int, *, backend: str = "auto") -> ModalBasis:
    """Fixed-base normal modes: all three DOFs of ``fixed_nodes`` clamped.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n_nodes, 3 n_nodes)
    fixed_nodes : array_like of int
        0-based indices of the clamped nodes.
    n_modes : int

    Returns
    -------
    ModalBasis
        ``kind="clamped"``; shapes are zero at the clamped DOFs.
    """
    K, M = _check_km(K, M)
    n = K.shape[0]
    fixed = np.unique(np.asarray(fixed_nodes, dtype=np.int64).reshape(-1))
    if fixed.size == 0:
        raise ModelError("clamped_modes: `fixed_nodes` is empty; pass the node set to clamp.")
    dofs = (3 * fixed[:, None] + np.arange(3)).ravel()
    free = np.setdiff1d(np.arange(n), dofs)
    Kf = K[free][:, free]
    Mf = M[free][:, free]
    factor = factorize_spd(Kf, backend=backend, what="clamped K")
    vals, vecs = _eigsh_shift_invert(factor.solve, Mf, free.size, n_modes, 0.0, "clamped_modes")
    omega2, vecs = _rayleigh_ritz(vecs, Kf, Mf)
    _fix_signs(vecs)
    shapes = np.zeros((n, vecs.shape[1]))
    shapes[free] = vecs
    return ModalBasis(
        kind="clamped", shapes=shapes, omega2=omega2, rigid_modes=np.zeros((n, 0)),
        settings=dict(n_modes=int(n_modes), fixed_nodes=[int(v) for v in fixed], backend=factor.backend),
    )


# ============================================================================================
# interfaces: transformation, boundary operator, constrained solves
# ============================================================================================


@dataclass(frozen=True, eq=False)
class _ResolvedInterface:
    name: str
    nodes: NDArray[np.int64]
    position: NDArray[np.float64]
    kind: str
    weights: NDArray[np.float64]
    A: NDArray[np.float64]  # (6, 3m) least-squares average


def _resolve_interfaces(mesh, interfaces, default_kind: str) -> list[_ResolvedInterface]:
    if isinstance(interfaces, (str, Interface)):
        interfaces = [interfaces]
    if isinstance(interfaces, Mapping):
        specs = []
        for key, val in interfaces.items():
            if isinstance(val, Interface):
                specs.append(val)
            elif isinstance(val, Mapping):
                specs.append(Interface(name=key, **{"kind": default_kind, **val}))
            else:  # node set name or node indices
                specs.append(Interface(name=key, nodes=val, kind=default_kind))
        interfaces = specs
    points = np.asarray(mesh.points, dtype=float)
    node_sets = getattr(mesh, "node_sets", {}) or {}
    out = []
    for spec in interfaces:
        if isinstance(spec, str):
            spec = Interface(name=spec, kind=default_kind)
        if not isinstance(spec, Interface):
            raise ModelError(f"interfaces: expected node-set names or Interface objects, got {type(spec).__name__}.")
        kind = spec.kind
        if kind not in ("rigid", "average"):
            raise ModelError(f"interface {spec.name!r}: `kind` = {kind!r}; use 'rigid' (RBE2) or 'average' (RBE3).")
        src = spec.name if spec.nodes is None else spec.nodes
        if isinstance(src, str):
            if src not in node_sets:
                raise ModelError(
                    f"interface {spec.name!r}: node set {src!r} not in the mesh; known sets: "
                    f"{sorted(node_sets) or 'none'} (create one with mesh.with_node_set(name, idx))."
                )
            nodes = np.asarray(node_sets[src], dtype=np.int64)
        else:
            nodes = np.asarray(src, dtype=np.int64).reshape(-1)
        nodes = np.unique(nodes)
        if nodes.size == 0 or nodes[0] < 0 or nodes[-1] >= len(points):
            raise ModelError(f"interface {spec.name!r}: node indices must be non-empty and in 0..{len(points) - 1}.")
        w = np.ones(nodes.size) if spec.weights is None else np.asarray(spec.weights, dtype=float).reshape(-1)
        if kind == "rigid" and spec.weights is not None:
            logger.info("interface %r: `weights` only affect the frame motion estimate of a rigid interface", spec.name)
        if w.shape != nodes.shape:
            raise ModelError(f"interface {spec.name!r}: {w.size} weights for {nodes.size} nodes.")
        pos = (np.average(points[nodes], axis=0, weights=w) if spec.position is None
               else np.asarray(spec.position, dtype=float).reshape(3))
        A = averaging_operator(points[nodes], pos, w, name=spec.name)
        out.append(_ResolvedInterface(spec.name, nodes, pos, kind, w, A))
    names = [f.name for f in out]
    if len(set(names)) != len(names):
        raise ModelError(f"interfaces: duplicate names {names}.")
    allnodes = np.concatenate([f.nodes for f in out]) if out else np.zeros(0, np.int64)
    if np.unique(allnodes).size != allnodes.size:
        raise ModelError(
            "interfaces: node sets overlap; every node may belong to one interface only "
            f"({names}). Shrink the sets (e.g. mesh.nodes_within) so they are disjoint."
        )
    return out


@dataclass(frozen=True, eq=False)
class _Layout:
    """DOF layout of the condensed model x: u = T x; frame motions q = B x (6 rows per interface).

    x = [DOFs of the nodes that are not in a rigid interface (node order, 3 each)] +
        [6 DOFs of each rigid interface frame (interface order)].
    """

    T: sp.csr_matrix  # (3n, nx)
    B: sp.csr_matrix  # (6 n_if, nx)
    node_col: NDArray[np.int64]  # (n,) first x-column of each retained node, -1 for rigid-set nodes
    frame_col: dict[int, int]  # interface index -> first x-column of a rigid frame
    nx: int


def _layout(points: NDArray[np.float64], ifs: list[_ResolvedInterface]) -> _Layout:
    n = len(points)
    slave = np.zeros(n, dtype=bool)
    for f in ifs:
        if f.kind == "rigid":
            slave[f.nodes] = True
    keep = np.flatnonzero(~slave)
    node_col = np.full(n, -1, dtype=np.int64)
    node_col[keep] = 3 * np.arange(keep.size)
    nx = 3 * keep.size
    frame_col = {}
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            frame_col[i] = nx
            nx += 6
    rows = [(3 * keep[:, None] + np.arange(3)).ravel()]
    cols = [(node_col[keep][:, None] + np.arange(3)).ravel()]
    vals = [np.ones(3 * keep.size)]
    for i, f in enumerate(ifs):
        if f.kind != "rigid":
            continue
        h = _frame_rigid_map(points[f.nodes] - f.position)  # (m, 3, 6)
        r = np.broadcast_to((3 * f.nodes[:, None, None] + np.arange(3)[None, :, None]), h.shape)
        c = np.broadcast_to(frame_col[i] + np.arange(6)[None, None, :], h.shape)
        nz = h != 0.0
        rows.append(r[nz])
        cols.append(c[nz])
        vals.append(h[nz])
    T = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(3 * n, nx)
    )
    brows, bcols, bvals = [], [], []
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            brows.append(6 * i + np.arange(6))
            bcols.append(frame_col[i] + np.arange(6))
            bvals.append(np.ones(6))
        else:
            cx = (node_col[f.nodes][:, None] + np.arange(3)).ravel()  # (3m,)
            brows.append(np.repeat(6 * i + np.arange(6), cx.size))
            bcols.append(np.tile(cx, 6))
            bvals.append(f.A.ravel())
    B = sp.csr_matrix(
        (np.concatenate(bvals), (np.concatenate(brows), np.concatenate(bcols))) if ifs else
        (np.zeros(0), (np.zeros(0, int), np.zeros(0, int))),
        shape=(6 * len(ifs), nx),
    )
    return _Layout(T=T, B=B, node_col=node_col, frame_col=frame_col, nx=nx)


def _far_apart_nodes(points: NDArray[np.float64], nodes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Three nodes of a set spanning a large triangle (for grounding springs)."""
    x = points[nodes]
    a = int(np.argmin(x @ np.array([1.0, 1.3, 1.7])))
    b = int(np.argmax(((x - x[a]) ** 2).sum(axis=1)))
    d = x[b] - x[a]
    cr = np.cross(x - x[a], d)
    c = int(np.argmax((cr ** 2).sum(axis=1)))
    return nodes[np.unique([a, b, c])]


def _grounding(lay: _Layout, ifs: list[_ResolvedInterface], points, Kx) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Grounded x-DOFs and spring rates that make Kx + diag(springs) positive definite."""
    dofs = []
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            dofs.append(lay.frame_col[i] + np.arange(6))
        else:
            nodes = _far_apart_nodes(points, f.nodes)
            dofs.append((lay.node_col[nodes][:, None] + np.arange(3)).ravel())
    d = np.unique(np.concatenate(dofs)) if dofs else np.zeros(0, np.int64)
    diag = Kx.diagonal()
    ref = float(np.mean(diag[diag > 0])) if np.any(diag > 0) else 1.0
    k = np.where(diag[d] > 0, diag[d], ref)
    return d, k


class _ConstrainedSolver:
    """Solve [K B^T; B 0] [x; lam] = [f; g] with K = Ks - U U^T, Ks SPD (factorized once).

    U holds grounding springs (columns sqrt(k_i) e_{d_i}); B (nb, n) constraint rows. With
    ``Z = Ks^{-1} [U, B^T]`` and ``y = Ks^{-1} f``, ``x = y + Z_U w - Z_B lam`` where
    ``w = U^T x`` and ``lam`` solve the small bordered system::

        [U^T Z_U - I   -U^T Z_B] [w  ]   [-U^T y   ]
        [B Z_U         -B Z_B  ] [lam] = [g - B y  ]

    which costs one factorization and ``r + nb`` solves up front, then one solve per right-hand
    side (plus one per refinement step).
    """

    def __init__(self, Ks, B, ground_dofs=None, ground_k=None, *, backend="auto", what="matrix"):
        Ks = sp.csc_matrix(Ks)
        n = Ks.shape[0]
        self.n = n
        self.factor: SPDFactor = factorize_spd(Ks, backend=backend, what=what)
        self.Ks = Ks
        gd = np.zeros(0, np.int64) if ground_dofs is None else np.asarray(ground_dofs, np.int64)
        gk = np.zeros(0) if ground_k is None else np.asarray(ground_k, float)
        self.gd, self.gk, self.gs = gd, gk, np.sqrt(gk)
        r = gd.size
        # scale the constraint rows to the stiffness level so the bordered system is balanced
        self.bscale = math.sqrt(float(np.mean(Ks.diagonal()))) if n else 1.0
        if sp.issparse(B):
            self.B = sp.csr_matrix(B * self.bscale)
            BT = self.B.T.toarray()
        else:
            self.B = np.asarray(B, dtype=float).reshape(-1, n) * self.bscale
            BT = self.B.T
        nb = self.B.shape[0]
        self.nb, self.r = nb, r
        W = np.zeros((n, r + nb))
        W[gd, np.arange(r)] = self.gs
        W[:, r:] = BT
        Z = self.factor.solve(W) if r + nb else np.zeros((n, 0))
        self.Z = Z.reshape(n, r + nb)
        ZU, ZB = self.Z[:, :r], self.Z[:, r:]
        S = np.zeros((r + nb, r + nb))
        S[:r, :r] = self.gs[:, None] * ZU[gd] - np.eye(r)
        S[:r, r:] = -self.gs[:, None] * ZB[gd]
        S[r:, :r] = self.B @ ZU
        S[r:, r:] = -(self.B @ ZB)
        self.S_lu = sla.lu_factor(S) if r + nb else None

    def _K_apply(self, x):
        y = self.Ks @ x
        if self.r:
            y[self.gd] -= (self.gk[:, None] if x.ndim == 2 else self.gk) * x[self.gd]
        return y

    def _solve_once(self, f, g_scaled):
        y = self.factor.solve(f)
        if self.S_lu is None:
            return y, np.zeros((0,) + f.shape[1:])
        gs = self.gs[:, None] if y.ndim == 2 else self.gs
        rhs = np.concatenate([-gs * y[self.gd], g_scaled - self.B @ y], axis=0)
        sol = sla.lu_solve(self.S_lu, rhs)
        w, lam = sol[: self.r], sol[self.r :]
        x = y + self.Z[:, : self.r] @ w - self.Z[:, self.r :] @ lam
        return x, lam

    def solve(self, f, g=None, *, refine: int = 1):
        """Solution x (n, ...) for loads f (n, ...) and constraint values g (nb, ...) (default 0).

        Returns ``(x, lam)`` with ``lam`` the multipliers of the (unscaled) rows of B.
        """
        f = np.asarray(f, dtype=float)
        g = np.zeros((self.nb,) + f.shape[1:]) if g is None else np.asarray(g, dtype=float)
        gsc = g * self.bscale
        x, lam = self._solve_once(f, gsc)
        for _ in range(refine):  # one step of iterative refinement against the exact K
            rf = f - self._K_apply(x) - (self.B.T @ lam if self.nb else 0.0)
            rg = gsc - self.B @ x
            dx, dlam = self._solve_once(rf, rg)
            x, lam = x + dx, lam + dlam
        return x, lam * self.bscale


def _condensed(K, M, mesh, interfaces, default_kind):
    points = np.asarray(mesh.points, dtype=float)
    K, M = _check_km(K, M, 3 * len(points))
    ifs = _resolve_interfaces(mesh, interfaces, default_kind)
    lay = _layout(points, ifs)
    T = lay.T
    Kx = sp.csr_matrix(T.T @ K @ T)
    Mx = sp.csr_matrix(T.T @ M @ T)
    return points, K, M, ifs, lay, Kx, Mx


def _static_solver(points, ifs, lay, Kx, B, backend):
    gd, gk = _grounding(lay, ifs, points, Kx)
    Ks = Kx + sp.csr_matrix((gk, (gd, gd)), shape=Kx.shape)
    return _ConstrainedSolver(Ks, B, gd, gk, backend=backend, what="grounded condensed stiffness")


def _reference_index(ifs, reference) -> int | None:
    if reference is None:
        return None
    if reference == "first":
        if not ifs:
            raise ModelError("craig_bampton: reference='first' needs at least one interface.")
        return 0
    for i, f in enumerate(ifs):
        if f.name == reference:
            return i
    raise ModelError(f"craig_bampton: `reference` = {reference!r} is not one of the interfaces {[f.name for f in ifs]}.")


def _frame_rows(nb_total: int, idx: list[int]) -> NDArray[np.int64]:
    return np.concatenate([6 * i + np.arange(6) for i in idx]) if idx else np.zeros(0, np.int64)


def _static_mode_nodes(mesh, static_modes) -> NDArray[np.int64]:
    if static_modes is None:
        return np.zeros(0, np.int64)
    if isinstance(static_modes, str) or np.ndim(static_modes) == 1 and not isinstance(static_modes, (list, tuple)):
        items = [static_modes]
    elif isinstance(static_modes, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in static_modes):
        items = [np.asarray(static_modes)]
    else:
        items = list(static_modes)
    out = []
    for it in items:
        if isinstance(it, str):
            if it not in mesh.node_sets:
                raise ModelError(f"static_modes: node set {it!r} not in the mesh; known: {sorted(mesh.node_sets)}.")
            out.append(np.asarray(mesh.node_sets[it], np.int64))
        else:
            out.append(np.asarray(it, np.int64).reshape(-1))
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)


# ============================================================================================
# Craig-Bampton
# ============================================================================================


def craig_bampton(
    K,
    M,
    mesh,
    interfaces,
    n_modes: int,
    *,
    reference: str | None = "first",
    static_modes=None,
    interface_kind: str = "rigid",
    backend: str = "auto",
) -> ModalBasis:
    """Craig-Bampton basis with six-DOF interface frames, orthonormalized.

    The basis spans (1) the static constraint modes of the interface frames (unit motion of one
    frame DOF, the other frames held: the exact static response to frame loads), (2) ``n_modes``
    fixed-interface normal modes (all frames held) and (3) optional attachment modes (static
    response to unit forces at ``static_modes`` nodes, frames held). The reduced eigenproblem is
    then solved so the returned shapes are M-orthonormal with a diagonal reduced stiffness; the
    frequencies are those of the reduced model with the reference interface clamped.

    Floating frame. With ``reference`` set, the six constraint modes of that interface are left
    out: it cannot move relative to the body frame, the basis has no rigid motion, and the body
    frame *is* the reference interface frame (moved to its ``position``). With ``reference=None``
    all constraint modes are kept; their span contains the six exact rigid-body motions, which are
    separated (``rigid_modes``), and the remaining shapes are M-orthogonal to them: the floating
    frame then follows the linearized Tisserand/Buckens mean axes (``int rho phi dV = 0``,
    ``int rho x0 x phi dV = 0``), as for free-free modes.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n_nodes, 3 n_nodes)
        Unconstrained stiffness (N/m) and consistent mass (kg).
    mesh : FEMesh or object with ``points`` (n_nodes, 3) and ``node_sets``
    interfaces : sequence of str or Interface, or dict name -> node set / Interface kwargs
        Node set names use ``interface_kind`` and the set's centroid.
    n_modes : int
        Number of fixed-interface normal modes (>= 0). The basis has
        ``6 (n_if - 1) + n_modes + 3 n_static`` shapes, with or without a reference (without one,
        the six rigid-body combinations of the constraint modes are separated).
    reference : "first", interface name, or None
    static_modes : str, array_like of int, or list of them, optional
        Nodes (set names or indices) that get three attachment modes each.
    interface_kind : {"rigid", "average"}
        Kind of the interfaces given by name.
    backend : str
        See :func:`flexmb.fe.spd_solve.factorize_spd`.

    Returns
    -------
    ModalBasis
        ``kind="craig-bampton"``, with its interface frames and their ``modal_map``.
    """
    points, K, M, ifs, lay, Kx, Mx = _condensed(K, M, mesh, interfaces, interface_kind)
    if not ifs:
        raise ModelError("craig_bampton: no interfaces given; use free_free_modes() for a free body.")
    if n_modes < 0:
        raise ModelError(f"craig_bampton: `n_modes` = {n_modes} must be >= 0.")
    iref = _reference_index(ifs, reference)
    nb = 6 * len(ifs)
    solver = _static_solver(points, ifs, lay, Kx, lay.B, backend)
    # (1) constraint modes
    moving = [i for i in range(len(ifs)) if i != iref]
    rows = _frame_rows(nb, moving)
    G = np.zeros((nb, rows.size))
    G[rows, np.arange(rows.size)] = 1.0
    Psi, _ = solver.solve(np.zeros((lay.nx, rows.size)), G) if rows.size else (np.zeros((lay.nx, 0)), None)
    # (2) fixed-interface normal modes: OPinv = constrained static solve (sigma = 0)
    if n_modes > 0:
        def op_solve(b):
            return solver.solve(np.asarray(b, dtype=float).reshape(-1), refine=0)[0]
        _, Phi = _eigsh_shift_invert(op_solve, Mx, lay.nx, n_modes, 0.0, "craig_bampton fixed-interface modes")
    else:
        Phi = np.zeros((lay.nx, 0))
    # (3) attachment modes
    snodes = _static_mode_nodes(mesh, static_modes)
    if snodes.size:
        if np.any(lay.node_col[snodes] < 0):
            raise ModelError("craig_bampton: `static_modes` nodes lie in a rigid interface set; the frame covers them.")
        F = np.zeros((lay.nx, 3 * snodes.size))
        cols = (lay.node_col[snodes][:, None] + np.arange(3)).ravel()
        F[cols, np.arange(cols.size)] = 1.0
        Att, _ = solver.solve(F)
    else:
        Att = np.zeros((lay.nx, 0))
    V = np.hstack([Psi, Phi, Att])
    # unit M-norm columns: constraint modes (O(1) displacement), normal modes and attachment modes
    # (compliance-sized) live on different scales; the dependency test below needs them alike
    col_scale = np.sqrt(np.einsum("ij,ij->j", V, Mx @ V))
    V = V / col_scale
    Kr = V.T @ (Kx @ V)
    Mr = V.T @ (Mx @ V)
    Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
    rigid_x = np.zeros((lay.nx, 0))
    if iref is None:
        # exact rigid motions in CB coordinates: constraint-mode amplitudes = frame rigid motions
        Rx = _rigid_in_x(points, ifs, lay)
        Y = np.zeros((V.shape[1], 6))
        Y[: rows.size] = (lay.B @ Rx)[rows] * col_scale[: rows.size, None]
        resid = np.abs(Kr @ Y).max() / max(np.abs(Kr).max(), 1e-300)
        if resid > 1e-7:
            logger.warning("craig_bampton: rigid motions carry strain energy in the reduced model (%.2e)", resid)
        Qy, _ = np.linalg.qr(Mr @ Y, mode="complete")
        Zc = Qy[:, 6:]  # complement: M_r-orthogonal to the rigid motions
        rigid_x = Rx
    else:
        Zc = np.eye(V.shape[1])
    Kz, Mz = Zc.T @ Kr @ Zc, Zc.T @ Mr @ Zc
    d, E = np.linalg.eigh(0.5 * (Mz + Mz.T))
    keep = d > 1e-12 * d.max() if d.size else np.zeros(0, bool)
    if np.count_nonzero(~keep):
        logger.info("craig_bampton: %d linearly dependent basis vectors dropped", int(np.count_nonzero(~keep)))
    Wm = E[:, keep] / np.sqrt(d[keep])
    omega2, Q = np.linalg.eigh(0.5 * (Wm.T @ Kz @ Wm + (Wm.T @ Kz @ Wm).T))
    C = Zc @ Wm @ Q  # (n_basis, nm)
    Xs = V @ C
    _fix_signs(Xs)
    shapes = lay.T @ Xs
    q = lay.B @ Xs  # (6 n_if, nm)
    frames = []
    for i, f in enumerate(ifs):
        mm = np.zeros((6, Xs.shape[1])) if i == iref else q[6 * i : 6 * i + 6]
        frames.append(InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights, mm, is_reference=(i == iref)))
    if iref is None:
        rigid = _m_orthonormalize(lay.T @ rigid_x, M)
    else:
        rigid = np.zeros((shapes.shape[0], 0))
    logger.info(
        "craig_bampton: %d interfaces (%s), %d constraint + %d fixed-interface + %d attachment modes -> %d shapes",
        len(ifs), ", ".join(f"{f.name}:{f.kind}" for f in ifs), rows.size, Phi.shape[1], Att.shape[1], shapes.shape[1],
    )
    return ModalBasis(
        kind="craig-bampton",
        shapes=shapes,
        omega2=omega2,
        rigid_modes=rigid,
        interfaces=tuple(frames),
        reference=None if iref is None else ifs[iref].name,
        settings=dict(
            n_modes=int(n_modes), n_constraint_modes=int(rows.size), n_fixed_interface_modes=int(Phi.shape[1]),
            n_attachment_modes=int(Att.shape[1]), static_mode_nodes=[int(v) for v in snodes],
            interface_kinds={f.name: f.kind for f in ifs}, backend=solver.factor.backend,
        ),
    )


def attach_interfaces(basis: ModalBasis, mesh, interfaces, *, interface_kind: str = "average") -> ModalBasis:
    """Attach interface frames to a basis that has none (e.g. free-free modes).

    The frames do not change the FE model: their motion per mode is the weighted least-squares
    rigid fit of the set's nodal displacements (``modal_map = A @ phi_set``), whatever their
    ``kind`` (which is recorded only). No frame is the reference: the floating frame stays the
    mean-axis frame of the free-free modes.

    Returns
    -------
    ModalBasis
        A copy of ``basis`` with ``interfaces`` set.
    """
    points = np.asarray(mesh.points, dtype=float)
    ifs = _resolve_interfaces(mesh, interfaces, interface_kind)
    P = basis.nodal_shapes()
    frames = tuple(
        InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights,
                       f.A @ P[f.nodes].reshape(3 * f.nodes.size, -1), is_reference=False)
        for f in ifs
    )
    return ModalBasis(kind=basis.kind, shapes=basis.shapes, omega2=basis.omega2, rigid_modes=basis.rigid_modes,
                      interfaces=frames, reference=None, n_extra_zero_modes=basis.n_extra_zero_modes,
                      settings={**basis.settings, "interface_kinds": {f.name: f.kind for f in ifs}})


def _rigid_in_x(points, ifs, lay: _Layout) -> NDArray[np.float64]:
    """The six rigid motions (about the origin) in condensed coordinates x, shape (nx, 6)."""
    R = rigid_body_modes(points)
    Rx = np.zeros((lay.nx, 6))
    keep = np.flatnonzero(lay.node_col >= 0)
    cols = (lay.node_col[keep][:, None] + np.arange(3)).ravel()
    Rx[cols] = R[(3 * keep[:, None] + np.arange(3)).ravel()]
    for i, c in lay.frame_col.items():
        Rx[c : c + 3] = rigid_body_modes(ifs[i].position[None, :])
        Rx[c + 3 : c + 6, 3:] = np.eye(3)
    return Rx


def frame_static_response(
    K,
    mesh,
    interfaces,
    frame_loads: Mapping[str, ArrayLike],
    *,
    reference: str | None = "first",
    interface_kind: str = "rigid",
    node_loads: ArrayLike | None = None,
    backend: str = "auto",
) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.float64]]:
    """Full-FE static response of a model with interface frames (the reference Craig-Bampton matches).

    The reference interface frame is clamped; loads act on frames (force (N) and moment about the
    frame point (N m)) and optionally on nodes.

    Parameters
    ----------
    K : sparse matrix, shape (3 n_nodes, 3 n_nodes)
    mesh : FEMesh
    interfaces, interface_kind, reference : as for :func:`craig_bampton` (reference must not be None)
    frame_loads : dict name -> array_like, shape (6,)
    node_loads : array_like, shape (3 n_nodes,), optional
        Nodal forces (N), node-major.

    Returns
    -------
    frames : dict name -> ndarray, shape (6,)
        Frame translation (m) and small rotation (rad) of every interface.
    u : ndarray, shape (3 n_nodes,)
        Nodal displacements (m).
    """
    points = np.asarray(mesh.points, dtype=float)
    K = sp.csr_matrix(K, dtype=float)
    ifs = _resolve_interfaces(mesh, interfaces, interface_kind)
    lay = _layout(points, ifs)
    iref = _reference_index(ifs, reference)
    if iref is None:
        raise ModelError("frame_static_response: a reference interface is needed to hold the body.")
    Kx = sp.csr_matrix(lay.T.T @ K @ lay.T)
    Bref = lay.B[6 * iref : 6 * iref + 6]
    solver = _static_solver(points, ifs, lay, Kx, Bref, backend)
    f = np.zeros(lay.nx)
    if node_loads is not None:
        f += lay.T.T @ np.asarray(node_loads, dtype=float)
    for name, load in frame_loads.items():
        i = [g.name for g in ifs].index(name)
        f += lay.B[6 * i : 6 * i + 6].T @ np.asarray(load, dtype=float)
    x, _ = solver.solve(f)
    q = lay.B @ x
    return {g.name: q[6 * i : 6 * i + 6] for i, g in enumerate(ifs)}, lay.T @ x


# ============================================================================================
# inertia invariants
# ============================================================================================


@dataclass(frozen=True, eq=False)
class InertiaInvariants:
    """Inertia invariants of a modal body in its floating frame (exact for the consistent mass).

    With ``x = x0 + sum_k phi_k eta_k`` and ``int rho a b^T dV = A^T Ms B`` for nodal fields
    interpolated by the element shape functions (``M = kron(Ms, I3)``):

    Attributes
    ----------
    mass : float
        ``int rho dV`` (kg).
    first_moment : ndarray, shape (3,)
        ``int rho x0 dV`` (kg m).
    second_moment : ndarray, shape (3, 3)
        ``int rho x0 x0^T dV`` (kg m^2).
    modal_first_moment : ndarray, shape (nm, 3)
        ``[k] = int rho phi_k dV`` (kg m per unit eta).
    modal_cross_moment : ndarray, shape (nm, 3, 3)
        ``[k, a, b] = int rho x0_a phi_k,b dV``.
    modal_second_moment : ndarray, shape (nm, nm, 3, 3)
        ``[k, l, a, b] = int rho phi_k,a phi_l,b dV``.
    modal_mass : ndarray, shape (nm, nm)
        ``int rho phi_k . phi_l dV`` (identity for mass-normalized shapes).
    modal_stiffness : ndarray, shape (nm, nm)
        ``phi^T K phi`` (diag(omega^2) for orthonormalized shapes).
    """

    mass: float
    first_moment: NDArray[np.float64]
    second_moment: NDArray[np.float64]
    modal_first_moment: NDArray[np.float64]
    modal_cross_moment: NDArray[np.float64]
    modal_second_moment: NDArray[np.float64]
    modal_mass: NDArray[np.float64]
    modal_stiffness: NDArray[np.float64]

    @property
    def center_of_mass(self) -> NDArray[np.float64]:
        """Undeformed centre of mass (m), shape (3,)."""
        return self.first_moment / self.mass

    @property
    def inertia_tensor(self) -> NDArray[np.float64]:
        """Undeformed inertia tensor about the frame origin (kg m^2): ``tr(S) I - S``."""
        return _inertia_from_second(self.second_moment)

    @property
    def inertia_tensor_com(self) -> NDArray[np.float64]:
        """Undeformed inertia tensor about the centre of mass (kg m^2)."""
        c = self.center_of_mass
        return self.inertia_tensor - self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))

    @property
    def modal_angular_participation(self) -> NDArray[np.float64]:
        """``int rho x0 x phi_k dV`` (nm, 3) (kg m^2 per unit eta): rotational participation factors."""
        C = self.modal_cross_moment
        return np.stack([C[:, 1, 2] - C[:, 2, 1], C[:, 2, 0] - C[:, 0, 2], C[:, 0, 1] - C[:, 1, 0]], axis=1)

    @property
    def inertia_tensor_first_order(self) -> NDArray[np.float64]:
        """``dJ/deta_k`` (nm, 3, 3): ``tr(C_k + C_k^T) I - (C_k + C_k^T)``."""
        S1 = self.modal_cross_moment + self.modal_cross_moment.transpose(0, 2, 1)
        return _inertia_from_second(S1)

    @property
    def inertia_tensor_second_order(self) -> NDArray[np.float64]:
        """``J2`` (nm, nm, 3, 3), symmetric in (k, l), with ``J(eta) = J0 + J1_k eta_k + J2_kl eta_k eta_l``."""
        D = self.modal_second_moment
        Ds = 0.5 * (D + D.transpose(1, 0, 3, 2))
        return _inertia_from_second(Ds)

    def first_moment_at(self, eta: ArrayLike) -> NDArray[np.float64]:
        """``int rho x dV`` of the deformed body (3,) for modal coordinates ``eta`` (nm,)."""
        return self.first_moment + np.asarray(eta, float) @ self.modal_first_moment

    def inertia_tensor_at(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Exact inertia tensor about the frame origin of the deformed body (3, 3)."""
        e = np.asarray(eta, float)
        return (self.inertia_tensor + np.einsum("k,kab->ab", e, self.inertia_tensor_first_order)
                + np.einsum("k,l,klab->ab", e, e, self.inertia_tensor_second_order))


def _inertia_from_second(S: NDArray[np.float64]) -> NDArray[np.float64]:
    tr = np.trace(S, axis1=-2, axis2=-1)
    return tr[..., None, None] * np.eye(3) - S


def inertia_invariants(Ms, points: ArrayLike, shapes: ArrayLike, K=None) -> InertiaInvariants:
    """Compute the inertia invariants from the scalar consistent mass matrix.

    Parameters
    ----------
    Ms : sparse matrix, shape (n_nodes, n_nodes)
        Scalar consistent mass (kg), ``M = kron(Ms, I3)``.
    points : array_like, shape (n_nodes, 3)
        Undeformed positions x0 in the body frame (m).
    shapes : array_like, shape (3 n_nodes, nm) or (n_nodes, 3, nm)
        Shape functions (node-major).
    K : sparse matrix, shape (3 n_nodes, 3 n_nodes), optional
        Stiffness, for ``modal_stiffness`` (zeros if not given).

    Returns
    -------
    InertiaInvariants
    """
    Ms = sp.csr_matrix(Ms)
    x0 = np.asarray(points, dtype=float)
    n = x0.shape[0]
    P = np.asarray(shapes, dtype=float).reshape(n, 3, -1)
    nm = P.shape[2]
    m_nodal = np.asarray(Ms @ np.ones(n)).ravel()
    MsX = np.asarray(Ms @ x0)
    MsP = np.asarray(Ms @ P.reshape(n, 3 * nm)).reshape(n, 3, nm)
    D = np.einsum("nak,nbl->klab", P, MsP)
    D = 0.5 * (D + D.transpose(1, 0, 3, 2))  # exact symmetry of int rho phi_k phi_l^T
    mm = np.einsum("klaa->kl", D)
    if K is not None:
        Pf = P.reshape(3 * n, nm)
        ks = Pf.T @ (sp.csr_matrix(K) @ Pf)
        ks = 0.5 * (ks + ks.T)
    else:
        ks = np.zeros((nm, nm))
    S2 = x0.T @ MsX
    return InertiaInvariants(
        mass=float(m_nodal.sum()),
        first_moment=x0.T @ m_nodal,
        second_moment=0.5 * (S2 + S2.T),
        modal_first_moment=np.einsum("n,nak->ka", m_nodal, P),
        modal_cross_moment=np.einsum("na,nbk->kab", MsX, P),
        modal_second_moment=D,
        modal_mass=mm,
        modal_stiffness=ks,
    )


# ============================================================================================
# geometric stiffness
# ============================================================================================


def _fe():
    from flexmb.fe import assembly as fe_assembly  # local import: assembly needs the mesh module, reduction does not

    return fe_assembly


def modal_geometric_stiffness(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Projected geometric stiffness of each mode's own stress state.

    ``G[k, i, j] = phi_i^T K_sigma(sigma(phi_k)) phi_j``, with ``sigma(phi_k)`` the linear-elastic
    stress of shape k (per unit modal coordinate) and ``K_sigma`` the FE geometric stiffness
    (:func:`flexmb.fe.assembly.assemble_geometric_stiffness`).

    With Green-Lagrange strains the elastic energy of ``u = Phi eta`` gains the cubic term
    ``U3 = 1/2 sum_kij G[k,i,j] eta_k eta_i eta_j`` (the quartic term is neglected), so

    * generalized elastic force: ``f_m = (K eta)_m + 1/2 G[m,i,j] eta_i eta_j + G[k,m,j] eta_k eta_j``;
    * tangent stiffness: ``K + sum_k eta_k (G[k] + G[:, :, k] + G[:, :, k]^T)``, where the first
      term ``sum_k eta_k G[k]`` is the stress stiffening by the current elastic stress.

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (3 n_nodes, nm)

    Returns
    -------
    G : ndarray, shape (nm, nm, nm)
        (N/m per unit eta), symmetric in the last two indices.
    """
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    nm = P.shape[1]
    G = np.empty((nm, nm, nm))
    for k in range(nm):  # loop over modes: each is one vectorized stress + assembly pass
        Ks = fe.assemble_geometric_stiffness(mesh, fe.element_stresses(mesh, P[:, k], materials))
        g = P.T @ (Ks @ P)
        G[k] = 0.5 * (g + g.T)
    return G


def inertial_load_vectors(M, points: ArrayLike) -> NDArray[np.float64]:
    """Consistent nodal loads of the 12 unit inertial cases (order :data:`PRELOAD_NAMES`).

    For body-frame angular velocity w, angular acceleration alpha and frame-origin acceleration a,
    a point at x0 has acceleration ``a + alpha x x0 + w x (w x x0)``; the d'Alembert body force is
    ``-rho`` times that. ``w x (w x x) = W x`` with ``W = w w^T - |w|^2 I``, which is linear in the
    six products ``w_a w_b``: unit case ``w_a^2`` has ``W = e_a e_a^T - I``, case ``w_a w_b``
    (a != b) has ``W = e_a e_b^T + e_b e_a^T``. Since these fields are linear in x0 they are
    interpolated exactly, and ``f = -M @ accel_nodal`` is the consistent load.

    Parameters
    ----------
    M : sparse matrix, shape (3 n, 3 n)
    points : array_like, shape (n, 3)

    Returns
    -------
    F : ndarray, shape (12, 3 n)
        Nodal forces (N per unit rad^2/s^2, rad/s^2 or m/s^2).
    """
    x = np.asarray(points, dtype=float)
    n = x.shape[0]
    acc = np.zeros((12, n, 3))
    e = np.eye(3)
    pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2)]
    for c, (a, b) in enumerate(pairs):
        W = np.outer(e[a], e[a]) - np.eye(3) if a == b else np.outer(e[a], e[b]) + np.outer(e[b], e[a])
        acc[c] = x @ W.T
    for c in range(3):
        acc[6 + c] = np.cross(e[c], x)
        acc[9 + c] = e[c]
    return -(M @ acc.reshape(12, 3 * n).T).T


def static_preload_displacements(
    K, M, mesh, basis: ModalBasis, loads: ArrayLike, *, backend: str = "auto"
) -> NDArray[np.float64]:
    """Static displacements of load cases with the body held as the basis' floating frame is.

    * Basis with a reference interface: that interface frame is clamped (rigid: its frame DOFs;
      average: its least-squares frame motion held by multipliers).
    * Basis without one (free-free, or ``reference=None``): inertia relief. The load's resultant
      force and moment are balanced by the d'Alembert forces of the rigid-body acceleration they
      cause (``f - M R (R^T M R)^{-1} R^T f``), and the rigid part of the displacement is removed
      (``R^T M u = 0``, mean axes).
    * Clamped (fixed-base) basis: the basis' zero DOFs are clamped.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
    mesh : FEMesh
    basis : ModalBasis
    loads : array_like, shape (n_loads, 3 n)

    Returns
    -------
    U : ndarray, shape (n_loads, 3 n)
    """
    points = np.asarray(mesh.points, dtype=float)
    K, M = _check_km(K, M, 3 * len(points))
    F = np.atleast_2d(np.asarray(loads, dtype=float))
    if basis.reference is not None:
        ifs = [
            _ResolvedInterface(f.name, f.nodes, f.position, f.kind, f.weights,
                               averaging_operator(points[f.nodes], f.position, f.weights, name=f.name))
            for f in basis.interfaces
        ]
        iref = [f.name for f in ifs].index(basis.reference)
        lay = _layout(points, ifs)  # same couplings as the basis (rigid sets stiffen their nodes)
        Kx = sp.csr_matrix(lay.T.T @ K @ lay.T)
        solver = _static_solver(points, ifs, lay, Kx, lay.B[6 * iref : 6 * iref + 6], backend)
        X, _ = solver.solve(np.asarray(lay.T.T @ F.T))
        return np.asarray(lay.T @ X).T
    if basis.kind == "clamped":
        fixed_nodes = np.asarray(basis.settings.get("fixed_nodes", []), dtype=np.int64)
        fixed = (3 * fixed_nodes[:, None] + np.arange(3)).ravel()
        free = np.setdiff1d(np.arange(K.shape[0]), fixed)
        fac = factorize_spd(K[free][:, free], backend=backend, what="clamped K")
        U = np.zeros_like(F)
        U[:, free] = fac.solve(F[:, free].T).T
        return U
    R = rigid_body_modes(points)
    MR = np.asarray(M @ R)
    Fe = F - (MR @ np.linalg.solve(R.T @ MR, R.T @ F.T)).T  # inertia relief: self-equilibrated
    nodes = _far_apart_nodes(points, np.arange(len(points)))
    gd = (3 * nodes[:, None] + np.arange(3)).ravel()
    diag = K.diagonal()
    gk = diag[gd]
    Ks = K + sp.csr_matrix((gk, (gd, gd)), shape=K.shape)
    solver = _ConstrainedSolver(Ks, MR.T, gd, gk, backend=backend, what="grounded K (inertia relief)")
    X, _ = solver.solve(Fe.T)
    return X.T


def load_geometric_stiffness(
    K, M, mesh, basis: ModalBasis, loads: ArrayLike, *, materials=None, backend: str = "auto"
) -> NDArray[np.float64]:
    """Projected geometric stiffness of the static stress states of given load cases.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
    mesh : FEMesh
    basis : ModalBasis
        Its floating-frame condition decides how the body is held (see
        :func:`static_preload_displacements`).
    loads : array_like, shape (n_loads, 3 n)
        Nodal forces (N) per unit load parameter.

    Returns
    -------
    Kg : ndarray, shape (n_loads, nm, nm)
        ``Phi^T K_sigma(sigma(u_c)) Phi`` (N/m per unit load parameter), symmetric.
    """
    fe = _fe()
    U = static_preload_displacements(K, M, mesh, basis, loads, backend=backend)
    P = basis.shapes
    out = np.empty((U.shape[0], P.shape[1], P.shape[1]))
    for c in range(U.shape[0]):  # loop over load cases
        Ks = fe.assemble_geometric_stiffness(mesh, fe.element_stresses(mesh, U[c], materials))
        g = P.T @ (Ks @ P)
        out[c] = 0.5 * (g + g.T)
    return out


def preload_geometric_stiffness(
    K, M, mesh, basis: ModalBasis, *, materials=None, backend: str = "auto"
) -> NDArray[np.float64]:
    """Projected geometric stiffness of the 12 unit inertial preloads (stress stiffening).

    Each case c (order :data:`PRELOAD_NAMES`) is the static stress state of the body under the
    d'Alembert body force ``-rho * acc_c(x0)`` of :func:`inertial_load_vectors`, held at its
    reference interface frame (clamped there), or by inertia relief for a basis without a reference
    interface (free-free or ``reference=None``), see :func:`static_preload_displacements`.

    How the dynamics uses it. With body-frame components of the angular velocity ``w`` (rad/s) and
    angular acceleration ``alpha`` (rad/s^2) of the floating frame, and ``a`` the acceleration of the
    frame origin minus gravity, in body components (m/s^2), the modal stiffness is::

        K_eff = diag(omega2) + sum_c s_c Kg[c]
        s = [wx^2, wy^2, wz^2, wx*wy, wy*wz, wx*wz, alpha_x, alpha_y, alpha_z,
             a_x - g_x, a_y - g_y, a_z - g_z]

    (the preload stress is linear in the load, the load is linear in ``s``; the sign convention is
    that of :func:`inertial_load_vectors`, so a spin ``wz`` puts a beam along x in tension and
    ``Kg[2]`` stiffens its bending). This is only the stress stiffening. The spin softening of the
    deformation itself (``-wz^2 M_perp`` for a spin about a fixed z axis, acting on the x and y
    displacement components) is not in ``Kg``: it comes from the floating-frame inertia terms (the
    ``modal_second_moment`` invariant) of the equations of motion.
    The preload of joint forces at other interfaces is not included (use
    :func:`load_geometric_stiffness` with unit frame loads for those).

    Returns
    -------
    Kg : ndarray, shape (12, nm, nm)
        (N/m per unit s_c), symmetric.
    """
    F = inertial_load_vectors(M, mesh.points)
    return load_geometric_stiffness(K, M, mesh, basis, F, materials=materials, backend=backend)


# ============================================================================================
# stresses and damping
# ============================================================================================


def modal_stresses(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Stresses per unit modal coordinate at the mesh nodes.

    Evaluated at each element's nodes and averaged over the elements sharing a node
    (:func:`flexmb.fe.assembly.nodal_stresses`).

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (3 n_nodes, nm)

    Returns
    -------
    S : ndarray, shape (nm, n_nodes, 6)
        Stress (Pa per unit eta), Voigt [xx, yy, zz, yz, xz, xy]; the stress of a motion is
        ``einsum("k,knv->nv", eta, S)``.
    """
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    s = fe.nodal_stresses(mesh, P, materials)  # (n, 6, nm)
    return np.ascontiguousarray(s.transpose(2, 0, 1))


def von_mises(stress: ArrayLike) -> NDArray[np.float64]:
    """Von Mises equivalent stress of Voigt stresses [xx, yy, zz, yz, xz, xy] (..., 6) -> (...)."""
    s = np.asarray(stress, dtype=float)
    d = (s[..., 0] - s[..., 1]) ** 2 + (s[..., 1] - s[..., 2]) ** 2 + (s[..., 2] - s[..., 0]) ** 2
    return np.sqrt(0.5 * d + 3.0 * (s[..., 3] ** 2 + s[..., 4] ** 2 + s[..., 5] ** 2))


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
