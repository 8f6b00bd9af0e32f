"""The range a modal flexible body can represent: its elastic displacement against its size, and, for
a linear modal body (``stiffening="none"``), its spin against its lowest natural frequency.

Displacement.  A modal body moves its material points by ``u = Phi q`` in the floating frame: a linear
field.  A cross-section that turns by ``theta`` is represented by a displacement ``theta r`` normal
to its fibres, which stretches a fibre of length ``r`` by ``r (sqrt(1 + theta^2) - 1) ~ r theta^2 / 2``
with no strain energy paying for it.  For a cantilever (the shape of the first bending modes) the
section at the tip turns by ``theta ~ 1.5 u_tip / L``; at ``u_tip = L / 4`` that is 0.375 rad and a
spurious stretch of 7 %: beyond :data:`RANGE_WARN` of the body's size (the diagonal of its mesh's
bounding box) the floating frame with these modes no longer describes the motion, whatever the
stiffening.  A displacement as large as the body itself (:data:`RANGE_ERROR`) in the initial state is an
input error (``q0`` in other units, a sign or scaling slip): :func:`check_initial` refuses it.

Spin.  A linear modal body spinning at ``Omega`` has the centrifugal softening ``S(Omega)`` on the modes
that move in the plane of the spin (:func:`softened_stiffness`) and no stiffening: once ``K - S`` is not
positive definite (for a bending mode in that plane: ``Omega > omega``) the body's deflection grows
without bound (the X1
spin-up beam at 4 rad/s: 35 km on a 10 m beam by 20 s).  ``stiffening="full"`` or ``"preload"`` carry
the centrifugal stiffening.

The displacement is evaluated at the probe nodes (:func:`probe_shapes`: for every mode and direction the
node where the shape is largest), which contain the largest displacement of every single mode: a few
dozen rows instead of the whole mesh, so the check costs little at every node of a run.
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError

log = logging.getLogger(__name__)

#: elastic displacement, relative to the body's size, beyond which a WARNING is logged (module docstring)
RANGE_WARN = 0.25
#: ... and beyond which an initial state (q0) is refused
RANGE_ERROR = 1.0


def body_size(data) -> float:
    """The diagonal of the bounding box of the body's mesh [m]."""
    pts = np.asarray(data.points, dtype=float)
    return float(np.linalg.norm(np.ptp(pts, axis=0))) if pts.size else 0.0


def probe_shapes(data) -> NDArray:
    """The mode shapes at the probe nodes ``(k, 3, nm)`` (module docstring)."""
    Phi = np.asarray(data.mode_shapes, dtype=float)
    if Phi.size == 0:
        return np.zeros((0, 3, Phi.shape[-1] if Phi.ndim == 3 else 0))
    nodes = np.unique(np.argmax(np.abs(Phi), axis=0).reshape(-1))
    return Phi[nodes]


def largest_displacement(probe: NDArray, q: NDArray) -> float:
    """The largest elastic displacement ``|Phi q|`` over the probe nodes [m]."""
    if probe.size == 0:
        return 0.0
    return float(np.sqrt(np.max(np.sum((probe @ np.asarray(q, dtype=float)) ** 2, axis=1))))


def lowest_frequency(data) -> float:
    """The body's lowest positive natural frequency [rad/s] (inf without modes)."""
    w2 = np.asarray(data.omega2, dtype=float)
    w2 = w2[w2 > 0]
    return float(np.sqrt(w2.min())) if w2.size else np.inf


