//! The results disk's record writer: `protocol` records appended from
//! `RECORDS_OFFSET` with pwrite(2), the header at offset 0.
//!
//! The device is opened with O_DIRECT so that the records never sit in
//! the guest's page cache: there they would be dirty pages and writeback
//! of their own in the very figures being measured. O_DIRECT wants
//! aligned buffers, offsets and lengths, so records are staged in a
//! page-aligned buffer and written in whole 512-byte sectors; the last,
//! partial sector is zero-padded and rewritten as it fills.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use crate::protocol::{self, kind, HEADER_BYTES, RECORDS_OFFSET};
use crate::sys;

const SECTOR: u64 = 512;
const STAGE_BYTES: usize = 256 << 10;
/// Room kept free of trace records so the after-snapshot and the task
/// ends still fit when the trace fills the disk.
const TRACE_RESERVE: u64 = 1 << 20;

/// A zeroed, page-aligned byte buffer (O_DIRECT's alignment).
struct Aligned {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for Aligned {}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, 4096).expect("layout");
        // SAFETY: len > 0.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Aligned { ptr, len }
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to len bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, 4096).expect("layout");
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, layout) }
    }
}

struct Inner {
    file: File,
    /// Device offset of the stage's first byte (sector-aligned).
    stage_at: u64,
    stage: Aligned,
    used: usize,
    /// Where the next record goes.
    pos: u64,
    end: u64,
    closed: bool,
    full_noted: bool,
    dropped: u64,
}

/// Appends records; shared by the init, sampler and trace threads.
pub struct RecordWriter {
    inner: Mutex<Inner>,
}

impl RecordWriter {
    /// A writer on `file` whose usable size is `capacity` bytes.
    pub fn new(file: File, capacity: u64) -> RecordWriter {
        RecordWriter {
            inner: Mutex::new(Inner {
                file,
                stage_at: RECORDS_OFFSET,
                stage: Aligned::new(STAGE_BYTES),
                used: 0,
                pos: RECORDS_OFFSET,
                end: capacity,
                closed: false,
                full_noted: false,
                dropped: 0,
            }),
        }
    }

    /// Open the results block device (O_DIRECT); its size from lseek.
    pub fn open_device(path: &Path) -> io::Result<RecordWriter> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)?;
        let capacity = file.seek(SeekFrom::End(0))?;
        Ok(RecordWriter::new(file, capacity))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Append a record stamped now.
    pub fn record(&self, kind: &str, tag: &str, payload: &[u8]) -> bool {
        self.record_at(kind, tag, sys::monotonic_ns(), payload)
    }

    /// Append a record; false when it was dropped (disk full, closed, or
    /// a write error).
    pub fn record_at(&self, kind: &str, tag: &str, t_ns: u64, payload: &[u8]) -> bool {
        let head = protocol::encode_record_head(kind, tag, t_ns, payload.len());
        let mut g = self.lock();
        if g.closed {
            return false;
        }
        let total = (head.len() + payload.len() + 1) as u64;
        let reserve = if kind == protocol::kind::TRACE {
            TRACE_RESERVE.min(g.end.saturating_sub(RECORDS_OFFSET) / 4)
        } else {
            0
        };
        if g.pos + total > g.end.saturating_sub(reserve) {
            g.dropped += 1;
            if !g.full_noted {
                g.full_noted = true;
                sys::console("wbsim-guest: results disk full; trace truncated");
            }
            return false;
        }
        let r = g
            .append(head.as_bytes())
            .and_then(|_| g.append(payload))
            .and_then(|_| g.append(b"\n"));
        match r {
            Ok(()) => true,
            Err(e) => {
                g.closed = true;
                sys::console(&format!(
                    "wbsim-guest: writing the results disk failed: {}; no more records",
                    sys::err_text(&e)
                ));
                false
            }
        }
    }

    /// A `log` record (and the same line on the console).
    pub fn log(&self, message: &str) {
        sys::console(&format!("wbsim-guest: {message}"));
        self.record(kind::LOG, protocol::tag::NONE, message.as_bytes());
    }

    /// Bytes of records written so far.
    pub fn records_len(&self) -> u64 {
        self.lock().pos - RECORDS_OFFSET
    }

    /// Records dropped because the disk was full.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Write the staged tail and a header saying how far the records go
    /// (`complete = 0`), so a guest that dies later leaves readable
    /// records behind.
    pub fn checkpoint(&self) -> io::Result<()> {
        let mut g = self.lock();
        if g.closed {
            return Ok(());
        }
        g.flush_tail()?;
        g.write_header(false)
    }

    /// The last act: tail, header with `complete = 1`, fsync. Later
    /// records are dropped.
    pub fn finish(&self) -> io::Result<()> {
        let mut g = self.lock();
        if g.closed {
            return Ok(());
        }
        g.closed = true;
        g.flush_tail()?;
        g.write_header(true)?;
        g.file.sync_all()
    }
}

