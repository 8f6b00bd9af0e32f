"""Model constants packed into flat arrays (flexmb/dynamics/solve/packing.py): the compiled views give back
every piece exactly, as a view of its kind's flat (no copy) with its kind's writability, and the rigid
compiled Newton loop receives its constants that way (few arrays to unbox per element)."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from numba.core import types

import flexmb as fm
from flexmb.dynamics.solve.packing import BR, FR, FW, IR, IW, JW, KINDS, pack, v1, v2, v3

_VIEW = {1: v1, 2: v2, 3: v3}


def test_views_give_back_every_piece_without_copies():
    rng = np.random.default_rng(3)
    pieces = [(FR, rng.random((4, 3, 3))), (FW, rng.random((2, 5))), (IR, np.arange(7)), (FR, np.zeros((0, 3))),
              (IW, np.array([[1, -2], [3, 4]])), (JW, np.arange(5, dtype=np.int32)), (BR, np.array([True, False])),
              (FR, rng.random(3)), (IR, np.int64(1))]
    *flats, M = pack(pieces)
    assert len(flats) == len(KINDS) and not M.flags.writeable
    for (dtype, writable), flat in zip(KINDS, flats):
        assert flat.dtype == dtype and flat.flags.writeable == writable and flat.flags.c_contiguous
    for k, (kind, a) in enumerate(pieces):
        a = np.asarray(a)
        if a.ndim == 0:
            assert flats[kind][M[k, 0]] == a
            continue
        out = _VIEW[a.ndim](flats[kind], M[k])
        assert out.shape == a.shape and np.array_equal(out, a)
        assert out.size == 0 or np.shares_memory(out, flats[kind])
        # numba types the view as its flat's kind (the kernels downstream are compiled for one of them)
        assert numba.typeof(out).mutable == KINDS[kind][1]


def test_pack_names_a_piece_of_the_wrong_dtype():
    with pytest.raises(TypeError, match="piece 1 is int64"):
        pack([(FR, np.zeros(2)), (FR, np.arange(2))])


def test_rigid_newton_unboxes_few_arrays_per_element():
    """The rigid compiled loop's constants reach it packed: no tuple among its arguments and at most 24
    arrays (it took 34 arguments holding ~100 arrays, ~13 us per element of the pendulum to unbox), and
    the run is the one the compiled loop gave before (the bob stays on its circle)."""
    from flexmb.dynamics.solve import fused_newton

    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    spring = fm.SpringDamper("s", "ground", "bob", stiffness=10.0, damping=0.1, point_a=(0, 1, 0))
    sol = fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0)), spring]), 0.1, 0.02, p=2)
    assert np.allclose(np.linalg.norm(sol.body("bob").position, axis=1), 1.0, atol=1e-9)
    sigs = fused_newton.newton_rigid.signatures
    assert sigs
    for sig in sigs:
        assert not any(isinstance(t, types.BaseTuple) for t in sig), sig
        assert sum(isinstance(t, types.Array) for t in sig) <= 24, sig


def test_rigid_node_stage_unboxes_few_arrays_per_node():
    """The node stage's two compiled calls receive the model's (and the projector's) constants packed: the
    end node 30 arrays (41 before: 17 constants one by one), the node values 34 (44 before), every
    constant behind the packing index ``M`` (their last argument)."""
    from flexmb.dynamics.node import stage

    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0))]), 0.1, 0.02, p=2)
    for kernel, most in ((stage.rigid_end_node, 30), (stage.rigid_node_values, 34)):
        assert kernel.signatures, kernel
        for sig in kernel.signatures:
            assert sum(isinstance(t, types.Array) for t in sig) <= most, (kernel, sig)
            assert sig[-1] == types.Array(types.int64, 2, "C", readonly=True), sig
