"""Velocity-level constraints at a time node: the constraint matrix on the body velocities, the
mass-metric projection and the joints' multipliers as body momenta (redundancy detection:
:mod:`flexmb.dynamics.node.redundancy`).

Everything goes through the attachments (:mod:`flexmb.dynamics.elements.attachments`) and the body types'
mass matrices; no body type is assumed.  ``w`` is the global velocity vector (``CompiledModel.nv``).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.dynamics.layout import COMPONENT_NAMES
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.node.projection import (NodeFrames, body_rates, generalized, inverse_mass_blocks, node_frames,
                                             node_projector, rate_blocks)

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


def velocity_constraint_matrix(cm, st, sel=None, joints: NDArray | None = None):
    """Sparse velocity-level constraint matrix ``G (n_c, nv)`` on the body velocities (set-up: the
    redundancy test; the node projection never assembles it, :mod:`flexmb.dynamics.node.projection`).

    Row ``(j, comp)`` is the rate of the constrained relative coordinate ``comp`` of joint ``j``
    (velocity of B's origin relative to frame A, relative angular velocity; frame A components);
    for a universal joint the row ``(j, "cross")`` is the rate of ``x_A . y_B``.  ``joints``
    restricts the rows to a subset of joints; ``sel`` the kept equations
    (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set).  Returns ``G``
    (CSR) and the row labels.
    """
    sel = sel if sel is not None else Selection.full(cm)
    js = np.arange(cm.nj) if joints is None else np.asarray(joints, dtype=int)
    n = cm.nj
    fr = NodeFrames(cm, st, sel)
    Cb, Ca = rate_blocks(fr)
    mask = np.concatenate([sel.constrained, sel.universal[:, None]], axis=1)
    sel = np.zeros(n, bool)
    sel[js] = True
    mask &= sel[:, None]
    jj, cc = np.nonzero(mask)
    row_of = -np.ones((n, 7), dtype=np.int64)
    row_of[jj, cc] = np.arange(jj.size)
    rows, cols, vals = [], [], []
    for B, vcols, width, C in ((fr.Bb, fr.cb, fr.wb, Cb), (fr.Ba, fr.ca, fr.wa, Ca)):
        blk = C @ B  # (nj, 7, cw)
        r = np.broadcast_to(row_of[:, :, None], blk.shape)
        c = np.broadcast_to(vcols[:, None, :], blk.shape)
        ok = (r >= 0) & (np.arange(B.shape[-1])[None, None, :] < width[:, None, None])
        rows.append(r[ok])
        cols.append(c[ok])
        vals.append(blk[ok])
    if rows:
        G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(jj.size, cm.nv))
    else:
        G = sp.csr_matrix((jj.size, cm.nv))
    labels = [(int(j), int(c) if c < 6 else "cross") for j, c in zip(jj, cc)]
    return G, labels


def project_velocities(cm, st, w0, t0, sel=None):
    """Project initial velocities onto the velocity constraints of the selection ``sel`` (None: the
    model's full set) in the mass metric; log the change."""
    if not cm.nj:
        return w0
    proj = node_projector(cm, sel)
    if proj.n == 0:
        return w0
    fr = node_frames(cm, st, sel)  # (kept on st: the first node's output shares them)
    viol = body_rates(fr, w0)[proj.jj, proj.cc] - proj.target(cm, t0)
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
    (:func:`~flexmb.dynamics.node.projection.generalized`; ``frames``: the node's, if already computed)."""
    if cm.nj == 0 or not np.asarray(lam).any():
        return np.zeros(cm.nv)
    return generalized(cm, frames if frames is not None else node_frames(cm, st), lam)


class NodeVelocity:
    """Result of :func:`project_node`: projected velocities ``w (nv,)``, the scheme's momenta
    ``p = pi + Lambda (nv,)`` and their velocities ``w2 = M^-1 p``, the rows' multipliers ``mu`` and
    the same as ``loc (nj, 7)`` (None when nothing was projected), the row ``labels`` and the node's
    joint ``frames`` (None without joints); ``rates (nj, 7)``, the joints' rates at ``w``
    (:func:`~flexmb.dynamics.node.projection.body_rates`), and ``wrench (nj, 6)``, ``loc`` as the wrench on B
    (:func:`~flexmb.dynamics.node.projection.joint_wrench`), when the compiled node stage computed them with
    the projection (:mod:`flexmb.dynamics.node.stage`), else None (the record computes them)."""

    __slots__ = ("w", "p", "w2", "mu", "loc", "frames", "_proj", "rates", "wrench")

    def __init__(self, w, p, w2, mu, loc, proj, frames, rates=None, wrench=None):
        self.w, self.p, self.w2, self.mu, self.loc, self._proj, self.frames = w, p, w2, mu, loc, proj, frames
        self.rates, self.wrench = rates, wrench

    @property
    def labels(self) -> list:
        return [] if self._proj is None else self._proj.labels


def project_node(cm, st, Lam: NDArray | None = None, *, sel=None) -> NodeVelocity:
    """Body velocities at a node: ``M w = pi + Lambda`` projected onto the velocity constraints.

    The end momenta of an index-3 scheme satisfy the velocity constraints only to O(h^2); the
    projection in the mass metric removes that component (it matters for bodies with tiny
    inertia, e.g. point masses, where 1/J amplifies it).  Output only: the state is unchanged.
    ``w = w2 - M^-1 G^T mu`` with ``mu`` the rows' multipliers, for the reactions
    (:mod:`flexmb.dynamics.node.reactions`); :mod:`flexmb.dynamics.node.projection` has the method.
    ``sel``: the kept equations (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's
    full set).
    """
    if not cm.nj:
        p = st.pi if Lam is None else st.pi + Lam
        w = node_velocities(cm, st, p)
        return NodeVelocity(w, p, w, None, None, None, None)
    fr = node_frames(cm, st, sel)
    if Lam is None:
        Lam = multiplier_momenta(cm, st, st.lam, fr)
    p = st.pi + Lam
    proj = node_projector(cm, sel)
    if proj.n == 0:
        w2 = node_velocities(cm, st, p)
        return NodeVelocity(w2, p, w2, None, None, proj, fr)
    w, w2, mu, loc = proj.project_momenta(cm, st, p, fr, inverse_mass_blocks(cm, st))
    return NodeVelocity(w, p, w2, mu, loc, proj, fr)


def node_velocity(cm, st, Lam: NDArray | None = None, *, multiplier: bool = False, sel=None):
    """Projected body velocities ``w (nv,)`` at a node (:func:`project_node`); with
    ``multiplier=True`` returns ``(w, mu, labels)`` (``mu`` None when nothing was projected)."""
    r = project_node(cm, st, Lam, sel=sel)
    return (r.w, r.mu, r.labels) if multiplier else r.w
