"""The impact solve at frozen positions: the impulse-momentum balance of the whole constrained system.

With the body velocities ``w- (nv,)`` before the impact (on the joints' velocity constraints), the
generalized mass ``M`` (every body type's, the modal block of flexible bodies included), the joints'
velocity constraints ``G w = target`` (:mod:`flexmb.dynamics.node.projection`: the rows of the node
projection), the contacts' normal-velocity rows ``J (m, nv)`` (:mod:`.geometry`) and a prescribed
generalized impulse ``p (nv,)``::

    M (w+ - w-) = p + J^T P + G^T Lambda,     G w+ = target,
    v+ = J w+ >= -e v-,   P >= 0,   P . (v+ + e v-) = 0    (Newton's law, per contact)

with ``v- = J w-``.  The joints' impulses ``Lambda`` are eliminated by the node projection
``w = Pi(w2)``: ``Pi(w2) = w2 - M^-1 G^T mu``, ``(G M^-1 G^T) mu = G w2 - target`` (one
implementation: :meth:`~flexmb.dynamics.node.projection.NodeProjector.project`), so that
``w+ = Pi(w- + M^-1 (p + J^T P))`` and the contacts see ``v+ = v0 + D P`` with ``v0 = J Pi(w- + M^-1 p)``
and the Delassus matrix ``D = J (dPi) M^-1 J^T`` (``m x m``, symmetric positive semi-definite; its
columns are projections of unit contact impulses).  The complementarity problem is the convex QP
``min 1/2 P^T D P + q^T P, P >= 0`` with ``q = v0 + e v-``, solved as the non-negative least squares
problem dual to it (the least-distance problem ``min |u|, G u >= -q``, ``G G^T = D``, Lawson and Hanson's
NNLS form: ``scipy.optimize.nnls``, an active-set method, finite; exact for a singular ``D``).  The joints' impulses are the projection's
multipliers of the final ``w+`` (force; moment at B's origin; inertial), written in the joint's
frame A like the joint reactions.

Energy: ``T+ - T- = (w+ + w-)^T M (w+ - w-) / 2 = W_p + W_drives - sum_k P_k (v+_k + v-_k) / 2``, the
last sum the loss ``(1 - e) P |v-| / 2 >= 0`` per contact (Kelvin); a driven joint's impulse does work
``target . Lambda``.  Without drives the balance ``T- + W_p = T+ + loss`` holds to round-off.

Friction (a contact with ``mu > 0`` in the impact): its two tangential rows ``T (2, nv)`` join its normal
row, ``D`` is the Delassus matrix of all rows and the impulses solve Newton's law with Coulomb's cone
(:mod:`.friction`); the loss per contact is ``-P . (v+ + v-) / 2`` over its three rows.  Newton's
kinematic restitution with Coulomb friction can *create* energy when the tangential and normal rows are
coupled (``D_nt != 0``: a rod, a pendulum striking a rough wall; Kane and Levinson 1985, Stronge 1990):
for ``e = 0`` the loss is ``-P . v+ + P^T D P / 2 >= 0`` (``P_n v_n+ = 0``, ``P_t . v_t+ <= 0``), but for
``e > 0`` the normal term ``e P_n |v_n-|`` can outweigh the dissipation.  Guard: a contact loss below
``-1e-12 (T- + |W_p|)`` (less the work ``P_n |bias|`` of a resting contact's position bias) raises :class:`~flexmb.errors.ConvergenceError` naming the contacts, the energy
created and the fix (lower the restitution or the friction); an impact never adds energy silently.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize as sopt
from numpy.typing import NDArray

from flexmb.dynamics.impact.geometry import contact_points, point_label
from flexmb.dynamics.impact.friction import FrictionFailure, coulomb_impulses, coulomb_violation
from flexmb.dynamics.node.constraints import node_momenta, node_velocities
from flexmb.dynamics.node.projection import body_rates, joint_wrench, node_frames, node_projector
from flexmb.errors import ConvergenceError

#: complementarity residual accepted, relative to the largest approach speed
LCP_TOL = 1e-9


@dataclass
class ImpactOutcome:
    """What one impact solve gives: velocities ``w_minus``, ``w_plus (nv,)``; the contacts solved
    ``contacts (k,)`` (indices into the model's), their normal impulses ``P (k,)`` [N s], normal
    velocities before and after ``v_minus``, ``v_plus (k,)`` [m/s] and the Delassus matrix ``D (k, k)``
    [m/(N s)] (friction: the Delassus matrix of every row); the tangential impulses ``P_t (k, 2)`` [N s] and
    slips before and after ``vt_minus``, ``vt_plus (k, 2)`` [m/s] along the tangents ``tangent (k, 2, 3)``
    (zero for frictionless contacts); the joints' impulses ``joint_impulse (nj, 6)`` (force [N s]; moment [N m s] about B's
    origin; frame A components); kinetic energies ``T_minus``, ``T_plus`` [J], the work of the
    prescribed impulses ``work`` [J] and the contacts' loss ``loss (k,)`` [J]."""

    w_minus: NDArray
    w_plus: NDArray
    contacts: NDArray
    P: NDArray
    v_minus: NDArray
    v_plus: NDArray
    D: NDArray
    joint_impulse: NDArray
    T_minus: float
    T_plus: float
    work: float
    loss: NDArray = field(default_factory=lambda: np.zeros(0))
    #: ``max |G w+ - target|`` over the joints' velocity constraints (translations [m/s] x 1 / model
    #: size, so that all rows are rates [1/s])
    constraint_residual: float = 0.0
    P_t: NDArray | None = None
    vt_minus: NDArray | None = None
    vt_plus: NDArray | None = None
    tangent: NDArray | None = None

    def __post_init__(self):
        k = len(self.contacts)
        for key, shape in (("P_t", (k, 2)), ("vt_minus", (k, 2)), ("vt_plus", (k, 2)), ("tangent", (k, 2, 3))):
            if getattr(self, key) is None:
                setattr(self, key, np.zeros(shape))

    @property
    def friction_impulse(self) -> NDArray:
        """``(k, 3)`` [N s]: the tangential impulses as inertial vectors (on side b)."""
        return np.einsum("kj,kji->ki", self.P_t, self.tangent)

    @property
    def energy_lost(self) -> float:
        return float(self.loss.sum())

    @property
    def energy_residual(self) -> float:
        """``T- + W_p - T+ - loss`` [J] (zero to round-off without driven joints)."""
        return float(self.T_minus + self.work - self.T_plus - self.loss.sum())


