"""Flexible bodies: wall time against the step, next to Exudyn's modal body (issue 7, "Performance").

Two models, the same modal data in both programs:

1. **Spin-up** (validation case X1, Kane-Ryan-Banerjee): the X1 beam of
   :func:`flexmb.catalog.flexible.spinup_beam_data` ``("x1", 4, "bending", tip=False)`` (shipped hex20
   mesh, Craig-Bampton clamped at the root face, the 4 lowest in-plane clamped-free bending modes),
   hub angle theta(t) of case_x1 (Ws = 6 rad/s, Ts = 15 s), 20 s, no gravity, no damping.  Output:
   the extreme transverse tip deflection in the hub frame (tip-face mean through the mode shapes),
   reference -0.5739 m (Meijaard, nonlinear beam elements).
2. **Flexible slider-crank X3** (Chu-Pan/Meijaard): the model of
   :mod:`flexmb.validation.cases.case_x3` (rigid driven crank 0.1524 m at 124.8 rad/s, the rod of
   :func:`flexmb.catalog.flexible.slider_crank_rod_data` with 4 in-plane bending shapes, massless slider),
   8 rad of crank.  Output: the first maximum of the rod mid-point deflection / L, reference 0.00976.

flexmb: the default ``stiffening="full"``, several (p, h); the extreme / first maximum is read from
the order-4 dense output (``Solution.at``) every 0.01 s (spin-up) / every 2e-6 s (slider-crank), so
that large steps are not penalised by the sampling of the nodes.  Timed: the ``simulate`` call, wall
and CPU time of the process (``time.process_time``: less sensitive to other jobs on a shared machine).

Exudyn (when ``import exudyn`` works): ``ObjectFFRFreducedOrder`` (``AddObjectFFRFreducedOrder``, the
C++ body, no user functions) built by ``exudyn.FEM.ObjectFFRFreducedOrderInterface`` from an
``FEMinterface`` holding *our* mesh nodes, our assembled sparse M and K
(:mod:`flexmb.fe.elements.assembly`) and our mode shapes as its mode basis, so both programs integrate the
same modes and inertia invariants; Exudyn's body has no geometric stiffening.  The spin-up is also run
with a "stiffening user function" (a Python ``forceUserFunction`` adding ``-Omega(t)^2 Kg[wz*wz] q``,
our centrifugal unit preload stiffness scaled by the prescribed hub rate): Exudyn's correct answer.  Hub / crank driven by a
``GenericJoint`` with a rotation ``offsetUserFunction``; the rod's big end on the crank by a
``GenericJoint`` with the rotation about z free, its small end (``MarkerSuperElementPosition``, the
mean of the end-face nodes: on the axis, and exact because the Craig-Bampton face moves rigidly) held
at y = 0 by a ``SphericalJoint`` with ``constrainedAxes=[0, 1, 0]`` (the massless slider); the same 18 -
12 = 6 independent equations as flexmb's case.  Generalized-alpha (spectral radius 0.9), modified
Newton, ``EigenSparse``, fixed step, h = 1e-3 s (spin-up) and 1e-4 s (slider-crank) as in issue 7,
sensors in memory.  Timed: ``exudyn.SolveDynamic`` (after ``Assemble``); the invariants
(``ObjectFFRFreducedOrderInterface``) are not counted, like flexmb's data build.

Cross-check: flexmb with ``stiffening="none"`` is the same linear modal body as Exudyn's: the tip
deflection at t = 5 s of the spin-up and the slider-crank's first maximum must agree (printed).

Usage::

    python benchmarks/flexible.py                 # both models, ~2-4 min on 2 busy cores
    python benchmarks/flexible.py --quick         # fewer steps sizes
    python benchmarks/flexible.py --only spinup   # or crank
    python benchmarks/flexible.py --json results/flexible.json
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import flexmb as fm  # noqa: E402
from flexmb.validation.cases import case_x1, case_x3  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parent))  # exudyn_setup, also when loaded by file path
from exudyn_setup import exu, exudyn_settings  # noqa: E402  (exu is None without Exudyn)

if exu is not None:
    from exudyn.FEM import FEMinterface, ObjectFFRFreducedOrderInterface
    from exudyn.itemInterface import (GenericJoint, MarkerBodyPosition, MarkerBodyRigid, MarkerNodeRigid,
                                      MarkerSuperElementPosition, ObjectGround, SensorNode, SphericalJoint)
    from exudyn.utilities import RigidBodyInertia

#: references: X1 extreme tip deflection [m] (Meijaard), X3 first maximum / L (Meijaard)
REF_SPINUP, REF_CRANK = -0.5739, 0.00976
#: (p, h [s]) of flexmb's runs
SPINUP_STEPS = ((2, 0.02), (2, 0.05), (2, 0.1), (3, 0.1), (3, 0.2), (3, 0.4))
CRANK_STEPS = ((2, 2e-4), (2, 5e-4), (2, 1e-3), (3, 1e-3), (3, 2e-3))
QUICK_SPINUP, QUICK_CRANK = ((2, 0.05), (3, 0.2)), ((2, 2e-4), (3, 1e-3))
#: Exudyn's steps (issue 7)
EXU_SPINUP_H, EXU_CRANK_H = 1e-3, 1e-4
#: time of the spin-up cross-check [s]
T_CHECK = 5.0


# ------------------------------------------------------------------------------------------- models
def spinup_data():
    from flexmb.catalog.flexible import spinup_beam_data

    return spinup_beam_data("x1", 4, "bending", tip=False)


def tip_shape(data, length: float) -> np.ndarray:
    """Tip-face mean displacement per modal coordinate, (3, nm)."""
    tip = np.flatnonzero(np.abs(data.points[:, 0] - length) < 1e-9 * length)
    return data.mode_shapes[tip].mean(axis=0)


def crank_deflection(data, q: np.ndarray) -> np.ndarray:
    """case_x3's mid-point deflection / L from modal coordinates q (nt, nm)."""
    L = case_x3.L
    node = int(np.argmin(np.linalg.norm(data.points - [L / 2, 0.0, 0.0], axis=1)))
    mid = data.points[node] + q @ data.mode_shapes[node].T
    f = data.interface("small_end")
    end = np.asarray(f.position) + q @ np.asarray(f.modal_map)[:3].T
    return (end[:, 0] * mid[:, 1] - end[:, 1] * mid[:, 0]) / np.hypot(end[:, 0], end[:, 1]) / L


