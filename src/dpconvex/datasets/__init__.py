"""Data sets and schema-driven preprocessing for private convex learning.

:func:`load_adult` ships the UCI Adult data (Becker & Kohavi, 1996,
https://doi.org/10.24432/C5XW20, CC BY 4.0) preprocessed with a fixed schema;
:func:`load_bundled` encodes three data sets installed with scikit-learn (breast cancer, wine,
digits) with public bounds; :class:`TabularSchema`, :func:`read_csv` and :func:`preprocess` do
the same for the user's own tabular data.
"""

from dpconvex.datasets.adult import ADULT_SCHEMA, load_adult, load_adult_raw
from dpconvex.datasets.bundled import BUNDLED, BundledDataset, load_bundled, load_bundled_raw
from dpconvex.datasets.csv_reader import read_csv
from dpconvex.datasets.tabular import TabularSchema, feature_names, preprocess

__all__ = [
    "ADULT_SCHEMA",
    "BUNDLED",
    "BundledDataset",
    "TabularSchema",
    "feature_names",
    "load_adult",
    "load_adult_raw",
    "load_bundled",
    "load_bundled_raw",
    "preprocess",
    "read_csv",
]
