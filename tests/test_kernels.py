"""Compiled kernels (flexmb.dynamics.kernels) against their NumPy reference (tests/rigid_reference.py,
the former implementation) and against flexmb.rotations: residual rows and Jacobian values agree to
round-off, for p = 1, 2, 3, small and large rotation increments (series and closed-form branches)."""
import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.dynamics import kernels
from flexmb.dynamics.layout import JOINT_SLOTS
from flexmb.dynamics.march.marching import predict as _predict
from flexmb.dynamics.simulate import ElementSystem
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import time_element
from rigid_reference import ReferenceRigidBodies
from test_jacobian import JOINTS, _bodies


@pytest.mark.parametrize("scale", [0.05, 1.5])
def test_rotation_helpers_match_rotations_module(scale):
    rng = np.random.default_rng(3)
    th = scale * rng.standard_normal((200, 3))
    v = rng.standard_normal((200, 3))
    R, T, Ti, dTi = (np.empty((3, 3)) for _ in range(4))
    for k in range(th.shape[0]):
        kernels.exp_tangent(th[k], R, T)
        kernels.tangent_inv_and_d(th[k], v[k], Ti, dTi)
        assert np.allclose(R, rot.exp(th[k]), rtol=0, atol=1e-14)
        assert np.allclose(T, rot.tangent(th[k]), rtol=0, atol=1e-14)
        assert np.allclose(Ti, rot.tangent_inv(th[k]), rtol=0, atol=1e-13)
        assert np.allclose(dTi, rot.d_tangent_inv(th[k], v[k]), rtol=0, atol=1e-13)


def _model(kind):
    a, b = _bodies()
    if kind == "free":
        return fm.Model([a, b], [], [fm.Gravity((0.5, -9.81, 0.2))])
    return fm.Model([a, b], [fm.Spherical("pin", "ground", "A", point=(-0.3, 0.0, 0.0)), JOINTS[kind]()],
                    [fm.Gravity((0, 0, -9.81))])


@pytest.mark.parametrize("theta_noise", [0.05, 1.5])
@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kind", ["free", "spherical", "revolute_damped_spring", "universal"])
def test_rigid_kernels_match_numpy_reference(kind, p, theta_noise):
    h = 0.02
    cm = compile_model(_model(kind))
    st, w0 = initial_state(cm)
    te = time_element(p)
    system = ElementSystem(cm, te)
    lay = system.lay
    rng = np.random.default_rng(7)
    U = _predict(cm, lay, te, st, h, w0, None) + 0.05 * rng.standard_normal(lay.size)
    grp = cm.groups[0]
    Ug = lay.group_view(U, grp.bodies, grp.slots)
    Ug[..., grp.BTH:grp.BTH + 3] += theta_noise * rng.standard_normal(Ug[..., :3].shape)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    F, J = system.evaluate(U, st, h)
    kin = system.element_kin(U, st, h).groups[0]

    grp.__class__ = ReferenceRigidBodies  # the same group evaluated by the NumPy reference
    try:
        ref_system = ElementSystem(cm, te)
        Fr, Jr = ref_system.evaluate(U, st, h)
        kin_r = ref_system.element_kin(U, st, h).groups[0]
    finally:
        grp.__class__ = type(cm.groups[0]).__mro__[1]
    for name in ("R", "T", "UX", "UR", "UT"):
        assert np.allclose(getattr(kin, name), getattr(kin_r, name), rtol=0, atol=1e-14), name
    scale = np.abs(Fr).max()
    assert np.abs(F - Fr).max() <= 1e-14 * scale
    Jd, Jrd = J.toarray(), Jr.toarray()
    assert np.abs(Jd - Jrd).max() <= 1e-13 * np.abs(Jrd).max()
    # the kernel stores the time-element couplings D_ij I without the reference's explicit zeros
    assert J.nnz <= Jr.nnz


