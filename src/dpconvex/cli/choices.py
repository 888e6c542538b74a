"""The names the ``dpconvex`` command offers as choices, without importing the modules that define them.

The defaults ``train`` shares with the estimators (``epsilon``, ``delta``) are repeated here too.

``dpconvex --help`` and ``dpconvex account ...`` must start without scikit-learn, tqdm, matplotlib,
the benchmark or the audit, yet the parsers of ``train``, ``bench``, ``audit`` and ``soundness``
list estimators, trainers, tasks, baselines and audit targets defined in those heavy modules.  The names
are repeated here, and ``tests/test_cli_imports.py`` (``tests/test_cli_regression.py`` for
:data:`MODELS`) checks them against the registries they name, so a registry that gains or loses an
entry fails the test until this module follows.
"""

from __future__ import annotations

__all__ = ["AUDIT_TARGETS", "BENCH_BASELINES", "BENCH_DATASETS", "BENCH_EPSILONS", "BENCH_PANEL_TABLES", "BENCH_TASKS",
           "DEFAULT_DELTA", "DEFAULT_DISCOVERY_SHARE", "DEFAULT_EPSILON", "METHODS", "MODELS", "REGRESSION_MODELS",
           "REPRODUCTION_METHODS"]

#: The estimators' default ``epsilon`` (``PrivateLogisticRegression().epsilon``): the default of
#: ``dpconvex train --epsilon``.
DEFAULT_EPSILON: float = 1.0

#: The estimators' default ``delta``: ``dpconvex train --delta``'s default.
DEFAULT_DELTA: float = 1e-8

#: The private schema discovery's default share of the budget
#: (:data:`dpconvex.datasets.private_release.DEFAULT_DISCOVERY_SHARE`): ``dpconvex train --discovery-share``'s default.
DEFAULT_DISCOVERY_SHARE: float = 0.5

#: ``dpconvex train --model``: each choice and the class of :mod:`dpconvex.estimators.linear_model` it trains.
MODELS: dict[str, str] = {"logistic": "PrivateLogisticRegression", "huber": "PrivateHuberSVC",
                          "hinge": "PrivateLinearSVC", "ridge": "PrivateRidge", "lad": "PrivateLADRegressor"}

#: The ``--model`` choices that are regressors (a numeric target, scored by R²); the others are classifiers.
REGRESSION_MODELS: tuple[str, ...] = ("ridge", "lad")

#: The keys of :data:`dpconvex.mechanisms.METHODS`: every ``method`` the estimators and ``--method`` accept.
METHODS: tuple[str, ...] = ("noisy_gd", "noisy_sgd", "rsgd_ar", "nsgd", "outpert_gd", "pnsgd", "sco_noisy_sgd",
                            "auto")

#: The keys of :data:`dpconvex.mechanisms.METHOD_ADVICE`: faithful paper reproductions, with advice on stderr.
REPRODUCTION_METHODS: tuple[str, ...] = ("pnsgd", "sco_noisy_sgd")

#: The keys of :data:`dpconvex.audit.AUDITS`: the registered audit targets.
AUDIT_TARGETS: tuple[str, ...] = ("noisy-gd", "noisy-gd-logistic", "nsgd", "rsgd-ar", "outpert-gd", "noisy-sgd",
                                  "noisy-sgd-poisson", "noisy-sgd-bounded", "pnsgd", "pnsgd-random-stop",
                                  "sco-noisy-sgd", "auto", "auto-hinge", "private-mean", "auto-ridge",
                                  "auto-multinomial", "auto-one-vs-rest",
                                  "selection", "selection-geometric", "discovery-selection", "discovery-bounds",
                                  "discovery-type")

#: The keys of :data:`dpconvex_lab.bench.TASKS`.
BENCH_TASKS: tuple[str, ...] = ("logistic", "svm")

#: :data:`dpconvex_lab.bench.FULL_EPSILONS`: the default ε grid of ``dpconvex bench``.
BENCH_EPSILONS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)

#: The keys of :data:`dpconvex_lab.baselines.BASELINES`.
BENCH_BASELINES: tuple[str, ...] = ("nonprivate", "majority", "objpert", "sgd_ma", "sgd_ma_replace_one",
                                    "diffprivlib")

#: :data:`dpconvex_lab.bench_datasets.DATASETS`: the bundled data sets ``dpconvex bench`` runs besides Adult.
BENCH_DATASETS: tuple[str, ...] = ("breast_cancer", "wine", "digits")

#: :data:`dpconvex_lab.panel_data.TABLES`: the tables ``dpconvex bench panel --tables`` offers.
BENCH_PANEL_TABLES: tuple[str, ...] = ("iris", "wine", "modechoice", "diabetes", "breast_cancer", "anes96", "digits",
                                       "fair", "randhie", "randhie_any", "adult", "admin")
