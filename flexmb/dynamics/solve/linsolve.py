"""Sparse linear solvers for the Newton matrix (unsymmetric, indefinite, very sparse).

A backend is a callable ``factor(A) -> solve`` where ``solve(b)`` returns ``A^-1 b``; it raises
:class:`SingularMatrixError` when ``A`` is singular.  :func:`linear_solver` turns a name into a
fresh backend instance (one per simulation: the instance caches the symbolic work of the
sparsity pattern it sees, which is fixed per model).

Backends
--------
``"superlu"`` (default)
    SuperLU for the ordering and the pivots, a compiled refactorization for the rest
    (:class:`Refactor`, kernels in :mod:`flexmb.dynamics.solve.refactor_lu`).  The first matrix of a
    pattern is factored by SciPy's SuperLU with COLAMD (or the minimum degree ordering of
    ``A^T A`` where COLAMD fills badly, :meth:`Refactor._ordered`) and partial pivoting; its column order and
    row pivots are kept, the structure of ``L`` and ``U`` under them is analysed once, and every
    later matrix with the same pattern is factored numerically along that structure (no ordering,
    no pivot search, no supernode bookkeeping) and solved by compiled triangular solves.  A pivot
    below ``1e-3`` times the largest entry under it (KLU's default threshold) makes that
    factorization pivot afresh with SuperLU (same column order), and the new pivots are kept.
``"superlu-cached"``
    SciPy's SuperLU at every call, with the COLAMD column order of the first matrix of a pattern
    reused (gathered into that order, ``NATURAL``, ``relax=3``, ``panel_size=4``, threshold
    partial pivoting ``diag_pivot_thresh=1``): the default until the refactorization.
``"superlu-colamd"``
    Plain SciPy ``splu`` with COLAMD at every call (no reuse), the reference.
``"umfpack"``
    scikit-umfpack (optional): symbolic analysis once per pattern, numeric factorization per call.

Why a refactorization (``python benchmarks/chain.py --compare-solvers``, Newton matrices of the
chain benchmark): these matrices have very little fill (N = 1000: 48,000 unknowns, 293,883
nonzeros, SuperLU's ``L + U`` 327,159 with its numerical zeros left out; the symbolic structure
under the kept pivots has 576,737 entries, about half of them zero for this planar motion), so
SuperLU's time goes into per-column and per-supernode bookkeeping, not arithmetic.  Measured in
one session on the 2-core machine at load average ~10 (so absolute times are 2-4x an idle
machine's; interleaved medians, factorization relative to COLAMD at every call)::

    backend                                  N = 10   N = 100   N = 1000   ms at N = 1000 (factor / solve)
    SuperLU, COLAMD at every call             1.00     1.00      1.00       213  / 20.6
    SuperLU, cached COLAMD ("superlu-cached") 0.65     0.43      0.53       113  / 22.3
    refactorization ("superlu")               0.21     0.02      0.14       29.5 / 1.03

(at a lighter load, N = 1000: SuperLU-cached 20-36 ms and 2.4-6 ms per solve, the refactorization
3.6-7 ms and 0.5-1.1 ms; N = 3000: 125 ms and 11 ms against 20-33 ms and 7 ms).  The first matrix
of a pattern costs a SuperLU factorization with COLAMD plus the analysis (N = 1000: ~42-68 ms +
17 ms).  Pivots age as the configuration moves away from the first matrix's: on the 15-link chain
at p = 3 over 1.5 s (300 factorizations) a threshold of 0.1 pivoted afresh 121 times, 1e-3 18
times (smallest accepted pivot ratio 1.2e-3, backward error of every solve <= 2.1e-16:
``tests/test_refactor_lu.py``).  Earlier measurements of the alternatives (one run, idle machine,
factorization relative to COLAMD at every call, N = 10 / 100 / 1000): SuperLU NATURAL at every
call 0.83 / 0.78 / 0.85; MMD(A^T+A) 1.74 / 1.94 / 1.65; MMD(A^T A) 1.91 / 2.02 / 1.86; UMFPACK with
cached symbolic analysis 1.55 / 1.16 / 0.97 (solves 2.2x faster than SuperLU's; scikit-umfpack
0.4.2 does not build against Debian's SuiteSparse 5 as shipped: optional); KLU (PyKLU 0.2.0)
1.44 / 8.57 / ~N^2 (KLU's BTF/AMD meets the zero diagonal of the constraint rows): not offered.
Full tables: ``benchmarks/README.md``, sections "Rigid chain" and "Global linear algebra".
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

Factor = Callable[[sp.spmatrix], Callable[[np.ndarray], np.ndarray]]


from flexmb.errors import SingularMatrixError  # noqa: E402  (re-exported: the backends raise it)
from flexmb.dynamics.solve.csc_pattern import as_csc, same_pattern, permuted_solve  # noqa: E402
from flexmb.dynamics.solve.dense_solve import small_first  # noqa: E402


class SuperLU:
    """SciPy SuperLU; with ``reuse_ordering`` the column ordering of the first matrix of a
    sparsity pattern is reused for later matrices with the same pattern.

    ``last_nnz`` is the number of nonzeros of ``L + U`` of the last factorization (computed on
    request: extracting ``L`` and ``U`` from SuperLU costs about 10 % of a factorization).
    """

    #: the small-system wrapper (dense_solve.SmallFirst) may call SuperLU's gstrf directly for it
    direct_gstrf = True

    def __init__(self, reuse_ordering: bool = True, relax: int = 3, panel_size: int = 4,
                 diag_pivot_thresh: float = 1.0) -> None:
        self.reuse_ordering = reuse_ordering
        self.relax = relax
        self.panel_size = panel_size
        self.diag_pivot_thresh = diag_pivot_thresh
        self._lu = None
        self._key: tuple | None = None  # (indptr, indices) of the cached pattern
        self._gather: np.ndarray | None = None
        self._q: np.ndarray | None = None
        self._pindptr = self._pindices = None
        self.n_orderings = 0

    @property
    def last_nnz(self) -> int:
        if self._lu is None:
            return 0
        return int(self._lu.L.nnz + self._lu.U.nnz)

    def adopt_ordering(self, q: np.ndarray) -> None:
        """Use the column ordering ``q`` (from a checkpoint) for the first pattern seen, instead of
        computing one: a resumed run then factors exactly as the original did."""
        self._pending_q = np.asarray(q, dtype=np.int64)

    def _first(self, A: sp.csc_matrix):
        lu = spla.splu(A, permc_spec="COLAMD", diag_pivot_thresh=self.diag_pivot_thresh,
                       options={"SymmetricMode": False})
        self.n_orderings += 1
        if self.reuse_ordering:
            self._adopt(A, np.argsort(lu.perm_c))  # factor A[:, q] with NATURAL ordering from now on
        return lu

    def _adopt(self, A: sp.csc_matrix, q: np.ndarray) -> None:
        n = A.shape[0]
        counts = np.diff(A.indptr)[q]
        pindptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=pindptr[1:])
        # gather map: for each permuted column, the positions of its entries in A.data
        starts = A.indptr[q]
        gather = (np.repeat(starts - pindptr[:-1], counts) + np.arange(pindptr[-1])).astype(np.int64)
        self._key = (A.indptr.copy(), A.indices.copy())
        self._q = q
        self._gather = gather
        self._pindptr = pindptr
        self._pindices = A.indices[gather].astype(np.int32)

    def __call__(self, A) -> Callable[[np.ndarray], np.ndarray]:
        A = as_csc(A)
        if self.reuse_ordering and self._key is None and getattr(self, "_pending_q", None) is not None:
            self._adopt(A, self._pending_q)
            self._pending_q = None
        try:
            if self.reuse_ordering and self._key is not None and same_pattern(A, *self._key):
                Ap = sp.csc_matrix((A.data[self._gather], self._pindices, self._pindptr), shape=A.shape)
                lu = spla.splu(Ap, permc_spec="NATURAL", relax=self.relax, panel_size=self.panel_size,
                               diag_pivot_thresh=self.diag_pivot_thresh)
                solve = permuted_solve(lu, self._q)
            else:
                lu = self._first(A)
                solve = lu.solve
        except RuntimeError as exc:  # "Factor is exactly singular"
            raise SingularMatrixError(str(exc)) from exc
        self._lu = lu
        return solve


#: row pivots of a pattern kept for a matrix that fails the ones in use (:meth:`Refactor.alternatives`)
RECENT_PIVOTS = 4
#: entries of L and U the kept alternatives may hold together (each entry ~16 bytes with the compiled
#: loop's packed copy: ~32 MB): a large model keeps fewer, or none
RECENT_ENTRIES = 2_000_000

#: trying MMD_ATA (SuperLU's ordering, factorization and our structure analysis) costs about this many
#: numeric refactorizations along COLAMD's structure (X3 p = 2, 378 unknowns, 5,808 nonzeros: 2.26 ms
#: against 0.16 ms for 147k multiply-adds)
ATA_TRY_COST = 15.0

#: Newton matrices factored per time element, for a run's expectation (X3 to 0.9 rad, p = 2, h = 1e-3:
#: 23 and 26 factorizations in 8 elements, "none" and "full")
FACTORIZATIONS_PER_ELEMENT = 3.0


def ata_repays(flops: float, nnz: int, ata_ratio: float, expected: float | None) -> bool:
    """Whether to try MMD_ATA after COLAMD's structure of ``flops`` multiply-adds per refactorization of a
    matrix of ``nnz`` nonzeros: COLAMD costs more than ``ata_ratio`` per nonzero, and (``expected``
    factorizations of the pattern, None: unknown) the saving expected over them, taken as COLAMD's excess
    over ``ata_ratio`` multiply-adds per nonzero, repays the try (:data:`ATA_TRY_COST` refactorizations).
    Deterministic: multiply-add counts, no clock (a run repeats its bits, a resumed run the same choice)."""
    excess = flops - ata_ratio * nnz
    if excess <= 0:
        return False
    return expected is None or expected * excess > ATA_TRY_COST * flops


def expect_factorizations(backend, n_elements: float) -> None:
    """Tell ``backend`` (a :class:`Refactor`, or the small-system wrapper around one) that the run has about
    ``n_elements`` time elements to factor (:data:`FACTORIZATIONS_PER_ELEMENT` each); other backends
    ignore it."""
    inner = getattr(backend, "inner", backend)
    if type(inner) is Refactor:
        inner.expected_factorizations = FACTORIZATIONS_PER_ELEMENT * float(n_elements)


class Refactor:
    """SuperLU for the ordering and the pivots, a compiled refactorization for every later matrix
    of the same pattern (:mod:`flexmb.dynamics.solve.refactor_lu`).

    The first matrix of a pattern is factored by SuperLU with COLAMD and threshold partial
    pivoting (``diag_pivot_thresh=1``: the largest entry of each column); its column and row
    permutations are kept, the structure of ``L`` and ``U`` under them is computed once, and
    later matrices are factored numerically along it.  A pivot smaller than ``pivot_tol`` times
    the largest entry below it (or zero) makes that factorization fall back to SuperLU, with the
    kept column order and fresh row pivots, which are then analysed and reused in turn
    (``n_pivot_changes`` counts these).  ``last_nnz``: entries of the structure of ``L`` and ``U``
    (both diagonals counted, as :class:`SuperLU` counts them).

    Row pivots met before are tried first (:meth:`alternatives`, the :data:`RECENT_PIVOTS` newest of
    the pattern within :data:`RECENT_ENTRIES`, ``n_pivot_reuses`` counts their use): a motion that comes
    back to a configuration meets the same small pivot again (the IFToMM pendulum's kept pivots fail at 4
    of its 320 elements, every swing; each fresh pivoting cost ~2 ms, a SuperLU factorization, the
    structure's analysis and the compiled loop's arrays built again, against ~0.1 ms for a refactorization
    along a kept structure).

    Column order (:meth:`_ordered`, once per pattern): COLAMD; when its structure costs more than
    ``ata_ratio`` (20) multiply-adds per nonzero of ``A`` per refactorization, SuperLU's minimum
    degree ordering of ``A^T A`` (``MMD_ATA``) is tried too and the structure with fewer
    multiply-adds is kept (``ordering`` says which), unless the run cannot repay the try
    (:attr:`expected_factorizations`, :func:`ata_repays`).  Measured on the chain's Newton matrices (task
    BIGN, ``benchmarks/README.md``): p = 1 chains 6 multiply-adds per nonzero with COLAMD (kept;
    MMD_ATA is no better and costs 2x more to compute at N = 1000); at p >= 2 COLAMD's fill grows
    (15-link chain p = 3: 114 per nonzero, 2.34 M, 95,414 entries of L + U; 200-link p = 3:
    60.8 M) and MMD(A^T A) needs 0.56 M / 59,264 (15-link, numeric refactorization 1.25 -> 0.44
    ms) and 8.0 M (200-link, 65 -> 11.5 ms).
    """

    def __init__(self, pivot_tol: float = 1e-3, relax: int = 3, panel_size: int = 4, ata_ratio: float = 20.0) -> None:
        self.pivot_tol = float(pivot_tol)
        self.ata_ratio = float(ata_ratio)
        self.relax = relax
        self.panel_size = panel_size
        #: how many factorizations the run expects (None: unknown, MMD_ATA is tried whenever COLAMD's
        #: structure exceeds ``ata_ratio``); set by the run (:func:`expect_factorizations`)
        self.expected_factorizations: float | None = None
        self._key: tuple | None = None
        self._s = None  # refactor_lu.Structure: column order, row pivots, structure of L and U
        self._src = (None, None)
        self._pending_q = None
        self.n_orderings = 0
        self.n_pivot_changes = 0
        self.n_pivot_reuses = 0
        #: the structures of this pattern in use before, the newest first (the one in use among them)
        self._recent: list = []
        #: the column ordering in use ("COLAMD" or "MMD_ATA"; None before the first matrix or when
        #: it came from a checkpoint)
        self.ordering = None

    @property
    def _q(self) -> np.ndarray | None:
        """What a checkpoint stores (``flexmb.dynamics.io.checkpoint`` saves ``solver._q``): the column
        order and the row pivots in use, concatenated (``2 n``), then those of :meth:`alternatives` (``2 n``
        each), so that a resumed run factors bit-identically to the original one."""
        if self._s is None:
            return None
        return np.concatenate([self._s.q, self._s.perm_r] + [a for r in self.alternatives() for a in (r.q, r.perm_r)])

    def adopt_ordering(self, q: np.ndarray) -> None:
        """Use the column order (``n``, an older checkpoint) or the column order and row pivots
        (``2 n``, then the alternatives' ``2 n`` each: :attr:`_q`) from a checkpoint for the first pattern
        seen."""
        self._pending_q = np.asarray(q, dtype=np.int64)

    def _pivot(self, A: sp.csc_matrix, q: np.ndarray | None) -> None:
        """Factor ``A`` with SuperLU (a new column order when ``q`` is None, :meth:`_ordered`; else
        the column order ``q``) and analyse the structure of its pivots (kept for pivots met before:
        :mod:`flexmb.dynamics.solve.pivot_memo`)."""
        from flexmb.dynamics.solve.pivot_memo import structure

        n = A.shape[0]
        if q is not None and q.size >= 2 * n and q.size % (2 * n) == 0:  # a checkpoint's pivots (:attr:`_q`)
            blocks = [structure(A.indptr, A.indices, q[k:k + n], q[k + n:k + 2 * n]) for k in range(0, q.size, 2 * n)]
            if all(s.ok for s in blocks):
                for s in blocks[:0:-1]:  # the alternatives, the oldest first
                    self._adopt(A, s)
                self._adopt(A, blocks[0])
                return
            q = q[:n]
        if q is None:
            self._adopt(A, self._ordered(A))
            return
        try:
            lu = spla.splu(A[:, q], permc_spec="NATURAL", relax=self.relax, panel_size=self.panel_size,
                           diag_pivot_thresh=1.0)
            q = q[np.argsort(lu.perm_c)]  # SuperLU postorders the elimination tree
        except RuntimeError as exc:  # "Factor is exactly singular"
            raise SingularMatrixError(str(exc)) from exc
        s = structure(A.indptr, A.indices, q, lu.perm_r)
        if not s.ok:
            raise SingularMatrixError("structurally singular matrix")
        self._adopt(A, s)

    def _ordered(self, A: sp.csc_matrix):
        """Column order and pivots for a new pattern: COLAMD, and also the minimum degree ordering of
        ``A^T A`` when COLAMD's refactorization would cost more than ``ata_ratio`` multiply-adds per
        nonzero of ``A``; the structure with fewer multiply-adds is kept (see the class docstring)."""
        from flexmb.dynamics.solve.pivot_memo import structure

        best = None
        for spec in ("COLAMD", "MMD_ATA"):
            if spec == "MMD_ATA" and not ata_repays(best.flops, A.nnz, self.ata_ratio, self.expected_factorizations):
                break
            try:
                # relax/panel_size only set SuperLU's supernode blocking (the same pivots: threshold 1,
                # the largest entry of each column): 14 % faster than its defaults at N = 3000
                lu = spla.splu(A, permc_spec=spec, diag_pivot_thresh=1.0, relax=self.relax, panel_size=self.panel_size,
                               options={"SymmetricMode": False})
            except RuntimeError as exc:  # "Factor is exactly singular"
                if best is None:
                    raise SingularMatrixError(str(exc)) from exc
                break
            s = structure(A.indptr, A.indices, np.argsort(lu.perm_c), lu.perm_r)
            s.ordering = spec
            if not s.ok:
                if best is None:
                    raise SingularMatrixError("structurally singular matrix")
                break
            if best is None or s.flops < best.flops:
                best = s
        self.n_orderings += 1  # patterns ordered (one or two orderings tried for each)
        self.ordering = best.ordering
        return best

    def _adopt(self, A: sp.csc_matrix, s) -> None:
        self._key = (A.indptr.copy(), A.indices.copy())
        # the index arrays themselves: the Newton matrices of a Pattern share them, so the pattern
        # test is an identity check instead of comparing ~10^6 indices per factorization
        self._src = (A.indptr, A.indices)
        self._s = s
        kept, entries = [s], 0
        for r in self._recent:
            if len(kept) == RECENT_PIVOTS or entries + r.nnz > RECENT_ENTRIES:
                break
            if not (np.array_equal(r.q, s.q) and np.array_equal(r.perm_r, s.perm_r)):
                kept.append(r)
                entries += r.nnz
        self._recent = kept

    @property
    def last_nnz(self) -> int:
        """Entries of ``L`` and ``U`` of the structure in use, as SuperLU counts them (``L`` with its unit
        diagonal, ``U`` with its diagonal); 0 before the first matrix."""
        return 0 if self._s is None else self._s.nnz + self._s.n

    def alternatives(self) -> list:
        """The structures of this pattern used before the one in use, the newest first (at most
        :data:`RECENT_PIVOTS` - 1): what a matrix failing the kept pivots' test tries before fresh pivots."""
        return [r for r in self._recent if r is not self._s]

    def use(self, s) -> None:
        """Take ``s``, one of :meth:`alternatives`, as the structure in use (its pivots passed the test on a
        matrix that the one in use failed), counted in ``n_pivot_reuses``."""
        self._s = s
        self.n_pivot_reuses += 1

    def analyse(self, A) -> sp.csc_matrix:
        """The column order and row pivots of ``A``'s pattern (SuperLU's factorization of ``A`` and the
        structure under them, :meth:`_pivot`) where this pattern is new, without the numeric factors
        of :meth:`__call__` (the compiled Newton loop factors the same matrix itself:
        :meth:`flexmb.dynamics.solve.fused.FusedEvaluator.newton`); ``A`` as CSC."""
        A = as_csc(A)
        if A.shape[0] == 0:
            return A
        known = self._key is not None and (
            (A.indptr is self._src[0] and A.indices is self._src[1]) or same_pattern(A, *self._key))
        if not known:
            q, self._pending_q = self._pending_q, None
            self._recent = []  # (a new pattern: the pivots of the old one do not apply)
            self._pivot(A, q)
        return A

    def __call__(self, A) -> Callable[[np.ndarray], np.ndarray]:
        A = self.analyse(A)
        if A.shape[0] == 0:
            return lambda b: np.zeros(0)
        f = self._s.factor(A.data, self.pivot_tol)
        if f is None:  # a pivot too small for the kept row order: the pivots met before, else pivot afresh
            for s in self.alternatives():
                f = s.factor(A.data, self.pivot_tol)
                if f is not None:
                    self.use(s)
                    return f
            self.repivot(A)
            f = self._s.factor(A.data, self.pivot_tol)
            if f is None:
                raise SingularMatrixError("singular matrix (no acceptable pivot after fresh pivoting)")
        return f

    def repivot(self, A) -> None:
        """Fresh row pivots for ``A`` (CSC, of the pattern in use), whose factorization along the kept ones
        met a pivot below ``pivot_tol``: SuperLU with the kept column order (:meth:`_pivot`), counted in
        ``n_pivot_changes``.  What :meth:`__call__` does on such a matrix, and what the compiled Newton
        loop asks for when its first matrix fails the same test
        (:func:`flexmb.dynamics.solve.compiled_loop.compiled_newton`)."""
        self.n_pivot_changes += 1
        self._pivot(as_csc(A), self._s.q)


class _SuperLUFunction:
    """Backward-compatible ``superlu(A) -> solve`` (COLAMD at every call) with ``last_nnz``."""

    def __init__(self) -> None:
        self._impl = SuperLU(reuse_ordering=False)

    @property
    def last_nnz(self) -> int:
        return self._impl.last_nnz

    @last_nnz.setter
    def last_nnz(self, value) -> None:  # resetting (``superlu.last_nnz = 0``) forgets the factors
        if not value:
            self._impl._lu = None

    def __call__(self, A):
        return self._impl(A)


#: stateless reference backend: SuperLU with COLAMD at every call
superlu = _SuperLUFunction()


class Umfpack:
    """scikit-umfpack: symbolic analysis (ordering) once per pattern, numeric factorization per call."""

    def __init__(self) -> None:
        try:
            import scikits.umfpack as um
        except ImportError as exc:
            raise ImportError("linear_solver='umfpack' needs scikit-umfpack (pip install scikit-umfpack; on Debian's "
                              "SuiteSparse 5 it also needs swig and a UMFPACK.pc); use the default 'superlu'") from exc
        from scikits.umfpack.umfpack import UmfpackWarning

        self._um = um
        self._warning = UmfpackWarning
        self._ctx = None
        self._key = None
        self.last_nnz = 0

    def __call__(self, A):
        um = self._um
        A = as_csc(A)
        if not A.data.dtype == np.float64:
            A = A.astype(np.float64)
        if A.indices.dtype != np.int32 or A.indptr.dtype != np.int32:
            A = sp.csc_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)
        if self._ctx is None or self._key is None or not same_pattern(A, *self._key):
            self._ctx = um.UmfpackContext("di")
            self._ctx.control[um.UMFPACK_PRL] = 0
            self._ctx.maxCond = np.inf  # the Newton matrix mixes units: its raw condition number is large
            self._ctx.symbolic(A)
            self._key = (A.indptr.copy(), A.indices.copy())
        ctx = self._ctx
        with warnings.catch_warnings():
            warnings.simplefilter("error", self._warning)
            try:
                ctx.numeric(A)
            except (RuntimeError, self._warning) as exc:  # singular matrix
                raise SingularMatrixError(f"UMFPACK: {exc}") from exc
        self.last_nnz = int(ctx.info[um.UMFPACK_LNZ] + ctx.info[um.UMFPACK_UNZ])

        def solve(b, A=A, ctx=ctx):
            return ctx.solve(um.UMFPACK_A, A, np.asarray(b, dtype=float), autoTranspose=True)

        return solve


