//! The keys of a `[[device]]` table.

use super::sections::{int, key, RAID0, SERIAL_OR_SSD, SSD};
use super::{Default, IntRule, Key, Type};

pub(super) const DEVICE_KEYS: &[Key] = &[
    Key {
        doc: "Device name, unique; filesystems, swap and raid0 members refer to it.",
        example: "name = \"sdb\"",
        ..key("name", Type::Str, "", Default::Required)
    },
    Key {
        doc: "Performance model.",
        example: "model = \"usb-stick\"",
        ..key(
            "model",
            Type::Enum(&["usb-stick", "disk", "ssd", "raid0"]),
            "",
            Default::Required,
        )
    },
    Key {
        doc: "Capacity.",
        example: "capacity_gib = 16",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key("capacity_gib", int(1, 65_536), "GiB", Default::Required)
    },
    Key {
        doc: "Sequential write throughput of large requests.",
        example: "seq_write_mib_per_s = 19.53",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key(
            "seq_write_mib_per_s",
            Type::Float {
                min: 0.0,
                min_inclusive: false,
                max: 1_000_000.0,
            },
            "MiB/s",
            Default::Required,
        )
    },
    Key {
        doc: "Largest request the device takes (max_sectors_kb), a multiple of one \
                  4 KiB page.",
        example: "max_request_kib = 120",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key(
            "max_request_kib",
            Type::Int {
                min: 4,
                max: 65_536,
                rule: IntRule::MultipleOf(4),
            },
            "KiB",
            Default::Required,
        )
    },
    Key {
        doc: "Fixed controller time per command.",
        example: "command_overhead_us = 250.0",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key(
            "command_overhead_us",
            Type::Float {
                min: 0.0,
                min_inclusive: true,
                max: 10_000_000.0,
            },
            "µs",
            Default::Float(0.0),
        )
    },
    Key {
        doc: "Extra time of a small or non-sequential write (seek and rotation, or \
                  flash-translation work).",
        example: "small_write_penalty_us = 3000.0",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key(
            "small_write_penalty_us",
            Type::Float {
                min: 0.0,
                min_inclusive: true,
                max: 10_000_000.0,
            },
            "µs",
            Default::Float(0.0),
        )
    },
    Key {
        doc: "Request queue length (/sys/block/*/queue/nr_requests).",
        example: "nr_requests = 128",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key("nr_requests", int(4, 4096), "requests", Default::Int(128))
    },
    Key {
        doc: "nr_requests when the disk was registered (the driver's default: blk-mq \
                  sizes it from the tag set, 256 for a virtio disk with QEMU's 256-entry \
                  queue). Writeback throttling (blk-mq presets) sizes its limits from it \
                  once (`wbt_init` → `blk_queue_depth`); a later write to \
                  queue/nr_requests changes the request pool, not those limits.",
        example: "boot_nr_requests = 256",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key(
            "boot_nr_requests",
            int(4, 4096),
            "requests",
            Default::Absent("nr_requests"),
        )
    },
    Key {
        doc: "blk-mq hardware queues (virtio-blk's num-queues: QEMU gives one per \
                  vCPU). A request takes a tag from the queue of the CPU it is submitted \
                  on and each queue has nr_requests tags, so a CPU whose queue is full \
                  waits though the other's has room. The single-queue presets have one \
                  pool.",
        example: "hw_queues = 2",
        only: Some(("model", SERIAL_OR_SSD)),
        ..key("hw_queues", int(1, 64), "queues", Default::Int(1))
    },
    Key {
        doc: "How long before the workload starts the disk was registered (its \
                  bdi's `wb_init`, which sets `wb->last_old_flush`): the flusher's \
                  periodic writeback (`wb_check_old_data_flush`) first runs \
                  dirty_writeback_centisecs after the registration, then that long \
                  after each run. A guest that loads its disk driver just before the \
                  workload has it a fraction of a second before; 0: at the start.",
        example: "registered_before_start_ms = 300",
        ..key(
            "registered_before_start_ms",
            int(0, 3_600_000),
            "ms",
            Default::Int(0),
        )
    },
    Key {
        doc: "Commands in flight at once (NCQ depth). An SSD without queue_depth \
                  runs at depth 1: one command at a time.",
        example: "queue_depth = 31",
        only: Some(("model", SSD)),
        ..key("queue_depth", int(1, 256), "commands", Default::Int(1))
    },
    Key {
        doc: "Flash channels working in parallel. An SSD without channels has one.",
        example: "channels = 8",
        only: Some(("model", SSD)),
        ..key("channels", int(1, 64), "channels", Default::Int(1))
    },
    Key {
        doc: "Names of distinct earlier devices that are not raid0, in array order.",
        example: "members = [\"ssd0\", \"ssd1\"]",
        only: Some(("model", RAID0)),
        ..key(
            "members",
            Type::Names { min: 2, max: 64 },
            "",
            Default::Required,
        )
    },
    Key {
        doc: "Stripe chunk size, a power of two (mdadm's default is 512).",
        example: "chunk_kib = 512",
        only: Some(("model", RAID0)),
        ..key(
            "chunk_kib",
            Type::Int {
                min: 4,
                max: 1 << 20,
                rule: IntRule::PowerOfTwo,
            },
            "KiB",
            Default::Required,
        )
    },
];
