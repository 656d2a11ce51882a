//! Counters every rank of a node can read and write: one file in `/dev/shm` mapped into every
//! rank. The barrier invariant is checked through them without a single message, so the check
//! itself cannot be satisfied by the messages it is meant to check.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use phasers_mpi::mpi;

/// `len` shared `u64` counters, all 0 at the start.
pub struct SharedCounters {
    base: *mut AtomicU64,
    len: usize,
}

// SAFETY: the mapping lives until drop and is only accessed through atomics.
unsafe impl Send for SharedCounters {}
// SAFETY: as for `Send`: every access is atomic.
unsafe impl Sync for SharedCounters {}

impl SharedCounters {
    /// Collective over `comm`, whose ranks must share one node.
    pub fn new(comm: &impl Communicator, len: usize) -> Result<SharedCounters, String> {
        static CREATED: AtomicU64 = AtomicU64::new(0);
        let bytes = (len.max(1) * 8) as u64;
        // Rank 0 names the file (its pid and a sequence number) and tells the others.
        let mut name = [0u64; 2];
        let dir = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let path_of =
            |name: [u64; 2]| dir.join(format!("phasers-mpi-suite-{}-{}", name[0], name[1]));
        let mut created = Ok(());
        if comm.rank() == 0 {
            name = [
                u64::from(std::process::id()),
                CREATED.fetch_add(1, Ordering::Relaxed),
            ];
            created = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(path_of(name))
                .and_then(|file| file.set_len(bytes))
                .map_err(|e| format!("cannot create {}: {e}", path_of(name).display()));
        }
        comm.process_at_rank(0).broadcast_into(&mut name[..]);
        let path = path_of(name);
        let mapped = created.and_then(|()| map(&path, bytes as usize));
        // Everyone has mapped it (or failed): the name is no longer needed.
        comm.barrier();
        if comm.rank() == 0 {
            let _ = std::fs::remove_file(&path);
        }
        Ok(SharedCounters { base: mapped?, len })
    }

    pub fn get(&self, index: usize) -> &AtomicU64 {
        assert!(index < self.len, "counter {index} of {}", self.len);
        // SAFETY: `index` is in the mapping, which outlives `&self`; the mapping is page aligned
        // and every counter is 8-byte aligned.
        unsafe { &*self.base.add(index) }
    }
}

fn map(path: &std::path::Path, bytes: usize) -> Result<*mut AtomicU64, String> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: a fresh shared mapping of a file at least `bytes` long; the file descriptor may be
    // closed afterwards (the mapping keeps the file alive).
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(format!(
            "cannot map {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(base.cast())
}

impl Drop for SharedCounters {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, with its length; nothing borrows it any more.
        unsafe { libc::munmap(self.base.cast(), self.len.max(1) * 8) };
    }
}
