"""Compile an immutable :class:`~flexmb.model.Model` into arrays named by entity, and the
element-start state that one time element advances.

Arrays (``nb`` bodies, ``nj`` joints; index ``nb`` stands for the ground in joint arrays):

* ``body_mass (nb,)`` [kg], ``body_J0 (nb,3,3)`` inertia about the centre of mass, body frame;
  ``body_com (nb,3)`` centre of mass in the body frame (reference point = origin).
* ``jnt_a, jnt_b (nj,)`` body indices; ``jnt_ca, jnt_cb (nj,3)`` attachment points relative to the
  centre of mass in body frames (for the ground: inertial coordinates); ``jnt_Aa, jnt_Ab (nj,3,3)``
  attachment frame orientations in the body frames.
* ``jnt_constrained (nj,6) bool``; ``jnt_k, jnt_c, jnt_ref (nj,6)`` linear force laws of the free
  components; ``jnt_universal (nj,) bool``: the joints' full constraint set (read-only; a run keeps a
  :class:`~flexmb.dynamics.node.selection.Selection` of it).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.node.constraints import node_momenta, project_velocities
from flexmb.dynamics.layout import COMPONENT_NAMES
from flexmb.errors import ModelError
from flexmb.model.model import GROUND, Gravity, Model, PointForce, PointTorque, SpringDamper, Universal

log = logging.getLogger(__name__)


@dataclass
class ModelCache:
    """Data derived from a :class:`CompiledModel` and kept for reuse, one named slot per kind (each module
    that computes one writes only its own slot; a slot holds the key it was computed for and is
    recomputed when that key changes, so no result depends on what a slot holds).  None until first
    asked for."""

    #: the joints' laws as the kernels read them (:func:`flexmb.dynamics.elements.joints.law_data`)
    joint_laws: object = None
    #: the node-velocity projection's fixed structure (:func:`flexmb.dynamics.node.projection.node_projector`)
    node_projector: object = None
    #: velocity coordinates of each body (:func:`flexmb.dynamics.node.projection.apply_blocks`)
    body_widths: object = None
    #: translational and angular velocity columns (:func:`flexmb.dynamics.solve.scales.unknown_scales`)
    speed_columns: object = None
    #: the last unknown scales and their key, the body slots' scales (:mod:`flexmb.dynamics.solve.scales`)
    unknown_scales: object = None
    body_scales: object = None
    #: layouts without index replay by order p (:func:`flexmb.dynamics.march.marching.gauss_multiplier_end`)
    plain_layouts: dict = field(default_factory=dict)
    #: indices of the rotation unknowns by layout ``(p, size)`` (:func:`flexmb.dynamics.variants.root_checks.rotation_slots`)
    rotation_slots: dict = field(default_factory=dict)
    #: the model's full constraint selection (:meth:`flexmb.dynamics.node.selection.Selection.full`)
    full_selection: object = None
    #: loop joints and the monitor's node interval (:func:`flexmb.dynamics.node.redundancy.loop_structure`)
    loops: object = None
    #: the full loop set's SVD at the last node asked about (:func:`flexmb.dynamics.node.redundancy.node_svd`)
    node_svd: object = None
    #: the drives' values at the last constraint points (:func:`flexmb.dynamics.elements.joints.constraint_targets`)
    drive_targets: object = None
    #: the compiled node stage's plan, ``(plan or False,)`` (:func:`flexmb.dynamics.node.stage_modal.stage_plan`: a
    #: :class:`flexmb.dynamics.node.stage.EndNodePlan` or a :class:`flexmb.dynamics.node.stage_modal.ModalPlan`)
    node_stage: object = None
    #: the model's initial configuration ``(x, R, w)``, read-only (:func:`initial_configuration`)
    initial: object = None
    #: the bodies' lever lengths, read-only (:func:`flexmb.dynamics.solve.scales.body_lengths`)
    body_lengths: object = None


@dataclass(frozen=True, slots=True)
class CompiledModel:
    """A model compiled into arrays, immutable (frozen; its arrays read-only).  ``groups``: one body-type
    group per body type present (model body indices in ``group.bodies``); ``vel_off (nb,)`` offsets of
    each body's velocity coordinates in the global velocity vector of length ``nv``; ``att_a``, ``att_b``:
    the joints' attachment sets (:class:`~flexmb.dynamics.elements.attachments.AttachmentSet`); joint laws
    as arrays; ``jnt_constrained``, ``jnt_universal`` the joints' full constraint set (a run keeps a
    :class:`~flexmb.dynamics.node.selection.Selection` of it).  Derived data are kept in ``cache``
    (:class:`ModelCache`, slots keyed by what they depend on)."""

    model: Model
    nb: int
    nj: int
    groups: list
    group_of: NDArray
    vel_off: NDArray
    nv: int
    jnt_a: NDArray
    jnt_b: NDArray
    jnt_constrained: NDArray
    jnt_k: NDArray
    jnt_c: NDArray
    jnt_ref: NDArray
    jnt_universal: NDArray
    jnt_drives: list  # (joint, comp, f, df)
    gravity: NDArray
    point_forces: list
    point_torques: list
    spring_names: list
    length_scale: float
    att_a: object = None
    att_b: object = None
    forces: object = None
    #: derived data kept for reuse (:class:`ModelCache`); no other attribute can be added (slots)
    cache: ModelCache = field(default_factory=ModelCache, repr=False)

    @property
    def ground(self) -> int:
        return self.nb

    @property
    def total_mass(self) -> float:
        return float(sum(g.mass.sum() for g in self.groups))

    def body_slots(self) -> NDArray:
        out = np.zeros(self.nb, dtype=np.int64)
        for g in self.groups:
            out[g.bodies] = g.slots
        return out


def _body_groups(model: Model):
    from flexmb.dynamics.bodies import BODY_TYPES

    kinds = [type(b).__name__ for b in model.bodies]
    unknown = sorted(set(kinds) - set(BODY_TYPES))
    if unknown:
        raise ModelError(f"no body type evaluates {unknown[0]} bodies; known body types: {', '.join(BODY_TYPES)}")
    groups, group_of = [], np.zeros(len(kinds), dtype=np.int64)
    for name, cls in BODY_TYPES.items():
        idx = np.array([k for k, kind in enumerate(kinds) if kind == name], dtype=np.int64)
        if idx.size:
            group_of[idx] = len(groups)
            grp = cls(model, idx)
            grp.group_index = len(groups)
            groups.append(grp)
    vel_off = np.zeros(len(kinds), dtype=np.int64)
    nv = 0
    for b in range(len(kinds)):
        vel_off[b] = nv
        nv += groups[group_of[b]].nv
    for grp in groups:
        grp.vel_cols = vel_off[grp.bodies][:, None] + np.arange(grp.nv)
    return groups, group_of, vel_off, nv


def compile_model(model: Model, contact_rows: bool = False) -> CompiledModel:
    """``contact_rows``: the frictionless plane contacts as hidden joints (their rows are switched on while
    they rest: :mod:`flexmb.dynamics.impact.resting`)."""
    from flexmb.dynamics.elements.attachments import AttachmentSet
    from flexmb.dynamics.elements.forces import compile_forces

    if contact_rows and model.contacts:
        from flexmb.dynamics.impact.resting import with_contact_rows

        model = with_contact_rows(model)

    nb = len(model.bodies)
    nj = len(model.joints)
    groups, group_of, vel_off, nv = _body_groups(model)
    ja = np.zeros(nj, int)
    jb = np.zeros(nj, int)
    pa, pb = np.zeros((nj, 3)), np.zeros((nj, 3))
    Aa = np.tile(np.eye(3), (nj, 1, 1))
    Ab = np.tile(np.eye(3), (nj, 1, 1))
    sa, sb = [None] * nj, [None] * nj
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
        pa[j], pb[j] = fa.origin, fb.origin
        Aa[j] = fa.orientation
        Ab[j] = fb.orientation
        sa[j], sb[j] = getattr(fa, "site", None), getattr(fb, "site", None)
        cons[j] = jt.constrained
        univ[j] = isinstance(jt, Universal)
        for comp, (f, df) in jt.drives().items():
            drives.append((j, comp, f, df))
        for comp, (k, c, r) in jt.free_law().items():
            kk[j, comp], cc[j, comp], ref[j, comp] = k, c, r

    g = np.zeros(3)
    pf, pt, springs = [], [], []
    for f in model.forces:
        if isinstance(f, Gravity):
            g = g + f.g
        elif isinstance(f, PointForce):
            pf.append(f)
        elif isinstance(f, PointTorque):
            pt.append(f)
        elif isinstance(f, SpringDamper):
            springs.append(f)
        else:
            raise ModelError(f"unknown force element {f!r}; use Gravity, PointForce, PointTorque or SpringDamper")
    for a in (group_of, vel_off, ja, jb, kk, cc, ref, g, cons, univ):
        a.flags.writeable = False  # the model's data
    # built in two stages (the attachment sets and the force elements read the bodies' data)
    bodies = CompiledModel(
        model=model, nb=nb, nj=nj, groups=groups, group_of=group_of, vel_off=vel_off, nv=nv,
        jnt_a=ja, jnt_b=jb, jnt_constrained=cons, jnt_k=kk, jnt_c=cc, jnt_ref=ref, jnt_universal=univ,
        jnt_drives=drives, gravity=g, point_forces=pf, point_torques=pt,
        spring_names=[s.name for s in springs], length_scale=model.size,
    )
    has_site = any(s is not None for s in sa + sb)
    joints = replace(bodies, att_a=AttachmentSet(bodies, ja, pa, Aa, sa if has_site else None),
                     att_b=AttachmentSet(bodies, jb, pb, Ab, sb if has_site else None))
    x0, R0, _ = initial_configuration(joints)
    st0 = ElementStart(t=0.0, x=x0, R=R0, pi=np.zeros(nv), s=np.zeros((0, 3)), Rr=np.zeros((0, 3, 3)),
                       lam=np.zeros((0, 6)), acc=np.zeros((0, 3)))
    # (the initial configuration carried over: the same model and bodies)
    return replace(joints, forces=compile_forces(joints, pf, pt, springs, st0), cache=ModelCache(initial=joints.cache.initial))


@dataclass
class ElementStart:
    """Start values of one time element (end values of the previous one).

    Bodies: ``t``, ``x (nb,3)`` reference point of each body (rigid: centre of mass), ``R (nb,3,3)``,
    ``pi (nv,)`` modified momenta in the global velocity layout (``CompiledModel.vel_off``; the first
    six of every body: force part, moment part about the reference point), ``extra``: body-type
    specific end values (per group index).
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
    extra: dict = field(default_factory=dict)
    #: the closed loops' self-stresses at this node, ``(selection key, found)``: ``found`` as
    #: :func:`flexmb.dynamics.variants.singular_node.self_stresses` returns it (None: a regular node) for the
    #: constraint selection ``key`` (:attr:`flexmb.dynamics.node.selection.Selection.key`); set by the
    #: singular-node check of the element that ends here, read by the node projection; None: not checked
    self_stresses: tuple | None = field(default=None, repr=False, compare=False)

    def copy(self) -> "ElementStart":
        """A copy with its own arrays; without the node's checks (``self_stresses``: the copy may be moved)."""
        return replace(self, x=self.x.copy(), R=self.R.copy(), pi=self.pi.copy(), s=self.s.copy(),
                       Rr=self.Rr.copy(), lam=self.lam.copy(), acc=self.acc.copy(),
                       extra={k: v.copy() for k, v in self.extra.items()}, self_stresses=None)


