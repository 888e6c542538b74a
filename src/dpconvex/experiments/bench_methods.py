"""Chen, Lee, Kifer 2019-style comparison of the private trainers on UCI Adult.

``dpconvex bench adult --methods rsgd_ar nsgd outpert_gd`` writes ``BENCHMARKS_METHODS.md``:
accuracy **and final objective value** versus ε for each method and model (Chen et al. Fig. 1–2)
and fit time versus n on growing replicates of Adult (Fig. 3).  Every fit uses the estimators'
default hyperparameters (nothing tuned on test folds); seeds make the benchmark reproducible.
"""

from __future__ import annotations

import datetime
import os
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from sklearn.model_selection import RepeatedStratifiedKFold
from tqdm.auto import tqdm

from ..datasets.adult import load_adult
from ..estimators import PrivateHuberSVC, PrivateLogisticRegression
from ..losses import HuberizedHingeLoss, LogisticLoss
from .bench import DEFAULT_EPSILONS, L2, _fit_seed, _sd

__all__ = ["run_methods_benchmark"]

MODELS = {"logistic": (PrivateLogisticRegression, LogisticLoss()), "huber": (PrivateHuberSVC, HuberizedHingeLoss(0.5))}
DEFAULT_METHODS = ("rsgd_ar", "nsgd", "outpert_gd")
DEFAULT_SIZES = (12_000, 24_000, 48_842, 97_684, 195_368)


def _fit(model: str, method: str, epsilon: float, delta: float, seed: int, X, y):
    estimator = MODELS[model][0](epsilon=epsilon, delta=delta, method=method, random_state=seed)
    tic = time.perf_counter()
    estimator.fit(X, y)
    return estimator, time.perf_counter() - tic


def run_methods_benchmark(
    out_dir: str | os.PathLike = "docs",
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    methods: Sequence[str] = DEFAULT_METHODS,
    models: Sequence[str] = ("logistic", "huber"),
    repeats: int = 1,
    seed: int = 0,
    delta: float = 1e-8,
    sizes: Sequence[int] = DEFAULT_SIZES,
    progress: bool = True,
) -> dict[str, Any]:
    """Accuracy and objective vs ε (stratified 5-fold CV × ``repeats``) and fit time vs n.

    The objective is the non-private training objective ``mean loss + (λ/2)‖w‖²`` of the released
    model on its training fold.  Timing: logistic regression at ε = 1 on ``sizes`` rows drawn with
    replacement from Adult (replicates beyond 48,842), one fit per (method, n).
    Returns the paths written and the mean accuracy and objective per (model, method, ε).
    """
    start = time.perf_counter()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_adult("all")
    folds = list(RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=seed).split(X, y))
    records = []
    total = len(folds) * len(epsilons) * len(models) * len(methods) + len(sizes) * len(methods)
    bar = tqdm(total=total, disable=not progress, unit="fit", desc="adult methods")
    for f, (train, test) in enumerate(folds):
        for i, epsilon in enumerate(epsilons):
            for j, model in enumerate(models):
                for k, method in enumerate(methods):
                    estimator, elapsed = _fit(model, method, float(epsilon), delta, _fit_seed(seed, f, i, j, k),
                                              X[train], y[train])
                    objective = MODELS[model][1].objective(estimator.coef_, X[train], y[train].astype(float), L2)
                    records.append({"model": model, "method": method, "epsilon": float(epsilon),
                                    "accuracy": float(estimator.score(X[test], y[test])), "objective": objective,
                                    "certified_epsilon": estimator.privacy_report_.epsilon,
                                    "bound": estimator.privacy_report_.bound, "fit_time": elapsed})
                    bar.update()
    rng = np.random.default_rng(seed)
    timings = []
    for n in sizes:
        rows = rng.choice(y.size, size=int(n), replace=int(n) > y.size)
        for k, method in enumerate(methods):
            _, elapsed = _fit("logistic", method, 1.0, delta, _fit_seed(seed, int(n), k), X[rows], y[rows])
            timings.append({"n": int(n), "method": method, "fit_time": elapsed})
            bar.update()
    bar.close()
    results = {"records": records, "timings": timings, "methods": list(methods), "models": list(models),
               "epsilons": [float(e) for e in epsilons], "repeats": repeats, "delta": delta,
               "run_time_s": time.perf_counter() - start,
               "command": "dpconvex bench adult --methods " + " ".join(methods) + f" --repeats {repeats}"}
    md_path, png_path = out / "BENCHMARKS_METHODS.md", out / "bench_methods.png"
    md_path.write_text(render_methods_markdown(results), encoding="utf-8")
    _plot(results, png_path)
    summary = _summary(results)
    return {"markdown": str(md_path), "png": str(png_path), "run_time_s": results["run_time_s"],
            "accuracy": {f"{m}/{meth}/{e:g}": v[0] for (m, meth, e), v in summary.items()}}


