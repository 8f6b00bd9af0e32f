"""The joints at a time node, compiled for every body type: attachment velocities, the multipliers as
generalized momenta, the values of ``G M^-1 G^T`` and the node-velocity projection (the method:
:mod:`flexmb.dynamics.node.projection`).

A side's attachments reach the bodies through their node velocity maps ``nu = B w`` (the body-type
contract: ``node_velocity_map``), padded to one width: ``B (nj, 6, cw)``, ``cols (nj, cw)`` the columns of
the global velocity vector, ``width (nj,)`` the columns used (0 on the ground).  The inverse mass blocks
are ``Mi (nb, cw, cw)`` (body ``b``'s ``nvb[b] x nvb[b]`` block at ``voff[b]``).  The joints' own node laws
(relative rates, the wrench of the rate multipliers, the side-A transport) are
:mod:`flexmb.dynamics.elements.joint_law`'s.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.elements.joint_law import node_rate_rows, node_rate_wrench, node_rates, side_a_wrench
from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)


@jit_kernel
def attachment_velocities(B, cols, width, w, nu):
    """``nu (n, 6) = B w[cols]`` of ``n`` attachments (zero where ``width`` is 0: the ground)."""
    for j in range(nu.shape[0]):
        for d in range(6):
            s = 0.0
            for c in range(width[j]):
                s += B[j, d, c] * w[cols[j, c]]
            nu[j, d] = s


@jit_kernel
def generalized(lam, xa, xb, Ba, ca, wa_, Bb, cb, wb_, out):
    """``out += B^T wrench`` for the wrenches ``lam (nj, 6)`` on B at its origin (body b) and the opposite,
    transported to A's origin, on body a (:func:`~flexmb.dynamics.elements.joint_law.side_a_wrench`);
    side B first, then A."""
    nj = lam.shape[0]
    for j in range(nj):
        for c in range(wb_[j]):
            s = 0.0
            for d in range(6):
                s += Bb[j, d, c] * lam[j, d]
            out[cb[j, c]] += s
    wa = np.empty((nj, 1, 6))
    z = np.empty((0, 0, 6, 6))
    side_a_wrench(lam.reshape((nj, 1, 6)), xa.reshape((nj, 1, 3)), xb.reshape((nj, 1, 3)), wa, z, z, np.bool_(False))
    for j in range(nj):
        for c in range(wa_[j]):
            s = 0.0
            for d in range(6):
                s += Ba[j, d, c] * wa[j, 0, d]
            out[ca[j, c]] += s


@jit_kernel
def apply_blocks(Mi, voff, nvb, x, out):
    """``out = blockdiag(Mi) x`` (``(nv,)``; body ``b``'s block at ``voff[b]``)."""
    for b in range(voff.size):
        o = voff[b]
        for d in range(nvb[b]):
            s = 0.0
            for e in range(nvb[b]):
                s += Mi[b, d, e] * x[o + e]
            out[o + d] = s


@jit_kernel
def gram_values(C, B, ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, width, Mi, out):
    """Values of ``G M^-1 G^T`` added into ``out`` at ``pair_slot``: per body ``b`` (its entry rows
    ``ptr[b] .. ptr[b + 1]``, each a row of G on one side's attachment, ``g_e = C[side, joint, comp] B[side,
    joint]``) the block ``G_b Mi_b G_b^T`` (pairs in row-major order).  ``C (2, nj, 7, 6)``, ``B (2, nj, 6,
    cw)`` (side 0: B, side 1: A)."""
    cw = Mi.shape[1]
    k = 0
    for bi in range(ptr.size - 1):
        e0, e1 = ptr[bi], ptr[bi + 1]
        z = e1 - e0
        if z == 0:
            continue
        b = ent_body[e0]
        G = np.zeros((z, cw))
        MG = np.zeros((z, cw))
        for a in range(z):
            e = e0 + a
            s, j, c = ent_side[e], ent_joint[e], ent_comp[e]
            for q in range(width[s, j]):
                v = 0.0
                for d in range(6):
                    v += C[s, j, c, d] * B[s, j, d, q]
                G[a, q] = v
            for q in range(cw):
                v = 0.0
                for t in range(cw):
                    v += G[a, t] * Mi[b, t, q]
                MG[a, q] = v
        for a in range(z):
            for a2 in range(z):
                v = 0.0
                for q in range(cw):
                    v += MG[a, q] * G[a2, q]
                out[pair_slot[k]] += v
                k += 1


@jit_kernel
def cholesky_solve(A, b, tol, x):
    """``x = A^-1 b`` by a Cholesky factorization of the symmetric ``A (n, n)`` (lower triangle);
    False (``x`` undefined) when ``A`` is not positive definite or a pivot is below ``tol`` times its
    diagonal entry (squared, as :func:`flexmb.dynamics.node.projection._numerically_singular`): the
    caller then takes the factor's solve with its singular-row handling."""
    n = A.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        d = A[j, j]
        if not s > 0.0 or s < tol * (d if d > 0 else 1.0):
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= L[i, k] * x[k]
        x[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= L[k, i] * x[k]
        x[i] = t / L[i, i]
    for i in range(n):
        if not np.isfinite(x[i]):
            return False
    return True


@jit_kernel
def correction(Mi, voff, nvb, Ra, Rb, universal, xa, xb, Ba, ca, wa_, Bb, cb, wb_, jj, cc, mu, w2, loc, w):
    """``loc[jj, cc] = mu`` (the rows' multipliers ``(nj, 7)``) and ``w = w2 - M^-1 G^T mu``: the rows'
    multipliers as the wrench on B (:func:`~flexmb.dynamics.elements.joint_law.node_rate_wrench`), handed to
    the bodies (:func:`generalized`), through the inverse mass."""
    nj = loc.shape[0]
    for j in range(nj):
        for c in range(7):
            loc[j, c] = 0.0
    for q in range(jj.size):
        loc[jj[q], cc[q]] = mu[q]
    wb = np.empty((nj, 6))
    node_rate_wrench(Ra, Rb, universal, loc, wb)
    gen = np.zeros(w2.size)
    generalized(wb, xa, xb, Ba, ca, wa_, Bb, cb, wb_, gen)
    corr = np.empty(w2.size)
    apply_blocks(Mi, voff, nvb, gen, corr)
    for k in range(w2.size):
        w[k] = w2[k] - corr[k]


@jit_kernel
def joint_rates(w, xa, Ra, xb, Rb, Ba, ca, wa_, Bb, cb, wb_, universal, rates):
    """The joints' relative rates ``rates (nj, 7)`` for the body velocities ``w (nv,)``: the attachments'
    velocities (:func:`attachment_velocities`) through
    :func:`~flexmb.dynamics.elements.joint_law.node_rates`."""
    nj = xa.shape[0]
    nua, nub = np.empty((nj, 6)), np.empty((nj, 6))
    attachment_velocities(Ba, ca, wa_, w, nua)
    attachment_velocities(Bb, cb, wb_, w, nub)
    node_rates(nua, nub, xa, Ra, xb, Rb, universal, rates)


@jit_kernel
def violation(w2, xa, Ra, xb, Rb, Ba, ca, wa_, Bb, cb, wb_, universal, jj, cc, target, viol):
    """``viol = G w2 - target`` of the rows ``(jj, cc)`` (:func:`joint_rates`)."""
    rates = np.empty((xa.shape[0], 7))
    joint_rates(w2, xa, Ra, xb, Rb, Ba, ca, wa_, Bb, cb, wb_, universal, rates)
    for q in range(jj.size):
        viol[q] = rates[jj[q], cc[q]] - target[q]


@jit_kernel
def project_dense(Mi, voff, nvb, p, xa, Ra, xb, Rb, Ba, ca, wa_, Bb, cb, wb_, universal, jj, cc, target,
                  ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, tol, w2, A, mu, loc, w):
    """The node-velocity projection with a dense matrix in one call: ``w2 = M^-1 p``, the rows' violation,
    ``A = G M^-1 G^T (n, n)``, its Cholesky solve and ``w = w2 - M^-1 G^T mu``.  False when the Cholesky
    declines (``w2``, ``A`` and the violation in ``mu`` are then filled for the caller's solve and
    :func:`correction`)."""
    apply_blocks(Mi, voff, nvb, p, w2)
    nj = xa.shape[0]
    viol = np.empty(jj.size)
    violation(w2, xa, Ra, xb, Rb, Ba, ca, wa_, Bb, cb, wb_, universal, jj, cc, target, viol)
    C = np.empty((2, nj, 7, 6))
    node_rate_rows(xa, Ra, xb, Rb, universal, C[0], C[1])
    Bs = np.empty((2, nj, 6, Ba.shape[2]))
    Bs[0] = Bb
    Bs[1] = Ba
    widths = np.empty((2, nj), np.int64)
    widths[0] = wb_
    widths[1] = wa_
    Af = A.reshape(A.size)
    for k in range(Af.size):
        Af[k] = 0.0
    gram_values(C, Bs, ent_side, ent_joint, ent_comp, ent_body, ptr, pair_slot, widths, Mi, Af)
    if not cholesky_solve(A, viol, tol, mu):
        for q in range(jj.size):
            mu[q] = viol[q]
        return False
    correction(Mi, voff, nvb, Ra, Rb, universal, xa, xb, Ba, ca, wa_, Bb, cb, wb_, jj, cc, mu, w2, loc, w)
    return True


# ============================================================================ the scaled loop matrix
@jit_kernel
def _nanmax(a, b):
    """``np.maximum(a, b)``: a NaN wins."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a >= b else b


@jit_kernel
def _side_magnitudes(B, cols, width, L, mag):
    """``mag[col] = max(mag[col], max_d |B[j, d, q]|)`` (rows ``d < 3`` over ``L``) over the used columns."""
    for j in range(B.shape[0]):
        for q in range(width[j]):
            m = abs(B[j, 0, q]) / L
            for d in range(1, 6):
                m = _nanmax(m, abs(B[j, d, q]) / L if d < 3 else abs(B[j, d, q]))
            c = cols[j, q]
            mag[c] = _nanmax(mag[c], m)


@jit_kernel
def column_magnitudes(Ba, ca, wa, Bb, cb, wb, L, rigid, body, nb, floor, mag):
    """The natural magnitude ``mag (nv,)`` of each velocity column as the joints see it (the method:
    :func:`flexmb.dynamics.node.redundancy.column_magnitudes`): the largest entry of the attachments' maps
    in the column (translations over ``L``), modal columns (``rigid`` False) floored at ``floor`` of
    their body's (``body (nv,)``) largest modal one, columns no joint sees 1."""
    for k in range(mag.size):
        mag[k] = 0.0
    _side_magnitudes(Ba, ca, wa, L, mag)
    _side_magnitudes(Bb, cb, wb, L, mag)
    top = np.zeros(nb)
    for k in range(mag.size):
        if not rigid[k]:
            top[body[k]] = _nanmax(top[body[k]], mag[k])
    for k in range(mag.size):
        if not rigid[k]:
            mag[k] = _nanmax(mag[k], floor * top[body[k]])
        if mag[k] == 0.0:
            mag[k] = 1.0


@jit_kernel
def scaled_loop_values(CBb, CBa, jj, cc, posb, posa, rs, cols, Ba, ca, wa, Bb, cb, wb, L, rigid, body, nb, floor,
                       colscale, G):
    """The scaled loop matrix ``G (n_rows, n_cols) = Dr G0 Dc`` and ``colscale (nv,) = 1 / mag``
    (:func:`column_magnitudes`): ``G0[r, pos[r, q]]`` the sum of both sides' ``CB[jj[r], cc[r], q]`` (the
    rate blocks times the velocity maps, ``C @ B (nj, 7, cw)``; side B first; ``pos`` -1: unused), ``Dr``
    the row scales ``rs``, ``Dc`` ``colscale`` at the columns ``cols``."""
    column_magnitudes(Ba, ca, wa, Bb, cb, wb, L, rigid, body, nb, floor, colscale)
    for k in range(colscale.size):
        colscale[k] = 1.0 / colscale[k]
    for r in range(G.shape[0]):
        for k in range(G.shape[1]):
            G[r, k] = 0.0
        j, c = jj[r], cc[r]
        for q in range(posb.shape[1]):
            if posb[r, q] >= 0:
                G[r, posb[r, q]] += CBb[j, c, q]
        for q in range(posa.shape[1]):
            if posa[r, q] >= 0:
                G[r, posa[r, q]] += CBa[j, c, q]
        for k in range(G.shape[1]):
            G[r, k] = G[r, k] * rs[r]
            G[r, k] = G[r, k] * colscale[cols[k]]
