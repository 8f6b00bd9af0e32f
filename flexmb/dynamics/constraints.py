"""Velocity-level constraints at a time node: the constraint matrix on the body velocities, the
mass-metric projection, the joints' multipliers as body momenta, and redundancy detection.

Everything goes through the attachments (:mod:`flexmb.dynamics.attachments`) and the body types'
mass matrices; no body type is assumed.  ``w`` is the global velocity vector (``CompiledModel.nv``).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.dynamics.joints import drive_targets
from flexmb.dynamics.layout import COMPONENT_NAMES
from flexmb.dynamics.projection import (NodeFrames, apply_blocks, attachment_velocities, generalized,
                                        inverse_mass_blocks, joint_rates, node_projector, rate_blocks)

log = logging.getLogger(__name__)


def node_momenta(cm, st, w: NDArray) -> NDArray:
    """Momenta ``M w`` (nv,) at a node for velocities ``w (nv,)``."""
    return _per_group(cm, "momenta", st, w)


def node_velocities(cm, st, p: NDArray) -> NDArray:
    """Velocities ``M^-1 p`` (nv,) at a node for momenta ``p (nv,)``."""
    return _per_group(cm, "velocities", st, p)


def _per_group(cm, method: str, st, x: NDArray) -> NDArray:
    """``x (nv,)`` mapped by each body-type group's ``method(st, x_group)``."""
    out = np.zeros(cm.nv)
    for grp in cm.groups:
        out[grp.vel_cols] = getattr(grp, method)(st, x[grp.vel_cols])
    return out


def translational_columns(cm) -> NDArray:
    """``(nv,)`` True for the translational velocity of each body's reference point."""
    out = np.zeros(cm.nv, bool)
    out[(cm.vel_off[:, None] + np.arange(3)).reshape(-1)] = True
    return out


def velocity_constraint_matrix(cm, st, joints: NDArray | None = None):
    """Sparse velocity-level constraint matrix ``G (n_c, nv)`` on the body velocities (set-up: the
    redundancy test; the node projection never assembles it, :mod:`flexmb.dynamics.projection`).

    Row ``(j, comp)`` is the rate of the constrained relative coordinate ``comp`` of joint ``j``
    (velocity of B's origin relative to frame A, relative angular velocity; frame A components);
    for a universal joint the row ``(j, "cross")`` is the rate of ``x_A . y_B``.  ``joints``
    restricts the rows to a subset of joints.  Returns ``G`` (CSR) and the row labels.
    """
    js = np.arange(cm.nj) if joints is None else np.asarray(joints, dtype=int)
    n = cm.nj
    fr = NodeFrames(cm, st)
    Cb, Ca = rate_blocks(fr)
    mask = np.concatenate([cm.jnt_constrained, cm.jnt_universal[:, None]], axis=1)
    sel = np.zeros(n, bool)
    sel[js] = True
    mask &= sel[:, None]
    jj, cc = np.nonzero(mask)
    row_of = -np.ones((n, 7), dtype=np.int64)
    row_of[jj, cc] = np.arange(jj.size)
    rows, cols, vals = [], [], []
    for maps, C in ((fr.map_b, Cb), (fr.map_a, Ca)):
        for m, vcols, B in maps:
            blk = C[m] @ B  # (m, 7, c)
            r = np.broadcast_to(row_of[m][:, :, None], blk.shape)
            c = np.broadcast_to(vcols[:, None, :], blk.shape)
            ok = r >= 0
            rows.append(r[ok])
            cols.append(c[ok])
            vals.append(blk[ok])
    if rows:
        G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(jj.size, cm.nv))
    else:
        G = sp.csr_matrix((jj.size, cm.nv))
    labels = [(int(j), int(c) if c < 6 else "cross") for j, c in zip(jj, cc)]
    return G, labels


def project_velocities(cm, st, w0, t0):
    """Project initial velocities onto the velocity constraints in the mass metric; log the change."""
    if not cm.nj:
        return w0
    proj = node_projector(cm)
    if proj.n == 0:
        return w0
    fr = NodeFrames(cm, st)
    viol = joint_rates(fr, attachment_velocities(fr.map_a, w0, cm.nj),
                       attachment_velocities(fr.map_b, w0, cm.nj))[proj.jj, proj.cc] - proj.target(cm, t0)
    scale = max(np.abs(w0).max(initial=0.0), 1.0)
    if np.abs(viol).max() <= 1e-12 * scale:
        return w0
    wnew, _, _ = proj.project(cm, st, w0, fr, singular="lsqr")
    worst = int(np.argmax(np.abs(viol)))
    j, c = proj.labels[worst]
    log.warning(
        "initial velocities violate the joint constraints (largest: joint %r component %s, %.3e); "
        "projected onto the constraints in the mass metric (largest velocity change %.3e)",
        cm.model.joints[j].name, COMPONENT_NAMES[c] if isinstance(c, int) else c, viol[worst], np.abs(wnew - w0).max(),
    )
    return wnew


