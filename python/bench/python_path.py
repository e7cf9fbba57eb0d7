"""The Python path's cost, as issue 30 states its targets:

- per run: wbsim.run over the native call of the same run (medians of 60
  interleaved pairs of the small test scenario);
- a 200-run sweep (5 dirty_ratios x 4 kernels x 10 seeds) on
  LocalCluster(2 workers) against `wbsim sweep` (rayon) of the same runs,
  three of each.

    cargo build --release && python python/bench/python_path.py
"""
import os, shutil, statistics, subprocess, sys, tempfile, time
import wbsim
from wbsim import _native
from distributed import Client, LocalCluster

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SMALL = os.path.join(ROOT, "python", "tests", "data", "small.toml")
BIN = os.path.join(ROOT, "target", "release", "wbsim")
GRID = {"sysctl.dirty_ratio": [10, 20, 30, 40, 50], "kernel": ["3.2", "3.3", "6.1", "3.10"], "seed": list(range(1, 11))}

def clean(p):
    shutil.rmtree(p, ignore_errors=True)

def main(WORK):
    sweep_file = os.path.join(WORK, "sweep200.toml")
    with open(sweep_file, "w") as f:
        f.write(f'scenario = "{SMALL}"\n[grid]\n"sysctl.dirty_ratio" = [10, 20, 30, 40, 50]\n'
                'kernel = ["3.2", "3.3", "6.1", "3.10"]\nseed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n')
    # Per-run overhead: the Python path over the native call, same run.
    for _ in range(5):
        wbsim.run(SMALL, sample_ms=0)
    nat, py, acc = [], [], []
    for i in range(60):
        t = time.perf_counter(); _native.run(SMALL, "path", None, 1, [], 0); nat.append(time.perf_counter() - t)
        t = time.perf_counter(); r = wbsim.run(SMALL, seed=1, sample_ms=0); py.append(time.perf_counter() - t)
        t = time.perf_counter(); r.vmstat; r.zones; acc.append(time.perf_counter() - t)
    m = lambda x: statistics.median(x) * 1e3
    print(f"native run median {m(nat):.3f} ms, wbsim.run median {m(py):.3f} ms, overhead {m(py)-m(nat):.3f} ms; .vmstat+.zones {m(acc):.3f} ms")

    # 200-run sweep: CLI (rayon, 2 threads) against LocalCluster(2 workers).
    cli, dask = [], []
    for rep in range(3):
        clean(os.path.join(WORK, "cli")); t = time.perf_counter()
        subprocess.run([BIN, "sweep", sweep_file, "--out", os.path.join(WORK, "cli")], check=True, capture_output=True)
        cli.append(time.perf_counter() - t)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, Client(c) as client:
        wbsim.sweep(SMALL, {"seed": [1, 2]}, client=client, store=os.path.join(WORK, "warm"))  # workers import wbsim
        for rep in range(3):
            clean(os.path.join(WORK, "dask")); t = time.perf_counter()
            df = wbsim.sweep(SMALL, GRID, client=client, store=os.path.join(WORK, "dask"))
            dask.append(time.perf_counter() - t)
        assert len(df) == 200
    print(f"200 runs: CLI wbsim sweep {[round(x,2) for x in cli]} s (median {statistics.median(cli):.2f}), "
          f"LocalCluster(2) {[round(x,2) for x in dask]} s (median {statistics.median(dask):.2f}), ratio {statistics.median(dask)/statistics.median(cli):.3f}")

if __name__ == "__main__":
    work = tempfile.mkdtemp(prefix="wbsim-bench-")
    try:
        main(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
