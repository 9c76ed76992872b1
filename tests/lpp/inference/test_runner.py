"""The run loop's checks of the checkpoint path, made before the first sweep: a bad path would
otherwise fail, or overwrite someone's file, at the first checkpoint write."""
import re

import pytest

from lpp.formats.fits import DATA_FILE, load_fit, save_fit
from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.inference.runner import checkpoint_path

RUN = {"n_iter": 4, "burn_in": 2, "checkpoint_every": 2, "progress": False}


def _fit(topic_data, checkpoint, sweeps=None, **kwargs):
    _, _, y_tilde, alpha = topic_data
    callback = None if sweeps is None else (lambda chain: sweeps.append(chain.iteration))
    return fit_private(y_tilde, alpha, TopicModel(2), rng=5,
                       run=RunOptions(checkpoint=checkpoint, callback=callback,
                                      **{**RUN, **kwargs}))


@pytest.mark.parametrize("resume", [False, True])
def test_a_folder_is_refused_before_any_sweep(topic_data, tmp_path, resume):
    sweeps = []
    with pytest.raises(ValueError, match=re.escape(f"checkpoint='{tmp_path}' is a folder")):
        _fit(topic_data, tmp_path, sweeps, resume=resume)
    assert sweeps == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("resume", [False, True])
def test_a_saved_fit_is_never_overwritten(topic_data, tmp_path, resume):
    save_fit(_fit(topic_data, None), tmp_path / "fit", data="d")
    data_file = tmp_path / "fit" / DATA_FILE
    before = data_file.read_bytes()
    sweeps = []
    with pytest.raises(ValueError, match=re.escape(f"checkpoint='{data_file}' is the data file "
                                                   "of a saved fit (format 'lpp.fit')")):
        _fit(topic_data, data_file, sweeps, resume=resume)
    with pytest.raises(ValueError, match=re.escape(f"checkpoint='{tmp_path / 'fit'}' is a saved "
                                                   "fit's folder")):
        _fit(topic_data, tmp_path / "fit", sweeps, resume=resume)
    assert sweeps == [] and data_file.read_bytes() == before
    assert load_fit(tmp_path / "fit").n_saved == 2


def test_another_file_is_never_overwritten(topic_data, tmp_path):
    path = tmp_path / "notes.npz"
    path.write_bytes(b"someone's notes")
    with pytest.raises(ValueError, match=re.escape(f"checkpoint='{path}' is an existing file "
                                                   "that is not a checkpoint")):
        _fit(topic_data, path)
    assert path.read_bytes() == b"someone's notes"


def test_a_path_under_a_file_is_refused(topic_data, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    sweeps = []
    with pytest.raises(ValueError, match=r"checkpoint=.*notes.txt.*is not a folder"):
        _fit(topic_data, tmp_path / "notes.txt" / "sub" / "c.npz", sweeps)
    assert sweeps == [] and (tmp_path / "notes.txt").read_text() == "mine"


def test_a_checkpoint_or_an_empty_file_is_overwritten_as_before(topic_data, tmp_path):
    path = tmp_path / "c.npz"
    path.write_bytes(b"")  # e.g. a name reserved with tempfile.mkstemp
    _fit(topic_data, path)
    assert checkpoint_path(path, resume=False) == path  # what the run wrote is a checkpoint
    raw = path.read_bytes()
    path.write_bytes(raw[:len(raw) // 2])  # damaged: starting over overwrites it
    assert _fit(topic_data, path, n_iter=6).iterations_done == 6
    assert _fit(topic_data, path, n_iter=8, resume=True).iterations_done == 8


def test_a_missing_folder_is_created(topic_data, tmp_path):
    path = tmp_path / "a" / "b" / "c.npz"
    _fit(topic_data, path)
    assert _fit(topic_data, path, n_iter=6, resume=True).iterations_done == 6


def test_without_a_checkpoint_nothing_is_checked():
    assert checkpoint_path(None, resume=False) is None
    with pytest.raises(ValueError, match="resume=True needs the checkpoint path"):
        checkpoint_path(None, resume=True)


def test_the_bar_measures_its_rate_on_sweeps_after_the_first(topic_data, monkeypatch):
    """The first sweep of a run compiles numba's kernels (or loads them): a bar that counted
    it would estimate the time left from the compilation. The bar that counts the sweeps is
    started after it, at the chain's iteration; the first bar only shows the start."""
    import lpp.inference.runner as runner

    events = []

    class Bar:
        def __init__(self, *, total, initial, **_):
            self.n = initial
            events.append(("bar", initial, total))

        def update(self, n=1):
            self.n += n

        def set_postfix_str(self, *args, **kwargs):
            pass

        def close(self):
            events.append(("close", self.n))

    monkeypatch.setattr(runner, "tqdm", Bar)
    sweeps = []
    _fit(topic_data, None, sweeps, progress=True)
    assert sweeps == [1, 2, 3, 4]
    assert events == [("bar", 0, 4), ("close", 0), ("bar", 1, 4), ("close", 4)]
