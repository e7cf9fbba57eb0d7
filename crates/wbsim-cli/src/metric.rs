//! A run's figures by name, for the cells of the built-in experiments
//! (`experiment.rs`): `metric_value` reads one number out of a run
//! report, simulated or real.

use wbsim::report::RunReport;

/// A run's figure by name: `elapsed_seconds`, `system_seconds`,
/// `user_seconds`, `user_sys_seconds`, `kswapd_awake_seconds`,
/// `context_switches`, `vmstat.<counter>` (a zone stat that the report
/// keeps only per zone is summed over the zones, as /proc/vmstat prints
/// it; a counter the report lacks is 0), `zoneinfo.<zone>.<stat>` (the
/// per-zone stats of /proc/zoneinfo, zones by lower-case suffix: `dma`,
/// `dma32`, `normal`), `zone_share.<counter>.<zone>` (the zone's
/// `<counter>_<zone>` over the sum of `<counter>_<z>` for every zone of
/// the run, e.g. `zone_share.pgalloc.normal`), `ftrace.<total>` (see
/// `ReclaimTraceStats`), `fsmark.files_per_second_mean` /
/// `fsmark.overhead_us_mean`, `fsmark.files_per_second_mean_last_half`,
/// `devices.write_iops` / `devices.write_mb_per_second` /
/// `devices.avg_write_request_kib` (summed over devices),
/// `iozone.<task>.<test>` (MB/s),
/// `task.<name>.elapsed_seconds` (one workload task's, see
/// `TaskReport::elapsed_seconds`),
/// `kswapd_efficiency_percent` or
/// `series.<figure>` (see `Series::stats`).
pub fn metric_value(r: &RunReport, metric: &str) -> Result<f64, String> {
    if let Some(c) = metric.strip_prefix("vmstat.") {
        if let Some(v) = r.vmstat.get(c) {
            return Ok(*v as f64);
        }
        let per_zone: Option<i64> = (!r.zoneinfo.is_empty())
            .then(|| r.zoneinfo.values().map(|z| z.get(c)).sum())
            .flatten();
        return Ok(per_zone.unwrap_or(0) as f64);
    }
    if let Some(c) = metric.strip_prefix("zoneinfo.") {
        return zoneinfo_figure(r, metric, c);
    }
    if let Some(c) = metric.strip_prefix("zone_share.") {
        return zone_share(r, metric, c);
    }
    if let Some(c) = metric.strip_prefix("ftrace.") {
        let v = serde_json::to_value(r.ftrace).map_err(|e| e.to_string())?;
        return c
            .split('.')
            .try_fold(&v, |v, key| v.get(key))
            .and_then(|x| x.as_f64())
            .ok_or_else(|| format!("unknown ftrace total `{c}`"));
    }
    if let Some(c) = metric.strip_prefix("fsmark.") {
        let n = r.fsmark.len().max(1) as f64;
        return match c {
            "files_per_second_mean" => {
                Ok(r.fsmark.iter().map(|l| l.files_per_second).sum::<f64>() / n)
            }
            "overhead_us_mean" => Ok(r.fsmark.iter().map(|l| l.overhead_us).sum::<f64>() / n),
            // The steady state of a run shorter than published: the mean of
            // the second half of the loops.
            "files_per_second_mean_last_half" => {
                let tail = &r.fsmark[r.fsmark.len() / 2..];
                Ok(tail.iter().map(|l| l.files_per_second).sum::<f64>() / tail.len().max(1) as f64)
            }
            _ => Err(format!("unknown fs_mark figure `{c}`")),
        };
    }
    if let Some(c) = metric.strip_prefix("iozone.") {
        // iozone.<task>.<test>: MB/s as IOzone reports it (KiB/s / 1024).
        let (task, test) = c
            .rsplit_once('.')
            .ok_or_else(|| format!("`{metric}`: expected iozone.<task>.<test>"))?;
        return r
            .iozone
            .iter()
            .find(|x| x.task == task && x.test.name() == test)
            .map(|x| x.kib_per_second as f64 / 1024.0)
            .ok_or_else(|| format!("no IOzone result for task `{task}`, test `{test}`"));
    }
    if let Some(c) = metric.strip_prefix("devices.") {
        // Physical IO: summed over all devices (an md array has none).
        let reqs: u64 = r.devices.iter().map(|d| d.write_requests).sum();
        let bytes: u64 = r.devices.iter().map(|d| d.write_bytes).sum();
        let secs = r.elapsed_seconds.max(1e-9);
        return match c {
            "write_iops" => Ok(reqs as f64 / secs),
            "write_mb_per_second" => Ok(bytes as f64 / 1e6 / secs),
            "avg_write_request_kib" => Ok(bytes as f64 / 1024.0 / reqs.max(1) as f64),
            "avg_data_write_request_kib" => {
                let n: u64 = r.devices.iter().map(|d| d.data_write_requests).sum();
                let b: u64 = r.devices.iter().map(|d| d.data_write_bytes).sum();
                Ok(b as f64 / 1024.0 / n.max(1) as f64)
            }
            _ => Err(format!(
                "unknown devices figure `{c}` (write_iops, write_mb_per_second, \
                 avg_write_request_kib, avg_data_write_request_kib)"
            )),
        };
    }
    if let Some(c) = metric.strip_prefix("task.") {
        return task_figure(r, metric, c);
    }
    if metric == "kswapd_efficiency_percent" {
        // mmtests: kswapd_steal / pgscan_kswapd, truncated to an integer.
        let v = |k: &str| r.vmstat.get(k).copied().unwrap_or(0) as f64;
        let scanned = v("pgscan_kswapd");
        return Ok(if scanned > 0.0 {
            (100.0 * v("kswapd_steal") / scanned).floor()
        } else {
            0.0
        });
    }
    if let Some(s) = metric.strip_prefix("series.") {
        return Ok(r.series_stats.get(s).copied().unwrap_or(f64::NAN));
    }
    Ok(match metric {
        "elapsed_seconds" => r.elapsed_seconds,
        "system_seconds" => r.system_seconds,
        "user_seconds" => r.user_seconds,
        "user_sys_seconds" => r.user_seconds + r.system_seconds,
        "kswapd_awake_seconds" => r.kswapd_awake_seconds,
        "context_switches" => r.context_switches as f64,
        _ => return Err(format!("unknown metric `{metric}`")),
    })
}

