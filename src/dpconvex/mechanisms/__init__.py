"""Private trainers: each returns parameters plus the certificate of the accountant it used."""

from .noisy_gd import TrainingResult, noisy_gd

#: Registry of mechanisms by the ``method`` name the estimators and CLI accept.
MECHANISMS = {"noisy_gd": noisy_gd}

__all__ = ["MECHANISMS", "TrainingResult", "noisy_gd"]
