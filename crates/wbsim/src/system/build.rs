//! Boot: build a `System` from a scenario, a kernel profile and a seed.

use super::task::TaskKind;
use super::System;
use crate::block::BlockHost;
use crate::block::{BlockLayer, RequestQueue};
use crate::device::Device;
use crate::fs::daemon::{DaemonKind, FsDaemonState};
use crate::fs::metadata::MetadataState;
use crate::fs::metadata::MetadataWrites;
use crate::fs::Filesystems;
use crate::fs::FsHost;
use crate::fs::{FsInstance, SECTORS_PER_GIB};
use crate::kernel::KernelProfile;
use crate::mm::inode::{Inode, MappingKind};
use crate::mm::page::{list_add_tail, Frames, Holder};
use crate::mm::swap::{AnonRegion, SwapArea};
use crate::mm::zone::{
    default_min_free_kbytes, setup_lowmem_reserve_nodes, setup_watermarks, Zone,
};
use crate::mm::Memory;
use crate::reclaim::Reclaim;
use crate::scenario::Program;
use crate::scenario::{FsType, Scenario, ZoneKind};
use crate::sched::{Core, CoreConfig, HasCore, TaskStart};
use crate::sim::{CostTable, NS_PER_SEC};
use crate::workload::fsmark_run::FsMarkRunner;
use crate::workload::fsmark_run::{FsMarkRun, FsMarkState};
use crate::workload::iozone_run::IozoneState;
use crate::workload::mapwrite::MapWriteState;
use crate::workload::memtouch::MemTouchState;
use crate::workload::text::Text;
use crate::workload::{Process, Workloads, WriterState};
use crate::writeback::bdi::Bdi;
use crate::writeback::ioless_throttle::IoLessThrottle;
use crate::writeback::Writeback;

/// `sysctl_lowmem_reserve_ratio` (3.0): DMA 256, DMA32 256, Normal 32.
fn lowmem_reserve_ratio(kind: ZoneKind) -> u64 {
    match kind {
        ZoneKind::Dma | ZoneKind::Dma32 => 256,
        ZoneKind::Normal => 32,
    }
}

/// Commit intervals of the filesystems' own threads (defaults): jbd2
/// `JBD2_DEFAULT_MAX_COMMIT_AGE` 5 s, xfssyncd `xfs_syncd_centisecs` 30 s,
/// btrfs `BTRFS_DEFAULT_COMMIT_INTERVAL` 30 s.
fn daemon_interval_s(fs: FsType) -> Option<(DaemonKind, u64)> {
    match fs {
        FsType::Ext4 => Some((DaemonKind::Jbd2, 5)),
        FsType::Xfs => Some((DaemonKind::XfsSyncd, 30)),
        FsType::Btrfs => Some((DaemonKind::BtrfsTransaction, 30)),
        FsType::FuseNtfs => None,
    }
}

/// Sectors of the swap partition on device `dev` (0 if swap is elsewhere).
fn swap_sectors_on(sc: &Scenario, dev: usize) -> u64 {
    sc.swap
        .as_ref()
        .filter(|sw| sc.devices.iter().position(|d| d.name == sw.device) == Some(dev))
        .map_or(0, |sw| sw.size_mib * 2048)
}

/// The filesystem a path (relative, as in the scenario) is on.
fn fs_of(sc: &Scenario, path: &str) -> usize {
    sc.filesystems
        .iter()
        .position(|fc| fc.holds(path))
        .unwrap_or(0)
}

/// `profile` at pages of `unit`: its keys counted in pages
/// (`fs.ext4_io_end_pages`, `fs.xfs_ioend_pages`, `fs.btrfs_bio_max_vecs`,
/// `fs.btrfs_delalloc_write_pages`, `fs.btrfs_mount_tree_pages`) are 4 KiB
/// pages, and become as many bytes in whole pages of the unit, at least
/// one; 0 (not modelled) stays 0 ([`crate::mm::unit`]).
fn profile_at_unit(profile: &KernelProfile, unit: crate::mm::unit::PageUnit) -> KernelProfile {
    let mut p = profile.clone();
    for n in [
        &mut p.ext4_io_end_pages,
        &mut p.xfs_ioend_pages,
        &mut p.btrfs_bio_max_vecs,
        &mut p.btrfs_delalloc_write_pages,
        &mut p.btrfs_mount_tree_pages,
    ] {
        if *n > 0 {
            *n = unit.from_base_pages(u64::from(*n)) as u32;
        }
    }
    p
}