def timed(fn):
    """(fn(), wall time [s], CPU time of this process [s])."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


# ------------------------------------------------------------------------------------------- flexmb
def flexmb_spinup(data, p: int, h: float, stiffening: str = "full", t_end: float = case_x1.T_END) -> dict:
    body = fm.FlexibleBody("beam", data, stiffening=stiffening, damping=0.0)
    hub = fm.Revolute("hub", "ground", ("beam", "root"), axis=(0, 0, 1), angle=case_x1.theta)
    model = fm.Model([body], [hub])
    sol, wall, cpu = timed(lambda: fm.simulate(model, t_end, h, p=p, show_progress=False))
    te = np.linspace(0.0, t_end, int(round(t_end / 0.01)) + 1)
    v = sol.at(te).body("beam").modal @ tip_shape(data, 10.0)[1]
    k = int(np.argmin(v))
    return dict(p=p, h=h, stiffening=stiffening, wall=wall, cpu=cpu, steps=len(sol.t) - 1, extreme=float(v[k]),
                t_extreme=float(te[k]), v_end=float(v[-1]))


def flexmb_crank(data, p: int, h: float, stiffening: str = "full", angle: float = case_x3.ANGLE) -> dict:
    t_end = angle / case_x3.OMEGA_X3
    model = case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, stiffening, data)
    sol, wall, cpu = timed(lambda: fm.simulate(model, t_end, h, p=p, show_progress=False))
    te = np.linspace(0.0, t_end, int(round(t_end / 2e-6)) + 1)
    d = crank_deflection(data, sol.at(te).body("rod").modal)
    t1, d1 = case_x3.first_maximum(te, d)
    return dict(p=p, h=h, stiffening=stiffening, wall=wall, cpu=cpu, steps=len(sol.t) - 1, first_max=d1,
                angle=case_x3.OMEGA_X3 * t1)


# ------------------------------------------------------------------------------------------- Exudyn
def exudyn_body(data, mesh_file: str):
    """ObjectFFRFreducedOrderInterface from our mesh, our M and K, our mode shapes; and its build time."""
    from flexmb.catalog.flexible import MESH_DIR
    from flexmb.fe.mesh import read_mesh

    t0 = time.perf_counter()
    mesh = read_mesh(MESH_DIR / mesh_file, units="SI")
    if np.abs(mesh.points - data.points).max() > 0:
        raise RuntimeError(f"{mesh_file}: the mesh nodes are not the data's")
    return exudyn_interface(data, mesh), mesh, time.perf_counter() - t0


def exudyn_interface(data, mesh):
    """``ObjectFFRFreducedOrderInterface`` of ``mesh`` with our M, K and the data's mode shapes."""
    from flexmb.fe.elements import assembly

    fem = FEMinterface()
    fem.nodes = {"Position": np.asarray(mesh.points, dtype=float)}
    fem.massMatrix = assembly.assemble_mass(mesh).tocsr()
    fem.stiffnessMatrix = assembly.assemble_stiffness(mesh).tocsr()
    fem.modeBasis = {"matrix": data.mode_shapes.reshape(-1, data.n_modes), "type": "HCBmodes"}
    fem.eigenValues = np.asarray(data.omega2)
    return ObjectFFRFreducedOrderInterface(fem)


