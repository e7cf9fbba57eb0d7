"""wbsim.run, kernels, reproduce and their errors."""
import subprocess

import pandas as pd
import pytest

import wbsim


def test_a_run_gives_the_reports_figures_as_pandas(small):
    r = wbsim.run(small, kernel="3.3", seed=3)
    assert isinstance(r.vmstat, pd.Series)
    # 256 MiB of dd, all of it dirtied; most written by the time dd exits.
    assert r.vmstat["nr_dirtied"] == 65536
    assert 0 < r.vmstat["nr_written"] <= 65536
    assert set(r.zones.index) == {"dma32", "normal"}
    assert {"time_s", "zone", "dirty_pages"} <= set(r.series.columns)
    assert r.devices.loc[0, "name"] == "sdb"
    assert r.report["kernel"] == "3.3" and r.report["runs"][0]["seed"] == 3
    assert r.elapsed_seconds > 5.0  # most of 256 MiB at 20 MiB/s


def test_the_json_is_the_clis_exact_report(small, wbsim_bin, tmp_path):
    out = tmp_path / "r.json"
    subprocess.run(
        [wbsim_bin, "run", small, "--runs", "1", "--seed", "2", "--kernel", "3.2",
         "--set", "sysctl.dirty_ratio=30", "--json", str(out), "--series", str(tmp_path / "s.csv")],
        check=True, capture_output=True,
    )
    r = wbsim.run(small, kernel="3.2", seed=2, **{"sysctl.dirty_ratio": 30})
    assert r.json == out.read_text()
    cli_series = pd.read_csv(tmp_path / "s.csv")
    pd.testing.assert_frame_equal(r.series, cli_series)


def test_a_scenario_may_be_toml_text_or_a_dict(small):
    text = open(small).read()
    a = wbsim.run(text, sample_ms=0)
    import tomllib  # Python 3.11+; the package itself needs only 3.9

    b = wbsim.run(tomllib.loads(text), sample_ms=0)
    assert a.vmstat.equals(b.vmstat)
    assert a.series.empty


def test_same_seed_same_report(small):
    assert wbsim.run(small, seed=5).json == wbsim.run(small, seed=5).json


def test_overrides_reach_scenario_and_profile(small):
    base = wbsim.run(small, sample_ms=0)
    low = wbsim.run(small, sample_ms=0, overrides={"sysctl.dirty_ratio": 5})
    assert low.report["config"]["sysctl"]["dirty_ratio"] == 5
    assert base.report["config"]["sysctl"]["dirty_ratio"] != 5
    assert base.report["profile"]["kswapd_writepage_max_priority"] != 7
    prof = wbsim.run(small, sample_ms=0, **{"reclaim.kswapd_writepage_max_priority": 7})
    assert prof.report["profile"]["kswapd_writepage_max_priority"] == 7


@pytest.mark.parametrize(
    "args, key, line",
    [
        (({"sysctl.dirty_ratio": 400},), "sysctl.dirty_ratio", 24),
        (({"sysctl.no_such_key": 1},), "sysctl.no_such_key", None),
        (({"device[0].seq_write_mib_per_s": -1},), "device[0].seq_write_mib_per_s", None),
    ],
)
def test_a_bad_override_raises_with_file_line_and_key(small, args, key, line):
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.run(small, overrides=args[0])
    assert e.value.key == key
    assert small in e.value.file
    if line is not None:
        assert e.value.line == line
    assert isinstance(e.value, ValueError) and e.value.message


def test_bad_scenarios_and_kernels_raise(small, tmp_path):
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.run(str(tmp_path / "missing.toml"))
    assert "cannot read" in str(e.value)
    bad = tmp_path / "bad.toml"
    bad.write_text(open(small).read().replace("size_mib = 96", "size_mib = -96"))
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.run(str(bad))
    assert e.value.key == "machine.zone[0].size_mib" and e.value.line == 7
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.run(small, kernel="9.9")
    assert "9.9" in str(e.value)
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.run(small, **{"reclaim.no_such": 1})
    assert "no_such" in str(e.value)
    with pytest.raises(TypeError):
        wbsim.run(42)


def test_kernels_and_reproduce():
    k = wbsim.kernels()
    assert {"3.2", "3.3", "6.1"} <= set(k["name"])
    assert "real-6.1" in wbsim.experiments()
    cells = wbsim.reproduce("real-6.1", runs=1)
    assert {"name", "published", "simulated", "band_low", "band_high", "verdict"} <= set(cells.columns)
    assert len(cells) >= 70
    with pytest.raises(wbsim.WbsimError) as e:
        wbsim.reproduce("no-such-experiment")
    assert "known" in str(e.value)


def test_plot_draws_each_zone(small):
    ax = wbsim.run(small).plot()
    assert len(ax.get_lines()) == 2
