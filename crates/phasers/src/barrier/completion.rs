//! The action a barrier runs once per episode, between the last arrival and the release.

use crate::primitive::UnsafeCell;

type Action = Box<dyn FnMut() + Send>;

/// Holds the optional completion action. It needs no lock: the barrier protocol itself guarantees
/// that one leader at a time runs it.
pub(crate) struct Completion {
    action: Option<UnsafeCell<Action>>,
}

// SAFETY: the action is `Send`, and it is only ever called by one thread at a time (see `run`).
unsafe impl Sync for Completion {}

impl Completion {
    pub(crate) fn new(action: Option<Action>) -> Self {
        Completion {
            action: action.map(UnsafeCell::new),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.action.is_none()
    }

    /// Runs the action.
    ///
    /// # Safety
    ///
    /// No other thread may be running it at the same time: only the leader of an episode calls
    /// this, between that episode's last arrival and its release.
    pub(crate) unsafe fn run(&self) {
        if let Some(cell) = &self.action {
            // SAFETY: the caller guarantees exclusive access for the duration of the call.
            cell.with_mut(|action| unsafe { (*action)() });
        }
    }
}
