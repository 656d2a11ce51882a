//! The tables rank 0 prints while the run goes on.

use crate::collective::Collective;
use crate::combined_grid::GridRow;
use crate::floor::Floors;
use crate::harness::Schedule;
use crate::hybrid_group::HybridGroup;
use crate::process_rows::ProcessRow;
use crate::rounds::RoundTiming;
use crate::stats::{Ratio, Timing};
use phasers_cli::harness::table::time;

fn timing(t: Option<&Timing>) -> String {
    match t {
        Some(t) => format!("{:>10} {:>10}", time(t.min_ns), time(t.median_ns)),
        None => format!("{:>10} {:>10}", "n/a", "n/a"),
    }
}

fn ratio(r: Option<Ratio>) -> String {
    match r {
        Some(r) => format!("{:>6} {:>6}", format_ratio(r.min), format_ratio(r.median)),
        None => format!("{:>6} {:>6}", "-", "-"),
    }
}

/// Three significant digits where they fit in six columns.
pub fn format_ratio(ratio: f64) -> String {
    if !ratio.is_finite() {
        "n/a".to_owned()
    } else if ratio >= 100.0 {
        format!("{ratio:.0}")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}")
    } else if ratio >= 0.1 {
        format!("{ratio:.2}")
    } else {
        format!("{ratio:.0e}")
    }
}

pub fn floors(floors: &Floors) {
    println!("\n== floor (time per round trip) ==");
    println!("{:<34} {:>10} {:>10}", "", "min", "median");
    println!(
        "{:<34} {}",
        "MPI 1-byte ping-pong, ranks 0-1",
        timing(floors.mpi_round_trip.as_ref())
    );
    let pinned = match floors.cache_line_cpus {
        Some([a, b]) => format!("cache line, cpus {a}-{b}"),
        None => "cache line, unpinned".to_owned(),
    };
    println!(
        "{:<34} {}",
        pinned,
        timing(floors.cache_line_round_trip.as_ref())
    );
}

pub fn process_header() {
    println!("\n== process barriers (time per barrier; ratio = ours / MPI_Barrier) ==");
    println!(
        "{:>5} {:<20} {:>10} {:>10} {:>6} {:>6}",
        "ranks", "algorithm", "min", "median", "r.min", "r.med"
    );
}

pub fn process_row(row: &ProcessRow) {
    println!(
        "{:>5} {:<20} {} {}",
        row.ranks,
        row.label(),
        timing(Some(&row.timing)),
        ratio(row.ratio_to_mpi_barrier)
    );
}

pub fn grid_header() {
    println!(
        "\n== combined barrier grid (time per barrier; vs MPI_Barrier with ranks*threads \
         processes, vs omp barrier + MPI_Barrier) =="
    );
    println!(
        "{:>5} {:>7} {:<32} {:>10} {:>10} {:>6} {:>6} {:>6} {:>6}",
        "ranks", "threads", "algorithm", "min", "median", "mpi.mn", "mpi.md", "omp.mn", "omp.md"
    );
}

pub fn grid_row(row: &GridRow) {
    println!(
        "{:>5} {:>7} {:<32} {} {} {}{}",
        row.ranks,
        row.threads,
        row.label(),
        timing(row.timing.as_ref()),
        ratio(row.ratio_to_mpi_barrier),
        ratio(row.ratio_to_omp_mpi_barrier),
        row.note
            .as_ref()
            .map_or(String::new(), |note| format!("  ({note})"))
    );
}

pub fn hybrid_header(contender: Schedule, rounds: usize) {
    println!(
        "\n== hybrid collectives (time per call: min and median over every round; spread: the \
         slowest round's median over the fastest's; /mpi: the row over the MPI collective among \
         ranks x threads processes; /unc: the default team over the unchecked one) =="
    );
    println!(
        "{} samples of {:?} per contender, in {rounds} interleaved rounds; every result checked",
        contender.samples, contender.sample
    );
    println!(
        "{:<14} {:>11} {:>5} {:>7} {:<20} {:>10} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "collective",
        "size",
        "ranks",
        "threads",
        "contender",
        "min",
        "median",
        "spread",
        "mpi.mn",
        "mpi.md",
        "unc.mn",
        "unc.md"
    );
}

