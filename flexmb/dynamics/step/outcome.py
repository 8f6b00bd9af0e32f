"""What a solved time element hands to the rest of the step: named results instead of positional tuples.

:class:`ElementPiece` is one solved element (a whole step or a piece of a halved one): its start node,
length, internal unknowns, Newton's result and the work the energy audit accepted.  :class:`ElementOutcome`
is what the solve stage and every variant wrapping it (:mod:`flexmb.dynamics.variants`) return: the end node
and the pieces, and a :class:`Refusal` when a converged root is not the motion (the root checks of
:mod:`flexmb.dynamics.variants.root_checks`).  The last piece is the predictor's ``prev`` of the next
element (:func:`flexmb.dynamics.march.marching.predict`).
"""
from __future__ import annotations

from dataclasses import dataclass

from numpy.typing import NDArray

from flexmb.dynamics.system import ElementStart

__all__ = ["ElementPiece", "ElementOutcome", "Refusal"]


@dataclass(frozen=True)
class Refusal:
    """Why a converged root of the element equations is refused like a Newton failure (the step is then
    halved): the unknown to name, ``index`` (into the element's unknowns), and the ``message``."""

    index: int
    message: str


@dataclass
class ElementPiece:
    """One solved time element: ``start`` node, length ``h`` [s], internal unknowns ``U (lay.size,)`` and
    the :class:`~flexmb.dynamics.solve.newton.NewtonResult` ``result`` (None for a piece restored from a
    checkpoint, where only ``start``, ``h``, ``U`` are kept: what the predictor needs).  ``released``:
    ``"start"`` or ``"end"`` when the singular-node variant solved it with the self-stress rows of that
    node released (:mod:`flexmb.dynamics.variants.singular_node`), else None; ``work (nc,)`` [J]: the work
    per contributor that the energy audit accepted (:mod:`flexmb.dynamics.energy_audit`), None when no audit
    ran."""

    start: ElementStart
    h: float
    U: NDArray
    result: object = None
    released: str | None = None
    work: NDArray | None = None
    #: B's origins of the joints at the Gauss points ``(nj, p, 3)`` [m] where the solve computed them with
    #: the element (:mod:`flexmb.dynamics.step.compiled_element`), else None (the record computes them)
    xb: NDArray | None = None


@dataclass
class ElementOutcome:
    """A solved step: the ``end`` node (the next element's start; None when Newton did not converge) and
    the ``pieces`` that reach it (one, or more when the step was halved), ``halvings`` the depth of the
    halving (0: solved whole), ``refusal`` the :class:`Refusal` of a converged root that is not the
    motion (None: accepted)."""

    end: ElementStart | None
    pieces: list[ElementPiece]
    halvings: int = 0
    refusal: Refusal | None = None

    @property
    def last(self) -> ElementPiece:
        """The piece that ends at ``end`` (the next element's predictor extrapolates it)."""
        return self.pieces[-1]

    @property
    def U(self) -> NDArray:
        """The internal unknowns of the last piece."""
        return self.pieces[-1].U

    @property
    def converged(self) -> bool:
        """Whether Newton found a root (whatever the root checks say of it)."""
        return self.end is not None

    @property
    def accepted(self) -> bool:
        """A root that the root checks accept: the step's result."""
        return self.end is not None and self.refusal is None

    @property
    def reason(self) -> tuple[int, str]:
        """``(index, message)`` of a failed or refused solve: the refusal's, else Newton's (the unknown
        with the largest correction and its message)."""
        if self.refusal is not None:
            return self.refusal.index, self.refusal.message
        r = self.last.result
        return r.worst, r.message
