//! `phasers floors`: the three costs every waiting decision of the library is weighed against,
//! measured afresh a few times (so their noise shows), the ones in use, and what they mean.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use phasers_cli::harness::floors_record::{nanos, short_time, source_words, FloorsRecord};
use phasers_cli::harness::outputs;
use phasers_cli::harness::provenance::Provenance;

/// Options of `phasers floors`.
#[derive(Debug, Args)]
pub struct FloorsArgs {
    /// Fresh measurements to take; each takes a few milliseconds.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub samples: u16,

    /// Write the measurements, the floors in use and the machine to FILE as JSON (schema:
    /// docs/benchmark-json.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// One measurement of the three floors, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measurement {
    /// A cache line from one core to another and back.
    pub round_trip_ns: u64,
    /// One hand-off of a core between two threads on it.
    pub yield_ns: u64,
    /// From a futex wake call to the sleeper running on another core.
    pub wake_ns: u64,
}

/// What `phasers floors --json` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FloorsReport {
    /// Which program, when, which machine, and (`floors`) the floors in use.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Every fresh measurement, in the order taken.
    pub measurements: Vec<Measurement>,
    /// The least of each floor over `measurements`.
    pub min: Measurement,
    /// The median of each floor over `measurements`.
    pub median: Measurement,
}

/// Runs `phasers floors`.
pub fn run(args: &FloorsArgs) -> Result<(), String> {
    // The floors in use first: with a malformed PHASERS_FLOORS the library would refuse every
    // object, so the command says why and stops, as the benchmarks do, before creating a file.
    let in_use = FloorsRecord::current()?;
    let json = outputs::open(args.json.as_deref())?;
    let provenance = Provenance::now("floors", phasers_cli::harness::args::command_line());
    let measure = |_| {
        let floors = phasers::Floors::measure();
        Measurement::of([floors.round_trip(), floors.yield_handoff(), floors.wake()].map(nanos))
    };
    let measurements: Vec<Measurement> = (0..args.samples).map(measure).collect();
    let report = FloorsReport {
        min: over(&measurements, |values| values[0]),
        median: over(&measurements, |values| values[(values.len() - 1) / 2]),
        measurements,
        provenance,
    };
    print!("{}", text(&report, &in_use));
    if let Some((path, out)) = json {
        outputs::write_json(out, &path, &report)?;
        eprintln!("floors written to {}", path.display());
    }
    Ok(())
}

/// Each floor over `measurements`, as `pick` chooses from its sorted values (never empty).
fn over(measurements: &[Measurement], pick: fn(&[u64]) -> u64) -> Measurement {
    Measurement::of([0, 1, 2].map(|floor| {
        let mut values: Vec<u64> = measurements.iter().map(|m| m.values()[floor]).collect();
        values.sort_unstable();
        pick(&values)
    }))
}

impl Measurement {
    /// The measurement of round trip, yield and wake, in that order.
    fn of([round_trip_ns, yield_ns, wake_ns]: [u64; 3]) -> Self {
        Measurement {
            round_trip_ns,
            yield_ns,
            wake_ns,
        }
    }

    /// Round trip, yield and wake, in that order.
    fn values(self) -> [u64; 3] {
        [self.round_trip_ns, self.yield_ns, self.wake_ns]
    }
}

/// The whole printed report: the measurements, the floors in use, and what they mean.
fn text(report: &FloorsReport, in_use: &FloorsRecord) -> String {
    let machine = &report.provenance.machine;
    let (min, median) = (report.min, report.median);
    let count = report.measurements.len();
    let mut out = format!(
        "phasers floors: what waiting costs on this machine\n\
         machine: {}\n\
         measured now, {count} time{}: min and median (Floors::measure, a few ms each)\n",
        machine.summary(),
        if count == 1 { "" } else { "s" }
    );
    let meanings = [
        "a cache line from one core to another and back, spinning",
        "one hand-off of a core between two threads on it (sched_yield)",
        "from a futex wake call to the sleeper running on another core",
    ];
    let names = ["round trip", "yield hand-off", "wake"];
    for (floor, (name, meaning)) in names.into_iter().zip(meanings).enumerate() {
        let [least, middle] = [min, median].map(|m| short_time(m.values()[floor]));
        out.push_str(&format!(
            "  {name:<15} min {least:>7}, median {middle:>7}   {meaning}\n"
        ));
    }
    out.push_str(&format!(
        "in use:  round trip {}, yield hand-off {}, wake {}; source {}: {}\n\n",
        short_time(in_use.round_trip_ns),
        short_time(in_use.yield_ns),
        short_time(in_use.wake_ns),
        in_use.source,
        source_detail(&in_use.source)
    ));
    out.push_str("what they mean for barriers (from the floors in use):\n");
    for line in consequences(in_use, machine.available_cores) {
        out.push_str(&format!("  - {line}\n"));
    }
    out
}