/// `zoneinfo.<zone>.<stat>`: one zone's stat, as /proc/zoneinfo prints it.
fn zoneinfo_figure(r: &RunReport, metric: &str, rest: &str) -> Result<f64, String> {
    let (zone, stat) = rest
        .split_once('.')
        .ok_or_else(|| format!("`{metric}`: expected zoneinfo.<zone>.<stat>"))?;
    let stats = r.zoneinfo.get(zone).ok_or_else(|| {
        let zones: Vec<&str> = r.zoneinfo.keys().map(String::as_str).collect();
        format!("`{metric}`: no zone `{zone}`; zones: {}", zones.join(", "))
    })?;
    stats.get(stat).map(|v| *v as f64).ok_or_else(|| {
        let names: Vec<&str> = stats.keys().map(String::as_str).collect();
        format!(
            "`{metric}`: zone `{zone}` has no stat `{stat}`; stats: {}",
            names.join(", ")
        )
    })
}

/// `zone_share.<counter>.<zone>`: the zone's part of a per-zone
/// /proc/vmstat counter (`<counter>_<zone>`) summed over the run's zones
/// (those of `zoneinfo`); 0 when the sum is 0.
fn zone_share(r: &RunReport, metric: &str, rest: &str) -> Result<f64, String> {
    let (counter, zone) = rest
        .rsplit_once('.')
        .ok_or_else(|| format!("`{metric}`: expected zone_share.<counter>.<zone>"))?;
    if !r.zoneinfo.contains_key(zone) {
        let zones: Vec<&str> = r.zoneinfo.keys().map(String::as_str).collect();
        return Err(format!(
            "`{metric}`: no zone `{zone}`; zones: {}",
            zones.join(", ")
        ));
    }
    let count = |z: &str| -> Result<i64, String> {
        let key = format!("{counter}_{z}");
        r.vmstat
            .get(&key)
            .copied()
            .ok_or_else(|| format!("`{metric}`: no per-zone counter `{key}` in vmstat"))
    };
    let total = r
        .zoneinfo
        .keys()
        .map(|z| count(z))
        .sum::<Result<i64, String>>()?;
    let part = count(zone)?;
    Ok(if total == 0 {
        0.0
    } else {
        part as f64 / total as f64
    })
}

/// `task.<name>.<figure>`: a figure of the workload task named `<name>`.
fn task_figure(r: &RunReport, metric: &str, rest: &str) -> Result<f64, String> {
    let (name, figure) = rest
        .rsplit_once('.')
        .ok_or_else(|| format!("`{metric}`: expected task.<name>.elapsed_seconds"))?;
    let task = r.tasks.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
        format!(
            "`{metric}`: no task named `{name}`; tasks: {}",
            names.join(", ")
        )
    })?;
    match figure {
        "elapsed_seconds" => Ok(task.elapsed_seconds),
        _ => Err(format!(
            "`{metric}`: unknown task figure `{figure}` (elapsed_seconds)"
        )),
    }
}

