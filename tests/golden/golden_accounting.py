"""Golden configurations of the accountants' public functions (:mod:`dpconvex.accounting`), a few inputs each.

Each family is exercised through its ``account…`` function (the whole :class:`PrivacyAccount`:
ε, the winning bound, every candidate's ε and the skipped bounds) and its ``calibrate…`` function
(the noise level for a target ε), plus the GDP, RDP and Langevin building blocks the certificates
rest on.  No randomness is involved: these pin the numbers every certificate is made of.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from dpconvex.accounting import gdp, langevin, rdp
from dpconvex.accounting import hockey_stick as pnsgd_accountant
from dpconvex.accounting import hyperparameter_tuning as tuning
from dpconvex.accounting import noisy_gd as noisy_gd_accountant
from dpconvex.accounting import noisy_sgd as noisy_sgd_accountant
from dpconvex.accounting import private_sco as sco_accountant
from dpconvex.accounting import sensitivity as output_perturbation_accountant
from golden.golden_data import DELTA
from golden.golden_records import GoldenConfiguration

__all__ = ["accounting_configurations"]

#: A full-batch noisy GD run: logistic loss (smoothness 1/4 + λ), λ = 0.01, η = 1/(2β), 200 records.
NOISY_GD_EVENT = noisy_gd_accountant.NoisyGDEvent(n=200, sensitivity=2.0, step_size=1.0 / 0.52, sigma=2.0,
                                                  iterations=80, strong_convexity=0.01, smoothness=0.26)
#: The same run started from the stationary law θ₀ ~ N(0, 2σ²/λ I) (Chourasia et al.'s Corollary 1 applies).
STATIONARY_GD_EVENT = dataclasses.replace(NOISY_GD_EVENT, initialization="stationary")
#: The same run projected on a ball of radius 2 (diameter 4): the bounds that need a bounded set apply.
CONSTRAINED_GD_EVENT = noisy_gd_accountant.NoisyGDEvent(
    n=200, sensitivity=2.0, step_size=1.0 / 0.52, sigma=2.0, iterations=80, strong_convexity=0.01, smoothness=0.26,
    constrained=True, diameter=4.0)


def _sgd_event(batching: str, **changes: Any) -> noisy_sgd_accountant.NoisySGDEvent:
    """A noisy SGD run of 240 records, batches of 24, 3 epochs, σ = 1.2, in ``batching`` order (and ``changes``)."""
    return noisy_sgd_accountant.NoisySGDEvent(
        **{"n": 240, "batch_size": 24, "batching": batching, "epochs": 3, "step_size": 1.0, "sigma": 1.2,
           "sensitivity": 2.0, "strong_convexity": 0.01, "smoothness": 0.26,
           "permutation_secret": batching == "shuffled", **changes})


def _output_perturbation_event() -> output_perturbation_accountant.OutputPerturbationEvent:
    """Output-perturbed SGD (Chen, Lee, Kifer 2019): 200 records, batches of 20, 4 epochs, steps η₀/epoch."""
    schedule = output_perturbation_accountant.make_schedule(200, 20, 4, 1.5, "inverse-epoch")
    return output_perturbation_accountant.OutputPerturbationEvent(schedule=schedule, smoothness=0.26,
                                                                  strong_convexity=0.01, gradient_difference=2.0,
                                                                  sigma=0.05)


#: PNSGD's constants (Asoodeh, Diaz, Calmon 2020): 200 records, logistic loss on a ball of radius 2.
PNSGD_CONSTANTS = {"n": 200, "lipschitz": 1.0, "smoothness": 0.3, "strong_convexity": 0.05, "step_size": 0.5,
                   "diameter": 4.0}
#: A run of private SCO (Arora, Marinov, Ullah): 200 records, 200 steps.
SCO_EVENT = sco_accountant.SCOEvent(n=200, sensitivity=2.0, sigma=3.0, steps=200)


def accounting_configurations() -> list[GoldenConfiguration]:
    """The accountants' public functions, each family on a few inputs."""
    geometric = tuning.TruncatedNegativeBinomial.with_mean(5.0, 1.0)
    poisson = tuning.PoissonRepetitions(5.0)
    orders = rdp.DEFAULT_ORDERS
    table: dict[str, Callable[[], dict[str, Any]]] = {
        # full-batch noisy GD (Chourasia et al.; Bok et al.)
        "noisy_gd/account-best": lambda: {"account": noisy_gd_accountant.account(NOISY_GD_EVENT, DELTA)},
        "noisy_gd/account-composition-mironov": lambda: {"account": noisy_gd_accountant.account(
            NOISY_GD_EVENT, DELTA, bound="composition", conversion="mironov")},
        "noisy_gd/account-constrained-best": lambda: {"account": noisy_gd_accountant.account(CONSTRAINED_GD_EVENT,
                                                                                             1e-8)},
        "noisy_gd/calibrate-sigma-best": lambda: {"sigma": noisy_gd_accountant.calibrate_sigma(NOISY_GD_EVENT, 1.0,
                                                                                              DELTA)},
        "noisy_gd/calibrate-sigma-corollary1-and-rdp": lambda: {
            "sigma": noisy_gd_accountant.calibrate_sigma(STATIONARY_GD_EVENT, 0.5, DELTA, bound="corollary1"),
            "best_rdp": noisy_gd_accountant.best_rdp(STATIONARY_GD_EVENT, orders)},
        # noisy mini-batch SGD: each batching
        "noisy_sgd/account-poisson": lambda: {"account": noisy_sgd_accountant.account(_sgd_event("poisson"), DELTA)},
        "noisy_sgd/account-shuffled": lambda: {"account": noisy_sgd_accountant.account(_sgd_event("shuffled"),
                                                                                       DELTA)},
        "noisy_sgd/account-cyclic-ball": lambda: {"account": noisy_sgd_accountant.account(
            _sgd_event("cyclic", diameter=4.0), DELTA)},
        "noisy_sgd/calibrate-sigma-poisson": lambda: {"sigma": noisy_sgd_accountant.calibrate_sigma(
            _sgd_event("poisson"), 1.0, DELTA)},
        "noisy_sgd/composition-epsilon-cyclic": lambda: {"epsilon": noisy_sgd_accountant.composition_epsilon(
            _sgd_event("cyclic", sigma=3.0), DELTA)},
        # output perturbation (Chen, Lee, Kifer 2019)
        "output_perturbation/account": lambda: {"account": output_perturbation_accountant.account_output_perturbation(
            _output_perturbation_event(), DELTA)},
        "output_perturbation/calibrate-sigma": lambda: {
            "sigma": output_perturbation_accountant.calibrate_output_sigma(_output_perturbation_event(), 1.0, DELTA)},
        # PNSGD (Asoodeh, Diaz, Calmon 2020)
        "pnsgd/account-gaussian": lambda: {"account": pnsgd_accountant.account_pnsgd(
            pnsgd_accountant.PNSGDEvent(**PNSGD_CONSTANTS, sigma=1.5), DELTA)},
        "pnsgd/account-random-stop": lambda: {"account": pnsgd_accountant.account_pnsgd(
            pnsgd_accountant.PNSGDEvent(**PNSGD_CONSTANTS, sigma=1.5, random_stop=True), DELTA)},
        "pnsgd/calibrate-noise-gaussian": lambda: {"sigma": pnsgd_accountant.calibrate_pnsgd_noise(
            1.0, DELTA, **PNSGD_CONSTANTS)},
        "pnsgd/profile-laplace": lambda: dict(zip(("profile", "worst"), pnsgd_accountant.pnsgd_profile(
            1.0, **PNSGD_CONSTANTS, scale=1.0))),
        # private SCO (Arora, Marinov, Ullah)
        "private_sco/account": lambda: {"account": sco_accountant.account_sco(SCO_EVENT, DELTA)},
        "private_sco/calibrate-sigma": lambda: {"sigma": sco_accountant.calibrate_sco_sigma(200, 2.0, 1.0, DELTA)},
        # private selection (Papernot & Steinke 2022)
        "hyperparameter_tuning/account-poisson": lambda: {"account": tuning.account(
            tuning.TuningEvent(poisson, base_mu=0.3), DELTA)},
        "hyperparameter_tuning/account-geometric": lambda: {"account": tuning.account(
            tuning.TuningEvent(geometric, base_mu=0.3), DELTA)},
        "hyperparameter_tuning/calibrate-base-mu-geometric": lambda: {"base_mu": tuning.calibrate_base_mu(
            geometric, 1.0, DELTA)},
        # the building blocks: GDP, RDP conversions, Langevin
        "gdp/conversions": lambda: {"epsilon": gdp.gdp_epsilon(DELTA, 0.8), "mu": gdp.gdp_mu(1.0, DELTA),
                                    "delta": gdp.gdp_delta(1.0, 0.8),
                                    "contraction": gdp.gd_contraction(1.0, 0.01, 0.26)},
        "gdp/noisy-gd-mu": lambda: {"mu": gdp.noisy_gd_mu(200, 2.0, 1.0, [1.0, 2.0, 4.0], 80, 0.01, 0.26)},
        "rdp/epsilon-from-corollary1-rdp": lambda: {
            conversion: rdp.epsilon_from_rdp(orders, langevin.corollary1_rdp(orders, 200, 2.0, 2.0, 1.0, 80, 0.01),
                                             DELTA, conversion=conversion) for conversion in rdp.CONVERSIONS},
        "langevin/theorem4-and-corollary2": lambda: {
            "step_size": langevin.theorem4_step_size(0.01, 0.26),
            "iterations": langevin.theorem4_iterations(200, 4, 0.01, 1.0, 1.0, DELTA),
            "corollary2_rdp": langevin.corollary2_rdp(orders[:8], 200, 2.0, 2.0, 0.5, 80)},
    }
    return [GoldenConfiguration(f"accounting/{name}", run) for name, run in table.items()]
