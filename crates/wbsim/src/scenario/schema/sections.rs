//! The table of sections and keys.

use super::device_keys::DEVICE_KEYS;
use super::{
    Default, IntRule, Key, Kind, NamedKeys, Section, Type, MAX_COARSE_MEMORY_MIB, MAX_TIME_LIMIT_S,
};

pub(super) const fn int(min: i64, max: i64) -> Type {
    Type::Int {
        min,
        max,
        rule: IntRule::None,
    }
}

pub(super) const fn key(name: &'static str, ty: Type, unit: &'static str, default: Default) -> Key {
    Key {
        name,
        ty,
        unit,
        default,
        doc: "",
        example: "",
        only: None,
    }
}

pub(super) const SERIAL_OR_SSD: &[&str] = &["usb-stick", "disk", "ssd"];
pub(super) const SSD: &[&str] = &["ssd"];
pub(super) const RAID0: &[&str] = &["raid0"];
const XFS: &[&str] = &["xfs"];

/// Every section, in the order the reference lists them.
pub static SECTIONS: &[Section] = &[
    Section {
        path: "",
        kind: Kind::Table,
        required: true,
        doc: "The top level of the file: the kernel to model and the sections below.",
        keys: &[Key {
            doc: "Kernel variant to model: the name of a built-in kernel preset \
                  (`wbsim run --kernel` overrides it).",
            example: "kernel = \"3.0-vanilla\"",
            ..key("kernel", Type::KernelPreset, "", Default::Required)
        }],
        named: None,
    },
    Section {
        path: "machine",
        kind: Kind::Table,
        required: true,
        doc: "CPUs, timer frequency and memory of the simulated machine.",
        keys: &[
            Key {
                doc: "Number of CPUs.",
                example: "cpus = 4",
                ..key("cpus", int(1, 256), "CPUs", Default::Int(2))
            },
            Key {
                doc: "Timer frequency (CONFIG_HZ): the length of a jiffy.",
                example: "hz = 250",
                ..key("hz", Type::IntOf(&[100, 250, 300, 1000]), "Hz", Default::Int(1000))
            },
            Key {
                doc: "Which CPU takes each device interrupt: `first-cpu` sends all to CPU 0 \
                      (x86 physical destination mode), `round-robin` rotates them over the \
                      CPUs as KVM's lowest-priority delivery does. The interrupt's time is \
                      charged to the task running on that CPU.",
                example: "irq_delivery = \"round-robin\"",
                ..key(
                    "irq_delivery",
                    Type::Enum(&["first-cpu", "round-robin"]),
                    "",
                    Default::Str("first-cpu"),
                )
            },
            Key {
                doc: "Time from a wake-up to the woken task running on an idle CPU: the \
                      CPU's way out of its idle state and, in a virtual machine, the host's \
                      scheduling of the vCPU's thread. A task woken onto a busy CPU is not \
                      delayed (it waits for or preempts the running one). Bare metal: a \
                      few microseconds, less than a step.",
                example: "idle_wakeup_us = 700",
                ..key("idle_wakeup_us", int(0, 1_000_000), "µs", Default::Int(0))
            },
            Key {
                doc: "The smoothed global dirty limit (`dom->dirty_limit`, 3.2+'s \
                      `global_dirty_limit`) the kernel set at boot, in `writeback_set_ratelimit` \
                      when its last CPU came online: the threshold of the memory free then, \
                      before the initramfs was unpacked or deferred struct pages freed. It \
                      follows the threshold up at once and down by 1/32 of the gap per 200 ms \
                      of throttled writing, so a boot value above the threshold raises the \
                      writers' setpoint for tens of seconds. On a real kernel: the `limit` of \
                      the first `global_dirty_state` event. Kernels before 3.2 have no such \
                      limit and ignore it.",
                example: "boot_dirty_limit_pages = 10456",
                ..key(
                    "boot_dirty_limit_pages",
                    int(1, 1 << 40),
                    "pages",
                    Default::Absent("the threshold at the workload's start"),
                )
            },
            Key {
                doc: "vm.min_free_kbytes. The high watermark (1.5 x min) must stay below the \
                      zones' memory.",
                example: "min_free_kbytes = 11584",
                ..key(
                    "min_free_kbytes",
                    int(128, 1 << 24),
                    "KiB",
                    Default::Absent(
                        "the kernel's boot-time value, sqrt(16 x lowmem KiB) clamped to 128..=65536",
                    ),
                )
            },
            Key {
                doc: "The size of the simulated page. 4 is page granularity. At a coarser \
                      unit each frame, LRU entry and page-cache entry stands for unit_kib / 4 \
                      pages of 4 KiB, so a machine of terabytes fits the 16 Mi frames, and the \
                      run stands for the same machine at 4 KiB: every amount the kernel sets \
                      in bytes or in pages (dirty_bytes, min_free_kbytes, SWAP_CLUSTER_MAX, \
                      the pagevec, the per-CPU thresholds, a pageblock) keeps its bytes in \
                      whole pages of the unit, per-page CPU costs are charged for each 4 KiB \
                      page, and reports still count 4 KiB pages. Every size a workload writes \
                      (dd's bs) must be a multiple of the unit; fs_mark, iozone, memtouch, \
                      mapwrite, FUSE filesystems, text_pages, --trace and wbsim lab need \
                      page granularity.",
                example: "unit_kib = 64",
                ..key(
                    "unit_kib",
                    Type::IntOf(&[4, 8, 16, 32, 64, 128, 256, 512, 1024]),
                    "KiB",
                    Default::Int(4),
                )
            },
            Key {
                doc: "Total memory; when given, the zone sizes must add up exactly to it. \
                      Memory is bounded to 16 Mi page frames: 64 GiB of 4 KiB pages, more \
                      at a coarser unit_kib.",
                example: "total_mib = 3765",
                ..key(
                    "total_mib",
                    int(1, MAX_COARSE_MEMORY_MIB),
                    "MiB",
                    Default::Absent("the sum of the zones, unchecked"),
                )
            },
        ],
        named: None,
    },
    Section {
        path: "machine.zone",
        kind: Kind::ArrayOfTables,
        required: false,
        doc: "Memory zones of a one-node machine, in ascending order DMA, DMA32, Normal, \
              each at most once; together at most 16 Mi page frames (64 GiB at 4 KiB \
              pages). Required unless the machine has \
              [[machine.node]] tables instead.",
        keys: ZONE_KEYS,
        named: None,
    },
    Section {
        path: "machine.node",
        kind: Kind::ArrayOfTables,
        required: false,
        doc: "NUMA nodes, in node order, each with its CPUs and its [[machine.node.zone]] \
              tables (in place of [[machine.zone]]). Nodes hold memory in node order, \
              node 0 the lowest: DMA is node 0's, and a node's zones start no lower \
              than the previous node's end (DMA32 may span a node boundary below \
              4 GiB). Each node has its own kswapd (bound to the \
              node's CPUs), and on 4.8+ profiles its own LRU lists and dirty share \
              (`node_dirty_ok`); an allocation tries its CPU's node first, then the \
              others in node order (`build_zonelists`). Reports gain a `nodes` section.",
        keys: &[Key {
            doc: "The node's CPUs: the next this many of the machine's (node 0 has CPUs \
                  0.., node 1 the ones after). The machine's `cpus`, if given, must be \
                  their sum.",
            example: "cpus = 2",
            ..key("cpus", int(1, 256), "CPUs", Default::Required)
        }],
        named: None,
    },
    Section {
        path: "machine.node.zone",
        kind: Kind::ArrayOfTables,
        required: true,
        doc: "The node's memory zones, in ascending order, each at most once; all \
              nodes together at most 16 Mi page frames (64 GiB at 4 KiB pages).",
        keys: ZONE_KEYS,
        named: None,
    },
    Section {
        path: "device",
        kind: Kind::ArrayOfTables,
        required: true,
        doc: "Block devices. `usb-stick` and `disk` serve one command at a time; `ssd` \
              queues up to queue_depth commands over channels; `raid0` stripes over \
              earlier devices (members), and takes its capacity, speed, max_request_kib and \
              nr_requests from them (capacity and speed summed over the members).",
        keys: DEVICE_KEYS,
        named: None,
    },
    Section {
        path: "fs",
        kind: Kind::ArrayOfTables,
        required: true,
        doc: "Filesystems, each on a device and mounted at a relative path.",
        keys: &[
            Key {
                doc: "Filesystem type.",
                example: "type = \"xfs\"",
                ..key(
                    "type",
                    Type::Enum(&["xfs", "ext4", "btrfs", "fuse-ntfs"]),
                    "",
                    Default::Required,
                )
            },
            Key {
                doc: "Name of a [[device]].",
                example: "device = \"sdb\"",
                ..key("device", Type::Str, "", Default::Required)
            },
            Key {
                doc: "Mount point: a relative path without leading or trailing '/', unique; \
                      task files live under it.",
                example: "mount = \"disk\"",
                ..key("mount", Type::Str, "", Default::Required)
            },
            Key {
                doc: "Allocation groups (mkfs.xfs agcount; 4 for a single disk).",
                example: "ag_count = 8",
                only: Some(("type", XFS)),
                ..key("ag_count", int(1, 10_000), "groups", Default::Int(4))
            },
            Key {
                doc: "On-disk inode size (256 for v4, 512 for v5/CRC).",
                example: "inode_size = 512",
                only: Some(("type", XFS)),
                ..key(
                    "inode_size",
                    Type::IntOf(&[256, 512, 1024, 2048]),
                    "bytes",
                    Default::Int(256),
                )
            },
        ],
        named: None,
    },
    Section {
        path: "sysctl",
        kind: Kind::Table,
        required: false,
        doc: "The vm.* sysctls, with the ranges the kernel's proc handlers accept.",
        keys: &[
            Key {
                doc: "vm.dirty_ratio: the dirty limit as a percentage of dirtyable memory. \
                      0 needs dirty_bytes.",
                example: "dirty_ratio = 20",
                ..key("dirty_ratio", int(0, 100), "%", Default::Int(20))
            },
            Key {
                doc: "vm.dirty_background_ratio: where background writeback starts.",
                example: "dirty_background_ratio = 10",
                ..key("dirty_background_ratio", int(0, 100), "%", Default::Int(10))
            },
            Key {
                doc: "vm.dirty_bytes: the dirty limit in bytes, used instead of dirty_ratio \
                      when not 0; otherwise at least 8192 (2 pages).",
                example: "dirty_bytes = 104857600",
                ..key("dirty_bytes", int(0, 1 << 40), "bytes", Default::Int(0))
            },
            Key {
                doc: "vm.dirty_background_bytes: used instead of dirty_background_ratio \
                      when not 0.",
                example: "dirty_background_bytes = 52428800",
                ..key("dirty_background_bytes", int(0, 1 << 40), "bytes", Default::Int(0))
            },
            Key {
                doc: "vm.dirty_expire_centisecs: age at which dirty data is written back.",
                example: "dirty_expire_centisecs = 3000",
                ..key(
                    "dirty_expire_centisecs",
                    int(0, i32::MAX as i64),
                    "centiseconds",
                    Default::Int(3000),
                )
            },
            Key {
                doc: "vm.dirty_writeback_centisecs: period of the flusher's wakeups.",
                example: "dirty_writeback_centisecs = 500",
                ..key(
                    "dirty_writeback_centisecs",
                    int(0, i32::MAX as i64),
                    "centiseconds",
                    Default::Int(500),
                )
            },
            Key {
                doc: "vm.swappiness: preference for reclaiming anonymous memory.",
                example: "swappiness = 60",
                ..key("swappiness", int(0, 100), "", Default::Int(60))
            },
            Key {
                doc: "vm.laptop_mode.",
                example: "laptop_mode = true",
                ..key("laptop_mode", Type::Bool, "", Default::Bool(false))
            },
            Key {
                doc: "vm.watermark_scale_factor (4.6+): the gap between a zone's min, low \
                      and high watermarks in ten-thousandths of the zone, when more than a \
                      quarter of min. Kernels before 4.6 (the profile's \
                      `watermark_scale_factor = false`) ignore it.",
                example: "watermark_scale_factor = 10",
                ..key("watermark_scale_factor", int(1, 3000), "1/10000", Default::Int(10))
            },
            Key {
                doc: "vm.watermark_boost_factor (5.0+): how far a fallback that fragments \
                      a pageblock may boost the zone's watermarks, in ten-thousandths of its \
                      high watermark (at least a pageblock); 0 turns boosting off. Kernels \
                      before 5.0 (the profile's `watermark_boosting = false`) ignore it.",
                example: "watermark_boost_factor = 0",
                ..key("watermark_boost_factor", int(0, 100_000), "1/10000", Default::Int(15_000))
            },
        ],
        named: None,
    },
    Section {
        path: "swap",
        kind: Kind::Table,
        required: false,
        doc: "A swap partition at the end of a device; without it anonymous memory is \
              never reclaimed.",
        keys: &[
            Key {
                doc: "Name of a [[device]].",
                example: "device = \"sdb\"",
                ..key("device", Type::Str, "", Default::Required)
            },
            Key {
                doc: "Partition size; at most half of the device.",
                example: "size_mib = 2048",
                ..key("size_mib", int(1, 1 << 20), "MiB", Default::Required)
            },
        ],
        named: None,
    },
    Section {
        path: "task",
        kind: Kind::ArrayOfTables,
        required: true,
        doc: "Workload tasks; all start at time 0 unless `after` is given.",
        keys: &[
            Key {
                doc: "Task name, for `after` and reports.",
                example: "name = \"dd\"",
                ..key("name", Type::Str, "", Default::Absent("`taskN`, N its index"))
            },
            Key {
                doc: "The command line exactly as typed, `$((...))` arithmetic included: one \
                      of the programs a task may run (dd, fs_mark, memtouch, mapwrite, \
                      iozone, sync). Files it writes must be under a [[fs]] mount.",
                example: "command = \"dd if=/dev/zero of=disk/zeroes bs=32k count=1000\"",
                ..key("command", Type::Str, "", Default::Required)
            },
            Key {
                doc: "Start when the earlier task of this name exits (a shell's `a; b`).",
                example: "after = \"dd\"",
                ..key("after", Type::Str, "", Default::Absent("start at time 0"))
            },
            Key {
                doc: "Pages of its program's text (code and read-only data) the task \
                      touches. The file is held in memory from boot (an initramfs, as \
                      `wbsim lab` boots; tmpfs pages, on the anon lists); when the task \
                      exits, each page is marked accessed (`zap_pte_range`), so a page \
                      two tasks of one file touched is activated at the second exit \
                      (`pgactivate`) on the classic LRU.",
                example: "text_pages = 200",
                ..key("text_pages", int(0, 1_000_000), "pages", Default::Int(0))
            },
            Key {
                doc: "The program file whose text `text_pages` counts; tasks naming the \
                      same file share its pages.",
                example: "text_file = \"/init\"",
                ..key("text_file", Type::Str, "", Default::Absent("the command's program name"))
            },
            Key {
                doc: "Run the task on the CPUs of this NUMA node only (`numactl \
                      --cpunodebind`); its page-cache pages then come from that node \
                      first (the default local policy). Must name a [[machine.node]].",
                example: "node = 1",
                ..key("node", int(0, 63), "", Default::Absent("any CPU of the machine"))
            },
        ],
        named: None,
    },
    Section {
        path: "run",
        kind: Kind::Table,
        required: false,
        doc: "How to run the simulation.",
        keys: &[
            Key {
                doc: "Seed of the first run; run i uses a seed derived from it.",
                example: "seed = 1",
                ..key("seed", int(0, i64::MAX), "", Default::Int(1))
            },
            Key {
                doc: "Number of runs.",
                example: "runs = 5",
                ..key("runs", int(1, 1000), "runs", Default::Int(1))
            },
            Key {
                doc: "Simulated time after which a run stops (outcome `time-limit`).",
                example: "time_limit_s = 3600",
                ..key("time_limit_s", int(1, MAX_TIME_LIMIT_S), "s", Default::Int(7200))
            },
        ],
        named: None,
    },
    Section {
        path: "cpu_cost",
        kind: Kind::Table,
        required: false,
        doc: "CPU costs that replace the built-in ones of `crates/wbsim/src/sim/cost.rs`, \
              by name.",
        keys: &[],
        named: Some(NamedKeys {
            names: crate::sim::cost::COST_NAMES,
            template: Key {
                doc: "CPU cost.",
                example: "",
                ..key(
                    "",
                    int(0, 10_000_000_000),
                    "ns",
                    Default::Absent("built in"),
                )
            },
        }),
    },
];

