"""Pure privacy accounting: hyperparameters in, privacy curves or (ε, δ) out.

This subpackage imports nothing else from dpconvex; mechanisms call it, never the reverse.
Shared core: :mod:`.best_of` (bound records, best-of, the account), :mod:`.calibration`, :mod:`._checks`.
One module per family: :mod:`.rdp` (conversion), :mod:`.gdp` (Gaussian DP, Bok et al.),
:mod:`.langevin` (Chourasia et al.), :mod:`.noisy_gd` (the best-of accountant for noisy GD),
:mod:`.sensitivity` (Chen et al. output perturbation), :mod:`.hockey_stick` (Asoodeh et al. E_γ
contraction), :mod:`.private_sco` (Arora et al. noisy SGD with the fresh-sample rule).
"""

from . import gdp, langevin, noisy_gd, rdp
from . import hockey_stick, private_sco
from .best_of import PrivacyAccount
from .noisy_gd import BOUNDS, NoisyGDEvent, account, best_rdp, calibrate_sigma, rdp_curve
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
    "private_sco",
]
