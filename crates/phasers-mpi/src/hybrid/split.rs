//! `split(color, key)`: new hybrid teams, one per color, with their own communicators.
//!
//! Every member's (color, key, rank) reaches every process (the local posts, concatenated, then
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
use super::engine;
use super::member::HybridMember;
use super::shared::ProcessShared;
use super::signature::{Kind, Post, Signature};
use super::team::build_shared;
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::threading::mpi_call;

/// The color that opts a member out of a split, as in [`phasers::team::NONE`].
const NONE: u32 = phasers::team::NONE;

/// One member's entry: color, key, old rank.
type Entry = (u32, i64, usize);

const ENTRY_BYTES: usize = 24;

/// The split's own element type (three words), so that checked mode names it.
#[derive(Clone, Copy)]
struct SplitEntry;

fn encode(entry: Entry) -> Bytes {
    let words = [u64::from(entry.0), entry.1 as u64, entry.2 as u64];
    let mut bytes = Bytes::zeroed(ENTRY_BYTES);
    for (i, w) in words.iter().enumerate() {
        bytes.as_mut_slice()[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    bytes
}

fn decode(all: &Bytes) -> Vec<Entry> {
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

impl HybridMember {
    /// Splits the team: members that pass the same `color` form a new team, ranked by `key`
    /// (ties broken by their rank here), as far as the process-major rank order allows (see
    /// below). A member passing [`phasers::team::NONE`] joins no new team and gets `Ok(None)`.
    ///
    /// Collective over the whole team, in every process, and synchronizing, like
    /// `MPI_Comm_split` (which it calls): every member calls it. The new teams have their own
    /// communicators and are independent of this one and of each other; they inherit checked
    /// mode, node awareness and the timeout. In a checked team (the default), members of any
    /// process that call a different collective get [`Error::Mismatch`]; in an unchecked team,
    /// only the members of one process are compared (see
    /// [`HybridTeamBuilder::unchecked`](super::HybridTeamBuilder::unchecked)).
    ///
    /// A hybrid team's ranks are process-major. So the new team's processes come in the order
    /// of their first member by `(key, old rank)`, and each process's members by `(key, old
    /// rank)`; where keys follow the process order (equal keys, say), that is exactly
    /// `(key, old rank)`.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             // One team of the local rank 0 members, one of the local rank 1 members.
    ///             let color = member.local_rank() as u32;
    ///             let mut column = member.split(color, 0).unwrap().unwrap();
    ///             assert_eq!(column.rank(), member.process_rank());
    ///             column.barrier().unwrap();
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Mismatch`] when another member called a different collective,
    /// [`Error::Broken`] when the team is broken, [`Error::Timeout`] after the team's timeout.
    pub fn split(&mut self, color: u32, key: i64) -> Result<Option<HybridMember>> {
        let shared = Arc::clone(&self.shared);
        if shared.is_broken() {
            return Err(shared.broken_error());
        }
        let post = Post {
            sig: Signature::new::<SplitEntry>(Kind::Split, 1, 0),
            invalid: None,
            input: encode((color, key, self.rank)),
            reducer: None,
        };
        // `SplitEntry` has no size; the entries travel as 24 bytes each.
        let mut post = post;
        post.sig.elem_size = ENTRY_BYTES;
        let call = self.next_call;
        let deadline = shared
            .options
            .timeout
            .and_then(|t| std::time::Instant::now().checked_add(t));
        engine::arrive(&shared, self.local_rank, call, post, deadline)?;
        self.next_call += 1;
        let outcome = engine::wait(&shared, Kind::Split, call, deadline)?;
        if color == NONE {
            return Ok(None);
        }
        let entries = decode(&outcome.data);
        let Some((_, child)) = outcome.split.iter().find(|(c, _)| *c == color) else {
            return Err(Error::Broken {
                what: "hybrid team",
                reason: format!("split color {color}: no new team was made for it"),
            });
        };
        let first = shared.first_rank();
        let mut mine: Vec<Entry> = entries
            .into_iter()
            .filter(|e| e.0 == color && (first..first + shared.local).contains(&e.2))
            .collect();
        mine.sort_by_key(|&(_, key, rank)| (key, rank));
        let local_rank = mine.iter().position(|e| e.2 == self.rank).unwrap_or(0);
        Ok(Some(HybridMember {
            rank: child.first_rank() + local_rank,
            shared: Arc::clone(child),
            local_rank,
            next_call: 0,
        }))
    }
}
