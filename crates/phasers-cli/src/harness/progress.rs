//! The progress bar of a run, on stderr (hidden when it is not a terminal); print tables through
//! [`ProgressBar::suspend`] so the bar does not tear them.

pub use indicatif::ProgressBar;
use indicatif::ProgressStyle;

/// A bar over `total` steps, each one `unit` (`tests`, `rows`), with the time elapsed.
pub fn bar(total: usize, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {unit}, {{elapsed}} elapsed  {{msg}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}
