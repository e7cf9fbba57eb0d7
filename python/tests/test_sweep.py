"""wbsim.sweep: local and on dask, resumable, and its errors."""
import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

import wbsim

GRID = {"sysctl.dirty_ratio": [10, 40], "kernel": ["3.2", "3.3"], "seed": range(1, 3)}


def stored_rows(store):
    return sum(len(pd.read_parquet(p)) for p in glob.glob(os.path.join(store, "part-*.parquet")))


def test_a_local_sweep_has_one_row_per_run_and_a_rerun_runs_nothing(small, tmp_path):
    store = str(tmp_path / "s.parquet")
    df = wbsim.sweep(small, GRID, store=store)
    assert len(df) == 8 and df["key"].is_unique
    assert list(df.columns[:3]) == ["sysctl.dirty_ratio", "kernel", "seed"]
    # Grid order: keys sorted (kernel, seed, sysctl.dirty_ratio), the last fastest.
    assert df["sysctl.dirty_ratio"].tolist() == [10, 40] * 4
    assert df["kernel"].tolist() == ["3.2"] * 4 + ["3.3"] * 4
    assert (df["vmstat.nr_dirtied"] == 65536).all()
    # A run equals wbsim.run of the same parameters.
    one = wbsim.run(small, kernel="3.3", seed=2, sample_ms=0, **{"sysctl.dirty_ratio": 40})
    row = df[(df["kernel"] == "3.3") & (df["seed"] == 2) & (df["sysctl.dirty_ratio"] == 40)].iloc[0]
    assert row["elapsed_seconds"] == one.elapsed_seconds
    parts = sorted(glob.glob(os.path.join(store, "part-*.parquet")))
    again = wbsim.sweep(small, GRID, store=store)
    assert sorted(glob.glob(os.path.join(store, "part-*.parquet"))) == parts
    pd.testing.assert_frame_equal(df, again)


def test_a_sweep_on_a_dask_local_cluster_gives_the_same_frame(small, tmp_path):
    distributed = pytest.importorskip("distributed")
    local = wbsim.sweep(small, GRID, store=str(tmp_path / "local"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = wbsim.sweep(small, GRID, client=client, store=str(tmp_path / "dask"))
    pd.testing.assert_frame_equal(local, on_dask)


def test_a_killed_sweep_resumes_with_every_run_stored_once(small, tmp_path):
    store = str(tmp_path / "k")
    script = textwrap.dedent(f"""
        import wbsim, wbsim._sweep as s
        s.FLUSH_ROWS = 2
        wbsim.sweep({small!r}, {{"seed": range(1, 41)}}, store={store!r})
    """)
    p = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while time.time() < deadline and not glob.glob(os.path.join(store, "part-*.parquet")):
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    before = stored_rows(store)
    assert 0 < before < 40, before
    df = wbsim.sweep(small, {"seed": range(1, 41)}, store=store)
    assert len(df) == 40 and df["key"].is_unique
    assert stored_rows(store) == 40


@pytest.mark.parametrize(
    "grid, key",
    [
        ({"sysctl.dirty_ratio": [400]}, "sysctl.dirty_ratio"),
        ({"sysctl.no_such_key": [1]}, "sysctl.no_such_key"),
        ({"seed": ["x"]}, "seed"),
        ({"sysctl.dirty_ratio": []}, "sysctl.dirty_ratio"),
        ({"reclaim.no_such": [1]}, "reclaim.no_such"),
    ],
)
def test_a_bad_grid_raises_naming_its_key(small, tmp_path, grid, key):
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.sweep(small, grid, store=str(tmp_path / "bad"))
    assert key in str(e.value)
    assert e.value.key == key


def test_a_grid_that_is_not_a_dict_of_lists_raises(small, tmp_path):
    with pytest.raises(wbsim.WbsimError):
        wbsim.sweep(small, {"seed": 3}, store=str(tmp_path / "x"))
    with pytest.raises(wbsim.WbsimError):
        wbsim.sweep(small, {}, store=str(tmp_path / "x"))


def test_the_cli_sweep_shards_merge_into_what_python_reads(small, wbsim_bin, tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(f'scenario = "{small}"\n[grid]\n"sysctl.dirty_ratio" = [10, 40]\nkernel = ["3.2", "3.3"]\nseed = [1, 2]\n')
    out = tmp_path / "out"
    for i in range(3):
        subprocess.run([wbsim_bin, "sweep", str(sweep), "--out", str(out), "--shard", f"{i}/3"],
                       check=True, capture_output=True)
    subprocess.run([wbsim_bin, "sweep", "--merge", str(out)], check=True, capture_output=True)
    merged = pd.read_csv(out / "sweep.csv")
    cli = wbsim.read_sweep(str(out))
    py = wbsim.sweep(small, GRID, store=str(tmp_path / "py"))
    assert len(merged) == len(cli) == 8
    # The same runs, under the same keys, with the same figures.
    assert list(cli["key"]) == list(py["key"]) == list(merged["key"])
    assert list(cli["elapsed_seconds"]) == list(py["elapsed_seconds"])


def test_the_example_sweeps_and_plots(root, tmp_path):
    out = tmp_path / "p.png"
    r = subprocess.run(
        [sys.executable, str(root / "examples" / "dirty_ratio_sweep.py"), "--quick",
         "--out", str(out), "--store", str(tmp_path / "store")],
        capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 1000
    assert "8 runs" in r.stdout
