"""Scores of a fit against the true counts: the paper's measures for each case study.

These read the true counts, so only evaluation stages call them — never an inference stage.

* topics (Sec. 5.1): reconstruction MAE of ``mu_hat`` over all entries; NPMI (under both
  conventions for a pair of top words that never co-occur: -1, NPMI's floor, and 0, as in
  Lau et al.'s toolkit) and Mimno coherence of each topic's top words with the true counts
  as reference corpus, averaged over topics for each saved sample of ``phi``, then over
  samples; the Poisson predictive log-likelihood of the true counts;
* communities (Sec. 5.2): reconstruction MAE over the *observed* off-diagonal entries (the
  paper's measure: the entries inference saw; the diagonal is never modelled), MAE over all
  off-diagonal entries, and, on the held-out entries alone, MAE and the Poisson predictive
  log-likelihood (link prediction). A fit that ignored the held-out mask (its ``fit.json``
  records ``heldout_used: false``; the arXiv version of the paper measures reconstruction on
  such separate runs) observed every entry: its MAE is over every off-diagonal entry and it
  has no held-out scores. The table's ``heldout_used`` column tells the two designs apart.

MAE rewards shrinkage on sparse counts, so every table also holds reference rows
(:func:`topic_references`, :func:`community_references`): predicting zero everywhere, and
the oracle that predicts the true rates where they are known (simulated data; real data have
none, and their oracle row is NaN). The predictive log-likelihood is a proper score and
cannot be gamed that way: a rate of zero has log-likelihood ``-inf`` at any positive count.

The synthetic topic experiment picks and aligns its topics with :func:`best_aligned_topics`;
the recovery map scores a fit by :func:`topic_recovery_scores`: the support score
(:func:`topic_support`) of the highest-joint draw and of the aligned posterior mean
(:func:`aligned_posterior_mean`), beside their Hellinger distances to the truth.
The compendium's score tables and figures over every fit of a case study are built on these
(``study.reports``).
"""
from __future__ import annotations

import numpy as np

from lpp.inference.kernels import product_kernel
from lpp.inference.models import model_from_params
from lpp.metrics import (ReferenceCorpus, align_topics, mae, mean_over_topics, mimno_coherence,
                         network_masks, npmi, predictive_log_likelihood, top_words, zeros_mae)
from lpp.metrics.predictive import pointwise_predictive_log_likelihood
from lpp.validation import check_int

#: rows of a score table that are references, not fits of a private method
NONPRIVATE = "nonprivate"
ZEROS = "zeros"
ORACLE = "oracle"
REFERENCES = (NONPRIVATE, ZEROS, ORACLE)
# rows of rates formed at a time for the predictive log-likelihood of a factorised model:
# a 10,000 x 10,000 rate matrix is 800 MB, a block of rows a few MB
_ROW_BLOCK = 256


def _factor_rates(model, state, rows) -> np.ndarray:
    # the fixed-order product the models use, so the score repeats to the bit on any thread count
    theta, phi = model.row_column_factors(state)
    return product_kernel(np.ascontiguousarray(theta[rows]), phi)


def fit_predictive_log_likelihood(fit, true_counts, mask=None) -> float:
    """Mean Poisson predictive log-likelihood of the true counts under a fit's saved samples.

    The rates of each saved sample are rebuilt from its latents (``model.rate``) a block of
    rows at a time, so a paper-scale topic model never holds a full rate matrix per sample.

    Parameters
    ----------
    fit : lpp.inference.ChainResult or FitResult
        A chain (or a fit of one) that saved its latents (``fit.samples``), its model's
        ``params()`` in ``fit.model``.
    true_counts : array_like or scipy sparse matrix
        The true counts (2-d, the fit's shape).
    mask : array_like of bool, optional
        True marks the scored entries; None scores every entry.

    Returns
    -------
    float
        ``mean over scored entries of log((1/S) sum_s Pois(y; mu_s))`` (higher is better).

    Raises
    ------
    ValueError
        If the fit saved no latents, or shapes disagree (see
        :func:`lpp.metrics.predictive_log_likelihood`).
    """
    latents = {name: draws for name, draws in fit.samples.items() if name != "y"}
    if not latents or "model" not in (fit.model or {}):
        raise ValueError("the fit saved no latents of a known model: its rates are unknown")
    model = model_from_params(fit.model)
    shape = tuple(fit.mu_hat.shape)
    n_saved = next(iter(latents.values())).shape[0]
    if "row_column_factors" not in model.capabilities:
        states = ({k: v[s] for k, v in latents.items()} for s in range(n_saved))
        return predictive_log_likelihood((model.rate(st) for st in states), true_counts, mask)
    y = true_counts.tocsr() if hasattr(true_counts, "tocsr") else np.asarray(true_counts)
    if tuple(y.shape) != shape:
        raise ValueError(f"the counts have shape {y.shape}, the fit {shape}")
    held = None if mask is None else np.asarray(mask, dtype=bool)
    total, count = 0.0, 0
    for start in range(0, shape[0], _ROW_BLOCK):
        rows = slice(start, min(start + _ROW_BLOCK, shape[0]))
        block_mask = None if held is None else held[rows]
        if block_mask is not None and not block_mask.any():
            continue
        rates = (_factor_rates(model, {k: v[s] for k, v in latents.items()}, rows)
                 for s in range(n_saved))
        values = pointwise_predictive_log_likelihood(rates, y[rows], block_mask)
        total += float(values.sum())
        count += values.size
    if count == 0:
        raise ValueError("mask selects no entries; nothing to score")
    return total / count


