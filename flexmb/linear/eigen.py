"""Eigen analysis of a linearization: :func:`eigen` and its result :class:`EigenResult`.

Eigenvalues ``s`` of ``M z'' + C z' + K z = W mu, G z = 0``: in independent coordinates, the state
matrix ``[[0, I], [-Mr^-1 Kr, -Mr^-1 Cr]]`` (dense, ``method="dense"``), or for large models the
``n`` eigenvalues nearest a shift ``sigma`` of the physical descriptor pencil (sparse LU of
``A - sigma E`` and ARPACK, ``method="sparse"``): the element's pencil with the modified momenta and
the multipliers replaced by the bodies' momentum balance (no gauge modes), the kinematic,
constitutive and joint rows kept.

Per eigenvalue ``s = -zeta omega_n + i omega_d``: ``frequency = omega_d / 2 pi`` [Hz] (damped),
``natural_frequency = |s| / 2 pi`` [Hz], ``damping_ratio = -Re(s) / |s|``; one of each complex pair is
kept (``Im s >= 0``).  Stability: ``Re s > tol |s|`` flags *divergence* (real ``s``) or *flutter*
(complex ``s``); ``|s|`` below ``ZERO_TOL`` times a reference rate is a *zero* mode (a free degree of freedom).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.errors import ModelError, SingularMatrixError
from flexmb.linear.statics import rate_matrix, spin_matrix

#: |s| below this fraction of the reference rate is a zero mode (a zero stiffness eigenvalue at 1e-12)
ZERO_TOL = 1e-6
#: largest number of body coordinates (velocity coordinates) solved densely by method="auto"
DENSE_MAX = 1200
#: relative real part (of |s|) above which a mode is unstable
STABILITY_TOL = 1e-7


@dataclass
class EigenResult:
    """Eigenvalues and modes, sorted by ``|s|``.

    ``eigenvalues (k,)`` complex [1/s]; ``frequency``, ``natural_frequency (k,)`` [Hz];
    ``damping_ratio (k,)``; ``modes (nv, k)`` complex, in the bodies' coordinates
    (``coordinates``: their names; normalized to a largest component of 1); ``kind (k,)``:
    ``"stable"``, ``"zero"``, ``"divergence"``, ``"flutter"``."""

    eigenvalues: NDArray
    modes: NDArray
    coordinates: list
    #: reference rate [1/s] of the zero test (the largest |s|, or that of the model's stiffness and gravity)
    reference: float = 0.0
    kind: NDArray = field(default=None)
    #: the model at the state linearized about (for the FE node shapes of flexible bodies)
    model: object = field(default=None, repr=False)

    def __post_init__(self):
        s = self.eigenvalues
        big = max(np.abs(s).max(initial=0.0), self.reference, 1e-300)
        kind = np.full(s.size, "stable", dtype=object)
        kind[np.abs(s) <= ZERO_TOL * big] = "zero"
        uns = (s.real > STABILITY_TOL * np.abs(s)) & (kind != "zero")
        kind[uns & (np.abs(s.imag) <= STABILITY_TOL * np.abs(s))] = "divergence"
        kind[uns & (np.abs(s.imag) > STABILITY_TOL * np.abs(s))] = "flutter"
        self.kind = kind

    @property
    def frequency(self) -> NDArray:
        return np.abs(self.eigenvalues.imag) / (2 * np.pi)

    @property
    def natural_frequency(self) -> NDArray:
        return np.abs(self.eigenvalues) / (2 * np.pi)

    @property
    def damping_ratio(self) -> NDArray:
        a = np.abs(self.eigenvalues)
        return np.where(a > 0, -self.eigenvalues.real / np.where(a > 0, a, 1.0), 0.0)

    @property
    def stable(self) -> bool:
        """No divergence and no flutter (zero modes allowed)."""
        return not np.any((self.kind == "divergence") | (self.kind == "flutter"))

    def mode(self, k: int, coordinate: str | None = None):
        """Mode ``k`` ``(nv,)``, or its component of ``coordinate`` (a name of :attr:`coordinates`)."""
        if coordinate is None:
            return self.modes[:, k]
        if coordinate not in self.coordinates:
            raise ModelError(f"unknown coordinate {coordinate!r}; coordinates are 'body:x', 'body:theta_z', "
                             f"'body:q1', ...: {', '.join(self.coordinates[:8])}{' ...' if len(self.coordinates) > 8 else ''}")
        return self.modes[self.coordinates.index(coordinate), k]

    def node_displacements(self, k: int, body: str) -> NDArray:
        """FE node displacements ``(n_nodes, 3)`` (complex, inertial components) of flexible body ``body``
        in mode ``k``: ``dx + dtheta x R (X0 + Phi q) + R Phi dq`` (``X0``: the data's node points in
        the body frame)."""
        if self.model is None:
            raise ModelError("node_displacements: this result has no model (compute it with fm.eigen(lin))")
        b = self.model.bodies[self.model.body_index(body)]
        if not hasattr(b, "data"):
            raise ModelError(f"node_displacements: body {body!r} is rigid; FE node shapes need a FlexibleBody")
        v = self.modes[:, k]
        get = lambda c: v[self.coordinates.index(f"{body}:{c}")]  # noqa: E731
        dx = np.array([get(c) for c in ("x", "y", "z")])
        dth = np.array([get(c) for c in ("theta_x", "theta_y", "theta_z")])
        dq = np.array([get(f"q{i + 1}") for i in range(b.n_modes)])
        R = np.asarray(b.orientation, float)
        Phi = b.data.mode_shapes
        pos = (b.data.points + Phi @ np.asarray(b.q0, float)) @ R.T
        return dx[None, :] + np.cross(dth[None, :], pos) + (Phi @ dq) @ R.T

    def to_paraview(self, directory, body: str, k: int = 0, frames: int = 16, scale: float = 1.0):
        """An animated ``.pvd`` of mode ``k`` of flexible body ``body``: ``frames`` phases of one period,
        the deformed mesh (inertial positions, the mode scaled to ``scale`` [m] at its largest node
        displacement) with point data ``displacement`` [m].  Returns the ``.pvd`` path."""
        from pathlib import Path

        import meshio  # visualization only

        u = self.node_displacements(k, body)
        u = u * (scale / max(np.abs(u).max(), 1e-300))
        b = self.model.bodies[self.model.body_index(body)]
        R = np.asarray(b.orientation, float)
        X = np.asarray(b.position, float) + (b.data.points + b.data.mode_shapes @ np.asarray(b.q0, float)) @ R.T
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        cells = list(b.data.cells.items())
        lines = ['<?xml version="1.0"?>', '<VTKFile type="Collection" version="0.1">', "  <Collection>"]
        for i in range(frames):
            d = np.real(u * np.exp(2j * np.pi * i / frames))
            name = f"{body}_mode{k}_{i:03d}.vtu"
            meshio.write(directory / name, meshio.Mesh(X + d, cells, point_data={"displacement": d}), binary=True)
            lines.append(f'    <DataSet timestep="{i / frames:.6g}" part="0" file="{name}"/>')
        lines += ["  </Collection>", "</VTKFile>", ""]
        pvd = directory / f"{body}_mode{k}.pvd"
        pvd.write_text("\n".join(lines))
        return pvd

    def table(self):
        """A pandas DataFrame: frequency [Hz], natural frequency [Hz], damping ratio, real and
        imaginary parts, kind, and the coordinate of each mode's largest component."""
        import pandas as pd

        dom = [self.coordinates[int(i)] for i in np.argmax(np.abs(self.modes), axis=0)] if self.modes.size else []
        return pd.DataFrame({"frequency_Hz": self.frequency, "natural_frequency_Hz": self.natural_frequency,
                             "damping_ratio": self.damping_ratio, "real": self.eigenvalues.real,
                             "imag": self.eigenvalues.imag, "kind": self.kind, "dominant": dom})

    def plot(self, path=None, ax=None):
        """The eigenvalues in the complex plane (``Re s``, ``Im s / 2 pi`` [Hz]); saved to ``path``."""
        import matplotlib

        if path is not None and ax is None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        fig = None
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 4))
        s = self.eigenvalues
        for kind, mk in (("stable", "o"), ("zero", "s"), ("divergence", "x"), ("flutter", "^")):
            sel = self.kind == kind
            if sel.any():
                ax.plot(s.real[sel], s.imag[sel] / (2 * np.pi), mk, label=kind, linestyle="none")
        ax.axvline(0.0, color="k", lw=0.5)
        ax.set_xlabel("Re s [1/s]")
        ax.set_ylabel("frequency [Hz]")
        ax.legend()
        if path is not None and fig is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(fig)
        return ax


