"""Training on Dask collections with a real LocalCluster (2 worker processes, 1 thread each).

* A seeded fit on a dask array equals the in-memory fit: the noise and the batches are drawn on the
  client from the same generator, and the gradient sums differ only by floating-point reassociation
  (partial sums per block, added in block order): rtol 1e-9 after hundreds of steps.  The
  certificate depends only on n, d and the declarations, so it is identical (compared as dicts).
* Poisson batches (drawn on the client, as in memory) split across blocks: counted by the data access
  itself, with one-hot block features.
* A worker killed mid-fit: the task is retried and the model is the in-memory one.
* An in-memory-only method handed a Dask collection: a ValueError naming the methods that can.
"""

from __future__ import annotations

import operator
import os
import sys

import cloudpickle
import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.pipeline import make_pipeline

from dpconvex.data.dask_data import DaskData
from dpconvex.datasets import TabularSchema
from dpconvex.estimators.linear_model import (
    PrivateHuberSVC,
    PrivateLADRegressor,
    PrivateLinearSVC,
    PrivateLogisticRegression,
    PrivateRidge,
)
from dpconvex.estimators.preprocessing import PublicSchemaTransformer
from dpconvex.mechanisms import auto, noisy_gd, noisy_sgd, rsgd_ar
from dpconvex.mechanisms._batches import _poisson_batches
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.losses import HingeLoss, LogisticLoss, SquaredLoss
from test_data_dask import ONE_RETRY, local_cluster, wait_for_workers

N, D, CHUNK = 2400, 5, 350  # 7 blocks (6 of 350 rows, one of 300)
RTOL, ATOL = 1e-9, 1e-12
DECLARATIONS = dict(loss=LogisticLoss(), epsilon=1.0, delta=1e-6)
# Dask cluster; the 40 clipped rows
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::dpconvex.exceptions.PrivacyLeakWarning")]


@pytest.fixture(scope="module")
def client():
    """The default client while this module runs (the estimators use the current client)."""
    with local_cluster() as client, client.as_current():
        yield client


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D)) / 4.0
    X[:40] *= 6.0  # rows above data_norm = 1: clipped with a warning, in memory and on the cluster alike
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(N) > 0, 1.0, -1.0)
    return X, y


def on_cluster(X, y=None):
    Xd = da.from_array(X, chunks=(CHUNK, X.shape[1]))
    return Xd if y is None else (Xd, da.from_array(y, chunks=CHUNK))


# A cheap configuration (a few full-gradient steps) for the tests whose point is not the default method's schedule:
# each step is a round trip to the cluster, and method="auto" takes hundreds of them.
CHEAP = dict(method="noisy_gd", iterations=20)


def assert_same_release(in_memory, on_dask):
    np.testing.assert_allclose(on_dask.coef, in_memory.coef, rtol=RTOL, atol=ATOL)
    assert on_dask.certificate.to_dict() == in_memory.certificate.to_dict()


RUNS = {
    "noisy_gd": (noisy_gd, dict(l2_regularization=1e-2, iterations=40)),
    "noisy_sgd poisson": (noisy_sgd, dict(l2_regularization=1e-2, epochs=2)),
    "noisy_sgd shuffled": (noisy_sgd, dict(l2_regularization=1e-2, epochs=2, batching="shuffled")),
    "noisy_sgd cyclic": (noisy_sgd, dict(l2_regularization=1e-2, epochs=2, batching="cyclic")),
    "auto": (auto, {}),
}


@pytest.mark.parametrize("trainer, options", RUNS.values(), ids=RUNS.keys())
def test_seeded_fit_on_a_dask_array_equals_the_in_memory_fit(client, arrays, trainer, options):
    X, y = arrays
    expected = trainer(X, y, **DECLARATIONS, **options, random_state=5)
    assert_same_release(expected, trainer(*on_cluster(X, y), **DECLARATIONS, **options, random_state=5))


ESTIMATORS = {
    "logistic, intercept": (PrivateLogisticRegression(classes=["no", "yes"], fit_intercept=True, random_state=3),
                            "text"),
    "multinomial": (PrivateLogisticRegression(classes=[0, 1, 2], random_state=3), "three"),
    "huber svc, noisy_gd": (PrivateHuberSVC(classes=["no", "yes"], method="noisy_gd", l2_regularization=1e-2,
                                            iterations=30, random_state=3), "text"),
    "ridge": (PrivateRidge(label_bound=1.0, random_state=3), "real"),
}


