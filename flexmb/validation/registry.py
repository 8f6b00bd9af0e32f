"""The case registry: discover the ``case_*.py`` files of a cases folder (:func:`discover_cases`),
load them (:class:`CaseSpec`) and run them (:func:`run_case`, :func:`run_cases`) into
:class:`CaseResult` values. A failure inside a case is a result, never an exception of the run."""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from flexmb.validation.metrics import Metric, format_tolerance, to_metric

__all__ = ["CaseContext", "CaseResult", "CaseSpec", "ENV_CASES_DIR", "default_cases_dir", "discover_cases",
           "run_case", "run_cases"]

logger = logging.getLogger(__name__)

#: Environment variable overriding the default cases directory.
ENV_CASES_DIR = "FLEXMB_VALIDATION_DIR"


@dataclass(frozen=True)
class CaseSpec:
    """A discovered case file.

    Attributes
    ----------
    id, title, source : str
        From the module's ``CASE`` dict (``id`` falls back to the file name when the module is broken).
    slow : bool
        Long run (minutes); still run by ``flexmb validate`` unless ids are given.
    path : Path
        The case file.
    run : callable or None
        The module's ``run(ctx)``; None when the module could not be loaded.
    load_error : str or None
        Why the module could not be loaded (the case then fails when run).
    """

    id: str
    title: str
    source: str
    slow: bool
    path: Path
    run: Callable[[CaseContext], Iterable[Any]] | None = field(default=None, repr=False, compare=False)
    load_error: str | None = None


@dataclass(frozen=True)
class CaseContext:
    """What a case's ``run(ctx)`` receives.

    Attributes
    ----------
    out_dir : Path or None
        Folder (already created) for the case's PNG figures, or None when no report is wanted.
    fast : bool
        Shorter runs for a quick check (coarser tolerances are the case's own business).
    logger : logging.Logger
        ``flexmb.validation.<id>``.
    case : CaseSpec
    """

    out_dir: Path | None
    fast: bool
    logger: logging.Logger
    case: CaseSpec


@dataclass
class CaseResult:
    """Outcome of one case.

    Attributes
    ----------
    id, title, source : str
    slow : bool
    metrics : list of Metric
    seconds : float
        Wall time of ``run(ctx)``.
    error : str or None
        ``"ExceptionType: message"`` when the case raised or could not be loaded.
    traceback : str or None
        Full traceback of ``error``.
    figures : list of Path
        PNG files found in the case's ``out_dir`` after the run.
    """

    id: str
    title: str
    source: str
    slow: bool = False
    metrics: list[Metric] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    traceback: str | None = None
    figures: list[Path] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """No error, at least one metric, and every metric passed."""
        return self.error is None and bool(self.metrics) and all(m.passed for m in self.metrics)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "slow": self.slow,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "metrics": [m.to_dict() for m in self.metrics],
            "figures": [str(p) for p in self.figures],
        }


def default_cases_dir() -> Path:
    """``$FLEXMB_VALIDATION_DIR`` if set, else the cases shipped in ``flexmb/validation/cases``."""
    env = os.environ.get(ENV_CASES_DIR)
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent / "cases"


def _natural_key(s: str) -> list[Any]:
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", s)]


@contextmanager
def _on_sys_path(directory: Path) -> Iterator[None]:
    # cases may share helper modules that sit next to them in the cases folder
    entry = str(directory)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def _load_case(path: Path) -> CaseSpec:
    fallback_id = path.stem.removeprefix("case_")
    module_name = f"_flexmb_validation_case_{path.stem}"
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module: ModuleType = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look the module up there
        with _on_sys_path(path.parent):
            spec.loader.exec_module(module)
        case = getattr(module, "CASE", None)
        if not isinstance(case, dict):
            raise ValueError(f"{path.name} must define a module-level dict CASE = dict(id=..., title=..., source=...)")
        missing = [k for k in ("id", "title", "source") if not isinstance(case.get(k), str) or not case.get(k)]
        if missing:
            raise ValueError(f"{path.name}: CASE needs non-empty strings for {missing}")
        run = getattr(module, "run", None)
        if not callable(run):
            raise ValueError(f"{path.name} must define a function run(ctx) returning a list of metrics")
        return CaseSpec(case["id"], case["title"], case["source"], bool(case.get("slow", False)), path, run)
    except Exception as exc:  # a broken case must not hide the others
        logger.warning("cannot load validation case %s: %s: %s", path, type(exc).__name__, exc, exc_info=True)
        error = f"{type(exc).__name__}: {exc}"
        return CaseSpec(fallback_id, f"(cannot load {path.name})", "", False, path, None, error)