def _pairs(s: NDArray, V: NDArray, n: int | None, sigma: float | None):
    """One of each complex pair (``Im s >= 0``; real ones kept once), sorted by ``|s - sigma|``."""
    scale = max(np.abs(s).max(initial=0.0), 1e-300)
    keep = s.imag >= -1e-12 * scale
    s, V = s[keep], V[:, keep]
    order = np.argsort(np.abs(s - (0.0 if sigma is None else sigma)), kind="stable")
    if n is not None:
        order = order[:n]
    return s[order], V[:, order]


def _normalize(V: NDArray) -> NDArray:
    if not V.size:
        return V
    i = np.argmax(np.abs(V), axis=0)
    return V / V[i, np.arange(V.shape[1])]


def eigen(lin, n: int | None = None, *, sigma: float = 0.0, method: str = "auto") -> EigenResult:
    """Eigenvalues and modes of the linearization ``lin`` (:func:`flexmb.linear.linearize`).

    ``n``: how many (default all, dense); ``sigma``: the shift [1/s] the ``n`` nearest are taken
    around (default 0: the lowest); ``method``: ``"dense"``, ``"sparse"`` (shift-invert on the
    sparse descriptor pencil, needs ``n``; no null space is formed) or ``"auto"`` (dense up to
    ``DENSE_MAX`` body coordinates or when ``n`` is None).
    """
    if method not in ("auto", "dense", "sparse"):
        raise ModelError(f"eigen: method={method!r}; use 'auto', 'dense' or 'sparse'")
    if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
        raise ModelError(f"eigen: n={n!r}; give a positive number of eigenvalues (or None for all)")
    if method == "auto":
        method = "dense" if (n is None or lin.M.shape[0] <= DENSE_MAX) else "sparse"
    if method == "sparse" and n is None:
        raise ModelError("eigen: method='sparse' needs n, the number of eigenvalues nearest sigma")
    if method == "dense":
        S = lin.state_matrix()
        s, V = np.linalg.eig(S)
        s, V = _pairs(s, V, n, sigma)
        modes = lin.Z @ V[:lin.ndof]
    else:
        s, modes = _sparse(lin, n, sigma)
    return EigenResult(eigenvalues=s, modes=_normalize(modes), coordinates=list(lin.coordinates),
                       reference=_reference(lin), model=lin.equilibrium.model)


