"""L3: X5 through the dynamics' linearization: first flapwise frequency of a rotating cantilever
from ``equilibrium(steady=True)`` + ``linearize`` + ``eigen``.

The X5 beam (aluminium, L = 1 m, 0.02 m x 0.01 m, hex20 mesh (50, 2, 1); Craig-Bampton clamped at
the root face, 20 fixed-interface modes, all directions: flapwise, lagwise, axial, torsion) is a
:class:`~flexmb.FlexibleBody` (``stiffening="preload"``: the unit inertial preload stiffnesses; the
cubic and quartic terms vanish at the undeformed steady state of this symmetric beam) whose root
interface is driven about z at the constant rate Omega = gamma / T by a revolute joint to the
ground.  ``fm.equilibrium(model, steady=True)`` finds the relative equilibrium in the turning
frame (centrifugal stretch; no flapwise deflection), ``fm.linearize`` gives the perturbation
equations in that frame (gyroscopic and centrifugal terms of the floating frame and the modes, from
the same element Jacobian as the time integration) and ``fm.eigen`` the frequencies; the flapwise
one is the mode whose FE displacement is mostly along z.  Reference: Wright et al. (1982),
lambda_1 = omega_1 T at gamma = Omega T = 0, 2, 4, 6, 8, 10, 50, tolerance 0.5 % (the FE check of
case X5 on the same mesh gives +0.2 % at gamma = 0: root clamping and b/h = 2).  Also: the frequency
of the X1 strip (4 flapwise modes) at gamma = 6 against a ``simulate`` free vibration of the same
model (case X5's dynamics, 1e-5).

Buckling: the same beam reduced with a second interface on its tip face (Craig-Bampton, 20 modes and
the tip's 6 constraint modes; ``stiffening="full"``: the cubic and quartic strain energy carry the
geometric stiffness of the axial load), clamped at the root by a fixed joint and loaded by a dead
compressive force on the tip interface, ``fm.load_path`` over 0 .. 1.2 P_E in 7 steps: the factor
where the stiffness margin (the squared lowest frequency) crosses zero against Euler's
pi^2 E I / (4 L^2), tolerance 1 % (measured +0.26 %; the FE check of case X5 uses the same mesh).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

import flexmb as fm
from flexmb.validation.cases import case_x5 as x5

CASE = dict(
    id="L3",
    title="Rotating cantilever (X5) through equilibrium(steady=True) + linearize + eigen; Euler buckling by load path",
    source=x5.CASE["source"],
    slow=False,
)

TOLERANCE = 0.005


@lru_cache(maxsize=4)
def beam_data(n_modes: int = 20):
    """The X5 beam reduced with ``n_modes`` Craig-Bampton modes clamped at its root face."""
    from flexmb.fe.reduction.body_data import build_flexible_body

    mesh = x5.structured_box(x5.LENGTHS, (50, 2, 1), "hexahedron20", material=x5.ALUMINIUM)
    return build_flexible_body(mesh, interfaces=["root"], n_modes=n_modes, quartic=False, stresses=False)


@lru_cache(maxsize=1)
def tip_loaded_data():
    """The X5 beam with root and tip interfaces (Craig-Bampton, 20 fixed-interface modes)."""
    from flexmb.fe.reduction.body_data import build_flexible_body

    mesh = x5.structured_box(x5.LENGTHS, (50, 2, 1), "hexahedron20", material=x5.ALUMINIUM)
    return build_flexible_body(mesh, interfaces=["root", "tip"], n_modes=20, stresses=False)


def buckling_factor(steps: int = 7) -> tuple[float, float]:
    """(load-path buckling load, Euler's) [N] of the clamped X5 beam under a dead tip load."""
    L, b, h = x5.LENGTHS
    p_euler = math.pi**2 * x5.ALUMINIUM.E * b * h**3 / 12.0 / (4 * L**2)
    data = tip_loaded_data()

    def build(P):
        beam = fm.FlexibleBody("beam", data, damping=0.0)
        return fm.Model([beam], [fm.Fixed("clamp", "ground", ("beam", "root"))],
                        [fm.PointForce(("beam", "tip"), (-P, 0.0, 0.0))])

    path = fm.load_path(build, np.linspace(0.0, 1.2, steps) * p_euler, n=1)
    return path.buckling_factor, p_euler


def beam_time_scale() -> float:
    L, b, h = x5.LENGTHS
    EI = x5.ALUMINIUM.E * b * h**3 / 12.0
    return math.sqrt(x5.ALUMINIUM.rho * b * h * L**4 / EI)


def spinning(data, omega: float, name: str = "beam", stiffening: str = "preload") -> fm.Model:
    body = fm.FlexibleBody(name, data, damping=0.0, angular_velocity=(0, 0, omega), stiffening=stiffening)
    hub = fm.Revolute("hub", "ground", (name, "root"), axis=(0, 0, 1), angular_velocity=omega)
    return fm.Model([body], [hub])


def strip_model(n_modes: int, gamma: float) -> fm.Model:
    """The X1 strip of case X5's dynamics with ``n_modes`` flapwise modes at gamma (benchmarks)."""
    return spinning(x5.flapwise_data(n_modes), gamma / x5.strip_time_scale(), "strip", "full")


def flapwise_lambda(data, gamma: float, T: float, stiffening: str = "preload") -> float:
    """lambda_1 = omega_1 T of the first mode whose FE displacement is mostly along z."""
    eq = fm.equilibrium(spinning(data, gamma / T, stiffening=stiffening), steady=True)
    res = fm.eigen(fm.linearize(eq))
    q = res.modes[-data.n_modes:, :]  # modal coordinates (the frame's are held by the hub)
    disp = np.einsum("nak,kj->naj", data.mode_shapes, q)
    zfrac = (np.abs(disp[:, 2, :]) ** 2).sum(axis=0) / (np.abs(disp) ** 2).sum(axis=(0, 1))
    k = int(np.flatnonzero(zfrac > 0.5)[0])
    return float(res.frequency[k] * 2 * math.pi * T)


def run(ctx):
    data = beam_data()
    T = beam_time_scale()
    metrics = []
    for g, ref in zip(x5.GAMMA, x5.LAMBDA_REF):
        lam = flapwise_lambda(data, g, T)
        ctx.logger.info("L3 gamma = %g: lambda_1 = %.5f (reference %.4f, %+.3f %%)", g, lam, ref, 100 * (lam / ref - 1))
        metrics.append(dict(name=f"lambda_1 at gamma = {g:g} (linearized)", value=lam, reference=ref,
                            tolerance=TOLERANCE, kind="rel"))
    # against simulate: the X1 strip at gamma = 6 (case X5's free vibration)
    strip, Ts = x5.flapwise_data(), x5.strip_time_scale()
    eq = fm.equilibrium(strip_model(strip.n_modes, 6.0), steady=True)
    lam = float(fm.eigen(fm.linearize(eq)).frequency[0] * 2 * math.pi * Ts)
    t, w = x5.free_vibration(strip, 6.0, "full", lam, periods=4)
    lam_sim = x5.fitted_frequency(t, w) * Ts
    ctx.logger.info("L3 strip gamma = 6: linearized %.6f, simulate %.6f", lam, lam_sim)
    metrics.append(dict(name="strip lambda_1 at gamma = 6: linearized vs simulate", value=lam, reference=lam_sim,
                        tolerance=1e-5, kind="rel"))
    p_cr, p_euler = buckling_factor()
    ctx.logger.info("L3 buckling: load path %.4f N, Euler %.4f N (%+.3f %%)", p_cr, p_euler, 100 * (p_cr / p_euler - 1))
    metrics.append(dict(name="Euler buckling load [N] (load path)", value=p_cr, reference=p_euler, tolerance=0.01,
                        kind="rel"))
    return metrics
