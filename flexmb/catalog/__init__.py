"""Standard models of the demo, the examples and the validation cases: rigid (:mod:`.rigid`) and the
flexible-body data of the flexible cases (:mod:`.flexible`)."""
