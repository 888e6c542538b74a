"""Pure privacy accounting: hyperparameters in, privacy curves or (ε, δ) out.

This subpackage imports nothing else from dpconvex; mechanisms call it, never the reverse.
One module per family: :mod:`.rdp` (conversion), :mod:`.gdp` (Gaussian DP, Bok et al.),
:mod:`.langevin` (Chourasia et al.), :mod:`.noisy_gd` (the best-of accountant for noisy GD).
"""

from . import gdp, langevin, noisy_gd, rdp
from . import hockey_stick
from .noisy_gd import BOUNDS, NoisyGDEvent, PrivacyAccount, account, best_rdp, calibrate_sigma, rdp_curve
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp
from .sensitivity import OutputPerturbationEvent, SGDSchedule, account_output_perturbation, calibrate_output_sigma

__all__ = [
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
]
