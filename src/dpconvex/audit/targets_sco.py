"""Audit target for noisy SGD with the fresh-sample rule (Arora, Marinov, Ullah, Algorithm 1).

Same small problem as the other targets (:data:`.targets.NOISY_GD_SETTING`: n = 10, d = 2, ε = 3,
δ = 1e-3).  Hinge loss on the unit ball: nine records at the origin (zero subgradient) and a
canary x = e₁ (label +1), replaced by −e₁; its subgradients −y·x differ by 2 = 2L, the sensitivity
the certificate assumes.
"""

from __future__ import annotations

from functools import lru_cache

from ..constraints import L2Ball
from ..losses import HingeLoss
from ..mechanisms import sco_noisy_sgd
from .harness import AuditTarget, register
from .targets import NOISY_GD_SETTING, _canary_pair

__all__: list[str] = []


def _kwargs() -> dict:
    return dict(loss=HingeLoss(), delta=NOISY_GD_SETTING["delta"], constraint=L2Ball(1.0), step_size=0.5)


@lru_cache(maxsize=None)
def _sigma() -> float:
    pair = _canary_pair(1.0)
    return sco_noisy_sgd(pair.X, pair.y, epsilon=NOISY_GD_SETTING["epsilon"], random_state=0, **_kwargs()).certificate.sigma


register(
    AuditTarget(
        name="sco-noisy-sgd",
        mechanism="sco_noisy_sgd",
        description="Arora et al. Alg. 1 on the hinge loss (canary x vs -x; fresh-sample rule, averaged output)",
        make_pair=lambda: _canary_pair(1.0),
        train=lambda X, y, seed: sco_noisy_sgd(X, y, sigma=_sigma(), random_state=seed, **_kwargs()),
    )
)
