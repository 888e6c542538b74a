"""Warnings and errors raised by dpconvex.

Every warning dpconvex emits has one of the categories below, so users can filter them
precisely (``warnings.simplefilter("error", PrivacyLeakWarning)``).
"""

from __future__ import annotations

__all__ = ["PrivacyLeakWarning", "DataDependentPreprocessingWarning", "LowUtilityWarning", "CalibrationError",
           "BudgetExceededError", "DiscoverySpentError"]


class PrivacyLeakWarning(UserWarning):
    """The data violated a declared assumption and was altered to restore it.

    Raised, for example, when rows whose L2 norm exceeds ``data_norm`` are clipped back to the
    bound, or labels exceed ``label_bound``.  The certificate remains valid for the clipped data,
    but the user should know their data was changed.  Also raised by the explicit opt-in
    ``data_norm="from_data"``, which reads the bound from the data: the certificate then says
    ε = inf.
    """


class DataDependentPreprocessingWarning(UserWarning):
    """A preprocessing constant (numeric bound, category set, label) was read from the private data.

    Raised by :meth:`~dpconvex.datasets.TabularSchema.infer` and when a schema that says
    ``data_dependent`` is used.  No theorem covers such preprocessing, so a model trained on its
    output has no differential-privacy guarantee: ``dpconvex train`` reports ε = inf, with the
    reason in the certificate's notes.
    """



class LowUtilityWarning(UserWarning):
    """The plan predicts a model no better than the trivial predictor (majority class or mean).

    Raised by ``method="auto"`` before it fits, from public quantities only
    (:mod:`dpconvex.mechanisms.do_no_harm`): the privacy noise on the model is about as long as
    the farthest the data can move it, or longer.  The model is still fitted; the message names
    the ε (at this n) or the n (at this ε) that would reach a useful model.
    """


class CalibrationError(RuntimeError):
    """The noise a calibration chose does not meet the target when the certificate re-checks it.

    A defect of dpconvex, never of the input: nothing is released.  Please report it with the
    parameters of the run.
    """


class BudgetExceededError(RuntimeError):
    """A planned release would take a privacy ledger past its budget; it must not run.

    Raised by :meth:`dpconvex.privacy.ledger.PrivacyLedger.check` *before* the release, under a filter that
    stays valid when the releases and their parameters are chosen adaptively.  Nothing was
    released and the ledger is unchanged.
    """


class DiscoverySpentError(ValueError):
    """A release stopped after its private schema discovery had read the records: the discovery's budget is spent.

    Raised by :func:`~dpconvex.datasets.holdout.load_discovered_split` for any error from the
    discovery on (its message may show what the discovery released, e.g. the labels it found).
    ``dpconvex train --ledger`` records the discovery's cost
    (:func:`~dpconvex.datasets.private_release.discovery_spent_certificate`) before it reports the error.
    """
