"""I3: IFToMM A03 Andrews' squeezing mechanism (stiff spring, driving torque), against the IVP test set.

Reference
---------
IFToMM Library of Computational Benchmark Problems, problem A03 "Andrews' squeezer" (spec text:
RehabEngGroup/MBSbenchmarksInOpenSim, help/benchmarks/A03_AndrewsMechanism.rst): seven planar
bodies and ten revolutes driven by a motor torque 0.033 N m on the crank OF, a spring (4530 N/m,
free length 0.07785 m) between point D of the triangle BDE and the ground point C, no gravity;
0.05 s; the published accuracy measure is the energy balance
``dU = T + V - E0 - tau (beta - beta0)`` (zero exactly), with the motion of point F.  The same
system, with the data of Hairer and Wanner (Solving ODEs II, sec. VII.7; Schiehlen 1990), is
problem "andrews" of the Bari/CWI Test Set for IVP Solvers (Mazzia, Magherini): its reference
solution at t = 0.03 s, computed by PSIDE with rtol = atol = 1e-14, gives the seven angles
(beta, Theta, gamma, Phi, delta, Omega, epsilon) to 16 digits (``TESTSET_Q_003`` below), and the
consistent initial angles to 30 digits (``Q0``).  The ground points, masses and inertias are the
test set's (the OpenSim page prints B with x = +0.03635, a sign slip: the test set has -0.03635).

Model
-----
The test set's coordinates are beta (crank OF), Theta (FE relative to OF), gamma (triangle BDE
about B), Phi (EG relative to AG), delta (AG about A), Omega (HE relative to AH), epsilon (AH
about A).  Each body is a flexmb ``RigidBody`` whose body x axis has the absolute angle of the
body (beta, beta + Theta, gamma, Phi + delta, delta, Omega + epsilon, epsilon), with the
geometry of the test set: F = r (cos beta, sin beta), E = F - d (cos(beta+Theta), ...), E = B +
ss (sin gamma, -cos gamma), D = B + (sd cos gamma + sc sin gamma, sd sin gamma - sc cos gamma),
G = A + zt (cos delta, sin delta), E = G + e (sin(Phi+delta), -cos(Phi+delta)), H = A +
u (sin epsilon, -cos epsilon), E = H + zf (cos(Omega+epsilon), ...).  The centres of mass of
the bodies turning about a ground pivot (OF, BDE, AG, AH) only enter through m r^2 + I (no
gravity); they are put at the OpenSim page's body coordinates.  Ten 3-D ``Revolute`` joints about
z (three planar loops: 9 dependent out-of-plane equations, detected and dropped), a
``SpringDamper`` D - C and a ``PointTorque`` (0, 0, 0.033) N m on OF.  Released at rest.
p = 3, fixed steps h = 2.5e-5 s and 5e-5 s (fast mode: 5e-5 s and 1e-4 s, up to 0.03 s).

Second reference, independent of flexmb and of the published digits: the test set's index-1
equations (mass matrix, forces and the six closure conditions of Hairer & Wanner, written here
from the equations) integrated by SciPy ``solve_ivp`` (DOP853, rtol = atol = 1e-13; closure drift
< 1e-14 m; rtol 1e-12 changes beta(0.03 s) by 4e-14).  It differs from the published test-set
values by up to 1.43e-9 rad (beta, Theta; relative 9e-11), and so does flexmb, which converges
to the SciPy solution (1e-11 apart at 0.03 s): the published digits are good to ~10 significant
digits, not 16, and the tight comparisons are made with the SciPy solution.

Metrics and tolerances (measured on the first commit)
-----------------------------------------------------
* The seven angles at 0.03 s against the test set: bound 5e-9 rad, the published reference's own
  accuracy (SciPy: 1.43e-9; flexmb h = 5e-5 s: 1.41e-9; h = 1e-4 s: 9e-11 by a cancellation of
  its own 1.3e-9 error with the reference's).
* Angles against the SciPy solution at every node: h = 5e-5 s over 0.05 s 5.5e-11 rad (bound
  5e-10), h = 1e-4 s 4.3e-9 rad (bound 5e-8); fast mode, 0.03 s: h = 1e-4 s 1.3e-9 (bound 1e-8),
  h = 2e-4 s 8.7e-8 (bound 1e-6).  Fitted order between h and 2 h: 6.3 and 6.0 (bound >= 5, nodal
  order 2 p = 6).
* IFToMM energy balance max |dU| (spring energy from the node positions of D, motor work
  tau (beta - beta0), 1.12 J over 0.05 s): 3.6e-11 J at h = 5e-5 s (bound 3e-10), 8.6e-10 J at
  h = 1e-4 s over 0.03 s (fast-mode bound 1e-8).
* 9 dependent out-of-plane equations detected (three planar loops).

CPU (shared, loaded machine, noisy): 4.9 s for h = 5e-5 s over 0.05 s (1000 elements).
"""
from __future__ import annotations

