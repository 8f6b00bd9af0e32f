"""Static equilibrium of a model: :func:`equilibrium`.

Unknowns: every body's configuration ``z`` (position of its reference point, rotation increment,
modal coordinates) and every joint's relative coordinates ``(s, phi)`` and reactions ``Qbar``
(frame A).  Equations, read off the p = 1 time element (:mod:`flexmb.linear.pencil`) at rest:

    f(z, Qbar) = F(z) + B(z)^T R_A(z) Qbar = 0         (nv: Newton-Euler balance of every body)
    joint relative kinematics and joint laws = 0       (12 per joint)

with ``f = -(r1_pi + B^T r1_lam)`` (the rates of the modified momenta and of the multipliers) and the
Jacobian ``-(J1_pi + B^T J1_lam) + K_B`` (lever stiffness) on the configuration, reactions and relative
coordinates.  Newton with the sparse LU; a singular matrix (redundant constraints: indeterminate
reactions; a mechanism with a free degree of freedom) takes the least-norm step (dense SVD).
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.system import ElementStart, initial_state
from flexmb.errors import ConvergenceError, ModelError
from flexmb.linear.pencil import ElementPencil
from flexmb.model.model import Model, RigidBody, SpringDamper

log = logging.getLogger(__name__)

#: relative size of the singular values taken as zero in the least-norm Newton step
RANK_TOL = 1e-10
#: largest scaled Newton step taken from the sparse LU (beyond: the matrix is treated as singular)
STEP_MAX = 1e6


class EquilibriumWarning(UserWarning):
    """An equilibrium that is unstable or not isolated (a free degree of freedom)."""


@dataclass
class Equilibrium:
    """A static equilibrium at time ``t`` (drives and loads held at their values at ``t``).

    ``model``: the same model with the bodies at the equilibrium (positions, orientations, modal
    coordinates ``q0``; velocities zero; joints given by body frames), from which ``simulate(model,
    ..., t0=t)`` starts at rest in equilibrium; ``reactions (nj, 6)``: each joint's reaction wrench on
    body b (force; moment about B's origin), components in frame A, as ``Solution.joint_force`` /
    ``joint_moment``; ``residual``: the largest scaled residual; ``iterations``; ``singular``: the
    Newton matrix was singular (redundant constraints or a free mechanism)."""

    t: float
    model: Model
    reactions: NDArray
    residual: float
    iterations: int
    singular: bool
    #: False when the stiffness in independent coordinates has a negative eigenvalue (checked with
    #: ``stability=True``; None otherwise)
    stable: bool | None = None
    #: False when it has a zero eigenvalue (a free degree of freedom; None when not checked)
    isolated: bool | None = None
    #: node state of the engine (for :func:`flexmb.linear.linearize`)
    start: ElementStart = field(default=None, repr=False)
    pencil: ElementPencil = field(default=None, repr=False)
    source: Model = field(default=None, repr=False)
    #: the steady rotation (``omega (3,)``, ``center (3,)``) or None (at rest)
    spin: object = field(default=None, repr=False)
    #: the element's evaluation at this state (``static_system``), for the linearization
    evaluation: object = field(default=None, repr=False)
    #: the linearization at this state, once computed (:func:`flexmb.linear.linearize`)
    linearization: object = field(default=None, repr=False)

    def joint_force(self, name: str) -> NDArray:
        return self.reactions[self._joint(name), :3]

    def joint_moment(self, name: str) -> NDArray:
        return self.reactions[self._joint(name), 3:]

    def _joint(self, name: str) -> int:
        names = [j.name for j in self.model.joints]
        if name not in names:
            raise ModelError(f"no joint named {name!r}; joints: {', '.join(names)}")
        return names.index(name)

    def body_position(self, name: str) -> NDArray:
        return np.asarray(self.model.bodies[self.model.body_index(name)].position, float)


def steady_velocities(pen: ElementPencil, st: ElementStart, spin) -> NDArray:
    """Velocities ``w (nv,)`` of the rigid rotation ``spin`` (``omega (3,)`` [rad/s] about the axis
    through ``center (3,)``): ``v = omega x (x - center)`` of every body's reference point, ``omega``,
    modal rates zero.  Zero when ``spin`` is None."""
    w = np.zeros(pen.cm.nv)
    if spin is None:
        return w
    for grp in pen.cm.groups:
        r = st.x[grp.bodies] - spin.center
        w[grp.vel_cols[:, :3]] = np.cross(spin.omega, r)
        w[grp.vel_cols[:, 3:6]] = spin.omega
    return w


def spin_matrix(pen: ElementPencil, spin, parts=(0, 3)) -> sp.csr_matrix:
    """``(nv, nv)``: ``omega x`` on every body's translational and rotational coordinates (the generator
    of the rigid rotation on the configuration, the velocities and the momenta), zero on modal ones;
    ``parts=(3,)``: on the rotational ones only."""
    nv = pen.cm.nv
    if spin is None:
        return sp.csr_matrix((nv, nv))
    S = rot.skew(np.asarray(spin.omega, float))
    rows, cols, vals = [], [], []
    for grp in pen.cm.groups:
        for c in grp.vel_cols:
            for blk in (c[k:k + 3] for k in parts):
                rows.append(np.repeat(blk, 3))
                cols.append(np.tile(blk, 3))
                vals.append(S.ravel())
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nv, nv))


def node_unknowns(pen: ElementPencil, st: ElementStart, Q: NDArray, spin=None):
    """The element's unknowns at the node ``st`` in the steady motion ``spin`` (None: at rest): velocities
    of the rigid rotation, the modified momenta ``pi = M w`` (gauge ``lambda = 0``, also the start
    momenta of ``st``), attachment velocities ``B w``.  Returns ``(U, st)``."""
    ix = pen.ix
    w = steady_velocities(pen, st, spin)
    st = st.copy()
    st.pi = np.zeros(pen.cm.nv)
    U = pen.unknowns(st, Q, w=w)
    if spin is not None:
        from flexmb.dynamics.bodies.modal_residual import NODE_VELOCITY

        st.extra[NODE_VELOCITY] = w
        r0 = pen.algebraic_residual(st, U)
        U[ix.pi] = r0[ix.w]  # M w - pi - Lambda with pi = Lambda = 0
        U[ix.nu] = -r0[ix.nu]  # nu - B w with nu = 0
        st.pi = U[ix.pi].copy()
    return U, st


def static_system(pen: ElementPencil, st: ElementStart, Q: NDArray, spin=None):
    """Residual ``(f, g)`` and Jacobian (CSC) of the static (or steady, ``spin``) equations at
    ``(st, Q)``, unknowns ``[z (nv), s phi (6 nj), Qbar (6 nj)]``: ``f = p' - omega^ p`` (the momentum
    rate of the bodies minus that of the rigid rotation, zero at rest), ``g`` the joints' relative
    kinematics and laws.  Also returns the evaluation ``(U, r0, r1, J0, J1, KB)`` (reused by
    :func:`flexmb.linear.linearize.pencil` at the converged state)."""
    ix = pen.ix
    U, st = node_unknowns(pen, st, Q, spin)
    r0, r1, J0, J1 = pen.evaluate(st, U)
    Bt = -J0[ix.w][:, ix.lam]
    lam_dot = -r1[ix.lam]
    f = -(r1[ix.pi] + Bt @ r1[ix.lam])
    alg = np.concatenate([ix.rel, ix.q])
    g = r0[alg]
    cols = np.concatenate([ix.z, ix.rel, ix.q])
    KB = pen.lever_stiffness(st, U, lam_dot.reshape(-1, 6), J0)
    n = ix.size
    # dU / d(unknowns): the unknowns' own columns, and for a spin the velocities, momenta and attachment
    # velocities that follow the configuration (w = omega x (x - c), pi = M w, nu = B w)
    T = sp.csr_matrix((np.ones(cols.size), (cols, np.arange(cols.size))), shape=(n, cols.size))
    if spin is not None:
        nv = pen.cm.nv
        Om = spin_matrix(pen, spin)
        dW = sp.csr_matrix(Om[:, :])  # d v / d x = omega x  (rows v of w, columns x of z)
        trans = np.zeros(nv, bool)
        for grp in pen.cm.groups:
            trans[grp.vel_cols[:, :3]] = True
        dW = sp.diags(trans.astype(float)) @ dW @ sp.diags(trans.astype(float))
        dPi = J0[ix.w][:, ix.z] + J0[ix.w][:, ix.w] @ dW
        dNu = -(J0[ix.nu][:, ix.z] + J0[ix.nu][:, ix.w] @ dW)
        Sel = lambda idx: sp.csr_matrix((np.ones(idx.size), (idx, np.arange(idx.size))), shape=(n, idx.size))  # noqa: E731
        Tz = Sel(ix.w) @ dW + Sel(ix.pi) @ dPi + Sel(ix.nu) @ dNu
        T = T + sp.hstack([Tz, sp.csr_matrix((n, cols.size - nv))]).tocsr()
        p = U[ix.pi]
        f = f - Om @ p
    df = -(J1[ix.pi] + Bt @ J1[ix.lam]) @ T
    extra = KB if spin is None else KB - spin_matrix(pen, spin) @ dPi
    df = df + sp.hstack([extra, sp.csr_matrix((extra.shape[0], cols.size - extra.shape[1]))])
    J = sp.vstack([df, (J0[alg] @ T)]).tocsc()
    return np.concatenate([f, g]), J, (U, r0, r1, J0, J1, KB)


def _update(pen: ElementPencil, st: ElementStart, Q: NDArray, d: NDArray) -> tuple[ElementStart, NDArray]:
    """The node state moved by the Newton step ``d`` (configuration: positions added, rotations
    ``R <- exp(dtheta) R``, modal coordinates added; joints: ``s`` added, ``Rr <- Rr exp(dphi)``, the
    accumulated angle likewise; reactions added)."""
    cm = pen.cm
    nv, nj = cm.nv, cm.nj
    st = st.copy()
    dz = d[:nv]
    for grp in cm.groups:
        dzg = dz[grp.vel_cols]
        st.x[grp.bodies] += dzg[:, :3]
        st.R[grp.bodies] = rot.exp(dzg[:, 3:6]) @ st.R[grp.bodies]
        if grp.nv > 6:
            from flexmb.dynamics.bodies.modal import QKEY
            st.extra[QKEY] = st.extra[QKEY] + dzg[:, 6:]
    if nj:
        rel = d[nv:nv + 6 * nj].reshape(nj, 6)
        st.s = st.s + rel[:, :3]
        st.Rr = st.Rr @ rot.exp(rel[:, 3:])
        # accumulated relative rotation as the engine starts it (the log of Rr), with the turns of the
        # accumulated angle about z kept (a sum of increments is not the log of their product)
        acc = rot.log(st.Rr)
        acc[:, 2] += 2 * np.pi * np.round((st.acc[:, 2] + rel[:, 5] - acc[:, 2]) / (2 * np.pi))
        st.acc = acc
        Q = Q + d[nv + 6 * nj:].reshape(nj, 6)
    return st, Q


def _scales(pen: ElementPencil, st: ElementStart, n: int) -> tuple[NDArray, NDArray]:
    """Unknown scales ``(n,)`` (length L, rotations 1, reactions F and F L) and residual scales
    (forces F, moments F L, positions L, rotations 1, laws F)."""
    cm = pen.cm
    L = max(cm.length_scale, 1e-6)
    g = np.linalg.norm(cm.gravity)
    F = max(cm.total_mass * max(g, 1e-3 * 9.81), 1e-12)
    for ld in cm.forces.loads:
        if not callable(ld.value):
            F = max(F, float(np.linalg.norm(ld.value)) / (L if ld.kind == "torque" else 1.0))
    nv, nj = cm.nv, cm.nj
    xs = np.ones(nv)
    fs = np.full(nv, F)
    for grp in cm.groups:
        xs[grp.vel_cols[:, :3]] = L
        fs[grp.vel_cols[:, 3:6]] = F * L
    js = np.tile(np.array([L] * 3 + [1.0] * 3), nj)
    qs = np.tile(np.array([F] * 3 + [F * L] * 3), nj)
    return np.concatenate([xs, js, qs]), np.concatenate([fs, js, qs])


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
                stability: bool = True) -> Equilibrium:
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
        load), ``F L`` (moments), length ``L`` (relative positions) and 1 (rotations).
    max_iter : int
    stability : bool
        Classify the equilibrium from the symmetric part of the stiffness in independent coordinates
        (:func:`flexmb.linear.linearize`): a negative eigenvalue makes it unstable (``stable=False``),
        a zero one (below 1e-9 of the largest, or of ``|g| / L``) not isolated (``isolated=False``, a free degree of
        freedom); both are logged as WARNING.

    Returns
    -------
    Equilibrium
        ``model`` (start ``simulate`` from it), ``reactions``, ...

    Raises
    ------
    ConvergenceError
        No equilibrium found: the message gives the residual and the equation where it is largest.
    ModelError
        ``model`` is not a Model, ``t`` not finite, or the joints are not assembled at the start.
    """
    if not isinstance(model, Model):
        raise ModelError(f"equilibrium: model={model!r} is not a flexmb.Model; build one with fm.Model(bodies, joints, forces)")
    if not np.isfinite(t):
        raise ModelError(f"equilibrium: t={t!r} must be a finite time [s]")
    pen = ElementPencil(model, t)
    st, _ = initial_state(pen.cm, float(t))
    st.pi[:] = 0.0
    st.lam = np.zeros((pen.cm.nj, 6))
    Q = np.zeros((pen.cm.nj, 6))
    n = pen.cm.nv + 12 * pen.cm.nj
    xs, fs = _scales(pen, st, n)
    singular = False
    res = np.inf
    spin = steady_spin(model, pen, steady)
    Q = _initial_reactions(pen, st, Q, xs, fs, spin)
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
        st, Q = _update(pen, st, Q, d)
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

    lin = linearize(eq, check=False)
    if lin.ndof == 0:
        eq.stable, eq.isolated = True, True
        return
    if eq.spin is not None:  # gyroscopic: the eigenvalues decide
        from flexmb.linear.eigen import eigen

        kinds = set(eigen(lin).kind)
        eq.stable = not ({"divergence", "flutter"} & kinds)
        eq.isolated = "zero" not in kinds
        if not eq.stable:
            log.warning("steady state at t = %g is unstable (%s)", eq.t, ", ".join(sorted(kinds - {"stable", "zero"})))
        if not eq.isolated:
            log.warning("steady state at t = %g is not isolated (a zero eigenvalue: a free degree of freedom)", eq.t)
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


