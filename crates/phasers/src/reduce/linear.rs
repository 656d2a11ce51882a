//! Linear: everyone meets, each participant reduces 1/N of the array across every input, and a
//! second meeting tells everyone that nobody reads their input or writes their output any more.
//!
//! Each element is combined in rank order (`in[0] op in[1] op .. op in[N-1]`), so the result is
//! the same bits on every call for a fixed N. For allreduce, each participant writes its share of
//! the result into every output while the block is still in its cache: every input is read once
//! and every output written once, the least traffic any allreduce can have.

use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::call::{Bail, Call, Role};
use super::handle::Caller;
use super::job::Panic;
use super::kernel::ElementWise;
use super::shared::Shared;
use super::signature::KIND_ALLREDUCE;
use super::task_wait::OnCancel;
use crate::primitive::Ordering;

/// Elements per block: a block of the result and of each input stays in L1 while it is combined
/// and copied out.
const BLOCK: usize = 2048;

pub(crate) fn run<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let first = arrive(shared);
    let met = me.wait(&shared.meetings, |done| done > first, true);
    if met.is_err() && leave_first(shared, first) == Left::Withdrawn {
        return Err(Bail::Broken);
    }
    let combined = combine(me, call);
    let second = arrive(shared);
    let _ = me.wait(&shared.meetings, |done| done > second, false);
    finish(me, call, combined)
}

/// [`run`] for a task.
pub(crate) async fn run_in_task<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let first = arrive(shared);
    // A task cancelled in the first meeting still owes the others: see `leave_first`.
    let rank = me.rank;
    let owed = OnCancel::new(move || {
        shared.break_from(call.episode, rank);
        if leave_first(shared, first) == Left::TooLate {
            arrive(shared);
        }
    });
    let met = me
        .wait_in_task(&shared.meetings, move |done| done > first, true)
        .await;
    owed.disarm();
    if met.is_err() && leave_first(shared, first) == Left::Withdrawn {
        return Err(Bail::Broken);
    }
    let combined = combine(me, call);
    let second = arrive(shared);
    let _ = me
        .wait_in_task(&shared.meetings, move |done| done > second, false)
        .await;
    finish(me, call, combined)
}

/// Between the meetings: this participant's share of the combination, unless the call is
/// poisoned. Everyone reads the same slots, so everyone finds the same mismatch, if any, and
/// either everyone combines or nobody does. An operator's panic breaks the group, and is
/// returned to go on once the second meeting passed: the others may be reading this
/// participant's input until then.
fn combine<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<(), Panic> {
    let Some(len) = agreed_len(me, call) else {
        return Ok(());
    };
    // The pointer lists are reused from call to call: no allocation on the hot path.
    let mut pointers = std::mem::take(me.pointers);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        combine_share(me, call, len, &mut pointers)
    }));
    *me.pointers = pointers;
    if outcome.is_err() {
        me.shared.break_from(call.episode, me.rank);
    }
    outcome
}

/// After the second meeting: the root completes the call, unless an operator panicked here.
fn finish<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
    combined: Result<(), Panic>,
) -> Result<Role, Bail> {
    combined.map_err(Bail::Panicked)?;
    if me.rank == call.root {
        me.complete(call.episode, call.len);
    }
    Ok(Role::Done)
}

/// Combines this participant's share of the first `len` elements, and for allreduce copies it to
/// every output.
fn combine_share<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<T>,
    len: usize,
    pointers: &mut Vec<usize>,
) {
    let shared = me.shared;
    let parties = shared.parties;
    pointers.clear();
    pointers.extend(
        shared
            .slots
            .iter()
            .map(|slot| slot.acc.load(Ordering::Relaxed)),
    );
    pointers.extend(
        shared
            .slots
            .iter()
            .map(|slot| slot.out.load(Ordering::Relaxed)),
    );
    let (inputs, outputs) = pointers.split_at(parties);
    let share = share_of(shared.virtual_rank(me.rank, call.root), parties, len);
    let dest = if call.kind == KIND_ALLREDUCE {
        call.out
    } else {
        outputs[call.root] as *mut T
    };
    let copies = if call.kind == KIND_ALLREDUCE {
        outputs
    } else {
        &[]
    };
    // SAFETY: after the first meeting every participant's input (at least `len` elements, kept
    // unchanged until the second meeting) and output (at least `len` where it is written, see
    // `agreed_len`) are published; shares are disjoint, so this participant is the only one
    // writing its share of any output; `dest` is its own output for allreduce.
    unsafe { reduce_share(call.kernel, inputs, dest, copies, me.rank, share) };
}

/// `dest[share] = in[0] op in[1] op .. op in[N-1]` in rank order, a block at a time, each block
/// then copied into every output of `copies` but the one at index `own` (`dest` itself) while it
/// is still in cache. A team's linear path runs this too, inside its own protocol.
///
/// # Safety
///
/// Every input and every output of `copies` holds at least `share.end` elements; the inputs are
/// initialized and nobody changes them meanwhile; nobody else touches `share` of `dest` or of the
/// outputs; `dest` is `copies[own]` when `copies` is not empty, and overlaps no input.
pub(crate) unsafe fn reduce_share<T: Copy, K: ElementWise<T> + ?Sized>(
    kernel: &K,
    inputs: &[usize],
    dest: *mut T,
    copies: &[usize],
    own: usize,
    share: std::ops::Range<usize>,
) {
    for start in share.clone().step_by(BLOCK) {
        let count = BLOCK.min(share.end - start);
        // SAFETY: the caller's contract.
        unsafe { reduce_block(kernel, inputs, dest, start, count) };
        for (index, &out) in copies.iter().enumerate() {
            if index != own {
                let out = out as *mut T;
                // SAFETY: the caller's contract; `dest` is `copies[own]`, distinct from every
                // other output.
                unsafe { std::ptr::copy_nonoverlapping(dest.add(start), out.add(start), count) };
            }
        }
    }
}

