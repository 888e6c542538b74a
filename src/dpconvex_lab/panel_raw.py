"""The panel's tables as bare CSV files would hold them: each table's cells before encoding.

:func:`load_raw_table` returns, for a name of :data:`.panel_data.TABLES`, a :class:`RawTable`: a
DataFrame of the feature columns the declared run encodes (same rows, same order as
:func:`.panel_data.load_panel_table`) plus one label column, as a user with only the CSV would
have it — numbers as numbers, texts as texts, and no schema.  The label column holds what the
declared run's labels are made from:

* classification: the declared label of each row (its class code, or ``"<=50K"``/``">50K"`` for
  Adult, ``"0"``/``"1"`` for the generated table, −1/1 for the derived binary labels of ``fair``
  and ``randhie_any``), so that the label sorting last as text is the declared positive class;
* regression: the raw target, unclipped (the declared run clips it to its declared bounds; a
  discovered schema clips it to the bounds it found).

Categorical codes stay numbers (statsmodels' float codes, the generated table's code texts "0" …
"65", which parse as numbers): a private discovery decides each column's type from its cells
(:func:`dpconvex.datasets.private_schema.decide_numerical`), so coded columns are read as
numerical, as they would be from a bare CSV.  Nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpconvex.datasets.adult import load_adult_raw
from dpconvex.datasets.bundled import load_bundled_raw
from dpconvex_lab.panel_data import (
    ADMIN_ROWS,
    BLOCK,
    MODECHOICE_RANGES,
    STATSMODELS_TABLES,
    TABLES,
    _statsmodels_data,
    admin_frame,
    modechoice_frame,
)

__all__ = ["RawTable", "load_raw_table"]


@dataclass(frozen=True)
class RawTable:
    """One panel table's cells before encoding.

    Attributes
    ----------
    name : str
        A key of :data:`.panel_data.TABLES`.
    frame : pandas.DataFrame
        The feature columns of the declared run and the label column ``target``, rows in the declared
        run's order.
    target : str
        The label column of ``frame``.
    task : {"classification", "regression"}
        What a discovery is told about the target.
    """

    name: str
    frame: pd.DataFrame = field(repr=False)
    target: str
    task: str

    @property
    def n(self) -> int:
        """Rows."""
        return int(len(self.frame))

    def labels(self) -> np.ndarray:
        """The label column's cells as stripped text (how a discovery compares them)."""
        return np.asarray([str(value).strip() for value in self.frame[self.target]], dtype=object)


def _with_target(features: pd.DataFrame, target: str, values) -> pd.DataFrame:
    frame = features.reset_index(drop=True).copy()
    frame[target] = np.asarray(values)
    return frame


def _sklearn(name: str) -> RawTable:
    import sklearn.datasets  # here: only these loaders need it

    if name in ("breast_cancer", "wine", "digits"):
        features, labels = load_bundled_raw(name)
        return RawTable(name, _with_target(features, "target", labels), "target", "classification")
    bunch = sklearn.datasets.load_iris() if name == "iris" else sklearn.datasets.load_diabetes(scaled=False)
    features = pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=list(bunch.feature_names))
    if name == "iris":
        return RawTable(name, _with_target(features, "target", bunch.target.astype(np.int64)), "target",
                        "classification")
    return RawTable(name, _with_target(features, "target", bunch.target.astype(float)), "target", "regression")


def _modechoice() -> RawTable:
    """One row per traveller, as :mod:`.panel_data` builds it (the car's terminal time, 0 by definition, left out)."""
    table = modechoice_frame()
    return RawTable("modechoice", _with_target(table[list(MODECHOICE_RANGES)], "chosen",
                                               table["chosen"].to_numpy(dtype=np.int64)), "chosen", "classification")


def _statsmodels(name: str) -> RawTable:
    spec = STATSMODELS_TABLES["randhie" if name.startswith("randhie") else name]
    frame = _statsmodels_data(spec["module"])
    features = frame[[*spec["categorical"], *spec["numerical"]]]
    if name == "fair":
        return RawTable(name, _with_target(features, "any_affairs", np.where(frame["affairs"].to_numpy() > 0, 1, -1)),
                        "any_affairs", "classification")
    if name == "anes96":
        return RawTable(name, _with_target(features, "PID", frame["PID"].to_numpy().astype(np.int64)), "PID",
                        "classification")
    visits = frame["mdvis"].to_numpy(dtype=float)
    if name == "randhie_any":
        return RawTable(name, _with_target(features, "any_visit", np.where(visits > 0, 1, -1)), "any_visit",
                        "classification")
    return RawTable(name, _with_target(features, "mdvis", visits), "mdvis", "regression")


def _admin(rows: int, seed: int) -> RawTable:
    blocks = [admin_frame(block, seed).iloc[:min(BLOCK, rows - start)]
              for block, start in enumerate(range(0, rows, BLOCK))]
    return RawTable("admin", pd.concat(blocks, ignore_index=True), "positive", "classification")


def load_raw_table(name: str, *, admin_rows: int = ADMIN_ROWS, seed: int = 0) -> RawTable:
    """One panel table's raw cells: the declared run's feature columns and a label column (module docstring).

    Parameters
    ----------
    name : str
        A key of :data:`.panel_data.TABLES`.
    admin_rows : int, default 1,000,000
        Rows of the generated ``admin`` table (its first k rows do not depend on ``admin_rows``).
    seed : int, default 0
        Seed of the generated ``admin`` table.

    Returns
    -------
    RawTable
        Row i is row i of ``load_panel_table(name, admin_rows=admin_rows, seed=seed)``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`.panel_data.TABLES`, or ``admin_rows`` < 1.
    ImportError
        For a statsmodels table when statsmodels is not installed.
    """
    if name not in TABLES:
        raise ValueError(f"name must be one of {TABLES}; got name={name!r}.")
    if name in ("iris", "diabetes", "breast_cancer", "wine", "digits"):
        return _sklearn(name)
    if name == "adult":
        return RawTable(name, load_adult_raw("all"), "income", "classification")
    if name == "admin":
        if not (isinstance(admin_rows, (int, np.integer)) and admin_rows >= 1):
            raise ValueError(f"admin_rows must be an integer >= 1; got admin_rows={admin_rows!r}.")
        return _admin(int(admin_rows), seed)
    if name == "modechoice":
        return _modechoice()
    return _statsmodels(name)
