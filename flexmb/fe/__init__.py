"""Finite-element input side: mesh values (mesh), reading files (readers and the format parsers),
elements, assembly, reduction, body data. Nothing here imports :mod:`flexmb.dynamics`."""
