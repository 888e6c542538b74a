"""The tables of the panel benchmark (``dpconvex bench panel``), each encoded with declared public bounds.

Nothing is downloaded at run time.  :func:`load_panel_table` returns a :class:`PanelTable` per name
of :data:`TABLES`:

* scikit-learn's installed copies: ``breast_cancer``, ``wine`` and ``digits``
  (:func:`dpconvex.datasets.load_bundled`, bounds as documented there); ``iris`` (Fisher 1936; 150
  records, 4 features, 3 classes), with the Min and Max columns of the summary statistics in its
  published description (``load_iris().DESCR``) as bounds, transcribed in :data:`IRIS_RANGES`.
  **Those ranges were computed from the same records**, as for breast cancer and wine: a
  certificate covers this fixed map, not the choice of its constants.  ``diabetes`` (Efron et al.
  2004; ``load_diabetes(scaled=False)``: 442 records, 10 features, regression): its description
  gives no ranges, so :data:`DIABETES_RANGES` and the target's [0, 400] are round ranges in the
  variables' units declared for this benchmark (the target is "a quantitative measure of disease
  progression one year after baseline"; its values lie in 25..346), not read from the data at run
  time.
* statsmodels' packaged data sets (``statsmodels.datasets.<name>.load_pandas()``; the optional
  extra ``pip install "dpconvex[bench]"``), with the endogenous and exogenous variables statsmodels
  defines for each, bounds from each data set's documentation (its ``DESCRLONG`` / ``NOTE``):
  a variable documented by codes is declared categorical with those codes; a range the
  documentation states is used as stated (randhie's ``lncoins``, ``ln(coinsurance + 1)`` with
  0 ≤ coinsurance ≤ 100, is [0, ln 101]; a logarithm of ``max(1, ·)`` is ≥ 0; an indicator lies in
  [0, 1]); where the documentation gives no range (an age, a count, an amount) the bound is a round
  range in the variable's units declared for this benchmark (marked ``declared`` in
  :data:`STATSMODELS_TABLES`), made after seeing the data's summary statistics; no feature value is
  clipped.

  - ``fair`` (Fair 1978; 6,366 records): binary, any time in extramarital affairs (``affairs > 0``).
  - ``randhie`` (RAND Health Insurance Experiment, Cameron and Trivedi 2005; 20,190 records):
    regression of ``mdvis``, outpatient MD visits, declared bounds [0, 52] (at most one a week:
    the 12 larger counts are clipped to 52); ``randhie_any``: binary, ``mdvis > 0``.
  - ``anes96`` (American National Election Studies 1996; 944 records): the 7-class party
    identification ``PID``.
  - ``modechoice`` (Greene and Hensher 1997; 840 rows): 4 rows per traveller, one per travel mode
    (1 air, 2 train, 3 bus, 4 car), ``choice`` = 1 on the chosen one.  The table has one row per
    traveller (210), so that a guarantee about one record is one about a person: the 4-class chosen
    mode, from the four modes' level of service (terminal time — the car's is 0 by definition and
    left out —, in-vehicle cost and time, generalised cost), household income and party size.
* ``adult``: :func:`dpconvex.datasets.load_adult` (encoded by its declared schema).
* ``admin``: a generated administrative table (:func:`load_admin`), 1,000,000 independent rows drawn
  from a seed: 30 categorical columns ``c00`` … ``c29`` (:data:`CARDINALITIES`, 2 to 66 codes, 490 in
  all; code k drawn with probability ∝ 1/(k + 1)), 10 skewed numerical columns (:data:`NUMERICAL`:
  log-normal amounts, negative-binomial and Poisson counts, a gamma age, an exponential tenure),
  top-coded at their declared upper bounds as a register would be; a binary label from a logistic
  model of ``c00``, ``c07``, ``c12``, claims and income (``_logit``) whose fixed intercept makes
  about 5 % of the rows positive.  Rows are generated and encoded in blocks of :data:`BLOCK`, block b
  from ``SeedSequence([seed, b])`` (the first k rows do not depend on ``rows``), written into one
  preallocated float64 array (1,000,000 × 500 is 4.0 GB; no other full-size copy).

Every table is encoded by the library's feature map (:func:`dpconvex.datasets.encoding.encode`):
numerical columns clipped to their bounds and scaled to [0, 1], categorical columns one-hot, each
row scaled to unit L2 norm.  Labels: binary tables keep their two declared classes, multi-class
tables their codes; a regression target is returned on its own scale, clipped to its declared
bounds.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpconvex.datasets.adult import load_adult
from dpconvex.datasets.bundled import load_bundled
from dpconvex.datasets.encoding import encode, feature_names
from dpconvex.datasets.tabular import TabularSchema

__all__ = ["ADMIN_ROWS", "ADMIN_SCHEMA", "BLOCK", "CARDINALITIES", "DIABETES_RANGES", "INSTALL_HINT", "IRIS_RANGES",
           "NUMERICAL", "PanelTable", "STATSMODELS_TABLES", "TABLES", "admin_frame", "load_admin", "load_panel_table",
           "modechoice_frame"]

#: The tables of the panel, in the order of the report (small to large).
TABLES: tuple[str, ...] = ("iris", "wine", "modechoice", "diabetes", "breast_cancer", "anes96", "digits", "fair",
                           "randhie", "randhie_any", "adult", "admin")
#: What a missing statsmodels asks for.
INSTALL_HINT = 'pip install "dpconvex[bench]"'

#: Min and Max of ``load_iris().DESCR``'s summary statistics, in the order of ``feature_names``.
IRIS_RANGES: dict[str, tuple[float, float]] = {
    "sepal length (cm)": (4.3, 7.9), "sepal width (cm)": (2.0, 4.4), "petal length (cm)": (1.0, 6.9),
    "petal width (cm)": (0.1, 2.5)}
#: Declared ranges of ``load_diabetes(scaled=False)``'s numerical features (units of the description: years,
#: kg/m², mm Hg, mg/dL; ``s4`` a ratio, ``s5`` a logarithm); ``sex`` is categorical, coded 1 and 2.
DIABETES_RANGES: dict[str, tuple[float, float]] = {
    "age": (18.0, 100.0), "bmi": (10.0, 60.0), "bp": (40.0, 160.0), "s1": (50.0, 400.0), "s2": (0.0, 300.0),
    "s3": (0.0, 150.0), "s4": (0.0, 12.0), "s5": (2.0, 8.0), "s6": (40.0, 200.0)}
#: The diabetes target's declared range (a public declaration, not read from the data).
DIABETES_TARGET = (0.0, 400.0)


def _codes(*values: int) -> tuple[str, ...]:
    return tuple(str(value) for value in values)


#: Per statsmodels table: the statsmodels module, the declared categorical codes and numerical bounds, and
#: for each bound where it comes from ("documented" or "declared").
STATSMODELS_TABLES: dict[str, dict] = {
    "fair": {"module": "fair", "categorical": {
        "rate_marriage": _codes(1, 2, 3, 4, 5), "religious": _codes(1, 2, 3, 4), "educ": _codes(9, 12, 14, 16, 17, 20),
        "occupation": _codes(1, 2, 3, 4, 5, 6), "occupation_husb": _codes(1, 2, 3, 4, 5, 6)},
        "numerical": {"age": ((15.0, 65.0), "declared"), "yrs_married": ((0.0, 40.0), "declared"),
                      "children": ((0.0, 10.0), "declared")}},
    "randhie": {"module": "randhie", "categorical": {name: _codes(0, 1) for name in ("idp", "hlthg", "hlthf", "hlthp")},
                "numerical": {"lncoins": ((0.0, math.log(101.0)), "documented"),
                              "lpi": ((0.0, 8.0), "lower documented, upper declared"),
                              "fmde": ((0.0, 9.0), "lower documented, upper declared"),
                              "physlm": ((0.0, 1.0), "documented (an indicator)"),
                              "disea": ((0.0, 100.0), "declared")}},
    "anes96": {"module": "anes96", "categorical": {"selfLR": _codes(*range(1, 8)), "educ": _codes(*range(1, 8)),
                                                   "income": _codes(*range(1, 25))},
               # logpopul = log(popul + .1), popul in 1000s: from 0 to 8,000 (New York City, 7.3 million in 1990)
               "numerical": {"logpopul": ((math.log(0.1), math.log(8000.1)), "lower documented, upper declared"),
                             "age": ((18.0, 100.0), "declared (voting age and up)")}},
}
#: modechoice, one row per traveller: declared bounds of each mode's level of service and the traveller's own
#: variables (minutes, dollars, $1000s, persons; the documentation gives units, no ranges).
MODES = {1: "air", 2: "train", 3: "bus", 4: "car"}
MODECHOICE_RANGES: dict[str, tuple[float, float]] = {
    **{f"ttme_{MODES[m]}": (0.0, 120.0) for m in (1, 2, 3)},
    **{f"{variable}_{mode}": bounds for variable, bounds in (("invc", (0.0, 250.0)), ("invt", (0.0, 1440.0)),
                                                             ("gc", (0.0, 300.0))) for mode in MODES.values()},
    "hinc": (0.0, 100.0), "psize": (1.0, 10.0)}
#: randhie's declared target bounds (visits in a year: at most one a week).
RANDHIE_TARGET = (0.0, 52.0)


# the generated administrative table

#: Rows of the full table.
ADMIN_ROWS = 1_000_000
#: Rows generated and encoded at a time (part of the table's definition: block b is seeded by b).
BLOCK = 50_000
#: Codes of each categorical column c00 … c29 (490 one-hot features).
CARDINALITIES: tuple[int, ...] = (2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 12, 12, 14, 15, 16, 18, 20, 22, 24, 25,
                                  28, 30, 32, 36, 50, 66)
#: Numerical columns: declared (lower, upper) bounds; values are top-coded at ``upper``.
NUMERICAL: dict[str, tuple[float, float]] = {
    "income": (0.0, 500_000.0), "benefit": (0.0, 50_000.0), "savings": (0.0, 1_000_000.0), "rent": (0.0, 10_000.0),
    "visits": (0.0, 100.0), "claims": (0.0, 50.0), "dependants": (0.0, 15.0), "age": (16.0, 110.0),
    "tenure_months": (0.0, 600.0), "days_absent": (0.0, 365.0)}
#: The declared schema of the generated table (label ``positive``: "1" is the positive class).
ADMIN_SCHEMA = TabularSchema(target="positive", positive_label="1", numerical=NUMERICAL,
                             categorical={f"c{j:02d}": tuple(str(k) for k in range(size))
                                          for j, size in enumerate(CARDINALITIES)})
#: Intercept of the label model, fixed once so that about 5 % of the rows are positive (5.02 % of
#: the 1,000,000 rows at seed 0).
INTERCEPT = -19.65


def _draw_codes(rng: np.random.Generator, size: int, rows: int) -> np.ndarray:
    """``rows`` codes in 0..size−1, code k with probability ∝ 1/(k + 1)."""
    weights = 1.0 / np.arange(1, size + 1)
    return np.minimum(np.searchsorted(np.cumsum(weights / weights.sum()), rng.random(rows)), size - 1)


def _numerical(rng: np.random.Generator, rows: int) -> dict[str, np.ndarray]:
    """The skewed columns of one block, top-coded at their declared upper bounds."""
    values = {
        "income": rng.lognormal(10.0, 0.8, rows), "benefit": rng.lognormal(7.0, 1.2, rows),
        "savings": rng.lognormal(8.0, 1.5, rows), "rent": rng.lognormal(6.5, 0.5, rows),
        "visits": rng.negative_binomial(1, 0.25, rows).astype(float),  # mean 3
        "claims": rng.negative_binomial(0.5, 0.5, rows).astype(float),  # mean 0.5
        "dependants": rng.poisson(1.2, rows).astype(float), "age": 16.0 + rng.gamma(4.0, 7.0, rows),
        "tenure_months": rng.exponential(60.0, rows),
        "days_absent": rng.negative_binomial(1, 1 / 6, rows).astype(float),  # mean 5
    }
    return {name: np.minimum(column, NUMERICAL[name][1]) for name, column in values.items()}


def _logit(numerical: dict[str, np.ndarray], codes: list[np.ndarray]) -> np.ndarray:
    """The label model's log-odds: ``c00``, ``c07``, ``c12``, claims and income (fixed coefficients)."""
    return (INTERCEPT + 8.0 * (codes[0] == 1) + 6.0 * (codes[7] < 3) + 4.0 * (codes[12] < 2)
            + 2.0 * np.log1p(numerical["claims"]) - 2.0 * (np.log(numerical["income"]) - 10.0))