#: the Arnoldi subspace sizes tried in turn (times the number of eigenvalues, at least the second number)
_SUBSPACES = ((2, 40), (4, 80))


def _arnoldi(op, k: int, N: int):
    """The ``k`` largest eigenvalues and eigenvectors of the shift-inverted operator ``op`` (``(N, N)``) by
    ARPACK, from a seeded start vector (ARPACK's own is random: a run could not be repeated) and, when
    ARPACK fails, once more with a larger subspace and another start.  Why: the descriptor pencil's
    algebraic rows are infinite eigenvalues, a cluster at zero of ``op``, and with some start vectors
    LAPACK cannot reorder the Schur form there (``ArpackError 1``, dtrsen: one run in ~10 of the flapping
    arm's, tests/test_linear.py)."""
    rng = np.random.default_rng(20261129)
    err = None
    for factor, least in _SUBSPACES:
        try:
            return spla.eigs(op, k=k, which="LM", ncv=min(max(factor * k + 1, least), N - 1),
                             v0=rng.standard_normal(N))
        except (spla.ArpackError, spla.ArpackNoConvergence) as exc:
            err = exc
    raise SingularMatrixError(f"eigen(method='sparse'): ARPACK failed on the {N} x {N} shift-inverted pencil "
                              f"({err}); use method='dense' (up to a few thousand coordinates) or another sigma")


