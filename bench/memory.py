"""What this process holds in memory, as Linux reports it in ``/proc/self/status``.

The benchmarks that measure memory read it here: ``VmRSS`` (resident now) and ``VmHWM`` (the
peak resident set, which writing ``5`` to ``/proc/self/clear_refs`` resets).
"""


def process_memory(*fields: str) -> dict[str, int]:
    """Bytes of each of ``fields`` (``"VmRSS"``, ``"VmHWM"``) of this process; a field
    Linux does not report (or a system without ``/proc``) is left out."""
    out = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in fields:
                    out[key] = int(value.split()[0]) * 1024  # kB
    except OSError:
        pass
    return out