def multiplier_momenta(cm, st, lam: NDArray, frames: NodeFrames | None = None) -> NDArray:
    """The joints' multipliers ``lam (nj, 6)`` (at B's origin) as generalized momenta of the bodies
    ``Lambda (nv,)``: ``+lambda`` on body b, ``-lambda`` transported to A's origin on body a
    (:func:`~flexmb.dynamics.projection.generalized`; ``frames``: the node's, if already computed)."""
    if cm.nj == 0 or not np.any(lam):
        return np.zeros(cm.nv)
    return generalized(cm, frames if frames is not None else NodeFrames(cm, st), lam)


class NodeVelocity:
    """Result of :func:`project_node`: projected velocities ``w (nv,)``, the scheme's momenta
    ``p = pi + Lambda (nv,)`` and their velocities ``w2 = M^-1 p``, the rows' multipliers ``mu`` and
    the same as ``loc (nj, 7)`` (None when nothing was projected), the row ``labels`` and the node's
    joint ``frames`` (None without joints)."""

    __slots__ = ("w", "p", "w2", "mu", "loc", "frames", "_proj")

    def __init__(self, w, p, w2, mu, loc, proj, frames):
        self.w, self.p, self.w2, self.mu, self.loc, self._proj, self.frames = w, p, w2, mu, loc, proj, frames

    @property
    def labels(self) -> list:
        return [] if self._proj is None else self._proj.labels


def project_node(cm, st, Lam: NDArray | None = None) -> NodeVelocity:
    """Body velocities at a node: ``M w = pi + Lambda`` projected onto the velocity constraints.

    The end momenta of an index-3 scheme satisfy the velocity constraints only to O(h^2); the
    projection in the mass metric removes that component (it matters for bodies with tiny
    inertia, e.g. point masses, where 1/J amplifies it).  Output only: the state is unchanged.
    ``w = w2 - M^-1 G^T mu`` with ``mu`` the rows' multipliers, for the reactions
    (:mod:`flexmb.dynamics.reactions`); :mod:`flexmb.dynamics.projection` has the method.
    """
    if not cm.nj:
        p = st.pi if Lam is None else st.pi + Lam
        w = node_velocities(cm, st, p)
        return NodeVelocity(w, p, w, None, None, None, None)
    fr = NodeFrames(cm, st)
    if Lam is None:
        Lam = multiplier_momenta(cm, st, st.lam, fr)
    p = st.pi + Lam
    proj = node_projector(cm)
    if proj.n == 0:
        w2 = node_velocities(cm, st, p)
        return NodeVelocity(w2, p, w2, None, None, proj, fr)
    Mi = inverse_mass_blocks(cm, st)  # once per node: the velocities and the projection
    w2 = apply_blocks(cm, Mi, p)
    w, mu, loc = proj.project(cm, st, w2, fr, Mi=Mi)
    return NodeVelocity(w, p, w2, mu, loc, proj, fr)


def node_velocity(cm, st, Lam: NDArray | None = None, *, multiplier: bool = False):
    """Projected body velocities ``w (nv,)`` at a node (:func:`project_node`); with
    ``multiplier=True`` returns ``(w, mu, labels)`` (``mu`` None when nothing was projected)."""
    r = project_node(cm, st, Lam)
    return (r.w, r.mu, r.labels) if multiplier else r.w


def loop_joints(cm) -> NDArray:
    """Indices of the joints that lie on closed kinematic loops (the ground is a node).

    Joints of a tree (bridges of the body graph) can never be redundant; only the loop joints
    need a rank test.  Leaves of the graph are pruned until only cycles (and paths between them)
    remain.
    """
    from collections import deque

    n_nodes = cm.nb + 1
    ja, jb = cm.jnt_a, cm.jnt_b
    deg = np.bincount(np.concatenate([ja, jb]), minlength=n_nodes)
    incident: list[list[int]] = [[] for _ in range(n_nodes)]
    for j, (a, b) in enumerate(zip(ja.tolist(), jb.tolist())):
        incident[a].append(j)
        incident[b].append(j)
    alive = np.ones(cm.nj, bool)
    queue = deque(np.nonzero(deg == 1)[0].tolist())
    while queue:
        v = queue.popleft()
        if deg[v] != 1:
            continue
        for j in incident[v]:
            if alive[j]:
                alive[j] = False
                other = jb[j] if ja[j] == v else ja[j]
                deg[v] -= 1
                deg[other] -= 1
                if deg[other] == 1:
                    queue.append(other)
                break
    return np.nonzero(alive)[0]


def _dependent_rows(cm, st, js, tol: float):
    """Dense rank-revealing QR of the loop constraints at ``st``: (Gd, labels, cols, rank, pivots)."""
    G, labels = velocity_constraint_matrix(cm, st, joints=js)
    cols = np.unique(G.indices)
    Gd = G[:, cols].toarray()
    # translational velocity columns scaled by the model length so that rows are comparable
    Gd[:, translational_columns(cm)[cols]] *= cm.length_scale
    _, Rq, piv = sla.qr(Gd.T, mode="economic", pivoting=True)
    dg = np.abs(np.diag(Rq))
    rank = int(np.sum(dg > tol * max(dg.max(initial=0.0), 1e-300)))
    return Gd, labels, cols, rank, piv


