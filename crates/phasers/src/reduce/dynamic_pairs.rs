//! Dynamic pair generation: pairs form in the order participants arrive (seed 003's "dynamic").
//!
//! One word per call parity holds either nothing or the participant waiting for a partner, packed
//! with the number of participants its data already holds (the seed's `get_neighbor`, with the
//! count in the same word so no global counter is needed):
//!
//! | bits | meaning |
//! |---|---|
//! | 32..64 | rank of the waiting participant + 1 (0: nobody waits) |
//! | 0..32 | how many participants' data its accumulated data holds |
//!
//! An arrival swaps itself in if the word is empty and waits; otherwise it takes the waiting one
//! out and becomes the master of the pair (the later arrival masters). The pair splits the work;
//! the slave returns once its data is consumed; the master adds the two counts, and goes back to
//! the word with its accumulated data, unless the count reached N: then it combined the last
//! pair, straight into the final buffer, and the call is complete.
//!
//! Which data meets which depends on the arrival order, so floating-point results may differ in
//! the last bits from call to call; `deterministic` runs the static tree instead.
//!
//! `DynamicGroup` is the same pairing, except that participants that would return join the
//! workforce (see [`dynamic_group`](super::dynamic_group)).

use super::call::{Bail, Call, Role};
use super::handle::Caller;
use super::signature::{Signature, KIND_ALLREDUCE};
use super::slot::{tag, CALLED, OFFERED, TAKEN};
use super::task_wait::OnCancel;
use crate::primitive::{AtomicU64, Ordering};

const EMPTY: u64 = 0;

fn packed(rank: usize, count: usize) -> u64 {
    ((rank as u64 + 1) << 32) | count as u64
}

fn unpacked(word: u64) -> (usize, usize) {
    (((word >> 32) - 1) as usize, (word & 0xFFFF_FFFF) as usize)
}

pub(crate) fn run<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
    group: bool,
) -> Result<Role, Bail> {
    let (word, mut held) = enter(me, call);
    let mut acc = call.input;
    let mut count = 1;
    loop {
        let Some((partner, partner_count)) = pair_up(word, me.rank, count) else {
            let mine = packed(me.rank, count);
            let called = tag(call.episode, CALLED);
            let slot = &me.shared.slots[me.rank];
            if me.wait(&slot.offer, |v| v == called, true).is_err() && leave(word, mine) {
                return Err(Bail::Broken);
            }
            me.serve(call)?;
            return Ok(Role::Consumed);
        };
        count += partner_count;
        let pair = pair_with(me, call, partner, held, count);
        me.run_pair(call, partner, pair.dest, acc, pair.theirs, pair.len, group)?;
        if pair.last {
            me.complete(call.episode, call.len);
            return Ok(Role::Completed);
        }
        (acc, held) = (pair.dest as *const T, pair.held);
        me.shared.slots[me.rank].publish_acc(acc as usize, held);
    }
}

/// [`run`] for a task.
pub(crate) async fn run_in_task<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
    group: bool,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let (word, mut held) = enter(me, call);
    let mut acc = call.input;
    let mut count = 1;
    loop {
        let Some((partner, partner_count)) = pair_up(word, me.rank, count) else {
            let mine = packed(me.rank, count);
            let called = tag(call.episode, CALLED);
            let slot = &shared.slots[me.rank];
            let waited = me
                .wait_in_task(&slot.offer, move |v| v == called, true)
                .await;
            if waited.is_err() && leave(word, mine) {
                return Err(Bail::Broken);
            }
            me.serve_in_task(call).await?;
            return Ok(Role::Consumed);
        };
        count += partner_count;
        let pair = pair_with(me, call, partner, held, count);
        // A task cancelled while its last pair runs still completes the call once the job is
        // done: a root whose output the pair writes waits for that without giving up.
        let (rank, episode) = (me.rank, call.episode);
        let completion = pair.last.then(|| {
            OnCancel::new(move || {
                shared.break_from(episode, rank);
                shared.complete_when_done(rank, episode, call.len);
            })
        });
        let paired = me
            .run_pair_in_task(call, partner, pair.dest, acc, pair.theirs, pair.len, group)
            .await;
        if let Some(completion) = completion {
            completion.disarm();
        }
        paired?;
        if pair.last {
            me.complete(episode, call.len);
            return Ok(Role::Completed);
        }
        (acc, held) = (pair.dest as *const T, pair.held);
        shared.slots[me.rank].publish_acc(acc as usize, held);
    }
}

