"""Point masses and springs: element matrices of the lumped elements of a mesh.

A point mass is a 6 x 6 rigid-body mass matrix about its node (:class:`~flexmb.fe.mesh.PointMasses`);
at a node without rotational DOFs (only solid cells use it) its rotational rows and columns have
nothing to act on and are dropped: the mass acts at the node (its offset and rotary inertia are
lost, as with Nastran's AUTOSPC of the unused rotations); :func:`point_mass_matrices` reports which.
A spring of stiffness k on the stretch ``s = c_a . d_a + c_b . d_b`` has ``K_e = k c c^T``
(:class:`~flexmb.fe.mesh.Springs`); a spring on a rotation of a node without rotational DOFs is
refused (it would act on nothing).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError

__all__ = ["point_mass_matrices", "spring_matrices"]


def point_mass_matrices(masses, dof_map) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Scatter data of the point masses.

    Returns
    -------
    dofs : ndarray of int, shape (p, 6)
        Global DOFs of each mass's node; -1 where the node has no rotations.
    matrix : ndarray, shape (p, 6, 6)
        The mass matrices with the rows and columns of missing DOFs zeroed.
    dropped : ndarray of bool, shape (p,)
        Masses whose rotary inertia or offset was dropped (node without rotations).
    """
    nodes = masses.nodes
    has_rot = dof_map.per_node[nodes] == 6
    dofs = dof_map.offset[nodes][:, None] + np.arange(6)
    dofs[~has_rot, 3:] = -1
    mat = masses.matrix.copy()
    dropped = ~has_rot & masses.rotational()
    mat[~has_rot, 3:, :] = 0.0
    mat[~has_rot, :, 3:] = 0.0
    return dofs, mat, dropped


def spring_matrices(springs, dof_map) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Scatter data of the springs: DOFs (s, 12) (-1 for ground or missing rotations) and element
    matrices (s, 12, 12) ``k c c^T``."""
    nodes = springs.nodes
    s = len(nodes)
    dofs = np.full((s, 12), -1, dtype=np.int64)
    rot = springs.rotational()
    for end in range(2):
        n = nodes[:, end]
        real = n >= 0
        has_rot = np.zeros(s, dtype=bool)
        has_rot[real] = dof_map.per_node[n[real]] == 6
        bad = rot[:, end] & real & ~has_rot
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ModelError(
                f"spring {int(springs.ids[i])} acts on a rotation of node index {int(n[i])}, which has no rotational "
                f"DOFs (no shell or beam uses it); {int(bad.sum())} such spring(s). Connect the node to a beam or "
                "shell, or give the spring translational DOFs only."
            )
        base = dof_map.offset[np.maximum(n, 0)]
        dofs[real, 6 * end : 6 * end + 3] = base[real, None] + np.arange(3)
        dofs[real & has_rot, 6 * end + 3 : 6 * end + 6] = base[real & has_rot, None] + np.arange(3, 6)
    c = springs.coef.reshape(s, 12)
    return dofs, springs.stiffness[:, None, None] * c[:, :, None] * c[:, None, :]
