"""Validation output: the results table (:func:`format_table` for a terminal,
:func:`markdown_table`), the ``--json`` document, the Markdown report with figures, and the README
table between :data:`MARKER_START` and :data:`MARKER_END` that ``flexmb validate --update-readme``
rewrites."""
from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flexmb.validation.metrics import metric_digits, format_value, format_tolerance
from flexmb.validation.registry import CaseResult, default_cases_dir

__all__ = ["MARKER_END", "MARKER_START", "format_table", "markdown_table", "readme_paths", "results_to_json",
           "update_readme", "write_json", "write_report"]

logger = logging.getLogger(__name__)

MARKER_START = "<!-- validation-table:start -->"
MARKER_END = "<!-- validation-table:end -->"


def _rows(results: Sequence[CaseResult]) -> list[list[str]]:
    rows = []
    for r in results:
        if r.error is not None:
            rows.append([r.id, "(error)", r.error.splitlines()[0] if r.error else "", "-", "-", "FAIL"])
        for m in r.metrics:
            d = metric_digits(m)
            verdict = "pass" if m.passed else "FAIL"
            rows.append([r.id, m.name, format_value(m.value, d), format_value(m.reference, d), format_tolerance(m), verdict])
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