def projected(cm, st, w2: NDArray, sel=None):
    """``(w, joint impulses (nj, 6))``: ``w2 (nv,)`` projected on the joints' velocity constraints kept by
    ``sel`` (the run's :class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set)
    and the projection's joint impulses (force; moment about B's origin; frame A components)."""
    if not cm.nj:
        return w2, np.zeros((0, 6))
    proj = node_projector(cm, sel)
    if proj.n == 0:
        return w2, np.zeros((cm.nj, 6))
    fr = node_frames(cm, st)
    w, mu, loc = proj.project(cm, st, w2, fr)
    if mu is None:
        raise ConvergenceError(f"impact at t = {st.t:.6g} s: the joints' velocity constraints cannot be solved "
                               f"(a singular configuration); no impact solved", time=st.t)
    wrench = -joint_wrench(fr, loc)  # the impulse on B: -G^T mu (flexmb.dynamics.node.reactions)
    RaT = np.swapaxes(fr.Ra, 1, 2)
    return w, np.concatenate([np.einsum("nij,nj->ni", RaT, wrench[:, :3]),
                              np.einsum("nij,nj->ni", RaT, wrench[:, 3:])], axis=1)


def constraint_residual(cm, st, w: NDArray, sel=None) -> float:
    """``max |G w - target|`` of the joints' velocity constraints kept by ``sel`` at ``st`` (translational
    rows divided by the model size: rates [1/s])."""
    if not cm.nj:
        return 0.0
    proj = node_projector(cm, sel)
    if proj.n == 0:
        return 0.0
    viol = body_rates(node_frames(cm, st), w)[proj.jj, proj.cc] - proj.target(cm, st.t)
    return float(np.max(np.abs(np.where(proj.cc < 3, viol / cm.length_scale, viol))))


def kinetic(cm, st, w: NDArray) -> float:
    return 0.5 * float(w @ node_momenta(cm, st, w))


def delassus(cm, st, J: NDArray, w0: NDArray, sel=None) -> NDArray:
    """``D = J dPi M^-1 J^T (k, k)``: column ``c`` the normal velocities of the constrained system's
    response to a unit impulse of contact ``c`` (the projection is affine: differences of projections
    about ``w0``, the impulse scaled to ``w0``'s magnitude; ``sel``: the kept joint constraints)."""
    k = J.shape[0]
    D = np.empty((k, k))
    vmag = max(float(np.abs(w0).max(initial=0.0)), 1e-3)
    for c in range(k):  # one projection per contact (a handful: impacts are rare)
        dw = node_velocities(cm, st, J[c])
        s = vmag / max(float(np.abs(dw).max()), 1e-300)
        D[:, c] = J @ (projected(cm, st, w0 + s * dw, sel)[0] - w0) / s
    return 0.5 * (D + D.T)