import functools

CASE = dict(
    id="I3",
    title="IFToMM A03 Andrews' squeezing mechanism (stiff spring, motor torque), 0.05 s",
    source="IFToMM Library of Computational Benchmark Problems, problem A03 Andrews' squeezer "
           "(https://www.iftomm-multibody.org/benchmark; RehabEngGroup/MBSbenchmarksInOpenSim "
           "A03_AndrewsMechanism.rst); reference angles at 0.03 s: Test Set for IVP Solvers (Mazzia, Magherini; "
           "Bari/CWI), problem 'andrews' (PSIDE, 1e-14); Hairer & Wanner, Solving ODEs II, sec. VII.7",
    slow=False,
)

# test set data (Hairer & Wanner): masses [kg], inertias about the centre of mass [kg m^2]
MASSES = (0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498)
INERTIAS = (2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5)
XA, YA = -0.06934, -0.00227
XB, YB = -0.03635, 0.03273
XC, YC = 0.014, 0.072
D_, DA, E_, EA = 28e-3, 115e-4, 2e-2, 1421e-5
RR, RA = 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB = 2308e-5, 916e-5
U_, UA, UB = 4e-2, 1228e-5, 449e-5
ZF, ZT = 2e-2, 4e-2
FA = 1421e-5
MOM = 0.033
C0, L0 = 4530.0, 0.07785
#: consistent initial angles (beta, Theta, gamma, Phi, delta, Omega, epsilon) [rad], at rest
Q0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
      0.222668390165885884674473185609, 0.487364979543842550225598953530,
      -0.222668390165885884674473185609, 1.23054744454982119249735015568)
#: the test set's reference solution at t = 0.03 s (PSIDE, rtol = atol = 1e-14)
TESTSET_Q_003 = (0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                 -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                 0.1048080741042263e+1)
NAMES = ("OF", "FE", "BDE", "EG", "AG", "HE", "AH")
ANGLE_NAMES = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")


def points(q):
    """Joint and force points (2-D) for the angles q: dict O, F, E, A, B, C, D, G, H."""
    import numpy as np

    be, th, ga, ph, de, om, ep = q
    c, s = np.cos, np.sin
    F = RR * np.array([c(be), s(be)])
    E = F - D_ * np.array([c(be + th), s(be + th)])
    B = np.array([XB, YB])
    D = B + np.array([SD * c(ga) + SC * s(ga), SD * s(ga) - SC * c(ga)])
    A = np.array([XA, YA])
    G = A + ZT * np.array([c(de), s(de)])
    H = A + U_ * np.array([s(ep), -c(ep)])
    return dict(O=np.zeros(2), F=F, E=E, A=A, B=B, C=np.array([XC, YC]), D=D, G=G, H=H)


def body_angles(q):
    """Absolute angles of the body x axes (OF, FE, BDE, EG, AG, HE, AH) [rad]."""
    be, th, ga, ph, de, om, ep = q
    return (be, be + th, ga, ph + de, de, om + ep, ep)


