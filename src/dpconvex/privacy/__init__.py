"""What a fit releases about its privacy: the certificate, its text, standard events and the ledger.

Layer: above :mod:`dpconvex.accounting` (whose accounts the certificate records), below
:mod:`dpconvex.mechanisms`.  Modules: :mod:`.certificate`
(:class:`~dpconvex.privacy.certificate.PrivacyCertificate`), :mod:`.certificate_text` (its text,
Markdown and HTML views), :mod:`.dp_events` (a certificate as a dp-accounting event) and
:mod:`.ledger` (several releases composed, with a budget filter).
"""
