"""The compiled Newton loop of the fused evaluator (flexmb/dynamics/solve/fused_newton.py): taken for
small rigid-only models with the refactorizing backend, its results physical (IFToMM's pendulum, chains
whose joints hold), whatever is not a plain convergence handed to the general loop; and the compiled node
glue (rotation predictor, largest turn, element record) against its NumPy formulation."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.solve.newton import NewtonOptions
from flexmb.dynamics.node.reactions import element_record, legendre_at_gauss
from flexmb.dynamics.step.outcome import ElementPiece
from flexmb.dynamics.march.rotation_predictor import _rotation_matrices, largest_turn, predict_rotations
from flexmb.dynamics.time_elements import time_element
from test_fused import MODELS


def _iftomm_pendulum():
    """IFToMM A01 as benchmarks/compare_exudyn.py builds it: 1 kg, 1 m, a 1e-9 kg m^2 bob."""
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-9), position=(-1.0, 0, 0))
    return fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))],
                    [fm.Gravity((0, -9.81, 0))])


def _chain(n):
    """benchmarks/compare_exudyn.py's chain: bars of 0.3 m, 0.3 kg on spherical joints."""
    L, m = 0.3, 0.3
    inertia = (1e-6 * m * L * L, m * L * L / 12, m * L * L / 12)
    bodies = [fm.RigidBody(f"bar{k}", mass=m, inertia=inertia, position=((k - 0.5) * L, 0, 0)) for k in range(1, n + 1)]
    joints = [fm.Spherical(f"J{k}", "ground" if k == 1 else f"bar{k - 1}", f"bar{k}", point=((k - 1) * L, 0, 0))
              for k in range(1, n + 1)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def _run(model, t_end, h, p, options=None):
    """The run and how often the compiled loop answered (``"compiled"``) and the general loop ran
    (``"general"``: the first element, which builds the pattern, and every element the compiled loop
    declined or does not apply to), as the element system counts them."""
    from flexmb.dynamics.simulate import Run

    run = Run.start(model, t_end, h, p, 0.0, options or fm.SimulationOptions())
    return run.go(show_progress=False), dict(run.system.newton_calls)


def _joints_hold(sol, names, tol=1e-9):
    for name in names:
        assert np.abs(sol.joint(name).rel_position).max() <= tol, name


def test_pendulum_takes_the_compiled_loop():
    """IFToMM A01 over 10 s (p = 2, h = 1/32: 96 unknowns, the performance target's run): every element goes
    through the compiled loop, the first from rest too (its increments stall once above round-off: the
    loop iterates on, as the general one does); the elements whose predictor's matrix fails the kept-pivot
    test (every swing) take the pivots of an earlier swing (Refactor.alternatives) or fresh ones, and the
    compiled loop again: none goes back to the general loop.  The bob stays on its circle and lands on
    IFToMM's position."""
    from flexmb.dynamics.simulate import Run

    run = Run.start(_iftomm_pendulum(), 10.0, 1 / 32, 2, 0.0, fm.SimulationOptions())
    sol, seen = run.go(show_progress=False), run.system.newton_calls
    ne = len(sol.stats["iterations"])
    assert ne == 320 and seen["general"] == 0 and seen["compiled"] == ne
    backend = getattr(run.solver, "inner", run.solver)
    assert backend.n_pivot_reuses >= 2 and backend.n_pivot_changes <= 2  # 4 failing pivots: 1 fresh, 3 reused
    x = sol.body("bob").position
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-9)
    assert np.abs(x[-1, :2] - (-0.275087, -0.961419)).max() < 3e-5  # IFToMM A01 reference, 1.55e-5 m measured


@pytest.mark.parametrize("n, p, h", [(10, 1, 1e-3), (3, 3, 5e-3), (5, 2, 5e-3)])
def test_chains_take_the_compiled_loop(n, p, h):
    sol, seen = _run(_chain(n), 40 * h, h, p)
    assert seen["compiled"] >= 30
    _joints_hold(sol, [f"J{k}" for k in range(1, n + 1)])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_take_the_compiled_loop(name):
    """Every joint type, drives, springs and dampers, force elements, the ground on either side."""
    sol, seen = _run(MODELS[name](), 0.2, 0.01, 2)
    assert seen["compiled"] >= 15
    assert np.all(np.isfinite(sol.body_position))


def test_other_outcomes_go_to_the_general_loop():
    """A status other than plain convergence returns None and the general loop takes the element from
    the same predictor.  With tol = 1e-15 (below the round-off floor of a few elements) the increments
    stall: the compiled loop declines (status STALLED) and the general loop accepts those elements on the
    backward error (``meta["singular_elements"]``, its rank-deficient branch).  Full Newton (the stall
    test applies to fresh increments)."""
    opts = fm.SimulationOptions(newton=NewtonOptions(tol=1e-15, reuse="none"))
    sol, seen = _run(_chain(3), 0.3, 0.01, 2, options=opts)
    assert seen["general"] >= 2 and seen["compiled"] >= 20  # the first element and at least one declined
    assert sol.meta["singular_elements"] >= 1
    _joints_hold(sol, ["J1", "J2", "J3"])


