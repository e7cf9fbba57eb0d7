//! `[[machine.node]]`: NUMA machines in scenario files, and what is
//! refused about them.

use super::*;

/// Node 0 (DMA, DMA32, Normal; CPU 0) and node 1 (Normal; CPU 1).
const TWO_NODES: &str = include_str!("../../tests/fixtures/two-nodes-machine.toml");

/// A two-node machine (node 0: DMA, DMA32, Normal; node 1: a zone of
/// type `node1_zone`) with `machine_extra` added to `[machine]` and
/// `task_extra` to the task.
fn two_nodes(machine_extra: &str, node1_zone: &str, task_extra: &str) -> String {
    let nodes = TWO_NODES.replace(
        "cpus = 1\n[[machine.node.zone]]\nname = \"Normal\"\nsize_mib = 256",
        &format!("cpus = 1\n[[machine.node.zone]]\nname = \"{node1_zone}\"\nsize_mib = 256"),
    );
    with_machine(&format!("{machine_extra}\n{nodes}"), task_extra)
}

/// A scenario whose `[machine]` holds `machine`, its task `task_extra`.
fn with_machine(machine: &str, task_extra: &str) -> String {
    format!(
        r#"kernel = "6.1"
[machine]
{machine}
[[device]]
name = "sdb"
model = "usb-stick"
capacity_gib = 16
seq_write_mib_per_s = 20
max_request_kib = 120
[[fs]]
type = "xfs"
device = "sdb"
mount = "disk"
[[task]]
command = "dd if=/dev/zero of=disk/f bs=32k count=10"
{task_extra}
"#
    )
}

/// The problems of a scenario text that must not parse.
fn problems(text: &str) -> Vec<Problem> {
    parse_scenario(text, "n.toml").unwrap_err().problems
}

fn has(problems: &[Problem], key: &str, words: &str) -> bool {
    problems
        .iter()
        .any(|p| p.key.as_deref() == Some(key) && p.message.contains(words))
}

#[test]
fn nodes_hold_their_zones_in_order() {
    let sc = parse_scenario(&two_nodes("", "Normal", "node = 1"), "n.toml").unwrap();
    let m = &sc.machine;
    assert_eq!(m.cpus, 2, "the sum of the nodes' CPUs");
    assert_eq!(m.zones.len(), 4);
    assert_eq!(m.zones[3].kind, ZoneKind::Normal);
    assert_eq!(
        m.nodes,
        vec![
            NodeConfig { cpus: 1, zones: 3 },
            NodeConfig { cpus: 1, zones: 1 }
        ]
    );
    assert_eq!(m.node_layout(), m.nodes);
    assert_eq!(sc.tasks[0].node, Some(1));
}

/// A machine with only `[[machine.zone]]` is one node of every CPU and
/// zone.
#[test]
fn zones_alone_make_one_node() {
    // Node 0 of the fixture as the machine's zones.
    let node0 = TWO_NODES
        .split("[[machine.node]]\ncpus = 1\n")
        .nth(1)
        .unwrap();
    let machine = format!(
        "cpus = 3\n{}",
        node0.replace("machine.node.zone", "machine.zone")
    );
    let sc = parse_scenario(&with_machine(&machine, ""), "one.toml").unwrap();
    assert!(sc.machine.nodes.is_empty());
    assert_eq!(
        sc.machine.node_layout(),
        vec![NodeConfig { cpus: 3, zones: 3 }]
    );
}

/// Node 1's memory lies above node 0's: after node 0's Normal zone it
/// cannot have DMA32, and DMA is always node 0's; after a node ending in
/// DMA32 (a small machine below 4 GiB) the next may start with DMA32.
#[test]
fn nodes_hold_memory_in_node_order() {
    let p = problems(&two_nodes("", "DMA32", ""));
    assert!(
        has(
            &p,
            "machine.node[1].zone[0].name",
            "allowed: Normal or above"
        ),
        "{p:?}"
    );
    let p = problems(&two_nodes("", "DMA", ""));
    assert!(
        has(&p, "machine.node[1].zone[0].name", "DMA is node 0's"),
        "{p:?}"
    );
    let small = two_nodes("", "DMA32", "").replace(
        "[[machine.node.zone]]\nname = \"Normal\"\nsize_mib = 41\n",
        "",
    );
    let sc = parse_scenario(&small, "small.toml").unwrap();
    assert_eq!(sc.machine.zones.len(), 3);
}

#[test]
fn cpus_must_be_the_nodes_sum() {
    let p = problems(&two_nodes("cpus = 4", "Normal", ""));
    assert!(
        has(&p, "machine.cpus", "the [[machine.node]] tables have 2"),
        "{p:?}"
    );
}

#[test]
fn zones_and_nodes_do_not_mix() {
    let text = two_nodes("", "Normal", "").replace(
        "[machine]\n\n",
        "[machine]\n[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 64\n",
    );
    let p = problems(&text);
    assert!(has(&p, "machine.zone", "allowed: one of them"), "{p:?}");
}

#[test]
fn a_task_names_an_existing_node() {
    let p = problems(&two_nodes("", "Normal", "node = 2"));
    assert!(
        has(&p, "task[0].node", "no node 2; allowed: 0 to 1"),
        "{p:?}"
    );
}

#[test]
fn a_machine_without_memory_is_refused() {
    let text = two_nodes("", "Normal", "");
    let start = text.find("[[machine.node]]").unwrap();
    let end = text.find("[[device]]").unwrap();
    let p = problems(&format!("{}{}", &text[..start], &text[end..]));
    assert!(has(&p, "machine.zone", "[[machine.node]] tables"), "{p:?}");
}

#[test]
fn a_node_needs_a_zone() {
    let text = two_nodes("", "Normal", "").replace(
        "[[machine.node]]\ncpus = 1\n[[machine.node.zone]]\nname = \"Normal\"\nsize_mib = 256\n",
        "[[machine.node]]\ncpus = 1\n",
    );
    let p = problems(&text);
    assert!(
        has(&p, "machine.node[1].zone", "missing required table"),
        "{p:?}"
    );
}
