"""Compiled node work of rigid-only models: the joints' frames at a node, the multipliers as body
momenta (gauge reset) and the node-velocity projection, each one numba kernel.

The general path (:mod:`flexmb.dynamics.node.projection`) goes through the body types' node contract
(``node_attach_pose``, ``node_velocity_map``, ``inverse_mass_blocks``) with ~40 small NumPy calls
per node; on small models that glue was ~30 % of a time element (issue 6 C,
``benchmarks/README.md`` "Small models after ELEM").  When every body of the model is a plain
:class:`~flexmb.dynamics.bodies.rigid.RigidBodies` (exact type: a test double or another body type
keeps the general path) the same formulas are evaluated here with index arrays built once per
model:

* attachment frame ``x = x_G + R c``, ``R_att = R A`` (ground: fixed), levers ``r = R c``;
* the rigid velocity map ``nu = (v + omega x r, omega)``;
* generalized momenta of a wrench ``(f, m)`` at the attachment: ``(f, m + r x f)``;
* ``M^-1 = diag(I / m, R J0^-1 R^T)``;
* the projection's rows ``G`` (:func:`flexmb.dynamics.node.projection.rate_blocks` times the velocity
  maps), ``G M^-1 G^T`` and its Cholesky solve for the dense backend (at most
  :data:`~flexmb.dynamics.node.projection.DENSE_ROWS` rows; (nearly) singular rows go to
  :class:`~flexmb.dynamics.node.projection._SpdFactor` and its fallbacks);
* the body output at a node (frames, velocities, kinetic energy, gravity potential).

The end values, gauge reset and predictor are in :mod:`flexmb.dynamics.rigid.march`.

Results agree with the general path to round-off (summation order), ``tests/test_rigid_node.py``.
``ENABLED = False`` switches the fast path off (tests compare both paths).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import _jit

#: the fast path is used when True and the model qualifies (tests switch it off to compare)
ENABLED = True


class RigidNode:
    """Model-constant arrays of the node kernels of a rigid-only model (built once per model,
    :func:`rigid_node`): per side (a, b) of each joint the model body (``-1``: ground), the point
    ``c`` relative to the centre of mass in body axes, the frame ``A`` in body axes, the ground
    pose; per model body its velocity offset, ``1 / m`` and ``J0^-1``."""

    def __init__(self, cm):
        nb = cm.nb
        self.nj = cm.nj
        self.nv = cm.nv
        self.voff = np.ascontiguousarray(cm.vel_off, dtype=np.int64)
        self.minv = np.empty(nb)
        self.J0inv = np.empty((nb, 3, 3))
        for grp in cm.groups:
            self.minv[grp.bodies] = 1.0 / grp.mass
            self.J0inv[grp.bodies] = grp._J0inv
        self.com = np.empty((nb, 3))
        self.mass = np.empty(nb)
        self.J0 = np.empty((nb, 3, 3))
        for grp in cm.groups:
            self.com[grp.bodies], self.mass[grp.bodies], self.J0[grp.bodies] = grp.com, grp.mass, grp.J0
        self.universal = bool(cm.jnt_universal.any())
        self.side = []
        for att in (cm.att_a, cm.att_b):
            body = np.where(att.ground, -1, att.body).astype(np.int64)
            c = np.zeros((att.n, 3))
            A = np.ascontiguousarray(att.frame, dtype=float).copy()
            for _g, mask, _local, data in att.parts:
                c[mask] = data.c
                A[mask] = data.A
            self.side.append((body, np.ascontiguousarray(c), A,
                              np.ascontiguousarray(att.ground_point, dtype=float)))

    def frames(self, st):
        """``xa, Ra, xb, Rb, ra, rb``: attachment frames ``(nj, 3)``, ``(nj, 3, 3)`` and levers
        ``r = R c (nj, 3)`` (zero on the ground) at the node ``st``."""
        x, R = np.ascontiguousarray(st.x), np.ascontiguousarray(st.R)
        out = []
        for body, c, A, gp in self.side:
            xs, Rs, rs = np.empty((self.nj, 3)), np.empty((self.nj, 3, 3)), np.empty((self.nj, 3))
            node_frames(x, R, body, c, A, gp, xs, Rs, rs)
            out.append((xs, Rs, rs))
        (xa, Ra, ra), (xb, Rb, rb) = out
        return xa, Ra, xb, Rb, ra, rb

    def generalized(self, fr, lam: NDArray) -> NDArray:
        """:func:`flexmb.dynamics.node.projection.generalized`: joint wrenches ``lam (nj, 6)`` (on B at
        its origin) as generalized momenta ``(nv,)``."""
        out = np.zeros(self.nv)
        generalized(np.ascontiguousarray(lam, dtype=float), fr.xa, fr.xb, fr.ra, fr.rb,
                    self.side[0][0], self.side[1][0], self.voff, out)
        return out

    def inverse_mass(self, st) -> NDArray:
        """``R J0^-1 R^T (nb, 3, 3)`` at the node."""
        out = np.empty((self.minv.size, 3, 3))
        rotated_inverse(np.ascontiguousarray(st.R), self.J0inv, out)
        return out

    def velocities(self, Ji: NDArray, p: NDArray) -> NDArray:
        """``M^-1 p (nv,)`` with ``Ji`` of :meth:`inverse_mass`."""
        out = np.empty(self.nv)
        apply_inverse_mass(self.minv, Ji, self.voff, np.ascontiguousarray(p, dtype=float), out)
        return out

    def rates(self, fr, w: NDArray) -> NDArray:
        """:func:`flexmb.dynamics.node.projection.joint_rates` of the body velocities ``w (nv,)``: ``(nj, 7)``."""
        out = np.empty((self.nj, 7))
        joint_rates(np.ascontiguousarray(w, dtype=float), fr.xa, fr.Ra, fr.xb, fr.Rb, fr.ra, fr.rb,
                    self.side[0][0], self.side[1][0], self.voff, self.universal, out)
        return out

    def gram(self, fr, Ji: NDArray, jj: NDArray, cc: NDArray) -> NDArray:
        """``G M^-1 G^T (n, n)`` of the rows ``(jj, cc)`` (dense)."""
        n = jj.size
        out = np.zeros((n, n))
        gram(fr.xa, fr.Ra, fr.xb, fr.Rb, fr.ra, fr.rb, self.side[0][0], self.side[1][0], self.minv, Ji,
             jj, cc, self.universal, out)
        return out

    def output(self, st, w: NDArray, gravity: NDArray):
        """``pos, rotm, vel, om`` of the body frames ``(nb, ...)`` at the node for velocities ``w``,
        the kinetic energy and the gravity potential (:func:`node_output`)."""
        nb = self.minv.size
        pos, rotm, vel, om = np.empty((nb, 3)), np.empty((nb, 3, 3)), np.empty((nb, 3)), np.empty((nb, 3))
        ke, pe = node_output(st.x, st.R, np.ascontiguousarray(w, dtype=float), self.voff, self.com, self.mass, self.J0,
                             np.asarray(gravity, dtype=float), pos, rotm, vel, om)
        return pos, rotm, vel, om, ke, pe

    def correction(self, fr, Ji: NDArray, loc: NDArray) -> NDArray:
        """``M^-1 G^T mu (nv,)`` for the rows' multipliers as ``loc (nj, 7)``."""
        wb = np.empty((self.nj, 6))
        joint_wrench(fr.Ra, fr.ncross, np.ascontiguousarray(loc), wb)
        return self.velocities(Ji, self.generalized(fr, wb))

