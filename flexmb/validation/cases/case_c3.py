"""C3: a closed chain struck: the internal hinge impulses of a four-bar.

A planar four-bar (ground hinges O and D, crank OA, coupler AB, rocker DB: uniform rods of mass
``m_k``, central inertia ``m_k l_k^2 / 12``), at rest, struck by an impulse ``F`` at a point of the
coupler.  The closed form is the planar impulse-momentum balance written by hand (Wittenburg, chapter
6): for each rod ``m dv = sum of hinge impulses (+ F)``, ``J domega = sum r x impulse``, and for each
hinge the relative velocity of the two rods' points (or of the rod's point and the ground) zero
after the jump: 17 linear equations for the 9 velocity jumps and the 8 hinge impulses, solved with
numpy.  flexmb solves the same impact in its redundant coordinates (three rigid bodies, four
revolute joints, three of their out-of-plane equations dependent: least-norm impulses) with the
hinge impulses as the node projection's multipliers.  Checked: the in-plane hinge impulses and the
velocity jumps against the closed form, the joints' velocity constraints after the jump to
round-off, and the energy balance ``T+ = W_F`` (from rest: the impulse's work ``F . (v- + v+) / 2``).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C3",
    title="Four-bar struck on its coupler: internal hinge impulses and velocity jumps vs the planar closed form",
    source="Planar impulse-momentum balance of the four-bar written by hand (J. Wittenburg, Dynamics of Systems "
           "of Rigid Bodies, Teubner 1977, chapter 6: interaction and internal hinge impulses)",
    slow=False,
)

D_, LA, LB, LC, PHI = 1.0, 0.4, 1.0, 0.7, np.radians(60.0)
MASS = {"crank": 1.0, "coupler": 2.5, "rocker": 1.8}
F = np.array([0.6, -2.0, 0.0])
S_F = 0.3  # the struck point: this fraction along the coupler from A


def geometry():
    O, D = np.zeros(3), np.array([D_, 0, 0])
    A = LA * np.array([np.cos(PHI), np.sin(PHI), 0])
    d = D - A
    dist = np.linalg.norm(d)
    x = (LB ** 2 - LC ** 2 + dist ** 2) / (2 * dist)
    h = np.sqrt(LB ** 2 - x ** 2)
    perp = np.array([-d[1], d[0], 0]) / dist
    B = A + x * d / dist + h * perp
    return {"O": O, "A": A, "B": B, "D": D}, {"crank": (O, A), "coupler": (A, B), "rocker": (D, B)}


HINGES = (("O", "ground", "crank"), ("A", "crank", "coupler"), ("B", "coupler", "rocker"), ("D", "ground", "rocker"))


def model() -> fm.Model:
    pts, rods = geometry()
    bodies = []
    for name, (p, q) in rods.items():
        J = MASS[name] * np.linalg.norm(q - p) ** 2 / 12.0
        bodies.append(fm.RigidBody(name, mass=MASS[name], inertia=(J, J, J), position=0.5 * (p + q)))
    joints = [fm.Revolute(n, a, b, point=pts[n], axis=(0, 0, 1)) for n, a, b in HINGES]
    A, B = rods["coupler"]
    hit = A + S_F * (B - A) - 0.5 * (A + B)
    return fm.Model(bodies, joints, impulses=[fm.Impulse("coupler", F, point=hit)])


def closed_form():
    """Velocity jumps ``(3 rods x (vx, vy, omega))`` and hinge impulses on the B side ``(4 x 2)``."""
    pts, rods = geometry()
    names = list(rods)
    centre = {n: 0.5 * (p + q) for n, (p, q) in rods.items()}
    n_u = 9 + 8
    A_ = np.zeros((n_u, n_u))
    b = np.zeros(n_u)
    col = {n: 3 * k for k, n in enumerate(names)}

    def add_impulse(rod, h, point, sign):
        """Hinge impulse h (columns 9 + 2h) acting with ``sign`` on ``rod`` at ``point``."""
        r = point - centre[rod]
        c = 9 + 2 * h
        i = col[rod]
        A_[i, c] -= sign
        A_[i + 1, c + 1] -= sign
        A_[i + 2, c] -= sign * -r[1]
        A_[i + 2, c + 1] -= sign * r[0]

    for n in names:  # m dv - impulses = F
        i = col[n]
        L = np.linalg.norm(rods[n][1] - rods[n][0])
        A_[i, i], A_[i + 1, i + 1], A_[i + 2, i + 2] = MASS[n], MASS[n], MASS[n] * L ** 2 / 12.0
    for h, (name, a, bb) in enumerate(HINGES):
        add_impulse(bb, h, pts[name], +1.0)
        if a != "ground":
            add_impulse(a, h, pts[name], -1.0)
    A, B = rods["coupler"]
    hit = A + S_F * (B - A)
    r = hit - centre["coupler"]
    b[col["coupler"]:col["coupler"] + 3] = [F[0], F[1], r[0] * F[1] - r[1] * F[0]]
    for h, (name, a, bb) in enumerate(HINGES):  # point velocities equal: v + omega x r
        row = 9 + 2 * h
        for rod, sign in ((bb, 1.0), (a, -1.0)):
            if rod == "ground":
                continue
            r = pts[name] - centre[rod]
            i = col[rod]
            A_[row, i] += sign
            A_[row, i + 2] += sign * -r[1]
            A_[row + 1, i + 1] += sign
            A_[row + 1, i + 2] += sign * r[0]
    x = np.linalg.solve(A_, b)
    return x[:9].reshape(3, 3), x[9:].reshape(4, 2)


def run(ctx):
    m = model()
    r = fm.impact(m)
    jumps, imp = closed_form()
    metrics = []
    scale_p = np.abs(imp).max()
    for h, (name, a, b) in enumerate(HINGES):
        G = m.attachment_frames(m.joints[h])[0].orientation  # frame A (identity body orientations)
        f = G @ r.joint_impulse[name][0]
        err = np.abs(f[:2] - imp[h]).max() / scale_p
        metrics.append(dict(name=f"hinge {name}: in-plane impulse, max error / max impulse", value=err, reference=0.0,
                            tolerance=1e-12, kind="max"))
        ctx.logger.info("C3 hinge %s: impulse %s N s (closed form %s)", name, f[:2].tolist(), imp[h].tolist())
    for k, n in enumerate(("crank", "coupler", "rocker")):
        metrics.append(dict(name=f"{n}: angular velocity after [rad/s]", value=r.angular_velocity_after[n][2],
                            reference=jumps[k, 2], tolerance=1e-11))
        metrics.append(dict(name=f"{n}: centre velocity after, max error [m/s]",
                            value=np.abs(r.velocity_after[n][:2] - jumps[k, :2]).max(), reference=0.0,
                            tolerance=1e-12, kind="max"))
    metrics.append(dict(name="joints' velocity constraints after the jump [1/s]", value=r.outcome.constraint_residual,
                        reference=0.0, tolerance=1e-12, kind="max"))
    metrics.append(dict(name="|T+ - W_F| / T+ (from rest)", value=abs(r.kinetic_energy_after - r.work)
                        / r.kinetic_energy_after, reference=0.0, tolerance=1e-12, kind="max"))
    return metrics
