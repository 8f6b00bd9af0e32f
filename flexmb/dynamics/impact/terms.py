"""The impacts' work terms in the energy audit (:mod:`flexmb.dynamics.energy_audit`): their labels and
categories, from the model alone (no import of the impact solve)."""
from __future__ import annotations


def impact_terms(cm) -> tuple[list, list]:
    """Work-term labels and categories (index in ``energy_audit.CATEGORIES``) of the model's impacts:
    the contacts' loss (damping) and the prescribed impulses' work (loads)."""
    labels, cat = [], []
    if cm.model.contacts:
        labels.append("contact impacts")
        cat.append(2)
    if cm.model.impulses:
        labels.append("prescribed impulses")
        cat.append(1)
    return labels, cat
