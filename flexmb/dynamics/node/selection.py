"""Which of the joints' constraint equations a run keeps: a frozen :class:`Selection`.

The compiled model (:class:`~flexmb.dynamics.system.CompiledModel`) holds the joints' full constraint
set (``jnt_constrained (nj, 6)``, ``jnt_universal (nj,)``, read-only).  A run keeps a subset of it: the
redundant (dependent) equations of closed loops are dropped (:mod:`flexmb.dynamics.node.redundancy`
chooses them, :class:`~flexmb.dynamics.node.monitor.RedundancyMonitor` revises the choice).  A dropped
equation becomes a free component with an ideal law (its reaction component is zero); a universal
joint's dropped cross condition makes it a plain free moment about z.

Every reader of the masks receives the selection: the element side from its layout
(``make_layout(cm, p, selection)`` -> ``lay.selection``: the joint laws, :func:`flexmb.dynamics.elements.joints.law_data`),
the node side as an argument (the node projection, the velocity constraint matrix, the reactions, the
energy audit's damped components).  ``None`` there stands for the model's full set.

A selection never changes; a new choice is a new object (:meth:`Selection.dropping`, :meth:`Selection.changed`),
which a run adopts with :meth:`flexmb.dynamics.simulate.Run.select` (the Jacobian pattern and the layouts
are rebuilt).  That is also the documented way for other stages to switch rows on and off during a run
(e.g. the impact stage): ``run.select(run.selection.changed(drop=[(j, c)]))``.

*Switched* equations (``Selection.switched``): the constraint equations of joints that another stage
switches on and off during a run (a joint whose class says ``switched = True``: a contact's row,
:class:`flexmb.dynamics.impact.resting.ContactRow`, kept while the contact rests).  They are part of the
full set but never of the redundancy analysis: ``Selection.redundant`` is what a selection drops as
redundant (its dropped labels without the switched ones).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import frozen


def _label(j, c) -> tuple:
    return int(j), c if isinstance(c, str) else int(c)


def _frozen(a) -> NDArray:
    return frozen(np.array(a, dtype=bool))


@dataclass(frozen=True, eq=False)
class Selection:
    """The kept constraint equations: ``constrained (nj, 6)`` and ``universal (nj,)`` (read-only
    boolean masks, like the compiled model's), the ``dropped`` labels ``((joint, component), ...)``
    (component 0-5, or ``"cross"`` for a universal joint's cross condition) relative to the full set
    ``full_constrained``, ``full_universal``, the ``switched`` labels of that set (switched on and off
    by another stage, never redundant: see the module), and ``key`` (bytes of the two masks: data
    computed for one selection are recomputed when the key changes)."""

    constrained: NDArray
    universal: NDArray
    dropped: tuple = ()
    full_constrained: NDArray = field(default=None, repr=False)
    full_universal: NDArray = field(default=None, repr=False)
    switched: tuple = field(default=(), repr=False)
    key: bytes = field(init=False, repr=False)
    #: whether a universal joint keeps its cross condition (the node frames' cross axis)
    any_universal: bool = field(init=False, repr=False)

    def __post_init__(self):
        cons, univ = _frozen(self.constrained), _frozen(self.universal)
        full_c = cons if self.full_constrained is None else _frozen(self.full_constrained)
        full_u = univ if self.full_universal is None else _frozen(self.full_universal)
        if cons.ndim != 2 or cons.shape[1:] != (6,) or univ.shape != cons.shape[:1] or full_c.shape != cons.shape \
                or full_u.shape != univ.shape:
            raise ValueError(f"Selection: masks of shapes {cons.shape}, {univ.shape} (full {full_c.shape}, "
                             f"{full_u.shape}); expected (nj, 6) and (nj,)")
        for name, value in (("constrained", cons), ("universal", univ), ("full_constrained", full_c),
                            ("full_universal", full_u), ("dropped", tuple(_label(j, c) for j, c in self.dropped)),
                            ("switched", tuple(_label(j, c) for j, c in self.switched)),
                            ("key", cons.tobytes() + univ.tobytes()), ("any_universal", bool(univ.any()))):
            object.__setattr__(self, name, value)

    @classmethod
    def full(cls, cm) -> "Selection":
        """The model's full constraint set (nothing dropped), one object per compiled model; its
        ``switched`` labels: the constrained components of the joints whose class is ``switched``."""
        hit = cm.cache.full_selection
        if hit is None:
            switched = tuple((j, int(c)) for j, jt in enumerate(cm.model.joints) if getattr(jt, "switched", False)
                             for c in np.nonzero(cm.jnt_constrained[j])[0])
            hit = cm.cache.full_selection = cls(cm.jnt_constrained, cm.jnt_universal, switched=switched)
        return hit

    @property
    def nj(self) -> int:
        return self.constrained.shape[0]

    def dropping(self, labels) -> "Selection":
        """The full set with the equations ``labels`` (``(joint, component)`` pairs) dropped, whatever
        this selection drops: each becomes a free component with an ideal law (reaction component zero);
        a universal joint's cross condition (``"cross"``) becomes a plain free moment about z."""
        cons = np.array(self.full_constrained)
        univ = np.array(self.full_universal)
        labels = [_label(j, c) for j, c in labels]
        for j, c in labels:
            if isinstance(c, str):
                if c != "cross" or not self.full_universal[j]:
                    raise ValueError(f"Selection: joint {j} has no cross condition to drop ({c!r})")
                univ[j] = False
                cons[j] = [True, True, True, False, False, False]
            elif not self.full_constrained[j, int(c)]:
                raise ValueError(f"Selection: component {c} of joint {j} is not a constraint equation of the model")
            else:
                cons[j, int(c)] = False
        return Selection(cons, univ, tuple(labels), self.full_constrained, self.full_universal, self.switched)

    def changed(self, *, drop=(), keep=()) -> "Selection":
        """This selection with the equations ``drop`` dropped as well and the equations ``keep`` kept again
        (labels as in :meth:`dropping`): the way to switch rows on and off during a run."""
        keep = {_label(j, c) for j, c in keep}
        labels = [lab for lab in self.dropped if lab not in keep]
        labels += [_label(j, c) for j, c in drop if _label(j, c) not in labels]
        return self.dropping(labels)

    @property
    def is_full(self) -> bool:
        return not self.dropped

    @property
    def redundant(self) -> tuple:
        """The labels dropped as redundant: :attr:`dropped` without the :attr:`switched` ones (the
        redundancy monitor's choice, checked against the closed loops' dependences)."""
        switched = set(self.switched)
        return tuple(lab for lab in self.dropped if lab not in switched)

    @property
    def switched_off(self) -> tuple:
        """The :attr:`switched` labels this selection drops (a contact row while the contact is open)."""
        dropped = set(self.dropped)
        return tuple(lab for lab in self.switched if lab in dropped)
