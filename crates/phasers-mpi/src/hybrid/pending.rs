//! The handle of a non-blocking call.

use std::marker::PhantomData;
use std::time::Instant;

use super::engine::{self, Poll};
use super::member::HybridMember;
use super::shared::Outcome;
use super::signature::Kind;
use crate::error::{Error, Result};

/// Where a member's output goes: `len` bytes of the member's own output slice, filled from the
/// outcome at `from`.
pub(crate) struct Output<'a> {
    ptr: *mut u8,
    len: usize,
    from: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> Output<'a> {
    pub(crate) fn new<T: Copy>(dst: &'a mut [T], from: usize) -> Output<'a> {
        Output {
            len: std::mem::size_of_val(dst),
            ptr: dst.as_mut_ptr().cast(),
            from,
            _borrow: PhantomData,
        }
    }

    fn fill(&mut self, outcome: &Outcome) -> Result<()> {
        let src = outcome.data.as_slice();
        let Some(part) = self
            .from
            .checked_add(self.len)
            .and_then(|end| src.get(self.from..end))
        else {
            return Err(Error::Broken {
                what: "hybrid team",
                reason: format!(
                    "a call's result has {} bytes where this member needs {} from byte {}; in \
                     an unchecked team this means members called different collectives (build \
                     the team without .unchecked() to find them)",
                    src.len(),
                    self.len,
                    self.from
                ),
            });
        };
        // SAFETY: `ptr` is the start of a `&'a mut [T]` of `len` bytes, borrowed exclusively by
        // this handle for `'a`; `part` is `len` bytes of a buffer the outcome owns, which cannot
        // overlap it. The bytes came from values of the same `T` (every member of the call
        // passed the same element type).
        unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), self.ptr, self.len) };
        Ok(())
    }
}

/// A non-blocking collective in progress, from an `i`-method of [`HybridMember`].
///
/// It borrows the member and the call's buffers until it is finished, so neither can be used
/// (or dropped) meanwhile. The call moves forward only while members of the team poll it:
/// [`test`](Self::test) polls once, [`wait`](Self::wait) polls until it ends. Outputs are written
/// by this handle itself, when a poll finds the call over. Dropping the handle waits for the
/// call (or, while its thread panics, breaks the team instead).
///
/// ```no_run
/// use phasers_mpi::{HybridTeam, Mpi, Threading};
///
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
/// std::thread::scope(|s| {
///     for mut member in team.participants() {
///         s.spawn(move || {
///             let mut value = [member.rank() as u64];
///             let mut pending = member.ibroadcast(0, &mut value).unwrap();
///             while !pending.test().unwrap() {
///                 // ... work that does not need `value` ...
///             }
///             drop(pending);
///             assert_eq!(value, [0]);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[must_use = "a pending call must be tested or waited for (dropping it waits)"]
pub struct HybridPending<'a> {
    member: &'a mut HybridMember,
    kind: Kind,
    call: u64,
    deadline: Option<Instant>,
    output: Option<Output<'a>>,
    finished: Option<Result<()>>,
}

// SAFETY: the only non-`Send` field is the output pointer, an exclusive borrow of a slice of
// `T: Send` values for `'a`; moving the handle to another thread moves that borrow with it.
unsafe impl Send for HybridPending<'_> {}

impl<'a> HybridPending<'a> {
    pub(crate) fn new(
        member: &'a mut HybridMember,
        kind: Kind,
        call: u64,
        deadline: Option<Instant>,
        output: Option<Output<'a>>,
    ) -> Self {
        HybridPending {
            member,
            kind,
            call,
            deadline,
            output,
            finished: None,
        }
    }

    /// Polls the call once: `Ok(true)` when it is over (outputs written), `Ok(false)` while it
    /// runs. Once over, every later `test` returns the same answer.
    ///
    /// # Errors
    ///
    /// The call's errors, as its blocking form: [`Error::InvalidArgument`],
    /// [`Error::Mismatch`], [`Error::Broken`], and [`Error::Timeout`] when the team's timeout
    /// passed (the team is then broken).
    pub fn test(&mut self) -> Result<bool> {
        if let Some(result) = &self.finished {
            return result.clone().map(|()| true);
        }
        let shared = &self.member.shared;
        let result = match engine::poll(shared, self.call) {
            Poll::Pending => {
                if self.deadline.is_some_and(|d| Instant::now() >= d) {
                    Err(engine::time_out(
                        shared,
                        self.kind,
                        self.call,
                        Vec::new(),
                        self.deadline,
                    ))
                } else {
                    return Ok(false);
                }
            }
            Poll::Done(outcome) => {
                engine::depart(shared, self.call);
                self.take(outcome)
            }
            Poll::Broken(error) => Err(error),
        };
        self.finished = Some(result.clone());
        result.map(|()| true)
    }

    /// Waits until the call is over.
    ///
    /// # Errors
    ///
    /// As [`test`](Self::test).
    pub fn wait(mut self) -> Result<()> {
        self.complete()
    }

    fn complete(&mut self) -> Result<()> {
        if let Some(result) = &self.finished {
            return result.clone();
        }
        let outcome = engine::wait(&self.member.shared, self.kind, self.call, self.deadline);
        let result = self.take(outcome);
        self.finished = Some(result.clone());
        result
    }

    fn take(&mut self, outcome: Result<std::sync::Arc<Outcome>>) -> Result<()> {
        let outcome = outcome?;
        match self.output.as_mut() {
            Some(output) => output.fill(&outcome),
            None => Ok(()),
        }
    }
}

impl Drop for HybridPending<'_> {
    fn drop(&mut self) {
        if self.finished.is_some() {
            return;
        }
        if std::thread::panicking() {
            let rank = self.member.rank();
            self.member
                .shared
                .mark_broken(|| format!("member {rank} panicked during a non-blocking call"));
            self.finished = Some(Err(self.member.shared.broken_error()));
            return;
        }
        let _ = self.complete();
    }
}
