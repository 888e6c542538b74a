"""Micro-benchmark: time per gradient sum, in-memory NumPy against DaskData on a LocalCluster.

The Dask back end's cost.

Not a unit test (no timings in tests): run it by hand, ideally on an otherwise idle machine, e.g.

    OPENBLAS_NUM_THREADS=2 python -m dpconvex_lab.bench_dask # 4.9M x 120, ~10 GB
    python -m dpconvex_lab.bench_dask --rows 500000 --repeats 5 # quick look

Data: unit-norm Gaussian rows (the bench_scaling synthetic problem's shape), labels from a random
hyperplane with 10 % flipped, generated block by block from ``default_rng([seed, block])``, so the
workers build their blocks themselves (no 4.7 GB graph to ship) and the in-memory copy is bit for
bit the same.  Loss: logistic, clipped at 0.5 (the default method's clip, |φ'(0)|·data_norm).
Calls: Poisson batches of expected size ⌈√n⌉ (sorted global indices, drawn on the client before
any timing) and the full data.

Measurements (medians; the in-memory rows use the client process alone, with
``OPENBLAS_NUM_THREADS`` threads; the cluster is 2 worker processes × 1 thread):

* ``numpy`` / ``dask-futures``: in-memory NumPy exactly as ``noisy_sgd`` steps (``take`` the batch
  rows, ``loss.gradient_sum``) against ``DaskData.gradient_sum``, the two **interleaved call by
  call**, so that both see the same machine load (both copies of the data are in memory: ~10 GB);
* ``dask-array``: the same blocks persisted as a dask array and summed by ``map_blocks`` + ``sum``
  (a new graph per call), the alternative way of driving the cluster, measured afterwards;
* ``prefetch``: a prototype of a design that amortises the per-call round trip for small
  batches — the rows of S pre-drawn Poisson batches are fetched from the workers in one round,
  then S steps run in memory on the client; reported per step (fetch / S + S in-memory steps / S).

Prints the machine load and a Markdown table of seconds per call and rows/s.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from dpconvex.objectives.losses import LogisticLoss, row_norms


def generated_block(seed: int, block: int, rows: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm Gaussian rows and ±1 labels from a fixed hyperplane (10 % flipped), reproducible per block."""
    rng = np.random.default_rng([seed, block])
    X = rng.standard_normal((rows, features))
    X /= np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    direction = np.random.default_rng(seed).standard_normal(features)
    y = np.where(X @ direction >= 0, 1.0, -1.0)
    y[rng.random(rows) < 0.1] *= -1.0
    return X, y


def block_sizes(rows: int, rows_per_block: int) -> list[int]:
    return [min(rows_per_block, rows - start) for start in range(0, rows, rows_per_block)]


def poisson_batches(n: int, count: int, seed: int) -> list[np.ndarray]:
    """``count`` Poisson batches of rate ⌈√n⌉/n (sorted int64 indices)."""
    rng = np.random.default_rng(seed)
    q = math.ceil(math.sqrt(n)) / n
    return [np.flatnonzero(rng.random(n) < q).astype(np.int64) for _ in range(count)]


