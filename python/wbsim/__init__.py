"""wbsim from Python: one run, the built-in experiments, and parameter sweeps.

>>> import wbsim
>>> r = wbsim.run("scenarios/zone-dirty-v2/xfs.toml", kernel="3.3", **{"sysctl.dirty_ratio": 40})
>>> r.vmstat["nr_vmscan_write"]

Every figure is the simulator's (the same code as the ``wbsim`` command);
a bad scenario, override or grid raises :class:`WbsimError`, a
``ValueError`` whose ``file``, ``line``, ``key`` and ``message`` say which
and why.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Dict, Mapping, Optional, Union

import pandas as pd

from . import _native
from ._native import WbsimError
from ._sweep import read_sweep, sweep

__all__ = [
    "Result",
    "WbsimError",
    "experiments",
    "kernels",
    "read_sweep",
    "reproduce",
    "run",
    "sweep",
]
__version__ = _native.__version__

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _source(scenario: Scenario) -> tuple:
    """(source, kind) for the native side: a path, TOML text or a dict."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario), "json"
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), "path"
    if isinstance(scenario, str):
        if "\n" in scenario or ("=" in scenario and not os.path.exists(scenario)):
            return scenario, "text"
        return scenario, "path"
    raise TypeError(f"scenario: expected a path, TOML text or a dict, got {type(scenario).__name__}")


def _sets(overrides: Mapping[str, Any]) -> list:
    """``KEY=VALUE`` strings, as ``wbsim run --set`` takes them."""
    out = []
    for k, v in overrides.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append(f"{k}={v}")
    return out


class Result:
    """One simulated run.

    ``json`` is the CLI's exact report (``wbsim run --json``); the other
    attributes are views of it as pandas objects.
    """

    def __init__(self, report_json: str, series_csv: str):
        self.json: str = report_json
        self._report: Dict[str, Any] = json.loads(report_json)
        self._series_csv = series_csv

    @property
    def report(self) -> Dict[str, Any]:
        """The report as a dict (scenario, kernel, resolved config and profile, runs)."""
        return self._report

    @property
    def _run(self) -> Dict[str, Any]:
        return self._report["runs"][0]

    @property
    def kernel(self) -> str:
        return self._report["kernel"]

    @property
    def elapsed_seconds(self) -> float:
        return self._run["elapsed_seconds"]

    @property
    def vmstat(self) -> pd.Series:
        """/proc/vmstat counter deltas over the run, by counter name."""
        return pd.Series(self._run["vmstat"], name="vmstat", dtype="int64").sort_index()

    @property
    def zones(self) -> pd.DataFrame:
        """Per-zone statistics (/proc/zoneinfo's), one row per zone."""
        z = self._run.get("zoneinfo") or {}
        return pd.DataFrame.from_dict(z, orient="index").fillna(0).astype("int64")

    @property
    def series(self) -> pd.DataFrame:
        """Per-zone free, file LRU, dirty and writeback pages over simulated
        time (``wbsim run --series``); empty when run with ``sample_ms=0``."""
        if not self._series_csv:
            return pd.DataFrame()
        return pd.read_csv(io.StringIO(self._series_csv))

    @property
    def devices(self) -> pd.DataFrame:
        """Each device's iostat figures."""
        return pd.DataFrame(self._run.get("devices") or [])

    def plot(self, ax=None):
        """Dirty pages per zone over time (matplotlib); returns the axes."""
        import matplotlib.pyplot as plt

        s = self.series
        if s.empty:
            raise ValueError("no series: run with sample_ms > 0")
        if ax is None:
            _, ax = plt.subplots()
        for zone, g in s.groupby("zone"):
            ax.plot(g["time_s"], g["dirty_pages"], label=str(zone))
        ax.set_xlabel("simulated time (s)")
        ax.set_ylabel("dirty pages")
        ax.set_title(f"{self._report['scenario']} on {self.kernel}")
        ax.legend()
        return ax

    def __repr__(self) -> str:
        return (
            f"<wbsim.Result {self._report['scenario']} kernel={self.kernel} "
            f"seed={self._run['seed']} elapsed={self.elapsed_seconds:.3f}s>"
        )


def run(
    scenario: Scenario,
    kernel: Optional[str] = None,
    seed: Optional[int] = None,
    *,
    sample_ms: int = 250,
    overrides: Optional[Mapping[str, Any]] = None,
    **more: Any,
) -> Result:
    """Simulate ``scenario`` (a path, TOML text or a dict) once.

    ``kernel`` overrides the scenario's preset; ``seed`` its first seed.
    Overrides use the CLI's ``--set`` keys: scenario keys
    (``sysctl.dirty_ratio``, ``device[0].seq_write_mib_per_s``) or profile
    keys (``reclaim.kswapd_writepage_max_priority``); give them as
    ``overrides={...}`` or ``**{"sysctl.dirty_ratio": 40}``. The series is
    sampled every ``sample_ms`` of simulated time (0: none). The run
    releases the GIL.
    """
    sets = _sets({**(overrides or {}), **more})
    source, kind = _source(scenario)
    report, series = _native.run(source, kind, kernel, seed, sets, sample_ms)
    return Result(report, series)


def kernels() -> pd.DataFrame:
    """The kernel presets: name and what each models."""
    rows = json.loads(_native.kernels())
    return pd.DataFrame(rows, columns=["name", "description"])


def experiments() -> list:
    """The ids of the built-in experiments (``wbsim reproduce --list``)."""
    return json.loads(_native.experiments())


def reproduce(id: str, runs: Optional[int] = None, include_cut: bool = False) -> pd.DataFrame:
    """Run built-in experiment ``id`` and compare it with its published
    figures: one row per cell (name, published, simulated, band, verdict)."""
    out = json.loads(_native.reproduce(id, runs, include_cut))
    cells = out["experiments"][0]["cells"]
    df = pd.DataFrame(cells)
    if "band" in df:
        df["band_low"] = df["band"].map(lambda b: b[0])
        df["band_high"] = df["band"].map(lambda b: b[1])
        df = df.drop(columns=["band"])
    return df
