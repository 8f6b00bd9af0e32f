"""Time finite elements: the approximation spaces and the matrices that turn the weak form into rows.

A time element of order ``p`` on ``[t1, t1 + h]`` (reference coordinate ``tau = (t - t1)/h``)
has

* test functions: continuous polynomials of degree ``p`` (``p + 1`` of them);
* trial functions for the internal unknowns: discontinuous polynomials of degree ``p - 1``,
  represented by their values ``Y_j`` at the ``p`` Gauss-Legendre points ``c_j``;
* end values ``y1`` (known, from the previous element) and ``y2`` for the unknowns that carry a
  boundary term (configurations, momenta, multipliers).

With ``p``-point Gauss quadrature the weak form ``-int psi' y dt + [psi y] = int psi f dt``
(for all test functions ``psi``) is algebraically equivalent to collocation of
``u' = f(Y)`` at the Gauss points, where ``u`` is the degree-``p`` polynomial through
``(0, y1)`` and ``(c_j, Y_j)``; the test function that is 1 at the end node gives the end value
``y2 = u(1)`` explicitly (the paper's lower block, Eq. 34).  For ``p = 1`` this is the implicit
midpoint rule: ``Y = (y1 + y2)/2``, ``y2 = 2 Y - y1``.  The nodal order is ``2 p``.
See ``docs/theory.md`` for the derivation; ``tests/test_time_elements.py`` checks the
equivalence, the quadrature exactness and the order.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["TimeElement", "TIME_ELEMENTS", "time_element", "once_per_time_element"]


def lagrange_matrices(nodes: NDArray, points: NDArray) -> tuple[NDArray, NDArray]:
    """Values and derivatives of the Lagrange basis on ``nodes`` at ``points``.

    Returns ``L (len(points), len(nodes))`` and ``dL`` with ``L[i, j] = l_j(points[i])``.
    """
    n = len(nodes)
    L = np.ones((len(points), n))
    dL = np.zeros((len(points), n))
    for j in range(n):
        others = [m for m in range(n) if m != j]
        denom = np.prod([nodes[j] - nodes[m] for m in others])
        for i, x in enumerate(points):
            L[i, j] = np.prod([x - nodes[m] for m in others]) / denom
            s = 0.0
            for k in others:
                s += np.prod([x - nodes[m] for m in others if m != k])
            dL[i, j] = s / denom
    return L, dL


@dataclass(frozen=True)
class TimeElement:
    """A time finite element of polynomial order ``p`` (1, 2 or 3).

    Attributes
    ----------
    p : int
        Number of internal values per unknown (degree of the test functions).
    c : ndarray, shape (p,)
        Gauss-Legendre points in ``[0, 1]`` where the internal unknowns live.
    b : ndarray, shape (p,)
        Gauss weights (sum 1).
    D : ndarray, shape (p, p + 1)
        ``D[i, 0] y1 + D[i, 1:] @ Y`` is ``du/dtau`` at ``c_i`` (multiply by ``1/h`` for ``d/dt``).
    end : ndarray, shape (p + 1,)
        ``y2 = end[0] y1 + end[1:] @ Y`` (explicit end value, the lower block).
    tau_c : ndarray, shape (p,)
        Points where holonomic constraints are imposed at position level on ``u``; the last is 1
        (the end node), the others are the interior Lobatto points, so that constraints hold at the
        time nodes exactly.
    E : ndarray, shape (p, p + 1)
        ``u(tau_c[k]) = E[k, 0] y1 + E[k, 1:] @ Y``.
    order : int
        Declared nodal order ``2 p`` (checked by ``tests/test_convergence.py``).
    transport : str
        How the joints' multipliers reach the bodies.  ``"node"`` (default): at the Gauss points
        with the lever of B's origin, the gauge reset with the end node's levers.  ``"consistent"``
        (odd ``p`` only; opt-in, issue 8 section 3): plus the transport moment that makes the
        bodies' momenta the Gauss collocation of Newton-Euler with the reactions, and a gauge reset
        that extrapolates that polynomial: the element is time-reversible and a conservative model
        keeps its energy without secular growth at p = 1 (docs/energy-drift.md; it costs ~1.4 ms
        per element and a 2-5x larger error constant at p = 3).  ``"symmetric"`` (any ``p``; opt-in):
        the consistent transport plus the symmetric projection of the node momenta onto the velocity
        constraints (the same constraint impulse at both ends of the element,
        :mod:`flexmb.dynamics.variants.symmetric_projection`), which removes the constraint-normal node
        momentum, the parasitic mode that makes even ``p`` drift: the energy of a conservative model
        stays bounded at p = 1, 2, 3 (pendulum, 24 steps per period, docs/energy-drift.md); it costs
        an outer iteration around the element's Newton (about 4 element solves per element, 4-5x the CPU time).
    """

    p: int
    c: NDArray = field(repr=False)
    b: NDArray = field(repr=False)
    D: NDArray = field(repr=False)
    end: NDArray = field(repr=False)
    tau_c: NDArray = field(repr=False)
    E: NDArray = field(repr=False)
    order: int = 2
    transport: str = "node"

    @classmethod
    def of_order(cls, p: int, transport: str = "node") -> "TimeElement":
        """The order-``p`` element (``p`` = 1, 2, 3) with the multiplier ``transport`` ``"node"``,
        ``"consistent"`` (odd ``p``) or ``"symmetric"`` (see the class docstring)."""
        if p not in (1, 2, 3):
            raise ValueError(f"time element order p={p!r} is not available; use p = 1, 2 or 3")
        if transport not in ("node", "consistent", "symmetric"):
            raise ValueError(f"TimeElement.of_order(transport={transport!r}): use 'node', 'consistent' or "
                             "'symmetric'")
        if transport == "consistent" and p % 2 == 0:
            raise ValueError(f"TimeElement.of_order({p}, transport='consistent'): the consistent transport is "
                             "available for odd p only (1, 3); at even p the constraint-normal node momentum "
                             "accumulates (docs/energy-drift.md); use transport='symmetric' (any p), p = 1 or 3, "
                             "or transport='node'")
        x, w = np.polynomial.legendre.leggauss(p)
        c = (x + 1.0) / 2.0
        b = w / 2.0
        nodes = np.concatenate([[0.0], c])
        _, dL = lagrange_matrices(nodes, c)
        Lend, _ = lagrange_matrices(nodes, np.array([1.0]))
        # constraint points: interior Gauss-Lobatto points of the (p+1)-point rule, then 1
        if p == 1:
            tau = np.array([1.0])
        else:
            # interior Lobatto points are the roots of P'_p on [-1, 1]
            dP = np.polynomial.legendre.Legendre.basis(p).deriv()
            r = np.sort(dP.roots().real)
            tau = np.concatenate([(r + 1.0) / 2.0, [1.0]])
        Ltau, _ = lagrange_matrices(nodes, tau)
        return cls(p=p, c=c, b=b, D=dL, end=Lend[0], tau_c=tau, E=Ltau, order=2 * p, transport=transport)

    def end_value(self, y1: NDArray | None, Y: NDArray) -> NDArray:
        """``y2 = end[0] y1 + end[1:] @ Y``: the end value ``(n, d)`` of the element's polynomials from
        their start values ``y1 (n, d)`` (None: zero) and internal values ``Y (n, p, d)``."""
        y2 = np.einsum("j,bjd->bd", self.end[1:], Y)
        return y2 if y1 is None else self.end[0] * y1 + y2

    def weak_form_matrices(self) -> tuple[NDArray, NDArray, NDArray]:
        """The weak form written with explicit test functions, for checking the equivalence.

        Test functions ``psi_0..psi_p`` are the Lagrange polynomials on the nodes
        ``{0, c_1..c_p}`` extended to degree p by the end node... here the monomial basis
        ``psi_k = tau^k`` is used.  Returns ``(A, B, W)`` such that for ``u' = f`` the weak form
        reads ``-A @ Y - B[:, 0] y1 + B[:, 1] y2 = h * W @ F`` with ``F[j] = f(Y_j)``:
        ``A[k, j] = b_j psi_k'(c_j)``, ``B[k] = (psi_k(0), psi_k(1))``, ``W[k, j] = b_j psi_k(c_j)``.
        """
        k = np.arange(self.p + 1)[:, None]
        cj = self.c[None, :]
        psi = cj**k
        dpsi = np.where(k > 0, k * cj ** np.maximum(k - 1, 0), 0.0)
        A = self.b[None, :] * dpsi
        B = np.stack([(k[:, 0] == 0).astype(float), np.ones(self.p + 1)], axis=1)
        W = self.b[None, :] * psi
        return A, B, W


TIME_ELEMENTS: dict[int, TimeElement] = {p: TimeElement.of_order(p) for p in (1, 2, 3)}


def time_element(spec: int | TimeElement) -> TimeElement:
    """Return the time element for ``spec`` (an order 1, 2, 3 or a ``TimeElement``)."""
    if isinstance(spec, TimeElement):
        return spec
    if isinstance(spec, (int, np.integer)) and int(spec) in TIME_ELEMENTS:
        return TIME_ELEMENTS[int(spec)]
    raise ValueError(f"time_element={spec!r} is not available; use 1, 2, 3 or a TimeElement")


def once_per_time_element(fn):
    """Cache ``fn(te, *args)`` per time element and hashable ``args``: values that depend on the element's
    matrices only, computed once instead of at every evaluation.  A ``TimeElement`` (a frozen dataclass
    of arrays) is not hashable, so entries are keyed by ``id(te)`` and keep the element with them (an
    id is never reused for another element while cached); the arrays returned (one, or a tuple) are
    made read-only.  At most 64 entries (cleared beyond)."""
    cache: dict = {}

    @functools.wraps(fn)
    def cached(te, *args):
        key = (id(te),) + args
        hit = cache.get(key)
        if hit is None or hit[0] is not te:
            out = fn(te, *args)
            for a in out if isinstance(out, tuple) else (out,):
                if isinstance(a, np.ndarray):
                    a.flags.writeable = False
            if len(cache) >= 64:
                cache.clear()
            hit = cache[key] = (te, out)
        return hit[1]

    return cached
