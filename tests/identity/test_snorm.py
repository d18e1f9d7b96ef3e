"""Adaptive s-norm: the formula, the top-N selection, and its effect on scores."""

from __future__ import annotations

import numpy as np
import pytest

from egomem.errors import InputError
from egomem.identity.cohort import load_cohort
from egomem.identity.snorm import SNorm, snorm, top_n_stats


def test_top_n_stats_uses_only_the_closest_impostors() -> None:
    st = top_n_stats(np.array([0.9, 0.1, 0.8, -0.5, 0.7]), 3)
    assert st.mean == pytest.approx(0.8)
    assert st.std == pytest.approx(np.std([0.9, 0.8, 0.7]))
    assert top_n_stats(np.array([0.2, 0.4]), 10).mean == pytest.approx(0.3)  # N larger than the cohort


def test_snorm_is_the_mean_of_the_two_z_scores() -> None:
    q, k = top_n_stats(np.array([0.1, 0.3]), 2), top_n_stats(np.array([0.5, 0.7]), 2)
    raw = 0.8
    expected = 0.5 * ((raw - 0.2) / 0.1 + (raw - 0.6) / 0.1)
    assert snorm(raw, q, k) == pytest.approx(expected)


def test_snorm_changes_ranking_by_penalising_a_hub_key() -> None:
    rng = np.random.default_rng(0)
    d = 16
    hub = rng.standard_normal(d)  # a direction many impostors share
    cohort = np.stack(
        [hub + 0.3 * rng.standard_normal(d) for _ in range(50)] + [rng.standard_normal(d) for _ in range(50)]
    )
    sn = SNorm(cohort, top_n=20)
    query = rng.standard_normal(d)
    key_hub = hub / np.linalg.norm(hub)
    key_plain = rng.standard_normal(d)
    key_plain /= np.linalg.norm(key_plain)
    qn = query / np.linalg.norm(query)
    raw_hub, raw_plain = float(qn @ key_hub), float(qn @ key_plain)
    s_hub, s_plain = sn.score(raw_hub, query, key_hub), sn.score(raw_plain, query, key_plain)
    # The hub key's cohort mean is high, so its normalised score drops relative to its raw score.
    assert sn.stats(key_hub).mean > sn.stats(key_plain).mean + 0.3
    assert (s_hub - s_plain) < (raw_hub - raw_plain) / sn.stats(key_plain).std


def test_bad_cohort_is_rejected() -> None:
    with pytest.raises(InputError):
        SNorm(np.zeros((0, 4)))
    with pytest.raises(InputError):
        SNorm(np.zeros((3, 4)))
    with pytest.raises(InputError):
        top_n_stats(np.zeros(0), 5)


def test_shipped_cohort_loads() -> None:
    c = load_cohort()
    assert c.shape[1] == 256 and 100 <= c.shape[0] <= 1000
    assert np.allclose(np.linalg.norm(c, axis=1), 1.0, atol=1e-3)
