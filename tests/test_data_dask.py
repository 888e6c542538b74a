"""DaskData on a real LocalCluster (2 worker processes, 1 thread each): sums against the in-memory
NumPy computation, the blockwise checks, and worker loss.

The reference of every sum is ``loss.gradient_sum(w, X[rows], y[rows], clip_norm, row_norms[rows])``
on the whole in-memory array (the data-access contract); DaskData computes it block by block on
the workers and adds the partial sums, so the two agree up to floating-point reassociation:
rtol 1e-12 on sums of at most 1000 terms of size ≤ ~3 (errors ~1e-13 absolute), atol 1e-11.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import warnings

import cloudpickle
import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

from dpconvex.data.dask_data import DaskData
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.objectives.losses import HuberizedHingeLoss, LogisticLoss, SquaredLoss, row_norms
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss

pytestmark = pytest.mark.slow  # LocalClusters of worker processes

N, D, CHUNK, K = 1000, 6, 137, 3  # 8 blocks (7 of 137 rows, one of 41)
DATA_NORM = 4.0                    # above every row norm of the main data (no clipping there)
RTOL, ATOL = 1e-12, 1e-11


@contextlib.contextmanager
def local_cluster(**config):
    """A LocalCluster of 2 worker processes x 1 thread and its client, closed on exit."""
    with dask.config.set(config), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def client():
    with local_cluster() as client:
        yield client


#: One retry per task: a task that kills every worker it runs on is given up after two workers.
ONE_RETRY = {"distributed.scheduler.allowed-failures": 1}


@pytest.fixture(scope="module")
def losses_by_value():
    """The losses defined in this module travel to the workers by value (they cannot import tests/)."""
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def fragile(losses_by_value):
    """A second cluster for the tests that kill workers, so that no other test's blocks are lost with them."""
    with local_cluster(**ONE_RETRY) as client:
        yield client


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    X = 0.5 * rng.standard_normal((N, D))  # row norms up to ~2.4
    labels = {"binary": np.where(rng.random(N) < 0.5, -1.0, 1.0), "classes": rng.integers(0, K, N).astype(float)}
    return X, labels


@pytest.fixture(scope="module")
def stored(client, arrays):
    X, labels = arrays
    return {kind: DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), y, data_norm=DATA_NORM, client=client)
            for kind, y in labels.items()}


LOSSES = {"logistic": (LogisticLoss(), "binary"), "huber": (HuberizedHingeLoss(0.5), "binary"),
          "multinomial": (MultinomialLogisticLoss(K), "classes"),
          "one-vs-rest": (OneVsRestLoss(HuberizedHingeLoss(0.5), K), "classes")}
INDICES = np.sort(np.random.default_rng(1).choice(N, 120, replace=False)).astype(np.int64)
ROWS = {"all": None, "slice across blocks": slice(50, 900), "slice in one block": slice(140, 170),
        "indices": INDICES, "indices in one block": np.array([0, 5, 136], dtype=np.int64),
        "empty": np.array([], dtype=np.int64)}


def reference(loss, w, X, y, clip_norm, rows):
    rows = slice(None) if rows is None else rows
    return loss.gradient_sum(w, X[rows], y[rows], clip_norm, row_norms(X)[rows])


def parameter(loss, seed=2):
    return 0.5 * np.random.default_rng(seed).standard_normal(loss.parameter_dimension(D))


def kill_a_worker_holding_data(client) -> None:
    """SIGKILL the worker holding the most keys (a child of this test's nanny, which starts a new one) and
    wait until the scheduler has replaced it.  The cluster is idle, so no running task dies with it."""
    held = client.has_what()
    victim = max(held, key=lambda address: len(held[address]))
    assert held[victim], "no worker holds any block"
    os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
    wait_for_workers(client, lost=victim)


