"""Joint reactions at the time nodes, recovered from the impulses the weak form gets exactly.

The reaction ``Qbar`` (force; moment about B's origin; frame A components) is an internal-only
unknown: it lives at the Gauss points, where for ``p >= 2`` it oscillates within each element (the
multipliers converge at the nodes with order 2, 2, 4 for p = 1, 2, 3: the index-3 loss).  What the
scheme gets right to the nodal order ``2p`` is the *impulse* of the reactions between nodes:

* ``lambda_end`` of an element (``lambda`` starts at 0 after the gauge reset) is the impulse of the
  joint over the element, force part ``int F dt`` exactly, moment part such that
  ``lambda_m,end + x_B(t2) x lambda_f,end`` is the moment impulse about the inertial origin: these
  are the generalized momenta the gauge reset hands to the bodies;
* the node-velocity projection ``w = w2 - M^-1 G^T mu`` adds the impulse ``-mu`` on the velocity
  constraints (``dlam``, :func:`projection_impulse`), which removes the O(h^2) momentum defect of
  the end values.  It is not carried into the state (output only), so it enters the cumulative
  impulse at its own node only.

The cumulative impulse ``I(t_i) = sum_{elements <= i} lambda_end + dlam_i`` is then accurate to the
nodal order.  Inside an element the Gauss-point impulses ``I(c_j) = sum_{before} lambda_end + Lambda_j``
are accurate only to O(h^(p+1)) pointwise, but their Legendre moments of degree ``l <= p - 2``
(:func:`element_record`) are accurate to O(h^2p) (l = 0) and O(h^(2p-1)) (l = 1).  The reaction at
node ``k`` is the derivative there of the polynomial of degree ``2p`` that matches ``I`` at the
nodes ``k - 1, k, k + 1`` and the moments of the two elements between them (:func:`node_reactions`;
one-sided at the first and last node; any spacing; measured orders 2, 4, 4 for p = 1, 2, 3, and on
issue 6's 15-link chain within 1.0-1.3x of Exudyn's joint force error at equal position accuracy).
Moments are taken about ``x_B(t_k)`` (no cancellation however far the joint is from the origin).
Free components of a joint law (spring-damper or ideal) are evaluated from the law at the node,
``Qbar_c = -(k (q_c - q_ref) + c qdot_c)``, and a universal joint's moment is the component along
``x_A x y_B`` (its two free moments vanish exactly).  ``docs/theory.md`` section 8 has the
equations, the measured orders and the alternatives measured; ``tests/test_reactions.py`` checks
them.  Requested times: :func:`values_at` (local interpolation of the node values).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb import rotations as rot
from flexmb.dynamics.kernels import jit_kernel
from flexmb.dynamics.node.projection import NodeFrames, joint_wrench
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.time_elements import once_per_time_element

__all__ = ["projection_impulse", "node_record", "element_record", "node_reactions", "local_weights", "values_at",
           "RECORD_WIDTH"]

#: packed per-node record (nj, RECORD_WIDTH): lam_end 0:6, dlam 6:12, x_B 12:15, R_A 15:24, law 24:30, y_B in A 30:33
RECORD_WIDTH = 33


def projection_impulse(cm, st, mu: NDArray | None, labels, sel=None) -> NDArray:
    """Joint impulses ``(nj, 6)`` (force; moment at B's origin; inertial components) of the
    node-velocity projection ``w = w2 - M^-1 G^T mu``: the generalized momenta ``-G^T mu`` written as
    multipliers, ``multiplier_momenta(dlam) = -G^T mu``.

    ``mu (n_rows,)``, ``labels`` the rows of :func:`~flexmb.dynamics.node.constraints.velocity_constraint_matrix`
    (``(joint, component)`` in frame A, or ``(joint, "cross")`` for a universal joint); ``sel`` their
    :class:`~flexmb.dynamics.node.selection.Selection` (None: the model's full set).
    """
    if mu is None or len(labels) == 0:
        return np.zeros((cm.nj, 6))
    jl = np.array([j for j, _ in labels], dtype=np.int64)
    comp = np.array([c if isinstance(c, int) else 6 for _, c in labels], dtype=np.int64)
    loc = np.zeros((cm.nj, 7))
    loc[jl, comp] = mu
    return -joint_wrench(NodeFrames(cm, st, sel), loc)


def node_record(cm, st, nv, qdot: NDArray | None = None) -> NDArray:
    """What the recovery needs from one time node, packed as ``(nj, RECORD_WIDTH)``.

    ``st``: the node state (``st.lam_end``: the multipliers of the element ending here, before the
    gauge reset; None at the first node); ``nv``: the node's
    :class:`~flexmb.dynamics.node.constraints.NodeVelocity` (frames, projection multipliers ``loc``);
    ``qdot (nj, 6)``: the joints' relative velocities (frame A) for the free laws (None: the free laws
    are not evaluated, e.g. at a node that is not output).
    """
    out = np.zeros((cm.nj, RECORD_WIDTH))
    if cm.nj == 0:
        return out
    fr = nv.frames
    none = _NONE6
    wrench = none if nv.loc is None else nv.wrench if nv.wrench is not None else joint_wrench(fr, nv.loc)
    _pack_node(none if st.lam_end is None else st.lam_end, st.lam_end is not None, wrench, nv.loc is not None, fr.xb,
               fr.Ra, st.s, st.acc, cm.jnt_k, cm.jnt_ref, cm.jnt_c, none if qdot is None else qdot, qdot is not None,
               st.Rr, out)
    return out


_NONE6 = np.zeros((0, 6))


@jit_kernel
def _pack_node(lam_end, has_lam, wrench, has_wrench, xb, Ra, s, acc, k, ref, c, qdot, has_qdot, Rr,
               out):  # pragma: no cover - compiled
    """:func:`node_record`'s columns (``out`` zeroed on entry): ``lam_end``, ``-wrench`` (the
    projection's), ``x_B``, ``R_A`` (row-major), the free laws ``-(k (q - q_ref) + c qdot)`` with ``q =
    (s, acc)`` (the same operations as the NumPy expression, elementwise), ``Rr[:, :, 1]``."""
    for j in range(out.shape[0]):
        if has_lam:
            for d in range(6):
                out[j, d] = lam_end[j, d]
        if has_wrench:
            for d in range(6):
                out[j, 6 + d] = -wrench[j, d]
        for d in range(3):
            out[j, 12 + d] = xb[j, d]
            for e in range(3):
                out[j, 15 + 3 * d + e] = Ra[j, d, e]
            out[j, 30 + d] = Rr[j, d, 1]
        if has_qdot:
            for d in range(6):
                q = s[j, d] if d < 3 else acc[j, d - 3]
                out[j, 24 + d] = -(k[j, d] * (q - ref[j, d]) + c[j, d] * qdot[j, d])


def values_at(nodes: NDArray, values: NDArray, t: ArrayLike, n: int, what: str) -> NDArray:
    """``values (nt, ...)`` at the ``nodes`` interpolated to the times ``t`` (scalar or (k,)) by local
    polynomials through ``n`` nodes; times outside ``[nodes[0], nodes[-1]]`` raise ModelError naming
    ``what``."""
    from flexmb.errors import ModelError

    try:
        tq = np.asarray(t, dtype=np.float64)
    except (TypeError, ValueError):
        tq = np.array([np.nan])
    if tq.ndim > 1 or not np.all(np.isfinite(tq)):
        raise ModelError(f"{what}: times t={t!r} must be a finite number or 1-D array of times [s]")
    if nodes.size == 0:
        raise ModelError(f"{what}: the solution has no time nodes")
    slack = 1e-9 * max(1.0, abs(nodes[-1]), abs(nodes[0]))
    out = (tq < nodes[0] - slack) | (tq > nodes[-1] + slack)
    if np.any(out):
        bad = np.atleast_1d(tq)[np.atleast_1d(out)][0]
        raise ModelError(f"{what}: time {bad!r} s is outside the run [{nodes[0]:.6g}, {nodes[-1]:.6g}] s; "
                         f"request reactions within the simulated interval")
    flat = np.clip(np.atleast_1d(tq), nodes[0], nodes[-1])
    first, w = local_weights(nodes, flat, n, 0)
    idx = first[:, None] + np.arange(w.shape[1])
    res = np.einsum("ks,ks...->k...", w, values[idx])
    return res[0] if tq.ndim == 0 else res


def local_weights(nodes: NDArray, x: NDArray, n: int, derivative: int) -> tuple[NDArray, NDArray]:
    """Weights of the value (``derivative = 0``) or first derivative (``1``) at ``x`` of the local
    polynomial of degree ``n - 1`` through ``n`` consecutive ``nodes`` nearest to each ``x``.

    ``nodes (N,)`` strictly increasing; ``x (K,)``.  Returns ``first (K,)`` (index of the first
    stencil node) and ``w (K, n)``: ``f(x_k) ~ sum_s w[k, s] f(nodes[first[k] + s])``.
    """
    nodes = np.asarray(nodes, dtype=float)
    x = np.asarray(x, dtype=float)
    n = int(min(n, nodes.size))
    # stencil: n nodes with x as central as possible
    centre = np.clip(np.searchsorted(nodes, x), 0, nodes.size - 1)
    first = np.clip(centre - n // 2, 0, nodes.size - n)
    Z = nodes[first[:, None] + np.arange(n)]  # (K, n)
    scale = np.maximum(Z[:, -1] - Z[:, 0], 1e-300)
    u = (Z - x[:, None]) / scale[:, None]  # in [-1, 1]
    V = u[:, :, None] ** np.arange(n)  # V[k, s, j] = u_s^j
    rhs = np.zeros((x.size, n))
    rhs[:, derivative] = 1.0
    # sum_s w_s u_s^j = delta_{j, derivative}: exact for polynomials of degree n - 1
    w = np.linalg.solve(np.swapaxes(V, 1, 2), rhs[:, :, None])[..., 0]
    if derivative:
        w /= scale[:, None]
    return first, w


@once_per_time_element  # NumPy's Legendre class costs ~50 us per call, at every element
def legendre_at_gauss(te) -> NDArray:
    """``(m, p)`` with ``m = p - 1``: ``b_i P_l(2 c_i - 1)``, the Gauss-quadrature weights of the element
    moments of degree ``l = 0 .. p - 2`` (shifted Legendre polynomials)."""
    P = np.array([np.polynomial.legendre.Legendre.basis(l)(2.0 * te.c - 1.0) for l in range(te.p - 1)])
    return P.reshape(te.p - 1, te.p) * te.b[None, :]


def element_record(te, lam: NDArray, xb: NDArray, mu: NDArray | None = None) -> NDArray:
    """What the recovery needs from one time element, packed as ``(nj, 6 (p - 1) + 3)``.

    ``lam (nj, p, 6)``: the multipliers at the Gauss points (the impulse since the element's start
    node, force; moment at B's origin); ``xb (nj, p, 3)``: B's origin there.  Stored: the moments
    ``sum_i b_i P_l(2 c_i - 1) I(c_i)``, ``l = 0 .. p - 2``, of the force impulse and of the moment
    impulse about ``y = xb[:, 0]`` (``lambda_m + (x_B - y) x lambda_f``, plus ``mu (nj, p, 3)`` when given:
    the transport moment of :func:`flexmb.dynamics.elements.joints.transport_moment`), then ``y`` (p = 1: no moments,
    ``xb`` may be None and ``y`` is stored as 0).  These moments
    of the impulse are accurate to about the nodal order (the pointwise Gauss values are not: their
    error is dominated by the component along ``P_(p-1)``).
    """
    nj, p = lam.shape[0], te.p
    if p == 1:  # no moments; y unused
        return np.zeros((nj, 3))
    W = legendre_at_gauss(te)  # (m, p)
    out = np.empty((nj, 6 * (p - 1) + 3))
    _element_moments(W, lam, xb, np.zeros((0, 0, 3)) if mu is None else mu, mu is not None, out)
    return out


@jit_kernel
def _element_moments(W, lam, xb, mu, has_mu, out):  # pragma: no cover - compiled
    """:func:`element_record`'s ``out (nj, 6 m + 3)`` in one pass: the impulse about ``y = xb[:, 0]``
    at the Gauss points, ``(lam_f, lam_m + (x_B - y) x lam_f [+ mu])``, its moments ``sum_i W[l, i]
    imp_i`` summed in ``np.einsum``'s order (sequential in ``i``), then ``y``."""
    nj, p, m = lam.shape[0], lam.shape[1], W.shape[0]
    imp = np.empty((p, 6))
    for j in range(nj):
        y0, y1, y2 = xb[j, 0, 0], xb[j, 0, 1], xb[j, 0, 2]
        for i in range(p):
            r0, r1, r2 = xb[j, i, 0] - y0, xb[j, i, 1] - y1, xb[j, i, 2] - y2
            f0, f1, f2 = lam[j, i, 0], lam[j, i, 1], lam[j, i, 2]
            imp[i, 0], imp[i, 1], imp[i, 2] = f0, f1, f2
            imp[i, 3] = lam[j, i, 3] + (r1 * f2 - r2 * f1)
            imp[i, 4] = lam[j, i, 4] + (r2 * f0 - r0 * f2)
            imp[i, 5] = lam[j, i, 5] + (r0 * f1 - r1 * f0)
            if has_mu:
                for d in range(3):
                    imp[i, 3 + d] += mu[j, i, d]
        for l in range(m):
            for d in range(6):
                v = 0.0
                for i in range(p):
                    v += W[l, i] * imp[i, d]
                out[j, 6 * l + d] = v
        out[j, 6 * m] = y0
        out[j, 6 * m + 1] = y1
        out[j, 6 * m + 2] = y2


def with_start_impulse(te, rec: NDArray, imp: NDArray, xb2: NDArray) -> NDArray:
    """An element record (:func:`element_record`, ``p >= 2``) whose impulse has the constant ``imp (nj, 6)``
    (force; moment about ``xb2 (nj, 3)``) added: the impulse the symmetric projection applies at the
    element's start node (:mod:`flexmb.dynamics.variants.symmetric_projection`), which is part of the cumulative
    impulse at every Gauss point of the element.  A constant changes the ``l = 0`` moment only."""
    p = te.p
    out = rec.copy()
    y = rec[:, 6 * (p - 1):]
    out[:, :6] += np.concatenate([imp[:, :3], imp[:, 3:] + rot.cross(xb2 - y, imp[:, :3])], axis=1)
    return out


def _about(f: NDArray, m: NDArray, y: NDArray, c: NDArray) -> NDArray:
    """Impulse ``(f, m about y)`` as ``(f, m about c)``, stacked to ``(..., 6)``."""
    return np.concatenate([f, m + rot.cross(y - c, f)], axis=-1)


def _stencil_weights(t: NDArray, k: NDArray, te) -> tuple[NDArray, NDArray]:
    """First node ``e0 (K,)`` and derivative weights ``w (K, 2p + 1)`` at the nodes ``t[k]`` of the
    polynomial of degree ``2p`` that matches the node values at ``t[e0 .. e0 + 2]`` and the element
    moments (:func:`element_record`) of the elements ``e0`` and ``e0 + 1``."""
    p = te.p
    W = legendre_at_gauss(te)  # (m, p)
    e0 = np.clip(k - 1, 0, t.size - 3)
    z = t[e0[:, None] + np.arange(3)]  # (K, 3)
    H = z[:, 2] - z[:, 0]
    n = 2 * p + 1
    powers = np.arange(n)
    rows = [((z - t[k][:, None]) / H[:, None])[:, :, None] ** powers]  # (K, 3, n)
    for e in (0, 1):
        tg = z[:, e, None] + (z[:, e + 1] - z[:, e])[:, None] * te.c  # (K, p)
        ug = ((tg - t[k][:, None]) / H[:, None])[:, :, None] ** powers  # (K, p, n)
        rows.append(np.einsum("li,kin->kln", W, ug))
    A = np.concatenate(rows, axis=1)  # (K, n, n): data_s = sum_j A[s, j] a_j
    rhs = np.zeros((k.size, n, 1))
    rhs[:, 1] = 1.0
    w = np.linalg.solve(np.swapaxes(A, 1, 2), rhs)[..., 0] / H[:, None]
    return e0, w


def node_reactions(cm, t: NDArray, rec: NDArray, el: NDArray, output: NDArray, te, sel=None) -> tuple[NDArray, NDArray]:
    """Reaction force and moment of every joint at the output nodes.

    Parameters
    ----------
    cm : CompiledModel
    t : ndarray, shape (N,)
        Every time node of the run, including nodes that are not output (step halvings) [s].
    rec : ndarray, shape (N, nj, RECORD_WIDTH)
        :func:`node_record` of each node.
    el : ndarray, shape (N - 1, nj, 6 (p - 1) + 3)
        :func:`element_record` of each element (element ``e`` from node ``e`` to ``e + 1``).
    output : ndarray of bool, shape (N,)
        The nodes of the :class:`~flexmb.results.solution.Solution`.
    te : TimeElement
        The run's time element (order ``p``).
    sel : Selection, optional
        The constraint equations whose reactions are recovered
        (:class:`~flexmb.dynamics.node.selection.Selection`; the others take their free law at the
        node); None: the model's full set.

    Returns
    -------
    force, moment : ndarray, shape (n_out, nj, 3)
        Reaction of A on B, frame A components [N]; moment about B's origin [N m].  The cumulative
        impulse is matched at three consecutive nodes and in its ``p - 1`` element moments on each of
        the two elements between them by a polynomial of degree ``2p``, whose derivative at the
        node is the reaction (truncation error O(h^2p)); with fewer than three nodes, the mean
        reaction over the one element.
    """
    k = np.nonzero(output)[0]
    nj, p = cm.nj, te.p
    force = np.zeros((k.size, nj, 3))
    moment = np.zeros((k.size, nj, 3))
    if nj == 0 or t.size < 2:
        return force, moment
    lam, d, xb = rec[:, :, 0:6], rec[:, :, 6:12], rec[:, :, 12:15]
    c = xb[k]  # moments about B's origin at the output node (K, nj, 3)
    if t.size < 3:  # one element: its mean reaction
        i1 = np.ones_like(k)
        dI = _about(lam[i1, :, :3], lam[i1, :, 3:], xb[i1], c) + _about(d[i1, :, :3], d[i1, :, 3:], xb[i1], c) \
            - _about(d[0 * k, :, :3], d[0 * k, :, 3:], xb[0 * k], c)
        Q = dI / (t[1] - t[0])
    else:
        e0, w = _stencil_weights(t, k, te)
        m = p - 1
        # every impulse about c in one pass (the same operations per entry as one at a time): the element
        # impulses ending at the nodes e0 + 1, e0 + 2 and the projection impulses at e0 + 1, e0 + 2, e0
        # (rows 0-2, 3-5), then the element moments l of the elements e0, e0 + 1 (row 6 + 2 l + e)
        at = np.stack([e0 + 1, e0 + 2, e0])  # (3, K)
        er = el[np.stack([e0, e0 + 1])]  # (2, K, nj, 6m + 3)
        y = er[..., 6 * m:]
        imp = _about(np.concatenate([lam[at, :, :3], d[at, :, :3]] + [er[..., 6 * li:6 * li + 3] for li in range(m)]),
                     np.concatenate([lam[at, :, 3:], d[at, :, 3:]] + [er[..., 6 * li + 3:6 * li + 6] for li in range(m)]),
                     np.concatenate([xb[at], xb[at]] + [y] * m), c)
        l1, l2, d1, d2, d0 = imp[0], imp[1], imp[3], imp[4], imp[5]
        data = [np.zeros_like(l1), l1 + d1 - d0, l1 + l2 + d2 - d0]
        for e, base in ((0, -d0), (1, l1 - d0)):
            for li in range(m):
                mom = imp[6 + 2 * li + e]
                data.append(mom + base if li == 0 else mom)
        Q = np.einsum("ks,skjd->kjd", w, np.stack(data))
    Ra = rec[k, :, 15:24].reshape(k.size, nj, 3, 3)
    force = np.einsum("kjed,kje->kjd", Ra, Q[..., :3])
    moment = np.einsum("kjed,kje->kjd", Ra, Q[..., 3:])
    # free components: the joint law at the node (exact relation); universal: moment along x_A x y_B
    law = rec[k, :, 24:30]
    sel = sel if sel is not None else Selection.full(cm)
    free = ~sel.constrained & ~sel.universal[:, None]
    force = np.where(free[None, :, :3], law[..., :3], force)
    moment = np.where(free[None, :, 3:], law[..., 3:], moment)
    if sel.universal.any():
        u = np.nonzero(sel.universal)[0]
        ex = np.broadcast_to(np.array([1.0, 0.0, 0.0]), (k.size, u.size, 3))
        nrm = rot.cross(ex, rec[k][:, u, 30:33])
        nrm /= np.linalg.norm(nrm, axis=-1, keepdims=True)
        moment[:, u] = np.einsum("kjd,kjd->kj", moment[:, u], nrm)[..., None] * nrm
    return force, moment
