"""Variants of the time step, each wrapping the element solve: singular start and end nodes
(:mod:`.singular_node`), the symmetric projection (:mod:`.symmetric_projection`), error-controlled
steps (:mod:`.step_control`), roots that are not the motion (:mod:`.root_checks`)."""