pub fn build_system(sc: &Scenario, profile: &KernelProfile, seed: u64) -> System {
    let ncpus = sc.machine.cpus as usize;
    let unit = sc.machine.unit();

    // Nodes, zones and page frames, all free at boot.
    let layout: Vec<(usize, usize)> = sc
        .machine
        .node_layout()
        .iter()
        .map(|n| (n.cpus as usize, n.zones))
        .collect();
    let nodes = crate::mm::node::build_nodes(&layout);
    let zone_node = crate::mm::node::zone_nodes(&nodes);
    let mut zones = Vec::new();
    let mut start = 0u32;
    for (zi, zc) in sc.machine.zones.iter().enumerate() {
        let pages = unit.pages_of_mib(zc.size_mib);
        let (name, suffix) = match zc.kind {
            ZoneKind::Dma => ("DMA", "dma"),
            ZoneKind::Dma32 => ("DMA32", "dma32"),
            ZoneKind::Normal => ("Normal", "normal"),
        };
        let mut zone = Zone::new(name, suffix, start, pages);
        zone.node = zone_node[zi];
        if let Some(mib) = zc.managed_mib {
            zone.managed_pages = unit.pages_of_mib(mib);
        }
        zones.push(zone);
        start += pages as u32;
    }
    let total_pages = start as u64;
    let min_free_kbytes = sc.machine.min_free_kbytes.unwrap_or_else(|| {
        let managed: u64 = zones.iter().map(|z| z.managed_pages).sum();
        default_min_free_kbytes(managed * unit.base_pages())
    });
    let scale = crate::mm::zone::watermark_scale(profile, &sc.sysctl);
    setup_watermarks(&mut zones, min_free_kbytes, unit.kib(), scale);
    let ratios: Vec<u64> = sc
        .machine
        .zones
        .iter()
        .map(|z| lowmem_reserve_ratio(z.kind))
        .collect();
    let node_zones: Vec<_> = nodes.iter().map(|n| n.zones.clone()).collect();
    setup_lowmem_reserve_nodes(&mut zones, &node_zones, &ratios);
    crate::mm::zone::setup_reserve_pages(&mut zones);
    for z in zones.iter_mut() {
        (z.pcp_high, z.pcp_batch) = crate::mm::pcp::pageset_limits(z.managed_pages, unit);
        z.pcp = vec![Default::default(); ncpus];
        z.free_counter =
            crate::mm::free_counter::FreePagesCounter::for_zone(z, ncpus, profile, unit);
    }
    let zone_frames: Vec<u64> = zones.iter().map(|z| z.present_pages).collect();
    let mut pages = Frames::new(&zone_frames);
    debug_assert_eq!(pages.len() as u64, total_pages);
    for z in zones.iter_mut() {
        for pfn in z.start_pfn..z.start_pfn + z.present_pages as u32 {
            list_add_tail(&mut pages, &mut z.free, pfn);
        }
    }

    // Pages the kernel holds from boot (`kernel_mib` of each zone).
    for (zi, zc) in sc.machine.zones.iter().enumerate() {
        for _ in 0..zc.kernel_pages(unit) {
            let pfn = zones[zi].free.head;
            crate::mm::page::list_del(&mut pages, &mut zones[zi].free, pfn);
            pages[pfn as usize].holder = Holder::Kernel;
        }
    }
    let hz = sc.machine.hz as u64;
    let dirtyable_at_boot = total_pages + 1;
    let dirty_total = if sc.sysctl.dirty_bytes > 0 {
        sc.sysctl.dirty_bytes / unit.bytes()
    } else {
        sc.sysctl.dirty_ratio as u64 * dirtyable_at_boot / 100
    };

    let mut sys = System {
        core: Core::new(CoreConfig {
            hz,
            time_limit_ns: sc.run.time_limit_s.saturating_mul(NS_PER_SEC),
            cost: {
                let mut c = CostTable::default();
                for (name, ns) in &sc.cpu_cost {
                    *c.field_mut(name).expect("validated cost name") = *ns;
                }
                c.scale_per_page(unit.base_pages());
                c
            },
            profile: profile_at_unit(profile, unit),
            sysctl: sc.sysctl.clone(),
            cpus: ncpus,
            irq_delivery: sc.machine.irq_delivery,
            idle_wakeup_ns: sc.machine.idle_wakeup_ns,
        }),
        check_every_event: false,
        checker: None,
        #[cfg(test)]
        test_hook: None,
        series: None,
        next_sample_ns: u64::MAX,
        next_vmstat_refresh_ns: crate::sim::NS_PER_SEC,
        mm: Memory::new(
            pages,
            zones,
            nodes,
            crate::reclaim::node::lru_rules(profile),
            unit,
        ),
        block: BlockLayer::new(),
        wb: Writeback::new(profile, dirty_total, ncpus),
        reclaim: Reclaim::new(profile, sc.machine.node_layout().len()),
        workload: Workloads::new(),
        fs: Filesystems::new(),
        task_kind: Vec::new(),
    };
    if let Some(factor) = crate::mm::buddy::boost_factor(profile, &sc.sysctl) {
        sys.mm.enable_page_mobility(factor);
    }
    if crate::mm::pcp::scaled_lists(profile) {
        sys.mm.use_scaled_pcp();
    }

    // Devices, their queues, bdis and block-device inodes.
    let mut blockdev_inode = Vec::new();
    for (d, dc) in sc.devices.iter().enumerate() {
        // Random stream 1000 + device index, derived from the run seed.
        let device = Device::new(dc, crate::sim::rng_stream(seed, 1000 + d as u64));
        let raid = (dc.model == crate::scenario::DeviceModel::Raid0).then(|| {
            crate::device::raid0::Raid0 {
                members: dc
                    .members
                    .iter()
                    .map(|m| {
                        sc.devices
                            .iter()
                            .position(|x| &x.name == m)
                            .expect("validated")
                    })
                    .collect(),
                chunk_sectors: dc.chunk_kib as u64 * 2,
            }
        });
        // wbt's latency target: 2 ms on a solid-state device
        // (`blk_queue_nonrot`), else 75 ms.
        let rotational = dc.model != crate::scenario::DeviceModel::Ssd;
        let mut queue = RequestQueue::with_rules(
            dc.nr_requests,
            dc.max_request_kib as u64 * 2,
            crate::block::wbt::QueueRules::from_profile(profile),
            rotational,
        );
        queue.size_wbt_from(dc.boot_nr_requests);
        queue.set_hw_queues(dc.hw_queues);
        sys.block.add_device(device, queue, raid);
        let mut bdi = Bdi::new(&dc.name, Some(d));
        bdi.bandwidth = crate::writeback::ioless::BdiBandwidth::new(unit.shift(), 0);
        bdi.registered_before_start_ns = dc.registered_before_start_ms * crate::sim::NS_PER_MS;
        sys.wb.add_bdi(bdi);
        let id = sys.mm.nr_inodes() as u32;
        // The partition starts at 1 MiB (2048 sectors).
        sys.mm
            .add_inode(Inode::new(id, 0, d, MappingKind::BlockDevice, 2048));
        blockdev_inode.push(id);
    }

    // The swap partition at the end of its device.
    if let Some(sw) = &sc.swap {
        let dev = sc
            .devices
            .iter()
            .position(|d| d.name == sw.device)
            .unwrap_or(0);
        let cap = sys.block().device(dev).capacity_sectors;
        let id = sys.mm.nr_inodes() as u32;
        let base = cap - sw.size_mib * 2048;
        sys.mm
            .add_inode(Inode::new(id, 0, dev, MappingKind::Swap, base));
        sys.mm.set_swap(SwapArea::new(
            dev,
            id,
            unit.pages_of_mib(sw.size_mib) as u32,
        ));
    }

    // Filesystems, with placement of data, metadata and logs.
    for (f, fc) in sc.filesystems.iter().enumerate() {
        let dev = sc
            .devices
            .iter()
            .position(|d| d.name == fc.device)
            .unwrap_or(0);
        let cap = sys.block().device(dev).capacity_sectors;
        let bdi = if fc.fs_type == FsType::FuseNtfs {
            let mut b = Bdi::new("fuse", None);
            b.bandwidth = crate::writeback::ioless::BdiBandwidth::new(unit.shift(), 0);
            b.max_ratio = 1; // fuse_bdi_init
            sys.wb.add_bdi(b)
        } else {
            dev
        };
        let bd = blockdev_inode[dev];
        sys.mm.inode_mut(bd).set_fs(f);
        let mut md = MetadataState::default();
        // Placement inputs (mkfs defaults of 2011 tools, approximate and
        // UNVERIFIED): xfs 4 AGs with the internal log in the middle AG;
        // ext4 journal of 128 MiB in the middle of the disk; btrfs
        // metadata chunk near the start, data chunk after it; ntfs $MFT at
        // cluster 786432 (3 GiB) with $Bitmap after the MFT zone.
        let data_start = match fc.fs_type {
            FsType::Xfs => {
                md.log_start_sector = cap / 2;
                md.log_sectors = 10 << 11; // 10 MiB
                2048 + 64 * 2048
            }
            FsType::Ext4 => {
                md.log_start_sector = cap / 2;
                md.log_sectors = 128 << 11;
                // A freshly made journal is empty (`s_start` 0): mounting
                // it sets JBD2_FLUSHED.
                md.journal_flushed = true;
                2048 + 256 * 2048
            }
            FsType::Btrfs => 2048 + SECTORS_PER_GIB + SECTORS_PER_GIB / 2,
            FsType::FuseNtfs => {
                md.ntfs_mft_page = (3u64 << 30) as u32 / 4096;
                md.ntfs_bitmap_first_page = md.ntfs_mft_page + (64 << 20) / 4096;
                md.ntfs_data_first_cluster = (16 << 20) / 4096;
                0
            }
        };
        // xfs: allocation groups from the partition start; a group's file
        // data from 64 MiB into it (group 0's is `data_start`), its inode
        // chunks from its middle.
        let ag_count = fc.ag_count.max(1) as u64;
        let ag_sectors = (cap.saturating_sub(2048) / ag_count).max(1);
        md.inode_size = fc.inode_size as u64;
        md.ag_inode_cursor = (0..ag_count)
            .map(|a| (2048 + a * ag_sectors + ag_sectors / 2) * 512)
            .collect();
        md.ag_inode_pending = vec![(0, 0); ag_count as usize];
        sys.fs_mut().mount(FsInstance {
            fs_type: fc.fs_type,
            mount: fc.mount.clone(),
            device: dev,
            bdi,
            blockdev_inode: bd,
            data_cursor_sector: data_start,
            ag_data_cursor: (0..ag_count).map(|a| data_start + a * ag_sectors).collect(),
            metadata: md,
            fuse_daemon: None,
            capacity_blocks: (cap - swap_sectors_on(sc, dev)) / unit.sectors(),
            used_blocks: 0,
        });
        if fc.fs_type == FsType::Btrfs {
            sys.btrfs_init_metadata(f, 2048 + 32 * 2048);
        }
        if fc.fs_type == FsType::Ext4 {
            sys.ext4_pin_metadata(f);
        }
    }

    // Workload tasks first: they get CPU 0, 1, ...
    let mut next_cpu = 0usize;
    let mut cpu = || {
        let c = next_cpu % ncpus;
        next_cpu += 1;
        c
    };
    let mut pending_daemons: Vec<(u32, usize)> = Vec::new();
    let mut extra_threads: Vec<(String, Process)> = Vec::new();
    let mut task_ids: Vec<u32> = Vec::new();
    // Program files whose text tasks touch, and their indexes.
    let (mut text_files, mut text_ids): (Vec<String>, Vec<usize>) = (Vec::new(), Vec::new());
    for (ti, tc) in sc.tasks.iter().enumerate() {
        let tid = sys.nr_tasks() as u32;
        let (kind, is_workload) = match &tc.program {
            Program::Dd(dd) => {
                let f = fs_of(sc, &dd.output);
                let id = sys.create_file(f, dd.total_bytes());
                let fuse_daemon = (sys.fs().get(f).fs_type == FsType::FuseNtfs).then(|| {
                    pending_daemons.push((tid + 1, f));
                    tid + 1
                });
                let bdi = sys.fs().get(f).bdi;
                let mut w =
                    WriterState::new(id, bdi, fuse_daemon, dd.bs_bytes, dd.total_bytes(), true);
                w.fsync_at_end = dd.conv_fsync;
                (Process::Writer(Box::new(w)), true)
            }
            Program::FsMark(fm) => {
                let f = fs_of(sc, fm.dirs[0].trim_start_matches('/'));
                let run = sys.workload.add_fsmark_run(FsMarkRun::new(fm));
                let bdi = sys.fs().get(f).bdi;
                // Threads after the first are started below.
                for t in 1..fm.threads() {
                    let st = FsMarkState::new(run, f, bdi, fm, t);
                    extra_threads.push((format!("{}.{t}", tc.name), Process::FsMark(Box::new(st))));
                }
                (
                    Process::FsMark(Box::new(FsMarkState::new(run, f, bdi, fm, 0))),
                    true,
                )
            }
            Program::MemTouch(mt) => {
                let id = sys.mm.nr_inodes() as u32;
                let bdi = sys.mm.swap().map_or(0, |s| s.device);
                sys.mm
                    .add_inode(Inode::new(id, 0, bdi, MappingKind::Anon, 0));
                let pages = (mt.size_bytes / unit.bytes()) as usize;
                let region = sys.mm.add_anon_region(AnonRegion::new(id, pages));
                // Random stream 2000 + task index, derived from the run seed.
                let rng = crate::sim::rng_stream(seed, 2000 + ti as u64);
                let st = MemTouchState::new(region, mt, rng);
                (Process::MemTouch(Box::new(st)), false)
            }
            Program::Iozone(io) => {
                let f = fs_of(sc, &io.file);
                if sys.fs().get(f).fs_type == FsType::FuseNtfs {
                    pending_daemons.push((tid + 1, f));
                }
                let bdi = sys.fs().get(f).bdi;
                // Random stream 3000 + task index, derived from the run seed.
                let mut rng = crate::sim::rng_stream(seed, 3000 + ti as u64);
                let st = IozoneState::new(io.clone(), f, bdi, &mut rng);
                (Process::Iozone(Box::new(st)), true)
            }
            Program::MapWrite(mw) => {
                let f = fs_of(sc, &mw.file);
                if sys.fs().get(f).fs_type == FsType::FuseNtfs {
                    pending_daemons.push((tid + 1, f));
                }
                let ino = sys.create_file(f, mw.size_bytes);
                let st = MapWriteState {
                    inode: ino,
                    bdi: sys.fs().get(f).bdi,
                    size_pages: mw.size_pages(),
                    next: 0,
                    unmapped: false,
                    close_cursor: 0,
                };
                (Process::MapWrite(Box::new(st)), true)
            }
            Program::Sync(_) => (Process::Sync(Box::default()), true),
        };
        // A task with `after` is started when that task exits.
        let start_after = tc.after.as_ref().map(|a| {
            let first = sc
                .tasks
                .iter()
                .position(|t| &t.name == a)
                .expect("validated");
            task_ids[first]
        });
        task_ids.push(tid);
        // `numactl --cpunodebind`: the node's CPUs.
        let bound = tc.node.map(|n| {
            let cpus = sys.mm.nodes()[n as usize].cpus.clone();
            (cpus.start, cpus.end)
        });
        let mut spawn = |sys: &mut System, name: &str, process: Process| {
            // A workload task starts at 0 or after `start_after`.
            let start = match start_after {
                Some(t) => TaskStart::After(t),
                None => TaskStart::At(0),
            };
            let kind = match &process {
                Process::Writer(_) => TaskKind::Writer,
                Process::FsMark(_) => TaskKind::FsMark,
                Process::MemTouch(_) => TaskKind::MemTouch,
                Process::MapWrite(_) => TaskKind::MapWrite,
                Process::Iozone(_) => TaskKind::Iozone,
                Process::Sync(_) => TaskKind::Sync,
            };
            let tid = sys.spawn_task(name, cpu(), kind, is_workload, start);
            if let Some(cpus) = bound {
                sys.task_mut(tid).bind(cpus);
            }
            sys.workload.attach(tid, process);
        };
        spawn(&mut sys, &tc.name, kind);
        sys.task_mut(tid).command = tc.command.clone();
        if tc.text_pages > 0 {
            let text = match text_files.iter().position(|f| f == &tc.text_file) {
                Some(i) => text_ids[i],
                None => {
                    let most = sc
                        .tasks
                        .iter()
                        .filter(|t| t.text_file == tc.text_file)
                        .map(|t| t.text_pages)
                        .max()
                        .unwrap_or(0);
                    text_files.push(tc.text_file.clone());
                    text_ids.push(sys.add_program_text(most));
                    *text_ids.last().expect("pushed")
                }
            };
            sys.workload.set_text_use(tid, text, tc.text_pages);
        }
        for (name, kind) in extra_threads.drain(..) {
            spawn(&mut sys, &name, kind);
        }
        if let Some(&(d, f)) = pending_daemons.last() {
            if d == tid + 1 {
                let st = FsDaemonState::new(DaemonKind::Fuse, f, 0);
                let daemon = sys.nr_tasks() as u32;
                sys.fs.get_mut(f).fuse_daemon.get_or_insert(daemon);
                let kind = TaskKind::FsDaemon;
                let tid = sys.spawn_task("ntfs-3g", cpu(), kind, false, TaskStart::OnWakeUp);
                sys.fs.attach_daemon(tid, st);
            }
        }
    }
    // Filesystem threads.
    for f in 0..sys.fs().len() {
        if let Some((kind, secs)) = daemon_interval_s(sys.fs().get(f).fs_type) {
            let name = match kind {
                DaemonKind::Jbd2 => "jbd2",
                DaemonKind::XfsSyncd => "xfssyncd",
                _ => "btrfs-transaction",
            };
            let st = FsDaemonState::new(kind, f, secs * NS_PER_SEC);
            // jbd2's timer is armed by the first handle of a transaction.
            let start = match kind {
                DaemonKind::Jbd2 => TaskStart::OnWakeUp,
                _ => TaskStart::At(secs * NS_PER_SEC),
            };
            let tid = sys.spawn_task(name, cpu(), TaskKind::FsDaemon, false, start);
            sys.fs.attach_daemon(tid, st);
        }
    }
    // kswapd0 (and each further node's kswapdN) and one flusher per bdi;
    // then xfsaild (last, so that adding it moves no other thread to
    // another CPU).
    for nid in 0..sys.mm.nr_nodes() {
        let name = format!("kswapd{nid}");
        let kind = TaskKind::Kswapd;
        let kswapd = sys.spawn_task(&name, cpu(), kind, false, TaskStart::OnWakeUp);
        // kswapd runs on its node's CPUs (`set_cpus_allowed_ptr`).
        let cpus = sys.mm.nodes()[nid].cpus.clone();
        sys.task_mut(kswapd).bind((cpus.start, cpus.end));
        sys.core.add_kswapd_task(kswapd);
    }
    for b in 0..sys.wb.nr_bdis() {
        let name = format!("flush-{}", sys.wb.bdi(b).name);
        let flusher = TaskKind::Flusher(b);
        let tid = sys.spawn_task(&name, cpu(), flusher, false, TaskStart::OnWakeUp);
        sys.wb.attach_flusher(b, tid);
    }
    for f in 0..sys.fs().len() {
        if sys.fs().get(f).fs_type == FsType::Xfs {
            let interval = crate::fs::metadata::XFSAILD_INTERVAL_NS;
            let st = FsDaemonState::new(DaemonKind::XfsAild, f, interval);
            let start = TaskStart::At(interval);
            let tid = sys.spawn_task("xfsaild", cpu(), TaskKind::FsDaemon, false, start);
            sys.fs.attach_daemon(tid, st);
        }
    }
    // Writeback completion workers (6.1 ext4 and xfs), after every other
    // thread so that no scenario without them changes placement.
    for f in 0..sys.fs().len() {
        let Some(name) = crate::fs::ioend::worker_name(sys.fs().get(f).fs_type, profile) else {
            continue;
        };
        let st = FsDaemonState::new(DaemonKind::IoendWorker, f, 0);
        let tid = sys.spawn_task(name, cpu(), TaskKind::FsDaemon, false, TaskStart::OnWakeUp);
        sys.fs.attach_daemon(tid, st);
        sys.fs.attach_ioend_worker(f, tid);
    }
    sys.writeback_set_ratelimit(
        sc.machine
            .boot_dirty_limit_pages
            .map(|n| unit.pages_of_base_pages(n)),
    );
    sys
}
