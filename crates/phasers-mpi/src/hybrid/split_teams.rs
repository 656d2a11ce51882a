//! The new teams of a split, made by one member in each process from every member's (color,
//! key, rank) entry.
//!
//! Every member's entry reaches every process (the local posts, concatenated, then
//! `MPI_Iallgatherv`). From that table each process computes the same new teams. A team's ranks
//! are process-major (a process's members are consecutive), so the order `(key, old rank)` is
//! kept as far as that allows: a new team's processes are ordered by their first member in
//! `(key, old rank)` order, and a process's members by `(key, old rank)`. Where keys follow the
//! process order (as with equal keys) this is exactly `(key, old rank)`.
//!
//! The member that completes the gather in each process then calls `MPI_Comm_split` on the
//! team's communicator in rounds: round `r` gives each process's `r`-th color of its own (in
//! ascending order), `MPI_UNDEFINED` when it has fewer; every process makes as many rounds as
//! the process with the most colors. The new teams are then built in ascending color order,
//! which every process follows, so their collective constructions never wait on each other.

use std::collections::BTreeMap;
use std::sync::Arc;

use mpi::topology::Color;
use mpi::traits::Communicator;

use super::bytes::Bytes;
use super::shared::{build_shared, ProcessShared};
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::threading::mpi_call;

/// The color that opts a member out of a split, as in [`phasers::team::NONE`].
pub(crate) const NONE: u32 = phasers::team::NONE;

/// One member's entry: color, key, old rank.
pub(crate) type Entry = (u32, i64, usize);

/// An entry travels as three little-endian words.
pub(crate) const ENTRY_BYTES: usize = 24;

/// The split's own element type (three words), so that checked mode names it.
#[derive(Clone, Copy)]
pub(crate) struct SplitEntry;

/// One member's entry, as it travels.
pub(crate) fn encode(entry: Entry) -> Bytes {
    let words = [u64::from(entry.0), entry.1 as u64, entry.2 as u64];
    let mut bytes = Bytes::zeroed(ENTRY_BYTES);
    for (i, w) in words.iter().enumerate() {
        bytes.as_mut_slice()[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    bytes
}

/// The entries of `all`, concatenated in old rank order.
pub(crate) fn decode(all: &Bytes) -> Vec<Entry> {
    all.as_slice()
        .chunks_exact(ENTRY_BYTES)
        .map(|c| {
            let word = |i: usize| {
                let mut le = [0u8; 8];
                le.copy_from_slice(&c[i * 8..i * 8 + 8]);
                u64::from_le_bytes(le)
            };
            (word(0) as u32, word(1) as i64, word(2) as usize)
        })
        .collect()
}

/// The members of each color (not [`NONE`]), ordered by `(key, old rank)`.
fn groups(entries: &[Entry]) -> BTreeMap<u32, Vec<Entry>> {
    let mut groups: BTreeMap<u32, Vec<Entry>> = BTreeMap::new();
    for &e in entries.iter().filter(|e| e.0 != NONE) {
        groups.entry(e.0).or_default().push(e);
    }
    for members in groups.values_mut() {
        members.sort_by_key(|&(_, key, rank)| (key, rank));
    }
    groups
}

/// Run by the member that completes the split's gather in each process: makes the process's new
/// teams from every member's entry (`all`, in old rank order).
pub(crate) fn make_teams(
    shared: &ProcessShared,
    all: &Bytes,
) -> Result<Vec<(u32, Arc<ProcessShared>)>> {
    let entries = decode(all);
    let layout = &shared.layout;
    if entries.len() != layout.size {
        return Err(Error::Broken {
            what: "hybrid team",
            reason: format!(
                "a split gathered {} entries for {} members",
                entries.len(),
                layout.size
            ),
        });
    }
    let groups = groups(&entries);
    let index: BTreeMap<u32, usize> = groups.keys().enumerate().map(|(i, &c)| (c, i)).collect();
    // Each process's colors, ascending.
    let colors_of = |p: usize| -> Vec<u32> {
        let first = layout.offsets[p];
        let mut colors: Vec<u32> = entries[first..first + layout.counts[p]]
            .iter()
            .map(|e| e.0)
            .filter(|&c| c != NONE)
            .collect();
        colors.sort_unstable();
        colors.dedup();
        colors
    };
    let rounds = (0..layout.counts.len())
        .map(|p| colors_of(p).len())
        .max()
        .unwrap_or(0);
    let me = shared.process();
    let mine = colors_of(me);
    let first = layout.offsets[me];
    let mut comms = Vec::with_capacity(mine.len());
    for round in 0..rounds {
        let (color, key) = match mine.get(round) {
            Some(&c) => {
                let members = &groups[&c];
                // Processes ordered by their first member in (key, old rank) order.
                let position = members
                    .iter()
                    .position(|e| (first..first + shared.local).contains(&e.2))
                    .unwrap_or(0);
                (Color::with_value(index[&c] as i32), position as i32)
            }
            None => (Color::undefined(), 0),
        };
        let comm = {
            let _call = mpi_call();
            layout.flat.comm().split_by_color_with_key(color, key)
        };
        if let (Some(&c), Some(comm)) = (mine.get(round), comm) {
            comms.push((c, comm));
        }
    }
    let mut teams = Vec::with_capacity(comms.len());
    for (color, comm) in comms {
        let local = groups[&color]
            .iter()
            .filter(|e| (first..first + shared.local).contains(&e.2))
            .count();
        let child = build_shared(Channel::from_owned(comm), local, shared.options)?;
        if child.layout.size != groups[&color].len() {
            return Err(Error::Broken {
                what: "hybrid team",
                reason: format!(
                    "split color {color}: the new communicator disagrees on its members"
                ),
            });
        }
        teams.push((color, child));
    }
    Ok(teams)
}
