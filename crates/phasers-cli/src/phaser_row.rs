//! The phaser rows: one `SigWait` registration per thread, `next()` per iteration, measured by the
//! same harness as every barrier. With a reduction, each thread first sends 1 to an accumulator,
//! and reads the result after `next()`: a wrong sum fails the row, however fast it was.

use phasers::{Accumulator, Element, Op, Phaser, Registration};

use crate::phaser_config::{shape_label, PhaserConfig, Reduction};
use phasers_cli::harness::engine::Measured;
use phasers_cli::harness::row::RowPlan;
use phasers_cli::harness::watchdog::Watch;
use phasers_cli::harness::work::{Failure, Work, WrongResult};

/// Builds the phaser of `config` for `threads` parties, runs its row, and returns what was
/// measured with the label of the tree that actually ran; `Err` when it cannot be built.
pub fn measure(
    config: PhaserConfig,
    threads: usize,
    plan: &RowPlan,
    watch: &Watch,
) -> Result<(Measured, String), String> {
    let (phaser, registrations) =
        build(config, threads).map_err(|error| format!("cannot build: {error}"))?;
    let label = shape_label(phaser.tiers(), phaser.degree());
    let measured = match config.reduction {
        None => plan.measure(registrations, watch),
        Some(Reduction::SumI64) => with_sum(
            Accumulator::<i64>::new(&phaser, Op::Sum),
            registrations,
            1,
            i64::try_from(threads).unwrap_or(i64::MAX),
            plan,
            watch,
        )?,
        Some(Reduction::SumF64Reproducible) => with_sum(
            Accumulator::<f64>::reproducible(&phaser, Op::Sum),
            registrations,
            1.0,
            threads as f64,
            plan,
            watch,
        )?,
    };
    Ok((measured, label))
}

/// The phaser of `config` and one `SigWait` registration per thread, the creator's first.
pub fn build(
    config: PhaserConfig,
    threads: usize,
) -> Result<(Phaser, Vec<Registration>), phasers::Error> {
    let (phaser, creator) = create(config, threads)?;
    let mut registrations = Vec::with_capacity(threads);
    registrations.push(creator);
    for _ in 1..threads {
        let child = registrations[0].register(phasers::Mode::SigWait)?;
        registrations.push(child);
    }
    Ok((phaser, registrations))
}

/// The phaser of `config` shaped for `threads` parties, and its creator's `SigWait` registration.
pub fn create(
    config: PhaserConfig,
    threads: usize,
) -> Result<(Phaser, Registration), phasers::Error> {
    let (tiers, degree) = config.tiers_and_degree(threads);
    let builder = Phaser::builder()
        .mode(phasers::Mode::SigWait)
        .expected_parties(threads)
        .tiers(tiers);
    // A flat phaser has no sub-phasers to give a degree to.
    let builder = if tiers > 1 {
        builder.degree(degree)
    } else {
        builder
    };
    builder.build()
}

/// Runs the row with `accumulator` on every registration; a wrong result becomes the row's error.
fn with_sum<T: Element>(
    accumulator: phasers::Result<Accumulator<T>>,
    registrations: Vec<Registration>,
    one: T,
    expected: T,
    plan: &RowPlan,
    watch: &Watch,
) -> Result<Measured, String> {
    let accumulator =
        accumulator.map_err(|error| format!("cannot build the accumulator: {error}"))?;
    let wrong = WrongResult::default();
    let handles = registrations
        .into_iter()
        .map(|registration| SumHandle {
            registration,
            accumulator: accumulator.clone(),
            one,
            expected,
            wrong: &wrong,
        })
        .collect();
    let mut measured = plan.measure(handles, watch);
    if let Some(message) = wrong.into_message() {
        // The wrong sum is the root cause of anything that followed.
        measured.error = Some(message);
    }
    Ok(measured)
}

/// One thread's registration and accumulator: `send(one); next()`, then the result is checked.
struct SumHandle<'a, T: Element> {
    registration: Registration,
    accumulator: Accumulator<T>,
    one: T,
    expected: T,
    wrong: &'a WrongResult,
}

impl<T: Element> Work for SumHandle<'_, T> {
    const SYNCHRONIZED: bool = true;

    #[inline]
    fn iteration(&mut self, _: u64) -> Result<Option<&'static str>, Failure> {
        self.accumulator.send(&mut self.registration, self.one)?;
        let phase = self.registration.next()?;
        // The next phase cannot complete before this thread signals it, so the result is still
        // the one of the phase just completed.
        let got = self.accumulator.result();
        if got != self.expected {
            let expected = self.expected;
            self.wrong.record(|| {
                format!("wrong result: the sum of phase {phase} was {got:?}, not {expected:?}")
            });
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phaser_config::Shape;

    #[test]
    fn every_thread_gets_a_sig_wait_registration_on_the_tree_asked_for() {
        for (config, threads, tiers) in [
            (PhaserConfig::FLAT, 1, 1),
            (PhaserConfig::FLAT, 5, 1),
            (PhaserConfig::TREE, 8, 2),
        ] {
            let (phaser, registrations) = build(config, threads).unwrap();
            assert_eq!(phaser.tiers(), tiers);
            assert_eq!(registrations.len(), threads);
            assert_eq!(phaser.signallers(), threads);
            assert!(registrations
                .iter()
                .all(|registration| registration.mode() == phasers::Mode::SigWait));
        }
        let (tree, _) = build(PhaserConfig::TREE, 8).unwrap();
        assert_eq!(tree.degree(), 4, "the seed's (2, 4) for 8 threads");
    }

    #[test]
    fn an_impossible_tree_is_an_error() {
        let bad = PhaserConfig::barrier(Shape::Fixed {
            tiers: 0,
            degree: 4,
        });
        assert!(build(bad, 4).is_err());
    }
}
