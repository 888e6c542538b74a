"""Micro-benchmark: time per gradient sum, in-memory NumPy against DaskData on a LocalCluster (issue 17).

Not a unit test (no timings in tests): run it by hand on an otherwise idle machine, e.g.

    PYTHONPATH=src OPENBLAS_NUM_THREADS=2 python experiments/bench_dask.py            # 4.9M x 120
    PYTHONPATH=src python experiments/bench_dask.py --rows 500000 --repeats 5         # quick look

Data: unit-norm Gaussian rows (the bench_scaling synthetic problem's shape), labels from a random
hyperplane, generated block by block from ``default_rng([seed, block])``, so the workers build
their blocks themselves (no 4.7 GB graph to ship) and the in-memory copy is bit for bit the same.
Loss: logistic, clipped at 0.5 (the default method's clip, |φ'(0)|·data_norm).  Calls: a Poisson
batch of expected size ⌈√n⌉ (sorted global indices, drawn on the client) and the full data.

Phases run one after another so that at most one copy of the data is in memory:

1. ``DaskData`` (futures, one task per worker thread and call) on a LocalCluster of 2 worker
   processes × 1 thread;
2. the same blocks as a persisted dask array, summed by ``map_blocks`` + ``sum`` (a new graph per
   call), to compare the two ways of driving the cluster;
3. "prefetch": the design that would amortise the per-call overhead for small batches — the rows
   of S pre-drawn Poisson batches are fetched from the workers in one round, then S steps run in
   memory on the client (time per step = fetch / S + in-memory step);
4. in-memory NumPy (the client process alone), exactly as ``noisy_sgd`` steps: ``take`` the batch
   rows, ``loss.gradient_sum``.

Prints a Markdown table of seconds per call and rows/s per phase.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

PHASES = ("dask-futures", "dask-array", "prefetch", "numpy")


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
    """``count`` Poisson batches of rate ⌈√n⌉/n (sorted int64 indices), drawn before any timing."""
    rng = np.random.default_rng(seed)
    q = math.ceil(math.sqrt(n)) / n
    return [np.flatnonzero(rng.random(n) < q).astype(np.int64) for _ in range(count)]


def seconds_per_call(call, arguments: list) -> float:
    """Median wall time of ``call(argument)`` over ``arguments`` (after one warm-up call)."""
    call(arguments[0])
    times = []
    for argument in arguments:
        start = time.perf_counter()
        call(argument)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def dask_phases(args, loss, w, batches) -> dict:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from dpconvex.data_dask import DaskData

    sizes = block_sizes(args.rows, args.rows_per_block)
    results = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=None) as cluster, Client(cluster) as client:
        pieces = [dask.delayed(generated_block, nout=2, pure=True)(args.seed, index, size, args.features)
                  for index, size in enumerate(sizes)]
        X = da.concatenate([da.from_delayed(piece[0], (size, args.features), float) for piece, size in zip(pieces, sizes)])
        y = da.concatenate([da.from_delayed(piece[1], (size,), float) for piece, size in zip(pieces, sizes)])
        start = time.perf_counter()
        data = DaskData.from_array(X, y, data_norm=1.0, client=client)
        results["load"] = time.perf_counter() - start
        memory = client.run(lambda: __import__("psutil").Process().memory_info().rss)
        results["worker_rss_gb"] = max(memory.values()) / 1e9
        full = [None] * args.repeats
        results["dask-futures"] = (
            seconds_per_call(lambda rows: data.gradient_sum(loss, w, args.clip, rows), batches),
            seconds_per_call(lambda rows: data.gradient_sum(loss, w, args.clip, rows), full))

        # 3. prefetch: the rows of S batches in one round, then S in-memory steps (a prototype reading
        #    DaskData's private blocks: the design is not part of the data-access interface yet).
        def take(block, local):
            return block.features.take(local, axis=0), block.labels.take(local), block.norms.take(local)

        def prefetch(steps):
            everything = np.unique(np.concatenate(steps))
            parts = dict(data._local_rows(everything))
            fetched = client.gather([client.submit(take, data._futures[index], local, pure=False)
                                     for index, local in parts.items()])
            features = np.concatenate([part[0] for part in fetched])
            labels = np.concatenate([part[1] for part in fetched])
            norms = np.concatenate([part[2] for part in fetched])
            for batch in steps:
                where = np.searchsorted(everything, batch)
                loss.gradient_sum(w, features.take(where, axis=0), labels.take(where), args.clip, norms.take(where))

        groups = [batches[start:start + args.prefetch_steps]
                  for start in range(0, len(batches) - args.prefetch_steps + 1, args.prefetch_steps)] or [batches]
        per_round = seconds_per_call(prefetch, groups)
        results["prefetch"] = (per_round / len(groups[0]), math.nan)
        del data

        # 2. dask.array reductions over the same blocks, persisted as arrays.
        Xp, yp = client.persist([X, y])
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        dimension = loss.parameter_dimension(args.features)

        def array_sum(rows):
            locals_ = None if rows is None else {index: rows[np.searchsorted(rows, offsets[index]):
                                                             np.searchsorted(rows, offsets[index + 1])] - offsets[index]
                                                 for index in range(len(sizes))}

            def partial(Xb, yb, block_info=None):
                local = slice(None) if locals_ is None else locals_[block_info[0]["chunk-location"][0]]
                Xb, yb = Xb[local], yb[local, 0]
                norms = np.sqrt(np.einsum("ij,ij->i", Xb, Xb))
                return loss.gradient_sum(w, Xb, yb, args.clip, norms)[None, :]

            return da.map_blocks(partial, Xp, yp[:, None], chunks=((1,) * len(sizes), (dimension,)),
                                 dtype=float).sum(axis=0).compute()

        results["dask-array"] = (seconds_per_call(array_sum, batches), seconds_per_call(array_sum, full))
        del Xp, yp
    return results


def numpy_phase(args, loss, w, batches) -> tuple[float, float]:
    from dpconvex.losses import row_norms

    parts = [generated_block(args.seed, index, size, args.features)
             for index, size in enumerate(block_sizes(args.rows, args.rows_per_block))]
    X = np.concatenate([part[0] for part in parts])
    y = np.concatenate([part[1] for part in parts])
    del parts
    norms = row_norms(X)
    take_rows, take_labels = X.take, y.take
    poisson = seconds_per_call(lambda rows: loss.gradient_sum(w, take_rows(rows, 0), take_labels(rows), args.clip,
                                                              norms.take(rows)), batches)
    full = seconds_per_call(lambda _: loss.gradient_sum(w, X, y, args.clip, norms), [None] * args.repeats)
    return poisson, full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_900_000)
    parser.add_argument("--features", type=int, default=120)
    parser.add_argument("--rows-per-block", type=int, default=131_072, help="rows per Dask block (~126 MB at d = 120)")
    parser.add_argument("--repeats", type=int, default=10, help="timed full-data calls")
    parser.add_argument("--batches", type=int, default=200, help="timed Poisson-batch calls")
    parser.add_argument("--prefetch-steps", type=int, default=50, help="steps per fetch round of the prefetch phase")
    parser.add_argument("--clip", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phases", nargs="+", choices=PHASES, default=list(PHASES))
    args = parser.parse_args()

    from dpconvex.losses import LogisticLoss

    loss = LogisticLoss()
    w = np.random.default_rng(args.seed + 1).standard_normal(args.features) * 0.1
    batches = poisson_batches(args.rows, args.batches, args.seed + 2)
    rows_poisson = float(np.mean([batch.size for batch in batches]))
    timings = {}
    if set(args.phases) - {"numpy"}:
        timings.update(dask_phases(args, loss, w, batches))
    if "numpy" in args.phases:
        timings["numpy"] = numpy_phase(args, loss, w, batches)
    print(f"n = {args.rows}, d = {args.features}, {len(block_sizes(args.rows, args.rows_per_block))} blocks of "
          f"{args.rows_per_block} rows, Poisson batch mean {rows_poisson:.0f} rows, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load {os.getloadavg()[0]:.2f}")
    if "load" in timings:
        print(f"DaskData.from_array: {timings['load']:.1f} s, largest worker RSS {timings['worker_rss_gb']:.2f} GB")
    print("| phase | Poisson s/call | Poisson rows/s | full s/call | full rows/s |")
    print("| --- | --- | --- | --- | --- |")
    for phase in PHASES:
        if phase in timings:
            poisson, full = timings[phase]
            print(f"| {phase} | {poisson:.4g} | {rows_poisson / poisson:.3g} | {full:.4g} | {args.rows / full:.3g} |")


if __name__ == "__main__":
    main()
