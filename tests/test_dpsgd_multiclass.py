"""DP-SGD (dpconvex_lab.dpsgd) on the K-class losses: d·K weights, the binary accounting unchanged.

The accountant sees only the sampling rate q, the steps T and the noise multiplier z; what makes
it valid for a d·K parameter is that every per-example gradient is clipped to joint norm C (one
record moves the noisy sum by ≤ C, or 2C when replaced).  Oracles: dp-accounting called directly,
the clipped gradients' norms, the Gaussian noise's variance on data whose gradients vanish, and
the non-private minimiser's accuracy.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from dpconvex.objectives.losses import HuberizedHingeLoss, LogisticLoss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss
from dpconvex_lab import baselines as B
from dpconvex_lab.dpsgd import _clipped_sum_fn
from test_baselines import _classes  # the same K-class data (unit rows, noisy argmax labels)

K_CLASS_LOSSES = [MultinomialLogisticLoss(4), OneVsRestLoss(HuberizedHingeLoss(0.5), 4)]
NEIGHBOURING = ["add_remove", "replace_one"]


def _dp_accounting_epsilon(neighbouring: str, z: float, q: float, steps: int, delta: float) -> float:
    """ε of the run from dp-accounting directly: RDP (add/remove) or PLD (replace-one)."""
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)),
                                              steps)
    if neighbouring == "add_remove":
        accountant = dp_accounting.rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    else:
        accountant = dp_accounting.pld.PLDAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4)
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


@pytest.mark.parametrize("neighbouring", NEIGHBOURING)
@pytest.mark.parametrize("loss", K_CLASS_LOSSES, ids=lambda loss: loss.name)
def test_k_class_certificate_is_the_binary_accounting(loss, neighbouring):
    n, d, k, delta = 600, 5, 4, 1e-5
    X, y = _classes(n, d, k, seed=1)
    common = {"epsilon": 1.0, "delta": delta, "l2_regularization": 1e-3, "random_state": 0, "epochs": 3,
              "batch_size": 64, "neighbouring": neighbouring}
    fit = B.sgd_ma(X, y, loss=loss, **common)
    binary = B.sgd_ma(X, np.where(y == 0, 1.0, -1.0), loss=LogisticLoss(), **common)
    assert fit.coef.shape == (d * k,)
    q, steps, z = fit.params["sampling_rate"], int(fit.params["steps"]), fit.params["noise_multiplier"]
    assert q == pytest.approx(64 / n) and steps == math.ceil(3 / q)
    # the same (q, T, z) and the same certificate as the binary run on the same n
    assert fit.params == binary.params and fit.bound == binary.bound
    accounted = fit.params["epsilon_accounted"]
    assert accounted <= 1.0
    # dp-accounting directly (its default RDP orders; PLD at a fine interval): agreement up to the
    # order grid's and the discretisation's slack, well under 2 % here.
    direct = _dp_accounting_epsilon(neighbouring, z, q, steps, delta)
    assert accounted == pytest.approx(direct, rel=0.02)


@pytest.mark.parametrize("loss", K_CLASS_LOSSES, ids=lambda loss: loss.name)
def test_every_clipped_k_class_gradient_has_norm_at_most_c(loss):
    """The sensitivity the accounting assumes: one record adds at most C to the clipped sum."""
    n, d, k, clip = 200, 5, 4, 0.3
    X, y = _classes(n, d, k, seed=2)
    w = np.random.default_rng(3).normal(size=d * k) * 5  # far from 0: most raw gradients exceed C
    clipped_sum = _clipped_sum_fn(loss, X, y, clip)
    norms = np.array([np.linalg.norm(clipped_sum(np.array([i]), w)) for i in range(n)])
    assert np.all(norms <= clip * (1 + 1e-12))
    raw = np.linalg.norm(loss.per_example_gradients(w, X, y), axis=1)
    assert np.mean(raw > clip) > 0.5  # clipping is active, so the bound above is not vacuous


@pytest.mark.parametrize("neighbouring", NEIGHBOURING)
def test_k_class_noise_covers_all_d_times_k_coordinates(neighbouring):
    """x = 0 makes every gradient vanish and λ = 0: each of the d·K entries of w_T is N(0, T(ηzC/(qn))²)."""
    n, d, k, lr, clip = 1000, 40, 10, 0.15, 2.0
    X, y = np.zeros((n, d)), np.arange(n, dtype=float) % k
    fit = B.sgd_ma(X, y, loss=MultinomialLogisticLoss(k), epsilon=1.0, delta=1e-5, l2_regularization=0.0,
                   random_state=4, epochs=1, clip_norm=clip, learning_rate=lr, neighbouring=neighbouring)
    z, steps = fit.params["noise_multiplier"], fit.params["steps"]
    expected_var = steps * (lr * z * clip / 256) ** 2
    # 400 coordinates: the mean of 400 χ²₁/400 has sd √(2/400) ≈ 0.07; ±0.25 is > 3.5 sd.
    assert np.mean(fit.coef**2) / expected_var == pytest.approx(1.0, abs=0.25)
    # and no block of the d×K matrix is left without noise: every column gets its share
    column_var = np.mean(fit.coef.reshape(d, k) ** 2, axis=0) / expected_var
    # a column's mean of 40 χ²₁ falls below 0.3 with probability 5.2e-6 (χ²₄₀ < 12), any of the 10 < 6e-5
    assert np.all(column_var > 0.3)


@pytest.mark.parametrize("loss", [MultinomialLogisticLoss(3), OneVsRestLoss(HuberizedHingeLoss(0.5), 3)],
                         ids=lambda loss: loss.name)
def test_k_class_dpsgd_at_huge_epsilon_reaches_nonprivate_accuracy(loss):
    """ε = 1000, TF Privacy's defaults.  Measured over 30 seeds: training accuracy 81.0 % (multinomial)
    and 80.6 % (one-vs-rest), sd < 0.1 point, against the non-private fit's 81.4 % / 81.2 %; the
    tolerance of 2 points is > 10 sd.  A wrong weight layout or class mapping drops it to ~ 33 %."""
    X, y = _classes(2000, 5, 3, seed=3)
    ref = B.nonprivate(X, y, loss=loss, epsilon=1.0, delta=1e-5, l2_regularization=1e-3)
    fit = B.sgd_ma(X, y, loss=loss, epsilon=1e3, delta=1e-5, l2_regularization=1e-3, random_state=0)
    accuracy_ref, accuracy = np.mean(ref.predict(X) == y), np.mean(fit.predict(X) == y)
    assert accuracy_ref > 0.75
    assert accuracy >= accuracy_ref - 0.02
