"""The fused evaluator: a whole time element in one compiled call.

Chosen once, when :class:`~flexmb.dynamics.solve.evaluation.ElementSystem` is built
(:meth:`FusedEvaluator.applies`), for a model whose bodies are plain
:class:`~flexmb.dynamics.bodies.rigid.RigidBodies` and :class:`~flexmb.dynamics.bodies.modal.FlexibleBodies`
(with modes) and whose point loads are constants or functions of time (a state callback is Python,
called per evaluation with central differences: such a model keeps the general evaluator).  Every joint
type, drive, spring and damper, point loads and spring-dampers are covered, the consistent transport
for rigid-only models; a model with a modal body keeps the general evaluator when a force element sits
on a modal body or the time element uses the consistent transport (not written for modal sides).

The physics is the one implementation of each law (rigid body, rigid attachments, joint laws, force
laws); :func:`flexmb.dynamics.solve.fused_element.whole_element` and the modules :mod:`.fused_kernels` and
:mod:`.fused_joints` only call them and place the values in the pattern recorded by the general
evaluator (module docstring of :mod:`.fused_kernels`).  User functions of time (drive targets, loads)
are evaluated here in Python before the kernel runs.  Newton's loop around the element:
:mod:`.fused_newton`.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import logging

from flexmb.dynamics.bodies.modal_residual import kernel_start, n_values
from flexmb.dynamics.bodies.rigid_kernels import RIGID_N_LOCAL
from flexmb.dynamics.elements.forces import load_values
from flexmb.dynamics.elements.joints import SLOTS, consistent_transport, constraint_targets, law_data, transport_matrices
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.layout import JOINT_SLOTS
from flexmb.dynamics.solve.fused_element import gauss_origins, gauss_origins_modal, whole_element
from flexmb.dynamics.solve.compiled_loop import compiled_newton, loop_backend
from flexmb.dynamics.solve.packing import BR, FR, FW, IR, IW
from flexmb.errors import SingularMatrixError

log = logging.getLogger(__name__)
_I3 = np.eye(3)


def _part(att, kind: str):
    """``(mask, local, data)`` of the entries of an attachment set on the group of ``kind``, or None."""
    for g, mask, local, data in att.parts:
        if att.groups[g].kind == kind:
            return mask, local, data
    return None


def _side(att) -> tuple:
    """An attachment set's ground and rigid entries as a side tuple of :mod:`.fused_kernels`."""
    gx = np.ascontiguousarray(np.where(att.ground[:, None], att.ground_point, 0.0))
    gR = np.ascontiguousarray(np.where(att.ground[:, None, None], att.frame, 0.0))
    part = _part(att, "rigid")
    if part is None:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), gx, gR, False)
    mask, local, data = part
    return (np.nonzero(mask)[0].astype(np.int64), np.ascontiguousarray(local, dtype=np.int64),
            np.ascontiguousarray(data.c, dtype=float), np.ascontiguousarray(data.A, dtype=float), gx, gR,
            bool(np.any(data.c)))


def _modal_part(att, nm: int) -> tuple:
    """An attachment set's entries on modal bodies as a modal part of :mod:`.fused_modal`."""
    part = _part(att, "flexible")
    if part is None:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)),
                np.zeros((0, 3, nm)), np.zeros((0, 3, nm)))
    mask, local, data = part
    c = np.ascontiguousarray
    return (np.nonzero(mask)[0].astype(np.int64), c(local, dtype=np.int64), c(data.c, dtype=float),
            c(data.A, dtype=float), c(data.Pt, dtype=float), c(data.Pr, dtype=float))


def _side_pieces(side) -> list:
    """A side tuple's pieces of :func:`.packing.pack` (its flag as an int64)."""
    sel, loc, c, A, gx, gR, lever = side
    return [(IR, sel), (IR, loc), (FR, c), (FR, A), (FR, gx), (FR, gR), (IR, np.int64(lever))]


