"""How a certificate reads — ``str``, ``describe(verbose=True)``, ``repr``, the notebook views — and its record.

``str(certificate)`` leads with the guarantee in one line, then one condition, fact or note a line;
a note of machine detail (``auto``'s table of scores) is shortened there and kept whole in the
verbose view; the composition baseline is shown only when it differs from ε.  ``repr`` is one short
line.  The HTML and Markdown views carry the same content, every text escaped.
``PrivacyCertificate.from_dict`` inverts ``to_dict`` for every mechanism's certificate.  The ``…CV``
estimators' certificates carry the notes every single fit carries: a δ ≥ 1/n (one warning for the
whole selection, naming all its records) and the condition that the grid and budget are not tuned
on the data.
"""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pytest

from dpconvex import PrivateLogisticRegression
from dpconvex.estimators.model_selection import PrivateLogisticRegressionCV, PrivateRidgeCV
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms import METHODS
from dpconvex.privacy.certificate import NO_GUARANTEE, PrivacyCertificate
from dpconvex.privacy.certificate_text import DETAILS, LONG_NOTE, SHORT_NOTE, shorten

#: A CV fit that takes well under a second: two candidates, K >= 1 runs of 10 iterations.
FAST_CV = dict(l2_regularizations=(0.1, 1.0), expected_runs=2, runs_distribution="geometric", iterations=10,
               random_state=0)


