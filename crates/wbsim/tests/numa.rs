//! NUMA machines (`[[machine.node]]`): allocations try the task's own
//! node first, each node's kswapd reclaims its node, the machine's
//! counters are the nodes' sums, and a machine of one node is the
//! machine of `[[machine.zone]]`.

mod common;

use wbsim::report::RunReport;
use wbsim::scenario::{parse_scenario, Scenario};
use wbsim::{kernel, simulate, RunOptions};

/// Node 0: DMA, DMA32 and Normal, 256 MiB, CPU 0; node 1: Normal,
/// 256 MiB, CPU 1. ext4 on a 20 MB/s disk; dd of `mib` MiB bound to
/// `node`, then sync.
fn two_nodes(mib: u64, node: u32) -> Scenario {
    let text = format!(
        r#"kernel = "6.1"
[machine]
hz = 250
{TWO_NODES}
{DEVICE}
[[task]]
name = "dd"
node = {node}
command = "dd if=/dev/zero of=disk/zeroes bs=32k count={}"
[[task]]
name = "sync"
command = "sync"
after = "dd"
"#,
        mib * 32
    );
    parse_scenario(&text, "two-nodes.toml").unwrap()
}

/// Node 0: DMA, DMA32 and Normal, 256 MiB, CPU 0; node 1: Normal,
/// 256 MiB, CPU 1.
const TWO_NODES: &str = include_str!("fixtures/two-nodes-machine.toml");

const DEVICE: &str = r#"[[device]]
name = "vda"
model = "usb-stick"
capacity_gib = 4
seq_write_mib_per_s = 19.07
max_request_kib = 512
command_overhead_us = 50.0
small_write_penalty_us = 0.0
[[fs]]
type = "ext4"
device = "vda"
mount = "disk""#;

fn run(sc: &Scenario, preset: &str) -> RunReport {
    simulate(
        sc,
        &kernel::preset(preset).unwrap(),
        1,
        &RunOptions::default(),
    )
}

fn node_stat(r: &RunReport, nid: usize, name: &str) -> u64 {
    r.nodes[nid].vmstat[name]
}

/// A dd that fits in its node, and within the node's dirty share (4.8+
/// `node_dirty_ok` sends `__GFP_WRITE` allocations past a node over it),
/// takes its pages there (`build_zonelists`: the local node first);
/// bound to the other node, from that one.
#[test]
fn a_task_allocates_from_its_own_node_first() {
    for preset in ["6.1", "3.3"] {
        for (node, other) in [(1, 0), (0, 1)] {
            let r = run(&two_nodes(32, node), preset);
            let (own, away) = (
                node_stat(&r, node as usize, "pgalloc"),
                node_stat(&r, other, "pgalloc"),
            );
            assert!(own >= 32 * 256, "{preset} node {node}: {own}");
            assert!(away * 50 < own, "{preset} node {node}: {away} of {own}");
        }
    }
}

/// A dd of four times a node: its node fills, the page cache spills to
/// the other node (the fast path takes any zone of the zonelist above
/// its low watermark), and each node's kswapd reclaims its own node.
/// The machine's /proc/vmstat counters are the nodes' sums.
#[test]
fn each_node_has_its_kswapd_and_the_machine_sums_them() {
    let sc = two_nodes(1024, 1);
    for preset in ["6.1", "6.1+mglru", "3.3"] {
        let r = run(&sc, preset);
        assert_eq!(r.nodes.len(), 2);
        for n in &r.nodes {
            assert!(n.kswapd_awake_seconds > 1.0, "{preset}: {n:?}");
            assert!(n.vmstat["pgsteal_kswapd"] > 10_000, "{preset}: {n:?}");
            assert!(n.vmstat["pgalloc"] > 50_000, "{preset}: {n:?}");
        }
        let sum = |name: &str| r.nodes.iter().map(|n| n.vmstat[name]).sum::<u64>();
        assert_eq!(
            sum("pgsteal_kswapd") as i64,
            r.vmstat["pgsteal_kswapd"],
            "{preset}"
        );
        let by_zone_type: i64 = ["dma", "dma32", "normal"]
            .iter()
            .map(|z| r.vmstat[&format!("pgalloc_{z}")])
            .sum();
        assert_eq!(sum("pgalloc") as i64, by_zone_type, "{preset}");
        let zones: Vec<&str> = r.zoneinfo.keys().map(String::as_str).collect();
        assert_eq!(
            zones,
            ["node0_dma", "node0_dma32", "node0_normal", "node1_normal"]
        );
        assert_eq!(r.vmstat["nr_vmscan_write"], 0, "{preset}");
        assert_eq!(r.vmstat["nr_dirtied"], 1024 * 256, "{preset}");
    }
}