def _pairs(sa, sb) -> tuple[NDArray, NDArray]:
    """The entries on bodies of both sides, increasing: their positions in ``sa``'s and ``sb``'s lists.
    Fresh writable arrays, the one exception to the read-only constants (:func:`flexmb.dynamics.kernels.frozen`):
    the kernels loop over them in tuples with index arrays they make themselves (one type per tuple)."""
    both = np.intersect1d(sa[0], sb[0])
    return (np.searchsorted(sa[0], both).astype(np.int64), np.searchsorted(sb[0], both).astype(np.int64))


class FusedEvaluator:
    """The fused evaluator (module docstring): model-constant arrays built here (again when the
    constrained components change), start values and user functions per call."""

    name = "fused"

    @staticmethod
    def applies(cm, te=None) -> bool:
        """Whether the model's bodies are plain rigid bodies and modal bodies with modes (a subclass or a
        test double keeps the general evaluator) without state callbacks among its loads; with a modal
        body, no force element on one and (``te``) no consistent transport (module docstring)."""
        from flexmb.dynamics.bodies.modal import FlexibleBodies
        from flexmb.dynamics.bodies.rigid import RigidBodies

        kinds = [type(g) for g in cm.groups]
        if kinds not in ([RigidBodies], [FlexibleBodies], [RigidBodies, FlexibleBodies]):
            return False
        if any(ld.callback for ld in cm.forces.loads):
            return False
        if FlexibleBodies not in kinds:
            return True
        S = cm.forces.springs
        on_modal = [ld.att for ld in cm.forces.loads] + ([] if S is None else [S.a, S.b])
        return (cm.groups[-1].nm > 0 and not any(_part(att, "flexible") for att in on_modal)
                and not (te is not None and consistent_transport(te)))

    def __init__(self, cm, te) -> None:
        self.cm, self.te = cm, te
        rigid = [g for g in cm.groups if g.kind == "rigid"]
        modal = [g for g in cm.groups if g.kind == "flexible"]
        self.grp = rigid[0] if rigid else None
        self.mgrp = modal[0] if modal else None
        self.nb, self.nj, self.p = (self.grp.n if rigid else 0), cm.nj, te.p
        self.nbm = self.mgrp.n if modal else 0
        Ainv, Dh = transport_matrices(te)
        self.te_t = (np.ascontiguousarray(te.E), np.ascontiguousarray(te.D), Ainv, Dh)
        self.consistent = bool(consistent_transport(te))
        # the model constants in the kernels' form: read-only, contiguous (flexmb.dynamics.kernels.frozen)
        self.sa, self.sb = frozen(_side(cm.att_a)), frozen(_side(cm.att_b))
        self.ab = _pairs(self.sa, self.sb)  # (pairs stay writable: _pairs)
        nm = self.mgrp.nm if modal else 0
        ma, mb = _modal_part(cm.att_a, nm), _modal_part(cm.att_b, nm)
        self.mp = frozen((ma, mb)) + (_pairs(self.sa, mb), _pairs(ma, self.sb), _pairs(ma, mb))
        g = np.asarray(cm.gravity, dtype=float)
        if rigid:
            self.body_const = frozen((self.grp.mass, self.grp.J0, g, self.grp._slot_starts))
            self.slots = self.grp.slots
        else:  # (an empty rigid group: the rigid kernels loop over no body)
            self.body_const = frozen((np.zeros(0), np.zeros((0, 3, 3)), g, np.array([0, 3, 6, 12], dtype=np.int64)))
            self.slots = 18
        self.slots_m = self.mgrp.slots if modal else 18
        #: Jacobian values per body and point of each group's own rows
        self.nv = (12 * self.p + RIGID_N_LOCAL, n_values(self.mgrp, self.p) if modal else 0)
        self._no_modal = None if modal else self._empty_modal()
        self.loads = frozen(self._loads(cm))
        springs = self._springs(cm)
        self.springs = frozen(springs[:5]) + springs[5:]
        self._law_key = None
        self._law = None
        self._no_targets = frozen(np.zeros((self.nj, 6, self.p)))  # (read by the kernels only)
        self._no_loads = np.zeros((0, self.p, 3))
        self._bs = None
        #: the compiled Newton loop's packing of these constants and the pattern's, before the LU structure's
        #: pieces: ``(pattern, layout key, laws, packing)`` (:meth:`.compiled_loop.FusedNewton.packed`)
        self.newton_base = None
        self._checked = None
        log.debug("fused evaluator: %d rigid, %d modal bodies, %d joints", self.nb, self.nbm, self.nj)

    def _empty_modal(self) -> tuple:
        """The ``mod`` tuple of a model without modal bodies (:mod:`.fused_modal`; empty arrays of the
        kernels' types)."""
        from flexmb.dynamics.bodies.modal_matrices import group_data
        from flexmb.dynamics.bodies.modal_residual import force_points

        d = group_data([], 0)
        Ef, Wf = force_points(self.te)
        start = (np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 0)), np.zeros((0, 6)), np.zeros((0, 6)))
        return start + frozen((np.zeros(0), d["S0"], d["S1"], d["J0"], d["J1"], d["J2"], d["psi0"], d["dpsi"], d["Mq"],
                               d["K"], d["C"], d["cs"], d["cu"], d["cV"], d["ql"], d["qA"], Ef, Wf, d["Kg"], d["Ka"],
                               np.zeros(0, np.int64)))

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
            self._law = frozen((law.k, law.c, law.ref, law.kind, i64(jh), i64(mh), i64(jf), i64(mf),
                                np.ascontiguousarray(law.k[jf, mf]), i64(jd), i64(md), i64(np.nonzero(on_a)[0]),
                                i64(np.nonzero(on_b)[0]), i64(law.ju))) + (self.ab[0], self.ab[1], self.consistent)
        return self._law

    # ------------------------------------------------------------------ per call
    def arguments(self, st, h: float, lay) -> tuple:
        """``(body, mod, jt, loads)`` of :func:`~.fused_element.whole_element` for the element of length ``h``
        from ``st``: start values, drive targets and load values at this element's times."""
        te = self.te
        law = self.arguments_constants(lay)[1]
        mass, J0, g, bsl = self.body_const
        if self.nbm == 0:
            # (the node states' arrays are contiguous: made by the end values, the initial state, a checkpoint)
            body = (st.x, st.R, st.pi.reshape(self.nb, 6), mass, J0, g, bsl, self._bs[1], self.slots)
            mod = self._no_modal
        else:
            b = self.grp.bodies if self.grp is not None else np.zeros(0, np.int64)
            cols = self.grp.vel_cols if self.grp is not None else np.zeros((0, 6), np.int64)
            body = (st.x[b], st.R[b], st.pi[cols], mass, J0, g, bsl, self._bs[1], self.slots)
            mod = kernel_start(self.mgrp, st, te) + (self._bs[2],)
        tgt, vals = self.element_values(st, h)
        jt = (st.s, st.lam, st.Rr, st.acc, tgt) + law
        return body, mod, jt, self.loads + (vals,)

    def element_values(self, st, h: float) -> tuple:
        """``(tgt (nj, 6, p), vals (nl, p, 3))``: the drive targets at the element's constraint points and
        the point loads' values at its Gauss points (user functions of time, evaluated here)."""
        cm, te = self.cm, self.te
        tgt = constraint_targets(cm, st.t + h * te.tau_c) if cm.jnt_drives else self._no_targets
        if cm.forces.loads:
            t_gauss = st.t + h * te.c
            vals = np.array([load_values(ld, t_gauss) for ld in cm.forces.loads]).reshape(-1, self.p, 3)
        else:
            vals = self._no_loads
        return tgt, vals

    def rigid_pieces(self, lay) -> list:
        """The model constants of a model without modal bodies as pieces of :func:`.packing.pack`, in the
        order :func:`.fused_newton.newton_rigid` unpacks them (rows 1-66 of its ``M``): the time element's
        matrices (``te_t``), the bodies' (mass, J0, gravity, slot starts, first unknowns), the joints'
        slots, both attachment sides, the joint laws under ``lay``'s selection, the point loads' and the
        spring-dampers' constants.  The same arrays as :meth:`arguments` hands the element."""
        bs, law = self.arguments_constants(lay)
        mass, J0, g, bsl = self.body_const
        pieces = [(FW, self.te_t[0]), (FW, self.te_t[1]), (FR, self.te_t[2]), (FR, self.te_t[3]),
                  (FR, mass), (FR, J0), (FR, g), (IR, bsl), (IR, bs[1]), (IW, SLOTS)]
        pieces += _side_pieces(self.sa) + _side_pieces(self.sb)
        pieces += [(FR, law[0]), (FR, law[1]), (FR, law[2]), (IR, law[3])] + [(IR, a) for a in law[4:8]]
        pieces += [(FR, law[8])] + [(IR, a) for a in law[9:14]] + [(IW, law[14]), (IW, law[15]),
                                                                  (IR, np.int64(law[16]))]
        loc, c, A, lever, k0, body = self.loads
        pieces += [(IR, loc), (FR, c), (FR, A), (BR, lever), (IR, k0), (BR, body)]
        sa, sb, k, cd, L0, (pa, pb) = self.springs
        pieces += _side_pieces(sa) + _side_pieces(sb) + [(FR, k), (FR, cd), (FR, L0), (IW, pa), (IW, pb)]
        return pieces

    def arguments_constants(self, lay) -> tuple:
        """The constants of :meth:`arguments` that depend on the layout (the bodies' first unknowns, the
        joint laws under its selection), built again when it changes: the key of a packing of them."""
        if self._bs is None or self._bs[0] is not lay:
            self._bs = (lay,) + frozen(tuple(np.ascontiguousarray(lay.body_start[g.bodies]) if g is not None
                                             else np.zeros(0, np.int64) for g in (self.grp, self.mgrp)))
        return self._bs, self._laws(lay.selection)

    def views(self, U: NDArray, res: NDArray, buf: NDArray | None, off: int) -> tuple:
        """``U``'s, the residual's and (``buf``) the values' blocks of the rigid group, the modal group and
        the joints: ``(Ug, Um, Jv, rb, rm, r, vals, valsm)``."""
        p, nb, nbm = self.p, self.nb, self.nbm
        o1 = nb * p * self.slots
        Ug, Um, Jv = (U[:o1].reshape(nb, p, self.slots), U[o1:off].reshape(nbm, p, self.slots_m),
                      U[off:].reshape(self.nj, p, JOINT_SLOTS))
        rb, rm, r = (res[:o1].reshape(nb, p, self.slots), res[o1:off].reshape(nbm, p, self.slots_m),
                     res[off:].reshape(self.nj, p, JOINT_SLOTS))
        if buf is None:
            return Ug, Um, Jv, rb, rm, r, np.empty((0, 0, 0)), np.empty((0, 0, 0))
        v1 = nb * p * self.nv[0]
        return (Ug, Um, Jv, rb, rm, r, buf[:v1].reshape(nb, p, self.nv[0]),
                buf[v1:v1 + nbm * p * self.nv[1]].reshape(nbm, p, self.nv[1]))

    def triplets(self, system, U: NDArray, st, h: float, trip) -> NDArray:
        """Residual ``(n,)``; with the Jacobian its values into ``trip.buffer`` (values-only ``trip``)."""
        lay = system.lay
        body, mod, jt, loads = self.arguments(st, h, lay)
        jac = trip.jacobian
        res = np.zeros(lay.size)
        # (values-only evaluation: the pattern recorded by the general evaluator)
        pat, buf = (trip.pattern, trip.buffer) if jac else (None, np.empty(0))
        Ug, Um, Jv, rb, rm, r, vals, valsm = self.views(U, res, buf if jac else None, lay.joint_off)
        # (a model without modal bodies passes the empty stand-ins of the compiled loop's no_modal: the
        # same types, one specialization of the element for both callers)
        n = whole_element(float(h), self.te_t, body, mod, Ug, Um, Jv, SLOTS, self.sa, self.sb, self.mp, jt, loads,
                          self.springs, rb, rm, r, res, jac, vals, valsm, buf)
        if jac:
            self.check(pat, n)
            trip.all_written()
        return res

    def check(self, pat, n: int) -> None:
        """The values written fill the pattern (once per pattern; a mismatch is a bug of this module)."""
        if self._checked is not pat:
            sizes = [k * self.p * v for k, v in zip((self.nb, self.nbm), self.nv) if k]
            if n != pat.n_entries or np.diff(pat.offsets[:len(sizes) + 1]).tolist() != sizes:
                raise AssertionError(f"fused evaluator: {n} Jacobian values for a pattern of {pat.n_entries}")
            self._checked = pat

    def gauss_xb(self, system, st, h: float, U: NDArray, lay) -> NDArray:
        """B's origins of the joints at the Gauss points ``(nj, p, 3)`` (compiled; with modal bodies through
        the modal group's kinematics and interface poses, 0.15 -> 0.02 ms per X3 element)."""
        c = np.ascontiguousarray
        grp, E = self.grp, self.te_t[0]
        if not self.nbm:
            # (the slot starts read-only, as the compiled element's packing holds them: one signature)
            return gauss_origins(E, c(st.x), c(st.R), c(system.lay.group_view(U, grp.bodies, grp.slots)),
                                 self.body_const[3], self.sb, self.nj, self.p)
        if grp is not None:
            b = grp.bodies
            rigid = (c(st.x[b]), c(st.R[b]), c(system.lay.group_view(U, b, grp.slots)), grp._slot_starts)
        else:
            mass, J0, g, bsl = self.body_const
            rigid = (np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, self.p, self.slots)), bsl)
        m = self.mgrp
        return gauss_origins_modal(E, *rigid, self.sb, c(st.x[m.bodies]), c(st.R[m.bodies]), c(m.node_q(st)),
                                   c(system.lay.group_view(U, m.bodies, m.slots)), self.mp[1], self.nj, self.p)

    def newton(self, system, st, h: float, U0, scale, factor, options):
        """The compiled Newton loop (:mod:`.fused_newton`) where it applies and answers, else None.  The
        first element of a pattern runs it too (:meth:`_prime`)."""
        if system.pattern is None:
            self._prime(system, st, h, U0, factor, options)
        return compiled_newton(self, system, st, h, U0, scale, factor, options)

    @staticmethod
    def _prime(system, st, h: float, U0, factor, options) -> None:
        """What the compiled loop needs before its first element, where it applies
        (:func:`~.compiled_loop.loop_backend`): the Jacobian pattern (one evaluation at the predictor,
        which records it) and the backend's column order and pivots (SuperLU's factorization of that
        Jacobian: the general loop's first factorization, the same SuperLU call on the same matrix,
        :meth:`~flexmb.dynamics.solve.linsolve.Refactor.analyse`; the loop's first iteration computes
        the numeric factors of the same matrix itself).  The compiled loop then starts from the same
        predictor; before, the general loop took the whole first element (X3, p = 2: 11 of a 44 ms run).
        A matrix that SuperLU finds singular is left to the general loop (its rank-deficient branch) as
        before."""
        n = system.lay.size
        backend = loop_backend(factor, n, options)
        if backend is None:
            return
        with np.errstate(all="ignore"):
            F, J = system.evaluate(U0, st, h)
        if not np.all(np.isfinite(F)) or not np.all(np.isfinite(J.data)):
            return  # (the pattern is built; the general loop meets the non-finite values itself)
        try:
            backend.analyse(J)  # (the loop's first iteration factors J numerically: 0.2 ms of X3's run)
        except SingularMatrixError:
            return

