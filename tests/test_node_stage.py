"""The compiled node stage of rigid models (flexmb/dynamics/node/stage.py): taken where it applies, and
the same results to the bit as the general node path (end values, gauge reset, projection, frames,
energies, reactions), which it replaces by one compiled call per stage."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.march import marching
from flexmb.dynamics.node import stage, stage_modal
from flexmb.dynamics.simulate import Run, SimulationOptions


def pendulum():
    bob = fm.RigidBody("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(-1.0, 0, 0))
    return fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))], [fm.Gravity((0, -9.81, 0))])


def chain(n=4, joint=fm.Spherical, ground_b=False, **kw):
    bodies = [fm.RigidBody(f"b{k}", mass=0.3, inertia=(1e-4, 2.25e-3, 2.25e-3), position=((k - 0.5) * 0.3, 0, 0),
                           angular_velocity=(0.0, 0.5, 0.3 * k)) for k in range(1, n + 1)]
    joints = []
    for k in range(1, n + 1):
        a, b = ("ground" if k == 1 else f"b{k - 1}"), f"b{k}"
        if ground_b and k == 1:
            a, b = b, a
        joints.append(joint(f"J{k}", a, b, point=((k - 1) * 0.3, 0, 0), **kw))
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -9.81))])


def driven():
    bob = fm.RigidBody("bob", mass=2.0, inertia=(1e-2, 2e-2, 3e-2), position=(0.5, 0, 0))
    arm = fm.RigidBody("arm", mass=1.0, inertia=(1e-2, 1e-2, 1e-2), position=(1.2, 0, 0))
    return fm.Model([bob, arm], [fm.Revolute("drive", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), angular_velocity=2.0),
                                 fm.Revolute("elbow", "bob", "arm", point=(1.0, 0, 0), axis=(0, 0, 1), stiffness=3.0,
                                             damping=0.1)],
                    [fm.Gravity((0, -9.81, 0))])


CASES = {
    "pendulum p=2": (pendulum, 1 / 32, 2, 1.0),
    "spherical chain p=1": (chain, 1e-3, 1, 0.05),
    "spherical chain p=3, ground on side b": (lambda: chain(ground_b=True), 5e-3, 3, 0.1),
    "universal chain p=2": (lambda: chain(joint=fm.Universal, axis=(0, 0, 1), axis2=(0, 1, 0)), 2e-3, 2, 0.05),
    "driven, spring-damper joint p=2": (driven, 1e-2, 2, 0.5),
}


def _run(mk, h, p, t_end, on: bool):
    run = Run.start(mk(), t_end, h, p, 0.0, SimulationOptions())
    if not on:  # the documented cache slot: the stage does not apply to this compiled model
        run.cm.cache.node_stage = (False,)
    sol = run.go()
    return sol, run


@pytest.mark.parametrize("case", list(CASES))
def test_same_bits_as_the_general_path(case):
    mk, h, p, t_end = CASES[case]
    assert stage_modal.stage_plan(fm.dynamics.system.compile_model(mk())) is not None  # the stage applies
    a, run_a = _run(mk, h, p, t_end, True)
    b, run_b = _run(mk, h, p, t_end, False)
    assert len(a.t) == len(b.t) > 3
    for name in ("t", "body_position", "body_rotation", "body_velocity", "body_angular_velocity", "kinetic_energy",
                 "potential_energy", "joint_force", "joint_moment", "joint_force_internal", "joint_rel_velocity",
                 "joint_multiplier"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for k in a.extra:
        assert np.array_equal(a.extra[k], b.extra[k]), k
    for k in a.stats:
        assert np.array_equal(a.stats[k], b.stats[k], equal_nan=True), k
    assert a.meta["energy_balance"] == b.meta["energy_balance"]


def same_node(run, U):
    """End node and node values of the element ``U`` from ``run.st`` by the stage and by the general
    path: every array equal (the frames read-only and kept on the stage's node); returns both node values."""
    sy = run.system
    fast = marching.end_values(sy.cm, sy.lay, sy.te, run.st, run.h, U)
    assert fast._node_frames is not None  # kept by the stage (flexmb.dynamics.node.projection.keep_frames)
    sy.cm.cache.node_stage = (False,)
    slow = marching.end_values(sy.cm, sy.lay, sy.te, run.st, run.h, U)
    for k in ("x", "R", "pi", "s", "Rr", "lam", "acc", "lam_end"):
        assert np.array_equal(getattr(fast, k), getattr(slow, k)), k
    assert fast.extra.keys() == slow.extra.keys()
    for k in fast.extra:
        assert np.array_equal(fast.extra[k], slow.extra[k]), k
    sy.cm.cache.node_stage = None
    vf = run.rec.node_values(fast)
    sy.cm.cache.node_stage = (False,)
    vs = run.rec.node_values(slow)
    for k in ("pos", "rotm", "vel", "om", "ke", "pe"):
        assert np.array_equal(getattr(vf, k), getattr(vs, k)), k
    for k in ("w", "p", "w2", "mu", "loc"):
        assert np.array_equal(getattr(vf.nv, k), getattr(vs.nv, k)), k
    for k in ("xa", "Ra", "Ba", "ca", "wa", "xb", "Rb", "Bb", "cb", "wb"):
        assert np.array_equal(getattr(vf.nv.frames, k), getattr(vs.nv.frames, k)), k
        assert not getattr(vf.nv.frames, k).flags.writeable  # read-only like the general frames
    assert vf.extra.keys() == vs.extra.keys()
    for k in vf.extra:
        assert np.array_equal(vf.extra[k], vs.extra[k]), k
    return fast, vf


def test_one_node_both_paths():
    """End node and node values of one element by the stage and by the general path: every array equal,
    and the stage's node carries the joint frames that the projection then reuses."""
    run = Run.start(chain(), 1.0, 1e-2, 2, 0.0, SimulationOptions())
    for _ in range(5):
        run.step()
    out = run.solve_element(run.st, run.h, run.w, run.prev)
    same_node(run, out.last.U)


def test_where_it_does_not_apply():
    """Not for models without joints nor for the consistent transport of the multipliers (general path:
    its end node carries no frames of the stage)."""
    free = fm.Model([fm.RigidBody("b", mass=1.0, inertia=(1, 1, 1))], [], [fm.Gravity((0, 0, -9.81))])
    assert stage_modal.stage_plan(fm.dynamics.system.compile_model(free)) is None
    run = Run.start(pendulum(), 1.0, 0.05, fm.TimeElement.of_order(3, transport="consistent"), 0.0,
                    SimulationOptions())
    run.step()
    out = run.solve_element(run.st, run.h, run.w, run.prev)
    sy = run.system
    new = marching.end_values(sy.cm, sy.lay, sy.te, run.st, run.h, out.last.U)
    assert getattr(new, "_node_frames", None) is None
    assert np.array_equal(new.x, out.end.x) and np.array_equal(new.pi, out.end.pi)



def test_node_values_carry_the_records_rates_and_wrench():
    """The node stage's values carry the joints' rates at the projected velocities and the projection's
    wrench on B, computed in the node values' compiled call, equal to the bit to the record's own
    (:func:`~flexmb.dynamics.node.projection.body_rates`, :func:`~flexmb.dynamics.node.projection.joint_wrench`),
    which the general path's values leave to the record (None)."""
    from flexmb.dynamics.node.projection import body_rates, joint_wrench

    run = Run.start(chain(joint=fm.Universal, axis=(0, 0, 1), axis2=(0, 1, 0)), 1.0, 2e-3, 2, 0.0, SimulationOptions())
    for _ in range(3):
        run.step()
    nv = run.rec.node_values(run.st).nv
    assert nv.rates is not None and nv.wrench is not None  # the stage's
    assert nv.rates.shape == (4, 7) and nv.wrench.shape == (4, 6)
    assert np.array_equal(nv.rates, body_rates(nv.frames, nv.w))
    assert np.array_equal(nv.wrench, joint_wrench(nv.frames, nv.loc))
    assert np.abs(nv.wrench).max() > 0.0
    run.rec.cm.cache.node_stage = (False,)  # the general path
    st = run.st.copy()
    general = run.rec.node_values(st).nv
    assert general.rates is None and general.wrench is None
    assert np.array_equal(general.w, nv.w)
