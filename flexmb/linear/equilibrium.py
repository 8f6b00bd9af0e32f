"""Static (or steady-rotation) equilibrium of a model: :func:`equilibrium`.

Newton on the equations of :mod:`flexmb.linear.statics` with the sparse LU in a scaled metric; a
singular matrix (redundant constraints: indeterminate reactions; a mechanism with a free degree of
freedom) takes the least-norm step (dense SVD).  The result is an
:class:`~flexmb.linear.statics.Equilibrium` whose model ``simulate`` can start from.
"""
from __future__ import annotations

import logging
import warnings
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.dynamics.system import ElementStart
from flexmb.errors import ConvergenceError, ModelError
from flexmb.linear.pencil import ElementPencil
from flexmb.linear.statics import Equilibrium, placed_model, scales, start_state, static_system, update
from flexmb.model.model import Model, RigidBody

log = logging.getLogger(__name__)

#: relative size of the singular values taken as zero in the least-norm Newton step
RANK_TOL = 1e-10
#: largest scaled Newton step taken from the sparse LU (beyond: the matrix is treated as singular)
STEP_MAX = 1e6


def _solve(J: sp.csc_matrix, rhs: NDArray, xs: NDArray, fs: NDArray) -> tuple[NDArray, bool]:
    """Newton step ``J d = rhs`` in the scaled metric; least-norm (dense SVD) when ``J`` is singular."""
    Js = sp.diags(1.0 / fs) @ J @ sp.diags(xs)
    b = rhs / fs
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lu = spla.splu(Js.tocsc())
            d = lu.solve(b)
        # a singular matrix shows as a huge step (round-off over a zero pivot) or a large residual
        if (np.all(np.isfinite(d)) and np.abs(d).max(initial=0.0) < STEP_MAX
                and np.linalg.norm(Js @ d - b) <= 1e-8 * np.linalg.norm(b) + 1e-14):
            return d * xs, False
    except (RuntimeError, Warning):
        pass
    d = sla.lstsq(Js.toarray(), b, cond=RANK_TOL, lapack_driver="gelsd")[0]
    return d * xs, True


def _initial_reactions(pen: ElementPencil, st: ElementStart, Q: NDArray, xs: NDArray, fs: NDArray, spin=None) -> NDArray:
    """Reactions that balance the loads at the start configuration (least squares, configuration
    held): without them the lever stiffness is zero and the first Newton matrix is singular along every
    free degree of freedom.  Regularized normal equations (sparse), scaled as the Newton step."""
    nq = 6 * pen.cm.nj
    if not nq:
        return Q
    F, J, _ = static_system(pen, st, Q, spin)
    Jq = (sp.diags(1.0 / fs) @ J[:, -nq:] @ sp.diags(xs[-nq:])).tocsc()
    N = (Jq.T @ Jq).tocsc()
    eps = 1e-12 * max(abs(N.diagonal()).max(), 1e-300)
    dq = spla.spsolve((N + eps * sp.eye(nq)).tocsc(), Jq.T @ (-F / fs))
    return Q + (dq * xs[-nq:]).reshape(-1, 6) if np.all(np.isfinite(dq)) else Q


