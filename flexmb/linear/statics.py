"""The static and steady equations of a model and the equilibrium state (:class:`Equilibrium`).

Unknowns: every body's configuration ``z`` (position of its reference point, rotation increment,
modal coordinates) and every joint's relative coordinates ``(s, phi)`` and reactions ``Qbar``
(frame A).  Equations, read off the p = 1 time element (:mod:`flexmb.linear.pencil`) at the node:

    f(z, Qbar) = p' - Om p = F(z) + B(z)^T R_A(z) Qbar - Om p = 0     (nv: Newton-Euler of every body)
    joint relative kinematics and joint laws = 0                       (12 per joint)

with ``p' = -(r1_pi + B^T r1_lam)`` (the rates of the modified momenta and of the multipliers), ``Om``
the generator of a steady rigid rotation (zero at rest), and the Jacobian ``-(J1_pi + B^T J1_lam) T +
K_B - Om dp/dz`` (``K_B``: lever stiffness; ``T``: the element's unknowns as functions of these).
Used by :func:`flexmb.linear.equilibrium.equilibrium` (Newton) and :mod:`flexmb.linear.linearize`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.system import ElementStart
from flexmb.errors import ModelError
from flexmb.linear.pencil import ElementPencil
from flexmb.model.model import Model, SpringDamper


class JointReactions:
    """``joint_force(name)`` / ``joint_moment(name)`` of a state's ``reactions (nj, 6)`` (frame A)."""

    def joint_force(self, name: str) -> NDArray:
        return self.reactions[self._joint(name), :3]

    def joint_moment(self, name: str) -> NDArray:
        return self.reactions[self._joint(name), 3:]

    def _joint(self, name: str) -> int:
        names = [j.name for j in self.model.joints]
        if name not in names:
            raise ModelError(f"no joint named {name!r}; joints: {', '.join(names)}")
        return names.index(name)


@dataclass
class Equilibrium(JointReactions):
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

    def body_position(self, name: str) -> NDArray:
        return np.asarray(self.model.bodies[self.model.body_index(name)].position, float)


def start_state(pen: ElementPencil) -> ElementStart:
    """The node state of the model's initial configuration, at rest, without the assembly check of
    :func:`flexmb.dynamics.system.initial_state`: the joints' relative coordinates as they are (the
    accumulated rotation is ``log(Rr)``), so that a drive's value at ``t`` that the configuration does
    not satisfy is reached by the equilibrium's Newton."""
    from flexmb.dynamics.system import initial_configuration

    cm = pen.cm
    x, R, _ = initial_configuration(cm)
    st = ElementStart(t=pen.t, x=x, R=R, pi=np.zeros(cm.nv), s=np.zeros((cm.nj, 3)),
                      Rr=np.tile(np.eye(3), (cm.nj, 1, 1)), lam=np.zeros((cm.nj, 6)), acc=np.zeros((cm.nj, 3)))
    for grp in cm.groups:
        if hasattr(grp, "initial_extra"):
            st.extra.update(grp.initial_extra())
    if cm.nj:
        xa, Ra = cm.att_a.node_pose(cm, st)
        xb, Rb = cm.att_b.node_pose(cm, st)
        st.s = np.einsum("nji,nj->ni", Ra, xb - xa)
        st.Rr = np.swapaxes(Ra, 1, 2) @ Rb
        st.acc = rot.log(st.Rr)
    return st


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


