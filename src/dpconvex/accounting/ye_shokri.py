"""Ye & Shokri's shuffle-and-partition RDP for noisy SGD: a COMPARISON NUMBER, NOT A CERTIFICATE.

Source.  Ye & Shokri 2022, "Differentially Private Learning Needs Hidden State (Or Much Faster
Convergence)", arXiv:2203.05363 (NeurIPS 2022).  The theorem text was not available; the formulas
are transcribed from the authors' code, github.com/privacytrustlab/dp_dynamics, ``dp_utils.py`` at
commit 84a5cf9 (2022-07-25): ``first_epoch_guarantee`` (l.267–269, :func:`position_rdp`),
``shuffle_guarantee`` (l.271–300, :func:`shuffled_rdp`), ``priv_dynamics_guarantees`` (l.305–344,
conditions and the order grid :data:`ORDERS`), as read in the hidden-state-bounds notes §2.1.
With their conversion and their l = ⌊n/b⌋ they give ε = 2.997 for the README's Fashion-MNIST run
(the README's target is ε = 3 at δ = 1e-5), 2.885 for MNIST and 2.794 for CIFAR-10 before the
normalisation's cost (``tests/test_accounting_ye_shokri.py``).  Through our mapping
(:func:`ye_shokri_epsilon`, l = ⌈n/b⌉, below) the Fashion-MNIST run gives 2.981, not 2.997.

Their conventions, translated.  Opacus' ``noise_multiplier`` σ_m: N(0, σ_m²C²I) is added to the
sum of per-example gradients clipped at C and the result divided by b; ℓ2 regularisation λ
(weight decay); replace-one neighbours, so the clipped sum moves by at most 2C.  Ours
(:class:`~.noisy_sgd.NoisySGDEvent`): noise σ on the gradient sum, sensitivity S_g.  A step that
uses the differing record moves the update by ηS_g/b against noise of sd ησ/b in both, so the
signal-to-noise ratios agree when σ_m = σ/(S_g/2) (= σ/C for S_g = 2C; the CLI's
``noise_multiplier``), and one such step is the Gaussian mechanism with RDP
α(S_g/σ)²/2 = 2α/σ_m², their ε_1.  Their λ is our strong convexity m; their smoothness
β = (R² + 1)/2 of the unregularised loss (softmax cross-entropy with a bias, features clipped to
norm R) is our M − m.  Their step-size condition η < 2/(β + 2λ) is η < 2/(M + m), exactly the
condition under which our contraction max{|1 − ηm|, |1 − ηM|} equals their c = 1 − ηλ.  Their l is
``trainsize // batchsize`` (⌊n/b⌋: their DataLoader drops the last incomplete batch); we pass our
steps per epoch ⌈n/b⌉, since our runs also take the shorter last batch.  The two agree when b
divides n; otherwise our l is one larger, i.e. one more contraction step per epoch and a
last-epoch mean over one more position, and the number is then smaller than theirs: their
Fashion-MNIST run (n = 60000, b = 2048: 30 batches against their 29) gives 2.981 against their
2.997.  (Their formula, with uniform weight 1/l on every position, does not model a shorter last
batch at all; this is one more reason the number is a comparison, not a certificate.)
RDP → (ε, δ): Opacus 0.13's ``get_privacy_spent`` is
ε = min_α [ε(α) + log(1/δ)/(α − 1)], Mironov 2017 Prop. 3 (``conversion="mironov"`` of
:func:`.rdp.epsilon_from_rdp`), over :data:`ORDERS`.

Why it is NOT a certificate.  ε_K(α) = (earlier epochs) + (last epoch):

* The last-epoch term is the log-mean-exp of ε_j over a uniformly random position j of the
  record in the last epoch.  For one epoch (K = 1, where the other term is 0) we can derive it:
  given j, both runs agree until the record's step, ε_j is privacy amplification by iteration for
  one use followed by j − 1 noisy c-contractive steps (optimal shifts ∝ c^{−i}), and the mixture
  over a *secret* position is bounded by joint convexity of ∫p^α q^{1−α}.  It holds only while the
  position stays secret.
* The earlier-epochs term ε_h(α)·(1 − c^{2(K−1)(l−h)})/(1 − c^{2(l−h)}) evaluates the per-position
  bound at the mid-epoch position h = ⌊l/2⌋ and adds RDP across epochs.  h is not the worst position
  (that is j = 1), a mixture over the earlier epochs' positions is not bounded by its median, and
  adding RDP across epochs whose effect is carried in a hidden state is not a composition theorem.
  We could not justify it, and the theorem with its proof was not available.  (On a 1-D linear loss
  the exact mixture law stays below it, ``tests/test_accounting_ye_shokri.py``, but that instance is
  loose: the noise drawn before the record's use still counts there.)
* The authors' DataLoader reshuffles every epoch, so the bound is for a fresh secret permutation
  per epoch.  Our ``batching="shuffled"`` draws one partition and cycles it, a different mechanism,
  and no certificate of this library relies on a permutation staying secret.

So :func:`ye_shokri_epsilon` is only reported next to a certificate, never in a best-of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from ._checks import check_delta, check_open_unit, check_orders, check_positive
from .noisy_sgd import NoisySGDEvent, hidden_state_conditions
from .rdp import epsilon_from_rdp

__all__ = ["ORDERS", "NOTE", "position_rdp", "shuffled_rdp", "unmet_conditions", "event_rdp",
           "YeShokriNumber", "ye_shokri_epsilon"]

#: The authors' orders (dp_dynamics ``dp_utils.ORDERS``, Opacus' default alphas): 1.1, …, 10.9, 12, …, 63.
ORDERS: NDArray[np.float64] = np.array([1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)), dtype=float)

#: One line for reports next to a certificate.
NOTE = ("not a certificate: Ye & Shokri 2022 (arXiv:2203.05363) as computed by the authors' code "
        "(dp_dynamics dp_utils.py, 84a5cf9); its earlier-epochs term (the per-position bound at the "
        "mid-epoch position) is not a worst case over positions and could not be justified, and it "
        "assumes a fresh secret permutation every epoch (our shuffled runs keep one partition)")

#: Largest (orders × positions) block held at once by :func:`shuffled_rdp`.
_BLOCK = 1 << 22


def _log_contraction(contraction: float) -> float:
    """log c for c = 1 − η·λ in (0, 1) (λ > 0): :func:`._checks.check_open_unit` named ``contraction``."""
    return math.log(check_open_unit(contraction, "contraction"))


def _unit_rdp(positions: ArrayLike, noise_multiplier: float, log_c: float) -> NDArray[np.float64]:
    """ε_j(α)/α = (2/σ_m²)·c^{2(j−1)}(1 − c²)/(1 − c^{2j}), in logs (stable as c → 1)."""
    j = np.asarray(positions, dtype=float)
    if np.any(j < 1) or np.any(j != np.floor(j)):
        raise ValueError(f"positions must be integers >= 1; got {positions!r}.")
    z = check_positive(noise_multiplier, "noise_multiplier")
    # arXiv:2203.05363, dp_dynamics dp_utils.py l.267-269 (first_epoch_guarantee).
    return 2.0 / (z * z) * np.exp(2.0 * (j - 1.0) * log_c + np.log(-math.expm1(2.0 * log_c))
                                  - np.log(-np.expm1(2.0 * j * log_c)))


def _orders(orders: ArrayLike) -> NDArray[np.float64]:
    """:func:`._checks.check_orders`, and not empty (a minimum over no orders is undefined)."""
    alpha = check_orders(orders)
    if alpha.size == 0:
        raise ValueError(f"orders must not be empty; got orders={orders!r}.")
    return alpha


def position_rdp(orders: ArrayLike, positions: ArrayLike, noise_multiplier: float,
                 contraction: float) -> NDArray[np.float64]:
    """ε_j(α): RDP of one use of the record followed by j − 1 noisy c-contractive steps.

    ``ε_j(α) = (2α/σ_m²)·c^{2(j−1)}(1 − c²)/(1 − c^{2j})`` (arXiv:2203.05363; dp_dynamics
    ``first_epoch_guarantee``, dp_utils.py l.267–269).  j = 1: the record's batch was the last step,
    ε_1 = 2α/σ_m², the replace-one Gaussian mechanism.

    Parameters
    ----------
    orders : array_like
        Rényi orders α > 1.
    positions : array_like
        Positions j ≥ 1 (integers), broadcast against ``orders``.
    noise_multiplier : float
        σ_m > 0: noise sd on the clipped gradient sum over the per-record bound C (σ/(S_g/2)).
    contraction : float
        c = 1 − ηλ in (0, 1).

    Returns
    -------
    ndarray
        ε_j(α), of the broadcast shape of ``orders`` and ``positions``.
    """
    alpha = _orders(orders)
    return alpha * _unit_rdp(positions, noise_multiplier, _log_contraction(contraction))


def shuffled_rdp(orders: ArrayLike, noise_multiplier: float, contraction: float, batches: int,
                 epochs: int) -> NDArray[np.float64]:
    """ε_K(α) of K epochs of shuffle-and-partition over l batches (the authors' ``shuffle_guarantee``).

    ``ε_K(α) = ε_h(α)·(1 − c^{2(K−1)(l−h)})/(1 − c^{2(l−h)}) + (1/(α−1))·log((1/l)·Σ_{j=1}^{l}
    e^{(α−1)ε_j(α)})`` with h = ⌊l/2⌋ (arXiv:2203.05363; dp_dynamics dp_utils.py l.271–300).  A
    comparison number only (module docstring): the first term is not justified.

    Parameters
    ----------
    orders : array_like
        Rényi orders α > 1 (1-D).
    noise_multiplier : float
        σ_m > 0 (see :func:`position_rdp`).
    contraction : float
        c = 1 − ηλ in (0, 1).
    batches : int
        l ≥ 2, batches (steps) per epoch.
    epochs : int
        K ≥ 1.

    Returns
    -------
    ndarray
        ε_K at each order.
    """
    alpha = _orders(orders).reshape(-1)
    log_c = _log_contraction(contraction)
    l, k = int(batches), int(epochs)
    if l != batches or l < 2:
        raise ValueError("batches must be an integer >= 2 (the mid-epoch position h = l // 2 must be >= 1); "
                         f"got {batches!r}.")
    if k != epochs or k < 1:
        raise ValueError(f"epochs must be an integer >= 1; got {epochs!r}.")
    h = l // 2
    unit = _unit_rdp(np.arange(1, l + 1), noise_multiplier, log_c)
    # Earlier epochs (dp_utils.py l.272-282): ε_h times a geometric sum of ratio c^{2(l−h)}, K − 1 terms.
    geometric = math.expm1(2.0 * (k - 1) * (l - h) * log_c) / math.expm1(2.0 * (l - h) * log_c)
    earlier = alpha * unit[h - 1] * geometric
    # Last epoch (l.283-296): log-mean-exp of ε_j over a uniform position j = 1..l.
    rows = max(1, _BLOCK // l)
    scaled = [logsumexp(np.multiply.outer((a - 1.0) * a, unit), axis=1)
              for a in np.split(alpha, range(rows, alpha.size, rows))]
    last = (np.concatenate(scaled) - math.log(l)) / (alpha - 1.0)
    return earlier + last


def unmet_conditions(event: NoisySGDEvent) -> list[str]:
    """Conditions of the authors' code (and of hidden-state accounting) that ``event`` does not meet.

    Parameters
    ----------
    event : NoisySGDEvent
        The run.

    Returns
    -------
    list of str
        The unmet conditions (empty if the number applies).
    """
    unmet = [] if event.batching == "shuffled" else [
        "batching='shuffled' (their shuffle-and-partition; a cyclic order is public and Poisson batches are "
        "not a partition)"]
    if event.strong_convexity <= 0:
        unmet.append("strong_convexity > 0 (their c = 1 − η·λ needs ℓ2 regularisation λ > 0)")
    bound = 2.0 / (event.smoothness + event.strong_convexity)
    if not event.step_size < bound:
        unmet.append(f"step_size < 2/(smoothness + strong_convexity) (= {bound:.6g}; their η < 2/(β + 2λ))")
    elif event.strong_convexity > 0 and not 1.0 - event.step_size * event.strong_convexity < 1.0:
        unmet.append("1 − step_size·strong_convexity < 1 in floating point (η·λ is too small)")
    if event.batches < 2:
        unmet.append("at least 2 batches per epoch (batch_size < n)")
    return unmet + hidden_state_conditions(event)


def _their_parameters(event: NoisySGDEvent) -> tuple[float, float, int]:
    """(σ_m, c, l) of ``event`` in the authors' convention (module docstring); raises if conditions fail."""
    if unmet := unmet_conditions(event):
        raise ValueError("the Ye & Shokri number does not apply to this run; it needs: " + "; ".join(unmet) + ".")
    return event.sigma / (event.sensitivity / 2.0), 1.0 - event.step_size * event.strong_convexity, event.batches


def event_rdp(event: NoisySGDEvent, orders: ArrayLike = ORDERS) -> NDArray[np.float64]:
    """:func:`shuffled_rdp` of a noisy SGD run; ``ValueError`` listing the unmet conditions.

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    orders : array_like, optional
        RDP orders (default :data:`ORDERS`, the authors' grid).

    Returns
    -------
    ndarray
        ε_K(α) at each order.

    Raises
    ------
    ValueError
        If a condition of :func:`unmet_conditions` fails.
    """
    noise_multiplier, contraction, batches = _their_parameters(event)
    return shuffled_rdp(orders, noise_multiplier, contraction, batches, event.epochs)


@dataclass(frozen=True)
class YeShokriNumber:
    """Ye & Shokri's ε for a run (a comparison number, never a certificate; see :data:`NOTE`).

    Attributes
    ----------
    epsilon : float
        ε at ``delta`` (nan when ``unmet`` is not empty).
    delta : float
        The δ asked for.
    order : float
        The minimising order (nan when not applicable).
    conversion : str
        ``"mironov"`` (the authors' Opacus 0.13 conversion) or ``"improved"``.
    unmet : tuple of str
        Conditions the run does not meet (empty when the number applies).
    """

    epsilon: float
    delta: float
    order: float
    conversion: str
    unmet: tuple[str, ...] = ()


def ye_shokri_epsilon(event: NoisySGDEvent, delta: float, *, orders: ArrayLike = ORDERS,
                      conversion: str = "mironov") -> YeShokriNumber:
    """Ye & Shokri's (ε, δ) for ``event``, or nan with the reasons when their conditions fail.

    Parameters
    ----------
    event : NoisySGDEvent
        The run; needs ``batching="shuffled"``, m > 0, η < 2/(M + m), l ≥ 2, last iterate only.
    delta : float
        δ in (0, 1).
    orders : array_like, default :data:`ORDERS`
        Rényi orders (the authors' grid reproduces their numbers).
    conversion : {"mironov", "improved"}, default "mironov"
        RDP → (ε, δ) (:func:`.rdp.epsilon_from_rdp`); "mironov" is the authors' conversion.

    Returns
    -------
    YeShokriNumber
    """
    delta = check_delta(delta)
    if unmet := unmet_conditions(event):
        return YeShokriNumber(math.nan, delta, math.nan, conversion, tuple(unmet))
    epsilon, order = epsilon_from_rdp(orders, event_rdp(event, orders), delta, conversion=conversion)
    return YeShokriNumber(epsilon, delta, order, conversion)
