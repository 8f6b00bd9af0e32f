"""X5: rotating cantilever, first flapwise frequency versus spin speed; and Euler buckling load.

Both check the projected geometric stiffness of :mod:`flexmb.fe.reduction`.

Rotating beam. A uniform solid cantilever along x (aluminium, L = 1 m, b = 0.02 m along y,
h = 0.01 m along z, L/h = 100; hex20 mesh (50, 2, 1)) is clamped at x = 0 on the spin axis z (a
rigid reference interface frame on the root face) and spins at Omega about z. Flapwise means out of
the plane of rotation, along z. Basis: Craig-Bampton, root reference, 20 fixed-interface modes.
The steady centrifugal stress is the static solution for the unit preload ``wz*wz`` (body held at
its reference frame), and the linearized flapwise problem is

    (diag(omega2) + Omega^2 Kg["wz*wz"]) eta = omega^2 eta

i.e. stress stiffening only. For flapwise bending there is no spin softening: the centrifugal force
of a displacement u is rho Omega^2 (u_x, u_y, 0), with no z component; the in-plane (lagwise)
problem would add -Omega^2 M_perp. The flapwise mode is the eigenvector whose modal displacement is
mostly u_z. gamma = Omega T, lambda = omega T, T = sqrt(rho A L^4 / (E I)). Reference values are
for the Euler-Bernoulli beam; the solid model at gamma = 0 is 0.2 % above 3.5160 (root clamping and
b/h = 2), tolerance 0.5 %.

Buckling. The same beam (hex20 (50, 2, 1)) under a unit compressive axial force spread uniformly
over the tip face; the geometric stiffness of that static stress state, projected on the
Craig-Bampton basis, gives the critical load as the smallest P with
det(diag(omega2) + P Kg) = 0; reference pi^2 E I / (4 L^2) (Euler, clamped-free), tolerance 1 %.
"""
from __future__ import annotations

import math

import numpy as np

from flexmb.validation.cases.case_f1 import structured_box
from flexmb.fe import assembly as fe
from flexmb.fe import reduction as red
from flexmb.fe.mesh import Material

CASE = dict(
    id="X5",
    title="Rotating cantilever: flapwise frequency vs spin (stress stiffening); Euler buckling load",
    source=(
        "A. D. Wright, C. E. Smith, R. W. Thresher, J. L. C. Wang, Vibration modes of centrifugally "
        "stiffened beams, J. Appl. Mech. 49 (1982) 197-202 (lambda_1 = 3.5160, 4.1373, 5.5850, 7.3604, "
        "9.2568, 11.2023, 51.08 at gamma = 0, 2, 4, 6, 8, 10, 50; also tabulated by Hamza-Cherif and "
        "Houmat); Euler critical load of a clamped-free column pi^2 E I/(4 L^2) (S. P. Timoshenko, "
        "J. M. Gere, Theory of Elastic Stability, 2nd ed., McGraw-Hill, 1961, sec. 2.1)"
    ),
    slow=False,
)

ALUMINIUM = Material(70e9, 0.3, 2700.0, "aluminium")
LENGTHS = (1.0, 0.02, 0.01)
GAMMA = (0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 50.0)
LAMBDA_REF = (3.5160, 4.1373, 5.5850, 7.3604, 9.2568, 11.2023, 51.08)


def flapwise_lambda(basis, Kg_spin, gamma, T):
    """Nondimensional first flapwise frequency lambda = omega T at each gamma = Omega T."""
    P = basis.nodal_shapes()
    out = []
    for g in gamma:
        w2, Q = np.linalg.eigh(np.diag(basis.omega2) + (g / T) ** 2 * Kg_spin)
        Pq = np.einsum("nak,kj->naj", P, Q)
        zfrac = (Pq[:, 2, :] ** 2).sum(axis=0) / (Pq ** 2).sum(axis=(0, 1))
        out.append(math.sqrt(w2[np.flatnonzero(zfrac > 0.5)[0]]) * T)
    return np.array(out)


def run(ctx):
    L, b, h = LENGTHS
    mesh = structured_box(LENGTHS, (50, 2, 1), "hexahedron20", material=ALUMINIUM)
    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    basis = red.craig_bampton(K, M, mesh, ["root"], 20)
    # the unit preload "wz*wz" of preload_geometric_stiffness (only that one of the 12 is needed)
    spin = red.PRELOAD_NAMES.index("wz*wz")
    Kg_spin = red.load_geometric_stiffness(K, M, mesh, basis, red.inertial_load_vectors(M, mesh.points)[spin : spin + 1])[0]
    EI = ALUMINIUM.E * b * h ** 3 / 12.0
    T = math.sqrt(ALUMINIUM.rho * b * h * L ** 4 / EI)
    lam = flapwise_lambda(basis, Kg_spin, GAMMA, T)
    metrics = [
        dict(name=f"lambda_1 at gamma = {g:g}", value=float(v), reference=ref, tolerance=0.005, kind="rel")
        for g, v, ref in zip(GAMMA, lam, LAMBDA_REF)
    ]
    # buckling: unit compressive force on the tip face
    tip = mesh.node_sets["tip"]
    f = np.zeros(mesh.n_dofs)
    f[3 * tip] = -1.0 / tip.size
    Kg_axial = red.load_geometric_stiffness(K, M, mesh, basis, f[None, :])[0]
    s = 1.0 / np.sqrt(basis.omega2)
    mu = np.linalg.eigvalsh(-(s[:, None] * Kg_axial * s[None, :]))
    p_cr = 1.0 / mu.max()
    metrics.append(dict(name="Euler buckling load [N]", value=float(p_cr), reference=math.pi ** 2 * EI / (4 * L ** 2),
                        tolerance=0.01, kind="rel"))
    if ctx.out_dir is not None:
        _plot(ctx.out_dir, lam)
    return metrics


def _plot(out_dir, lam):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(GAMMA[:-1], LAMBDA_REF[:-1], "ks", label="Wright et al. 1982")
    ax.plot(GAMMA[:-1], lam[:-1], "o-", mfc="none", label="flexmb (hex20, CB 20 modes)")
    ax.set_xlabel("gamma = Omega T")
    ax.set_ylabel("lambda_1 = omega_1 T")
    ax.set_title("X5 rotating cantilever, flapwise")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_dir / "x5_flapwise.png", dpi=120)
    plt.close(fig)