def _reference(lin) -> float:
    """A rate [1/s] of the model: ``sqrt(max |diag K| / max |diag M|)`` or ``sqrt(|g| / L)``."""
    cm = lin.equilibrium.pencil.cm
    ref = np.sqrt(np.linalg.norm(cm.gravity) / max(cm.length_scale, 1e-6))
    k = np.abs(lin.K.diagonal()).max(initial=0.0)
    return float(max(ref, np.sqrt(k / max(np.abs(lin.M.diagonal()).max(initial=0.0), 1e-300))))


def physical_pencil(lin):
    """``(E, A)`` sparse over ``y = (z, w, k, Qbar)`` (``k``: the joints' relative coordinates and
    attachment velocities): rows kinematics ``z' = w``, momentum balance ``M w' = ...``
    (:func:`flexmb.linear.forms.momentum_rows`), the joints' kinematic and law rows; in steady
    motion the perturbations in the turning frame (:func:`flexmb.linear.forms.rotating_frame`).  Its finite eigenvalues are the system's (no gauge modes)."""
    from flexmb.linear.forms import momentum_rows

    pen = lin.equilibrium.pencil
    ix = pen.ix
    E, A = lin.E, lin.A
    Em, Am = momentum_rows(pen, E, A, lin.J0)
    cols = np.concatenate([ix.z, ix.w, ix.rel, ix.nu, ix.q])
    rows_alg = np.concatenate([ix.rel, ix.nu, ix.q])
    Ep = sp.vstack([E[ix.z][:, cols], Em[:, cols], sp.csr_matrix((rows_alg.size, cols.size))]).tocsc()
    Ap = sp.vstack([A[ix.z][:, cols], Am[:, cols], A[rows_alg][:, cols]]).tocsc()
    spin = getattr(lin.equilibrium, "spin", None)
    w = lin.velocities
    if spin is not None or (w is not None and np.any(w)):
        # perturbations about the moving rotations (forms.moving_base_kinematics), in the frame
        # turning with ``spin`` (A - E Om, Om on z and w): kinematic rows + omega x / 2 - Om; momentum
        # rows - Om (M w + Ez z) (forms.rotating_frame)
        Om = spin_matrix(pen, spin)
        nv, n = Om.shape[0], cols.size
        kin = sp.hstack([0.5 * rate_matrix(pen, w) - Om, sp.csr_matrix((nv, n - nv))])
        mom = -(Om @ Ep[nv:2 * nv])
        Ap = (Ap + sp.vstack([kin, mom, sp.csr_matrix((n - 2 * nv, n))])).tocsc()
    return Ep, Ap


def _sparse(lin, n: int, sigma: float):
    Ep, Ap = physical_pencil(lin)
    nv = lin.M.shape[0]
    # shift off an exact zero mode / eigenvalue so that A - sigma E is regular
    sig = sigma if sigma != 0.0 else -1e-3 * max(_reference(lin), 1e-6)
    lu = spla.splu((Ap - sig * Ep).tocsc())
    op = spla.LinearOperator(Ap.shape, matvec=lambda v: lu.solve(Ep @ v), dtype=float)
    N = Ap.shape[0]
    k = min(2 * n + 2, N - 2)
    nu, V = _arnoldi(op, k, N)
    ok = np.abs(nu) > 1e-14 * np.abs(nu).max()
    s = sig + 1.0 / nu[ok]
    V = V[:, ok]
    s, V = _pairs(s, V, n, sigma)
    return s, V[:nv]
