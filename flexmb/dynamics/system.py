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

from flexmb import rotations as rot
from flexmb.errors import ModelError
from flexmb.model import GROUND, Gravity, Model, PointForce, PointTorque, SpringDamper, Universal

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
    #: multipliers at the end of the element that led to this node, before the gauge reset (output)
    lam_end: NDArray | None = None

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


def initial_configuration(cm: CompiledModel):
    """Centre-of-mass positions ``x (nb,3)``, rotations ``R (nb,3,3)`` and velocities ``w (nb,6)``
    (centre-of-mass velocity, angular velocity; inertial) from the model's initial conditions."""
    model = cm.model
    R = np.array([b.orientation for b in model.bodies])
    rc = np.einsum("nij,nj->ni", R, cm.body_com)
    x = np.array([b.position for b in model.bodies]) + rc
    om = np.array([b.angular_velocity for b in model.bodies])
    v = np.array([b.velocity for b in model.bodies]) + rot.cross(om, rc)
    return x, R, np.concatenate([v, om], axis=1)


COMPONENT_NAMES = ("s_x", "s_y", "s_z", "phi_x", "phi_y", "phi_z")


def initial_state(cm: CompiledModel, t0: float = 0.0):
    """Element-start state at ``t0`` from the model's initial conditions.

    Returns ``(start, w0)``: the :class:`ElementStart` and the body velocities ``w0 (nb,6)``
    (centre-of-mass velocity and angular velocity, inertial), after checking that the joints are
    assembled and projecting the initial velocities onto the joint constraints.
    """
    from flexmb.dynamics.joints import drive_targets

    model = cm.model
    x, R, w0 = initial_configuration(cm)
    xa, Ra, xb, Rb = attachment_poses(cm, x, R)
    s = np.einsum("nji,nj->ni", Ra, xb - xa)
    Rr = np.swapaxes(Ra, 1, 2) @ Rb
    phi = rot.log(Rr) if cm.nj else np.zeros((0, 3))
    acc = phi.copy()
    if cm.nj:
        # assembly check on the constrained components (vectorized; message for the worst joints)
        tgt, _ = drive_targets(cm, np.array([t0]))
        q = np.concatenate([s, phi], axis=1)
        err = np.where(cm.jnt_constrained, q - tgt[..., 0], 0.0)
        tol = np.concatenate([np.full(3, model.assembly_tol * cm.length_scale), np.full(3, model.assembly_tol)])
        bad = np.abs(err) > tol
        cross = np.where(cm.jnt_universal, Rr[:, 0, 1], 0.0)
        bad_cross = np.abs(cross) > model.assembly_tol
        for j in np.nonzero(bad.any(axis=1) | bad_cross)[0][:1]:
            jt = model.joints[j]
            parts = [f"{COMPONENT_NAMES[c]} = {err[j, c]:.3e}" for c in np.nonzero(bad[j])[0]]
            if bad_cross[j]:
                parts.append(f"cross-axis dot product = {cross[j]:.3e}")
            n_bad = int(np.count_nonzero(bad.any(axis=1) | bad_cross))
            raise ModelError(
                f"{type(jt).__name__} {jt.name!r}: attachment frames do not satisfy the joint at t = {t0}: "
                f"{', '.join(parts)} (tolerance {tol[0]:.1e} m / {tol[3]:.1e} rad; {n_bad} joint(s) affected). "
                f"Check the body positions/orientations and the joint frames, or give the joint by "
                f"`point`/`axis` so that its frames are built to coincide"
            )
        # a driven rotation starts with its accumulated angle equal to the drive
        for (j, comp, f, _df) in cm.jnt_drives:
            if comp >= 3:
                acc[j, comp - 3] = float(f(t0))
    w0 = project_velocities(cm, x, R, w0, t0)
    J = R @ cm.body_J0 @ np.swapaxes(R, 1, 2)
    pi = np.concatenate([cm.body_mass[:, None] * w0[:, :3], np.einsum("nij,nj->ni", J, w0[:, 3:])], axis=1)
    start = ElementStart(t=t0, x=x, R=R, pi=pi, s=s, Rr=Rr, lam=np.zeros((cm.nj, 6)), acc=acc)
    return start, w0


