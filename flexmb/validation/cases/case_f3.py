"""F3: NAFEMS FV12, free thin square plate: six rigid-body modes, then the elastic frequencies.

10 m x 10 m x 0.05 m, E = 200 GPa, nu = 0.3, rho = 8000 kg/m^3, no supports. Mesh
``meshes/plate_fv12_hex20.msh``: 20 x 20 x 1 hex20 (3003 nodes). Free-free modes by shift-invert
Lanczos; the zero-frequency modes are identified by the eigenvalue gap and checked against the
exact rigid-body motions. NAFEMS' target values come from a thin-plate (Kirchhoff) solution; the
solid model is within 0.5 % of them (the largest deviation, modes 6 and 7, is the coarse in-plane
mesh: 0.5 m elements for a mode with two and a half waves along the side).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from flexmb.data import MESHES_DIR

from flexmb.fe.elements import assembly as fe
from flexmb.fe import reduction as red
from flexmb.fe.mesh.femesh import Material
from flexmb.fe.mesh.readers import read_mesh

CASE = dict(
    id="F3",
    title="NAFEMS FV12 free thin square plate: rigid-body modes and elastic frequencies",
    source=(
        "NAFEMS, The Standard NAFEMS Benchmarks, Rev. 3, 1990, test FV12 (free thin square plate); "
        "F. Abbassian, D. J. Dawswell, N. C. Knowles, Free Vibration Benchmarks, Vol. 3, NAFEMS, 1987: "
        "1.622, 2.360, 2.922, 4.190, 4.190, 7.356, 7.356, 7.668 Hz"
    ),
    slow=False,
)

REFERENCE_HZ = (1.622, 2.360, 2.922, 4.190, 4.190, 7.356, 7.356, 7.668)
MESH = MESHES_DIR / "plate_fv12_hex20.msh"


def run(ctx):
    mesh = read_mesh(MESH, materials=Material(200e9, 0.3, 8000.0, "FV12"), drop_unused_nodes=True)
    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    basis = red.free_free_modes(K, M, len(REFERENCE_HZ), points=mesh.points)
    zero = np.asarray(basis.settings["zero_eigenvalues"])
    metrics = [
        dict(name="number of zero-frequency (rigid-body) modes", value=int(basis.rigid_modes.shape[1]),
             reference=6, tolerance=0, kind="abs"),
        dict(name="largest |zero eigenvalue| / first elastic eigenvalue", value=float(np.abs(zero).max() / basis.omega2[0]),
             reference=0.0, tolerance=1e-6, kind="max"),
    ]
    for k, (f, ref) in enumerate(zip(basis.frequencies, REFERENCE_HZ), start=7):
        metrics.append(dict(name=f"mode {k} [Hz]", value=float(f), reference=ref, tolerance=0.01, kind="rel"))
    return metrics