def newton_lcp(D: NDArray, q: NDArray) -> NDArray:
    """``P >= 0`` with ``y = D P + q >= 0``, ``P . y = 0`` for ``D`` symmetric positive semi-definite:
    the minimum of ``1/2 P^T D P + q^T P`` over ``P >= 0``, as the dual of the least-distance problem
    ``min 1/2 |u|^2, G u >= -q`` with ``G G^T = D`` (``G = V sqrt(lam)``, null directions of ``D`` dropped),
    solved by one NNLS (Lawson and Hanson 1974, ch. 23): ``z >= 0`` minimizing ``|E z - f|``, ``E = (G^T; -q^T)``,
    ``f = (0, .., 0, 1)``, then ``P = z / (1 + q . z)``.  Exact also for a singular ``D`` whose ``q`` has a part
    outside its range (dependent contacts with unequal targets: the nodes of a face, a resting contact's
    bias), which NNLS on ``D = A^T A`` alone would drop; ``D`` and ``q`` are scaled to unit size first."""
    if q.size == 0:
        return np.zeros(0)
    lam, V = np.linalg.eigh(D)
    dmax, qmax = max(float(lam.max()), 1e-300), max(float(np.abs(q).max()), 1e-300)
    keep = lam > 1e-12 * dmax
    G = V[:, keep] * np.sqrt(lam[keep] / dmax)  # (k, r), G G^T = D / dmax
    E = np.vstack([G.T, -q[None, :] / qmax])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    z, _ = sopt.nnls(E, f, maxiter=50 * max(q.size, 1))
    s = 1.0 + float(q @ z) / qmax
    if not s > 1e-12:  # infeasible targets (cannot happen for contacts that can all separate): no impulse
        return np.zeros(q.size)
    return z / s * (qmax / dmax)


def solve_impact(cm, st, w_minus: NDArray, contacts, J: NDArray, e: NDArray, p: NDArray | None = None,
                 bias: NDArray | None = None, friction: tuple | None = None, sel=None) -> ImpactOutcome:
    """The impact at node ``st``: velocities ``w_minus (nv,)`` before, the contacts ``contacts (k,)`` with
    rows ``J (k, nv)`` and restitution ``e (k,)``, a prescribed generalized impulse ``p (nv,)``; ``bias
    (k,)``: Newton's law shifted to ``v+ >= -e v- - bias`` (a resting contact's penetration closed over
    one element, :mod:`flexmb.dynamics.impact.march`); ``friction``: ``(mu (k,), T (k, 2, nv), t (k, 2,
    3))`` the coefficients, tangential rows and tangents (:meth:`~.geometry.ContactSet.tangent_rows`),
    None or all ``mu = 0``: frictionless; ``sel``: the joint constraints the run keeps
    (:class:`~flexmb.dynamics.node.selection.Selection`, None: the model's full set)."""
    p = np.zeros(cm.nv) if p is None else p
    contacts = np.asarray(contacts, dtype=np.int64)
    k = len(contacts)
    w0, lam0 = projected(cm, st, w_minus + node_velocities(cm, st, p), sel)
    v_minus = J @ w_minus
    P = np.zeros(k)
    D = np.zeros((k, k))
    rough = friction is not None and k and bool(np.any(friction[0] > 0))
    Pt, T, tang = np.zeros((k, 2)), np.zeros((k, 2, cm.nv)), np.zeros((k, 2, 3))
    if rough:
        mu, T, tang = friction
        P, Pt, D = _rough(cm, st, w0, contacts, J, e, v_minus, bias, mu, T, sel)
        G = J.T @ P + np.einsum("kjv,kj->v", T, Pt)
        w_plus, lam = projected(cm, st, w_minus + node_velocities(cm, st, p + G), sel)
    elif k:
        D = delassus(cm, st, J, w0, sel)
        q = J @ w0 + e * v_minus + (0.0 if bias is None else bias)
        P = newton_lcp(D, q)
        y = D @ P + q
        scale = max(float(np.abs(v_minus).max()), float(np.abs(q).max()), 1e-300)
        bad = (y < -LCP_TOL * scale) | (np.abs(P * y) > LCP_TOL * scale * np.maximum(np.abs(P), 1e-300))
        if bad.any():
            k = int(np.nonzero(bad)[0][0])
            raise ConvergenceError(
                f"impact at t = {st.t:.6g} s: Newton's law could not be met at contact {point_label(cm.model, contacts[k])} "
                f"(normal velocity after {y[k] - e[k] * v_minus[k]:.3g} m/s against {-e[k] * v_minus[k]:.3g} required, "
                f"impulse {P[k]:.3g} N s): the contacts are dependent (a rank-deficient Delassus matrix) in a way "
                f"the impulses cannot satisfy", time=st.t)
        # one projection of the whole balance: the joints' impulses of the prescribed and contact impulses
        w_plus, lam = projected(cm, st, w_minus + node_velocities(cm, st, p + J.T @ P), sel)
    else:
        w_plus, lam = w0, lam0
    v_plus = J @ w_plus
    vt_minus, vt_plus = T @ w_minus, T @ w_plus
    T_minus, T_plus = kinetic(cm, st, w_minus), kinetic(cm, st, w_plus)
    work = 0.5 * float(p @ (w_plus + w_minus))
    loss = -0.5 * (P * (v_plus + v_minus) + np.einsum("kj,kj->k", Pt, vt_plus + vt_minus))
    if rough:  # the position bias (a resting contact's penetration closed) may add P_n |bias|
        _energy_guard(cm, st, contacts, loss + (0.0 if bias is None else P * np.maximum(-bias, 0.0)), T_minus, work, e)
    return ImpactOutcome(w_minus=w_minus, w_plus=w_plus, contacts=contacts, P=P, v_minus=v_minus, v_plus=v_plus, D=D,
                         joint_impulse=lam, T_minus=T_minus, T_plus=T_plus, work=work, loss=loss,
                         constraint_residual=constraint_residual(cm, st, w_plus, sel), P_t=Pt, vt_minus=vt_minus,
                         vt_plus=vt_plus, tangent=tang)


