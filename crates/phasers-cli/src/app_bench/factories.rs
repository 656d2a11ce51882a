//! The native baselines (glibc's `pthread_barrier_t`, libstdc++'s C++20 `std::barrier`) as
//! barrier kinds of the applications: `phasers-apps` cannot build the C shims, which live in
//! this crate, so it takes them through its `BarrierFactory` trait.

use std::sync::Arc;

use phasers_apps::sync::{BarrierFactory, Handles, SyncKind, WaitHandle as AppWaitHandle};

use crate::contender::{Contender, WaitHandle};
use crate::native::cxx::CxxHandle;
use crate::native::pthread::PthreadHandle;
use crate::native::{CxxBarrier, PthreadBarrier};

impl AppWaitHandle for PthreadHandle<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        WaitHandle::wait(self).map_err(|error| error.to_string())
    }
}

impl AppWaitHandle for CxxHandle<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        WaitHandle::wait(self).map_err(|error| error.to_string())
    }
}

/// glibc's `pthread_barrier_t`, through the C shim.
#[derive(Debug, Clone, Copy)]
pub struct PthreadFactory;

impl BarrierFactory for PthreadFactory {
    fn name(&self) -> String {
        Contender::Pthread.name().into_owned()
    }

    fn with_handles(&self, threads: usize, run: &mut dyn FnMut(Handles<'_>)) -> Result<(), String> {
        let barrier = PthreadBarrier::new(threads)?;
        run(barrier
            .handles()
            .into_iter()
            .map(|handle| Box::new(handle) as Box<dyn AppWaitHandle + '_>)
            .collect());
        Ok(())
    }
}

/// libstdc++'s C++20 `std::barrier`, through the C++ shim.
#[derive(Debug, Clone, Copy)]
pub struct CxxFactory;

impl BarrierFactory for CxxFactory {
    fn name(&self) -> String {
        Contender::CxxBarrier.name().into_owned()
    }

    fn with_handles(&self, threads: usize, run: &mut dyn FnMut(Handles<'_>)) -> Result<(), String> {
        let barrier = CxxBarrier::new(threads)?;
        run(barrier
            .handles()
            .into_iter()
            .map(|handle| Box::new(handle) as Box<dyn AppWaitHandle + '_>)
            .collect());
        Ok(())
    }
}

/// The kind of the pthread baseline.
pub fn pthread() -> SyncKind {
    SyncKind::External(Arc::new(PthreadFactory))
}

/// The kind of the C++20 baseline.
pub fn cxx() -> SyncKind {
    SyncKind::External(Arc::new(CxxFactory))
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
        }
        assert_eq!(pthread().name(), "pthread_barrier_t");
        assert_eq!(cxx().name(), "std::barrier (C++20)");
        assert!(PthreadFactory.with_handles(0, &mut |_| ()).is_err());
    }
}