def rigid_node(cm) -> RigidNode | None:
    """The model's :class:`RigidNode` (built once, cached on ``cm``), or None when the fast path does
    not apply: switched off, no joints, or a body that is not a plain rigid body."""
    if not ENABLED or not cm.nj:
        return None
    hit = cm.__dict__.get("_rigid_node", False)
    if hit is False:
        from flexmb.dynamics.bodies.rigid import RigidBodies

        hit = RigidNode(cm) if all(type(g) is RigidBodies for g in cm.groups) else None
        cm._rigid_node = hit
    return hit


# ============================================================================ kernels
@_jit
def node_frames(x, R, body, c, A, gp, xs, Rs, rs):
    """Attachment frames of one side: ``xs = x_b + R_b c``, ``Rs = R_b A``, ``rs = R_b c`` (ground:
    ``gp``, ``A``, zero)."""
    for j in range(body.size):
        b = body[j]
        if b < 0:
            for d in range(3):
                xs[j, d] = gp[j, d]
                rs[j, d] = 0.0
                for e in range(3):
                    Rs[j, d, e] = A[j, d, e]
            continue
        for d in range(3):
            r = R[b, d, 0] * c[j, 0] + R[b, d, 1] * c[j, 1] + R[b, d, 2] * c[j, 2]
            rs[j, d] = r
            xs[j, d] = x[b, d] + r
            for e in range(3):
                Rs[j, d, e] = R[b, d, 0] * A[j, 0, e] + R[b, d, 1] * A[j, 1, e] + R[b, d, 2] * A[j, 2, e]


