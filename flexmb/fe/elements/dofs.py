"""The DOF map of a mixed FE model: 3 DOFs per node of solids, 6 per node of shells and beams.

Node-major: node ``a`` owns DOFs ``offset[a] .. offset[a + 1] - 1``, first its translations
``(ux, uy, uz)``, then, at a node with rotations, its rotation vector ``(rx, ry, rz)`` (rad, a small
rotation about the global axes). A model of solid cells only has 3 DOFs at every node and the map is
the classic ``3 a + i`` (every solid-only code path is unchanged).

A node shared by a solid and a shell or beam carries 6 DOFs: the solid acts on its translations
only, the shell or beam on all six. The rotations there are held by the shells and beams alone
(the joint is a hinge for the solid, as in Abaqus or Nastran without a coupling): a shell edge
welded along one line of solid nodes turns freely about that line; embed the shell one element
into the solid (or share two rows of nodes) for a moment connection.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError

__all__ = ["DofMap"]


@dataclass(frozen=True, eq=False)
class DofMap:
    """DOF counts per node and the node-major numbering.

    Attributes
    ----------
    per_node : ndarray of int, shape (n_nodes,)
        3 (translations) or 6 (translations and rotations).
    """

    per_node: NDArray[np.int64]

    def __post_init__(self) -> None:
        p = np.asarray(self.per_node, dtype=np.int64).reshape(-1)
        if np.any((p != 3) & (p != 6)):
            raise ModelError("DofMap: every node has 3 or 6 DOFs.")
        p.flags.writeable = False
        object.__setattr__(self, "per_node", p)

    @classmethod
    def with_rotations(cls, n_nodes: int, nodes: ArrayLike) -> DofMap:
        """3 DOFs per node, 6 at ``nodes`` (0-based indices)."""
        p = np.full(n_nodes, 3, dtype=np.int64)
        p[np.asarray(nodes, dtype=np.int64).reshape(-1)] = 6
        return cls(p)

    @cached_property
    def offset(self) -> NDArray[np.int64]:
        """(n_nodes + 1,) first DOF of each node; ``offset[-1]`` is the number of DOFs."""
        out = np.zeros(self.per_node.size + 1, dtype=np.int64)
        np.cumsum(self.per_node, out=out[1:])
        return out

    @property
    def n_nodes(self) -> int:
        return int(self.per_node.size)

    @property
    def n_dofs(self) -> int:
        return int(self.offset[-1])

    @property
    def has_rotations(self) -> bool:
        return bool(np.any(self.per_node == 6))

    @property
    def rotational_nodes(self) -> NDArray[np.int64]:
        """Sorted indices of the nodes with rotations."""
        return np.flatnonzero(self.per_node == 6)

    def translations(self, nodes: ArrayLike | None = None) -> NDArray[np.int64]:
        """(k, 3) DOF indices of the translations of ``nodes`` (default all nodes)."""
        nodes = np.arange(self.n_nodes) if nodes is None else np.asarray(nodes, dtype=np.int64).reshape(-1)
        return self.offset[nodes][:, None] + np.arange(3)

    def rotations(self, nodes: ArrayLike) -> NDArray[np.int64]:
        """(k, 3) DOF indices of the rotations of ``nodes``; ModelError for a node without them."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        bad = nodes[self.per_node[nodes] != 6]
        if bad.size:
            raise ModelError(f"DofMap: node(s) {bad[:5].tolist()} (0-based) have no rotational DOFs (no shell or beam "
                             "element uses them).")
        return self.offset[nodes][:, None] + np.arange(3, 6)

    def dofs(self, nodes: ArrayLike, components: ArrayLike = (0, 1, 2, 3, 4, 5)) -> NDArray[np.int64]:
        """Sorted DOF indices of ``components`` (0-2 translations, 3-5 rotations) of ``nodes``; the
        rotations of nodes without rotational DOFs are skipped (for boundary conditions such as
        "clamp these nodes": translations everywhere, rotations where they exist)."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        comp = np.asarray(components, dtype=np.int64).reshape(-1)
        if np.any((comp < 0) | (comp > 5)):
            raise ModelError(f"DofMap.dofs: components {comp.tolist()} must be in 0..5.")
        idx = self.offset[nodes][:, None] + comp[None, :]
        keep = comp[None, :] < self.per_node[nodes][:, None]
        return np.unique(idx[keep])

    def element_dofs(self, conn: NDArray[np.int64], per_node: int) -> NDArray[np.int64]:
        """(c, k * per_node) DOF indices of cells ``conn`` (c, k): translations (per_node = 3) or all
        six DOFs (per_node = 6, every node must have rotations)."""
        if per_node == 6 and conn.size and np.any(self.per_node[conn] != 6):
            raise ModelError("DofMap: an element with rotations uses a node without rotational DOFs.")
        return (self.offset[conn][:, :, None] + np.arange(per_node)).reshape(len(conn), -1)

    def rigid_body_modes(self, points: ArrayLike, origin: ArrayLike | None = None) -> NDArray[np.float64]:
        """Exact rigid-body motions on this DOF map, shape (n_dofs, 6): unit translations along x, y,
        z, then unit small rotations about x, y, z through ``origin`` (default the coordinate origin):
        translations ``e_k x (x - origin)``, rotations ``e_k`` at nodes that have them."""
        x = np.asarray(points, dtype=float).reshape(self.n_nodes, 3)
        r = x - (np.zeros(3) if origin is None else np.asarray(origin, dtype=float))
        out = np.zeros((self.n_dofs, 6))
        tr = self.translations()
        for k in range(3):
            out[tr[:, k], k] = 1.0
            out[tr, 3 + k] = np.cross(np.eye(3)[k], r)
        rot = self.rotational_nodes
        if rot.size:
            rd = self.offset[rot][:, None] + np.arange(3, 6)
            for k in range(3):
                out[rd[:, k], 3 + k] = 1.0
        return out

    def linear_fields(self, points: ArrayLike, A: ArrayLike, b: ArrayLike | None = None) -> NDArray[np.float64]:
        """Affine displacement fields ``u = A_k x + b_k`` on this DOF map, shape (n_dofs, k).

        At nodes with rotations the rotation is the field's infinitesimal rotation
        ``theta = curl(u) / 2`` (``theta_i = eps_ijk A_kj / 2``): exact for rigid motions
        (antisymmetric ``A``); a pure strain (symmetric ``A``) leaves the shell and beam sections
        unrotated (their stretch is not a rotation).

        Parameters
        ----------
        points : array_like, shape (n_nodes, 3)
            Node coordinates (m).
        A : array_like, shape (k, 3, 3)
            Displacement gradients (1).
        b : array_like, shape (k, 3), optional
            Uniform translations (m); default zero.
        """
        x = np.asarray(points, dtype=float).reshape(self.n_nodes, 3)
        A = np.asarray(A, dtype=float).reshape(-1, 3, 3)
        k = A.shape[0]
        u = np.einsum("kij,nj->nik", A, x)  # (n, 3, k)
        if b is not None:
            u = u + np.asarray(b, dtype=float).reshape(k, 3).T[None]
        out = np.zeros((self.n_dofs, k))
        out[self.translations()] = u
        rot = self.rotational_nodes
        if rot.size:
            theta = 0.5 * np.stack([A[:, 2, 1] - A[:, 1, 2], A[:, 0, 2] - A[:, 2, 0], A[:, 1, 0] - A[:, 0, 1]])
            out[self.offset[rot][:, None] + np.arange(3, 6)] = theta[None]  # (3, k) at every rotational node
        return out

    def embed_translations(self, u: ArrayLike) -> NDArray[np.float64]:
        """Nodal translations ``(n_nodes * 3, ...)`` (node-major) on this map, rotations zero:
        shape ``(n_dofs, ...)``."""
        u = np.asarray(u, dtype=float)
        out = np.zeros((self.n_dofs,) + u.shape[1:])
        out[self.translations().ravel()] = u
        return out

    def labels(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(node, component) of every DOF, each shape (n_dofs,); component 0-2 translations, 3-5
        rotations."""
        node = np.repeat(np.arange(self.n_nodes), self.per_node)
        comp = np.arange(self.n_dofs) - self.offset[node]
        return node, comp
