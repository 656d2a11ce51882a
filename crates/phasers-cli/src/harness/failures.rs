//! One error naming every failed row, returned after every other row ran and was reported.

/// `Err` naming every row in `failed` (each already described: what, where and why), if any.
///
/// ```
/// use phasers_cli::harness::failures::failures;
///
/// assert_eq!(failures(Vec::<String>::new()), Ok(()));
/// let error = failures(["mcs with 4 threads: boom".to_owned()]).unwrap_err();
/// assert_eq!(error, "1 row(s) failed: mcs with 4 threads: boom");
/// ```
pub fn failures(failed: impl IntoIterator<Item = String>) -> Result<(), String> {
    let failed: Vec<String> = failed.into_iter().collect();
    match failed.len() {
        0 => Ok(()),
        n => Err(format!("{n} row(s) failed: {}", failed.join("; "))),
    }
}
