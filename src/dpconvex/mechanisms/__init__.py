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

#: Every ``method`` the estimators and CLI accept: the mechanisms plus ``"auto"`` (the default), which
#: configures noisy SGD by a stated utility bound, or trains sco_noisy_sgd for a non-smooth loss
#: (:mod:`.auto`; audited as it runs by the ``auto`` and ``auto-hinge`` targets).
METHODS = {**MECHANISMS, "auto": auto}

#: One-line advice for the methods that are faithful reproductions of a paper rather than accurate
#: trainers; ``dpconvex train --method M`` prints ``METHOD_ADVICE[M]`` on stderr, and the method
#: table of docs/mechanisms.md repeats it.  Accuracies are the logistic task of docs/BENCHMARKS.md (UCI Adult,
#: 5 test folds, defaults), at ε = 0.01 … 1.
METHOD_ADVICE: dict[str, str] = {
    "pnsgd": ("pnsgd is a faithful reproduction of Asoodeh, Diaz, Calmon 2020 (per-record E_gamma certificate "
              "for one pass of projected noisy SGD); on UCI Adult it scores at or below the majority class "
              "(76.07 %) at every epsilon <= 1 (44.2-75.5 %, docs/BENCHMARKS.md) -- use method='auto' for accuracy"),
    "sco_noisy_sgd": ("sco_noisy_sgd is a faithful reproduction of Arora, Marinov, Ullah's non-smooth private SCO "
                      "algorithm (the only trainer for hinge/absolute-error losses and l_p balls); on UCI Adult "
                      "(logistic) it scores below the majority class (76.07 %) at every epsilon <= 1 "
                      "(46.9-67.2 %, docs/BENCHMARKS.md) -- for a smooth loss use method='auto' for accuracy"),
}

__all__ = ["MECHANISMS", "METHODS", "METHOD_ADVICE", "TrainingResult", "auto", "noisy_gd", "noisy_sgd", "nsgd",
           "outpert_gd", "output_perturbation_sgd", "pnsgd", "rsgd_ar", "sco_noisy_sgd"]
