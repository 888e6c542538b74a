"""Golden releases: 100 seeded configurations whose released parameters and certificates are pinned bit for bit.

``golden_configurations`` lists the configurations (the trainers there; the estimators and private
selection in ``golden_estimators``, the accountants in ``golden_accounting``, their data in
``golden_data``); ``golden_records`` runs them into JSON-ready records and compares records;
``generate_golden.py`` writes ``releases.json``, which ``tests/test_golden_releases.py`` checks.
"""
