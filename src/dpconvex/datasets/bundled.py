"""Three real data sets that ship with scikit-learn, encoded with public per-feature bounds.

Nothing is downloaded: :func:`sklearn.datasets.load_breast_cancer`, ``load_wine`` and
``load_digits`` read copies installed with scikit-learn.

* ``breast_cancer``: Breast Cancer Wisconsin (Diagnostic), Street, Wolberg and Mangasarian (1993);
  569 records, 30 numerical features, 2 classes (0 = malignant, 1 = benign).
* ``wine``: Wine recognition, Forina et al. (PARVUS, 1988); 178 records, 13 numerical features,
  3 classes (three cultivars).
* ``digits``: the test set of Optical Recognition of Handwritten Digits, Alpaydin and Kaynak (1998);
  1,797 records, 64 pixel counts, 10 classes.

Each record is mapped to a feature vector by the library's feature map
(:func:`~dpconvex.datasets.encoding.encode`) with a fixed features-only
:class:`~dpconvex.datasets.tabular.TabularSchema`: every feature is clipped to declared bounds,
scaled to [0, 1] by them, and the row is scaled to unit L2 norm.  The bounds are public:

* ``digits``: [0, 16] for every pixel, a fact of the data's definition (each pixel counts the
  "on" pixels of a 4×4 block of a 32×32 bitmap; the description says "integer pixels in the range
  0..16").
* ``breast_cancer`` and ``wine``: the Min and Max columns of the summary statistics in the data's
  published description (scikit-learn's ``DESCR``), transcribed below.  **Those ranges were
  computed from the same records**, as Adult's documented ranges were (Chen, Lee and Kifer 2019
  treat them as public; see :data:`~dpconvex.datasets.adult.ADULT_SCHEMA`): a certificate covers
  this fixed map, not the choice of its constants.  The description rounds them to its printed
  precision, so a few values lie just outside and are clipped to 0 or 1: 14 of the 17,070 values
  of ``breast_cancer`` (e.g. the smallest mean smoothness, 0.05263, below the printed 0.053) and 2
  of the 2,314 of ``wine`` (alcohol 14.83 above 14.8, colour intensity 1.28 below 1.3).  The
  loader does not repeat :func:`~dpconvex.datasets.encoding.encode`'s warning for these documented
  clips.

The label sets are declared too (``BundledDataset.classes``), to be passed as an estimator's
``classes=``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpconvex.datasets.encoding import encode
from dpconvex.datasets.tabular import TabularSchema
from dpconvex.exceptions import PrivacyLeakWarning

__all__ = ["BUNDLED", "BundledDataset", "load_bundled", "load_bundled_raw"]

#: Min and Max of each feature as printed in the description's summary statistics, in the order
#: of the description's table (the order of ``load_breast_cancer().feature_names``).
BREAST_CANCER_RANGES: dict[str, tuple[float, float]] = {
    "mean radius": (6.981, 28.11), "mean texture": (9.71, 39.28), "mean perimeter": (43.79, 188.5),
    "mean area": (143.5, 2501.0), "mean smoothness": (0.053, 0.163), "mean compactness": (0.019, 0.345),
    "mean concavity": (0.0, 0.427), "mean concave points": (0.0, 0.201), "mean symmetry": (0.106, 0.304),
    "mean fractal dimension": (0.05, 0.097),
    "radius error": (0.112, 2.873), "texture error": (0.36, 4.885), "perimeter error": (0.757, 21.98),
    "area error": (6.802, 542.2), "smoothness error": (0.002, 0.031), "compactness error": (0.002, 0.135),
    "concavity error": (0.0, 0.396), "concave points error": (0.0, 0.053), "symmetry error": (0.008, 0.079),
    "fractal dimension error": (0.001, 0.03),
    "worst radius": (7.93, 36.04), "worst texture": (12.02, 49.54), "worst perimeter": (50.41, 251.2),
    "worst area": (185.2, 4254.0), "worst smoothness": (0.071, 0.223), "worst compactness": (0.027, 1.058),
    "worst concavity": (0.0, 1.252), "worst concave points": (0.0, 0.291), "worst symmetry": (0.156, 0.664),
    "worst fractal dimension": (0.055, 0.208),
}  # fmt: skip

#: Min and Max of each feature as printed in the description's summary statistics (same order
#: as ``load_wine().feature_names``).
WINE_RANGES: dict[str, tuple[float, float]] = {
    "alcohol": (11.0, 14.8), "malic_acid": (0.74, 5.80), "ash": (1.36, 3.23), "alcalinity_of_ash": (10.6, 30.0),
    "magnesium": (70.0, 162.0), "total_phenols": (0.98, 3.88), "flavanoids": (0.34, 5.08),
    "nonflavanoid_phenols": (0.13, 0.66), "proanthocyanins": (0.41, 3.58), "color_intensity": (1.3, 13.0),
    "hue": (0.48, 1.71), "od280/od315_of_diluted_wines": (1.27, 4.00), "proline": (278.0, 1680.0),
}  # fmt: skip

#: The 8×8 pixel counts of ``load_digits``, each in [0, 16] by the data's definition.
DIGITS_RANGES: dict[str, tuple[float, float]] = {f"pixel_{r}_{c}": (0.0, 16.0) for r in range(8) for c in range(8)}


@dataclass(frozen=True)
class BundledDataset:
    """A data set shipped with scikit-learn and the public constants that encode it.

    Attributes
    ----------
    name : str
        The key of :data:`BUNDLED` (and of ``dpconvex bench <name>``).
    title : str
        Its name in reports.
    loader : str
        The ``sklearn.datasets`` function that reads the installed copy.
    schema : TabularSchema
        Features only (``target=None``): the declared bounds of every column.
    classes : tuple of int
        The declared label set 0, …, K−1 (pass it as ``classes=``).
    class_names : tuple of str
        What each label means.
    bounds_source : str
        Where the bounds come from, for reports.
    rounding_clips : int
        How many values of the data lie outside the bounds only because the published ranges are
        rounded (module docstring); :func:`load_bundled` clips them without a warning.
    """

    name: str
    title: str
    loader: str
    schema: TabularSchema
    classes: tuple[int, ...]
    class_names: tuple[str, ...]
    bounds_source: str
    rounding_clips: int = 0


def _features_only(ranges: dict[str, tuple[float, float]]) -> TabularSchema:
    return TabularSchema(target=None, positive_label=None, categorical={}, numerical=ranges)


#: The bundled data sets by name.
BUNDLED: dict[str, BundledDataset] = {
    "breast_cancer": BundledDataset(
        "breast_cancer", "Breast cancer (Wisconsin diagnostic)", "load_breast_cancer",
        _features_only(BREAST_CANCER_RANGES), (0, 1), ("malignant", "benign"),
        "Min/Max of the published description (computed from the same records)", rounding_clips=14),
    "wine": BundledDataset(
        "wine", "Wine recognition", "load_wine", _features_only(WINE_RANGES), (0, 1, 2),
        ("class_0", "class_1", "class_2"), "Min/Max of the published description (computed from the same records)",
        rounding_clips=2),
    "digits": BundledDataset(
        "digits", "Handwritten digits (8×8)", "load_digits", _features_only(DIGITS_RANGES), tuple(range(10)),
        tuple(str(k) for k in range(10)), "[0, 16] per pixel (the data's definition)"),
}


def _spec(name: str) -> BundledDataset:
    if name not in BUNDLED:
        raise ValueError(f"name must be one of {sorted(BUNDLED)}; got name={name!r}.")
    return BUNDLED[name]


def load_bundled_raw(name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The records of a bundled data set as scikit-learn ships them.

    Parameters
    ----------
    name : {"breast_cancer", "wine", "digits"}

    Returns
    -------
    features : pandas.DataFrame
        One column per feature, named as in the data set's ``feature_names`` (the columns of
        ``BUNDLED[name].schema``), unscaled.
    labels : numpy.ndarray of int, shape (n,)
        Class indices in ``BUNDLED[name].classes``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`BUNDLED`.
    """
    import sklearn.datasets  # here: only the loaders need it (≈ 70 ms of import time)

    spec = _spec(name)
    bunch = getattr(sklearn.datasets, spec.loader)()
    features = pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=list(bunch.feature_names))
    return features, np.asarray(bunch.target, dtype=np.int64)


def load_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A bundled data set encoded with its public bounds: rows of unit L2 norm, labels 0..K−1.

    Every feature is clipped to its declared bounds and scaled to [0, 1] by them, then each row
    is scaled to unit L2 norm (:func:`~dpconvex.datasets.encoding.encode` with
    ``BUNDLED[name].schema``).  A row depends on its own record and the declared bounds only.
    The values clipped because the published ranges are rounded (module docstring) are not
    warned about again; any other clipping would be.

    Parameters
    ----------
    name : {"breast_cancer", "wine", "digits"}

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        Encoded rows, ‖x‖₂ = 1 (no record of these data sets is all zeros after scaling).
    y : numpy.ndarray of int, shape (n,)
        Class indices in ``BUNDLED[name].classes``.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`BUNDLED`.
    """
    spec = _spec(name)
    features, labels = load_bundled_raw(name)
    with warnings.catch_warnings():
        if spec.rounding_clips:
            warnings.filterwarnings("ignore", category=PrivacyLeakWarning,
                                    message=f"{spec.rounding_clips} numerical values lay outside their declared")
        return encode(features, spec.schema), labels