def node_unknowns(pen: ElementPencil, st: ElementStart, Q: NDArray, spin=None, w: NDArray | None = None):
    """The element's unknowns at the node ``st`` with the body velocities ``w (nv,)`` (default: those of
    the steady motion ``spin``; None: at rest): the modified momenta ``pi = M w`` (gauge ``lambda = 0``,
    also the start momenta of ``st``), attachment velocities ``B w``.  Returns ``(U, st)``."""
    ix = pen.ix
    if w is None:
        w = steady_velocities(pen, st, spin)
    st = st.copy()
    st.pi = np.zeros(pen.cm.nv)
    U = pen.unknowns(st, Q, w=w)
    if np.any(w):
        from flexmb.dynamics.bodies.modal_residual import NODE_VELOCITY

        st.extra[NODE_VELOCITY] = w
        r0 = pen.algebraic_residual(st, U)
        U[ix.pi] = r0[ix.w]  # M w - pi - Lambda with pi = Lambda = 0
        U[ix.nu] = -r0[ix.nu]  # nu - B w with nu = 0
        st.pi = U[ix.pi].copy()
    return U, st


def rate_matrix(pen: ElementPencil, w: NDArray) -> sp.csr_matrix:
    """``(nv, nv)``: each body's own ``omega x`` (``omega``: its angular velocity in ``w (nv,)``) on its
    rotational coordinates, zero elsewhere (for a steady rotation: ``spin_matrix(parts=(3,))``)."""
    nv = pen.cm.nv
    rows, cols, vals = [], [], []
    for grp in pen.cm.groups:
        rc = grp.vel_cols[:, 3:6]  # (n, 3)
        S = rot.skew(w[rc])  # (n, 3, 3)
        rows.append(np.repeat(rc, 3, axis=1).ravel())
        cols.append(np.tile(rc, (1, 3)).ravel())
        vals.append(S.reshape(-1))
    if not rows:
        return sp.csr_matrix((nv, nv))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nv, nv))


def static_system(pen: ElementPencil, st: ElementStart, Q: NDArray, spin=None):
    """Residual ``(f, g)`` and Jacobian (CSC) of the static (or steady, ``spin``) equations at
    ``(st, Q)``, unknowns ``[z (nv), s phi (6 nj), Qbar (6 nj)]``: ``f = p' - omega^ p`` (the momentum
    rate of the bodies minus that of the rigid rotation, zero at rest), ``g`` the joints' relative
    kinematics and laws.  Also returns the evaluation ``(U, r0, r1, J0, J1, KB)`` (reused by
    :func:`flexmb.linear.forms.pencil` at the converged state)."""
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


def update(pen: ElementPencil, st: ElementStart, Q: NDArray, d: NDArray) -> tuple[ElementStart, NDArray]:
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


def scales(pen: ElementPencil, st: ElementStart, n: int, spin=None) -> tuple[NDArray, NDArray]:
    """Unknown scales ``(n,)`` (length L, rotations 1, reactions F and F L) and residual scales
    (forces F, moments F L, positions L, rotations 1, laws F).

    ``F`` is the largest of ``M g``, the constant loads and, for a steady rotation ``spin`` (its
    ``omega`` [rad/s]), the centrifugal force ``M |omega|^2 L``: without it a fast-spinning body
    without gravity was judged against ``M g / 1000`` and the round-off of its centrifugal loads
    (1.4e-10 of that scale on the X5 beam at gamma = 50) read as no equilibrium."""
    cm = pen.cm
    L = max(cm.length_scale, 1e-6)
    g = np.linalg.norm(cm.gravity)
    F = max(cm.total_mass * max(g, 1e-3 * 9.81), 1e-12)
    if spin is not None:
        F = max(F, cm.total_mass * float(np.dot(spin.omega, spin.omega)) * L)
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


def placed_model(model: Model, cm, states: dict) -> Model:
    """``model`` with body ``b``'s initial state replaced by ``states[b]`` (``position``, ``orientation``,
    ``velocity``, ``angular_velocity``; flexible: ``q0``, ``qd0``), its joints given by the body frames of
    ``model`` (their inertial ``point``/``axis`` are those of the original configuration) and its springs'
    free lengths those compiled in ``cm`` (the compiled ``model``)."""
    bodies = list(model.bodies)
    for b, kw in states.items():
        bodies[b] = replace(model.bodies[b], **kw)
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