def wait_for_workers(client, lost: str = "", timeout: float = 60.0) -> None:
    """Block until worker ``lost`` has left the scheduler and a worker is up (the data is recomputed there)."""
    deadline = time.monotonic() + timeout
    while True:
        workers = client.scheduler_info()["workers"]
        if lost not in workers and workers:
            return
        assert time.monotonic() < deadline, f"the cluster did not replace its workers in {timeout} s"
        time.sleep(0.2)


def separate_data(client, seed: int, **options):
    """Data of its own (distinct task keys), its DaskData in 5 blocks, and the in-memory arrays."""
    rng = np.random.default_rng(seed)
    X, y = 0.5 * rng.standard_normal((N, D)), np.where(rng.random(N) < 0.5, -1.0, 1.0)
    data = DaskData.from_array(da.from_array(X, chunks=(200, D)), y, data_norm=DATA_NORM, client=client, **options)
    return data, X, y


# ------------------------------------------------------------------------------------ sums


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
@pytest.mark.parametrize("clip_norm", [None, 0.3], ids=["unclipped", "clipped"])
@pytest.mark.parametrize("name", LOSSES)
def test_gradient_sum_equals_numpy(stored, arrays, name, clip_norm, rows):
    loss, kind = LOSSES[name]
    X, labels = arrays
    w = parameter(loss)
    got = stored[kind].gradient_sum(loss, w, clip_norm, rows)
    np.testing.assert_allclose(got, reference(loss, w, X, labels[kind], clip_norm, rows), rtol=RTOL, atol=ATOL)
    assert got.shape == (loss.parameter_dimension(D),)


def test_permuted_slices_are_the_permuted_rows_and_one_epoch_is_the_full_sum(stored, arrays):
    """noisy_sgd's convention: permute the rows once by ``order``, then read slices of positions."""
    loss, clip = LogisticLoss(), 0.3
    X, labels = arrays
    y, w = labels["binary"], parameter(loss)
    order = np.random.default_rng(3).permutation(N)
    data = stored["binary"].permuted(order)
    for batch in (slice(0, 31), slice(400, 650), slice(990, 1000)):
        np.testing.assert_allclose(data.gradient_sum(loss, w, clip, batch),
                                   reference(loss, w, X[order], y[order], clip, batch), rtol=RTOL, atol=ATOL)
    epoch = sum(data.gradient_sum(loss, w, clip, slice(start, start + 300)) for start in range(0, N, 300))
    np.testing.assert_allclose(epoch, reference(loss, w, X, y, clip, None), rtol=RTOL, atol=ATOL)


def test_loss_sum_equals_numpy(stored, arrays):
    X, labels = arrays
    for loss, kind in LOSSES.values():
        w = parameter(loss, seed=4)
        assert stored[kind].loss_sum(loss, w) == pytest.approx(float(np.sum(loss.values(w, X, labels[kind]))),
                                                                rel=RTOL)


def test_shape_attributes(stored):
    data = stored["binary"]
    assert (data.n, data.n_features, data.n_blocks) == (N, D, 8)


@pytest.mark.parametrize("name", ["client", "n", "n_features", "n_blocks", "persisted", "norm_bound", "label_bound",
                                  "strict"])
def test_what_was_validated_is_read_only(stored, name):
    data = stored["binary"]
    before = getattr(data, name)
    with pytest.raises(AttributeError):
        setattr(data, name, 10.0)
    assert getattr(data, name) == before


def test_the_validation_is_recorded(client, arrays):
    X, labels = arrays
    data = DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=DATA_NORM,
                               label_bound=2.0, strict=True, constant_column=3.0, client=client)
    assert (data.norm_bound, data.label_bound, data.strict, data.n_features) == (5.0, 2.0, True, D + 1)
    permuted = data.permuted(np.arange(N)[::-1])
    assert (permuted.norm_bound, permuted.label_bound, permuted.strict) == (5.0, 2.0, True)


