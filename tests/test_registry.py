"""The mechanism registry: one entry per method, and every other table of method metadata is a view of it.

Each entry's claims are checked against the behaviour of the code it names: its options are the
public trainer's keywords and the estimators forward exactly them; a non-smooth loss is refused
exactly by the entries that require smoothness; plan + train equal the public trainer bit for bit
at the same seed; the literal list of the command line equals the registry.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dpconvex.audit import soundness
from dpconvex.cli import choices as cli_choices
from dpconvex.estimators.base import BOUNDED_DOMAIN_METHODS, METHOD_OPTIONS, OPTIMISER_OPTIONS
from dpconvex.estimators.linear_model import PrivateLogisticRegression
from dpconvex.mechanisms import MECHANISMS, METHOD_ADVICE, METHODS, REGISTRY, MechanismSpec, output_perturbation_sgd
from dpconvex.mechanisms._keywords import split_keywords
from dpconvex.mechanisms.backends import METHOD_BACKENDS
from dpconvex.mechanisms.problem import PROBLEM_KEYWORDS, Problem
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import HingeLoss, LogisticLoss

pytestmark = pytest.mark.filterwarnings("error::dpconvex.exceptions.PrivacyLeakWarning")


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.where(X[:, 0] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)


#: A small run of every method: the problem's keywords (noise given where the method allows it) and options.
RUNS = {
    "noisy_gd": dict(sigma=1.0, iterations=5),
    "noisy_sgd": dict(sigma=1.0, epochs=2, batch_size=8),
    "rsgd_ar": dict(epsilon=1.0, epochs=2, batch_size=8),
    "nsgd": dict(epsilon=1.0, epochs=2, batch_size=8),
    "outpert_gd": dict(sigma=0.5, epochs=3),
    "pnsgd": dict(epsilon=1.0),
    "sco_noisy_sgd": dict(sigma=1.0),
    "auto": dict(epsilon=1.0),
}


def _public_keywords(spec: MechanismSpec) -> dict[str, inspect.Parameter]:
    """The public trainer's parameters; nsgd, rsgd_ar and outpert_gd pass theirs on to output_perturbation_sgd."""
    parameters = inspect.signature(spec.function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        parameters = inspect.signature(output_perturbation_sgd).parameters
    return dict(parameters)


def test_every_method_has_one_entry_in_the_command_lines_order():
    assert cli_choices.METHODS == tuple(REGISTRY) == tuple(METHODS)
    assert set(RUNS) == set(REGISTRY)
    for name, spec in REGISTRY.items():
        assert isinstance(spec, MechanismSpec) and spec.name == name
        assert spec.summary and "\n" not in spec.summary and spec.backends[0] == "numpy"
        assert set(spec.backends) <= {"numpy", "dask"}


def test_the_backend_table_the_trainers_check_is_the_registrys():
    assert list(METHOD_BACKENDS.items()) == [(name, spec.backends) for name, spec in REGISTRY.items()]


def test_the_tables_are_views_of_the_registry():
    assert all(METHODS[name] is spec.function for name, spec in REGISTRY.items())
    assert set(MECHANISMS) == set(REGISTRY) - {"auto"}
    assert METHOD_ADVICE == {name: spec.advice for name, spec in REGISTRY.items() if spec.advice}
    assert set(cli_choices.REPRODUCTION_METHODS) == set(METHOD_ADVICE)
    assert METHOD_OPTIONS == {name: spec.options for name, spec in REGISTRY.items()}
    assert BOUNDED_DOMAIN_METHODS == {name for name, spec in REGISTRY.items() if spec.bounded_domain}
    assert set(OPTIMISER_OPTIONS) == {"step_size", "iterations", "batch_size", "epochs"}
    # The soundness search's option sets are values of the trainers' keywords, per registered method.
    assert set(soundness.METHOD_OPTIONS) <= set(REGISTRY)
    for name, option_sets in soundness.METHOD_OPTIONS.items():
        assert all(set(options) <= set(_public_keywords(REGISTRY[name])) for options in option_sets)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_a_public_trainer_takes_the_problem_keywords_its_options_and_the_plans_defaults(name):
    spec = REGISTRY[name]
    public = _public_keywords(spec)
    planned = {key: p for key, p in inspect.signature(spec.plan).parameters.items() if key != "problem"}
    assert set(PROBLEM_KEYWORDS) <= set(public) and {"X", "y", "random_state"} <= set(public)
    assert set(spec.options) <= set(planned)
    _, options = split_keywords(public)
    own = {key for key in options if key not in ("X", "y", "random_state")}
    assert own == set(planned)
    for key, parameter in planned.items():  # the plan's defaults are the public trainer's (the variant: its name)
        assert parameter.default == (name if key == "variant" else public[key].default), (name, key)


#: The public trainers' defaults of problem keywords where they are not Problem.from_arrays's (the public API).
OWN_DEFAULTS = {"noisy_sgd": {"constraint": "auto"}, "pnsgd": {"constraint": "auto"},
                "sco_noisy_sgd": {"l2_regularization": 0.0, "constraint": "auto"},
                "auto": {"l2_regularization": "auto", "constraint": "auto"}}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_a_public_trainers_problem_keywords_default_as_from_arrays_but_its_own(name):
    public = _public_keywords(REGISTRY[name])
    declared = inspect.signature(Problem.from_arrays).parameters
    for key in PROBLEM_KEYWORDS:
        assert public[key].default == OWN_DEFAULTS.get(name, {}).get(key, declared[key].default), (name, key)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_a_public_trainer_refuses_an_unknown_or_missing_keyword_with_a_type_error_naming_it(name):
    X, y = _data()
    trainer = REGISTRY[name].function
    with pytest.raises(TypeError, match=r"\(\) got an unexpected keyword argument 'stepsize'"):
        trainer(X, y, loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0, stepsize=0.1)
    with pytest.raises(TypeError, match=r"\(\) missing 1 required keyword-only argument: 'loss'"):
        trainer(X, y, l2_regularization=0.1, delta=1e-6, epsilon=1.0)
    with pytest.raises(TypeError, match="positional arguments"):
        trainer(X, y, LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_plan_then_train_is_the_public_trainer_bit_for_bit(name):
    spec = REGISTRY[name]
    X, y = _data()
    run = dict(RUNS[name])
    declared = dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, data_norm=1.0,
                    constraint=L2Ball(2.0) if name in ("pnsgd", "sco_noisy_sgd") else "auto"
                    if spec.bounded_domain else L2Ball(5.0))
    noise = {key: run.pop(key) for key in ("epsilon", "sigma") if key in run}
    public = spec.function(X, y, **declared, **noise, **run, random_state=3)
    problem = Problem.from_arrays(X, y, **declared, **noise, require_smooth=spec.requires_smooth)
    direct = spec.train(problem, spec.plan(problem, **run), 3)
    assert np.array_equal(public.coef, direct.coef)
    assert public.certificate == direct.certificate


@pytest.mark.parametrize("name", list(REGISTRY))
def test_requires_smooth_is_what_the_trainer_does_with_a_non_smooth_loss(name):
    spec = REGISTRY[name]
    X, y = _data()
    problem_keywords = dict(loss=HingeLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0,
                            constraint=L2Ball(1.0))
    if spec.requires_smooth:
        with pytest.raises(ValueError, match="is not smooth"):
            spec.function(X, y, **problem_keywords)
    else:
        assert np.all(np.isfinite(spec.function(X, y, **problem_keywords, random_state=0).coef))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_the_estimator_forwards_exactly_the_registered_options(name, monkeypatch):
    spec = REGISTRY[name]
    seen = {}

    def recording_plan(problem, **options):
        seen.update(options)
        return spec.plan(problem, **options)

    monkeypatch.setitem(REGISTRY, name, MechanismSpec(**{**spec.__dict__, "plan": recording_plan}))
    X, y = _data(n=80)
    PrivateLogisticRegression(method=name, classes=[-1, 1], random_state=0).fit(X, y)
    assert set(seen) == set(spec.options) and all(value == "auto" for value in seen.values())
    for option in OPTIMISER_OPTIONS:
        if option not in spec.options:
            with pytest.raises(ValueError, match=f"'{option}' parameter applies to method in"):
                PrivateLogisticRegression(method=name, classes=[-1, 1], **{option: 3}).fit(X, y)


def test_the_estimator_validates_x_once(monkeypatch):
    import dpconvex.mechanisms.problem as problem_module

    calls = []
    original = problem_module.check_training_data
    monkeypatch.setattr(problem_module, "check_training_data", lambda X, y: calls.append(X.shape) or original(X, y))
    X, y = _data(n=80)
    PrivateLogisticRegression(classes=[-1, 1], fit_intercept=True, random_state=0).fit(X, y)  # method="auto"
    assert calls == [(80, 4)]
