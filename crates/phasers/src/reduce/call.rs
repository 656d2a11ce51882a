//! One call as the algorithms see it, and how a participant's part of it ends.

use super::job::Panic;
use super::kernel::Kernel;
use super::signature::Signature;

/// Why a participant stopped before its part of a call was done.
pub(crate) enum Bail {
    /// The group broke; every buffer of this participant is out of everyone's reach.
    Broken,
    /// The operator panicked in this participant; the group is broken, and the panic goes on
    /// once every buffer of this participant is out of everyone's reach.
    Panicked(Panic),
}

/// How a participant's part of a call ended.
pub(crate) enum Role {
    /// Its data was consumed by a master; the result, if it needs one, comes later.
    Consumed,
    /// It combined the last pair: the call is complete.
    Completed,
    /// Everyone's result is in place (the linear algorithm's second meeting passed).
    Done,
}

/// One call as the algorithms see it.
pub(crate) struct Call<'k, T> {
    pub(crate) episode: u64,
    pub(crate) kind: usize,
    /// Who receives `reduce`'s result: the group's root, or the call's own (a team's).
    pub(crate) root: usize,
    pub(crate) input: *const T,
    /// The input's length.
    pub(crate) len: usize,
    /// Whether this participant's own arguments were wrong (its output's length).
    pub(crate) poisoned: bool,
    /// This participant's output, or null when it has none in this call.
    pub(crate) out: *mut T,
    /// Where this participant accumulates when it masters a pair: its output, else scratch.
    pub(crate) work: *mut T,
    /// The operator this participant applies to the chunks it claims: the group's, or the
    /// call's own (a team's). Every participant of a call applies the same operator.
    pub(crate) kernel: &'k Kernel<T>,
}

impl<T> Call<'_, T> {
    /// This participant's side of the call.
    pub(crate) fn signature(&self) -> Signature {
        Signature {
            kind: self.kind,
            len: self.len,
            poisoned: self.poisoned,
        }
    }
}
