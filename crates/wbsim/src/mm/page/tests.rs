//! Tests of the intrusive page lists.

use super::*;

fn frames(n: usize) -> Frames {
    test_frames(n)
}

/// The list's pages from head to tail, read by the `next` links; checks
/// that the `prev` links read them back from tail to head, and that an
/// empty list has no ends.
fn collect(pages: &Frames, list: &ListHead) -> Vec<u32> {
    let walk = |from: u32, step: &dyn Fn(u32) -> u32| {
        let mut seen: Vec<u32> = vec![];
        if list.len > 0 {
            seen.push(from);
            while seen.len() < list.len as usize {
                seen.push(step(*seen.last().unwrap()));
            }
        }
        seen
    };
    let forward = walk(list.head, &|p| pages.next(p));
    let mut backward = walk(list.tail, &|p| pages.prev(p));
    backward.reverse();
    assert_eq!(forward, backward, "next and prev disagree");
    assert_eq!(list.len == 0, (list.head, list.tail) == (NIL, NIL));
    forward
}

/// The lists hold the same pages in the same order with the same
/// ends and lengths, and every frame has the same holder.
fn assert_same(f1: &Frames, l1: &[&ListHead], f2: &Frames, l2: &[&ListHead], what: &str) {
    for (a, b) in l1.iter().zip(l2) {
        assert_eq!(collect(f1, a), collect(f2, b), "{what}");
        assert_eq!((a.head, a.tail, a.len), (b.head, b.tail, b.len), "{what}");
    }
    for p in 0..f1.len() {
        assert_eq!(f1[p].holder, f2[p].holder, "{what}: pfn {p}");
    }
}

/// A run moved at once leaves both lists and every
/// holder as moving its pages one at a time does, for every length
/// of run and of either list (empty included).
#[test]
fn moving_a_run_is_moving_its_pages_one_by_one() {
    /// The reference: `n` rounds of `list_del` at one end of `from`
    /// (the head, or the tail) and `list_add` at the other end of `to`.
    fn one_by_one(
        f: &mut Frames,
        from: &mut ListHead,
        to: &mut ListHead,
        n: u64,
        from_head: bool,
    ) -> u64 {
        let mut moved = 0;
        while moved < n {
            let pfn = if from_head { from.head } else { from.tail };
            if pfn == NIL {
                break;
            }
            list_del(f, from, pfn);
            f[pfn as usize].holder = Holder::PerCpu;
            match from_head {
                true => list_add_tail(f, to, pfn),
                false => list_add_head(f, to, pfn),
            }
            moved += 1;
        }
        moved
    }
    for (end, from_head) in [(End::Head, true), (End::Tail, false)] {
        for from_len in 0..5u32 {
            for to_len in 0..3u32 {
                for n in [0, 1, 2, 3, 4, 5, u64::MAX] {
                    let build = || {
                        let mut f = frames(8);
                        let (mut from, mut to) = (ListHead::default(), ListHead::default());
                        for p in 0..from_len {
                            list_add_tail(&mut f, &mut from, p);
                        }
                        for p in 0..to_len {
                            list_add_tail(&mut f, &mut to, 5 + p);
                        }
                        (f, from, to)
                    };
                    let (mut f1, mut from1, mut to1) = build();
                    let (mut f2, mut from2, mut to2) = build();
                    let a = list_move_run(&mut f1, &mut from1, &mut to1, n, Holder::PerCpu, end);
                    let b = one_by_one(&mut f2, &mut from2, &mut to2, n, from_head);
                    let what = format!("{end:?}: from {from_len}, to {to_len}, n {n}");
                    assert_eq!(a, b, "{what}");
                    assert_same(&f1, &[&from1, &to1], &f2, &[&from2, &to2], &what);
                }
            }
        }
    }
}

/// Taking a run off a list's tail leaves the list and every link as
/// `list_del` of the tail, one page at a time, does, and visits the
/// pages in that order.
#[test]
fn taking_a_tail_run_is_deleting_the_tail_one_by_one() {
    for len in 0..5u32 {
        for n in [0, 1, 2, 4, 5, u64::MAX] {
            let build = || {
                let mut f = frames(6);
                let mut l = ListHead::default();
                for p in 0..len {
                    list_add_tail(&mut f, &mut l, p);
                }
                (f, l)
            };
            let (mut f1, mut l1) = build();
            let mut seen = vec![];
            let taken = list_take_tail_run(&mut f1, &mut l1, n, |pfn, page| {
                page.holder = Holder::Isolated;
                seen.push(pfn);
            });
            let (mut f2, mut l2) = build();
            let mut expected = vec![];
            while (expected.len() as u64) < n && l2.tail != NIL {
                let pfn = l2.tail;
                list_del(&mut f2, &mut l2, pfn);
                f2[pfn as usize].holder = Holder::Isolated;
                expected.push(pfn);
            }
            let what = format!("len {len}, n {n}");
            assert_eq!((taken, &seen), (expected.len() as u64, &expected), "{what}");
            assert_same(&f1, &[&l1], &f2, &[&l2], &what);
        }
    }
}

#[test]
fn add_remove_rotate() {
    let mut pages = frames(5);
    let mut l = ListHead::default();
    list_add_head(&mut pages, &mut l, 1);
    list_add_head(&mut pages, &mut l, 2);
    list_add_tail(&mut pages, &mut l, 3);
    assert_eq!(collect(&pages, &l), vec![2, 1, 3]);
    list_del(&mut pages, &mut l, 1);
    assert_eq!(collect(&pages, &l), vec![2, 3]);
    list_del(&mut pages, &mut l, 3);
    list_add_head(&mut pages, &mut l, 3);
    assert_eq!(collect(&pages, &l), vec![3, 2]);
    assert_eq!(l.tail, 2);
    assert_eq!(l.len, 2);
    list_del(&mut pages, &mut l, 2);
    list_del(&mut pages, &mut l, 3);
    assert_eq!((l.head, l.tail, l.len), (NIL, NIL, 0));
}

/// A frame's inode number and page index are 28 bits each in 7 bytes:
/// each set alone leaves the other, none (`NIL`) and the largest values
/// read back, and the flags and holder beside them are untouched.
#[test]
fn a_frame_s_mapping_reads_back_what_was_set() {
    assert_eq!(std::mem::size_of::<Page>(), 10);
    let mut p = Page::new(flags::DIRTY, Holder::ActiveFile);
    assert_eq!((p.inode(), p.index()), (NIL, 0));
    for (ino, index) in [
        (0, 0),
        (7, MAX_PAGE_INDEX),
        (MAX_INODES - 1, 1),
        (NIL, 12_345),
    ] {
        p.set_mapping(ino, index);
        assert_eq!((p.inode(), p.index()), (ino, index));
        p.set_index(index ^ 0x0ff_ffff);
        assert_eq!((p.inode(), p.index()), (ino, index ^ 0x0ff_ffff));
        p.set_inode(3);
        assert_eq!((p.inode(), p.index()), (3, index ^ 0x0ff_ffff));
        p.set_inode(ino);
        p.set_index(index);
        assert_eq!((p.inode(), p.index()), (ino, index));
    }
    assert_eq!((p.flags, p.holder), (flags::DIRTY, Holder::ActiveFile));
}