def _summary(results: dict[str, Any]) -> dict[tuple[str, str, float], tuple[float, float, float]]:
    """{(model, method, ε): (mean accuracy, sd accuracy, mean objective)}."""
    table = {}
    for model in results["models"]:
        for method in results["methods"]:
            for eps in results["epsilons"]:
                rows = [r for r in results["records"]
                        if r["model"] == model and r["method"] == method and r["epsilon"] == eps]
                acc = [r["accuracy"] for r in rows]
                table[model, method, eps] = (float(np.mean(acc)), _sd(acc), float(np.mean([r["objective"] for r in rows])))
    return table


def render_methods_markdown(results: dict[str, Any], today: datetime.date | None = None) -> str:
    """The text of ``BENCHMARKS_METHODS.md``."""
    summary = _summary(results)
    lines = [
        "# Benchmark: private trainers compared on UCI Adult (Chen et al. 2019, Fig. 1–3)", "",
        f"Produced by `{results['command']}` on {today or datetime.date.today()} "
        f"({os.cpu_count()} CPU cores); total run time {results['run_time_s'] / 60:.1f} min. "
        f"Stratified 5-fold CV × {results['repeats']}, δ = {results['delta']:g}, default hyperparameters "
        f"(λ = {L2:g}; output perturbation: η₀ = 2/(L+μ), batch 4000, 20 epochs, τ = 5; OutPert-GD "
        "until ρ^T ≤ 1/n), nothing tuned on test folds. Objective = mean loss + (λ/2)‖w‖² of the released "
        "model on its training fold (lower is better). Noisy GD (the default method) is in "
        "[BENCHMARKS.md](BENCHMARKS.md).", "",
        "| ε | model | method | accuracy mean ± sd (%) | objective | certified ε | bound | fit time (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for eps in results["epsilons"]:
        for model in results["models"]:
            for method in results["methods"]:
                rows = [r for r in results["records"]
                        if r["model"] == model and r["method"] == method and r["epsilon"] == eps]
                acc, sd, obj = summary[model, method, eps]
                lines.append(
                    f"| {eps:g} | {model} | {method} | {100 * acc:.2f} ± {100 * sd:.2f} | {obj:.4g} | "
                    f"{max(r['certified_epsilon'] for r in rows):.6g} | {'/'.join(sorted({r['bound'] for r in rows}))} | "
                    f"{np.mean([r['fit_time'] for r in rows]):.2f} |")
    sizes = sorted({t["n"] for t in results["timings"]})
    lines += ["", "## Fit time vs n (logistic, ε = 1; Chen et al. Fig. 3)", "",
              "| n | " + " | ".join(results["methods"]) + " |", "|---|" + "---|" * len(results["methods"])]
    for n in sizes:
        cells = [next(t["fit_time"] for t in results["timings"] if t["n"] == n and t["method"] == m)
                 for m in results["methods"]]
        lines.append(f"| {n} | " + " | ".join(f"{c:.2f} s" for c in cells) + " |")
    lines += ["", "![accuracy, objective and time](bench_methods.png)", ""]
    return "\n".join(lines)


def _plot(results: dict[str, Any], path: pathlib.Path) -> None:
    summary = _summary(results)
    eps = results["epsilons"]
    models = results["models"]
    fig = Figure(figsize=(5.0 * (len(models) + 1), 8.0), dpi=100)
    for col, model in enumerate(models):
        acc_ax = fig.add_subplot(2, len(models) + 1, col + 1)
        obj_ax = fig.add_subplot(2, len(models) + 1, len(models) + 2 + col)
        for method in results["methods"]:
            values = np.array([summary[model, method, e] for e in eps])
            acc_ax.errorbar(eps, 100 * values[:, 0], yerr=100 * values[:, 1], marker="o", capsize=3, label=method)
            obj_ax.plot(eps, values[:, 2], marker="o", label=method)
        for ax, label in ((acc_ax, "test accuracy (%)"), (obj_ax, "training objective")):
            ax.set_xscale("log")
            ax.set_xlabel("ε")
            ax.set_ylabel(label)
            ax.set_title(model)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    time_ax = fig.add_subplot(2, len(models) + 1, len(models) + 1)
    for method in results["methods"]:
        points = sorted((t["n"], t["fit_time"]) for t in results["timings"] if t["method"] == method)
        time_ax.plot(*zip(*points), marker="o", label=method)
    time_ax.set_xlabel("n")
    time_ax.set_ylabel("fit time (s)")
    time_ax.set_title("logistic, ε = 1")
    time_ax.grid(True, alpha=0.3)
    time_ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
