"""Work at a time node: velocity-level constraints and the node projection (:mod:`.constraints`,
:mod:`.projection`), joint reactions recovered from the impulses (:mod:`.reactions`), the kept
constraint equations (:mod:`.selection`), redundant constraint equations of closed loops
(:mod:`.redundancy`), the run's watch over their choice (:mod:`.monitor`) and the reactions independent
of which of them were dropped (:mod:`.least_norm`)."""
