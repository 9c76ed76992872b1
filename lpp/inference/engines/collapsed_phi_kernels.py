"""The compiled loops of the topic model's engine with the topics' direction summed out
(:mod:`lpp.inference.engines.collapsed_phi`).

The tokens of the known counts are laid out entry by entry in the counts' CSR order (entry
``idx`` owns tokens ``token_ptr[idx]`` to ``token_ptr[idx + 1]``); ``topics[j]`` is token
``j``'s topic. Every loop here is serial: the token sweep is a Gibbs scan whose every draw
reads the counts the draws before it left, so its result is one sequence, the same on any
number of threads.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.distributions import categorical_nb, gamma_rate_nb
from lpp.inference.engines.prefetch import prefetch_cell
from lpp.randomness import new_stream, seed_block, uniform

#: the smoothing mass (``a0`` times the sum of the row's ``c[k]``) is summed afresh after this
#: many tokens, between which each move updates it by its two changed terms: its rounding
#: error stays that of a few dozen additions, at K / RESUM_TOKENS additions per token
RESUM_TOKENS = 32
#: the word list of the entry this many places ahead is hinted into the cache (the lists of a
#: large vocabulary exceed the L2 cache)
_PREFETCH_AHEAD = 8
#: a row's weights ``theta[d, k] * mass[k]`` are formed in logs when their largest falls below
#: this (or overflows): only their ratios matter
_UNDERFLOW = 1e-280


@njit(cache=True)
def _row_weights(theta, mass, d, out):
    """``out[k]`` proportional to ``theta[d, k] * mass[k]``, with a largest term in the normal
    range (the products themselves unless they underflow or overflow)."""
    n_topics = out.size
    top = 0.0
    for k in range(n_topics):
        out[k] = theta[d, k] * mass[k]
        if out[k] > top:
            top = out[k]
    if top > _UNDERFLOW and top < math.inf:
        return
    top = -math.inf
    for k in range(n_topics):
        out[k] = math.log(theta[d, k]) + math.log(mass[k])
        if out[k] > top:
            top = out[k]
    for k in range(n_topics):
        out[k] = math.exp(out[k] - top)


@njit(cache=True)
def token_counts(indptr, cols, token_ptr, topics, n_topics, n_cols):
    """``(doc_topic (D x K), word_topic (V x K), topic_totals (K,))`` of the tokens' topics,
    int64."""
    n_rows = indptr.size - 1
    doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
    word_topic = np.zeros((n_cols, n_topics), dtype=np.int64)
    totals = np.zeros(n_topics, dtype=np.int64)
    for d in range(n_rows):
        for idx in range(indptr[d], indptr[d + 1]):
            v = cols[idx]
            for j in range(token_ptr[idx], token_ptr[idx + 1]):
                k = topics[j]
                doc_topic[d, k] += 1
                word_topic[v, k] += 1
                totals[k] += 1
    return doc_topic, word_topic, totals


@njit(cache=True)
def first_topics(indptr, cols, token_ptr, theta, phi_t, seed, iteration):
    """Every token's topic drawn from ``p(z | y, theta, phi)``: weights ``theta[d, k] *
    phi[k, v]``, independently per token (how a chain starts from explicit topics). Row ``d``
    draws from the stream ``(seed, iteration, d)``."""
    n_rows, n_topics = theta.shape
    topics = np.empty(token_ptr[-1], dtype=np.int32)
    weights = np.empty(n_topics)
    rng = new_stream()
    for d in range(n_rows):
        seed_block(rng, seed, iteration, d)
        for idx in range(indptr[d], indptr[d + 1]):
            v = cols[idx]
            total = 0.0
            for k in range(n_topics):
                weights[k] = theta[d, k] * phi_t[v, k]
                total += weights[k]
            if not (total > _UNDERFLOW and total < math.inf):
                top = -math.inf
                for k in range(n_topics):
                    weights[k] = math.log(theta[d, k]) + math.log(phi_t[v, k])
                    top = max(top, weights[k])
                total = 0.0
                for k in range(n_topics):
                    weights[k] = math.exp(weights[k] - top)
                    total += weights[k]
            for j in range(token_ptr[idx], token_ptr[idx + 1]):
                topics[j] = categorical_nb(rng, weights, total)
    return topics


@njit(cache=True)
def word_lists(indptr, cols, token_ptr, topics, n_topics, n_cols):
    """``(lists, n_listed, totals)``: per word ``v``, the topics that hold its tokens, ascending,
    each beside its token count (``lists[v, 2 i]`` the topic, ``lists[v, 2 i + 1]`` the count,
    ``i < n_listed[v]``: one row read from memory per token), and every topic's total; what
    :func:`sweep_topics` keeps up to date. The lists are a function of the counts (ascending
    topics), so the draws are too: a chain restored from its tokens' topics alone continues as
    it would have."""
    _, word_topic, totals = token_counts(indptr, cols, token_ptr, topics, n_topics, n_cols)
    lists = np.empty((n_cols, 2 * n_topics), dtype=np.int32)
    n_listed = np.zeros(n_cols, dtype=np.int64)
    for v in range(n_cols):
        i = 0
        for k in range(n_topics):
            if word_topic[v, k] > 0:
                lists[v, 2 * i] = k
                lists[v, 2 * i + 1] = word_topic[v, k]
                i += 1
        n_listed[v] = i
    return lists, n_listed, totals


@njit(cache=True)
def topic_word_of_lists(lists, n_listed, n_topics):
    """The K x V token counts (int64) that word lists hold."""
    n_cols = n_listed.size
    out = np.zeros((n_topics, n_cols), dtype=np.int64)
    for v in range(n_cols):
        for i in range(n_listed[v]):
            out[lists[v, 2 * i], v] = lists[v, 2 * i + 1]
    return out


@njit(cache=True)
def sweep_topics(indptr, cols, token_ptr, topics, theta, mass, a0, seed, iteration, lists,
                 n_listed, totals):
    """One Gibbs scan of every token's topic with the topics' directions summed out, in place:
    ``topics`` and the word lists and totals of :func:`word_lists` are updated; returns the
    new ``doc_topic`` (D x K, int64).

    Token ``j`` of row ``d`` and word ``v`` moves to topic ``k`` with probability proportional
    to ``theta[d, k] mass[k] (a0 + n[k, v]) / (V a0 + n[k])``, the counts ``n`` those of every
    other token at that moment. The weight splits into a smoothing term ``a0 c[k]`` and a word
    term ``c[k] n[k, v]``, ``c[k] = theta[d, k] mass[k] / (V a0 + n[k])``: the first summed over
    every topic (kept up to date by its changed terms at each move) and walked in the row's
    order of weights, the second over the topics that hold tokens of ``v`` (the word's list,
    kept in ascending order as the counts change); a uniform picks the term, then the topic
    within it. Rows in order, tokens in the layout's order; row ``d`` draws from the stream
    ``(seed, iteration, d)``.
    """
    n_rows, n_topics = theta.shape
    doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
    prior_mass = n_listed.size * a0
    weights = np.empty(n_topics)
    coef = np.empty(n_topics)
    running = np.empty(n_topics)
    last_entry = indptr[n_rows]
    rng = new_stream()
    for d in range(n_rows):
        seed_block(rng, seed, iteration, d)
        _row_weights(theta, mass, d, weights)
        for k in range(n_topics):
            coef[k] = weights[k] / (prior_mass + totals[k])
        # the smoothing term is walked in the row's order of weights, largest first: the row's
        # own topics hold most of it, so a walk seldom goes far
        order = np.argsort(-weights)
        smooth = 0.0
        since_sum = RESUM_TOKENS  # summed at the row's first token
        for idx in range(indptr[d], indptr[d + 1]):
            if idx + _PREFETCH_AHEAD < last_entry:
                prefetch_cell(lists, cols[idx + _PREFETCH_AHEAD], 0)
            v = cols[idx]
            for j in range(token_ptr[idx], token_ptr[idx + 1]):
                # the token leaves its topic k (listed for v: it holds this token)
                k = topics[j]
                n_v = n_listed[v]
                i = 0
                while lists[v, 2 * i] != k:
                    i += 1
                lists[v, 2 * i + 1] -= 1
                if lists[v, 2 * i + 1] == 0:  # off the list, the later ones moved up
                    n_v -= 1
                    for p in range(2 * i, 2 * n_v):
                        lists[v, p] = lists[v, p + 2]
                    n_listed[v] = n_v
                totals[k] -= 1
                left = k
                kept = coef[k]  # its coefficient with the token, restored if it comes back
                coef[k] = weights[k] / (prior_mass + totals[k])
                if since_sum >= RESUM_TOKENS:
                    smooth = 0.0
                    for q in range(n_topics):
                        smooth += coef[q]
                    smooth *= a0
                    since_sum = 0
                else:
                    smooth += a0 * (coef[k] - kept)
                since_sum += 1
                # the word term over the topics that hold tokens of v
                word = 0.0
                for i in range(n_v):
                    word += coef[lists[v, 2 * i]] * lists[v, 2 * i + 1]
                    running[i] = word
                u = uniform(rng) * (word + smooth)
                if u < word:
                    # the first running sum above u: the sums never decrease, so the count of
                    # those at or below u is its place (at most the last: u < word)
                    i = 0
                    while i < n_v - 1 and not u < running[i]:
                        i += 1
                    k = lists[v, 2 * i]
                    lists[v, 2 * i + 1] += 1
                else:
                    u = (u - word) / a0
                    acc = 0.0
                    k = order[n_topics - 1]
                    for p in range(n_topics):
                        q = order[p]
                        acc += coef[q]
                        if u < acc:
                            k = q
                            break
                    i = 0
                    while i < n_v and lists[v, 2 * i] < k:
                        i += 1
                    if i < n_v and lists[v, 2 * i] == k:
                        lists[v, 2 * i + 1] += 1
                    else:  # onto the list in its place, the later ones moved down
                        for p in range(2 * n_v + 1, 2 * i + 1, -1):
                            lists[v, p] = lists[v, p - 2]
                        lists[v, 2 * i] = k
                        lists[v, 2 * i + 1] = 1
                        n_listed[v] = n_v + 1
                # the token joins topic k
                topics[j] = k
                doc_topic[d, k] += 1
                totals[k] += 1
                old = coef[k]
                # the same quotient as before the token left, when it came back
                coef[k] = kept if k == left else weights[k] / (prior_mass + totals[k])
                smooth += a0 * (coef[k] - old)
    return doc_topic


@njit(cache=True)
def draw_topic_mass(totals, theta_sums, a0, b0, n_cols, seed, iteration):
    """``mass[k] ~ Gamma(V a0 + totals[k], b0 + theta_sums[k])``, on the stream
    ``(seed, iteration, 0)``."""
    rng = new_stream()
    seed_block(rng, seed, iteration, 0)
    out = np.empty(totals.size)
    for k in range(totals.size):
        out[k] = gamma_rate_nb(rng, n_cols * a0 + totals[k], b0 + theta_sums[k])
    return out
