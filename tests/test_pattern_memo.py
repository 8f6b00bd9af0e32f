"""The Jacobian pattern of a model of the same structure as one run before (flexmb.dynamics.solve.evaluation,
``recorded_pattern``): every run compiles its model afresh and records the same indices, and gets a new
pattern object over the arrays kept for them, with the same matrices bit for bit; one run's later changes
of its pattern (dropped structural zeros) leave the other's alone."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.solve.evaluation import ElementSystem
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import time_element
from test_body_contract import _chain


def test_a_model_of_the_same_structure_reuses_the_recorded_pattern():
    te = time_element(2)
    out = []
    for _ in range(2):
        cm = compile_model(_chain(4))  # a new model and compiled model each time, as every run
        st, _w = initial_state(cm)
        system = ElementSystem(cm, te)
        U = np.random.default_rng(5).standard_normal(system.lay.size)
        F, J = system.evaluate(U, st, 1e-2)
        out.append((system, F, J))
    (s1, F1, J1), (s2, F2, J2) = out
    assert s2.pattern is not s1.pattern and s2.pattern.map is s1.pattern.map
    assert np.array_equal(F1, F2) and np.array_equal(J1.indptr, J2.indptr) and np.array_equal(J1.indices, J2.indices)
    assert np.array_equal(J1.data, J2.data)
    nnz = s2.pattern.nnz
    keep = s1.pattern.keep.copy()
    keep[np.flatnonzero(keep)[0]] = False
    s1.pattern.keep_only(keep)
    assert s1.pattern.nnz == nnz - 1 and s2.pattern.nnz == nnz
