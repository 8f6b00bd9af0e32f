"""The time-finite-element engine.  A run, stage by stage (the module that does each):

1. compile      :mod:`.system`: the immutable :class:`~flexmb.Model` into arrays named by entity, the
                initial state; :mod:`.layout`: where every unknown of a time element lives, the
                Jacobian's sparsity pattern (built once); :mod:`.time_elements`: the time element.
2. predict      :mod:`.march.marching` (``predict``) and :mod:`.march.rotation_predictor`: the initial
                guess of an element's internal unknowns.
3. solve        :mod:`.solve.evaluation`: the element's residual and Jacobian through an evaluator
                chosen once per run (general: any body types; fused: rigid-only models in one
                compiled call, :mod:`.solve.fused`), both with the one compiled law of each body
                type (:mod:`.bodies`) and element between them (:mod:`.elements`: attachments,
                joints, forces); :mod:`.solve.newton`: Newton on the internal unknowns; linear
                solvers :mod:`.solve.linsolve`.
4. end values   :mod:`.march.marching` (``end_values``): the element's end values, the next one's start.
5. node         :mod:`.node.constraints`, :mod:`.node.projection`: the node velocities projected on
                the velocity constraints; :mod:`.node.redundancy`: dependent loop equations;
                :mod:`.node.reactions`: joint reactions at the nodes.
6. record       :mod:`.io.recorder` (results), :mod:`.energy_audit` (every element's energy
                balance), :mod:`.modal_range` (modal bodies beyond their range),
                :mod:`.io.checkpoint` (resumable state).

Variants of the step wrap the solve: :mod:`.variants` (singular nodes, symmetric projection,
error-controlled steps, root checks).  The driver is :mod:`.simulate` (``simulate``, ``resume``).
"""
