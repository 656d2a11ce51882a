//! Whole applications on phasers, each switchable between the library's barriers, its phaser
//! and the standard baselines, to show what a barrier's cost means for a real program:
//!
//! - [`sor`]: the Java Grande Forum's red-black successive over-relaxation;
//! - [`lu`]: the Java Grande Forum's LU factorization (LINPACK `dgefa`);
//! - [`streamcluster`]: PARSEC StreamCluster's online clustering;
//! - [`interp`]: a fine-grained vector interpreter after seed 002's NESL VCODE interpreter.
//!
//! Every application has a sequential run and a parallel run whose threads meet at any
//! [`sync::SyncKind`] through the same virtual call, and checks the parallel result against the
//! sequential one, bit for bit (the parallel arithmetic is arranged to be deterministic). The
//! [`workload`] module gives a runner one interface to all of them; the `phasers app` command is
//! that runner.
//!
//! ```
//! use phasers_apps::sync::SyncKind;
//! use phasers_apps::workload::{AppName, Size};
//!
//! let sor = AppName::Sor.workload(Size::Small);
//! let sequential = sor.sequential().unwrap();
//! let run = sor.parallel(2, &SyncKind::Ours(phasers::Algorithm::Auto)).unwrap();
//! assert_eq!(run.barriers, 200); // two half-sweeps per iteration
//! println!("sequential {sequential:?}, 2 threads {:?}", run.elapsed);
//! ```

pub mod interp;
pub mod lu;
pub mod sor;
pub mod streamcluster;
pub mod sync;
pub mod workload;

mod rng;
mod shared;
mod team;
