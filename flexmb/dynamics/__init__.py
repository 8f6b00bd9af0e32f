"""The time-finite-element engine.  A run, stage by stage (the module that does each):

1. compile      :mod:`.system`: the immutable :class:`~flexmb.Model` into a frozen CompiledModel (arrays
                named by entity, read-only), the initial state; :mod:`.node.selection`: the kept
                constraint equations (a frozen Selection; the run drops the redundant ones);
                :mod:`.layout`: where every unknown of a time element lives (``lay.selection``), the
                Jacobian's sparsity pattern (built once); :mod:`.time_elements`: the time element.
2. predict      :mod:`.march.marching` (``predict``) and :mod:`.march.rotation_predictor`: the initial
                guess of an element's internal unknowns.
3. solve        :mod:`.solve.evaluation`: the element's residual and Jacobian through an evaluator
                chosen once per run (general: any body types; fused: rigid and modal bodies in
                one compiled call, :mod:`.solve.fused`), both with the one compiled law of each body
                type (:mod:`.bodies`) and element between them (:mod:`.elements`: attachments,
                joints, forces); :mod:`.solve.newton`: Newton on the internal unknowns; linear
                solvers :mod:`.solve.linsolve`.  Before it, the start-node check of
                :mod:`.variants.singular_node` (``solve``).
4. end values   :mod:`.march.marching` (``end_values``): the element's end values, the next one's start
                (rigid and modal bodies on joints: with the node's values in two compiled calls,
                :mod:`.node.stage`, :mod:`.node.stage_modal`).
5. end check    :mod:`.variants.singular_node` (``check_end``): an end node on a singular configuration
                of the loops may replace the solve; its self-stresses stay on the node.
6. root checks  :mod:`.variants.root_checks` (``refusal``): a root that is not the motion is refused
                (a :class:`~.step.outcome.Refusal`) and the step halved.
7. node         :mod:`.node.constraints`, :mod:`.node.projection`: the node velocities projected on
                the velocity constraints of the run's selection; :mod:`.node.redundancy`: dependent
                loop equations, :mod:`.node.monitor`: the run's watch over their choice (a new
                Selection, adopted by ``Run.select``); :mod:`.node.reactions`: joint reactions at the nodes.
8. record       :mod:`.io.recorder` (results), :mod:`.energy_audit` (every element's energy
                balance), :mod:`.modal_range` (modal bodies beyond their range),
                :mod:`.io.checkpoint` (resumable state).

One step reads as these stages: :meth:`.simulate.Run.step` -> :meth:`~.simulate.Run.solve_element`
(:func:`.step.advance.advance`: predict -> :func:`.step.advance.solve_element` (solve -> end values ->
end check) -> root checks, halving on failure; an :class:`~.step.outcome.ElementOutcome`) ->
:meth:`~.simulate.Run.commit` (record -> node -> scales -> dropped equations).  Variants of the step
wrap the solve and return the same ElementOutcome: :mod:`.variants` (singular nodes, symmetric
projection, which re-runs the solve stage from its own start nodes, error-controlled steps, root
checks).  A warm element of a rigid model takes stages 2-4 (predict, solve, end values) in one compiled
call of the same kernels (:mod:`.step.compiled_element`, a backend chosen when the run starts; where it
declines, the stages one by one).  The step's replaceable parts (predict, rotations, Newton, root checks) are
:class:`.step.advance.Stages`, the contract through which tests steer the solver (with
``Run.start(..., selection=, monitor=)`` for the constraint choice; the element system counts its Newton
calls).  The driver is :mod:`.simulate` (``simulate``, ``resume``); everything a run changes is one
:class:`.step.state.RunState` (``run.state``), which :mod:`.io.checkpoint` saves and restores whole.
Data derived from the compiled model are kept in its named :class:`~.system.ModelCache` (keyed by the
selection where they depend on it).  Set-up results that are deterministic functions of arrays and numbers,
which every run of a rebuilt model would compute again, are kept across runs by a digest of those inputs
(:mod:`flexmb.memo`): the recorded Jacobian pattern (:func:`.solve.evaluation.recorded_pattern`), the LU
structure under the first matrix's pivots (:mod:`.solve.pivot_memo`), the check of a body's strain-energy
factors, a modal group's kernel data (:func:`.bodies.modal_matrices.group_data`).
"""
