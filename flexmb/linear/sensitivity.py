"""Eigenvalue sensitivities with respect to a model parameter: :func:`sensitivity`.

For an eigenvalue ``s`` of the physical descriptor pencil ``(A, E)`` (:func:`flexmb.linear.eigen.physical_pencil`)
with right and left eigenvectors ``x``, ``y`` (``A x = s E x``, ``y^H A = s y^H E``),

    ds/dp = y^H (dA/dp - s dE/dp) x / (y^H E x).

The pencil's derivatives are central differences of the pencils at ``p +- dp``, each linearized about
its own equilibrium (so the derivative includes the shift of the equilibrium with the parameter: a
mass, a stiffness, a preload or a joint position); the pencil's unknowns are the bodies' coordinates
and the joints' rows, the same for every value of the parameter, so no basis of independent
coordinates has to be matched between them.  Dense (small models).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from flexmb.errors import ModelError


def _pencil_at(build, p: float, t: float, steady):
    from flexmb.linear.eigen import physical_pencil
    from flexmb.linear.equilibrium import equilibrium
    from flexmb.linear.linearize import linearize

    lin = linearize(equilibrium(build(p), t, steady=steady, stability=False))
    E, A = physical_pencil(lin)
    return lin, E.toarray(), A.toarray()


def sensitivity(build, p: float, modes=(0,), *, dp: float | None = None, t: float = 0.0, steady=False):
    """``ds/dp`` of the eigenvalues ``modes`` (indices of :func:`flexmb.eigen`'s order, lowest first)
    of ``build(p) -> Model`` at ``p``; returns ``(s (k,), ds_dp (k,))`` (complex; the frequency's
    derivative is ``ds_dp.imag / 2 pi`` [Hz per unit of p]).  ``dp``: the central-difference step of
    the pencil (default ``1e-6 max(|p|, 1)``)."""
    from flexmb.linear.eigen import eigen

    p = float(p)
    if not np.isfinite(p):
        raise ModelError(f"sensitivity: p={p!r} must be finite")
    dp = 1e-6 * max(abs(p), 1.0) if dp is None else float(dp)
    lin, E, A = _pencil_at(build, p, t, steady)
    res = eigen(lin)
    _, Ep, Ap = _pencil_at(build, p + dp, t, steady)
    _, Em, Am = _pencil_at(build, p - dp, t, steady)
    dA, dE = (Ap - Am) / (2 * dp), (Ep - Em) / (2 * dp)
    w, vl, vr = sla.eig(A, E, left=True, right=True)
    out_s, out_d = [], []
    for k in modes:
        if not 0 <= k < res.eigenvalues.size:
            raise ModelError(f"sensitivity: mode {k} does not exist ({res.eigenvalues.size} eigenvalues)")
        target = res.eigenvalues[k]
        with np.errstate(invalid="ignore"):
            i = int(np.nanargmin(np.where(np.isfinite(w), np.abs(w - target), np.nan)))
        x, y = vr[:, i], vl[:, i]
        out_s.append(w[i])
        out_d.append((y.conj() @ (dA - w[i] * dE) @ x) / (y.conj() @ E @ x))
    return np.array(out_s), np.array(out_d)