def closure_residual(q) -> float:
    """Largest violation [m] of the three ways of reaching E (test-set constraints g)."""
    import numpy as np

    be, th, ga, ph, de, om, ep = q
    P = points(q)
    E3 = P["B"] + SS * np.array([np.sin(ga), -np.cos(ga)])
    E4 = P["G"] + E_ * np.array([np.sin(ph + de), -np.cos(ph + de)])
    E6 = P["H"] + ZF * np.array([np.cos(om + ep), np.sin(om + ep)])
    return float(max(np.abs(P["E"] - E3).max(), np.abs(P["E"] - E4).max(), np.abs(P["E"] - E6).max()))


# ------------------------------------------------------- independent reference: the test set's equations
#: the six closure conditions g(q) = 0 (E reached from F, from B, from A via G and via H; x and y) as
#: sums of a * trig(c . q) terms: (a, trig, c) with trig "c" (cos) or "s" (sin) and c over the 7 angles
_B, _BT, _G, _PD, _D, _OE, _E = (1, 0, 0, 0, 0, 0, 0), (1, 1, 0, 0, 0, 0, 0), (0, 0, 1, 0, 0, 0, 0), \
    (0, 0, 0, 1, 1, 0, 0), (0, 0, 0, 0, 1, 0, 0), (0, 0, 0, 0, 0, 1, 1), (0, 0, 0, 0, 0, 0, 1)
_CLOSURE = (
    ((RR, "c", _B), (-D_, "c", _BT), (-SS, "s", _G)),
    ((RR, "s", _B), (-D_, "s", _BT), (SS, "c", _G)),
    ((RR, "c", _B), (-D_, "c", _BT), (-E_, "s", _PD), (-ZT, "c", _D)),
    ((RR, "s", _B), (-D_, "s", _BT), (E_, "c", _PD), (-ZT, "s", _D)),
    ((RR, "c", _B), (-D_, "c", _BT), (-ZF, "c", _OE), (-U_, "s", _E)),
    ((RR, "s", _B), (-D_, "s", _BT), (-ZF, "s", _OE), (U_, "c", _E)),
)
_CLOSURE_CONST = (XB, YB, XA, YA, XA, YA)


@functools.lru_cache(maxsize=1)
def _closure_table():
    """The terms of ``_CLOSURE`` as arrays: row selector S (6, n), amplitudes a (n,), cosine flags (n,), angle
    combinations C (n, 7)."""
    import numpy as np

    terms = [(i, a, trig == "c", c) for i, row in enumerate(_CLOSURE) for a, trig, c in row]
    S = np.zeros((6, len(terms)))
    S[[t[0] for t in terms], np.arange(len(terms))] = 1.0
    return (S, np.array([t[1] for t in terms]), np.array([t[2] for t in terms]),
            np.array([t[3] for t in terms], dtype=float))


def _closure_parts(q, qd):
    """g (6,), G = dg/dq (6, 7) and ``rhs`` (6,) with ``G q'' = rhs`` on the motion (g'' = 0): each term
    a T(c.q) has (a T(c.q))'' = a T'(c.q) c.q'' - a T(c.q) (c.q')^2, T = cos or sin, so
    ``rhs = sum a T(c.q) (c.q')^2``."""
    import numpy as np

    S, a, is_cos, C = _closure_table()
    th, w = C @ q, C @ qd
    cos, sin = np.cos(th), np.sin(th)
    aT = a * np.where(is_cos, cos, sin)
    adT = a * np.where(is_cos, -sin, cos)
    return S @ aT - np.asarray(_CLOSURE_CONST), S @ (adT[:, None] * C), S @ (aT * w * w)