def targets(X, kind):
    return {"text": np.where(X[:, 0] > 0, "yes", "no"), "three": np.argmax(X[:, :3], axis=1),
            "real": np.clip(X[:, 0] - X[:, 1], -2.0, 2.0)}[kind]  # some targets above label_bound = 1


@pytest.mark.parametrize("estimator, kind", ESTIMATORS.values(), ids=ESTIMATORS.keys())
def test_estimator_fit_on_dask_equals_the_in_memory_fit(client, arrays, estimator, kind):
    X, y = arrays[0], targets(arrays[0], kind)
    expected = estimator.fit(X, y)
    coef, intercept, report = expected.coef_.copy(), np.copy(expected.intercept_), expected.privacy_report_.to_dict()
    fitted = estimator.fit(*on_cluster(X, y))
    np.testing.assert_allclose(fitted.coef_, coef, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(fitted.intercept_, intercept, rtol=RTOL, atol=ATOL)
    assert fitted.privacy_report_.to_dict() == report
    assert fitted.n_features_in_ == D and np.isfinite(fitted.privacy_report_.epsilon)


def test_an_out_of_core_estimator_fit_equals_the_in_memory_fit(client, arrays, monkeypatch):
    """persist=False (the cluster "lacks" the memory): every call reads the blocks from their source again."""
    import dpconvex.data.dask_data as module

    X, y = arrays
    monkeypatch.setattr(module, "fits_in_cluster_memory", lambda client, nbytes: False)
    built, from_array = [], DaskData.from_array.__func__

    def recorded(cls, *args, **kwargs):
        built.append(from_array(cls, *args, **kwargs))
        return built[-1]

    monkeypatch.setattr(DaskData, "from_array", classmethod(recorded))
    # Poisson batches: each step reads a few rows per block (~34 of 350; 10 steps, not the default ⌈√n⌉-row batches'
    # 49 steps: the test checks the out-of-core reads, not the default batch size)
    estimator = PrivateLogisticRegression(classes=[-1, 1], fit_intercept=True, method="noisy_sgd", epochs=1,
                                          batch_size=240, random_state=3)
    expected = estimator.fit(X, y)
    coef, intercept, report = expected.coef_.copy(), expected.intercept_, expected.privacy_report_.to_dict()
    fitted = estimator.fit(*on_cluster(X, y))
    assert len(built) == 1 and not built[0].persisted
    np.testing.assert_allclose(fitted.coef_, coef, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(fitted.intercept_, intercept, rtol=RTOL, atol=ATOL)
    assert fitted.privacy_report_.to_dict() == report


def test_a_regressors_dask_targets_never_reach_the_client(client, arrays, monkeypatch):
    """``np.asarray`` of a dask array (``Array.__array__``) gathers it on the client: it must not happen in fit."""
    X, y = arrays[0], targets(arrays[0], "real")
    expected = PrivateRidge(**CHEAP, random_state=3).fit(X, y).coef_  # checks the targets' path, not method="auto"

    def gathered(self, *args, **kwargs):
        raise AssertionError("a dask array was gathered into the client's memory")

    monkeypatch.setattr(da.Array, "__array__", gathered)
    fitted = PrivateRidge(**CHEAP, random_state=3).fit(*on_cluster(X, y))
    np.testing.assert_allclose(fitted.coef_, expected, rtol=RTOL, atol=ATOL)


def test_a_regressors_integer_and_object_targets_are_numbers_on_the_cluster(client, arrays):
    """Targets of integer or object dtype train as their float values, as in memory."""
    X = arrays[0]
    numbers = np.rint(2 * targets(X, "real")).astype(int)  # integers in [-4, 4], clipped to label_bound = 1
    for y in (numbers, (numbers / 2).astype(object)):  # CHEAP: checks the targets' dtype, not method="auto"
        expected = PrivateRidge(**CHEAP, random_state=3).fit(X, y).coef_
        fitted = PrivateRidge(**CHEAP, random_state=3).fit(*on_cluster(X, y))
        np.testing.assert_allclose(fitted.coef_, expected, rtol=RTOL, atol=ATOL)


def test_a_regressors_non_numeric_dask_targets_are_refused_naming_block_and_row(client, arrays):
    X, y = arrays[0], targets(arrays[0], "real").astype(object)
    y[1000] = "n/a"  # block 2 (rows 700-1049)
    with pytest.raises(ValueError, match=r"y must hold numbers .* block 2 holds 'n/a' at row 1000 \(row 300 of the "
                                         r"block\)"):
        PrivateRidge().fit(*on_cluster(X, y))
    with pytest.raises(ValueError, match=r"y must hold numbers .* dtype datetime64"):
        PrivateRidge().fit(on_cluster(X), da.from_array(np.arange(N).astype("datetime64[s]"), chunks=CHUNK))


def test_dask_dataframe_keeps_feature_names_and_equals_the_pandas_fit(client, arrays):
    X, y = arrays
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)])
    labels = pd.Series(np.where(y > 0, "yes", "no"))
    estimator = PrivateLogisticRegression(classes=["no", "yes"], **CHEAP, random_state=4)  # checks the names
    expected = estimator.fit(frame, labels).coef_.copy()
    fitted = estimator.fit(dd.from_pandas(frame, npartitions=5), dd.from_pandas(labels, npartitions=5))
    np.testing.assert_allclose(fitted.coef_, expected, rtol=RTOL, atol=ATOL)
    assert list(fitted.feature_names_in_) == list(frame.columns)


