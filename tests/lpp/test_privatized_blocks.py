"""The row-block privatized format: round trip, block-by-block noising, refusals."""
import json

import numpy as np
import pytest

from lpp.mechanism import alpha_from_epsilon
from lpp.formats.privatized_blocks import PrivatizedBlocks, PrivatizedBlockWriter, privatize_blocks


def _write(tmp_path, blocks, alpha=0.5):
    n_cols = blocks[0].shape[1]
    with PrivatizedBlockWriter(tmp_path / "d", n_cols=n_cols, epsilon=1.0, N=1.0, randomness="seeded",
                               mechanism="fast", source="test",
                               column_ids=[f"w{i}" for i in range(n_cols)]) as w:
        lo = 0
        for blk in blocks:
            w.write(blk, alpha, [str(r) for r in range(lo, lo + blk.shape[0])])
            lo += blk.shape[0]
    return PrivatizedBlocks(tmp_path / "d")


def test_round_trip_by_block(tmp_path):
    rng = np.random.default_rng(0)
    blocks = [rng.integers(-300, 300, size=(n, 7)) for n in (5, 3, 4)]
    data = _write(tmp_path, blocks)
    assert data.shape == (12, 7) and data.n_blocks == 3
    assert data.bounds.tolist() == [0, 5, 8, 12]
    for b, blk in enumerate(blocks):
        y, alpha = data.read_block(b)
        assert y.dtype == np.int64 and np.array_equal(y, blk)
        assert alpha.shape == (blk.shape[0], 1) and np.all(alpha == 0.5)
    y, alpha = data.to_dense()
    assert np.array_equal(y, np.concatenate(blocks))
    assert data.meta["row_ids"] == [str(r) for r in range(12)]
    # the smallest integer type on disk
    with np.load(tmp_path / "d" / "block_00000.npz") as z:
        assert z["y_tilde"].dtype == np.int16


def test_privatize_blocks_noises_each_block_from_its_own_stream(tmp_path):
    counts = np.arange(60).reshape(12, 5) % 4
    data = privatize_blocks([counts[:7], counts[7:]], tmp_path / "p", n_cols=5, epsilon=2.0,
                            N=1.0, seed=11, source="toy", column_ids=list("abcde"))
    alpha = float(alpha_from_epsilon(2.0, 1.0))
    y, a = data.to_dense()
    assert np.all(a == alpha)
    # block 1 is the same whatever came before it: its stream is [seed, 1]
    again = privatize_blocks([counts[:2], counts[7:]], tmp_path / "q", n_cols=5, epsilon=2.0,
                             N=1.0, seed=11, source="toy", column_ids=list("abcde"))
    assert np.array_equal(again.read_block(1)[0], y[7:])
    assert not np.array_equal(y, counts)  # noised


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="column ids"):
        PrivatizedBlockWriter(tmp_path / "a", n_cols=3, epsilon=1, N=1, randomness="seeded",
                              mechanism="fast", source="x", column_ids=["a"])
    w = PrivatizedBlockWriter(tmp_path / "b", n_cols=3, epsilon=1, N=1, randomness="seeded",
                              mechanism="fast", source="x", column_ids=list("abc"))
    with pytest.raises(ValueError, match="3 columns"):
        w.write(np.zeros((2, 4), dtype=int), 0.5, ["0", "1"])
    with pytest.raises(ValueError, match="3 columns"):
        w.write(np.zeros((2, 3)), 0.5, ["0", "1"])  # floats are not counts
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        w.write(np.zeros((2, 3), dtype=int), 1.5, ["0", "1"])
    with pytest.raises(ValueError, match="row ids"):
        w.write(np.zeros((2, 3), dtype=int), 0.5, ["0"])
    with pytest.raises(ValueError, match="no block"):
        w.close()
    with pytest.raises(ValueError, match="unfinished|no meta.json"):
        PrivatizedBlocks(tmp_path / "b")  # never closed: not readable
    data = _write(tmp_path, [np.ones((2, 3), dtype=int)])
    with pytest.raises(ValueError, match="block 1 of"):
        data.read_block(1)
    (tmp_path / "d" / "block_00000.npz").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="sha256"):
        data.read_block(0)
    meta = json.loads((tmp_path / "d" / "meta.json").read_text())
    meta["format_version"] = 99
    (tmp_path / "d" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="version"):
        PrivatizedBlocks(tmp_path / "d")
    with pytest.raises(ValueError, match="seed"):
        privatize_blocks([np.ones((1, 3), dtype=int)], tmp_path / "e", n_cols=3, epsilon=1,
                         N=1, seed=-1, source="x", column_ids=list("abc"))
