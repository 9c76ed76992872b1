"""Investigations of statistical questions, run as ``python -m experiments.<name>``.

Where ``bench`` measures what things cost, each script here asks a question about the samplers
or the metrics (does a chain converge, from which start, which latent slows it, why a score
comes out as it does); the findings are written up in ``docs/`` (``experiments/README.md``
says where). Each script prints its table and writes ``experiments/results/<name>.json``
(atomically); ``--quick`` runs a small version and writes nothing.

The data generators (:func:`bench.sweep.text_data`) and the record of the machine
(:func:`bench.machine`) are shared with the benchmarks and stay there.
"""
from __future__ import annotations

from pathlib import Path

from bench import machine, write_json

__all__ = ["RESULTS", "machine", "write_results"]

RESULTS = Path(__file__).resolve().parent / "results"


def write_results(name, payload):
    """Write ``experiments/results/<name>.json`` atomically (temp file + rename)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    return write_json(RESULTS / f"{name}.json", payload)
