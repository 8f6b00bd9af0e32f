"""The fused evaluator: a whole time element of a rigid-only model in one compiled call.

Chosen once, when :class:`~flexmb.dynamics.solve.evaluation.ElementSystem` is built, for a model whose
bodies are all plain :class:`~flexmb.dynamics.bodies.rigid.RigidBodies` (one group) and whose point loads
are constants or functions of time (a state callback is Python, called per evaluation with central
differences: such a model keeps the general evaluator).  Every joint type, drive, spring and damper,
the consistent transport, point loads and spring-dampers are covered.

The physics is the one implementation of each law (rigid body, rigid attachments, joint laws, force
laws); :func:`flexmb.dynamics.solve.fused_element.element` and the modules :mod:`.fused_kernels` and
:mod:`.fused_joints` only call them and place the values in the pattern recorded by the general
evaluator (module docstring of :mod:`.fused_kernels`).  User functions of time (drive targets, loads)
are evaluated here in Python before the kernel runs.  Newton's loop around the element:
:mod:`.fused_newton`.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies.rigid_kernels import RIGID_N_LOCAL
from flexmb.dynamics.elements.forces import load_values
from flexmb.dynamics.elements.joints import SLOTS, consistent_transport, constraint_targets, law_data, transport_matrices
from flexmb.dynamics.layout import JOINT_SLOTS
from flexmb.dynamics.solve.fused_element import element, gauss_origins
from flexmb.dynamics.solve.fused_newton import compiled_newton

_I3 = np.eye(3)


def _side(att) -> tuple:
    """An attachment set of a rigid-only model as a side tuple of :mod:`.fused_kernels`."""
    gx = np.ascontiguousarray(np.where(att.ground[:, None], att.ground_point, 0.0))
    gR = np.ascontiguousarray(np.where(att.ground[:, None, None], att.frame, 0.0))
    if not att.parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), gx, gR, False)
    (_g, mask, local, data), = att.parts
    return (np.nonzero(mask)[0].astype(np.int64), np.ascontiguousarray(local, dtype=np.int64),
            np.ascontiguousarray(data.c, dtype=float), np.ascontiguousarray(data.A, dtype=float), gx, gR,
            bool(np.any(data.c)))


def _pairs(sa, sb) -> tuple[NDArray, NDArray]:
    """The entries on bodies of both sides, increasing: their positions in ``sa``'s and ``sb``'s lists."""
    both = np.intersect1d(sa[0], sb[0])
    return (np.searchsorted(sa[0], both).astype(np.int64), np.searchsorted(sb[0], both).astype(np.int64))


class FusedEvaluator:
    """The evaluator of rigid-only models (module docstring): model-constant arrays built here (again
    when the constrained components change), start values and user functions per call."""

    name = "fused"

    @staticmethod
    def applies(cm) -> bool:
        """Whether the model is rigid-only (one group of plain rigid bodies; a subclass or a test double
        keeps the general evaluator) without state callbacks among its loads."""
        from flexmb.dynamics.bodies.rigid import RigidBodies

        return (len(cm.groups) == 1 and type(cm.groups[0]) is RigidBodies and cm.groups[0].n == cm.nb
                and not any(ld.callback for ld in cm.forces.loads))

    def __init__(self, cm, te) -> None:
        self.cm, self.te = cm, te
        grp = cm.groups[0]
        self.grp = grp
        self.nb, self.nj, self.p = cm.nb, cm.nj, te.p
        Ainv, Dh = transport_matrices(te)
        self.te_t = (np.ascontiguousarray(te.E), np.ascontiguousarray(te.D), Ainv, Dh)
        self.consistent = bool(consistent_transport(te))
        self.sa, self.sb = _side(cm.att_a), _side(cm.att_b)
        self.ab = _pairs(self.sa, self.sb)
        self.body_const = (grp.mass, grp.J0, np.asarray(cm.gravity, dtype=float), grp._slot_starts)
        self.loads = self._loads(cm)
        self.springs = self._springs(cm)
        self._law_key = None
        self._law = None
        self._no_targets = np.zeros((self.nj, 6, self.p))  # (read by the kernels only)
        self._no_loads = np.zeros((0, self.p, 3))
        self._bs = None
        self._checked = None

    # ------------------------------------------------------------------ model-constant arrays
    @staticmethod
    def _loads(cm) -> tuple:
        L = [ld for ld in cm.forces.loads]
        nl = len(L)
        loc, c, A, lever = np.zeros(nl, np.int64), np.zeros((nl, 3)), np.tile(_I3, (nl, 1, 1)), np.zeros(nl, bool)
        k0, body = np.zeros(nl, np.int64), np.zeros(nl, bool)
        for i, ld in enumerate(L):
            (_g, _mask, local, data), = ld.att.parts
            loc[i], c[i], A[i], lever[i] = local[0], data.c[0], data.A[0], bool(np.any(data.c))
            k0[i] = 0 if ld.kind == "force" else 3
            body[i] = ld.frame == "body"
        return loc, c, A, lever, k0, body

    @staticmethod
    def _springs(cm) -> tuple:
        S = cm.forces.springs
        if S is None:
            z = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                 np.zeros((0, 3, 3)), False)
            return (z, z, np.zeros(0), np.zeros(0), np.zeros(0), (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        sa, sb = _side(S.a), _side(S.b)
        return (sa, sb, np.ascontiguousarray(S.k, dtype=float), np.ascontiguousarray(S.c, dtype=float),
                np.ascontiguousarray(S.L0, dtype=float), _pairs(sa, sb))

    def _laws(self, sel) -> tuple:
        """The joints' laws and the components of each law block under the selection ``sel`` (the
        layout's; again when it changes)."""
        law = law_data(self.cm, sel)
        if self._law is None or self._law_key is not law.key:
            self._law_key = law.key
            (jh, mh), (jf, mf), (jd, md) = law.held, law.free, law.damp
            sa, sb = self.sa, self.sb
            on_a = np.isin(sa[0], jd)
            on_b = np.isin(sb[0], jd)
            i64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
            self._law = (law.k, law.c, law.ref, law.kind, i64(jh), i64(mh), i64(jf), i64(mf),
                         np.ascontiguousarray(law.k[jf, mf]), i64(jd), i64(md), i64(np.nonzero(on_a)[0]),
                         i64(np.nonzero(on_b)[0]), i64(law.ju), self.ab[0], self.ab[1], self.consistent)
        return self._law

    # ------------------------------------------------------------------ per call
    def arguments(self, st, h: float, lay) -> tuple:
        """``(body, jt, loads)`` of :func:`element` for the element of length ``h`` from ``st``: start
        values, drive targets and load values at this element's times."""
        cm, te = self.cm, self.te
        if self._bs is None or self._bs[0] is not lay:
            self._bs = (lay, np.ascontiguousarray(lay.body_start[self.grp.bodies]))
        mass, J0, g, bsl = self.body_const
        # (the node states' arrays are contiguous: made by the end values, the initial state, a checkpoint)
        body = (st.x, st.R, st.pi.reshape(self.nb, 6), mass, J0, g, bsl, self._bs[1], self.grp.slots)
        law = self._laws(lay.selection)
        tgt = constraint_targets(cm, st.t + h * te.tau_c) if cm.jnt_drives else self._no_targets
        jt = (st.s, st.lam, st.Rr, st.acc, tgt) + law
        if cm.forces.loads:
            t_gauss = st.t + h * te.c
            vals = np.array([load_values(ld, t_gauss) for ld in cm.forces.loads]).reshape(-1, self.p, 3)
        else:
            vals = self._no_loads
        return body, jt, self.loads + (vals,)

    def triplets(self, system, U: NDArray, st, h: float, trip) -> NDArray:
        """Residual ``(n,)``; with the Jacobian its values into ``trip.buffer`` (values-only ``trip``)."""
        lay, p = system.lay, self.p
        body, jt, loads = self.arguments(st, h, lay)
        jac = trip.jacobian
        res = np.zeros(lay.size)
        off = lay.joint_off
        if jac:
            pat = trip.pattern  # (values-only evaluation: the pattern recorded by the general evaluator)
            buf = trip.buffer
            vals = buf[pat.offsets[0]:pat.offsets[1]].reshape(self.nb, p, -1)
        else:
            buf, vals = np.empty(0), np.empty((0, 0, 0))
        ns = self.grp.slots
        n = element(float(h), self.te_t, body, U[:off].reshape(self.nb, p, ns), U[off:].reshape(self.nj, p, JOINT_SLOTS),
                    SLOTS, self.sa, self.sb, jt, loads, self.springs, res[:off].reshape(self.nb, p, ns),
                    res[off:].reshape(self.nj, p, JOINT_SLOTS), res, jac, vals, buf)
        if jac:
            self.check(pat, n)
            trip.all_written()
        return res

    def check(self, pat, n: int) -> None:
        """The values written fill the pattern (once per pattern; a mismatch is a bug of this module)."""
        if self._checked is not pat:
            if n != pat.n_entries or pat.offsets[1] - pat.offsets[0] != self.nb * self.p * (12 * self.p + RIGID_N_LOCAL):
                raise AssertionError(f"fused evaluator: {n} Jacobian values for a pattern of {pat.n_entries}")
            self._checked = pat

    def gauss_xb(self, system, st, h: float, U: NDArray, lay) -> NDArray:
        grp = self.grp
        return gauss_origins(self.te_t[0], np.ascontiguousarray(st.x), np.ascontiguousarray(st.R),
                             np.ascontiguousarray(system.lay.group_view(U, grp.bodies, grp.slots)), grp._slot_starts,
                             self.sb, self.nj, self.p)

    def newton(self, system, st, h: float, U0, scale, factor, options):
        """The compiled Newton loop (:mod:`.fused_newton`) where it applies and answers, else None."""
        return compiled_newton(self, system, st, h, U0, scale, factor, options)

