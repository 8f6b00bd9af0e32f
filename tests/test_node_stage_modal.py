"""The compiled node stage of models with modal flexible bodies (flexmb/dynamics/node/stage_modal.py):
taken where it applies (modal bodies alone or with rigid ones, on joints), and the same results to the
bit as the general node path (end values of the frames, modal coordinates and joints, gauge reset,
projection, frames, kinetic energy, modal and interface outputs, reactions), which it replaces by one
compiled call per stage."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.bodies.modal import QKEY
from flexmb.dynamics.march import marching
from flexmb.dynamics.node import stage, stage_modal
from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.validation.cases import case_x3
from test_flexible_dynamics import beam
from test_node_stage import same_node

ROTVEC = (0.2, -0.1, 0.3)


@lru_cache(maxsize=None)
def _beam():
    return beam("craig-bampton")


def _flex(name, stiffening, modes=(0, 1, 6, 7), **kw):
    return fm.FlexibleBody(name, _beam(), stiffening=stiffening, modes=list(modes), orientation={"rotvec": ROTVEC},
                           angular_velocity=(0.3, -0.2, 0.5), qd0=0.05 * np.arange(1, len(modes) + 1), **kw)


def modal_chain(stiffening="full"):
    """Two modal bodies: the first pinned at ``xmin`` to the ground, the second (two modes) joined to its
    ``xmax`` by a revolute joint (no rigid body)."""
    from flexmb import rotations as rot

    xmax = rot.exp(np.array(ROTVEC)) @ np.array([1.0, 0.0, 0.0])
    f, g = _flex("F", stiffening), _flex("G", stiffening, modes=(0, 6), position=tuple(xmax))
    joints = [fm.Spherical("pin", "ground", ("F", "xmin")),
              fm.Revolute("j", ("F", "xmax"), ("G", "xmin"), axis=(0.3, -0.5, 0.8))]
    return fm.Model([f, g], joints, [fm.Gravity((0.5, -9.81, 0.2))])


def mixed(stiffening="none"):
    """A rigid body on side a of a universal joint to a modal body's ``xmax``, the modal body pinned to the
    ground; a spring-damper revolute between the rigid body and the ground."""
    f = _flex("F", stiffening)
    a = fm.RigidBody("A", mass=1.3, inertia=(0.11, 0.2, 0.25), position=(0.9, 0.4, 0.1), velocity=(0.1, 0.2, -0.1),
                     angular_velocity=(0.3, -0.2, 0.5), com=(0.02, -0.01, 0.03))
    joints = [fm.Spherical("pin", "ground", ("F", "xmin")),
              fm.Universal("u", "A", ("F", "xmax"), axis=(0.0, 0.0, 1.0), axis2=(0.0, 1.0, 0.0))]
    return fm.Model([f, a], joints, [fm.Gravity((0.5, -9.81, 0.2))])


def x3(stiffening):
    return case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, stiffening, case_x3.rod_data())


CASES = {  # model, h, p, t_end
    "X3 linear p=2": (lambda: x3("none"), 1e-3, 2, 0.9 / case_x3.OMEGA_X3),
    "X3 full p=2": (lambda: x3("full"), 1e-3, 2, 0.4 / case_x3.OMEGA_X3),
    "modal chain full p=2": (modal_chain, 0.01, 2, 0.08),
    "modal chain none p=3": (lambda: modal_chain("none"), 0.01, 3, 0.06),
    "mixed, universal joint p=1": (mixed, 0.005, 1, 0.04),
}


def _run(mk, h, p, t_end, on: bool):
    run = Run.start(mk(), t_end, h, p, 0.0, SimulationOptions())
    if not on:  # the documented cache slot: no stage for this compiled model
        run.cm.cache.node_stage = (False,)
    return run.go()


@pytest.mark.parametrize("case", list(CASES))
def test_same_bits_as_the_general_path(case):
    mk, h, p, t_end = CASES[case]
    assert isinstance(stage_modal.stage_plan(fm.dynamics.system.compile_model(mk())), stage_modal.ModalPlan)
    a = _run(mk, h, p, t_end, True)
    b = _run(mk, h, p, t_end, False)
    assert len(a.t) == len(b.t) > 3
    for name in ("t", "body_position", "body_rotation", "body_velocity", "body_angular_velocity", "kinetic_energy",
                 "potential_energy", "joint_force", "joint_moment", "joint_force_internal", "joint_rel_velocity",
                 "joint_multiplier"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.extra.keys() == b.extra.keys()
    for k in a.extra:
        assert np.array_equal(a.extra[k], b.extra[k]), k
    assert any(k.startswith("modal/") for k in a.extra) and any(k.startswith("interface/") for k in a.extra)
    for k in a.stats:
        assert np.array_equal(a.stats[k], b.stats[k], equal_nan=True), k
    assert a.meta["energy_balance"] == b.meta["energy_balance"]


def test_one_node_both_paths():
    """End node and node values of one element of X3 by the stage and by the general path: every array
    equal (the modal coordinates and the modal outputs too), and the stage's node carries the joint frames
    (:func:`test_node_stage.same_node`)."""
    run = Run.start(x3("full"), 1.0, 1e-3, 2, 0.0, SimulationOptions())
    for _ in range(3):
        run.step()
    out = run.solve_element(run.st, run.h, run.w, run.prev)
    fast, vf = same_node(run, out.last.U)
    assert np.any(fast.extra[QKEY] != run.st.extra[QKEY]) and len(vf.extra) > 2


def test_which_stage():
    """The rigid stage for rigid models, the modal one with modal bodies, none without joints."""
    cm = fm.dynamics.system.compile_model
    bob = fm.RigidBody("bob", mass=1.0, inertia=(1e-3, 1e-3, 1e-3), position=(-1.0, 0, 0))
    pend = fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))], [])
    assert isinstance(stage_modal.stage_plan(cm(pend)), stage.EndNodePlan)
    assert isinstance(stage_modal.stage_plan(cm(mixed())), stage_modal.ModalPlan)
    assert stage_modal.stage_plan(cm(fm.Model([_flex("F", "none")], [], []))) is None


def test_falls_back_where_it_cannot_vouch():
    """An end rotation the Newton-Schulz iteration does not polish (a start rotation 1.8x too long) and a
    node on a singular configuration of the loops (``st.self_stresses``): no stage result, the general
    path (its SVD polar factor, its deflated projection)."""
    from flexmb.dynamics.node.projection import node_projector

    run = Run.start(x3("none"), 1.0, 1e-3, 2, 0.0, SimulationOptions())
    run.step()
    out = run.solve_element(run.st, run.h, run.w, run.prev)
    sy = run.system
    plan = stage_modal.stage_plan(sy.cm)
    st = run.st.copy()
    st.R = st.R.copy()
    st.R[0] *= 1.8
    assert plan.end_node(sy.cm, sy.lay, sy.te, st, run.h, out.last.U, (marching._JPOS, marching._JMOM),
                         (marching._POLAR_NEAR, marching._POLAR_FAR)) is None
    new = marching.end_values(sy.cm, sy.lay, sy.te, st, run.h, out.last.U)
    assert np.allclose(np.einsum("nji,njk->nik", new.R, new.R), np.eye(3), atol=1e-12)
    node = out.end
    assert plan.node_values(sy.cm, node, run.rec.selection) is not None
    node.self_stresses = (node_projector(sy.cm, run.rec.selection).key, None)
    assert plan.node_values(sy.cm, node, run.rec.selection) is not None  # checked: regular
    node.self_stresses = (node_projector(sy.cm, run.rec.selection).key, ([], np.zeros((0, 1)), 0.0))
    assert plan.node_values(sy.cm, node, run.rec.selection) is None
