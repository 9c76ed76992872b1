"""Declared capabilities of plug-ins, and when a subclass loses them.

A model or privacy step may declare ``capabilities`` — promises about how some of its methods
behave, which a fused engine (:mod:`lpp.inference.engines`) relies on instead of calling them. A
promise covers named methods; a subclass that overrides one of them has changed what was
promised, so it loses that capability unless it declares ``capabilities`` again in its own body.
"""
from __future__ import annotations


def lapse_overridden(cls, vouched: dict[str, tuple[str, ...]]) -> None:
    """Drop from ``cls.capabilities`` each capability whose methods ``cls`` overrides, unless
    ``cls`` declares ``capabilities`` itself. Call it from ``__init_subclass__``."""
    if "capabilities" in cls.__dict__:
        return
    cls.capabilities = frozenset(
        cap for cap in cls.capabilities
        if not any(name in cls.__dict__ for name in vouched.get(cap, ())))
