"""What a run writes: the output recorder (:mod:`.recorder`) and checkpoints (:mod:`.checkpoint`)."""
