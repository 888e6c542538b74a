"""Private trainers: each returns parameters plus the certificate of the accountant it used.

Every method is listed once, in ``dpconvex.mechanisms.registry.REGISTRY`` (one ``MechanismSpec``
each); the tables below are views of it.
"""

from dpconvex.mechanisms.auto import auto
from dpconvex.mechanisms.base import TrainingResult
from dpconvex.mechanisms.noisy_gd import noisy_gd
from dpconvex.mechanisms.noisy_sgd import noisy_sgd
from dpconvex.mechanisms.output_perturbation import nsgd, outpert_gd, output_perturbation_sgd, rsgd_ar
from dpconvex.mechanisms.pnsgd import pnsgd
from dpconvex.mechanisms.registry import REGISTRY, MechanismSpec
from dpconvex.mechanisms.sco_sgd import sco_noisy_sgd

#: Every ``method`` the estimators and CLI accept, by name: the public keyword trainer of each
#: mechanism plus ``"auto"`` (the default), which configures noisy SGD by a stated utility bound, or
#: trains sco_noisy_sgd for a non-smooth loss (:mod:`.auto`; audited as it runs by the ``auto`` and
#: ``auto-hinge`` targets).
METHODS = {name: spec.function for name, spec in REGISTRY.items()}

#: The mechanisms by the ``method`` name the estimators and CLI accept: every method but ``"auto"``,
#: a rule that trains one of them (its certificate names the mechanism that ran).
MECHANISMS = {name: trainer for name, trainer in METHODS.items() if name != "auto"}

#: One-line advice for the methods that are faithful reproductions of a paper rather than accurate
#: trainers (the ``advice`` of their ``MechanismSpec`` in the registry);
#: ``dpconvex train --method M`` prints ``METHOD_ADVICE[M]`` on stderr, and the method table of
#: docs/mechanisms.md repeats it.
METHOD_ADVICE: dict[str, str] = {name: spec.advice for name, spec in REGISTRY.items() if spec.advice is not None}

__all__ = ["MECHANISMS", "METHODS", "METHOD_ADVICE", "REGISTRY", "MechanismSpec", "TrainingResult", "auto", "noisy_gd",
           "noisy_sgd", "nsgd", "outpert_gd", "output_perturbation_sgd", "pnsgd", "rsgd_ar", "sco_noisy_sgd"]
