"""scikit-learn estimators: the private linear models, private model selection, preprocessing, model files.

Layer: the top of the library; it calls :mod:`dpconvex.mechanisms` and nothing below calls it.
Modules: :mod:`.linear_model` (the estimators), :mod:`.base` (their shared fit), :mod:`.dask_fit`
(fitting on Dask collections), :mod:`.params` (parameter constraints), :mod:`.model_selection`
(the ``…CV`` estimators), :mod:`.preprocessing`
(:class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer`), :mod:`.model_file` and
:mod:`.model_file_checks` (models saved as JSON).

The estimator classes are importable from here as they were before the package existed
(``from dpconvex.estimators import PrivateRidge``).
"""

from dpconvex.estimators.linear_model import (
                                              PrivateHuberSVC,
                                              PrivateLADRegressor,
                                              PrivateLinearSVC,
                                              PrivateLogisticRegression,
                                              PrivateRidge,
)

__all__ = ["PrivateLogisticRegression", "PrivateHuberSVC", "PrivateRidge", "PrivateLinearSVC", "PrivateLADRegressor"]
