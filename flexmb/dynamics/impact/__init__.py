"""Impulses, contacts and impacts (issue 21; Wittenburg, chapter 6).

:mod:`.geometry` (where contacts and impulses sit: gaps, normals, normal-velocity rows),
:mod:`.solve` (the impact solve at frozen positions: impulse-momentum balance with the joints'
impulses, Newton's law as an LCP), :mod:`.events` (which contacts take part, rounds of impacts),
:mod:`.result` (``fm.impact``: one impact at a model's initial state).  Equations: docs/theory.md,
section "Impacts".
"""
from __future__ import annotations

from flexmb.dynamics.impact.result import ImpactResult, impact

__all__ = ["ImpactResult", "impact"]
