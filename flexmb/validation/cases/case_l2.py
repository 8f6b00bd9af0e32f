"""L2: a compound pendulum in a closed four-bar, about its equilibrium.

A parallelogram four-bar hangs from two ground pivots a distance d apart: two equal cranks (rods of
length l, mass m_c, centre of mass at l/2, central inertia J_c about z) and a coupler (mass m_p)
joining their tips, four revolute joints about z (in 3-D: three redundant equations, resolved by
:func:`flexmb.equilibrium`'s least-norm steps and by the null space of the constraint Jacobian in
:func:`flexmb.linearize`), gravity -y, a torsional spring k on the first pivot whose neutral angle is
the one the model is built at, theta_0.  With theta the cranks' angle from the vertical the coupler
translates, and

    equilibrium:  k (theta - theta_0) + S sin theta = 0,    S = g l (m_c + m_p)
    frequency:    omega^2 = (k + S cos theta) / (2 (J_c + m_c l^2 / 4) + m_p l^2)

Checked: the equilibrium angle (1e-10 rad), the pivot spring's moment as the reaction, the frequency
from linearize + eigen against the closed form (1e-8) and against a ``simulate`` run started from the
equilibrium with a small velocity along the mode (p = 3, 64 steps per period, 1e-4).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import flexmb as fm
from flexmb.validation.cases.case_l1 import rot_z, simulated_frequency

CASE = dict(
    id="L2",
    title="Compound pendulum in a closed four-bar: equilibrium and frequency vs closed form and simulate",
    source="Closed form of the parallelogram four-bar (coupler in circular translation); frequency measured "
           "from a simulate run of the same model",
    slow=False,
)

G = 9.81
D, L, MC, JC, MP, K, TH0 = 0.8, 0.5, 0.6, 0.6 * 0.5**2 / 12, 1.3, 4.0, 0.5


def model(th0: float = TH0):
    R = rot_z(th0)
    tip = R @ (0, -L, 0)
    pivots = [np.zeros(3), np.array([D, 0.0, 0.0])]
    cranks = [fm.RigidBody(f"c{k + 1}", mass=MC, inertia=np.full(3, JC), position=p + R @ (0, -L / 2, 0),
                           orientation=R) for k, p in enumerate(pivots)]
    coupler = fm.RigidBody("coupler", mass=MP, inertia=(0.01, 0.05, 0.05), position=(D / 2, 0, 0) + tip)
    joints = [fm.Revolute("p1", "ground", "c1", point=pivots[0], axis=(0, 0, 1), stiffness=K),
              fm.Revolute("p2", "ground", "c2", point=pivots[1], axis=(0, 0, 1)),
              fm.Revolute("t1", "c1", "coupler", point=pivots[0] + tip, axis=(0, 0, 1)),
              fm.Revolute("t2", "c2", "coupler", point=pivots[1] + tip, axis=(0, 0, 1))]
    return fm.Model(cranks + [coupler], joints, [fm.Gravity((0, -G, 0))])


def exact():
    """Equilibrium angle [rad] and frequency [Hz]."""
    S = G * L * (MC + MP)
    th = brentq(lambda t: K * (t - TH0) + S * math.sin(t), -1.0, TH0)
    w2 = (K + S * math.cos(th)) / (2 * (JC + MC * L**2 / 4) + MP * L**2)
    return th, math.sqrt(w2) / (2 * math.pi)


def run(ctx):
    eq = fm.equilibrium(model())
    lin = fm.linearize(eq)
    res = fm.eigen(lin)
    th_ref, f_ref = exact()
    R = np.asarray(eq.model.bodies[0].orientation)
    th = math.atan2(R[1, 0], R[0, 0])
    ctx.logger.info("L2: %d independent coordinate(s); Newton matrix singular (redundant loop): %s", lin.ndof, eq.singular)
    f_sim = simulated_frequency(eq, res, 0, "c1:theta_z", steps=48 if ctx.fast else 64)
    ctx.logger.info("L2: eigen %.9f Hz, simulate %.9f Hz, exact %.9f Hz", res.frequency[0], f_sim, f_ref)
    return [
        dict(name="equilibrium crank angle [rad]", value=th, reference=th_ref, tolerance=1e-10, kind="abs"),
        dict(name="pivot spring moment = reaction [N m]", value=float(eq.joint_moment("p1")[2]),
             reference=-K * (th_ref - TH0), tolerance=1e-8, kind="rel"),
        dict(name="independent coordinates", value=float(lin.ndof), reference=1.0, tolerance=0.0, kind="abs"),
        dict(name="f [Hz] (eigen)", value=float(res.frequency[0]), reference=f_ref, tolerance=1e-8, kind="rel"),
        dict(name="f [Hz] (simulate run)", value=f_sim, reference=f_ref, tolerance=1e-4, kind="rel"),
    ]
