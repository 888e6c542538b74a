"""``accounting.interface``: one ``account`` and one ``calibrate`` for every family's event record.

Properties: ``account(event, δ)`` is the family accountant's :class:`PrivacyAccount`, every field equal;
``calibrate(event, ε, δ)`` is the event with the family calibration's noise, exactly; the calibrated
event's certificate never overshoots ε and sits within the calibration's stated tolerance of it; an
unknown event type is refused with ``TypeError`` naming the supported ones; every event record is
frozen and hashable; the package's ``account`` accepts the noisy-GD calls it accepted before.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpconvex.accounting as accounting
from dpconvex.accounting import hockey_stick, interface, noisy_gd, noisy_sgd, private_sco, sensitivity
from dpconvex.accounting import hyperparameter_tuning as tuning
from dpconvex.accounting.best_of import PrivacyAccount

GD = noisy_gd.NoisyGDEvent(n=200, sensitivity=2.0, step_size=1.0 / 0.52, sigma=2.0, iterations=80,
                           strong_convexity=0.01, smoothness=0.26)
SGD_CYCLIC = noisy_sgd.NoisySGDEvent(n=240, batch_size=24, batching="cyclic", epochs=3, step_size=1.0, sigma=1.2,
                                     sensitivity=2.0, strong_convexity=0.01, smoothness=0.26)
SGD_POISSON = dataclasses.replace(SGD_CYCLIC, batching="poisson")
OUTPUT = sensitivity.OutputPerturbationEvent(sensitivity.make_schedule(200, 20, 4, 1.5, "inverse-epoch"),
                                             smoothness=0.26, strong_convexity=0.01, gradient_difference=2.0,
                                             sigma=0.05, permuted=True)
PNSGD_CONSTANTS = dict(n=50, lipschitz=1.0, smoothness=0.3, strong_convexity=0.05, step_size=0.5, diameter=4.0)
PNSGD_GAUSSIAN = hockey_stick.PNSGDEvent(**PNSGD_CONSTANTS, sigma=1.5)
PNSGD_LAPLACE = hockey_stick.PNSGDEvent(**PNSGD_CONSTANTS, scale=1.5)
PNSGD_RANDOM_STOP = hockey_stick.PNSGDEvent(**PNSGD_CONSTANTS, sigma=1.5, random_stop=True)
PNSGD_RECORD = hockey_stick.PNSGDEvent(**PNSGD_CONSTANTS, sigma=1.5, record=20)
SCO = private_sco.SCOEvent(n=200, sensitivity=2.0, sigma=3.0, steps=400)
TUNING = tuning.TuningEvent(tuning.TruncatedNegativeBinomial.with_mean(5.0, 1.0), base_mu=0.3)
TUNING_POISSON = tuning.TuningEvent(tuning.PoissonRepetitions(5.0), base_mu=0.3)

DELTA = 1e-6

#: (event, the family accountant, the family calibration as a function of (event, ε, δ) giving the noise)
FAMILIES = {
    "noisy_gd": (GD, noisy_gd.account, noisy_gd.calibrate_sigma),
    "noisy_sgd-cyclic": (SGD_CYCLIC, noisy_sgd.account, noisy_sgd.calibrate_sigma),
    "noisy_sgd-poisson": (SGD_POISSON, noisy_sgd.account, noisy_sgd.calibrate_sigma),
    "output_perturbation": (OUTPUT, sensitivity.account_output_perturbation, sensitivity.calibrate_output_sigma),
    "pnsgd-gaussian": (PNSGD_GAUSSIAN, hockey_stick.account_pnsgd,
                       lambda e, eps, d: hockey_stick.calibrate_pnsgd_noise(eps, d, **PNSGD_CONSTANTS)),
    "pnsgd-laplace": (PNSGD_LAPLACE, hockey_stick.account_pnsgd,
                      lambda e, eps, d: hockey_stick.calibrate_pnsgd_noise(eps, d, **PNSGD_CONSTANTS, noise="laplace")),
    "pnsgd-random-stop": (PNSGD_RANDOM_STOP, hockey_stick.account_pnsgd,
                          lambda e, eps, d: hockey_stick.calibrate_pnsgd_noise(eps, d, **PNSGD_CONSTANTS,
                                                                               random_stop=True)),
    "private_sco": (SCO, private_sco.account_sco, lambda e, eps, d: private_sco.calibrate_sco_sigma(e.n, e.sensitivity,
                                                                                                   eps, d)),
    "tuning-geometric": (TUNING, tuning.account, lambda e, eps, d: tuning.calibrate_base_mu(e.law, eps, d)),
    "tuning-poisson": (TUNING_POISSON, tuning.account, lambda e, eps, d: tuning.calibrate_base_mu(e.law, eps, d)),
}

#: The noise field each event's calibration sets.
NOISE_FIELD = {name: "base_mu" if name.startswith("tuning") else "scale" if name == "pnsgd-laplace" else "sigma"
               for name in FAMILIES}

EVENTS = [GD, SGD_CYCLIC, OUTPUT, PNSGD_GAUSSIAN, SCO, TUNING]


def _fields(account: PrivacyAccount) -> dict:
    return {field.name: getattr(account, field.name) for field in dataclasses.fields(PrivacyAccount)}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_account_is_the_family_accountant_field_by_field(name):
    event, family_account, _ = FAMILIES[name]
    ours, theirs = interface.account(event, DELTA), family_account(event, DELTA)
    assert _fields(ours) == _fields(theirs)
    assert accounting.account(event, DELTA) == theirs


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_calibrate_is_the_family_calibration_exactly(name):
    event, _, family_calibration = FAMILIES[name]
    calibrated = interface.calibrate(event, 1.0, DELTA)
    assert type(calibrated) is type(event)
    noise = getattr(calibrated, NOISE_FIELD[name])
    assert noise == family_calibration(event, 1.0, DELTA)
    # only the noise changed
    assert dataclasses.replace(calibrated, **{NOISE_FIELD[name]: getattr(event, NOISE_FIELD[name])}) == event


def test_the_options_reach_the_family_functions():
    assert interface.account(GD, DELTA, bound="composition", conversion="mironov") == noisy_gd.account(
        GD, DELTA, bound="composition", conversion="mironov")
    assert interface.calibrate(GD, 0.5, DELTA, bound="gdp", rtol=1e-3).sigma == noisy_gd.calibrate_sigma(
        GD, 0.5, DELTA, bound="gdp", rtol=1e-3)
    assert interface.account(SGD_CYCLIC, DELTA, bound="bok-cgd") == noisy_sgd.account(SGD_CYCLIC, DELTA,
                                                                                      bound="bok-cgd")
    assert interface.calibrate(OUTPUT, 1.0, DELTA, rtol=1e-3).sigma == sensitivity.calibrate_output_sigma(
        OUTPUT, 1.0, DELTA, 1e-3)
    assert interface.calibrate(PNSGD_GAUSSIAN, 1.0, DELTA, rtol=1e-6).sigma == hockey_stick.calibrate_pnsgd_noise(
        1.0, DELTA, **PNSGD_CONSTANTS, rtol=1e-6)
    assert interface.calibrate(TUNING, 1.0, DELTA, rtol=1e-3).base_mu == tuning.calibrate_base_mu(
        TUNING.law, 1.0, DELTA, rtol=1e-3)
    with pytest.raises(TypeError):
        interface.calibrate(SCO, 1.0, DELTA, rtol=1e-3)  # the SCO calibration takes no option


def test_the_package_account_accepts_the_noisy_gd_calls_it_did():
    for kwargs in ({}, {"bound": "gdp"}, {"bound": "composition", "conversion": "mironov"},
                   {"orders": (2.0, 8.0, 32.0)}):
        assert accounting.account(GD, DELTA, **kwargs) == noisy_gd.account(GD, DELTA, **kwargs)
    assert accounting.calibrate_sigma is noisy_gd.calibrate_sigma
    assert accounting.calibrate is interface.calibrate


def test_a_pnsgd_record_is_calibrated_for_that_record():
    """The event names record t: its noise meets the target at t, and is below the worst record's."""
    calibrated = interface.calibrate(PNSGD_RECORD, 1.0, DELTA)
    assert hockey_stick.account_pnsgd(calibrated, DELTA).epsilon <= 1.0 * (1 + 1e-9)
    assert calibrated.sigma < interface.calibrate(PNSGD_GAUSSIAN, 1.0, DELTA).sigma


