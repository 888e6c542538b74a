"""The lab: benchmarks, peer baselines and figure reproductions, outside the library.

Nothing in :mod:`dpconvex` imports this package except the CLI's ``bench`` and ``reproduce``
commands (``dpconvex.cli.lab``), inside the command.  Benchmarks: ``bench`` (UCI Adult, every
method and the peers) on ``bench_protocol`` (the folds, seeds, fits and scores every Adult part
shares), ``bench_datasets`` / ``bench_datasets_report``, ``bench_panel`` / ``panel_data`` /
``panel_report`` (the default on every table), ``bench_scale``, ``bench_scaling``,
``bench_planning``, ``bench_selection``, ``bench_replicates``, ``bench_tuned``, ``bench_dask`` (run
by hand); the report: ``bench_report`` (``docs/BENCHMARKS.md``) assembles the sections of
``bench_adult_report``, ``bench_headline`` and each part, with ``bench_markdown``'s helpers; peer
baselines: ``baselines`` and ``dpsgd`` (both on ``baseline_fit``), ``add_remove``; figure reproductions:
``contraction_figures``, ``langevin_figures``, ``sco_risk``.  Third-party dependencies beyond the
library's: ``pip install "dpconvex[bench]"``.
"""
