"""The trainer calls the soundness search (:mod:`dpconvex.audit.soundness`) probes, and their settings.

A :class:`Scenario` is one call of a public trainer (method, loss, constraint, λ, options) with its
noise given rather than calibrated; :func:`scenarios` enumerates them from the registries
(``METHODS``, ``LOSSES``, the ``Constraint`` union), so a new mechanism, loss or constraint is
searched without editing the search.  The constants below fix the searched data (dimension,
norm and label bounds, sizes) and the option sets tried per mechanism.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from numpy.typing import NDArray

from dpconvex.audit.noiseless import NoiselessGenerator
from dpconvex.mechanisms import METHODS
from dpconvex.objectives import constraints as constraints_module
from dpconvex.objectives.losses import LOSSES, Loss
from dpconvex.objectives.mirror_maps import PNormPotential

__all__ = ["Scenario", "scenarios", "example_constraints", "METHOD_OPTIONS", "CONSTRAINT_FIELD_VALUES"]

DATA_NORM, LABEL_BOUND, DIMENSION = 1.0, 1.0, 2
#: Data-set sizes searched: few records (large per-record shifts) and many (small, local shifts).
#: Mini-batch shifts are ηS/b whatever n, so those methods need fewer records; ``auto`` re-plans
#: (calibrates three candidates) on every call, so it searches one size.
SIZES = (5, 40)
SIZES_BY_METHOD = {"noisy_sgd": (5, 16), "rsgd_ar": (5, 16), "nsgd": (5, 16), "auto": (6,)}
#: Regularisation strengths tried (λ = 0 reaches the merely convex branches).
L2_VALUES = (0.0, 0.1)
#: Values tried for each field of a constraint dataclass (a new field needs an entry here).
CONSTRAINT_FIELD_VALUES: dict[str, tuple] = {"radius": (0.4,), "p": (1.1,)}
#: Per-mechanism option sets (``"edge"`` step size = 0.95·2/M, the limit of the admissible range).
METHOD_OPTIONS: dict[str, list[dict]] = {
    "noisy_gd": [{"iterations": 8}, {"iterations": 8, "step_size": "edge"}],
    "noisy_sgd": [{"batching": "poisson", "batch_size": 2, "epochs": 2, "output": "last"},
                  {"batching": "poisson", "batch_size": 2, "epochs": 2, "output": "average", "clip_norm": 0.5},
                  {"batching": "shuffled", "batch_size": 2, "epochs": 3, "output": "last"},
                  {"batching": "shuffled", "batch_size": 2, "epochs": 3, "output": "last", "step_size": "edge"},
                  {"batching": "cyclic", "batch_size": 2, "epochs": 3, "output": "average", "clip_norm": 0.5}],
    "nsgd": [{"batch_size": 2, "epochs": 3}, {"batch_size": 2, "epochs": 3, "step_size": "edge"}],
    "rsgd_ar": [{"batch_size": 2, "epochs": 4, "averaging_interval": 2}],
    "outpert_gd": [{"epochs": 4}, {"epochs": 4, "step_size": "edge"}],
    "pnsgd": [{"random_stop": False}, {"random_stop": True}, {"random_stop": False, "step_size": "edge"}],
    "sco_noisy_sgd": [{"step_size": 0.5}],
    "auto": [{}],
}


def example_constraints() -> list:
    """One instance of every constraint type of :data:`dpconvex.objectives.constraints.Constraint`, small radius.

    Returns
    -------
    list
        The instances, built from ``CONSTRAINT_FIELD_VALUES`` (a ``ValueError`` names missing fields).
    """
    examples = []
    for kind in typing.get_args(constraints_module.Constraint):
        names = [f.name for f in fields(kind)]
        unknown = [name for name in names if name not in CONSTRAINT_FIELD_VALUES]
        if unknown:
            raise ValueError(f"no example values for {kind.__name__} fields {unknown}: add them to "
                             "CONSTRAINT_FIELD_VALUES so the soundness search covers the new constraint.")
        examples.append(kind(**{name: CONSTRAINT_FIELD_VALUES[name][0] for name in names}))
    return examples


@dataclass(frozen=True)
class Scenario:
    """One call of a public trainer: method, loss, constraint, λ and options (noise given, not calibrated).

    Attributes
    ----------
    method : str
        The trainer's name (a key of ``METHODS``).
    loss_name : str
        The loss's name.
    constraint : object
        A constraint instance or ``"auto"``.
    l2_regularization : float
        λ.
    options : dict
        The trainer's other keywords.
    """

    method: str
    loss_name: str
    constraint: object
    l2_regularization: float
    options: dict = field(default_factory=dict)

    @property
    def loss(self) -> Loss:
        return LOSSES[self.loss_name]()

    def label(self) -> str:
        constraint = self.constraint if isinstance(self.constraint, str) else self.constraint.describe()
        extras = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.method} | {self.loss_name} | {constraint} | l2={self.l2_regularization:g} | {extras}"

    def kwargs(self) -> dict:
        """Keyword arguments for ``METHODS[method]`` (``"edge"`` step size resolved)."""
        loss = self.loss
        options = dict(self.options)
        if options.get("step_size") == "edge":
            bounded = self.constraint if not isinstance(self.constraint, str) else constraints_module.Unconstrained()
            smoothness = loss.constants(DATA_NORM, self.l2_regularization, bounded, LABEL_BOUND).smoothness
            options["step_size"] = 0.95 * 2.0 / smoothness
        parameters = inspect.signature(METHODS[self.method]).parameters
        if "potential" in parameters and hasattr(self.constraint, "p"):
            options["potential"] = PNormPotential(self.constraint.p)
        noise = {"epsilon": 1.0} if self.method == "auto" else {"sigma": 1.0}
        return dict(loss=loss, l2_regularization=self.l2_regularization, delta=1e-5, data_norm=DATA_NORM,
                    label_bound=LABEL_BOUND if not loss.classification else None, constraint=self.constraint,
                    **noise, **options)

    def train(self, X: NDArray, y: NDArray, seed: int):
        generator = NoiselessGenerator(seed)
        result = METHODS[self.method](X, y, random_state=generator, **self.kwargs())
        return result, generator.log


def scenarios(cover: str = "all", methods: tuple[str, ...] | None = None) -> Iterator[Scenario]:
    """Method × loss × constraint × λ × option set, accepted or not (:func:`~dpconvex.audit.soundness.search` probes).

    ``cover="all"``: the full product.  ``cover="each"``: every method × loss × constraint once, with
    λ and the option set rotating through their values (a covering subset for CI: every mechanism,
    loss, constraint, λ and option set still appears).  ``methods`` restricts the methods (default all).

    Parameters
    ----------
    cover : {"all", "each"}
        The full product or the covering subset.
    methods : tuple of str, optional
        The methods to cover.

    Yields
    ------
    Scenario
    """
    if cover not in ("all", "each"):
        raise ValueError(f"cover must be 'all' or 'each'; got {cover!r}.")
    unknown = sorted(set(methods or ()) - set(METHODS))
    if unknown:
        raise ValueError(f"methods must be names from {sorted(METHODS)}; got {unknown}.")
    for method, trainer in METHODS.items():
        if methods is not None and method not in methods:
            continue
        parameter = inspect.signature(trainer).parameters.get("constraint")
        candidates = example_constraints() + (["auto"] if parameter is not None and parameter.default == "auto" else [])
        option_sets = METHOD_OPTIONS.get(method, [{}])
        combinations = [(loss, constraint) for loss in LOSSES for constraint in candidates]
        for index, (loss_name, constraint) in enumerate(combinations):
            if cover == "all":
                for l2 in L2_VALUES:
                    for options in option_sets:
                        yield Scenario(method, loss_name, constraint, l2, options)
            else:
                yield Scenario(method, loss_name, constraint, L2_VALUES[index % len(L2_VALUES)],
                               option_sets[index % len(option_sets)])