def exudyn_solve(mbs, settings) -> tuple[float, float, str]:
    """Run SolveDynamic; return (wall time, CPU time, '' or the failure)."""
    def solve():
        try:
            ok = exu.SolveDynamic(mbs, settings)
            return "" if ok is None or ok else "SolveDynamic returned False"
        except Exception as exc:  # Exudyn raises on a failed Newton (the diverging spin-up)
            return str(exc).splitlines()[0][:80]

    err, wall, cpu = timed(solve)
    return wall, cpu, err


def hub_rate(t: float) -> float:
    """d theta / dt of case_x1's spin-up [rad/s]."""
    Ws, Ts = case_x1.WS, case_x1.TS
    return Ws / Ts * (t - Ts / (2 * math.pi) * math.sin(2 * math.pi * t / Ts)) if t < Ts else Ws


def exudyn_spinup(data, h: float = EXU_SPINUP_H, t_end: float = case_x1.T_END, stiffening: bool = False) -> dict:
    """Exudyn's spin-up; ``stiffening``: add the centrifugal preload stiffness as a Python force user
    function, ``-Omega(t)^2 Kg[wz*wz] q`` on the modal rows (our unit preload stiffness, Omega the
    prescribed hub rate; the rigid-body rows untouched): the "stiffening user function" of issue 7."""
    from flexmb.catalog.flexible import CASES

    cms, _, build = exudyn_body(data, CASES["x1"].mesh)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    if stiffening:
        Kg, nm = np.asarray(data.preload_stiffness[2]), data.n_modes  # PRELOAD_NAMES[2] = "wz*wz"

        def centrifugal(mbs, t, item, q, q_t):
            f = np.zeros(len(q))
            f[-nm:] = -hub_rate(t) ** 2 * (Kg @ np.asarray(q[-nm:]))
            return f

        obj = cms.AddObjectFFRFreducedOrderWithUserFunctions(exu, mbs, positionRef=[0, 0, 0], UFforce=centrifugal)
    else:
        obj = cms.AddObjectFFRFreducedOrder(mbs, positionRef=[0, 0, 0])
    ground = mbs.AddObject(ObjectGround())
    m_ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    m_frame = mbs.AddMarker(MarkerNodeRigid(nodeNumber=obj["nRigidBody"]))

    def hub_angle(mbs, t, item, par):
        return [0, 0, 0, 0, 0, float(case_x1.theta(t))]

    mbs.AddObject(GenericJoint(markerNumbers=[m_ground, m_frame], constrainedAxes=[1] * 6, offsetUserFunction=hub_angle))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=obj["nGenericODE2"], storeInternal=True, writeToFile=False,
                                      outputVariableType=exu.OutputVariableType.Coordinates))
    mbs.Assemble()
    wall, cpu, err = exudyn_solve(mbs, exudyn_settings(h, t_end, 0.01))
    q = mbs.GetSensorStoredData(sensor)
    t, v = q[:, 0], q[:, 1:] @ tip_shape(data, 10.0)[1]
    k = int(np.argmin(v))
    big = np.flatnonzero(np.abs(v) > 1.0)
    return dict(h=h, wall=wall, cpu=cpu, build=build, error=err, t_reached=float(t[-1]), extreme=float(v[k]),
                t_extreme=float(t[k]), t_over_1m=float(t[big[0]]) if big.size else math.nan,
                v_check=float(np.interp(T_CHECK, t, v)))


