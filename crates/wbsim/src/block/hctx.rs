//! blk-mq's hardware queues and their tags (`block/blk-mq.c`,
//! `block/blk-mq-tag.c`; read in 6.1). A request takes a tag from the
//! hardware queue its submitting CPU maps to (`blk_mq_map_queues`: CPU i
//! to queue i mod n), each queue holds nr_requests tags (a write to
//! queue/nr_requests sets every queue's), and a submitter that finds none
//! sleeps in `blk_mq_get_tag` until a request of that queue completes, sync
//! writes (a journal's) as much as writeback. QEMU 7.2's virtio-blk disk
//! has one queue per vCPU (`num-queues`). The single-queue layer (3.x) is
//! one queue.
//!
//! Why it matters: a two-vCPU guest holds twice nr_requests (a traced 6.1
//! ext4 boot had 151 writes in flight with nr_requests 128), and a CPU
//! whose queue a flusher has filled waits though the other's has room,
//! a journal's sync writes too.

/// A waiter's queue when any completion may let it go on (wbt's limit,
/// which counts the whole device).
pub const ANY_HCTX: u32 = u32::MAX;

/// The tags of a request queue's hardware queues.
#[derive(Debug, Clone)]
pub struct HwQueues {
    tags_per_queue: u32,
    /// Per hardware queue: requests holding one of its tags.
    allocated: Vec<u32>,
}

impl HwQueues {
    pub fn new(nr_queues: u32, tags_per_queue: u32) -> HwQueues {
        HwQueues {
            tags_per_queue,
            allocated: vec![0; nr_queues.max(1) as usize],
        }
    }

    pub fn nr_queues(&self) -> u32 {
        self.allocated.len() as u32
    }

    /// The hardware queue of CPU `cpu`. Every page written asks, and a
    /// machine nearly always has a queue per CPU or one for all: those
    /// answer without a division.
    #[inline(always)]
    pub fn of_cpu(&self, cpu: u32) -> u32 {
        let n = self.nr_queues();
        if cpu < n {
            cpu
        } else if n == 1 {
            0
        } else {
            cpu % n
        }
    }

    /// No tag is free on queue `hctx`.
    pub fn is_full(&self, hctx: u32) -> bool {
        self.allocated[hctx as usize] >= self.tags_per_queue
    }

    pub fn get(&mut self, hctx: u32) {
        self.allocated[hctx as usize] += 1;
    }

    pub fn put(&mut self, hctx: u32) {
        self.allocated[hctx as usize] -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each CPU's queue fills on its own: a full queue 0 leaves queue 1's
    /// tags free, and a completion on queue 0 frees one there.
    #[test]
    fn each_cpus_queue_has_its_own_tags() {
        let mut q = HwQueues::new(2, 3);
        assert_eq!((q.of_cpu(0), q.of_cpu(1), q.of_cpu(2)), (0, 1, 0));
        for _ in 0..3 {
            assert!(!q.is_full(0));
            q.get(0);
        }
        assert!(q.is_full(0) && !q.is_full(1));
        q.put(0);
        assert!(!q.is_full(0));
        let one = HwQueues::new(1, 3);
        assert_eq!(one.of_cpu(1), 0, "one queue serves every CPU");
    }
}
