//! The lines that head every benchmark's output: what was measured, how, on which machine, and
//! against which floors, each after a label.

use std::fmt::Display;

use super::floor::{floor_line, Floor};
use super::footnotes::wrap;
use super::provenance::{floors_line, Provenance};

/// A header in the making; [`Header::finish`] gives its text.
#[derive(Debug, Clone)]
pub struct Header {
    text: String,
}

impl Header {
    /// Starts with `phasers {benchmark}: {what}`, wrapped to 100 columns.
    pub fn new(provenance: &Provenance, what: &str) -> Self {
        Header {
            text: wrap(&format!("phasers {}: ", provenance.benchmark), what),
        }
    }

    /// `phasers {benchmark}: {what}`, then `method`, the machine, this run's cache-line floor and
    /// the library's floors; the caller adds its units.
    ///
    /// ```
    /// use phasers_cli::harness::{floor::Floor, header::Header, provenance::Provenance};
    ///
    /// let provenance = Provenance::now("bench dynamic", Vec::new());
    /// let floor = Floor {
    ///     pinned_to: Some([0, 1]),
    ///     round_trips_per_sample: 1000,
    ///     samples_ns: vec![60.0, 70.0],
    ///     min_ns: Some(60.0),
    ///     median_ns: Some(65.0),
    ///     note: None,
    /// };
    /// let text = Header::with_floors(&provenance, "a team", "one run per size", &floor).finish();
    /// assert!(text.starts_with("phasers bench dynamic: a team\nmethod:  one run per size\n"));
    /// // Each label starts a line; long lines wrap, their later lines indented under the text.
    /// let labels: Vec<&str> = (text.lines().filter(|line| !line.starts_with(' ')))
    ///     .map(|line| line.split(':').next().unwrap_or_default())
    ///     .collect();
    /// assert_eq!(labels, ["phasers bench dynamic", "method", "machine", "floor", "floors"]);
    /// ```
    pub fn with_floors(
        provenance: &Provenance,
        what: &str,
        method: impl Display,
        floor: &Floor,
    ) -> Self {
        Header::new(provenance, what)
            .line("method", method)
            .machine(provenance)
            .line("floor", floor_line(floor))
            .floors(provenance)
    }

    /// Adds `label:` and `text`, aligned after `machine:` and wrapped to 100 columns under itself.
    pub fn line(mut self, label: &str, text: impl Display) -> Self {
        let label = format!("{:<8} ", format!("{label}:"));
        let text = text.to_string();
        let words: Vec<&str> = text.split_whitespace().collect();
        self.text.push_str(&wrap(&label, &words.join(" ")));
        self
    }

    /// Adds the machine's one-line summary.
    pub fn machine(self, provenance: &Provenance) -> Self {
        self.line("machine", provenance.machine.summary())
    }

    /// Adds the library's floors (round trip, yield hand-off, wake-up).
    pub fn floors(self, provenance: &Provenance) -> Self {
        self.line("floors", floors_line(provenance))
    }

    /// The text, ending in a newline.
    pub fn finish(self) -> String {
        self.text
    }
}

/// Warns on stderr in a debug build, whose numbers mean little; `why` says what else slows it.
pub fn warn_if_debug_build(why: Option<&str>) {
    if cfg!(debug_assertions) {
        let why = why.map(|why| format!("{why} and ")).unwrap_or_default();
        eprintln!(
            "warning: a debug build: {why}nothing is optimized, so these numbers mean little; use \
             `cargo run --release`"
        );
    }
}
