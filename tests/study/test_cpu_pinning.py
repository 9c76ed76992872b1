"""study.cpu_pinning: the pipeline's kernels compute with the same numeric kernels on every
x86-64 CPU that can run them, and every other machine (and a user's own choice) is left alone."""
import hashlib
import os
import subprocess
import sys

from study.cpu_pinning import PINNED_CORETYPE, cpu_flags, numpy_dispatch_targets, pin_numeric_kernels

AVX2 = {"sse4_2", "avx", "avx2", "fma"}
ALL = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")


def test_an_x86_cpu_takes_the_haswell_blas_kernels_and_numpys_baseline():
    env = {}
    pinned = pin_numeric_kernels(env, flags=AVX2 | {"avx512f"}, machine="x86_64",
                                 dispatch_targets=["X86_V3", "X86_V4", "AVX512_ICL"])
    assert pinned == env == {"OPENBLAS_CORETYPE": PINNED_CORETYPE,
                             "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL"}
    assert PINNED_CORETYPE == "Haswell"


def test_a_cpu_with_no_target_beyond_numpys_baseline_only_pins_openblas():
    env = {}
    assert pin_numeric_kernels(env, flags=AVX2, machine="AMD64", dispatch_targets=[]) == \
        {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": None}
    assert env == {"OPENBLAS_CORETYPE": "Haswell"}


def test_a_users_choice_stands():
    env = {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_DISABLE_CPU_FEATURES": ""}
    assert pin_numeric_kernels(env, flags=AVX2, machine="x86_64",
                               dispatch_targets=["X86_V4"]) == env
    assert env == {"OPENBLAS_CORETYPE": "SkylakeX", "NPY_DISABLE_CPU_FEATURES": ""}


def test_no_pin_where_the_kernels_cannot_run_or_the_machine_is_not_x86():
    for flags, machine in ((AVX2 - {"fma"}, "x86_64"), (AVX2 - {"avx2"}, "x86_64"),
                           (set(), "x86_64"), (AVX2, "arm64"), (AVX2, "aarch64")):
        env = {}
        assert pin_numeric_kernels(env, flags=flags, machine=machine, dispatch_targets=[]) == \
            dict.fromkeys(ALL)
        assert env == {}
    assert pin_numeric_kernels({}, flags=AVX2, machine="arm64", dispatch_targets=["X86_V4"]) == \
        dict.fromkeys(ALL)


def test_cpu_flags_reads_the_flags_line(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: X\nflags\t\t: fpu sse2 avx2 fma\n\n"
                    "processor\t: 1\nflags\t\t: fpu\n")
    assert cpu_flags(str(info)) == {"fpu", "sse2", "avx2", "fma"}
    assert cpu_flags(str(tmp_path / "absent")) == set()


_PROBE = ("import hashlib, numpy as np\n"
          "from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__\n"
          "x = np.random.default_rng(0).gamma(0.1, 1.0, 100_000) + 1e-300\n"
          "a = np.random.default_rng(1).random((300, 50))\n"
          "print(' '.join(t for t in __cpu_dispatch__ if __cpu_features__[t]) or '-')\n"
          "print(hashlib.sha256(np.exp(-x).tobytes() + np.log(x).tobytes()"
          " + (a @ a.T).tobytes()).hexdigest())\n")


def _probe(env):
    """(the NumPy dispatch targets in use, a digest of exp, log and a matrix product)"""
    return tuple(subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                                text=True, check=True).stdout.split("\n")[:2])


def test_pinned_numpy_runs_its_baseline_loops_and_computes_other_bits_on_avx512():
    """In a process started with the pins NumPy uses none of its dispatch targets; on a CPU
    with AVX-512 its exp, log and matrix product then give other bits than unpinned."""
    base = {k: v for k, v in os.environ.items() if k not in ALL}
    pinned = dict(base)
    pin_numeric_kernels(pinned)
    targets_pinned, digest_pinned = _probe(pinned)
    targets_base, digest_base = _probe(base)
    assert targets_pinned == "-"
    assert targets_base == (" ".join(numpy_dispatch_targets()) or "-")
    if "avx512f" in cpu_flags():
        assert targets_base != "-" and digest_pinned != digest_base
