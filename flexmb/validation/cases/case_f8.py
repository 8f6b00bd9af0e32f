"""F8: beam frames: a portal frame's in-plane frequencies, a cantilever with a tip mass, and a thick
simply supported Timoshenko beam.

Portal frame: two columns of height H = 4 m clamped at the ground, a beam of span S = 6 m, rigid
joints; every member a steel tube (outer radius 0.05 m, wall 0.005 m; E = 210 GPa, rho = 7850
kg/m^3), modelled with 2-node beams without shear deformation (``shear=(inf, inf)``), 20 per member.
Reference: the exact Euler-Bernoulli frequencies of the frame (members' exact dynamic stiffness,
axial and bending, assembled, and its eigenvalues counted by the Wittrick-Williams algorithm: W. H.
Wittrick and F. W. Williams, A general algorithm for computing natural frequencies of elastic
structures, Q. J. Mech. Appl. Math. 24, 1971), computed in this module: a closed-form reference
(transcendental equations solved to 1e-10) rather than a published table. It is checked here on a
single cantilever against beta_1 L = 1.875104 (Blevins 1979, table 8-1). The first four in-plane
modes of the FE model (in-plane: more than 99 % of the modal displacement in the frame's plane)
within 0.5 % (the FE's rotary inertia and discretization: measured within 0.05 %).

Cantilever with a tip mass M (no rotary inertia): the Euler-Bernoulli frequency equation
1 + cos L cosh L + (M / m) L (cos L sinh L - sin L cosh L) = 0 in L = beta L, m = rho A L (R. D.
Blevins, Formulas for Natural Frequency and Mode Shape, 1979, ch. 8, beam with an end mass), for
M/m = 0.2, 1 and 5; 20 beam elements and a point mass; f1 and f2 within 0.5 %.

Thick beam: simply supported rectangle 0.1 x 0.2 m, L = 1 m (L/h = 5), with shear (Cowper's factor)
and rotary inertia; the first three bending frequencies against the exact Timoshenko frequency
equation of the simply supported beam, det [[k G A q^2 - rho A w^2, -k G A q],
[-k G A q, E I q^2 + k G A - rho I w^2]] = 0, q = n pi / L (S. P. Timoshenko, 1921), within 0.5 %;
Euler-Bernoulli would be 4-20 % too high there.
"""
from __future__ import annotations

import math

import numpy as np

CASE = dict(
    id="F8",
    title="Beams: portal frame (exact dynamic stiffness), cantilever with a tip mass, thick Timoshenko beam",
    source=(
        "W. H. Wittrick, F. W. Williams, Q. J. Mech. Appl. Math. 24 (1971) 263-284 (exact frame frequencies, "
        "computed here); R. D. Blevins, Formulas for Natural Frequency and Mode Shape, Van Nostrand Reinhold, 1979, "
        "ch. 8 (cantilever with end mass, table 8-1 roots); S. P. Timoshenko, Phil. Mag. 41 (1921) 744-746 "
        "(simply supported Timoshenko beam)"
    ),
    slow=False,
)

STEEL = dict(E=210e9, nu=0.3, rho=7850.0)
H, SPAN = 4.0, 6.0


# ============================================================================================
# exact Euler-Bernoulli frame frequencies (dynamic stiffness + Wittrick-Williams)
# ============================================================================================


def _member_dynamic_stiffness(omega: float, length: float, ea: float, ei: float, mu: float) -> np.ndarray:
    """Exact 6 x 6 dynamic stiffness of an Euler-Bernoulli member, local DOFs (u, v, phi) at both
    ends (phi = dv/ds); reduces to the static stiffness as omega -> 0."""
    out = np.zeros((6, 6))
    k = omega * math.sqrt(mu / ea)
    if k * length < 1e-8:
        ax = ea / length * np.array([[1.0, -1.0], [-1.0, 1.0]])
    else:
        c, s = math.cos(k * length), math.sin(k * length)
        a = np.array([[1.0, 0.0], [c, s]])  # u(0), u(L) of cos ks, sin ks
        f = ea * k * np.array([[0.0, -1.0], [-s, c]])  # -EA u'(0), EA u'(L)
        ax = f @ np.linalg.inv(a)
    beta = (mu * omega * omega / ei) ** 0.25
    if beta * length < 1e-6:
        L = length
        bend = ei / L**3 * np.array([[12, 6 * L, -12, 6 * L], [6 * L, 4 * L * L, -6 * L, 2 * L * L],
                                     [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L * L, -6 * L, 4 * L * L]])
    else:
        b, L = beta, length
        cs = [math.cos(b * L), math.sin(b * L), math.cosh(b * L), math.sinh(b * L)]
        # basis cos, sin, cosh, sinh: values and derivatives at 0 and L
        d0 = [np.array([1.0, 0, 1, 0]), b * np.array([0.0, 1, 0, 1]), b**2 * np.array([-1.0, 0, 1, 0]),
              b**3 * np.array([0.0, -1, 0, 1])]
        dl = [np.array([cs[0], cs[1], cs[2], cs[3]]), b * np.array([-cs[1], cs[0], cs[3], cs[2]]),
              b**2 * np.array([-cs[0], -cs[1], cs[2], cs[3]]), b**3 * np.array([cs[1], -cs[0], cs[3], cs[2]])]
        a = np.array([d0[0], d0[1], dl[0], dl[1]])
        f = ei * np.array([d0[3], -d0[2], -dl[3], dl[2]])  # nodal forces consistent with K d
        bend = f @ np.linalg.inv(a)
    iu, ib = [0, 3], [1, 2, 4, 5]
    out[np.ix_(iu, iu)] = ax
    out[np.ix_(ib, ib)] = bend
    return 0.5 * (out + out.T)


