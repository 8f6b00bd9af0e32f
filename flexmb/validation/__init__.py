"""Validation harness: discover benchmark cases, run them, judge their metrics, write tables and reports.

A case is a Python file ``flexmb/validation/cases/case_*.py`` that defines, at module level::

    CASE = dict(id="R1", title="IFToMM A01 simple pendulum",
                source="full citation of the reference values", slow=False)

    def run(ctx):
        # ctx.out_dir: pathlib.Path for PNG figures, or None; ctx.fast: bool; ctx.logger
        return [dict(name="P(0.5 s) x", value=x, reference=-0.391049, tolerance=1e-3, kind="abs")]

``run`` returns :class:`Metric` objects or dicts with the same fields. How a metric passes:

====== ===========================================================================
kind   passes when
====== ===========================================================================
rel    ``|value - reference| <= tolerance * |reference|``
abs    ``|value - reference| <= tolerance``
max    ``value <= tolerance`` (``reference`` is for information and may be None)
min    ``value >= tolerance`` (``reference`` is for information and may be None)
bool   ``value`` is truthy
====== ===========================================================================

A NaN value fails. A case that raises, or returns no metrics, fails with the error in its result;
the run goes on with the next case.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import logging
import math
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

__all__ = [
    "KINDS", "Metric", "CaseSpec", "CaseContext", "CaseResult", "default_cases_dir", "discover_cases",
    "run_cases", "results_to_json", "write_json", "format_table", "markdown_table", "write_report",
    "update_readme", "readme_paths", "MARKER_START", "MARKER_END",
]

logger = logging.getLogger(__name__)

#: Metric kinds and what "passed" means for each (see the module docstring).
KINDS: tuple[str, ...] = ("rel", "abs", "max", "min", "bool")

MARKER_START = "<!-- validation-table:start -->"
MARKER_END = "<!-- validation-table:end -->"

#: Environment variable overriding the default cases directory.
ENV_CASES_DIR = "FLEXMB_VALIDATION_DIR"


# ---------------------------------------------------------------------------------------------- metrics
def _as_number(value: Any) -> float | None:
    if value is None:
        return None
    return float(value)


@dataclass(frozen=True)
class Metric:
    """One checked quantity of a validation case.

    Parameters
    ----------
    name : str
        What is measured, with its unit when useful, e.g. ``"P(0.5 s) x [m]"``.
    value : float or bool
        Obtained value. ``None`` or NaN fails.
    reference : float, optional
        Published or exact value; required for kinds ``"rel"`` and ``"abs"``.
    tolerance : float, optional
        Allowed deviation (``"rel"``, ``"abs"``) or bound (``"max"``, ``"min"``); unused for ``"bool"``.
    kind : {"rel", "abs", "max", "min", "bool"}
        How ``passed`` is decided (module docstring).
    """

    name: str
    value: Any
    reference: float | None = None
    tolerance: float | None = None
    kind: str = "rel"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"metric `name` must be a non-empty string, got {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(f"metric {self.name!r}: `kind` = {self.kind!r} is not one of {list(KINDS)}")
        try:
            if self.kind == "bool":
                value = _bool_or_nan(self.value)
            else:
                value = math.nan if self.value is None else float(self.value)
            reference = _as_number(self.reference)
            tolerance = _as_number(self.tolerance)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"metric {self.name!r}: value, reference and tolerance must be scalars "
                f"(got value={self.value!r}, reference={self.reference!r}, tolerance={self.tolerance!r}): {exc}"
            ) from None
        if self.kind in ("max", "min") and tolerance is None:
            raise ValueError(f"metric {self.name!r} of kind {self.kind!r} needs a bound in `tolerance`, got None")
        if self.kind in ("rel", "abs") and (tolerance is None or not tolerance >= 0):
            raise ValueError(
                f"metric {self.name!r} of kind {self.kind!r} needs a tolerance >= 0, got {self.tolerance!r}"
            )
        if self.kind in ("rel", "abs") and (reference is None or math.isnan(reference)):
            raise ValueError(
                f"metric {self.name!r} of kind {self.kind!r} needs a reference value, got {self.reference!r}"
            )
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "reference", reference)
        object.__setattr__(self, "tolerance", tolerance)

    @property
    def passed(self) -> bool:
        """Whether the value meets the tolerance (NaN never does)."""
        v, ref, tol = self.value, self.reference, self.tolerance
        if self.kind == "bool":
            return v is not None and not (isinstance(v, float) and math.isnan(v)) and bool(v)
        if math.isnan(v):
            return False
        if self.kind == "rel":
            return abs(v - ref) <= tol * abs(ref)
        if self.kind == "abs":
            return abs(v - ref) <= tol
        if self.kind == "max":
            return v <= tol
        return v >= tol  # min

    @property
    def error(self) -> float | None:
        """``|value - reference|`` (``/|reference|`` for kind "rel"), or None when not defined."""
        if self.kind == "bool" or self.reference is None:
            return None
        d = abs(self.value - self.reference)
        if self.kind == "rel":
            return d / abs(self.reference) if self.reference != 0 else (0.0 if d == 0 else math.inf)
        return d

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; NaN and infinities become ``None`` (strict JSON)."""
        return {
            "name": self.name,
            "value": _json_number(self.value),
            "reference": _json_number(self.reference),
            "tolerance": _json_number(self.tolerance),
            "kind": self.kind,
            "passed": self.passed,
        }