def _body_frame(bodies, model: Model, side, frame):
    """The attachment ``frame`` of a joint side as the model takes it for the new bodies: on an
    interface ``(body, name)`` the model stores the orientation relative to the interface turned by
    ``q0`` (:func:`flexmb.model.flexible.site_frame`), so it is given back turned by the new ``q0``."""
    if not isinstance(side, tuple):
        return frame
    body = bodies[model.body_index(side)]
    mm = np.asarray(body.interface(side[1]).modal_map, dtype=float)
    turn = rot.exp(mm[3:] @ np.asarray(body.q0, dtype=float))
    return replace(frame, orientation=turn @ frame.orientation, site=None)


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
    """``model`` with its bodies at the node ``st`` (at rest) and its joints given by body frames
    (their inertial ``point``/``axis`` are those of the original configuration)."""
    cm = pen.cm
    bodies = list(model.bodies)
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
            bodies[b] = replace(src, **kw)
    joints = []
    for jt in model.joints:
        fa, fb = model.attachment_frames(jt)
        fa, fb = (_body_frame(bodies, model, side, f) for side, f in ((jt.body_a, fa), (jt.body_b, fb)))
        joints.append(replace(jt, frame_a=fa, frame_b=fb, point=None, axis=None, axis2=None))
    forces = []
    L0 = cm.forces.springs.L0 if cm.forces.springs is not None else []
    ks = 0
    for f in model.forces:
        if isinstance(f, SpringDamper):
            if f.point_frame != "body":
                raise ModelError(f"SpringDamper {f.name!r}: point_frame={f.point_frame!r}; equilibrium() needs "
                                 f"body-frame points (point_frame='body')")
            f = replace(f, free_length=float(L0[ks]))
            ks += 1
        elif getattr(f, "point_frame", "body") != "body":
            raise ModelError(f"{type(f).__name__} on {f.body!r}: point_frame={f.point_frame!r}; equilibrium() "
                             f"needs body-frame points (point_frame='body')")
        forces.append(f)
    return replace(model, bodies=bodies, joints=joints, forces=forces)
