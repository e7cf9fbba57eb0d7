//! A process's program text: the pages of its executable a task touches.
//! They are mapped while it runs, and when it exits `exit_mmap` →
//! `zap_pte_range` marks each page whose PTE is young accessed
//! (`mark_page_accessed`; read in 6.1 mm/memory.c, the same since 2.6).
//! A page two processes of one program touched is therefore activated
//! at the second exit on the classic LRU (`pgactivate`); MGLRU counts a
//! reference instead (`folio_inc_refs`). `wbsim lab` runs every task as
//! its guest binary, which sits in the initramfs (tmpfs, on the anon
//! lists), so a lab scenario's `dd; sync` activates the pages both touch.

use super::WorkloadHost;
use crate::mm::page::{flags, Pfn};

/// The text of one program file: its pages in the page cache.
#[derive(Debug, Clone, Default)]
pub struct ProgramText {
    pub pages: Vec<Pfn>,
}

/// What a task maps of a program: the text and how many of its pages.
#[derive(Debug, Clone, Copy)]
pub struct TextUse {
    pub text: usize,
    pub pages: u32,
}

/// Program text at boot and at exit.
pub trait Text: WorkloadHost {
    /// A program file held in memory since boot (an initramfs file, on the
    /// inactive anon list as tmpfs pages are): `nr_pages` of the pages the
    /// kernel holds become its text. Returns its index.
    fn add_program_text(&mut self, nr_pages: u32) -> usize {
        let mut text = ProgramText::default();
        for _ in 0..nr_pages {
            let Some(pfn) = self.mm_mut().take_held_page() else {
                break;
            };
            self.mm_mut().pages_mut()[pfn as usize].flags = flags::ANON | flags::UPTODATE;
            self.mm_mut().lru_add(pfn);
            text.pages.push(pfn);
        }
        self.workload_mut().texts.push(text);
        self.workload().texts.len() - 1
    }

    /// Task `tid` exits: each text page it touched is marked accessed.
    fn unmap_text_at_exit(&mut self, tid: u32) {
        let Some(u) = self.workload().text_use[tid as usize] else {
            return;
        };
        for i in 0..u.pages as usize {
            let Some(&pfn) = self.workload().texts[u.text].pages.get(i) else {
                break;
            };
            self.mark_page_accessed_by(tid, pfn);
        }
    }
}

impl<T: WorkloadHost + ?Sized> Text for T {}
