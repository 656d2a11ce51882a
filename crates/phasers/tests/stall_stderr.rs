//! Without a hook, a stall report is one line on stderr, and `PHASERS_STALL` sets the stall time
//! of objects whose builder does not.
//!
//! The test runs its stalled barrier in a child process (this test binary again, with
//! [`CHILD`] set), so that it can read the child's whole stderr.

use std::process::Command;
use std::time::Duration;

use phasers::{Algorithm, Barrier};

/// Set in the child process, which runs the stalled barrier instead of checking.
const CHILD: &str = "PHASERS_STALL_STDERR_CHILD";
const TEST: &str = "without_a_hook_a_stall_is_one_line_on_stderr";

/// In the child: 8 participants, rank 6 stops for a second before episode 3, then goes on.
fn stalled_barrier() {
    let barrier = Barrier::with_algorithm(8, Algorithm::Counting).unwrap();
    assert_eq!(barrier.stall_after(), Some(Duration::from_millis(300)));
    std::thread::scope(|s| {
        for mut p in barrier.participants() {
            s.spawn(move || {
                for episode in 0..6 {
                    if p.rank() == 6 && episode == 3 {
                        std::thread::sleep(Duration::from_secs(1));
                    }
                    p.wait().unwrap();
                }
            });
        }
    });
}

#[test]
fn without_a_hook_a_stall_is_one_line_on_stderr() {
    if std::env::var_os(CHILD).is_some() {
        stalled_barrier();
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("PHASERS_STALL", "300ms")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the child failed:\n{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("phasers: "))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one report for one stalled episode:\n{stderr}"
    );
    let line = lines[0];
    assert!(
        line.starts_with("phasers: Barrier (Counting, 8 participants) has waited "),
        "{line}"
    );
    assert!(line.contains(" in episode 3 for rank(s) [6]; "), "{line}");
    assert!(line.contains("leave()"), "{line}");
    assert!(line.contains("PHASERS_STALL"), "{line}");
}
