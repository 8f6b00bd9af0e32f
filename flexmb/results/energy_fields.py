"""The energy-audit fields of a :class:`~flexmb.Solution`: the work of drives, loads and dampers and
the energy balance, read from its ``extra`` arrays ``work/<category>`` (written by
:mod:`flexmb.dynamics.energy_audit`; docs/theory.md section 10)."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb.results.views import _frozen  # the read-only copy every Solution array gets


class EnergyFields:
    """Mixin of :class:`~flexmb.Solution` (needs ``extra``, ``nt``, ``total_energy``)."""

    def _work(self, category: str) -> NDArray[np.float64]:
        w = self.extra.get(f"work/{category}")
        return _frozen(np.zeros(self.nt)) if w is None else w

    @property
    def work_drives(self) -> NDArray[np.float64]:
        """Work done on the model by the drives since ``t[0]``: the power of their reactions on the
        prescribed motion, integrated with each time element's Gauss rule, shape (nt,) [J]."""
        return self._work("drives")

    @property
    def work_loads(self) -> NDArray[np.float64]:
        """Work of the point forces and torques (constant, ``f(t)``, state callbacks), (nt,) [J]."""
        return self._work("loads")

    @property
    def work_damping(self) -> NDArray[np.float64]:
        """Work of the joint dampers, the spring-dampers' damping and modal damping (<= 0), (nt,) [J]."""
        return self._work("damping")

    @property
    def work(self) -> NDArray[np.float64]:
        """``work_drives + work_loads + work_damping``, (nt,) [J] (gravity, springs and elastic energy
        are in ``potential_energy``)."""
        return _frozen(self.work_drives + self.work_loads + self.work_damping)

    @property
    def energy_balance(self) -> NDArray[np.float64]:
        """``total_energy - total_energy[0] - work``, (nt,) [J]: zero for the exact motion, ``O(h^2)`` (``p <= 2``), ``O(h^4)`` (``p = 3``)
        from the time discretization; ``meta["energy_balance"]`` is its largest value over the energy scale."""
        E = self.total_energy
        return _frozen(E - (E[0] if E.size else 0.0) - self.work)
