"""The linearized equations of a model at a state at rest, read off the p = 1 time element.

One implementation of every law: the residual and the analytic Jacobian of the time element
(:class:`~flexmb.dynamics.solve.evaluation.ElementSystem`) are the only source of the equations.
At ``p = 1`` every row of the element is either

* *differential*, ``R = 2 (Y - y1) - h f(Y)`` (bodies' positions, rotation increments, modal
  coordinates, modified momenta; joints' multipliers), or
* *algebraic*, ``R = g(Y)`` at the Gauss point or ``g(2 Y - y1)`` at the end node (bodies'
  constitutive law, joints' relative kinematics, laws and attachment velocities),

and, at a fixed ``U``, the residual and the Jacobian are affine in the element length ``h``:
``J(h) = J0 + h J1``.  Two evaluations (``h = 1`` and ``h = 2``) give ``J0`` and ``J1`` exactly;
the continuous equations ``E y' = A y`` linearized at the node values are ``E = J0 / 2``,
``A = -J1`` on the differential rows and ``E = 0``, ``A = -J0`` on the algebraic ones (rows at the
end node divided by their weight 2, so that every row is the derivative of the continuous law).

The node values are taken in the gauge of the marching driver after its reset: multipliers
``lambda = 0`` and modified momenta ``pi = p`` (zero at rest).  In that gauge the multipliers of a
loaded joint grow, ``lambda' = R_A Qbar``, and the term ``d(B^T)/dz lambda`` of the bodies'
constitutive law (the lever of a reaction turning with its body: all the stiffness of a pendulum)
is ``t``-dependent; it is moved into the momentum rows as the *lever stiffness*
``K_B = d(B^T lam_dot)/dz`` (``lam_dot = R_A Qbar``), read from the same constitutive rows evaluated
with ``Lambda = lam_dot``.  With it ``s (pi + B^T lambda) = s M w`` is the linearized Newton-Euler
balance ``d(M w)/dt = F + B^T R_A Qbar`` (docs/theory.md, section "Equilibrium and linearization").
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.dynamics.elements.joint_law import HELD, UNIV_CROSS
from flexmb.dynamics.elements.joints import law_data
from flexmb.dynamics.layout import JLAM, JNA, JNB, JPHI, JQ, JS
from flexmb.dynamics.solve.evaluation import ElementSystem
from flexmb.dynamics.system import CompiledModel, ElementStart, ModelCache, compile_model
from flexmb.dynamics.time_elements import TimeElement

#: the p = 1 element (implicit midpoint): D = [-2, 2], end-node weight E = [-1, 2]
P1 = TimeElement.of_order(1)


#: the last compiled models, ``id(model) -> (model, CompiledModel)`` (least recently used first): a Model is
#: immutable, so its compiled form is built once and shared by the equilibrium, linearization,
#: eigen analysis and sensitivity calls on the same model (:func:`compiled`).  Bounded: a compiled model
#: refers to its model, so a cache keyed weakly on the model would keep every model alive
_COMPILED: OrderedDict = OrderedDict()
#: how many compiled models are kept
COMPILED_KEEP = 4


def compiled(model) -> CompiledModel:
    """``compile_model(model)``, built once per Model object among the last ``COMPILED_KEEP`` (the set-up of
    a 50-mode body, 0.04 s, was paid again by every ``equilibrium`` call).  Callers never mutate it:
    :func:`frozen` copies it with a fresh cache."""
    key = id(model)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] is model:
        _COMPILED.move_to_end(key)
        return hit[1]
    cm = compile_model(model)
    _COMPILED[key] = (model, cm)  # (the model is held: its id is not reused while cached)
    while len(_COMPILED) > COMPILED_KEEP:
        _COMPILED.popitem(last=False)
    return cm


def frozen(cm: CompiledModel, t: float) -> CompiledModel:
    """A copy of ``cm`` whose drives and loads are held at their values at ``t`` (constants; state
    callbacks ``f(t, state)`` keep the state and see the time ``t``)."""
    drives = []
    for (j, comp, f, _df) in cm.jnt_drives:
        v = float(np.asarray(f(np.array([t])), dtype=float).reshape(-1)[0])
        drives.append((j, comp, lambda tt, v=v: np.full(np.shape(tt), v), lambda tt: np.zeros(np.shape(tt))))
    loads = []
    for ld in cm.forces.loads:
        if ld.timefn:
            from flexmb.dynamics.elements.forces import load_values
            ld = SimpleNamespace(**{**vars(ld), "value": load_values(ld, np.array([t]))[0], "timefn": False})
        elif ld.callback:
            fn = ld.value
            ld = SimpleNamespace(**{**vars(ld), "value": (lambda tt, state, fn=fn: fn(t, state))})
        loads.append(ld)
    out = replace(cm, jnt_drives=drives, forces=SimpleNamespace(**{**vars(cm.forces), "loads": loads}),
                  cache=ModelCache())  # a fresh cache (the full constraint set: no run's selection)
    return out


@dataclass
class Indices:
    """Global indices (p = 1 layout) of the unknowns and rows the linearization uses, in model order.

    ``z (nv,)``: configuration columns of every body (position, rotation increment, modal
    coordinates), one per velocity coordinate; ``w``, ``pi (nv,)``: velocity and modified-momentum
    slots in the same order; ``lam``, ``q (6 nj,)``: the joints' multipliers and reactions;
    ``rel (6 nj,)``: relative position and rotation; ``nu (12 nj,)``: attachment velocities;
    ``diff``: the differential rows (z, pi, lam); ``cons``: the algebraic rows imposed at the end
    node (relative kinematics, held and cross-condition law rows)."""

    z: NDArray
    w: NDArray
    pi: NDArray
    lam: NDArray
    q: NDArray
    rel: NDArray
    nu: NDArray
    diff: NDArray
    cons: NDArray
    size: int


def indices(cm: CompiledModel, lay) -> Indices:
    z, w, pi = np.zeros(cm.nv, np.int64), np.zeros(cm.nv, np.int64), np.zeros(cm.nv, np.int64)
    for grp in cm.groups:
        nz = grp.nv - 6  # modal coordinates (0 for a rigid body)
        for k, b in enumerate(grp.bodies):
            cols = grp.vel_cols[k]
            zb = [lay.body(np.array([b]), np.array([0]), grp.BX, 3)[0], lay.body(np.array([b]), np.array([0]), grp.BTH, 3)[0]]
            if nz:
                zb.append(lay.body(np.array([b]), np.array([0]), grp.BQ, nz)[0])
            z[cols] = np.concatenate(zb)
            w[cols] = lay.body(np.array([b]), np.array([0]), grp.BW, grp.nv)[0]
            pi[cols] = lay.body(np.array([b]), np.array([0]), grp.BPI, grp.nv)[0]
    jn = np.arange(cm.nj)
    zero = np.zeros(cm.nj, np.int64)
    lam = lay.joint(jn, zero, JLAM, 6).reshape(-1)
    q = lay.joint(jn, zero, JQ, 6).reshape(-1)
    rel = np.concatenate([lay.joint(jn, zero, JS, 3), lay.joint(jn, zero, JPHI, 3)], axis=1).reshape(-1)
    nu = np.concatenate([lay.joint(jn, zero, JNA, 6), lay.joint(jn, zero, JNB, 6)], axis=1).reshape(-1)
    kind = law_data(cm).kind
    held = q.reshape(cm.nj, 6)[(kind == HELD) | (kind == UNIV_CROSS)]
    return Indices(z=z, w=w, pi=pi, lam=lam, q=q, rel=rel, nu=nu, diff=np.concatenate([z, pi, lam]),
                   cons=np.concatenate([rel, held]), size=lay.size)


class ElementPencil:
    """The p = 1 element of a model with its drives and loads frozen at ``t``, evaluated at node
    states at rest (or in steady motion with body velocities ``w``)."""

    def __init__(self, model, t: float = 0.0, cm: CompiledModel | None = None):
        self.t = float(t)
        self.cm = frozen(compiled(model) if cm is None else cm, self.t)
        self.system = ElementSystem(self.cm, P1)
        self.lay = self.system.lay
        self.ix = indices(self.cm, self.lay)
        #: weight of the end node in the element's polynomial (u(t2) = -y1 + 2 Y at p = 1)
        self.end_weight = float(P1.E[-1, 1])

    def unknowns(self, st: ElementStart, Q: NDArray, w: NDArray | None = None, lam: NDArray | None = None) -> NDArray:
        """The element's unknowns at the node ``st``: internal values equal to the node values
        (rotation increments zero), velocities ``w (nv,)`` (default 0), reactions ``Q (nj, 6)`` (frame
        A), multipliers ``lam (nj, 6)`` (default 0, the gauge after the reset), attachment
        velocities from ``w`` (zero at rest)."""
        cm, lay = self.cm, self.lay
        U = np.zeros(lay.size)
        w = np.zeros(cm.nv) if w is None else np.asarray(w, float)
        for grp in cm.groups:
            grp.predict_cold(P1, st, 0.0, w[grp.vel_cols], lay.group_view(U, grp.bodies, grp.slots))
        if cm.nj:
            Jv = lay.joint_view(U)
            Jv[:, 0, JS:JS + 3] = st.s
            Jv[:, 0, JQ:JQ + 6] = Q
            if lam is not None:
                Jv[:, 0, JLAM:JLAM + 6] = lam
        return U

    def evaluate(self, st: ElementStart, U: NDArray, jacobian: bool = True):
        """``r0, r1`` (residual ``r(h) = r0 + h r1``) and ``J0, J1`` (CSR; None without ``jacobian``)
        at ``U``; the Jacobian's end-node rows divided by their weight (``d/dY g(2 Y - y1) = 2 g'``),
        so that every row is the derivative of its law at the node."""
        out = []
        for h in (1.0, 2.0):
            s = replace(st, t=self.t - h)  # the end node (constraints, drives) at t
            r, J = self.system.evaluate(U, s, h, jacobian=jacobian)
            out.append((r, J))
        (ra, Ja), (rb, Jb) = out
        r1 = rb - ra
        r0 = ra - r1
        scale = np.ones(self.lay.size)
        scale[self.ix.cons] = 1.0 / self.end_weight
        if not jacobian:
            return r0, r1, None, None
        D = sp.diags(scale)
        J1 = (D @ (Jb - Ja)).tocsr()
        J0 = (D @ (Ja - (Jb - Ja))).tocsr()
        return r0, r1, J0, J1

    def lever_stiffness(self, st: ElementStart, U: NDArray, lam_dot: NDArray, J0: sp.csr_matrix) -> sp.csr_matrix:
        """``K_B (nv, nv) = d(B^T lam_dot)/dz``: the constitutive rows' Jacobian on the configuration
        with ``Lambda = lam_dot (nj, 6)`` minus that with ``Lambda = 0`` (``J0``), sign of a force."""
        ix = self.ix
        if not self.cm.nj:
            return sp.csr_matrix((self.cm.nv, self.cm.nv))
        if not np.any(lam_dot):
            return sp.csr_matrix((self.cm.nv, self.cm.nv))
        Ul = U.copy()
        self.lay.joint_view(Ul)[:, 0, JLAM:JLAM + 6] = lam_dot
        # the constitutive rows are algebraic (no h): one evaluation at h = 1 gives their J0
        _, Jl = self.system.evaluate(Ul, replace(st, t=self.t - 1.0), 1.0)
        return -(Jl.tocsr()[ix.w][:, ix.z] - J0[ix.w][:, ix.z]).tocsr()

    def algebraic_residual(self, st: ElementStart, U: NDArray) -> NDArray:
        """The residual at ``h = 1`` (one evaluation): exact on the algebraic rows, which have no ``h``."""
        return self.system.evaluate(U, replace(st, t=self.t - 1.0), 1.0, jacobian=False)[0]
