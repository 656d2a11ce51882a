//! Memory shared by the ranks of one node: a file in `/dev/shm` that every rank maps.
//!
//! `MPI_Win_allocate_shared` would give the same memory, but freeing a window is collective (Open
//! MPI's shared-memory window waits in a barrier), so a rank that drops its object while the
//! others go on would hang. Unmapping a file is local. The file is unlinked as soon as every
//! rank has mapped it, so nothing is left behind when the job ends, even if it is killed.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};

use crate::threading::mpi_call;

/// Bytes between two counters: two cache lines, so that a line and the one the hardware
/// prefetches with it never hold two ranks' counters.
pub(crate) const COUNTER_STRIDE: usize = 128;

/// `len` counters, each on its own pair of cache lines, shared by the ranks of a node and all 0
/// at the start.
pub(crate) struct NodeCounters {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping lives until drop and is only accessed through atomics.
unsafe impl Send for NodeCounters {}
// SAFETY: as for `Send`: every access is atomic.
unsafe impl Sync for NodeCounters {}

impl NodeCounters {
    /// Collective over `node`, whose ranks must share one machine. Every rank gets the mapping or
    /// every rank gets the reason (the first failure any rank met).
    pub(crate) fn new(node: &SimpleCommunicator, len: usize) -> Result<NodeCounters, String> {
        static CREATED: AtomicU64 = AtomicU64::new(0);
        let dir = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let path_of =
            |name: [u64; 2]| dir.join(format!("phasers-mpi-node-{}-{}", name[0], name[1]));
        // Rank 0 names the file (its pid and a sequence number) and creates it.
        let mut name = [0u64; 2];
        let mut created = Ok(());
        if node.rank() == 0 {
            name = [
                u64::from(std::process::id()),
                CREATED.fetch_add(1, Ordering::Relaxed),
            ];
            created = Self::create_file(&path_of(name), len);
        }
        let mut ok = [u8::from(created.is_ok())];
        {
            let _call = mpi_call();
            node.process_at_rank(0).broadcast_into(&mut name[..]);
            node.process_at_rank(0).broadcast_into(&mut ok[..]);
        }
        let path = path_of(name);
        let mapped = if ok[0] == 1 {
            Self::map_file(&path, len)
        } else {
            Err(format!(
                "rank 0 of the node could not create {}",
                path.display()
            ))
        };
        let mapped = created.and(mapped);
        // Everyone has mapped it (or failed): the name is no longer needed.
        let mut all_ok = 0u8;
        {
            let _call = mpi_call();
            node.all_reduce_into(
                &u8::from(mapped.is_ok()),
                &mut all_ok,
                SystemOperation::min(),
            );
        }
        if node.rank() == 0 && ok[0] == 1 {
            let _ = std::fs::remove_file(&path);
        }
        match mapped {
            Ok(counters) if all_ok == 1 => Ok(counters),
            Ok(_) => Err("another rank of the node could not map the shared file".to_owned()),
            Err(reason) => Err(reason),
        }
    }

    /// Creates the file of `len` counters at `path`, all 0; fails if it exists.
    pub(crate) fn create_file(path: &Path, len: usize) -> Result<(), String> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|file| file.set_len((len.max(1) * COUNTER_STRIDE) as u64))
            .map_err(|e| format!("cannot create {}: {e}", path.display()))
    }

    /// Maps the file of `len` counters at `path` (made by [`create_file`](Self::create_file)).
    pub(crate) fn map_file(path: &Path, len: usize) -> Result<NodeCounters, String> {
        map(path, len.max(1) * COUNTER_STRIDE).map(|base| NodeCounters { base, len })
    }

    /// Counter `index`.
    pub(crate) fn get(&self, index: usize) -> &AtomicU64 {
        assert!(index < self.len, "counter {index} of {}", self.len);
        // SAFETY: `index` is in the mapping, which outlives `&self`; the mapping is page aligned
        // and the stride keeps every counter 8-byte aligned.
        unsafe { &*self.base.add(index * COUNTER_STRIDE).cast::<AtomicU64>() }
    }

    /// The address of `len` bytes starting at counter `index`'s, for memory the caller uses as
    /// plain bytes (a mailbox's record) under its own protocol.
    pub(crate) fn bytes(&self, index: usize, len: usize) -> *mut u8 {
        assert!(
            index * COUNTER_STRIDE + len <= self.len * COUNTER_STRIDE,
            "{len} bytes at counter {index} of {}",
            self.len
        );
        // SAFETY: in the mapping, as the assertion checks; the pointer is only an address.
        unsafe { self.base.add(index * COUNTER_STRIDE) }
    }
}

fn map(path: &Path, bytes: usize) -> Result<*mut u8, String> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: a fresh shared mapping of a file `bytes` long; the file descriptor may be closed
    // afterwards (the mapping keeps the file alive).
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

impl Drop for NodeCounters {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `map_file` with this length; nothing borrows it any more.
        unsafe { libc::munmap(self.base.cast(), self.len.max(1) * COUNTER_STRIDE) };
    }
}
