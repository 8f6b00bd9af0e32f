"""L4: a pinned-pinned rod's first bending frequency under an axial preload applied through a joint
(beam-column), through equilibrium + linearize + eigen with ``stiffening="full"``.

The X5 beam (aluminium, L = 1 m, 0.02 m x 0.01 m, hex20 (50, 2, 1); Craig-Bampton with root and tip
interfaces, 20 fixed-interface modes and the tip's 6 constraint modes) is pinned at its root by a
revolute about y (flapwise rotation free; torsion held) and at its tip by a spherical joint to a light
slider (1 g) guided along x by a prismatic joint whose spring (2e4 N/m) is built with a free-length
offset ``displacement0 = delta``: the spring compresses (delta < 0) or stretches the rod through the
joints.  ``fm.equilibrium`` finds the preloaded state (the axial force is the guide's reaction),
``fm.linearize`` + ``fm.eigen`` the flapwise frequency (the mode whose FE displacement is mostly
along z).  Euler-Bernoulli beam-column, pinned-pinned: the first shape sin(pi x / L) does not change
with the load, so

    (f / f0)^2 = 1 + P / P_E,     P_E = pi^2 E I / L^2     (P > 0: tension)

with f0 the same model's frequency without preload.  Checked for delta = -0.01, -0.005, +0.005 m
(|P| = 200, 100, 100 N; P_E = 1151 N), tolerance 1e-3 on (f / f0)^2 (measured 2e-5).  The geometric
stiffness comes from the modal body's cubic and quartic strain energy (no preload is prescribed).
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm
from flexmb.validation.cases import case_x5 as x5
from flexmb.validation.cases.case_l3 import tip_loaded_data

CASE = dict(
    id="L4",
    title="Pinned-pinned rod under an axial preload through a joint: beam-column frequency (stiffening full)",
    source="Euler-Bernoulli beam-column, pinned-pinned: omega^2 = omega_0^2 (1 + P L^2 / (pi^2 E I)) "
           "(e.g. S. P. Timoshenko, D. H. Young, W. Weaver, Vibration Problems in Engineering, 4th ed., Wiley 1974, "
           "sec. 5.12)",
    slow=False,
)

SPRING, DELTAS = 2e4, (-0.01, -0.005, 0.005)


def model(delta: float) -> fm.Model:
    L = x5.LENGTHS[0]
    rod = fm.FlexibleBody("rod", tip_loaded_data(), damping=0.0)
    slider = fm.RigidBody("slider", mass=1e-3, inertia=np.full(3, 1e-8), position=(L, 0, 0))
    return fm.Model([rod, slider], [
        fm.Revolute("pin", "ground", ("rod", "root"), axis=(0, 1, 0)),
        fm.Prismatic("guide", "ground", "slider", point=(L, 0, 0), axis=(1, 0, 0), stiffness=SPRING,
                     displacement0=delta),
        fm.Spherical("end", ("rod", "tip"), "slider")])


def flapwise(delta: float) -> tuple[float, float]:
    """(first flapwise frequency [Hz], axial force [N], tension positive) at the preload ``delta``."""
    data = tip_loaded_data()
    eq = fm.equilibrium(model(delta))
    res = fm.eigen(fm.linearize(eq), 8)
    q = res.modes[[i for i, c in enumerate(res.coordinates) if c.startswith("rod:q")], :]
    disp = np.einsum("nak,kj->naj", data.mode_shapes, q)
    zfrac = (np.abs(disp[:, 2, :]) ** 2).sum(axis=0) / (np.abs(disp) ** 2).sum(axis=(0, 1))
    k = int(np.flatnonzero(zfrac > 0.5)[0])
    # the guide's reaction on the slider along its axis (frame A: z = x): a stretched rod pulls the
    # slider towards -x, which the guide holds with +x: the component is the rod's tension
    return float(res.frequency[k]), float(eq.joint_force("guide")[2])


def run(ctx):
    L, b, h = x5.LENGTHS
    p_e = math.pi**2 * x5.ALUMINIUM.E * b * h**3 / 12.0 / L**2
    f0, _ = flapwise(0.0)
    metrics = []
    for d in DELTAS:
        f, P = flapwise(d)
        ctx.logger.info("L4 delta = %+g m: axial force %.4f N, f = %.6f Hz (f0 %.6f Hz), (f/f0)^2 = %.6f, 1 + P/P_E = %.6f",
                        d, P, f, f0, (f / f0) ** 2, 1 + P / p_e)
        metrics.append(dict(name=f"(f/f0)^2 at P = {P:+.1f} N", value=(f / f0) ** 2, reference=1 + P / p_e,
                            tolerance=1e-3, kind="rel"))
    return metrics
