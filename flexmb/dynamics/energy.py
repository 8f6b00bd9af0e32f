"""Energy-drift report of conservative models (meta ``energy_drift``, ``energy_trend``,
``energy_scale``; a WARNING above :data:`ENERGY_DRIFT_WARN`), see docs/energy-drift.md."""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.energy_audit import ROUNDOFF
from flexmb.dynamics.system import CompiledModel


log = logging.getLogger(__name__)


#: relative energy change of a conservative model above which simulate() logs a WARNING
ENERGY_DRIFT_WARN = 0.05


def is_conservative(cm: CompiledModel) -> bool:
    """True when the model's energy must be constant: gravity, undamped spring-dampers and joint
    springs only (no damping, no drives, no point forces or torques, which may depend on time or
    state and whose work ``potential_energy`` does not account for)."""
    springs = cm.forces.springs
    return (not cm.model.contacts and not cm.model.impulses and not cm.jnt_drives and not cm.forces.loads and not np.any(cm.jnt_c)
            and (springs is None or not np.any(springs.c)))


def energy_drift_report(cm: CompiledModel, t: NDArray, ke: NDArray, pe: NDArray, e_model: float = 0.0) -> dict:
    """Energy drift of a conservative model (``{}`` for other models).

    ``energy_drift = max_t |E(t) - E(t0)| / E_scale`` with ``E_scale = max(max_t KE, max_t PE -
    min_t PE)`` (the energy the motion exchanges), floored at the round-off of the energies,
    :data:`~flexmb.dynamics.energy_audit.ROUNDOFF` x the larger of ``e_model`` (the model's own energy
    ``F L``: masses, lengths, gravity, speeds, stiffnesses) and ``max |E|`` (a body welded at rest
    exchanges nothing: its 4e-16 J of round-off once read as a 100 % change), and ``energy_trend`` = (largest
    ``|E - E(t0)|`` over the last 10 % of the nodes minus that over the first 10 %) / ``E_scale``:
    a bounded error has a trend near 0, a secular drift a positive one.  A WARNING is logged when
    ``energy_drift`` exceeds :data:`ENERGY_DRIFT_WARN` (5 %).
    """
    if not is_conservative(cm) or t.size < 2:
        return {}
    E = ke + pe
    scale = max(float(ke.max()), float(np.ptp(pe)), ROUNDOFF * max(e_model, float(np.abs(E).max())), 1e-300)
    err = np.abs(E - E[0])
    n10 = max(1, t.size // 10)
    drift = float(err.max() / scale)
    trend = float((err[-n10:].max() - err[:n10].max()) / scale)
    if drift > ENERGY_DRIFT_WARN:
        k = int(np.argmax(err))
        log.warning(
            "the energy of this conservative model changed by %.3g %% of its scale (%.3g J of %.3g J, at t = %.6g s; "
            "trend first -> last 10 %% of the run: %+.3g %%): the time step is too coarse for this motion; use a "
            "smaller h or a higher order p%s", 100 * drift, err[k], scale, t[k], 100 * trend,
            "; a growing error (positive trend) is the constrained element's secular drift, which "
            "p=TimeElement.of_order(p, transport='symmetric') removes (docs/energy-drift.md)" if trend > 0 else "",
        )
    return {"energy_drift": drift, "energy_trend": trend, "energy_scale": scale}