def admin_frame(block: int = 0, seed: int = 0) -> pd.DataFrame:
    """Block ``block`` of the generated table: :data:`BLOCK` records with the label column ``positive``.

    Parameters
    ----------
    block, seed : int
        Rows ``block·BLOCK`` … ``(block + 1)·BLOCK − 1`` of the table of seed ``seed``, drawn from
        ``SeedSequence([seed, block])`` (a table's last block is cut to its size).

    Returns
    -------
    pandas.DataFrame
        The numerical columns of :data:`NUMERICAL`, the categorical columns ``c00`` … ``c29`` (codes as
        text) and ``positive`` ("1" or "0").
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, block]))
    numerical = _numerical(rng, BLOCK)
    codes = [_draw_codes(rng, size, BLOCK) for size in CARDINALITIES]
    positive = rng.random(BLOCK) < 1.0 / (1.0 + np.exp(-_logit(numerical, codes)))
    labels = {f"c{j:02d}": np.asarray([str(k) for k in range(size)], dtype=object)[code]
              for j, (size, code) in enumerate(zip(CARDINALITIES, codes))}
    return pd.DataFrame({**numerical, **labels, "positive": np.where(positive, "1", "0")})


def load_admin(rows: int = ADMIN_ROWS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The generated table encoded with :data:`ADMIN_SCHEMA`: unit-norm rows and labels ±1.

    Parameters
    ----------
    rows : int, default 1,000,000
        Records (≥ 1); the first k rows do not depend on ``rows`` (module docstring).
    seed : int, default 0

    Returns
    -------
    X : numpy.ndarray of float64, shape (rows, 500)
        Encoded rows (:func:`dpconvex.datasets.encoding.encode`), ‖x‖₂ = 1.
    y : numpy.ndarray of int64, shape (rows,)
        +1 for a positive record, −1 otherwise.

    Raises
    ------
    ValueError
        If ``rows`` < 1.
    """
    if not (isinstance(rows, (int, np.integer)) and rows >= 1):
        raise ValueError(f"rows must be an integer >= 1; got rows={rows!r}.")
    X = np.empty((rows, len(feature_names(ADMIN_SCHEMA))))
    y = np.empty(rows, dtype=np.int64)
    for block, start in enumerate(range(0, rows, BLOCK)):
        stop = min(start + BLOCK, rows)
        frame = admin_frame(block, seed).iloc[:stop - start]
        X[start:stop] = encode(frame, ADMIN_SCHEMA)
        y[start:stop] = np.where(frame["positive"].to_numpy() == "1", 1, -1)
    return X, y