/// Where the floors in use came from, and how to change them.
fn source_detail(source: &str) -> &'static str {
    match source {
        "measured" => {
            "by the library, once per process; every object of this process uses them, and \
             PHASERS_FLOORS or a `phasers bench barrier --write-profile` profile would set them instead"
        }
        "environment" => {
            "set by PHASERS_FLOORS, which overrides the measurement and the profile; unset it to \
             measure"
        }
        "environment+measured" => {
            "PHASERS_FLOORS sets some, the library measured the rest; unset it to measure all"
        }
        "profile" => {
            "recorded in the tuning profile by `phasers bench barrier --write-profile`; PHASERS_PROFILE=off ignores it, \
             PHASERS_FLOORS overrides it"
        }
        _ => source_words(source),
    }
}

/// What the floors imply, one sentence each.
fn consequences(floors: &FloorsRecord, cores: usize) -> Vec<String> {
    let cores = cores.max(1);
    let handoffs = |threads: usize| {
        let per_core = threads.div_ceil(cores);
        format!(
            "{threads} threads on {cores} core{} ≈ {per_core} × yield ≈ {}",
            if cores == 1 { "" } else { "s" },
            short_time(floors.yield_ns.saturating_mul(per_core as u64))
        )
    };
    let (round_trip, wake) = (short_time(floors.round_trip_ns), short_time(floors.wake_ns));
    let ratio = |over: u64| floors.wake_ns as f64 / over.max(1) as f64;
    let (over_yield, over_round_trip) = (ratio(floors.yield_ns), ratio(floors.round_trip_ns));
    let (few, many) = (handoffs(2 * cores), handoffs(64.max(4 * cores)));
    vec![
        format!(
            "a barrier with a core per thread cannot beat about one round trip per episode \
             (~{round_trip}): the arrivals must reach one cache line and the release must \
             come back"
        ),
        format!(
            "with T threads on C cores each episode needs at least ceil(T/C) hand-offs of a \
             core, since every thread must run once: {few}; {many}"
        ),
        format!(
            "spinning longer than one wake (~{wake}) costs more than parking would, so waiters \
             that have a core each spin up to about that long and then park (the competitive \
             rule: never worse than twice the best choice made in hindsight)"
        ),
        format!(
            "wake / yield = {over_yield:.0}: a waiter yields through about that many hand-offs \
             before parking pays; when k threads share a core each of its yields costs all k a \
             hand-off, so it yields wake / (yield × k) times (at least 4), never spins, and \
             parks for waits longer than that"
        ),
        format!(
            "wake / round trip = {over_round_trip:.0}: one sleeping waiter costs an episode as much \
             as that many round trips, which is why short episodes should never park"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    // tests/floors.rs checks the min of each floor and that every line is printed.
    #[test]
    fn the_consequences_follow_from_the_floors_and_each_source_says_how_to_change_it() {
        let source = "environment".to_owned();
        let floors = FloorsRecord {
            round_trip_ns: 100,
            yield_ns: 2_000,
            wake_ns: 30_000,
            source,
        };
        let lines = consequences(&floors, 2);
        for (line, says) in [
            (0, "~100 ns"),
            (1, "4 threads on 2 cores ≈ 2 × yield ≈ 4.0 µs"),
            (1, "64 threads on 2 cores ≈ 32 × yield ≈ 64 µs"),
            (2, "~30 µs"),
            (3, "wake / yield = 15"),
            (4, "wake / round trip = 300"),
        ] {
            assert!(lines[line].contains(says), "{}", lines[line]);
        }
        // One core: every pair of threads shares it.
        assert!(consequences(&floors, 1)[1].contains("2 threads on 1 core ≈"));
        for source in ["measured", "environment", "environment+measured", "profile"] {
            assert!(source_detail(source).contains("PHASERS_"), "{source}");
        }
    }
}
