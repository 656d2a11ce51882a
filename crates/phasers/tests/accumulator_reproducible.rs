//! The reproducible floating-point sum: the same values sent by the same tasks give the same bits
//! whatever order the tasks arrive in. The values span magnitudes where addition loses digits
//! (1e16 next to 1.0 next to -1e16), so a sum whose order varied would differ between runs; random
//! sleeps before each task's sends and signal shuffle the arrival order from run to run.

mod phaser_support;

use std::time::Duration;

use phaser_support::{Rng, Watchdog};
use phasers::{Accumulator, Element, Mode, Op, Phaser, Registration};

const RUNS: u64 = 24;
const PHASES: u64 = 3;

/// What each task sends in every phase (in this order), wildly different magnitudes.
const SENDS: [&[f64]; 6] = [
    &[1e16, 3.5],
    &[1.0, -2.25, 1e-3],
    &[-1e16],
    &[7e15, 0.1],
    &[-7e15, 0.2, 1.0],
    &[0.3, 5e-17, 1e16, -1e16],
];

/// One run: every task sleeps a random while (0 to 2 ms) before each phase's sends and before
/// signalling. Returns the result of every phase.
fn run_once<T: Element>(seed: u64, tiers: usize, degree: usize, convert: fn(f64) -> T) -> Vec<T> {
    let (phaser, creator) = Phaser::builder()
        .tiers(tiers)
        .degree(degree)
        .build()
        .expect("a valid phaser");
    let acc = Accumulator::<T>::reproducible(&phaser, Op::Sum).expect("a reproducible sum");
    let mut regs: Vec<Registration> = (1..SENDS.len())
        .map(|_| creator.register(Mode::SigWait).expect("a child"))
        .collect();
    regs.insert(0, creator);
    let watchdog = Watchdog::new("reproducible sum", &phaser);
    let mut rng = Rng::new(seed);
    std::thread::scope(|s| {
        let handles: Vec<_> = regs
            .into_iter()
            .enumerate()
            .map(|(task, mut reg)| {
                let (acc, watchdog) = (&acc, &watchdog);
                let mut rng = Rng::new(rng.next());
                s.spawn(move || {
                    let mut nap = || {
                        std::thread::sleep(Duration::from_micros(rng.below(2_000)));
                    };
                    let mut results = Vec::new();
                    for phase in 0..PHASES {
                        nap();
                        for &value in SENDS[task] {
                            acc.send(&mut reg, convert(value * (phase + 1) as f64))
                                .unwrap();
                        }
                        nap();
                        let done = reg.next();
                        done.unwrap_or_else(|e| panic!("{}", watchdog.explain("next", &e)));
                        results.push(acc.result());
                    }
                    results
                })
            })
            .collect();
        let all: Vec<Vec<T>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (task, results) in all.iter().enumerate() {
            assert_eq!(
                results, &all[0],
                "task {task} saw other results than task 0"
            );
        }
        all.into_iter().next().expect("task 0")
    })
}

fn reproducible_across_runs<T: Element>(tiers: usize, degree: usize, convert: fn(f64) -> T) {
    let first = run_once(0, tiers, degree, convert);
    for seed in 1..RUNS {
        let again = run_once(seed, tiers, degree, convert);
        // Compare the printed values (the shortest form that reads back exactly), which tell
        // -0.0 from 0.0 where `==` would not.
        let bits = |v: &[T]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>();
        assert_eq!(
            bits(&again),
            bits(&first),
            "tiers {tiers}, degree {degree}: run {seed} gave other bits than run 0"
        );
    }
}

#[test]
fn f64_flat() {
    reproducible_across_runs::<f64>(1, 16, |x| x);
}

#[test]
fn f64_tree() {
    reproducible_across_runs::<f64>(2, 2, |x| x);
}

#[test]
fn f32_flat() {
    reproducible_across_runs::<f32>(1, 16, |x| x as f32);
}
