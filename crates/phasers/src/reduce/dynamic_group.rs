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

pub(crate) fn work_until_complete<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<(), Bail> {
    let completed = |me: &Caller<'_, T>| me.shared.completed.load() > call.episode;
    loop {
        let seen = me.shared.board.load();
        if completed(me) {
            return Ok(());
        }
        help_everyone(me, call)?;
        if completed(me) {
            return Ok(());
        }
        me.wait(&me.shared.board, |now| now != seen, true)?;
    }
}

/// [`work_until_complete`] for a task.
pub(crate) async fn work_until_complete_in_task<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<(), Bail> {
    let completed = |me: &Caller<'_, T>| me.shared.completed.load() > call.episode;
    loop {
        let seen = me.shared.board.load();
        if completed(me) {
            return Ok(());
        }
        help_everyone(me, call)?;
        if completed(me) {
            return Ok(());
        }
        me.wait_in_task(&me.shared.board, move |now| now != seen, true)
            .await?;
    }
}

/// Claims chunks of every job that has some left. Returns the panic of the operator here, if it
/// panicked: the group is then broken and the job still finishes (the chunk was counted), so the
/// participant stops helping and unwinds.
fn help_everyone<T: Copy + Send + Sync + 'static>(
    me: &Caller<'_, T>,
    call: &Call<'_, T>,
) -> Result<(), Bail> {
    let shared = me.shared;
    for job in shared.jobs.iter() {
        job.help_current(call.kernel, || shared.break_from(call.episode, me.rank))
            .map_err(Bail::Panicked)?;
    }
    Ok(())
}
