//! One error naming every failed row, returned after every other row ran and was reported.

/// `Err` naming every row in `failed` (each already described: what, where and why), if any.
pub fn failures(failed: impl IntoIterator<Item = String>) -> Result<(), String> {
    let failed: Vec<String> = failed.into_iter().collect();
    match failed.len() {
        0 => Ok(()),
        n => Err(format!("{n} row(s) failed: {}", failed.join("; "))),
    }
}
