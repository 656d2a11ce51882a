//! The advance action ([`PhaserBuilder::on_advance`](super::PhaserBuilder::on_advance)): user code
//! run once per phase, and how its answer, or its panic, is turned into what the phaser does next.
//!
//! The action runs on the thread whose signal (or drop) completes the phase at the root of the
//! tree, while the root is completing: nothing can complete a later phase until it returns, so the
//! actions of successive phases never overlap and run in phase order, and the phase is released
//! only after its action. The lock around the action is therefore never contended by two phases;
//! it is there because successive phases may be completed by different threads (and because
//! builders cloned from one share the action).

use std::any::Any;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::primitive::{Arc, Mutex};

/// What a builder takes: the phase completing and the signal-capable registrations now.
pub(crate) type Action = Box<dyn FnMut(u64, usize) -> ControlFlow<()> + Send>;

/// A panic caught in the action, to be resumed by the task that ran it.
pub(crate) type Panic = Box<dyn Any + Send>;

/// The shared advance action.
#[derive(Clone)]
pub(crate) struct OnAdvance(Arc<Mutex<Action>>);

/// What the action decided.
pub(crate) enum Advanced {
    /// Go on with the next phase.
    Continue,
    /// `Break(())`: the phase completes, then the phaser terminates.
    Terminate,
    /// The action panicked: the phase must not complete.
    Panicked(Panic),
}

impl OnAdvance {
    pub(crate) fn new(action: Action) -> Self {
        OnAdvance(Arc::new(Mutex::new(action)))
    }

    /// Runs the action for `phase` with `registered` signal-capable registrations, catching its
    /// panic. The panic is caught inside the lock, so the lock is never poisoned: a later phaser
    /// built from a clone of the same builder can still run it.
    pub(crate) fn run(&self, phase: u64, registered: usize) -> Advanced {
        let mut action = self
            .0
            .lock()
            .expect("the advance action's panics are caught inside its lock");
        match catch_unwind(AssertUnwindSafe(|| (*action)(phase, registered))) {
            Ok(ControlFlow::Continue(())) => Advanced::Continue,
            Ok(ControlFlow::Break(())) => Advanced::Terminate,
            Err(payload) => Advanced::Panicked(payload),
        }
    }
}

impl std::fmt::Debug for OnAdvance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnAdvance(..)")
    }
}
