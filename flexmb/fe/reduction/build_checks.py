"""Checks of the arguments of :func:`flexmb.fe.reduction.body_data.build_flexible_body`: every
argument validated where it enters, and options that contradict each other refused (an option that
cannot take effect is an error, never dropped without a word).

Each check raises :class:`~flexmb.errors.ModelError` naming the argument, the value and the fix.
"""
from __future__ import annotations

from typing import Any

from flexmb.errors import ModelError

__all__ = ["QUARTIC_AUTO", "check_option_pairs", "quartic_mode"]

OWNER = "build_flexible_body"

#: default of ``quartic``: the relaxed quartic term when ``geometric``, none without it
QUARTIC_AUTO = "auto"


def quartic_mode(quartic: Any, geometric: bool) -> str | None:
    """``quartic`` as "relaxed", "raw" or None (skipped).

    ``"auto"`` (the default) is "relaxed" with ``geometric`` and None without; an explicit quartic
    term (True, "relaxed", "raw") with ``geometric=False`` is a conflict: the quartic energy
    ``1/8 H q^4`` completes the cubic ``1/2 G q^3`` of the geometric stiffness, and the relaxed
    ``H`` comes with a correction of ``G``.
    """
    if isinstance(quartic, str) and quartic == QUARTIC_AUTO:
        return "relaxed" if geometric else None
    if quartic is True or (isinstance(quartic, str) and quartic in ("relaxed", "raw")):
        mode = "raw" if quartic == "raw" else "relaxed"
        if not geometric:
            raise ModelError(
                f"{OWNER}: quartic={quartic!r} asks for the quartic strain energy, but geometric=False skips the "
                "geometric stiffness G it completes (the cubic term; the relaxed quartic also corrects G). "
                "Pass geometric=True to keep both, or quartic=False for a body without either."
            )
        return mode
    if quartic is False or quartic is None:
        return None
    raise ModelError(
        f"{OWNER}: `quartic` = {quartic!r}; use True or 'relaxed' (quartic energy relaxed over the FE "
        "displacements outside the basis, the default with geometric=True), 'raw' (energy of the reduced field "
        "alone) or False."
    )


def check_option_pairs(*, interfaces: Any, method: str, reference: Any, interface_kind: str,
                       static_modes: Any) -> None:
    """Refuse options that the chosen reduction cannot use.

    * a named ``reference`` interface with free-free modes (the floating frame is then the mean
      axes: only ``reference="first"`` (the default) or None fit);
    * ``static_modes`` without Craig-Bampton (attachment modes need interface frames);
    * ``interface_kind`` other than the default "rigid" without interfaces (nothing to couple);
    * ``method="craig-bampton"`` without interfaces.
    """
    craig_bampton = bool(interfaces) and method != "free-free"
    if method == "craig-bampton" and not interfaces:
        raise ModelError(f"{OWNER}: method='craig-bampton' needs `interfaces` (node sets of the joints); pass "
                         "interfaces=[...] or method='free-free'.")
    if not craig_bampton and reference not in ("first", None):
        why = "method='free-free'" if interfaces else "no `interfaces`"
        raise ModelError(
            f"{OWNER}: reference={reference!r} with {why}: free-free modes have a mean-axis floating frame, "
            "not a reference interface. Use method='craig-bampton' (with the interfaces) to attach the frame to "
            f"{reference!r}, or drop `reference`."
        )
    if static_modes is not None and not craig_bampton:
        raise ModelError(f"{OWNER}: `static_modes` (attachment modes) need Craig-Bampton interfaces; pass "
                         "`interfaces` (and not method='free-free'), or drop static_modes.")
    if not interfaces and interface_kind != "rigid":
        raise ModelError(f"{OWNER}: interface_kind={interface_kind!r} without `interfaces`: there is no interface "
                         "to couple; pass interfaces=[...] or drop interface_kind.")
