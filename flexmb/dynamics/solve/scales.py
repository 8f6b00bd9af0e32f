"""Magnitudes of a model for Newton's convergence test: a length, a speed and a force taken from the
model's own data and adapted to the motion during the run.

Newton accepts an increment when ``|dU_i| <= tol (scale_i + |U_i|)`` for every unknown
(:mod:`flexmb.dynamics.solve.newton`).  ``scale_i`` is the absolute magnitude the unknown can reach; for
unknowns that pass through zero (a constrained relative coordinate, a reaction component that
vanishes by symmetry) it is the whole test.  Too small, and round-off in the other unknowns reads
as a correction that never converges (a model at rest with no gravity, driven by a 1 N m torque,
failed this way with a force scale of 4e-6 N); too large, and the test accepts inaccurate values.

The magnitudes (:class:`Magnitudes`) are therefore built from what sets the size of each
quantity, never from where the model sits in space:

``L`` [m]
    the largest of: the spread of the bodies' reference points about their centroid, the lever arm
    of every joint and force attachment from its body's reference point, each body's radius of
    gyration ``sqrt(J_max / m)`` (floor 1e-6 m).
``V`` [m/s]
    the largest of: the initial speeds (angular ones times ``L``), ``sqrt(g L)``, the drives'
    rates over the run (sampled at 33 times; rotational ones times ``L``), the speed a load can
    give over the length (``sqrt(F_load L / m_mean)``), floor ``1e-3 L`` per second.
``F`` [N]
    the largest of: ``M (g + V^2 / L)`` (``M`` the total mass: a root joint carries every body),
    the applied forces and torques / ``L`` over the run (time functions sampled; state
    callbacks are caught by the adaptation below), joint and spring-damper preloads
    (``k |offset at t0|``) and the force of each spring oscillating at speed ``V``
    (``V sqrt(k m_mean)``).

During the run the magnitudes adapt (:func:`adapted`): after each element, ``V`` and ``F`` become
the larger of the model's values above and the current speeds and joint reactions (the scale
follows the motion, up and down, never below what the model's data imply).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import jit_kernel

from flexmb.dynamics.layout import JQ, JOINT_SLOTS, Layout

logger = logging.getLogger(__name__)

#: number of samples of time functions (drives, loads) over the run when estimating magnitudes
SAMPLES = 33


@dataclass(frozen=True)
class Magnitudes:
    """Characteristic length ``L`` [m], speed ``V`` [m/s] and force ``F`` [N] of a model."""

    L: float
    V: float
    F: float

    def as_array(self) -> NDArray:
        return np.array([self.L, self.V, self.F])

    @classmethod
    def from_array(cls, a) -> "Magnitudes":
        a = np.asarray(a, dtype=float).reshape(3)
        return cls(float(a[0]), float(a[1]), float(a[2]))


def _norm3(v) -> float:
    return float(np.linalg.norm(np.asarray(v, dtype=float).reshape(-1)[:3]))


def _sampled_max(fn, times, owner: str) -> float:
    """Largest norm of a time function over the samples (its own errors surface at simulation): the
    samples up to the first that raises, non-finite values skipped.  Scalar values (a drive's rate) are
    judged in one array operation: ``sqrt(v * v)`` is ``np.linalg.norm`` of one value to the bit (the
    one product, correctly rounded square root; overflow and underflow alike), ~0.4 ms -> 0.1 ms of a
    run's set-up for 33 samples."""
    vals = []
    for t in times:
        try:
            vals.append(np.asarray(fn(float(t)), dtype=float).reshape(-1))
        except Exception:  # noqa: BLE001 - the element's own evaluation reports it, named
            logger.debug("%s: not evaluated at t = %g for the force scale", owner, t)
            break
    if vals and all(v.size == 1 for v in vals):
        v = np.concatenate(vals)
        v = v[np.isfinite(v)]
        with np.errstate(over="ignore", under="ignore"):
            return float(np.sqrt(v * v).max(initial=0.0))
    best = 0.0
    for val in vals:
        if np.all(np.isfinite(val)):
            best = max(best, float(np.linalg.norm(val)))
    return best


def model_length(cm) -> float:
    """Characteristic length ``L`` [m] of a compiled model: the spread of the bodies' reference
    points about their centroid or the largest body lever length (:func:`body_lengths`)."""
    pos = np.array([np.asarray(b.position, dtype=float) for b in cm.model.bodies]).reshape(-1, 3)
    spread = float(np.linalg.norm(np.ptp(pos, axis=0))) if len(pos) > 1 else 0.0
    return float(max(spread, body_lengths(cm).max(initial=1e-6)))


def body_lengths(cm) -> NDArray:
    """Lever length of each body [m], shape ``(nb,)``: the largest distance from its reference point
    to a joint or force attachment on it, or its radius of gyration ``sqrt(J_max / m)`` if larger
    (floor 1e-6 m).  A rotation error ``d theta`` of body ``b`` moves its points by about
    ``d theta * lengths[b]``.  Computed once per compiled model (``cm.cache.body_lengths``, read-only)."""
    if cm.cache.body_lengths is None:
        out = _body_lengths(cm)
        out.flags.writeable = False
        cm.cache.body_lengths = out
    return cm.cache.body_lengths


def _body_lengths(cm) -> NDArray:
    model = cm.model
    out = np.full(cm.nb, 1e-6)
    for grp in cm.groups:
        m = np.asarray(grp.mass, dtype=float)
        J = getattr(grp, "J0", None)
        if J is not None and len(m):
            jmax = np.linalg.eigvalsh(np.asarray(J)).max(axis=-1)
            out[grp.bodies] = np.maximum(out[grp.bodies], np.sqrt(jmax / np.maximum(m, 1e-300)))
    for joint in model.joints:
        fa, fb = model.attachment_frames(joint)
        for body, frame in ((joint.body_a, fa), (joint.body_b, fb)):
            b = model.body_index(body)
            if b >= 0:
                out[b] = max(out[b], _norm3(frame.origin))
    for f in model.forces:
        for body, point in (("body", "point"), ("body_a", "point_a"), ("body_b", "point_b")):
            if hasattr(f, point) and hasattr(f, body):
                b = model.body_index(getattr(f, body))
                if b >= 0:
                    out[b] = max(out[b], _norm3(getattr(f, point)))
    return out


def model_magnitudes(cm, st, w0: NDArray, t0: float, t_end: float) -> Magnitudes:
    """:class:`Magnitudes` of a compiled model at its initial state ``st`` with velocities ``w0``
    (global velocity layout), for a run from ``t0`` to ``t_end`` [s]."""
    L = model_length(cm)
    times = np.linspace(t0, max(t_end, t0), SAMPLES)
    g = float(np.linalg.norm(cm.gravity))
    M = max(cm.total_mass, 1e-300)
    m_mean = M / max(cm.nb, 1)
    trans = np.zeros(cm.nv, bool)
    trans[(cm.vel_off[:, None] + np.arange(3)).reshape(-1)] = True
    rotn = np.zeros(cm.nv, bool)
    rotn[(cm.vel_off[:, None] + np.arange(3, 6)).reshape(-1)] = True
    V = max(np.abs(w0[trans]).max(initial=0.0), np.abs(w0[rotn]).max(initial=0.0) * L, np.sqrt(g * L), 1e-3 * L)
    for (_j, comp, _f, df) in cm.jnt_drives:
        V = max(V, _sampled_max(lambda t, df=df: [df(t)], times, "drive") * (L if comp >= 3 else 1.0))
    # applied loads over the run
    F_load = 0.0
    for f in cm.point_forces:
        F_load = max(F_load, _load_magnitude(f.force, times, f"PointForce on {f.body!r}"))
    for t in cm.point_torques:
        F_load = max(F_load, _load_magnitude(t.torque, times, f"PointTorque on {t.body!r}") / L)
    # joint springs: preload at t0 and stiffness
    k = np.asarray(cm.jnt_k, dtype=float)
    if k.size and np.any(k):
        off = np.concatenate([st.s, st.acc], axis=1) - np.asarray(cm.jnt_ref, dtype=float)
        pre = np.abs(k * off)
        F_load = max(F_load, float(pre[:, :3].max(initial=0.0)), float(pre[:, 3:].max(initial=0.0)) / L)
    springs = [f for f in cm.model.forces if type(f).__name__ == "SpringDamper"]
    for s in springs:
        if s.free_length is not None:
            ends = []
            for body, point in ((s.body_a, s.point_a), (s.body_b, s.point_b)):
                x, R = cm.model.body_pose(body)
                ends.append(np.asarray(x, dtype=float) + np.asarray(R, dtype=float) @ np.asarray(point, dtype=float))
            F_load = max(F_load, abs(s.stiffness) * abs(np.linalg.norm(ends[1] - ends[0]) - s.free_length))
    V = max(V, np.sqrt(F_load * L / m_mean))
    F = max(M * (g + V * V / L), F_load)
    # springs oscillating at speed V: translational k, rotational k / L^2
    if k.size and np.any(k):
        F = max(F, V * np.sqrt(np.abs(k[:, :3]).max(initial=0.0) * m_mean),
                V * np.sqrt(np.abs(k[:, 3:]).max(initial=0.0) / (L * L) * m_mean))
    for s in springs:
        F = max(F, V * np.sqrt(abs(s.stiffness) * m_mean), abs(s.damping) * V)
    return Magnitudes(float(L), float(V), float(F))


def _load_magnitude(value, times, owner: str) -> float:
    from flexmb.dynamics.elements.forces import is_state_callback

    if callable(value):
        return 0.0 if is_state_callback(value) else _sampled_max(value, times, owner)
    return _norm3(value)


def adapted(base: Magnitudes, cm, lay: Layout, w: NDArray, U: NDArray | None) -> Magnitudes:
    """Magnitudes following the motion: the larger of ``base`` (the model's) and the current speeds
    ``w (nv,)`` and joint reactions (the ``Qbar`` slots of the last element's unknowns ``U``)."""
    L = base.L
    trans, rotn, total_mass = _speed_columns(cm)
    with_q = U is not None and cm.nj
    Q = U[lay.joint_off:lay.joint_off + cm.nj * lay.p * JOINT_SLOTS] if with_q else _NO_Q
    # the four maxima |w_trans|, |w_rot|, |Q_force|, |Q_moment| in one compiled pass (NaN propagated, as .max())
    vt, vr, qf, qm = _maxima(w, trans, rotn, Q, JOINT_SLOTS, JQ)
    V = max(base.V, vt, vr * L)
    F = base.F
    if with_q:
        F = max(F, qf, qm / L)
    F = max(F, total_mass * V * V / L)
    if V == base.V and F == base.F:
        return base
    return Magnitudes(base.L, float(V), float(F))


_NO_Q = np.zeros(0)


@jit_kernel
def _absmax(w, idx):  # pragma: no cover - compiled
    """``max |w[idx]|`` (0 for none; NaN propagated)."""
    m = 0.0
    for k in range(idx.size):
        a = abs(w[idx[k]])
        if a > m or a != a:
            m = a
            if a != a:
                break
    return m


@jit_kernel
def _maxima(w, trans, rotn, Q, slots, jq):  # pragma: no cover - compiled
    """``max |w[trans]|``, ``max |w[rotn]|`` and, over the joints' internal points (``Q`` their
    unknowns, ``slots`` per point), ``max |Qbar_force|`` and ``max |Qbar_moment|`` (slots ``jq ..
    jq + 6``); 0 for none, NaN propagated."""
    out = np.zeros(4)
    out[0] = _absmax(w, trans)
    out[1] = _absmax(w, rotn)
    for o in range(0, Q.size, slots):
        for d in range(6):
            a = abs(Q[o + jq + d])
            c = 2 if d < 3 else 3
            if out[c] != out[c]:
                continue
            if a > out[c] or a != a:
                out[c] = a
    return out[0], out[1], out[2], out[3]


def _speed_columns(cm) -> tuple[NDArray, NDArray, float]:
    """Columns of the global velocity vector holding the bodies' translational and angular velocities
    (sorted) and the model's total mass [kg] (per model, kept in ``cm.cache`` with :func:`_jointed`)."""
    hit = _model_columns(cm)
    return hit[1], hit[2], hit[3]


def _jointed(cm) -> list:
    """``[(group, mask)]``: the groups with bodies on joints and which of their bodies are (per model)."""
    return _model_columns(cm)[4]


def _model_columns(cm) -> tuple:
    """``(vel_off, trans, rotn, total mass, jointed)`` of :func:`_speed_columns` and :func:`_jointed`,
    worked out once per model (``cm.cache.speed_columns``)."""
    hit = cm.cache.speed_columns
    if hit is None or hit[0] is not cm.vel_off:
        trans = np.sort((cm.vel_off[:, None] + np.arange(3)).reshape(-1))
        rotn = np.sort((cm.vel_off[:, None] + np.arange(3, 6)).reshape(-1))
        jointed = []
        if cm.nj:
            on = np.isin(np.arange(cm.nb), np.concatenate([cm.att_a.body, cm.att_b.body]))
            jointed = [(grp, on[grp.bodies]) for grp in cm.groups if on[grp.bodies].any()]
        hit = (cm.vel_off, trans, rotn, cm.total_mass, jointed)
        cm.cache.speed_columns = hit
    return hit


def unknown_scales(cm, lay: Layout, mag: Magnitudes, h: float, floor_momenta: bool = False) -> NDArray:
    """Absolute magnitude of every internal unknown of a time element of length ``h`` [s],
    shape ``(lay.size,)``: body slots from each body type's ``scales(L, V)``, joint slots from
    ``L``, ``V`` and ``F`` (relative position ``L``, rotation 1, multipliers ``F h`` and ``F L h``,
    reactions ``F`` and ``F L``, attachment velocities ``V`` and ``V / L``).  ``floor_momenta``: the
    modified momenta of jointed bodies at least ``F h`` / ``F L h`` (the consistent transport,
    :func:`flexmb.dynamics.elements.joints.consistent_transport`)."""
    key = (lay, lay.size, mag.L, mag.V, mag.F, h, floor_momenta)
    hit = cm.cache.unknown_scales
    if hit is not None and hit[0][0] is lay and hit[0][1:] == key[1:]:
        return hit[1]  # the magnitudes did not change (Newton only reads the scales)
    out = _unknown_scales(cm, lay, mag, h, floor_momenta)
    out.flags.writeable = False
    cm.cache.unknown_scales = (key, out)
    return out


#: the magnitude of each of a joint's slots at an internal point, as an index into
#: ``(L, 1, F h, F L h, F, F L, V, V / L)``: s, phi, lambda (force, moment), Qbar (force, moment),
#: nu_a and nu_b (velocity, angular velocity)
_JOINT_KIND = np.repeat([0, 1, 2, 3, 4, 5, 6, 7, 6, 7], 3)


@jit_kernel
def _joint_scales(out, off, n, kind, L, V, F, h):  # pragma: no cover - compiled
    """``out[off:off + n * kind.size]``: the joint slots' magnitudes ``(L, 1, F h, F L h, F, F L, V, V / L)[kind]``
    at each of the ``n`` joint internal points."""
    mag = np.array([L, 1.0, F * h, F * L * h, F, F * L, V, V / L])
    m = kind.size
    for i in range(n):
        for k in range(m):
            out[off + i * m + k] = mag[kind[k]]


def _unknown_scales(cm, lay: Layout, mag: Magnitudes, h: float, floor_momenta: bool = False) -> NDArray:
    L, V, F = mag.L, mag.V, mag.F
    hit = cm.cache.body_scales  # the body slots depend on (L, V) only: kept while F changes
    if hit is not None and hit[0] is lay and hit[1] == (L, V):
        out = hit[2].copy()
    else:
        out = np.zeros(lay.size)
        for grp in cm.groups:
            lay.group_view(out, grp.bodies, grp.slots)[:] = grp.scales(L, V)[:, None, :]
        cm.cache.body_scales = (lay, (L, V), out.copy())
    _joint_scales(out, lay.joint_off, cm.nj * lay.p, _JOINT_KIND, float(L), float(V), float(F), float(h))
    if cm.nj and floor_momenta:
        # the modified momenta of a body on joints hold pi = p - Lambda: their magnitude is at least
        # the multipliers' (F h force, F L h moment), whatever the body's inertia (a point mass: J V / L
        # ~ 0; with the transport moment of joints._transport_moment its pi_m carries O(F L h))
        for grp, sel in _jointed(cm):
            v = lay.group_view(out, grp.bodies, grp.slots)
            v[sel, :, grp.BPI:grp.BPI + 3] = np.maximum(v[sel, :, grp.BPI:grp.BPI + 3], F * h)
            v[sel, :, grp.BPI + 3:grp.BPI + 6] = np.maximum(v[sel, :, grp.BPI + 3:grp.BPI + 6], F * L * h)
    return out
