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
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.joints import drive_targets
from flexmb.dynamics.layout import COMPONENT_NAMES

log = logging.getLogger(__name__)


def node_momenta(cm, st, w: NDArray) -> NDArray:
    """Momenta ``M w`` (nv,) at a node for velocities ``w (nv,)``."""
    out = np.zeros(cm.nv)
    for grp in cm.groups:
        out[grp.vel_cols] = grp.momenta(st, w[grp.vel_cols])
    return out


def node_velocities(cm, st, p: NDArray) -> NDArray:
    """Velocities ``M^-1 p`` (nv,) at a node for momenta ``p (nv,)``."""
    out = np.zeros(cm.nv)
    for grp in cm.groups:
        out[grp.vel_cols] = grp.velocities(st, p[grp.vel_cols])
    return out


def translational_columns(cm) -> NDArray:
    """``(nv,)`` True for the translational velocity of each body's reference point."""
    out = np.zeros(cm.nv, bool)
    out[(cm.vel_off[:, None] + np.arange(3)).reshape(-1)] = True
    return out


def velocity_constraint_matrix(cm, st, joints: NDArray | None = None):
    """Sparse velocity-level constraint matrix ``G (n_c, nv)`` on the body velocities.

    Row ``(j, comp)`` is the rate of the constrained relative coordinate ``comp`` of joint ``j``
    (velocity of B's origin relative to frame A, relative angular velocity; frame A components);
    for a universal joint the row ``(j, "cross")`` is the rate of ``x_A . y_B``.  ``joints``
    restricts the rows to a subset of joints.  Returns ``G`` (CSR) and the row labels.
    """
    js = np.arange(cm.nj) if joints is None else np.asarray(joints, dtype=int)
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    RAt = np.swapaxes(Ra, 1, 2)
    d = xb - xa
    n = cm.nj
    # d(qdot)/d(nu_b), d(qdot)/d(nu_a): (nj, 7, 6)
    Cb = np.zeros((n, 7, 6))
    Ca = np.zeros((n, 7, 6))
    Cb[:, :3, :3] = RAt
    Cb[:, 3:6, 3:] = RAt
    Ca[:, :3, :3] = -RAt
    Ca[:, :3, 3:] = RAt @ rot.skew(d)
    Ca[:, 3:6, 3:] = -RAt
    ncross = rot.cross(Ra[:, :, 0], Rb[:, :, 1])
    Cb[:, 6, 3:] = ncross
    Ca[:, 6, 3:] = -ncross
    mask = np.concatenate([cm.jnt_constrained, cm.jnt_universal[:, None]], axis=1)
    sel = np.zeros(n, bool)
    sel[js] = True
    mask &= sel[:, None]
    jj, cc = np.nonzero(mask)
    row_of = -np.ones((n, 7), dtype=np.int64)
    row_of[jj, cc] = np.arange(jj.size)
    rows, cols, vals = [], [], []
    for att, C in ((cm.att_b, Cb), (cm.att_a, Ca)):
        for m, vcols, B in att.node_velocity_map(cm, st):
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


def inverse_mass(cm, st) -> sp.csr_matrix:
    """Sparse block-diagonal inverse mass matrix ``(nv, nv)``."""
    rows, cols, vals = [], [], []
    for grp in cm.groups:
        Mi = grp.inverse_mass_blocks(st)
        vc = grp.vel_cols
        rows.append(np.broadcast_to(vc[:, :, None], Mi.shape).reshape(-1))
        cols.append(np.broadcast_to(vc[:, None, :], Mi.shape).reshape(-1))
        vals.append(Mi.reshape(-1))
    if not rows:
        return sp.csr_matrix((cm.nv, cm.nv))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(cm.nv, cm.nv))


def velocity_constraints(cm, st, t: float):
    """Velocity constraint matrix ``G`` with its row labels and right-hand side (drive rates at ``t``)."""
    G, labels = velocity_constraint_matrix(cm, st)
    if G.shape[0] == 0:
        return G, labels, np.zeros(0)
    _, rate = drive_targets(cm, np.array([t]))
    jl = np.array([j for j, _ in labels])
    cl = np.array([c if isinstance(c, int) else 0 for _, c in labels])
    target = np.where([isinstance(c, int) for _, c in labels], rate[jl, cl, 0], 0.0)
    return G, labels, target


