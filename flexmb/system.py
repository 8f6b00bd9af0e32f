"""Compile an immutable :class:`~flexmb.model.Model` into arrays named by entity, and the
element-start state that one time element advances.

Arrays (``nb`` bodies, ``nj`` joints; index ``nb`` stands for the ground in joint arrays):

* ``body_mass (nb,)`` [kg], ``body_J0 (nb,3,3)`` inertia about the centre of mass, body frame;
  ``body_com (nb,3)`` centre of mass in the body frame (reference point = origin).
* ``jnt_a, jnt_b (nj,)`` body indices; ``jnt_ca, jnt_cb (nj,3)`` attachment points relative to the
  centre of mass in body frames (for the ground: inertial coordinates); ``jnt_Aa, jnt_Ab (nj,3,3)``
  attachment frame orientations in the body frames.
* ``jnt_constrained (nj,6) bool``; ``jnt_k, jnt_c, jnt_ref (nj,6)`` linear force laws of the free
  components; ``jnt_universal (nj,) bool``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from . import rotations as rot
from .errors import ModelError
from .model import GROUND, Gravity, Model, PointForce, PointTorque, SpringDamper, Universal

log = logging.getLogger(__name__)


@dataclass
class CompiledModel:
    model: Model
    nb: int
    nj: int
    body_mass: NDArray
    body_J0: NDArray
    body_com: NDArray
    jnt_a: NDArray
    jnt_b: NDArray
    jnt_ca: NDArray
    jnt_cb: NDArray
    jnt_Aa: NDArray
    jnt_Ab: NDArray
    jnt_constrained: NDArray
    jnt_k: NDArray
    jnt_c: NDArray
    jnt_ref: NDArray
    jnt_universal: NDArray
    jnt_drives: list  # (joint, comp, f, df)
    gravity: NDArray
    point_forces: list
    point_torques: list
    springs: dict
    length_scale: float
    springs_L0: NDArray = field(default_factory=lambda: np.zeros(0))

    @property
    def ground(self) -> int:
        return self.nb


def compile_model(model: Model) -> CompiledModel:
    nb = len(model.bodies)
    nj = len(model.joints)
    mass = np.array([b.mass for b in model.bodies])
    J0 = np.array([b.inertia for b in model.bodies])
    com = np.array([b.com for b in model.bodies])

    ja = np.zeros(nj, int)
    jb = np.zeros(nj, int)
    ca = np.zeros((nj, 3))
    cb = np.zeros((nj, 3))
    Aa = np.tile(np.eye(3), (nj, 1, 1))
    Ab = np.tile(np.eye(3), (nj, 1, 1))
    cons = np.zeros((nj, 6), bool)
    kk = np.zeros((nj, 6))
    cc = np.zeros((nj, 6))
    ref = np.zeros((nj, 6))
    univ = np.zeros(nj, bool)
    drives = []
    for j, jt in enumerate(model.joints):
        fa, fb = model.attachment_frames(jt)
        ia = model.body_index(jt.body_a)
        ib = model.body_index(jt.body_b)
        ja[j] = nb if ia < 0 else ia
        jb[j] = nb if ib < 0 else ib
        ca[j] = fa.origin - (com[ia] if ia >= 0 else 0.0)
        cb[j] = fb.origin - (com[ib] if ib >= 0 else 0.0)
        Aa[j] = fa.orientation
        Ab[j] = fb.orientation
        cons[j] = jt.constrained
        univ[j] = isinstance(jt, Universal)
        for comp, (f, df) in jt.drives().items():
            drives.append((j, comp, f, df))
        for comp, (k, c, r) in jt.free_law().items():
            kk[j, comp], cc[j, comp], ref[j, comp] = k, c, r

    g = np.zeros(3)
    pf, pt = [], []
    spr = {"a": [], "b": [], "pa": [], "pb": [], "k": [], "c": [], "L0": [], "name": []}
    for f in model.forces:
        if isinstance(f, Gravity):
            g = g + f.g
        elif isinstance(f, PointForce):
            pf.append(f)
        elif isinstance(f, PointTorque):
            pt.append(f)
        elif isinstance(f, SpringDamper):
            spr["name"].append(f.name)
            for side, key in (("body_a", "a"), ("body_b", "b")):
                i = model.body_index(getattr(f, side))
                spr[key].append(nb if i < 0 else i)
            ia, ib = spr["a"][-1], spr["b"][-1]
            spr["pa"].append(f.point_a - (com[ia] if ia < nb else 0.0))
            spr["pb"].append(f.point_b - (com[ib] if ib < nb else 0.0))
            spr["k"].append(f.stiffness)
            spr["c"].append(f.damping)
            spr["L0"].append(f.free_length)
        else:
            raise ModelError(f"unknown force element {f!r}; use Gravity, PointForce, PointTorque or SpringDamper")
    springs = {k: np.array(v) for k, v in spr.items() if k != "name"}
    springs["name"] = spr["name"]
    for key in ("pa", "pb"):
        springs[key] = springs[key].reshape(-1, 3)
    springs["a"] = springs["a"].astype(int)
    springs["b"] = springs["b"].astype(int)
    cm = CompiledModel(
        model=model, nb=nb, nj=nj, body_mass=mass, body_J0=J0, body_com=com,
        jnt_a=ja, jnt_b=jb, jnt_ca=ca, jnt_cb=cb, jnt_Aa=Aa, jnt_Ab=Ab,
        jnt_constrained=cons, jnt_k=kk, jnt_c=cc, jnt_ref=ref, jnt_universal=univ, jnt_drives=drives,
        gravity=g, point_forces=pf, point_torques=pt, springs=springs, length_scale=model.size,
    )
    if springs["k"].size:
        # free lengths default to the distance at t = 0
        R0 = np.array([b.orientation for b in model.bodies])
        x0 = np.array([b.position for b in model.bodies]) + np.einsum("nij,nj->ni", R0, com)
        xg, Rg = with_ground(x0, 0.0), with_ground(R0, np.eye(3))
        d = (xg[springs["b"]] + np.einsum("sde,se->sd", Rg[springs["b"]], springs["pb"])
             - xg[springs["a"]] - np.einsum("sde,se->sd", Rg[springs["a"]], springs["pa"]))
        L0 = np.array([np.nan if v is None else v for v in springs["L0"]], dtype=float)
        cm.springs_L0 = np.where(np.isnan(L0), np.linalg.norm(d, axis=1), L0)
    return cm


@dataclass
class ElementStart:
    """Start values of one time element (end values of the previous one).

    Bodies: ``t``, ``x (nb,3)`` centre of mass, ``R (nb,3,3)``, ``pi (nb,6)``.
    Joints: ``s (nj,3)``, ``Rr (nj,3,3)`` relative rotation A->B, ``lam (nj,6)``,
    ``acc (nj,3)`` accumulated relative rotation increments (the revolute angle is ``acc[:, 2]``).
    """

    t: float
    x: NDArray
    R: NDArray
    pi: NDArray
    s: NDArray
    Rr: NDArray
    lam: NDArray
    acc: NDArray

    def copy(self) -> "ElementStart":
        return replace(self, x=self.x.copy(), R=self.R.copy(), pi=self.pi.copy(), s=self.s.copy(),
                       Rr=self.Rr.copy(), lam=self.lam.copy(), acc=self.acc.copy())


def with_ground(a: NDArray, value) -> NDArray:
    """Append the ground entry (index nb) to a per-body array."""
    g = np.broadcast_to(np.asarray(value, dtype=float), a.shape[1:])[None]
    return np.concatenate([a, g], axis=0)


def attachment_poses(cm: CompiledModel, x: NDArray, R: NDArray):
    """Inertial poses of the attachment frames for body states ``x (nb,3)``, ``R (nb,3,3)``.

    Returns ``xa, Ra, xb, Rb`` with shapes (nj,3) and (nj,3,3).
    """
    xg = with_ground(x, 0.0)
    Rg = with_ground(R, np.eye(3))
    xa = xg[cm.jnt_a] + np.einsum("nij,nj->ni", Rg[cm.jnt_a], cm.jnt_ca)
    xb = xg[cm.jnt_b] + np.einsum("nij,nj->ni", Rg[cm.jnt_b], cm.jnt_cb)
    Ra = Rg[cm.jnt_a] @ cm.jnt_Aa
    Rb = Rg[cm.jnt_b] @ cm.jnt_Ab
    return xa, Ra, xb, Rb


def initial_state(cm: CompiledModel, t0: float = 0.0):
    """Element-start state at ``t0`` from the model's initial conditions.

    Returns ``(start, w0)``: the :class:`ElementStart` and the body velocities ``w0 (nb,6)``
    (centre-of-mass velocity and angular velocity, inertial), after checking that the joints are
    assembled and projecting the initial velocities onto the joint constraints.
    """
    model = cm.model
    R = np.array([b.orientation for b in model.bodies])
    x = np.array([b.position for b in model.bodies]) + np.einsum("nij,nj->ni", R, cm.body_com)
    om = np.array([b.angular_velocity for b in model.bodies])
    v = np.array([b.velocity for b in model.bodies]) + np.cross(om, np.einsum("nij,nj->ni", R, cm.body_com))
    w0 = np.concatenate([v, om], axis=1)

    xa, Ra, xb, Rb = attachment_poses(cm, x, R)
    s = np.einsum("nji,nj->ni", Ra, xb - xa)
    Rr = np.swapaxes(Ra, 1, 2) @ Rb
    phi = rot.log(Rr) if cm.nj else np.zeros((0, 3))
    acc = phi.copy()
    # assembly check on the constrained components
    tol = model.assembly_tol * cm.length_scale
    for j, jt in enumerate(model.joints):
        q = np.concatenate([s[j], phi[j]])
        targets = np.zeros(6)
        for (jj, comp, f, _df) in cm.jnt_drives:
            if jj == j:
                targets[comp] = float(f(t0))
        viol = []
        for comp in range(6):
            if cm.jnt_constrained[j, comp]:
                err = q[comp] - targets[comp]
                scale = tol if comp < 3 else model.assembly_tol
                if abs(err) > scale:
                    viol.append((comp, err))
        if cm.jnt_universal[j]:
            err = Rr[j, 0, 1]
            if abs(err) > model.assembly_tol:
                viol.append(("cross", err))
        if viol:
            names = ["s_x", "s_y", "s_z", "phi_x", "phi_y", "phi_z"]
            txt = ", ".join(f"{names[c] if isinstance(c, int) else c} = {e:.3e}" for c, e in viol)
            raise ModelError(
                f"{type(jt).__name__} {jt.name!r}: attachment frames do not satisfy the joint at t = {t0}: {txt} "
                f"(tolerance {tol:.1e} m / {model.assembly_tol:.1e} rad). Check the body positions/orientations "
                f"and the joint frames, or give the joint by `point`/`axis` so its frames are built to coincide"
            )
        # a driven revolute starts with its accumulated angle equal to the drive
        for (jj, comp, f, _df) in cm.jnt_drives:
            if jj == j and comp >= 3:
                acc[j, comp - 3] = float(f(t0))

    w0 = project_velocities(cm, x, R, w0, t0)
    pi = np.concatenate([cm.body_mass[:, None] * w0[:, :3],
                         np.einsum("nij,nj->ni", R @ cm.body_J0 @ np.swapaxes(R, 1, 2), w0[:, 3:])], axis=1)
    start = ElementStart(t=t0, x=x, R=R, pi=pi, s=s, Rr=Rr, lam=np.zeros((cm.nj, 6)), acc=acc)
    return start, w0


def velocity_constraint_matrix(cm: CompiledModel, x: NDArray, R: NDArray, rows_only=None):
    """Velocity-level constraint matrix ``G (n_c, 6 nb)`` on body velocities (v_com, omega).

    Row ``(j, comp)`` is the rate of the constrained relative coordinate ``comp`` of joint ``j``
    (relative velocity of B's origin seen from frame A, relative angular velocity, frame A).
    Returns ``G`` (dense) and the list of ``(j, comp)`` row labels.
    """
    nb = cm.nb
    xa, Ra, xb, Rb = attachment_poses(cm, x, R)
    xg = with_ground(x, 0.0)
    labels, rows = [], []
    for j in range(cm.nj):
        comps = [c for c in range(6) if cm.jnt_constrained[j, c]]
        if cm.jnt_universal[j]:
            comps = comps + ["cross"]
        if not comps:
            continue
        a, b = cm.jnt_a[j], cm.jnt_b[j]
        Jrow = np.zeros((6, 6 * nb))
        RA = Ra[j]
        d = xb[j] - xa[j]
        rb = xb[j] - xg[b]
        ra = xa[j] - xg[a]
        # sdot_A = RA^T (v_Qb - v_Qa - om_a x d); omega_rel = RA^T (om_b - om_a)
        if b < nb:
            Jrow[:3, 6 * b:6 * b + 3] = RA.T
            Jrow[:3, 6 * b + 3:6 * b + 6] = -RA.T @ rot.skew(rb)
            Jrow[3:, 6 * b + 3:6 * b + 6] = RA.T
        if a < nb:
            Jrow[:3, 6 * a:6 * a + 3] = -RA.T
            Jrow[:3, 6 * a + 3:6 * a + 6] = RA.T @ (rot.skew(ra) + rot.skew(d))
            Jrow[3:, 6 * a + 3:6 * a + 6] = -RA.T
        for c in comps:
            if c == "cross":
                # d/dt (x_A . y_B) = (x_A x y_B) . (om_b - om_a)
                xA = RA[:, 0]
                yB = Rb[j][:, 1]
                r = np.zeros(6 * nb)
                n = np.cross(xA, yB)
                if b < nb:
                    r[6 * b + 3:6 * b + 6] += n
                if a < nb:
                    r[6 * a + 3:6 * a + 6] -= n
                rows.append(r)
            else:
                rows.append(Jrow[c])
            labels.append((j, c))
    G = np.array(rows) if rows else np.zeros((0, 6 * nb))
    return G, labels


def project_velocities(cm: CompiledModel, x, R, w0, t0):
    """Project initial velocities onto the velocity constraints (mass metric); log the change."""
    G, labels = velocity_constraint_matrix(cm, x, R)
    if G.shape[0] == 0:
        return w0
    target = np.zeros(G.shape[0])
    for (j, comp, _f, df) in cm.jnt_drives:
        for r, lab in enumerate(labels):
            if lab == (j, comp):
                target[r] = float(df(t0))
    wv = w0.reshape(-1)
    viol = G @ wv - target
    scale = max(np.abs(wv).max(), 1.0)
    if np.abs(viol).max() <= 1e-12 * scale:
        return w0
    # mass metric
    Minv = np.zeros(6 * cm.nb)
    Minv = []
    for b in range(cm.nb):
        J = R[b] @ cm.body_J0[b] @ R[b].T
        Minv.append(np.diag(np.full(3, 1.0 / cm.body_mass[b])))
        Minv.append(np.linalg.inv(J))
    import scipy.linalg as sla

    Mi = sla.block_diag(*Minv)
    A = G @ Mi @ G.T
    mu = np.linalg.lstsq(A, viol, rcond=None)[0]
    wnew = wv - Mi @ G.T @ mu
    worst = int(np.argmax(np.abs(viol)))
    j, c = labels[worst]
    log.warning(
        "initial velocities violate the joint constraints (largest: joint %r component %s, %.3e); "
        "projected onto the constraints in the mass metric (velocity change %.3e)",
        cm.model.joints[j].name, c, viol[worst], np.abs(wnew - wv).max(),
    )
    return wnew.reshape(-1, 6)


def detect_redundant(cm: CompiledModel, x, R, tol: float = 1e-9) -> list[tuple[int, int | str]]:
    """Dependent constraint equations at the initial configuration (rank-revealing QR of G^T).

    Returns the ``(joint, component)`` labels of the dependent rows (empty for an independent set).
    """
    import scipy.linalg as sla

    G, labels = velocity_constraint_matrix(cm, x, R)
    if G.shape[0] == 0:
        return []
    if G.shape[0] * G.shape[1] > 4e7:
        log.info("redundancy check skipped for a large model (%d constraints)", G.shape[0])
        return []
    # scale translational columns by the model length so that rows are comparable
    Gs = G.copy()
    L = cm.length_scale
    for b in range(cm.nb):
        Gs[:, 6 * b:6 * b + 3] *= L
    _, Rq, piv = sla.qr(Gs.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rq))
    rank = int(np.sum(d > tol * max(d.max(), 1e-300))) if d.size else 0
    dependent = sorted(piv[rank:].tolist())
    return [labels[r] for r in dependent]
