//! A non-blocking collective in progress.

use super::call::Call;
use super::member::Member;
use crate::error::Result;

/// A collective started by one of [`Member`]'s `i`-methods (`ibroadcast`, `iallreduce`, ...).
///
/// It borrows the member and the call's buffers until it is dropped, so neither can be used
/// (nor the outputs read) before the call is over: misuse fails to compile. The call makes
/// progress only in this member's own calls to [`test`](Self::test) and [`wait`](Self::wait):
/// there is no background thread. Members may wait in any order; the call completes once every
/// member has started it and each has tested or waited until done.
///
/// Inputs are copied into the team when the call starts, so others never read the caller's
/// buffers after `i`-method returns; only the caller writes its outputs, during `test` or `wait`.
///
/// Dropping an unfinished `Pending` waits for the call to end (and discards its error). If the
/// handle is leaked instead (`std::mem::forget`), the outputs are never written and the member's
/// next call finishes this one first.
///
/// ```
/// use phasers::{Op, Team};
///
/// let team = Team::new(2)?;
/// let sums: Vec<u64> = std::thread::scope(|s| {
///     let handles: Vec<_> = team
///         .participants()
///         .into_iter()
///         .map(|mut m| s.spawn(move || {
///             let input = [m.rank() as u64 + 1; 100];
///             let mut output = [0u64; 100];
///             let mut pending = m.iallreduce(&input, &mut output, Op::Sum).unwrap();
///             while !pending.test().unwrap() {
///                 // ... overlap other work here ...
///             }
///             pending.wait().unwrap();
///             output[99]
///         }))
///         .collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(sums, vec![3, 3]);
/// # Ok::<(), phasers::Error>(())
/// ```
#[must_use = "a collective completes only through test() or wait() (or when dropped)"]
pub struct Pending<'a, T: Copy + Send + 'static> {
    member: &'a mut Member,
    call: Call<'a, T>,
    outcome: Option<Result<()>>,
}

impl<'a, T: Copy + Send + 'static> Pending<'a, T> {
    pub(crate) fn start(member: &'a mut Member, call: Call<'a, T>) -> Result<Self> {
        member.start(&call, true)?;
        Ok(Pending {
            member,
            call,
            outcome: None,
        })
    }

    /// Makes what progress is possible without waiting. Returns `Ok(true)` once the call is over
    /// and its outputs are written, `Ok(false)` while it is not.
    ///
    /// # Errors
    ///
    /// The call's error, as the blocking form would return it; every later `test` or `wait`
    /// returns it again.
    pub fn test(&mut self) -> Result<bool> {
        if self.outcome.is_none() {
            self.outcome = self.member.progress(&self.call, false);
        }
        match &self.outcome {
            None => Ok(false),
            Some(outcome) => outcome.clone().map(|()| true),
        }
    }

    /// Waits until the call is over and returns its result.
    ///
    /// # Errors
    ///
    /// As the blocking form of the collective.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        if self.outcome.is_none() {
            self.outcome = self.member.progress(&self.call, true);
        }
        self.outcome.clone().unwrap_or(Ok(()))
    }
}

impl<T: Copy + Send + 'static> Drop for Pending<'_, T> {
    fn drop(&mut self) {
        if self.outcome.is_none() {
            let _ = self.finish();
        }
    }
}

impl<T: Copy + Send + 'static> std::fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("member", &self.member.rank)
            .field("done", &self.outcome.is_some())
            .finish()
    }
}
