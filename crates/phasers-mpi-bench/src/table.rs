//! The tables rank 0 prints while the run goes on.

use crate::combined_grid::GridRow;
use crate::floor::Floors;
use crate::hybrid::HybridRow;
use crate::process_rows::ProcessRow;
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

pub fn hybrid_header() {
    println!(
        "\n== allreduce, Op::Sum (time per call; ratio = row / MPI_Allreduce over ranks x threads \
         ranks) =="
    );
    println!(
        "{:<14} {:>7} {:>5} {:>7} {:>10} {:>10} {:>6} {:>6}",
        "algorithm", "length", "ranks", "threads", "min", "median", "r.min", "r.med"
    );
}

pub fn hybrid_row(row: &HybridRow) {
    println!(
        "{:<14} {:>7} {:>5} {:>7} {} {}",
        row.algorithm,
        format!("{}x{}", row.length, row.element),
        row.ranks,
        row.threads,
        timing(Some(&row.timing)),
        ratio(row.ratio_to_mpi_allreduce)
    );
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
    }
}