def topic_scores(fit, true_counts, *, reference: ReferenceCorpus | None = None,
                 n_top: int = 10) -> dict:
    """MAE, NPMI (both conventions), coherence and predictive log-likelihood of a topic fit.

    ``npmi`` scores a pair of top words that never co-occur in the reference corpus -1
    (NPMI's floor), ``npmi_zero`` scores it 0 (Lau et al.'s toolkit); both average over
    topics per saved sample of ``phi`` (S x K x V), then over samples, as the paper does.
    ``loglik`` is :func:`fit_predictive_log_likelihood` of the true counts (every entry).
    """
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3:
        raise ValueError("the fit holds no saved samples of phi (S x K x V)")
    if fit.mu_hat.shape != tuple(true_counts.shape):
        raise ValueError(f"mu_hat has shape {fit.mu_hat.shape}, the counts {true_counts.shape}")
    reference = reference if reference is not None else ReferenceCorpus(true_counts)
    tops = [top_words(p, n_top) for p in phi]
    npmi_per_sample = [mean_over_topics(npmi(t, reference)) for t in tops]
    npmi_zero_per_sample = [mean_over_topics(npmi(t, reference, no_cooccurrence=0.0))
                            for t in tops]
    coherence_per_sample = [mean_over_topics(mimno_coherence(t, reference)) for t in tops]
    return {"mae": mae(fit.mu_hat, true_counts),
            "npmi": float(np.mean(npmi_per_sample)),
            "npmi_zero": float(np.mean(npmi_zero_per_sample)),
            "coherence": float(np.mean(coherence_per_sample)),
            "loglik": fit_predictive_log_likelihood(fit, true_counts),
            "n_samples": int(phi.shape[0])}


def heldout_used(fit) -> bool:
    """Whether a fit was run with the data's held-out mask (the masked design).

    The inference notebooks record it as ``heldout_used`` in the fit's ``extra``; a fit that
    does not record it predates the unmasked design and was masked.

    Parameters
    ----------
    fit : lpp.inference.FitResult or ChainResult
        A saved fit or one of its chains (its :attr:`~lpp.inference.FitResult.metadata`); a
        chain in memory counts as masked.

    Returns
    -------
    bool
        False for a fit of every entry (the arXiv design's reconstruction runs).
    """
    return fit.metadata is None or fit.metadata.heldout_used


def community_scores(fit, true_counts, heldout: np.ndarray | None) -> dict:
    """A network fit's reconstruction and link-prediction scores.

    ``mae``: MAE over the observed off-diagonal entries (those inference saw: the paper's
    reconstruction error); ``offdiag_mae``: over every off-diagonal entry, held-out ones
    included; and when entries were held out, ``heldout_mae`` and ``heldout_loglik`` (mean
    Poisson predictive log-likelihood, :func:`fit_predictive_log_likelihood`) over them.

    A fit that ignored the mask (:func:`heldout_used` false) saw every entry: its ``mae`` is
    over every off-diagonal entry (equal to ``offdiag_mae``) and, when ``heldout`` marks
    entries, its ``heldout_mae`` and ``heldout_loglik`` are NaN (it was trained on them, so
    they measure no prediction).
    """
    shape = tuple(true_counts.shape)
    if fit.mu_hat.shape != shape or shape[0] != shape[1]:
        raise ValueError(f"mu_hat {fit.mu_hat.shape} and counts {shape} must be the same square shape")
    masks = network_masks(shape, None if heldout is None else np.asarray(heldout, dtype=bool))
    if not heldout_used(fit):
        value = mae(fit.mu_hat, true_counts, masks["off_diagonal"])
        scores = {"mae": value, "offdiag_mae": value}
        if masks["heldout"].any():
            scores.update(heldout_mae=np.nan, heldout_loglik=np.nan)
        return scores
    scores = {"mae": mae(fit.mu_hat, true_counts, masks["observed"]),
              "offdiag_mae": mae(fit.mu_hat, true_counts, masks["off_diagonal"])}
    if masks["heldout"].any():
        scores["heldout_mae"] = mae(fit.mu_hat, true_counts, masks["heldout"])
        scores["heldout_loglik"] = fit_predictive_log_likelihood(fit, true_counts,
                                                                 masks["heldout"])
    return scores