impl Inner {
    fn append(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let n = bytes.len().min(STAGE_BYTES - self.used);
            let used = self.used;
            self.stage.bytes()[used..used + n].copy_from_slice(&bytes[..n]);
            self.used += n;
            self.pos += n as u64;
            bytes = &bytes[n..];
            if self.used == STAGE_BYTES {
                let at = self.stage_at;
                self.file.write_all_at(self.stage.bytes(), at)?;
                self.stage_at += STAGE_BYTES as u64;
                self.used = 0;
            }
        }
        Ok(())
    }

    /// Write the staged bytes, zero-padded to a whole sector (kept staged:
    /// the next flush rewrites them with what follows).
    fn flush_tail(&mut self) -> io::Result<()> {
        if self.used == 0 {
            return Ok(());
        }
        let padded = (self.used as u64).div_ceil(SECTOR) * SECTOR;
        let len = padded.min(self.end - self.stage_at) as usize;
        let used = self.used;
        self.stage.bytes()[used..len].fill(0);
        let at = self.stage_at;
        self.file.write_all_at(&self.stage.bytes()[..len], at)
    }

    fn write_header(&mut self, complete: bool) -> io::Result<()> {
        let mut block = Aligned::new(HEADER_BYTES);
        let header = protocol::encode_header(self.pos - RECORDS_OFFSET, complete);
        block.bytes().copy_from_slice(&header);
        self.file.write_all_at(block.bytes(), 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{decode_header, decode_records, tag};

    fn writer(capacity: u64) -> (tempfile::NamedTempFile, RecordWriter) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(tmp.path())
            .unwrap();
        file.write_all_at(&protocol::encode_header(0, false), 0)
            .unwrap();
        (tmp, RecordWriter::new(file, capacity))
    }

    fn read_back(path: &Path) -> (u64, bool, Vec<protocol::Record>) {
        let bytes = std::fs::read(path).unwrap();
        let (len, complete) = decode_header(&bytes).unwrap();
        let area = &bytes[RECORDS_OFFSET as usize..RECORDS_OFFSET as usize + len as usize];
        (len, complete, decode_records(area).unwrap())
    }

    #[test]
    fn records_round_trip_through_a_file() {
        let (tmp, w) = writer(64 << 20);
        assert!(w.record_at(kind::UNAME, tag::NONE, 7, b"6.1.0"));
        let big = vec![b'x'; STAGE_BYTES + 1000];
        assert!(w.record_at(kind::TRACE, tag::NONE, 8, &big));
        w.checkpoint().unwrap();
        let (len, complete, recs) = read_back(tmp.path());
        assert!(!complete);
        assert_eq!(len, w.records_len());
        assert_eq!(recs.len(), 2);
        assert!(w.record_at(kind::VMSTAT, tag::SAMPLE, 9, b"nr_dirty 1\n"));
        w.finish().unwrap();
        assert!(!w.record(kind::LOG, tag::NONE, b"after the end"));
        let (_, complete, recs) = read_back(tmp.path());
        assert!(complete);
        assert_eq!(recs.len(), 3);
        assert_eq!((recs[0].kind.as_str(), recs[0].t_ns), ("uname", 7));
        assert_eq!(recs[0].text(), "6.1.0");
        assert_eq!(recs[1].payload, big);
        assert_eq!(recs[2].tag, "sample");
    }

    #[test]
    fn a_full_disk_drops_records_and_keeps_room_beyond_the_trace() {
        let capacity = RECORDS_OFFSET + 8192;
        let (tmp, w) = writer(capacity);
        let chunk = vec![b't'; 1000];
        let mut traced = 0;
        while w.record_at(kind::TRACE, tag::NONE, 1, &chunk) {
            traced += 1;
        }
        // The trace stops a quarter of the area short of the end ...
        assert_eq!(traced, 6);
        assert_eq!(w.dropped(), 1);
        // ... so the after-snapshot still fits, until the disk is full.
        assert!(w.record_at(kind::VMSTAT, tag::AFTER, 2, &[b'v'; 1500]));
        assert!(!w.record_at(kind::ZONEINFO, tag::AFTER, 2, &[b'z'; 1500]));
        assert!(w.record_at(kind::LOG, tag::NONE, 3, b"short"));
        w.finish().unwrap();
        let (len, complete, recs) = read_back(tmp.path());
        assert!(complete && len <= capacity - RECORDS_OFFSET);
        assert_eq!(recs.len(), 8);
        assert_eq!(recs[7].text(), "short");
    }
}