/// The three lines of a group: the MPI baseline, the default team, the unchecked team.
pub fn hybrid_group(group: &HybridGroup) {
    for line in hybrid_lines(group) {
        println!(
            "{:<14} {:>11} {:>5} {:>7} {:<20} {} {:>6} {} {}{}",
            group.collective,
            size_label(group),
            group.ranks,
            group.threads,
            line.contender,
            timing_of(line.timing),
            spread_text(line.timing.and_then(|t| t.spread)),
            ratio(line.to_mpi),
            ratio(line.to_unchecked),
            if line.timing.is_none() {
                "  (more processes than the world has)"
            } else {
                ""
            }
        );
    }
}

/// One printed line of a group.
struct GroupLine<'a> {
    contender: String,
    timing: Option<&'a RoundTiming>,
    to_mpi: Option<Ratio>,
    to_unchecked: Option<Ratio>,
}

fn hybrid_lines(group: &HybridGroup) -> [GroupLine<'_>; 3] {
    let default = if group.default_is_checked {
        "default (checked)"
    } else {
        "default (unchecked)"
    };
    [
        GroupLine {
            contender: format!("{} x{}", group.mpi_collective, group.mpi_ranks),
            timing: group.mpi.as_ref(),
            to_mpi: None,
            to_unchecked: None,
        },
        GroupLine {
            contender: default.to_owned(),
            timing: Some(&group.default),
            to_mpi: group.default_to_mpi,
            to_unchecked: Some(group.default_to_unchecked),
        },
        GroupLine {
            contender: "unchecked".to_owned(),
            timing: Some(&group.unchecked),
            to_mpi: group.unchecked_to_mpi,
            to_unchecked: None,
        },
    ]
}

/// A spread as `×1.08`, in six columns however wide (a preempted round can be 1000 times slower).
fn spread_text(spread: Option<f64>) -> String {
    spread.map_or_else(
        || "-".to_owned(),
        |spread| format!("×{}", format_ratio(spread)),
    )
}

fn timing_of(t: Option<&RoundTiming>) -> String {
    timing(t.map(|t| &t.timing))
}

fn size_label(group: &HybridGroup) -> String {
    if group.collective == Collective::Barrier.name() {
        "-".to_owned()
    } else {
        format!("{}x{}", group.length, group.element)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_fit() {
        assert_eq!(format_ratio(1234.5), "1234");
        assert_eq!(format_ratio(12.34), "12.3");
        assert_eq!(format_ratio(0.456), "0.46");
        assert_eq!(format_ratio(0.00038), "4e-4");
        assert_eq!(spread_text(Some(11553.76)), "×11554");
        assert_eq!(spread_text(Some(1.0812)), "×1.08");
        assert_eq!(spread_text(None), "-");
    }

    #[test]
    fn each_line_of_a_group_carries_its_own_ratios() {
        use crate::collective::{Case, Collective, Element};
        use crate::hybrid_group::Measured;

        let timing = |ns: f64| RoundTiming::merge(&[Timing::new(1, vec![ns]).unwrap()]);
        let case = Case {
            collective: Collective::Allreduce,
            element: Element::U64,
            length: 1,
        };
        let measured = Measured {
            mpi: timing(100.0),
            default: timing(300.0),
            unchecked: timing(200.0),
            default_is_checked: true,
        };
        let group = HybridGroup::pair(case, (2, 1), measured).unwrap();
        let lines = hybrid_lines(&group);
        let names: Vec<&str> = lines.iter().map(|l| l.contender.as_str()).collect();
        assert_eq!(
            names,
            ["MPI_Allreduce x2", "default (checked)", "unchecked"]
        );
        let medians = |r: Option<Ratio>| r.map(|r| r.median);
        assert_eq!(medians(lines[0].to_mpi), None);
        assert_eq!(medians(lines[1].to_mpi), Some(3.0));
        assert_eq!(medians(lines[1].to_unchecked), Some(1.5));
        assert_eq!(medians(lines[2].to_mpi), Some(2.0));
        assert_eq!(medians(lines[2].to_unchecked), None);
    }
}