def _mass_and_forces(q, qd):
    """Mass matrix M (7, 7) and applied plus velocity forces f (7,) of the test set (Hairer & Wanner)."""
    import numpy as np

    be, th, ga, ph, de, om, ep = q
    bep, thp, gap, php, dep, omp, epp = qd
    m1, m2, m3, m4, m5, m6, m7 = MASSES
    i1, i2, i3, i4, i5, i6, i7 = INERTIAS
    M = np.zeros((7, 7))
    M[0, 0] = m1 * RA ** 2 + m2 * (RR ** 2 - 2 * DA * RR * np.cos(th) + DA ** 2) + i1 + i2
    M[1, 0] = M[0, 1] = m2 * (DA ** 2 - DA * RR * np.cos(th)) + i2
    M[1, 1] = m2 * DA ** 2 + i2
    M[2, 2] = m3 * (SA ** 2 + SB ** 2) + i3
    M[3, 3] = m4 * (E_ - EA) ** 2 + i4
    M[4, 3] = M[3, 4] = m4 * ((E_ - EA) ** 2 + ZT * (E_ - EA) * np.sin(ph)) + i4
    M[4, 4] = m4 * (ZT ** 2 + 2 * ZT * (E_ - EA) * np.sin(ph) + (E_ - EA) ** 2) + m5 * (TA ** 2 + TB ** 2) + i4 + i5
    M[5, 5] = m6 * (ZF - FA) ** 2 + i6
    M[6, 5] = M[5, 6] = m6 * ((ZF - FA) ** 2 - U_ * (ZF - FA) * np.sin(om)) + i6
    M[6, 6] = m6 * ((ZF - FA) ** 2 - 2 * U_ * (ZF - FA) * np.sin(om) + U_ ** 2) + m7 * (UA ** 2 + UB ** 2) + i6 + i7
    D = points(q)["D"]
    lang = np.hypot(D[0] - XC, D[1] - YC)
    force = -C0 * (lang - L0) / lang
    fx, fy = force * (D[0] - XC), force * (D[1] - YC)
    f = np.array([
        MOM - m2 * DA * RR * thp * (thp + 2 * bep) * np.sin(th),
        m2 * DA * RR * bep ** 2 * np.sin(th),
        fx * (SC * np.cos(ga) - SD * np.sin(ga)) + fy * (SD * np.cos(ga) + SC * np.sin(ga)),
        m4 * ZT * (E_ - EA) * dep ** 2 * np.cos(ph),
        -m4 * ZT * (E_ - EA) * php * (php + 2 * dep) * np.cos(ph),
        -m6 * U_ * (ZF - FA) * epp ** 2 * np.cos(om),
        m6 * U_ * (ZF - FA) * omp * (omp + 2 * epp) * np.cos(om)])
    return M, f


def reference(t, rtol: float = 1e-13):
    """The test set's index-1 form integrated by SciPy DOP853: angles (len(t), 7) and the largest
    closure drift [m].  ``[M G^T; G 0] [q''; lambda] = [f; rhs]``, G of rank 6."""
    import numpy as np
    from scipy.integrate import solve_ivp

    K, b = np.zeros((13, 13)), np.empty(13)

    def rhs(_, y):
        q, qd = y[:7], y[7:]
        K[:7, :7], b[:7] = _mass_and_forces(q, qd)
        _, G, b[7:] = _closure_parts(q, qd)
        K[7:, :7], K[:7, 7:] = G, G.T
        return np.concatenate([qd, np.linalg.solve(K, b)[:7]])

    t = np.asarray(t, dtype=float)
    s = solve_ivp(rhs, (0.0, float(t[-1])), np.concatenate([Q0, np.zeros(7)]), method="DOP853", t_eval=t,
                  rtol=rtol, atol=rtol)
    drift = max(np.abs(_closure_parts(s.y[:7, k], s.y[7:, k])[0]).max() for k in range(t.size))
    return s.y[:7].T, float(drift)


