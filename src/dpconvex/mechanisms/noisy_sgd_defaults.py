"""The ``"auto"`` values of :func:`~dpconvex.mechanisms.noisy_sgd.noisy_sgd`'s batch size, step and number of epochs.

Each is a stated rule of public quantities only (n, d, the declared constants, the target (ε, δ)), never of the data;
:func:`~dpconvex.mechanisms.noisy_sgd.plan` applies them where an option is left ``"auto"``.
"""

from __future__ import annotations

import math

from dpconvex.accounting import gdp

__all__ = ["default_batch_size", "default_step_size", "default_epochs"]


def default_batch_size(n: int) -> int:
    """b = ⌈√n⌉.

    Rule: in the amplified regime the composition bound's noise at a fixed run length ηT does not depend on b (σ/b ∝
    √(ηT)/(nμ), see :func:`default_epochs`), so b only trades steps for work per step; ⌈√n⌉ keeps the sampling rate q =
    1/√n small (amplification stays effective) while the number of steps per epoch, √n, stays moderate.

    Parameters
    ----------
    n : int
        The number of records.

    Returns
    -------
    int
        b = ⌈√n⌉, at most n.
    """
    return int(min(n, math.ceil(math.sqrt(n))))


def default_step_size(smoothness: float) -> float:
    """η = 1/M, the step maximising the descent-lemma decrease of an M-smooth objective (and < 2/M).

    Parameters
    ----------
    smoothness : float
        M, the declared smoothness of the regularised per-example loss.

    Returns
    -------
    float
        η = 1/M.
    """
    return 1.0 / smoothness


def default_epochs(n: int, dimension: int, sensitivity: float, batch_size: int, step_size: float,
                   epsilon: float, delta: float, comparator_norm: float) -> int:
    """E = ⌈R*·b/(ηn)⌉ for the run length R* = 2Bnμ/(S_g√d) that balances noisy SGD's error terms.

    Derivation note.  Averaged SGD with noisy gradients has excess risk ≤ B²/(2R) + (η/2)E‖g‖² (R = ηT, B = ‖θ₀ − w*‖;
    Bubeck 2015, arXiv:1405.4980, Thm 6.1).  The privacy noise adds d·σ²/b² to E‖g‖².  Under composition with Poisson
    sampling, in the central-limit regime of Bu, Dong, Long, Su 2020 (arXiv:1911.11607, Thm 5: μ ≈ q√(T(e^{1/z²} − 1)) ≈
    q√T/z with z = 2σ/S_g), a target μ needs σ = q√T·S_g/(2μ), so the noise term is d·R·S_g²/(8μ²n²), and B²/(2R) +
    dRS_g²/(8μ²n²) is smallest at R* = 2Bnμ/(S_g√d).  μ is the GDP parameter meeting (ε, δ) exactly
    (:func:`dpconvex.accounting.gdp.gdp_mu`); B is public (:func:`dpconvex.mechanisms.base.comparator_norm_bound`).
    Only public quantities enter.

    Parameters
    ----------
    n, dimension : int
        The number of records and the parameter vector's length d.
    sensitivity : float
        S_g, the L2 sensitivity of one step's sum of per-example gradients, as
        :func:`~dpconvex.mechanisms.noisy_sgd.plan` resolves it (2L with Poisson batches, at most 2C with a clip
        norm C).
    batch_size : int
        The nominal batch size b.
    step_size : float
        The step η.
    epsilon, delta : float
        The target (ε, δ), through μ.
    comparator_norm : float
        B, a public bound on ‖θ₀ − w*‖ = ‖w*‖ (θ₀ = 0).

    Returns
    -------
    int
        E ≥ 1, the number of epochs (passes over the data).
    """
    mu = gdp.gdp_mu(epsilon, delta)
    run_length = 2.0 * comparator_norm * n * mu / (sensitivity * math.sqrt(dimension))
    return int(max(1, math.ceil(run_length * batch_size / (step_size * n))))
