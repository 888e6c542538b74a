"""The data-set benchmark's section of ``BENCHMARKS.md`` (:mod:`.bench_datasets`' records), and the names of its rows.

:func:`datasets_section` renders ``bench_datasets.csv``: a summary of the default entry at every ε
against the three references, then, per data set and task, every entry at every ε with its
certificate or the reason it did not run.  Each cell is the mean test accuracy over every fold and
repetition ± its standard error over the repetitions (:func:`mean_se`).
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpconvex.datasets.bundled import BUNDLED
from dpconvex_lab.bench_markdown import append_section, pivot
from dpconvex_lab.bench_protocol import DEFAULT, PRIVATE_BASELINES
from dpconvex_lab.bench_scaling import TASKS

__all__ = ["BINARY_ONLY", "CSV", "DATASETS", "MAJORITY", "NONPRIVATE", "PEERS", "SKLEARN_DEFAULTS", "TITLE",
           "datasets_section", "mean_se", "with_datasets_section"]

DATASETS = tuple(BUNDLED)
#: The private baselines of the Adult benchmark, in its order.
PEERS = PRIVATE_BASELINES
#: The records' file, beside ``BENCHMARKS.md``.
CSV = "bench_datasets.csv"
TITLE = "More real data: breast cancer, wine, digits (scikit-learn's bundled copies)"
NONPRIVATE = "baseline: nonprivate"
SKLEARN_DEFAULTS = "baseline: scikit-learn defaults"
MAJORITY = "baseline: majority"
SKLEARN_DEFAULT_MODELS = {"logistic": "LogisticRegression()", "svm": "LinearSVC()"}
#: Row order of the tables: ours, the private peers, the non-private references.
_ROW_ORDER = {method: k for k, method in enumerate((DEFAULT, *(f"baseline: {p}" for p in PEERS), NONPRIVATE,
                                                    SKLEARN_DEFAULTS, MAJORITY))}
#: The ``bound`` of a peer not run on a multi-class task.
BINARY_ONLY = "binary only"


def with_datasets_section(text: str, out: pathlib.Path) -> str:
    """``text`` (the rest of ``BENCHMARKS.md``) with this section appended when ``out`` holds :data:`CSV`."""
    path = pathlib.Path(out) / CSV
    return append_section(text, datasets_section(pd.read_csv(path))) if path.exists() else text


def mean_se(group: pd.DataFrame) -> str:
    """``"mean ± se"`` in %, se over the per-repetition means (module docstring); the mean alone if one repetition."""
    per_repeat = group.groupby("repeat")["accuracy"].mean().dropna()
    if per_repeat.empty:
        bounds = group["bound"].astype(str).unique()
        return BINARY_ONLY if BINARY_ONLY in bounds else "–"
    mean = 100 * group["accuracy"].mean()
    if len(per_repeat) < 2:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {100 * per_repeat.std(ddof=1) / np.sqrt(len(per_repeat)):.2f}"


def _certificate(group: pd.DataFrame) -> str:
    """The bound(s) of an entry's private fits and the largest certified ε / target; or its note."""
    finite = group[np.isfinite(group["epsilon"]) & group["accuracy"].notna()]
    if finite.empty:
        notes = group["note"].dropna().astype(str)
        return notes.iloc[0][:160] if len(notes) else "–"
    ratio = (finite["certified_epsilon"] / finite["epsilon"]).max()
    bounds = ", ".join(sorted(finite["bound"].astype(str).unique()))
    trainers = ", ".join(sorted(str(m) for m in finite["mechanism"].dropna().unique() if str(m) and str(m) != "nan"))
    return f"{bounds}{f' ({trainers})' if trainers else ''}; largest certified ε / target {ratio:.4f}"


def _summary_row(name: str, task: str, frame: pd.DataFrame, epsilons: Sequence[float]) -> str:
    """One data set and task of the summary: its shape, R, the folds, ours at every ε, the references."""
    first, ran = frame.iloc[0], frame[frame["fold"] >= 0]

    def cell(method: str, epsilon: float) -> str:
        group = frame[(frame["method"] == method) & np.isclose(frame["epsilon"], epsilon)]
        return mean_se(group) if len(group) else "–"

    cells = [cell(DEFAULT, eps) for eps in epsilons]
    cells += [cell(method, np.inf) for method in (NONPRIVATE, SKLEARN_DEFAULTS, MAJORITY)]
    return (f"| {name} | {int(first['n_rows'])} | {int(first['n_features'])} | {int(first['n_classes'])} | {task} | "
            f"{ran['repeat'].nunique()} | {ran['fold'].nunique()} | " + " | ".join(cells) + " |")


