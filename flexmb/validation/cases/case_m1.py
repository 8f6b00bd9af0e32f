"""M1: the p = 1 time element is the implicit midpoint rule (Duffing oscillator, unconstrained).

Reference
---------
Borri, Franchi and Mantegazza's weak form with piecewise-constant unknowns and piecewise-linear
test functions (N_u = 1, N_v = 2) reduces on an ODE y' = f(y) to the implicit midpoint rule
``y_{n+1} = y_n + h f((y_n + y_{n+1}) / 2)`` (derivation in seed002-notes.md section 1.9,
FORMULATION.md section 2).  The reference here is an independent implementation of that rule:
a scalar Newton iteration with the exact Jacobian, iterated to round-off, written below without
any flexmb code.

Model
-----
A free rigid body of mass m = 2 kg moving along x under the nonlinear restoring force
``F = -k x - k3 x^3`` (k = 5 N/m, k3 = 3 N/m^3), given to flexmb as a ``PointForce`` callback
of the body state.  x(0) = 0.8 m, v(0) = 0.3 m/s; h = 0.05 s, 200 steps (10 s, about 6 periods
of the hardening oscillator; fast mode: 50 steps).  The body has no joint, so its node velocity is exactly p / m.

Metrics
-------
Max difference of the position and of the velocity over all nodes, relative to their maximum
magnitude.  Tolerance 1e-12: both solvers stop at round-off (Newton increments below ~1e-15
relative), and 200 steps of a neutrally stable map can accumulate a few hundred ulps; the
p = 1 element agreeing only to discretization accuracy (O(h^2) ~ 1e-3) would fail by nine
orders of magnitude.
"""
from __future__ import annotations

CASE = dict(
    id="M1",
    title="p = 1 time element = implicit midpoint rule (Duffing oscillator)",
    source="Borri, Franchi, Mantegazza, 'More than redundant coordinates formulation in rigid multibody "
           "dynamics', weak form with N_u = 1, N_v = 2 (seed002-notes.md 1.9); reference: independent "
           "implicit-midpoint implementation (this file)",
    slow=False,
)

M, K, K3 = 2.0, 5.0, 3.0
X0, V0 = 0.8, 0.3


def midpoint_reference(h: float, n: int):
    """Implicit midpoint rule on x' = v, v' = -(k x + k3 x^3)/m, Newton to round-off.

    Returns
    -------
    x, v : ndarray, shape (n + 1,)
    """
    import numpy as np

    x, v = X0, V0
    xs, vs = [x], [v]
    for _ in range(n):
        # unknown: midpoint (xm, vm); x1 = 2 xm - x, v1 = 2 vm - v
        xm, vm = x + 0.5 * h * v, v
        for _ in range(50):
            r1 = xm - x - 0.5 * h * vm
            r2 = vm - v + 0.5 * h * (K * xm + K3 * xm ** 3) / M
            J = np.array([[1.0, -0.5 * h], [0.5 * h * (K + 3 * K3 * xm ** 2) / M, 1.0]])
            dx, dv = np.linalg.solve(J, [-r1, -r2])
            xm, vm = xm + dx, vm + dv
            if abs(dx) <= 1e-17 * max(1.0, abs(xm)) and abs(dv) <= 1e-17 * max(1.0, abs(vm)):
                break
        x, v = 2 * xm - x, 2 * vm - v
        xs.append(x)
        vs.append(v)
    return np.array(xs), np.array(vs)


def duffing_model():
    import flexmb as fm

    body = fm.RigidBody("m", mass=M, inertia=(1.0, 1.0, 1.0), position=(X0, 0.0, 0.0), velocity=(V0, 0.0, 0.0))
    spring = fm.PointForce("m", lambda t, s: (-K * s.position[0] - K3 * s.position[0] ** 3, 0.0, 0.0))
    return fm.Model([body], [], [spring])


def run(ctx):
    import numpy as np

    import flexmb as fm

    h, n = 0.05, (50 if ctx.fast else 200)
    sol = fm.simulate(duffing_model(), n * h, h, p=1)
    xr, vr = midpoint_reference(h, n)
    x, v = sol.body_position[:, 0, 0], sol.body_velocity[:, 0, 0]
    ex = float(np.abs(x - xr).max() / np.abs(xr).max())
    ev = float(np.abs(v - vr).max() / np.abs(vr).max())
    # sanity: the run is a genuine nonlinear oscillation (amplitude-dependent frequency matters)
    off_plane = float(np.abs(sol.body_position[:, 0, 1:]).max())
    if ctx.out_dir is not None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 4), layout="constrained")
        ax = fig.subplots()
        ax.semilogy(sol.t, np.abs(x - xr) + 1e-18, label="|x - x_midpoint|")
        ax.semilogy(sol.t, np.abs(v - vr) + 1e-18, label="|v - v_midpoint|")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("difference")
        ax.legend()
        fig.savefig(ctx.out_dir / "m1_difference.png", dpi=120)
    return [
        dict(name="max |x - x_midpoint| / max |x|", value=ex, reference=0.0, tolerance=1e-12, kind="max"),
        dict(name="max |v - v_midpoint| / max |v|", value=ev, reference=0.0, tolerance=1e-12, kind="max"),
        dict(name="motion stays on the x axis [m]", value=off_plane, reference=0.0, tolerance=1e-14, kind="max"),
    ]
