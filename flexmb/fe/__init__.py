"""Finite-element side: FE model input (:mod:`.mesh`: mesh values, file readers, checks, structured
meshes), the element library and its vectorized assembly (:mod:`.elements`), modal reduction into
flexible-body data (:mod:`.reduction`), and sparse SPD factorizations (:mod:`.spd_solve`). Nothing
here imports :mod:`flexmb.dynamics`."""
