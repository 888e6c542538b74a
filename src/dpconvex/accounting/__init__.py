"""Pure privacy accounting: hyperparameters in, privacy curves or (ε, δ) out.

This subpackage imports nothing else from dpconvex (:mod:`.poisson_pld` uses the external
dp-accounting package); mechanisms call it, never the reverse.
Every module (the package namespace imports some of them; import the others by name):

The interface
    :mod:`.interface`: ``account(event, delta)`` and ``calibrate(event, epsilon, delta)`` for every
    family below, dispatching on the event record's type (the documented way to account and
    calibrate; the package's ``account`` and ``calibrate`` are these).  The event records that do not
    live with their accountant: :mod:`.noisy_sgd_event`, :mod:`.pnsgd_event`, :mod:`.tuning_event`.
Shared core
    :mod:`.best_of` (bound records, the bound registry, best-of, :class:`PrivacyAccount`),
    :mod:`.calibration` (the one calibration search: ``smallest_noise``, ``smallest_epsilon``),
    :mod:`._checks` (the one set of ε / δ / order / tolerance checks), :mod:`.rdp` (RDP curves and
    their conversion to (ε, δ)), :mod:`.gdp` (Gaussian DP, Bok et al.).
Accountants, one per mechanism family
    :mod:`.noisy_gd` (the best-of accountant for full-batch noisy GD; its event and bound table in
    :mod:`.noisy_gd_bounds`), :mod:`.langevin` (Chourasia et al.), :mod:`.noisy_sgd` (the best-of
    accountant for noisy mini-batch SGD, with its bound table in :mod:`.noisy_sgd_table`, its formulas
    in :mod:`.noisy_sgd_bounds` and :mod:`.noisy_sgd_poisson`, the shifted-interpolation lemma in
    :mod:`.shifted_interpolation` with its closed forms in :mod:`.shifted_closed_forms`, and the
    Poisson-subsampled Gaussian privacy-loss distribution in :mod:`.poisson_pld`), :mod:`.sensitivity`
    (Chen et al. output perturbation; Δ in :mod:`.sgd_sensitivity`), :mod:`.hockey_stick` (Asoodeh
    et al. E_γ contraction, PNSGD; primitives in :mod:`.e_gamma`, curves in :mod:`.pnsgd_bounds`),
    :mod:`.private_sco` (Arora et al. noisy SGD with the fresh-sample rule; the uncertified
    composition numbers in :mod:`.sco_composition`).  Each split module's names are re-exported by the
    module named first.
Private selection
    :mod:`.hyperparameter_tuning` (Papernot & Steinke 2022: the best of a random number of runs of
    a base mechanism, e.g. the private model selection of :mod:`dpconvex.model_selection`).
Comparison numbers, never certificates
    :mod:`.ye_shokri` (Ye & Shokri 2022 shuffle-and-partition RDP, from the authors' code).
"""

from . import gdp, hockey_stick, hyperparameter_tuning, interface, langevin, noisy_gd, private_sco, rdp
from .best_of import PrivacyAccount
from .interface import account, calibrate
from .noisy_gd import BOUNDS, NoisyGDEvent, best_rdp, calibrate_sigma, rdp_curve
from .noisy_sgd_event import NoisySGDEvent
from .pnsgd_event import PNSGDEvent
from .private_sco import SCOEvent
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp
from .sensitivity import OutputPerturbationEvent, SGDSchedule, account_output_perturbation, calibrate_output_sigma
from .tuning_event import TuningEvent

__all__ = [
    "interface",
    "calibrate",
    "NoisySGDEvent",
    "PNSGDEvent",
    "SCOEvent",
    "TuningEvent",
    "gdp",
    "langevin",
    "noisy_gd",
    "rdp",
    "BOUNDS",
    "NoisyGDEvent",
    "PrivacyAccount",
    "account",
    "best_rdp",
    "calibrate_sigma",
    "rdp_curve",
    "DEFAULT_ORDERS",
    "epsilon_from_rdp",
    "sensitivity",
    "OutputPerturbationEvent",
    "SGDSchedule",
    "account_output_perturbation",
    "calibrate_output_sigma",
    "hockey_stick",
    "hyperparameter_tuning",
    "private_sco",
]
