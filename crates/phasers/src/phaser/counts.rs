//! How many registrations a phase waits for, and how many of them have signalled it
//! (`java.util.concurrent.Phaser`'s `getRegisteredParties`, `getArrivedParties` and
//! `getUnarrivedParties`).
//!
//! The counts are read from the roster, where each signal-capable registration records the next
//! phase it will signal just before its signal reaches the tree, and where registrations are added
//! and removed under the roster's lock. They are snapshots for observing and reporting, never a
//! basis for synchronization: use the phaser's waits for that.

use super::Phaser;
use crate::primitive::Ordering;

impl Phaser {
    /// The signal-capable registrations (modes `SigWaitSingle`, `SigWait` and `Sig`): those a phase
    /// waits for (Java's `getRegisteredParties`). The same as [`signallers`](Self::signallers).
    /// Wait-only registrations are not counted: they never hold a phase back.
    ///
    /// A registration made by a task that has already signalled the phase in progress enters the
    /// next phase; it is counted here, and counted as [`arrived`](Self::arrived) for the phase in
    /// progress.
    ///
    /// Once the phaser is terminated the count stays what it was, as Java's: a drop then has no
    /// effect (Java's `arriveAndDeregister` on a terminated phaser).
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// let producer = creator.register(Mode::Sig)?;
    /// let _consumer = creator.register(Mode::Wait)?;
    /// assert_eq!(phaser.registered(), 2); // the creator and the producer
    /// drop(creator);
    /// assert_eq!(phaser.registered(), 1);
    /// phaser.force_terminate();
    /// drop(producer); // no effect on a terminated phaser
    /// assert_eq!(phaser.registered(), 1);
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn registered(&self) -> usize {
        self.core.signallers()
    }

    /// The signal-capable registrations that have signalled the phase in progress, the one
    /// [`phase`](Self::phase) returns (Java's `getArrivedParties`). Signal-only registrations that
    /// have run ahead count as arrived.
    ///
    /// It is a snapshot. With no signal, registration or drop running meanwhile it is exact.
    /// Otherwise it is a value the count held during the call, and a registration counts as
    /// arrived from just before its signal reaches the phaser: `arrived() == registered()` may be
    /// seen a moment before the phase is released (on a phaser of several
    /// [`tiers`](Self::tiers), while the last signal climbs the tree; with a
    /// [`next_single`](super::Registration::next_single) action, while the action runs). On a
    /// terminated phaser it still counts the registrations left, though no phase completes any
    /// more.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, mut main) = Phaser::new(Mode::SigWait)?;
    /// let mut other = main.register(Mode::SigWait)?;
    /// assert_eq!((phaser.arrived(), phaser.unarrived()), (0, 2));
    /// main.signal()?;
    /// assert_eq!((phaser.arrived(), phaser.unarrived()), (1, 1));
    /// other.signal()?; // the last signal: phase 0 completes
    /// assert_eq!(phaser.phase(), 1);
    /// assert_eq!((phaser.arrived(), phaser.unarrived()), (0, 2));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn arrived(&self) -> usize {
        self.counts().1
    }

    /// The signal-capable registrations that have not yet signalled the phase in progress (Java's
    /// `getUnarrivedParties`): `registered() - arrived()`, taken from one snapshot (see
    /// [`arrived`](Self::arrived)). The phase completes when it reaches 0.
    ///
    /// ```
    /// use phasers::{Mode, Phaser};
    ///
    /// let (phaser, main) = Phaser::new(Mode::SigWait)?;
    /// let mut producer = main.register(Mode::Sig)?;
    /// drop(main);
    /// assert_eq!(phaser.unarrived(), 1);
    /// producer.next()?; // a signal-only next never waits: phase 0 completes
    /// producer.next()?; // and phase 1
    /// assert_eq!((phaser.phase(), phaser.unarrived()), (2, 1)); // phase 2 waits for it
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn unarrived(&self) -> usize {
        let (registered, arrived) = self.counts();
        registered - arrived
    }

    /// `(registered, arrived)` for the phase in progress, from one pass over the roster.
    pub(super) fn counts(&self) -> (usize, usize) {
        let roster = self
            .core
            .roster
            .lock()
            .expect("no thread panics holding the roster");
        // Read under the lock, so no registration joins or leaves between the phase and the count.
        let phase = self.phase();
        let arrived = roster
            .signalled
            .values()
            .filter(|next| next.cell().load(Ordering::Relaxed) > phase)
            .count();
        (roster.signalled.len(), arrived)
    }
}
