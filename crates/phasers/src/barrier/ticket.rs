//! Ticket barrier (seed 002).

use crossbeam_utils::CachePadded;

use super::algorithm::{sealed::AlgorithmImpl, Params};
use super::episode::Episode;
use crate::error::Error;
use crate::primitive::{AtomicU64, Ordering};
use crate::wait::{Signal, Stop};
use crate::Algorithm;

/// Ticket barrier (seed 002).
///
/// Like a ticket lock: every arrival takes the next ticket from one counter that only grows, and a
/// separate "now serving" word counts completed episodes. Ticket `t` belongs to episode `t / n`, and
/// the holder of the episode's last ticket serves it. Nothing is ever reset, and waiters poll a line
/// that arrivals do not write.
///
/// # Memory ordering
///
/// Tickets are taken with `AcqRel`, so the holder of the last ticket acquires every earlier
/// arrival's writes; it publishes the served count with `Release`, and waiters read it with
/// `Acquire`.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use phasers::barrier::Ticket;
/// use phasers::Barrier;
///
/// let barrier = Barrier::builder(3).build_static::<Ticket>()?;
/// let leaders = AtomicUsize::new(0);
/// std::thread::scope(|s| {
///     for mut p in barrier.participants() {
///         let leaders = &leaders;
///         s.spawn(move || {
///             for _ in 0..50 {
///                 if p.wait().unwrap().is_leader() {
///                     leaders.fetch_add(1, Ordering::Relaxed);
///                 }
///             }
///         });
///     }
/// });
/// assert_eq!(leaders.into_inner(), 50); // exactly one leader per episode
/// # Ok::<(), phasers::Error>(())
/// ```
pub struct Ticket {
    tickets: CachePadded<AtomicU64>,
    served: CachePadded<Signal>,
    parties: u64,
}

/// A participant's state: whether it holds a ticket and waits for its episode to be served.
#[derive(Debug, Default)]
pub struct TicketLocal {
    arrived: bool,
}

impl AlgorithmImpl for Ticket {
    type Local = TicketLocal;

    fn build(parties: usize, _: &Params) -> Self {
        Ticket {
            tickets: CachePadded::new(AtomicU64::new(0)),
            served: CachePadded::new(Signal::new(0)),
            parties: parties as u64,
        }
    }

    fn kind(&self) -> Algorithm {
        Algorithm::Ticket
    }

    fn local(&self, _rank: usize) -> TicketLocal {
        TicketLocal::default()
    }

    #[inline]
    fn wait(&self, local: &mut TicketLocal, episode: &Episode<'_>) -> Result<bool, Stop> {
        let number = episode.number();
        if !local.arrived {
            let ticket = self.tickets.fetch_add(1, Ordering::AcqRel);
            debug_assert_eq!(
                ticket / self.parties,
                number,
                "ticket taken for another episode"
            );
            if ticket == (number + 1) * self.parties - 1 {
                episode.complete_and_publish(&self.served, number + 1);
                return Ok(true);
            }
            local.arrived = true;
        }
        episode.wait_until(&self.served, |served| served > number)?;
        local.arrived = false;
        Ok(false)
    }

    fn leave(&self, _: &mut TicketLocal, _: &Episode<'_>) -> Result<(), Error> {
        unreachable!("Algorithm::Ticket does not support leaving; Participant::leave checks first")
    }

    fn wake_all(&self) {
        self.served.wake_all();
    }
}