def _poisson_loglik(rates, y, mask=None) -> float:
    """Mean Poisson log-likelihood of fixed rates (one "sample"): ``-inf`` where a rate of 0
    meets a positive count, as for a fit."""
    return predictive_log_likelihood(np.asarray(rates, dtype=np.float64)[None], y, mask)


def topic_references(true_counts, true_rates=None) -> list[dict]:
    """The reference rows of a topic score table: predict zero, and the oracle.

    Parameters
    ----------
    true_counts : array_like or scipy sparse matrix
        The true D x V counts.
    true_rates : array_like, optional
        The rates the counts were drawn from, where known (simulated data). Real data have
        none: the oracle row is then NaN, never estimated.

    Returns
    -------
    list of dict
        Rows ``zeros`` and ``oracle`` with ``mae`` and ``loglik`` (the other columns NaN).
    """
    y = true_counts
    zero = np.zeros(y.shape)
    rows = [{"fit": ZEROS, "method": ZEROS, "mae": zeros_mae(y),
             "loglik": _poisson_loglik(zero, y)}]
    if true_rates is None:
        rows.append({"fit": ORACLE, "method": ORACLE, "mae": np.nan, "loglik": np.nan})
    else:
        rows.append({"fit": ORACLE, "method": ORACLE, "mae": mae(true_rates, y),
                     "loglik": _poisson_loglik(true_rates, y)})
    return rows


def community_references(true_counts, heldout=None, true_rates=None) -> list[dict]:
    """The reference rows of a network score table: predict zero, and the oracle.

    Scored on the same entries as :func:`community_scores` (observed, all off-diagonal,
    held-out). Parameters as :func:`topic_references`, with ``heldout`` the held-out mask.

    Returns
    -------
    list of dict
        Rows ``zeros`` and ``oracle`` (NaN when ``true_rates`` is None).
    """
    y = np.asarray(true_counts.toarray() if hasattr(true_counts, "toarray") else true_counts)
    masks = network_masks(y.shape, None if heldout is None else np.asarray(heldout, dtype=bool))

    def row(name, rates):
        if rates is None:
            values = {"mae": np.nan, "offdiag_mae": np.nan}
            if masks["heldout"].any():
                values.update(heldout_mae=np.nan, heldout_loglik=np.nan)
            return {"fit": name, "method": name, **values}
        values = {"mae": mae(rates, y, masks["observed"]),
                  "offdiag_mae": mae(rates, y, masks["off_diagonal"])}
        if masks["heldout"].any():
            values["heldout_mae"] = mae(rates, y, masks["heldout"])
            values["heldout_loglik"] = _poisson_loglik(rates, y, masks["heldout"])
        return {"fit": name, "method": name, **values}

    return [row(ZEROS, np.zeros(y.shape)),
            row(ORACLE, None if true_rates is None else np.asarray(true_rates, dtype=float))]


def best_aligned_topics(fit, true_phi) -> tuple[np.ndarray, float]:
    """The saved ``phi`` of highest joint probability, its rows matched to the true topics.

    The synthetic topic-recovery rule: take the saved sample with the largest log joint
    probability (one point estimate, no averaging over label switches), match its topics to
    ``true_phi`` by the Hungarian algorithm on Hellinger distances, and report the mean
    distance of the matched pairs.

    Parameters
    ----------
    fit : ChainResult or FitResult
        A topic-model fit with saved samples ``samples["phi"]`` (S x K x V) and ``log_joint``.
    true_phi : array_like
        The true topics (K x V, rows need not be normalised).

    Returns
    -------
    phi : numpy.ndarray
        The chosen sample of ``phi`` (K x V), rows reordered to match ``true_phi``.
    distance : float
        Mean Hellinger distance between matched topics.

    Raises
    ------
    ValueError
        If the fit holds no saved ``phi``, or the shapes disagree.
    """
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3 or len(fit.log_joint) != phi.shape[0]:
        raise ValueError("the fit holds no saved samples of phi (S x K x V) with their log joint")
    best = phi[int(np.argmax(fit.log_joint))]
    match = align_topics(best, true_phi)
    return best[match.estimated_topics], float(match.distances.mean())


