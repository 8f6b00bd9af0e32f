"""Validation metrics: :class:`Metric` (a value judged against a reference and tolerance by its
``kind``, see :mod:`flexmb.validation`), the conversion of what a case returns, and the metric's
text form used in tables and logs."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "Metric"]

#: Metric kinds and what "passed" means for each (see the module docstring).
KINDS: tuple[str, ...] = ("rel", "abs", "max", "min", "bool")


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


def to_metric(obj: Any) -> Metric:
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


def format_value(x: Any, digits: int = 6) -> str:
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


def metric_digits(m: Metric) -> int:
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


def format_tolerance(m: Metric) -> str:
    t = m.tolerance
    if m.kind == "bool":
        return "is true"
    ts = f"{t:.3g}"
    return {"rel": f"rel {ts}", "abs": f"abs {ts}", "max": f"<= {ts}", "min": f">= {ts}"}[m.kind]