@_jit
def generalized(lam, xa, xb, ra, rb, body_a, body_b, voff, out):
    """``out += B^T wrench`` for ``+lam`` at B (body b) and ``-lam`` transported to A's origin
    (body a): a rigid body receives ``(f, m + r x f)`` at its centre of mass."""
    nj = lam.shape[0]
    for j in range(nj):  # side B first, then A (the order of the general path)
        b = body_b[j]
        if b < 0:
            continue
        o = voff[b]
        f0, f1, f2 = lam[j, 0], lam[j, 1], lam[j, 2]
        r0, r1, r2 = rb[j, 0], rb[j, 1], rb[j, 2]
        out[o] += f0
        out[o + 1] += f1
        out[o + 2] += f2
        out[o + 3] += lam[j, 3] + (r1 * f2 - r2 * f1)
        out[o + 4] += lam[j, 4] + (r2 * f0 - r0 * f2)
        out[o + 5] += lam[j, 5] + (r0 * f1 - r1 * f0)
    for j in range(nj):
        b = body_a[j]
        if b < 0:
            continue
        o = voff[b]
        f0, f1, f2 = lam[j, 0], lam[j, 1], lam[j, 2]
        d0, d1, d2 = xb[j, 0] - xa[j, 0], xb[j, 1] - xa[j, 1], xb[j, 2] - xa[j, 2]
        m0 = -(lam[j, 3] + (d1 * f2 - d2 * f1))
        m1 = -(lam[j, 4] + (d2 * f0 - d0 * f2))
        m2 = -(lam[j, 5] + (d0 * f1 - d1 * f0))
        f0, f1, f2 = -f0, -f1, -f2
        r0, r1, r2 = ra[j, 0], ra[j, 1], ra[j, 2]
        out[o] += f0
        out[o + 1] += f1
        out[o + 2] += f2
        out[o + 3] += m0 + (r1 * f2 - r2 * f1)
        out[o + 4] += m1 + (r2 * f0 - r0 * f2)
        out[o + 5] += m2 + (r0 * f1 - r1 * f0)


@_jit
def rotated_inverse(R, J0inv, out):
    """``out[b] = R_b J0inv_b R_b^T``."""
    for b in range(R.shape[0]):
        for d in range(3):
            t0 = R[b, d, 0] * J0inv[b, 0, 0] + R[b, d, 1] * J0inv[b, 1, 0] + R[b, d, 2] * J0inv[b, 2, 0]
            t1 = R[b, d, 0] * J0inv[b, 0, 1] + R[b, d, 1] * J0inv[b, 1, 1] + R[b, d, 2] * J0inv[b, 2, 1]
            t2 = R[b, d, 0] * J0inv[b, 0, 2] + R[b, d, 1] * J0inv[b, 1, 2] + R[b, d, 2] * J0inv[b, 2, 2]
            for e in range(3):
                out[b, d, e] = t0 * R[b, e, 0] + t1 * R[b, e, 1] + t2 * R[b, e, 2]


@_jit
def apply_inverse_mass(minv, Ji, voff, p, out):
    """``out = M^-1 p`` per body: ``v = p_f / m``, ``omega = Ji p_m``."""
    for b in range(minv.size):
        o = voff[b]
        for d in range(3):
            out[o + d] = minv[b] * p[o + d]
        for d in range(3):
            out[o + 3 + d] = Ji[b, d, 0] * p[o + 3] + Ji[b, d, 1] * p[o + 4] + Ji[b, d, 2] * p[o + 5]


