"""Compiled kernels (numba) for the joints' glue around :func:`flexmb.dynamics.kernels.joint_rows`.

The constitutive-law rows of the joints (:func:`flexmb.dynamics.elements.joints._constitutive`) and the
multipliers' wrench on side A (:func:`flexmb.dynamics.elements.joints.onto_bodies`) were ~20 small NumPy
calls each per evaluation (concatenate, einsum on 3-vectors, broadcast, where); on small models
that glue, not the arithmetic, was the cost (issue 6 C, benchmarks/README.md "Small models").
Here each is one loop over joints and internal points, with the same operations in the same order
as the NumPy expressions they replace (results equal to round-off: ``tests/test_joint_kernels.py``).

Compilation as in :mod:`flexmb.dynamics.kernels` (``nopython``, ``fastmath`` off, on-disk cache).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import _jit


@_jit
def constitutive_rows(Jv, sl, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons, r, jq):
    """Constitutive-law rows of all joints (before the universal joints' overrides).

    ``Jv (nj, p, 30)`` the joints' unknowns at the Gauss points, ``sl`` the first slots
    ``(JS, JPHI, JLAM, JQ, JNA, JNB)``, ``US``, ``UPHI (nj, p, 3)`` the relative coordinates'
    polynomials at the constraint points, ``acc (nj, 3)`` the accumulated rotation, ``tgt
    (nj, 6, p)`` drive targets at the constraint points, ``Gax (nj, p, 3)``, ``GaR (nj, p, 3, 3)``,
    ``Gbx`` attachment poses at the Gauss points, ``k``, ``c``, ``ref (nj, 6)`` stiffness, damping,
    reference, ``cons (nj, 6)`` bool.  Writes ``r[j, i, jq + m]`` (``r (nj, p, 30)``)::

        constrained m:  u_m(tau_i) + acc_m - target_m(t_i)
        free m:         Qbar_m,i + k_m (q_m,i + acc_m - ref_m) + c_m qdot_m,i

    ``qdot = (R_A^T (v_B - v_A - omega_A x (x_B - x_A)), R_A^T (omega_B - omega_A))`` from the
    attachment velocities ``nu`` (Gauss points).
    """
    nj, p = Jv.shape[0], Jv.shape[1]
    JS, JPHI, JQ, JNA, JNB = sl[0], sl[1], sl[3], sl[4], sl[5]
    acc6 = np.zeros(6)
    uq = np.zeros(6)
    qg = np.zeros(6)
    u = np.zeros(3)
    w = np.zeros(3)
    qd = np.zeros(6)
    dg = np.zeros(3)
    for j in range(nj):
        for d in range(3):
            acc6[d] = 0.0
            acc6[3 + d] = acc[j, d]
        for i in range(p):
            for d in range(3):
                uq[d] = US[j, i, d]
                uq[3 + d] = UPHI[j, i, d]
                qg[d] = Jv[j, i, JS + d] + acc6[d]
                qg[3 + d] = Jv[j, i, JPHI + d] + acc6[3 + d]
                dg[d] = Gbx[j, i, d] - Gax[j, i, d]
            wa0, wa1, wa2 = Jv[j, i, JNA + 3], Jv[j, i, JNA + 4], Jv[j, i, JNA + 5]
            cr0 = wa1 * dg[2] - wa2 * dg[1]
            cr1 = wa2 * dg[0] - wa0 * dg[2]
            cr2 = wa0 * dg[1] - wa1 * dg[0]
            u[0] = Jv[j, i, JNB] - Jv[j, i, JNA] - cr0
            u[1] = Jv[j, i, JNB + 1] - Jv[j, i, JNA + 1] - cr1
            u[2] = Jv[j, i, JNB + 2] - Jv[j, i, JNA + 2] - cr2
            for d in range(3):
                w[d] = Jv[j, i, JNB + 3 + d] - Jv[j, i, JNA + 3 + d]
            for d in range(3):
                qd[d] = GaR[j, i, 0, d] * u[0] + GaR[j, i, 1, d] * u[1] + GaR[j, i, 2, d] * u[2]
                qd[3 + d] = GaR[j, i, 0, d] * w[0] + GaR[j, i, 1, d] * w[1] + GaR[j, i, 2, d] * w[2]
            for m in range(6):
                if cons[j, m]:
                    r[j, i, jq + m] = uq[m] + acc6[m] - tgt[j, m, i]
                else:
                    r[j, i, jq + m] = (Jv[j, i, JQ + m] + k[j, m] * (qg[m] - ref[j, m])) + c[j, m] * qd[m]


@_jit
def side_a_wrench(L, Gax, Gbx, wa, dW_lam, dW_xb, jac):
    """The multipliers' wrench on side A, ``wa = -(lam_f, lam_m + (x_B - x_A) x lam_f)``
    (``(nj, p, 6)``), and (``jac``) its derivatives ``dW_lam (nj, p, 6, 6)`` with respect to the
    multipliers and ``dW_xb (nj, p, 6, 6)`` with respect to ``(dx, psi)`` of B (that of A is
    ``-dW_xb``).  ``L (nj, p, 6)`` multipliers, ``Gax``, ``Gbx (nj, p, 3)`` attachment points."""
    nj, p = L.shape[0], L.shape[1]
    for j in range(nj):
        for i in range(p):
            d0 = Gbx[j, i, 0] - Gax[j, i, 0]
            d1 = Gbx[j, i, 1] - Gax[j, i, 1]
            d2 = Gbx[j, i, 2] - Gax[j, i, 2]
            l0, l1, l2 = L[j, i, 0], L[j, i, 1], L[j, i, 2]
            wa[j, i, 0] = -l0
            wa[j, i, 1] = -l1
            wa[j, i, 2] = -l2
            wa[j, i, 3] = -(L[j, i, 3] + (d1 * l2 - d2 * l1))
            wa[j, i, 4] = -(L[j, i, 4] + (d2 * l0 - d0 * l2))
            wa[j, i, 5] = -(L[j, i, 5] + (d0 * l1 - d1 * l0))
            if not jac:
                continue
            for a in range(6):
                for b in range(6):
                    dW_lam[j, i, a, b] = 0.0
                    dW_xb[j, i, a, b] = 0.0
            for a in range(6):
                dW_lam[j, i, a, a] = -1.0
            # -skew(dg) in rows 3:, columns :3
            dW_lam[j, i, 3, 1] = d2
            dW_lam[j, i, 3, 2] = -d1
            dW_lam[j, i, 4, 0] = -d2
            dW_lam[j, i, 4, 2] = d0
            dW_lam[j, i, 5, 0] = d1
            dW_lam[j, i, 5, 1] = -d0
            # skew(lam_f) in rows 3:, columns :3
            dW_xb[j, i, 3, 1] = -l2
            dW_xb[j, i, 3, 2] = l1
            dW_xb[j, i, 4, 0] = l2
            dW_xb[j, i, 4, 2] = -l0
            dW_xb[j, i, 5, 0] = -l1
            dW_xb[j, i, 5, 1] = l0


@_jit
def multiplier_blocks(h, Jv, sl, GaR, sNB, bdR, sL):
    """Jacobian values of the multiplier definition at the Gauss points (``(nj, p, ...)``):
    ``sNB = h skew(v_B)`` (/ lam_f, rows 3:), ``bdR = -h blockdiag(R_A, R_A)`` (/ Qbar),
    ``sL = -h skew(lam_f)`` (/ v_B, rows 3:).  ``Jv (nj, p, 30)`` the joints' unknowns, ``sl`` the
    first slots ``(JS, JPHI, JLAM, JQ, JNA, JNB)``, ``GaR (nj, p, 3, 3)`` frames A."""
    nj, p = Jv.shape[0], Jv.shape[1]
    JLAM, JNB = sl[2], sl[5]
    for j in range(nj):
        for i in range(p):
            v0, v1, v2 = Jv[j, i, JNB], Jv[j, i, JNB + 1], Jv[j, i, JNB + 2]
            l0, l1, l2 = Jv[j, i, JLAM], Jv[j, i, JLAM + 1], Jv[j, i, JLAM + 2]
            sNB[j, i, 0, 0] = 0.0
            sNB[j, i, 0, 1] = h * -v2
            sNB[j, i, 0, 2] = h * v1
            sNB[j, i, 1, 0] = h * v2
            sNB[j, i, 1, 1] = 0.0
            sNB[j, i, 1, 2] = h * -v0
            sNB[j, i, 2, 0] = h * -v1
            sNB[j, i, 2, 1] = h * v0
            sNB[j, i, 2, 2] = 0.0
            sL[j, i, 0, 0] = 0.0
            sL[j, i, 0, 1] = -h * -l2
            sL[j, i, 0, 2] = -h * l1
            sL[j, i, 1, 0] = -h * l2
            sL[j, i, 1, 1] = 0.0
            sL[j, i, 1, 2] = -h * -l0
            sL[j, i, 2, 0] = -h * -l1
            sL[j, i, 2, 1] = -h * l0
            sL[j, i, 2, 2] = 0.0
            for a in range(6):
                for b in range(6):
                    bdR[j, i, a, b] = 0.0
            for a in range(3):
                for b in range(3):
                    v = -h * GaR[j, i, a, b]
                    bdR[j, i, a, b] = v
                    bdR[j, i, 3 + a, 3 + b] = v


@_jit
def scatter_add(res, rows, vals):
    """``res[rows] += vals`` unbuffered (repeated rows accumulate, like ``np.add.at``), for index and
    value arrays of the same shape (flattened here, C order)."""
    r = rows.ravel()
    v = vals.ravel()
    for a in range(r.size):
        res[r[a]] += v[a]
