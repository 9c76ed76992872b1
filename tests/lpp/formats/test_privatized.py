import hashlib
import io
import json
import secrets
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from scipy import stats

from lpp.distributions import two_sided_geometric_logpmf
from lpp.formats.privatized import (DATA_FILE, META_FILE, canonical_counts, canonical_key,
                                   canonical_order, dataset_id, is_canonical, load_privatized,
                                   level_key, noise_seed, privatize_counts, release_sha256,
                                   save_privatized, SimulationWarning)
from lpp.testing import FALSE_ALARM, chisquare_gof

IDS = dict(row_ids=[f"d{i}" for i in range(40)], column_ids=[f"w{j}" for j in range(30)])
DATASET = dataset_id(**IDS)
LN2 = float(np.log(2.0))  # the epsilon / N of alpha = 0.5


def _counts(seed=0):
    return np.random.default_rng(seed).poisson(2.0, size=(40, 30))


def _privatize(tmp_path, name="p", seed=(7, 0), **kw):
    return privatize_counts(_counts(), tmp_path / name, epsilon=1.0, N=1.0, simulation=True, seed=list(seed),
                            source="toy", **IDS, **kw)


def test_round_trip_and_noise_law(tmp_path):
    y = _counts()
    data = _privatize(tmp_path)
    assert data.y_tilde.dtype == np.int64 and data.y_tilde.shape == y.shape
    assert data.alpha == pytest.approx(np.exp(-1.0))
    assert data.meta["randomness"] == "simulation" and data.meta["mechanism"] == "fast"
    assert "seed" not in data.meta
    tau = data.y_tilde - y
    support = np.arange(-40, 41)
    pmf = np.exp(two_sided_geometric_logpmf(support, data.alpha))
    assert chisquare_gof(tau.ravel(), support, pmf / pmf.sum()).pvalue > FALSE_ALARM


def test_same_seed_same_bytes_other_seed_other_noise(tmp_path):
    _privatize(tmp_path, "a")
    _privatize(tmp_path, "b")
    _privatize(tmp_path, "c", seed=(7, 1))
    for name in (DATA_FILE,):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "c" / name).read_bytes()
    a, c = load_privatized(tmp_path / "a"), load_privatized(tmp_path / "c")
    assert a.release_sha256 == release_sha256(a.y_tilde, a.alpha) != c.release_sha256


def test_the_true_counts_are_not_stored(tmp_path):
    y = _counts()
    _privatize(tmp_path)
    with np.load(tmp_path / "p" / DATA_FILE) as npz:
        assert sorted(npz.files) == ["alpha", "y_tilde"]
        assert not np.array_equal(npz["y_tilde"], y)


def test_the_metadata_describe_the_release_not_the_true_counts(tmp_path):
    """Two data sets with different true counts (here with different totals, non-zeros and
    maxima), noised with the same settings, get the same meta.json but for the digests of
    their released matrices: nothing in it is a statistic of the true counts."""
    def written(name, counts):
        privatize_counts(counts, tmp_path / name, epsilon=1.0, N=1.0, simulation=True, seed=[7, 0],
                         source="toy", **IDS)
        return json.loads((tmp_path / name / META_FILE).read_text()), load_privatized(
            tmp_path / name)

    sparse = np.zeros((40, 30), dtype=np.int64)
    sparse[3, 4] = 1
    dense = _counts() * 10
    (meta_a, data_a), (meta_b, data_b) = written("a", sparse), written("b", dense)
    for meta, data in ((meta_a, data_a), (meta_b, data_b)):
        assert meta["ledger"]["release_sha256"] == release_sha256(data.y_tilde, data.alpha)
    digests = ("data_sha256",), ("ledger", "release_sha256")
    assert all(_at(meta_a, key) != _at(meta_b, key) for key in digests)
    for meta in (meta_a, meta_b):
        for *parents, leaf in digests:
            del _at(meta, parents)[leaf]
    assert meta_a == meta_b


def _at(meta, keys):
    for key in keys:
        meta = meta[key]
    return meta


def test_small_dtype_on_disk_int64_in_memory(tmp_path):
    y_tilde = np.array([[-3, 200], [5, 0]])
    save_privatized(tmp_path, y_tilde, 0.5, epsilon=LN2, N=1, randomness="simulation", mechanism="fast",
                    source="x",
                    row_ids=["a", "b"], column_ids=["u", "v"])
    with np.load(tmp_path / DATA_FILE) as npz:
        assert npz["y_tilde"].dtype == np.int16
    back = load_privatized(tmp_path)
    assert back.y_tilde.dtype == np.int64 and np.array_equal(back.y_tilde, y_tilde)


