"""R2: Borri et al. bipendulum, Example 1.1 (two bars on spherical joints, spinning start): invariants.

Reference
---------
Borri, Franchi, Mantegazza, "More than redundant coordinates formulation in rigid multibody
dynamics", Example 1.1 (seed002-notes.md section 2.1).  Two equal bars, spherical joints
ground-bar 1 (at the origin) and bar 1-bar 2; at t = 0 the bars are aligned on the negative y
axis (bar 1 from the origin to (0, -L, 0), bar 2 from (0, -L, 0) to (0, -2L, 0)) and rotate
rigidly at 4 rad/s about z; gravity g = 32.174 ft/s^2 along -z (US customary units).  The paper
shows only a figure (Fig. 3: cross plot of the x and y coordinates of the bars' centres of mass)
and says it agrees with the literature; no number survives.  The checks are therefore the exact
invariants of this system:

* energy (ideal joints, conservative gravity);
* the angular momentum about the vertical z axis through the origin: gravity is parallel to z
  and the only external reaction acts at the origin, so neither has a moment about that axis.

Bar data (chosen: Table 1 of the paper is lost, only g = 32.174 survives)
------------------------------------------------------------------------
Each bar is a steel rod 1 ft long, 1 in in diameter (weight density 490 lbf/ft^3):
mass m = 490/32.174 * pi (0.5/12)^2 * 1 = 0.083065 slug (2.67 lbf); inertia about its centre of
mass m (L^2/12 + r^2/4) = 6.9581e-3 slug ft^2 transverse and m r^2/2 = 7.2105e-5 slug ft^2
about the bar axis (solid cylinder).  A realistic machine-shop bar in the paper's units; the
helpers ``BAR`` and ``bar_body`` are shared with cases R3, R4 and R5.

Model and run
-------------
Body frames have their y axis along the bar; p = 3 time elements (nodal order 6, node velocities
of order 4), h = 1/32 s, 2 s (64 elements; fast mode 1 s).

Metrics and tolerances
----------------------
* max |E - E0| / (m g L) <= 2e-4 (observed 6.3e-5; p = 1 with h = 0.005 s gives 5.3e-2: the
  error is the discretization error of the node velocities, bounded by O(h^4) for p = 3).
* max |Hz - Hz0| / |Hz0| from the node velocities <= 1e-5 (observed 4.7e-7: again the node
  velocity error).
* The same invariant evaluated on the scheme's own momenta at the nodes,
  ``sol.extra["body_momentum"]`` (p = pi + Lambda).  The pivot is grounded, so the pivot's
  multiplier is an external impulse whose moment about the vertical vanishes only as far as the
  discrete velocity of the pivot point at the internal points vanishes: O(h^2p).  Since the
  multipliers are reset at every node (the gauge reset that keeps them bounded on long runs),
  this invariant holds to the discretization error: <= 1e-7 relative at h = 1/32 (observed
  1.7e-8; 6.8e-7, 1.7e-8, 1.4e-10 at h = 1/16, 1/32, 1/64: order 6 = 2p, no drift).
* Joints hold at position level at the nodes: <= 1e-10 ft.
* Qualitative 3-D motion: the bars leave their common line (largest angle between the bars
  > 20 degrees) and the centres of mass leave the start plane (bar 2 falls > 0.3 ft).  The x-y
  cross plot of the centres of mass (the paper's Figure 3) is written to ``r2_xy.png``.
"""
from __future__ import annotations

CASE = dict(
    id="R2",
    title="Borri et al. bipendulum, Example 1.1 (spherical joints, spinning start)",
    source="Borri, Franchi, Mantegazza, 'More than redundant coordinates formulation in rigid multibody "
           "dynamics', Example 1.1, Fig. 3 (qualitative only; bar data lost, chosen here); exact invariants",
    slow=False,
)

import math

G = 32.174  #: ft/s^2, the only surviving entry of the paper's Table 1
OMEGA = 4.0  #: rad/s, initial rigid spin about z


def _bar_data(length_ft: float = 1.0, diameter_in: float = 1.0, weight_density: float = 490.0) -> dict:
    """Solid steel cylinder: mass [slug], inertia about the centre of mass [slug ft^2]."""
    r = 0.5 * diameter_in / 12.0
    m = weight_density / G * math.pi * r * r * length_ft
    return dict(length=length_ft, radius=r, mass=m,
                transverse=m * (length_ft ** 2 / 12 + r * r / 4), axial=0.5 * m * r * r)


#: The chosen bar: steel, 1 ft long, 1 in diameter (mass 0.083065 slug).
BAR = _bar_data()