def datasets_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of this benchmark's section of ``BENCHMARKS.md``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records of :func:`run_dataset_task` (``bench_datasets.csv``), any data sets and tasks.

    Returns
    -------
    list of str
        The section, from its heading ``## {TITLE}``: the protocol, a summary table (the default
        entry at every ε against the three references) and, per data set and task, every entry
        at every ε with its certificate or the reason it did not run.
    """
    epsilons = sorted(e for e in frame["epsilon"].unique() if np.isfinite(e))
    clips = {name: spec.rounding_clips for name, spec in BUNDLED.items()}
    lines = [f"## {TITLE}", "",
             "Regenerate with `dpconvex_lab.bench_datasets.run_datasets` (`dpconvex bench breast_cancer|wine"
             f"|digits`); records in `{CSV}`. Data: scikit-learn's installed copies (never downloaded), encoded by "
             "`dpconvex.datasets.load_bundled` with the library's feature map (`datasets.encoding.encode`): every "
             "feature clipped to declared bounds and scaled to [0, 1] by them, each row scaled to unit L2 norm. The "
             "bounds are public: digits' pixels lie in [0, 16] by the data's definition; for breast cancer and "
             "wine they are the Min/Max of the summary statistics in the data's published description "
             "(scikit-learn's `DESCR`). **Those published ranges were computed from the same records**, as Adult's "
             "documented ranges were (Chen, Lee, Kifer 2019 treat them as public): a certificate covers the fixed "
             "map, not the choice of its constants. The description prints them rounded, so "
             f"{clips['breast_cancer']} values of breast cancer and {clips['wine']} of wine fall just outside and "
             "are clipped. The label sets are declared (`classes=`).", "",
             "Protocol: stratified 5-fold cross-validation repeated R times (`bench.cv_folds`; R and the number of "
             "test folds are in the summary), every entry on the same folds, a fresh noise seed per fit; δ = 1e-8 "
             "for every private fit, as on Adult (δ ≪ 1/n for these n). Cell: mean test accuracy (%) over every "
             "fold ± its standard error over the repetitions (sd of the R per-repetition 5-fold means / √R: "
             "partition and privacy noise, conditional on the data set; the mean alone when R = 1). "
             f"`{DEFAULT}` is the estimator with only ε, δ, `classes=` and a seed (`method='auto'`, "
             "`l2_regularization='auto'`): `PrivateLogisticRegression` (multinomial for more than two classes) "
             "for `logistic`, `PrivateHuberSVC` (one-vs-rest for more than two) for `svm`. References (ε = ∞, not "
             "private): `nonprivate` is the exact minimiser of the same objective at λ = 1e-3 without intercept "
             "(`baselines.nonprivate`, the Adult benchmark's reference, on the estimator's loss: multinomial / "
             "one-vs-rest for more than two classes), "
             f"`scikit-learn defaults` is {SKLEARN_DEFAULT_MODELS['logistic']} / {SKLEARN_DEFAULT_MODELS['svm']} "
             "(C = 1, with intercept), `majority` the training fold's most frequent class. The private peers are "
             "the Adult benchmark's with the same settings (λ = 1e-3, their defaults, nothing tuned), on the "
             "estimator's loss. For more than two classes DP-SGD (`sgd_ma`, `sgd_ma_replace_one`) trains the "
             "d·K-parameter multinomial / one-vs-rest loss, every per-example gradient clipped to joint norm C, so "
             "its accounting, which sees only the sampling rate, the steps and the noise multiplier, is the binary "
             "one; objective perturbation's guarantee needs a rank-one loss Hessian, so `objpert` reads "
             f"*{BINARY_ONLY}* there; `diffprivlib` is wrapped for the binary logistic loss only. DP-SGD's "
             "defaults are TF Privacy's MNIST flags (expected batch 256, 60 epochs, learning rate 0.15): on "
             "breast cancer they make about 100 steps from 0, too few to leave the majority class even with "
             "negligible noise; on wine (a training fold is smaller than a batch: 60 full-batch steps) and digits "
             "(about 340 steps) they do. Compare the default with `sgd_ma_replace_one`, DP-SGD under the "
             f"replace-one relation `{DEFAULT}` certifies; `sgd_ma` counts add/remove neighbours, a weaker "
             "guarantee.",
             "", "### Summary: the default estimator against the references (test accuracy, %)", "",
             "| data set | n | d | classes | task | R | test folds | "
             + " | ".join(f"`{DEFAULT}` ε = {e:g}" for e in epsilons)
             + " | nonprivate (λ = 1e-3) | scikit-learn defaults | majority |",
             "|---" * (10 + len(epsilons)) + "|"]
    keys = [(name, task) for name in DATASETS for task in TASKS
            if ((frame["dataset"] == name) & (frame["task"] == task)).any()]
    for name, task in keys:
        lines.append(_summary_row(name, task, frame[(frame["dataset"] == name) & (frame["task"] == task)], epsilons))
    for name, task in keys:
        here = frame[(frame["dataset"] == name) & (frame["task"] == task)]
        here = here.sort_values("method", key=lambda m: m.map(_ROW_ORDER).fillna(len(_ROW_ORDER)), kind="stable")
        first = here.iloc[0]
        lines += ["", f"### `{name}`, task `{task}` (n = {int(first['n_rows'])}, d = {int(first['n_features'])}, "
                      f"{int(first['n_classes'])} classes)", ""]
        table = pivot(here, mean_se)
        groups = [group for _, group in here.groupby("method", sort=False)]  # pivot's row order
        lines += [table[0] + " certificate or note |", table[1] + "---|"]
        lines += [f"{row} {_certificate(group)} |" for row, group in zip(table[2:], groups)]
    return lines + [""]
