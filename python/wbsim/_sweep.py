"""Parameter sweeps: a grid of overrides, kernels and seeds over one
scenario, run locally (threads: the native runs release the GIL) or on a
``dask.distributed`` Client, stored incrementally in a Parquet dataset
keyed by what each run simulated.

The store is a directory of ``part-*.parquet`` files, each written whole
and renamed into place (a killed sweep leaves no half-written file); a
run whose key is stored is not run again, so a rerun or a restarted sweep
finishes with every run stored once. Keys are the CLI's (``wbsim sweep``):
a hash of the resolved scenario, the resolved profile, the seed and the
wbsim version.
"""

from __future__ import annotations

import concurrent.futures as cf
import glob
import json
import os
import time
import uuid
from typing import Any, Dict, Iterable, List, Mapping, Optional

import pandas as pd

from . import _native

# Rows are written to the store at least this often (seconds) and in
# batches of at most this many, so a killed sweep loses little work.
FLUSH_SECONDS = 2.0
FLUSH_ROWS = 64


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _run_spec(text: str, file_name: str, spec_json: str, metrics: List[str]) -> Dict[str, Any]:
    """One run, on whichever process runs it (a dask worker or a thread)."""
    return json.loads(_native.sweep_run(text, file_name, spec_json, metrics))


def _run_chunk(text: str, file_name: str, spec_jsons: List[str], metrics: List[str]) -> List[Dict[str, Any]]:
    """Several runs as one dask task: a run can take milliseconds, less
    than a task's round trip through the scheduler."""
    return [_run_spec(text, file_name, s, metrics) for s in spec_jsons]


def _chunk_size(n_runs: int, n_workers: int) -> int:
    """Runs per dask task: about four tasks per worker thread, at most 16
    runs each, so rows still reach the store as the sweep goes."""
    return max(1, min(16, -(-n_runs // max(1, 4 * n_workers))))


def _stored_frames(store: str) -> List[pd.DataFrame]:
    return [pd.read_parquet(p) for p in sorted(glob.glob(os.path.join(store, "part-*.parquet")))]


def _stored_keys(store: str) -> set:
    keys: set = set()
    for p in glob.glob(os.path.join(store, "part-*.parquet")):
        keys.update(pd.read_parquet(p, columns=["key"])["key"].tolist())
    return keys


def _write_part(store: str, rows: List[Dict[str, Any]]) -> None:
    if not rows:
        return
    df = pd.DataFrame(rows)
    # Parameters are stored as given (text), figures as numbers.
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = os.path.join(store, "." + name + ".tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, os.path.join(store, name))


def read_sweep(path: str) -> pd.DataFrame:
    """Every stored row of a sweep store: a Parquet store of
    :func:`sweep`, or a ``wbsim sweep --out DIR`` directory; one row per
    key, in grid order."""
    runs = os.path.join(path, "runs")
    if os.path.isdir(runs):
        rows = []
        for p in glob.glob(os.path.join(runs, "*.json")):
            with open(p) as f:
                rows.append(json.load(f))
        df = pd.DataFrame(rows)
    else:
        frames = _stored_frames(path)
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["key", "index"])
    if df.empty:
        return df
    return df.drop_duplicates("key").sort_values("index").reset_index(drop=True)


def sweep(
    scenario: Any,
    grid: Mapping[str, Iterable[Any]],
    client: Any = None,
    store: str = "results.parquet",
    metrics: Optional[List[str]] = None,
) -> pd.DataFrame:
    """Run every combination of ``grid`` over ``scenario`` and return one
    row per run: its parameters, ``kernel``, ``seed``, ``key`` and the
    headline figures (``metrics``: names as the experiments use them, e.g.
    ``vmstat.nr_vmscan_write`` or ``series.Normal.dirty_of_inactive_kswapd``;
    default: elapsed time and the main vmstat counters).

    ``grid`` maps a key to its values: ``kernel`` (presets), ``seed``, or a
    ``--set`` key (``sysctl.dirty_ratio``, ``machine.zone[2].size_mib``,
    ``reclaim.kswapd_writepage_max_priority``). Every run is resolved
    before any is run, so a bad key or value raises :class:`WbsimError`
    naming it. With ``client`` (a ``dask.distributed.Client``) the runs go
    to its workers; without, to threads of this process. Rows are written
    to the Parquet dataset ``store`` as they finish; runs already stored
    are not run again.
    """
    from . import _source

    if not isinstance(grid, Mapping) or not grid:
        raise _native.WbsimError("grid: expected a dict of key -> list of values")
    originals: Dict[str, Dict[str, Any]] = {}
    grid_text: Dict[str, List[str]] = {}
    for k, values in grid.items():
        if not isinstance(k, str):
            raise _native.WbsimError(f"grid key {k!r}: expected a string")
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise _native.WbsimError(f"grid key `{k}`: expected a list of values, got {values!r}")
        vals = list(values)
        grid_text[k] = [_text(v) for v in vals]
        originals[k] = {_text(v): v for v in vals}
    source, kind = _source(scenario)
    text, file_name, specs_json = _native.sweep_plan(source, kind, json.dumps(grid_text))
    specs = json.loads(specs_json)
    metrics = list(metrics or [])
    os.makedirs(store, exist_ok=True)
    stored = _stored_keys(store)
    todo = [s for s in specs if s["key"] not in stored]

    pending: List[Dict[str, Any]] = []
    last = time.monotonic()

    def collect(row: Dict[str, Any]) -> None:
        nonlocal last
        pending.append(row)
        if len(pending) >= FLUSH_ROWS or time.monotonic() - last >= FLUSH_SECONDS:
            _write_part(store, pending)
            pending.clear()
            last = time.monotonic()

    args = [(text, file_name, json.dumps(s), metrics) for s in todo]
    if client is not None:
        from distributed import as_completed

        threads = sum(client.nthreads().values()) or 1
        k = _chunk_size(len(args), threads)
        specs_json = [a[2] for a in args]
        futures = [
            client.submit(_run_chunk, text, file_name, specs_json[i : i + k], metrics, pure=False)
            for i in range(0, len(specs_json), k)
        ]
        for fut in as_completed(futures):
            for row in fut.result():
                collect(row)
    else:
        with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for fut in cf.as_completed([pool.submit(_run_spec, *a) for a in args]):
                collect(fut.result())
    _write_part(store, pending)

    wanted = {s["key"] for s in specs}
    df = read_sweep(store)
    df = df[df["key"].isin(wanted)].reset_index(drop=True)
    # The grid's values as given (numbers stay numbers).
    for k, mapping in originals.items():
        if k in df:
            df[k] = df[k].map(lambda t, m=mapping: m.get(t, t))
    first = [k for k in grid_text if k in df] + [c for c in ("kernel", "seed") if c not in grid_text]
    rest = [c for c in df.columns if c not in first]
    return df[first + rest]