@_jit
def _nu(w, body, voff, r, j, nu):
    """Velocity ``(v + omega x r, omega)`` of attachment ``j`` (zero on the ground) into ``nu (6,)``."""
    b = body[j]
    if b < 0:
        for d in range(6):
            nu[d] = 0.0
        return
    o = voff[b]
    w0, w1, w2 = w[o + 3], w[o + 4], w[o + 5]
    nu[0] = w[o] + (w1 * r[j, 2] - w2 * r[j, 1])
    nu[1] = w[o + 1] + (w2 * r[j, 0] - w0 * r[j, 2])
    nu[2] = w[o + 2] + (w0 * r[j, 1] - w1 * r[j, 0])
    nu[3], nu[4], nu[5] = w0, w1, w2


@_jit
def joint_rates(w, xa, Ra, xb, Rb, ra, rb, body_a, body_b, voff, universal, out):
    """Rates ``(nj, 7)``: ``R_A^T (v_B - v_A - omega_A x d)``, ``R_A^T (omega_B - omega_A)`` and the
    universal joint's ``(x_A x y_B) . (omega_B - omega_A)`` (zero without universal joints)."""
    na = np.empty(6)
    nb = np.empty(6)
    for j in range(out.shape[0]):
        _nu(w, body_a, voff, ra, j, na)
        _nu(w, body_b, voff, rb, j, nb)
        d0, d1, d2 = xb[j, 0] - xa[j, 0], xb[j, 1] - xa[j, 1], xb[j, 2] - xa[j, 2]
        u0 = nb[0] - na[0] - (na[4] * d2 - na[5] * d1)
        u1 = nb[1] - na[1] - (na[5] * d0 - na[3] * d2)
        u2 = nb[2] - na[2] - (na[3] * d1 - na[4] * d0)
        g0, g1, g2 = nb[3] - na[3], nb[4] - na[4], nb[5] - na[5]
        for d in range(3):
            out[j, d] = Ra[j, 0, d] * u0 + Ra[j, 1, d] * u1 + Ra[j, 2, d] * u2
            out[j, 3 + d] = Ra[j, 0, d] * g0 + Ra[j, 1, d] * g1 + Ra[j, 2, d] * g2
        if universal:
            n0 = Ra[j, 1, 0] * Rb[j, 2, 1] - Ra[j, 2, 0] * Rb[j, 1, 1]
            n1 = Ra[j, 2, 0] * Rb[j, 0, 1] - Ra[j, 0, 0] * Rb[j, 2, 1]
            n2 = Ra[j, 0, 0] * Rb[j, 1, 1] - Ra[j, 1, 0] * Rb[j, 0, 1]
            out[j, 6] = n0 * g0 + n1 * g1 + n2 * g2
        else:
            out[j, 6] = 0.0


@_jit
def _row(xa, Ra, xb, Rb, r, j, c, side, universal, g):
    """Row ``(j, c)`` of G on the body of ``side`` (0: a, 1: b) into ``g (6,)``: ``C B`` with the
    rate block ``C`` of :func:`flexmb.dynamics.node.projection.rate_blocks` and the rigid map
    ``B = [[I, -skew(r)], [0, I]]`` (``r`` the side's lever of joint ``j``)."""
    for k in range(6):
        g[k] = 0.0
    sg = 1.0 if side == 1 else -1.0
    if c < 3:
        for k in range(3):
            g[k] = sg * Ra[j, k, c]           # C[:3] = +-R_A^T row c
        if side == 0:  # + R_A^T skew(d) on omega_A
            d0, d1, d2 = xb[j, 0] - xa[j, 0], xb[j, 1] - xa[j, 1], xb[j, 2] - xa[j, 2]
            a0, a1, a2 = Ra[j, 0, c], Ra[j, 1, c], Ra[j, 2, c]
            # (a^T skew(d))_k = (a x d)_k
            g[3] = a1 * d2 - a2 * d1
            g[4] = a2 * d0 - a0 * d2
            g[5] = a0 * d1 - a1 * d0
    elif c < 6:
        for k in range(3):
            g[3 + k] = sg * Ra[j, k, c - 3]
    elif universal:
        g[3] = sg * (Ra[j, 1, 0] * Rb[j, 2, 1] - Ra[j, 2, 0] * Rb[j, 1, 1])
        g[4] = sg * (Ra[j, 2, 0] * Rb[j, 0, 1] - Ra[j, 0, 0] * Rb[j, 2, 1])
        g[5] = sg * (Ra[j, 0, 0] * Rb[j, 1, 1] - Ra[j, 1, 0] * Rb[j, 0, 1])
    # times B: the moment part gains -C_f skew(r), i.e. (r x C_f)
    r0, r1, r2 = r[j, 0], r[j, 1], r[j, 2]
    f0, f1, f2 = g[0], g[1], g[2]
    g[3] += r1 * f2 - r2 * f1
    g[4] += r2 * f0 - r0 * f2
    g[5] += r0 * f1 - r1 * f0


