"""Adversarial soundness search: noiseless runs of every mechanism against what its certificate assumes.

Every certificate of dpconvex rests on a deterministic claim about the trainer with its noise
switched off: how far apart the released parameters of two neighbouring data sets can be (the
trajectory sensitivity), or how large the one per-step shift is that the differing record causes.
This module states that claim for each mechanism *from the certificate's own numbers* and searches
for neighbouring data sets that break it:

* the real trainer runs with a :class:`NoiselessGenerator`, which returns zero for every Gaussian
  and Laplace draw but draws batches, permutations and stopping times for real (and logs them, so
  the oracle knows which steps touched the differing record);
* both neighbours run with the same seed, so they share every data-independent draw;
* the data (rows in the ball of radius ``data_norm``, labels in their range, the replacement
  record) are optimised — random sampling, then Nelder–Mead from the best start — to maximise
  ``observed / assumed``.  A ratio above 1 means the certificate is smaller than the truth.

Oracles (:data:`ORACLES`, keyed by ``certificate.mechanism``; a mechanism without one is an error):

``noisy_gd``
    θ ↦ Π_C(θ − η(∇L_D(θ) + λθ)) is c-Lipschitz, c = max{|1 − ηm|, |1 − ηM|}, and the neighbours'
    maps differ by at most ηS_g/n: ‖θ_K − θ'_K‖ ≤ (ηS_g/n)·Σ_{k<K} c^k.
``noisy_sgd``
    the same recursion over the batches actually drawn, adding ηS/b when B_k holds the differing
    record: the hidden-state bounds assume the declared c at every step; composition (which only
    assumes the shift) carries the gap by each batch's own c_k = max{|1 − η(λ + r_k m_ℓ)|,
    |1 − η(λ + r_k M_ℓ)|}, r_k = |B_k|/b; the mean of the iterates is bounded by the mean of the bounds.
``nsgd`` / ``rsgd_ar`` / ``outpert_gd``
    ‖w_T − w'_T‖ ≤ Δ[j], the accountant's replayed sensitivity vector
    (:func:`dpconvex.accounting.sensitivity.sensitivity_vector`) at the batch j that held the record.
``pnsgd``
    record t moves x_t by at most ηS_g, each later step contracts by ρ, and K has diameter D:
    ‖x_T − x'_T‖ ≤ min(ηS_g·ρ^{T−t}, D) for T ≥ t (T = n, or the secret stopping time), else 0.
``sco_noisy_sgd``
    the single-use bound assumes only that the differing record's (sub)gradient moves the dual
    iterate by at most ηS_g: sup over w ∈ W of ‖∇f(w; z) − ∇f(w; z')‖₂ ≤ S_g, searched directly.
"""

from __future__ import annotations

import inspect
import math
import typing
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from dpconvex.accounting.gdp import gd_contraction
from dpconvex.accounting.sensitivity import SGDSchedule, sensitivity_vector
from dpconvex.mechanisms import METHODS
from dpconvex.mechanisms.noisy_sgd import _poisson_batches_from_gaps
from dpconvex.objectives import constraints as constraints_module
from dpconvex.objectives.losses import LOSSES, Loss
from dpconvex.objectives.mirror_maps import PNormPotential
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["NoiselessGenerator", "Scenario", "SearchResult", "ORACLES", "scenarios", "search", "example_constraints"]

DATA_NORM, LABEL_BOUND, DIMENSION = 1.0, 1.0, 2
#: Distinct base records of a searched data set (plus the differing record and its replacement).
DISTINCT = 2
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


