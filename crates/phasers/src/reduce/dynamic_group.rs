//! The `DynamicGroup` workforce: participants whose data was consumed help later pairs instead of
//! returning (seed 003's "dynamic group").
//!
//! The seed's workforce is a locked list that a master wakes with a baton. Here a master posts
//! its pair's job in its own job slot as always, then bumps one board word; workers wait on the
//! board, and when it changes they scan every job slot and claim chunks of any job that has some
//! left (see [`Job`](super::job): a claim is one compare-and-swap, and a worker that comes late
//! simply finds no chunk). The pair itself never waits for workers, so a worker costs the pair
//! nothing when it has no core to run on. Workers return when the call completes.

use super::call::{Bail, Call};
use super::handle::Caller;

pub(crate) async fn work_until_complete<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<(), Bail> {
    let shared = me.shared;
    let episode = call.episode;
    loop {
        let seen = shared.board.load();
        if shared.completed.load() > episode {
            return Ok(());
        }
        for job in shared.jobs.iter() {
            if let Err(payload) = job.help_current(call.kernel, || {
                shared.break_from(episode, me.rank);
            }) {
                // The group is broken and the job still finishes (the chunk was counted): stop
                // helping and unwind.
                return Err(Bail::Panicked(payload));
            }
        }
        if shared.completed.load() > episode {
            return Ok(());
        }
        me.wait(&shared.board, move |now| now != seen, true)
            .await?;
    }
}
