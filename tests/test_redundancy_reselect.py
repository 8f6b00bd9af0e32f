"""The choice of the dropped (redundant) equations during a run, on a symmetric closed loop.

A parallelogram four-bar of four revolutes (cranks 0.5 m, coupler and ground 1 m, 1 kg bars) lies
in the horizontal plane, gravity out of the plane, cranks turning at 6 rad/s: 3 equations are
dependent (out of plane), and the out-of-plane reactions (moments about the joints' x and y axes)
are statically indeterminate: each choice of dropped equations gives one particular solution,
9.8 to 27 N m for the well-conditioned choices.  The loop is symmetric: at every start angle the rows
of the left null space tie in pairs or fours (equal leverages to 1e-16), and the choice made at t0 is
a tie-break.  It used to be LAPACK's (the pivoted QR broke the ties by the round-off of the SVD, so
the choice depended on the CPU's BLAS kernels); it is now the row order (``redundancy.TIE_TOL``).
Some choices become singular later in the motion (the kept rows lose rank when a crank turns): the
reactions then grow like 1 / (quality of the choice); unmonitored, they reached 378 to 6391 N m in
0.5 s from 12 of 36 start angles (10 deg apart), with no warning.  With the choice by row order, the
one made at t0 from 100..260 deg (O1:s_z, O1:phi_x, A:phi_y) becomes singular at t = pi / 12 s, when
crank c1 (frame of A) has turned 90 deg from the ground (frame of O1), and is re-selected at
0.16..0.19 s; from the other start angles it drops O1's three out-of-plane equations and stays good
(quality >= 0.33).  The motion itself is unique (the dropped equations are implied by the kept ones).
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

import flexmb as fm
import flexmb.dynamics.node.redundancy as redundancy_module
from flexmb.dynamics.node.monitor import RedundancyMonitor
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.dynamics.system import compile_model


def planar_bar(name, p, q, vp, vq, m=1.0):
    """A slender bar of mass ``m`` [kg] from point ``p`` to ``q`` [m] in the xy plane, its ends moving
    at ``vp`` / ``vq`` [m/s] (rigid: the velocities must agree along the bar)."""
    L = np.linalg.norm(q - p)
    ex = (q - p) / L
    ez = np.array([0, 0, 1.0])
    return fm.RigidBody(name, mass=m, inertia=(1e-3, m * L * L / 12, m * L * L / 12), position=(p + q) / 2,
                        orientation=np.column_stack([ex, np.cross(ez, ex), ez]), velocity=(vp + vq) / 2,
                        angular_velocity=np.cross(ex, vq - vp) / L)


def parallelogram(theta0_deg: float, omega0: float = 6.0, a: float = 0.5, b: float = 1.0, m: float = 1.0):
    """Parallelogram four-bar, ground pivots (0, 0, 0) and (b, 0, 0), cranks at ``theta0_deg`` turning
    at ``omega0`` [rad/s] about z, gravity along -z (out of the mechanism's plane)."""
    th = np.radians(theta0_deg)
    e = np.array([np.cos(th), np.sin(th), 0.0])
    P = [np.zeros(3), a * e, a * e + [b, 0, 0], np.array([b, 0.0, 0.0])]
    vB = omega0 * np.cross([0, 0, 1.0], P[1])

    def bar(name, p, q, vp, vq):
        return planar_bar(name, p, q, vp, vq, m)

    z0 = np.zeros(3)
    bodies = [bar("c1", P[0], P[1], z0, vB), bar("cp", P[1], P[2], vB, vB), bar("c2", P[3], P[2], z0, vB)]
    z = (0, 0, 1)
    joints = [fm.Revolute("O1", "ground", "c1", point=P[0], axis=z), fm.Revolute("A", "c1", "cp", point=P[1], axis=z),
              fm.Revolute("B", "cp", "c2", point=P[2], axis=z), fm.Revolute("O2", "c2", "ground", point=P[3], axis=z)]
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def max_moment(sol) -> float:
    return float(np.linalg.norm(sol.joint_moment, axis=2).max())


@pytest.mark.parametrize("theta0", [110.0, 200.0, 260.0])
def test_reactions_stay_physical_from_start_angles_where_they_spiked(theta0):
    """0.5 s (about half a turn) at h = 0.01 s, p = 2, from start angles where the choice made at t0
    becomes singular (without re-selection 230, 589 and 97 N m; quality 0.0038 at t = 0.26 s): the joint
    moments stay below 40 N m (the well-conditioned particular solutions: 9.8 to 27 N m) and the choice's
    quality is monitored."""
    sol = fm.simulate(parallelogram(theta0), 0.5, 0.01, p=2)
    assert max_moment(sol) < 40.0
    q = sol.stats["redundancy_quality"]
    assert q.shape == sol.stats["h"].shape and np.all((q > 0.1) & (q <= 1.0 + 1e-12))


def test_a_degrading_choice_is_reselected(caplog):
    """From 150 deg the choice made at t0 (O1:s_z, O1:phi_x, A:phi_y: the first rows of the ties) becomes
    singular at t = pi / 12 s: without re-selection the moments reach 554 N m (quality 0.0037 at the
    node t = 0.26 s); with it, one re-selection at t = 0.17 s (quality 0.18 -> 0.38; WARNING, stats,
    meta) keeps them below 40 N m, at h and h/2 alike, and the motion is the same to 1e-7 m (the dropped
    equations are implied by the others either way).  Before the re-selection the two runs are the same
    computation: their node reactions agree (measured 4e-5 N m of ~25 N m: the components dropped at
    the end were kept then, and are recovered from the impulses, not zeroed)."""
    model = parallelogram(150.0)
    with caplog.at_level(logging.WARNING, logger="flexmb"):
        sol = fm.simulate(model, 0.35, 0.01, p=2)
    assert len(sol.meta["redundancy_reselections"]) == 1
    event = sol.meta["redundancy_reselections"][0]
    assert 0.1 < event["t"] < 0.3 and event["quality"][1] > 2 * event["quality"][0]
    assert sol.stats["reselected"].sum() == 1
    assert any("re-selected" in r.getMessage() for r in caplog.records)
    assert max_moment(sol) < 40.0
    assert max_moment(fm.simulate(model, 0.35, 0.005, p=2)) < 40.0
    # monitoring only, no re-selection: the monitor's option
    stuck = Run.start(model, 0.35, 0.01, 2, 0.0, SimulationOptions(), monitor=RedundancyMonitor(reselect_tol=0.0)).go()
    assert stuck.meta["redundancy_reselections"] == []
    assert max_moment(stuck) > 300.0 and stuck.stats["redundancy_quality"].min() < 0.01  # 10 x the good choices
    assert np.abs(stuck.body_position - sol.body_position).max() < 1e-7
    early = sol.t < event["t"] - 0.015  # node reactions use the neighbouring nodes
    assert np.abs(stuck.joint_moment[early]).max() > 10.0
    assert np.abs(stuck.joint_moment[early] - sol.joint_moment[early]).max() < 1e-3


def test_resume_after_a_reselection_is_bit_identical(tmp_path):
    """A checkpoint written after a re-selection restores the re-selected equations: the resumed run
    equals the uninterrupted one bit for bit."""
    model = parallelogram(150.0)
    full = fm.simulate(model, 0.35, 0.01, p=2)
    ck = tmp_path / "run.npz"
    part = fm.simulate(model, 0.35, 0.01, p=2, checkpoint=ck, on_step=lambda t, s: t >= 0.25 - 1e-12)
    assert len(part.meta["redundancy_reselections"]) == 1
    rest = fm.resume(ck)
    assert rest.meta["redundant_constraints"] == full.meta["redundant_constraints"]
    for name in ("body_position", "joint_force", "joint_moment"):
        assert np.array_equal(getattr(full, name), getattr(rest, name)), name
    for k in ("redundancy_quality", "reselected", "constraint_conditioning"):
        assert np.array_equal(full.stats[k], rest.stats[k]), k


def test_least_norm_reactions_do_not_depend_on_the_choice():
    """The same mechanism with its joints listed in reverse order drops other equations (the first rows
    of the ties: O1's three out-of-plane equations against O2's): the reported joint moments (particular
    solutions) differ by up to 24.5 N m, the least-norm ones (``extra["joint_moment_least_norm"]``,
    dependences removed in the scaled metric) agree to 1e-9 N m (measured 6e-14) and the forces to
    1e-6 N (3e-8), over 0.35 s."""
    model = parallelogram(90.0)
    rev = fm.Model(list(model.bodies), list(model.joints)[::-1], list(model.forces))
    a = fm.simulate(model, 0.35, 0.01, p=2)
    b = fm.simulate(rev, 0.35, 0.01, p=2)
    assert {tuple(x) for x in a.meta["redundant_constraints"]} != {tuple(x) for x in b.meta["redundant_constraints"]}
    assert np.abs(a.joint_moment - b.joint_moment[:, ::-1]).max() > 10.0
    for key, tol in (("joint_moment_least_norm", 1e-9), ("joint_force_least_norm", 1e-6)):
        assert a.extra[key].shape == a.joint_moment.shape
        assert np.abs(a.extra[key] - b.extra[key][:, ::-1]).max() < tol, key


def _choice(cm, Gs, labels):
    rank, order, _, _ = redundancy_module.rank_select(Gs)
    return redundancy_module.format_labels(cm, [labels[r] for r in sorted(order[rank:])])


@pytest.mark.parametrize("theta0", [90.0, 150.0])
def test_the_choice_at_a_tie_does_not_depend_on_round_off(theta0):
    """The four joints' out-of-plane rows tie (equal leverages in the left null space, to 1e-16): the
    choice is the first rows of each tie (row order), the same for the loop matrix perturbed by 1e-15
    (relative, 20 draws: what another BLAS does to the SVD) and for any orthonormal basis of the null
    space.  LAPACK's pivoted QR broke these ties by round-off: on one machine it dropped A:phi_x,
    A:phi_y, B:phi_y from 90 deg, on another O1:phi_y, A:s_z, O2:phi_x, and only the latter degraded."""
    from types import SimpleNamespace

    from flexmb.dynamics.system import compile_model, initial_configuration

    cm = compile_model(parallelogram(theta0))
    x, R, _ = initial_configuration(cm)
    Gs, labels, _, _ = redundancy_module.scaled_loop_matrix(cm, SimpleNamespace(x=x, R=R, extra={}),
                                                            redundancy_module.loop_joints(cm))
    expected = {90.0: "O1:s_z, O1:phi_x, O1:phi_y", 150.0: "O1:s_z, O1:phi_x, A:phi_y"}[theta0]
    assert _choice(cm, Gs, labels) == expected
    rng = np.random.default_rng(7)
    for _ in range(20):
        assert _choice(cm, Gs * (1.0 + 1e-15 * rng.standard_normal(Gs.shape)), labels) == expected
    rank, _, _, N = redundancy_module.rank_select(Gs)
    for _ in range(20):
        Q, _ = np.linalg.qr(rng.standard_normal((N.shape[1],) * 2))
        drop = redundancy_module._pivot_rows(N @ Q)
        assert redundancy_module.format_labels(cm, [labels[r] for r in drop]) == expected


def test_least_norm_reactions_do_not_depend_on_a_choice_in_turning_frames():
    """From 90 deg with A:phi_x, A:phi_y, B:phi_y dropped (forced here: the choice LAPACK's tie-break made
    on one machine; it never degrades, quality 0.30) against the reversed model (O2's out-of-plane
    equations dropped): the least-norm moments agree to 1e-9 N m (measured 7e-14).  A's components live
    in crank c1's turning frame; taken at the nodes from their zero law (as the reported particular
    solution is) instead of recovered from the impulses like every other component, they made the
    least-norm reactions differ by the recovery's O(h^4): 1.4e-5 N m here, 2e-4 N m against the
    reversed model's choice on that machine."""
    model = parallelogram(90.0)
    rev = fm.Model(list(model.bodies), list(model.joints)[::-1], list(model.forces))
    b = fm.simulate(rev, 0.35, 0.01, p=2)
    forced = Selection.full(compile_model(model)).dropping([(1, 3), (1, 4), (2, 4)])  # A:phi_x, A:phi_y, B:phi_y
    a = Run.start(model, 0.35, 0.01, 2, 0.0, SimulationOptions(), selection=forced).go()
    assert a.meta["redundant_constraints"] == [["A", "3"], ["A", "4"], ["B", "4"]] and not a.meta["redundancy_reselections"]
    assert np.abs(a.joint_moment[:, 1, :2]).max() == 0.0  # the reported particular solution: zero there
    for key, tol in (("joint_moment_least_norm", 1e-9), ("joint_force_least_norm", 1e-6)):
        assert np.abs(a.extra[key] - b.extra[key][:, ::-1]).max() < tol, key