def test_columns_of_a_parquet_table_read_in_many_files_equal_the_pandas_fit(client, arrays, tmp_path):
    """A narrow selection (3 of D + 1 columns, or the label alone) of a Parquet table in 16 files: dask's
    optimiser fuses such reads into fewer partitions, and ``to_dask_array(lengths=True)`` counted them on
    one fusion and checked them against another (dask issue 12411: ValueError "8 != 16"); the fit now
    takes one partition per block and equals the pandas fit on the same columns."""
    X, y = arrays
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)]).assign(label=y)
    for index, rows in enumerate(np.array_split(np.arange(N), 16)):
        frame.iloc[rows].to_parquet(tmp_path / f"part-{index:02d}.parquet")
    table, columns = dd.read_parquet(tmp_path), ["f0", "f2", "f3"]
    estimator = PrivateLogisticRegression(classes=[-1, 1], method="noisy_gd", iterations=20, random_state=5)
    expected = estimator.fit(frame[columns], frame["label"])
    expected_coef, expected_report = expected.coef_.copy(), expected.privacy_report_.to_dict()
    fitted = estimator.fit(table[columns], table["label"])
    np.testing.assert_allclose(fitted.coef_, expected_coef, rtol=RTOL, atol=ATOL)
    assert fitted.privacy_report_.to_dict() == expected_report


def test_a_missing_value_in_a_dask_dataframe_is_named_by_its_column_as_in_memory(client, arrays):
    X, y = arrays
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)])
    frame.loc[1000, "f2"] = np.nan  # block 2 of 5 partitions of 480 rows: rows 960-1439
    with pytest.raises(ValueError, match=r"block 2 has one at row 1000 \(row 40 of the block\), column 'f2'"):
        PrivateLogisticRegression(classes=[-1, 1]).fit(dd.from_pandas(frame, npartitions=5),
                                                        dd.from_pandas(pd.Series(y), npartitions=5))


def test_x_of_unknown_block_lengths_gets_the_remedy_before_y_is_compared(client, arrays):
    X, y = on_cluster(*arrays)
    kept = X[:, 0] > -10  # every row, but dask cannot know the blocks' lengths
    with pytest.raises(ValueError, match=r"unknown row-chunk sizes .* X\.compute_chunk_sizes\(\) first"):
        PrivateLogisticRegression(classes=[-1, 1]).fit(X[kept], y[kept])


SCHEMA = TabularSchema(target=None, positive_label=None, categorical={"colour": ("red", "blue")},
                       numerical={"age": (0.0, 100.0)}, other_slot=True, numeric_fill={"age": 0.0})


