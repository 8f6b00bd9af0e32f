"""C7: Coulomb friction at impacts: a spinning sphere hitting a rough floor, a rod falling onto it.

**Sphere** (mass m, radius R, central inertia I) hitting the floor ``y = 0`` with the centre's velocity
``(u, -v)`` and the spin ``omega`` about z.  The contact point slips with ``s- = u + R omega`` (backspin
``omega > 0`` adds to the slip, topspin ``omega < 0`` takes from it; rolling is ``s = 0``).  The normal
impulse is Newton's ``P_n = m (1 + e) v`` (no coupling: the normal passes through the centre); a
tangential impulse ``P_t`` changes ``u`` by ``P_t / m`` and ``omega`` by ``R P_t / I``, the slip by
``P_t (1/m + R^2/I)``.  Sticking (rolling after the impact, ``u+ = -R omega+``) needs
``P_t = -s- / (1/m + R^2/I)``, admissible when ``|P_t| <= mu P_n``, i.e. from

    mu* = |s-| / ((1/m + R^2/I) m (1 + e) v)        (sticking begins)

on; below it the sphere slides, ``P_t = -mu P_n sign(s-)`` (Brach, *Mechanical Impact Dynamics*, 1991,
chapter 5; Stronge, *Impact Mechanics*, 2000, chapter 5: the slip never reverses, so the algebraic and
Routh's incremental laws agree).  The angular momentum about the contact point is conserved whatever
``mu`` (the impulse passes through it).

**Rod** (C1's rod, faster along the floor so that the slip does not reverse: length L, mass m, ``J = m L^2 / 12``, angle theta, the lower end's lever ``r = (r_x,
r_y)``), ``e = 0``, rough floor.  With the end's velocity ``c- = (c_t, c_n)`` and the Delassus matrix
of the end (normal, tangent) ``W = [[1/m + r_x^2/J, -r_x r_y/J], [-r_x r_y/J, 1/m + r_y^2/J]]``: sticking
``W P = -c-`` (``c+ = 0``) when ``|P_t| <= mu P_n`` (from ``mu* = |P_t| / P_n`` on), else sliding
``P_n = -c_n / (W_nn - mu s W_nt)``, ``P_t = -mu s P_n`` with ``s`` the sign of the slip (unreversed
here) (Wittenburg, *Dynamics of Systems of Rigid Bodies*, chapter 6; Brach chapter 5; Stronge chapter 5).

Checked: impulses, velocities and spins after, the slip after (zero sticking), the momentum balance, the
energy balance ``T- = T+ + loss`` to round-off with ``loss >= 0``; the transition ``mu*`` (a run at
``mu* (1 + 1e-6)`` sticks, at ``mu* (1 - 1e-6)`` slides); and the guard: the rod with ``e = 1`` at 45
degrees, where Newton's law with sticking friction would create energy (the known inconsistency of
Newton + Coulomb, Kane and Levinson 1985), raises instead of returning the state.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.errors import ConvergenceError

CASE = dict(
    id="C7",
    title="Coulomb friction at impacts: spinning sphere on a rough floor (stick/slide, mu*), rod on a rough floor (e = 0)",
    source="Closed forms of the planar rough impact (R. M. Brach, Mechanical Impact Dynamics, Wiley 1991, ch. 5; "
           "W. J. Stronge, Impact Mechanics, CUP 2000, ch. 5; J. Wittenburg, Dynamics of Systems of Rigid Bodies, "
           "Teubner 1977, ch. 6); Kane and Levinson 1985 for the energy inconsistency",
    slow=False,
)

MB, RB, IB, UB, VB, EB = 0.5, 0.1, 2e-3, 1.0, 2.0, 0.5  # the sphere (I = 0.4 m R^2: solid)
SPINS = {"backspin": 8.0, "topspin": -4.0}
L, M, THETA, U, V, OMEGA = 1.2, 2.0, np.radians(35.0), 2.0, 3.0, 1.5  # C1's rod, faster along the floor


def sphere_model(spin: float, mu: float) -> fm.Model:
    ball = fm.RigidBody("ball", mass=MB, inertia=np.full(3, IB), position=(0, RB, 0), velocity=(UB, -VB, 0),
                        angular_velocity=(0, 0, spin))
    return fm.Model([ball], contacts=[fm.Contact("floor", "ground", "ball", normal=(0, 1, 0), radius=RB, restitution=EB,
                                                 friction=mu)])


def sphere_closed_form(spin: float, mu: float):
    """``(P_n, P_t, u+, omega+, slip+, mu*)``."""
    Pn = MB * (1 + EB) * VB
    s = UB + RB * spin
    k = 1 / MB + RB ** 2 / IB
    Pt = -s / k
    mu_star = abs(Pt) / Pn
    if abs(Pt) > mu * Pn:
        Pt = -mu * Pn * np.sign(s)
    return Pn, Pt, UB + Pt / MB, spin + RB * Pt / IB, s + k * Pt, mu_star


def rod_model(mu: float, e: float = 0.0, theta: float = THETA, u: float = U, omega: float = OMEGA) -> fm.Model:
    J = M * L ** 2 / 12.0
    rod = fm.RigidBody("rod", mass=M, inertia=(1e-4, J, J), position=(0.0, 0.5 * L * np.sin(theta), 0.0),
                       orientation={"axis": (0, 0, 1), "angle": theta}, velocity=(u, -V, 0.0),
                       angular_velocity=(0.0, 0.0, omega))
    return fm.Model([rod], contacts=[fm.Contact("floor", "ground", "rod", kind="point-plane", normal=(0, 1, 0),
                                                point_b=(-0.5 * L, 0, 0), restitution=e, friction=mu)])


def rod_closed_form(mu: float):
    """``(P_n, P_t, u+, v+, omega+, slip+, mu*)`` for e = 0 (module doc)."""
    J = M * L ** 2 / 12.0
    rx, ry = -0.5 * L * np.cos(THETA), -0.5 * L * np.sin(THETA)
    W = np.array([[1 / M + rx ** 2 / J, -rx * ry / J], [-rx * ry / J, 1 / M + ry ** 2 / J]])
    c = np.array([-V + OMEGA * rx, U - OMEGA * ry])  # (normal, tangent) velocity of the end
    Pn, Pt = np.linalg.solve(W, -c)
    mu_star = abs(Pt) / Pn
    if abs(Pt) > mu * Pn:
        s = np.sign(c[1])
        Pn = -c[0] / (W[0, 0] - mu * s * W[0, 1])
        Pt = -mu * s * Pn
    slip = c[1] + W[1] @ (Pn, Pt)
    assert abs(Pt) < mu * Pn or slip * c[1] > 0, "the slip reverses: the algebraic law is not Routh's (module doc)"
    return Pn, Pt, U + Pt / M, -V + Pn / M, OMEGA + (rx * Pn - ry * Pt) / J, slip, mu_star


def _common(tag, r, m, v_minus, P_vec):
    """The balances every rough impact meets: momentum, energy to round-off, loss >= 0."""
    o = r.outcome
    body = next(iter(r.velocity_after))
    dp = m * (r.velocity_after[body] - r.velocity_before[body])
    scale = o.T_minus
    return [
        dict(name=f"{tag}: momentum balance |m dv - P_n n - P_t t| [N s]", value=float(np.abs(dp - P_vec).max()),
             reference=0.0, tolerance=1e-12, kind="max"),
        dict(name=f"{tag}: energy balance |T- - T+ - loss| / T-", value=abs(o.energy_residual) / scale, reference=0.0,
             tolerance=1e-13, kind="max"),
        dict(name=f"{tag}: loss >= 0 (friction never adds energy) [J]", value=o.energy_lost, reference=0.0,
             tolerance=0.0, kind="min"),
    ]


def run(ctx):
    metrics = []
    for name, spin in SPINS.items():
        mu_star = sphere_closed_form(spin, 1.0)[5]
        for regime, mu in (("sliding", 0.5 * mu_star), ("sticking", 2.0 * mu_star)):
            r = fm.impact(sphere_model(spin, mu))
            o = r.outcome
            Pn, Pt, u, om, slip, _ = sphere_closed_form(spin, mu)
            tag = f"sphere {name} {regime} (mu = {mu:.4g})"
            Lc = lambda v, w: IB * w[2] - MB * RB * v[0]  # angular momentum about the contact point, z
            metrics += [
                dict(name=f"{tag}: normal impulse [N s]", value=o.P[0], reference=Pn, tolerance=1e-12, kind="abs"),
                dict(name=f"{tag}: tangential impulse [N s]", value=o.P_t[0, 0], reference=Pt, tolerance=1e-12,
                     kind="abs"),
                dict(name=f"{tag}: u+ [m/s]", value=r.velocity_after["ball"][0], reference=u, tolerance=1e-12,
                     kind="abs"),
                dict(name=f"{tag}: omega+ [rad/s]", value=r.angular_velocity_after["ball"][2], reference=om,
                     tolerance=1e-11, kind="abs"),
                dict(name=f"{tag}: slip after u+ + R omega+ [m/s]", value=o.vt_plus[0, 0], reference=slip,
                     tolerance=1e-12, kind="abs"),
                dict(name=f"{tag}: angular momentum about the contact point [kg m^2/s]",
                     value=Lc(r.velocity_after["ball"], r.angular_velocity_after["ball"]),
                     reference=Lc(r.velocity_before["ball"], r.angular_velocity_before["ball"]), tolerance=1e-13,
                     kind="abs"),
            ] + _common(tag, r, MB, None, np.array([Pt, Pn, 0.0]))
        for side, f, stick in (("above", 1 + 1e-6, True), ("below", 1 - 1e-6, False)):
            o = fm.impact(sphere_model(spin, mu_star * f)).outcome
            metrics.append(dict(name=f"sphere {name}: mu just {side} mu* = {mu_star:.6g} {'sticks' if stick else 'slides'}"
                                     f" (sticking: |P_t| < mu P_n)", value=bool(abs(o.P_t[0, 0]) < mu_star * f * o.P[0]) == stick,
                                kind="bool"))
    mu_star = rod_closed_form(10.0)[6]
    for regime, mu in (("sliding", 0.5 * mu_star), ("sticking", 1.5 * mu_star)):
        r = fm.impact(rod_model(mu))
        o = r.outcome
        Pn, Pt, u, v, om, slip, _ = rod_closed_form(mu)
        tag = f"rod e = 0 {regime} (mu = {mu:.4g})"
        metrics += [
            dict(name=f"{tag}: normal impulse [N s]", value=o.P[0], reference=Pn, tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: tangential impulse [N s]", value=o.P_t[0, 0], reference=Pt, tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: centre velocity x after [m/s]", value=r.velocity_after["rod"][0], reference=u,
                 tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: centre velocity y after [m/s]", value=r.velocity_after["rod"][1], reference=v,
                 tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: angular velocity after [rad/s]", value=r.angular_velocity_after["rod"][2], reference=om,
                 tolerance=1e-12, kind="abs"),
            dict(name=f"{tag}: end's slip after [m/s]", value=o.vt_plus[0, 0], reference=slip, tolerance=1e-12,
                 kind="abs"),
            dict(name=f"{tag}: end's normal velocity after (plastic) [m/s]", value=o.v_plus[0], reference=0.0,
                 tolerance=1e-12, kind="abs"),
        ] + _common(tag, r, M, None, np.array([Pt, Pn, 0.0]))
    try:
        fm.impact(rod_model(0.6, e=1.0, theta=np.radians(45.0), u=1.2, omega=5.0))
        raised = False
    except ConvergenceError as err:
        raised = "create" in str(err) and "restitution" in str(err)
    metrics.append(dict(name="rod e = 1, mu = 0.6, 45 deg: Newton + Coulomb would create energy: raises",
                        value=raised, kind="bool"))
    ctx.logger.info("C7: sphere mu* %s, rod mu* %.6g", {n: sphere_closed_form(s, 1.0)[5] for n, s in SPINS.items()},
                    mu_star)
    return metrics
