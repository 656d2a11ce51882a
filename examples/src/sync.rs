//! The switchable synchronization every application runs on.
//!
//! An application's threads meet through [`Waiter`]s, one per thread, and call
//! [`Waiter::wait`] wherever the original code has a barrier. Behind each waiter sits a
//! `Box<dyn WaitHandle>`: the same virtual call for every kind, so the comparison between
//! kinds is fair (no kind is inlined into the application while another pays a call).
//!
//! The kinds ([`SyncKind`]):
//!
//! - [`SyncKind::Ours`]: a [`phasers::Barrier`] with any [`Algorithm`], `Auto` included; each
//!   thread holds its rank's [`phasers::Participant`].
//! - [`SyncKind::Phaser`]: a flat [`phasers::Phaser`]; each thread holds a `SigWait`
//!   [`phasers::Registration`] and calls `next()`.
//! - [`SyncKind::Std`]: Rust's `std::sync::Barrier`.
//! - [`SyncKind::External`]: a barrier provided from outside through [`BarrierFactory`]; the
//!   `phasers` command passes glibc's `pthread_barrier_t` and C++20's `std::barrier` this way,
//!   since their C shims live (and are compiled) in the command's crate.
//!
//! OpenMP's `#pragma omp barrier` is not among them: it exists only inside an OpenMP parallel
//! region, among OpenMP's own threads, and cannot be called from the Rust threads that run these
//! applications.

use std::fmt;
use std::sync::Arc;

use phasers::{Algorithm, Barrier, Participant, Phaser, Registration};

/// One thread's way into a barrier.
pub trait WaitHandle: Send {
    /// Arrives at the barrier and returns once every party has arrived; `Err` says why the
    /// barrier failed (it is broken, or the native library reported an error).
    fn wait(&mut self) -> Result<(), String>;
}

impl WaitHandle for Participant {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        match Participant::wait(self) {
            Ok(_) => Ok(()),
            Err(error) => Err(error.to_string()),
        }
    }
}

impl WaitHandle for Registration {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        match self.next() {
            Ok(_) => Ok(()),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// A thread's handle on Rust's standard barrier, which keeps no per-thread state.
#[derive(Debug, Clone, Copy)]
struct StdHandle<'a>(&'a std::sync::Barrier);

impl WaitHandle for StdHandle<'_> {
    #[inline]
    fn wait(&mut self) -> Result<(), String> {
        self.0.wait();
        Ok(())
    }
}

/// Handles for every thread of one run, in rank order.
pub type Handles<'a> = Vec<Box<dyn WaitHandle + 'a>>;

/// A barrier implemented outside this crate, such as a C library's.
pub trait BarrierFactory: Send + Sync {
    /// The name in tables and reports, e.g. `pthread_barrier_t`.
    fn name(&self) -> String;