def test_dataframe_partitions_are_blocks(client, arrays):
    X, labels = arrays
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)]).assign(label=labels["binary"])
    data = DaskData.from_dataframe(dd.from_pandas(frame, npartitions=5), "label", data_norm=DATA_NORM, client=client)
    assert (data.n, data.n_features, data.n_blocks) == (N, D, 5)
    loss, w = HuberizedHingeLoss(0.5), parameter(HuberizedHingeLoss(0.5))
    for rows in (None, INDICES, slice(10, 777)):
        np.testing.assert_allclose(data.gradient_sum(loss, w, 0.3, rows),
                                   reference(loss, w, X, labels["binary"], 0.3, rows), rtol=RTOL, atol=ATOL)
    # a feature subset, in the order given
    subset = DaskData.from_dataframe(dd.from_pandas(frame, npartitions=3), "label", features=["f4", "f1"],
                                     data_norm=DATA_NORM, client=client)
    np.testing.assert_allclose(subset.gradient_sum(loss, w[:2], None),
                               reference(loss, w[:2], X[:, [4, 1]], labels["binary"], None, None), rtol=RTOL,
                               atol=ATOL)


# ----------------------------------------------------------------------- blockwise checks


def test_rows_above_data_norm_are_clipped_with_one_warning_and_the_count(client, arrays):
    X, labels = arrays
    bound = 1.0
    norms = np.linalg.norm(X, axis=1)
    assert not np.any(np.abs(norms - bound) < 1e-6)  # no row at the bound up to rounding: the count is exact
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=bound,
                                   client=client)
    leaks = [warning for warning in caught if issubclass(warning.category, PrivacyLeakWarning)]
    assert len(leaks) == 1 and leaks[0].filename == __file__  # the warning points at the caller's line
    assert f"{int(np.sum(norms > bound))} of {N} rows have L2 norm above data_norm=1" in str(leaks[0].message)
    clipped = X * np.minimum(1.0, bound / norms)[:, None]  # the projection onto the ball, written out
    loss, w = LogisticLoss(), parameter(LogisticLoss())
    np.testing.assert_allclose(data.gradient_sum(loss, w, 0.3, INDICES),
                               reference(loss, w, clipped, labels["binary"], 0.3, INDICES), rtol=1e-10, atol=ATOL)


def test_strict_refuses_a_row_above_data_norm_naming_block_and_row(client, arrays):
    X, labels = arrays
    X = X / (2 * np.linalg.norm(X, axis=1).max())  # every row at norm <= 1/2
    X[555] *= 10.0                                  # one row above data_norm = 1: block 4 (548..684), row 7
    with pytest.raises(ValueError, match=r"1 of 1000 rows .* in block 4 at row 555, row 7 of the block.*strict"):
        DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=1.0, strict=True,
                            client=client)


@pytest.mark.parametrize("column", [0, 5])
def test_nonfinite_value_names_block_row_and_column(client, arrays, column):
    X, labels = arrays
    X = X.copy()
    X[300, column] = np.nan  # block 2 (274..410), row 26 of it
    with pytest.raises(ValueError, match=rf"block 2 has one at row 300 \(row 26 of the block\), column {column}"):
        DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=DATA_NORM, client=client)


def test_missing_value_in_a_dataframe_names_the_column(client, arrays):
    X, labels = arrays
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)]).assign(label=labels["binary"])
    frame.loc[999, "f3"] = np.nan  # last of 4 partitions of 250 rows: block 3, row 249
    with pytest.raises(ValueError, match=r"block 3 has one at row 999 \(row 249 of the block\), column 'f3'"):
        DaskData.from_dataframe(dd.from_pandas(frame, npartitions=4), "label", data_norm=DATA_NORM, client=client)
    frame.loc[999, "f3"] = 0.0
    frame.loc[10, "label"] = np.inf
    with pytest.raises(ValueError, match=r"y must contain only finite .* block 0 has one at row 10 .* the label"):
        DaskData.from_dataframe(dd.from_pandas(frame, npartitions=4), "label", data_norm=DATA_NORM, client=client)


