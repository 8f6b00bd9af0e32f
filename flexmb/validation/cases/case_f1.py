"""F1: Euler-Bernoulli frequencies of slender solid beams (tet10, hex8, hex20), clamped and free-free.

Beam: steel (E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3), L = 1 m, width b = 0.05 m (y), thickness
h = 0.025 m (z), L/h = 40; bending in z (the weak direction). Meshes: ``structured_box`` with
uniform refinement (nx, ny, nz) = (10, 2, 1) -> (20, 4, 2) -> (40, 8, 4) for hex20 and tet10 (each
hexahedron split into six Kuhn tetrahedra), (20, 2, 1) and (40, 4, 2) for hex8 (with its default
incompatible modes, :mod:`flexmb.fe.elements.incompatible`). The clamped beam has all DOFs of its
x = 0 face fixed.

Metrics. The finest meshes are compared with Euler-Bernoulli directly; for hex8 also the coarse
mesh with ONE element through the thickness (a plain trilinear hexahedron is 64 % too stiff there).
Until issue 20 the hex8 was the plain element, which locks: its values were Richardson-extrapolated
from (40, 4, 2) and (80, 8, 4) with order 2 (cantilever f1 +0.70 %, free f1 +0.23 %), with an
observed order of about 1.65; with incompatible modes (40, 4, 2) gives +0.39 % and -0.10 % directly
and the order metric no longer applies (the discretization error is below the 3-D effects).
Tolerance of mode n:
1 % + delta_n. delta_n = (beta_n r)^2 (1 + E/(kappa G)) / 2, r = h/sqrt(12), kappa = 5/6, is the
first-order Timoshenko (shear and rotary inertia) correction: at L/h = 40 it is
0.04 / 0.24 / 0.66 % for the cantilever and 0.24 / 0.66 / 1.30 % free-free, and the solid model
lies below Euler-Bernoulli by about that much. The 1 % covers the discretization and the 3-D
effects Euler-Bernoulli ignores: the clamped face restrains the Poisson contraction at the root and
b/h = 2 partly restrains anticlastic bending (together about +0.3 % on f1 of the finest meshes).

Observed convergence (full run, uniform refinement, order from the three levels): free-free f1
converges with order about 3.3 (hex20) and 3.0 (tet10), close to the h^4 of quadratic elements
(pre-asymptotic); the cantilever f1 only with order about 1.8-1.9 because the clamped edge is a stress
singularity of 3-D elasticity.
``ctx.fast`` skips the finest hex20/tet10 level and the order metrics.

This module also holds ``structured_box``, the in-memory structured mesh generator used by the
F-cases, X5, the reduction tests and ``benchmarks/modes.py`` (the harness puts this folder on
``sys.path``, so sibling cases import it with ``from case_f1 import structured_box``).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from flexmb.fe import mesh as fe_mesh

from flexmb.fe.mesh.femesh import FEMesh, Material

# ============================================================================================
# structured meshes
# ============================================================================================

#: hexahedron corners in meshio/VTK order, as 0/1 offsets


def structured_box(
    lengths=(1.0, 0.1, 0.05),
    divisions=(20, 2, 1),
    cell_type: str = "hexahedron20",
    *,
    material: Material | None = None,
    origin=(0.0, 0.0, 0.0),
) -> FEMesh:
    """:func:`flexmb.fe.mesh.structured_box` with this case's defaults and node-set names.

    Node sets ``x0, x1, y0, y1, z0, z1`` (faces) and ``root`` (= x0), ``tip`` (= x1) are added to the
    library's ``xmin .. zmax``.
    """
    from dataclasses import replace

    mesh = fe_mesh.structured_box(lengths, divisions, cell_type, origin=origin, material=material)
    sets = dict(mesh.node_sets)
    for axis in "xyz":
        sets[f"{axis}0"], sets[f"{axis}1"] = sets[f"{axis}min"], sets[f"{axis}max"]
    sets["root"], sets["tip"] = sets["x0"], sets["x1"]
    return replace(mesh, node_sets=sets)


def bending_modes_z(mesh, shapes, n: int = 3) -> np.ndarray:
    """Indices of the first ``n`` modes that bend a beam along x in z (section-averaged uz dominant).

    For each mode, the nodal uz is averaged over each cross-section (nodes sharing an x
    coordinate); the mode is z-bending when those averages carry more than half of the mode's
    squared nodal displacement (torsion and y-bending carry almost none, axial modes none).
    """
    x = mesh.points[:, 0]
    _, group = np.unique(np.round(x / max(np.ptp(x), 1e-300), 9), return_inverse=True)
    group = group.ravel()
    count = np.bincount(group).astype(float)
    P = shapes.reshape(mesh.n_nodes, 3, -1)
    out = []
    for k in range(P.shape[2]):  # loop over modes
        mean_uz = np.bincount(group, weights=P[:, 2, k]) / count
        ratio = (count * mean_uz ** 2).sum() / (P[:, :, k] ** 2).sum()
        if ratio > 0.5:
            out.append(k)
        if len(out) == n:
            break
    if len(out) < n:
        raise RuntimeError(f"only {len(out)} z-bending modes among {P.shape[2]}; ask for more modes")
    return np.array(out)


def beam_frequencies(mesh, n_modes: int = 12) -> dict[str, np.ndarray]:
    """First three z-bending frequencies (Hz) of a beam mesh along x: clamped at x = 0, and free-free."""
    from flexmb.fe.elements import assembly as fe
    from flexmb.fe import reduction as red

    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    c = red.clamped_modes(K, M, mesh.node_sets["root"], n_modes)
    f = red.free_free_modes(K, M, n_modes, points=mesh.points)
    return dict(
        cantilever=c.frequencies[bending_modes_z(mesh, c.shapes)],
        free=f.frequencies[bending_modes_z(mesh, f.shapes)],
    )


# ============================================================================================
# the case
# ============================================================================================

CASE = dict(
    id="F1",
    title="Euler-Bernoulli frequencies of slender solid beams (hex20, tet10, hex8), clamped and free-free",
    source=(
        "Euler-Bernoulli beam theory, omega_n = (beta_n L)^2 sqrt(EI/(rho A L^4)); roots beta_n L from "
        "R. D. Blevins, Formulas for Natural Frequency and Mode Shape, Van Nostrand Reinhold, 1979, Table 8-1 "
        "(cantilever 1.875104, 4.694091, 7.854757; free-free 4.730041, 7.853205, 10.995608)"
    ),
    slow=True,
)

STEEL = Material(210e9, 0.3, 7850.0, "steel")
LENGTHS = (1.0, 0.05, 0.025)
BETA_L = dict(cantilever=np.array([1.875104, 4.694091, 7.854757]), free=np.array([4.730041, 7.853205, 10.995608]))
LEVELS = {
    "hexahedron20": [(10, 2, 1), (20, 4, 2), (40, 8, 4)],
    "tetra10": [(10, 2, 1), (20, 4, 2), (40, 8, 4)],
    "hexahedron": [(20, 2, 1), (40, 4, 2)],
}
SHORT = {"hexahedron20": "hex20", "tetra10": "tet10", "hexahedron": "hex8"}


def euler_bernoulli(lengths=LENGTHS, material: Material = STEEL) -> dict[str, np.ndarray]:
    """Euler-Bernoulli z-bending frequencies (Hz) of the first three modes, clamped-free and free-free."""
    L, b, h = lengths
    c = math.sqrt(material.E * b * h ** 3 / 12.0 / (material.rho * b * h * L ** 4)) / (2.0 * math.pi)
    return {k: v ** 2 * c for k, v in BETA_L.items()}


def timoshenko_delta(lengths=LENGTHS, material: Material = STEEL) -> dict[str, np.ndarray]:
    """First-order relative shear + rotary-inertia correction of the Euler-Bernoulli frequencies."""
    L, _, h = lengths
    g = material.E / (2.0 * (1.0 + material.nu))
    factor = 0.5 * (1.0 + material.E / (5.0 / 6.0 * g)) * (h / L) ** 2 / 12.0
    return {k: factor * v ** 2 for k, v in BETA_L.items()}


def observed_order(f: np.ndarray, ratio: float = 2.0) -> np.ndarray:
    """Order p from three uniformly refined results (..., 3): |f1 - f2| / |f2 - f3| = ratio^p."""
    d1, d2 = np.abs(f[..., 0] - f[..., 1]), np.abs(f[..., 1] - f[..., 2])
    return np.log(d1 / d2) / math.log(ratio)


def run(ctx):
    eb = euler_bernoulli()
    delta = timoshenko_delta()
    metrics = []
    table = {}
    for cell_type, levels in LEVELS.items():
        name = SHORT[cell_type]
        use = levels if (cell_type == "hexahedron" or not ctx.fast) else levels[:2]
        res = [beam_frequencies(structured_box(LENGTHS, lv, cell_type, material=STEEL)) for lv in use]
        f = {bc: np.stack([r[bc] for r in res], axis=1) for bc in ("cantilever", "free")}  # (3 modes, levels)
        table[name] = (use, f)
        for bc in ("cantilever", "free"):
            if len(use) == 3:
                p = observed_order(f[bc])
            value, how = f[bc][:, -1], f"mesh {use[-1]}"
            for n in range(3):
                metrics.append(dict(
                    name=f"{name} {bc} f{n + 1} [Hz] ({how})", value=float(value[n]), reference=float(eb[bc][n]),
                    tolerance=round(0.01 + float(delta[bc][n]), 4), kind="rel",
                ))
            if cell_type == "hexahedron":  # one element through the thickness: no locking
                metrics.append(dict(
                    name=f"hex8 {bc} f1 [Hz] (mesh {use[0]}, one element through the thickness)",
                    value=float(f[bc][0, 0]), reference=float(eb[bc][0]), tolerance=round(0.01 + float(delta[bc][0]), 4),
                    kind="rel",
                ))
            if len(use) == 3 and cell_type != "hexahedron":
                expected = 1.5 if bc == "cantilever" else 2.5
                metrics.append(dict(
                    name=f"{name} {bc} f1 observed convergence order", value=float(p[0]), reference=None,
                    tolerance=expected, kind="min",
                ))
    if ctx.out_dir is not None:
        _plot(ctx.out_dir, table, eb)
    return metrics


def _plot(out_dir, table, eb):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, bc in zip(axes, ("cantilever", "free")):
        for name, (levels, f) in table.items():
            h = np.array([LENGTHS[0] / lv[0] for lv in levels])
            for n in range(3):
                ax.loglog(h, np.abs(f[bc][n] / eb[bc][n] - 1.0), "o-", label=f"{name} f{n + 1}")
        ax.set_xlabel("element length along the beam [m]")
        ax.set_ylabel("|f / f_EB - 1|")
        ax.set_title(f"F1 {bc}")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(out_dir / "f1_convergence.png", dpi=120)
    plt.close(fig)