def equilibrium(model: Model, t: float = 0.0, *, steady=False, tol: float = 1e-10, max_iter: int = 50,
                stability: bool = True, reactions=None) -> Equilibrium:
    """Static equilibrium of ``model`` at time ``t`` (drives and loads held at their values at
    ``t``), by Newton from the model's initial configuration.

    Parameters
    ----------
    model : Model
        Rigid and flexible bodies, any joints (closed loops and redundant constraints included),
        gravity, springs, joint springs and preloads, point loads.
    t : float
        Time [s] at which drives and time-dependent loads are evaluated.
    steady : bool or array_like (3,)
        ``True``: the relative equilibrium of the whole model turning rigidly with the constant rate of
        its revolute drive to the ground (``angular_velocity=``), about that joint's axis (a spinning
        flexible blade deflects and stretches under its centrifugal load); a 3-vector: that angular
        velocity [rad/s] about an axis through the origin.  Every body then has the velocity of the
        rotation; the linearization is in the rotating frame.
    tol : float
        Convergence: largest residual, scaled by the model's force ``F = M g`` (or the largest
        load, or the centrifugal force ``M Omega^2 L`` of a steady rotation), ``F L`` (moments), length ``L`` (relative positions) and 1 (rotations).
    max_iter : int
    stability : bool
        Classify the equilibrium from the symmetric part of the stiffness in independent coordinates
        (:func:`flexmb.linear.linearize`): a negative eigenvalue makes it unstable (``stable=False``),
        a zero one (below 1e-9 of the largest, or of ``|g| / L``) not isolated (``isolated=False``, a free degree of
        freedom); both are logged as WARNING.
    reactions : array_like (nj, 6), optional
        Start values of the joint reactions (frame A, as :attr:`Equilibrium.reactions`), e.g. those of
        a neighbouring equilibrium (continuation: :func:`~flexmb.linear.campbell.campbell` and
        :func:`~flexmb.linear.loadpath.load_path` pass the previous step's); default: least squares
        against the loads at the start configuration.

    Returns
    -------
    Equilibrium
        ``model`` (start ``simulate`` from it), ``reactions``, ...

    Raises
    ------
    ConvergenceError
        No equilibrium found: the message gives the residual and the equation where it is largest.
    ModelError
        ``model`` is not a Model or ``t`` not finite.  The model need not be assembled: Newton also
        closes the joints (a drive's value at ``t``, a loop built open).
    """
    if not isinstance(model, Model):
        raise ModelError(f"equilibrium: model={model!r} is not a flexmb.Model; build one with fm.Model(bodies, joints, forces)")
    if not np.isfinite(t):
        raise ModelError(f"equilibrium: t={t!r} must be a finite time [s]")
    pen = ElementPencil(model, t)
    st = start_state(pen)
    Q = np.zeros((pen.cm.nj, 6))
    n = pen.cm.nv + 12 * pen.cm.nj
    spin = steady_spin(model, pen, steady)
    xs, fs = scales(pen, st, n, spin)
    singular = False
    res = np.inf
    if reactions is None:
        Q = _initial_reactions(pen, st, Q, xs, fs, spin)
    else:
        Q = np.array(reactions, dtype=float)
        if Q.shape != (pen.cm.nj, 6) or not np.all(np.isfinite(Q)):
            raise ModelError(f"equilibrium: reactions of shape {Q.shape}; give finite start reactions of shape "
                             f"({pen.cm.nj}, 6) (one wrench per joint, frame A), or None")
    for it in range(1, max_iter + 1):
        F, J, evaluation = static_system(pen, st, Q, spin)
        res = float(np.max(np.abs(F) / fs, initial=0.0))
        if res <= tol:
            break
        d, sing = _solve(J, -F, xs, fs)
        singular |= sing
        if not np.all(np.isfinite(d)):
            break
        # damped step: no rotation increment beyond 0.5 rad
        big = float(np.max(np.abs(d[:pen.cm.nv]) / xs[:pen.cm.nv], initial=0.0))
        if big > 0.5:
            d = d * (0.5 / big)
        st, Q = update(pen, st, Q, d)
    if not res <= tol:
        F, _, _ = static_system(pen, st, Q, spin)
        k = int(np.argmax(np.abs(F) / fs))
        raise ConvergenceError(f"equilibrium: no static equilibrium found at t = {t} after {it} Newton iterations: "
                               f"largest scaled residual {res:.3e} in {_describe(pen, k)}; check the loads, "
                               f"the drives and the joints (a mechanism with an unloaded free degree of freedom "
                               f"has no isolated equilibrium; a load beyond a limit point none nearby)")
    eq = Equilibrium(t=float(t), model=_model_at(model, pen, st, spin), reactions=Q, residual=res, iterations=it,
                     singular=singular, start=st, pencil=pen, source=model, spin=spin)
    eq.evaluation = evaluation if res <= tol else None
    if stability:
        _classify(eq)
    if singular:
        log.info("equilibrium: singular Newton matrix (redundant constraints or a free degree of freedom); "
                 "least-norm steps taken")
    return eq


