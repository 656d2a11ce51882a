//! What `bench reduce` compares: each of the library's algorithms, OpenMP's array reduction, and
//! a mutex-merged reduction written the way people write one by hand. The bandwidth floor is
//! measured at every point too, but is not a contender: it does not reduce.

use phasers::ReduceAlgorithm;
use serde::{Deserialize, Serialize, Serializer};

/// One row of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Contender {
    /// `Reduction<f32>` with `Op::Sum` and this algorithm.
    Ours(ReduceAlgorithm),
    /// OpenMP's `reduction(+:arr[:n])` (libgomp), through `baselines/omp_array_reduce.c`.
    OpenMp,
    /// The same under `OMP_WAIT_POLICY=active`, measured by a child process (see
    /// `omp_active.rs`).
    OpenMpActive,
    /// `Mutex<Vec<f32>>`: each participant locks and adds its array in, the root waits for the
    /// count (see `mutex.rs`).
    Mutex,
}

/// What a row is, for the tables, the plots and the ratios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One of the library's algorithms.
    Ours,
    /// What users would otherwise pick: OpenMP, or a mutex.
    Baseline,
    /// The bandwidth floor: a STREAM-like add over the same bytes.
    Floor,
}

/// The name of the OpenMP row.
pub const OPENMP_NAME: &str = "omp reduction(+:arr[:n])";
/// The name of the OpenMP row under `OMP_WAIT_POLICY=active`.
pub const OPENMP_ACTIVE_NAME: &str = "omp reduction(+:arr[:n]) (active)";
/// The name of the mutex-merged row.
pub const MUTEX_NAME: &str = "mutex-merged";
/// The name of the bandwidth-floor row.
pub const FLOOR_NAME: &str = "bandwidth floor";

impl Contender {
    /// Every contender, in table order: ours (`auto` last), then the baselines, OpenMP with its
    /// default wait policy and as its users tune it.
    pub fn all() -> Vec<Contender> {
        ReduceAlgorithm::ALL
            .into_iter()
            .map(Contender::Ours)
            .chain([Contender::OpenMp, Contender::OpenMpActive, Contender::Mutex])
            .collect()
    }

    /// The row's name.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Ours(algorithm) => algorithm.name(),
            Contender::OpenMp => OPENMP_NAME,
            Contender::OpenMpActive => OPENMP_ACTIVE_NAME,
            Contender::Mutex => MUTEX_NAME,
        }
    }

    /// What the row is.
    pub fn kind(self) -> Kind {
        match self {
            Contender::Ours(_) => Kind::Ours,
            Contender::OpenMp | Contender::OpenMpActive | Contender::Mutex => Kind::Baseline,
        }
    }

    /// A line for `phasers list`.
    pub fn description(self) -> &'static str {
        match self {
            Contender::Ours(ReduceAlgorithm::Linear) => {
                "Reduction<f32> linear: everyone meets, then each reduces 1/N of the array across \
                 all inputs; fixed order, no quick return"
            }
            Contender::Ours(ReduceAlgorithm::StaticTree) => {
                "Reduction<f32> static tree: pairs by rank, distance doubling; the consumed \
                 participant returns at once"
            }
            Contender::Ours(ReduceAlgorithm::DynamicPairs) => {
                "Reduction<f32> dynamic pairs (seed 003): pairs form in arrival order; the \
                 earlier arrival returns once its data is consumed"
            }
            Contender::Ours(ReduceAlgorithm::DynamicGroup) => {
                "Reduction<f32> dynamic group: as dynamic pairs, but participants that would \
                 return help later pairs"
            }
            Contender::Ours(ReduceAlgorithm::Auto) => {
                "Reduction<f32> auto: chooses per call from length, N, cores and recent arrival \
                 spread (the report says which it chose)"
            }
            Contender::OpenMp => {
                "OpenMP `omp for reduction(+:arr[:n])` (libgomp), one iteration per thread, in \
                 one parallel region; same stalls, timed in C"
            }
            Contender::OpenMpActive => {
                "the same with OMP_WAIT_POLICY=active, as OpenMP users tune it (waiting threads \
                 spin rather than sleep); libgomp reads it at load, so a child process measures it"
            }
            Contender::Mutex => {
                "std::sync::Mutex<Vec<f32>>: each thread locks and adds its array in; the root \
                 waits on a Condvar for the count"
            }
        }
    }
}

/// Written as its name, as `phasers list` gives it.
impl Serialize for Contender {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A line for `phasers list` on the bandwidth floor.
pub const FLOOR_DESCRIPTION: &str = "STREAM-like add out[i] = a[i] + b[i] on min(N, cores) \
    threads over the bytes an optimal reduction moves; the reductions' bandwidth is given as a \
    fraction of its";

/// Parses one entry of `--algorithms`: a reduction algorithm (`linear`, `static-tree`,
/// `dynamic-pairs`, `dynamic-group`, `auto`, or the library's short forms), `omp` or `mutex`.
pub fn parse_contender(text: &str) -> Result<Contender, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "omp" | "openmp" => Ok(Contender::OpenMp),
        "omp-active" | "openmp-active" => Ok(Contender::OpenMpActive),
        "mutex" | "mutex-merged" => Ok(Contender::Mutex),
        other => other
            .parse::<ReduceAlgorithm>()
            .map(Contender::Ours)
            .map_err(|_| {
                let names: Vec<&str> = Contender::all()
                    .into_iter()
                    .map(|contender| match contender {
                        Contender::OpenMp => "omp",
                        Contender::OpenMpActive => "omp-active",
                        Contender::Mutex => "mutex",
                        ours => ours.name(),
                    })
                    .collect();
                format!(
                    "{text:?} is not a reduction algorithm or baseline; use one of {}",
                    names.join(", ")
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contenders_have_distinct_names_and_parse_or_explain() {
        let all = Contender::all();
        let mut names: Vec<&str> = all.iter().map(|contender| contender.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 8);
        assert_eq!(all[4], Contender::Ours(ReduceAlgorithm::Auto));
        assert_eq!(
            parse_contender("static"),
            Ok(Contender::Ours(ReduceAlgorithm::StaticTree))
        );
        assert_eq!(parse_contender(" OMP "), Ok(Contender::OpenMp));
        assert_eq!(parse_contender("omp-active"), Ok(Contender::OpenMpActive));
        assert_eq!(parse_contender("mutex"), Ok(Contender::Mutex));
        let error = parse_contender("fastest").unwrap_err();
        assert!(
            error.contains("\"fastest\" is not a reduction algorithm"),
            "{error}"
        );
        assert!(
            error.contains("linear") && error.contains("omp, omp-active, mutex"),
            "{error}"
        );
    }
}
