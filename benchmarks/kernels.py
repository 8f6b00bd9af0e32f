"""Benchmark: compiled kernels (flexmb/dynamics/bodies/rigid_kernels.py, flexmb/dynamics/elements/joint_law.py)
against the NumPy code they replaced.

For the chain models of benchmarks/compare_exudyn.py (bars on spherical joints) and the IFToMM
pendulum (revolute), times per call, median of interleaved repetitions:

* rigid group: ``unpack`` + ``residual`` (rows and Jacobian values, written into the values array
  of a fixed pattern as in every evaluation after the first) of all bodies; NumPy = the
  former batched implementation, kept as the test reference (tests/rigid_reference.py);
* joint rows: relative kinematics, multiplier definition, attachment velocities and their
  pose-dependent Jacobian blocks (``joint_law.joint_rows`` vs ``joint_rows_reference``);
* one whole evaluation of the time element (residual + Jacobian, and residual only).

Usage::

    python benchmarks/kernels.py            # pendulum p = 2, 15-link chain p = 3, N = 100 / 1000 p = 1
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from compare_exudyn import flexmb_chain, flexmb_pendulum  # noqa: E402
from flexmb.dynamics.elements import joint_law  # noqa: E402
from flexmb.dynamics.elements.joints import SLOTS, unpack_joints  # noqa: E402
from flexmb.dynamics.layout import JOINT_SLOTS, Pattern, Triplets  # noqa: E402
from flexmb.dynamics.simulate import ElementSystem, _predict, make_layout  # noqa: E402
from flexmb.dynamics.system import compile_model, initial_state  # noqa: E402
from flexmb.dynamics.time_elements import time_element  # noqa: E402
from rigid_reference import ReferenceRigidBodies, joint_rows_reference  # noqa: E402


def _median_time(fn, repeat: int, inner: int) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t0) / inner)
    return float(np.median(ts))


def case(name, model, p, h, repeat=7):
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    te = time_element(p)
    system = ElementSystem(cm, te)
    lay = system.lay
    U = _predict(cm, lay, te, st, h, w0, None)
    system.evaluate(U, st, h)
    system.evaluate(U, st, h, jacobian=False)
    inner = max(3, int(2000 / max(cm.nb, 1) / p))
    plain = make_layout(cm, p, replay=False)
    grp = cm.groups[0]
    ek = system.element_kin(U, st, h, lay=plain)
    Ug = lay.group_view(U, grp.bodies, grp.slots)
    r = np.zeros_like(Ug)

    ref = ReferenceRigidBodies.__new__(ReferenceRigidBodies)
    ref.__dict__.update(grp.__dict__)
    pats = {}
    for impl in (grp, ref):  # the values-only path of an evaluation: the pattern exists
        t = Triplets()
        impl.residual(ek, impl.unpack(ek, Ug), r, t, cm.gravity)
        pats[id(impl)] = Pattern(t, lay.size)

    def rigid_kernel():
        kin = grp.unpack(ek, Ug)
        grp.residual(ek, kin, r, Triplets(pattern=pats[id(grp)]), cm.gravity)

    def rigid_numpy():
        kin = ref.unpack(ek, Ug)
        ref.residual(ek, kin, r, Triplets(pattern=pats[id(ref)]), cm.gravity)

    jk = unpack_joints(lay, te, st, U)
    Pa, Pb, Ga = cm.att_a.pose(ek, "cons"), cm.att_b.pose(ek, "cons"), cm.att_a.pose(ek, "gauss")
    Va, Vb = cm.att_a.velocity(ek), cm.att_b.velocity(ek)
    nj = cm.nj
    rj = np.zeros((nj, p, JOINT_SLOTS))
    outs = [np.empty((nj, p, 3, 3)), np.empty((nj, p, 3)), np.empty((nj, p, 3)), np.empty((nj, p, 3, 3))] \
        + [np.empty((nj, p, 6, 6)) for _ in range(3)]

    def joint_kernel():
        joint_law.joint_rows(te.E, te.D, h, st.s, st.lam, st.Rr, jk.J, Pa.x, Pa.R, Pb.x, Pb.R, Ga.R, Va.nu, Vb.nu,
                             SLOTS, rj, *outs, True)

    def joint_numpy():
        joint_rows_reference(te, h, st, jk, Pa, Pb, Ga, Va, Vb)

    fns = {"rigid numpy": rigid_numpy, "rigid kernel": rigid_kernel, "joint numpy": joint_numpy,
           "joint kernel": joint_kernel,
           "evaluation": lambda: system.evaluate(U, st, h),
           "residual only": lambda: system.evaluate(U, st, h, jacobian=False)}
    for f in fns.values():
        f()
    res = {k: [] for k in fns}
    for _ in range(repeat):  # interleaved
        for k, f in fns.items():
            res[k].append(_median_time(f, 1, inner))
    med = {k: 1e3 * float(np.median(v)) for k, v in res.items()}
    print(f"{name:>16} {lay.size:>7} {med['rigid numpy']:>9.3f} {med['rigid kernel']:>9.3f} "
          f"{med['rigid numpy'] / med['rigid kernel']:>6.1f}x {med['joint numpy']:>9.3f} {med['joint kernel']:>9.3f} "
          f"{med['joint numpy'] / med['joint kernel']:>6.1f}x {med['evaluation']:>9.3f} {med['residual only']:>9.3f}")


def main() -> int:
    print("ms per call, median of 7 interleaved repetitions")
    print(f"{'model':>16} {'unknowns':>7} {'rigid np':>9} {'rigid nb':>9} {'ratio':>7} {'joint np':>9} {'joint nb':>9} "
          f"{'ratio':>7} {'eval':>9} {'res only':>9}")
    case("pendulum p=2", flexmb_pendulum(), 2, 1e-2)
    case("15-chain p=3", flexmb_chain(15), 3, 5e-3)
    case("N=100 p=1", flexmb_chain(100), 1, 1e-3)
    case("N=1000 p=1", flexmb_chain(1000), 1, 1e-3)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
