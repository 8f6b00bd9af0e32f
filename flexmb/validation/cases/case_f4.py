"""F4: the same beam read from every supported format gives the same frequencies to round-off.

One hex20 beam (0.5 m x 0.05 m x 0.05 m, 40 cells, 321 nodes) written by ``meshes/generate.py``
as Gmsh 4.1 and 2.2 ``.msh``, Abaqus ``.inp``, Nastran ``.bdf`` and ``.vtu``. Steel
(E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3): from the file for ``.inp``/``.bdf`` (``*MATERIAL``,
``MAT1``), passed to the reader for the others. For each file: the first 8 free-free elastic
frequencies and the first 4 clamped ones (x = 0 face fixed); the metric is the largest relative
difference from the Gmsh 4.1 file, which must be round-off (1e-9: the eigensolver converges to
machine precision, the node order may differ between formats).
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
    id="F4",
    title="Format equivalence: identical frequencies from .msh (v4.1, v2.2), .inp, .bdf and .vtu",
    source="self-consistency (the same mesh in every format, meshes/generate.py); reference = the Gmsh 4.1 file",
    slow=False,
)

MESHES = MESHES_DIR
FILES = ("beam_f4_v41.msh", "beam_f4_v22.msh", "beam_f4.inp", "beam_f4.bdf", "beam_f4.vtu")
STEEL = Material(210e9, 0.3, 7850.0, "steel")


def frequencies(path: Path) -> np.ndarray:
    """First 8 free-free and 4 clamped (x = 0) frequencies (Hz) of a mesh file, concatenated."""
    has_material = path.suffix in (".inp", ".bdf")
    mesh = read_mesh(path, materials=None if has_material else STEEL, drop_unused_nodes=True)
    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    free = red.free_free_modes(K, M, 8, points=mesh.points).frequencies
    x0 = mesh.points[:, 0].min()
    root = mesh.nodes_on_plane((x0, 0.0, 0.0), (1.0, 0.0, 0.0), tol=1e-9)
    clamped = red.clamped_modes(K, M, root, 4).frequencies
    return np.concatenate([free, clamped])


def run(ctx):
    ref = frequencies(MESHES / FILES[0])
    metrics = [dict(name=f"{FILES[0]} free-free f1 [Hz]", value=float(ref[0]), reference=None,
                    tolerance=0.0, kind="min")]
    for name in FILES[1:]:
        f = frequencies(MESHES / name)
        metrics.append(dict(name=f"{name}: max relative difference from {FILES[0]}",
                            value=float(np.max(np.abs(f / ref - 1.0))), reference=0.0, tolerance=1e-9, kind="max"))
    return metrics
