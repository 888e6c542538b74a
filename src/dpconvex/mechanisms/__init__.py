"""Private trainers: each returns parameters plus the certificate of the accountant it used."""

from .noisy_gd import TrainingResult, noisy_gd
from .output_perturbation import nsgd, outpert_gd, output_perturbation_sgd, rsgd_ar
from .pnsgd import pnsgd
from .sco_sgd import sco_noisy_sgd

#: Registry of mechanisms by the ``method`` name the estimators and CLI accept.
MECHANISMS = {"noisy_gd": noisy_gd, "rsgd_ar": rsgd_ar, "nsgd": nsgd, "outpert_gd": outpert_gd, "pnsgd": pnsgd, "sco_noisy_sgd": sco_noisy_sgd}

__all__ = ["MECHANISMS", "TrainingResult", "noisy_gd", "nsgd", "outpert_gd", "output_perturbation_sgd", "pnsgd", "rsgd_ar", "sco_noisy_sgd"]
