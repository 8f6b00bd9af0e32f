"""Mirror-symmetry classes of a reduced basis, and class-restricted Craig-Bampton sub-bases.

A mesh symmetric under the reflection ``x_a -> 2 c_a - x_a`` (plane normal to axis ``a`` through
``c_a``) has a stiffness and a mass that commute with the mirror operator ``S_a``
(``(S_a u)(x) = D_a u(mirror(x))``, ``D_a`` flips component ``a``). Its modes split into symmetric
(``S_a u = u``) and antisymmetric (``S_a u = -u``) ones, and so does any reduced basis whose span is
mirror-invariant. For a straight beam along x with a section symmetric about y = 0 and z = 0:

=========================  ========  ========
class                      parity y  parity z
=========================  ========  ========
bending in the x-y plane     -1        +1
axial (and section modes)    +1        +1
bending in the x-z plane     +1        -1
torsion                      -1        -1
=========================  ========  ========

:func:`symmetric_sub_basis` keeps one class of a Craig-Bampton basis, exactly: in the class subspace
of the basis it rebuilds the class's interface constraint modes (the minimum-strain-energy shapes with
a prescribed interface motion, which the Craig-Bampton span contains) and its lowest fixed-interface
modes (the modes with the interfaces held), then re-diagonalizes. The result is the Craig-Bampton
basis one would get from the class's own constraint and fixed-interface modes; inertia invariants,
geometric stiffness and preloads computed from it involve no dropped shape.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.reduction.modes import InterfaceFrame, ModalBasis

__all__ = ["NotEnoughModes", "mirror_permutation", "mirror_operator", "symmetric_sub_basis"]

logger = logging.getLogger(__name__)

#: tolerance on a mirror eigenvalue (+1 or -1) for a direction of the basis to count as symmetric
_PARITY_TOL = 1e-8


class NotEnoughModes(ModelError):
    """The basis has fewer fixed-interface modes of the class than asked (compute more)."""


def mirror_permutation(points: ArrayLike, axis: int, center: float = 0.0, *, tol: float | None = None) -> NDArray[np.int64]:
    """Node of the mirror image of every node.

    Parameters
    ----------
    points : array_like, shape (n, 3)
        Node coordinates (m).
    axis : int
        0, 1 or 2: normal of the mirror plane.
    center : float
        Position of the plane on that axis (m).
    tol : float, optional
        Matching distance (default 1e-8 x the mesh size).

    Returns
    -------
    ndarray, shape (n,)
        ``perm[i]`` is the node at the mirror image of node ``i``.

    Raises
    ------
    ModelError
        If some node has no mirror image (the mesh is not symmetric).
    """
    from scipy.spatial import cKDTree

    x = np.asarray(points, dtype=float)
    size = float(np.ptp(x, axis=0).max()) or 1.0
    tol = 1e-8 * size if tol is None else float(tol)
    img = x.copy()
    img[:, axis] = 2.0 * center - img[:, axis]
    dist, perm = cKDTree(x).query(img)
    bad = np.flatnonzero(dist > tol)
    if bad.size:
        raise ModelError(
            f"mirror_permutation: {bad.size} of {len(x)} nodes have no mirror image about {'xyz'[axis]} = {center} "
            f"(e.g. node {bad[0]} at {x[bad[0]].tolist()}, nearest image {dist[bad[0]]:.3g} m away); the mesh is "
            "not symmetric about that plane. Use a symmetric mesh or do not select modes by symmetry."
        )
    return perm.astype(np.int64)


def mirror_operator(shapes: NDArray[np.float64], M, perm: NDArray[np.int64], axis: int,
                    dof_map=None) -> NDArray[np.float64]:
    """The mirror in the coordinates of an M-orthonormal basis: ``S = Phi^T M (S_a Phi)``.

    Translations mirror as vectors (component ``axis`` flips); rotations, at the nodes of shells and
    beams, as pseudovectors: ``theta -> -D_a theta``, the two components *other* than ``axis`` flip
    (a rotation about the mirror normal reverses, one about an in-plane axis too, except its
    component along the normal).

    Parameters
    ----------
    shapes : ndarray, shape (n_dofs, nm)
        Node-major shapes, ``Phi^T M Phi = I`` (3 DOFs per node, or ``dof_map``).
    M : sparse matrix, shape (n_dofs, n_dofs)
    perm : ndarray, shape (n,)
        From :func:`mirror_permutation`.
    axis : int
    dof_map : DofMap, optional
        The layout of a model with rotations (``mesh.dof_map``, ``basis.dof_map``).

    Returns
    -------
    ndarray, shape (nm, nm)
        Symmetric; orthogonal with eigenvalues +-1 where the span is mirror-invariant.
    """
    nm = shapes.shape[1]
    if dof_map is None or not dof_map.has_rotations:
        if shapes.shape[0] != 3 * perm.size:
            raise ModelError(
                f"mirror_operator: the shapes have {shapes.shape[0]} rows, not 3 per node ({3 * perm.size}): for a "
                "model with shells or beams give dof_map=mesh.dof_map (its rotations mirror as pseudovectors).")
        P = shapes.reshape(-1, 3, nm)[perm].copy()
        P[:, axis, :] *= -1.0
        P = P.reshape(-1, nm)
    else:
        rot = dof_map.per_node == 6
        if np.any(rot[perm] != rot):
            raise ModelError("mirror_operator: a node with rotations mirrors onto one without: the model's shells and "
                             "beams are not symmetric about that plane.")
        P = np.empty_like(shapes)
        t_src, t_dst = dof_map.translations(perm), dof_map.translations()
        flip = np.arange(3) == axis
        P[t_dst.ravel()] = shapes[t_src.ravel()] * np.tile(np.where(flip, -1.0, 1.0), len(perm))[:, None]
        nodes = dof_map.rotational_nodes
        r_src, r_dst = dof_map.rotations(perm[nodes]), dof_map.rotations(nodes)
        P[r_dst.ravel()] = shapes[r_src.ravel()] * np.tile(np.where(flip, 1.0, -1.0), len(nodes))[:, None]
    S = shapes.T @ (M @ P)
    return 0.5 * (S + S.T)


def _class_subspace(ops: list[tuple[NDArray[np.float64], int]], nm: int) -> NDArray[np.float64]:
    """Orthonormal Z (nm, k) spanning the directions with ``S Z = parity Z`` for every (S, parity)."""
    Z = np.eye(nm)
    for S, parity in ops:
        lam, V = np.linalg.eigh(Z.T @ S @ Z)
        Z = Z @ V[:, np.abs(lam - parity) < _PARITY_TOL]
    return Z


def symmetric_sub_basis(
    basis: ModalBasis,
    M,
    points: ArrayLike,
    parities: Mapping[int, int],
    n_modes: int,
    *,
    centers: Mapping[int, float] | None = None,
    constraint_modes: bool = True,
    label: str = "class",
    dof_map=None,
) -> ModalBasis:
    """Keep the shapes of one mirror-symmetry class of a (Craig-Bampton) basis.

    Parameters
    ----------
    basis : ModalBasis
        M-orthonormal, K-diagonal (as returned by :func:`flexmb.fe.reduction.craig_bampton` or
        :func:`flexmb.fe.reduction.clamped_modes`).
    M : sparse matrix, shape (n_dofs, n_dofs)
        Consistent mass of the mesh.
    points : array_like, shape (n, 3)
        Node coordinates (m).
    parities : dict axis -> +1 or -1
        Required parity under the mirror normal to each axis (see the module table).
    n_modes : int
        Number of shapes to keep. With ``constraint_modes``: the class's interface constraint modes
        (their number r is the rank of the class's interface motions) plus the ``n_modes - r``
        lowest fixed-interface modes of the class; otherwise the ``n_modes`` lowest modes of the
        reduced model restricted to the class.
    centers : dict axis -> float, optional
        Mirror plane positions (default 0).
    constraint_modes : bool
        See ``n_modes``.
    label : str
        Class name for messages and ``settings``.
    dof_map : DofMap, optional
        Default ``basis.dof_map``: the layout of a model with shells or beams, whose rotations mirror
        as pseudovectors (:func:`mirror_operator`).

    Returns
    -------
    ModalBasis
        Same kind, interfaces and reference; shapes M-orthonormal, K-diagonal, ascending.

    Raises
    ------
    NotEnoughModes
        The basis holds fewer fixed-interface modes of the class than needed.
    ModelError
        ``n_modes`` smaller than the number of constraint modes; mesh not symmetric.
    """
    Phi = basis.shapes
    nm = Phi.shape[1]
    centers = dict(centers or {})
    ops = []
    for axis, parity in parities.items():
        perm = mirror_permutation(points, axis, centers.get(axis, 0.0))
        ops.append((mirror_operator(Phi, M, perm, axis, dof_map if dof_map is not None else basis.dof_map),
                    int(parity)))
    Z = _class_subspace(ops, nm)
    W = np.asarray(basis.omega2, dtype=float)
    KZ = Z.T @ (W[:, None] * Z)
    moving = [f for f in basis.interfaces if not f.is_reference]
    B = np.vstack([f.modal_map for f in moving]) @ Z if moving else np.zeros((0, Z.shape[1]))
    r = 0
    if constraint_modes and B.size:
        U, sv, Vt = np.linalg.svd(B, full_matrices=True)
        r = int(np.count_nonzero(sv > 1e-8 * sv.max())) if sv.size and sv.max() > 0 else 0
    if constraint_modes and r:
        Br = Vt[:r]  # independent interface-motion combinations of the class (rows)
        N = Vt[r:].T  # class directions with the interfaces held
        if n_modes < r:
            raise ModelError(
                f"symmetric_sub_basis: {label}: n_modes = {n_modes} is fewer than the {r} interface constraint "
                f"modes of the class; ask for at least {r}."
            )
        # minimum-energy shapes with unit interface motion: c = K^-1 Br^T (Br K^-1 Br^T)^-1
        Kinv_Bt = np.linalg.solve(KZ, Br.T)
        C = Kinv_Bt @ np.linalg.inv(Br @ Kinv_Bt)
    else:
        N = np.eye(Z.shape[1])
        C = np.zeros((Z.shape[1], 0))
    n_fixed = n_modes - C.shape[1]
    lam, Y = np.linalg.eigh(N.T @ KZ @ N)
    if n_fixed > len(lam):
        raise NotEnoughModes(
            f"symmetric_sub_basis: {label}: the basis holds {len(lam)} fixed-interface modes of the class, "
            f"{n_fixed} needed; compute more fixed-interface modes."
        )
    V = np.hstack([C, N @ Y[:, :n_fixed]])
    omega2, Q = sla.eigh(V.T @ KZ @ V, V.T @ V)
    T = Z @ V @ Q  # (nm, n_modes), orthonormal columns in basis coordinates
    shapes = Phi @ T
    frames = tuple(
        InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights, f.modal_map @ T, is_reference=f.is_reference)
        for f in basis.interfaces
    )
    logger.info("symmetric_sub_basis: %s: %d of %d shapes (%d constraint + %d fixed-interface)",
                label, T.shape[1], nm, C.shape[1], n_fixed)
    settings = dict(basis.settings)
    settings.update(symmetry_class=label, parities={str(k): int(v) for k, v in parities.items()},
                    n_constraint_modes=int(C.shape[1]), n_fixed_interface_modes=int(n_fixed),
                    n_shapes_before_selection=int(nm))
    return ModalBasis(kind=basis.kind, shapes=shapes, omega2=omega2, rigid_modes=basis.rigid_modes,
                      interfaces=frames, reference=basis.reference,
                      n_extra_zero_modes=basis.n_extra_zero_modes, settings=settings, dof_map=basis.dof_map)


def concatenate_bases(bases: list[ModalBasis]) -> ModalBasis:
    """Join M- and K-orthogonal bases of the same model (e.g. different symmetry classes), ascending."""
    shapes = np.hstack([b.shapes for b in bases])
    omega2 = np.concatenate([b.omega2 for b in bases])
    order = np.argsort(omega2, kind="stable")
    b0 = bases[0]
    frames = tuple(
        InterfaceFrame(f.name, f.nodes, f.position, f.kind, f.weights,
                       np.hstack([b.interfaces[i].modal_map for b in bases])[:, order], is_reference=f.is_reference)
        for i, f in enumerate(b0.interfaces)
    )
    settings = dict(b0.settings)
    settings.update(symmetry_class="+".join(str(b.settings.get("symmetry_class", "?")) for b in bases),
                    n_constraint_modes=int(sum(b.settings.get("n_constraint_modes", 0) for b in bases)),
                    n_fixed_interface_modes=int(sum(b.settings.get("n_fixed_interface_modes", 0) for b in bases)))
    return ModalBasis(kind=b0.kind, shapes=shapes[:, order], omega2=omega2[order], rigid_modes=b0.rigid_modes,
                      interfaces=frames, reference=b0.reference, n_extra_zero_modes=b0.n_extra_zero_modes,
                      settings=settings, dof_map=b0.dof_map)
