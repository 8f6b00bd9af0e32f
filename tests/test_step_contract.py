"""The time step's contracts (issue 17 B): a solved element is a named ElementOutcome, the run moves
on its last piece, and the compiled model takes no attribute from outside (its caches live in one
named ModelCache)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.dynamics.simulate import Run, SimulationOptions
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.dynamics.system import ModelCache, compile_model
from flexmb.validation.cases.case_r1 import exact_positions, pendulum_model


def test_element_outcome_is_named_and_drives_the_run():
    """One pendulum element (p = 2, h = 0.05 s): the outcome's end node lies on the exact motion to the
    nodal order (h^4: measured 1.0e-7 m), its single piece starts at the run's node, and commit moves
    the run there with that piece as the predictor's previous element."""
    h = 0.05
    run = Run.start(pendulum_model(), 1.0, h, 2, 0.0, SimulationOptions())
    st0 = run.st
    out = run.solve_element(run.st, h, run.w, run.prev)
    assert isinstance(out, ElementOutcome) and out.halvings == 0
    assert len(out.pieces) == 1 and isinstance(out.last, ElementPiece)
    assert out.last.start is st0 and out.last.h == h and out.last.result.converged
    assert np.array_equal(out.U, out.last.U)
    assert out.end.t == pytest.approx(h, abs=1e-15)
    assert np.abs(out.end.x[0, :2] - exact_positions(np.array([h]))[0]).max() < 1e-6
    run.commit(out, h)
    assert run.st is out.end and run.prev is out.last and run.n_el == 1


def test_compiled_model_takes_no_attribute_from_outside():
    """Caches are named slots of ``cm.cache``; a module that set its own private attribute on the
    compiled model (``cm._speed_columns = ...``, as eight modules did) now fails loudly."""
    cm = compile_model(pendulum_model())
    assert isinstance(cm.cache, ModelCache)
    with pytest.raises((AttributeError, TypeError)):  # (frozen slots dataclass: TypeError on Python 3.11)
        cm._speed_columns = None
    with pytest.raises((AttributeError, TypeError)):
        cm.anything_new = 1
    with pytest.raises(AttributeError):  # frozen: FrozenInstanceError
        cm.jnt_constrained = cm.jnt_constrained.copy()