/// `[[machine.node]]` with one node is the machine `[[machine.zone]]`
/// describes: the same run, figure for figure, and (6.1 keeping its LRU
/// lists per node) the same one-node `nodes` section, whose counters are
/// the machine's.
#[test]
fn one_node_is_the_machine_of_zones() {
    let zones = r#"cpus = 2
[[machine.zone]]
name = "DMA"
size_mib = 15
[[machine.zone]]
name = "DMA32"
size_mib = 241"#;
    let node = r#"[[machine.node]]
cpus = 2
[[machine.node.zone]]
name = "DMA"
size_mib = 15
[[machine.node.zone]]
name = "DMA32"
size_mib = 241"#;
    let reports: Vec<String> = [zones, node]
        .iter()
        .map(|machine| {
            let text = format!(
                "kernel = \"6.1\"\n[machine]\n{machine}\n{DEVICE}\n[[task]]\n\
                 command = \"dd if=/dev/zero of=disk/f bs=32k count=16384\"\n"
            );
            let sc = parse_scenario(&text, "one.toml").unwrap();
            let r = run(&sc, "6.1");
            assert_eq!(r.nodes.len(), 1);
            let n = &r.nodes[0];
            assert_eq!(
                n.vmstat["pgsteal_kswapd"],
                r.vmstat["pgsteal_kswapd"] as u64
            );
            assert_eq!(n.zones, ["dma", "dma32"]);
            assert!(
                run(&sc, "3.3").nodes.is_empty(),
                "zone LRU: no node section"
            );
            serde_json::to_string(&r).unwrap()
        })
        .collect();
    assert_eq!(reports[0], reports[1]);
}

/// 4.8+: a node over its share of the dirty limit is passed over by page
/// cache writes (`node_dirty_ok`), so a dd of 64 MiB bound to a 256 MiB
/// node (dirty share about 50 MiB) spills some pages to the other node
/// although its own has room; 3.3's per-zone limits do the same zone by
/// zone.
#[test]
fn writes_past_the_node_dirty_share_go_to_the_other_node() {
    let r = run(&two_nodes(64, 1), "6.1");
    let (own, away) = (node_stat(&r, 1, "pgalloc"), node_stat(&r, 0, "pgalloc"));
    assert!(away > 1000 && own > 10_000, "{own} {away}");
    assert!(r.nodes[1].nr_free_pages > 20_000, "{:?}", r.nodes[1]);
}

/// Same NUMA scenario, same seed: the same report, byte for byte.
#[test]
fn numa_runs_are_deterministic() {
    let sc = two_nodes(512, 0);
    let a = serde_json::to_string(&run(&sc, "6.1")).unwrap();
    let b = serde_json::to_string(&run(&sc, "6.1")).unwrap();
    assert_eq!(a, b);
}

/// Every invariant (free and LRU list lengths against the frames, each
/// node's lists against its zones' counts, dirty and writeback counts)
/// holds after every event of a NUMA run, classic LRU and MGLRU, and the
/// per-zone LRU lists of 3.3.
#[test]
fn numa_runs_keep_every_invariant() {
    let sc = two_nodes(600, 1);
    for preset in ["6.1", "6.1+mglru", "3.3"] {
        let opts = RunOptions {
            check_every_event: true,
            ..RunOptions::default()
        };
        let r = simulate(&sc, &kernel::preset(preset).unwrap(), 1, &opts);
        common::assert_no_violations(&r, preset);
        assert!(r.vmstat["pgsteal_kswapd"] > 0, "{preset}: reclaim ran");
    }
}

/// MGLRU: each node's report lists its generations (`lru_gen`), whose
/// pages are the node's LRU pages; the classic LRU has no such list.
#[test]
fn mglru_nodes_list_their_generations() {
    let sc = two_nodes(600, 1);
    let r = run(&sc, "6.1+mglru");
    for n in &r.nodes {
        let g = n.lru_gen.as_ref().expect("MGLRU generations");
        assert!(g.max_seq >= g.min_seq[0].max(g.min_seq[1]));
        let file: u64 = g.generations.iter().map(|gen| gen[2]).sum();
        assert_eq!(file, n.nr_file_pages, "node {}", n.nid);
        assert_eq!(g.generations.last().unwrap()[0], g.max_seq);
    }
    assert!(run(&sc, "6.1").nodes.iter().all(|n| n.lru_gen.is_none()));
}
