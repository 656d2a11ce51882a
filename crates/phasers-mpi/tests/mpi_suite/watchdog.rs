//! Aborts the whole job when one case runs longer than [`HANG`]: a hang then fails the suite with
//! a message naming the case, instead of blocking CI until its own time limit.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;
use phasers_mpi::mpi;

/// How long one case may run on one rank before it counts as hung. Every case needs a few
/// seconds at most on a loaded 2-core machine; `PHASERS_MPI_TEST_HANG` (seconds) overrides it.
pub const HANG: Duration = Duration::from_secs(60);
/// The exit status of a job the watchdog aborts.
pub const HANG_STATUS: i32 = 124;

pub struct Watchdog {
    current: Arc<Mutex<Option<(&'static str, Instant)>>>,
}

impl Watchdog {
    pub fn start(rank: usize) -> Watchdog {
        let hang = std::env::var("PHASERS_MPI_TEST_HANG")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(HANG, Duration::from_secs_f64);
        let current: Arc<Mutex<Option<(&'static str, Instant)>>> = Arc::default();
        let watched = Arc::clone(&current);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let running = *watched.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((name, since)) = running {
                if since.elapsed() > hang {
                    eprintln!(
                        "mpi_suite: rank {rank}: case {name} is still running after {hang:?}; it \
                         hangs: aborting the job (MPI_Abort, status {HANG_STATUS})"
                    );
                    // MPI_Abort from this thread while the hung one may be inside MPI: the
                    // job is over either way, and MPI_Abort only needs to reach mpirun.
                    SimpleCommunicator::world().abort(HANG_STATUS);
                }
            }
        });
        Watchdog { current }
    }

    pub fn arm(&self, case: &'static str) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some((case, Instant::now()));
    }

    pub fn disarm(&self) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
