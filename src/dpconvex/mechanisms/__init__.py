"""Private trainers: each returns parameters plus the certificate of the accountant it used."""

from .auto import auto
from .noisy_gd import TrainingResult, noisy_gd
from .noisy_sgd import noisy_sgd
from .output_perturbation import nsgd, outpert_gd, output_perturbation_sgd, rsgd_ar
from .pnsgd import pnsgd
from .sco_sgd import sco_noisy_sgd

#: Registry of mechanisms by the ``method`` name the estimators and CLI accept.
MECHANISMS = {"noisy_gd": noisy_gd, "noisy_sgd": noisy_sgd, "rsgd_ar": rsgd_ar, "nsgd": nsgd,
              "outpert_gd": outpert_gd, "pnsgd": pnsgd, "sco_noisy_sgd": sco_noisy_sgd}

#: Every ``method`` the estimators and CLI accept: the mechanisms plus ``"auto"``, which trains with
#: the mechanism whose certificate needs the least noise (:mod:`.auto`; it has no audit target of its
#: own because it only ever runs a registered mechanism).
METHODS = {**MECHANISMS, "auto": auto}

__all__ = ["MECHANISMS", "METHODS", "TrainingResult", "auto", "noisy_gd", "noisy_sgd", "nsgd", "outpert_gd",
           "output_perturbation_sgd", "pnsgd", "rsgd_ar", "sco_noisy_sgd"]
