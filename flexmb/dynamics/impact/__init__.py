"""Impulses, contacts and impacts (issue 21; Wittenburg, chapter 6).

:mod:`.geometry` (where contacts and impulses sit: gaps, normals, normal-velocity rows),
:mod:`.solve` (the impact solve at frozen positions: impulse-momentum balance with the joints'
impulses, Newton's law as an LCP), :mod:`.events` (which contacts take part, rounds of impacts),
:mod:`.result` (``fm.impact``: one impact at a model's initial state), :mod:`.march` (events in
``simulate``), :mod:`.terms` (the impacts' work terms in the energy audit).  Equations:
docs/theory.md, section 13.  The package imports nothing eagerly (the energy audit imports
:mod:`.terms` without the solve).
"""
from __future__ import annotations

from flexmb.reexport import lazy_attributes as _lazy_attributes

_LAZY = {"impact": "flexmb.dynamics.impact.result", "ImpactResult": "flexmb.dynamics.impact.result"}
__all__ = ["ImpactResult", "impact"]
__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals())
