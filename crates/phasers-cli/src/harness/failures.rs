//! One error naming every row of a run that failed: a benchmark measures every row it can, prints
//! its tables and writes its files, and only then fails, naming them all.

/// `Err` naming every row in `failed` (each already described: what, where and why), or `Ok`
/// when there is none.
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