@_jit
def gram(xa, Ra, xb, Rb, ra, rb, body_a, body_b, minv, Ji, jj, cc, universal, out):
    """``out = G M^-1 G^T (n, n)``: a sum over the sides of both rows that sit on the same body of
    ``g1 M_b^-1 g2^T``."""
    n = jj.size
    G = np.zeros((n, 2, 6))
    MG = np.zeros((n, 2, 6))
    bod = np.empty((n, 2), dtype=np.int64)
    for q in range(n):
        j, c = jj[q], cc[q]
        for side in range(2):
            b = body_a[j] if side == 0 else body_b[j]
            bod[q, side] = b
            if b < 0:
                continue
            g = G[q, side]
            _row(xa, Ra, xb, Rb, ra if side == 0 else rb, j, c, side, universal, g)
            for k in range(3):
                MG[q, side, k] = minv[b] * g[k]
                MG[q, side, 3 + k] = g[3] * Ji[b, 0, k] + g[4] * Ji[b, 1, k] + g[5] * Ji[b, 2, k]  # (g M^-1)
    for q1 in range(n):
        for s1 in range(2):
            b = bod[q1, s1]
            if b < 0:
                continue
            for q2 in range(q1, n):
                for s2 in range(2):
                    if bod[q2, s2] != b:
                        continue
                    v = 0.0
                    for k in range(6):
                        v += MG[q1, s1, k] * G[q2, s2, k]
                    out[q1, q2] += v
    for q1 in range(n):
        for q2 in range(q1 + 1, n):
            out[q2, q1] = out[q1, q2]


@_jit
def joint_wrench(Ra, ncross, loc, out):
    """:func:`flexmb.dynamics.node.projection.joint_wrench`: ``(R_A loc_f, R_A loc_m + loc_6 ncross)``."""
    for j in range(loc.shape[0]):
        for d in range(3):
            out[j, d] = Ra[j, d, 0] * loc[j, 0] + Ra[j, d, 1] * loc[j, 1] + Ra[j, d, 2] * loc[j, 2]
            out[j, 3 + d] = (Ra[j, d, 0] * loc[j, 3] + Ra[j, d, 1] * loc[j, 4] + Ra[j, d, 2] * loc[j, 5]) \
                + loc[j, 6] * ncross[j, d]


