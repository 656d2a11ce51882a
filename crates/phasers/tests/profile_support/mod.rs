//! Shared helpers for the tuning profile tests (`tests/profile_*.rs`).
//!
//! The active profile is looked up once per process, so each scenario is a test binary of its own
//! with a single test that sets the environment before anything reads it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use phasers::barrier::ProfileEntry;
use phasers::{Algorithm, Barrier, Error};

/// A scratch directory for one test binary, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("phasers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the temporary directory is writable");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn entry(threads: usize, algorithm: Algorithm) -> ProfileEntry {
    ProfileEntry {
        threads,
        algorithm,
        median_ns: None,
    }
}

/// The message of an `InvalidArgument`, or a panic naming what came instead.
pub fn invalid_message<T: std::fmt::Debug>(result: phasers::Result<T>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument { message }) => message,
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

/// A barrier still synchronizes: every participant sees the episodes in order.
pub fn works<A: phasers::barrier::BarrierAlgorithm>(barrier: &Barrier<A>) {
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            s.spawn(move || {
                for episode in 0..50 {
                    assert_eq!(p.wait().unwrap().episode(), episode);
                }
            });
        }
    });
}

/// Party counts that cover small, oversubscribed and large barriers on any machine.
pub fn party_counts() -> Vec<usize> {
    let cores = phasers::available_cores();
    vec![1, 2, 3, 4, cores, cores + 1, 16, 17, 64]
}
