"""C6: events in the march: the bouncing ball (apex heights, impact times, energy loss, rest in finite
time) and Newton's cradle struck by a moving sphere.

Bouncing ball: a sphere (radius R) dropped from the height H above a floor, e = 0.8, gravity g.  The
impacts are located in the march (:mod:`flexmb.dynamics.impact.march`); the closed forms: impact
``k`` (k = 0, 1, ...) at ``t_k = t_0 + sum_{i=1..k} 2 v_0 e^i / g`` with ``t_0 = sqrt(2 H / g)``,
``v_0 = sqrt(2 g H)``, rebound apex ``H e^(2(k+1))``, energy lost ``m g H e^(2k) (1 - e^2)``, and the
bounces end at the sum of the geometric series ``T_inf = t_0 + 2 v_0 e / (g (1 - e))``.  flexmb
switches the contact to resting when a rebound's apex ``v^2 / (2 g)`` is below the gap tolerance ``tol``
(``v < v_rest = sqrt(2 g tol)``, whatever h: the impacts until rest are the first k with
``v_0 e^k < v_rest``; the remaining series then takes at most ``2 v_rest / (g (1 - e))``: the
tolerance of the rest time); afterwards the ball sits on the floor within the bounded penetration
``g h^2 / 2``.  The run is repeated with an element (h = 1 s) longer than the first flight: the flights
are integrated exactly (p = 1), the elements land on the impacts, the same impacts and rest.

Newton's cradle in the march: four touching spheres at rest, a fifth approaching at speed v (no
gravity): after the located impact the sequential rounds pass the momentum to the far sphere.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C6",
    title="Bouncing ball (impact times, apex heights h e^2k, energy loss, rest at the geometric sum); Newton's cradle",
    source="Closed form of the bouncing ball with Newton's restitution law (the geometric series of flight times); "
           "Newton's cradle: momentum passes to the last sphere (sequential impacts)",
    slow=False,
)

G, H, E, R, M, STEP = 9.81, 1.0, 0.8, 0.1, 0.5, 0.01


def ball_model(e: float = E, h0: float = H) -> fm.Model:
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0, h0 + R, 0))
    floor = fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R, restitution=e)
    return fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[floor])


def cradle_model(n: int = 5, r: float = 0.02, v: float = 0.7, gap: float = 0.01) -> fm.Model:
    balls = [fm.RigidBody(f"s{k}", mass=0.1, inertia=np.full(3, 0.4 * 0.1 * r ** 2),
                          position=(2 * r * k - (gap if k == 0 else 0.0), 0, 0), velocity=(v if k == 0 else 0.0, 0, 0))
             for k in range(n)]
    touch = [fm.Contact(f"c{k}", f"s{k}", f"s{k + 1}", kind="sphere-sphere", radius_a=r, radius=r, restitution=1.0)
             for k in range(n - 1)]
    return fm.Model(balls, contacts=touch)


def run(ctx):
    sol = fm.simulate(ball_model(), 5.0, STEP)
    long = fm.simulate(ball_model(), 5.0, 1.0)
    ev = sol.events
    t0, v0 = np.sqrt(2 * H / G), np.sqrt(2 * G * H)
    n = 8
    k = np.arange(n)
    t_exact = t0 + np.concatenate([[0.0], np.cumsum(2 * v0 * E ** np.arange(1, n) / G)])
    t_sim = np.array([e["t"] for e in ev[:n]])
    apex = np.array([e["v_plus"] ** 2 / (2 * G) for e in ev[:n]])
    loss = np.array([e["energy_lost"] for e in ev[:n]])
    T_inf = t0 + 2 * v0 * E / (G * (1 - E))
    v_rest = np.sqrt(2 * G * sol.meta["gap_tol"])
    n_rest = int(np.argmax(v0 * E ** np.arange(1, 400) < v_rest) + 1)
    t_long = np.array([e["t"] for e in long.events])
    y = sol.body("ball").position[:, 1]
    metrics = [
        dict(name=f"first {n} impact times, max |t - t_k| [s]", value=np.abs(t_sim - t_exact).max(), reference=0.0,
             tolerance=1e-9, kind="max"),
        dict(name=f"first {n} apex heights, max |h / (H e^2(k+1)) - 1|", value=np.abs(apex / (H * E ** (2 * k + 2)) - 1).max(),
             reference=0.0, tolerance=1e-9, kind="max"),
        dict(name=f"first {n} energy losses, max |loss / (m g H e^2k (1 - e^2)) - 1|",
             value=np.abs(loss / (M * G * H * E ** (2 * k) * (1 - E ** 2)) - 1).max(), reference=0.0, tolerance=1e-9,
             kind="max"),
        dict(name="rest: T_inf - time of the last impact [s] (bound 2 v_rest / (g (1 - e)))",
             value=abs(ev[-1]["t"] - T_inf), reference=0.0, tolerance=2 * v_rest / (G * (1 - E)), kind="max"),
        dict(name="impacts until rest (the first rebound with apex below the gap tolerance is plastic)",
             value=float(len(ev)), reference=float(n_rest), tolerance=0.0, kind="abs"),
        dict(name="h = 1 s: impacts until rest", value=float(len(t_long)), reference=float(n_rest), tolerance=0.0,
             kind="abs"),
        dict(name="h = 1 s: max |impact time - the h = 0.01 s run's| [s]", value=np.abs(t_long - [e["t"] for e in ev]).max()
             if len(t_long) == len(ev) else np.inf, reference=0.0, tolerance=1e-9, kind="max"),
        dict(name="h = 1 s: element solves per impact (flights and location)",
             value=(len(long.stats["h"]) + long.meta["event_solves"]) / len(t_long), reference=0.0, tolerance=2.0,
             kind="max"),
        dict(name="last impact's rebound [m/s] (plastic)", value=ev[-1]["v_plus"], reference=0.0, tolerance=1e-12,
             kind="abs"),
        dict(name="at rest: contact resting at the end", value="floor" in sol.meta["resting_contacts"], kind="bool"),
        dict(name="at rest: max penetration after T_inf [m] (bound g h^2 / 2)",
             value=float(np.maximum(R - y[sol.t > T_inf + 2 * v_rest / (G * (1 - E))], 0).max()), reference=0.0,
             tolerance=1.000001 * G * STEP ** 2 / 2, kind="max"),  # the bound itself is reached (round-off)
        dict(name="extra element solves per impact (event location)", value=sol.meta["event_solves"] / len(ev),
             reference=0.0, tolerance=3.0, kind="max"),
        dict(name="energy balance |E - E0 - W| / scale (W: the impacts' loss)", value=sol.meta["energy_balance"],
             reference=0.0, tolerance=1e-9, kind="max"),
    ]
    ctx.logger.info("C6 ball: %d impacts, %d extra solves, last impact %.6f s (T_inf %.6f s)", len(ev),
                    sol.meta["event_solves"], ev[-1]["t"], T_inf)
    sol = fm.simulate(cradle_model(), 0.05, 0.005)
    v = np.array([sol.body(f"s{k}").velocity[-1, 0] for k in range(5)])
    metrics += [
        dict(name="cradle in the march: last sphere's velocity [m/s]", value=v[-1], reference=0.7, tolerance=1e-12),
        dict(name="cradle in the march: largest speed of the others [m/s]", value=np.abs(v[:-1]).max(), reference=0.0,
             tolerance=1e-12, kind="max"),
        dict(name="cradle in the march: impact time [s] (gap / v)", value=sol.events[0]["t"], reference=0.01 / 0.7,
             tolerance=1e-10, kind="abs"),
    ]
    return metrics
