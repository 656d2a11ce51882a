//! `member.barrier()` as a timed operation.

use crate::contender::WaitHandle;

use super::grid::Placed;

/// One member's barrier.
pub struct TeamBarrier(pub Placed);

impl WaitHandle for TeamBarrier {
    #[inline]
    fn wait(&mut self) -> Result<(), phasers::Error> {
        self.0.member.barrier()
    }
}
