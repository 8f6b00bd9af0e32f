"""Central-difference check of the analytic Jacobian of one time element (shared by the joint,
body-contract and flexible-body tests)."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.march.marching import predict as _predict
from flexmb.dynamics.simulate import ElementSystem
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.time_elements import time_element


def fd_check(model, p, h=0.02, seed=0, *, eps=1e-6, acc_noise=0.1, q_noise=0.0, evaluator="auto", expect=None):
    """Largest relative difference ``|J - J_fd| / (1 + |J_fd|)`` between the analytic and the
    central-difference Jacobian at a random state near the predictor (random internal unknowns and
    start multipliers; ``acc_noise``: random accumulated joint rotations; ``q_noise``: random start
    modal coordinates of flexible bodies), and where it occurs (equation / unknown).  ``evaluator``:
    the element evaluator (``"auto"``: the fused one for rigid-only models, ``"general"``); ``expect``:
    the name the evaluator must have (``"fused"`` or ``"general"``; checked)."""
    cm = compile_model(model)
    st, w0 = initial_state(cm)
    te = time_element(p)
    system = ElementSystem(cm, te, evaluator=evaluator)
    if expect is not None:
        assert system.evaluator.name == expect, system.evaluator.name
    lay = system.lay
    rng = np.random.default_rng(seed)
    U = _predict(cm, lay, te, st, h, w0, None) + 0.05 * rng.standard_normal(lay.size)
    st.lam[:] = 0.3 * rng.standard_normal(st.lam.shape)
    if acc_noise:
        st.acc[:] += acc_noise * rng.standard_normal(st.acc.shape)
    if q_noise and "flex_q" in st.extra:
        st.extra["flex_q"] = st.extra["flex_q"] + q_noise * rng.standard_normal(st.extra["flex_q"].shape)
    _, J = system.evaluate(U, st, h)
    J = J.toarray()
    # the differenced residuals are residual-only evaluations: the same residual bit for bit
    # (ElementSystem.evaluate; tests/test_lean_eval.py) without assembling a Jacobian at each of the 2n states
    Jfd = np.zeros_like(J)
    for k in range(lay.size):
        e = np.zeros(lay.size)
        e[k] = eps
        Jfd[:, k] = (system.residual(U + e, st, h) - system.residual(U - e, st, h)) / (2 * eps)
    err = np.abs(J - Jfd) / (1.0 + np.abs(Jfd))
    worst = np.unravel_index(np.argmax(err), err.shape)
    return err.max(), f"{system.describe(worst[0])} / {system.describe(worst[1])}"