def test_heldout_and_per_row_alpha(tmp_path):
    heldout = np.zeros((2, 2), dtype=bool)
    heldout[0, 1] = True
    alpha = np.array([[0.3], [0.6]])
    save_privatized(tmp_path, np.array([[1, -1], [0, 2]]), alpha, epsilon=-np.log(0.3), N=1,
                    randomness="system", mechanism="fast", source="x", row_ids=["a", "b"], column_ids=["u", "v"],
                    heldout=heldout)
    back = load_privatized(tmp_path)
    assert np.array_equal(back.heldout, heldout) and np.array_equal(back.alpha, alpha)


@pytest.mark.parametrize("exact", [False, True])
def test_system_randomness_by_default(tmp_path, exact):
    """No seed: the noise differs from run to run, and the output says where it came from."""
    y = _counts()
    runs = [privatize_counts(y, tmp_path / f"s{i}", epsilon=1.0, N=1.0, source="toy", exact=exact,
                             **IDS) for i in range(2)]
    assert all(r.meta["randomness"] == "system" for r in runs)
    assert not np.array_equal(runs[0].y_tilde, runs[1].y_tilde)


@pytest.mark.parametrize("seed, error", [(-1, ValueError), ([3, -2], ValueError), (1.5, TypeError),
                                         ("2019", TypeError), ([], TypeError), (True, TypeError)])
def test_bad_seeds_are_refused_before_writing(tmp_path, seed, error):
    with pytest.raises(error, match="seed"):
        privatize_counts(_counts(), tmp_path / "out", epsilon=1.0, N=1.0, source="toy",
                         simulation=True, seed=seed, **IDS)
    assert not (tmp_path / "out").exists()


def test_a_folder_that_recorded_its_seed_is_refused(tmp_path):
    _privatize(tmp_path)
    meta_path = tmp_path / "p" / META_FILE
    meta = json.loads(meta_path.read_text())
    meta.update(format_version=1, seed=[7, 0])
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="version 1 is not supported"):
        load_privatized(tmp_path / "p")


def test_exact_mechanism(tmp_path):
    data = _privatize(tmp_path, exact=True)
    assert data.meta["mechanism"] == "exact"
    tau = (data.y_tilde - _counts()).ravel()
    assert stats.describe(tau).mean == pytest.approx(0.0, abs=0.2)


