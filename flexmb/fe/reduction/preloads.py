"""Inertial preloads of a modal body and the geometric stiffness of their static stress states.

The 12 unit inertial load cases (:data:`PRELOAD_NAMES`) are the d'Alembert body forces of the
floating frame's motion; their static responses, with the body held as the basis' floating frame
is (clamped reference interface, or inertia relief with mean axes), give the preload (stress
stiffening) geometric stiffness. :func:`load_stiffening` also splits each static response into the
part the basis carries (its stiffness-metric projection ``Phi a``) and the residual the basis cannot
represent, and returns the geometric stiffness of both (see docs/theory.md, "Modal geometric
stiffening data").
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.reduction.interfaces import (
    ConstrainedSolver,
    far_apart_nodes,
    condensed_layout,
    ResolvedInterface,
    static_solver,
    interface_operator,
    node_dof_map,
)
from flexmb.fe.reduction.modes import ModalBasis, check_km, cross_matrices
from flexmb.fe.spd_solve import factorize_spd

__all__ = [
    "PRELOAD_NAMES",
    "LoadStiffening",
    "inertial_load_vectors",
    "load_geometric_stiffness",
    "load_stiffening",
    "preload_geometric_stiffness",
    "preload_stiffening",
    "static_preload_displacements",
    "split_response",
    "stiffness_projection",
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


def _fe():
    from flexmb.fe.elements import assembly as fe_assembly  # local import: assembly needs the mesh module, reduction does not

    return fe_assembly


def inertial_load_vectors(M, points: ArrayLike, dof_map=None) -> NDArray[np.float64]:
    """Consistent nodal loads of the 12 unit inertial cases (order :data:`PRELOAD_NAMES`).

    For body-frame angular velocity w, angular acceleration alpha and frame-origin acceleration a,
    a point at x0 has acceleration ``a + alpha x x0 + w x (w x x0)``; the d'Alembert body force is
    ``-rho`` times that. ``w x (w x x) = W x`` with ``W = w w^T - |w|^2 I``, which is linear in the
    six products ``w_a w_b``: unit case ``w_a^2`` has ``W = e_a e_a^T - I``, case ``w_a w_b``
    (a != b) has ``W = e_a e_b^T + e_b e_a^T``. Since these fields are linear in x0 they are
    interpolated exactly, and ``f = -M @ accel_nodal`` is the consistent load.

    At nodes with rotations (``dof_map`` of a model with shells or beams) the acceleration field
    turns the sections by its infinitesimal rotation (``alpha`` for the angular acceleration, zero
    for the centripetal and uniform fields): the loads then hold the d'Alembert moments of the
    sections' rotary inertia.

    Parameters
    ----------
    M : sparse matrix, shape (n_dofs, n_dofs)
    points : array_like, shape (n, 3)
    dof_map : DofMap, optional
        Default 3 DOFs per node.

    Returns
    -------
    F : ndarray, shape (12, n_dofs)
        Nodal forces (N per unit rad^2/s^2, rad/s^2 or m/s^2).
    """
    if dof_map is not None and dof_map.has_rotations:
        e = np.eye(3)
        A = np.zeros((12, 3, 3))
        b = np.zeros((12, 3))
        for c, (a, bb) in enumerate([(0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2)]):
            A[c] = np.outer(e[a], e[a]) - np.eye(3) if a == bb else np.outer(e[a], e[bb]) + np.outer(e[bb], e[a])
        for c in range(3):
            A[6 + c] = cross_matrices(e[c])  # e_c x x = skew(e_c) x
            b[9 + c] = e[c]
        acc = dof_map.linear_fields(points, A, b)  # (n_dofs, 12)
        return -np.asarray(M @ acc).T
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
    dmap = node_dof_map(mesh, len(points))
    K, M = check_km(K, M, dmap.n_dofs)
    F = np.atleast_2d(np.asarray(loads, dtype=float))
    if basis.reference is not None:
        ifs = [
            ResolvedInterface(f.name, f.nodes, f.position, f.kind, f.weights,
                               interface_operator(points, dmap, f.nodes, f.position, f.weights, f.kind, f.name))
            for f in basis.interfaces
        ]
        iref = [f.name for f in ifs].index(basis.reference)
        lay = condensed_layout(points, ifs, dmap)  # same couplings as the basis (rigid sets stiffen their nodes)
        Kx = sp.csr_matrix(lay.T.T @ K @ lay.T)
        solver = static_solver(points, ifs, lay, Kx, lay.B[6 * iref : 6 * iref + 6], backend)
        X, _ = solver.solve(np.asarray(lay.T.T @ F.T))
        return np.asarray(lay.T @ X).T
    if basis.kind == "clamped":
        fixed_nodes = np.asarray(basis.settings.get("fixed_nodes", []), dtype=np.int64)
        fixed = dmap.dofs(fixed_nodes)
        free = np.setdiff1d(np.arange(K.shape[0]), fixed)
        fac = factorize_spd(K[free][:, free], backend=backend, what="clamped K")
        U = np.zeros_like(F)
        U[:, free] = fac.solve(F[:, free].T).T
        return U
    R = dmap.rigid_body_modes(points)
    MR = np.asarray(M @ R)
    Fe = F - (MR @ np.linalg.solve(R.T @ MR, R.T @ F.T)).T  # inertia relief: self-equilibrated
    nodes = far_apart_nodes(points, np.arange(len(points)))
    gd = dmap.translations(nodes).ravel()
    diag = K.diagonal()
    gk = diag[gd]
    Ks = K + sp.csr_matrix((gk, (gd, gd)), shape=K.shape)
    solver = ConstrainedSolver(Ks, MR.T, gd, gk, backend=backend, what="grounded K (inertia relief)")
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
    U = static_preload_displacements(K, M, mesh, basis, loads, backend=backend)
    return _projected_geometric_stiffness(mesh, basis.shapes, U, materials) + _face_term(K, mesh, basis, U, loads)


def _face_term(K, mesh, basis: ModalBasis, U, loads) -> NDArray[np.float64] | float:
    """Geometric stiffness of the rigid interface faces that turn, for static fields U (n, 3 n) under loads.

    The faces' nodes sit at ``t + exp(theta) r`` (:func:`flexmb.fe.reduction.stiffening.rigid_face_pair_displacements`:
    second-order motion ``1/2 sum_ij q_i q_j s_ij``); the forces that hold them rigid, ``K u - f`` at
    their nodes, work on it: ``Kf[c, i, j] = s_ij . (K U[c] - F[c])`` (N/m per unit load parameter;
    zero elsewhere than on the faces). 0.0 when no rigid face turns.
    """
    from flexmb.fe.reduction.stiffening import rigid_face_pair_displacements

    S = rigid_face_pair_displacements(mesh.points, basis)
    if S is None:
        return 0.0
    U = np.atleast_2d(U)
    F = np.broadcast_to(np.atleast_2d(np.asarray(loads, dtype=float)), U.shape)
    link = np.asarray(sp.csr_matrix(K) @ U.T).T - F  # (n, n_dofs)
    link = link[:, node_dof_map(mesh, len(mesh.points)).translations().ravel()]  # S moves the faces' nodes
    nm = basis.n_modes
    iu, ju = np.triu_indices(nm)
    out = np.zeros((U.shape[0], nm, nm))
    w = link @ S.T  # (n, P)
    out[:, iu, ju] = w
    out[:, ju, iu] = w
    return out


def _projected_geometric_stiffness(mesh, shapes, U, materials) -> NDArray[np.float64]:
    """``Phi^T K_sigma(sigma(U[c])) Phi`` for each displacement field U[c], shape (n, nm, nm)."""
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    out = np.empty((U.shape[0], P.shape[1], P.shape[1]))
    for c in range(U.shape[0]):  # loop over load cases
        Ks = fe.assemble_geometric_stiffness(mesh, fe.element_stresses(mesh, U[c], materials), materials)
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
    F = inertial_load_vectors(M, mesh.points, getattr(mesh, "dof_map", None))
    return load_geometric_stiffness(K, M, mesh, basis, F, materials=materials, backend=backend)



# ============================================================================================
# the part of a static response the basis cannot carry
# ============================================================================================


def split_response(K, M, mesh, basis: ModalBasis, loads: ArrayLike, *, backend: str = "auto"):
    """Static responses ``U (n_loads, 3 n)`` of the loads (:func:`static_preload_displacements`),
    their stiffness-metric coordinates on the shapes ``a (n_loads, nm)``
    (:func:`stiffness_projection`) and the residual ``U - a Phi^T`` the basis cannot carry."""
    U = static_preload_displacements(K, M, mesh, basis, loads, backend=backend)
    a = stiffness_projection(K, basis.shapes, U)
    return U, a, U - a @ basis.shapes.T


def stiffness_projection(K, shapes: ArrayLike, U: ArrayLike) -> NDArray[np.float64]:
    """Coordinates of the stiffness-metric (K-orthogonal) projection of fields on a basis.

    ``a = (Phi^T K Phi)^{-1} Phi^T K u`` for each row u of U, so that ``u - Phi a`` is
    K-orthogonal to every shape. For a static response ``K u = f + reactions`` whose reactions do no
    work on the shapes (clamped reference interface, or inertia relief with a mean-axis basis),
    ``Phi^T K u = Phi^T f`` and ``Phi a`` is the static response of the reduced model.

    Parameters
    ----------
    K : sparse matrix, shape (3 n, 3 n)
    shapes : array_like, shape (3 n, nm)
    U : array_like, shape (n_loads, 3 n)

    Returns
    -------
    a : ndarray, shape (n_loads, nm)
        Modal coordinates (per unit load parameter).

    Raises
    ------
    ModelError
        If ``Phi^T K Phi`` is singular (the basis contains strain-free motions).
    """
    P = np.asarray(shapes, dtype=float)
    U = np.atleast_2d(np.asarray(U, dtype=float))
    if P.shape[1] == 0:
        return np.zeros((U.shape[0], 0))
    KP = np.asarray(sp.csr_matrix(K) @ P)
    Kr = P.T @ KP
    Kr = 0.5 * (Kr + Kr.T)
    ev = np.linalg.eigvalsh(Kr)
    if ev[0] <= 1e-12 * ev[-1]:
        raise ModelError(
            f"stiffness_projection: Phi^T K Phi is singular (eigenvalues {ev[0]:.3g} .. {ev[-1]:.3g}): the basis "
            "holds strain-free (rigid-body) motions; pass the elastic shapes only."
        )
    return np.linalg.solve(Kr, KP.T @ U.T).T


@dataclass(frozen=True, eq=False)
class LoadStiffening:
    """Geometric stiffness of static load cases, split into what the basis carries and what it cannot.

    Attributes
    ----------
    full : ndarray, shape (n_loads, nm, nm)
        ``Kg[c] = Phi^T K_sigma(sigma(u_c)) Phi`` of the full static response ``u_c``.
    residual : ndarray, shape (n_loads, nm, nm)
        ``Kg_res[c] = Phi^T K_sigma(sigma(u_c - Phi a_c)) Phi``: of the part of ``u_c`` that the
        basis does not represent. Identity: ``Kg_res[c] = Kg[c] - sum_k a_c[k] G[k]`` with ``G``
        of :func:`flexmb.fe.reduction.stiffening.modal_geometric_stiffness`.
    coordinates : ndarray, shape (n_loads, nm)
        ``a_c``, the stiffness-metric projection of ``u_c`` on the basis
        (:func:`stiffness_projection`): the reduced model's own static response.
    residual_fraction : ndarray, shape (n_loads,)
        Strain-energy fraction of ``u_c`` not carried by the basis,
        ``(u_res^T K u_res) / (u_c^T K u_c)`` (0 when the basis contains ``u_c``; set to 0 for a
        load case whose response energy is below 1e-16 of the largest one, i.e. round-off, e.g. a
        uniform acceleration of a free body).
    """

    full: NDArray[np.float64]
    residual: NDArray[np.float64]
    coordinates: NDArray[np.float64]
    residual_fraction: NDArray[np.float64]


def load_stiffening(
    K, M, mesh, basis: ModalBasis, loads: ArrayLike, *, materials=None, backend: str = "auto"
) -> LoadStiffening:
    """Geometric stiffness of load cases' static stress, full and of the part the basis cannot carry.

    For each load ``f_c``: the static response ``u_c`` with the body held as the basis' floating
    frame is (:func:`static_preload_displacements`: clamped reference interface for Craig-Bampton,
    inertia relief with mean axes for free-free), its stiffness-metric projection ``a_c``
    (:func:`stiffness_projection`), the residual ``u_res = u_c - Phi a_c``, and the projected
    geometric stiffness of the stresses of ``u_c`` and of ``u_res``.

    Why the residual. A modal body whose strain energy has the cubic term ``G`` already stiffens by
    the stress of its own modal deflection: under the load the reduced model deflects by about
    ``Phi a_c`` and gains ``sum_k a_c[k] G[k]``. Adding the full ``Kg[c]`` as well would count that
    part twice; ``Kg_res[c] = Kg[c] - sum_k a_c[k] G[k]`` adds only the stiffening of the response
    the basis cannot represent (e.g. the centrifugal stretch of a spinning beam reduced to bending
    modes, where ``Kg_res ~ Kg``).

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
    mesh : FEMesh
    basis : ModalBasis
    loads : array_like, shape (n_loads, 3 n)
        Nodal forces (N) per unit load parameter.
    materials : optional
        Overrides ``mesh.materials``.

    Returns
    -------
    LoadStiffening
    """
    U, a, Ures = split_response(K, M, mesh, basis, loads, backend=backend)
    Ks = sp.csr_matrix(K)
    e_full = np.einsum("ci,ci->c", U, (Ks @ U.T).T)
    e_res = np.einsum("ci,ci->c", Ures, (Ks @ Ures.T).T)
    # round-off responses (e.g. a uniform acceleration of a free body) have no meaningful fraction
    tiny = 1e-16 * float(e_full.max(initial=0.0))
    frac = np.divide(e_res, e_full, out=np.zeros_like(e_full), where=e_full > tiny)
    logger.info("load_stiffening: residual strain-energy fractions %s", np.array2string(frac, precision=3))
    F = np.atleast_2d(np.asarray(loads, dtype=float))
    return LoadStiffening(
        full=_projected_geometric_stiffness(mesh, basis.shapes, U, materials) + _face_term(K, mesh, basis, U, F),
        residual=_projected_geometric_stiffness(mesh, basis.shapes, Ures, materials) + _face_term(K, mesh, basis, Ures, F),
        coordinates=a,
        residual_fraction=frac,
    )


def preload_stiffening(K, M, mesh, basis: ModalBasis, *, materials=None, backend: str = "auto") -> LoadStiffening:
    """:func:`load_stiffening` of the 12 unit inertial preloads (order :data:`PRELOAD_NAMES`).

    ``full`` equals :func:`preload_geometric_stiffness`; ``residual`` is its part for what the basis
    cannot represent; both scale with the frame motion as documented there:
    ``K_eff = diag(omega2) + sum_c s_c Kg_res[c]`` in a body with the cubic (and quartic) modal
    strain energy, ``diag(omega2) + sum_c s_c Kg[c]`` in a linear modal body.
    """
    F = inertial_load_vectors(M, mesh.points, getattr(mesh, "dof_map", None))
    return load_stiffening(K, M, mesh, basis, F, materials=materials, backend=backend)