def test_kernels_are_cached_on_disk():
    """A second process loads the compiled kernels from the cache (no compilation): this one compiles (or
    loads) the kernel for the call's types, which writes the cache, then a fresh process finds it there."""
    import subprocess
    import sys

    kernels.exp_tangent(np.ones(3), np.empty((3, 3)), np.empty((3, 3)))
    code = ("import numpy as np; from flexmb.dynamics import kernels as k;"
            "R = np.empty((3, 3)); T = np.empty((3, 3)); k.exp_tangent(np.ones(3), R, T);"
            "print(k.exp_tangent.stats.cache_hits[k.exp_tangent.signatures[0]] if hasattr(k.exp_tangent, 'stats') else -1)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip().splitlines()[-1]) >= 1


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("kind", ["spherical", "revolute_driven", "universal", "prismatic"])
def test_joint_kernel_matches_numpy_reference(kind, p):
    from flexmb.dynamics.elements import joint_law
    from flexmb.dynamics.elements.joints import SLOTS as _SLOTS, unpack_joints
    from flexmb.dynamics.layout import JQ
    from rigid_reference import joint_rows_reference

    h = 0.02
    cm = compile_model(_model(kind))
    st, w0 = initial_state(cm)
    te = time_element(p)
    system = ElementSystem(cm, te)
    lay = system.lay
    rng = np.random.default_rng(11)
    U = _predict(cm, lay, te, st, h, w0, None) + 0.3 * rng.standard_normal(lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    from flexmb.dynamics.simulate import make_layout
    ek = system.element_kin(U, st, h, lay=make_layout(cm, p, replay=False))
    jk = unpack_joints(lay, te, st, U)
    Pa, Pb, Ga = cm.att_a.pose(ek, "cons"), cm.att_b.pose(ek, "cons"), cm.att_a.pose(ek, "gauss")
    Va, Vb = cm.att_a.velocity(ek), cm.att_b.velocity(ek)
    nj = cm.nj
    r = np.zeros((nj, p, JOINT_SLOTS))
    out = [np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3))] + [np.empty((nj, p, 6, 6)) for _ in range(3)]
    US, UPHI = np.empty((nj, p, 3)), np.empty((nj, p, 3))
    joint_law.joint_rows(te.E, te.D, h, st.s, st.lam, st.Rr, jk.J, Pa.x, Pa.R, Pb.x, Pb.R, Ga.R, Va.nu, Vb.nu,
                         _SLOTS, r, out[0], US, UPHI, *out[1:], True)
    np.testing.assert_allclose(US, te.E[None, :, 0, None] * st.s[:, None] + np.einsum("kj,njd->nkd", te.E[:, 1:],
                               jk.S), rtol=0, atol=1e-14)
    ref = joint_rows_reference(te, h, st, jk, Pa, Pb, Ga, Va, Vb)
    assert np.all(r[..., JQ:JQ + 6] == 0.0)
    for name, a, b in zip(("rows", "Rrt", "dphi", "dA", "dB", "dpsi"), (r,) + tuple(out), ref):
        assert np.allclose(a, b, rtol=0, atol=1e-13 * max(1.0, np.abs(b).max())), name


def test_as_unsigned_views_each_width_without_copy():
    """kernels.as_unsigned: the same bytes as the unsigned integers of the array's width, in compiled code
    and in Python (a view of the wrong width would read other indices: refactor_lu's loops use it)."""
    from numba import njit

    @njit(cache=False)
    def compiled(a):
        u = kernels.as_unsigned(a)
        return u, u[u.size - 1]

    for dtype, udtype in ((np.int32, np.uint32), (np.int64, np.uint64), (np.uint32, np.uint32)):
        a = np.array([0, 3, 7, 2 ** 31 - 1], dtype=dtype)
        for u, last in (compiled(a), (kernels.as_unsigned(a), kernels.as_unsigned(a)[-1])):
            assert u.dtype == udtype and u.shape == a.shape and np.shares_memory(u, a)
            assert u.tolist() == a.tolist() and last == 2 ** 31 - 1
    with pytest.raises(Exception):
        compiled(np.zeros(3))  # not an integer array: no such view
