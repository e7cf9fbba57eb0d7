//! [`BlockLayer`]: the state the block layer owns. Fields are private to
//! `block/`; other subsystems use the accessors.

use std::collections::VecDeque;

use super::bio::OpenBio;
use super::plug::Plug;
use super::RequestQueue;
use crate::device::raid0::Raid0;
use crate::device::Device;

/// The devices, their request queues, the tasks waiting for a request, and
/// each task's plug.
pub struct BlockLayer {
    pub(super) queues: Vec<RequestQueue>,
    pub(super) devices: Vec<Device>,
    /// Per device: its RAID0 striping if it is an md array.
    pub(super) raid: Vec<Option<Raid0>>,
    /// Some device is an md array: without one, [`BlockLayer::map_bio`]
    /// (every page written asks it) answers from this flag alone.
    pub(super) any_raid: bool,
    /// Tasks sleeping in `get_request_wait` / `blk_mq_get_tag` / `wbt_wait`,
    /// per device (FIFO, exclusive), each with the hardware queue whose
    /// completions it waits for (`hctx::ANY_HCTX`: any).
    pub(super) request_waiters: Vec<VecDeque<(u32, u32)>>,
    /// Per task: `current->plug` (explicit block plugging).
    pub(super) task_plug: Vec<Plug>,
    /// Per task: the bio its `->writepages` call is building.
    pub(super) open_bio: Vec<OpenBio>,
}

impl BlockLayer {
    pub fn new() -> BlockLayer {
        BlockLayer {
            queues: Vec::new(),
            devices: Vec::new(),
            raid: Vec::new(),
            any_raid: false,
            request_waiters: Vec::new(),
            task_plug: Vec::new(),
            open_bio: Vec::new(),
        }
    }

    /// A device and its queue (at boot); returns its index.
    pub fn add_device(
        &mut self,
        device: Device,
        queue: RequestQueue,
        raid: Option<Raid0>,
    ) -> usize {
        self.devices.push(device);
        self.queues.push(queue);
        self.any_raid |= raid.is_some();
        self.raid.push(raid);
        self.request_waiters.push(VecDeque::new());
        self.devices.len() - 1
    }

    /// A new task's (empty) plug.
    pub fn add_task(&mut self) {
        self.task_plug.push(Plug::default());
        self.open_bio.push(OpenBio::default());
    }

    pub fn queue(&self, dev: usize) -> &RequestQueue {
        &self.queues[dev]
    }

    pub fn queue_mut(&mut self, dev: usize) -> &mut RequestQueue {
        &mut self.queues[dev]
    }

    pub fn queues(&self) -> &[RequestQueue] {
        &self.queues
    }

    pub fn device(&self, dev: usize) -> &Device {
        &self.devices[dev]
    }

    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// Is task `tid` building a bio ([`super::bio::BioBuilding`])?
    #[inline(always)]
    pub fn has_open_bio(&self, tid: u32) -> bool {
        self.open_bio[tid as usize].is_open()
    }

    /// Is any queue congested (`wait_iff_congested`'s test)?
    pub fn any_congested(&self) -> bool {
        self.queues.iter().any(|q| q.congested)
    }
}

impl Default for BlockLayer {
    fn default() -> Self {
        Self::new()
    }
}
