"""Warnings and errors raised by dpconvex.

Every warning dpconvex emits has one of the categories below, so users can filter them
precisely (``warnings.simplefilter("error", PrivacyLeakWarning)``).
"""

from __future__ import annotations

__all__ = ["PrivacyLeakWarning", "DataDependentPreprocessingWarning"]


class PrivacyLeakWarning(UserWarning):
    """The data violated a declared assumption and was altered to restore it.

    Raised, for example, when rows whose L2 norm exceeds ``data_norm`` are clipped back to the
    bound, or labels exceed ``label_bound``.  The certificate remains valid for the clipped data,
    but the user should know their data was changed.
    """


class DataDependentPreprocessingWarning(UserWarning):
    """A preprocessing constant (scale, category set) was read from the private data.

    Such preprocessing is not covered by the privacy certificate; the certificate records it.
    """

