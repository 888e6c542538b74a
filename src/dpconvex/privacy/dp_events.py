"""What curve a certificate really certifies, and the dp-accounting ``DpEvent`` that reproduces it.

Every certificate states (ε, δ); behind most of them is a whole privacy curve, and that curve is
what composes tightly.  :func:`certificate_curve` reads it from the certificate's own fields
(``conversion``, ``bound``, ``mechanism``, ``assumptions``); :func:`to_dp_event` exports it as an
event of Google's dp-accounting, so that other tools can compose our releases with theirs.

The curves (:class:`PrivacyCurve`, ``kind``)
--------------------------------------------
``"gdp"``
    Conversion ``"exact-gdp"`` (the GDP bounds of noisy GD and of noisy SGD with disjoint batches,
    output perturbation's worst case) or the full-batch GDP route of a Poisson run.  μ is the
    largest μ whose exact δ(ε) (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13) at the certified
    ε is at most the certified δ (:func:`.accounting.gdp.gdp_mu`).  The certified ε is the bound's ε
    rounded *up* (:mod:`.accounting.rounding`), so this μ is at least the theorem's: the
    certificate's own guarantee, pessimistic by about the rounding margin, never optimistic.
``"poisson"``
    A noisy-SGD run with Poisson batches certified by the privacy-loss distribution: T
    Poisson-subsampled Gaussian steps, replace-one.  Read from the assumptions: q =
    ``batch_size``/``n``, z = ``sigma``/(``gradient_sensitivity``/2) (:class:`.accounting.noisy_sgd.NoisySGDEvent`),
    T = ``iterations``.  Its RDP curve (for mixing with other curves) is
    :func:`.accounting.composition.poisson_replace_one_rdp`.
``"zcdp"``
    Noisy GD certified by one of Chourasia et al.'s RDP bounds (``composition``, ``theorem2``,
    ``corollary1``, ``corollary2``, ``exact-quadratic``: arXiv:2102.05855; every one is α·ρ).  ρ is
    :func:`.accounting.composition.zcdp_rho` of the certified (ε, δ) under the certificate's
    conversion on the accountant's orders (:data:`.accounting.rdp.DEFAULT_ORDERS`): at least the
    bound's ρ, since the certified ε is rounded up.
``"pair"``
    Everything else: only (ε, δ) (PNSGD's E_γ curve, the single-use SCO bound, output
    perturbation's mixture curve, private selection, a certificate combined with a private mean,
    a void certificate).  Composes by basic composition.

A certificate combined with a private mean (``intercept_epsilon`` in its assumptions) certifies a
pair as a whole; :func:`certificate_parts` splits it back into its two releases, the Laplace
mean's pure (ε₁, 0) pair and the model's own curve, which compose more tightly with other curves
than the pair does (the model's ε is the certificate's minus ε₁, rounded up).

Events (:func:`to_dp_event`) and the neighbouring relation
-----------------------------------------------------------
Our certificates are for replace-one neighbours.  dp-accounting's PLD accountant models
``GaussianDpEvent(z)`` under ``REPLACE_ONE`` as N(−1, z²) against N(1, z²), i.e. (2/z)-GDP, and
under ``ADD_OR_REMOVE_ONE`` as (1/z)-GDP; its RDP accountant charges α/(2z²), i.e. (1/z)-GDP,
under *every* relation, and refuses ``PoissonSampledDpEvent`` under ``REPLACE_ONE``.  So an event
reproduces a guarantee only together with the relation it is accounted under:

* ``REPLACE_ONE`` (default; dp-accounting's ``PLDAccountant(neighboring_relation=REPLACE_ONE)``):
  GDP → ``GaussianDpEvent(2/μ)``; Poisson → ``SelfComposedDpEvent(PoissonSampledDpEvent(q,
  GaussianDpEvent(z)), T)`` (the pair the certificate's PLD was built from).  Do not give these
  to the RDP accountant: it would read the Gaussian as (μ/2)-GDP.
* ``ADD_OR_REMOVE_ONE`` (dp-accounting's RDP accountant, or its PLD accountant under that
  relation): GDP → ``GaussianDpEvent(1/μ)``, exactly μ-GDP in both accountants; the relation
  label then only selects the dominating pair N(0, 1), N(μ, 1) of our replace-one guarantee.  A
  Poisson certificate has no such event (an add/remove subsampled Gaussian understates a
  replace-one step): ``ValueError``.
* ``"zcdp"`` → ``ZCDpEvent(rho=ρ)`` under either relation (a curve, which dp-accounting's RDP
  accountant composes; its PLD accountant does not take it).
* ``"pair"`` → ``ValueError``: dp-accounting has no event for a bare (ε, δ) pair, and returning a
  weaker event (e.g. ``UnsupportedDpEvent``) would only move the error into the accountant.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_sgd_bounds as nb
from dpconvex.accounting.composition import poisson_replace_one_rdp, zcdp_rho
from dpconvex.accounting.rdp import CONVERSIONS, DEFAULT_ORDERS
from dpconvex.accounting.rounding import round_up

if TYPE_CHECKING:  # read by attribute only: the report page (which the certificate imports) builds on this module
    from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["GDP_CONVERSIONS", "KINDS", "LINEAR_RDP_BOUNDS", "PLD_INTERVAL", "PrivacyCurve", "certificate_curve",
           "certificate_parts", "pld_epsilon", "to_dp_event"]

#: The kinds of :class:`PrivacyCurve`.
KINDS = ("gdp", "poisson", "zcdp", "pair")
#: Conversions that certify a μ-GDP curve: the exact GDP conversion, and a Poisson run's full-batch GDP route.
GDP_CONVERSIONS = ("exact-gdp", nb.FULL_BATCH_ROUTE)
#: Noisy GD's RDP bounds (:data:`.accounting.noisy_gd.BOUNDS`) whose curve is α·ρ.
LINEAR_RDP_BOUNDS = ("composition", "theorem2", "corollary1", "corollary2", "exact-quadratic")
#: The assumptions a Poisson certificate must record, and what each gives.
POISSON_ASSUMPTIONS = {"n": "the sampling rate q = batch_size/n", "batch_size": "the sampling rate q = batch_size/n",
                       "gradient_sensitivity": "the noise multiplier z = sigma/(gradient_sensitivity/2)",
                       "batching": "that the batches are Poisson"}


@dataclass(frozen=True)
class PrivacyCurve:
    """One release's privacy curve, as composition needs it (the module docstring lists the kinds).

    Parameters
    ----------
    kind : {"gdp", "poisson", "zcdp", "pair"}
    epsilon, delta : float or None
        The (ε, δ) pair the release was certified at (``None`` for a planned curve without one).
    mu : float or None
        μ of a ``"gdp"`` curve.
    rho : float or None
        ρ of a ``"zcdp"`` curve (RDP α·ρ at every order).
    rate, noise_multiplier : float or None
        q and z of a ``"poisson"`` curve.
    steps : int or None
        T of a ``"poisson"`` curve.
    """

    kind: str
    epsilon: float | None = None
    delta: float | None = None
    mu: float | None = None
    rho: float | None = None
    rate: float | None = None
    noise_multiplier: float | None = None
    steps: int | None = None

    def __post_init__(self) -> None:
        needs = {"gdp": ("mu",), "zcdp": ("rho",), "poisson": ("rate", "noise_multiplier", "steps"),
                 "pair": ("epsilon", "delta")}
        if self.kind not in needs:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}.")
        missing = [name for name in needs[self.kind] if getattr(self, name) is None]
        if missing or (self.epsilon is None) != (self.delta is None):
            raise ValueError(f"a {self.kind!r} curve needs {', '.join(needs[self.kind])} (and epsilon with delta); "
                             f"missing {missing or ['epsilon or delta']}.")

    @classmethod
    def gdp(cls, mu: float) -> PrivacyCurve:
        """A planned μ-GDP release."""
        return cls("gdp", mu=float(mu))

    @classmethod
    def zcdp(cls, rho: float) -> PrivacyCurve:
        """A planned release with RDP α·ρ at every order."""
        return cls("zcdp", rho=float(rho))

    @classmethod
    def poisson(cls, rate: float, noise_multiplier: float, steps: int) -> PrivacyCurve:
        """A planned run of T Poisson-subsampled Gaussian steps (replace-one)."""
        return cls("poisson", rate=float(rate), noise_multiplier=float(noise_multiplier), steps=int(steps))

    @classmethod
    def pair(cls, epsilon: float, delta: float) -> PrivacyCurve:
        """A planned (ε, δ)-DP release."""
        return cls("pair", epsilon=float(epsilon), delta=float(delta))

    @property
    def has_pair(self) -> bool:
        """Whether the curve carries an (ε, δ) pair."""
        return self.epsilon is not None

    def rdp(self, orders: ArrayLike = DEFAULT_ORDERS) -> NDArray[np.float64] | None:
        """The RDP curve at ``orders`` (``None`` for a ``"pair"``).

        GDP: α μ²/2 (:func:`.accounting.gdp.gdp_rdp`); zCDP: α ρ; Poisson:
        :func:`.accounting.composition.poisson_replace_one_rdp`.
        """
        orders = np.asarray(orders, dtype=float)
        if self.kind == "gdp":
            return gdp.gdp_rdp(orders, self.mu)
        if self.kind == "zcdp":
            return orders * self.rho
        if self.kind == "poisson":
            return poisson_replace_one_rdp(orders, self.rate, self.noise_multiplier, self.steps)
        return None


def certificate_curve(certificate: PrivacyCertificate) -> PrivacyCurve:
    """The curve ``certificate`` certifies (module docstring: which certificate gives which kind).

    Parameters
    ----------
    certificate : PrivacyCertificate

    Returns
    -------
    PrivacyCurve
        Carrying the certificate's (ε, δ) as well.

    Raises
    ------
    ValueError
        For a Poisson certificate missing an assumption its curve needs, naming the mechanism and
        the quantity.
    """
    c = certificate
    epsilon, delta = float(c.epsilon), float(c.delta)
    pair = {"epsilon": epsilon, "delta": delta}
    # a void certificate, or one combined with a private mean (its conversion names only the model's bound)
    if not math.isfinite(epsilon) or "intercept_epsilon" in c.assumptions:
        return PrivacyCurve("pair", **pair)
    if c.conversion in GDP_CONVERSIONS:
        return PrivacyCurve("gdp", mu=0.0 if epsilon == 0.0 else gdp.gdp_mu(epsilon, delta), **pair)
    if c.conversion == nb.PLD_ROUTE:
        return PrivacyCurve("poisson", **_poisson_parameters(c), **pair)
    if c.mechanism == "noisy_gd" and c.conversion in CONVERSIONS and c.bound in LINEAR_RDP_BOUNDS and epsilon > 0:
        return PrivacyCurve("zcdp", rho=zcdp_rho(epsilon, delta, conversion=c.conversion)[0], **pair)
    return PrivacyCurve("pair", **pair)


def certificate_parts(certificate: PrivacyCertificate) -> tuple[PrivacyCurve, ...]:
    """The curves of the releases ``certificate`` composes: its own curve, or a private mean's two parts.

    A certificate built by :func:`~dpconvex.mechanisms.private_mean.compose_with_mean` (ε = ε₁ + ε_model,
    ``intercept_epsilon`` = ε₁ in its assumptions, ``bound`` prefixed ``"private mean + "``) gives the
    Laplace mean's pure pair (ε₁, 0) and :func:`certificate_curve` of the model's certificate, rebuilt
    with ε_model = ε − ε₁ rounded up (:func:`~dpconvex.accounting.rounding.round_up`: the subtraction
    may lose the last bits) and the model's own bound.  Any other certificate gives its one curve.

    Parameters
    ----------
    certificate : PrivacyCertificate

    Returns
    -------
    tuple of PrivacyCurve
        Whose composition the certificate certifies.
    """
    c = certificate
    intercept = c.assumptions.get("intercept_epsilon")
    if intercept is None or not math.isfinite(c.epsilon):
        return (certificate_curve(c),)
    model = dataclasses.replace(
        c, epsilon=round_up(max(c.epsilon - intercept, 0.0)), bound=c.bound.removeprefix("private mean + "),
        assumptions={k: v for k, v in c.assumptions.items() if not k.startswith("intercept")})
    return PrivacyCurve.pair(float(intercept), 0.0), certificate_curve(model)


def _poisson_parameters(c: PrivacyCertificate) -> dict[str, Any]:
    """q, z and T of a Poisson certificate, from its assumptions (``ValueError`` naming what is missing)."""
    missing = [f"{name} ({use})" for name, use in POISSON_ASSUMPTIONS.items() if name not in c.assumptions]
    if missing:
        raise ValueError(f"the {c.mechanism!r} certificate (bound {c.bound!r}, conversion {c.conversion!r}) does not "
                         f"record {'; '.join(missing)}: its Poisson curve cannot be rebuilt.")
    a = c.assumptions
    if a["batching"] != "poisson":
        raise ValueError(f"conversion {c.conversion!r} certifies Poisson batches, but the {c.mechanism!r} certificate "
                         f"records batching={a['batching']!r}.")
    return {"rate": a["batch_size"] / a["n"], "noise_multiplier": c.sigma / (a["gradient_sensitivity"] / 2.0),
                "steps": int(c.iterations)}


def to_dp_event(release: PrivacyCertificate | PrivacyCurve, neighboring_relation: Any = None) -> Any:
    """The dp-accounting ``DpEvent`` that reproduces a certificate's (or a planned curve's) guarantee.

    Parameters
    ----------
    release : PrivacyCertificate or PrivacyCurve
        A certificate (read by :func:`certificate_curve`) or a curve.
    neighboring_relation : dp_accounting.NeighboringRelation, optional
        The relation the event will be accounted under: ``REPLACE_ONE`` (default) or
        ``ADD_OR_REMOVE_ONE`` (module docstring: what each gives and which accountant takes it).

    Returns
    -------
    dp_accounting.DpEvent
        ``GaussianDpEvent``, ``SelfComposedDpEvent`` of a ``PoissonSampledDpEvent``, ``ZCDpEvent``,
        or ``NoOpDpEvent`` for μ = 0.

    Raises
    ------
    ValueError
        For a ``"pair"`` curve (no event states a bare (ε, δ)), a Poisson curve under
        ``ADD_OR_REMOVE_ONE``, or another relation.
    """
    import dp_accounting as dpa

    relation = dpa.NeighboringRelation.REPLACE_ONE if neighboring_relation is None else neighboring_relation
    if relation not in (dpa.NeighboringRelation.REPLACE_ONE, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE):
        raise ValueError(f"neighboring_relation must be REPLACE_ONE or ADD_OR_REMOVE_ONE; got {relation!r}.")
    curve = release if isinstance(release, PrivacyCurve) else certificate_curve(release)
    replace = relation == dpa.NeighboringRelation.REPLACE_ONE
    if curve.kind == "gdp":
        if curve.mu == 0.0:
            return dpa.NoOpDpEvent()
        return dpa.GaussianDpEvent((2.0 if replace else 1.0) / curve.mu)
    if curve.kind == "zcdp":
        return dpa.ZCDpEvent(rho=curve.rho)
    if curve.kind == "poisson":
        if not replace:
            raise ValueError("a Poisson-subsampled Gaussian run is certified for replace-one neighbours and no "
                             "add/remove event reproduces it; export it with neighboring_relation=REPLACE_ONE and "
                             "account it with dp-accounting's PLDAccountant.")
        step = dpa.PoissonSampledDpEvent(curve.rate, dpa.GaussianDpEvent(curve.noise_multiplier))
        return step if curve.steps == 1 else dpa.SelfComposedDpEvent(step, curve.steps)
    raise ValueError(f"this release is certified by an (epsilon, delta) pair only "
                     f"({curve.epsilon!r}, {curve.delta!r}): "
                     "dp-accounting has no event for a bare pair; compose it by basic composition "
                     "(dpconvex.privacy.ledger.PrivacyLedger).")


#: The value discretisation of :func:`pld_epsilon` (dp-accounting's default; pessimistic rounding).
PLD_INTERVAL = 1e-4


def pld_epsilon(curves: list[PrivacyCurve], delta: float) -> float | None:
    """ε at ``delta`` of the composition of ``curves`` by their privacy-loss distributions (dp-accounting).

    Each curve's PLD under replace-one: GDP μ as the Gaussian N(0, 1/μ²) against N(1, 1/μ²), which is
    exactly μ-GDP; a Poisson run as dp-accounting's ``from_gaussian_mechanism(z, sampling_prob=q,
    neighboring_relation=REPLACE_ONE)`` self-composed T times (the pair its certificate's PLD was built
    from); a pair by ``from_privacy_parameters`` (its exact (ε, δ) privacy-loss distribution, Meiser and
    Mohammadi 2018, as dp-accounting builds it).  The PLDs are convolved (Koskela, Jälkö, Honkela 2020,
    arXiv:1906.03049; Sommer, Meiser, Mohammadi 2019): exact for a fixed sequence of mechanisms, each
    chosen with its parameters before the first release, up to the pessimistic discretisation
    :data:`PLD_INTERVAL`.

    Parameters
    ----------
    curves : list of PrivacyCurve
    delta : float
        In (0, 1).

    Returns
    -------
    float or None
        ``None`` when a curve has no PLD here: ``"zcdp"``, a void pair (ε = ∞), or a pair whose ε is too
        large for dp-accounting to represent (e^ε overflows).
    """
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    composed = None
    # in one canonical order: a convolution's rounding depends on the order, a ledger's total must not
    for curve in sorted(curves, key=lambda c: (c.kind, *(v or 0.0 for v in (c.mu, c.rate, c.noise_multiplier,
                                                                            c.steps, c.epsilon, c.delta)))):
        if curve.kind == "zcdp":
            return None
        if curve.kind == "gdp":
            if curve.mu == 0.0:
                continue
            part = pld.from_gaussian_mechanism(1.0 / curve.mu, value_discretization_interval=PLD_INTERVAL)
        elif curve.kind == "poisson":
            part = pld.from_gaussian_mechanism(curve.noise_multiplier, sampling_prob=curve.rate,
                                               neighboring_relation=NeighboringRelation.REPLACE_ONE,
                                               value_discretization_interval=PLD_INTERVAL).self_compose(curve.steps)
        elif not math.isfinite(curve.epsilon):
            return None
        else:
            try:
                part = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(curve.epsilon, curve.delta),
                                                   value_discretization_interval=PLD_INTERVAL)
            except OverflowError:
                return None
        composed = part if composed is None else composed.compose(part)
    return 0.0 if composed is None else max(0.0, float(composed.get_epsilon_for_delta(delta)))