def velocity_constraint_matrix(cm: CompiledModel, x: NDArray, R: NDArray, joints: NDArray | None = None):
    """Sparse velocity-level constraint matrix ``G (n_c, 6 nb)`` on body velocities (v_com, omega).

    Row ``(j, comp)`` is the rate of the constrained relative coordinate ``comp`` of joint ``j``
    (velocity of B's origin relative to frame A, relative angular velocity; frame A components);
    for a universal joint the row ``(j, "cross")`` is the rate of ``x_A . y_B``.  ``joints``
    restricts the rows to a subset of joints.  Returns ``G`` (CSR) and the row labels.
    """
    import scipy.sparse as sp

    nb = cm.nb
    js = np.arange(cm.nj) if joints is None else np.asarray(joints, dtype=int)
    xa, Ra, xb, Rb = attachment_poses(cm, x, R)
    xg = with_ground(x, 0.0)
    a, b = cm.jnt_a[js], cm.jnt_b[js]
    RAt = np.swapaxes(Ra[js], 1, 2)
    d = (xb - xa)[js]
    rb = xb[js] - xg[b]
    ra = xa[js] - xg[a]
    n = js.size
    # blocks (n, 6, 6) on body a and body b velocities
    Bb = np.zeros((n, 6, 6))
    Ba = np.zeros((n, 6, 6))
    Bb[:, :3, :3] = RAt
    Bb[:, :3, 3:] = -RAt @ rot.skew(rb)
    Bb[:, 3:, 3:] = RAt
    Ba[:, :3, :3] = -RAt
    Ba[:, :3, 3:] = RAt @ (rot.skew(ra) + rot.skew(d))
    Ba[:, 3:, 3:] = -RAt
    cons = cm.jnt_constrained[js].copy()
    univ = cm.jnt_universal[js]
    # universal: a 7th row d/dt(x_A . y_B) = (x_A x y_B) . (om_b - om_a)
    Bb7 = np.zeros((n, 1, 6))
    Ba7 = np.zeros((n, 1, 6))
    ncross = rot.cross(Ra[js][:, :, 0], Rb[js][:, :, 1])
    Bb7[:, 0, 3:] = ncross
    Ba7[:, 0, 3:] = -ncross
    Bb = np.concatenate([Bb, Bb7], axis=1)
    Ba = np.concatenate([Ba, Ba7], axis=1)
    mask = np.concatenate([cons, univ[:, None]], axis=1)  # (n, 7)
    jj, cc = np.nonzero(mask)
    nrow = jj.size
    row_id = np.arange(nrow)
    rows, cols, vals = [], [], []
    for blocks, side in ((Bb, b), (Ba, a)):
        ok = side[jj] < nb
        r = np.repeat(row_id[ok], 6)
        c = (6 * side[jj][ok])[:, None] + np.arange(6)
        rows.append(r)
        cols.append(c.reshape(-1))
        vals.append(blocks[jj[ok], cc[ok]].reshape(-1))
    G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, 6 * nb))
    labels = [(int(js[j]), int(c) if c < 6 else "cross") for j, c in zip(jj, cc)]
    return G, labels


def _inverse_mass(cm: CompiledModel, R: NDArray):
    """Sparse block-diagonal inverse mass matrix (6 nb x 6 nb) for (v_com, omega)."""
    import scipy.sparse as sp

    Jinv = R @ np.linalg.inv(cm.body_J0) @ np.swapaxes(R, 1, 2)
    blocks = np.zeros((cm.nb, 6, 6))
    blocks[:, :3, :3] = np.eye(3) / cm.body_mass[:, None, None]
    blocks[:, 3:, 3:] = Jinv
    n = cm.nb
    return sp.bsr_matrix((blocks, np.arange(n), np.arange(n + 1)), shape=(6 * n, 6 * n)).tocsr()


