"""F7: curved shells: clamped thin cylinder frequencies and the Scordelis-Lo roof.

Cylinder (Code_Aster validation manual, V2.02.153, thin pipe): mean radius R = 0.05 m, thickness
h = 0.0025 m, length L = 1 m, E = 200 GPa, nu = 0.3, rho = 7800 kg/m^3, both ends clamped (CC: all
six DOFs of the end nodes fixed). Reference frequencies of the modes with one axial half-wave (m = 1)
and n = 1..5 circumferential waves, from that document's table 1 (computed there from the reference
[bib1], a Haar-wavelet discretization of Goldenveizer-Novozhilov shell theory): 559.562, 687.249,
1858.296, 3553.911, 5743.210 Hz. Mesh: 64 x 48 flat MITC4 quadrilaterals (the quadrilaterals of a
circular cylinder are plane); each (m, n) mode is found by a shift-invert solve at its reference
frequency and identified by the Fourier content of its radial displacement. Tolerance 3 % (the
facets' geometry and 64 elements for 2n = 10 half-waves; measured within 2 %). ``ctx.fast``:
48 x 40 elements, n = 1..3.

Scordelis-Lo roof (A. C. Scordelis and K. S. Lo, 1964; the standard test of R. H. MacNeal and
R. L. Harder, A proposed standard set of problems to test finite element accuracy, Finite Elements
in Analysis and Design 1, 1985): cylindrical roof R = 25, L = 50, t = 0.25, opening angle 2 x 40
degrees, E = 4.32e8, nu = 0, self weight 90 per unit area, ends on rigid diaphragms, straight edges
free. Quarter model with symmetry; the vertical deflection at the middle of a free edge is 0.3024
(MacNeal and Harder). Tolerance 2 % for 16 x 16 MITC4 (measured 0.3023), 4 % for 24 x 24 x 2 MITC3
(0.2957: the triangles converge from below).
"""
from __future__ import annotations

import numpy as np

CASE = dict(
    id="F7",
    title="Curved shells: clamped thin cylinder (m = 1, n = 1..5) and the Scordelis-Lo roof",
    source=(
        "Code_Aster validation manual V2.02.153 (free vibrations of a thin pipe), table 1, CC column: 559.562, "
        "687.249, 1858.296, 3553.911, 5743.210 Hz (Haar wavelet solution of Goldenveizer-Novozhilov theory); "
        "R. H. MacNeal, R. L. Harder, Finite Elements in Analysis and Design 1 (1985) 3-20, Scordelis-Lo roof: "
        "free-edge midpoint deflection 0.3024"
    ),
    slow=True,
)

R_CYL, H_CYL, L_CYL = 0.05, 0.0025, 1.0
CC_HZ = np.array([559.562, 687.249, 1858.296, 3553.911, 5743.210])
ROOF = dict(R=25.0, L=50.0, t=0.25, angle=np.deg2rad(40.0), E=4.32e8, load=90.0, reference=0.3024)


def cylinder(n_theta: int, n_x: int):
    """Structured quadrilateral mesh of the cylinder (axis x), nodes at radius R."""
    from flexmb.fe.mesh import FEMesh, Material, ShellSection

    th = np.arange(n_theta) * 2 * np.pi / n_theta
    x = np.linspace(0.0, L_CYL, n_x + 1)
    X, T = np.meshgrid(x, th, indexing="ij")
    pts = np.column_stack([X.ravel(), R_CYL * np.cos(T.ravel()), R_CYL * np.sin(T.ravel())])
    nid = np.arange(len(pts)).reshape(n_x + 1, n_theta)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n_x), np.arange(n_theta), indexing="ij"))
    quads = np.column_stack([nid[i, j], nid[i + 1, j], nid[i + 1, (j + 1) % n_theta], nid[i, (j + 1) % n_theta]])
    return FEMesh(points=pts, cells={}, shells={"quad": quads}, sections={"*": ShellSection(H_CYL)},
                  materials={"*": Material(2e11, 0.3, 7800.0, "steel")})


def wave_numbers(mesh, shape) -> tuple[int, int]:
    """(m, n): axial half-waves and circumferential waves of a mode (radial displacement)."""
    p = mesh.points
    theta = np.arctan2(p[:, 2], p[:, 1])
    u = shape[mesh.dof_map.translations()]
    w = u[:, 1] * np.cos(theta) + u[:, 2] * np.sin(theta)
    xs = np.round(p[:, 0], 9)
    order = np.lexsort((theta, xs))
    grid = w[order].reshape(np.unique(xs).size, -1)
    spec = np.fft.rfft(grid, axis=1)
    n = int(np.argmax((np.abs(spec) ** 2).sum(axis=0)))
    c = spec[:, n] * np.exp(-1j * np.angle(spec[np.argmax(np.abs(spec[:, n])), n]))
    r = c.real[np.abs(c.real) > 1e-3 * np.abs(c.real).max()]
    return 1 + int(np.sum(np.sign(r[1:]) != np.sign(r[:-1]))), n


