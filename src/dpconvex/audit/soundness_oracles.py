"""The deterministic claim behind each certificate, stated from the certificate's own numbers.

Each oracle takes a certificate, the row of the differing record and the log of the run's
:class:`~dpconvex.audit.noiseless.NoiselessGenerator`, and returns the largest noiseless
‖w_T − w'_T‖ the certificate allows (:data:`ORACLES`, keyed by ``certificate.mechanism``; the
search of :mod:`dpconvex.audit.soundness` compares it with what it observes):

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
    no oracle here (``None``): its single-use bound assumes only that the differing record's
    (sub)gradient moves the dual iterate by at most ηS_g, which the search checks directly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting.gdp import gd_contraction
from dpconvex.accounting.sensitivity import SGDSchedule, sensitivity_vector
from dpconvex.mechanisms._batches import _poisson_batches_from_gaps
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["ORACLES", "sgd_batches"]


def _gd_oracle(cert: PrivacyCertificate, record: int, log: list) -> float:
    a = cert.assumptions
    c = gd_contraction(a["step_size"], a["strong_convexity"], a["smoothness"])
    return a["step_size"] * a["gradient_sensitivity"] / a["n"] * float(np.sum(c ** np.arange(cert.iterations)))


def sgd_batches(cert: PrivacyCertificate, log: list) -> list[NDArray]:
    """The batches a ``noisy_sgd`` run drew, replayed from its certificate and its generator's ``log``.

    Poisson batching replays the trainer's stream of geometric gaps by the trainer's own rule;
    shuffled and cyclic batching cut the logged permutation (or the identity) into batches of
    ``batch_size``, once per epoch.

    Parameters
    ----------
    cert : PrivacyCertificate
        The run's certificate (its assumptions give n, the batching and the batch size).
    log : list
        The :class:`~dpconvex.audit.noiseless.NoiselessGenerator`'s log of the run.

    Returns
    -------
    list of ndarray
        The index array of every step's batch, in order.
    """
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
    gap, gaps, batches = 0.0, [], sgd_batches(cert, log)
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
