"""Interface frames of a reduced FE model: specification, condensation and constrained static solves.

Interface frames
----------------
An interface is a node set condensed to one frame with 6 DOFs ``q = (t, theta)`` at a point ``p``
(default the set's centroid): translation ``t`` (m) and small rotation ``theta`` (rad). A node at
``x`` moves with a rigid frame as ``u = t + theta x (x - p)``.

* ``kind="rigid"`` (RBE2-like): the nodes follow the frame rigidly. Implemented by a sparse
  transformation ``u = T x`` that replaces the set's nodal DOFs by the 6 frame DOFs; it stiffens
  the set. Nodes of shells and beams (6 DOFs) turn with the frame: ``theta_node = theta``.
* ``kind="average"`` (RBE3-like): the frame motion is the weighted least-squares fit of a rigid
  motion to the nodal displacements, ``q = A u_set`` with
  ``A = (sum_i w_i H_i^T H_i)^{-1} [w_1 H_1^T ... w_m H_m^T]``, ``H_i = [I, -skew(x_i - p)]``. It
  does not stiffen the set. Only the nodes' translations enter (as Nastran's RBE3 with the default
  components 123): the rotations of shell and beam nodes in the set stay free. Implemented with 6
  Lagrange multipliers per interface (the stiffness stays sparse); a load ``F`` (force, moment
  about ``p``) on the frame acts on the nodes as ``A^T F``, the RBE3 force distribution.

Static problems with a singular stiffness and multipliers are solved by grounding a few DOFs with
springs (the frame DOFs of rigid interfaces, three far-apart nodes of averaging ones), factorizing
the grounded stiffness once with CHOLMOD, and removing the springs exactly through a small dense
bordered system (a Woodbury-type identity), so all results are exact to round-off.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.reduction.modes import check_km, cross_matrices
from flexmb.fe.spd_solve import SPDFactor, factorize_spd

__all__ = ["Interface", "averaging_operator", "frame_static_response"]

logger = logging.getLogger(__name__)


def _frame_rigid_map(r: NDArray[np.float64]) -> NDArray[np.float64]:
    """H_i = [I, -skew(r_i)], shape (m, 3, 6): nodal displacement of frame motion (t, theta)."""
    h = np.zeros(r.shape[:-1] + (3, 6))
    h[..., :, :3] = np.eye(3)
    h[..., :, 3:] = -cross_matrices(r)
    return h


def averaging_operator(
    points: ArrayLike, position: ArrayLike, weights: ArrayLike | None = None, *, name: str = "interface"
) -> NDArray[np.float64]:
    """RBE3-like weighted least-squares rigid fit of nodal displacements.

    Parameters
    ----------
    points : array_like, shape (m, 3)
        Coordinates of the interface nodes (m).
    position : array_like, shape (3,)
        Frame point ``p`` (m).
    weights : array_like, shape (m,), optional
        Positive nodal weights (default 1).
    name : str
        For error messages.

    Returns
    -------
    A : ndarray, shape (6, 3 m)
        ``q = A @ u_set`` (node-major ``u_set``), ``q = (t, theta)`` (m, rad). Exact for rigid
        motions: ``A @ (H q) = q``.

    Raises
    ------
    ModelError
        If the nodes cannot define six frame motions (fewer than 3 nodes, or collinear).
    """
    x = np.asarray(points, dtype=float).reshape(-1, 3)
    m = x.shape[0]
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    if w.shape != (m,) or np.any(w <= 0) or not np.all(np.isfinite(w)):
        raise ModelError(f"interface {name!r}: `weights` must be {m} positive numbers, got shape {w.shape}.")
    r = x - np.asarray(position, dtype=float)
    h = _frame_rigid_map(r)  # (m, 3, 6)
    g = np.einsum("i,iab,iac->bc", w, h, h)
    # scale rotations by the set's radius so the conditioning check is unit-free
    rad = math.sqrt(float(np.average((r ** 2).sum(axis=1), weights=w))) or 1.0
    s = np.r_[np.ones(3), np.full(3, rad)]
    gs = g / np.outer(s, s)
    ev = np.linalg.eigvalsh(gs)
    if m < 3 or ev[0] <= 1e-10 * ev[-1]:
        raise ModelError(
            f"interface {name!r}: its {m} node(s) are collinear or too few to define a frame's six motions "
            "(rotation about their line is undetermined). Use a node set spanning a surface (at least 3 "
            "non-collinear nodes)."
        )
    a = np.linalg.solve(g, (w[:, None, None] * h).transpose(2, 0, 1).reshape(6, 3 * m))
    return a



def interface_operator(points: ArrayLike, dof_map, nodes: NDArray[np.int64], position: ArrayLike,
                       weights: ArrayLike, kind: str, name: str) -> NDArray[np.float64]:
    """Least-squares frame motion of a node set, ``q = A @ u[dof_map.dofs(nodes)]``, shape (6, k).

    An averaging (RBE3) interface, and a rigid one of nodes without rotations: :func:`averaging_operator`
    on the translations (k = 3 m). A rigid (RBE2) interface with shell or beam nodes fits their
    rotations too (rows ``theta_node = theta``, weight ``w_i l^2`` with ``l`` the set's r.m.s. radius
    about ``position``, 1 m for a single node): a single beam node or a line of shell nodes then
    defines the frame (``t = u_node + theta x (p - x_node)``), exactly for rigid motions.
    """
    x = np.asarray(points, dtype=float)[nodes]
    w = np.asarray(weights, dtype=float).reshape(-1)
    rot = dof_map.per_node[nodes] == 6
    if kind != "rigid" or not rot.any():
        try:
            return averaging_operator(x, position, w, name=name)
        except ModelError as exc:
            if not rot.any():
                raise
            raise ModelError(f"{exc} An averaging (RBE3) interface uses the translations only; kind='rigid' (RBE2) "
                             "also ties the rotations of its shell and beam nodes and accepts a line or one node.") from exc
    r = x - np.asarray(position, dtype=float)
    ell2 = float(np.average((r ** 2).sum(axis=1), weights=w)) or 1.0
    h = _frame_rigid_map(r)  # (m, 3, 6)
    for_node = np.zeros((nodes.size, 6, 6))
    for_node[:, :, :3] = (w[:, None, None] * h).transpose(0, 2, 1)
    for_node[rot, 3:, 3:] = (w[rot] * ell2)[:, None, None] * np.eye(3)
    g = np.einsum("i,iab,iac->bc", w, h, h) + (w[rot].sum() * ell2) * np.diag([0, 0, 0, 1.0, 1.0, 1.0])
    keep = (np.arange(6) < np.where(rot, 6, 3)[:, None])  # (m, 6) DOFs the nodes have
    rows = for_node.transpose(1, 0, 2)[:, keep]  # (6, k): the set's DOFs node-major, translations first
    return np.linalg.solve(g, rows)


@dataclass(frozen=True)
class Interface:
    """Specification of an interface frame (input of :func:`craig_bampton`).

    Attributes
    ----------
    name : str
        Frame name; also the node set used when ``nodes`` is None.
    nodes : str or array_like of int, optional
        Node set name or 0-based node indices (default: the node set ``name``).
    position : array_like, shape (3,), optional
        Frame point ``p`` (m); default the (weighted) centroid of the nodes.
    kind : {"rigid", "average"}
        RBE2-like rigid coupling or RBE3-like averaging (see the module docstring).
    weights : array_like, shape (m,), optional
        Nodal weights of an averaging interface (default 1 each).
    """

    name: str
    nodes: Any = None
    position: Any = None
    kind: str = "rigid"
    weights: Any = None



# ============================================================================================
# interfaces: transformation, boundary operator, constrained solves
# ============================================================================================


@dataclass(frozen=True, eq=False)
class ResolvedInterface:
    name: str
    nodes: NDArray[np.int64]
    position: NDArray[np.float64]
    kind: str
    weights: NDArray[np.float64]
    A: NDArray[np.float64]  # (6, k) least-squares frame motion of the set's DOFs (interface_operator)


def resolve_interfaces(mesh, interfaces, default_kind: str) -> list[ResolvedInterface]:
    if isinstance(interfaces, (str, Interface)):
        interfaces = [interfaces]
    if isinstance(interfaces, Mapping):
        specs = []
        for key, val in interfaces.items():
            if isinstance(val, Interface):
                specs.append(val)
            elif isinstance(val, Mapping):
                specs.append(Interface(name=key, **{"kind": default_kind, **val}))
            else:  # node set name or node indices
                specs.append(Interface(name=key, nodes=val, kind=default_kind))
        interfaces = specs
    points = np.asarray(mesh.points, dtype=float)
    node_sets = getattr(mesh, "node_sets", {}) or {}
    out = []
    for spec in interfaces:
        if isinstance(spec, str):
            spec = Interface(name=spec, kind=default_kind)
        if not isinstance(spec, Interface):
            raise ModelError(f"interfaces: expected node-set names or Interface objects, got {type(spec).__name__}.")
        kind = spec.kind
        if kind not in ("rigid", "average"):
            raise ModelError(f"interface {spec.name!r}: `kind` = {kind!r}; use 'rigid' (RBE2) or 'average' (RBE3).")
        src = spec.name if spec.nodes is None else spec.nodes
        if isinstance(src, str):
            if src not in node_sets:
                raise ModelError(
                    f"interface {spec.name!r}: node set {src!r} not in the mesh; known sets: "
                    f"{sorted(node_sets) or 'none'} (create one with mesh.with_node_set(name, idx))."
                )
            nodes = np.asarray(node_sets[src], dtype=np.int64)
        else:
            nodes = np.asarray(src, dtype=np.int64).reshape(-1)
        nodes = np.unique(nodes)
        if nodes.size == 0 or nodes[0] < 0 or nodes[-1] >= len(points):
            raise ModelError(f"interface {spec.name!r}: node indices must be non-empty and in 0..{len(points) - 1}.")
        w = np.ones(nodes.size) if spec.weights is None else np.asarray(spec.weights, dtype=float).reshape(-1)
        if kind == "rigid" and spec.weights is not None:
            logger.info("interface %r: `weights` only affect the frame motion estimate of a rigid interface", spec.name)
        if w.shape != nodes.shape:
            raise ModelError(f"interface {spec.name!r}: {w.size} weights for {nodes.size} nodes.")
        pos = (np.average(points[nodes], axis=0, weights=w) if spec.position is None
               else np.asarray(spec.position, dtype=float).reshape(3))
        A = interface_operator(points, node_dof_map(mesh, len(points)), nodes, pos, w, kind, spec.name)
        out.append(ResolvedInterface(spec.name, nodes, pos, kind, w, A))
    names = [f.name for f in out]
    if len(set(names)) != len(names):
        raise ModelError(f"interfaces: duplicate names {names}.")
    allnodes = np.concatenate([f.nodes for f in out]) if out else np.zeros(0, np.int64)
    if np.unique(allnodes).size != allnodes.size:
        raise ModelError(
            "interfaces: node sets overlap; every node may belong to one interface only "
            f"({names}). Shrink the sets (e.g. mesh.nodes_within) so they are disjoint."
        )
    return out


@dataclass(frozen=True, eq=False)
class CondensedLayout:
    """DOF layout of the condensed model x: u = T x; frame motions q = B x (6 rows per interface).

    x = [DOFs of the nodes that are not in a rigid interface (node order, 3 or 6 each as in the
        DOF map: translations first)] + [6 DOFs of each rigid interface frame (interface order)].
    """

    T: sp.csr_matrix  # (n_dofs, nx)
    B: sp.csr_matrix  # (6 n_if, nx)
    node_col: NDArray[np.int64]  # (n,) first x-column (its translations) of each retained node, -1 for rigid-set nodes
    frame_col: dict[int, int]  # interface index -> first x-column of a rigid frame
    nx: int


def node_dof_map(mesh, n_nodes: int):
    """``mesh.dof_map`` (3 or 6 DOFs per node), or 3 DOFs per node for a mesh-like object without one."""
    from flexmb.fe.elements.dofs import DofMap

    dm = getattr(mesh, "dof_map", None)
    return dm if dm is not None else DofMap(np.full(n_nodes, 3, dtype=np.int64))


def condensed_layout(points: NDArray[np.float64], ifs: list[ResolvedInterface], dof_map=None) -> CondensedLayout:
    n = len(points)
    per = np.full(n, 3, dtype=np.int64) if dof_map is None else dof_map.per_node
    offset = np.concatenate([[0], np.cumsum(per)])
    slave = np.zeros(n, dtype=bool)
    for f in ifs:
        if f.kind == "rigid":
            slave[f.nodes] = True
    keep = np.flatnonzero(~slave)
    node_col = np.full(n, -1, dtype=np.int64)
    node_col[keep] = np.concatenate([[0], np.cumsum(per[keep])])[:-1]
    nx = int(per[keep].sum())
    frame_col = {}
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            frame_col[i] = nx
            nx += 6
    kept_rows = (offset[keep][:, None] + np.arange(6))[np.arange(6) < per[keep][:, None]]  # node-major
    rows = [kept_rows.astype(np.int64)]
    cols = [np.arange(kept_rows.size, dtype=np.int64)]
    vals = [np.ones(kept_rows.size)]
    for i, f in enumerate(ifs):
        if f.kind != "rigid":
            continue
        h = _frame_rigid_map(points[f.nodes] - f.position)  # (m, 3, 6)
        r = np.broadcast_to((offset[f.nodes][:, None, None] + np.arange(3)[None, :, None]), h.shape)
        c = np.broadcast_to(frame_col[i] + np.arange(6)[None, None, :], h.shape)
        nz = h != 0.0
        rows.append(r[nz])
        cols.append(c[nz])
        vals.append(h[nz])
        rn = f.nodes[per[f.nodes] == 6]  # RBE2: the nodes' rotations are the frame's
        rows.append((offset[rn][:, None] + np.arange(3, 6)).ravel())
        cols.append(np.tile(frame_col[i] + np.arange(3, 6), rn.size))
        vals.append(np.ones(3 * rn.size))
    T = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(int(offset[-1]), nx)
    )
    brows, bcols, bvals = [], [], []
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            brows.append(6 * i + np.arange(6))
            bcols.append(frame_col[i] + np.arange(6))
            bvals.append(np.ones(6))
        else:
            cx = (node_col[f.nodes][:, None] + np.arange(3)).ravel()  # (3m,)
            brows.append(np.repeat(6 * i + np.arange(6), cx.size))
            bcols.append(np.tile(cx, 6))
            bvals.append(f.A.ravel())
    B = sp.csr_matrix(
        (np.concatenate(bvals), (np.concatenate(brows), np.concatenate(bcols))) if ifs else
        (np.zeros(0), (np.zeros(0, int), np.zeros(0, int))),
        shape=(6 * len(ifs), nx),
    )
    return CondensedLayout(T=T, B=B, node_col=node_col, frame_col=frame_col, nx=nx)


def far_apart_nodes(points: NDArray[np.float64], nodes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Three nodes of a set spanning a large triangle (for grounding springs)."""
    x = points[nodes]
    a = int(np.argmin(x @ np.array([1.0, 1.3, 1.7])))
    b = int(np.argmax(((x - x[a]) ** 2).sum(axis=1)))
    d = x[b] - x[a]
    cr = np.cross(x - x[a], d)
    c = int(np.argmax((cr ** 2).sum(axis=1)))
    return nodes[np.unique([a, b, c])]


