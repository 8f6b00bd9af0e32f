"""Modes by direction: how much of each mode's motion goes along an axis or lies in a plane,
(near-)degenerate clusters of modes rotated to align with that direction or plane, and the modes
that move mainly along it.

Why: a square-section rod has its y and z bending modes in pairs of (nearly) equal frequency, and
an eigensolver returns any orthonormal combination of a pair: mixed shapes (58 % y and 41 % z, say).
Keeping "the in-plane ones" of such mixed shapes keeps half of each out-of-plane partner too and
drops half of each in-plane shape: a tip deflection several times too small. Within a cluster of
equal ``omega2`` every orthogonal combination is again M-orthonormal and K-diagonal, so the cluster
can first be rotated to shapes that move purely in the plane or purely out of it, then selected.

Direction measure (exact for the consistent mass): the share of mode ``k``'s kinetic energy (per
unit modal rate) in direction ``n`` is ``n^T S_kk n`` with ``S_kl = int rho phi_k phi_l^T dV``, the
data's ``invariants.modal_second_moment[k, l]``; over x, y and z the shares add up to 1 (mass-
normalized shapes). Nothing here needs the mesh.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError

__all__ = ["CLUSTER_RTOL", "align_modes", "direction_fractions", "mode_clusters", "modes_along", "rotate_modes"]

#: default relative spread of ``omega2`` within a cluster of modes that may be rotated together.
#: Looser than :data:`flexmb.fe.reduction.clusters.CLUSTER_RTOL` (1e-6) on purpose: that one acts
#: unasked on every basis and must not change the model (it merges only splits of round-off size);
#: this one acts on the user's request (``FlexibleBody(modes={"along": ...})``, :func:`align_modes`)
#: and may also join pairs split by a mesh that is not exactly symmetric, at the cost of dropping
#: their stiffness coupling, at most ``rtol omega2`` and recorded in ``settings["aligned"]``.
CLUSTER_RTOL = 1e-4
_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
_PLANES = {"xy": "z", "yx": "z", "yz": "x", "zy": "x", "xz": "y", "zx": "y"}


def _unit(value: Any, what: str) -> NDArray[np.float64]:
    try:
        n = None if isinstance(value, (str, bytes)) else np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        n = None
    if n is None or n.shape != (3,) or not np.all(np.isfinite(n)) or not np.linalg.norm(n) > 0:
        raise ModelError(f"{what}={value!r} must be 'x', 'y', 'z' or a non-zero vector (3,) in the body frame")
    return n / np.linalg.norm(n)


def direction_spec(along: Any = None, plane: Any = None) -> tuple[NDArray[np.float64], bool]:
    """``(n, in_plane)``: the unit direction and whether the motion *along* it is wanted (False: the
    motion *in the plane normal to it* is). ``along``: "x", "y", "z" or a vector; ``plane``: "xy",
    "yz", "xz" or the plane's normal vector. Exactly one of them."""
    if (along is None) == (plane is None):
        raise ModelError(f"give one of along= (a direction: 'x', 'y', 'z' or a vector) or plane= ('xy', 'yz', 'xz' "
                         f"or a normal vector); got along={along!r}, plane={plane!r}")
    if along is not None:
        return _unit(_AXES.get(along, along) if isinstance(along, str) else along, "along"), False
    if isinstance(plane, str):
        if plane.lower() not in _PLANES:
            raise ModelError(f"plane={plane!r}; give 'xy', 'yz', 'xz' or the plane's normal vector (3,)")
        return _unit(_AXES[_PLANES[plane.lower()]], "plane"), True
    return _unit(plane, "plane"), True


def _second_moments(data) -> NDArray[np.float64]:
    return np.asarray(data.invariants.modal_second_moment, dtype=float)  # (nm, nm, 3, 3)


