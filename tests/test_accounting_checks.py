"""``accounting._checks``: the one set of ε / δ / order checks, and every entry point that uses it.

Properties: a value outside its range (or not a number) raises ``ValueError`` naming the parameter,
its range and the value; accepted values come back as floats (arrays for the vectorised checks);
the accountants, the calibrations and the mechanisms' ``check_privacy_budget`` all give the same
message for the same bad ε or δ.  And ``accounting`` imports nothing of the library outside itself.
"""

import ast
import math
import pathlib
import re

import numpy as np
import pytest

import dpconvex.accounting
from dpconvex.accounting import gdp, hockey_stick, noisy_gd, noisy_sgd, private_sco, rdp, sensitivity
from dpconvex.accounting._checks import (
    check_delta,
    check_epsilon,
    check_nonnegative,
    check_open_unit,
    check_orders,
    check_positive,
)
from dpconvex.data.checks import check_privacy_budget

BAD_EPSILONS = [0.0, -1.0, math.inf, math.nan, "1.0", None, np.array([1.0, 2.0])]
BAD_DELTAS = [0.0, 1.0, -0.1, 1.5, math.nan, "0.5", None]


def _message(name, valid, value):
    return re.escape(f"{name} must {valid}; got {name}={value!r}.")


@pytest.mark.parametrize("named, generic, name, other, valid, value",
                         [(check_epsilon, check_positive, "epsilon", "target", "be finite and > 0", v)
                          for v in BAD_EPSILONS]
                         + [(check_delta, check_open_unit, "delta", "rtol", "lie in the open interval (0, 1)", v)
                            for v in BAD_DELTAS])
def test_a_value_out_of_range_is_refused_naming_it_and_its_range(named, generic, name, other, valid, value):
    with pytest.raises(ValueError, match=_message(name, valid, value)):
        named(value)
    with pytest.raises(ValueError, match=_message(other, valid, value)):
        generic(value, other)


def test_accepted_values_come_back_as_floats():
    assert check_epsilon(np.float32(0.5)) == 0.5 and type(check_epsilon(np.array(2.0))) is float
    assert check_epsilon(0, zero=True) == 0.0
    with pytest.raises(ValueError, match=_message("epsilon", "be finite and >= 0", -1.0)):
        check_epsilon(-1.0, zero=True)
    assert check_delta(1e-300) == 1e-300 and check_open_unit(0.999, "rtol") == 0.999
    np.testing.assert_array_equal(check_nonnegative([0.0, 2.0], "epsilon"), [0.0, 2.0])
    np.testing.assert_array_equal(check_nonnegative([0.0, math.inf], "mu", finite=False), [0.0, math.inf])
    np.testing.assert_array_equal(check_orders(np.array([[1.5, 64.0]])), [[1.5, 64.0]])  # any shape


@pytest.mark.parametrize("values, finite, valid", [([1.0, -1e-300], True, "be finite and >= 0"),
                                                   ([math.inf], True, "be finite and >= 0"),
                                                   ([math.nan], False, "be >= 0 (not nan)")])
def test_nonnegative_arrays_are_refused_naming_the_parameter(values, finite, valid):
    with pytest.raises(ValueError, match=_message("r", valid, values)):
        check_nonnegative(values, "r", finite=finite)


@pytest.mark.parametrize("orders", [[1.0, 2.0], [0.5], [2.0, math.inf], [math.nan], "2"])
def test_orders_at_or_below_one_are_refused(orders):
    with pytest.raises(ValueError, match=_message("orders", "be finite and > 1", orders)):
        check_orders(orders)


@pytest.mark.parametrize("value", [True, False, np.True_, np.array([True, False])])
def test_a_bool_is_not_a_number(value):
    # True would otherwise read as epsilon = 1 (and False as 0).
    with pytest.raises(ValueError, match=_message("epsilon", "be finite and > 0", value)):
        check_epsilon(value)
    with pytest.raises(ValueError, match=_message("delta", "lie in the open interval (0, 1)", value)):
        check_delta(value)
    with pytest.raises(ValueError, match=_message("epsilon", "be finite and >= 0", value)):
        check_nonnegative(value, "epsilon")
    with pytest.raises(ValueError, match=_message("orders", "be finite and > 1", value)):
        check_orders(value)
    with pytest.raises(ValueError, match="epsilon must be finite and > 0; got epsilon=True"):
        noisy_gd.calibrate_sigma(GD, True, 1e-6)


def test_the_helpers_of_the_accountants_are_the_one_set_of_checks():
    from dpconvex.accounting import ye_shokri
    for call, name, valid, value in [
        (lambda: ye_shokri.position_rdp(2.0, 1, 0.0, 0.5), "noise_multiplier", "be finite and > 0", 0.0),
        (lambda: ye_shokri.position_rdp([1.0, 2.0], 1, 3.0, 0.5), "orders", "be finite and > 1", [1.0, 2.0]),
        (lambda: ye_shokri.position_rdp(2.0, 1, 3.0, 1.0), "contraction", "lie in the open interval (0, 1)", 1.0),
        (lambda: hockey_stick.gaussian_mechanism_delta(1.0, 1.0, [1.0, -1.0]), "sigma", "be finite and > 0",
         [1.0, -1.0]),
        (lambda: hockey_stick.projected_gaussian_contraction(2.0, math.inf, 1.0), "diameter", "be finite and > 0",
         math.inf),
        (lambda: sensitivity.mixture_rdp([2.0], [1.0], [1.0], True), "sigma", "be finite and > 0", True),
        (lambda: sensitivity.outpert_gd_sensitivity(10, smoothness=1.0, strong_convexity=0.5, gradient_difference=-1.0),
         "gradient_difference", "be finite and >= 0", -1.0),
    ]:
        with pytest.raises(ValueError, match=_message(name, valid, value)):
            call()
    with pytest.raises(ValueError, match=r"orders must not be empty"):
        ye_shokri.position_rdp([], 1, 3.0, 0.5)