def test_tampered_data_is_refused(tmp_path):
    _privatize(tmp_path)
    path = tmp_path / "p" / DATA_FILE
    payload = bytearray(path.read_bytes())
    payload[len(payload) // 2] ^= 0xFF
    path.write_bytes(bytes(payload))
    with pytest.raises(ValueError, match="sha256"):
        load_privatized(tmp_path / "p")


@pytest.mark.parametrize("kwargs, message", [
    (dict(y_tilde=np.zeros((2, 2))), "integer"),
    (dict(alpha=1.0), r"\(0, 1\)"),
    (dict(alpha=np.full((3, 1), 0.5)), "shape"),
    (dict(row_ids=["a"]), "row ids"),
    (dict(heldout=np.zeros((2, 2), dtype=int)), "boolean"),
    (dict(randomness="urandom"), "randomness"),
])
def test_bad_input_writes_nothing(tmp_path, kwargs, message):
    args = dict(y_tilde=np.array([[1, -1], [0, 2]]), alpha=0.5, epsilon=LN2, N=1, randomness="simulation",
                mechanism="fast", source="x", row_ids=["a", "b"], column_ids=["u", "v"])
    args.update(kwargs)
    y_tilde, alpha = args.pop("y_tilde"), args.pop("alpha")
    with pytest.raises((ValueError, TypeError), match=message):
        save_privatized(tmp_path / "out", y_tilde, alpha, **args)
    assert not (tmp_path / "out").exists()


def test_noise_seed_keys_each_copy_by_seed_replicate_level_and_data_set():
    digest = int(DATASET.removeprefix("ids-sha256:"), 16)
    assert noise_seed(2019, 0, 3.0, DATASET) == [2019, 0, 3_000_000, digest]
    assert noise_seed(2019, 2, 1, DATASET) == [2019, 2, 1_000_000, digest]
    # six decimals or fewer: millionths; any other level: above them all, by its bits
    assert level_key(0.333333) == 333_333 and level_key(2.5) == 2_500_000
    assert level_key(1 / 3) >= 2**64 and level_key(1e-7) >= 2**64
    other = dataset_id(IDS["row_ids"][:-1], IDS["column_ids"])
    keys = {tuple(noise_seed(7, r, level, data)) for r in range(3) for level in (0.5, 1.0, 2.0)
            for data in (DATASET, other)}
    assert len(keys) == 18
    assert noise_seed("system", 1, 2.0, DATASET) is None
    assert noise_seed(None, 0, 1.0, DATASET) is None


@pytest.mark.parametrize("near", [(1e-7, 2e-7), (1.0, 1.0000001), (1.0, np.nextafter(1.0, 2.0)),
                                  (1 / 3, 0.333333), (2.5e-7, 3e-7)])
def test_levels_that_differ_never_share_a_noise_key(near):
    """Levels closer than a millionth once shared a key (and so their noise): each level keys
    its own stream, and a level written with up to six decimals keeps its millionths."""
    low, high = near
    assert noise_seed(5, 0, low, DATASET) != noise_seed(5, 0, high, DATASET)
    assert level_key(low) != level_key(high)
    draws = [np.random.default_rng(noise_seed(5, 0, level, DATASET)).random(4) for level in near]
    assert not np.array_equal(*draws)


@pytest.mark.parametrize("args, error, match", [
    ((2019, 0, -1, DATASET), ValueError, "epsilon_over_n .* must be positive"),
    ((2019, 0, 0.0, DATASET), ValueError, "epsilon_over_n .* must be positive"),
    ((2019, 0, float("inf"), DATASET), ValueError, "finite"),
    ((2019, -1, 1.0, DATASET), ValueError, "replicate must be at least 0"),
    ((-5, 0, 1.0, DATASET), ValueError, "seed must be at least 0"),
    ((2019, 0.5, 1.0, DATASET), TypeError, "replicate must be an integer"),
    ((True, 0, 1.0, DATASET), TypeError, "seed must be an integer or \"system\""),
    (("urandom", 0, 1.0, DATASET), TypeError, "seed must be an integer or \"system\""),
    ((2019, 0, "1", DATASET), TypeError, "epsilon_over_n must be a number"),
    ((2019, 0, 1.0, "topics"), ValueError, "dataset must be .*dataset_id"),
    ((2019, 0, 1.0, DATASET.upper()), ValueError, "dataset must be .*dataset_id"),
])
def test_noise_seed_refuses_bad_settings(args, error, match):
    with pytest.raises(error, match=match):
        noise_seed(*args)


# ---- the hostile analyst: everything in the private folder, and the noise to remove ----------

def _digits_in(value):
    """Every integer an analyst could read out of a JSON value (numbers and digit runs)."""
    import re
    if isinstance(value, bool):
        return set()
    if isinstance(value, (int, float)):
        return {int(value)} if float(value).is_integer() else set()
    if isinstance(value, str):
        return {int(d) for d in re.findall(r"\d+", value)}
    if isinstance(value, dict):
        return set().union(*map(_digits_in, value.values()), *map(_digits_in, value.keys()))
    if isinstance(value, list):
        return set().union(*map(_digits_in, value)) if value else set()
    return set()


def _attack(folder, seeds=range(2000), extra_candidates=()):
    """Regenerate the fast mechanism's noise from every seed an analyst would try.

    Returns the true counts if some candidate key turns ``y~`` back into a count matrix,
    else None. The candidates: the small seeds ``seeds`` (an analyst tries thousands a
    second), every integer in ``meta.json`` and the npz's scalar arrays, and
    ``extra_candidates``; each alone, with a replicate ``[k, r]`` and as the pipeline's key
    ``noise_seed(k, r, level, dataset)`` (the folder's own copy, level and ``dataset_id``).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SimulationWarning)
        data = load_privatized(folder)
    numbers = set(seeds) | _digits_in(data.meta) | set(extra_candidates)
    with np.load(folder / DATA_FILE) as npz:
        for name in npz.files:
            if npz[name].ndim == 0 and float(npz[name]).is_integer():
                numbers.add(int(npz[name]))
    level, copy = data.meta["epsilon_over_n"], data.meta["ledger"]["copy"] or 0
    p = 1.0 - data.alpha
    prefix = (slice(0, 2), slice(None))  # two rows decide a wrong key; then the whole matrix
    for k in sorted(n for n in numbers if n >= 0):
        keys = [[k, copy], noise_seed(k, copy, level, data.meta["ledger"]["dataset_id"])]
        keys += [k] if k < 2**63 else []
        for key in keys:
            gen = np.random.default_rng(key)
            tau = gen.geometric(p, size=data.y_tilde.shape) - gen.geometric(p, size=data.y_tilde.shape)
            if np.all(data.y_tilde[prefix] - tau[prefix] >= 0) and np.all(data.y_tilde >= tau):
                return data.y_tilde - tau
    return None


def test_an_analyst_who_tries_small_seeds_removes_a_simulations_noise(tmp_path):
    """The pipeline's own way of privatizing, a seeded simulation (``noise_seed``): the seed is
    nowhere in the folder, but everything else in its key is, so trying seeds 0, 1, 2, ...
    gives back every true count. The folder says so (``randomness: simulation``), and its
    reader is told, once."""
    y = _counts()
    folder = tmp_path / "private"
    privatize_counts(y, folder, epsilon=1.0, N=1.0, source="data/prepared/toy",
                     simulation=True, seed=noise_seed(1234, 0, 1.0, DATASET), **IDS)
    everything = b"".join(f.read_bytes() for f in sorted(folder.iterdir()))
    assert b"1234" not in everything
    assert json.loads((folder / META_FILE).read_text())["randomness"] == "simulation"
    with pytest.warns(SimulationWarning, match="reproducible by whoever holds the seed"):
        load_privatized(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_privatized(folder)  # once per folder and process
    assert np.array_equal(_attack(folder), y)


@pytest.mark.parametrize("seed", [7, [7, 0], noise_seed(1234, 0, 1.0, DATASET), 2**96 - 1])
def test_a_guessable_seed_is_refused_for_a_private_release(tmp_path, seed):
    with pytest.raises(ValueError, match=r"can be guessed.*secrets\.randbits\(128\).*"
                                         r"simulation=True"):
        privatize_counts(_counts(), tmp_path / "p", epsilon=1.0, N=1.0, source="toy", seed=seed,
                         **IDS)
    assert not (tmp_path / "p").exists()
    with pytest.raises(ValueError, match="no seed was given"):
        privatize_counts(_counts(), tmp_path / "p", epsilon=1.0, N=1.0, source="toy",
                         simulation=True, **IDS)


def test_a_secret_key_survives_the_seed_guessing_attack(tmp_path):
    """A key of 128 random bits (the top one set, so that it is never refused): the range of
    small seeds, the numbers in the folder and the pipeline's key shapes all fail; the key
    itself recovers the counts (the attack has power)."""
    y = _counts()
    key = secrets.randbits(128) | (1 << 127)
    folder = tmp_path / "private"
    data = privatize_counts(y, folder, epsilon=1.0, N=1.0, source="toy",
                            seed=noise_seed(key, 0, 1.0, DATASET), **IDS)
    assert data.meta["randomness"] == "secret key"
    assert _attack(folder) is None
    assert np.array_equal(_attack(folder, seeds=(), extra_candidates=[key]), y)


def test_system_randomness_leaves_nothing_to_regenerate(tmp_path):
    y = _counts()
    privatize_counts(y, tmp_path / "p", epsilon=1.0, N=1.0, source="toy", **IDS)
    assert _attack(tmp_path / "p", seeds=range(100)) is None


# ---- the careless operator: a private folder is written whole or not at all -----------------

def test_a_rewrite_replaces_the_folder_whole_with_the_same_bytes(tmp_path, snapshot):
    _privatize(tmp_path, "a", heldout=_counts() > 3)
    _privatize(tmp_path, "b")
    _privatize(tmp_path, "a")  # rewritten without its held-out mask
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary left


def test_a_failed_rewrite_leaves_the_previous_folder_byte_identical(tmp_path, monkeypatch,
                                                                    snapshot):
    _privatize(tmp_path)
    before = snapshot(tmp_path / "p")
    import lpp.formats.files as files
    real = files.atomic_write_bytes

    def fail_at_the_metadata(path, payload):
        if path.name == META_FILE:
            raise OSError("disk full")
        real(path, payload)

    monkeypatch.setattr(files, "atomic_write_bytes", fail_at_the_metadata)
    with pytest.raises(OSError, match="disk full"):
        _privatize(tmp_path, seed=(8, 0))
    assert snapshot(tmp_path / "p") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]
    assert load_privatized(tmp_path / "p").meta["randomness"] == "simulation"


def test_a_failed_swap_puts_the_previous_folder_back(tmp_path, monkeypatch, snapshot):
    _privatize(tmp_path)
    before = snapshot(tmp_path / "p")
    import lpp.formats.files as files
    real, calls = files.os.rename, []

    def fail_second(src, dst):  # the previous folder moved aside, then the new one fails
        calls.append((src, dst))
        if len(calls) == 2:
            raise OSError("rename failed")
        real(src, dst)

    monkeypatch.setattr(files.os, "rename", fail_second)
    with pytest.raises(OSError, match="rename failed"):
        _privatize(tmp_path, seed=(8, 0))
    monkeypatch.setattr(files.os, "rename", real)
    assert snapshot(tmp_path / "p") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


def test_the_leftovers_of_a_killed_write_are_cleaned_up(tmp_path):
    _privatize(tmp_path)
    (tmp_path / ".p.k1ll3d.tmp").mkdir()  # a temporary folder of a killed write
    (tmp_path / ".p.k1ll3d.tmp" / DATA_FILE).write_bytes(b"half")
    (tmp_path / ".p.0ld.old").mkdir()  # a replaced folder a killed swap did not remove
    _privatize(tmp_path, seed=(8, 0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


def test_a_folder_of_other_files_is_not_replaced(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "thesis.tex").write_text("years of work")
    with pytest.raises(ValueError, match=r"thesis\.tex.*replaced whole"):
        _privatize(tmp_path, "home")
    assert (tmp_path / "home" / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


# ---- the hostile analyst or careless script: nothing on disk is trusted ----------------------

def _forged(tmp_path, forge, **changes):
    _privatize(tmp_path, heldout=_counts() > 3)
    forge(tmp_path / "p", data_file=DATA_FILE, meta_file=META_FILE, sha_key="data_sha256",
          **changes)
    return tmp_path / "p"


def _refused(folder, *match):
    with pytest.raises(ValueError) as info:
        load_privatized(folder)
    message = str(info.value)
    assert str(folder) in message, message
    for part in match:
        assert part in message, message
    return message


def test_a_float_payload_is_refused_not_truncated(tmp_path, forge):
    folder = _forged(tmp_path, forge, arrays={"y_tilde": _counts() + 0.5})
    _refused(folder, DATA_FILE, "'y_tilde'", "float64")


@pytest.mark.parametrize("values", [np.full((40, 30), 1e20),
                                    np.full((40, 30), 2**64 - 1, dtype=np.uint64)])
def test_a_payload_beyond_int64_is_refused_not_wrapped(tmp_path, forge, values):
    folder = _forged(tmp_path, forge, arrays={"y_tilde": values})
    _refused(folder, "'y_tilde'")


@pytest.mark.parametrize("key, ids", [("row_ids", ["d0"]), ("column_ids", list("abcdefgh")),
                                      ("row_ids", list(range(40)))])
def test_ids_that_do_not_fit_the_shape_are_refused(tmp_path, forge, key, ids):
    folder = _forged(tmp_path, forge, meta={key: ids})
    _refused(folder, META_FILE, repr(key))


@pytest.mark.parametrize("where", ["parent", "absolute", "symlink"])
def test_a_data_file_outside_the_folder_is_refused(tmp_path, where):
    _privatize(tmp_path, "elsewhere", seed=(9, 9))  # what a forged folder points a reader to
    _privatize(tmp_path)
    folder = tmp_path / "p"
    target = tmp_path / "elsewhere" / DATA_FILE
    meta = json.loads((folder / META_FILE).read_text())
    if where == "symlink":
        (folder / "link.npz").symlink_to(target)
        meta["data_file"] = "link.npz"
    else:
        meta["data_file"] = "../elsewhere/y_tilde.npz" if where == "parent" else str(target)
    meta["data_sha256"] = json.loads((tmp_path / "elsewhere" / META_FILE).read_text())[
        "data_sha256"]
    (folder / META_FILE).write_text(json.dumps(meta))
    _refused(folder, "'data_file'")


@pytest.mark.parametrize("meta, match", [
    ({"has_heldout": ...}, "'has_heldout' is missing"),
    ({"has_heldout": "yes"}, "'has_heldout' must be true or false"),
    ({"has_heldout": False}, "y_tilde.npz: array 'heldout' is not part of this format"),
    ({"shape": "40x30"}, "'shape' must be a list"),
    ({"row_ids": ...}, "'row_ids' is missing"),
    ({"data_file": ...}, "'data_file' is missing"),
    ({"data_sha256": ...}, "'data_sha256' is missing"),
    ({"epsilon": "one"}, "'epsilon' must be a finite number"),
    ({"epsilon_over_n": 0.5}, "'epsilon_over_n'"),
    ({"mechanism": "gaussian"}, "'mechanism' must be one of"),
    ({"randomness": "urandom"}, "'randomness' must be one of"),
])
def test_metadata_a_reader_cannot_use_is_named_in_a_clear_error(tmp_path, forge, meta, match):
    _refused(_forged(tmp_path, forge, meta=meta), match if DATA_FILE in match else META_FILE,
             match)


@pytest.mark.parametrize("text, match", [("{not json", "not a readable JSON"),
                                         (b"\xff\xfe garbage", "not a readable JSON"),
                                         ("", "not a readable JSON"),
                                         ('{"epsilon": NaN}', "not a readable JSON"),
                                         ("[1, 2]", "not an object")])
def test_a_metadata_file_that_is_not_a_json_object_is_a_clear_error(tmp_path, text, match):
    _privatize(tmp_path)
    path = tmp_path / "p" / META_FILE
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    _refused(tmp_path / "p", META_FILE, match)


@pytest.mark.parametrize("change, match", [
    ({"payload": b""}, "not a readable .npz"),
    ({"payload": b"garbage"}, "not a readable .npz"),
    ({"drop": ("alpha",)}, "'alpha' is missing"),
    ({"drop": ("heldout",)}, "'heldout' is missing"),
    ({"arrays": {"y": _counts()}}, "'y' is not part of this format"),  # true counts smuggled in
    ({"arrays": {"y_tilde": np.ones(1200, dtype=np.int64)}}, "'y_tilde' has shape"),
    ({"arrays": {"y_tilde": np.ones((40, 30), dtype=bool)}}, "'y_tilde' has dtype bool"),
    ({"arrays": {"alpha": np.array(1.5)}}, "'alpha'"),
    ({"arrays": {"alpha": np.array(np.nan)}}, "'alpha' holds NaN"),
    ({"arrays": {"alpha": np.full((3, 1), 0.5)}}, "'alpha' has shape"),
    ({"arrays": {"alpha": np.array("half")}}, "'alpha' has dtype"),
    ({"arrays": {"heldout": np.zeros((40, 30), dtype=np.int8)}}, "'heldout' has dtype int8, expected booleans"),
])
def test_a_payload_a_reader_cannot_use_is_named_in_a_clear_error(tmp_path, forge, change, match):
    _refused(_forged(tmp_path, forge, **change), DATA_FILE, match)


def test_a_missing_folder_is_a_file_not_found_and_a_value_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_privatized(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="no meta.json"):
        load_privatized(tmp_path / "nowhere")


def test_a_masked_array_is_refused_before_anything_is_written(tmp_path):
    y = np.ma.MaskedArray(_counts(), mask=_counts() > 4)
    with pytest.raises(TypeError, match="masked array"):
        privatize_counts(y, tmp_path / "p", epsilon=1.0, N=1.0, simulation=True, seed=[7, 0], source="toy",
                         **IDS)
    with pytest.raises(TypeError, match="masked array"):
        save_privatized(tmp_path / "p", y, 0.5, epsilon=LN2, N=1, randomness="simulation",
                        mechanism="fast", source="x", **IDS)
    assert not (tmp_path / "p").exists()


# ---- the order of rows and columns: the ids', never the counts' -----------------------------

def test_canonical_order_sorts_ids_as_text_with_digit_runs_by_value():
    ids = ["d10", "d2", "b", "a7", "a07", "d1", "A"]
    assert [ids[k] for k in canonical_order(ids)] == ["A", "a07", "a7", "b", "d1", "d2", "d10"]
    assert is_canonical(["w1", "w2", "w10"]) and not is_canonical(["w2", "w1"])
    assert not is_canonical(["w1", "w1"])
    assert canonical_key("x" + "9" * 5000) > canonical_key("x" + "9" * 4999)  # no int() limit
    with pytest.raises(ValueError, match="repeat"):
        canonical_order(["a", "b", "a"])


def test_privatize_counts_puts_rows_and_columns_in_canonical_order(tmp_path, snapshot):
    """Counts kept in any order give the same private folder, byte for byte: the rows, the
    columns, the held-out mask and the noise are all in the canonical order of the ids."""
    y, heldout = _counts(), _counts(1) > 3
    rng = np.random.default_rng(3)
    rows, cols = rng.permutation(40), rng.permutation(30)
    shuffled = dict(row_ids=[IDS["row_ids"][r] for r in rows],
                    column_ids=[IDS["column_ids"][c] for c in cols])
    a = privatize_counts(y, tmp_path / "a", epsilon=1.0, N=1.0, simulation=True, seed=[7, 0], source="toy",
                         heldout=heldout, **IDS)
    b = privatize_counts(y[np.ix_(rows, cols)], tmp_path / "b", epsilon=1.0, N=1.0,
                         simulation=True, seed=[7, 0], source="toy", heldout=heldout[np.ix_(rows, cols)],
                         **shuffled)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert b.row_ids == IDS["row_ids"] and b.column_ids == IDS["column_ids"]
    assert b.meta["order"] == "canonical ids" and np.array_equal(b.heldout, heldout)
    words = [f"w{j}" for j in (5, 12, 3, 0)]  # the analyst's order is the ids', in any case
    c = privatize_counts(y[:, :4], tmp_path / "c", epsilon=1.0, N=1.0, source="toy",
                         row_ids=IDS["row_ids"], column_ids=words)
    assert c.column_ids == ["w0", "w3", "w5", "w12"]


@pytest.mark.parametrize("row_ids, column_ids, match", [
    (["b", "a"], ["u", "v"], "row ids are not distinct and in canonical order"),
    (["a", "b"], ["v", "u"], "column ids are not distinct and in canonical order"),
    (["a", "a"], ["u", "v"], "row ids are not distinct"),
])
def test_ids_out_of_canonical_order_are_refused_before_writing(tmp_path, row_ids, column_ids,
                                                               match):
    with pytest.raises(ValueError, match=match):
        save_privatized(tmp_path / "out", np.array([[1, -1], [0, 2]]), 0.5, epsilon=LN2, N=1,
                        randomness="simulation", mechanism="fast", source="x", row_ids=row_ids,
                        column_ids=column_ids)
    assert not (tmp_path / "out").exists()


def test_a_folder_whose_ids_were_reordered_is_refused(tmp_path, forge):
    """A forger (or an old writer) that orders the ids by the counts, with every digest
    recomputed: the reader refuses the order itself."""
    _privatize(tmp_path)
    folder = tmp_path / "p"
    meta = json.loads((folder / META_FILE).read_text())
    forge(folder, data_file=DATA_FILE, meta_file=META_FILE, sha_key="data_sha256",
          meta={"column_ids": meta["column_ids"][::-1]})
    with pytest.raises(ValueError, match="column ids are not distinct and in canonical order"):
        load_privatized(folder)


def test_canonical_counts_maps_prepared_counts_to_the_private_order(tmp_path):
    from lpp.formats.counts import load_counts, write_counts

    y = _counts()
    cols = np.random.default_rng(5).permutation(30)
    heldout = y > 3
    write_counts(tmp_path / "prepared", y[:, cols], row_ids=IDS["row_ids"],
                 column_ids=[IDS["column_ids"][c] for c in cols], kind="network", params={},
                 inputs={}, summary={}, arrays={"heldout": heldout[:, cols]},
                 extra_meta={"actors": [{"id": r} for r in IDS["row_ids"]]})
    prepared = load_counts(tmp_path / "prepared")
    truth = canonical_counts(prepared)
    assert truth.column_ids == IDS["column_ids"] and np.array_equal(truth.counts.toarray(), y)
    assert np.array_equal(truth.arrays["heldout"], heldout)
    assert truth.meta["actors"] == [{"id": r} for r in IDS["row_ids"]]
    again = canonical_counts(truth)
    assert again.column_ids == truth.column_ids
    assert np.array_equal(again.counts.toarray(), y)
    private = privatize_counts(prepared.counts, tmp_path / "p", epsilon=1.0, N=1.0, source="x",
                               row_ids=prepared.row_ids, column_ids=prepared.column_ids,
                               heldout=prepared.arrays["heldout"])
    assert private.column_ids == truth.column_ids
    assert np.array_equal(private.heldout, truth.arrays["heldout"])


# ---------------------------------------------------------------- the recorded privacy level

def _save(path, alpha, **settings):
    args = dict(epsilon=1.0, N=1.0, randomness="simulation", mechanism="fast", source="x",
                row_ids=["a", "b"], column_ids=["u", "v"])
    args.update(settings)
    return save_privatized(path, np.array([[1, -1], [0, 2]]), alpha, **args)


@pytest.mark.parametrize("alpha", [np.exp(-5.0), np.exp(-0.5), np.array([[np.exp(-1.0)],
                                                                           [np.exp(-2.0)]])])
def test_a_level_that_is_not_the_noise_is_refused(tmp_path, alpha):
    """The ledger adds up the recorded epsilons: a folder whose noise is weaker (or stronger)
    than its record would make a false privacy claim (or mislabel the release)."""
    with pytest.raises(ValueError, match="recorded epsilon/N"):
        _save(tmp_path / "p", alpha)
    assert not (tmp_path / "p").exists()


def test_per_row_noise_records_its_least_noised_row(tmp_path):
    alpha = np.array([[np.exp(-1.0)], [np.exp(-0.25)]])  # the second row is noised more
    _save(tmp_path / "p", alpha, epsilon=2.0, N=2.0)
    assert np.array_equal(load_privatized(tmp_path / "p").alpha, alpha)


def test_an_edited_level_is_refused_on_load(tmp_path):
    _save(tmp_path / "p", np.exp(-1.0))
    path = tmp_path / "p" / META_FILE
    meta = json.loads(path.read_text())
    meta.update(epsilon=0.1, N=1.0, epsilon_over_n=0.1)  # consistent with itself, not the noise
    path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=f"{META_FILE}.*recorded epsilon/N = 0.1"):
        load_privatized(tmp_path / "p")


@pytest.mark.parametrize("settings, error, message", [
    (dict(epsilon=0), ValueError, "epsilon must be a finite number > 0"),
    (dict(epsilon=-1), ValueError, "epsilon must be a finite number > 0"),
    (dict(epsilon=float("nan")), ValueError, "epsilon must be a finite number > 0"),
    (dict(epsilon=True), TypeError, "epsilon must be a real number"),
    (dict(N=0), ValueError, "N must be a finite number > 0"),
    (dict(N="abc"), TypeError, "N must be a real number"),
    (dict(mechanism="Fast"), ValueError, "mechanism must be one of"),
    (dict(source=None), TypeError, "source must be a non-empty str"),
])
def test_bad_settings_leave_a_good_folder_as_it_was(tmp_path, settings, error, message):
    """Settings the reader would refuse are refused before anything is written."""
    _save(tmp_path / "p", np.exp(-1.0))
    before = {f.name: f.read_bytes() for f in (tmp_path / "p").iterdir()}
    with pytest.raises(error, match=message):
        _save(tmp_path / "p", np.exp(-1.0), **settings)
    assert {f.name: f.read_bytes() for f in (tmp_path / "p").iterdir()} == before
    assert load_privatized(tmp_path / "p").meta["epsilon"] == 1.0


def test_the_exact_sampler_takes_rational_strings(tmp_path):
    data = privatize_counts(_counts(), tmp_path / "p", epsilon="1/3", N=1, exact=True,
                            simulation=True, seed=[7, 0], source="toy", **IDS)
    assert data.meta["epsilon"] == pytest.approx(1 / 3) and data.meta["mechanism"] == "exact"
    assert data.alpha == pytest.approx(np.exp(-1 / 3))


# ---- check before reading: nothing costs memory before the reader knows it is what it says ----

def _bomb_member(name, header_shape, inflated_bytes, dtype="|i1"):
    """A zip member ``name.npy`` whose header says ``header_shape`` and which inflates to
    ``inflated_bytes`` of zeros after the header: about 1 kB per MiB on disk."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype, "fortran_order": False,
                                                  "shape": header_shape})
    return header.getvalue(), inflated_bytes


