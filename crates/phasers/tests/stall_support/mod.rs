//! Shared helpers for the stall report tests: a hook that collects every report of the process
//! with the moment it came, and a gate that stops one participant before an episode, checks the
//! stall it causes, and lets it go on.
//!
//! The hook is process-wide, so the tests of one binary take [`serial`] first: one stalled object
//! at a time, whose reports are the only ones collected.
#![allow(dead_code)]

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, Instant};

use phasers::StallReport;

#[path = "../watchdog_support/mod.rs"]
mod watchdog_support;

#[allow(unused_imports)] // each test binary uses part of the support module
pub use watchdog_support::{within, HANG};

/// The stall time the tests give their objects.
pub const STALL: Duration = Duration::from_secs(1);
/// How late after the stall time a report may come: a wake-up on a busy 2-core machine.
pub const SLACK: Duration = Duration::from_secs(1);
/// How long after the first report the tests wait for a second one that must not come.
pub const QUIET: Duration = Duration::from_millis(500);

static REPORTS: Mutex<Vec<(Instant, StallReport)>> = Mutex::new(Vec::new());
static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the binary's one-at-a-time lock, installs the collecting hook, and forgets reports
/// collected before.
pub fn serial() -> MutexGuard<'static, ()> {
    static INSTALL: Once = Once::new();
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    INSTALL.call_once(|| {
        phasers::set_stall_hook(|report| {
            let mut reports = REPORTS.lock().unwrap_or_else(PoisonError::into_inner);
            reports.push((Instant::now(), report.clone()));
        })
    });
    take_reports();
    guard
}

/// The reports collected so far, with when each came; forgets them.
pub fn take_reports() -> Vec<(Instant, StallReport)> {
    std::mem::take(&mut *REPORTS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Waits up to `late` after `start` for the first report, then twice `stall` more for a second
/// one that must not come; returns the one report and how long after `start` it came.
pub fn one_report(start: Instant, late: Duration, stall: Duration) -> (StallReport, Duration) {
    let mut reports = Vec::new();
    while reports.is_empty() && start.elapsed() < late {
        std::thread::sleep(Duration::from_millis(10));
        reports = take_reports();
    }
    std::thread::sleep(stall * 2);
    reports.extend(take_reports());
    let [(came, report)] = &reports[..] else {
        let lines: Vec<_> = reports.iter().map(|(_, r)| r.to_string()).collect();
        panic!("expected one stall report within {late:?}, got {lines:#?}");
    };
    (report.clone(), came.duration_since(start))
}

/// Waits until some report came or `deadline` passed.
fn await_report(deadline: Instant) {
    while REPORTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_empty()
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The test's side of a gate: learns when the stopped participant stopped, and lets it go on.
pub struct Gate {
    stopped: Receiver<Instant>,
    go: Sender<()>,
}

/// The stopped participant's side: it holds here, its handle alive, until the test lets it go.
pub struct Hold {
    stopped: Sender<Instant>,
    /// In a mutex so that every participant's thread may hold a reference (only one uses it).
    go: Mutex<Receiver<()>>,
}

pub fn gate() -> (Gate, Hold) {
    let (stopped_tx, stopped_rx) = channel();
    let (go_tx, go_rx) = channel();
    (
        Gate {
            stopped: stopped_rx,
            go: go_tx,
        },
        Hold {
            stopped: stopped_tx,
            go: Mutex::new(go_rx),
        },
    )
}

impl Hold {
    /// Stops here, silently, until the test lets it go: the handle stays alive, so the object
    /// does not break.
    pub fn hold(&self) {
        self.stopped
            .send(Instant::now())
            .expect("the test waits for the stop");
        let go = self.go.lock().unwrap_or_else(PoisonError::into_inner);
        go.recv().expect("the test lets the participant go");
    }
}

impl Gate {
    /// Waits for the participant to stop, then checks that the others report the stall exactly
    /// once, within the stall time and its slack, for `object`, `episode` and `missing`; then
    /// lets the participant go on. Returns the report.
    pub fn expect_stall(&self, object: &str, episode: u64, missing: &[usize]) -> StallReport {
        let stopped = self
            .stopped
            .recv_timeout(HANG)
            .expect("the participant stops before the watchdog fires");
        let deadline = stopped + STALL + SLACK;
        await_report(deadline);
        std::thread::sleep(QUIET);
        let reports = take_reports();
        self.go.send(()).expect("the participant waits to go on");
        let [(came, report)] = &reports[..] else {
            let reports: Vec<_> = reports.iter().map(|(_, r)| r.to_string()).collect();
            panic!(
                "{object}, episode {episode}: expected one stall report within {:?}, got {}: \
                 {reports:#?}",
                STALL + SLACK,
                reports.len()
            );
        };
        assert!(
            *came <= deadline,
            "{object}: the report came {:?} after the stop, later than {:?}",
            came.duration_since(stopped),
            STALL + SLACK
        );
        assert_eq!(report.object(), object, "{report}");
        assert_eq!(report.episode(), episode, "{report}");
        assert_eq!(report.missing(), Some(missing), "{report}");
        assert!(report.waited() >= STALL, "{report}");
        assert!(report.waited() < STALL + SLACK, "{report}");
        report.clone()
    }
}
