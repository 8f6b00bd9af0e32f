"""Unit symbols of the consistent unit systems a :class:`~flexmb.model.Model` may be labelled with.

flexmb never converts: ``Model(units=...)`` only labels the input, and results carry the label
(``Solution.meta["units"]``).  This table turns the label into the symbols written in plot axes
and CSV headers, e.g. ``"ft-slug-s"`` -> length ``ft``, force ``lbf``, energy ``ft lbf``.
"""
from __future__ import annotations

__all__ = ["UNIT_SYSTEMS", "unit_symbols"]

#: label (case-insensitive) -> symbols of length L, mass M, time T, force F, energy E
UNIT_SYSTEMS: dict[str, dict[str, str]] = {
    "si": dict(L="m", M="kg", T="s", F="N", E="J"),
    "m-kg-s": dict(L="m", M="kg", T="s", F="N", E="J"),
    "ft-slug-s": dict(L="ft", M="slug", T="s", F="lbf", E="ft lbf"),
    "ft-lbf-s": dict(L="ft", M="slug", T="s", F="lbf", E="ft lbf"),
    "in-lbf-s": dict(L="in", M="lbf s^2/in", T="s", F="lbf", E="in lbf"),
    "mm-t-s": dict(L="mm", M="t", T="s", F="N", E="mJ"),
    "mm-kg-ms": dict(L="mm", M="kg", T="ms", F="kN", E="J"),
    "mm-kg-s": dict(L="mm", M="kg", T="s", F="mN", E="uJ"),
    "cm-g-s": dict(L="cm", M="g", T="s", F="dyn", E="erg"),
}


def unit_symbols(label: str | None) -> dict[str, str]:
    """Symbols ``{"L", "M", "T", "F", "E", "v", "w", "FL"}`` of the unit system ``label``.

    Unknown labels give the dimension names qualified by the label (``"length, my-units"``), so
    that an axis never shows a wrong unit.
    """
    key = str(label or "SI").strip().lower()
    base = UNIT_SYSTEMS.get(key)
    if base is None:
        base = {k: f"{name}, {label}" for k, name in
                dict(L="length", M="mass", T="time", F="force", E="energy").items()}
        return {**base, "v": f"velocity, {label}", "w": f"rad/time, {label}", "FL": f"moment, {label}"}
    return {**base, "v": f"{base['L']}/{base['T']}", "w": f"rad/{base['T']}", "FL": f"{base['F']} {base['L']}"}
