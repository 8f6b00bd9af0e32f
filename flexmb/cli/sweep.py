"""`flexmb sweep STUDY.py`: run a parameter study defined in a Python file, on this machine or on a
dask cluster; store the results (resumable), print a summary table, plot each output against the
first swept parameter.

The study file defines ``build(**params)`` (a Model, or ``(model, simulate_kwargs)``) and
``outputs(solution, **params)`` (a dict of scalars); optionally ``parameters`` (the default grid,
when no ``--grid``/``--table`` is given), ``simulate_kwargs`` (simulate defaults) and ``shared``
(a dict of inputs computed once and sent to every worker).
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path


def add_arguments(parser) -> None:
    parser.add_argument("study", help="Python file defining build(**params) and outputs(solution, **params)")
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=SPEC",
                        help='a swept parameter: "omega=100:150:6" (6 values), "eps=1e-3:1e-1:3:log" or '
                             '"m=0,0.0378"; several --grid make a full factorial (first slowest)')
    parser.add_argument("--table", metavar="FILE", help="parameter sets as rows of a .csv or .parquet table")
    parser.add_argument("--out", metavar="STORE", help="Parquet results directory; an existing one is resumed "
                                                       "(default: results/<study>.parquet)")
    parser.add_argument("--scheduler", default="local", metavar="ADDRESS",
                        help="'local' (default: a cluster of worker processes on this machine), 'sync' (serial, "
                             "in this process) or a dask scheduler address such as tcp://host:8786")
    parser.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: one per core); "
                                                                  "with an address: wait for N workers")
    parser.add_argument("--retries", type=int, default=0, metavar="N", help="further attempts of a failed run")
    parser.add_argument("--rerun-failed", action="store_true", help="recompute runs stored as failed")
    parser.add_argument("--if-changed", choices=("error", "recompute", "keep"), default="error",
                        help="when the store holds runs of another version of the study (other build or outputs "
                             "code, simulate_kwargs, shared inputs, flexmb version): stop with an error saying what "
                             "changed (default), recompute those runs, or keep their rows")
    parser.add_argument("--plot", metavar="PNG", help="plot file (default: the store path with .png)")
    parser.add_argument("--no-plot", action="store_true", help="write no plot")


def load_study(path: str | Path):
    """Import the study file as a module (registered in ``sys.modules``, so that its functions and
    classes pickle; :func:`flexmb.sweep` sends them to the workers by value)."""
    from flexmb.errors import ModelError

    path = Path(path)
    if path.is_dir():
        raise ModelError(f"study file {path} is a directory; give a Python file that defines build and outputs")
    if not path.is_file():
        raise ModelError(f"study file {path} not found; give a Python file that defines build and outputs")
    name = f"flexmb_study_{path.stem}_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"study file {path} is not a Python file (name it *.py)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ModelError(f"study file {path} raised {type(exc).__name__}: {exc}") from exc
    for required in ("build", "outputs"):
        if not callable(getattr(module, required, None)):
            raise ModelError(f"study file {path} defines no function {required!r}; define build(**params) -> Model "
                             f"(or (model, simulate_kwargs)) and outputs(solution, **params) -> dict")
    return module


def _parameters(args, module):
    from flexmb.errors import ModelError
    from flexmb.studies.parameters import parse_grid_option

    if args.grid and args.table:
        raise ModelError("give either --grid options or --table, not both")
    if args.grid:
        grid = {}
        for text in args.grid:
            name, values = parse_grid_option(text)
            if name in grid:
                raise ModelError(f"--grid {text!r}: {name!r} is given twice")
            grid[name] = values
        return grid
    if args.table:
        return _table(Path(args.table))
    if getattr(module, "parameters", None) is not None:
        return module.parameters
    raise ModelError(f"no parameters: give --grid NAME=SPEC (e.g. --grid \"omega=100:150:6\"), --table FILE, or "
                     f"define `parameters` in {args.study}")


def _table(table: Path):
    """The parameter sets of ``--table FILE`` (.csv or .parquet) as a DataFrame."""
    from flexmb.errors import ModelError
    from flexmb.studies.deps import require

    pd = require("pandas", "flexmb sweep --table")
    if table.suffix.lower() not in (".csv", ".parquet"):
        raise ModelError(f"--table {table}: give a .csv or .parquet file (one parameter set per row, one column per "
                         f"parameter)")
    if not table.is_file():
        raise ModelError(f"--table {table}: file not found; give a .csv or .parquet file of parameter sets")
    try:
        df = pd.read_parquet(table) if table.suffix.lower() == ".parquet" else pd.read_csv(table)
    except Exception as exc:
        raise ModelError(f"--table {table}: cannot be read ({type(exc).__name__}: {exc}); give a .csv with a header "
                         f"row of parameter names, or a .parquet table") from None
    if df.empty:
        raise ModelError(f"--table {table}: no rows; give one parameter set per row under a header of parameter names")
    return df


#: --scheduler values that run serially in this process
_SYNC = ("sync", "serial", "none")


def _check_options(args) -> None:
    """The options that sweep() cannot name as the command line does."""
    from flexmb.errors import ModelError

    if args.workers is not None and args.workers < 1:
        raise ModelError(f"--workers {args.workers}: give 1 or more worker processes")
    if args.retries < 0:
        raise ModelError(f"--retries {args.retries}: give 0 or more further attempts")
    sync = args.scheduler in _SYNC
    if args.workers is not None and sync:
        raise ModelError(f"--workers {args.workers} with --scheduler {args.scheduler}: a serial sweep runs in this "
                         f"process; drop --workers, or use --scheduler local")
    if not (sync or args.scheduler == "local" or ":" in args.scheduler):
        raise ModelError(f"--scheduler {args.scheduler}: give local (worker processes on this machine), sync (serial) "
                         f"or a scheduler address such as tcp://host:8786")
    if args.plot and not args.no_plot:
        png = Path(args.plot)
        if png.is_dir() or png.suffix.lower() not in (".png", ".pdf", ".svg", ".jpg"):
            raise ModelError(f"--plot {png}: give an image file name ending in .png, .pdf, .svg or .jpg")


def run(args) -> int:
    from flexmb.studies import sweep

    _check_options(args)
    module = load_study(args.study)
    parameters = _parameters(args, module)
    out = Path(args.out) if args.out else Path("results") / f"{Path(args.study).stem}.parquet"
    scheduler = None if args.scheduler in _SYNC else args.scheduler
    df = sweep(module.build, parameters, module.outputs, simulate_kwargs=getattr(module, "simulate_kwargs", None),
               shared=getattr(module, "shared", None), store=out, scheduler=scheduler, workers=args.workers,
               retries=args.retries, rerun_failed=args.rerun_failed, if_changed=args.if_changed)
    info = df.attrs["sweep"]
    names = [c for c in df.columns if c in _parameter_names(parameters, df)]
    print(summary(df, names))
    n_failed = info["failed"]
    print(f"{len(df)} runs: {len(df) - n_failed} ok, {n_failed} failed ({info['from_store']} from the store, "
          f"{info['computed']} computed on {info['workers']} worker(s) in {info['wall_time']:.1f} s)")
    print(f"results: {out}")
    if not args.no_plot:
        png = Path(args.plot) if args.plot else out.with_suffix(".png")
        written = plot(df, names, png)
        print(f"plot:    {written}" if written else "plot:    none (no numeric output, or matplotlib not installed: "
                                                   "pip install 'flexmb[plot]')")
    return 1 if n_failed else 0


def _parameter_names(parameters, df) -> list[str]:
    from flexmb.studies.parameters import parameter_sets

    return list(dict.fromkeys(n for s in parameter_sets(parameters) for n in s))


def _scalar_outputs(df, names: list[str]) -> list[str]:
    from flexmb.studies.task import RUN_COLUMNS

    cols = [c for c in df.columns if c not in names and c not in RUN_COLUMNS]
    return [c for c in cols if df[c].dtype.kind in "fiub"]


def summary(df, names: list[str], max_rows: int = 40) -> str:
    """The parameters, scalar outputs, status and wall time of each run as text (head and tail when
    longer than ``max_rows``); failed runs show their error class."""
    cols = [*names, *_scalar_outputs(df, names), "status", "error", "wall_time"]
    table = df[cols].copy()
    if not (table["status"] != "ok").any():
        table = table.drop(columns="error")
    if len(table) > max_rows:
        half = max_rows // 2
        return (table.head(half).to_string(index=False) + f"\n... {len(table) - 2 * half} more rows ...\n"
                + table.tail(half).to_string(index=False, header=False))
    return table.to_string(index=False)


def plot(df, names: list[str], path: Path) -> Path | None:
    """Each numeric output against the first swept parameter, one line per combination of the other
    parameters; None when there is nothing to plot or matplotlib is missing."""
    outs = _scalar_outputs(df, names)
    if not names or not outs:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    x, others = names[0], names[1:]
    ok = df[df["status"] == "ok"]
    fig, axes = plt.subplots(len(outs), 1, figsize=(6.4, 2.6 * len(outs)), sharex=True, squeeze=False)
    groups = ok.groupby(others, dropna=False, sort=False) if others else [((), ok)]
    for ax, name in zip(axes[:, 0], outs):
        for label, g in groups:
            label = label if isinstance(label, tuple) else (label,)
            g = g.sort_values(x)
            ax.plot(g[x], g[name], "o-", label=", ".join(f"{n}={v:g}" if isinstance(v, float) else f"{n}={v}"
                                                            for n, v in zip(others, label)) or None)
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
        if others:
            ax.legend(fontsize="small")
    axes[-1, 0].set_xlabel(x)
    xs = ok[x].to_numpy(dtype=float) if ok[x].dtype.kind in "fiu" else None
    if xs is not None and xs.size and xs.min() > 0 and xs.max() >= 20 * xs.min():
        axes[-1, 0].set_xscale("log")  # a log range
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
