"""F5: locking-free linear solids: a one-layer hex8 plate and a 4-element-deep hex8 beam within 3 %.

Plate: NAFEMS FV12, the free thin square plate (10 m x 10 m x 0.05 m, E = 200 GPa, nu = 0.3,
rho = 8000 kg/m^3), meshed with ONE layer of 32 x 32 hex8 (2178 nodes). Its first eight elastic
frequencies against NAFEMS' 1.622, 2.360, 2.922, 4.190, 4.190, 7.356, 7.356, 7.668 Hz (the same
references as F3), tolerance 3 % (measured: within 1.0 %). With 16 x 16 the errors are 1 % on f1-f3
and 5 %, 3 %, 12 % on modes 4-5, 6-7, 8: the in-plane discretization, not locking (two layers give
the same numbers; 32 x 32 one or two layers agree to 0.02 %).

Beam: steel, L = 1 m, b = 0.05 m, h = 0.025 m (L/h = 40), 40 x 2 x 4 hex8 (4 elements through the
depth), free-free; the first three z-bending frequencies against Euler-Bernoulli (roots 4.730041,
7.853205, 10.995608, Blevins 1979, table 8-1) within 3 %.

Both with the default hex8 (incompatible modes, :mod:`flexmb.fe.elements.incompatible`). The
plain fully integrated hex8 on the same meshes is reported as the locking factor f / f_ref it
suffers (plate mode 2: about 4.3; beam f1: about 1.19), a check that the meshes are the hard case.
"""
from __future__ import annotations

import math

import numpy as np

CASE = dict(
    id="F5",
    title="Locking-free hex8 (incompatible modes): one-layer FV12 plate and 4-deep slender beam within 3 %",
    source=(
        "NAFEMS, The Standard NAFEMS Benchmarks, Rev. 3, 1990, FV12 (free thin square plate): 1.622, 2.360, 2.922, "
        "4.190, 4.190, 7.356, 7.356, 7.668 Hz (Abbassian, Dawswell, Knowles, NAFEMS 1987); Euler-Bernoulli free-free "
        "beam, roots beta_n L = 4.730041, 7.853205, 10.995608 (R. D. Blevins, Formulas for Natural Frequency and "
        "Mode Shape, 1979, table 8-1)"
    ),
    slow=False,
)

FV12_HZ = np.array([1.622, 2.360, 2.922, 4.190, 4.190, 7.356, 7.356, 7.668])
BETA_L = np.array([4.730041, 7.853205, 10.995608])


def _frequencies(mesh, n):
    from flexmb.fe import reduction as red
    from flexmb.fe.elements import assembly as fe

    return red.free_free_modes(fe.assemble_stiffness(mesh), fe.assemble_mass(mesh), n, points=mesh.points)


def run(ctx):
    from flexmb.fe.mesh import Material, structured_box

    metrics = []
    plate = structured_box((10.0, 10.0, 0.05), (32, 32, 1), "hexahedron", material=Material(200e9, 0.3, 8000.0))
    f = _frequencies(plate, 8).frequencies
    for k, (value, ref) in enumerate(zip(f, FV12_HZ), start=1):
        metrics.append(dict(name=f"one-layer 32x32 hex8 plate, elastic mode {k} [Hz]", value=float(value),
                            reference=float(ref), tolerance=0.03, kind="rel"))
    plain = _frequencies(plate.with_formulation("hexahedron", "plain"), 2).frequencies
    metrics.append(dict(name="plain hex8 plate: locking factor f2 / 2.360 Hz (informative)", value=float(plain[1] / 2.360),
                        reference=None, tolerance=3.0, kind="min"))

    from case_f1 import bending_modes_z  # sibling case module (the harness puts this folder on sys.path)

    steel = Material(210e9, 0.3, 7850.0, "steel")
    L, b, h = 1.0, 0.05, 0.025
    beam = structured_box((L, b, h), (40, 2, 4), "hexahedron", material=steel)
    basis = _frequencies(beam, 12)
    fz = basis.frequencies[bending_modes_z(beam, basis.shapes, 3)]
    eb = BETA_L**2 * math.sqrt(steel.E * h * h / 12.0 / steel.rho) / L**2 / (2 * math.pi)
    for k in range(3):
        metrics.append(dict(name=f"4-deep hex8 beam (L/h = 40), free-free z-bending f{k + 1} [Hz]", value=float(fz[k]),
                            reference=float(eb[k]), tolerance=0.03, kind="rel"))
    plain_beam = beam.with_formulation("hexahedron", "plain")
    pb = _frequencies(plain_beam, 12)
    fp = pb.frequencies[bending_modes_z(plain_beam, pb.shapes, 1)]
    metrics.append(dict(name="plain hex8 beam: locking factor f1 / Euler-Bernoulli (informative)",
                        value=float(fp[0] / eb[0]), reference=None, tolerance=1.1, kind="min"))
    return metrics