def direction_fractions(data, along: Any = None, plane: Any = None) -> NDArray[np.float64]:
    """Share of each mode's kinetic energy along a direction or in a plane.

    Parameters
    ----------
    data : FlexibleBodyData
    along, plane : optional
        As :func:`direction_spec`; both None: the shares along x, y and z.

    Returns
    -------
    ndarray, shape (nm, 3) (both None: columns x, y, z, rows adding up to 1) or (nm,)
    """
    S = _second_moments(data)
    diag = np.einsum("kkab->kab", S) if len(S) else np.zeros((0, 3, 3))
    total = np.trace(diag, axis1=1, axis2=2)
    total = np.where(total > 0, total, 1.0)
    if along is None and plane is None:
        return np.einsum("kaa->ka", diag) / total[:, None]
    n, in_plane = direction_spec(along, plane)
    share = np.einsum("a,kab,b->k", n, diag, n) / total
    return 1.0 - share if in_plane else share


def mode_clusters(omega2: Any, rtol: float = CLUSTER_RTOL) -> list[NDArray[np.int64]]:
    """Groups of modes whose ``omega2`` agree within ``rtol`` (relative to the larger), each sorted;
    groups of one included. Chains count: a, b, c with a~b and b~c form one group."""
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.floating)) or not 0 <= rtol < 1:
        raise ModelError(f"rtol={rtol!r} must be a relative tolerance 0 <= rtol < 1, e.g. {CLUSTER_RTOL}")
    w = np.asarray(omega2, dtype=float)
    order = np.argsort(w, kind="stable")
    groups: list[list[int]] = []
    for k in order:
        if groups and abs(w[k] - w[groups[-1][-1]]) <= rtol * max(abs(w[k]), abs(w[groups[-1][-1]])):
            groups[-1].append(int(k))
        else:
            groups.append([int(k)])
    return [np.sort(np.asarray(g, dtype=np.int64)) for g in groups]


def rotate_modes(data, Q: Any):
    """The data set in the modal coordinates ``q' = Q^T q`` (shapes ``Phi Q``), Q orthogonal (nm, nm).

    Every modal quantity follows: shapes, interface maps, inertia invariants, damping ``Q^T C Q``,
    ``G``, ``H``, the preloads, their coordinates and the stresses. ``omega2`` becomes the diagonal
    of ``Q^T diag(omega2) Q``; its off-diagonal part, zero when Q mixes only modes of equal
    ``omega2``, is dropped (rotate only within clusters of :func:`mode_clusters`: the dropped part
    is then below ``rtol omega2``).
    """
    Q = np.asarray(Q, dtype=float)
    nm = data.n_modes
    if Q.shape != (nm, nm) or not np.allclose(Q.T @ Q, np.eye(nm), atol=1e-10):
        raise ModelError(f"rotate_modes: Q must be an orthogonal ({nm}, {nm}) matrix, got shape {Q.shape}")
    inv = data.invariants
    K = Q.T @ np.diag(np.asarray(data.omega2, dtype=float)) @ Q
    omega2 = np.diag(K).copy()

    def two(a):
        return None if a is None else np.einsum("...ij,ik,jl->...kl", a, Q, Q)

    def three(a):
        return None if a is None else np.einsum("abc,ai,bj,ck->ijk", a, Q, Q, Q, optimize=True)

    H = data.quartic_stiffness
    if H is not None:
        for axis in range(4):  # one index at a time: nm^5 flops
            H = np.moveaxis(np.tensordot(H, Q, axes=([axis], [0])), -1, axis)
    inv2 = replace(
        inv, modal_first_moment=Q.T @ inv.modal_first_moment,
        modal_cross_moment=np.einsum("kab,kj->jab", inv.modal_cross_moment, Q),
        modal_second_moment=np.einsum("klab,ki,lj->ijab", inv.modal_second_moment, Q, Q),
        modal_mass=Q.T @ inv.modal_mass @ Q, modal_stiffness=Q.T @ inv.modal_stiffness @ Q)
    return replace(
        data, omega2=omega2, frequencies=np.sqrt(np.maximum(omega2, 0.0)) / (2.0 * np.pi),
        mode_shapes=np.asarray(data.mode_shapes) @ Q,
        interfaces=tuple(replace(f, modal_map=np.asarray(f.modal_map) @ Q) for f in data.interfaces),
        invariants=inv2, damping=Q.T @ np.asarray(data.damping) @ Q,
        geometric_stiffness=three(data.geometric_stiffness), quartic_stiffness=H,
        preload_stiffness=two(data.preload_stiffness), preload_stiffness_residual=two(data.preload_stiffness_residual),
        preload_coordinates=None if data.preload_coordinates is None else np.asarray(data.preload_coordinates) @ Q,
        modal_stresses=None if data.modal_stresses is None else np.einsum("knv,kj->jnv", data.modal_stresses, Q),
        modal_point_stresses=None if data.modal_point_stresses is None
        else np.einsum("knv,kj->jnv", data.modal_point_stresses, Q),
        modal_beam_forces=None if data.modal_beam_forces is None
        else np.einsum("kbev,kj->jbev", data.modal_beam_forces, Q),
    )


