//! Rows measured in a fresh process (libgomp reads `OMP_WAIT_POLICY` once, when it loads): the
//! parent's [`delegate`] runs this program's hidden [`SUBCOMMAND`] with one variable set and the
//! job as JSON on stdin; the child's [`serve`] prints the result as JSON. Whatever goes wrong comes
//! back as an error saying so, for a failed row.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The hidden command every child runs: `phasers internal-child KIND`.
pub const SUBCOMMAND: &str = "internal-child";

/// Runs [`SUBCOMMAND`] `kind` with the variable `env` set, hands it `job` and parses the result
/// it prints, killing it after `limit`; `Err` reads "the child process with NAME=VALUE ...".
pub fn delegate<J: Serialize, T: DeserializeOwned>(
    kind: &str,
    env: (&str, &str),
    job: &J,
    limit: Duration,
) -> Result<T, String> {
    let measured = serde_json::to_string(job)
        .map_err(|error| format!("could not be given its job: {error}"))
        .and_then(|job| {
            let exe = std::env::current_exe()
                .map_err(|error| format!("cannot find this program to re-run it: {error}"))?;
            let mut command = Command::new(exe);
            command.args([SUBCOMMAND, kind]).env(env.0, env.1);
            run(command, job, limit)
        });
    measured.map_err(|error| format!("the child process with {}={} {error}", env.0, env.1))
}

/// The child's side: reads the job from stdin, does it with `work`, prints the result as JSON.
pub fn serve<J: DeserializeOwned, T: Serialize>(
    work: impl FnOnce(J) -> Result<T, String>,
) -> Result<(), String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|error| format!("cannot read the job: {error}"))?;
    let job = serde_json::from_str(&text)
        .map_err(|error| format!("the job is not one ({error}): {text:.80}"))?;
    let result = work(job)?;
    let text = serde_json::to_string(&result)
        .map_err(|error| format!("cannot encode the result: {error}"))?;
    println!("{text}");
    Ok(())
}

/// Runs `command` with `input` on stdin, killed after `limit`; `Err` completes "the child ...".
fn run<T: DeserializeOwned>(
    mut command: Command,
    input: String,
    limit: Duration,
) -> Result<T, String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("could not start: {error}"))?;
    let (stdin, mut stdout, mut stderr) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take());
    // Written from a thread of its own, so a large job and the child's output cannot both fill
    // their pipes; dropping the pipe tells the child the job is whole.
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // A child that exits without reading says why on stderr, reported below.
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    // stdout ends when the child exits: its reader says when, so the parent need not poll.
    let (done, finished) = mpsc::channel();
    let stdout_reader = std::thread::spawn(move || {
        let text = read_all(stdout.as_mut());
        let _ = done.send(());
        text
    });
    let stderr_reader = std::thread::spawn(move || read_all(stderr.as_mut()));
    let killed = finished.recv_timeout(limit).is_err() && child.kill().is_ok();
    let status = child
        .wait()
        .map_err(|error| format!("could not be waited for: {error}"))?;
    let _ = writer.join();
    let out = stdout_reader.join().unwrap_or_default();
    let err = stderr_reader.join().unwrap_or_default();
    if killed {
        return Err(format!(
            "ran past {} s (the row budget and --hang-seconds) and was killed",
            limit.as_secs_f64()
        ));
    }
    // The child's error message, if any: the last line of stderr that says something.
    let said = err.lines().map(str::trim).rfind(|line| !line.is_empty());
    let said = said.map(|line| format!(": {line}")).unwrap_or_default();
    if !status.success() {
        return Err(format!("failed ({status}){said}"));
    }
    serde_json::from_str(out.trim()).map_err(|error| {
        format!(
            "printed no result ({error}; it printed {:?}){said}",
            out.chars().take(120).collect::<String>()
        )
    })
}

fn read_all(pipe: Option<&mut impl Read>) -> String {
    let mut text = String::new();
    if let Some(pipe) = pipe {
        // A read error leaves what was read, which the caller reports as a bad result.
        let _ = pipe.read_to_string(&mut text);
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    // tests/omp_active.rs runs real children, one of them failing; here: what they never do.

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn a_big_job_comes_back_and_a_bad_child_is_an_error_that_says_why() {
        let limit = Duration::from_secs(30);
        let big: Vec<u64> = (0..100_000).collect();
        let input = serde_json::to_string(&big).unwrap();
        assert_eq!(run::<Vec<u64>>(shell("cat"), input, limit), Ok(big));
        for (command, why, limit) in [
            (shell("echo hello"), "printed no result", limit),
            (
                shell("echo no OpenMP >&2; exit 3"),
                "(exit status: 3): no OpenMP",
                limit,
            ),
            (
                Command::new("/nonexistent/phasers"),
                "could not start",
                limit,
            ),
            (
                shell("exec sleep 30"),
                "was killed",
                Duration::from_millis(200),
            ),
        ] {
            let start = Instant::now();
            let error = run::<u32>(command, String::new(), limit).unwrap_err();
            assert!(
                error.contains(why) && start.elapsed() < limit * 5,
                "{error}"
            );
        }
        // The unit-test binary has no such subcommand: it runs no test, and prints no result.
        let error = delegate::<_, u32>("no-such-subcommand", ("PHASERS_CHILD", "1"), &7, limit);
        let error = error.unwrap_err();
        assert!(error.starts_with("the child process with PHASERS_CHILD=1 printed no result"));
    }
}
