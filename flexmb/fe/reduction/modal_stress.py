"""Modal stresses (stress per unit modal coordinate at the nodes) and the von Mises stress."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.fe.mesh.unassembled import refuse_rotational

__all__ = ["modal_stresses", "von_mises"]


def _fe():
    from flexmb.fe.elements import assembly as fe_assembly  # local import: keeps the reduction modules free of the mesh module

    return fe_assembly


def modal_stresses(mesh, shapes: ArrayLike, materials=None) -> NDArray[np.float64]:
    """Stresses per unit modal coordinate at the mesh nodes.

    Evaluated at each element's nodes and averaged over the elements sharing a node
    (:func:`flexmb.fe.elements.assembly.nodal_stresses`).

    Parameters
    ----------
    mesh : FEMesh
    shapes : array_like, shape (3 n_nodes, nm)

    Returns
    -------
    S : ndarray, shape (nm, n_nodes, 6)
        Stress (Pa per unit eta), Voigt [xx, yy, zz, yz, xz, xy]; the stress of a motion is
        ``einsum("k,knv->nv", eta, S)``.
    """
    refuse_rotational(mesh, "modal_stresses", "Use mesh.solid_only() for the solid part.")
    fe = _fe()
    P = np.asarray(shapes, dtype=float)
    s = fe.nodal_stresses(mesh, P, materials)  # (n, 6, nm)
    return np.ascontiguousarray(s.transpose(2, 0, 1))


def von_mises(stress: ArrayLike) -> NDArray[np.float64]:
    """Von Mises equivalent stress of Voigt stresses [xx, yy, zz, yz, xz, xy] (..., 6) -> (...)."""
    s = np.asarray(stress, dtype=float)
    d = (s[..., 0] - s[..., 1]) ** 2 + (s[..., 1] - s[..., 2]) ** 2 + (s[..., 2] - s[..., 0]) ** 2
    return np.sqrt(0.5 * d + 3.0 * (s[..., 3] ** 2 + s[..., 4] ** 2 + s[..., 5] ** 2))
