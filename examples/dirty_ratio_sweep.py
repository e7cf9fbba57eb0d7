"""Sweep dirty_ratio x Normal-zone size on 3.2 and 3.3 and plot how much of
the Normal zone's inactive list is dirty while kswapd runs (the per-zone
dirty limits of 3.3 keep it near the zone's share; 3.2 lets the small
Normal zone fill with dirty pages).

    python examples/dirty_ratio_sweep.py [--quick] [--out normal_dirty.png] [--client tcp://SCHEDULER:8786]

Runs on this machine's threads, or on a dask.distributed scheduler given
with --client; results are kept in sweep-results.parquet (a rerun only
runs what is missing).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import wbsim  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "zone-dirty-v2", "xfs.toml")
METRIC = "series.Normal.dirty_of_inactive_kswapd"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a small grid (for the tests)")
    ap.add_argument("--out", default="normal_dirty.png")
    ap.add_argument("--store", default="sweep-results.parquet")
    ap.add_argument("--client", help="a dask.distributed scheduler address")
    a = ap.parse_args(argv)
    grid = {
        "kernel": ["3.2", "3.3"],
        "sysctl.dirty_ratio": [10, 40] if a.quick else [5, 10, 20, 40],
        # The scenario's third zone is Normal (504 MiB as published).
        "machine.zone[2].size_mib": [256, 504] if a.quick else [128, 256, 504, 1024],
        "seed": [1] if a.quick else [1, 2, 3],
    }
    # The scenario states its total memory (total_mib), which a changed
    # Normal zone would contradict: sweep a copy without it.
    with open(SCENARIO) as f:
        scenario = "".join(l for l in f if not l.startswith("total_mib"))
    client = None
    if a.client:
        from distributed import Client

        client = Client(a.client)
    df = wbsim.sweep(scenario, grid, client=client, store=a.store, metrics=["elapsed_seconds", METRIC])
    table = df.groupby(["kernel", "machine.zone[2].size_mib", "sysctl.dirty_ratio"])[METRIC].mean()
    print(table.unstack("sysctl.dirty_ratio").round(3))
    fig, ax = plt.subplots()
    for (kernel, normal_mib), g in df.groupby(["kernel", "machine.zone[2].size_mib"]):
        g = g.groupby("sysctl.dirty_ratio")[METRIC].mean()
        ax.plot(g.index, g.values, marker="o", linestyle="-" if kernel == "3.3" else "--",
                label=f"{kernel}, Normal {normal_mib} MiB")
    ax.set_xlabel("vm.dirty_ratio (%)")
    ax.set_ylabel("Normal dirty / Normal inactive (kswapd samples)")
    ax.legend(fontsize="small")
    fig.savefig(a.out, dpi=100)
    print(f"{len(df)} runs; plot in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