def bar_body(name: str, start, end, omega=(0.0, 0.0, 0.0)):
    """A bar from ``start`` to ``end`` (inertial, t = 0), body y axis along the bar, moving
    rigidly with angular velocity ``omega`` about the origin."""
    import numpy as np

    import flexmb as fm

    a, b = np.asarray(start, float), np.asarray(end, float)
    y = (b - a) / np.linalg.norm(b - a)
    helper = np.array([0.0, 0.0, 1.0]) if abs(y[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(y, helper)
    x /= np.linalg.norm(x)
    R = np.column_stack([x, y, np.cross(x, y)])
    c = 0.5 * (a + b)
    om = np.asarray(omega, float)
    return fm.RigidBody(name, mass=BAR["mass"], inertia=(BAR["transverse"], BAR["axial"], BAR["transverse"]),
                        position=c, orientation=R, velocity=np.cross(om, c), angular_velocity=om)


def bipendulum_model():
    """Example 1.1: bars ``bar1``, ``bar2``; spherical joints ``O`` (ground) and ``A``."""
    import flexmb as fm

    L = BAR["length"]
    om = (0.0, 0.0, OMEGA)
    bodies = [bar_body("bar1", (0, 0, 0), (0, -L, 0), om), bar_body("bar2", (0, -L, 0), (0, -2 * L, 0), om)]
    joints = [fm.Spherical("O", "ground", "bar1", point=(0, 0, 0)), fm.Spherical("A", "bar1", "bar2", point=(0, -L, 0))]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -G))], units="ft-slug-s")


def angular_momentum(sol, model):
    """Angular momentum about the origin from the node velocities, shape (nt, 3)."""
    import numpy as np

    H = np.zeros((sol.t.size, 3))
    for i, b in enumerate(model.bodies):
        R = sol.body_rotation[:, i]
        Jw = np.einsum("tij,jk,tlk,tl->ti", R, b.inertia, R, sol.body_angular_velocity[:, i])
        H += np.cross(sol.body_position[:, i], b.mass * sol.body_velocity[:, i]) + Jw
    return H


def discrete_angular_momentum(sol, model):
    """Angular momentum about the origin of the scheme's own momenta at the nodes,
    ``sol.extra["body_momentum"]`` (p = pi + Lambda: linear momentum and angular momentum about the
    centre of mass), which the momentum balance integrates directly."""
    import numpy as np

    p = sol.extra["body_momentum"]
    return np.sum(np.cross(sol.body_position, p[..., :3]) + p[..., 3:], axis=1)


def bar_ends(sol, i):
    """Inertial positions (start, end), each (nt, 3), of the bar body ``i`` built by ``bar_body``
    (the end is at +L/2 along the body y axis)."""
    import numpy as np

    half = np.array([0.0, 0.5 * BAR["length"], 0.0])
    R, x = sol.body_rotation[:, i], sol.body_position[:, i]
    return x - R @ half, x + R @ half


def run(ctx):
    import numpy as np

    import flexmb as fm

    T = 1.0 if ctx.fast else 2.0
    model = bipendulum_model()
    sol = fm.simulate(model, T, 1.0 / 32.0, p=3)
    m, L = BAR["mass"], BAR["length"]

    E = sol.total_energy
    Hz = angular_momentum(sol, model)[:, 2]
    Hd = discrete_angular_momentum(sol, model)[:, 2]
    top1, bot1 = bar_ends(sol, 0)
    top2, _ = bar_ends(sol, 1)
    gap = max(np.linalg.norm(top1, axis=1).max(), np.linalg.norm(bot1 - top2, axis=1).max())
    e1 = sol.body_rotation[:, 0, :, 1]
    e2 = sol.body_rotation[:, 1, :, 1]
    angle = np.degrees(np.arccos(np.clip(np.sum(e1 * e2, axis=1), -1, 1))).max()
    drop = -sol.body_position[:, 1, 2].min()

    if ctx.out_dir is not None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.5, 5.5), layout="constrained")
        ax = fig.subplots()
        for i, name in enumerate(("bar 1", "bar 2")):
            ax.plot(sol.body_position[:, i, 0], sol.body_position[:, i, 1], label=f"{name} centre of mass")
        ax.set_aspect("equal")
        ax.set_xlabel("x [ft]")
        ax.set_ylabel("y [ft]")
        ax.set_title("Example 1.1: x-y cross plot of the centres of mass (cf. Fig. 3)")
        ax.legend()
        fig.savefig(ctx.out_dir / "r2_xy.png", dpi=120)
        sol.plot("energy", path=ctx.out_dir / "r2_energy.png")

    return [
        dict(name="max |E - E0| / (m g L)", value=float(np.abs(E - E[0]).max() / (m * G * L)),
             reference=0.0, tolerance=2e-4, kind="max"),
        dict(name="max |Hz - Hz0| / |Hz0| (node velocities)", value=float(np.abs(Hz - Hz[0]).max() / abs(Hz[0])),
             reference=0.0, tolerance=1e-5, kind="max"),
        dict(name="max |Hz - Hz0| / |Hz0| (discrete momenta)", value=float(np.abs(Hd - Hd[0]).max() / abs(Hd[0])),
             reference=0.0, tolerance=1e-7, kind="max"),
        dict(name="max joint gap at the nodes [ft]", value=float(gap), reference=0.0, tolerance=1e-10, kind="max"),
        dict(name="largest angle between the bars [deg] (3-D motion)", value=float(angle),
             reference=None, tolerance=20.0, kind="min"),
        dict(name="fall of bar 2's centre of mass [ft]", value=float(drop), reference=None, tolerance=0.3, kind="min"),
    ]