def _rough(cm, st, w0, contacts, J, e, v_minus, bias, mu, T, sel=None):
    """``(P (k,), P_t (k, 2), D (r, r))``: Newton's law with Coulomb friction (:mod:`.friction`), the rows
    stacked per contact (normal, then the tangential ones when ``mu > 0``)."""
    k = len(contacts)
    rows_, blocks, target = [], [], []
    for c in range(k):
        start = len(rows_)
        rows_.append(J[c])
        target.append(e[c] * v_minus[c] + (0.0 if bias is None else bias[c]))
        if mu[c] > 0:
            rows_ += [T[c, 0], T[c, 1]]
            target += [0.0, 0.0]
        blocks.append(slice(start, len(rows_)))
    A = np.array(rows_)
    D = delassus(cm, st, A, w0, sel)
    b = A @ w0 + np.array(target)
    try:
        Pall = coulomb_impulses(D, b, blocks, mu)
        bad = coulomb_violation(D, b, Pall, blocks, mu)
    except FrictionFailure as err:
        bad = (err.k, err.why)
    if bad is not None:
        c = point_label(cm.model, contacts[bad[0]]) if bad[0] >= 0 else "#-1"
        raise ConvergenceError(f"impact at t = {st.t:.6g} s: Newton's and Coulomb's laws could not be met at contact "
                               f"{c} (friction {mu[bad[0]]:.6g}): {bad[1]}; no impact solved", time=st.t)
    P, Pt = np.zeros(k), np.zeros((k, 2))
    for c, sl in enumerate(blocks):
        P[c] = Pall[sl][0]
        if sl.stop - sl.start == 3:
            Pt[c] = Pall[sl][1:]
    return P, Pt, D


def _energy_guard(cm, st, contacts, loss, T_minus, work, e) -> None:
    """ConvergenceError when the contacts created energy (Newton + Coulomb, solve module doc)."""
    if loss.sum() >= -1e-12 * (abs(T_minus) + abs(work) + 1e-300):
        return
    points = contact_points(cm.model)
    names = [point_label(cm.model, c, points) for c in contacts]
    worst = int(np.argmin(loss))
    raise ConvergenceError(
        f"impact at t = {st.t:.6g} s: Newton's restitution with Coulomb friction would create {-loss.sum():.6g} J "
        f"(contacts {', '.join(names)}; {names[worst]}: restitution {e[worst]:.3g}, energy {-loss[worst]:.6g} J created; kinetic "
        f"energy before {T_minus:.6g} J): the known inconsistency of Newton's kinematic law with friction when "
        f"the tangential and normal motions are coupled; lower the restitution (e = 0 never creates energy) or "
        f"the friction coefficient", time=st.t)


def after_impact(cm, st, w_plus: NDArray):
    """The node ``st`` with the velocities ``w_plus (nv,)``: momenta ``pi = M w+``, zero multipliers
    (the state an element starts from, as :func:`flexmb.dynamics.system.initial_state` builds it)."""
    new = st.copy()
    new.pi = node_momenta(cm, st, w_plus)
    new.lam = np.zeros_like(st.lam)
    new.lam_end = None
    for key in ("_node_values", "_node_frames"):  # cached node outputs of the pre-impact state
        if hasattr(new, key):
            delattr(new, key)
    return new