def test_public_schema_pipeline_encodes_a_dask_dataframe_partition_by_partition(client):
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"colour": rng.choice(["red", "blue", "green"], 900),
                          "age": np.where(rng.random(900) < 0.1, np.nan, rng.uniform(18, 90, 900))})
    labels = np.where((frame["colour"] == "red") | (frame["age"] > 60), "yes", "no")
    # CHEAP: the test checks the encoding of the partitions, not method="auto"'s schedule
    pipeline = make_pipeline(PublicSchemaTransformer(SCHEMA),
                             PrivateLogisticRegression(classes=["no", "yes"], **CHEAP, random_state=7))
    expected = pipeline.fit(frame, labels)[-1].coef_.copy()
    fitted = pipeline.fit(dd.from_pandas(frame, npartitions=3), da.from_array(labels, chunks=300))[-1]
    np.testing.assert_allclose(fitted.coef_, expected, rtol=RTOL, atol=ATOL)


def test_a_data_dependent_schema_refuses_a_dask_dataframe(client):
    frame = pd.DataFrame({"colour": ["red", "blue"] * 10, "age": np.arange(20.0)})
    transformer = PublicSchemaTransformer.from_dataframe(frame, allow_data_dependent=True)
    with pytest.raises(ValueError, match="data-dependent schema cannot encode a dask DataFrame"):
        transformer.fit(frame).transform(dd.from_pandas(frame, npartitions=2))


def test_labels_read_from_a_dask_y_void_the_certificate_as_in_memory(client, arrays):
    X, y = arrays
    with pytest.warns(Warning, match="classes=None read the label set"):
        fitted = PrivateLogisticRegression(**CHEAP, random_state=1).fit(*on_cluster(X, y))  # checks the certificate
    assert fitted.privacy_report_.epsilon == np.inf


TARGET_TYPES = {"continuous": lambda y: np.where(y > 0, 0.5, 1.5),  # two values, but not class labels
                "missing": lambda y: np.where(np.arange(N) == 1000, np.nan, y)}


@pytest.mark.parametrize("change", TARGET_TYPES.values(), ids=TARGET_TYPES.keys())
def test_labels_read_from_a_dask_y_get_the_in_memory_target_check(client, arrays, change):
    X, y = arrays[0], change(arrays[1])
    with pytest.raises(ValueError) as in_memory:
        PrivateLogisticRegression().fit(X, y)
    with pytest.raises(ValueError) as on_dask:
        PrivateLogisticRegression().fit(*on_cluster(X, y))
    assert str(on_dask.value) == str(in_memory.value)


@pytest.mark.parametrize("value", [np.nan, -np.inf])
def test_data_norm_from_data_names_a_nonfinite_value_as_the_validation_does(client, arrays, value):
    X, y = arrays[0].copy(), arrays[1]
    X[1000, 2] = value  # block 2 (rows 700-1049)
    message = (r"X must contain only finite values \(no NaN or inf\); "
               r"block 2 has one at row 1000 \(row 300 of the block\), column 2\.$")
    with pytest.raises(ValueError, match=message):
        PrivateLogisticRegression(classes=[-1, 1]).fit(*on_cluster(X, y))
    with pytest.raises(ValueError, match=message):
        PrivateLogisticRegression(classes=[-1, 1], data_norm="from_data").fit(*on_cluster(X, y))


def test_data_norm_from_data_is_the_largest_row_norm_as_in_memory(client, arrays):
    X, y = arrays
    # CHEAP: the test checks the norm bound read from the data, not method="auto"'s schedule
    options = dict(classes=[-1, 1], data_norm="from_data", **CHEAP, random_state=2)
    with pytest.warns(Warning, match="data_norm='from_data' read the norm bound"):
        expected = PrivateLogisticRegression(**options).fit(X, y)
        fitted = PrivateLogisticRegression(**options).fit(*on_cluster(X, y))
    assert fitted.privacy_report_.to_dict() == expected.privacy_report_.to_dict()
    np.testing.assert_allclose(fitted.coef_, expected.coef_, rtol=RTOL, atol=ATOL)


def test_labels_outside_the_declared_classes_are_named(client, arrays):
    X, y = arrays
    with pytest.raises(ValueError, match=r"y holds labels outside classes=\[-1, 0\]: \[1\.0\]"):
        PrivateLogisticRegression(classes=[-1, 0]).fit(*on_cluster(X, y))