def velocity_constraints(cm: CompiledModel, x, R, t: float):
    """Velocity constraint matrix ``G`` with its row labels and right-hand side (drive rates at ``t``)."""
    from flexmb.dynamics.joints import drive_targets

    G, labels = velocity_constraint_matrix(cm, x, R)
    if G.shape[0] == 0:
        return G, labels, np.zeros(0)
    _, rate = drive_targets(cm, np.array([t]))
    jl = np.array([j for j, _ in labels])
    cl = np.array([c if isinstance(c, int) else 0 for _, c in labels])
    target = np.where([isinstance(c, int) for _, c in labels], rate[jl, cl, 0], 0.0)
    return G, labels, target


def mass_metric_correction(cm: CompiledModel, R, G, violation, *, singular: str = "lsqr"):
    """Velocity change ``M^-1 G^T (G M^-1 G^T)^-1 violation`` (6 nb,) that removes ``violation``
    with the least kinetic energy.  ``singular``: ``"lsqr"`` (least squares when dependent rows
    remain) or ``"none"`` (return None)."""
    import scipy.sparse.linalg as spla

    Mi = _inverse_mass(cm, R)
    A = (G @ Mi @ G.T).tocsc()
    try:
        mu = spla.splu(A).solve(violation)
    except RuntimeError:  # dependent rows not yet removed
        if singular == "none":
            return None
        mu = spla.lsqr(A, violation, atol=1e-14, btol=1e-14)[0]
    return Mi @ (G.T @ mu)


def project_velocities(cm: CompiledModel, x, R, w0, t0):
    """Project initial velocities onto the velocity constraints in the mass metric; log the change."""
    G, labels, target = velocity_constraints(cm, x, R, t0)
    if G.shape[0] == 0:
        return w0
    wv = w0.reshape(-1)
    viol = G @ wv - target
    scale = max(np.abs(wv).max(), 1.0)
    if np.abs(viol).max() <= 1e-12 * scale:
        return w0
    wnew = wv - mass_metric_correction(cm, R, G, viol)
    worst = int(np.argmax(np.abs(viol)))
    j, c = labels[worst]
    log.warning(
        "initial velocities violate the joint constraints (largest: joint %r component %s, %.3e); "
        "projected onto the constraints in the mass metric (largest velocity change %.3e)",
        cm.model.joints[j].name, COMPONENT_NAMES[c] if isinstance(c, int) else c, viol[worst], np.abs(wnew - wv).max(),
    )
    return wnew.reshape(-1, 6)


def loop_joints(cm: CompiledModel) -> NDArray:
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


def detect_redundant(cm: CompiledModel, x, R, t0: float = 0.0, tol: float = 1e-9):
    """Dependent constraint equations at the initial configuration.

    Only joints on closed loops are examined (rank-revealing QR with column pivoting of the
    transposed constraint matrix restricted to the loop joints and the bodies they touch).

    Returns
    -------
    dependent : list of (joint, component)
        Labels of the dependent rows (empty if the constraints are independent).
    inconsistent : list of (joint, component)
        Dependent rows whose prescribed rate (drives) contradicts the independent rows: such a
        model has no motion at all.
    """
    import scipy.linalg as sla

    from flexmb.dynamics.joints import drive_targets

    if cm.nj == 0:
        return [], []
    js = loop_joints(cm)
    if js.size == 0:
        return [], []
    G, labels = velocity_constraint_matrix(cm, x, R, joints=js)
    cols = np.unique(G.indices)
    Gd = G[:, cols].toarray()
    if Gd.size > 2e7:
        log.warning("redundancy check skipped: %d loop constraints on %d velocities is too large for a dense test",
                    Gd.shape[0], Gd.shape[1])
        return [], []
    # translational velocity columns scaled by the model length so that rows are comparable
    trans = (cols % 6) < 3
    Gd[:, trans] *= cm.length_scale
    _, Rq, piv = sla.qr(Gd.T, mode="economic", pivoting=True)
    dg = np.abs(np.diag(Rq))
    rank = int(np.sum(dg > tol * max(dg.max(initial=0.0), 1e-300)))
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
