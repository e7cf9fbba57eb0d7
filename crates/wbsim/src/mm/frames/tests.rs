//! Tests of the frame arrays, their reuse, the zone map and the
//! per-frame columns.

use super::*;
use crate::mm::page::{test_frames as frames, Holder};

/// Every frame's zone is the zone whose range holds it, whatever the
/// zones' sizes: a seed's layout (DMA 15 MiB), zones of odd frame
/// counts (blocks of one frame), an empty zone, and a clone.
#[test]
fn a_frame_s_zone_is_the_range_it_is_in() {
    for zone_frames in [
        vec![3840u64, 830_976, 129_024],
        vec![15, 7, 3],
        vec![16, 0, 32, 5],
        vec![1 << 20],
        vec![256, 1 << 24 >> 1],
    ] {
        let f = Frames::new(&zone_frames);
        let mut pfn = 0u32;
        for (zone, &n) in zone_frames.iter().enumerate() {
            for _ in 0..n {
                assert_eq!(f.zone_of(pfn), zone, "pfn {pfn} of {zone_frames:?}");
                pfn += 1;
            }
        }
        let g = f.clone();
        let last = pfn - 1;
        assert_eq!(g.zone_of(last), f.zone_of(last));
        assert_eq!(g.zone_of(0), 0);
    }
}

#[test]
fn frames_are_the_machine_s_and_a_clone_copies_them() {
    let mut f = frames(5);
    f[4].set_index(77);
    f[0].holder = Holder::Kernel;
    assert_eq!(f.len(), 5);
    assert_eq!(f.iter().count(), 5);
    let g = f.clone();
    assert_eq!(g.len(), 5);
    assert_eq!(g[4].index(), 77);
    assert_eq!(g[0].holder, Holder::Kernel);
    assert_eq!(g[1].holder, Holder::Free);
    assert_eq!(g[3].inode(), NIL);
}

/// A thread's next machine reuses its last one's arrays, zeroed past
/// its own frames.
#[test]
fn reused_arrays_are_zero_past_the_new_machine_s_frames() {
    // Three zones: a zone map of four blocks of 16 frames.
    let mut large = Frames::new(&[16, 16, 32]);
    assert_eq!((large.zone_block_shift, large.nr_zone_blocks), (4, 4));
    large[40].set_index(9);
    large[40].holder = Holder::Kernel;
    large.set_next(40, 3);
    let large_frames: *const Page = &large.frames[0];
    drop(large);
    let small = frames(8);
    assert!(
        std::ptr::eq(large_frames, &small.frames[0]),
        "the arrays were not reused"
    );
    assert_eq!(small.frames[40].index(), 0);
    assert_eq!(small.frames[40].holder, Holder::Free);
    let links_of_40 = &small.links[40 * LINK_BYTES..41 * LINK_BYTES];
    assert!(links_of_40.iter().all(|&b| b == 0), "{links_of_40:?}");
    assert_eq!(small.len(), 8);
    assert_eq!(small.nr_zone_blocks, 1);
    assert_eq!(small.zone_of_block[..4], [0; 4]);
}

/// A machine of more than `MAX_KEPT_FRAMES` frames gives its arrays
/// back to the OS.
#[test]
fn a_huge_machine_s_arrays_are_not_kept() {
    drop(frames(MAX_KEPT_FRAMES + 1));
    assert!(SPARE_ARRAYS.take().is_none());
    drop(frames(3));
    assert!(SPARE_ARRAYS.take().is_some());
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "pfn 5 of 5")]
fn a_pfn_past_the_machine_s_frames_panics_in_a_debug_build() {
    let f = frames(5);
    let _ = f[5].flags;
}

#[test]
fn frame_words_start_as_zeros_that_read_as_none() {
    let mut w = FrameWords::none(4);
    assert!(w.is_zeroed());
    assert!((0..4).all(|pfn| w.get(pfn) == NIL));
    w.set(1, 0);
    w.set(2, 7);
    assert_eq!((w.get(0), w.get(1), w.get(2)), (NIL, 0, 7));
    assert!(!w.is_zeroed());
    w.set(1, NIL);
    w.set(2, NIL);
    assert!(w.is_zeroed());
}