@dataclass(frozen=True)
class PanelTable:
    """One table of the panel: encoded rows, labels and what was declared about them.

    Attributes
    ----------
    name : str
        A key of :data:`TABLES`.
    X : numpy.ndarray of float64, shape (n, d)
        Encoded rows, ‖x‖₂ = 1.
    y : numpy.ndarray, shape (n,)
        Labels in ``classes`` (classification) or targets within ``target_bounds`` (regression).
    task : {"binary", "multiclass", "regression"}
    classes : tuple or None
        The declared label set (classification; its second entry is the positive class of a binary table).
    target_bounds : tuple of float or None
        The declared range of the target (regression).
    source : str
        Where the data and the bounds come from, for reports.
    """

    name: str
    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    task: str
    classes: tuple | None
    target_bounds: tuple[float, float] | None
    source: str

    @property
    def n(self) -> int:
        """Rows."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """Features."""
        return int(self.X.shape[1])


def _statsmodels_data(module: str) -> pd.DataFrame:
    """``statsmodels.datasets.<module>.load_pandas().data``, statsmodels imported here (an optional extra)."""
    try:
        data = importlib.import_module(f"statsmodels.datasets.{module}")
    except ImportError as error:
        raise ImportError(f"the panel's statsmodels tables need statsmodels: {INSTALL_HINT}") from error
    return data.load_pandas().data


def _schema(categorical: dict[str, tuple[str, ...]], numerical: dict[str, tuple[float, float]]) -> TabularSchema:
    return TabularSchema(target=None, categorical=categorical, numerical=numerical)


def _code_texts(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """``frame`` with the integral numbers of ``columns`` written as integer texts (1.0 as "1"), as ``encode``
    reads them, but at once; any other value keeps its text (and ``encode`` refuses it as undeclared)."""
    frame = frame.copy()
    for column in columns:
        values = frame[column].to_numpy(dtype=float)
        integral = values == np.round(values)
        frame[column] = np.where(integral, np.round(values).astype(np.int64).astype(str), values.astype(str))
    return frame


def _statsmodels_table(name: str) -> tuple[np.ndarray, pd.DataFrame]:
    """The encoded features of a :data:`STATSMODELS_TABLES` table and its raw frame."""
    spec = STATSMODELS_TABLES[name]
    frame = _statsmodels_data(spec["module"])
    numerical = {column: bounds for column, (bounds, _) in spec["numerical"].items()}
    return encode(_code_texts(frame, spec["categorical"]), _schema(spec["categorical"], numerical)), frame


def modechoice_frame() -> pd.DataFrame:
    """One row per traveller: the four modes' level of service, income, party size, and ``chosen`` (mode 1..4)."""
    frame = _statsmodels_data("modechoice")
    wide = frame.pivot(index="individual", columns="mode", values=["ttme", "invc", "invt", "gc"])
    wide.columns = [f"{variable}_{MODES[int(mode)]}" for variable, mode in wide.columns]
    person = frame.groupby("individual")[["hinc", "psize"]].first()
    chosen = frame[frame["choice"] == 1].set_index("individual")["mode"]
    return wide.join(person).join(chosen.rename("chosen")).sort_index()


