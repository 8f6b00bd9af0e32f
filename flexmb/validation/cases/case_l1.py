"""L1: small oscillations of a double pendulum through equilibrium + linearize + eigen.

Model: two rigid links hanging from the ground, revolute joints about z, gravity -y; link k has
mass m_k, its centre of mass at the end of a rod of length l_k (pivot to centre of mass) and a
central inertia J about z.  In the absolute angles the linearized equations are

    [[(m1 + m2) l1^2 + J, m2 l1 l2], [m2 l1 l2, m2 l2^2 + J]] th'' + diag((m1 + m2) g l1, m2 g l2) th = 0

(closed form: the generalized eigenvalues of that pair).  The model starts away from the
equilibrium (links at 0.4 and -0.3 rad) so that :func:`flexmb.equilibrium` has to find it; the two
frequencies from :func:`flexmb.linearize` and :func:`flexmb.eigen` are compared with the closed form
(1e-8), and with the frequency measured from a ``simulate`` run started from the equilibrium with a
small velocity along each eigenvector (p = 3, 64 steps per period, 4 periods, period from the zero
crossings of the modal coordinate, 1e-4: the small-amplitude correction is ~1e-8 and the scheme's
period error ~1e-9).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import scipy.linalg as sla

import flexmb as fm

CASE = dict(
    id="L1",
    title="Double pendulum: frequencies from equilibrium + linearize + eigen vs closed form and simulate",
    source="Closed form of the linearized double pendulum (e.g. L. Meirovitch, Fundamentals of Vibrations, "
           "McGraw-Hill 2001, sec. 7.2); frequencies measured from simulate runs of the same model",
    slow=False,
)

G = 9.81
M1, M2, L1, L2, J = 1.0, 0.5, 1.0, 0.7, 1e-2


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def model(th1: float = 0.4, th2: float = -0.3):
    """The double pendulum with its links at the absolute angles ``th1``, ``th2`` from the vertical."""
    R1, R2 = rot_z(th1), rot_z(th2)
    p1 = np.zeros(3)
    c1 = p1 + R1 @ (0, -L1, 0)
    c2 = c1 + R2 @ (0, -L2, 0)
    b1 = fm.RigidBody("b1", mass=M1, inertia=np.full(3, J), position=c1, orientation=R1)
    b2 = fm.RigidBody("b2", mass=M2, inertia=np.full(3, J), position=c2, orientation=R2)
    j1 = fm.Revolute("p1", "ground", "b1", point=p1, axis=(0, 0, 1))
    j2 = fm.Revolute("p2", "b1", "b2", point=c1, axis=(0, 0, 1))
    return fm.Model([b1, b2], [j1, j2], [fm.Gravity((0, -G, 0))])


def exact_frequencies() -> np.ndarray:
    Mm = np.array([[(M1 + M2) * L1**2 + J, M2 * L1 * L2], [M2 * L1 * L2, M2 * L2**2 + J]])
    K = np.diag([(M1 + M2) * G * L1, M2 * G * L2])
    return np.sqrt(sla.eigh(K, Mm, eigvals_only=True)) / (2 * math.pi)


def simulated_frequency(eq, res, k: int, coordinate: str, amplitude: float = 1e-4, steps: int = 64,
                        periods: int = 4) -> float:
    """Frequency [Hz] of a ``simulate`` run from the equilibrium ``eq`` with the initial velocities of
    eigenvector ``k`` of ``res`` (scaled to ``amplitude`` on its largest component): the mean period
    between upward zero crossings of ``coordinate`` (a body's ``"theta_z"``, measured as the angle of
    its rotation about z) minus its equilibrium value."""
    f = float(res.frequency[k])
    T = 1.0 / f
    v = np.real(res.modes[:, k]) * amplitude * 2 * math.pi * f  # z' = i omega z: velocities along the mode
    bodies = []
    for b in eq.model.bodies:
        w = np.array([v[res.coordinates.index(f"{b.name}:{c}")] for c in ("x", "y", "z", "theta_x", "theta_y", "theta_z")])
        R = np.asarray(b.orientation)
        vel = w[:3] - np.cross(w[3:], R @ np.asarray(b.com, float))  # velocity of the frame origin
        bodies.append(replace(b, velocity=vel, angular_velocity=w[3:]))
    sol = fm.simulate(replace(eq.model, bodies=bodies), periods * T, T / steps, p=3)
    name = coordinate.split(":")[0]
    R = sol.body(name).rotation
    y = np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0]))
    y = y - y[0]
    t = sol.t
    up = np.nonzero((y[:-1] < 0) & (y[1:] >= 0))[0]
    tc = t[up] - y[up] * (t[up + 1] - t[up]) / (y[up + 1] - y[up])
    return float(1.0 / np.diff(tc).mean()) if tc.size >= 2 else math.nan


def run(ctx):
    eq = fm.equilibrium(model())
    res = fm.eigen(fm.linearize(eq))
    exact = exact_frequencies()
    metrics = []
    for k in range(2):
        metrics.append(dict(name=f"f{k + 1} [Hz] (eigen)", value=float(res.frequency[k]), reference=float(exact[k]),
                            tolerance=1e-8, kind="rel"))
    th = [math.atan2(*(eq.body_position(n)[[0, 1]] * (1, -1))) for n in ("b1",)]
    metrics.append(dict(name="equilibrium: link 1 angle from the vertical [rad]", value=float(th[0]), reference=0.0,
                        tolerance=1e-10, kind="abs"))
    for k in range(2):
        f = simulated_frequency(eq, res, k, "b1:theta_z" if k == 0 else "b2:theta_z", steps=48 if ctx.fast else 64)
        ctx.logger.info("L1 mode %d: eigen %.9f Hz, simulate %.9f Hz, exact %.9f Hz", k + 1, res.frequency[k], f, exact[k])
        metrics.append(dict(name=f"f{k + 1} [Hz] (simulate run)", value=f, reference=float(exact[k]), tolerance=1e-4,
                            kind="rel"))
    return metrics