/// The call's start: the root offers its output, which the last pair writes (see `slot`).
/// Returns the call's pairing word, and what this participant's data holds (its own input).
#[inline]
fn enter<'s, T: Copy + Send + Sync + 'static>(
    me: &Caller<'s, T>,
    call: &Call<'_, T>,
) -> (&'s AtomicU64, Signature) {
    let shared = me.shared;
    if call.kind != KIND_ALLREDUCE && !call.out.is_null() {
        shared.slots[me.rank]
            .out_offer
            .publish(tag(call.episode, OFFERED));
    }
    (
        &shared.pairing[(call.episode % 2) as usize],
        call.signature(),
    )
}

/// A participant waiting in the word that gave up on a broken group takes itself back out,
/// unless a master took it first (then it serves the job as usual: the master always posts it).
/// Returns whether it left.
#[inline]
fn leave(word: &AtomicU64, mine: u64) -> bool {
    word.compare_exchange(mine, EMPTY, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// What a master combines with the partner it took.
struct Pair<T> {
    dest: *mut T,
    theirs: *const T,
    len: usize,
    /// What `dest` holds afterwards.
    held: Signature,
    /// Whether this pair combines the last two parts: the call completes with it.
    last: bool,
}

/// As the master of a pair whose data will hold `count` participants' inputs: checks the
/// partner's data against this participant's, and chooses where the pair writes. The last pair
/// writes the final buffer: the group's result for allreduce, the root's output for reduce.
#[inline]
fn pair_with<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
    partner: usize,
    held: Signature,
    count: usize,
) -> Pair<T> {
    let shared = me.shared;
    let episode = call.episode;
    let mut combined = me.check_partner(call, held, partner);
    let last = count == shared.parties;
    let mut dest = call.work;
    if last {
        if let Some(len) = combined {
            if call.kind == KIND_ALLREDUCE {
                dest = me.result_buffer(len);
            } else {
                let root = &shared.slots[call.root];
                let taken = root
                    .out_offer
                    .compare_publish(tag(episode, OFFERED), tag(episode, TAKEN));
                // A root that withdrew gave up on a broken group; there is nowhere to write.
                // The root's output is as long as its input (its own check), so as long as
                // the pair's data; the minimum keeps inside it whatever the checks decided.
                combined = taken
                    .ok()
                    .map(|_| len.min(root.out_len.load(Ordering::Relaxed)));
                dest = root.out.load(Ordering::Relaxed) as *mut T;
            }
        }
    }
    let len = combined.unwrap_or(0);
    Pair {
        dest,
        theirs: shared.slots[partner].acc.load(Ordering::Relaxed) as *const T,
        len,
        held: Signature {
            len,
            poisoned: combined.is_none(),
            ..held
        },
        last,
    }
}

/// The seed's `get_neighbor`: either this participant is now the one waiting (`None`), or it took
/// the one that was waiting, returned with its count.
fn pair_up(word: &AtomicU64, rank: usize, count: usize) -> Option<(usize, usize)> {
    let mine = packed(rank, count);
    loop {
        match word.compare_exchange(EMPTY, mine, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return None,
            Err(EMPTY) => continue,
            Err(waiting) => {
                // Taken by someone else meanwhile: try again from the start.
                if word
                    .compare_exchange(waiting, EMPTY, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Some(unpacked(waiting));
                }
            }
        }
    }
}