def exudyn_crank(data, h: float = EXU_CRANK_H, angle: float = case_x3.ANGLE) -> dict:
    from flexmb.catalog.flexible import ROD

    R, L, D, RHO, OM = case_x3.R, case_x3.L, case_x3.D, case_x3.RHO, case_x3.OMEGA_X3
    cms, mesh, build = exudyn_body(data, ROD.mesh)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    mc = RHO * math.pi * D ** 2 / 4 * R  # case_x3's crank (driven: its mass does not matter)
    crank = mbs.CreateRigidBody(inertia=RigidBodyInertia(mass=mc, inertiaTensor=np.diag([mc * D ** 2 / 8, mc * R ** 2 / 12,
                                                                                        mc * R ** 2 / 12]), com=[R / 2, 0, 0]),
                                referencePosition=[0, 0, 0], initialAngularVelocity=[0, 0, OM], show=False)

    def crank_angle(mbs, t, item, par):
        return [0, 0, 0, 0, 0, OM * t]

    mbs.AddObject(GenericJoint(markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0])),
                                              mbs.AddMarker(MarkerBodyRigid(bodyNumber=crank, localPosition=[0, 0, 0]))],
                               constrainedAxes=[1] * 6, offsetUserFunction=crank_angle))
    obj = cms.AddObjectFFRFreducedOrder(mbs, positionRef=[R, 0, 0], initialVelocity=[0, OM * R, 0],
                                        initialAngularVelocity=[0, 0, -OM * R / L])
    mbs.AddObject(GenericJoint(markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=crank, localPosition=[R, 0, 0])),
                                              mbs.AddMarker(MarkerNodeRigid(nodeNumber=obj["nRigidBody"]))],
                               constrainedAxes=[1, 1, 1, 1, 1, 0]))
    end = np.asarray(mesh.node_sets["small_end"])
    m_end = mbs.AddMarker(MarkerSuperElementPosition(bodyNumber=obj["oFFRFreducedOrder"], meshNodeNumbers=end,
                                                     weightingFactors=np.full(end.size, 1.0 / end.size)))
    m_line = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[R + L, 0, 0]))
    mbs.AddObject(SphericalJoint(markerNumbers=[m_line, m_end], constrainedAxes=[0, 1, 0]))
    sensor = mbs.AddSensor(SensorNode(nodeNumber=obj["nGenericODE2"], storeInternal=True, writeToFile=False,
                                      outputVariableType=exu.OutputVariableType.Coordinates))
    mbs.Assemble()
    wall, cpu, err = exudyn_solve(mbs, exudyn_settings(h, angle / OM, h))
    q = mbs.GetSensorStoredData(sensor)
    t1, d1 = case_x3.first_maximum(q[:, 0], crank_deflection(data, q[:, 1:]))
    return dict(h=h, wall=wall, cpu=cpu, build=build, error=err, first_max=d1, angle=OM * t1)


# ------------------------------------------------------------------------------------------- report
def pct(v: float, ref: float) -> str:
    return f"{100 * (v / ref - 1):+.1f} %"


def run_spinup(quick: bool) -> dict:
    data = spinup_data()
    out = {"flexmb": [], "reference": REF_SPINUP}
    print(f"\nSpin-up X1 (4 in-plane bending modes, 20 s); reference extreme {REF_SPINUP} m")
    print(f"{'program':<28}{'p':>3}{'h [s]':>9}{'steps':>7}{'wall [s]':>10}{'CPU [s]':>9}{'extreme [m]':>13}"
          f"{'at [s]':>8}{'vs ref':>9}")
    runs = [(p, h, "full") for p, h in (QUICK_SPINUP if quick else SPINUP_STEPS)] + [(3, 0.4, "preload")]
    for p, h, stiff in runs:
        r = flexmb_spinup(data, p, h, stiff)
        out["flexmb"].append(r)
        print(f"{f'flexmb ({stiff})':<28}{p:>3}{h:>9.3g}{r['steps']:>7}{r['wall']:>10.2f}{r['cpu']:>9.2f}{r['extreme']:>13.5f}"
              f"{r['t_extreme']:>8.2f}{pct(r['extreme'], REF_SPINUP):>9}", flush=True)
    check = flexmb_spinup(data, 2, 0.02, "none", t_end=T_CHECK)
    out["flexmb_none_check"] = check
    if exu is not None:
        e = exudyn_spinup(data)
        out["exudyn"] = e
        stop = f"stopped at t = {e['t_reached']:.2f} s ({e['error']})" if e["error"] else "ran to 20 s"
        print(f"{'Exudyn (no stiffening)':<28}{'GA':>3}{e['h']:>9.3g}{int(round(e['t_reached'] / e['h'])):>7}"
              f"{e['wall']:>10.2f}{e['cpu']:>9.2f}{e['extreme']:>13.4g}{e['t_extreme']:>8.2f}{'':>9}  {stop}; |v| > 1 m at "
              f"t = {e['t_over_1m']:.2f} s")
        e2 = exudyn_spinup(data, stiffening=True)
        out["exudyn_stiffening_uf"] = e2
        print(f"{'Exudyn + stiffening UF':<28}{'GA':>3}{e2['h']:>9.3g}{int(round(e2['t_reached'] / e2['h'])):>7}"
              f"{e2['wall']:>10.2f}{e2['cpu']:>9.2f}{e2['extreme']:>13.5f}{e2['t_extreme']:>8.2f}"
              f"{pct(e2['extreme'], REF_SPINUP):>9}  {e2['error']}")
        print(f"cross-check, tip deflection at t = {T_CHECK} s without stiffening: flexmb (p = 2, h = 0.02) "
              f"{check['v_end']:.5f} m, Exudyn {e['v_check']:.5f} m")
    return out


