"""Figures 2 and 3 of Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546): files, CSV layout, curve shapes."""

from __future__ import annotations

import csv
from collections import defaultdict

import numpy as np
import pytest

from dpconvex.accounting.hockey_stick import pnsgd_gaussian_delta, rdp_baseline_delta
from dpconvex_lab.contraction_figures import (
    CSV_HEADER,
    FIGURE2_PARAMETERS,
    FIGURE3_PARAMETERS,
    figure_records,
    reproduce_contraction,
)

N = 40
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return reproduce_contraction(tmp_path_factory.mktemp("contraction") / "nested", n=N)


def _curves(path):
    """(record, column) → values in CSV order, plus the header and the figure names."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    curves = defaultdict(list)
    for _figure, record, *values in rows[1:]:
        for name, value in zip(CSV_HEADER[2:], values):
            curves[int(record), name].append(float(value))
    return rows[0], {row[0] for row in rows[1:]}, {k: np.array(v) for k, v in curves.items()}


def test_files_exist_and_csv_columns(outputs):
    paths, finding = outputs
    assert set(paths) == {"figure2_png", "figure2_csv", "figure3_png", "figure3_csv"}
    for number in (2, 3):
        assert paths[f"figure{number}_png"].read_bytes()[:8] == PNG_MAGIC
        header, figures, curves = _curves(paths[f"figure{number}_csv"])
        assert tuple(header) == CSV_HEADER == ("figure", "record", "epsilon", "delta_contraction", "delta_rdp_baseline")
        assert figures == {f"figure{number}"}
        assert {record for record, _ in curves} == set(figure_records(N)) == {1, N // 2, N - 1}
    assert len(finding.splitlines()) == 6 and "figure3 t=39" in finding


@pytest.mark.parametrize("number", [2, 3])
def test_curves_non_increasing_and_monotone_in_the_record(outputs, number):
    _, _, curves = _curves(outputs[0][f"figure{number}_csv"])
    for (record, column), values in curves.items():
        if column != "epsilon":
            assert np.all(np.diff(values) <= 0.0), (record, column)
    first, middle, last = (curves[t, "delta_contraction"] for t in figure_records(N))
    assert np.all(first <= middle) and np.all(middle <= last) and np.any(first < last)


@pytest.mark.parametrize(("number", "params"), [(2, FIGURE2_PARAMETERS), (3, FIGURE3_PARAMETERS)])
def test_csv_values_are_the_accounting_functions(outputs, number, params):
    _, _, curves = _curves(outputs[0][f"figure{number}_csv"])
    kw = {k: params[k] for k in ("lipschitz", "sigma", "step_size", "smoothness", "strong_convexity")}
    for record in figure_records(N):
        eps = curves[record, "epsilon"]
        assert eps[0] == 0.0 and eps[-1] == 3.0
        np.testing.assert_allclose(curves[record, "delta_contraction"], pnsgd_gaussian_delta(
            eps, n=N, record=record, diameter=params["diameter"], **kw), rtol=1e-15, atol=0.0)
        np.testing.assert_allclose(curves[record, "delta_rdp_baseline"],
                                   rdp_baseline_delta(eps, n=N, record=record, **kw), rtol=1e-15, atol=0.0)
    assert (params["strong_convexity"] == 0.0) == (number == 2)


@pytest.mark.parametrize("n", [2, 0, 3.5])
def test_bad_n(n, tmp_path):
    with pytest.raises(ValueError, match="n must be an integer >= 3"):
        reproduce_contraction(tmp_path, n=n)