def median_seconds(calls: dict, arguments: list) -> dict:
    """Median wall time per call of each of ``calls`` over ``arguments``, the calls interleaved (one warm-up each)."""
    times: dict = {name: [] for name in calls}
    for call in calls.values():
        call(arguments[0])
    for argument in arguments:
        for name, call in calls.items():
            start = time.perf_counter()
            call(argument)
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(values)) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_900_000)
    parser.add_argument("--features", type=int, default=120)
    parser.add_argument("--rows-per-block", type=int, default=131_072, help="rows per Dask block (~126 MB at d = 120)")
    parser.add_argument("--repeats", type=int, default=10, help="timed full-data calls")
    parser.add_argument("--batches", type=int, default=200, help="timed Poisson-batch calls")
    parser.add_argument("--prefetch-steps", type=int, default=50,
                        help="steps per fetch round of the prefetch prototype")
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from dpconvex.data.dask_data import DaskData

    loss = LogisticLoss()
    w = np.random.default_rng(args.seed + 1).standard_normal(args.features) * 0.1
    batches = poisson_batches(args.rows, args.batches, args.seed + 2)
    full = [None] * args.repeats
    sizes = block_sizes(args.rows, args.rows_per_block)
    start = time.perf_counter()
    parts = [generated_block(args.seed, index, size, args.features) for index, size in enumerate(sizes)]
    X, y = np.concatenate([part[0] for part in parts]), np.concatenate([part[1] for part in parts])
    del parts
    norms = row_norms(X)
    print(f"in-memory data: {time.perf_counter() - start:.1f} s")

    def in_memory(rows):
        if rows is None:
            return loss.gradient_sum(w, X, y, args.clip, norms)
        return loss.gradient_sum(w, X.take(rows, 0), y.take(rows), args.clip, norms.take(rows))

    timings = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit=None) as cluster, Client(cluster) as client:
        pieces = [dask.delayed(generated_block, nout=2, pure=True)(args.seed, index, size, args.features)
                  for index, size in enumerate(sizes)]
        X_lazy = da.concatenate([da.from_delayed(piece[0], (size, args.features), float)
                                 for piece, size in zip(pieces, sizes)])
        y_lazy = da.concatenate([da.from_delayed(piece[1], (size,), float) for piece, size in zip(pieces, sizes)])
        start = time.perf_counter()
        data = DaskData.from_array(X_lazy, y_lazy, data_norm=1.0, client=client)
        print(f"DaskData.from_array: {time.perf_counter() - start:.1f} s, largest worker RSS "
              f"{max(client.run(lambda: __import__('psutil').Process().memory_info().rss).values()) / 1e9:.2f} GB, "
              f"blocks per worker {sorted(len(keys) for keys in client.has_what().values())}")
        np.testing.assert_allclose(data.gradient_sum(loss, w, args.clip, None), in_memory(None), rtol=1e-9)

        def on_cluster(rows):
            return data.gradient_sum(loss, w, args.clip, rows)

        calls = {"numpy": in_memory, "dask-futures": on_cluster}
        poisson, whole = median_seconds(calls, batches), median_seconds(calls, full)
        timings.update({name: (poisson[name], whole[name]) for name in calls})

        # Prefetch prototype (reads DaskData's private blocks: the design is not part of the interface yet).
        def take(block, local):
            return block.features.take(local, axis=0), block.labels.take(local), block.norms.take(local)

        def prefetch(steps):
            needed = np.unique(np.concatenate(steps))
            fetched = client.gather([client.submit(take, data._futures[index], local, pure=False)
                                     for index, local in data._local_rows(needed)])
            features, labels, norms_ = (np.concatenate([part[field] for part in fetched]) for field in range(3))
            for batch in steps:
                where = np.searchsorted(needed, batch)
                loss.gradient_sum(w, features.take(where, 0), labels.take(where), args.clip, norms_.take(where))

        rounds = [batches[first:first + args.prefetch_steps]
                  for first in range(0, len(batches) - args.prefetch_steps + 1, args.prefetch_steps)]
        timings["prefetch"] = median_seconds({"prefetch": prefetch}, rounds)["prefetch"] / args.prefetch_steps, math.nan
        data = None  # drop the cluster's blocks (the closures above hold the name)

        # dask.array reductions over the same blocks, persisted as arrays (a new graph per call).
        X_held, y_held = client.persist([X_lazy, y_lazy])
        offsets = np.concatenate(([0], np.cumsum(sizes)))

        def array_sum(rows):
            local = None if rows is None else {
                index: rows[np.searchsorted(rows, offsets[index]):np.searchsorted(rows, offsets[index + 1])]
                - offsets[index] for index in range(len(sizes))}

            def partial(X_block, y_block, block_info=None):
                chosen = slice(None) if local is None else local[block_info[0]["chunk-location"][0]]
                X_block, y_block = X_block[chosen], y_block[chosen, 0]
                return loss.gradient_sum(w, X_block, y_block, args.clip, row_norms(X_block))[None, :]

            return da.map_blocks(partial, X_held, y_held[:, None], chunks=((1,) * len(sizes), (args.features,)),
                                 dtype=float).sum(axis=0).compute()

        array_times = {rows_kind: median_seconds({"dask-array": array_sum}, arguments)["dask-array"]
                       for rows_kind, arguments in (("poisson", batches[:50]), ("full", full))}
        timings["dask-array"] = array_times["poisson"], array_times["full"]

    rows_poisson = float(np.mean([batch.size for batch in batches]))
    print(f"n = {args.rows}, d = {args.features}, {len(sizes)} blocks of {args.rows_per_block} rows, Poisson batch "
          f"mean {rows_poisson:.0f} rows, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"load average at the end {os.getloadavg()[0]:.2f}")
    print("| phase | Poisson s/call | Poisson rows/s | full s/call | full rows/s |")
    print("| --- | --- | --- | --- | --- |")
    for phase, (poisson, whole) in timings.items():
        print(f"| {phase} | {poisson:.3g} | {rows_poisson / poisson:.3g} | {whole:.3g} | {args.rows / whole:.3g} |")


if __name__ == "__main__":
    main()
