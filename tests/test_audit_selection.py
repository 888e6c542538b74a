"""The private-selection audit target ``selection`` (issue 18: "a selection target in the audit harness
(worst-case neighbours that change which candidate wins) passes").

The target (:mod:`dpconvex.audit.targets_selection`) runs the selection of the ``…CV`` estimators on a
fixed split with the real noisy_gd trainer.  Independent oracles here: the candidates' noiseless
outputs x/(1 + λ)·(1 − c^K) and their scores, typed out; the probability that the strongly
regularised λ wins when the runs' noise is negligible, γ/(1 + γ) for the geometric law (a sum over
K written out below), against 4,000 seeded releases (|z| < 5: false-failure rate < 1e-6); Google's
dp-accounting for the certificate.

Seeded audits: the honest target passes (alpha = 1e-3: a correct mechanism fails with probability
≤ 1e-3 over seeds; margin −0.84 at 600 runs, the quick audit of ``test_audit.py`` too) and the
trainer adding half the noise fails (:data:`MUTATIONS`, in the format of
``test_audit_mutations.MUTATIONS``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

from dpconvex.audit import AUDITS, noise_mutant, run_audit
from dpconvex.audit.targets import NOISY_GD_SETTING
from dpconvex.audit.targets_selection import SELECTION_SETTING, selection_pair, selection_release
from dpconvex.mechanisms import MECHANISMS

NAME = "selection"
TARGET = AUDITS[NAME]

#: target → (runs per neighbour, noise factor) of its mutation test (the format of
#: ``test_audit_mutations.MUTATIONS``).  With half the noise the release is one noisy_gd run at 2μ in 95 % of
#: the releases (K = 1), the selection's winner otherwise.  100 audits resampled from 24,000 releases per
#: neighbour: profile margin +0.34 ± 0.07 at 8,000 runs, none passed (false pass Φ(−5.1) ≈ 2e-7; +0.25 ± 0.07
#: at 4,000, 1 % passed); honest −0.84 at 600 runs.
MUTATIONS = {"selection": (8000, 0.5)}


def _noiseless_output(x: float, value: float) -> float:
    """θ_K of noisy GD on ½(θ − x)² + (λ/2)θ² from θ₀ = 0 at η = 1/(2β), β = 1 + λ, K iterations, without noise."""
    eta = 1 / (2 * (1 + value))
    contraction = 1 - eta * (1 + value)
    return x / (1 + value) * (1 - contraction ** SELECTION_SETTING["iterations"])


def test_the_target_is_registered_for_the_noisy_gd_trainer():
    assert TARGET.mechanism == "noisy_gd" and TARGET.mechanism in MECHANISMS
    assert TARGET.delta == NOISY_GD_SETTING["delta"] and SELECTION_SETTING["epsilon"] == NOISY_GD_SETTING["epsilon"]
    assert TARGET.exact_law is None  # a mixture over the winner


def test_the_canary_changes_which_candidate_wins():
    pair = selection_pair()
    assert pair.X[1, 0] == pair.X_prime[1, 0] == 1.0 and pair.y[1] == 1.0  # the validation record is shared
    weak, strong = SELECTION_SETTING["grid"]
    for x, winner in ((pair.X[0, 0], weak), (pair.X_prime[0, 0], strong)):
        scores = {v: -abs(np.clip(_noiseless_output(x, v), -1, 1) - 1) for v in (weak, strong)}
        assert max(scores, key=scores.get) == winner
        assert abs(scores[weak] - scores[strong]) > 0.7  # 0.74: far above the noise of the test below


def test_with_negligible_noise_the_winner_follows_the_scores():
    """P[release = the strong λ's output on D] = P[every run drew it] = Σ_k γ(1 − γ)^{k−1} 2^{−k} = γ/(1 + γ)."""
    pair = selection_pair()
    gamma = 1 / SELECTION_SETTING["expected_runs"]  # the geometric law: E[K] = 1/γ
    expected = gamma / (1 + gamma)
    draws = 4000
    weak, strong = SELECTION_SETTING["grid"]
    # on D the strong λ loses to the weak one whenever both ran, on D′ the weak λ loses: the loser is
    # released only if every run drew it
    for X, loser, winner in ((pair.X, strong, weak), (pair.X_prime, weak, strong)):
        x = X[0, 0]
        releases = np.array([selection_release(X, pair.y, seed, 1e-6, TARGET.delta).coef[0] for seed in range(draws)])
        lost = np.isclose(releases, _noiseless_output(x, loser), atol=1e-4)
        assert np.all(lost | np.isclose(releases, _noiseless_output(x, winner), atol=1e-4))
        assert abs(lost.mean() - expected) < 5 * math.sqrt(expected * (1 - expected) / draws)


def test_the_certificate_meets_the_target_and_is_the_theorems():
    pair = selection_pair()
    report = selection_release(pair.X, pair.y, 0, TARGET.sigma(), TARGET.delta).certificate
    assert report.bound == "truncated-negative-binomial" and report.mechanism == "private_selection"
    assert NOISY_GD_SETTING["epsilon"] * (1 - 2e-4) <= report.epsilon <= NOISY_GD_SETTING["epsilon"]
    mu = report.assumptions["base_mu"]
    assert mu == pytest.approx(1 / TARGET.sigma(), rel=1e-9)  # every candidate at the per-run μ (quadratic: exact)
    accountant = dp_rdp.RdpAccountant(neighboring_relation=dp_rdp.NeighborRel.REPLACE_ONE)
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1 / mu),
                                                       SELECTION_SETTING["expected_runs"], 1.0))
    assert report.epsilon <= accountant.get_epsilon(TARGET.delta) <= 1.05 * report.epsilon


def test_the_honest_selection_passes_its_audit():
    result = run_audit(NAME, runs=600, seed=0)
    assert result.passed, result
    assert result.audit_epsilon_lower <= result.certified_epsilon and result.profile_margin <= 0


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_selection_adding_half_the_noise_fails_the_audit(name):
    runs, factor = MUTATIONS[name]
    result = run_audit(noise_mutant(AUDITS[name], factor), runs=runs, seed=0)
    assert not result.passed, result
    assert result.profile_margin > 0.0