def run_crank(quick: bool) -> dict:
    data = case_x3.rod_data()
    out = {"flexmb": [], "reference": REF_CRANK}
    print(f"\nSlider-crank X3 (124.8 rad/s, 8 rad); reference first maximum {REF_CRANK}")
    print(f"{'program':<28}{'p':>3}{'h [s]':>9}{'steps':>7}{'wall [s]':>10}{'CPU [s]':>9}{'first max':>11}{'vs ref':>9}")
    for p, h in QUICK_CRANK if quick else CRANK_STEPS:
        try:
            r = flexmb_crank(data, p, h)
        except fm.ConvergenceError as exc:  # a step too large for the stiff axial shape: say so, go on
            print(f"{'flexmb (full)':<28}{p:>3}{h:>9.3g}  Newton failed at t = {exc.time:.4g} s "
                  f"(crank angle {case_x3.OMEGA_X3 * exc.time:.2f} rad)", flush=True)
            out["flexmb"].append(dict(p=p, h=h, failed_at=float(exc.time)))
            continue
        out["flexmb"].append(r)
        print(f"{'flexmb (full)':<28}{p:>3}{h:>9.3g}{r['steps']:>7}{r['wall']:>10.2f}{r['cpu']:>9.2f}{r['first_max']:>11.5f}"
              f"{pct(r['first_max'], REF_CRANK):>9}", flush=True)
    lin = flexmb_crank(data, 2, 2e-4, "none")
    out["flexmb_none_check"] = lin
    print(f"{'flexmb (none)':<28}{2:>3}{2e-4:>9.3g}{lin['steps']:>7}{lin['wall']:>10.2f}{lin['cpu']:>9.2f}{lin['first_max']:>11.5f}"
          f"{pct(lin['first_max'], REF_CRANK):>9}", flush=True)
    if exu is not None:
        e = exudyn_crank(data)
        out["exudyn"] = e
        print(f"{'Exudyn (no stiffening)':<28}{'GA':>3}{e['h']:>9.3g}{int(round(case_x3.ANGLE / case_x3.OMEGA_X3 / e['h'])):>7}"
              f"{e['wall']:>10.2f}{e['cpu']:>9.2f}{e['first_max']:>11.5f}{pct(e['first_max'], REF_CRANK):>9}  {e['error']}")
    return out


def profile_crank(p: int = 2, h: float = 1e-3, top: int = 20) -> None:
    """cProfile of one flexmb slider-crank run (X3, "full"): the ``top`` items by own time and the
    number of evaluations of the time element (each one residual + Jacobian)."""
    import cProfile
    import pstats

    from flexmb.dynamics import simulate as sim

    systems = []
    init = sim.ElementSystem.__init__

    def counting_init(self, *a, **k):
        init(self, *a, **k)
        systems.append(self)

    data = case_x3.rod_data()
    sim.ElementSystem.__init__ = counting_init
    prof = cProfile.Profile()
    try:
        prof.enable()
        flexmb_crank(data, p, h)
        prof.disable()
    finally:
        sim.ElementSystem.__init__ = init
    n_eval = sum(s.n_eval for s in systems)
    print(f"\nProfile: slider-crank X3, p = {p}, h = {h:g}: {n_eval} evaluations, "
          f"{pstats.Stats(prof).total_calls / max(n_eval, 1):.0f} Python calls per evaluation")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two step sizes per model")
    ap.add_argument("--only", choices=("spinup", "crank"), help="run one model")
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    ap.add_argument("--profile", action="store_true", help="cProfile one slider-crank run (p = 2, h = 1e-3) and exit")
    args = ap.parse_args(argv)
    if args.profile:
        profile_crank()
        return 0
    print(f"flexmb {getattr(fm, '__version__', '?')}, Exudyn {exu.__version__ if exu else 'not installed'}, "
          f"Python {platform.python_version()}, {platform.machine()}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    if exu is None:
        print("exudyn is not importable: flexmb figures only (pip install exudyn)")
    res = {}
    if args.only in (None, "spinup"):
        res["spinup"] = run_spinup(args.quick)
    if args.only in (None, "crank"):
        res["crank"] = run_crank(args.quick)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n")
        print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