def _classify(eq: Equilibrium) -> None:
    """Set ``eq.stable`` and ``eq.isolated`` from the eigenvalues of ``sym(Kr)`` scaled by ``Mr``."""
    from flexmb.linear.linearize import linearize

    from flexmb.linear.eigen import DENSE_MAX, eigen

    lin = linearize(eq, check=False)
    large = lin.M.shape[0] > DENSE_MAX  # no dense null space: the 6 eigenvalues nearest 0 decide
    if not large and lin.ndof == 0:
        eq.stable, eq.isolated = True, True
        return
    if eq.spin is not None or large:  # gyroscopic (or large): the eigenvalues decide
        kinds = set(eigen(lin, 6, method="sparse").kind if large else eigen(lin).kind)
        eq.stable = not ({"divergence", "flutter"} & kinds)
        eq.isolated = "zero" not in kinds
        if not eq.stable:
            log.warning("equilibrium at t = %g is unstable (%s)", eq.t, ", ".join(sorted(kinds - {"stable", "zero"})))
        if not eq.isolated:
            log.warning("equilibrium at t = %g is not isolated (a zero eigenvalue: a free degree of freedom)", eq.t)
        return
    Mr = lin.Mr
    d = 1.0 / np.sqrt(np.maximum(np.abs(np.diag(Mr)), 1e-300))
    Ks = 0.5 * (lin.Kr + lin.Kr.T) * d[:, None] * d[None, :]
    ev = np.linalg.eigvalsh(Ks)
    cm = eq.pencil.cm  # reference [1/s^2]: the largest eigenvalue, or gravity over the model's size
    big = max(np.abs(ev).max(), np.linalg.norm(cm.gravity) / max(cm.length_scale, 1e-6), 1e-300)
    eq.isolated = bool(np.all(np.abs(ev) > 1e-9 * big))
    eq.stable = bool(np.all(ev > -1e-9 * big))
    if not eq.stable:
        log.warning("equilibrium at t = %g is unstable: the stiffness in independent coordinates has %d negative "
                    "eigenvalue(s) (smallest %.3e 1/s^2 per unit mass)", eq.t, int(np.sum(ev < -1e-9 * big)), ev.min())
    if not eq.isolated:
        log.warning("equilibrium at t = %g is not isolated: the stiffness in independent coordinates has %d zero "
                    "eigenvalue(s) (a free degree of freedom: a mechanism without a restoring load)", eq.t,
                    int(np.sum(np.abs(ev) <= 1e-9 * big)))


def _describe(pen: ElementPencil, k: int) -> str:
    cm = pen.cm
    nv = cm.nv
    if k < nv:
        for grp in cm.groups:
            hit = np.argwhere(grp.vel_cols == k)
            if hit.size:
                b, c = hit[0]
                what = ("force", "moment")[c // 3] if c < 6 else "modal force"
                return f"the {what} balance of body {cm.model.bodies[grp.bodies[b]].name!r} (component {c})"
    k -= nv
    part, k = divmod(k, 6 * cm.nj)
    j, c = divmod(k, 6)
    return f"joint {cm.model.joints[j].name!r}, {('relative kinematics', 'joint law')[part]} (component {c})"


def steady_spin(model: Model, pen: ElementPencil, steady):
    """The rigid rotation of ``steady`` (see :func:`equilibrium`): None, or ``omega``, ``center``."""
    from types import SimpleNamespace

    from flexmb.model.model import GROUND, Revolute

    if steady is False or steady is None:
        return None
    if steady is True:
        for jt in model.joints:
            if isinstance(jt, Revolute) and jt.angular_velocity is not None and GROUND in (jt.body_a, jt.body_b):
                fa, fb = model.attachment_frames(jt)
                rate = float(jt.angular_velocity)
                if jt.body_a == GROUND:
                    return SimpleNamespace(omega=rate * fa.orientation[:, 2], center=np.asarray(fa.origin, float))
                xb, Rb = model.body_pose(jt.body_b)
                return SimpleNamespace(omega=-rate * (Rb @ fb.orientation[:, 2]), center=xb + Rb @ fb.origin)
        raise ModelError("equilibrium(steady=True): no revolute joint to the ground with a constant "
                         "angular_velocity drive; give one, or steady=(wx, wy, wz) [rad/s] (axis through the origin)")
    om = np.asarray(steady, dtype=float).reshape(-1)
    if om.shape != (3,) or not np.all(np.isfinite(om)):
        raise ModelError(f"equilibrium: steady={steady!r}; give True or an angular velocity (wx, wy, wz) [rad/s]")
    return SimpleNamespace(omega=om, center=np.zeros(3))


def _model_at(model: Model, pen: ElementPencil, st: ElementStart, spin=None) -> Model:
    """``model`` with its bodies at the node ``st`` (at rest, or turning with ``spin``) and its joints
    given by body frames (:func:`placed_model`)."""
    cm = pen.cm
    states = {}
    for grp in cm.groups:
        for k, b in enumerate(grp.bodies):
            src = model.bodies[b]
            R = st.R[b]
            om = np.zeros(3) if spin is None else np.asarray(spin.omega, float)
            kw = dict(orientation=R, angular_velocity=om)
            if isinstance(src, RigidBody):
                kw["position"] = st.x[b] - R @ np.asarray(src.com, float)
            else:
                from flexmb.dynamics.bodies.modal import QKEY
                kw["position"] = st.x[b]
                kw["q0"] = st.extra[QKEY][k, :src.n_modes]
                kw["qd0"] = np.zeros(src.n_modes)
            kw["velocity"] = np.zeros(3) if spin is None else np.cross(om, kw["position"] - spin.center)
            states[b] = kw
    return placed_model(model, cm, states)
