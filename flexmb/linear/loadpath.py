"""Quasi-static load paths and buckling: :func:`load_path`.

The load factors are stepped in order; at each one :func:`flexmb.equilibrium` is started from the
previous equilibrium (continuation: the bodies where they were, the joints by their body frames, the
loads of ``build(factor)``), linearized and its lowest frequencies computed.  The *stiffness margin*
of a state is the smallest eigenvalue of the symmetric part of ``Mr^-1/2 Kr Mr^-1/2`` [1/s^2] (the
square of the lowest frequency of a conservative system, negative once it has buckled); the
*buckling factor* is where the margin crosses zero between two factors (linear interpolation: exact
when the stiffness is linear in the load, as for a dead load on an undeflected column).  A factor
beyond a limit point, where Newton finds no equilibrium, ends the path there (``stopped``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ConvergenceError, ModelError


@dataclass
class LoadPathResult:
    """``factors (k,)`` reached; ``states``: the :class:`~flexmb.linear.statics.Equilibrium` at each;
    ``frequency (k, n)`` [Hz]; ``margin (k,)`` [1/s^2]; ``buckling_factor`` (NaN when the margin does
    not cross zero); ``stopped``: the error that ended the path early (None)."""

    factors: NDArray
    states: list
    frequency: NDArray
    margin: NDArray
    buckling_factor: float
    stopped: str | None = None


def stiffness_margin(lin) -> float:
    """Smallest eigenvalue [1/s^2] of the symmetric part of ``Mr^-1/2 Kr Mr^-1/2`` (mass-normalized)."""
    if lin.ndof == 0:
        return math.inf
    w, V = np.linalg.eigh(0.5 * (lin.Mr + lin.Mr.T))
    S = V / np.sqrt(w)[None, :]
    Kn = S.T @ lin.Kr @ S
    return float(np.linalg.eigvalsh(0.5 * (Kn + Kn.T)).min())


def load_path(build, factors, n: int = 3, *, t: float = 0.0) -> LoadPathResult:
    """Equilibria of ``build(factor) -> Model`` along increasing ``factors`` and the buckling factor.

    ``build`` changes the loads (force elements) only: the bodies and joints of each step are those of
    the previous equilibrium.
    """
    from flexmb.linear.eigen import eigen
    from flexmb.linear.equilibrium import equilibrium
    from flexmb.linear.linearize import linearize

    factors = np.asarray(factors, dtype=float).reshape(-1)
    if factors.size < 1 or not np.all(np.isfinite(factors)) or np.any(np.diff(factors) <= 0):
        raise ModelError(f"load_path: factors={factors!r}; give increasing finite load factors")
    states, freq, margin, stopped = [], [], [], None
    prev = None
    for f in factors:
        m = build(float(f))
        if prev is not None:
            m = replace(prev.model, forces=m.forces)
        try:
            eq = equilibrium(m, t, stability=False, reactions=None if prev is None else prev.reactions)
        except ConvergenceError as exc:
            stopped = f"no equilibrium at factor {f:g}: {exc}"
            break
        lin = linearize(eq)
        res = eigen(lin, n) if lin.ndof else None
        fr = np.full(n, np.nan)
        if res is not None:
            fr[:res.frequency.size] = res.frequency
        states.append(eq)
        freq.append(fr)
        margin.append(stiffness_margin(lin))
        prev = eq
    k = len(states)
    margin = np.array(margin)
    crit = math.nan
    for i in range(k - 1):
        if margin[i] > 0 >= margin[i + 1]:
            crit = float(factors[i] + margin[i] / (margin[i] - margin[i + 1]) * (factors[i + 1] - factors[i]))
            break
    return LoadPathResult(factors=factors[:k], states=states, frequency=np.array(freq).reshape(k, n),
                          margin=margin, buckling_factor=crit, stopped=stopped)