class NoiselessGenerator(np.random.Generator):
    """A PCG64 generator whose Gaussian and Laplace draws are all zero; other draws are real and logged.

    ``log`` lists ``(method, result)`` for every ``permutation``, ``choice``, ``integers`` and
    ``geometric`` call, in order: the batches (Poisson: as geometric gaps), permutations and
    stopping times of the run.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.log: list[tuple[str, object]] = []

    @staticmethod
    def _zeros(loc, size):
        return np.zeros(size) + loc if size is not None else float(np.asarray(loc))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Zeros of the requested size instead of N(0, 1) draws (not logged)."""
        return self._zeros(0.0, size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """``loc`` in the requested size instead of N(loc, scale²) draws (not logged)."""
        return self._zeros(loc, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """``loc`` in the requested size instead of Laplace(loc, scale) draws (not logged)."""
        return self._zeros(loc, size)

    def _logged(self, name: str, result):
        self.log.append((name, np.array(result, copy=True)))
        return result

    def permutation(self, x, axis=0):
        """numpy's ``Generator.permutation``, logged."""
        return self._logged("permutation", super().permutation(x, axis))

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """numpy's ``Generator.choice``, logged."""
        return self._logged("choice", super().choice(a, size, replace, p, axis, shuffle))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """numpy's ``Generator.integers``, logged."""
        return self._logged("integers", super().integers(low, high, size, dtype, endpoint))

    def geometric(self, p, size=None):
        """numpy's ``Generator.geometric``, logged."""
        return self._logged("geometric", super().geometric(p, size))


def example_constraints() -> list:
    """One instance of every constraint type of :data:`dpconvex.objectives.constraints.Constraint`, small radius."""
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
    """One call of a public trainer: method, loss, constraint, λ and options (noise given, not calibrated)."""

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
    """Method × loss × constraint × λ × option set, accepted or not (:func:`search` probes).

    ``cover="all"``: the full product.  ``cover="each"``: every method × loss × constraint once, with
    λ and the option set rotating through their values (a covering subset for CI: every mechanism,
    loss, constraint, λ and option set still appears).  ``methods`` restricts the methods (default all).
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


# ----------------------------------------------------------------------------- oracles
def _gd_oracle(cert: PrivacyCertificate, record: int, log: list) -> float:
    a = cert.assumptions
    c = gd_contraction(a["step_size"], a["strong_convexity"], a["smoothness"])
    return a["step_size"] * a["gradient_sensitivity"] / a["n"] * float(np.sum(c ** np.arange(cert.iterations)))


def _sgd_batches(cert: PrivacyCertificate, log: list) -> list[NDArray]:
    a = cert.assumptions
    n, b = a["n"], a["batch_size"]
    if a["batching"] == "poisson":  # the trainer's stream of geometric gaps, replayed by its own rule
        gaps = [np.atleast_1d(result) for name, result in log if name == "geometric"]
        return _poisson_batches_from_gaps(np.concatenate(gaps) if gaps else np.empty(0, dtype=np.int64), n,
                                          cert.iterations)
    order = next(result for name, result in log if name == "permutation") if a["batching"] == "shuffled" \
        else np.arange(n)
    partition = [order[start:start + b] for start in range(0, n, b)]
    return partition * a["epochs"]


def _sgd_oracle(cert: PrivacyCertificate, record: int, log: list) -> float:
    """Hidden-state bounds (bok-cgd, exact-quadratic) assume the DECLARED c = max{|1 − ηm|, |1 − ηM|} at
    every step, so that is what is checked; composition assumes only the per-step shift, and the gap is
    carried by each drawn batch's own contraction (m_ℓ, M_ℓ scaled by |B_k|/b, plus λ)."""
    a = cert.assumptions
    eta, b, l2 = a["step_size"], a["batch_size"], a["l2_regularization"]
    declared = gd_contraction(eta, a["strong_convexity"], a["smoothness"])
    loss_m, loss_big_m = a["strong_convexity"] - l2, a["smoothness"] - l2
    gap, gaps, batches = 0.0, [], _sgd_batches(cert, log)
    for batch in batches:
        r = len(batch) / b
        c = gd_contraction(eta, l2 + r * loss_m, l2 + r * loss_big_m) if cert.bound == "composition" else declared
        gap = c * gap + (eta * a["gradient_sensitivity"] / b if record in batch else 0.0)
        gaps.append(gap)
    # The released output's gap: the last iterate's, or the mean of the averaged iterates' (the trainer
    # averages θ_first..θ_T; tail_average: first = T//2 + 1, i.e. the last ceil(T/2) iterates).
    first = {"last iterate only": len(gaps) - 1, "mean of all iterates": 0,
             "mean of the last ceil(T/2) iterates": len(gaps) // 2}[a["released"]]  # unknown output: KeyError
    return float(np.mean(gaps[first:]))


def _output_perturbation_oracle(cert: PrivacyCertificate, record: int, log: list) -> float:
    a = cert.assumptions
    schedule = SGDSchedule(tuple(a["batch_sizes"]), tuple(a["epoch_step_sizes"]), a["averaging_interval"])
    vector = sensitivity_vector(schedule, smoothness=a["smoothness"], strong_convexity=a["strong_convexity"],
                                gradient_difference=a["gradient_difference"])
    permutations = [result for name, result in log if name == "permutation"]
    position = int(np.flatnonzero(permutations[0] == record)[0]) if a["permuted"] else record
    batch = int(np.searchsorted(np.cumsum(schedule.batch_sizes), position, side="right"))
    return float(vector[batch])


def _pnsgd_oracle(cert: PrivacyCertificate, record: int, log: list) -> float:
    a = cert.assumptions
    stop = int(next(result for name, result in log if name == "integers")) if a["random_stop"] else a["n"]
    step = record + 1  # the record in row t is used at step t
    if stop < step:
        return 0.0
    with np.errstate(over="ignore"):
        moved = a["step_size"] * a["gradient_sensitivity"] * a["rho"] ** (stop - step)
    return float(min(moved, a["diameter"]))


#: Deterministic claim of each mechanism's certificate, keyed by ``certificate.mechanism``: the
#: largest noiseless ‖w_T − w'_T‖ it allows when the neighbours differ in row ``record``.
#: ``sco_noisy_sgd`` states a per-step claim instead (``_gradient_gap_search``).
ORACLES: dict[str, Callable[[PrivacyCertificate, int, list], float] | None] = {
    "noisy_gd": _gd_oracle,
    "noisy_sgd": _sgd_oracle,
    "nsgd": _output_perturbation_oracle,
    "rsgd_ar": _output_perturbation_oracle,
    "outpert_gd": _output_perturbation_oracle,
    "pnsgd": _pnsgd_oracle,
    "sco_noisy_sgd": None,
}


# ----------------------------------------------------------------------------- search
@dataclass(frozen=True)
class SearchResult:
    """Largest ``observed / assumed`` found for one scenario, with the pair of numbers that gave it
    (``None`` ratio: the trainer refused the scenario, with its message in ``refusal``)."""

    scenario: str
    mechanism: str | None
    ratio: float | None
    observed: float = math.nan
    assumed: float = math.nan
    refusal: str = ""


def _records(params: NDArray, count: int, classification: bool) -> tuple[NDArray, NDArray]:
    """Map free parameters to ``count`` records: rows in the ball of radius DATA_NORM, labels in range."""
    raw = params.reshape(count, DIMENSION + 1)
    rows = raw[:, :DIMENSION]
    norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    X = DATA_NORM * np.tanh(norms) * rows / norms
    y = np.where(raw[:, DIMENSION] >= 0, 1.0, -1.0) if classification else LABEL_BOUND * np.tanh(raw[:, DIMENSION])
    return X, y


def _pair(params: NDArray, n: int, record: int, classification: bool):
    """Neighbours of size n built from DISTINCT base records (interleaved) plus the differing record.

    Worst cases are data sets of few distinct points, and a large n with few distinct points keeps
    the search low-dimensional while making each record's per-step shift small, which is where a
    locally expansive map (e.g. a non-Euclidean projection) shows.
    """
    X_all, y_all = _records(params, DISTINCT + 2, classification)
    kinds = np.arange(n) % DISTINCT
    X, y = X_all[kinds], y_all[kinds]
    X[record], y[record] = X_all[DISTINCT], y_all[DISTINCT]
    X_prime, y_prime = X.copy(), y.copy()
    X_prime[record], y_prime[record] = X_all[DISTINCT + 1], y_all[DISTINCT + 1]
    return X, y, X_prime, y_prime


def _nelder_mead(objective: Callable[[NDArray], float], start: NDArray, budget: int) -> tuple[float, NDArray]:
    found = optimize.minimize(lambda p: -objective(p), start, method="Nelder-Mead",
                              options={"maxfev": budget, "xatol": 1e-8, "fatol": 1e-12})
    return -float(found.fun), found.x


def _maximise(objective: Callable[[NDArray], float], dimension: int, rng: np.random.Generator, samples: int,
              polish: int, structure: tuple[int, Callable[[NDArray], NDArray]] | None = None) -> float:
    """Largest value of ``objective`` found by sampling and Nelder–Mead (normal starts, random scales).

    With ``structure = (k, embed)`` the search first runs in a k-dimensional family of structured
    worst-case candidates (``embed`` maps it into the full space: e.g. identical base records and a
    record against its opposite), from its two best random starts, then polishes the best point in
    the full space; otherwise it samples and polishes in the full space directly.
    """
    if structure is None:
        structure = (dimension, lambda p: p)
    size, embed = structure
    # Scales log-uniform in [0.1, 3]: the maps tanh(‖u‖)·u/‖u‖ then reach every norm in the data ball.
    starts = rng.normal(size=(samples, size)) * np.exp(rng.uniform(np.log(0.1), np.log(3.0), size=(samples, 1)))
    values = [objective(embed(start)) for start in starts]
    best, best_point = max(values), embed(starts[int(np.argmax(values))])
    for index in np.argsort(values)[::-1][:2]:
        value, point = _nelder_mead(lambda q: objective(embed(q)), starts[index], polish)
        if value > best:
            best, best_point = value, embed(point)
    if size < dimension:
        best = max(best, _nelder_mead(objective, best_point, polish)[0])
    return best


def _opposite_record(reduced: NDArray) -> NDArray:
    """(base record, differing record) → identical base records and a replacement that is the
    differing record's opposite with the same label (the classic worst case of replace-one)."""
    base, record = reduced[: DIMENSION + 1], reduced[DIMENSION + 1:]
    opposite = np.concatenate([-record[:DIMENSION], record[DIMENSION:]])
    return np.concatenate([np.tile(base, DISTINCT), record, opposite])


def _gradient_gap_search(scenario: Scenario, cert: PrivacyCertificate, rng: np.random.Generator,
                         samples: int, polish: int) -> tuple[float, float]:
    """sup over w ∈ W and records z, z' of ‖∇f(w; z) − ∇f(w; z')‖₂ against the certified S_g."""
    loss, constraint = scenario.loss, scenario.constraint
    radius = cert.assumptions["diameter"] / 2.0  # the certificate's own domain (also when constraint="auto")
    project = constraint.project if not isinstance(constraint, str) else constraints_module.L2Ball(radius).project

    def gap(params: NDArray) -> float:
        w = project(radius * 3.0 * np.tanh(params[:DIMENSION]))
        X, y = _records(params[DIMENSION:], 2, loss.classification)
        g = loss.per_example_gradients(w, X, y)
        return float(np.linalg.norm(g[0] - g[1]))

    observed = _maximise(gap, DIMENSION + 2 * (DIMENSION + 1), rng, samples, polish)
    return observed, float(cert.assumptions["gradient_sensitivity"])


def search(scenario: Scenario, *, sizes: tuple[int, ...] | None = None, samples: int = 16, polish: int = 80,
           seed: int = 0) -> SearchResult:
    """Largest ``observed / assumed`` over neighbouring data sets (noise off), or the trainer's refusal."""
    rng = np.random.default_rng(seed)
    sizes = SIZES_BY_METHOD.get(scenario.method, SIZES) if sizes is None else sizes
    classification = scenario.loss.classification
    dimension = (DISTINCT + 2) * (DIMENSION + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            X, y, _, _ = _pair(rng.normal(size=dimension), sizes[0], 0, classification)
            probe, _ = scenario.train(X, y, seed)
        except ValueError as refusal:
            return SearchResult(scenario.label(), None, None, refusal=str(refusal))
        cert = probe.certificate
        if cert.mechanism not in ORACLES:
            raise KeyError(f"no soundness oracle for mechanism {cert.mechanism!r}: add one to ORACLES.")
        oracle = ORACLES[cert.mechanism]
        if oracle is None:
            observed, assumed = _gradient_gap_search(scenario, cert, rng, samples, polish)
            return SearchResult(scenario.label(), cert.mechanism, observed / assumed, observed, assumed)
        best = {"ratio": 0.0, "observed": math.nan, "assumed": math.nan}
        for n in sizes:
            for record in (0, n - 1):
                def ratio(params: NDArray, n: int = n, record: int = record) -> float:
                    X, y, X_prime, y_prime = _pair(params, n, record, classification)
                    first, log = scenario.train(X, y, seed)
                    second, _ = scenario.train(X_prime, y_prime, seed)
                    assumed = oracle(first.certificate, record, log)
                    observed = float(np.linalg.norm(first.coef - second.coef))
                    value = observed / assumed if assumed > 0 else (math.inf if observed > 1e-12 else 0.0)
                    if value > best["ratio"]:
                        best.update(ratio=value, observed=observed, assumed=assumed)
                    return value

                _maximise(ratio, dimension, rng, samples, polish, (2 * (DIMENSION + 1), _opposite_record))
    return SearchResult(scenario.label(), cert.mechanism, best["ratio"], best["observed"], best["assumed"])


def _search_one(arguments: tuple[Scenario, int, int, int]) -> SearchResult:
    scenario, samples, polish, seed = arguments
    return search(scenario, samples=samples, polish=polish, seed=seed)


def sweep(cover: str = "each", *, methods: tuple[str, ...] | None = None, samples: int = 16, polish: int = 80,
          seed: int = 0, workers: int = 1) -> list[SearchResult]:
    """:func:`search` over every scenario of :func:`scenarios` (``workers`` > 1: in parallel processes)."""
    jobs = [(scenario, samples, polish, seed) for scenario in scenarios(cover, methods)]
    if workers <= 1:
        return [_search_one(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_search_one, jobs, chunksize=1))


def summary(results: list[SearchResult]) -> dict[str, dict[str, float | int]]:
    """Per mechanism: scenarios searched, largest ratio observed/certified, and refusals (by method)."""
    table: dict[str, dict[str, float | int]] = {}
    for result in results:
        method = result.scenario.split(" | ")[0]
        row = table.setdefault(method, {"accepted": 0, "refused": 0, "largest_ratio": 0.0})
        if result.ratio is None:
            row["refused"] += 1
        else:
            row["accepted"] += 1
            row["largest_ratio"] = max(row["largest_ratio"], result.ratio)
    return table
