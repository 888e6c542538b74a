"""Write ``tests/golden/releases.json``: the releases and certificates of the 100 golden configurations.

Run from the repository's root::

    python tests/golden/generate_golden.py

Regenerate only when a change is *meant* to change releases or certificates (a new default, a fixed
bug, a tighter bound), and say so in the change: ``tests/test_golden_releases.py`` exists to show
that a refactor leaves every release bit for bit the same.  ``--output PATH`` writes elsewhere (e.g.
to compare two runs), ``--timings`` prints each configuration's running time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# ``golden`` is a package of the tests directory, which pytest puts on the path; do the same here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from threadpoolctl import threadpool_limits

from golden.golden_configurations import golden_configurations
from golden.golden_records import (
    GOLDEN_FILE,
    REGENERATE_COMMAND,
    environment,
    golden_record,
)


def golden_file_contents(timings: bool = False) -> dict:
    """The golden file's contents: the environment, how to regenerate, and every configuration's record.

    Parameters
    ----------
    timings : bool
        Print each configuration's id and running time on stderr.

    Returns
    -------
    dict
        ``{"environment": ..., "regenerate": ..., "configurations": {id: record}}``.
    """
    records = {}
    for configuration in golden_configurations():
        start = time.perf_counter()
        records[configuration.id] = golden_record(configuration)
        if timings:
            print(f"{time.perf_counter() - start:7.3f} s  {configuration.id}", file=sys.stderr)
    return {"environment": environment(), "regenerate": REGENERATE_COMMAND, "configurations": records}


def main(argv: list[str] | None = None) -> int:
    """Compute every golden record with one BLAS thread (as the tests run) and write the golden file.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status, 0.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=GOLDEN_FILE, help="where to write (default: %(default)s)")
    parser.add_argument("--timings", action="store_true", help="print each configuration's running time")
    arguments = parser.parse_args(argv)
    start = time.perf_counter()
    with threadpool_limits(limits=1):  # tests/conftest.py runs every test with one thread: BLAS sums match
        contents = golden_file_contents(timings=arguments.timings)
    arguments.output.write_text(json.dumps(contents, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(contents['configurations'])} configurations to {arguments.output} "
          f"in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
