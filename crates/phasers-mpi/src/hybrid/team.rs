//! Creating a hybrid team and handing out this process's members.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mpi::traits::Communicator;

use super::direct_state::DirectMember;
use super::member::HybridMember;
use super::options::Options;
use super::reducer::Reducers;
use super::shared::{build_shared, ProcessShared};
use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::mpi_env::Mpi;
use crate::threading::Threading;

/// A team of threads across the processes of a communicator: seed 004's teams and collectives
/// over ranks × threads. One `HybridTeam` per process; every process builds it together (the
/// constructor is collective), each with its own number of threads.
///
/// Calls are checked by default, in every build profile: members that call differently, in
/// any process, all get [`Error::Mismatch`] (see [`HybridTeamBuilder::unchecked`] for what
/// that costs and what turning it off gives up).
///
/// ```
/// use phasers::Op;
/// use phasers_mpi::{HybridTeam, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let team = HybridTeam::new(&mpi, mpi.world(), 4)?;
/// assert!(team.is_checked());
/// std::thread::scope(|s| {
///     for mut member in team.participants() {
///         s.spawn(move || {
///             let mut max = [0.0f64];
///             member.allreduce(&[member.rank() as f64], &mut max, Op::Max).unwrap();
///             assert_eq!(max[0], (member.parties() - 1) as f64);
///         });
///     }
/// });
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
pub struct HybridTeam {
    shared: Arc<ProcessShared>,
}

impl HybridTeam {
    /// A team of `threads` members in this process, across the processes of `comm`, with the
    /// default options. Collective over `comm`.
    ///
    /// # Errors
    ///
    /// As [`HybridTeamBuilder::build`].
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// assert_eq!(team.local_size(), 3);
    /// // Every process brings 3 threads here.
    /// assert_eq!(team.parties(), 3 * mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn new(mpi: &Mpi, comm: &impl Communicator, threads: usize) -> Result<HybridTeam> {
        HybridTeam::builder(mpi, comm, threads).build()
    }

    /// A builder for a team of `threads` members in this process, across the processes of
    /// `comm`.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2).unchecked().build()?;
    /// assert!(!team.is_checked());
    /// assert_eq!(team.local_size(), 2);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn builder<'a, C: Communicator>(
        mpi: &'a Mpi,
        comm: &'a C,
        threads: usize,
    ) -> HybridTeamBuilder<'a, C> {
        HybridTeamBuilder {
            mpi,
            comm,
            threads,
            checked: None,
            node_aware: true,
            timeout: None,
            ranks_per_node: None,
        }
    }

    /// This process's members.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// assert_eq!(team.members().len(), 2);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `participants()`: one name for handing out handles on every type"
    )]
    pub fn members(&self) -> Vec<HybridMember> {
        self.participants()
    }

    /// This process's members, local ranks `0..threads`, to move into threads. The first call
    /// hands them out; later calls return an empty `Vec` (each member exists once).
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// let members = team.participants();
    /// assert_eq!(members.iter().map(|m| m.local_rank()).collect::<Vec<_>>(), [0, 1]);
    /// assert!(team.participants().is_empty());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn participants(&self) -> Vec<HybridMember> {
        if self.shared.handed_out.swap(true, Ordering::AcqRel) {
            return Vec::new();
        }
        let first = self.shared.first_rank();
        (0..self.shared.local)
            .map(|local_rank| HybridMember {
                shared: Arc::clone(&self.shared),
                local_rank,
                rank: first + local_rank,
                next_call: 0,
                direct: DirectMember::default(),
                reducers: Reducers::default(),
            })
            .collect()
    }

    /// Members over all processes: the sum of every process's thread count.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// // One process of 2 threads, when run as a single rank.
    /// assert_eq!(team.parties(), 2 * mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn parties(&self) -> usize {
        self.shared.layout.size
    }

    /// Members over all processes.
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// assert_eq!(team.size(), team.parties());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    #[deprecated(
        since = "0.2.0",
        note = "use `parties()`: one name for the count on every type"
    )]
    pub fn size(&self) -> usize {
        self.parties()
    }

    /// Members in this process.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 3)?;
    /// assert_eq!(team.local_size(), 3);
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn local_size(&self) -> usize {
        self.shared.local
    }

    /// Processes in the team.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// // Built on the world: every process of the job.
    /// assert_eq!(team.processes(), mpi.size());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn processes(&self) -> usize {
        self.shared.layout.counts.len()
    }

    /// This process's rank in the team's communicator.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// assert_eq!(team.process_rank(), mpi.rank());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn process_rank(&self) -> usize {
        self.shared.process()
    }

    /// Whether calls are checked (agreed by all processes: process 0's choice).
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// assert!(team.is_checked());
    /// let unchecked = HybridTeam::builder(&mpi, mpi.world(), 2).checked(false).build()?;
    /// assert!(!unchecked.is_checked());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn is_checked(&self) -> bool {
        self.shared.options.checked
    }

    /// Whether calls run node-aware stages (process 0's choice, and only where the team spans
    /// several nodes, some with several processes).
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::new(&mpi, mpi.world(), 2)?;
    /// // Node-aware by default, but one node has nothing to gain from node stages.
    /// assert!(!team.is_node_aware());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn is_node_aware(&self) -> bool {
        self.shared.layout.hierarchy.is_some()
    }
}

