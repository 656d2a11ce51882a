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
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} row(s) failed: {}",
            failed.len(),
            failed.join("; ")
        ))
    }
}

/// [`failures`] of `rows`, each described by `describe` when it failed (`None` when it did not).
///
/// ```
/// use phasers_cli::harness::failures::failed_rows;
///
/// let rows = [("ok", None), ("bad", Some("wrong sum"))];
/// let error = failed_rows(&rows, |(name, error)| Some(format!("{name}: {}", (*error)?)));
/// assert_eq!(error, Err("1 row(s) failed: bad: wrong sum".to_owned()));
/// ```
pub fn failed_rows<'a, R: 'a>(
    rows: impl IntoIterator<Item = &'a R>,
    describe: impl Fn(&'a R) -> Option<String>,
) -> Result<(), String> {
    failures(rows.into_iter().filter_map(describe))
}