def _bool_or_nan(value: Any) -> Any:
    # numpy bools and 0-d arrays become Python bools; None and NaN stay as they are so that they fail
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isnan(value):
        return value
    if hasattr(value, "item") and getattr(value, "size", 1) == 1:
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return value
    if hasattr(value, "__len__") and not isinstance(value, str):
        raise ValueError("a bool metric needs a scalar value, got a sequence; use all(...) or any(...)")
    return bool(value)


def _json_number(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _to_metric(obj: Any) -> Metric:
    if isinstance(obj, Metric):
        return obj
    if isinstance(obj, dict):
        unknown = set(obj) - {"name", "value", "reference", "tolerance", "kind"}
        if unknown:
            raise ValueError(
                f"metric dict {obj.get('name')!r} has unknown keys {sorted(unknown)}; "
                "allowed: name, value, reference, tolerance, kind"
            )
        return Metric(**obj)
    raise TypeError(f"a case must return Metric objects or dicts, got {type(obj).__name__}: {obj!r}")


# ---------------------------------------------------------------------------------------------- cases
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
    import flexmb

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
    case_logger = logging.getLogger(f"{__name__}.{spec.id}")
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
        result.metrics = [_to_metric(m) for m in returned]
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
            logger.info("case %s: %s = %r outside tolerance (%s)", spec.id, m.name, m.value, _fmt_tol(m))
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


# ---------------------------------------------------------------------------------------------- output
def _fmt(x: Any, digits: int = 6) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        if x == 0:
            return "0"
        if 1e-3 <= abs(x) < 1e6:
            return f"{x:.{digits}g}"
        return f"{x:.{digits - 1}e}"
    return str(x)


def _digits(m: Metric) -> int:
    """Significant digits that resolve the tolerance (two more than it needs), between 6 and 12."""
    tol = m.tolerance
    if m.kind == "rel" and tol:
        need = -math.log10(tol)
    elif m.kind == "abs" and tol:
        finite = [abs(v) for v in (m.value, m.reference) if isinstance(v, float) and math.isfinite(v)]
        scale = max(finite, default=0.0)
        if not scale:
            return 6
        need = math.log10(scale / tol)
    else:
        return 6
    return int(min(12, max(6, math.ceil(need) + 2)))


def _fmt_tol(m: Metric) -> str:
    t = m.tolerance
    if m.kind == "bool":
        return "is true"
    ts = f"{t:.3g}"
    return {"rel": f"rel {ts}", "abs": f"abs {ts}", "max": f"<= {ts}", "min": f">= {ts}"}[m.kind]


def _rows(results: Sequence[CaseResult]) -> list[list[str]]:
    rows = []
    for r in results:
        if r.error is not None:
            rows.append([r.id, "(error)", r.error.splitlines()[0] if r.error else "", "-", "-", "FAIL"])
        for m in r.metrics:
            d = _digits(m)
            verdict = "pass" if m.passed else "FAIL"
            rows.append([r.id, m.name, _fmt(m.value, d), _fmt(m.reference, d), _fmt_tol(m), verdict])
        if r.error is None and not r.metrics:
            rows.append([r.id, "(no metrics)", "-", "-", "-", "FAIL"])
    return rows


_HEADER = ["case", "quantity", "obtained", "reference", "tolerance", "pass"]


def format_table(results: Sequence[CaseResult], *, max_width: int = 60) -> str:
    """Plain-text table (case, quantity, obtained, reference, tolerance, pass) for a terminal."""
    rows = [[c if len(c) <= max_width else c[: max_width - 3] + "..." for c in row] for row in _rows(results)]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    numeric = {2, 3}

    def line(cells: list[str]) -> str:
        padded = (c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(padded).rstrip()

    out = [line(_HEADER), line(["-" * w for w in widths])]
    out += [line(row) for row in rows]
    return "\n".join(out)


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown_table(results: Sequence[CaseResult]) -> str:
    """Markdown table (case, quantity, obtained, reference, tolerance, pass); failures in bold."""
    lines = ["| " + " | ".join(_HEADER) + " |", "|---|---|---:|---:|---|---|"]
    for row in _rows(results):
        cells = [_md_cell(c) for c in row]
        if cells[-1] == "FAIL":
            cells[-1] = "**FAIL**"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _summary(results: Sequence[CaseResult]) -> str:
    n_pass = sum(r.passed for r in results)
    return f"{n_pass} of {len(results)} cases passed"


def _version() -> str:
    import flexmb

    return getattr(flexmb, "__version__", "unknown")


def results_to_json(results: Sequence[CaseResult], *, fast: bool = False) -> dict[str, Any]:
    """The ``--json`` document: ``{"cases": [{"id", "passed", "metrics": [...], ...}], ...}``."""
    return {
        "cases": [r.to_dict() for r in results],
        "passed": all(r.passed for r in results),
        "fast": fast,
        "flexmb_version": _version(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def write_json(results: Sequence[CaseResult], path: str | Path, *, fast: bool = False) -> Path:
    """Write :func:`results_to_json` to ``path`` (strict JSON: NaN is written as null)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results_to_json(results, fast=fast), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def write_report(results: Sequence[CaseResult], directory: str | Path, *, fast: bool = False) -> Path:
    """Write ``directory/report.md``: summary table, then per case its source, metrics, errors and figures.

    Figures are linked relative to the report, so the folder can be moved as a whole.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    parts = [
        "# flexmb validation report",
        "",
        f"{now}, flexmb {_version()}{', fast mode' if fast else ''}: **{_summary(results)}**.",
        "",
        markdown_table(results),
        "",
    ]
    for r in results:
        parts += [f"## {r.id}: {r.title} ({'passed' if r.passed else 'FAILED'})", ""]
        parts += [f"Source: {r.source}" if r.source else "Source: (not given)", ""]
        parts += [f"Run time {r.seconds:.2f} s{', slow case' if r.slow else ''}.", ""]
        if r.error is not None:
            parts += [f"**Error:** `{_md_cell(r.error.splitlines()[0] if r.error else '')}`", ""]
            if r.traceback:
                parts += ["<details><summary>traceback</summary>", "", "```", r.traceback.rstrip(), "```", ""]
                parts += ["</details>", ""]
        if r.metrics:
            parts += [markdown_table([CaseResult(r.id, r.title, r.source, r.slow, r.metrics)]), ""]
        for fig in r.figures:
            try:
                rel = fig.resolve().relative_to(directory.resolve())
            except ValueError:
                rel = fig.resolve()
            parts += [f"![{r.id} {fig.stem}]({rel.as_posix()})", ""]
    path = directory / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def readme_paths(cases_dir: str | Path | None = None) -> list[Path]:
    """README files whose marked table ``--update-readme`` rewrites.

    For a cases folder of one's own: ``README.md`` beside it and inside it.  For the shipped cases:
    ``README.md`` and ``validation/README.md`` of the current directory (run it from a clone of the
    repository); the installed package never writes into itself.
    """
    if cases_dir is None or Path(cases_dir).resolve() == default_cases_dir().resolve():
        return [Path.cwd() / "README.md", Path.cwd() / "validation" / "README.md"]
    cases_dir = Path(cases_dir)
    return [cases_dir.resolve().parent / "README.md", cases_dir.resolve() / "README.md"]


def update_readme(results: Sequence[CaseResult], path: str | Path, *, fast: bool = False) -> bool:
    """Replace the text between the validation-table markers in ``path`` with the results table.

    Everything outside the markers is left byte for byte. A missing file, or missing or misordered
    markers, only logs a warning.

    Returns
    -------
    bool
        True if the file was rewritten.
    """
    path = Path(path)
    if not path.is_file():
        logger.warning("%s does not exist; validation table not written there", path)
        return False
    with path.open(encoding="utf-8", newline="") as fh:  # newline="": keep the file's own line endings
        text = fh.read()
    start, end = text.find(MARKER_START), text.find(MARKER_END)
    if start < 0 or end < 0 or end < start:
        logger.warning(
            "%s has no %s ... %s block; validation table not written there. Add the two markers on their own lines",
            path, MARKER_START, MARKER_END,
        )
        return False
    newline = "\r\n" if "\r\n" in text else "\n"
    block = [
        "",
        f"Last run {datetime.date.today().isoformat()} with flexmb {_version()}"
        f"{' (fast mode)' if fast else ''}: {_summary(results)}.",
        "",
        markdown_table(results),
        "",
    ]
    new = text[: start + len(MARKER_START)] + "\n".join(block).replace("\n", newline) + newline + text[end:]
    if new != text:
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(new)
    return True