def _write_bomb(folder, members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (header, size) in members.items():
            with archive.open(name, "w", force_zip64=True) as out:
                out.write(header)
                chunk = bytes(1 << 20)
                for _ in range(size >> 20):
                    out.write(chunk)
    payload = buffer.getvalue()
    (folder / DATA_FILE).write_bytes(payload)
    meta = json.loads((folder / META_FILE).read_text())
    meta["data_sha256"] = hashlib.sha256(payload).hexdigest()
    (folder / META_FILE).write_text(json.dumps(meta))
    return len(payload)


def _honest(folder):
    """The folder's own alpha, as a member a forgery can carry beside its bomb."""
    header = io.BytesIO()
    np.lib.format.write_array(header, np.asarray(0.5))
    return header.getvalue()


@pytest.mark.parametrize("header_shape", [(16384, 16384), (40, 30)],
                         ids=["a shape beyond meta", "a member beyond its header"])
def test_a_decompression_bomb_is_refused_before_it_is_inflated(tmp_path, header_shape):
    """64 MiB of zeros in a 64 kB y_tilde.npz, its sha256 recomputed: refused from the
    member's header and the zip's declared size, with a few MiB of memory at most (reading it
    first cost the whole 64 MiB, and a second copy in int64)."""
    _privatize(tmp_path)
    folder = tmp_path / "p"
    alpha = _honest(folder)
    size = _write_bomb(folder, {"y_tilde.npy": _bomb_member("y_tilde", header_shape, 64 << 20),
                                "alpha.npy": (alpha, 0)})
    assert size < 256 << 10
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"y_tilde\.npz: array 'y_tilde' (has shape "
                                             r"\(16384, 16384\), expected \(40, 30\)|declares)"):
            load_privatized(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB to refuse a 64 MiB bomb"


def test_an_array_member_without_its_npy_name_is_a_clear_error(tmp_path):
    _privatize(tmp_path)
    folder = tmp_path / "p"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("y_tilde", b"raw bytes, not an array")
        archive.writestr("alpha.npy", _honest(folder))
    payload = buffer.getvalue()
    (folder / DATA_FILE).write_bytes(payload)
    meta = json.loads((folder / META_FILE).read_text())
    meta["data_sha256"] = hashlib.sha256(payload).hexdigest()
    (folder / META_FILE).write_text(json.dumps(meta))
    _refused(folder, DATA_FILE, "member 'y_tilde' is not an array (NAME.npy)")


@pytest.mark.parametrize("field", ["y_sum", "seed", "note"])
def test_a_field_the_format_never_writes_is_refused(tmp_path, forge, field):
    """A forged ``y_sum`` (or a seed, or anything) must not travel with the data as if the
    format vouched for it."""
    _refused(_forged(tmp_path, forge, meta={field: 1234}), META_FILE,
             f"field '{field}' is not part of this format")


def test_a_metadata_file_nested_beyond_reason_is_a_clear_error(tmp_path, capsys):
    """100,000 nested lists: Python's parser would end in a RecursionError; the reader and the
    ledger's command line refuse it as a FormatError naming the file."""
    from lpp.formats.ledger import main
    _privatize(tmp_path)
    meta = tmp_path / "p" / META_FILE
    meta.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _refused(tmp_path / "p", META_FILE, "nested deeper than 32 levels")
    assert main([str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nested deeper" in err and "Traceback" not in err