def cylinder_frequencies(n_theta: int, n_x: int, n_max: int) -> list[float | None]:
    """Frequencies (Hz) of the (m = 1, n) modes, n = 1..n_max, of the clamped cylinder."""
    import scipy.sparse.linalg as sla

    from flexmb.fe.elements import assembly as fe

    mesh = cylinder(n_theta, n_x)
    K, M = fe.assemble_stiffness(mesh), fe.assemble_mass(mesh)
    x = mesh.points[:, 0]
    ends = np.flatnonzero((np.abs(x) < 1e-12) | (np.abs(x - L_CYL) < 1e-12))
    free = np.setdiff1d(np.arange(mesh.n_dofs), mesh.dof_map.dofs(ends))
    kf, mf = K[free][:, free].tocsc(), M[free][:, free].tocsc()
    out = []
    for n, f_ref in enumerate(CC_HZ[:n_max], start=1):
        sigma = (2 * np.pi * f_ref) ** 2
        w2, vecs = sla.eigsh(kf, 8, mf, sigma=sigma, which="LM", v0=np.ones(free.size))
        found = None
        for k in np.argsort(np.abs(w2 - sigma)):
            shape = np.zeros(mesh.n_dofs)
            shape[free] = vecs[:, k]
            if wave_numbers(mesh, shape) == (1, n):
                found = float(np.sqrt(w2[k]) / (2 * np.pi))
                break
        out.append(found)
    return out


def roof_deflection(n: int, kind: str) -> float:
    """Vertical deflection at the middle of the free edge of the Scordelis-Lo roof (quarter model)."""
    import scipy.sparse.linalg as sla

    from flexmb.fe.elements import assembly as fe
    from flexmb.fe.mesh import FEMesh, Material, ShellSection

    r, length, t, phi0 = ROOF["R"], ROOF["L"], ROOF["t"], ROOF["angle"]
    X, P = np.meshgrid(np.linspace(0, length / 2, n + 1), np.linspace(0, phi0, n + 1), indexing="ij")
    pts = np.column_stack([X.ravel(), r * np.sin(P.ravel()), r * np.cos(P.ravel())])
    nid = np.arange(len(pts)).reshape(n + 1, n + 1)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    cells = np.column_stack([nid[i, j], nid[i + 1, j], nid[i + 1, j + 1], nid[i, j + 1]])
    if kind == "triangle":
        cells = np.vstack([cells[:, [0, 1, 2]], cells[:, [0, 2, 3]]])
    mesh = FEMesh(points=pts, cells={}, shells={kind: cells}, sections={"*": ShellSection(t)},
                  materials={"*": Material(ROOF["E"], 0.0, 1.0)})
    d, p = mesh.dof_map, mesh.points
    f = fe.body_force_vector(mesh, (0.0, 0.0, -ROOF["load"] / t))  # rho = 1: rho t g = 90 per area
    sym = np.flatnonzero(np.abs(p[:, 0]) < 1e-9)  # x = 0: u_x = 0, rotations about y and z = 0
    diaphragm = np.flatnonzero(np.abs(p[:, 0] - length / 2) < 1e-9)  # u_y = u_z = 0, rotation about x = 0
    crown = np.flatnonzero(np.abs(p[:, 1]) < 1e-9)  # y = 0: u_y = 0, rotations about x and z = 0
    fixed = np.concatenate([d.dofs(sym, [0, 4, 5]), d.dofs(diaphragm, [1, 2, 3]), d.dofs(crown, [1, 3, 5])])
    free = np.setdiff1d(np.arange(mesh.n_dofs), fixed)
    K = fe.assemble_stiffness(mesh)
    u = np.zeros(mesh.n_dofs)
    u[free] = sla.spsolve(K[free][:, free].tocsc(), f[free])
    edge = np.flatnonzero((np.abs(p[:, 0]) < 1e-9) & (np.abs(np.arctan2(p[:, 1], p[:, 2]) - phi0) < 1e-9))
    return float(-u[d.translations(edge)[0, 2]])


def run(ctx):
    metrics = []
    n_theta, n_x, n_max = (48, 40, 3) if ctx.fast else (64, 48, 5)
    for n, (f, ref) in enumerate(zip(cylinder_frequencies(n_theta, n_x, n_max), CC_HZ), start=1):
        metrics.append(dict(name=f"clamped cylinder {n_theta}x{n_x} MITC4, mode m=1 n={n} [Hz]",
                            value=float("nan") if f is None else f, reference=float(ref), tolerance=0.03, kind="rel"))
    for kind, n, tol in (("quad", 16, 0.02), ("triangle", 24, 0.04)):
        metrics.append(dict(name=f"Scordelis-Lo roof {n}x{n} {kind}: free-edge midpoint deflection",
                            value=roof_deflection(n, kind), reference=ROOF["reference"], tolerance=tol, kind="rel"))
    return metrics