    /// Builds a barrier for `threads` parties and calls `run` with one handle per thread; the
    /// barrier lives until `run` returns. `Err` when the barrier cannot be built.
    fn with_handles(&self, threads: usize, run: &mut dyn FnMut(Handles<'_>)) -> Result<(), String>;
}

/// Which barrier an application's threads meet at.
#[derive(Clone)]
pub enum SyncKind {
    /// One of the library's barrier algorithms (`Auto` included).
    Ours(Algorithm),
    /// The library's flat phaser, each thread a `SigWait` registration calling `next()`.
    Phaser,
    /// `std::sync::Barrier`.
    Std,
    /// A barrier from outside the crate.
    External(Arc<dyn BarrierFactory>),
}

impl fmt::Debug for SyncKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The name of the [`SyncKind::Std`] kind.
pub const STD_NAME: &str = "std::sync::Barrier";

/// The name of the [`SyncKind::Phaser`] kind.
pub const PHASER_NAME: &str = "phaser";

impl SyncKind {
    /// The library's own kinds: `Auto`, every concrete algorithm and the phaser.
    pub fn ours() -> Vec<SyncKind> {
        std::iter::once(Algorithm::Auto)
            .chain(Algorithm::CONCRETE)
            .map(SyncKind::Ours)
            .chain([SyncKind::Phaser])
            .collect()
    }

    /// The name in tables and reports: the algorithm's name (`auto`, `mcs-tree`, ...),
    /// `phaser`, `std::sync::Barrier`, or the factory's name.
    pub fn name(&self) -> String {
        match self {
            SyncKind::Ours(algorithm) => algorithm.name().to_owned(),
            SyncKind::Phaser => PHASER_NAME.to_owned(),
            SyncKind::Std => STD_NAME.to_owned(),
            SyncKind::External(factory) => factory.name(),
        }
    }

    /// Whether this is one of the library's kinds (a barrier algorithm or the phaser).
    pub fn is_ours(&self) -> bool {
        matches!(self, SyncKind::Ours(_) | SyncKind::Phaser)
    }

    /// Builds this kind's barrier for `threads` parties and calls `run` with one handle per
    /// thread, in rank order. `Err` when the barrier cannot be built (0 threads, too many).
    pub fn with_handles<R>(
        &self,
        threads: usize,
        run: impl FnOnce(Handles<'_>) -> R,
    ) -> Result<R, String> {
        match self {
            SyncKind::Ours(algorithm) => {
                let barrier = Barrier::with_algorithm(threads, *algorithm).map_err(|error| {
                    format!("cannot build the {} barrier: {error}", self.name())
                })?;
                let handles = barrier
                    .participants()
                    .into_iter()
                    .map(|participant| Box::new(participant) as Box<dyn WaitHandle>)
                    .collect();
                Ok(run(handles))
            }
            SyncKind::Phaser => {
                let registrations = phaser_registrations(threads)
                    .map_err(|error| format!("cannot build the phaser: {error}"))?;
                let handles = registrations
                    .into_iter()
                    .map(|registration| Box::new(registration) as Box<dyn WaitHandle>)
                    .collect();
                Ok(run(handles))
            }
            SyncKind::Std => {
                if threads == 0 {
                    return Err("a barrier needs at least 1 thread".to_owned());
                }
                let barrier = std::sync::Barrier::new(threads);
                let handles = (0..threads)
                    .map(|_| Box::new(StdHandle(&barrier)) as Box<dyn WaitHandle + '_>)
                    .collect();
                Ok(run(handles))
            }
            SyncKind::External(factory) => {
                let mut run = Some(run);
                let mut result = None;
                factory.with_handles(threads, &mut |handles| {
                    if let Some(run) = run.take() {
                        result = Some(run(handles));
                    }
                })?;
                result.ok_or_else(|| {
                    format!(
                        "the {} factory built its barrier but never ran the application",
                        factory.name()
                    )
                })
            }
        }
    }
}

/// A flat phaser sized for `threads` and one `SigWait` registration per thread, the creator's
/// first. The phaser itself stays alive through its registrations.
fn phaser_registrations(threads: usize) -> phasers::Result<Vec<Registration>> {
    if threads == 0 {
        return Err(phasers::Error::InvalidArgument {
            message: "a phaser run needs at least 1 thread".to_owned(),
        });
    }
    let (_phaser, creator) = Phaser::builder()
        .mode(phasers::Mode::SigWait)
        .expected_parties(threads)
        .build()?;
    let mut registrations = Vec::with_capacity(threads);
    for _ in 1..threads {
        registrations.push(creator.register(phasers::Mode::SigWait)?);
    }
    registrations.insert(0, creator);
    Ok(registrations)
}

/// One thread's barrier inside an application: its handle, and how many times it waited.
pub struct Waiter<'h> {
    handle: Box<dyn WaitHandle + 'h>,
    waits: u64,
}

impl<'h> Waiter<'h> {
    /// A waiter on `handle` that has not waited yet.
    pub fn new(handle: Box<dyn WaitHandle + 'h>) -> Self {
        Waiter { handle, waits: 0 }
    }

    /// Waits at the barrier.
    ///
    /// # Panics
    ///
    /// If the barrier fails (it is broken because another thread panicked, or a native library
    /// returned an error). The panic ends this thread; the run that joins it reports the
    /// message, and a library barrier dropped by a panicking thread breaks, so the other threads'
    /// waits fail too instead of hanging.
    #[inline]
    pub fn wait(&mut self) {
        self.waits += 1;
        if let Err(error) = self.handle.wait() {
            barrier_failed(&error);
        }
    }

    /// How many times this thread has waited.
    pub fn waits(&self) -> u64 {
        self.waits
    }
}

#[cold]
#[inline(never)]
fn barrier_failed(error: &str) -> ! {
    panic!("barrier wait failed: {error}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A factory that hands out `std::sync::Barrier` handles, standing in for the command's
    /// native barriers.
    struct StdFactory;

    impl BarrierFactory for StdFactory {
        fn name(&self) -> String {
            "external std".to_owned()
        }

        fn with_handles(
            &self,
            threads: usize,
            run: &mut dyn FnMut(Handles<'_>),
        ) -> Result<(), String> {
            let barrier = std::sync::Barrier::new(threads);
            run((0..threads)
                .map(|_| Box::new(StdHandle(&barrier)) as Box<dyn WaitHandle + '_>)
                .collect());
            Ok(())
        }
    }

    pub(crate) fn every_kind() -> Vec<SyncKind> {
        let mut kinds = SyncKind::ours();
        kinds.push(SyncKind::Std);
        kinds.push(SyncKind::External(Arc::new(StdFactory)));
        kinds
    }

    #[test]
    fn every_kind_keeps_the_barrier_invariant() {
        for kind in every_kind() {
            for threads in [1, 2, 3] {
                let arrivals = AtomicUsize::new(0);
                let name = kind.name();
                kind.with_handles(threads, |handles| {
                    assert_eq!(handles.len(), threads);
                    std::thread::scope(|s| {
                        for handle in handles {
                            let (arrivals, name) = (&arrivals, &name);
                            s.spawn(move || {
                                let mut waiter = Waiter::new(handle);
                                for episode in 0..50 {
                                    arrivals.fetch_add(1, Ordering::SeqCst);
                                    waiter.wait();
                                    let seen = arrivals.load(Ordering::SeqCst);
                                    assert!(seen >= (episode + 1) * threads, "{name}");
                                }
                                assert_eq!(waiter.waits(), 50);
                            });
                        }
                    });
                })
                .unwrap();
            }
        }
    }

    #[test]
    fn names_are_distinct_and_zero_threads_is_an_error() {
        let kinds = every_kind();
        let mut names: Vec<String> = kinds.iter().map(SyncKind::name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), kinds.len());
        for kind in [
            SyncKind::Ours(Algorithm::Auto),
            SyncKind::Phaser,
            SyncKind::Std,
        ] {
            assert!(kind.with_handles(0, |_| ()).is_err(), "{kind:?}");
        }
        assert!(SyncKind::Phaser.is_ours() && !SyncKind::Std.is_ours());
    }
}
