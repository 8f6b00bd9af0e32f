"""Redundant (dependent) constraint equations of closed kinematic loops: which joints lie on loops,
the rank decision at a generic configuration, and the violation of the equations dropped as redundant.
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from flexmb.dynamics.constraints import translational_columns, velocity_constraint_matrix
from flexmb.dynamics.joints import drive_targets

log = logging.getLogger(__name__)


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
