"""Audit target for a bounded-domain certificate: noisy SGD, cyclic batches, λ = 0, an L2 ball, certified
by the ``shifted-interpolation`` bound with the ball's diameter (the bound's bounded-domain case).

``noisy-sgd-bounded`` runs the real :func:`dpconvex.mechanisms.noisy_sgd` at ε = 3, δ = 1e-3 (as every
other target, :data:`.targets.NOISY_GD_SETTING`) on a problem where composition was the only other
certificate: merely convex (λ = 0, so ``bok-cgd`` does not apply), not the loss ½‖θ − x‖² (so
``exact-quadratic`` does not apply), on the ball of radius R = :data:`RADIUS` (diameter D = 2R).

Problem.  d = 1, n = 4 records in two cyclic batches of b = 2 (rows 0–1, then rows 2–3), E = 4 epochs
(T = 8 steps), η = 1, the huberised hinge with h = 0.5 (smoothness M = 1/(2h) = 1, so η < 2/M and
c = max{|1 − ηm|, |1 − ηM|} = 1).  Three records are x = 0 (zero gradient); the canary x = +1 (label
+1) in the last row — the last batch of the cycle, the worst position (:mod:`.shifted_interpolation`
note 5) — is replaced by x = −1.  On the ball every margin y·θx lies in
[−R, R] with R = 0.3 < 1 − h, where the huberised hinge is linear: the canary's gradient is −y·x
exactly, so its two versions move the update by ±η/b and differ by the full shift s = ηS_g/b = 1
at every step that uses them (S_g = 2L = 2), while the step map is a translation (c = 1 attained).
d = 1 keeps the projection a clip to [−R, R] that touches nothing but the audited coordinate.

Certificate.  With iterate noise ν = ησ/b and the canary used at steps 2, 4, 6, 8, the core lemma's
best window starts at the canary's second-to-last use (τ = 6, b_τ = D): since s(l − 1) = 1 > D = 0.6
the taut string touches the point before the last use and μ² = (D²/(l − 1) + s²)/ν² = (D² + s²)/ν².
Without the diameter the lemma gives μ² = s²(1 + (E − 1)/l)/ν² (1.307 at the calibrated σ against
0.964), and composition √E·s/ν (ε = 5.92): the certificate comes from the diameter windows.  The
calibrated σ is 2.419 (ν = 1.21, R/ν = 0.248).

Why these sizes.  The release θ_T is a clipped Gaussian random walk, mostly on the atoms ±R (about
0.57 at +R and 0.25 at −R under D).  Its exact law (the Markov kernel integrated on a grid,
``tests/test_audit_bounded.py``) has total variation 0.324 against the certificate's 2Φ(μ/2) − 1 =
0.370, and the best threshold test on it stays 0.14 (in ε) inside the certified profile.  A larger
ball lets the walk mix between uses, and the certificate, which charges the diameter as if the two
runs sat at opposite ends, becomes loose: at R/ν = 0.4 the halved-noise trainer's expected profile
margin at 1,000 runs falls from +0.56 to +0.09 (computed from the exact law); a smaller ball makes D
a negligible part of μ.  With half the noise the exact law exceeds the certified profile by 1.11 in
ε, and the audit fails it at 1,000 runs (margin +0.52 ± 0.10 over 100 seeded audits,
``tests/test_audit_mutations.py``); the honest audit's margin is −0.50 ± 0.01 at 600 runs.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated
from dpconvex.mechanisms import noisy_sgd
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import HuberizedHingeLoss

__all__ = ["BOUNDED_SETTING", "RADIUS", "bounded_kwargs", "bounded_pair"]

#: Radius R of the ball (diameter D = 2R); below 1 − h = 0.5, so the huberised hinge is linear on it.
RADIUS = 0.3

#: The run: n records, cyclic batches of b (l = n/b = 2), E epochs, step η, huberised-hinge parameter h.
BOUNDED_SETTING = {"n": 4, "batch_size": 2, "epochs": 4, "step_size": 1.0, "huber_h": 0.5, "radius": RADIUS}


def bounded_kwargs() -> dict:
    """The trainer's options (everything but the data, σ, δ and the seed).

    Returns
    -------
    dict
        Keywords of :func:`~dpconvex.mechanisms.noisy_sgd.noisy_sgd`.
    """
    s = BOUNDED_SETTING
    return dict(loss=HuberizedHingeLoss(s["huber_h"]), l2_regularization=0.0, batching="cyclic",
                batch_size=s["batch_size"], epochs=s["epochs"], step_size=s["step_size"],
                constraint=L2Ball(s["radius"]), output="last")


def bounded_pair() -> NeighbourPair:
    """Three records x = 0 and the canary x = +1 in the last row (last batch), replaced by x = −1; labels +1.

    Returns
    -------
    NeighbourPair
    """
    n = BOUNDED_SETTING["n"]
    X = np.zeros((n, 1))
    X[-1, 0] = 1.0
    X_prime = X.copy()
    X_prime[-1, 0] = -1.0
    y = np.ones(n)
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.ones(1))


@cache
def _sigma() -> float:
    pair = bounded_pair()
    return _calibrated(noisy_sgd, pair, **bounded_kwargs()).sigma


register(
    AuditTarget(
        name="noisy-sgd-bounded",
        mechanism="noisy_sgd",
        description="noisy SGD, cyclic batches, λ = 0, huberised hinge on the ball of radius 0.3 (linear there), "
                    "d = 1 (shifted-interpolation with the diameter; canary ±1 in the last batch)",
        make_pair=bounded_pair,
        sigma=_sigma,
        run=lambda X, y, seed, sigma, delta: noisy_sgd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                       **bounded_kwargs()),
        delta=NOISY_GD_SETTING["delta"],
    )
)
