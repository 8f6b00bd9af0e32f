"""One time element, stage by stage: :mod:`.outcome` (what a solved element hands on), :mod:`.advance`
(predict -> solve -> end values, with the variants wrapping the solve and step halving), and the run's
state in one object (:mod:`.state`)."""