def _saved_topic_draws(fit) -> tuple[np.ndarray, np.ndarray]:
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3 or len(fit.log_joint) != phi.shape[0]:
        raise ValueError("the fit holds no saved samples of phi (S x K x V) with their log joint")
    return phi, np.asarray(fit.log_joint)


def aligned_posterior_mean(fit) -> np.ndarray:
    """The posterior mean of a topic fit's topics, with label switching undone.

    Each saved draw of ``phi`` is normalised row by row (a Poisson factorisation's topic
    carries a scale that its document weights can absorb; the topic is the distribution), its
    topics matched (Hungarian algorithm on Hellinger distances,
    :func:`lpp.metrics.align_topics`) to those of the draw with the highest log joint
    probability, and the matched draws are averaged. The reference is chosen without the
    true topics, so the mean is an estimate a user without the truth could form.

    Parameters
    ----------
    fit : ChainResult or FitResult
        A topic-model fit with saved samples ``samples["phi"]`` (S x K x V) and ``log_joint``.

    Returns
    -------
    numpy.ndarray
        K x V, each row a topic-word distribution (sums to 1), in the reference draw's order.

    Raises
    ------
    ValueError
        If the fit holds no saved ``phi`` with its log joint, or a topic of a draw has no
        weight.
    """
    phi, log_joint = _saved_topic_draws(fit)
    reference = phi[int(np.argmax(log_joint))]
    total = np.zeros(phi.shape[1:], dtype=np.float64)
    for draw in phi:
        match = align_topics(draw, reference)
        rows = np.asarray(draw, dtype=np.float64)[match.estimated_topics]
        total[match.true_topics] += rows / rows.sum(axis=1, keepdims=True)
    return total / phi.shape[0]


def topic_support(phi, true_phi, *, words_per_topic: int) -> float:
    """How much of each fitted topic's mass lies on its true topic's own words.

    The fitted topics are matched to the true ones (Hungarian algorithm on Hellinger
    distances); for each matched pair, the share of the fitted topic's normalised mass on the
    true topic's ``words_per_topic`` heaviest words (ties broken by the lower word index) is
    taken, and the shares are averaged. Perfect recovery scores the true topics' own share
    (0.9 for :func:`lpp.simulate.make_topics`' default); uniform topics score
    ``words_per_topic / V``.

    Parameters
    ----------
    phi : array_like
        Fitted topics (K_hat x V, non-negative, rows need not be normalised).
    true_phi : array_like
        The true topics (K x V).
    words_per_topic : int
        How many of a true topic's heaviest words are its own (1 to V).

    Returns
    -------
    float
        The mean share over the ``min(K_hat, K)`` matched topics, in [0, 1].

    Raises
    ------
    ValueError
        If ``words_per_topic`` is not in 1..V, or the topics are not valid (see
        :func:`lpp.metrics.topic_distances`).
    """
    true_phi = np.asarray(true_phi, dtype=np.float64)
    n_words = true_phi.shape[-1]
    words_per_topic = check_int(words_per_topic, "words_per_topic", minimum=1)
    if words_per_topic > n_words:
        raise ValueError(f"words_per_topic must be at most the vocabulary's V = {n_words}, "
                         f"got {words_per_topic}")
    match = align_topics(phi, true_phi)
    fitted = np.asarray(phi, dtype=np.float64)[match.estimated_topics]
    fitted = fitted / fitted.sum(axis=1, keepdims=True)
    own = np.argsort(-true_phi[match.true_topics], axis=1, kind="stable")[:, :words_per_topic]
    return float(np.take_along_axis(fitted, own, axis=1).sum(axis=1).mean())


def topic_recovery_scores(fit, true_phi, *, words_per_topic: int) -> dict:
    """A topic fit's recovery of known topics, by its highest-joint draw and its posterior mean.

    Parameters
    ----------
    fit : ChainResult or FitResult
        A topic-model fit with saved samples ``samples["phi"]`` (S x K x V) and ``log_joint``.
    true_phi : array_like
        The true topics (K x V).
    words_per_topic : int
        As for :func:`topic_support`.

    Returns
    -------
    dict
        ``draw_support`` and ``draw_hellinger``: :func:`topic_support` and the mean matched
        Hellinger distance (:func:`best_aligned_topics`) of the highest-joint draw;
        ``mean_support`` and ``mean_hellinger``: the same of :func:`aligned_posterior_mean`.
    """
    best, draw_hellinger = best_aligned_topics(fit, true_phi)
    mean = aligned_posterior_mean(fit)
    return {"draw_support": topic_support(best, true_phi, words_per_topic=words_per_topic),
            "draw_hellinger": draw_hellinger,
            "mean_support": topic_support(mean, true_phi, words_per_topic=words_per_topic),
            "mean_hellinger": float(align_topics(mean, true_phi).distances.mean())}
