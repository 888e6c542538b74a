"""dpconvex: differentially private convex optimisation with hidden-state privacy certificates.

Train logistic regression, SVMs and ridge models on sensitive data and release only the final
model, with a certificate from the tightest theorem whose assumptions the run satisfies.

The public names (``__all__``) are imported on first use (PEP 562), so ``import dpconvex`` — and the
``dpconvex`` command, whose module lives in this package — loads neither scikit-learn nor the
estimators until one of them is asked for.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

#: Public name → the submodule that defines it.
_EXPORTS = {
    "PrivacyCertificate": "privacy.certificate",
    "PrivateHuberSVC": "estimators.linear_model",
    "PrivateLogisticRegression": "estimators.linear_model",
    "PrivateRidge": "estimators.linear_model",
    "PrivateLinearSVC": "estimators.linear_model",
    "PrivateLADRegressor": "estimators.linear_model",
    "PrivateLogisticRegressionCV": "estimators.model_selection",
    "PrivateHuberSVCCV": "estimators.model_selection",
    "PrivateRidgeCV": "estimators.model_selection",
    "PublicSchemaTransformer": "estimators.preprocessing",
    "SavedModel": "estimators.model_file",
    "load_model": "estimators.model_file",
    "save_model": "estimators.model_file",
    "PrivacyLeakWarning": "exceptions",
    "DataDependentPreprocessingWarning": "exceptions",
    "LowUtilityWarning": "exceptions",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first access and keep the name here (PEP 562).

    Parameters
    ----------
    name : str
        One of ``__all__``.

    Returns
    -------
    Any
        The class or function the submodule defines under ``name``.

    Raises
    ------
    AttributeError
        If ``name`` is not a public name of the package.
    """
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's attributes, the not-yet-imported public names included."""
    return sorted({*globals(), *_EXPORTS})