def test_dataframe_columns_are_checked_by_name(client, arrays):
    X, labels = arrays
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)]).assign(label=labels["binary"], city="Paris")
    lazy = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(ValueError, match=r"columns \['city'\] are not numeric"):
        DaskData.from_dataframe(lazy, "label", data_norm=DATA_NORM, client=client)
    with pytest.raises(ValueError, match=r"columns \['target'\] are not in the frame"):
        DaskData.from_dataframe(lazy, "target", features=["f0"], data_norm=DATA_NORM, client=client)


def test_labels_refused_by_the_loss_name_block_and_row(client, arrays):
    X, labels = arrays
    y = labels["binary"].copy()
    y[777] = 2.0  # block 5 (685..821), row 92
    data = DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), y, data_norm=DATA_NORM, client=client)
    with pytest.raises(ValueError, match=r"block 5, row 777 \(row 92 of the block\): the logistic loss needs labels"):
        data.check_labels(LogisticLoss())
    data.check_labels(SquaredLoss())  # any finite target is a regression target


def _counted_block(X: np.ndarray, path: str) -> np.ndarray:
    """X, with one line appended to ``path`` per read (the workers are other processes)."""
    with open(path, "a", encoding="ascii") as log:
        log.write("read\n")
    return X


def test_the_validating_pass_checks_the_labels_for_a_given_loss(client, arrays, tmp_path):
    """Out of core every pass is a read of the source: given the loss, the pass that validates the blocks
    checks the labels too (same message as check_labels), and check_labels for that loss reads nothing."""
    X, labels = arrays
    log = tmp_path / "reads"
    source = da.concatenate([da.from_delayed(dask.delayed(_counted_block)(X[start:start + CHUNK], str(log)),
                                             X[start:start + CHUNK].shape, float) for start in range(0, N, CHUNK)])
    y = labels["binary"].copy()
    blocks = -(-N // CHUNK)
    loss = LogisticLoss()
    data = DaskData.from_array(source, y, data_norm=DATA_NORM, persist=False, client=client, loss=loss)
    assert log.read_text().count("read") == blocks  # one validating pass
    data.check_labels(loss)
    assert log.read_text().count("read") == blocks  # nothing read again for the loss checked
    data.check_labels(SquaredLoss())
    assert log.read_text().count("read") == 2 * blocks  # another loss: one more pass
    y[777] = 2.0  # block 5 (685..821), row 92
    with pytest.raises(ValueError, match=r"block 5, row 777 \(row 92 of the block\): the logistic loss needs labels"):
        DaskData.from_array(source, y, data_norm=DATA_NORM, persist=False, client=client, loss=loss)


def test_targets_above_label_bound_are_clipped_or_refused(client, arrays):
    X, _ = arrays
    y = np.linspace(-1.0, 1.0, N)
    y[[3, 600]] = [5.0, -7.0]  # the larger, -7, is in block 4 (548..684), row 52
    chunked = da.from_array(X, chunks=(CHUNK, D))
    with pytest.raises(ValueError, match=r"2 of 1000 targets .* in block 4 at row 600, row 52 of the block"):
        DaskData.from_array(chunked, y, data_norm=DATA_NORM, label_bound=2.0, strict=True, client=client)
    with pytest.warns(PrivacyLeakWarning, match=r"2 of 1000 targets have \|y\| above label_bound=2"):
        data = DaskData.from_array(chunked, y, data_norm=DATA_NORM, label_bound=2.0, client=client)
    loss, w = SquaredLoss(), parameter(SquaredLoss())
    np.testing.assert_allclose(data.gradient_sum(loss, w, None, None),
                               reference(loss, w, X, np.clip(y, -2.0, 2.0), None, None), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("rows, message", [
    (np.array([5, 3], dtype=np.int64), "not sorted"),
    (np.array([0, N], dtype=np.int64), rf"in \[0, {N}\)"),
    (np.array([-1, 2], dtype=np.int64), rf"in \[0, {N}\)"),
    (np.array([1.0, 2.0]), "integer array"),
    (slice(0, 10, 2), "step 1"),
])
def test_bad_rows_are_refused_naming_rows(stored, rows, message):
    with pytest.raises(ValueError, match=rf"rows .*{message}"):
        stored["binary"].gradient_sum(LogisticLoss(), np.zeros(D), None, rows)


def test_bad_construction_arguments(client, arrays):
    X, labels = arrays
    chunked = da.from_array(X, chunks=(CHUNK, D))
    with pytest.raises(ValueError, match="data_norm must be finite and > 0"):
        DaskData.from_array(chunked, labels["binary"], data_norm=0.0, client=client)
    with pytest.raises(ValueError, match="label_bound must be finite and > 0"):
        DaskData.from_array(chunked, labels["binary"], data_norm=1.0, label_bound=np.inf, client=client)
    with pytest.raises(ValueError, match="X must be a 2-D dask array"):
        DaskData.from_array(X, labels["binary"], data_norm=1.0, client=client)
    with pytest.raises(ValueError, match=rf"y must be 1-D with X.shape\[0\] = {N}"):
        DaskData.from_array(chunked, labels["binary"][:-1], data_norm=1.0, client=client)
    with pytest.raises(ValueError, match="order must be a permutation"):
        DaskData.from_array(chunked, labels["binary"], data_norm=DATA_NORM, client=client).permuted(np.zeros(N, int))


def test_without_a_client_the_error_says_how_to_start_one(arrays):
    X, labels = arrays  # the fixtures' clients are not the default client (set_as_default=False)
    with pytest.raises(ValueError, match=r"no Dask client: pass client=, or start one"):
        DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=DATA_NORM)


# ----------------------------------------------------------------------------- worker loss


def test_a_worker_killed_between_calls_has_its_blocks_recomputed_and_the_sum_unchanged(fragile):
    data, X, y = separate_data(fragile, seed=10)
    loss, w = LogisticLoss(), parameter(LogisticLoss())
    expected = reference(loss, w, X, y, 0.3, INDICES)
    np.testing.assert_allclose(data.gradient_sum(loss, w, 0.3, INDICES), expected, rtol=RTOL, atol=ATOL)
    kill_a_worker_holding_data(fragile)
    np.testing.assert_allclose(data.gradient_sum(loss, w, 0.3, INDICES), expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(data.gradient_sum(loss, w, 0.3, None), reference(loss, w, X, y, 0.3, None),
                               rtol=RTOL, atol=ATOL)


class KillsItsWorkerOnce(LogisticLoss):
    """A logistic loss whose first gradient sum (on any worker) kills that worker's process mid-call."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def gradient_sum(self, w, X, y, clip_norm=None, row_norms=None):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(1)
        return super().gradient_sum(w, X, y, clip_norm, row_norms)


class KillsEveryWorker(LogisticLoss):
    def gradient_sum(self, w, X, y, clip_norm=None, row_norms=None):
        os._exit(1)


def test_a_worker_killed_mid_call_is_retried_to_the_right_sum(fragile, tmp_path):
    data, X, y = separate_data(fragile, seed=11)
    w = parameter(LogisticLoss())
    got = data.gradient_sum(KillsItsWorkerOnce(str(tmp_path / "killed")), w, 0.3, None)
    assert (tmp_path / "killed").exists()  # a worker did die during the call
    np.testing.assert_allclose(got, reference(LogisticLoss(), w, X, y, 0.3, None), rtol=RTOL, atol=ATOL)
    wait_for_workers(fragile)


def test_a_task_that_keeps_killing_workers_is_given_up_with_a_clear_error(losses_by_value):
    """On a cluster of its own, closed at once: its nannies may still be restarting workers after this."""
    with local_cluster(**ONE_RETRY) as doomed:
        data, _, _ = separate_data(doomed, seed=12)
        with pytest.raises(RuntimeError, match="the scheduler gave up on a task of this DaskData .* rebuild"):
            data.gradient_sum(KillsEveryWorker(), parameter(LogisticLoss()), 0.3, None)


def test_a_block_recomputed_from_a_changed_source_is_refused(fragile, tmp_path):
    """The blocks read files; after the files change, a worker loss forces a re-read: no silent new sum."""
    rng = np.random.default_rng(13)
    X, y = 0.5 * rng.standard_normal((N, D)), np.where(rng.random(N) < 0.5, -1.0, 1.0)
    paths = [str(tmp_path / f"block{index}.npy") for index in range(2)]
    for path, part in zip(paths, np.split(X, 2)):
        np.save(path, part)
    chunked = da.concatenate([da.from_delayed(dask.delayed(np.load)(path), (N // 2, D), float) for path in paths])
    data = DaskData.from_array(chunked, y, data_norm=DATA_NORM, client=fragile)
    loss, w = LogisticLoss(), parameter(LogisticLoss())
    np.testing.assert_allclose(data.gradient_sum(loss, w, None, None), reference(loss, w, X, y, None, None),
                               rtol=RTOL, atol=ATOL)
    for path, part in zip(paths, np.split(X, 2)):
        np.save(path, part[::-1])  # the same rows in another order: the same norms, another labelling
    kill_a_worker_holding_data(fragile)
    with pytest.raises(RuntimeError, match=r"block \d was recomputed .* the source changed"):
        data.gradient_sum(loss, w, None, None)



# ----------------------------------------------------------------------------- out of core


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
def test_blocks_read_from_their_source_at_every_call_give_the_same_sums(client, arrays, stored, rows):
    """persist=False (out of core): no block stays on the workers; every call recomputes the blocks it reads."""
    X, labels = arrays
    streamed = DaskData.from_array(da.from_array(X, chunks=(CHUNK, D)), labels["binary"], data_norm=DATA_NORM,
                                   persist=False, client=client)
    assert not streamed.persisted and stored["binary"].persisted  # small data persist by default
    loss, w = LogisticLoss(), parameter(LogisticLoss())
    np.testing.assert_allclose(streamed.gradient_sum(loss, w, 0.3, rows),
                               reference(loss, w, X, labels["binary"], 0.3, rows), rtol=RTOL, atol=ATOL)


def test_a_dataframe_larger_than_the_clusters_share_is_not_persisted(client, arrays, monkeypatch):
    """persist=None decides after the validating pass, from n and the workers' memory limits."""
    import dpconvex.data.dask_data as module

    X, labels = arrays
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcdef")).assign(label=labels["binary"]), npartitions=4)
    monkeypatch.setattr(module, "fits_in_cluster_memory", lambda client, nbytes: nbytes <= 8 * N * (D + 3) - 1)
    streamed = DaskData.from_dataframe(frame, "label", data_norm=DATA_NORM, client=client)
    assert not streamed.persisted
    loss, w = LogisticLoss(), parameter(LogisticLoss())
    np.testing.assert_allclose(streamed.gradient_sum(loss, w, None, None),
                               reference(loss, w, X, labels["binary"], None, None), rtol=RTOL, atol=ATOL)
    streamed.check_labels(loss)


def test_workers_without_a_memory_limit_keep_nothing():
    """No limit gives no size to compare with: the blocks are read from their source (not persisted)."""
    from dpconvex.data.dask_data import fits_in_cluster_memory

    class Info:
        def __init__(self, *limits):
            self.limits = limits

        def scheduler_info(self):
            return {"workers": {str(i): {"memory_limit": limit} for i, limit in enumerate(self.limits)}}

    assert fits_in_cluster_memory(Info(4_000, 4_000), 4_000)
    assert not fits_in_cluster_memory(Info(4_000, 4_000), 4_001)  # more than half of 8,000
    assert not fits_in_cluster_memory(Info(4_000, 0), 1)
    assert not fits_in_cluster_memory(Info(None), 1)
    assert not fits_in_cluster_memory(Info(), 1)
