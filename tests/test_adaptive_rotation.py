"""Error-controlled steps on fast rotations (issue 8 section 4; :mod:`flexmb.dynamics.variants.step_control`).

The history estimate interpolates the rotation vectors of the last ``p + 2`` nodes relative to the
judged step's start.  ``log`` returns the principal branch (at most half a turn): before the vectors
were unwrapped, a body turning by more than ~1 rad per element (p = 3: four elements spanned) gave an
interpolant through a jump and an estimate 1e7 x the true local error, and the heavy top (validation
case R7, 150 rad/s) at p = 3 over 2 s took MORE elements at a looser tolerance (solved elements /
rejected steps: rtol 1e-8 522 / 2, 1e-6 311 / 3, 1e-4 485 / 82).  Now (measured 2026-11-26, with the
turn cap and the online calibration by step doubling): 537 / 1, 313 / 1, 252 / 0, with a
centre-of-mass error of 4.6e-8, 2.1e-6, 9.5e-6 m.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.dynamics.variants.step_control import SPAN_MAX, TURN_MAX, StepControl, unwrap_rotation_vectors
from flexmb.validation.cases import case_r7


def _top_error(sol, ref) -> float:
    X = np.array(case_r7.X_COM)
    com = np.einsum("tij,j->ti", sol.body_rotation[:, 0], X)
    com_ref = np.array([ref.sol(t)[:9].reshape(3, 3) @ X for t in sol.t])
    return float(np.abs(com - com_ref).max())


def test_heavy_top_takes_fewer_elements_at_looser_tolerances():
    """Heavy top (R7), p = 3 over 1 s, rtol = atol = 1e-8, 1e-6, 1e-4 (the pivot is the reference
    point, so the tolerance is atol on the rotation error x the 1.0 m lever): the solved elements
    decrease as the tolerance loosens, rejections stay a small fraction of the steps, and the error
    scales with the tolerance.  The global error exceeds the tolerance by up to 4.6x at 1e-8 over 2 s
    (the spin's phase errors add up along the run and the precession carries them to the centre of
    mass; the controller bounds the sum of the local error estimates, not their propagation), hence
    10x.  Over 1 s (150 turns of 1.5 rad per element, as over 2 s; measured 2026-11-29: 245 / 1,
    148 / 0, 129 / 0 solved elements / rejected steps, errors 2.0e-8, 6.9e-7, 2.0e-6 m; over 2 s 537 /
    1, 313 / 1, 252 / 0 and 4.6e-8, 2.1e-6, 9.5e-6 m, at 1.6x the cost)."""
    ref = case_r7.reference(1.0)
    solved, err = {}, {}
    for r in (1e-8, 1e-6, 1e-4):
        sol = fm.simulate(case_r7.top_model(), 1.0, 0.01, p=3, rtol=r, atol=r, show_progress=False)
        m = sol.meta
        solved[r], err[r] = m["solved_elements"], _top_error(sol, ref)
        assert m["rejected_steps"] <= 0.05 * m["accepted_steps"], (r, m["rejected_steps"], m["accepted_steps"])
        assert err[r] <= 10 * r, (r, err[r])
        # no element turns by more than the cap (1.25 rad at p = 3 with four elements spanned)
        speed = np.linalg.norm(sol.body_angular_velocity[:, 0], axis=1).max()
        assert sol.stats["h"].max() * speed <= 1.02 * min(TURN_MAX, SPAN_MAX / 4)
    assert solved[1e-8] > solved[1e-6] > solved[1e-4], solved
    assert err[1e-8] < err[1e-6] < err[1e-4], err
    assert err[1e-8] >= 1e-8 / 100 and err[1e-6] >= 1e-6 / 100  # not needlessly accurate either


def test_unwrapped_rotation_vectors_follow_the_motion():
    """A body spinning at 1.4 rad per element about a fixed axis: the rotation vectors of the nodes four
    elements back (5.6 rad) relative to the step's start are on the continuous branch, -1.4 k x axis,
    where ``log`` alone gives the other branch past half a turn."""
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    k = np.arange(-3, 2)  # four nodes back (one of them the step's start) and the end
    R = rot.exp(1.4 * k[:, None, None] * axis[None, None])  # (5, 1, 3, 3), R_n = I
    principal = rot.log(R)
    assert np.linalg.norm(principal[0]) < np.pi  # 4.2 rad folded to 2.08 about -axis
    th = unwrap_rotation_vectors(principal, 3)
    assert np.allclose(th[:, 0], 1.4 * k[:, None] * axis[None], atol=1e-12)


def _spin_nodes(turn: float, precession: float = 0.0):
    """Nodes (t, x, R, v, omega) of a body spinning at 150 rad/s about its body y axis while that axis
    precesses about inertial z at ``precession`` rad/s; step ``turn / 150`` s."""
    h = turn / 150.0
    nodes = []
    for k in range(-3, 2):
        t = 0.2 + k * h
        P, S = rot.exp(np.array([0.0, 0.0, precession * t])), rot.exp(np.array([0.0, 150.0 * t, 0.0]))
        omega = np.array([0.0, 0.0, precession]) + P @ np.array([0.0, 150.0, 0.0])
        nodes.append((t, np.zeros((1, 3)), (P @ S)[None], np.zeros((1, 3)), omega[None]))
    return nodes


class _Stub:  # what StepControl needs of a run for history_estimate
    def __init__(self, p=3):
        self.te = type("TE", (), {"p": p})()
        self.t_end, self.h = 1.0, 0.01
        self.rec = type("Rec", (), {"stats": {}})()
        self.cm = type("CM", (), {"vel_off": np.array([0])})()


@pytest.mark.parametrize("turn", [0.5, 1.0, 1.3])
def test_history_estimate_of_a_uniform_spin_is_zero_at_large_turns(turn):
    """A uniform spin about a fixed axis is integrated exactly by the element (its rotation vector is
    linear in time), so its estimated local error must vanish, also at 1.0-1.3 rad per element, where
    the principal-branch estimate was 1e-3 - 1e-1 rad (a jump in the interpolated data)."""
    ctl = StepControl(_Stub(), 0.0, 1e-9)
    *_, length = ctl.history_estimate(_spin_nodes(turn), np.ones(1))
    assert length < 1e-12, length


def test_history_estimate_of_a_precessing_top_stays_bounded_at_large_turns():
    """Spin 150 rad/s, precession 2 rad/s (the heavy top's): the estimate grows smoothly with the turn
    per element, no jump between 0.5 and 1.3 rad per element (the principal-branch estimate jumped by
    1e4-1e7 at 1 rad).  The true local error grows like h^8 (precession x spin^7; measured on R7 between
    0.75 and 1.95 rad per element); the estimate like h^8 up to 0.7 rad, then faster (measured ratios
    14.6, 33, 27: h^8 to h^12), its own interpolation error as the span nears a full turn (hence SPAN_MAX)."""
    ctl = StepControl(_Stub(), 0.0, 1e-9)
    est = np.array([ctl.history_estimate(_spin_nodes(turn, 2.0), np.ones(1))[2] for turn in (0.5, 0.7, 1.0, 1.3)])
    ratio = est[1:] / est[:-1]
    step = np.array([0.7 / 0.5, 1.0 / 0.7, 1.3 / 1.0])
    assert np.all(ratio > step ** 6) and np.all(ratio < step ** 14), ratio


def _tumbling() -> fm.Model:
    """A free asymmetric body spinning at 100 rad/s near its major axis, drifting at 1 m/s."""
    b = fm.RigidBody("b", mass=2.0, inertia=(0.1, 0.2, 0.3), velocity=(1.0, 0, 0), angular_velocity=(3.0, 2.0, 100.0))
    return fm.Model([b], [], [])


def test_free_tumbling_body_takes_fewer_elements_at_looser_tolerances():
    """Torque-free body at 100 rad/s, p = 3 over 0.5 s, rtol = atol = 1e-8 / 1e-6 / 1e-4; rotation error x
    the 0.39 m radius of gyration against Euler's equations (DOP853 at 1e-12); angular momentum
    conserved to round-off.  On this body the history estimate alone is LOW, 0.15 / 0.29 / 0.47 x the
    true local error at 0.35 / 0.74 / 1.25 rad per element (test_adaptive_estimate's 8-substep
    reference; true ~ h^7, estimate ~ h^8: the leading error is not C_p h^7 theta^(7) of the rotation
    alone): errors 8.9 / 4.5 / 2.1 x the tolerance (169 / 87 / 47 solved elements; the same on main at
    1e-8 and 1e-6).  With the online calibration by step doubling (factor 15 / 2.5 / 1.5 learned):
    3.0 / 1.9 / 1.5 x with 210 / 104 / 51 solved elements, hence the bound 5 x (without the calibration
    this test fails at 1e-8 and 1e-6)."""
    from scipy.integrate import solve_ivp

    J = np.array([0.1, 0.2, 0.3])

    def f(t, y):
        R, W = y[:9].reshape(3, 3), y[9:]
        S = np.array([[0, -W[2], W[1]], [W[2], 0, -W[0]], [-W[1], W[0], 0]])
        return np.concatenate([(R @ S).ravel(), -np.cross(W, J * W) / J])

    ref = solve_ivp(f, (0, 0.5), np.concatenate([np.eye(3).ravel(), [3.0, 2.0, 100.0]]), method="DOP853",
                    rtol=1e-12, atol=1e-12, dense_output=True)
    lever = np.sqrt(0.3 / 2.0)
    solved, err = {}, {}
    for r in (1e-8, 1e-6, 1e-4):
        sol = fm.simulate(_tumbling(), 0.5, 0.01, p=3, rtol=r, atol=r, show_progress=False)
        m = sol.meta
        solved[r] = m["solved_elements"]
        assert m["rejected_steps"] <= 0.05 * m["accepted_steps"] + 3, (r, m["rejected_steps"], m["accepted_steps"])
        Rref = np.array([ref.sol(t)[:9].reshape(3, 3) for t in sol.t])
        err[r] = float(np.linalg.norm(rot.log(sol.body_rotation[:, 0] @ np.swapaxes(Rref, 1, 2)), axis=1).max() * lever)
        assert err[r] <= 5 * r, (r, err[r])
        R, w = sol.body_rotation[:, 0], sol.body_angular_velocity[:, 0]
        H = np.einsum("tij,j,tkj,tk->ti", R, J, R, w)  # R J R^T omega
        assert np.abs(H - H[0]).max() <= 1e-12 * np.linalg.norm(H[0])
        if r == 1e-8:
            assert m["calibrations"] >= 3 and m["calibration"] > 3.0, (m["calibrations"], m["calibration"])
    assert solved[1e-8] > solved[1e-6] > solved[1e-4], solved


def test_calibration_leaves_a_well_estimated_model_alone():
    """The pendulum (history estimate 1.0-1.5 x its true local error, test_adaptive_estimate) keeps the
    factor 1: calibration only raises estimates found low, and its pairs cost one extra solved element
    each (the whole step), so the run pays at most a few percent."""
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-9), position=(-1.0, 0.0, 0.0))
    model = fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))],
                     [fm.Gravity((0.0, -9.81, 0.0))])
    sol = fm.simulate(model, 6.0, 0.05, p=2, rtol=0.0, atol=1e-6, show_progress=False)
    m = sol.meta
    assert m["calibrations"] >= 2
    assert m["calibration"] <= 1.2, m["calibration"]  # measured 1.0 (12 calibrations over 6 s)