#: (relative tolerance, what it bounds) of each family's calibration at its default options (the family's docstring):
#: "noise": the noise divided by 1 + rtol misses the target; "epsilon": ε ≥ (1 − rtol)·target, or that bracket.
TOLERANCE = {"noisy_gd": (1e-4, "noise"), "noisy_sgd-cyclic": (1e-9, "noise"), "noisy_sgd-poisson": (1e-3, "epsilon"),
             "output_perturbation": (1e-4, "noise"), "pnsgd-gaussian": (1e-9, "noise"),
             "pnsgd-laplace": (1e-9, "noise"), "pnsgd-random-stop": (1e-9, "noise"), "private_sco": (1e-9, "noise"),
             "tuning-geometric": (1e-4, "epsilon"), "tuning-poisson": (1e-4, "epsilon")}
#: Tolerance of the certified ε over the target: PNSGD reads ε off its δ(ε) curve to 1e-10 (hockey_stick tests).
OVERSHOOT = {"pnsgd-gaussian": 1e-9, "pnsgd-laplace": 1e-9, "pnsgd-random-stop": 1e-9}


@pytest.mark.parametrize("name", sorted(FAMILIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(epsilon=st.floats(0.2, 4.0), delta_exponent=st.integers(-9, -4))
def test_calibration_never_overshoots_and_is_within_its_tolerance(name, epsilon, delta_exponent):
    event, _, _ = FAMILIES[name]
    delta = 10.0 ** delta_exponent
    field = NOISE_FIELD[name]
    calibrated = interface.calibrate(event, epsilon, delta)
    stated = interface.account(calibrated, delta).epsilon
    assert stated <= epsilon * (1 + OVERSHOOT.get(name, 0.0))
    rtol, kind = TOLERANCE[name]
    level = getattr(calibrated, field)
    # μ is an inverse noise: less noise is a larger μ
    less = level * (1 + rtol) * (1 + 1e-9) if field == "base_mu" else level / (1 + rtol) * (1 - 1e-9)
    missed = interface.account(dataclasses.replace(calibrated, **{field: less}), delta).epsilon > epsilon
    assert missed or (kind == "epsilon" and stated >= (1 - rtol) * epsilon)


@pytest.mark.parametrize("verb", ["account", "calibrate"])
def test_an_unknown_event_type_is_refused_naming_the_supported_types(verb):
    @dataclasses.dataclass(frozen=True)
    class Elsewhere:
        sigma: float = 1.0

    call = (lambda: interface.account(Elsewhere(), DELTA)) if verb == "account" else (
        lambda: interface.calibrate(Elsewhere(), 1.0, DELTA))
    with pytest.raises(TypeError, match="Elsewhere") as error:
        call()
    for cls in interface.event_types():
        assert cls.__name__ in str(error.value)
    with pytest.raises(TypeError, match="NoisyGDEvent"):
        accounting.account({"sigma": 1.0}, DELTA)


def test_every_family_is_registered_once():
    assert set(interface.event_types()) == {type(event) for event in EVENTS}
    assert all(family.event is cls for cls, family in interface.FAMILIES.items())


@pytest.mark.parametrize("event", EVENTS + [SGD_POISSON, PNSGD_LAPLACE, TUNING_POISSON],
                         ids=lambda e: type(e).__name__)
def test_every_event_record_is_frozen_and_hashable(event):
    assert dataclasses.is_dataclass(event) and type(event).__dataclass_params__.frozen  # type: ignore[attr-defined]
    field = dataclasses.fields(event)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(event, field, getattr(event, field))
    assert hash(event) == hash(dataclasses.replace(event)) and {event: 1}[dataclasses.replace(event)] == 1


def test_bad_targets_are_refused_alike_for_every_family():
    for event in EVENTS:
        with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
            interface.calibrate(event, 0.0, DELTA)
        with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
            interface.calibrate(event, 1.0, 1.0)
        with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
            interface.account(event, math.nan)


def test_a_curve_base_has_no_noise_to_calibrate():
    curve = tuning.TuningEvent.from_curve(TUNING.law, [2.0, 4.0], [0.1, 0.3])
    assert interface.account(curve, DELTA) == tuning.account(curve, DELTA)
    with pytest.raises(ValueError, match="event_of"):
        interface.calibrate(curve, 1.0, DELTA)


def test_bound_mu_is_the_former_gdp_mu():
    assert noisy_sgd.gdp_mu is noisy_sgd.bound_mu
    assert noisy_sgd.bound_mu(SGD_CYCLIC, "bok-cgd") > 0
