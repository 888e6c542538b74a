"""The UCI Adult (Census Income) data set, shipped with the package.

Becker, B. and Kohavi, R. (1996). *Adult* [Dataset]. UCI Machine Learning Repository.
https://doi.org/10.24432/C5XW20. Licensed CC BY 4.0; see ``data/README.md``.

48,842 records of the 1994 US Census (``adult.data``: 32,561 training rows, ``adult.test``:
16,281 test rows); the task is to predict whether income exceeds $50K. This is the "Adult"
data set of Chen, Lee and Kifer (2019), Table 1.
"""

from __future__ import annotations

import functools
import gzip
from importlib import resources

import numpy as np
import pandas as pd

from dpconvex.datasets.tabular import TabularSchema, feature_names, preprocess

__all__ = ["ADULT_SCHEMA", "ADULT_COLUMNS", "load_adult_raw", "load_adult"]

ADULT_COLUMNS: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)  # fmt: skip

_SUBSETS = ("all", "train", "test")

#: The declared schema of UCI Adult. Category sets in the order of adult.names; the missing-value
#: marker "?" is kept as a category of its own (last) in the three columns where it occurs. The
#: numeric bounds are the min/max over adult.data + adult.test, hard-coded here: this is a public
#: benchmark's schema, declared once, not read from the data at load time. A certificate covers
#: this fixed map, not the choice of its constants, which were read from these (public) records;
#: for private data, declare the bounds without looking at it (TabularSchema).
#:
#: :meta hide-value:
ADULT_SCHEMA = TabularSchema(
    target="income",
    positive_label=">50K",
    categorical={
        "workclass": (
            "Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
            "State-gov", "Without-pay", "Never-worked", "?",
        ),
        "education": (
            "Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
            "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
            "5th-6th", "Preschool",
        ),
        "marital-status": (
            "Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
            "Married-spouse-absent", "Married-AF-spouse",
        ),
        "occupation": (
            "Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
            "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
            "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
            "Armed-Forces", "?",
        ),
        "relationship": (
            "Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried",
        ),
        "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
        "sex": ("Female", "Male"),
        "native-country": (
            "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
            "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
            "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam",
            "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador",
            "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland",
            "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
            "Holand-Netherlands", "?",
        ),
    },
    numerical={
        "age": (17.0, 90.0),
        "fnlwgt": (12285.0, 1490400.0),
        "education-num": (1.0, 16.0),
        "capital-gain": (0.0, 99999.0),
        "capital-loss": (0.0, 4356.0),
        "hours-per-week": (1.0, 99.0),
    },
    data_dependent=False,
)  # fmt: skip


def _check_subset(subset: str) -> None:
    """Raise ValueError unless ``subset`` is one of ``_SUBSETS``."""
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {list(_SUBSETS)}, got subset={subset!r}")


def _read_file(name: str, skiprows: int) -> pd.DataFrame:
    """Parse one shipped gzip file into a frame with ``ADULT_COLUMNS``."""
    text_columns = {column: str for column in (*ADULT_SCHEMA.categorical, "income")}
    resource = resources.files("dpconvex.datasets").joinpath("data", name)
    with resource.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as handle:
        frame = pd.read_csv(
            handle,
            header=None,
            names=list(ADULT_COLUMNS),
            skiprows=skiprows,
            skipinitialspace=True,
            keep_default_na=False,
            dtype=text_columns,
        )
    for column in text_columns:
        frame[column] = frame[column].str.strip()
    frame["income"] = frame["income"].str.removesuffix(".")
    return frame


@functools.cache
def _raw(subset: str) -> pd.DataFrame:
    """Cached parse of one subset (callers must copy before handing it out)."""
    if subset == "train":
        return _read_file("adult.data.gz", skiprows=0)
    if subset == "test":
        # The first line of adult.test is a junk header ("|1x3 Cross validator").
        return _read_file("adult.test.gz", skiprows=1)
    return pd.concat([_raw("train"), _raw("test")], ignore_index=True)


@functools.cache
def _encoded(subset: str) -> tuple[np.ndarray, np.ndarray]:
    """Cached ``preprocess(_raw(subset), ADULT_SCHEMA)`` (callers must copy)."""
    return preprocess(_raw(subset), ADULT_SCHEMA)


def load_adult_raw(subset: str = "all") -> pd.DataFrame:
    """Load the UCI Adult data as a data frame, unencoded.

    Whitespace is stripped, missing values stay as the category ``"?"`` and the test labels'
    trailing ``'.'`` is removed, so ``income`` is ``">50K"`` or ``"<=50K"``.

    Parameters
    ----------
    subset : {"all", "train", "test"}, default "all"
        ``"train"`` is ``adult.data`` (32,561 rows), ``"test"`` is ``adult.test``
        (16,281 rows) and ``"all"`` is both, train first (48,842 rows).

    Returns
    -------
    pandas.DataFrame
        Columns ``ADULT_COLUMNS`` (age, workclass, fnlwgt, ..., native-country, income); a
        fresh copy on every call.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the three values.

    References
    ----------
    Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository, CC BY 4.0.
    https://doi.org/10.24432/C5XW20
    """
    _check_subset(subset)
    return _raw(subset).copy()


def load_adult(
    subset: str = "all", *, return_feature_names: bool = False
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, list[str]]:
    """Load the UCI Adult data, preprocessed as in Chen, Lee and Kifer (2019), Section 5.

    Encoded with the fixed, data-independent :data:`ADULT_SCHEMA` by
    :func:`~dpconvex.datasets.tabular.preprocess`: the six numerical columns are scaled to
    [0, 1] by their declared bounds, the eight categorical columns are one-hot encoded
    (``"?"`` is a category), and every row is scaled to unit L2 norm. ``income == ">50K"``
    is the positive class.

    Parameters
    ----------
    subset : {"all", "train", "test"}, default "all"
        As in :func:`load_adult_raw`.
    return_feature_names : bool, default False
        Also return the names of the columns of ``X``.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, 108)
        Unit-norm feature rows; a fresh copy on every call.
    y : numpy.ndarray of int64, shape (n,)
        Labels in {-1, +1}; +1 means income above $50K.
    names : list of str
        Only if ``return_feature_names``; see :func:`~dpconvex.datasets.tabular.feature_names`.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the three values.

    References
    ----------
    Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository, CC BY 4.0.
    https://doi.org/10.24432/C5XW20

    Chen, Lee and Kifer (2019). Renyi differentially private ERM for smooth objectives.
    AISTATS.
    """
    _check_subset(subset)
    X, y = _encoded(subset)
    if return_feature_names:
        return X.copy(), y.copy(), feature_names(ADULT_SCHEMA)
    return X.copy(), y.copy()