def squeezer_model():
    """Bodies OF, FE, BDE, EG, AG, HE, AH; revolutes O, F, B, E3 (FE-BDE), A5 (ground-AG), G (AG-EG),
    E4 (FE-EG), A7 (ground-AH), H (AH-HE), E6 (FE-HE); spring DC; torque on OF."""
    import numpy as np

    import flexmb as fm

    P = points(Q0)
    ang = body_angles(Q0)
    # centre of mass in each body frame, from the body's first point (O, F, B, G, A, H, A)
    com_local = ((RA, 0.0), (-DA, 0.0), (SB, -SA), (0.0, -(E_ - EA)), (TA, TB), (ZF - FA, 0.0), (-UB, -UA))
    origin = (P["O"], P["F"], P["B"], P["G"], P["A"], P["H"], P["A"])
    bodies = []
    for k, name in enumerate(NAMES):
        R2 = np.array([[np.cos(ang[k]), -np.sin(ang[k])], [np.sin(ang[k]), np.cos(ang[k])]])
        com = origin[k] + R2 @ np.asarray(com_local[k])
        bodies.append(fm.RigidBody(name, mass=MASSES[k], inertia=np.full(3, INERTIAS[k]),
                                   position=(com[0], com[1], 0.0),
                                   orientation=fm.orientation(axis=(0, 0, 1), angle=float(ang[k]))))
    z = (0.0, 0.0, 1.0)

    def rev(name, a, b, p):
        return fm.Revolute(name, a, b, point=(P[p][0], P[p][1], 0.0), axis=z)

    joints = [rev("O", "ground", "OF", "O"), rev("F", "OF", "FE", "F"), rev("B", "ground", "BDE", "B"),
              rev("E3", "FE", "BDE", "E"), rev("A5", "ground", "AG", "A"), rev("G", "AG", "EG", "G"),
              rev("E4", "FE", "EG", "E"), rev("A7", "ground", "AH", "A"), rev("H", "AH", "HE", "H"),
              rev("E6", "FE", "HE", "E")]
    forces = [fm.SpringDamper("DC", "BDE", "ground", point_a=(P["D"][0], P["D"][1], 0.0), point_b=(XC, YC, 0.0),
                              stiffness=C0, free_length=L0, point_frame="inertial"),
              fm.PointTorque("OF", (0.0, 0.0, MOM))]
    return fm.Model(bodies, joints, forces)


def run_one(h: float, t_end: float, newton_tol: float = 1e-10):
    """Simulate; angles (nt, 7) in the test set's coordinates, energy balance dU (nt,), F (nt, 2)."""
    import time

    import numpy as np

    import flexmb as fm

    model = squeezer_model()
    t0 = time.process_time()
    opts = fm.SimulationOptions(newton=fm.NewtonOptions(tol=newton_tol))
    sol = fm.simulate(model, t_end, h, p=3, options=opts)
    cpu = time.process_time() - t0
    R = sol.body_rotation
    phi = np.unwrap(np.arctan2(R[:, :, 1, 0], R[:, :, 0, 0]), axis=0)
    phi += np.asarray(body_angles(Q0)) - phi[0]  # same branch as the test set's angles
    q = np.stack([phi[:, 0], phi[:, 1] - phi[:, 0], phi[:, 2], phi[:, 3] - phi[:, 4], phi[:, 4],
                  phi[:, 5] - phi[:, 6], phi[:, 6]], axis=1)
    # spring potential from the attachment point D of the triangle (body frame) at the nodes
    P0 = points(Q0)
    k3 = NAMES.index("BDE")
    dD = R[0, k3].T @ (np.array([P0["D"][0], P0["D"][1], 0.0]) - sol.body_position[0, k3])
    D = sol.body("BDE").point(dD).position[:, :2]
    V = 0.5 * C0 * (np.linalg.norm(D - np.array([XC, YC]), axis=1) - L0) ** 2
    T = sol.kinetic_energy
    dU = T + V - (T[0] + V[0]) - MOM * (q[:, 0] - q[0, 0])
    F = sol.body("OF").point((RR - RA, 0.0, 0.0)).position  # body x along OF, reference point at the centre
    return dict(sol=sol, cpu=cpu, q=q, dU=dU, F=F[:, :2], work=MOM * (q[:, 0] - q[0, 0]),
                dependent=len(sol.meta["redundant_constraints"]))


