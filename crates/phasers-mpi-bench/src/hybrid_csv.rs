//! `--hybrid-csv`: the hybrid part, one line per collective, size and shape (a row group), the
//! three contenders side by side, for spreadsheets and plotting scripts.

use serde::Serialize;

use crate::hybrid_group::HybridGroup;
use crate::rounds::RoundTiming;
use crate::stats::Ratio;

/// One CSV line: a group's timings and ratios, empty where not measured.
#[derive(Debug, PartialEq, Serialize)]
pub struct Line<'a> {
    collective: &'a str,
    mpi_collective: &'a str,
    element: &'a str,
    length: usize,
    ranks: usize,
    threads: usize,
    mpi_ranks: usize,
    default_is_checked: bool,
    mpi_min_ns: Option<f64>,
    mpi_median_ns: Option<f64>,
    mpi_spread: Option<f64>,
    default_min_ns: f64,
    default_median_ns: f64,
    default_spread: Option<f64>,
    unchecked_min_ns: f64,
    unchecked_median_ns: f64,
    unchecked_spread: Option<f64>,
    ratio_min_default_to_mpi: Option<f64>,
    ratio_median_default_to_mpi: Option<f64>,
    ratio_min_unchecked_to_mpi: Option<f64>,
    ratio_median_unchecked_to_mpi: Option<f64>,
    ratio_min_default_to_unchecked: f64,
    ratio_median_default_to_unchecked: f64,
}

impl<'a> Line<'a> {
    /// The line of `group`.
    pub fn of(group: &'a HybridGroup) -> Self {
        let mpi = group.mpi.as_ref();
        let min = |r: Option<Ratio>| r.map(|r| r.min);
        let median = |r: Option<Ratio>| r.map(|r| r.median);
        Line {
            collective: group.collective,
            mpi_collective: group.mpi_collective,
            element: group.element,
            length: group.length,
            ranks: group.ranks,
            threads: group.threads,
            mpi_ranks: group.mpi_ranks,
            default_is_checked: group.default_is_checked,
            mpi_min_ns: mpi.map(|t| t.timing.min_ns),
            mpi_median_ns: mpi.map(|t| t.timing.median_ns),
            mpi_spread: mpi.and_then(|t: &RoundTiming| t.spread),
            default_min_ns: group.default.timing.min_ns,
            default_median_ns: group.default.timing.median_ns,
            default_spread: group.default.spread,
            unchecked_min_ns: group.unchecked.timing.min_ns,
            unchecked_median_ns: group.unchecked.timing.median_ns,
            unchecked_spread: group.unchecked.spread,
            ratio_min_default_to_mpi: min(group.default_to_mpi),
            ratio_median_default_to_mpi: median(group.default_to_mpi),
            ratio_min_unchecked_to_mpi: min(group.unchecked_to_mpi),
            ratio_median_unchecked_to_mpi: median(group.unchecked_to_mpi),
            ratio_min_default_to_unchecked: group.default_to_unchecked.min,
            ratio_median_default_to_unchecked: group.default_to_unchecked.median,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::{Case, Collective, Element};
    use crate::hybrid_group::Measured;
    use crate::stats::Timing;
    use phasers_cli::harness::outputs::write_csv_lines;

    fn timing(ns: f64) -> Option<RoundTiming> {
        RoundTiming::merge(&[Timing::new(1, vec![ns]).unwrap()])
    }

    #[test]
    fn a_group_without_a_baseline_leaves_its_mpi_columns_empty() {
        let case = Case {
            collective: Collective::Broadcast,
            element: Element::F64,
            length: 1 << 20,
        };
        let measured = Measured {
            mpi: None,
            default: timing(300.0),
            unchecked: timing(200.0),
            default_is_checked: true,
        };
        let group = HybridGroup::pair(case, (1, 4), measured).unwrap();
        let mut out = Vec::new();
        write_csv_lines(&mut out, [Line::of(&group)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "collective,mpi_collective,element,length,ranks,threads,mpi_ranks,\
             default_is_checked,mpi_min_ns,mpi_median_ns,mpi_spread,default_min_ns,\
             default_median_ns,default_spread,unchecked_min_ns,unchecked_median_ns,\
             unchecked_spread,ratio_min_default_to_mpi,ratio_median_default_to_mpi,\
             ratio_min_unchecked_to_mpi,ratio_median_unchecked_to_mpi,\
             ratio_min_default_to_unchecked,ratio_median_default_to_unchecked"
        );
        assert_eq!(
            lines.next().unwrap(),
            "broadcast,MPI_Bcast,f64,1048576,1,4,4,true,,,,300.0,300.0,,200.0,200.0,,,,,,1.5,1.5"
        );
    }
}