# ------------------------------------------------------------------ every entry point, one message

GD = noisy_gd.NoisyGDEvent(n=5000, sensitivity=4.0, step_size=0.02, sigma=0.02, iterations=300,
                           strong_convexity=1.0, smoothness=4.0)
SGD = noisy_sgd.NoisySGDEvent(n=1000, batch_size=100, batching="cyclic", epochs=2, step_size=0.5, sigma=5.0,
                              sensitivity=2.0, strong_convexity=1e-3, smoothness=0.251)
OUTPUT = sensitivity.OutputPerturbationEvent(sensitivity.SGDSchedule((50, 50), (0.5, 0.25), 2), smoothness=1.0,
                                             strong_convexity=0.1, gradient_difference=2.0, sigma=1.0)
PNSGD = dict(n=8, lipschitz=1.0, smoothness=2.0, strong_convexity=0.5, step_size=0.25, diameter=2.0)

CALIBRATIONS = {  # (ε, δ) ↦ a calibration of the library
    "budget": check_privacy_budget,
    "gdp_mu": gdp.gdp_mu,
    "noisy_gd": lambda e, d: noisy_gd.calibrate_sigma(GD, e, d),
    "noisy_sgd": lambda e, d: noisy_sgd.calibrate_sigma.__wrapped__(SGD, e, d),
    "output": lambda e, d: sensitivity.calibrate_output_sigma(OUTPUT, e, d),
    "sco": lambda e, d: private_sco.calibrate_sco_sigma(20, 2.0, e, d),
}
ACCOUNTS = {  # δ ↦ an (ε at δ) accountant of the library
    "gdp_epsilon": lambda d: gdp.gdp_epsilon(d, 1.0),
    "rdp": lambda d: rdp.epsilon_from_rdp([2.0, 4.0], [0.1, 0.2], d),
    "noisy_gd": lambda d: noisy_gd.account(GD, d),
    "noisy_sgd": lambda d: noisy_sgd.account(SGD, d),
    "output": lambda d: sensitivity.account_output_perturbation(OUTPUT, d),
    "sco": lambda d: private_sco.account_sco(private_sco.SCOEvent(20, 2.0, 1.0, 40), d),
    "pnsgd": lambda d: hockey_stick.account_pnsgd.__wrapped__(hockey_stick.PNSGDEvent(**PNSGD, sigma=1.0), d),
}


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_every_calibration_refuses_a_bad_epsilon_with_the_same_message(name, epsilon):
    with pytest.raises(ValueError, match=_message("epsilon", "be finite and > 0", epsilon)):
        CALIBRATIONS[name](epsilon, 1e-6)


@pytest.mark.parametrize("name", sorted(CALIBRATIONS))
@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, math.nan])
def test_every_calibration_refuses_a_bad_delta_with_the_same_message(name, delta):
    with pytest.raises(ValueError, match=_message("delta", "lie in the open interval (0, 1)", delta)):
        CALIBRATIONS[name](1.0, delta)


@pytest.mark.parametrize("name", sorted(ACCOUNTS))
@pytest.mark.parametrize("delta", [0.0, 1.0, 2.0, math.nan])
def test_every_accountant_refuses_a_bad_delta_with_the_same_message(name, delta):
    with pytest.raises(ValueError, match=_message("delta", "lie in the open interval (0, 1)", delta)):
        ACCOUNTS[name](delta)


@pytest.mark.parametrize("value", ["1.0", None, np.array(0.5), [0.5]])
def test_the_mechanisms_budget_must_also_be_a_real_number(value):
    with pytest.raises(ValueError, match="epsilon must be a real number"):
        check_privacy_budget(value, 1e-6)
    with pytest.raises(ValueError, match="delta must be a real number"):
        check_privacy_budget(1.0, value)


def test_a_bad_rtol_is_refused_alike_by_every_calibration():
    message = _message("rtol", "lie in the open interval (0, 1)", 1.0)
    for call in (lambda: noisy_gd.calibrate_sigma(GD, 1.0, 1e-6, rtol=1.0),
                 lambda: noisy_sgd.calibrate_sigma.__wrapped__(SGD, 1.0, 1e-6, rtol=1.0),
                 lambda: sensitivity.calibrate_output_sigma(OUTPUT, 1.0, 1e-6, 1.0),
                 lambda: hockey_stick.calibrate_pnsgd_noise(1.0, 1e-6, **PNSGD, rtol=1.0)):
        with pytest.raises(ValueError, match=message):
            call()


def test_accounting_imports_nothing_of_the_library_outside_itself():
    for path in pathlib.Path(dpconvex.accounting.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1 and not (node.module or "").startswith("dpconvex"), (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not any(alias.name.startswith("dpconvex") for alias in node.names), path.name

