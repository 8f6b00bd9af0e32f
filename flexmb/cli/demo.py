"""`flexmb demo`: run the main example (Borri et al. 15-link chain, Example 2.1) (built by
:func:`flexmb.catalog.chain15_model`) and write the results, CSV files and plots to an output folder."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def add_arguments(parser) -> None:
    parser.add_argument("--out", default="results/demo", help="output folder (default: results/demo)")
    parser.add_argument("--t-end", type=float, default=1.5, help="simulated time [s] (default 1.5)")
    parser.add_argument("--h", type=float, default=0.005, help="time-element length [s] (default 0.005)")
    parser.add_argument("-p", type=int, default=2, choices=(1, 2, 3), help="time-element order (default 2)")


def run(args) -> int:
    from flexmb.checks import number

    # bad values end here, before any output, as one line from the CLI (flexmb.cli.main)
    number("--h", args.h, "", positive=True, unit="s")
    number("--t-end", args.t_end, "", positive=True, unit="s")
    import matplotlib

    matplotlib.use("Agg")
    import flexmb as fm

    from flexmb.catalog import chain15_model

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = chain15_model()
    print(f"flexmb demo: Borri et al. 15-link chain (Example 2.1), {len(model.bodies)} bodies, "
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