def test_compiled_model_data_are_read_only():
    """The model's compiled arrays cannot be written after compilation (its joints' laws, bodies'
    velocity offsets, gravity, the full constraint masks: a run's choice is its own Selection)."""
    cm = compile_model(pendulum_model())
    for name in ("jnt_k", "jnt_c", "jnt_ref", "gravity", "vel_off", "group_of", "jnt_a", "jnt_b", "jnt_constrained",
                 "jnt_universal"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(cm, name).reshape(-1)[:1] = 1


def test_a_selection_is_frozen_and_changes_by_new_objects():
    """The kept constraint equations are a frozen Selection of the model's full set (read-only masks, the
    compiled model's own masks read-only too): dropping a universal joint's cross condition frees its
    moment about z, ``changed`` switches rows off and on again, and every choice has its own key."""
    from dataclasses import FrozenInstanceError

    import flexmb as fm
    from flexmb.dynamics.node.selection import Selection

    bodies = [fm.RigidBody("a", mass=1.0, inertia=(1, 1, 1), position=(1, 0, 0))]
    model = fm.Model(bodies, [fm.Universal("u", "ground", "a", point=(0, 0, 0), axis=(1, 0, 0), axis2=(0, 1, 0))], [])
    cm = compile_model(model)
    full = Selection.full(cm)
    assert Selection.full(cm) is full and full.is_full and full.universal[0]
    for a in (full.constrained, full.universal, cm.jnt_constrained, cm.jnt_universal):
        with pytest.raises(ValueError, match="read-only"):
            a.reshape(-1)[:1] = False
    with pytest.raises(FrozenInstanceError):
        full.dropped = ((0, 2),)
    cross = full.dropping([(0, "cross")])
    assert not cross.universal[0] and cross.constrained[0].tolist() == [True] * 3 + [False] * 3
    two = cross.changed(drop=[(0, 1)])
    assert two.dropped == ((0, "cross"), (0, 1)) and not two.constrained[0, 1]
    back = two.changed(keep=[(0, "cross"), (0, 1)])
    assert back.is_full and back.key == full.key and len({full.key, cross.key, two.key}) == 3
    assert np.array_equal(cm.jnt_constrained, full.constrained)  # the model's set is untouched
    with pytest.raises(ValueError, match="not a constraint equation"):
        cross.dropping([(0, 3)])  # phi_x of a universal joint is free


def test_a_given_selection_must_drop_the_redundant_count():
    """``Run.start(..., selection=)`` replaces the run's choice of dropped equations (a parallelogram
    four-bar: 3 redundant out-of-plane equations); a selection that drops fewer is refused by name."""
    import sys
    from pathlib import Path

    from flexmb.dynamics.node.selection import Selection
    from flexmb.errors import ModelError

    sys.path.insert(0, str(Path(__file__).parent))
    from test_redundancy_reselect import parallelogram

    model = parallelogram(90.0)
    full = Selection.full(compile_model(model))
    forced = full.dropping([(1, 3), (1, 4), (2, 4)])
    run = Run.start(model, 0.02, 0.01, 2, 0.0, SimulationOptions(), selection=forced)
    assert run.selection is forced and run.system.lay.selection is forced
    with pytest.raises(ModelError, match="drops 2 equation.*3 redundant"):
        Run.start(model, 0.02, 0.01, 2, 0.0, SimulationOptions(), selection=full.dropping([(1, 3), (1, 4)]))


def test_node_kernel_arguments_have_one_type():
    """The node frames and the projector's target are read-only whatever side is the ground (the ground
    side's arrays were kept read-only, a body's writable: each node kernel compiled once per mix, 13
    overloads of ``violation`` in one test session); the projection of a pendulum node compiles each
    kernel for one signature."""
    from flexmb.dynamics.node import kernels as nk
    from flexmb.dynamics.node.constraints import project_node
    from flexmb.dynamics.node.projection import NodeFrames, node_projector

    run = Run.start(pendulum_model(), 1.0, 0.05, 2, 0.0, SimulationOptions())
    fr = NodeFrames(run.cm, run.st, run.selection)
    assert not any(a.flags.writeable for a in fr.sides)
    proj = node_projector(run.cm, run.selection)
    assert not proj.target(run.cm, 0.0).flags.writeable
    run.step()
    # the general node projection (a run of a rigid model takes the compiled node stage, which calls the
    # kernel from compiled code): one compiled call, xa ... wb its arguments 4 to 13
    project_node(run.cm, run.state.st, sel=run.selection)
    sig = nk.project_dense.signatures
    assert sig and all(str(s[k]).startswith("readonly") for s in sig for k in range(4, 14))


def test_rotation_slots_are_not_set_on_the_layout():
    """The root checks' rotation indices are kept in the model's named cache, not as a private attribute
    set on the Layout from outside; they are the bodies' theta and the joints' phi slots."""
    from flexmb.dynamics.layout import JPHI
    from flexmb.dynamics.variants.root_checks import rotation_slots

    run = Run.start(pendulum_model(), 1.0, 0.05, 2, 0.0, SimulationOptions())
    lay = run.system.lay
    rs = rotation_slots(lay, run.cm)
    assert not hasattr(lay, "_rotation_slots") and rotation_slots(lay, run.cm) is rs
    probe = np.zeros(lay.size)
    probe[rs] = 1.0
    assert lay.joint_view(probe)[..., JPHI:JPHI + 3].all()
    grp = run.cm.groups[0]
    assert lay.group_view(probe, grp.bodies, grp.slots)[..., grp.BTH:grp.BTH + 3].all()
    assert rs.size == 3 * run.te.p * (run.cm.nb + run.cm.nj)


def test_a_root_that_turns_too_far_is_an_explicit_refusal():
    """A rotor at 100 rad/s with h = 0.05 s (5 rad per element, p = 2): the solve stage converges (a root
    that aliases the motion), the root checks return a Refusal naming the body's rotation, and Newton's
    result is left as Newton returned it (before: its ``converged`` and ``message`` were rewritten)."""
    import flexmb as fm
    from flexmb.dynamics.step.advance import predict_element, solve_element
    from flexmb.dynamics.step.outcome import Refusal
    from flexmb.dynamics.variants.root_checks import refusal

    rotor = fm.RigidBody("rotor", mass=1.0, inertia=(0.1, 0.2, 0.3), angular_velocity=(0.0, 0.0, 100.0))
    run = Run.start(fm.Model([rotor], [], []), 0.2, 0.05, 2, 0.0, SimulationOptions())
    U0 = predict_element(run.system, run.st, 0.05, run.w, None)
    out = solve_element(run.system, run.st, 0.05, U0, run.scale, run.factor, run.options)
    assert out.converged and out.last.result.converged
    bad = refusal(run.system, U0, out)
    assert isinstance(bad, Refusal) and "'rotor' turns by" in bad.message
    out.refusal = bad
    assert not out.accepted and out.reason == (bad.index, bad.message)
    assert out.last.result.converged and "turns" not in out.last.result.message
    assert out.last.work is None  # no work booked for a refused root


def test_symmetric_projection_resolves_through_the_singular_node_checks():
    """A parallelogram with a change point on the node t = 0.1 s (p = 2, h = 0.005, symmetric transport):
    the projection's warm re-solves go through the solve stage with its end-node check, so the element
    ending on the change point and the one starting there are both solved with the self-stress rows
    released, as with the node transport (before: 1 of 2, the warm re-solve bypassed the check); the end
    node carries its self-stresses for the node projection.  Positions within 2e-9 m of the exact motion,
    reactions the physical 34.5 N."""
    import flexmb as fm
    from test_singular_passage import exact_positions, parallelogram_row

    deg = np.degrees(-0.6)
    te = fm.TimeElement.of_order(2, transport="symmetric")
    sol = fm.simulate(parallelogram_row(deg, 1), 0.2, 0.005, p=te, show_progress=False)
    plain = fm.simulate(parallelogram_row(deg, 1), 0.2, 0.005, p=2, show_progress=False)
    assert sol.meta["singular_elements"] == plain.meta["singular_elements"] == 2
    assert np.abs(sol.body_position - exact_positions(sol.t, deg, 1)).max() < 2e-9
    assert np.linalg.norm(sol.joint_force, axis=2).max() == pytest.approx(34.5, rel=1e-3)
    run = Run.start(parallelogram_row(deg, 1), 0.2, 0.005, te, 0.0, SimulationOptions())
    while run.st.t < 0.1 - 1e-9:
        run.step()
    assert run.st.t == pytest.approx(0.1, abs=1e-12)
    assert run.st.self_stresses is not None and run.st.self_stresses[1] is not None


def test_the_run_state_is_one_object_saved_whole():
    """Everything a run changes lives in one RunState (the run's attributes are its fields); what a
    checkpoint writes of it (its arrays and its growing lists) restores another run of the same model,
    which then goes on bit for bit like the first (pendulum, p = 2, 3 + 3 elements)."""
    from types import SimpleNamespace

    from flexmb.dynamics.step.state import RunState

    def start():
        return Run.start(pendulum_model(), 1.0, 0.05, 2, 0.0, SimulationOptions())

    run = start()
    for _ in range(3):
        run.step()
    assert isinstance(run.state, RunState) and run.st is run.state.st and run.rec is run.state.rec
    assert run.selection is run.state.selection and run.n_el == run.state.n_el == 3
    saved = run.state.arrays(run)
    saved.update({k: np.array(v) for k, v in run.state.history().items()})
    other = start()
    other.state.restore(other, saved, SimpleNamespace(path="(memory)", old_format=False))
    assert other.n_el == 3 and other.st.t == run.st.t
    for r in (run, other):
        for _ in range(3):
            r.step()
    assert np.array_equal(run.st.x, other.st.x) and np.array_equal(run.st.pi, other.st.pi)
    assert np.array_equal(np.array(run.rec.pos), np.array(other.rec.pos))