def _data(n: int = 60, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= 1.01 * np.linalg.norm(X, axis=1, keepdims=True)  # within data_norm = 1: no clipping warning
    return X, np.where(X @ np.arange(1.0, d + 1) > 0, 1.0, -1.0)


def _fit(**options) -> PrivacyCertificate:
    X, y = _data(options.pop("n", 60))
    options = {"classes": [-1, 1], "random_state": 0, **options}
    return PrivateLogisticRegression(**options).fit(X, y).privacy_report_


def _certificate(**changes) -> PrivacyCertificate:
    fields = dict(mechanism="noisy_gd", epsilon=0.5, delta=1e-6, bound="gdp", theorem="Thm 1", conditions=("c1", "c2"),
                  assumptions={"n": 10}, order=None, conversion="exact-gdp", sigma=2.0, iterations=7,
                  candidates={"composition": 0.9, "gdp": 0.5}, composition_epsilon=0.9)
    return PrivacyCertificate(**{**fields, **changes})


# ------------------------------------------------------------------------------------ from_dict / to_dict
def _every_kind_of_certificate() -> list[tuple[str, PrivacyCertificate]]:
    certificates = [(f"method={name}", _fit(method=name)) for name in METHODS]
    with pytest.warns(PrivacyLeakWarning, match="labels"):
        certificates.append(("void", _fit(classes=None)))
    X, y = _data()
    certificates.append(("cv", PrivateLogisticRegressionCV(classes=[-1, 1], **FAST_CV).fit(X, y).privacy_report_))
    certificates.append(("ridge-cv", PrivateRidgeCV(**FAST_CV).fit(X, 0.5 * y).privacy_report_))
    return certificates


def test_from_dict_inverts_to_dict_for_every_mechanism_and_through_json() -> None:
    certificates = _every_kind_of_certificate()
    assert {"void", "method=pnsgd", "method=auto"} <= {name for name, _ in certificates}
    for name, certificate in certificates:
        record = certificate.to_dict()
        assert PrivacyCertificate.from_dict(record) == certificate, name
        assert PrivacyCertificate.from_dict(json.loads(certificate.to_json())) == certificate, name
    void = dict(certificates)["void"]
    assert void.to_dict()["epsilon"] == "inf" and PrivacyCertificate.from_dict(void.to_dict()).epsilon == math.inf
    profile = PrivacyCertificate.from_dict(dict(certificates)["method=pnsgd"].to_dict()).record_profile
    assert isinstance(profile, tuple) and len(profile) == 60


def test_from_dict_restores_infinities_and_tuples_and_shares_nothing() -> None:
    certificate = _certificate(epsilon=math.inf, composition_epsilon=math.inf, candidates={"gdp": math.inf},
                               record_profile=(1e-7, 2e-7), notes=("n1",),
                               assumptions={"radius": math.inf, "floor": -math.inf, "grid": [0.1, 1.0]})
    record = certificate.to_dict()
    assert record["candidates"] == {"gdp": "inf"} and record["assumptions"]["floor"] == "-inf"
    again = PrivacyCertificate.from_dict(record)
    assert again == certificate
    assert again.assumptions["radius"] == math.inf and again.assumptions["floor"] == -math.inf
    assert again.conditions == ("c1", "c2") and again.notes == ("n1",) and again.record_profile == (1e-7, 2e-7)
    record["assumptions"]["grid"].append(10.0)
    assert again.assumptions["grid"] == [0.1, 1.0]


def test_from_dict_fills_defaults_and_names_bad_fields() -> None:
    record = _certificate().to_dict()
    for name in ("candidates", "composition_epsilon", "notes", "record_profile"):
        del record[name]
    assert PrivacyCertificate.from_dict(record) == _certificate(candidates={}, composition_epsilon=math.inf)
    with pytest.raises(ValueError, match=r"unknown fields \['colour'\], missing fields \['bound', 'epsilon'\]"):
        PrivacyCertificate.from_dict({**{k: v for k, v in record.items() if k not in ("bound", "epsilon")},
                                      "colour": "red"})


# ------------------------------------------------------------------------------------------------ str()
def test_str_leads_with_the_guarantee_then_one_condition_a_line() -> None:
    certificate = _fit(method="noisy_gd")
    lines = str(certificate).splitlines()
    assert lines[0] == f"({certificate.epsilon:.6g}, 1e-08)-DP — noisy_gd, certified by the {certificate.bound} bound"
    assert lines[1] == f"  theorem: {certificate.theorem}"
    count = len(certificate.conditions)
    assert lines[2:2 + count] == [f"  condition: {c}" for c in certificate.conditions]
    assert [line for line in lines if line.startswith("  note: ")] == [f"  note: {n}" for n in certificate.notes]
    assert str(certificate) == certificate.describe()


def test_a_void_certificate_says_so_on_its_first_line() -> None:
    void = _certificate().without_guarantee("the labels were read from y")
    assert str(void).splitlines()[0] == f"(inf, 1e-06)-DP — noisy_gd: {NO_GUARANTEE} (see the notes)"
    assert str(void).splitlines()[-1] == f"  note: {NO_GUARANTEE}: the labels were read from y"
    assert "composition baseline" not in str(void)  # inf: nothing to compare


@pytest.mark.parametrize("composition, shown", [
    (0.9, True),              # the hidden-state bound's gain
    (0.5, False),             # equal
    (0.5000001, False),       # equal as printed (6 significant digits)
    (math.inf, False),        # not applicable
])
def test_the_composition_baseline_is_shown_only_when_it_differs_from_epsilon(composition, shown) -> None:
    text = str(_certificate(composition_epsilon=composition))
    assert ("  composition baseline would give epsilon = 0.9 (every iterate released)" in text.splitlines()) == shown
    assert ("composition baseline" in text) == shown


def test_the_baseline_of_fitted_models_shows_the_gain_and_drops_the_repeat() -> None:
    gd = _fit(method="noisy_gd")  # a hidden-state bound wins: the baseline is larger
    assert gd.composition_epsilon > gd.epsilon * 1.01
    assert f"composition baseline would give epsilon = {gd.composition_epsilon:.6g}" in str(gd)
    sgd = _fit(method="noisy_sgd")  # composition itself wins: the line would repeat epsilon
    assert f"{sgd.composition_epsilon:.6g}" == f"{sgd.epsilon:.6g}" and "composition baseline" not in str(sgd)


def test_the_default_fit_keeps_its_table_of_scores_in_the_details_and_the_verbose_view_shows_it() -> None:
    from dpconvex.mechanisms.auto import RULE_DETAIL, SCORES_DETAIL

    certificate = _fit(epsilon=1.0, n=400)  # method="auto": it weighs many configurations
    (note,) = [note for note in certificate.notes if note.startswith("method='auto'")]
    assert len(note) <= LONG_NOTE and "batch_size=" in note and "certificate's details" in note
    scores = certificate.details[SCORES_DETAIL]
    assert len(scores) > 3 and all(" = " in score for score in scores)
    text = str(certificate)
    assert f"  note: {note}" in text.splitlines() and scores[0] not in text and len(text) < 1500
    verbose = certificate.describe(verbose=True).splitlines()
    assert f"  {SCORES_DETAIL}[0]: {scores[0]}" in verbose
    assert f"  {RULE_DETAIL}: {certificate.details[RULE_DETAIL]}" in verbose


@pytest.mark.parametrize("note, shown", [
    ("short note", "short note"),
    ("See e.g. Table 1 (i.e. Fig. 2). Then " + "x" * LONG_NOTE, "See e.g. Table 1 (i.e. Fig. 2)."),
    ("a (b, c), d; " + "word " * 200, "a (b, c), d …"),
    ("word " * 200, ("word " * 32).rstrip() + " …"),
])
def test_shorten_keeps_the_lead_of_a_long_note(note, shown) -> None:
    assert shorten(note) == shown


# ------------------------------------------------------------------------------------------ verbose view
def test_the_verbose_view_adds_the_candidates_the_run_and_the_assumptions() -> None:
    certificate = _certificate(record_profile=(1e-7, 3e-7))
    lines = certificate.describe(verbose=True).splitlines()
    assert lines[lines.index("  candidate bounds (epsilon at delta = 1e-06):") + 1:][:2] == [
        "      composition: 0.9", "    * gdp: 0.5"]
    assert "  sigma = 2, iterations = 7, conversion = exact-gdp" in lines and "  n = 10" in lines
    assert "  per-record delta at this epsilon: max 3e-07 (row 2), min 1e-07 (row 1) of 2 rows" in lines
    assert "  per-record delta by row: 1e-07, 3e-07" in lines
    assert "candidate bounds" not in str(certificate) and "sigma =" not in str(certificate)
    with_order = _certificate(order=12.5, conversion="improved").describe(verbose=True)
    assert "  sigma = 2, iterations = 7, conversion = improved (order 12.5)" in with_order.splitlines()


# ------------------------------------------------------------------------------------------------- repr
def test_repr_is_one_short_line() -> None:
    assert repr(_certificate()) == "PrivacyCertificate(epsilon=0.5, delta=1e-06, mechanism='noisy_gd', bound='gdp')"
    for certificate in (_fit(n=400), _fit(method="pnsgd"), _certificate().without_guarantee("why")):
        text = repr(certificate)
        assert len(text) < 200 and "\n" not in text and f"mechanism={certificate.mechanism!r}" in text
        assert f"epsilon={certificate.epsilon!r}" in text


# ------------------------------------------------------------------------------------------ notebook views
def test_the_html_view_has_the_guarantee_the_conditions_the_notes_and_the_candidates() -> None:
    certificate = _certificate(notes=("clipped to 1 <script>alert(1)</script> & more", "x" * (LONG_NOTE + 1)))
    page = certificate._repr_html_()
    assert page.startswith('<div class="dpconvex-certificate">') and page.endswith("</div>")
    assert ("<p><strong>(0.5, 1e-06)-DP — noisy_gd, certified by the gdp bound</strong></p>\n"
            "<p>Theorem: Thm 1</p>") in page
    assert "<ul><li>c1</li><li>c2</li></ul>" in page
    assert "<li>clipped to 1 &lt;script&gt;alert(1)&lt;/script&gt; &amp; more</li>" in page and "<script>" not in page
    assert f"<details><summary>{'x' * SHORT_NOTE} …</summary>{'x' * (LONG_NOTE + 1)}</details>" in page
    assert ("<tr><td>composition</td><td>0.9</td></tr><tr><td><strong>gdp</strong> (certified)</td><td>0.5</td></tr>"
            in page)
    assert "<li>composition baseline would give epsilon = 0.9 (every iterate released)</li>" in page
    assert "<li>sigma = 2, iterations = 7, conversion = exact-gdp</li>" in page


def test_the_html_view_of_a_void_certificate_marks_no_bound_certified() -> None:
    page = _certificate().without_guarantee("a <bound> was read")._repr_html_()
    assert f"<strong>(inf, 1e-06)-DP — noisy_gd: {NO_GUARANTEE} (see the notes)</strong>" in page
    assert "(certified)" not in page and "a &lt;bound&gt; was read" in page


def test_the_markdown_view_has_the_same_content_escaped() -> None:
    certificate = _certificate(theorem="max_j Δ[j]", notes=("<script>alert(1)</script> *bold* | pipe",))
    text = certificate._repr_markdown_()
    assert text.startswith("**(0.5, 1e-06)-DP — noisy\\_gd, certified by the gdp bound**\n\n"
                           "Theorem: max\\_j Δ\\[j\\]\n")
    assert "Conditions:\n\n- c1\n- c2" in text
    assert r"- &lt;script&gt;alert(1)&lt;/script&gt; \*bold\* \| pipe" in text and "<script>" not in text
    assert "| bound | epsilon |\n|---|---|\n| composition | 0.9 |\n| **gdp** (certified) | 0.5 |" in text
    assert "- composition baseline would give epsilon = 0.9 (every iterate released)" in text
    long = _certificate(notes=("x" * (LONG_NOTE + 1),))._repr_markdown_()
    assert f"- {'x' * SHORT_NOTE} … {DETAILS.replace('_', chr(92) + '_')}" in long


# ------------------------------------------------------------------------------- the CV estimators' notes
def test_a_cv_fit_with_delta_at_least_one_over_n_warns_once_naming_all_its_records() -> None:
    X, y = _data(n=40)  # 32 training and 8 validation records: the warning names all 40
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = PrivateLogisticRegressionCV(delta=0.05, classes=[-1, 1], **FAST_CV).fit(X, y)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1, leaks
    assert re.match(r"delta=0\.05 is at least 1/n = 0\.025 \(n = 40 records\): .*releasing a record outright",
                    leaks[0])
    report = model.privacy_report_
    assert report.notes[0] == leaks[0] and math.isfinite(report.epsilon)  # the same sentence; epsilon unchanged
    assert f"  note: {leaks[0]}" in str(report).splitlines()


def test_a_cv_fit_with_delta_below_one_over_n_has_no_such_warning_or_note() -> None:
    X, y = _data(n=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = PrivateLogisticRegressionCV(delta=0.02, classes=[-1, 1], **FAST_CV).fit(X, y)
    assert not any("1/n" in note for note in model.privacy_report_.notes)


def test_a_cv_certificate_says_the_grid_and_budget_must_not_be_tuned_on_the_data() -> None:
    X, y = _data()
    report = PrivateLogisticRegressionCV(classes=[-1, 1], **FAST_CV).fit(X, y).privacy_report_
    (tuning,) = [c for c in report.conditions if "without looking at the private data" in c]
    assert tuning.startswith("the grid of lambda and the budget (epsilon, delta, expected_runs")
    assert "the selection of lambda from the grid is covered" in tuning and "GridSearchCV" in tuning
    assert "not: epsilon counts this one selection" in tuning
    assert f"  condition: {tuning}" in str(report).splitlines()
    assert str(report).startswith(f"({report.epsilon:.6g}, 1e-08)-DP — private_selection, certified by the "
                                  "truncated-negative-binomial bound\n  theorem: Papernot & Steinke 2022")