def check_initial(model) -> None:
    """Refuse an initial modal state whose elastic displacement is as large as the body
    (:data:`RANGE_ERROR` x its size), naming ``q0``, the value and the fix; warn past :data:`RANGE_WARN`."""
    for body in model.bodies:
        data = getattr(body, "data", None)
        q0 = getattr(body, "q0", None)
        if data is None or q0 is None or not np.any(q0):
            continue
        size = body_size(data)
        u = largest_displacement(probe_shapes(data), q0)
        if size > 0 and u > RANGE_ERROR * size:
            raise ModelError(
                f"FlexibleBody {body.name!r}: q0 (largest |q0| = {np.abs(q0).max():.4g}) displaces the body's points by "
                f"{u:.4g} m, {u / size:.3g} x its size {size:.4g} m: no modal body represents that. Give q0 in the "
                f"modal coordinates of the data (mass-normalized shapes: [m sqrt(kg)]; e.g. from a nodal field by least "
                f"squares on data.mode_shapes), in the model's units, or 0 for an undeformed start")
        if size > 0 and u > RANGE_WARN * size:
            log.warning("FlexibleBody %r: q0 displaces the body's points by %.4g m, %.3g x its size %.4g m: beyond "
                        "the range of a modal body (%.2g x its size, flexmb.dynamics.modal_range)", body.name, u,
                        u / size, size, RANGE_WARN)


def softened_stiffness(data, Omega: NDArray) -> NDArray:
    """``K - S(Omega)`` of a linear modal body spinning at ``Omega`` (body axes) [1/s^2]: ``K = diag(omega2)``
    and the centrifugal softening ``S_kl = int rho (Omega x phi_k) . (Omega x phi_l) dV = |Omega|^2 tr(M2_kl)
    - Omega^T M2_kl Omega`` (``M2 = modal_second_moment``): its smallest eigenvalue < 0 means divergence."""
    M2 = np.asarray(data.invariants.modal_second_moment, dtype=float)
    w2 = float(Omega @ Omega)
    S = w2 * np.einsum("klaa->kl", M2) - np.einsum("a,klab,b->kl", Omega, M2, Omega)
    return np.diag(np.asarray(data.omega2, dtype=float)) - S


class RangeMonitor:
    """Per recorded node: warn once per body when a modal body's elastic displacement exceeds
    :data:`RANGE_WARN` x its size, or when a linear modal body (``stiffening="none"``) spins so fast that
    its centrifugal softening exceeds the stiffness of its modes (:func:`softened_stiffness` not positive
    definite; checked once the spin exceeds the lowest natural frequency, a necessary condition)."""

    def __init__(self, cm):
        self.bodies = []
        for b, body in enumerate(cm.model.bodies):
            data = getattr(body, "data", None)
            if data is None or not getattr(body, "n_modes", 0):
                continue
            self.bodies.append((b, body.name, probe_shapes(data), body_size(data), lowest_frequency(data),
                                data if body.stiffening == "none" else None))
        self.warned: set = set()

    def node(self, t: float, modal: dict, om: NDArray, rotm: NDArray) -> None:
        """``modal``: the node's ``modal/<body>`` outputs; ``om (nb, 3)`` the frames' angular velocities
        (inertial), ``rotm (nb, 3, 3)`` their rotations."""
        for b, name, probe, size, w1, linear in self.bodies:
            q = modal.get(f"modal/{name}")
            if q is not None and (name, "u") not in self.warned and size > 0:
                u = largest_displacement(probe, q)
                if u > RANGE_WARN * size:
                    self.warned.add((name, "u"))
                    log.warning(
                        "flexible body %r: its elastic displacement reached %.4g m at t = %.6g s, %.3g x its size %.4g m "
                        "(beyond %.2g x: a modal body's linear displacement field no longer describes the motion, "
                        "flexmb.dynamics.modal_range); the results past this point are outside the model's range%s",
                        name, u, t, u / size, size, RANGE_WARN,
                        " (stiffening='none': use 'full')" if linear is not None else "")
            if linear is None or (name, "spin") in self.warned:
                continue
            Omega = rotm[b].T @ om[b]
            spin = float(np.linalg.norm(Omega))
            if spin > w1 and np.linalg.eigvalsh(softened_stiffness(linear, Omega)).min() < 0:
                self.warned.add((name, "spin"))
                log.warning(
                    "flexible body %r (stiffening='none') spins at %.4g rad/s at t = %.6g s, where its centrifugal "
                    "softening exceeds the stiffness of a mode (lowest natural frequency %.4g rad/s): a linear modal "
                    "body has the softening without the stiffening and its deflection grows without bound; use "
                    "stiffening='full' (or 'preload')", name, spin, t, w1)