# ---------------------------------------------------------------------------- the clear refusals


def test_an_in_memory_only_method_names_the_methods_that_can_train_on_dask(client, arrays):
    X, y = arrays
    message = (r"method='rsgd_ar' reads its data in memory .* "
               r"the methods that can are \['noisy_gd', 'noisy_sgd', 'auto'\]")
    with pytest.raises(ValueError, match=message):
        PrivateLogisticRegression(classes=[-1, 1], method="rsgd_ar").fit(*on_cluster(X, y))
    with pytest.raises(ValueError, match=message):
        rsgd_ar(*on_cluster(X, y), **DECLARATIONS, l2_regularization=1e-2)


def test_auto_with_a_non_smooth_loss_on_dask_names_the_methods(client, arrays):
    X, y = arrays
    with pytest.raises(ValueError, match=r"method='sco_noisy_sgd' reads its data in memory"):
        auto(*on_cluster(X, y), loss=HingeLoss(), epsilon=1.0, delta=1e-6)


def unread(what: str, shape: tuple[int, ...]):
    """A dask array whose every read raises ``KeyError(what)``: a refusal that comes first leaves it unread."""
    return da.from_delayed(dask.delayed(operator.getitem)({}, what), shape=shape, dtype=float)


def unread_frame():
    """A dask DataFrame (unknown partition lengths) whose every read raises ``KeyError``."""
    meta = pd.DataFrame({f"f{i}": np.empty(0) for i in range(D)})
    return dd.from_delayed([dask.delayed(operator.getitem)({}, "the frame was read")], meta=meta, verify_meta=False)


IN_MEMORY_ONLY = r"method='{}' reads its data in memory \(NumPy\) only and cannot train on a dask collection"
REFUSED_UNREAD = {
    "rsgd_ar": (lambda X, y: rsgd_ar(X, y, **DECLARATIONS, l2_regularization=1e-2), "rsgd_ar"),
    "auto, hinge loss": (lambda X, y: auto(X, y, loss=HingeLoss(), epsilon=1.0, delta=1e-6), "sco_noisy_sgd"),
    "estimator, rsgd_ar": (lambda X, y: PrivateLogisticRegression(method="rsgd_ar").fit(X, y), "rsgd_ar"),
    "estimator, from_data": (lambda X, y: PrivateLogisticRegression(method="pnsgd", data_norm="from_data",
                                                                    classes=[-1, 1]).fit(X, y), "pnsgd"),
    "linear svc, auto": (lambda X, y: PrivateLinearSVC().fit(X, y), "sco_noisy_sgd"),
    "lad, auto": (lambda X, y: PrivateLADRegressor().fit(X, y), "sco_noisy_sgd"),
}


@pytest.mark.parametrize("train, method", REFUSED_UNREAD.values(), ids=REFUSED_UNREAD.keys())
def test_an_in_memory_only_method_is_refused_before_the_data_are_read(client, train, method):
    with pytest.raises(ValueError, match=IN_MEMORY_ONLY.format(method)):
        train(unread("X was read", (N, D)), unread("y was read", (N,)))


def test_an_estimator_refuses_an_in_memory_only_method_before_reading_a_dataframe(client):
    with pytest.raises(ValueError, match=IN_MEMORY_ONLY.format("outpert_gd")):
        PrivateLogisticRegression(method="outpert_gd").fit(unread_frame(), unread("y was read", (N,)))


def test_a_daskdata_declared_below_its_validated_bound_is_refused(client, arrays):
    X, y = arrays
    data = DaskData.from_array(on_cluster(X), y, data_norm=2.0, client=client)
    with pytest.raises(ValueError, match=r"data_norm=1\.0 is below the bound the DaskData's rows were validated"):
        Problem.from_arrays(data, None, loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0,
                            data_norm=1.0)


def test_labels_given_again_with_a_daskdata_are_refused_naming_y(client, arrays):
    X, y = arrays
    data = DaskData.from_array(on_cluster(X), y, data_norm=2.0, client=client)
    with pytest.raises(ValueError, match="y must be None with a DaskData"):
        Problem.from_arrays(data, y, loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0,
                            data_norm=2.0)


