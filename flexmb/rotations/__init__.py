"""Rotations: the SO(3) maps batched over leading axes (:mod:`.so3`: skew, exp, log, tangent
operators and their exact derivatives), their scalar coefficient functions (:mod:`.coeffs`, compiled
pass :mod:`.kernels`) and the user-facing orientation input (:mod:`.orientation`).

``from flexmb import rotations as rot; rot.exp(theta)``: every public name of the three modules is
re-exported here, with the coefficient functions and series tables the tests check.
"""
from __future__ import annotations

from flexmb.rotations.coeffs import N_TERMS as N_TERMS
from flexmb.rotations.coeffs import SERIES as SERIES
from flexmb.rotations.coeffs import X_SERIES as X_SERIES
from flexmb.rotations.coeffs import bernoulli as bernoulli
from flexmb.rotations.coeffs import coefficients as coefficients
from flexmb.rotations.coeffs import coefficients_closed as coefficients_closed
from flexmb.rotations.coeffs import coefficients_numpy as coefficients_numpy
from flexmb.rotations.coeffs import coefficients_series as coefficients_series
from flexmb.rotations.orientation import ORTHONORMAL_TOL as ORTHONORMAL_TOL
from flexmb.rotations.orientation import as_matrix as as_matrix
from flexmb.rotations.orientation import orientation as orientation
from flexmb.rotations.so3 import __all__ as _SO3
from flexmb.rotations.so3 import axial as axial
from flexmb.rotations.so3 import cross as cross
from flexmb.rotations.so3 import d_axial_left as d_axial_left
from flexmb.rotations.so3 import d_axial_rel as d_axial_rel
from flexmb.rotations.so3 import d_axial_right as d_axial_right
from flexmb.rotations.so3 import d_exp_apply as d_exp_apply
from flexmb.rotations.so3 import d_exp_T_apply as d_exp_T_apply
from flexmb.rotations.so3 import d_log_rel as d_log_rel
from flexmb.rotations.so3 import d_tangent as d_tangent
from flexmb.rotations.so3 import d_tangent_inv as d_tangent_inv
from flexmb.rotations.so3 import d_tangent_inv_T as d_tangent_inv_T
from flexmb.rotations.so3 import d_tangent_T as d_tangent_T
from flexmb.rotations.so3 import exp as exp
from flexmb.rotations.so3 import log as log
from flexmb.rotations.so3 import matrix_to_quat as matrix_to_quat
from flexmb.rotations.so3 import skew as skew
from flexmb.rotations.so3 import tangent as tangent
from flexmb.rotations.so3 import tangent_inv as tangent_inv

__all__ = [*_SO3, "orientation", "as_matrix", "ORTHONORMAL_TOL"]
