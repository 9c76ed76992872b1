"""study.topic_words: every fit's top words per topic, aligned to the non-private fit's."""
from types import SimpleNamespace

import numpy as np
import pytest

from lpp.formats.fits import save_fit
from lpp.inference import RunOptions, TopicModel, fit_nonprivate
from study.topic_words import WORD_COLUMNS, mean_topics, plot_topic_words, topic_word_table

VOCABULARY = [f"w{v}" for v in range(12)]
#: three topics on disjoint words (w0-w3, w4-w7, w8-w11), decreasing weight within each
BLOCK = np.array([8.0, 4.0, 2.0, 1.0])
TOPICS = np.stack([np.concatenate([BLOCK if j == k else np.full(4, 0.01) for j in range(3)])
                   for k in range(3)])


def _save(fits_dir, name, method, phi, **extra):
    """A saved topic-model fit with the given samples of phi (S x K x V)."""
    n_saved, n_topics, _ = phi.shape
    result = SimpleNamespace(
        mu_hat=np.ones((5, phi.shape[2])),
        samples={"phi": phi, "theta": np.ones((n_saved, 5, n_topics))},
        log_joint=np.zeros(n_saved), saved_iterations=np.arange(n_saved),
        iter_seconds=np.full(2, 0.1), method=method,
        model={"model": "topics", "n_components": n_topics}, seed=1, n_iter=2, burn_in=0,
        thin=1, iterations_done=2, interrupted=False, n_saved=n_saved)
    save_fit(result, fits_dir / name, data="somewhere", extra=extra)


def _hellinger(p, q):
    p, q = p / p.sum(), q / q.sum()
    return np.sqrt(0.5 * np.sum((np.sqrt(p) - np.sqrt(q)) ** 2))


def test_mean_topics_normalises_each_sample_before_averaging():
    phi = np.stack([TOPICS, 10 * TOPICS[::-1]])  # a sample's scale must not weigh it
    fit = SimpleNamespace(samples={"phi": phi})
    rows = TOPICS / TOPICS.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(mean_topics(fit), (rows + rows[::-1]) / 2)
    with pytest.raises(ValueError, match="no saved samples of phi"):
        mean_topics(SimpleNamespace(samples={"theta": phi}))


@pytest.fixture
def fits(tmp_path):
    rng = np.random.default_rng(0)
    _save(tmp_path, "nonprivate", "nonprivate", TOPICS[None])
    # a private fit that found the same topics in another order, with a little noise
    permutation = [2, 0, 1]
    noisy = TOPICS[permutation] + rng.uniform(0, 0.5, TOPICS.shape)
    _save(tmp_path, "collapsed_eps1.0_rep0", "collapsed", noisy[None], epsilon_over_n=1.0)
    # and one that lost the topics: every topic is the same flat distribution
    _save(tmp_path, "naive_eps1.0_rep0", "naive", np.ones((1, 3, 12)), epsilon_over_n=1.0)
    return tmp_path, permutation, noisy


def test_the_topics_are_matched_to_the_reference_and_listed_as_words(fits):
    fits_dir, permutation, noisy = fits
    table = topic_word_table(fits_dir, VOCABULARY, n_words=4)
    assert list(table.columns) == list(WORD_COLUMNS)
    assert list(dict.fromkeys(table.fit)) == ["nonprivate", "collapsed_eps1.0_rep0",
                                              "naive_eps1.0_rep0"]
    reference = table[table.fit == "nonprivate"]
    assert reference.distance.tolist() == [0, 0, 0]
    assert reference.words.tolist() == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9 w10 w11"]
    # fitted topic j is reference topic permutation[j]: row `topic` t must name that j
    private = table[table.fit == "collapsed_eps1.0_rep0"]
    assert private.topic.tolist() == [0, 1, 2]
    assert [permutation[j] for j in private.fitted_topic] == [0, 1, 2]
    for row in private.itertuples():
        assert set(row.words.split()) == set(reference.words.iloc[row.topic].split())
        assert row.distance == pytest.approx(_hellinger(noisy[row.fitted_topic], TOPICS[row.topic]))
    flat = table[table.fit == "naive_eps1.0_rep0"]
    assert sorted(flat.fitted_topic) == [0, 1, 2]  # still one to one
    assert (flat.distance > 2 * private.distance.max()).all()
    assert flat.epsilon_over_n.tolist() == [1.0] * 3 and reference.epsilon_over_n.isna().all()


def test_bad_folders_are_refused_with_the_reason(tmp_path):
    _save(tmp_path, "collapsed_eps1.0_rep0", "collapsed", TOPICS[None], epsilon_over_n=1.0)
    with pytest.raises(FileNotFoundError, match="no fit named 'nonprivate'"):
        topic_word_table(tmp_path, VOCABULARY)
    _save(tmp_path, "nonprivate", "nonprivate", TOPICS[None])
    with pytest.raises(ValueError, match="12 words; the vocabulary has 11"):
        topic_word_table(tmp_path, VOCABULARY[:-1])
    _save(tmp_path, "naive_eps1.0_rep0", "naive", TOPICS[None, :2], epsilon_over_n=1.0)
    with pytest.raises(ValueError, match="2 topics; the reference fit 'nonprivate' has 3"):
        topic_word_table(tmp_path, VOCABULARY)


def test_the_figure_has_a_column_per_method_and_level(fits, tmp_path):
    fits_dir, _, _ = fits
    _save(fits_dir, "collapsed_eps3.0_rep0", "collapsed", TOPICS[None], epsilon_over_n=3.0)
    _save(fits_dir, "collapsed_eps3.0_rep1", "collapsed", TOPICS[None], epsilon_over_n=3.0)
    table = topic_word_table(fits_dir, VOCABULARY)
    out = tmp_path / "words.png"
    fig = plot_topic_words(table, n_show=4, figure=out, title="Mine")
    axis = fig.axes[0]
    # the reference, then each method's levels, least private first, the first copy only
    assert [t.get_text() for t in axis.get_xticklabels()] == [
        "nonprivate\n(reference)", "collapsed\nε/N = 3", "collapsed\nε/N = 1", "naive\nε/N = 1"]
    assert [t.get_text() for t in axis.get_yticklabels()] == ["topic 0", "topic 1", "topic 2"]
    cells = [t.get_text() for t in axis.texts]
    assert cells[0] == "w0 w1\nw2 w3" and len(cells) == 3 * 4
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="empty"):
        plot_topic_words(table.iloc[:0])


def test_a_fit_of_several_chains_is_shown_by_its_first_chain(tmp_path):
    rng = np.random.default_rng(0)
    counts = rng.poisson(np.ones((8, 1)) @ TOPICS[:1] + 0.1)
    several = fit_nonprivate(counts, TopicModel(2),
                             run=RunOptions(n_iter=6, burn_in=2, thin=2, progress=False), rng=3,
                             chains=2)
    save_fit(several, tmp_path / "nonprivate", data="memory")
    table = topic_word_table(tmp_path, VOCABULARY, n_words=3)
    first = mean_topics(several.chains[0])
    assert sorted(table.fitted_topic) == [0, 1] and (table.distance == 0).all()
    for _, row in table.iterrows():
        top = np.argsort(-first[row.fitted_topic], kind="stable")[:3]
        assert set(row.words.split()) == {VOCABULARY[v] for v in top}
