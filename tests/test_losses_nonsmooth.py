"""Hinge and absolute-error losses: values, subgradients and declared constants."""

from __future__ import annotations

import numpy as np
import pytest

from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import LOSSES, AbsoluteErrorLoss, HingeLoss

RNG = np.random.default_rng(0)
X = RNG.normal(size=(200, 4))
X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]


@pytest.mark.parametrize("loss, y", [(HingeLoss(), np.sign(RNG.normal(size=200))),
                                     (AbsoluteErrorLoss(), RNG.normal(size=200))])
def test_subgradients_match_finite_differences_away_from_kinks_and_respect_the_lipschitz_bound(loss, y):
    w = RNG.normal(size=4)
    grads = loss.per_example_gradients(w, X, y)
    constants = loss.constants(1.0, 0.0, L2Ball(5.0))
    assert np.all(np.linalg.norm(grads, axis=1) <= constants.lipschitz + 1e-12)
    assert constants.gradient_sensitivity == 2.0 * constants.lipschitz and constants.smoothness == np.inf
    h = 1e-6
    for i in range(20):
        numeric = np.array([(loss.values(w + h * e, X[i:i + 1], y[i:i + 1])[0]
                             - loss.values(w - h * e, X[i:i + 1], y[i:i + 1])[0]) / (2 * h) for e in np.eye(4)])
        np.testing.assert_allclose(grads[i], numeric, atol=1e-6)


def test_subgradient_inequality_holds_everywhere_including_kinks():
    """Convexity: ℓ(v) ≥ ℓ(w) + ⟨g(w), v − w⟩ for the declared subgradient g, also at the kink."""
    hinge, absolute = HingeLoss(), AbsoluteErrorLoss()
    x, w = np.array([[1.0, 0.0]]), np.array([1.0, 0.0])  # hinge margin exactly 1, |wᵀx − y| = 0
    for v in RNG.normal(size=(50, 2)) * 3:
        for loss, y in ((hinge, np.array([1.0])), (absolute, np.array([1.0]))):
            g = loss.per_example_gradients(w, x, y)[0]
            assert loss.values(v, x, y)[0] >= loss.values(w, x, y)[0] + g @ (v - w) - 1e-12


def test_registry_flags_and_values():
    assert LOSSES["hinge"] is HingeLoss and LOSSES["absolute"] is AbsoluteErrorLoss
    assert not HingeLoss.smooth and not AbsoluteErrorLoss.smooth
    assert HingeLoss().loss_at_zero(1.0) == 1.0 and AbsoluteErrorLoss().loss_at_zero(1.0, 2.5) == 2.5
    with pytest.raises(ValueError, match="label_bound"):
        AbsoluteErrorLoss().loss_at_zero(1.0)
    np.testing.assert_allclose(HingeLoss().phi(np.array([-1.0, 0.5, 1.0, 3.0])), [2.0, 0.5, 0.0, 0.0])
