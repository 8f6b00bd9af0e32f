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
tolerance of the rest time); afterwards the contact is a constraint row of the time element
(:mod:`flexmb.dynamics.impact.resting`) and the ball sits on the floor with the gap zero to round-off,
at the nodes and inside the elements (``Solution.at``), its row's reaction ``m g``.  The run is repeated
with an element (h = 1 s) longer than the first flight: the flights are integrated exactly (p = 1), the
elements land on the impacts, the same impacts and rest, the gap as well held.

Lift-off: the ball resting on a table driven up and down, ``y = A sin(W t)`` with ``A W^2 > g``, presses
with ``N = m (g - A W^2 sin W t)`` and lifts off where that reaches zero, ``t* = asin(g / (A W^2)) / W``,
then flies freely from the table's position and velocity at ``t*`` (p = 2: the lift-off located inside
the element from the Gauss points' reaction polynomial).

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
#: the driven table: y = A sin(W t)
A, W = 0.05, 20.0
T_LIFT = float(np.arcsin(G / (A * W ** 2)) / W)


def ball_model(e: float = E, h0: float = H) -> fm.Model:
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0, h0 + R, 0))
    floor = fm.Contact("floor", "ground", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R, restitution=e)
    return fm.Model([ball], forces=[fm.Gravity((0, -G, 0))], contacts=[floor])


def table_displacement(t):
    return A * np.sin(W * t)


def table_model() -> fm.Model:
    """The ball (radius R, mass M) resting on a table driven along y by ``table_displacement``."""
    # the ball starts with the table's velocity as the drive's derivative gives it (a central difference,
    # 7e-11 m/s below A W): at rest on the table, not leaving it by 7e-11 m/s
    v0 = float((table_displacement(1e-6) - table_displacement(-1e-6)) / 2e-6)
    table = fm.RigidBody("table", mass=2.0, inertia=(0.1, 0.1, 0.1), position=(0, 0, 0), velocity=(0, v0, 0))
    ball = fm.RigidBody("ball", mass=M, inertia=np.full(3, 0.4 * M * R ** 2), position=(0, R, 0), velocity=(0, v0, 0))
    lift = fm.Prismatic("lift", "ground", "table", point=(0, 0, 0), axis=(0, 1, 0), displacement=table_displacement)
    top = fm.Contact("top", "table", "ball", kind="sphere-plane", normal=(0, 1, 0), radius=R, restitution=0.5)
    return fm.Model([table, ball], [lift], [fm.Gravity((0, -G, 0))], contacts=[top])


def _inside_gap(sol) -> float:
    """Largest |gap| of the resting ball at 97 times inside the elements after its rest (from the node
    after the rest node: that one holds the velocity before the plastic impact) [m]."""
    after = np.nonzero(sol.t >= sol.extra["events/resting"][0, 0])[0]
    inside = np.linspace(sol.t[after[1]], sol.t[-1], 97)
    return float(np.abs(sol.at(inside).body("ball").position[:, 1] - R).max())


def cradle_model(n: int = 5, r: float = 0.02, v: float = 0.7, gap: float = 0.01) -> fm.Model:
    balls = [fm.RigidBody(f"s{k}", mass=0.1, inertia=np.full(3, 0.4 * 0.1 * r ** 2),
                          position=(2 * r * k - (gap if k == 0 else 0.0), 0, 0), velocity=(v if k == 0 else 0.0, 0, 0))
             for k in range(n)]
    touch = [fm.Contact(f"c{k}", f"s{k}", f"s{k + 1}", kind="sphere-sphere", radius_a=r, radius=r, restitution=1.0)
             for k in range(n - 1)]
    return fm.Model(balls, contacts=touch)


def run(ctx):
    sol = fm.simulate(ball_model(), 5.0, STEP)
    long = fm.simulate(ball_model(), 8.0, 1.0)
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
        dict(name="at rest: max |gap| at the nodes after T_inf [m] (a constraint row)",
             value=float(np.abs(R - y[sol.t > T_inf + 2 * v_rest / (G * (1 - E))]).max()), reference=0.0,
             tolerance=1e-14, kind="max"),
        dict(name="at rest: max |gap| inside the elements (Solution.at) [m], h = 0.01 s", value=_inside_gap(sol),
             reference=0.0, tolerance=1e-14, kind="max"),
        dict(name="at rest: max |gap| inside the elements (Solution.at) [m], h = 1 s", value=_inside_gap(long),
             reference=0.0, tolerance=1e-14, kind="max"),
        dict(name="at rest: the row's reaction / (m g) - 1, h = 1 s",
             value=float(np.abs(long.joint("contact:floor").force[-3:, 2] / (M * G) - 1).max()), reference=0.0,
             tolerance=1e-12, kind="max"),
        dict(name="at rest: resting_sink [m] (h = 0.01 and 1 s)",
             value=max(sol.meta["resting_sink"], long.meta["resting_sink"]), reference=0.0, tolerance=0.0,
             kind="max"),
        dict(name="extra element solves per impact (event location)", value=sol.meta["event_solves"] / len(ev),
             reference=0.0, tolerance=3.0, kind="max"),
        dict(name="energy balance |E - E0 - W| / scale (W: the impacts' loss)", value=sol.meta["energy_balance"],
             reference=0.0, tolerance=1e-9, kind="max"),
    ]
    ctx.logger.info("C6 ball: %d impacts, %d extra solves, last impact %.6f s (T_inf %.6f s)", len(ev),
                    sol.meta["event_solves"], ev[-1]["t"], T_inf)
    table = fm.simulate(table_model(), 0.04, 0.00125, p=2)
    lift = table.extra["events/resting"]
    t_end = table.t[-1]
    free = (table_displacement(T_LIFT) + R + A * W * np.cos(W * T_LIFT) * (t_end - T_LIFT)
            - G / 2 * (t_end - T_LIFT) ** 2)
    metrics += [
        dict(name="table: lift-off time [s] (asin(g / (A W^2)) / W), p = 2, h = 1.25 ms",
             value=float(lift[-1, 0]) if lift[-1, 2] == 0.0 else np.inf, reference=T_LIFT, tolerance=1e-6,
             kind="abs"),
        dict(name="table: ball's height after the free flight from t* [m]", value=float(table.body("ball").position[-1, 1]),
             reference=float(free), tolerance=1e-7, kind="abs"),
    ]
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