def _j0(omega: float, length: float, ea: float, ei: float, mu: float) -> int:
    """Natural frequencies below omega of the member with both ends clamped (axial + bending)."""
    j_axial = int(math.floor(omega * math.sqrt(mu / ea) * length / math.pi))
    lam = (mu * omega * omega / ei) ** 0.25 * length
    i = int(math.floor(lam / math.pi))
    sign = np.sign(1.0 - math.cos(lam) * math.cosh(lam))
    return j_axial + i - int(round((1 - (-1) ** i * sign) / 2))


def exact_frame_frequencies(nodes, members, fixed_nodes, props, n_modes: int) -> np.ndarray:
    """First ``n_modes`` exact in-plane frequencies (Hz) of a 2-D Euler-Bernoulli frame.

    nodes (k, 2) coordinates (m); members: (a, b) pairs; fixed_nodes: clamped nodes; props: (EA,
    EI, mass per length) for every member."""
    nodes = np.asarray(nodes, float)
    free = [n for n in range(len(nodes)) if n not in fixed_nodes]
    index = {n: 3 * i for i, n in enumerate(free)}

    def count(omega: float) -> int:
        k = np.zeros((3 * len(free),) * 2)
        j0 = 0
        for (a, b), (ea, ei, mu) in zip(members, props):
            d = nodes[b] - nodes[a]
            length = float(np.hypot(*d))
            c, s = d / length
            t = np.zeros((6, 6))
            for e in (0, 3):
                t[e : e + 3, e : e + 3] = [[c, s, 0], [-s, c, 0], [0, 0, 1]]
            ke = t.T @ _member_dynamic_stiffness(omega, length, ea, ei, mu) @ t
            j0 += _j0(omega, length, ea, ei, mu)
            for ea_, na in ((0, a), (3, b)):
                for eb_, nb in ((0, a), (3, b)):
                    if na in index and nb in index:
                        k[index[na] : index[na] + 3, index[nb] : index[nb] + 3] += ke[ea_ : ea_ + 3, eb_ : eb_ + 3]
        return j0 + int(np.sum(np.linalg.eigvalsh(k) < 0.0))

    out = []
    lo = 1e-6
    for n in range(1, n_modes + 1):
        hi = max(lo * 2, 1.0)
        while count(hi) < n:
            hi *= 1.5
        a, b = lo, hi
        while b - a > 1e-11 * b:
            mid = 0.5 * (a + b)
            a, b = (mid, b) if count(mid) < n else (a, mid)
        out.append(0.5 * (a + b) / (2 * math.pi))
        lo = out[-1] * 2 * math.pi * (1 - 1e-9)
    return np.array(out)


# ============================================================================================
# FE models
# ============================================================================================


def portal_mesh(n_per_member: int):
    """The portal frame in the x-z plane: columns at x = 0 and x = SPAN from z = 0 to H."""
    from flexmb.fe.mesh import BeamSection, FEMesh, Material

    corners = np.array([[0.0, 0, 0], [0.0, 0, H], [SPAN, 0, H], [SPAN, 0, 0]])
    pts, conn = [corners[0]], []
    for a, b in ((0, 1), (1, 2), (2, 3)):
        t = np.linspace(0.0, 1.0, n_per_member + 1)[1:, None]
        start = len(pts) - 1
        pts.extend(corners[a] + t * (corners[b] - corners[a]))
        conn.extend([start + k, start + k + 1] for k in range(n_per_member))
    sec = BeamSection.pipe(0.05, 0.005, shear=(math.inf, math.inf))
    mesh = FEMesh(points=np.array(pts), cells={}, beams={"line": np.array(conn)}, sections={"*": sec},
                  materials={"*": Material(**STEEL)})
    return mesh, sec


def in_plane(mesh, shape) -> bool:
    """More than 99 % of the modal translations in the x-z plane."""
    u = shape[mesh.dof_map.translations()]
    return bool((u[:, [0, 2]] ** 2).sum() > 0.99 * (u**2).sum())


