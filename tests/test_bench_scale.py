"""``dpconvex bench scale`` at toy size: both parts run on a real LocalCluster, the CSV and the
BENCHMARKS.md section are written, and an existing Parquet directory can be measured again
(``parquet=``) without being rewritten or removed.  No timing is asserted (speed lives in the
benchmark itself)."""

import pathlib

import pandas as pd
import pytest

pytest.importorskip("distributed")

from dpconvex_lab.bench_scale import HEADING, SCALE_CSV, run_scale  # noqa: E402

pytestmark = pytest.mark.slow  # a Dask cluster and a Parquet round trip
SIZES = dict(rows=3_000, features=5, out_of_core_rows=4_500, rows_per_block=1_000, passes=1, steps=2)


def test_run_scale_writes_both_parts_then_measures_the_kept_parquet(tmp_path):
    out, work = tmp_path / "docs", tmp_path / "work"
    out.mkdir()
    first = run_scale(out=out, workdir=work, keep_parquet=True, **SIZES)
    frame = pd.read_csv(out / SCALE_CSV)
    assert list(frame["part"]) == ["in memory vs dask"] * 2 + ["out of core (Parquet)"]
    ooc = frame.iloc[2]
    assert (ooc["rows"], ooc["features"], ooc["blocks"]) == (4_500, 5, 5)  # 4 full blocks and one of 500
    assert ooc["write_s"] > 0 and ooc["parquet_gb"] > 0
    text = pathlib.Path(first["markdown"]).read_text()
    assert text.count(HEADING) == 1 and "written in" in text

    parquet = work / "scale"
    files = sorted(parquet.glob("*.parquet"))
    assert len(files) == 5
    run_scale(out=out, parquet=parquet, **SIZES)
    again = pd.read_csv(out / SCALE_CSV).iloc[2]
    assert (again["rows"], again["blocks"]) == (4_500, 5) and pd.isna(again["write_s"])
    assert sorted(parquet.glob("*.parquet")) == files  # measured, not rewritten or removed
    text = (out / "BENCHMARKS.md").read_text()
    assert text.count(HEADING) == 1 and "written in" not in text and "Out of core:" in text