def _umfpack_available() -> bool:
    try:
        import scikits.umfpack  # noqa: F401
    except ImportError:
        return False
    return True


#: name -> factory of a fresh backend instance
LINEAR_SOLVERS: dict[str, Callable[[], Factor]] = {
    "superlu": Refactor,
    "superlu-cached": SuperLU,
    "superlu-colamd": lambda: SuperLU(reuse_ordering=False),
    "umfpack": Umfpack,
}


def available_backends() -> dict[str, Factor]:
    """Fresh instances of every backend usable on this machine."""
    names = ["superlu", "superlu-cached", "superlu-colamd"] + (["umfpack"] if _umfpack_available() else [])
    return {n: LINEAR_SOLVERS[n]() for n in names}


def linear_solver(spec: str | Factor) -> Factor:
    """A fresh backend for ``spec`` (a name from :data:`LINEAR_SOLVERS`) or ``spec`` itself if callable."""
    if callable(spec):
        return spec
    try:
        make = LINEAR_SOLVERS[spec]
    except KeyError:
        raise ValueError(f"linear_solver={spec!r} is unknown; use one of {sorted(LINEAR_SOLVERS)} or a callable") from None
    if spec == "superlu":  # the default: dense LU for tiny systems (flexmb.dynamics.solve.dense_solve)
        return small_first(make())
    return make()