def run(ctx):
    from case_f6 import constrained_modes  # sibling case module (the harness puts this folder on sys.path)

    from flexmb.fe.elements import assembly as fe
    from flexmb.fe.mesh import BeamSection, FEMesh, Material, PointMasses, structured_line

    metrics = []
    steel = Material(**STEEL)
    # the reference method on one cantilever
    sec = BeamSection.pipe(0.05, 0.005, shear=(math.inf, math.inf))
    ea, ei, mu = steel.E * sec.area, steel.E * sec.iy, steel.rho * sec.area
    f_ref = exact_frame_frequencies([[0, 0], [H, 0]], [(0, 1)], [0], [(ea, ei, mu)], 1)[0]
    metrics.append(dict(name="dynamic-stiffness cantilever f1 / Euler-Bernoulli (method check)",
                        value=float(f_ref / (1.875104**2 * math.sqrt(ei / mu) / H**2 / (2 * math.pi))),
                        reference=1.0, tolerance=1e-6, kind="rel"))
    # portal frame
    exact = exact_frame_frequencies([[0, 0], [0, H], [SPAN, H], [SPAN, 0]], [(0, 1), (1, 2), (2, 3)], [0, 3],
                                    [(ea, ei, mu)] * 3, 4)
    mesh, _ = portal_mesh(20)
    K, M = fe.assemble_stiffness(mesh), fe.assemble_mass(mesh)
    base = np.flatnonzero(np.abs(mesh.points[:, 2]) < 1e-12)
    freqs, shapes = constrained_modes(K, M, mesh.dof_map.dofs(base), 12)
    planar = [f for f, s in zip(freqs, shapes.T) if in_plane(mesh, s)][:4]
    for k, (f, ref) in enumerate(zip(planar, exact), start=1):
        metrics.append(dict(name=f"portal frame, in-plane mode {k} [Hz] (60 beams)", value=float(f), reference=float(ref),
                            tolerance=0.005, kind="rel"))
    # cantilever with a tip mass
    from scipy.optimize import brentq

    L = 1.0
    rod = BeamSection.circle(0.01, shear=(math.inf, math.inf))
    beam = structured_line((0, 0, 0), (L, 0, 0), 20, rod, material=steel)
    m_beam = steel.rho * rod.area * L
    scale = math.sqrt(steel.E * rod.iy / (steel.rho * rod.area * L**4)) / (2 * math.pi)
    for ratio in (0.2, 1.0, 5.0):
        eq = lambda b: 1 + math.cos(b) * math.cosh(b) + ratio * b * (math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b))  # noqa: E731
        grid = np.linspace(0.3, 8.0, 800)
        vals = [eq(b) for b in grid]
        roots = [brentq(eq, grid[i], grid[i + 1]) for i in range(len(grid) - 1) if vals[i] * vals[i + 1] < 0][:2]
        tip = FEMesh(points=beam.points, cells={}, beams=beam.beams, sections=beam.sections, materials=beam.materials,
                     point_masses=PointMasses.from_values([20], ratio * m_beam))
        K, M = fe.assemble_stiffness(tip), fe.assemble_mass(tip)
        f, s = constrained_modes(K, M, tip.dof_map.dofs([0]), 8)
        bending = [fk for fk, sk in zip(f, s.T) if np.abs(sk[tip.dof_map.translations()][:, 2]).max() >
                   0.5 * np.abs(sk[tip.dof_map.translations()]).max()][:2]  # the x-z plane (one of each pair)
        for k, (fk, root) in enumerate(zip(bending, roots), start=1):
            metrics.append(dict(name=f"cantilever with tip mass M/m = {ratio}: f{k} [Hz]", value=float(fk),
                                reference=float(root**2 * scale), tolerance=0.005, kind="rel"))
    # thick simply supported Timoshenko beam
    thick = BeamSection.rectangle(0.1, 0.2, orientation=(0.0, 1.0, 0.0))
    _, kz = thick.shear_factors(steel.nu)
    n_el = 40
    bar = structured_line((0, 0, 0), (1.0, 0, 0), n_el, thick, material=steel)
    K, M = fe.assemble_stiffness(bar).toarray(), fe.assemble_mass(bar).toarray()
    keep = [6 * a + d for a in range(n_el + 1) for d in (2, 4) if not (d == 2 and a in (0, n_el))]
    import scipy.linalg as sla

    w2 = sla.eigh(K[np.ix_(keep, keep)], M[np.ix_(keep, keep)], eigvals_only=True)[:3]
    g = steel.E / (2 * (1 + steel.nu))
    kga, eiy, ra, ri = kz * g * thick.area, steel.E * thick.iy, steel.rho * thick.area, steel.rho * thick.iy
    for n in (1, 2, 3):
        q = n * math.pi
        qa, qb = ra * ri, -(ra * (eiy * q * q + kga) + ri * kga * q * q)
        qc = kga * q * q * (eiy * q * q + kga) - kga**2 * q * q
        exact_w2 = (-qb - math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)
        metrics.append(dict(name=f"thick SS Timoshenko beam (L/h = 5), mode {n} [Hz]", value=float(math.sqrt(w2[n - 1]) / (2 * math.pi)),
                            reference=float(math.sqrt(exact_w2) / (2 * math.pi)), tolerance=0.005, kind="rel"))
    return metrics