def test_a_daskdata_clipped_under_strict_false_is_refused_by_strict_true(client, arrays):
    """Clipped rows are not the refusal strict=True asks for; rows validated strictly meet strict=False."""
    X, y = arrays
    clipped = DaskData.from_array(on_cluster(X), y, data_norm=1.0, client=client)
    keywords = dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0, data_norm=6.0)
    with pytest.raises(ValueError, match="strict=True, but the DaskData was validated with strict=False"):
        Problem.from_arrays(clipped, None, **keywords, strict=True)
    checked = DaskData.from_array(on_cluster(X), y, data_norm=6.0, strict=True, client=client)  # no row above 6
    assert Problem.from_arrays(checked, None, **keywords, strict=False).data is checked
    assert Problem.from_arrays(checked, None, **keywords, strict=True).data is checked


# ---------------------------------------------------------------------- Poisson batches across blocks


def test_poisson_batches_split_across_blocks_keep_the_binomial_law_in_every_block(client):
    """The rows each block sums over T steps are Binomial(T·n_b, q); each step's total is Binomial(n, q).

    The memberships are not drawn per block: as in a fit, they are drawn on the client from one
    generator by the mechanism's own ``_poisson_batches`` (global row indices), and DaskData splits
    each batch by block.  The test checks that split against the law of the draw: no row lost,
    duplicated or moved to another block.  Features are the one-hot block index, targets −1: the
    squared loss's gradient at w = 0 is −y·x = x, so each gradient sum counts the batch's rows per
    block, as the blocks sum them.  Two-sided z-tests per block and a chi-square test of the step
    sizes' dispersion, each at level 1e-5 (Bonferroni over 8 tests: false-failure rate < 1e-4).
    """
    n, q, steps = 2400, 0.02, 400
    sizes = [350] * 6 + [300]
    onehot = np.repeat(np.eye(len(sizes)), sizes, axis=0)
    data = DaskData.from_array(da.from_array(onehot, chunks=(tuple(sizes), len(sizes))), -np.ones(n),
                               data_norm=1.0, client=client)
    zero = np.zeros(len(sizes))
    counts = np.array([data.gradient_sum(SquaredLoss(), zero, None, batch)
                       for batch in _poisson_batches(n, q, steps, np.random.default_rng(8))])
    per_block = counts.sum(axis=0)
    expected = steps * np.array(sizes) * q
    z = (per_block - expected) / np.sqrt(expected * (1 - q))
    assert np.all(np.abs(z) < stats.norm.isf(1e-5 / 2)), z
    totals = counts.sum(axis=1)
    dispersion = np.sum((totals - n * q) ** 2) / (n * q * (1 - q))  # ~ chi-square(steps)
    assert stats.chi2.sf(dispersion, steps) > 1e-5 and stats.chi2.cdf(dispersion, steps) > 1e-5


# ------------------------------------------------------------------------------------ worker loss


class KillsItsWorkerMidFit(LogisticLoss):
    """A logistic loss whose first gradient sum away from θ = 0 (a later step of the fit) kills its worker once."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def gradient_sum(self, w, X, y, clip_norm=None, row_norms=None):
        if np.any(w != 0) and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(1)
        return super().gradient_sum(w, X, y, clip_norm, row_norms)


def test_a_worker_killed_mid_fit_is_recovered_to_the_in_memory_model(arrays, tmp_path):
    """Dask retries the task on the surviving or restarted worker (the blocks are recomputed from the
    graph); the fit returns the in-memory model, or would raise RuntimeError (DaskData's checks)."""
    X, y = arrays
    marker = tmp_path / "killed"
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with local_cluster(**ONE_RETRY) as fragile, fragile.as_current():
            options = dict(l2_regularization=1e-2, iterations=25, delta=1e-6, epsilon=1.0, random_state=9)
            fitted = noisy_gd(*on_cluster(X, y), loss=KillsItsWorkerMidFit(str(marker)), **options)
            wait_for_workers(fragile)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert marker.exists()  # a worker did die during the fit
    assert_same_release(noisy_gd(X, y, loss=LogisticLoss(), **options), fitted)