def run(ctx):
    import numpy as np

    h_fine, h_coarse = (1e-4, 2e-4) if ctx.fast else (5e-5, 1e-4)
    t_end = 0.03 if ctx.fast else 0.05
    fine, coarse = run_one(h_fine, t_end), run_one(h_coarse, t_end)
    q_ref, drift = reference(fine["sol"].t)
    # the coarse nodes are every other fine node (h_coarse = 2 h_fine, one t_end): one reference serves both
    assert np.allclose(coarse["sol"].t, fine["sol"].t[::2], rtol=0.0, atol=1e-12), "coarse nodes off the fine grid"
    q_ref_c = q_ref[::2]
    err_f = float(np.abs(fine["q"] - q_ref).max())
    err_c = float(np.abs(coarse["q"] - q_ref_c).max())
    order = float(np.log2(err_c / err_f))
    published = np.asarray(TESTSET_Q_003)
    k = int(np.argmin(np.abs(fine["sol"].t - 0.03)))
    assert abs(fine["sol"].t[k] - 0.03) < 1e-12, "a node must land on 0.03 s"
    q003, ref003 = fine["q"][k], q_ref[k]
    for h, r in ((h_fine, fine), (h_coarse, coarse)):
        ctx.logger.info("h = %g: cpu %.2f s, max |dU| %.3g J (motor work %.3g J)", h, r["cpu"], np.abs(r["dU"]).max(),
                        r["work"][-1])
    ctx.logger.info("angles at 0.03 s - test set: flexmb %s, scipy %s", np.array2string(q003 - published, precision=2),
                    np.array2string(ref003 - published, precision=2))
    ctx.logger.info("max angle error vs scipy: %.3g (h = %g), %.3g (h = %g)", err_f, h_fine, err_c, h_coarse)
    ang_tol, du_tol = (1e-8, 1e-8) if ctx.fast else (5e-10, 3e-10)
    out = [dict(name=f"{name}(0.03 s) [rad], h = {h_fine:g} s, vs test set", value=float(q003[i]),
                reference=float(published[i]), tolerance=5e-9, kind="abs") for i, name in enumerate(ANGLE_NAMES)]
    out += [
        dict(name="scipy reference: max |angle(0.03 s) - test set| [rad]",
             value=float(np.abs(ref003 - published).max()), reference=0.0, tolerance=5e-9, kind="max"),
        dict(name="scipy reference: closure drift [m]", value=drift, reference=0.0, tolerance=1e-12, kind="max"),
        dict(name=f"h = {h_fine:g} s: max |angles - scipy reference| over {t_end:g} s [rad]", value=err_f,
             reference=0.0, tolerance=ang_tol, kind="max"),
        dict(name=f"h = {h_coarse:g} s: max |angles - scipy reference| over {t_end:g} s [rad]", value=err_c,
             reference=0.0, tolerance=100 * ang_tol, kind="max"),
        dict(name="fitted order of the angle error (h vs 2 h), p = 3", value=order, reference=None, tolerance=5.0,
             kind="min"),
        dict(name=f"h = {h_fine:g} s: max |dU| = |T + V - E0 - tau (beta - beta0)| [J] over {t_end:g} s",
             value=float(np.abs(fine["dU"]).max()), reference=0.0, tolerance=du_tol, kind="max"),
        dict(name="dependent constraint equations detected (3 planar loops x 3)", value=fine["dependent"],
             reference=9, tolerance=0, kind="abs"),
    ]
    if ctx.out_dir is not None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 6), layout="constrained")
        ax1, ax2 = fig.subplots(2, 1, sharex=True)
        t = fine["sol"].t
        ax1.plot(t, fine["q"][:, 0], label="beta (flexmb)")
        ax1.plot(t, q_ref[:, 0], "k:", lw=1, label="beta (scipy reference)")
        ax1.plot([0.03], [published[0]], "k+", ms=12, label="test set, 0.03 s")
        ax1.set_ylabel("beta [rad]")
        ax1.legend()
        ax2.semilogy(t[1:], np.abs(fine["dU"][1:]) + 1e-18, label="|dU| [J]")
        ax2.semilogy(t[1:], np.abs(fine["q"][1:] - q_ref[1:]).max(axis=1) + 1e-18, label="max angle error [rad]")
        ax2.set_xlabel("t [s]")
        ax2.legend()
        fig.savefig(ctx.out_dir / "i3_beta_energy.png", dpi=120)
    return out