def _generic_neighbour(cm, st, Gd, cols, seed: int = 0):
    """A configuration near ``st`` reached along a random motion that the constraints allow at
    ``st`` (first order): at a singular configuration this leaves the singularity."""
    from types import SimpleNamespace

    from flexmb import rotations as rot

    rng = np.random.default_rng(seed)
    _, sv, vt = np.linalg.svd(Gd, full_matrices=True)
    rank = int(np.sum(sv > 1e-9 * max(sv.max(initial=0.0), 1e-300)))
    null = vt[rank:]
    if null.shape[0] == 0:
        return None
    dw = np.zeros(cm.nv)
    dw[cols] = rng.standard_normal(null.shape[0]) @ null
    trans = translational_columns(cm)
    dw[trans] *= cm.length_scale  # undo the column scaling of Gd
    first6 = (cm.vel_off[:, None] + np.arange(6))
    d6 = dw[first6]
    eps = 1e-3 / max(np.abs(d6[:, 3:]).max(initial=0.0), np.abs(d6[:, :3]).max(initial=0.0) / cm.length_scale, 1e-300)
    return SimpleNamespace(x=st.x + eps * d6[:, :3], R=rot.exp(eps * d6[:, 3:]) @ st.R)


def detect_redundant(cm, st, t0: float = 0.0, tol: float = 1e-9):
    """Dependent constraint equations of the model, decided at a generic configuration.

    Only joints on closed loops are examined (rank-revealing QR with column pivoting of the
    transposed constraint matrix restricted to the loop joints and the bodies they touch).  When
    equations are dependent at ``st``, the test is repeated at a nearby configuration reached along
    a random admissible motion: if the rank is higher there, ``st`` is a singular configuration
    (e.g. a parallelogram four-bar at its change point) and only the generically dependent
    equations are reported (a WARNING names the singularity).

    Returns
    -------
    dependent : list of (joint, component)
        Labels of the dependent rows (empty if the constraints are independent).
    inconsistent : list of (joint, component)
        Dependent rows whose prescribed rate (drives) contradicts the independent rows: such a
        model has no motion at all.
    """
    if cm.nj == 0:
        return [], []
    js = loop_joints(cm)
    if js.size == 0:
        return [], []
    n_rows = int(np.count_nonzero(cm.jnt_constrained[js]) + np.count_nonzero(cm.jnt_universal[js]))
    if n_rows * 6 * (cm.nb + 1) > 2e7:
        log.warning("redundancy check skipped: %d loop constraints on %d bodies is too large for a dense test",
                    n_rows, cm.nb)
        return [], []
    Gd, labels, cols, rank, piv = _dependent_rows(cm, st, js, tol)
    if rank == Gd.shape[0]:
        return [], []
    near = _generic_neighbour(cm, st, Gd, cols)
    if near is not None:
        Gn, labels_n, cols_n, rank_n, piv_n = _dependent_rows(cm, near, js, tol)
        if rank_n > rank and labels_n == labels:
            lost = sorted(set(piv[rank:].tolist()) - set(piv_n[rank_n:].tolist()))
            log.warning(
                "the initial configuration is singular: %d constraint equation(s) are dependent there but not "
                "in the neighbouring configurations (candidates: %s); redundancy is decided at a generic configuration. "
                "The motion may bifurcate at this position", rank_n - rank,
                ", ".join(f"{cm.model.joints[labels[r][0]].name}:{labels[r][1]}" for r in lost) or "-")
            Gd, rank, piv = Gn, rank_n, piv_n
    dep = sorted(piv[rank:].tolist())
    if not dep:
        return [], []
    ind = sorted(piv[:rank].tolist())
    _, rate = drive_targets(cm, np.array([t0]))
    target = np.array([rate[j, c, 0] if isinstance(c, int) else 0.0 for j, c in labels])
    # dependent rows are combinations of the independent ones: their rates must be too
    C = np.linalg.lstsq(Gd[ind].T, Gd[dep].T, rcond=None)[0]
    mismatch = np.abs(target[dep] - C.T @ target[ind])
    scale = max(np.abs(target).max(initial=0.0), 1.0)
    inconsistent = [labels[dep[k]] for k in np.nonzero(mismatch > 1e-8 * scale)[0]]
    return [labels[r] for r in dep], inconsistent


def dropped_violation(cm, st):
    """Position-level violation of the dropped (redundant) constraint equations at a node: the largest
    ``(value, joint, component)`` relative to the assembly tolerance (lengths scaled by the model size),
    or None when nothing was dropped."""
    labels = getattr(cm, "redundant_labels", [])
    if not labels:
        return None
    tgt, _ = drive_targets(cm, np.array([st.t]))
    q = np.concatenate([st.s, st.acc], axis=1)
    worst = (0.0, None, None)
    tol = cm.model.assembly_tol
    for j, c in labels:
        if isinstance(c, int):
            v = abs(q[j, c] - tgt[j, c, 0]) / (tol * (cm.length_scale if c < 3 else 1.0))
        else:  # universal cross condition
            v = abs(st.Rr[j, 0, 1]) / tol
        if v > worst[0]:
            worst = (v, j, c)
    return worst