def mass_metric_correction(cm, st, G, violation, *, singular: str = "lsqr", multiplier: bool = False):
    """Velocity change ``M^-1 G^T mu`` (nv,), ``mu = (G M^-1 G^T)^-1 violation``, that removes
    ``violation`` with the least kinetic energy (``(dw, mu)`` with ``multiplier=True``).
    ``singular``: ``"lsqr"`` (least squares when dependent rows remain) or ``"none"`` (return None)."""
    Mi = inverse_mass(cm, st)
    A = (G @ Mi @ G.T).tocsc()
    try:
        mu = spla.splu(A).solve(violation)
    except RuntimeError:  # dependent rows not yet removed
        if singular == "none":
            return None
        mu = spla.lsqr(A, violation, atol=1e-14, btol=1e-14)[0]
    dw = Mi @ (G.T @ mu)
    return (dw, mu) if multiplier else dw


def project_velocities(cm, st, w0, t0):
    """Project initial velocities onto the velocity constraints in the mass metric; log the change."""
    G, labels, target = velocity_constraints(cm, st, t0)
    if G.shape[0] == 0:
        return w0
    viol = G @ w0 - target
    scale = max(np.abs(w0).max(initial=0.0), 1.0)
    if np.abs(viol).max() <= 1e-12 * scale:
        return w0
    wnew = w0 - mass_metric_correction(cm, st, G, viol)
    worst = int(np.argmax(np.abs(viol)))
    j, c = labels[worst]
    log.warning(
        "initial velocities violate the joint constraints (largest: joint %r component %s, %.3e); "
        "projected onto the constraints in the mass metric (largest velocity change %.3e)",
        cm.model.joints[j].name, COMPONENT_NAMES[c] if isinstance(c, int) else c, viol[worst], np.abs(wnew - w0).max(),
    )
    return wnew


def multiplier_momenta(cm, st, lam: NDArray) -> NDArray:
    """The joints' multipliers ``lam (nj, 6)`` (at B's origin) as generalized momenta of the bodies
    ``Lambda (nv,)``: ``+lambda`` on body b, ``-lambda`` transported to A's origin on body a."""
    out = np.zeros(cm.nv)
    if cm.nj == 0:
        return out
    xa, _ = cm.att_a.node_pose(cm, st)
    xb, _ = cm.att_b.node_pose(cm, st)
    Lf = lam[:, :3]
    wa = -np.concatenate([Lf, lam[:, 3:] + rot.cross(xb - xa, Lf)], axis=1)
    cm.att_b.node_generalized(cm, st, lam, out)
    cm.att_a.node_generalized(cm, st, wa, out)
    return out


def node_velocity(cm, st, Lam: NDArray | None = None, *, multiplier: bool = False):
    """Body velocities at a node: ``M w = pi + Lambda`` projected onto the velocity constraints.

    The end momenta of an index-3 scheme satisfy the velocity constraints only to O(h^2); the
    projection in the mass metric removes that component (it matters for bodies with tiny
    inertia, e.g. point masses, where 1/J amplifies it).  Output only: the state is unchanged.
    With ``multiplier=True`` returns ``(w, mu, labels)``: the projection ``w = w2 - M^-1 G^T mu``
    and its rows (``mu`` None when nothing was projected), for the reactions
    (:mod:`flexmb.dynamics.reactions`).
    """

    if Lam is None:
        Lam = multiplier_momenta(cm, st, st.lam)
    w = node_velocities(cm, st, st.pi + Lam)
    if not cm.nj:
        return (w, None, []) if multiplier else w
    G, labels, target = velocity_constraints(cm, st, st.t)
    if G.shape[0] == 0:
        return (w, None, labels) if multiplier else w
    out = mass_metric_correction(cm, st, G, G @ w - target, singular="none", multiplier=True)
    if out is None:
        return (w, None, labels) if multiplier else w
    dw, mu = out
    return (w - dw, mu, labels) if multiplier else w - dw


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
