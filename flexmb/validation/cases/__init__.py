"""Validation cases: one module per published benchmark (see :mod:`flexmb.validation`)."""
