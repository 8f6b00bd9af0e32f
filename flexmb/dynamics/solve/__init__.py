"""Solving one time element: Newton-Raphson (:mod:`.newton`; rank-deficient matrices
:mod:`.rank_deficient`), Newton's scales (:mod:`.scales`), and the linear solvers of the Newton
matrix (:mod:`.linsolve`; compiled refactorization :mod:`.refactor_lu`, small dense systems
:mod:`.dense_solve`, shared CSC helpers :mod:`.csc_pattern`)."""
