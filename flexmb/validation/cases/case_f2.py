"""F2: static tip deflection of a slender solid cantilever under self weight and under a tip load.

Beam of case F1 (steel, L = 1 m, b = 0.05 m, h = 0.025 m, L/h = 40), hex20 mesh (40, 4, 2),
clamped through a rigid interface frame on the x = 0 face (the reference frame, held). The tip
deflection is the translation of an averaging (RBE3-like) frame on the x = L face, i.e. the
least-squares rigid fit of the tip face's motion, which does not stiffen the tip.

* Self weight, g = 9.81 m/s^2 along -z: consistent body force, w = rho g A L^4 / (8 E I).
* Tip load P = 100 N along -z on the tip frame (distributed over the face as RBE3 does):
  w = P L^3 / (3 E I). The Craig-Bampton reduced model (root reference + tip frame) reproduces the
  full-FE tip deflection of frame loads exactly, which is checked too.

Tolerance 1 %: the shear deflection adds P L/(kappa G A), 0.05 % of the bending one at L/h = 40,
and the clamped root face (Poisson contraction restrained) and b/h = 2 stiffen by about 0.3 %.
"""
from __future__ import annotations

import numpy as np

from flexmb.validation.cases.case_f1 import LENGTHS, STEEL, structured_box
from flexmb.fe.elements import assembly as fe
from flexmb.fe import reduction as red
from flexmb.fe.reduction import Interface

CASE = dict(
    id="F2",
    title="Static tip deflection of a solid cantilever: self weight and tip load",
    source=(
        "Euler-Bernoulli cantilever: w = rho g A L^4/(8 E I) (uniform load), w = P L^3/(3 E I) (tip load); "
        "e.g. W. C. Young, R. G. Budynas, Roark's Formulas for Stress and Strain, 7th ed., McGraw-Hill, "
        "2002, Table 8.1, cases 1a and 2a"
    ),
    slow=False,
)

G = 9.81
P_TIP = 100.0


def run(ctx):
    L, b, h = LENGTHS
    mesh = structured_box(LENGTHS, (40, 4, 2), "hexahedron20", material=STEEL)
    K = fe.assemble_stiffness(mesh)
    M = fe.assemble_mass(mesh)
    ifs = [Interface("root", kind="rigid"), Interface("tip", kind="average")]
    EI = STEEL.E * b * h ** 3 / 12.0
    w_weight = STEEL.rho * G * b * h * L ** 4 / (8.0 * EI)
    w_tip = P_TIP * L ** 3 / (3.0 * EI)
    gravity = fe.body_force_vector(mesh, (0.0, 0.0, -G))
    frames_g, _ = red.frame_static_response(K, mesh, ifs, {}, node_loads=gravity)
    load = np.array([0.0, 0.0, -P_TIP, 0.0, 0.0, 0.0])
    frames_p, _ = red.frame_static_response(K, mesh, ifs, {"tip": load})
    basis = red.craig_bampton(K, M, mesh, ifs, 4)
    tip = basis.interface("tip")
    eta = (tip.modal_map.T @ load) / basis.omega2  # reduced statics: diag(omega2) eta = Phi_tip^T F
    w_cb = -(tip.modal_map @ eta)[2]
    return [
        dict(name="self-weight tip deflection [m]", value=float(-frames_g["tip"][2]), reference=w_weight,
             tolerance=0.01, kind="rel"),
        dict(name="tip-load tip deflection [m]", value=float(-frames_p["tip"][2]), reference=w_tip,
             tolerance=0.01, kind="rel"),
        dict(name="Craig-Bampton vs full FE, tip-load deflection (relative difference)",
             value=float(abs(w_cb / -frames_p["tip"][2] - 1.0)), reference=0.0, tolerance=1e-8, kind="max"),
    ]
