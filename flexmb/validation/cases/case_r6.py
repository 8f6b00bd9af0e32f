"""R6: planar four-bar built with four revolute joints in 3-D: redundancy detected, correct motion.

Reference
---------
A planar four-bar has one degree of freedom, but four revolutes in 3-D impose 20 equations on
the 18 coordinates of three bodies: 3 of them (out-of-plane translation and the two out-of-plane
rotations of the loop closure) are dependent (Gruebler-Kutzbach: 6 (4 - 1) - 4 * 5 = -2 < 1).
VALIDATION.md asks that such a model either runs with the correct 1-DOF motion or is refused at
set-up naming the dependent equations, never a singular-matrix crash or garbage.

The motion reference is independent of flexmb: the same mechanism as a planar multibody system in
absolute coordinates (x, y, phi) of the three bars, 8 independent pin constraints, index-1 DAE
``[M Phi_q^T; Phi_q 0] [q''; lambda] = [Q; gamma]`` solved by SciPy ``solve_ivp`` (DOP853,
rtol = atol = 1e-12; the constraint drift stays below 1e-9 m over the run).

Model
-----
Grashof crank-rocker in the x-y plane, gravity 9.81 m/s^2 along -y, pivots A = (0, 0) and
D = (0.6, 0) m; crank AB 0.2 m, coupler BC 0.6 m, rocker DC 0.5 m (s + l = 0.8 < p + q = 1.1).
Steel flat bars 20 mm x 10 mm (7850 kg/m^3, 1.57 kg/m): m = 1.57 l, I_zz = m l^2 / 12 about the
centre of mass.  Released from rest with the crank at 60 degrees (coupler-rocker joint on the
upper branch), no drive: the mechanism swings under gravity.  All four joints are flexmb
``Revolute`` about z.  p = 3, h = 1/64 s, 2 s (fast mode 0.5 s).

Metrics and tolerances
----------------------
* Redundancy detected: exactly 3 dependent equations in ``sol.meta["redundant_constraints"]``,
  all of them out-of-plane components (s_z, phi_x, phi_y).
* ``SimulationOptions(redundant="error")`` raises ``ModelError`` whose message names the same
  3 equations ("joint:component").
* Bar angles against the planar reference: max error 1e-4 rad over the run (observed 8.4e-6
  rad with h = 1/64 s; 1.2e-2 with h = 1/32 s and 4.1e-8 with h = 1/128 s: the crank swings
  through 316 degrees with fast phases, and p = 3 converges at its nodal order 6 or faster).
* Constraints at the nodes: joint points coincide and the hinge axes stay parallel, 1e-10.
* Planarity: out-of-plane coordinates and rotations stay at round-off (1e-12).
* Energy: max |E - E0| / (m_total g l_crank) <= 1e-4 (node velocities of order 4).
"""
from __future__ import annotations

CASE = dict(
    id="R6",
    title="planar four-bar with four revolutes in 3-D (redundant constraints)",
    source="VALIDATION.md R6; reference: planar absolute-coordinate DAE of the same four-bar solved by "
           "scipy solve_ivp (this file)",
    slow=False,
)

G = 9.81
GROUND_LEN, CRANK, COUPLER, ROCKER = 0.6, 0.2, 0.6, 0.5
LINEAR_DENSITY = 7850.0 * 0.02 * 0.01  # kg/m, steel flat bar 20 mm x 10 mm
THETA0 = 60.0  # deg, initial crank angle
NAMES = ("crank", "coupler", "rocker")


def initial_points():
    """Joint positions A, B, C, D at t = 0 (2-D), coupler-rocker joint C on the upper branch."""
    import numpy as np

    A, D = np.zeros(2), np.array([GROUND_LEN, 0.0])
    th = np.radians(THETA0)
    B = CRANK * np.array([np.cos(th), np.sin(th)])
    # circle-circle intersection |C - B| = COUPLER, |C - D| = ROCKER
    dvec = D - B
    dist = np.linalg.norm(dvec)
    a = (COUPLER ** 2 - ROCKER ** 2 + dist ** 2) / (2 * dist)
    hgt = np.sqrt(COUPLER ** 2 - a * a)
    base = B + a * dvec / dist
    perp = np.array([-dvec[1], dvec[0]]) / dist
    C1, C2 = base + hgt * perp, base - hgt * perp
    C = C1 if C1[1] > C2[1] else C2
    return A, B, C, D


