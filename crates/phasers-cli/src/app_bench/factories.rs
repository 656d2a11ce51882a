//! The native baselines (glibc's `pthread_barrier_t`, libstdc++'s C++20 `std::barrier`) as
//! barrier kinds of the applications: `phasers-apps` cannot build the C shims, which live in
//! this crate, so it takes them through its `BarrierFactory` trait.

use std::sync::Arc;

use phasers_apps::sync::{BarrierFactory, Handles, SyncKind, WaitHandle as AppWaitHandle};
use phasers_cli::harness::work::{Failure, Work};

use crate::native::{CxxBarrier, PthreadBarrier};

/// The kind of the pthread baseline.
pub fn pthread() -> SyncKind {
    SyncKind::External(Arc::new(Native::Pthread))
}

/// The kind of the C++20 baseline.
pub fn cxx() -> SyncKind {
    SyncKind::External(Arc::new(Native::Cxx))
}

/// A native baseline, built afresh for every run.
#[derive(Debug, Clone, Copy)]
enum Native {
    /// glibc's `pthread_barrier_t`.
    Pthread,
    /// libstdc++'s C++20 `std::barrier`.
    Cxx,
}

/// A native barrier's handle as the applications wait on it (the error becomes a message).
struct AppHandle<H>(H);

impl<H: Work> AppWaitHandle for AppHandle<H> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        match self.0.iteration(0) {
            Ok(_) => Ok(()),
            Err(Failure::Cause(message) | Failure::Echo(message)) => Err(message),
        }
    }
}

fn boxed<'a, H: Work + 'a>(handles: Vec<H>) -> Handles<'a> {
    handles
        .into_iter()
        .map(|handle| Box::new(AppHandle(handle)) as Box<dyn AppWaitHandle + 'a>)
        .collect()
}

impl BarrierFactory for Native {
    fn name(&self) -> String {
        match self {
            Native::Pthread => PthreadBarrier::NAME,
            Native::Cxx => CxxBarrier::NAME,
        }
        .to_owned()
    }

    fn with_handles(&self, threads: usize, run: &mut dyn FnMut(Handles<'_>)) -> Result<(), String> {
        match self {
            Native::Pthread => run(boxed(PthreadBarrier::new(threads)?.handles())),
            Native::Cxx => run(boxed(CxxBarrier::new(threads)?.handles())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phasers_apps::workload::{AppName, Size};

    #[test]
    fn native_kinds_run_an_application_and_pass_its_check() {
        let sor = AppName::Sor.workload(Size::Small);
        for kind in [pthread(), cxx()] {
            for threads in [1, 3] {
                let run = sor.parallel(threads, &kind).unwrap();
                assert_eq!(run.barriers, 200, "{kind:?}");
            }
            assert!(
                kind.with_handles(0, |_: Handles<'_>| ()).is_err(),
                "{kind:?} with 0 threads"
            );
        }
        assert_eq!(pthread().name(), "pthread_barrier_t");
        assert_eq!(cxx().name(), "std::barrier (C++20)");
    }
}