/// The keys of a zone, in [[machine.zone]] and [[machine.node.zone]].
const ZONE_KEYS: &[Key] = &[
    Key {
        doc: "Zone type.",
        example: "name = \"DMA32\"",
        ..key(
            "name",
            Type::Enum(&["DMA", "DMA32", "Normal"]),
            "",
            Default::Required,
        )
    },
    Key {
        doc: "Size of the zone.",
        example: "size_mib = 3246",
        ..key(
            "size_mib",
            int(1, MAX_COARSE_MEMORY_MIB),
            "MiB",
            Default::Required,
        )
    },
    Key {
        doc: "Part of the zone the kernel holds for the whole run (slab, page \
              tables, early allocations): never free, never on an LRU list. Must be \
              less than size_mib.",
        example: "kernel_mib = 120",
        ..key(
            "kernel_mib",
            int(0, MAX_COARSE_MEMORY_MIB - 1),
            "MiB",
            Default::Int(0),
        )
    },
    Key {
        doc: "More of the zone the kernel holds, in KiB (a multiple of 4), added to \
              kernel_mib: for a holding smaller than a MiB, which still decides a \
              pageblock's migratetype (Debian 6.1's DMA holds 128 KiB at dd start, in its \
              first pageblock, so that block is UNMOVABLE).",
        example: "kernel_kib = 128",
        ..key("kernel_kib", int(0, 1 << 26), "KiB", Default::Int(0))
    },
    Key {
        doc: "Pages the page allocator managed when the kernel set the zone's \
              watermarks, lowmem_reserve and per-CPU batches at boot: 3.8+ sizes them \
              by `zone_managed_pages`, which leaves out the boot-time memblock \
              reservations (the struct page array, the kernel image, the initrd until \
              it is freed). On a real guest: a zone's share of min_free_kbytes in its \
              zoneinfo `min`, or the zone below's `protection` x 256. At most size_mib.",
        example: "managed_mib = 192",
        ..key(
            "managed_mib",
            int(1, MAX_COARSE_MEMORY_MIB),
            "MiB",
            Default::Absent("size_mib (the zone's present pages, as 3.0 - 3.7 size them)"),
        )
    },
];
