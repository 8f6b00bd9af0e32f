"""Velocity-level constraints at a time node: the constraint matrix on the body velocities, the
mass-metric projection and the joints' multipliers as body momenta (redundancy detection:
:mod:`flexmb.dynamics.redundancy`).

Everything goes through the attachments (:mod:`flexmb.dynamics.attachments`) and the body types'
mass matrices; no body type is assumed.  ``w`` is the global velocity vector (``CompiledModel.nv``).
"""
from __future__ import annotations

import logging

import numpy as np
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
