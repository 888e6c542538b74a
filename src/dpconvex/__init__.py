"""dpconvex: differentially private convex optimisation with hidden-state privacy certificates.

Train logistic regression, SVMs and ridge models on sensitive data and release only the final
model, with a certificate from the tightest theorem whose assumptions the run satisfies.
"""

from .certificate import PrivacyCertificate
from .estimators import (PrivateHuberSVC, PrivateLADRegressor, PrivateLinearSVC, PrivateLogisticRegression,
                         PrivateRidge)
from .exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning
from .preprocessing import PublicSchemaTransformer

__version__ = "0.1.0"

__all__ = [
    "PrivacyCertificate",
    "PrivateHuberSVC",
    "PrivateLogisticRegression",
    "PrivateRidge",
    "PrivateLinearSVC",
    "PrivateLADRegressor",
    "PublicSchemaTransformer",
    "PrivacyLeakWarning",
    "DataDependentPreprocessingWarning",
    "__version__",
]