def align_modes(data, along: Any = None, plane: Any = None, *, rtol: float = CLUSTER_RTOL):
    """The data set with every cluster of (near-)equal ``omega2`` (:func:`mode_clusters`) rotated so
    that its shapes move as purely as they can along the direction (``along``) or in / out of the
    plane (``plane``); both None: along the body axes x, y, z.

    In a cluster the rotation diagonalizes the cluster's block of ``D = n^T S n`` (S the modal second
    moments): the shapes then have their extreme shares along ``n`` (pure when the cluster's span
    holds pure shapes). For the axes, the block of ``S_xx + 2 S_yy + 4 S_zz`` is diagonalized (its
    weights tell x, y and z apart). Within a cluster the shapes come by decreasing share of what is
    asked (along the direction, in the plane, or z before y before x for the axes); modes outside
    clusters are unchanged. The largest relative stiffness coupling dropped is recorded in
    ``settings["aligned"]``.
    """
    in_plane = False
    if along is None and plane is None:
        W = np.diag([1.0, 2.0, 4.0])
    else:
        n, in_plane = direction_spec(along, plane)
        W = np.outer(n, n)
    S = _second_moments(data)
    nm = data.n_modes
    Q = np.eye(nm)
    dropped = 0.0
    w2 = np.asarray(data.omega2, dtype=float)
    for c in mode_clusters(w2, rtol):
        if c.size < 2:
            continue
        D = np.einsum("klab,ab->kl", S[np.ix_(c, c)], W)
        _, V = np.linalg.eigh(0.5 * (D + D.T))
        V = V if in_plane else V[:, ::-1]  # largest share along n first; for a plane, largest in it
        V *= np.where(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])] < 0, -1.0, 1.0)  # sign: largest entry > 0
        Q[np.ix_(c, c)] = V
        block = V.T @ np.diag(w2[c]) @ V
        off = block - np.diag(np.diag(block))
        dropped = max(dropped, float(np.abs(off).max() / max(np.abs(w2[c]).max(), np.finfo(float).tiny)))
    out = rotate_modes(data, Q)
    settings = dict(data.settings or {})
    settings["aligned"] = dict(along=_jsonable(along), plane=_jsonable(plane), rtol=float(rtol),
                               dropped_coupling=dropped)
    return replace(out, settings=settings)


def _jsonable(v: Any) -> Any:
    return v if v is None or isinstance(v, str) else np.asarray(v, dtype=float).tolist()


def modes_along(data, along: Any = None, plane: Any = None, *, min_fraction: float = 0.8) -> NDArray[np.int64]:
    """Indices of the modes whose kinetic-energy share along ``along`` (or in the plane ``plane``) is
    at least ``min_fraction``; align the clusters first (:func:`align_modes`), or the shares of
    mixed pairs decide (``FlexibleBody(modes={...})`` does both)."""
    if isinstance(min_fraction, bool) or not isinstance(min_fraction, (int, float, np.floating)) \
            or not 0 < min_fraction <= 1:
        raise ModelError(f"min_fraction={min_fraction!r} must be a share 0 < min_fraction <= 1, e.g. 0.8")
    direction_spec(along, plane)  # exactly one of them
    return np.flatnonzero(direction_fractions(data, along, plane) >= min_fraction).astype(np.int64)