def bar_properties(length: float):
    """Mass [kg] and principal inertia about the centre of mass (axial x, y, z) [kg m^2]."""
    m = LINEAR_DENSITY * length
    w, t = 0.02, 0.01
    return m, (m * (w * w + t * t) / 12, m * (length ** 2 + t * t) / 12, m * (length ** 2 + w * w) / 12)


def bars():
    """(name, start, end) of the three moving bars at t = 0 (2-D points)."""
    A, B, C, D = initial_points()
    return (("crank", A, B), ("coupler", B, C), ("rocker", D, C))


def fourbar_model():
    """Bodies crank, coupler, rocker (body x along the bar, from start to end); revolutes
    RA (ground-crank), RB (crank-coupler), RC (coupler-rocker), RD (ground-rocker), all about z."""
    import numpy as np

    import flexmb as fm

    bodies = []
    for name, a, b in bars():
        L = float(np.linalg.norm(b - a))
        m, I = bar_properties(L)
        phi = np.arctan2(b[1] - a[1], b[0] - a[0])
        c = 0.5 * (a + b)
        bodies.append(fm.RigidBody(name, mass=m, inertia=I, position=(c[0], c[1], 0.0),
                                   orientation=fm.orientation(axis=(0, 0, 1), angle=phi)))
    A, B, C, D = initial_points()
    z = (0, 0, 1)
    joints = [fm.Revolute("RA", "ground", "crank", point=(*A, 0), axis=z),
              fm.Revolute("RB", "crank", "coupler", point=(*B, 0), axis=z),
              fm.Revolute("RC", "coupler", "rocker", point=(*C, 0), axis=z),
              fm.Revolute("RD", "ground", "rocker", point=(*D, 0), axis=z)]
    return fm.Model(bodies, joints, [fm.Gravity((0, -G, 0))])


def planar_reference(t):
    """Bar angles phi (len(t), 3) of the planar DAE (absolute coordinates, index 1, DOP853) and
    the largest constraint drift."""
    import numpy as np
    from scipy.integrate import solve_ivp

    A, B, C, D = initial_points()
    geo = []
    for _, a, b in bars():
        L = float(np.linalg.norm(b - a))
        m, I = bar_properties(L)
        geo.append((L, m, I[2]))
    Mdiag = np.concatenate([[m, m, Iz] for _, m, Iz in geo])
    Q = np.concatenate([[0.0, -m * G, 0.0] for _, m, _ in geo])
    # constraints: list of (terms, constant); a term (body, s) is the point r + s u(phi) of a body
    Ls = [g[0] for g in geo]
    ends = lambda i, e: (i, (e - 0.5) * Ls[i])  # e = 0: start, 1: end
    cons = [([(ends(0, 0), 1.0)], -A),                      # A: crank start at A
            ([(ends(0, 1), 1.0), (ends(1, 0), -1.0)], 0.0),  # B: crank end = coupler start
            ([(ends(1, 1), 1.0), (ends(2, 1), -1.0)], 0.0),  # C: coupler end = rocker end
            ([(ends(2, 0), 1.0)], -D)]                       # D: rocker start at D

    def parts(q, qd):
        Phi = np.zeros(8)
        Jac = np.zeros((8, 9))
        gam = np.zeros(8)
        for k, (terms, const) in enumerate(cons):
            rows = slice(2 * k, 2 * k + 2)
            val = np.zeros(2) + const
            for (i, s), sign in terms:
                x, y, ph = q[3 * i:3 * i + 3]
                u = np.array([np.cos(ph), np.sin(ph)])
                du = np.array([-np.sin(ph), np.cos(ph)])
                val += sign * (np.array([x, y]) + s * u)
                Jac[rows, 3 * i:3 * i + 2] += sign * np.eye(2)
                Jac[rows, 3 * i + 2] += sign * s * du
                gam[rows] += sign * s * u * qd[3 * i + 2] ** 2
            Phi[rows] = val
        return Phi, Jac, gam

    def rhs(_, y):
        q, qd = y[:9], y[9:]
        _, Jac, gam = parts(q, qd)
        K = np.block([[np.diag(Mdiag), Jac.T], [Jac, np.zeros((8, 8))]])
        sol = np.linalg.solve(K, np.concatenate([Q, gam]))
        return np.concatenate([qd, sol[:9]])

    q0 = []
    for _, a, b in bars():
        c = 0.5 * (a + b)
        q0 += [c[0], c[1], np.arctan2(b[1] - a[1], b[0] - a[0])]
    s = solve_ivp(rhs, (0.0, float(np.max(t))), np.concatenate([q0, np.zeros(9)]), method="DOP853",
                  t_eval=t, rtol=1e-12, atol=1e-12)
    drift = max(np.abs(parts(s.y[:9, k], s.y[9:, k])[0]).max() for k in range(s.y.shape[1]))
    return s.y[[2, 5, 8]].T, drift