def _grounding(lay: CondensedLayout, ifs: list[ResolvedInterface], points, Kx) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Grounded x-DOFs and spring rates that make Kx + diag(springs) positive definite."""
    dofs = []
    for i, f in enumerate(ifs):
        if f.kind == "rigid":
            dofs.append(lay.frame_col[i] + np.arange(6))
        else:
            nodes = far_apart_nodes(points, f.nodes)
            dofs.append((lay.node_col[nodes][:, None] + np.arange(3)).ravel())
    d = np.unique(np.concatenate(dofs)) if dofs else np.zeros(0, np.int64)
    diag = Kx.diagonal()
    ref = float(np.mean(diag[diag > 0])) if np.any(diag > 0) else 1.0
    k = np.where(diag[d] > 0, diag[d], ref)
    return d, k


class ConstrainedSolver:
    """Solve [K B^T; B 0] [x; lam] = [f; g] with K = Ks - U U^T, Ks SPD (factorized once).

    U holds grounding springs (columns sqrt(k_i) e_{d_i}); B (nb, n) constraint rows. With
    ``Z = Ks^{-1} [U, B^T]`` and ``y = Ks^{-1} f``, ``x = y + Z_U w - Z_B lam`` where
    ``w = U^T x`` and ``lam`` solve the small bordered system::

        [U^T Z_U - I   -U^T Z_B] [w  ]   [-U^T y   ]
        [B Z_U         -B Z_B  ] [lam] = [g - B y  ]

    which costs one factorization and ``r + nb`` solves up front, then one solve per right-hand
    side (plus one per refinement step).
    """

    def __init__(self, Ks, B, ground_dofs=None, ground_k=None, *, backend="auto", what="matrix"):
        Ks = sp.csc_matrix(Ks)
        n = Ks.shape[0]
        self.n = n
        self.factor: SPDFactor = factorize_spd(Ks, backend=backend, what=what)
        self.Ks = Ks
        gd = np.zeros(0, np.int64) if ground_dofs is None else np.asarray(ground_dofs, np.int64)
        gk = np.zeros(0) if ground_k is None else np.asarray(ground_k, float)
        self.gd, self.gk, self.gs = gd, gk, np.sqrt(gk)
        r = gd.size
        # scale the constraint rows to the stiffness level so the bordered system is balanced
        self.bscale = math.sqrt(float(np.mean(Ks.diagonal()))) if n else 1.0
        if sp.issparse(B):
            self.B = sp.csr_matrix(B * self.bscale)
            BT = self.B.T.toarray()
        else:
            self.B = np.asarray(B, dtype=float).reshape(-1, n) * self.bscale
            BT = self.B.T
        nb = self.B.shape[0]
        self.nb, self.r = nb, r
        W = np.zeros((n, r + nb))
        W[gd, np.arange(r)] = self.gs
        W[:, r:] = BT
        Z = self.factor.solve(W) if r + nb else np.zeros((n, 0))
        self.Z = Z.reshape(n, r + nb)
        ZU, ZB = self.Z[:, :r], self.Z[:, r:]
        S = np.zeros((r + nb, r + nb))
        S[:r, :r] = self.gs[:, None] * ZU[gd] - np.eye(r)
        S[:r, r:] = -self.gs[:, None] * ZB[gd]
        S[r:, :r] = self.B @ ZU
        S[r:, r:] = -(self.B @ ZB)
        self.S_lu = sla.lu_factor(S) if r + nb else None

    def _K_apply(self, x):
        y = self.Ks @ x
        if self.r:
            y[self.gd] -= (self.gk[:, None] if x.ndim == 2 else self.gk) * x[self.gd]
        return y

    def _solve_once(self, f, g_scaled):
        y = self.factor.solve(f)
        if self.S_lu is None:
            return y, np.zeros((0,) + f.shape[1:])
        gs = self.gs[:, None] if y.ndim == 2 else self.gs
        rhs = np.concatenate([-gs * y[self.gd], g_scaled - self.B @ y], axis=0)
        sol = sla.lu_solve(self.S_lu, rhs)
        w, lam = sol[: self.r], sol[self.r :]
        x = y + self.Z[:, : self.r] @ w - self.Z[:, self.r :] @ lam
        return x, lam

    def solve(self, f, g=None, *, refine: int = 1):
        """Solution x (n, ...) for loads f (n, ...) and constraint values g (nb, ...) (default 0).

        Returns ``(x, lam)`` with ``lam`` the multipliers of the (unscaled) rows of B.
        """
        f = np.asarray(f, dtype=float)
        g = np.zeros((self.nb,) + f.shape[1:]) if g is None else np.asarray(g, dtype=float)
        gsc = g * self.bscale
        x, lam = self._solve_once(f, gsc)
        for _ in range(refine):  # one step of iterative refinement against the exact K
            rf = f - self._K_apply(x) - (self.B.T @ lam if self.nb else 0.0)
            rg = gsc - self.B @ x
            dx, dlam = self._solve_once(rf, rg)
            x, lam = x + dx, lam + dlam
        return x, lam * self.bscale


def condensed_model(K, M, mesh, interfaces, default_kind):
    points = np.asarray(mesh.points, dtype=float)
    dmap = node_dof_map(mesh, len(points))
    K, M = check_km(K, M, dmap.n_dofs)
    ifs = resolve_interfaces(mesh, interfaces, default_kind)
    lay = condensed_layout(points, ifs, dmap)
    T = lay.T
    Kx = sp.csr_matrix(T.T @ K @ T)
    Mx = sp.csr_matrix(T.T @ M @ T)
    return points, K, M, ifs, lay, Kx, Mx


def static_solver(points, ifs, lay, Kx, B, backend):
    gd, gk = _grounding(lay, ifs, points, Kx)
    Ks = Kx + sp.csr_matrix((gk, (gd, gd)), shape=Kx.shape)
    return ConstrainedSolver(Ks, B, gd, gk, backend=backend, what="grounded condensed stiffness")


def reference_index(ifs, reference) -> int | None:
    if reference is None:
        return None
    if reference == "first":
        if not ifs:
            raise ModelError("craig_bampton: reference='first' needs at least one interface.")
        return 0
    for i, f in enumerate(ifs):
        if f.name == reference:
            return i
    raise ModelError(f"craig_bampton: `reference` = {reference!r} is not one of the interfaces {[f.name for f in ifs]}.")


def frame_rows(nb_total: int, idx: list[int]) -> NDArray[np.int64]:
    return np.concatenate([6 * i + np.arange(6) for i in idx]) if idx else np.zeros(0, np.int64)


def resolve_static_mode_nodes(mesh, static_modes) -> NDArray[np.int64]:
    if static_modes is None:
        return np.zeros(0, np.int64)
    if isinstance(static_modes, str) or np.ndim(static_modes) == 1 and not isinstance(static_modes, (list, tuple)):
        items = [static_modes]
    elif isinstance(static_modes, (list, tuple)) and all(isinstance(v, (int, np.integer)) for v in static_modes):
        items = [np.asarray(static_modes)]
    else:
        items = list(static_modes)
    out = []
    for it in items:
        if isinstance(it, str):
            if it not in mesh.node_sets:
                raise ModelError(f"static_modes: node set {it!r} not in the mesh; known: {sorted(mesh.node_sets)}.")
            out.append(np.asarray(mesh.node_sets[it], np.int64))
        else:
            out.append(np.asarray(it, np.int64).reshape(-1))
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)



def frame_static_response(
    K,
    mesh,
    interfaces,
    frame_loads: Mapping[str, ArrayLike],
    *,
    reference: str | None = "first",
    interface_kind: str = "rigid",
    node_loads: ArrayLike | None = None,
    backend: str = "auto",
) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.float64]]:
    """Full-FE static response of a model with interface frames (the reference Craig-Bampton matches).

    The reference interface frame is clamped; loads act on frames (force (N) and moment about the
    frame point (N m)) and optionally on nodes.

    Parameters
    ----------
    K : sparse matrix, shape (n_dofs, n_dofs)
    mesh : FEMesh
    interfaces, interface_kind, reference : as for :func:`craig_bampton` (reference must not be None)
    frame_loads : dict name -> array_like, shape (6,)
    node_loads : array_like, shape (n_dofs,), optional
        Nodal forces (N; moments N m on rotations), on ``mesh.dof_map``.

    Returns
    -------
    frames : dict name -> ndarray, shape (6,)
        Frame translation (m) and small rotation (rad) of every interface.
    u : ndarray, shape (n_dofs,)
        Nodal displacements (m) and rotations (rad) on ``mesh.dof_map``.
    """
    points = np.asarray(mesh.points, dtype=float)
    K = sp.csr_matrix(K, dtype=float)
    ifs = resolve_interfaces(mesh, interfaces, interface_kind)
    lay = condensed_layout(points, ifs, node_dof_map(mesh, len(points)))
    iref = reference_index(ifs, reference)
    if iref is None:
        raise ModelError("frame_static_response: a reference interface is needed to hold the body.")
    Kx = sp.csr_matrix(lay.T.T @ K @ lay.T)
    Bref = lay.B[6 * iref : 6 * iref + 6]
    solver = static_solver(points, ifs, lay, Kx, Bref, backend)
    f = np.zeros(lay.nx)
    if node_loads is not None:
        f += lay.T.T @ np.asarray(node_loads, dtype=float)
    for name, load in frame_loads.items():
        i = [g.name for g in ifs].index(name)
        f += lay.B[6 * i : 6 * i + 6].T @ np.asarray(load, dtype=float)
    x, _ = solver.solve(f)
    q = lay.B @ x
    return {g.name: q[6 * i : 6 * i + 6] for i, g in enumerate(ifs)}, lay.T @ x
