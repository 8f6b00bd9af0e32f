"""What a solved time element hands to the rest of the step: named results instead of positional tuples.

:class:`ElementPiece` is one solved element (a whole step or a piece of a halved one): its start node,
length, internal unknowns and Newton's result.  :class:`ElementOutcome` is what the solve stage and every
variant wrapping it (:mod:`flexmb.dynamics.variants`) return: the end node and the pieces.  The last piece
is the predictor's ``prev`` of the next element (:func:`flexmb.dynamics.march.marching.predict`).
"""
from __future__ import annotations

from dataclasses import dataclass

from numpy.typing import NDArray

from flexmb.dynamics.system import ElementStart

__all__ = ["ElementPiece", "ElementOutcome"]


@dataclass
class ElementPiece:
    """One solved time element: ``start`` node, length ``h`` [s], internal unknowns ``U (lay.size,)`` and
    the :class:`~flexmb.dynamics.solve.newton.NewtonResult` ``result`` (None for a piece restored from a
    checkpoint, where only ``start``, ``h``, ``U`` are kept: what the predictor needs)."""

    start: ElementStart
    h: float
    U: NDArray
    result: object = None


@dataclass
class ElementOutcome:
    """A solved step: the ``end`` node (the next element's start) and the ``pieces`` that reach it (one,
    or more when the step was halved), ``halvings`` the depth of the halving (0: solved whole)."""

    end: ElementStart
    pieces: list[ElementPiece]
    halvings: int = 0

    @property
    def last(self) -> ElementPiece:
        """The piece that ends at ``end`` (the next element's predictor extrapolates it)."""
        return self.pieces[-1]

    @property
    def U(self) -> NDArray:
        """The internal unknowns of the last piece."""
        return self.pieces[-1].U