# ============================================================================ node output
@_jit
def node_output(x, R, w, voff, com, mass, J0, g, pos, rotm, vel, om):
    """Body frame origins, rotations, origin velocities and angular velocities at a node (as
    :meth:`~flexmb.dynamics.bodies.rigid.RigidBodies.frame_output`), and ``(kinetic energy,
    gravity potential)``: ``w . M w / 2`` with ``M = diag(m I, R J0 R^T)``, ``-sum m x . g``."""
    ke = 0.0
    pe = 0.0
    for b in range(x.shape[0]):
        o = voff[b]
        w0, w1, w2 = w[o + 3], w[o + 4], w[o + 5]
        rc = np.empty(3)
        for d in range(3):
            rc[d] = R[b, d, 0] * com[b, 0] + R[b, d, 1] * com[b, 1] + R[b, d, 2] * com[b, 2]
            for e in range(3):
                rotm[b, d, e] = R[b, d, e]
            om[b, d] = w[o + 3 + d]
        for d in range(3):
            pos[b, d] = x[b, d] - rc[d]
        vel[b, 0] = w[o] - (w1 * rc[2] - w2 * rc[1])
        vel[b, 1] = w[o + 1] - (w2 * rc[0] - w0 * rc[2])
        vel[b, 2] = w[o + 2] - (w0 * rc[1] - w1 * rc[0])
        # R^T omega, then J0 (R^T omega) . (R^T omega)
        u0 = R[b, 0, 0] * w0 + R[b, 1, 0] * w1 + R[b, 2, 0] * w2
        u1 = R[b, 0, 1] * w0 + R[b, 1, 1] * w1 + R[b, 2, 1] * w2
        u2 = R[b, 0, 2] * w0 + R[b, 1, 2] * w1 + R[b, 2, 2] * w2
        rot = (u0 * (J0[b, 0, 0] * u0 + J0[b, 0, 1] * u1 + J0[b, 0, 2] * u2)
               + u1 * (J0[b, 1, 0] * u0 + J0[b, 1, 1] * u1 + J0[b, 1, 2] * u2)
               + u2 * (J0[b, 2, 0] * u0 + J0[b, 2, 1] * u1 + J0[b, 2, 2] * u2))
        ke += mass[b] * (w[o] * w[o] + w[o + 1] * w[o + 1] + w[o + 2] * w[o + 2]) + rot
        pe -= mass[b] * (x[b, 0] * g[0] + x[b, 1] * g[1] + x[b, 2] * g[2])
    return 0.5 * ke, pe


@_jit
def cholesky_solve(A, b, tol, x):
    """``x = A^-1 b`` by a Cholesky factorization of the symmetric ``A (n, n)`` (lower triangle);
    False (``x`` undefined) when ``A`` is not positive definite or a pivot is below ``tol`` times its
    diagonal entry (squared, as :func:`flexmb.dynamics.node.projection._numerically_singular`): the
    caller then takes :meth:`~flexmb.dynamics.node.projection._SpdFactor.solve` with its fallbacks."""
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


@_jit
def _correct(Ji, minv, voff, Ra, ncross, xa, xb, ra, rb, body_a, body_b, jj, cc, mu, w2, loc, w):
    """``loc[jj, cc] = mu`` and ``w = w2 - M^-1 G^T mu`` (the rows' multipliers as a wrench on B,
    handed to the bodies, through the inverse mass)."""
    nj = loc.shape[0]
    for j in range(nj):
        for c in range(7):
            loc[j, c] = 0.0
    for q in range(jj.size):
        loc[jj[q], cc[q]] = mu[q]
    wb = np.empty((nj, 6))
    joint_wrench(Ra, ncross, loc, wb)
    gen = np.zeros(w2.size)
    generalized(wb, xa, xb, ra, rb, body_a, body_b, voff, gen)
    corr = np.empty(w2.size)
    apply_inverse_mass(minv, Ji, voff, gen, corr)
    for k in range(w2.size):
        w[k] = w2[k] - corr[k]


@_jit
def project(R, J0inv, minv, voff, p, xa, Ra, xb, Rb, ra, rb, ncross, body_a, body_b, universal, jj, cc, target,
            tol, Ji, w2, A, mu, loc, w):
    """The node-velocity projection of a rigid-only model in one call: ``w2 = M^-1 p``, the rows'
    violation, ``A = G M^-1 G^T``, its Cholesky solve and ``w = w2 - M^-1 G^T mu``.  False when the
    Cholesky declines (``Ji``, ``w2``, ``A`` and the violation in ``mu`` are then filled for the
    general solve and :func:`_correct`)."""
    rotated_inverse(R, J0inv, Ji)
    apply_inverse_mass(minv, Ji, voff, p, w2)
    rates = np.empty((Ra.shape[0], 7))
    joint_rates(w2, xa, Ra, xb, Rb, ra, rb, body_a, body_b, voff, universal, rates)
    viol = np.empty(jj.size)
    for q in range(jj.size):
        viol[q] = rates[jj[q], cc[q]] - target[q]
    gram(xa, Ra, xb, Rb, ra, rb, body_a, body_b, minv, Ji, jj, cc, universal, A)
    if not cholesky_solve(A, viol, tol, mu):
        for q in range(jj.size):
            mu[q] = viol[q]
        return False
    _correct(Ji, minv, voff, Ra, ncross, xa, xb, ra, rb, body_a, body_b, jj, cc, mu, w2, loc, w)
    return True
