"""Privacy premises of ``sco_noisy_sgd`` that its certificates rely on (complements
``test_mechanism_sco_sgd.py``, which checks the algorithm against Algorithm 1 and its utility).

* Single use (``accounting.private_sco``): every record's gradient enters at most one step, at most
  ⌈n/2⌉ records are used, and the last fresh record's gradient never reaches the released average
  (so at most ⌈n/2⌉ − 1 records do) — checked by instrumenting the loss on the real trainer and by
  changing that record (same seed, identical output).
* Sensitivity with a regulariser: both certificates compare a fresh step on the differing record
  with the steps of the other indices, which include noise-only steps (Arora et al. Lemma 2 proof,
  "P(E) ≤ e^ε̃ R(E)"; dp-accounting's sampled-Gaussian bound, Wang, Balle, Kasiviswanathan 2019,
  arXiv:1808.00087, Thm 27, needs the base mechanism's sensitivity between the differing record
  and *any* other sampled index).  A fresh step moves the dual point by ∇f(w; z) + λw and a
  noise-only step by 0, so the sensitivity the proofs need is max(2L, L + λR), R the radius of W —
  not 2L once λR > L.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from certified import assert_certified
from dpconvex.accounting import private_sco
from dpconvex.mechanisms import sco_noisy_sgd
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import HingeLoss, LogisticLoss


class _RecordingHinge(HingeLoss):
    """The hinge loss, logging the rows whose gradients the trainer asks for."""

    def __init__(self) -> None:
        self.rows: list[int] = []

    def per_example_gradients(self, w, X, y):
        self.rows.extend(int(round(v)) for v in X[:, 0] * 1e4)
        return super().per_example_gradients(w, X, y)


@pytest.mark.parametrize("n", [2, 15, 200])
def test_each_record_enters_at_most_one_step_and_at_most_half_are_used(n):
    """The premise of the single-use bound (Alg. 1 lines 4–9), on the real trainer, 20 seeds each."""
    X = np.column_stack([np.arange(1, n + 1) / 1e4, np.full(n, 0.5)])  # row t identified by x₁ = t/10⁴
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    for seed in range(20):
        loss = _RecordingHinge()
        sco_noisy_sgd(X, y, loss=loss, delta=1e-6, sigma=1.0, constraint=L2Ball(1.0), random_state=seed)
        counts = Counter(loss.rows)
        assert max(counts.values()) == 1
        assert len(counts) == math.ceil(n / 2)


@pytest.mark.parametrize("n", [3, 15, 200])
def test_the_last_fresh_record_never_reaches_the_output(n):
    """Same seed (so the same index sequence and noise), two data sets differing only in the record
    fresh last: the released coefficients are bitwise equal, while changing the first fresh record
    changes them (the check has teeth; σ is tiny so that no noise can mask a change).  10 seeds each."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 3))
    X[:, 1:] /= np.linalg.norm(X[:, 1:], axis=1)[:, None] * 1.01
    X[:, 0] = np.arange(1, n + 1) / 1e4  # row t identified by x₁ = t/10⁴ (rows stay in the unit ball)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    kwargs = dict(delta=1e-6, sigma=1e-6, step_size=0.5, constraint=L2Ball(1.0))
    for seed in range(10):
        loss = _RecordingHinge()
        reference = sco_noisy_sgd(X, y, loss=loss, random_state=seed, **kwargs).coef
        first, last = loss.rows[0] - 1, loss.rows[-1] - 1
        for row, changes in ((last, False), (first, True)):
            X_changed = X.copy()
            X_changed[row, 1:] = -X[row, 1:]  # the hinge subgradient −y·x moves by ≈ 2 (margins stay < 1)
            coef = sco_noisy_sgd(X_changed, y, loss=HingeLoss(), random_state=seed, **kwargs).coef
            assert (not np.array_equal(coef, reference)) == changes, (seed, row)


def test_two_records_release_the_start_point_and_refuse_an_epsilon_target():
    """n = 2: the run stops after its one fresh step and releases w₀ = 0 whatever the data (ε = 0)."""
    X, y = np.array([[0.6, 0.8], [-1.0, 0.0]]), np.array([1.0, -1.0])
    for seed in range(5):
        result = sco_noisy_sgd(X, y, loss=HingeLoss(), delta=1e-6, sigma=0.01, constraint=L2Ball(1.0),
                               random_state=seed)
        assert np.array_equal(result.coef, np.zeros(2)) and result.certificate.epsilon == 0.0
    assert result.certificate.composition_epsilon > 100  # the hidden step itself is nearly non-private
    with pytest.raises(ValueError, match="n = 2 records the released output is w_0 = 0.*pass sigma"):
        sco_noisy_sgd(X, y, loss=HingeLoss(), delta=1e-6, epsilon=1.0, constraint=L2Ball(1.0), random_state=0)


def test_regularised_run_is_certified_with_the_fresh_versus_fresh_sensitivity():
    """With λ > 0 the single-use bound compares the two records' fresh steps at the same time, where
    λw cancels: S = 2L, whatever λR (the composition numbers would need max(2L, L + λR))."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    result = sco_noisy_sgd(X, y, loss=LogisticLoss(), l2_regularization=1.0, delta=1e-6, sigma=2.0,
                           constraint=L2Ball(2.0), random_state=0)
    reference = private_sco.single_use_epsilon(private_sco.SCOEvent(400, 2.0, 2.0, 800), 1e-6)
    assert result.certificate.bound == "single-use"
    assert_certified(result.certificate.epsilon, reference, rel=1e-12)  # S = 3 would exceed the margin
    trajectory = private_sco.single_use_epsilon(private_sco.SCOEvent(400, 2.0, 2.0, 800), 1e-6, "trajectory")
    assert_certified(result.certificate.composition_epsilon, trajectory, rel=1e-12)
    assert result.certificate.composition_epsilon > result.certificate.epsilon
