"""Craig-Bampton bases with six-DOF interface frames, and frames attached to an existing basis.

See :mod:`flexmb.fe.reduction.interfaces` for the interface kinds and the constrained static solves, and
:mod:`flexmb.fe.reduction` for the conventions.
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements.deformation import reduced_stiffness
from flexmb.fe.reduction.clusters import CLUSTER_EXTRA, aligned, truncated
from flexmb.fe.reduction.interfaces import (
    condensed_model,
    frame_rows,
    CondensedLayout,
    node_dof_map,
    reference_index,
    resolve_interfaces,
    resolve_static_mode_nodes,
    static_solver,
)
from flexmb.fe.reduction.modes import (
    InterfaceFrame,
    ModalBasis,
    eigsh_shift_invert,
    fix_signs,
    m_orthonormalize,
    rotational_dof_map,
    rigid_body_modes,
)

__all__ = ["attach_interfaces", "craig_bampton"]

logger = logging.getLogger(__name__)


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
    K, M : sparse matrix, shape (n_dofs, n_dofs)
        Unconstrained stiffness (N/m) and consistent mass (kg) on ``mesh.dof_map`` (3 DOFs per node,
        6 at the nodes of shells and beams).
    mesh : FEMesh or object with ``points`` (n_nodes, 3) and ``node_sets``
        Rigid interfaces tie the rotations of their shell and beam nodes to the frame's (RBE2);
        averaging ones use the translations only (RBE3, components 123).
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
    points, K, M, ifs, lay, Kx, Mx = condensed_model(K, M, mesh, interfaces, interface_kind)
    if not ifs:
        raise ModelError("craig_bampton: no interfaces given; use free_free_modes() for a free body.")
    if n_modes < 0:
        raise ModelError(f"craig_bampton: `n_modes` = {n_modes} must be >= 0.")
    iref = reference_index(ifs, reference)
    nb = 6 * len(ifs)
    solver = static_solver(points, ifs, lay, Kx, lay.B, backend)
    # (1) constraint modes
    moving = [i for i in range(len(ifs)) if i != iref]
    rows = frame_rows(nb, moving)
    G = np.zeros((nb, rows.size))
    G[rows, np.arange(rows.size)] = 1.0
    Psi, _ = solver.solve(np.zeros((lay.nx, rows.size)), G) if rows.size else (np.zeros((lay.nx, 0)), None)
    # (2) fixed-interface normal modes: OPinv = constrained static solve (sigma = 0)
    if n_modes > 0:
        def op_solve(b):
            return solver.solve(np.asarray(b, dtype=float).reshape(-1), refine=0)[0]
        what = "craig_bampton fixed-interface modes"
        k = max(min(n_modes + CLUSTER_EXTRA, lay.nx - 2), n_modes)  # extra: a cluster cut at n_modes
        vals, Phi = eigsh_shift_invert(op_solve, Mx, lay.nx, k, 0.0, what)
        _, Phi = truncated(vals, Phi, n_modes, lambda X: lay.T @ X, M, what)
    else:
        Phi = np.zeros((lay.nx, 0))
    # (3) attachment modes
    snodes = resolve_static_mode_nodes(mesh, static_modes)
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
    Kr = reduced_stiffness(K, mesh, lay.T @ V)  # on the elements' deformations: V^T Kx V cancels 1e13 on X2
    Mr = V.T @ (Mx @ V)
    Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
    rigid_x = np.zeros((lay.nx, 0))
    if iref is None:
        # exact rigid motions in CB coordinates: constraint-mode amplitudes = frame rigid motions
        Rx = _rigid_in_x(points, ifs, lay, node_dof_map(mesh, len(points)))
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
    Xs, omega2 = aligned(V @ C, omega2, lambda X: lay.T @ X, M)  # degenerate clusters rotated to the axes
    fix_signs(Xs)
    shapes = lay.T @ Xs
    q = lay.B @ Xs  # (6 n_if, nm)
    frames = []
    for i, f in enumerate(ifs):
        mm = np.zeros((6, Xs.shape[1])) if i == iref else q[6 * i : 6 * i + 6]
        frames.append(InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights, mm, is_reference=(i == iref)))
    if iref is None:
        rigid = m_orthonormalize(lay.T @ rigid_x, M)
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
        dof_map=rotational_dof_map(node_dof_map(mesh, len(points))),
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
    ifs = resolve_interfaces(mesh, interfaces, interface_kind)
    dmap = node_dof_map(mesh, len(mesh.points))
    frames = tuple(
        InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights,
                       f.A @ basis.shapes[dmap.dofs(f.nodes) if f.A.shape[1] != 3 * f.nodes.size
                                          else dmap.translations(f.nodes).ravel()], is_reference=False)
        for f in ifs
    )
    return ModalBasis(kind=basis.kind, shapes=basis.shapes, omega2=basis.omega2, rigid_modes=basis.rigid_modes,
                      interfaces=frames, reference=None, n_extra_zero_modes=basis.n_extra_zero_modes,
                      settings={**basis.settings, "interface_kinds": {f.name: f.kind for f in ifs}},
                      dof_map=basis.dof_map)



def _rigid_in_x(points, ifs, lay: CondensedLayout, dof_map) -> NDArray[np.float64]:
    """The six rigid motions (about the origin) in condensed coordinates x, shape (nx, 6)."""
    R = dof_map.rigid_body_modes(points)
    Rx = np.zeros((lay.nx, 6))
    keep = np.flatnonzero(lay.node_col >= 0)
    k = np.arange(6) < dof_map.per_node[keep][:, None]  # a kept node's x-columns follow its DOFs
    Rx[(lay.node_col[keep][:, None] + np.arange(6))[k]] = R[(dof_map.offset[keep][:, None] + np.arange(6))[k]]
    for i, c in lay.frame_col.items():
        Rx[c : c + 3] = rigid_body_modes(ifs[i].position[None, :])
        Rx[c + 3 : c + 6, 3:] = np.eye(3)
    return Rx
