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
use crate::primitive::Ordering;

const EMPTY: u64 = 0;

fn packed(rank: usize, count: usize) -> u64 {
    ((rank as u64 + 1) << 32) | count as u64
}

fn unpacked(word: u64) -> (usize, usize) {
    (((word >> 32) - 1) as usize, (word & 0xFFFF_FFFF) as usize)
}

pub(crate) async fn run<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
    group: bool,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let episode = call.episode;
    let parties = shared.parties;
    let slot = &shared.slots[me.rank];
    if call.kind != KIND_ALLREDUCE && !call.out.is_null() {
        // The root: its output is the last pair's destination, offered like data (see `slot`).
        slot.out_offer.publish(tag(episode, OFFERED));
    }
    let word = &shared.pairing[(episode % 2) as usize];
    let mut acc = call.input;
    let mut count = 1;
    // What `acc` holds: this participant's input, then what its pairs combined.
    let mut held = call.signature();
    loop {
        let Some((partner, partner_count)) = pair_up(word, me.rank, count) else {
            return wait_to_be_taken(me, call, packed(me.rank, count)).await;
        };
        let mut combined = me.check_partner(call, held, partner);
        let total = count + partner_count;
        let last = total == parties;
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
        let theirs = shared.slots[partner].acc.load(Ordering::Relaxed) as *const T;
        let len = combined.unwrap_or(0);
        // A task cancelled while its last pair runs still completes the call once the job is
        // done: a root whose output the pair writes waits for that without giving up.
        let rank = me.rank;
        let completion = last.then(|| {
            OnCancel::new(move || {
                shared.break_from(episode, rank);
                shared.complete_when_done(rank, episode, call.len);
            })
        });
        let paired = me
            .run_pair(call, partner, dest, acc, theirs, len, group)
            .await;
        completion.map(OnCancel::disarm);
        paired?;
        if last {
            me.complete(episode, call.len);
            return Ok(Role::Completed);
        }
        acc = dest;
        count = total;
        held = Signature {
            len,
            poisoned: combined.is_none(),
            ..held
        };
        slot.publish_acc(acc as usize, held);
    }
}

/// The seed's `get_neighbor`: either this participant is now the one waiting (`None`), or it took
/// the one that was waiting, returned with its count.
fn pair_up(
    word: &crate::primitive::AtomicU64,
    rank: usize,
    count: usize,
) -> Option<(usize, usize)> {
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

/// Waits in the word until a master takes this participant, then serves its job. If the group
/// breaks first, the participant takes itself back out of the word; if a master was faster, it
/// serves the job as usual (the master always posts it).
async fn wait_to_be_taken<T: Copy + Send + Sync + 'static>(
    me: &mut Caller<'_, T>,
    call: &Call<'_, T>,
    mine: u64,
) -> Result<Role, Bail> {
    let shared = me.shared;
    let episode = call.episode;
    let slot = &shared.slots[me.rank];
    let called = tag(episode, CALLED);
    if me
        .wait(&slot.offer, move |v| v == called, true)
        .await
        .is_err()
    {
        let word = &shared.pairing[(episode % 2) as usize];
        if word
            .compare_exchange(mine, EMPTY, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Err(Bail::Broken);
        }
    }
    me.serve(call).await?;
    Ok(Role::Consumed)
}