/// This participant's share of `0..len`: contiguous, sizes differing by at most one element.
pub(crate) fn share_of(position: usize, parties: usize, len: usize) -> std::ops::Range<usize> {
    let base = len / parties;
    let extra = len % parties;
    let start = position * base + position.min(extra);
    start..start + base + usize::from(position < extra)
}

/// `dest[start..start + count] = in[0] op in[1] op .. op in[N-1]`, in rank order (a copy of the
/// one input when there is one).
///
/// # Safety
///
/// Every input holds `start + count` initialized elements that nobody changes meanwhile, and
/// nobody else touches `dest[start..start + count]`, which overlaps no input.
unsafe fn reduce_block<T: Copy, K: ElementWise<T> + ?Sized>(
    kernel: &K,
    inputs: &[usize],
    dest: *mut T,
    start: usize,
    count: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let out = std::slice::from_raw_parts_mut(dest.add(start) as *mut MaybeUninit<T>, count);
        let input = |rank: usize| (inputs[rank] as *const T).add(start);
        let first = std::slice::from_raw_parts(input(0), count);
        if inputs.len() == 1 {
            std::ptr::copy_nonoverlapping(first.as_ptr(), dest.add(start), count);
            return;
        }
        let second = std::slice::from_raw_parts(input(1), count);
        kernel.combine(out, first, second);
        let out = std::slice::from_raw_parts_mut(dest.add(start), count);
        for rank in 2..inputs.len() {
            kernel.accumulate(out, std::slice::from_raw_parts(input(rank), count));
        }
    }
}

/// The length every participant passed, or `None` when the call is poisoned: some participant's
/// own output was wrong (it recorded why), or some participant's signature differs from rank 0's
/// (recorded here). Every participant reads the same slots after the first meeting, so all come to
/// the same answer.
///
/// The length returned is also the shortest of every input and of every output the call writes,
/// so the combination stays inside every buffer whatever the comparison decided.
fn agreed_len<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<T>,
) -> Option<usize> {
    let shared = me.shared;
    let first = shared.slots[0].signature();
    let mut len = first.len;
    let mut poisoned = first.poisoned;
    for (rank, slot) in shared.slots.iter().enumerate().skip(1) {
        let theirs = slot.signature();
        len = len.min(theirs.len);
        if poisoned {
            continue;
        }
        if let Err(found) = first.meet(0, &theirs, rank) {
            if let Some(error) = found {
                shared.record_mismatch(call.episode, error);
            }
            poisoned = true;
        }
    }
    for (rank, slot) in shared.slots.iter().enumerate() {
        if call.kind == KIND_ALLREDUCE || rank == call.root {
            len = len.min(slot.out_len.load(Ordering::Relaxed));
        }
    }
    (!poisoned).then_some(len)
}

/// Arrives at the next meeting, and returns its number.
///
/// The first meeting's wait gives up when the group breaks (nobody has touched anyone's buffers
/// yet, unless everyone arrived: see [`leave_first`]). The second's never does, because the
/// others may still be reading this participant's input, and they always arrive: nothing between
/// the meetings waits, a panicking operator is caught and counted, and a task cancelled after the
/// first meeting arrives on its way out.
fn arrive<T>(shared: &Shared<T>) -> u64 {
    let parties = shared.parties as u64;
    let ticket = shared.meeting_tickets.fetch_add(1, Ordering::AcqRel);
    let meeting = ticket / parties;
    if ticket % parties == parties - 1 {
        shared.meetings.publish_at_least(meeting + 1);
    }
    meeting
}

/// How a participant's attempt to leave the first meeting went.
#[derive(PartialEq, Eq)]
enum Left {
    /// It took its arrival back: the meeting cannot complete without it, and nobody will read
    /// its buffers in this call.
    Withdrawn,
    /// Everyone had arrived: the others read its buffers, and wait for it at the second meeting.
    TooLate,
}

/// Takes this participant's arrival at `meeting` back, unless everyone has arrived. A
/// participant that gives up on a broken group does this, and so does a task whose call is
/// cancelled (then it arrives at the second meeting on its way out if it was too late).
///
/// Without it, a participant that gave up could leave the meeting one arrival short, and a late
/// arrival (one that looked at the broken state just before the break) could then complete it
/// and read the buffers of a participant that returned. With it, the meeting completes only with
/// everyone present: the last arrival's increment and a withdrawal's decrement are both
/// read-modify-writes of the count, so one of them comes first.
fn leave_first<T>(shared: &Shared<T>, meeting: u64) -> Left {
    let complete_at = (meeting + 1) * shared.parties as u64;
    let tickets = &shared.meeting_tickets;
    let mut count = tickets.load(Ordering::Acquire);
    loop {
        if count >= complete_at {
            return Left::TooLate;
        }
        match tickets.compare_exchange(count, count - 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Left::Withdrawn,
            Err(now) => count = now,
        }
    }
}
