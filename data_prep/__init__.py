"""Corpora -> count matrices for the case studies (Enron, or your own corpus).

Main entry points: :func:`prepare_topics`, :func:`prepare_network` (also on the command
line: ``python -m data_prep.corpus topics|network ...``) and :func:`load_counts`.
"""
import importlib

_EXPORTS = {"prepare_topics": "data_prep.corpus", "prepare_network": "data_prep.corpus",
            "TOPIC_DEFAULTS": "data_prep.corpus", "NETWORK_DEFAULTS": "data_prep.corpus",
            "load_counts": "lpp.formats.counts", "CountData": "lpp.formats.counts"}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    # imported lazily so that `python -m data_prep.<module>` does not import the module twice
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'data_prep' has no attribute {name!r}")
