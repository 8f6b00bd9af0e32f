"""Exception hierarchy of flexmb: every error names the input, the value and the fix."""
from __future__ import annotations


class FlexmbError(Exception):
    """Base class of all flexmb errors."""


class ModelError(FlexmbError, ValueError):
    """Inconsistent or invalid model input (bodies, joints, forces, initial state)."""


class MeshImportError(FlexmbError, ValueError):
    """A mesh or FE-matrix file that cannot be read or is not usable (names file, element, set)."""


class ConvergenceError(FlexmbError, RuntimeError):
    """Newton did not converge; the message says where (time, element) and why (largest residual)."""

    def __init__(self, message: str, *, time: float | None = None, report: dict | None = None):
        super().__init__(message)
        self.time = time
        self.report = report or {}
        #: the results up to the last accepted node (a :class:`flexmb.Solution`), set by ``simulate``
        self.solution = None


class ConstraintViolationError(FlexmbError, RuntimeError):
    """A constraint the solver cannot vouch for drifted (e.g. an equation dropped as redundant);
    ``solution`` holds the results up to the node where it was detected."""

    def __init__(self, message: str, *, time: float | None = None):
        super().__init__(message)
        self.time = time
        self.solution = None


class SingularMatrixError(FlexmbError, RuntimeError):
    """A linear system is singular (dependent equations, a locked mechanism, a rank-deficient Newton matrix)."""


class SimulationInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`flexmb.simulate`; ``solution`` holds the results up to the last accepted node.
    A ``KeyboardInterrupt``, so code that handles Ctrl-C keeps working."""

    def __init__(self, message: str, solution=None):
        super().__init__(message)
        self.solution = solution


class SolutionFileError(FlexmbError, ValueError):
    """A results file that cannot be read: not a flexmb solution, damaged, truncated or modified."""