/// The run figures of `metric_value` on a real (small) simulated run:
/// 96 MiB through dd into a 64 MiB machine, then sync.
#[cfg(test)]
mod tests {
    use super::*;

    fn dd_then_sync() -> RunReport {
        let text = "kernel = \"3.2\"\n[machine]\ncpus = 1\n\
            [[machine.zone]]\nname = \"DMA\"\nsize_mib = 15\n\
            [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 49\n\
            [[device]]\nname = \"sdb\"\nmodel = \"usb-stick\"\ncapacity_gib = 1\n\
            seq_write_mib_per_s = 20.0\nmax_request_kib = 120\n\
            [[fs]]\ntype = \"ext4\"\ndevice = \"sdb\"\nmount = \"disk\"\n\
            [[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=96\"\n\
            [[task]]\nname = \"sync\"\ncommand = \"sync\"\nafter = \"dd\"\n";
        let sc = wbsim::scenario::parse_scenario(text, "t.toml").unwrap();
        let opts = wbsim::RunOptions {
            series_interval_ns: Some(100_000_000),
            ..Default::default()
        };
        wbsim::simulate(&sc, &wbsim::kernel::preset("3.2").unwrap(), 1, &opts)
    }

    #[test]
    fn task_elapsed_seconds_by_name() {
        let r = dd_then_sync();
        let dd = metric_value(&r, "task.dd.elapsed_seconds").unwrap();
        let sync = metric_value(&r, "task.sync.elapsed_seconds").unwrap();
        assert!(dd > 0.0 && sync > 0.0, "{dd} {sync}");
        assert!((dd + sync - r.elapsed_seconds).abs() < 1e-9);
        let e = metric_value(&r, "task.cp.elapsed_seconds").unwrap_err();
        assert!(e.contains("no task named `cp`; tasks: dd, sync"), "{e}");
        let e = metric_value(&r, "task.dd.exit_status").unwrap_err();
        assert!(e.contains("unknown task figure `exit_status`"), "{e}");
    }

    #[test]
    fn zoneinfo_stats_by_zone_suffix() {
        let r = dd_then_sync();
        for zone in ["dma", "dma32"] {
            for stat in ["nr_vmscan_write", "nr_vmscan_immediate_reclaim"] {
                let v = metric_value(&r, &format!("zoneinfo.{zone}.{stat}")).unwrap();
                assert_eq!(v, r.zoneinfo[zone][stat] as f64, "{zone} {stat}");
            }
        }
        let e = metric_value(&r, "zoneinfo.normal.nr_vmscan_write").unwrap_err();
        assert!(e.contains("no zone `normal`; zones: dma, dma32"), "{e}");
        let e = metric_value(&r, "zoneinfo.dma.nr_dirty").unwrap_err();
        assert!(e.contains("no stat `nr_dirty`"), "{e}");
    }

    #[test]
    fn zone_shares_of_a_per_zone_counter() {
        let r = dd_then_sync();
        let share = |z: &str| metric_value(&r, &format!("zone_share.pgalloc.{z}")).unwrap();
        let (dma, dma32) = (r.vmstat["pgalloc_dma"], r.vmstat["pgalloc_dma32"]);
        assert!(dma32 > 0);
        assert!((share("dma32") - dma32 as f64 / (dma + dma32) as f64).abs() < 1e-12);
        assert!((share("dma") + share("dma32") - 1.0).abs() < 1e-12);
        assert!(metric_value(&r, "zone_share.pgalloc.normal")
            .unwrap_err()
            .contains("no zone `normal`"));
        assert!(metric_value(&r, "zone_share.pgfoo.dma")
            .unwrap_err()
            .contains("no per-zone counter `pgfoo_dma`"));
    }

    /// A zone stat the report keeps only per zone reads as /proc/vmstat
    /// prints it: the sum over the zones.
    #[test]
    fn a_zone_stat_missing_from_vmstat_is_summed_over_the_zones() {
        let mut r = dd_then_sync();
        r.vmstat.remove("nr_vmscan_write");
        r.zoneinfo
            .get_mut("dma")
            .unwrap()
            .insert("nr_vmscan_write".into(), 3);
        r.zoneinfo
            .get_mut("dma32")
            .unwrap()
            .insert("nr_vmscan_write".into(), 4);
        assert_eq!(metric_value(&r, "vmstat.nr_vmscan_write"), Ok(7.0));
        r.vmstat.insert("nr_vmscan_write".into(), 9);
        assert_eq!(metric_value(&r, "vmstat.nr_vmscan_write"), Ok(9.0));
        assert_eq!(metric_value(&r, "vmstat.no_such_counter"), Ok(0.0));
    }
}
