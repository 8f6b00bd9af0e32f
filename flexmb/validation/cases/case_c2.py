"""C2: the impulse-response matrix of a free planar chain (Maxwell-Betti), and a ball bouncing off it.

Three uniform rods (length L, mass m, J = m L^2 / 12) joined by revolute joints about z, straight
along x, free in space and at rest.  In the planar coordinates ``q = (x0, y0, theta_1..3)`` (the first
rod's left end and the rods' angles) the velocity of a point at ``s`` along rod ``k`` is
``y' = y0' + sum_{i<k} L theta_i' + s theta_k'``, so the reduced mass matrix ``M_q`` is a sum over the
rods and the impulse-response matrix of transverse impulses at points ``i, j`` is

    K_ij = a_i^T M_q^-1 a_j     (velocity at i per unit impulse at j; Wittenburg, chapter 6)

with ``a_i`` the rows of the points' transverse velocities.  Checked: every column of K from one
``fm.impact`` solve against the closed form, the symmetry of K (Maxwell-Betti) to round-off, the
apparent mass ``1 / K_ii`` of each point not larger than the chain's mass, the hinge constraints
after the jump, and a ball (mass m_b, e = 1) striking the chain's tip: its rebound speed
``v (m_b - m_a) / (m_b + m_a)`` with the apparent mass ``m_a = 1 / K_tip`` and the energy conserved.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C2",
    title="Free planar chain: impulse-response matrix (Maxwell-Betti), apparent mass, elastic ball impact",
    source="Closed form in planar reduced coordinates (J. Wittenburg, Dynamics of Systems of Rigid Bodies, "
           "Teubner 1977, chapter 6: the symmetric impulse-response matrix)",
    slow=False,
)

L, M, N = 0.8, 1.5, 3
#: struck points: (rod index, distance from its left end)
POINTS = ((0, 0.2 * L), (1, 0.7 * L), (2, L))
MB, VB, RB = 0.7, 2.0, 0.05


def chain(impulses=(), extra=(), contacts=()) -> fm.Model:
    J = M * L ** 2 / 12.0
    rods = [fm.RigidBody(f"rod{k}", mass=M, inertia=(1e-4, J, J), position=((k + 0.5) * L, 0, 0)) for k in range(N)]
    hinges = [fm.Revolute(f"hinge{k}", f"rod{k}", f"rod{k + 1}", point=((k + 1) * L, 0, 0), axis=(0, 0, 1))
              for k in range(N - 1)]
    return fm.Model(rods + list(extra), hinges, impulses=list(impulses), contacts=list(contacts))


def rows():
    """Transverse velocity rows ``a_i`` of the points in ``q = (x0, y0, theta_1..N)`` and ``M_q``."""
    def a(k, s):
        r = np.zeros(N + 2)
        r[1] = 1.0
        r[2:2 + k] = L
        r[2 + k] = s
        return r
    Mq = np.zeros((N + 2, N + 2))
    for k in range(N):
        ay, ax = a(k, 0.5 * L), np.eye(N + 2)[0]
        Mq += M * (np.outer(ay, ay) + np.outer(ax, ax))
        Mq[2 + k, 2 + k] += M * L ** 2 / 12.0
    return np.array([a(k, s) for k, s in POINTS]), Mq


def point_offset(k, s):
    return (s - 0.5 * L, 0.0, 0.0)


def run(ctx):
    A, Mq = rows()
    K_exact = A @ np.linalg.solve(Mq, A.T)
    K = np.zeros((len(POINTS), len(POINTS)))
    worst_constraint = 0.0
    for j, (k, s) in enumerate(POINTS):
        r = fm.impact(chain([fm.Impulse(f"rod{k}", (0, 1.0, 0), point=point_offset(k, s))]))
        K[:, j] = [r.point_velocity(f"rod{i}", point_offset(i, si))[1] for i, si in POINTS]
        worst_constraint = max(worst_constraint, r.outcome.constraint_residual)
    metrics = [dict(name=f"K[{i},{j}] [m/(N s)]", value=K[i, j], reference=K_exact[i, j], tolerance=1e-11)
               for i in range(len(POINTS)) for j in range(len(POINTS)) if j >= i]
    metrics.append(dict(name="max |K - K^T| / max |K| (Maxwell-Betti)", value=np.abs(K - K.T).max() / np.abs(K).max(),
                        reference=0.0, tolerance=1e-13, kind="max"))
    metrics.append(dict(name="largest apparent mass 1/K_ii over the chain's mass", value=float((1.0 / np.diag(K)).max()
                        / (N * M)), reference=1.0, tolerance=1.0, kind="max"))
    metrics.append(dict(name="hinge velocity constraints after the jumps [1/s]", value=worst_constraint, reference=0.0,
                        tolerance=1e-12, kind="max"))
    # a ball striking the tip: plane on the last rod (normal -y: the ball comes from below), e = 1
    ball = fm.RigidBody("ball", mass=MB, inertia=np.full(3, 0.4 * MB * RB ** 2), position=(N * L, -RB, 0),
                        velocity=(0, VB, 0))
    tip = fm.Contact("tip", f"rod{N - 1}", "ball", kind="sphere-plane", point_a=(0.5 * L, 0, 0), normal=(0, -1, 0),
                     radius=RB, restitution=1.0)
    r = fm.impact(chain(extra=[ball], contacts=[tip]))
    ma = 1.0 / K_exact[-1, -1]
    v_exact = VB * (MB - ma) / (MB + ma)
    metrics += [
        dict(name="ball on the tip (e = 1): ball velocity after [m/s]", value=r.velocity_after["ball"][1],
             reference=v_exact, tolerance=1e-11),
        dict(name="ball on the tip (e = 1): |T+ - T-| / T-", value=abs(r.kinetic_energy_after - r.kinetic_energy_before)
             / r.kinetic_energy_before, reference=0.0, tolerance=1e-13, kind="max"),
        dict(name="ball on the tip: |momentum after - before| / |before|",
             value=abs(sum(M * r.velocity_after[f"rod{k}"][1] for k in range(N)) + MB * r.velocity_after["ball"][1]
                       - MB * VB) / (MB * VB), reference=0.0, tolerance=1e-13, kind="max"),
    ]
    ctx.logger.info("C2: K = %s (closed form %s)", K.tolist(), K_exact.tolist())
    return metrics