def with_ground(a: NDArray, value) -> NDArray:
    """Append the ground entry (index nb) to a per-body array."""
    g = np.broadcast_to(np.asarray(value, dtype=float), a.shape[1:])[None]
    return np.concatenate([a, g], axis=0)


def initial_configuration(cm: CompiledModel):
    """Reference-point positions ``x (nb,3)``, rotations ``R (nb,3,3)`` and velocities ``w (nv,)``
    (global velocity layout) from the model's initial conditions (fresh arrays; computed once per compiled
    model, ``cm.cache.initial``: a run's start asks three times)."""
    if cm.cache.initial is None:
        x = np.zeros((cm.nb, 3))
        R = np.zeros((cm.nb, 3, 3))
        w = np.zeros(cm.nv)
        for grp in cm.groups:
            xg, Rg, wg = grp.initial(cm.model)
            x[grp.bodies], R[grp.bodies] = xg, Rg
            w[grp.vel_cols] = wg
        for a in (x, R, w):
            a.flags.writeable = False
        cm.cache.initial = (x, R, w)
    return tuple(a.copy() for a in cm.cache.initial)




def initial_state(cm: CompiledModel, t0: float = 0.0, sel=None):
    """Element-start state at ``t0`` from the model's initial conditions.

    Returns ``(start, w0)``: the :class:`ElementStart` and the body velocities ``w0 (nv,)``, after
    checking that the joints are assembled and projecting the initial velocities onto the joint
    constraints kept by ``sel`` (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's
    full set).
    """
    from flexmb.dynamics.node.selection import Selection

    sel = sel if sel is not None else Selection.full(cm)
    from flexmb.dynamics.elements.joints import drive_targets

    model = cm.model
    x, R, w0 = initial_configuration(cm)
    st = ElementStart(t=t0, x=x, R=R, pi=np.zeros(cm.nv), s=np.zeros((cm.nj, 3)), Rr=np.tile(np.eye(3), (cm.nj, 1, 1)),
                      lam=np.zeros((cm.nj, 6)), acc=np.zeros((cm.nj, 3)))
    for grp in cm.groups:  # body-type end values (modal coordinates of flexible bodies)
        if hasattr(grp, "initial_extra"):
            st.extra.update(grp.initial_extra())
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    s = np.einsum("nji,nj->ni", Ra, xb - xa)
    Rr = np.swapaxes(Ra, 1, 2) @ Rb
    phi = rot.log(Rr) if cm.nj else np.zeros((0, 3))
    acc = phi.copy()
    if cm.nj:
        # assembly check on the constrained components (vectorized; message for the worst joints)
        tgt, _ = drive_targets(cm, np.array([t0]))
        q = np.concatenate([s, phi], axis=1)
        err = np.where(sel.constrained, q - tgt[..., 0], 0.0)
        tol = np.concatenate([np.full(3, model.assembly_tol * cm.length_scale), np.full(3, model.assembly_tol)])
        bad = np.abs(err) > tol
        cross = np.where(sel.universal, Rr[:, 0, 1], 0.0)
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
    st.s, st.Rr, st.acc = s, Rr, acc
    w0 = project_velocities(cm, st, w0, t0, sel)
    st.pi = node_momenta(cm, st, w0)
    return st, w0