def _modechoice() -> tuple[np.ndarray, np.ndarray]:
    """The travellers' table encoded by its declared schema; label the chosen mode 1..4."""
    table = modechoice_frame()
    return encode(table, _schema({}, MODECHOICE_RANGES)), table["chosen"].to_numpy(dtype=np.int64)


def _sklearn_table(name: str) -> PanelTable:
    import sklearn.datasets  # here: only these loaders need it

    if name == "iris":
        bunch = sklearn.datasets.load_iris()
        frame = pd.DataFrame(bunch.data, columns=list(bunch.feature_names))
        return PanelTable(name, encode(frame, _schema({}, IRIS_RANGES)), bunch.target.astype(np.int64), "multiclass",
                          (0, 1, 2), None, "scikit-learn load_iris (Fisher 1936); bounds: Min/Max of the published "
                          "description (computed from the same records)")
    bunch = sklearn.datasets.load_diabetes(scaled=False)
    frame = pd.DataFrame(bunch.data, columns=list(bunch.feature_names))
    X = encode(_code_texts(frame, ["sex"]), _schema({"sex": _codes(1, 2)}, DIABETES_RANGES))
    return PanelTable(name, X, np.clip(bunch.target.astype(float), *DIABETES_TARGET), "regression", None,
                      DIABETES_TARGET, "scikit-learn load_diabetes(scaled=False) (Efron et al. 2004); bounds and the "
                      "target's [0, 400] declared for this benchmark (the description gives none)")


