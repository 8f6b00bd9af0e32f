"""Sparse LU refactorization with the pivots of a previous factorization (compiled, numba).

The Newton matrices of one model share one sparsity pattern, and from one Newton iteration (or
time element) to the next their values change little.  SuperLU (SciPy) then spends most of a
factorization on per-column bookkeeping, not on arithmetic: on the N-link chain SuperLU's factors
have only ~11 % more nonzeros than the matrix (327,159 against 293,883 at N = 1000), yet one
factorization took 20 ms for 48,000 unknowns on an idle machine (this module: ~3 ms CPU).  Like KLU's ``refactor``, this module factors a new
matrix of the same pattern with the row and column permutations of an earlier factorization,
along a symbolic structure computed once:

* :class:`Structure` (once per pattern and pivot sequence, :func:`_symbolic`): the matrix ``B = P_r A P_c`` in CSC
  order as a gather map into ``A.data``, and the structure of ``L`` and ``U`` of ``B`` without
  pivoting (Gilbert-Peierls depth-first reach on the graph of ``L``, column by column; ``U``'s
  rows of each column in topological order, so the numeric phase needs no search);
* :func:`refactor_numeric` (every factorization): left-looking numeric LU on that structure, ``O(flops)``,
  with a pivot check: the pivot of column ``j`` must be at least ``pivot_tol`` times the largest
  entry below it (threshold partial pivoting's test).  When it is not, or the pivot is zero or
  not finite, the caller factors afresh with pivoting (SuperLU) and analyses the new pivots, so
  reusing pivots never costs accuracy beyond threshold pivoting's bound;
* :func:`refactor_solve`: ``x = P_c U^-1 L^-1 P_r b`` by column-oriented triangular solves.

Arrays: ``n`` unknowns; ``Lp (n + 1,)``, ``Li``, ``Lx`` strictly lower part of ``L`` (unit
diagonal) in CSC; ``Up (n + 1,)``, ``Ui``, ``Ux`` strictly upper part of ``U`` in CSC (rows of a
column in topological order), ``Ud (n,)`` the diagonal of ``U``.  Pointers int64, row indices
int32 (half the memory traffic of the numeric and solve loops).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import as_unsigned, jit_kernel


@jit_kernel
def _push(a, n, k):
    """``a[n] = k`` in a growing int32 array (doubled when full); returns the array."""
    if n >= a.size:
        tmp = np.empty(2 * a.size, dtype=np.int32)
        tmp[:n] = a[:n]
        a = tmp
    a[n] = k
    return a


@jit_kernel
def _symbolic(n, Bp, Bi, prune=True):
    """Structure of ``L`` and ``U`` of ``B`` (CSC ``Bp (n + 1,)``, ``Bi``) with diagonal pivots.

    With ``prune``, symmetric pruning (Eisenstat & Liu, as in KLU): once ``U(k, j)`` and ``L(j, k)``
    are both in the structure, the rows of ``L(:, k)`` below ``j`` are reachable through ``j`` and
    later depth-first searches skip them (the rows of such a column are partitioned, those ``<= j``
    first; the reach, hence the structure, is the same, and a search's order on the pruned graph is a
    topological order of the whole one).

    Returns ``Lp, Li, Up, Ui, ok``: ``ok`` is False when a column's reach misses its diagonal
    (structurally singular with these pivots)."""
    cap = max(2 * Bi.size, n + 1)
    Lp = np.zeros(n + 1, dtype=np.int64)
    Up = np.zeros(n + 1, dtype=np.int64)
    Li = np.empty(cap, dtype=np.int32)
    Ui = np.empty(cap, dtype=np.int32)
    mark = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    pstack = np.empty(n, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    Lpend = np.full(n, -1, dtype=np.int64)  # end of the searched part of L(:, k), -1: unpruned
    nl = np.int64(0)  # typed counters (a literal 0 would compile _push twice)
    nu = np.int64(0)
    for j in range(n):
        top = n
        for p in range(Bp[j], Bp[j + 1]):
            i0 = Bi[p]
            if mark[i0] == j:
                continue
            head = 0
            stack[0] = i0
            while head >= 0:
                k = stack[head]
                if mark[k] != j:
                    mark[k] = j
                    pstack[head] = Lp[k] if k < j else 0
                done = True
                if k < j:
                    end = Lpend[k] if Lpend[k] >= 0 else Lp[k + 1]
                    for pp in range(pstack[head], end):
                        c = Li[pp]
                        if mark[c] != j:
                            pstack[head] = pp + 1
                            head += 1
                            stack[head] = c
                            done = False
                            break
                if done:
                    head -= 1
                    top -= 1
                    out[top] = k
        # out[top:n]: the reach of column j in topological order
        diag = False
        for t in range(top, n):
            k = out[t]
            if k < j:
                Ui = _push(Ui, nu, k)
                nu += 1
            elif k > j:
                Li = _push(Li, nl, k)
                nl += 1
            else:
                diag = True
        Lp[j + 1] = nl
        Up[j + 1] = nu
        if not diag:
            return Lp, Li[:nl].copy(), Up, Ui[:nu].copy(), False
        if prune:
            for pu in range(Up[j], Up[j + 1]):
                k = Ui[pu]
                if Lpend[k] >= 0:
                    continue
                a = Lp[k]
                b = Lp[k + 1]
                found = False
                for q in range(a, b):
                    if Li[q] == j:
                        found = True
                        break
                if found:
                    lo = a
                    hi = b - 1
                    while lo <= hi:
                        if Li[lo] <= j:
                            lo += 1
                        else:
                            t = Li[lo]
                            Li[lo] = Li[hi]
                            Li[hi] = t
                            hi -= 1
                    Lpend[k] = lo
    return Lp, Li[:nl].copy(), Up, Ui[:nu].copy(), True


@jit_kernel
def refactor_numeric(n, Bp, Brow, gather, data, Lp, Li, Lx, Up, Ui, Ux, Ud, pivot_tol):
    """Numeric LU of ``B`` (values ``data[gather]``, rows ``Brow``) into ``Lx, Ux, Ud``.

    Returns ``(bad, ratio)``: ``bad`` is -1, or the first column whose pivot is zero, not finite
    or smaller than ``pivot_tol`` times the largest entry below it (the factors are then
    incomplete); ``ratio`` is the smallest ``|pivot| / max |entry below|`` met (1 without entries
    below)."""
    # (the row indices as unsigned: no negative-index guards in the loops, kernels.as_unsigned)
    Brow, gather, Li, Ui = as_unsigned(Brow), as_unsigned(gather), as_unsigned(Li), as_unsigned(Ui)
    x = np.zeros(n)
    worst = 1.0
    for j in range(n):
        for p in range(Bp[j], Bp[j + 1]):
            x[Brow[p]] = data[gather[p]]
        for pp in range(Up[j], Up[j + 1]):
            k = Ui[pp]
            xk = x[k]
            Ux[pp] = xk
            x[k] = 0.0
            if xk != 0.0:
                for q in range(Lp[k], Lp[k + 1]):
                    x[Li[q]] -= Lx[q] * xk
        piv = x[j]
        x[j] = 0.0
        # one pass over the entries below the pivot: scale them and find the largest (if the
        # pivot fails the test, the factors are discarded anyway)
        inv = 1.0 / piv if piv != 0.0 else 0.0
        big = 0.0
        for q in range(Lp[j], Lp[j + 1]):
            i = Li[q]
            a = x[i]
            x[i] = 0.0
            Lx[q] = a * inv
            a = abs(a)
            if a > big:
                big = a
        if not (abs(piv) > 0.0) or not np.isfinite(piv) or abs(piv) < pivot_tol * big or not np.isfinite(big):
            return j, 0.0
        if abs(piv) < worst * big:
            worst = abs(piv) / big
        Ud[j] = piv
    return -1, worst


@jit_kernel
def refactor_solve(n, perm_r, q, Lp, Li, Lx, Up, Ui, Ux, Ud, b, out):
    """``out[q] = U^-1 L^-1 (b permuted by perm_r)``: ``out = A^-1 b``."""
    perm_r, q, Li, Ui = as_unsigned(perm_r), as_unsigned(q), as_unsigned(Li), as_unsigned(Ui)  # (as refactor_numeric)
    y = np.empty(n)
    for i in range(n):
        y[perm_r[i]] = b[i]
    for j in range(n):
        yj = y[j]
        if yj != 0.0:
            for p in range(Lp[j], Lp[j + 1]):
                y[Li[p]] -= Lx[p] * yj
    for j in range(n - 1, -1, -1):
        yj = y[j] / Ud[j]
        y[j] = yj
        if yj != 0.0:
            for p in range(Up[j], Up[j + 1]):
                y[Ui[p]] -= Ux[p] * yj
    for j in range(n):
        out[q[j]] = y[j]


class Structure:
    """Symbolic LU of ``B = P_r A P_c`` for one sparsity pattern of ``A`` and one pivot sequence.

    Parameters
    ----------
    indptr, indices : arrays
        CSC pattern of ``A`` (``n x n``, canonical: sorted, no duplicates).
    q : array of int, shape (n,)
        Column order: column ``j`` of ``B`` is column ``q[j]`` of ``A``.
    perm_r : array of int, shape (n,)
        Row permutation: row ``i`` of ``A`` is row ``perm_r[i]`` of ``B`` (SciPy's ``perm_r``).
    """

    def __init__(self, indptr, indices, q, perm_r) -> None:
        n = indptr.size - 1
        self.n = n
        self.q = np.ascontiguousarray(q, dtype=np.int64)
        self.perm_r = np.ascontiguousarray(perm_r, dtype=np.int64)
        indptr = np.asarray(indptr, dtype=np.int64)
        counts = np.diff(indptr)[self.q]
        Bp = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=Bp[1:])
        starts = indptr[self.q]
        gather = np.repeat(starts - Bp[:-1], counts) + np.arange(Bp[-1], dtype=np.int64)
        self.Bp = Bp
        self.Brow = self.perm_r[np.asarray(indices, dtype=np.int64)[gather]].astype(np.int32)
        self.gather = gather.astype(np.int32)
        Lp, Li, Up, Ui, ok = _symbolic(n, Bp, self.Brow)
        #: False when the pivots leave a structurally zero diagonal (cannot happen for the pivots
        #: of a successful factorization)
        self.ok = bool(ok)
        self.Lp, self.Li, self.Up, self.Ui = Lp, Li, Up, Ui
        self.nnz = int(Li.size + Ui.size + n)
        #: multiply-adds of one numeric factorization (each U entry (k, j) updates column j by
        #: column k of L): the cost that the column order decides
        self.flops = int(np.diff(Lp)[Ui].sum()) if Ui.size else 0
        #: smallest |pivot| / max |entry below| of the last numeric factorization
        self.last_ratio = 1.0

    def factor(self, data: np.ndarray, pivot_tol: float) -> "Factors | None":
        """Numeric factors of the matrix with values ``data`` (``A.data``), or None when a pivot
        fails the threshold test (see :func:`refactor_numeric`)."""
        Lx = np.empty(self.Li.size)
        Ux = np.empty(self.Ui.size)
        Ud = np.empty(self.n)
        bad, self.last_ratio = refactor_numeric(self.n, self.Bp, self.Brow, self.gather, np.ascontiguousarray(data, dtype=float),
                       self.Lp, self.Li, Lx, self.Up, self.Ui, Ux, Ud, float(pivot_tol))
        if bad >= 0:
            return None
        return Factors(self, Lx, Ux, Ud)


class Factors:
    """Numeric factors; calling it solves ``A x = b`` (``b`` shape ``(n,)`` or ``(n, k)``)."""

    __slots__ = ("s", "Lx", "Ux", "Ud")

    def __init__(self, s: Structure, Lx, Ux, Ud) -> None:
        self.s, self.Lx, self.Ux, self.Ud = s, Lx, Ux, Ud

    def __call__(self, b) -> np.ndarray:
        b = np.asarray(b, dtype=float)
        if b.ndim == 2:
            return np.column_stack([self(b[:, k]) for k in range(b.shape[1])]) if b.shape[1] else b.copy()
        s = self.s
        out = np.empty(s.n)
        refactor_solve(s.n, s.perm_r, s.q, s.Lp, s.Li, self.Lx, s.Up, s.Ui, self.Ux, self.Ud, np.ascontiguousarray(b), out)
        return out