def test_no_compiled_loop_where_it_does_not_apply():
    """A factorization carried over between elements (reuse="steps"), the dense LU (<= 64 unknowns) and
    other backends keep the general loop."""
    model = _chain(3)
    for kw in (dict(options=fm.SimulationOptions(newton=NewtonOptions(reuse="steps"))),
               dict(options=fm.SimulationOptions(linear_solver="superlu-cached"))):
        _, seen = _run(model, 0.05, 0.01, 1, **kw)
        assert seen["compiled"] == 0 and seen["general"] >= 5, kw
    one = fm.Model([fm.RigidBody("b", mass=1.0, inertia=(1, 1, 1), position=(1, 0, 0))],
                   [fm.Spherical("s", "ground", "b", point=(0, 0, 0))], [fm.Gravity((0, -9.81, 0))])
    _, seen = _run(one, 0.05, 0.01, 1)  # 48 unknowns: dense LU
    assert seen["compiled"] == 0 and seen["general"] >= 5


# ------------------------------------------------------------------- the compiled node glue against NumPy
def _predict_rotations_numpy(te, h, om0, gp, g, bth, bw, guard=0.3, guard_abs=1e-4):
    """The NumPy formulation of the rotation predictor (before it was compiled)."""
    P, Dinv = _rotation_matrices(te)
    om = P[None, :, 0, None] * om0[:, None] + np.einsum("kj,bjd->bkd", P[:, 1:], gp[..., bw + 3:bw + 6])
    th = h * np.einsum("kj,bjd->bkd", Dinv, om)
    old = g[..., bth:bth + 3]
    d = np.abs(th - old).max(axis=(1, 2))
    ok = (d <= guard * np.abs(old).max(axis=(1, 2))) | (d <= guard_abs)
    g = g.copy()
    g[ok, :, bth:bth + 3] = th[ok]
    return g, ok


@pytest.mark.parametrize("p", [1, 2, 3])
def test_rotation_predictor_equals_numpy(p):
    rng = np.random.default_rng(p)
    te = time_element(p)
    model = _chain(6)
    from flexmb.dynamics.simulate import make_layout
    from flexmb.dynamics.system import compile_model

    cm = compile_model(model)
    lay = make_layout(cm, p)
    grp = cm.groups[0]
    U_prev = rng.standard_normal(lay.size) * 1e-2
    U = rng.standard_normal(lay.size) * 1e-2
    w = rng.standard_normal(cm.nv)
    h = 1e-2
    P, Dinv = _rotation_matrices(te)
    gp = lay.group_view(U_prev, grp.bodies, grp.slots)
    om = (P[None, :, 0, None] * w[grp.vel_cols][:, None, 3:6]
          + np.einsum("kj,bjd->bkd", P[:, 1:], gp[..., grp.BW + 3:grp.BW + 6]))
    th = h * np.einsum("kj,bjd->bkd", Dinv, om)
    gv = lay.group_view(U, grp.bodies, grp.slots).copy()
    # former increments near the extrapolation (accepted) and, for every other body, far from it (the
    # guard keeps those)
    gv[:, :, grp.BTH:grp.BTH + 3] = th * (1.0 + 1e-2 * rng.standard_normal(th.shape))
    gv[::2, :, grp.BTH:grp.BTH + 3] += 1.0
    lay.group_view(U, grp.bodies, grp.slots)[:] = gv
    want, ok = _predict_rotations_numpy(te, h, w[grp.vel_cols][:, 3:6], lay.group_view(U_prev, grp.bodies, grp.slots),
                                        gv, grp.BTH, grp.BW)
    assert 0 < ok.sum() < ok.size
    got = predict_rotations(cm, lay, te, h, w, ElementPiece(None, h, U_prev), U.copy())
    assert np.array_equal(lay.group_view(got, grp.bodies, grp.slots), want)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_largest_turn_equals_numpy(p):
    rng = np.random.default_rng(10 + p)
    te = time_element(p)
    g = rng.standard_normal((7, p, 18))
    th = g[..., 3:6]
    ang = np.linalg.norm(np.concatenate([th, np.einsum("j,bjd->bd", te.end[1:], th)[:, None]], axis=1), axis=2)
    k = np.unravel_index(int(np.argmax(ang)), ang.shape)
    assert largest_turn(te.end, g, 3) == (ang[k], k[0], k[1])
    g[4, p - 1, 4] = np.nan  # NaN propagated as np.argmax does: the first NaN
    a, b, i = largest_turn(te.end, g, 3)
    assert np.isnan(a) and (b, i) == (4, p - 1)


@pytest.mark.parametrize("mu", [False, True])
@pytest.mark.parametrize("p", [2, 3])
def test_element_record_equals_numpy(p, mu):
    rng = np.random.default_rng(20 + p)
    te = time_element(p)
    nj = 4
    lam = rng.standard_normal((nj, p, 30))[..., 6:12]  # a strided view, as the recorder passes it
    xb = rng.standard_normal((nj, p, 3))
    m = rng.standard_normal((nj, p, 3)) if mu else None
    y = xb[:, 0]
    r = xb - y[:, None]
    f = lam[..., :3]
    imp = np.concatenate([f, lam[..., 3:] + np.cross(r, f)], axis=-1)
    if mu:
        imp[..., 3:] += m
    want = np.concatenate([np.einsum("li,jid->jld", legendre_at_gauss(te), imp).reshape(nj, -1), y], axis=1)
    assert np.array_equal(element_record(te, lam, xb, m), want)