def load_panel_table(name: str, *, admin_rows: int = ADMIN_ROWS, seed: int = 0) -> PanelTable:
    """One table of the panel, encoded with its declared bounds (module docstring).

    Parameters
    ----------
    name : str
        A key of :data:`TABLES`.
    admin_rows : int, default 1,000,000
        Rows of the generated ``admin`` table (``--quick`` uses 20,000).
    seed : int, default 0
        Seed of the generated ``admin`` table.

    Returns
    -------
    PanelTable

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`TABLES`.
    ImportError
        For a statsmodels table when statsmodels is not installed, naming the extra to install.
    """
    if name not in TABLES:
        raise ValueError(f"name must be one of {TABLES}; got name={name!r}.")
    if name in ("iris", "diabetes"):
        return _sklearn_table(name)
    if name in ("breast_cancer", "wine", "digits"):
        X, y = load_bundled(name)
        classes = tuple(int(k) for k in np.unique(y))
        return PanelTable(name, X, y, "binary" if len(classes) == 2 else "multiclass", classes, None,
                          f"scikit-learn's bundled copy (dpconvex.datasets.load_bundled({name!r}), its bounds)")
    if name == "adult":
        X, y = load_adult()
        return PanelTable(name, X, y, "binary", (-1, 1), None, "UCI Adult, dpconvex.datasets.load_adult (ADULT_SCHEMA)")
    if name == "admin":
        X, y = load_admin(admin_rows, seed)
        return PanelTable(name, X, y, "binary", (-1, 1), None,
                          f"generated (panel_data.load_admin, seed {seed}, {admin_rows:,} rows; ADMIN_SCHEMA)")
    source = "statsmodels.datasets.{}; bounds from its documentation or declared (dpconvex_lab.panel_data)"
    if name == "modechoice":
        X, y = _modechoice()
        return PanelTable(name, X, y, "multiclass", (1, 2, 3, 4), None,
                          source.format("modechoice") + "; one row per traveller, label the chosen mode")
    X, frame = _statsmodels_table("randhie" if name.startswith("randhie") else name)
    if name == "fair":
        return PanelTable(name, X, np.where(frame["affairs"].to_numpy() > 0, 1, -1), "binary", (-1, 1), None,
                          source.format("fair") + "; label affairs > 0")
    if name == "anes96":
        return PanelTable(name, X, frame["PID"].to_numpy().astype(np.int64), "multiclass", tuple(range(7)), None,
                          source.format("anes96") + "; label PID (7 codes)")
    visits = frame["mdvis"].to_numpy(dtype=float)
    if name == "randhie_any":
        return PanelTable(name, X, np.where(visits > 0, 1, -1), "binary", (-1, 1), None,
                          source.format("randhie") + "; label mdvis > 0")
    return PanelTable(name, X, np.clip(visits, *RANDHIE_TARGET), "regression", None, RANDHIE_TARGET,
                      source.format("randhie") + "; target mdvis, declared [0, 52] (12 counts above clipped)")