def run(ctx):
    import numpy as np

    import flexmb as fm
    from flexmb.errors import ModelError

    T = 0.5 if ctx.fast else 2.0
    model = fourbar_model()
    sol = fm.simulate(model, T, 1.0 / 64.0, p=3)
    dep = sol.meta["redundant_constraints"]
    labels = {f"{j}:{['s_x', 's_y', 's_z', 'phi_x', 'phi_y', 'phi_z'][int(c)]}" for j, c in dep}
    out_of_plane = all(int(c) in (2, 3, 4) for _, c in dep)

    try:
        fm.simulate(model, 0.1, 0.05, p=1, options=fm.SimulationOptions(redundant="error"))
        refused, named = False, False
    except ModelError as exc:
        refused = True
        named = bool(labels) and all(lab in str(exc) for lab in labels)
        ctx.logger.info("redundant='error' message: %s", exc)

    phi_ref, drift = planar_reference(sol.t)
    R = sol.body_rotation
    phi = np.unwrap(np.arctan2(R[:, :, 1, 0], R[:, :, 0, 0]), axis=0)
    err = np.abs(phi - phi_ref)

    # constraints at the nodes: ends of the bars (body x axis from start to end)
    ends = {}
    for i, (name, a, b) in enumerate(bars()):
        half = np.array([0.5 * np.linalg.norm(b - a), 0.0, 0.0])
        ends[name] = (sol.body_position[:, i] - R[:, i] @ half, sol.body_position[:, i] + R[:, i] @ half)
    A, B, C, D = initial_points()
    pairs = [(ends["crank"][0], [*A, 0]), (ends["crank"][1], ends["coupler"][0]),
             (ends["coupler"][1], ends["rocker"][1]), (ends["rocker"][0], [*D, 0])]
    gaps = [np.linalg.norm(np.asarray(p) - np.asarray(q), axis=-1) for p, q in pairs]
    zax = R[:, :, :, 2]
    axis_dev = max(np.linalg.norm(np.cross(zax[:, i], [0, 0, 1]), axis=1).max() for i in range(3))
    planar = max(np.abs(sol.body_position[:, :, 2]).max(), np.abs(sol.body_angular_velocity[:, :, :2]).max())
    mtot = sum(b.mass for b in model.bodies)
    E = sol.total_energy
    swing = float(np.ptp(phi[:, 0]))

    if ctx.out_dir is not None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 4.5), layout="constrained")
        ax = fig.subplots()
        for i, name in enumerate(NAMES):
            ax.plot(sol.t, np.degrees(phi[:, i]), label=f"{name} (flexmb)")
            ax.plot(sol.t, np.degrees(phi_ref[:, i]), "k:", lw=1)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("bar angle [deg]  (dotted: planar DAE reference)")
        ax.legend()
        fig.savefig(ctx.out_dir / "r6_angles.png", dpi=120)

    return [
        dict(name="dependent constraint equations detected", value=len(dep), reference=3, tolerance=0, kind="abs"),
        dict(name="dependent equations are out-of-plane (s_z, phi_x, phi_y)", value=out_of_plane and len(dep) == 3,
             kind="bool"),
        dict(name="redundant='error' refuses the model (ModelError)", value=refused, kind="bool"),
        dict(name="the refusal names the dependent equations", value=named, kind="bool"),
        dict(name="crank swing [deg] (the mechanism moves)", value=float(np.degrees(swing)), reference=None,
             tolerance=90.0, kind="min"),
        dict(name="max |phi - phi_ref| over the bars [rad]", value=float(err.max()), reference=0.0,
             tolerance=1e-4, kind="max"),
        dict(name="planar reference constraint drift [m]", value=float(drift), reference=0.0, tolerance=1e-9,
             kind="max"),
        dict(name="max joint gap at the nodes [m]", value=float(max(g.max() for g in gaps)), reference=0.0,
             tolerance=1e-10, kind="max"),
        dict(name="max hinge-axis deviation at the nodes", value=float(axis_dev), reference=0.0, tolerance=1e-10,
             kind="max"),
        dict(name="out-of-plane motion [m, rad/s]", value=float(planar), reference=0.0, tolerance=1e-12, kind="max"),
        dict(name="max |E - E0| / (m_total g l_crank)", value=float(np.abs(E - E[0]).max() / (mtot * G * CRANK)),
             reference=0.0, tolerance=1e-4, kind="max"),
    ]
