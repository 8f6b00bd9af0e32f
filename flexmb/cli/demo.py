"""`flexmb demo`: run a main example and write its results, plots and ParaView files to an output folder.

* ``flexmb demo`` (or ``flexmb demo slider-crank``): the flexible slider-crank of validation case
  X3: the connecting rod meshed from the shipped ``x3_rod_hex20.inp`` (hexahedron20), its
  Craig-Bampton modes computed, three crank revolutions at 124.8 rad/s simulated, the rod's
  mid-point deflection plotted against the crank angle, and the deformed rod written for ParaView.
* ``flexmb demo chain``: the Borri et al. 15-link chain falling on its hinges (Example 2.1)
  (built by :func:`flexmb.catalog.rigid.chain15_model`).

The command prints (the library only logs) what it did and where everything went, with units.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

#: demo name -> (default h [s], default t_end [s], default p)
DEFAULTS = {"slider-crank": (1e-3, 3 * 2 * math.pi / 124.8, 3), "chain": (0.005, 1.5, 2)}
#: the slider-crank's default run (p = 3, h = 1e-3, 152 elements) against h = 2e-4 (p = 2, 756 elements),
#: measured 2026-11-29 (benchmarks/README.md, "make demo"): the largest difference of the mid-point
#: deflection curves over the 3 revolutions, relative to the largest deflection; the first maxima
ACCURACY = dict(curve=0.0030, first_max=0.009722, first_max_fine=0.009721)
#: samples of the dense output per time element (the plotted curve and the first maximum)
SAMPLES = 50


def add_arguments(parser) -> None:
    parser.add_argument("case", nargs="?", default="slider-crank", choices=sorted(DEFAULTS),
                        help="slider-crank (default): flexible slider-crank (X3) from a shipped mesh; "
                             "chain: Borri et al. 15-link chain (rigid)")
    parser.add_argument("--out", default="results/demo", help="output folder (default: results/demo)")
    parser.add_argument("--t-end", type=float, default=None,
                        help="simulated time [s] (default: 3 crank revolutions, 0.151 s; chain 1.5 s)")
    parser.add_argument("--h", type=float, default=None,
                        help="time-element length [s] (default 1e-3; chain 0.005)")
    parser.add_argument("-p", type=int, default=None, choices=(1, 2, 3),
                        help="time-element order (default 3; chain 2)")
    parser.add_argument("--every", type=int, default=2, help="slider-crank: write every k-th time to ParaView (default 2)")
    parser.add_argument("--scale", type=float, default=10.0,
                        help="slider-crank: displacement magnification of the ParaView meshes (default 10)")


def run(args) -> int:
    from flexmb.model.checks import number

    h0, t0, p0 = DEFAULTS[args.case]
    args.defaults = args.h is None and args.p is None
    args.p = p0 if args.p is None else args.p
    # bad values end here, before any output, as one line from the CLI (flexmb.cli.main)
    args.h = h0 if args.h is None else number("--h", args.h, "", positive=True, unit="s")
    args.t_end = t0 if args.t_end is None else number("--t-end", args.t_end, "", positive=True, unit="s")
    args.every = int(number("--every", args.every, "", integer=True, minimum=1))
    args.scale = number("--scale", args.scale, "", unit="")
    import matplotlib

    matplotlib.use("Agg")
    return _chain(args) if args.case == "chain" else _slider_crank(args)


def _slider_crank(args) -> int:
    import flexmb as fm
    from flexmb.catalog.flexible import MESH_DIR, ROD, slider_crank_rod_data
    from flexmb.validation.cases import case_x3 as x3

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    mesh_file = MESH_DIR / ROD.mesh
    omega = x3.OMEGA_X3
    print(f"flexmb demo: flexible slider-crank (validation case X3), crank {x3.R} m driven at {omega} rad/s, "
          f"elastic steel rod L = {x3.L} m, d = {1e3 * x3.D:.2f} mm")
    # mesh -> modes: Craig-Bampton body, floating frame at the big end, 4 in-plane bending shapes
    # and the axial shape (it carries the axial force into the stiffening: the validated model)
    t1 = time.perf_counter()
    data = slider_crank_rod_data(4, "bending+axial", cache=False)
    t_modes = time.perf_counter() - t1
    cells = ", ".join(f"{len(c)} {t}" for t, c in data.cells.items())
    print(f"  mesh {mesh_file} : {data.n_nodes} nodes, {cells}; mass {data.mass:.6f} kg")
    print(f"  modes ({t_modes:.1f} s): {data.n_modes} in-plane shapes (bending + axial), frequencies "
          + ", ".join(f"{f:.1f}" for f in data.frequencies) + " Hz (big end clamped)")
    data_file = data.save(out / "x3_rod.npz")
    modes_pvd = data.to_vtu(out / "rod_modes")
    model = x3.slider_crank(omega, 0.0, "full", data)
    n_rev = args.t_end * omega / (2 * math.pi)
    print(f"  simulating t = 0 .. {args.t_end:.4g} s ({n_rev:.2f} crank revolutions), h = {args.h:g} s, p = {args.p}")
    t1 = time.perf_counter()
    sol = fm.simulate(model, args.t_end, args.h, p=args.p, show_progress=None)
    wall = time.perf_counter() - t1
    halved = int(np.count_nonzero(sol.stats["retries"]))
    print(f"  {sol.stats['h'].size} time elements in {wall:.1f} s, mean Newton iterations "
          f"{sol.stats['iterations'].mean():.2f}"
          + (f"; {halved} elements halved (a Newton failure or a refused root re-solved in halves)" if halved else ""))
    # the curve from the order-4 dense output between the nodes (SAMPLES per element), not the nodes alone
    # (at h = 1e-3 the nodes are 0.125 rad of crank apart: the node values miss the first maximum by 2 %)
    t, d = _dense_deflection(sol, data, x3, np.linspace(sol.t[0], sol.t[-1], SAMPLES * sol.stats["h"].size + 1))
    angle = omega * t
    t_max, d_max = x3.first_maximum(t, d)
    k = int(np.searchsorted(t, t_max))
    if 0 < k < t.size - 1:  # refined between the neighbouring samples
        tf, df = _dense_deflection(sol, data, x3, np.linspace(t[k - 1], t[k + 1], 201))
        j = int(np.argmax(df))
        t_max, d_max = tf[j], df[j]
    print(f"  rod mid-point deflection / L: first maximum {d_max:.6f} at crank angle {omega * t_max:.3f} rad "
          f"(Meijaard's nonlinear beams {x3.REF_X3}, a linear modal rod {x3.LINEAR_X3}: see `flexmb validate X3`); "
          f"largest |deflection| {1e3 * np.abs(d).max() * x3.L:.3f} mm")
    if args.defaults:
        print(f"  accuracy of the default step (p = 3, h = 1e-3) against h = 2e-4 (p = 2, 756 elements): first maximum "
              f"{ACCURACY['first_max']} vs {ACCURACY['first_max_fine']}, the deflection curve within "
              f"{100 * ACCURACY['curve']:.1f} % of its largest value over the 3 revolutions (benchmarks/README.md)")
    rod = sol.body("rod")
    U = rod.elastic_energy
    print(f"  rod elastic energy: max {1e3 * U.max():.3f} mJ; slider at x = {sol.body('slider').position[-1, 0]:.4f} m "
          f"at the end")
    npz = sol.save(out / "slider_crank.npz")
    png = out / "midpoint_deflection.png"
    _plot_deflection(png, angle, d, x3.REF_X3, omega)
    t1 = time.perf_counter()
    pvd = sol.to_paraview(out / "paraview", every=args.every, scale=args.scale, stem="slider_crank")
    n_files = sum(1 for _ in pvd.parent.glob("*.vtu"))
    print(f"  ParaView files in {time.perf_counter() - t1:.1f} s")
    print(f"results:  {npz} (flexmb.Solution.load; sol.attach(model) for the rod's mesh outputs)")
    print(f"rod data: {data_file} (FlexibleBodyData: modes, invariants, stresses, mesh); mode shapes {modes_pvd}")
    print(f"plot:     {png} (mid-point deflection / L vs crank angle [rad])")
    print(f"ParaView: {pvd} ({n_files} .vtu files: rod mesh deformed x{args.scale:g}, point data displacement [m], "
          f"von_mises [Pa]; crank and slider as axis triads)")
    print(f"total {time.perf_counter() - start:.1f} s")
    return 0


def _dense_deflection(sol, data, x3, times):
    """``(times, mid-point deflection / L)`` of the X3 rod from the dense output at ``times`` [s]."""
    times = np.clip(times, sol.t[0], sol.t[-1])
    return times, x3.midpoint_deflection(sol.at(times), data)


def _plot_deflection(path: Path, angle, d, reference: float, omega: float) -> None:
    from matplotlib.figure import Figure

    ax = Figure(figsize=(7, 4), layout="constrained").subplots()
    ax.plot(angle, d, label="flexmb, stiffening='full'")
    ax.axhline(reference, color="k", lw=0.8, ls="--", label=f"Meijaard, first maximum {reference}")
    ax.set_xlabel("crank angle [rad]")
    ax.set_ylabel("rod mid-point deflection / L")
    ax.set_title(f"flexible slider-crank, {omega} rad/s")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.figure.savefig(path, dpi=120)


def _chain(args) -> int:
    import flexmb as fm

    from flexmb.catalog.rigid import chain15_model

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = chain15_model()
    print(f"flexmb demo chain: Borri et al. 15-link chain (Example 2.1), {len(model.bodies)} bodies, "
          f"{len(model.joints)} joints, t = 0 .. {args.t_end} s, h = {args.h} s, p = {args.p}")
    t0 = time.perf_counter()
    sol = fm.simulate(model, args.t_end, args.h, p=args.p, show_progress=None)
    wall = time.perf_counter() - t0
    npz = sol.save(out / "chain15.npz")
    csv = sol.to_csv(out / "csv")
    plots = {"z_bars_2_8_13.png": dict(quantity="position", bodies=["bar2", "bar8", "bar13"], components="z"),
             "joint8_reaction.png": dict(quantity="joint_force_norm", joints=["P8"]),
             "energy.png": dict(quantity="energy")}
    for name, kw in plots.items():
        sol.plot(kw.pop("quantity"), path=out / name, **kw)
    E = sol.total_energy
    f8 = np.linalg.norm(sol.joint("P8").force, axis=1)
    print(f"  {sol.stats['h'].size} time elements in {wall:.1f} s, mean Newton iterations "
          f"{sol.stats['iterations'].mean():.2f}, unknowns per element {sol.meta['unknowns_internal']} internal + "
          f"{sol.meta['unknowns_end']} end values")
    print(f"  energy error max |E - E0| = {np.abs(E - E[0]).max():.3e} (scale {np.abs(sol.potential_energy).max():.3e})")
    print(f"  joint 8 reaction: peak {f8.max():.3g}, median {np.median(f8):.3g} (impulsive recall of the links)")
    print(f"results: {npz}")
    print(f"CSV:     {Path(csv['bodies']).parent}")
    print("plots:   " + ", ".join(str(out / name) for name in plots))
    return 0
