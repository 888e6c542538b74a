"""The public trainers' signatures: written out in their ``def``, unchanged, and built by the one keyword rule.

Each public trainer takes the data and the problem's keywords of ``Problem.from_arrays`` (but
``require_smooth``, with the trainer's own defaults where it has them), then the keyword-only options of its
mechanism's ``plan`` with the plan's defaults, then ``random_state``: what ``inspect.signature`` shows, what a call
is bound to, and what ``_keywords.train_with_keywords`` splits into the problem and the options.
"""

from __future__ import annotations

import inspect

import pytest

import dpconvex.mechanisms as mechanisms
from dpconvex.mechanisms import REGISTRY
from dpconvex.mechanisms.output_perturbation import output_perturbation_sgd
from dpconvex.mechanisms.output_perturbation import plan as output_perturbation_plan
from dpconvex.mechanisms.problem import PROBLEM_KEYWORDS, Problem

#: ``str(inspect.signature(trainer))`` of every public trainer, recorded before the parameters were written out
#: (they were built at run time then): the public API, which must not change.
SIGNATURES = {
    "noisy_gd": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str', delta: 'float', "
        "epsilon: 'float | None' = None, sigma: 'float | None' = None, data_norm: 'float' = 1.0, "
        "label_bound: 'float | None' = None, constraint: 'Constraint | str' = Unconstrained(), "
        "strict: 'bool' = False, step_size: 'float | str' = 'auto', iterations: 'int | str' = 'auto', "
        "bound: 'str' = 'best', initialization: 'str' = 'auto', "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "noisy_sgd": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str', delta: 'float', "
        "epsilon: 'float | None' = None, sigma: 'float | None' = None, data_norm: 'float' = 1.0, "
        "label_bound: 'float | None' = None, constraint: 'Constraint | str' = 'auto', "
        "strict: 'bool' = False, batching: 'str' = 'poisson', batch_size: 'int | str' = 'auto', "
        "epochs: 'int | str' = 'auto', step_size: 'float | str' = 'auto', "
        "clip_norm: 'float | None' = None, output: 'str' = 'auto', bound: 'str' = 'best', "
        "progress: 'bool | None' = None, "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "pnsgd": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str', delta: 'float', "
        "epsilon: 'float | None' = None, sigma: 'float | None' = None, data_norm: 'float' = 1.0, "
        "label_bound: 'float | None' = None, constraint: 'Constraint | str' = 'auto', "
        "strict: 'bool' = False, noise: 'str' = 'gaussian', random_stop: 'bool' = False, "
        "step_size: 'float | str' = 'auto', "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "sco_noisy_sgd": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str' = 0.0, "
        "delta: 'float', epsilon: 'float | None' = None, sigma: 'float | None' = None, "
        "data_norm: 'float' = 1.0, label_bound: 'float | None' = None, "
        "constraint: 'Constraint | str' = 'auto', strict: 'bool' = False, "
        "step_size: 'float | str' = 'auto', "
        "potential: 'str | EuclideanPotential | PNormPotential' = 'euclidean', "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "auto": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str' = 'auto', "
        "delta: 'float', epsilon: 'float | None' = None, sigma: 'float | None' = None, "
        "data_norm: 'float' = 1.0, label_bound: 'float | None' = None, "
        "constraint: 'Constraint | str' = 'auto', strict: 'bool' = False, "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "output_perturbation_sgd": (
        "(X: 'NDArray', y: 'NDArray', *, loss: 'Loss', l2_regularization: 'float | str', delta: 'float', "
        "epsilon: 'float | None' = None, sigma: 'float | None' = None, data_norm: 'float' = 1.0, "
        "label_bound: 'float | None' = None, constraint: 'Constraint | str' = Unconstrained(), "
        "strict: 'bool' = False, variant: 'str' = 'rsgd_ar', batch_size: 'int | str' = 'auto', "
        "epochs: 'int | str' = 'auto', step_size: 'float | str' = 'auto', "
        "averaging_interval: 'int | str' = 'auto', "
        "random_state: 'None | int | np.random.Generator' = None) -> 'TrainingResult'"
    ),
    "nsgd": (
        "(X, y, **kwargs) -> 'TrainingResult'"
    ),
    "rsgd_ar": (
        "(X, y, **kwargs) -> 'TrainingResult'"
    ),
    "outpert_gd": (
        "(X, y, **kwargs) -> 'TrainingResult'"
    ),
}

