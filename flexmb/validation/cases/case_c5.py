"""C5: a deploying panel locking plastically at its end stop, and Newton's cradle.

Deploying panel: a free base (mass ``M``, inertia ``J_b`` about z) carries a panel (uniform rod of mass
``m``, length ``L``) on a revolute joint about z; the panel turns towards its stop with the relative
rate ``w_rel`` while the base drifts and spins.  At the stop (a point of the panel meeting a plane of
the base, e = 0) the relative rotation stops: afterwards base and panel move as one rigid body, so
the linear momentum and the angular momentum about the system's centre of mass are conserved and

    omega+ = H_G / I_G,   v_G+ = v_G-

(I_G the locked system's inertia about its centre of mass; the closed form of the momentum balance,
Wittenburg chapter 6).  Checked: omega+, the relative rate after (0), momentum and angular momentum,
the energy lost = T- - T+ to round-off.

Newton's cradle: five equal spheres in a row touching, the first striking with speed v, e = 1: the
sequential rule (:mod:`flexmb.dynamics.impact.events`) passes the momentum from sphere to sphere;
the last leaves with v, the others stop; momentum and energy conserved.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C5",
    title="Deploying panel locking plastically at its stop (momentum balance); Newton's cradle (e = 1)",
    source="Closed form: conservation of linear and angular momentum of the locked system (J. Wittenburg, Dynamics of "
           "Systems of Rigid Bodies, Teubner 1977, chapter 6); Newton's cradle: momentum passes to the last sphere",
    slow=False,
)

MB, JB, M, L, HINGE, STOP = 20.0, 3.0, 2.0, 1.5, np.array([0.5, 0.2, 0.0]), 0.4
VB, WB, WREL = np.array([0.1, -0.05, 0.0]), 0.05, -0.8
N_CRADLE, R_CRADLE, M_CRADLE, V_CRADLE = 5, 0.02, 0.1, 0.7


def panel_model() -> fm.Model:
    Jp = M * L ** 2 / 12.0
    base = fm.RigidBody("base", mass=MB, inertia=(JB, JB, JB), position=(0, 0, 0), velocity=VB,
                        angular_velocity=(0, 0, WB))
    c = HINGE + np.array([0.5 * L, 0, 0])
    w = WB + WREL
    v = VB + np.cross([0, 0, WB], HINGE) + np.cross([0, 0, w], c - HINGE)
    panel = fm.RigidBody("panel", mass=M, inertia=(1e-4, Jp, Jp), position=c, velocity=v, angular_velocity=(0, 0, w))
    hinge = fm.Revolute("hinge", "base", "panel", point=HINGE, axis=(0, 0, 1))
    # the stop: a plane of the base through the panel's point at STOP from the hinge, normal +y (the panel
    # comes down onto it: WREL < 0)
    stop = fm.Contact("stop", "base", "panel", kind="point-plane", point_a=HINGE + [STOP, 0, 0], normal=(0, 1, 0),
                      point_b=(STOP - 0.5 * L, 0, 0), restitution=0.0)
    return fm.Model([base, panel], [hinge], contacts=[stop])


def momenta(r, after: bool):
    v = r.velocity_after if after else r.velocity_before
    w = r.angular_velocity_after if after else r.angular_velocity_before
    pos = r.position
    m = {"base": MB, "panel": M}
    J = {"base": JB, "panel": M * L ** 2 / 12.0}
    p = sum(m[n] * v[n] for n in m)
    G = sum(m[n] * pos[n] for n in m) / sum(m.values())
    H = sum(J[n] * w[n][2] + np.cross(pos[n] - G, m[n] * v[n])[2] for n in m)
    return p, H, G


def run(ctx):
    r = fm.impact(panel_model())
    p0, H0, G = momenta(r, False)
    p1, H1, _ = momenta(r, True)
    pos = r.position
    IG = JB + MB * np.sum((pos["base"] - G)[:2] ** 2) + M * L ** 2 / 12.0 + M * np.sum((pos["panel"] - G)[:2] ** 2)
    w_exact = H0 / IG
    metrics = [
        dict(name="locked panel: angular velocity after [rad/s]", value=r.angular_velocity_after["base"][2],
             reference=w_exact, tolerance=1e-12),
        dict(name="locked panel: relative rate after [rad/s]", value=r.angular_velocity_after["panel"][2]
             - r.angular_velocity_after["base"][2], reference=0.0, tolerance=1e-13, kind="abs"),
        dict(name="locked panel: |p+ - p-| / |p-|", value=np.linalg.norm(p1 - p0) / np.linalg.norm(p0), reference=0.0,
             tolerance=1e-13, kind="max"),
        dict(name="locked panel: |H_G+ - H_G-| / |H_G-|", value=abs(H1 - H0) / abs(H0), reference=0.0, tolerance=1e-13,
             kind="max"),
        dict(name="locked panel: |T- - T+ - loss| / T-", value=abs(r.outcome.energy_residual) / r.kinetic_energy_before,
             reference=0.0, tolerance=1e-13, kind="max"),
    ]
    ctx.logger.info("C5 panel: omega+ = %.15g (closed form %.15g), loss %.6g J", r.angular_velocity_after["base"][2],
                    w_exact, r.energy_lost)
    balls = [fm.RigidBody(f"s{k}", mass=M_CRADLE, inertia=np.full(3, 0.4 * M_CRADLE * R_CRADLE ** 2),
                          position=(2 * R_CRADLE * k, 0, 0), velocity=(V_CRADLE if k == 0 else 0.0, 0, 0))
             for k in range(N_CRADLE)]
    touch = [fm.Contact(f"c{k}", f"s{k}", f"s{k + 1}", kind="sphere-sphere", radius_a=R_CRADLE, radius=R_CRADLE,
                        restitution=1.0) for k in range(N_CRADLE - 1)]
    r = fm.impact(fm.Model(balls, contacts=touch))
    v = np.array([r.velocity_after[f"s{k}"][0] for k in range(N_CRADLE)])
    metrics += [
        dict(name="cradle: last sphere's velocity after [m/s]", value=v[-1], reference=V_CRADLE, tolerance=1e-13),
        dict(name="cradle: largest speed of the others after [m/s]", value=np.abs(v[:-1]).max(), reference=0.0,
             tolerance=1e-13, kind="max"),
        dict(name="cradle: |momentum after - before| / before", value=abs(v.sum() - V_CRADLE) / V_CRADLE,
             reference=0.0, tolerance=1e-13, kind="max"),
        dict(name="cradle: |T+ - T-| / T-", value=abs(r.kinetic_energy_after - r.kinetic_energy_before)
             / r.kinetic_energy_before, reference=0.0, tolerance=1e-13, kind="max"),
        dict(name="cradle: impact rounds (one per pair)", value=float(r.rounds), reference=N_CRADLE - 1.0, tolerance=0.0,
             kind="abs"),
    ]
    return metrics
