"""Finite-element input side: meshes and readers (mesh), elements, assembly, reduction, body data.

Importing :mod:`flexmb.fe.mesh` first fixes the import order of its reader and check modules.
"""
from flexmb.fe import mesh as _mesh  # noqa: F401
