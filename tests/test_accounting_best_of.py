"""The accounting core (:mod:`dpconvex.accounting.best_of`): one best-of, with the skipped bounds and why.

Checked on the two multi-bound accountants (noisy GD, noisy SGD) over grids of runs that switch
every condition on and off, and on a toy registry for the edge cases (ties, nothing applicable,
unknown and excluded names).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import pytest

from dpconvex.accounting import best_of, sensitivity
from dpconvex.accounting import noisy_gd as gd
from dpconvex.accounting import noisy_sgd as sgd
from dpconvex.accounting.rounding import ROUNDING_MARGIN

DELTA = 1e-6

GD_BASE = gd.NoisyGDEvent(n=1000, sensitivity=2.0, step_size=0.1, sigma=0.5, iterations=50,
                          strong_convexity=0.5, smoothness=2.0)
GD_EVENTS = [
    dataclasses.replace(GD_BASE, **dict(changes))
    for changes in [
        {},
        {"strong_convexity": 0.0},
        {"initialization": "stationary"},
        {"step_size": 0.9},  # η > 1/β and 2/β: corollary1, gdp and shifted-interpolation refused
        {"step_size": 0.7, "initialization": "stationary"},  # 1/β < η < 2/β
        {"strong_convexity": 1.0, "smoothness": 1.0, "quadratic_loss": True},
        {"strong_convexity": 1.0, "smoothness": 1.0, "quadratic_loss": True, "constrained": True},
        {"constrained": True, "diameter": 3.0},
        {"last_iterate_only": False},
        {"lsi_constant": 4.0},
        {"strong_convexity": 0.0, "smoothness": float("inf")},
    ]
]

SGD_BASE = sgd.NoisySGDEvent(n=200, batch_size=20, batching="cyclic", epochs=2, step_size=0.5, sigma=8.0,
                             sensitivity=2.0, strong_convexity=0.1, smoothness=1.0)
SGD_EVENTS = [
    dataclasses.replace(SGD_BASE, batching=batching, **dict(changes))
    for batching, changes in itertools.product(sgd.BATCHINGS, [
        {},
        {"strong_convexity": 0.0},
        {"step_size": 3.0},  # η > 2/M
        {"diameter": 2.0},
        {"last_iterate_only": False},
        {"clipping": "glm"},
        {"clipping": "other"},
        {"strong_convexity": 1.1, "smoothness": 1.1, "quadratic_loss": True},
        {"strong_convexity": 1.1, "smoothness": 1.1, "quadratic_loss": True, "n": 210},
    ])
    if not (batching == "poisson" and changes.get("quadratic_loss"))  # nothing applies (tested below)
]

CASES = [(gd, e) for e in GD_EVENTS] + [(sgd, e) for e in SGD_EVENTS]
IDS = [f"gd-{i}" for i in range(len(GD_EVENTS))] + [f"sgd-{i}" for i in range(len(SGD_EVENTS))]


@pytest.mark.parametrize("module, event", CASES, ids=IDS)
def test_best_of_is_at_most_every_applicable_bound(module, event):
    account = module.account(event, DELTA)
    applicable = module.applicable_bounds(event)
    assert list(account.candidates) == applicable and account.bound in applicable
    for name in applicable:
        alone = module.account(event, DELTA, bound=name)
        assert account.epsilon <= alone.epsilon
        assert account.candidates[name] == alone.epsilon
    assert account.epsilon == min(account.candidates.values())


@pytest.mark.parametrize("module, event", CASES, ids=IDS)
def test_skipped_holds_exactly_the_inapplicable_bounds_with_their_reasons(module, event):
    expected = {name: tuple(b.unmet(event)) for name, b in module.BOUNDS.items() if b.unmet(event)}
    for bound in ["best", *module.applicable_bounds(event)]:  # a named request reports them too
        account = module.account(event, DELTA, bound=bound)
        assert account.skipped == expected
        assert set(account.skipped).isdisjoint(account.candidates)
    assert set(expected) | set(module.applicable_bounds(event)) == set(module.BOUNDS)


@pytest.mark.parametrize("module, event", CASES, ids=IDS)
def test_a_requested_inapplicable_bound_is_refused_naming_its_unmet_conditions(module, event):
    for name, b in module.BOUNDS.items():
        if unmet := b.unmet(event):
            with pytest.raises(ValueError, match=re.escape(f"bound {name!r} does not apply to this run; it needs: "
                                                           + "; ".join(unmet) + ".")):
                module.account(event, DELTA, bound=name)


@pytest.mark.parametrize("name", sorted(sgd.EXCLUDED))
def test_excluded_bounds_are_refused_with_their_reason(name):
    message = re.escape(f"bound {name!r} is not implemented: {sgd.EXCLUDED[name]}")
    for call in (lambda: sgd.account(SGD_BASE, DELTA, bound=name), lambda: sgd.unmet_conditions(SGD_BASE, name),
                 lambda: sgd.calibrate_sigma(SGD_BASE, 1.0, DELTA, bound=name)):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("module, event", [(gd, GD_BASE), (sgd, SGD_BASE)], ids=["gd", "sgd"])
def test_an_unknown_bound_is_refused_naming_the_valid_ones(module, event):
    with pytest.raises(ValueError, match=re.escape(f"bound must be one of {sorted(module.BOUNDS)} or 'best'")):
        module.account(event, DELTA, bound="no-such-bound")


def test_a_run_no_bound_covers_is_refused_with_every_reason():
    event = dataclasses.replace(SGD_BASE, batching="poisson", strong_convexity=1.1, smoothness=1.1,
                                quadratic_loss=True)
    assert sgd.applicable_bounds(event) == []
    with pytest.raises(ValueError, match="no bound applies to this run: composition needs per-example gradients"):
        sgd.account(event, DELTA)


@pytest.mark.parametrize("permuted", [False, True])
@pytest.mark.parametrize("sigma", [0.05, 0.5])
def test_output_perturbation_uses_the_same_best_of(permuted, sigma):
    event = sensitivity.OutputPerturbationEvent(sensitivity.SGDSchedule((100,) * 10, (1.0,) * 5), smoothness=1.0,
                                                strong_convexity=0.5, gradient_difference=2.0, sigma=sigma,
                                                permuted=permuted)
    account = sensitivity.account_output_perturbation(event, DELTA)
    assert set(account.candidates) == ({"worst-case", "mixture"} if permuted else {"worst-case"})
    assert account.epsilon == min(account.candidates.values())
    assert account.skipped == ({} if permuted else {
        "mixture": ("records uniformly permuted once, secretly, before batching (permuted=True)",)})


def _toy_registry() -> best_of.BoundRegistry:
    bounds = {
        "a": best_of.Bound("a", "Thm A", ("x",), lambda e: []),
        "b": best_of.Bound("b", "Thm B", ("y",), lambda e: [] if e >= 0 else ["event >= 0"]),
        "c": best_of.Bound("c", "Thm C", ("z",), lambda e: ["never", "not ever"]),
    }
    return best_of.BoundRegistry(bounds, {"d": "not checked"})


@pytest.mark.parametrize("event, expected", [(1, "b"), (-1, "a")])
def test_toy_registry_best_of_winner_results_and_skipped(event, expected):
    registry = _toy_registry()
    epsilons = {"a": 2.0, "b": 1.0}
    winner, results, skipped = registry.best_of(event, lambda name: (epsilons[name], None))
    assert winner == expected
    assert results == {name: (epsilons[name], None) for name in registry.applicable(event)}
    assert skipped == {"c": ("never", "not ever"), **({} if event >= 0 else {"b": ("event >= 0",)})}
    account = registry.account(0.1, (winner, results, skipped), "exact", ("extra",))
    # the account states certified numbers: each computed ε times 1 + ROUNDING_MARGIN, rounded up (next double)
    assert (account.bound, account.order, account.conversion) == (expected, None, "exact")
    certified = {name: math.nextafter(value * (1 + ROUNDING_MARGIN), math.inf) for name, value in epsilons.items()}
    assert account.epsilon == certified[expected] > epsilons[expected]
    assert account.candidates == {name: certified[name] for name in results}
    assert account.assumptions == registry.bounds[expected].assumptions + ("extra",)
    assert account.skipped == skipped


def test_toy_registry_ties_go_to_the_first_bound_and_refusals_give_reasons():
    registry = _toy_registry()
    assert registry.best_of(1, lambda name: (1.0, None))[0] == "a"
    with pytest.raises(ValueError, match=re.escape("bound 'c' does not apply to this run; it needs: never; not ever.")):
        registry.best_of(1, lambda name: (1.0, None), bound="c")
    with pytest.raises(ValueError, match="bound 'd' is not implemented: not checked"):
        registry.candidates(1, "d")


def test_bound_notes_read_the_account():
    account = best_of.PrivacyAccount(epsilon=1.0, delta=1e-6, bound="a", theorem="Thm A", assumptions=(), order=None,
                                      conversion="exact", candidates={"a": 1.0, "b": 1.0, "e": 2.5},
                                      skipped={"c": ("never", "not ever"), "f": ("x",)})
    assert best_of.bound_notes(account) == [
        "b ties with a: epsilon 1 against 1",
        "e lost to a: epsilon 2.5 against 1",
        "c not applicable: needs never; not ever",
        "f not applicable: needs x",
    ]
    assert best_of.bound_notes(account, omit=("e", "f")) == [
        "b ties with a: epsilon 1 against 1", "c not applicable: needs never; not ever"]