/// Configures a [`HybridTeam`]: made by [`HybridTeam::builder`], one setter per option, then
/// [`build`](Self::build).
///
/// ```
/// use std::time::Duration;
/// use phasers_mpi::{HybridTeam, Mpi, Threading};
///
/// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
/// let mpi = Mpi::init(Threading::Serialized)?;
/// let team = HybridTeam::builder(&mpi, mpi.world(), 2)
///     .checked(true)
///     .node_aware(false)
///     .timeout(Duration::from_secs(10))
///     .build()?;
/// assert!(team.is_checked() && !team.is_node_aware());
/// # Ok::<(), phasers_mpi::Error>(())
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct HybridTeamBuilder<'a, C: Communicator> {
    mpi: &'a Mpi,
    comm: &'a C,
    threads: usize,
    checked: Option<bool>,
    node_aware: bool,
    timeout: Option<Duration>,
    ranks_per_node: Option<usize>,
}

impl<C: Communicator> HybridTeamBuilder<'_, C> {
    /// Turns the cross-process check off (see [`checked`](Self::checked)): calls then go to
    /// MPI without their envelope.
    ///
    /// What it gives up: processes that call different collectives, or with different lengths,
    /// element types, roots or ops, make an erroneous MPI program, which may abort the job
    /// (`MPI_ERR_TRUNCATE` for an allreduce of 2 elements against one of 102), hang (a
    /// broadcast against an allreduce) or return garbage without an error (broadcasts of
    /// different lengths or roots, different ops or element types). The members of one process
    /// are still compared with each other (without the op), and a member's bad argument still
    /// reaches the members of its process; in a process whose members disagree, the other
    /// processes get a result built from zeros where its part should be.
    ///
    /// What it saves: the envelope's cost (see [`checked`](Self::checked)), about 0.1 us of MPI
    /// time on a small call, and one small round trip on a call whose data exceeds the
    /// envelope.
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2).unchecked().build()?;
    /// assert!(!team.is_checked());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn unchecked(self) -> Self {
        self.checked(false)
    }

    /// Checked mode, on by default in every build profile (`PHASERS_CHECKED=off` or
    /// [`unchecked`](Self::unchecked) turns it off). All processes use process 0's choice.
    ///
    /// What is checked: every member of every process must make the same call — the same
    /// collective, element type, length, root and op. Members that differ get the same
    /// [`Error::Mismatch`] on every member of every process, with global ranks, naming what
    /// differs and both sides' calls and processes (`member 0 passed allreduce of 2 u64 elements
    /// with Op::Sum (process 0) but member 2 passed allreduce of 102 u64 elements with Op::Sum
    /// (process 1)`); a member's bad argument (a root output of the
    /// wrong length, say) reaches every member of every process as the same
    /// [`Error::InvalidArgument`]. No payload of a call that differs reaches MPI, so there is
    /// no MPI error, no hang and no garbage, and the team stays usable.
    ///
    /// How, and what it costs: each process sends its call's signature in a small record, the
    /// envelope, merged across processes so that every process learns whether all made the
    /// same call. On a flat team without a timeout the records travel by recursive doubling:
    /// through mailboxes in shared memory when every process runs on one node, as MPI messages
    /// otherwise; a node-aware team, or one with a timeout, merges fixed-size 256-byte records
    /// with one `MPI_Iallreduce` (node-aware: node reduce, leaders' allreduce, node broadcast)
    /// and an MPI operation of this crate. Its shape never depends on the call, so processes
    /// that called differently still make matching calls. A call whose data fits the record
    /// (3,984 bytes over all processes, 208 with `MPI_Iallreduce`) travels inside it: a matched
    /// call is that one exchange, no extra message or round trip. On the 2-core AMD EPYC VM
    /// with Open MPI 4.1.4 and 2 processes of one thread, a checked one-word `allreduce` took
    /// 135 ns where the unchecked one took 220 ns and `MPI_Allreduce` 244 ns (medians of one
    /// `phasers-mpi bench` run, BENCHMARKS.md). A checked broadcast or barrier is this exchange
    /// too, since a check needs every process to hear from every other. A larger call sends
    /// its envelope first and its data once every process agreed: one small round trip more,
    /// small beside the data. Only a call that differs pays more: one `MPI_Iallgather` of a
    /// 1 KiB record per process, from which every process draws the same error.
    ///
    /// ```
    /// use phasers::Op;
    /// use phasers_mpi::{Error, HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2).checked(true).build()?;
    /// std::thread::scope(|s| {
    ///     for mut member in team.participants() {
    ///         s.spawn(move || {
    ///             // Member 0 sums one element, member 1 two: both hear of it.
    ///             let input = vec![1u64; member.rank() + 1];
    ///             let mut output = vec![0u64; input.len()];
    ///             let result = member.allreduce(&input, &mut output, Op::Sum);
    ///             assert!(matches!(result, Err(Error::Mismatch { what: "length", .. })));
    ///         });
    ///     }
    /// });
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn checked(mut self, checked: bool) -> Self {
        self.checked = Some(checked);
        self
    }

    /// Node-aware collectives (default `true`): where the team spans several nodes, some with
    /// several processes, barrier, broadcast, reduce and allreduce go through the node first,
    /// then across one leader per node, then back through the node. `false` uses one flat
    /// communicator of processes (the MPI library's own algorithms).
    ///
    /// ```
    /// use phasers_mpi::{HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2).node_aware(false).build()?;
    /// assert!(!team.is_node_aware());
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn node_aware(mut self, node_aware: bool) -> Self {
        self.node_aware = node_aware;
        self
    }

    /// The longest a call may take (default: no limit). A call that runs out of time returns
    /// [`Error::Timeout`], and the team is broken from then on in this process, because an MPI
    /// collective cannot be cancelled. To give up waiting without breaking the team, wait on a
    /// non-blocking call with [`HybridPending::wait_timeout`](super::HybridPending::wait_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use phasers_mpi::{Error, HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2)
    ///     .timeout(Duration::from_millis(5))
    ///     .build()?;
    /// let mut members = team.participants();
    /// let (mut late, mut first) = (members.pop().unwrap(), members.pop().unwrap());
    /// // Member 1 is not there: member 0's barrier times out, and the team breaks.
    /// assert!(matches!(first.barrier(), Err(Error::Timeout { .. })));
    /// assert!(matches!(late.barrier(), Err(Error::Broken { .. })));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Treats every `ranks_per_node` consecutive processes as one node, instead of asking MPI
    /// which processes share a node: exercises the node-aware path on one machine.
    #[doc(hidden)]
    pub fn emulate_nodes(mut self, ranks_per_node: usize) -> Self {
        self.ranks_per_node = Some(ranks_per_node.max(1));
        self
    }

    /// Builds the team. Collective over the communicator: every process calls it, with the
    /// same or a different thread count.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] on every process when any process passed 0 threads or more
    /// than [`MAX_THREADS_PER_PROCESS`](crate::MAX_THREADS_PER_PROCESS), or for a bad `PHASERS_CHECKED`;
    /// [`Error::Threading`] when there is more than one thread per process and MPI provides
    /// less than [`Threading::Serialized`] (any member may drive MPI).
    ///
    /// # Examples
    ///
    /// ```
    /// use phasers_mpi::{Error, HybridTeam, Mpi, Threading};
    ///
    /// # std::env::set_var(phasers_mpi::SINGLETON_ENV, "1");
    /// let mpi = Mpi::init(Threading::Serialized)?;
    /// let team = HybridTeam::builder(&mpi, mpi.world(), 2).build()?;
    /// assert_eq!(team.local_size(), 2);
    /// // Every process passed 0 threads here, so every process gets the error.
    /// let empty = HybridTeam::builder(&mpi, mpi.world(), 0).build();
    /// assert!(matches!(empty, Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), phasers_mpi::Error>(())
    /// ```
    pub fn build(self) -> Result<HybridTeam> {
        // A thread count of 0 or above the limit is refused by every process together, once
        // the counts are exchanged (see `Layout::new`), so that none is left in a collective.
        if self.threads > 1 {
            self.mpi.require(
                Threading::Serialized,
                "a hybrid team with several threads per process",
            )?;
        }
        let checked = match self.checked {
            Some(checked) => checked,
            None => checked_from_env()?.unwrap_or(true),
        };
        let options = Options {
            checked,
            node_aware: self.node_aware,
            timeout: self.timeout,
            ranks_per_node: self.ranks_per_node,
            // Agreed by every process in `Layout::new`.
            direct: false,
        };
        let channel = Channel::duplicate(self.comm);
        Ok(HybridTeam {
            shared: build_shared(channel, self.threads, options)?,
        })
    }
}

fn checked_from_env() -> Result<Option<bool>> {
    let env = phasers::team::CHECKED_ENV;
    let Ok(text) = std::env::var(env) else {
        return Ok(None);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Ok(Some(true)),
        "off" | "0" | "false" | "no" => Ok(Some(false)),
        _ => Err(Error::invalid(format!(
            "{env}={text:?} is not a switch; set it to on or off, or unset it"
        ))),
    }
}