def discover_cases(directory: str | Path | None = None) -> dict[str, CaseSpec]:
    """Import every ``case_*.py`` in ``directory`` and return the cases by id, in natural id order.

    Parameters
    ----------
    directory : str or Path, optional
        Defaults to :func:`default_cases_dir`.

    Returns
    -------
    dict of str to CaseSpec

    Raises
    ------
    ValueError
        If the directory does not exist or two files declare the same id.
    """
    directory = Path(directory) if directory is not None else default_cases_dir()
    if not directory.is_dir():
        raise ValueError(
            f"validation cases directory {str(directory)!r} does not exist; "
            f"pass --cases-dir or set {ENV_CASES_DIR}"
        )
    specs: dict[str, CaseSpec] = {}
    for path in sorted(directory.glob("case_*.py")):
        spec = _load_case(path)
        if spec.id in specs:
            raise ValueError(
                f"validation case id {spec.id!r} is declared by both {specs[spec.id].path.name} and {path.name}; "
                "give each case its own id"
            )
        specs[spec.id] = spec
    return dict(sorted(specs.items(), key=lambda kv: _natural_key(kv[0])))


def run_case(spec: CaseSpec, *, out_dir: Path | None = None, fast: bool = False) -> CaseResult:
    """Run one case; never raises for a failure inside the case (the result carries it)."""
    result = CaseResult(spec.id, spec.title, spec.source, spec.slow)
    case_logger = logging.getLogger(f"flexmb.validation.{spec.id}")
    if spec.run is None:
        result.error = spec.load_error or "case could not be loaded"
        return result
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
    ctx = CaseContext(out_dir, fast, case_logger, spec)
    logger.info("running validation case %s: %s", spec.id, spec.title)
    start = time.perf_counter()
    try:
        with _on_sys_path(spec.path.parent):
            returned = spec.run(ctx)
        if returned is None:
            raise ValueError(f"run(ctx) of {spec.path.name} returned None; return a list of metrics")
        if isinstance(returned, (dict, Metric)):
            returned = [returned]
        result.metrics = [to_metric(m) for m in returned]
        if not result.metrics:
            raise ValueError(f"run(ctx) of {spec.path.name} returned no metrics; a case must check something")
    except Exception as exc:  # noqa: BLE001 -- a failing case is a result, not a crash of the run
        result.error = f"{type(exc).__name__}: {exc}"
        result.traceback = traceback.format_exc()
        logger.error("validation case %s failed with %s\n%s", spec.id, result.error, result.traceback)
    result.seconds = time.perf_counter() - start
    if out_dir is not None:
        result.figures = sorted(out_dir.rglob("*.png"))
    for m in result.metrics:
        if not m.passed:
            logger.info("case %s: %s = %r outside tolerance (%s)", spec.id, m.name, m.value, format_tolerance(m))
    return result


def run_cases(
    ids: Sequence[str] | None = None,
    *,
    out_dir: str | Path | None = None,
    fast: bool = False,
    cases_dir: str | Path | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run validation cases and return their results in run order.

    Parameters
    ----------
    ids : sequence of str, optional
        Case ids to run, in this order (default: all, in natural id order).
    out_dir : str or Path, optional
        Report folder; each case gets ``out_dir/<id>`` as ``ctx.out_dir`` for its figures.
    fast : bool
        Passed to the cases as ``ctx.fast``.
    cases_dir : str or Path, optional
        Where the ``case_*.py`` files are (default: :func:`default_cases_dir`).
    on_result : callable, optional
        Called with each :class:`CaseResult` as soon as it is available (e.g. to print progress).

    Raises
    ------
    ValueError
        For an unknown id (the message lists the valid ids) or a bad cases directory.
    """
    specs = discover_cases(cases_dir)
    if ids is None:
        ids = list(specs)
    unknown = [i for i in ids if i not in specs]
    if unknown:
        raise ValueError(f"unknown validation case id(s) {unknown}; valid ids: {list(specs)}")
    results = []
    for case_id in ids:
        case_out = Path(out_dir) / case_id if out_dir is not None else None
        result = run_case(specs[case_id], out_dir=case_out, fast=fast)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