#: The trainers' own defaults of problem keywords, where they are not ``Problem.from_arrays``'s.
OWN_DEFAULTS = {"noisy_sgd": {"constraint": "auto"}, "pnsgd": {"constraint": "auto"},
                "sco_noisy_sgd": {"l2_regularization": 0.0, "constraint": "auto"},
                "auto": {"l2_regularization": "auto", "constraint": "auto"}}

#: Trainers with their own ``def`` and the ``plan`` whose options they take (nsgd, rsgd_ar and outpert_gd pass
#: ``(X, y, **kwargs)`` on to output_perturbation_sgd with their variant).
KEYWORD_TRAINERS = {**{name: (spec.function, spec.plan) for name, spec in REGISTRY.items()
                      if name not in ("nsgd", "rsgd_ar", "outpert_gd")},
                    "output_perturbation_sgd": (output_perturbation_sgd, output_perturbation_plan)}


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_every_public_trainers_signature_is_unchanged(name):
    assert str(inspect.signature(getattr(mechanisms, name))) == "".join(SIGNATURES[name])


def test_every_public_trainer_is_recorded():
    assert set(SIGNATURES) == set(REGISTRY) | {"output_perturbation_sgd"}


def _expected_signature(name, plan):
    """The signature the keyword rule builds: from_arrays's parameters, the plan's options, random_state."""
    problem = [parameter for key, parameter in inspect.signature(Problem.from_arrays).parameters.items()
               if key != "require_smooth"]
    own = OWN_DEFAULTS.get(name, {})
    problem = [parameter.replace(default=own.get(parameter.name, parameter.default)) for parameter in problem]
    options = [parameter for parameter in inspect.signature(plan).parameters.values()
               if parameter.kind is inspect.Parameter.KEYWORD_ONLY]
    random_state = inspect.Parameter("random_state", inspect.Parameter.KEYWORD_ONLY, default=None,
                                     annotation="None | int | np.random.Generator")
    return inspect.Signature([*problem, *options, random_state], return_annotation="TrainingResult")


@pytest.mark.parametrize("name", list(KEYWORD_TRAINERS))
def test_a_trainers_parameters_are_the_problem_keywords_then_its_plans_options_then_the_seed(name):
    trainer, plan = KEYWORD_TRAINERS[name]
    signature, expected = inspect.signature(trainer), _expected_signature(name, plan)
    parameters, rule = list(signature.parameters.values()), list(expected.parameters.values())
    # The data: names and kinds (their annotations are the trainer's: it is handed arrays).
    assert [(p.name, p.kind) for p in parameters[:2]] == [(p.name, p.kind) for p in rule[:2]]
    # The keywords: names, kinds, defaults and annotations, in order.
    assert signature.replace(parameters=parameters[2:]) == expected.replace(parameters=rule[2:])
    assert [p.name for p in parameters[:2]] == ["X", "y"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[2:])
    assert tuple(p.name for p in parameters[2:2 + len(PROBLEM_KEYWORDS)]) == PROBLEM_KEYWORDS
    assert set(OWN_DEFAULTS.get(name, {})) <= set(PROBLEM_KEYWORDS)


@pytest.mark.parametrize("name", list(KEYWORD_TRAINERS))
def test_a_trainers_docstring_documents_every_parameter(name):
    trainer, _ = KEYWORD_TRAINERS[name]
    documented = trainer.__doc__.split("Parameters\n    ----------\n", 1)[1]
    entries = {key.strip() for line in documented.splitlines() if line.startswith("    ") and line[4:5] not in (" ", "")
               for key in line.split(" : ")[0].split(",")}
    assert set(inspect.signature(trainer).parameters) <= entries, name
