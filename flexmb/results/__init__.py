"""Results of a simulation: :class:`~.solution.Solution` (time histories, save/load, CSV and plots),
its views of one body or joint (:mod:`.views`), storage as one ``.npz`` file (:mod:`.store`), CSV
tables and plots (:mod:`.output`), results between the nodes (:mod:`.dense_output`), flexible-body
outputs (:mod:`.flexible_outputs`) and ParaView time series (:mod:`.paraview`)."""
