//! The correctness check every barrier row passes before it is timed, so that a barrier that does
//! not wait cannot look fast: one participant at a time is held back before it arrives, and every
//! other participant must stay in the barrier for at least half of that delay.
//!
//! (Each wait also checks the episode number it returns against its own count.)

use std::time::{Duration, Instant};

use crate::error::{BenchError, Result};

/// How long the held-back participant sleeps before arriving. Longer than the skew with which
/// an oversubscribed machine releases participants (a few time slices), short next to a row.
pub const HOLD_BACK: Duration = Duration::from_millis(20);

/// Episodes of the check: up to 4 participants are held back in turn.
pub fn episodes(participants: usize) -> usize {
    participants.clamp(1, 4)
}

/// The participant held back in `episode`: spread over the participants, the last one first
/// (the last thread of the last rank).
pub fn held_back(episode: usize, participants: usize) -> usize {
    let step = (participants / episodes(participants)).max(1);
    participants - 1 - (episode * step) % participants
}

/// Runs the check's episodes for participant `index` of `participants` (global over ranks x
/// threads); `wait` is one barrier episode. Every participant calls it.
pub fn hold_back_each(
    what: &str,
    index: usize,
    participants: usize,
    mut wait: impl FnMut() -> Result<()>,
) -> Result<()> {
    for episode in 0..episodes(participants) {
        let late = held_back(episode, participants);
        if index == late {
            std::thread::sleep(HOLD_BACK);
            wait()?;
            continue;
        }
        let start = Instant::now();
        wait()?;
        let waited = start.elapsed();
        if participants > 1 && waited < HOLD_BACK / 2 {
            return Err(BenchError::check(
                what,
                format!(
                    "participant {index} left check episode {episode} after {waited:?}, while \
                     participant {late} was held back {HOLD_BACK:?} before arriving: it did not \
                     wait for everyone"
                ),
            ));
        }
    }
    Ok(())
}

/// The error for an episode number that is not the one expected.
pub fn wrong_episode(what: &str, got: u64, expected: u64) -> BenchError {
    BenchError::check(
        what,
        format!("a wait returned episode {got} where {expected} was expected"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_back_participants_are_distinct_and_in_range() {
        for n in 1..40 {
            let late: Vec<usize> = (0..episodes(n)).map(|e| held_back(e, n)).collect();
            assert!(late.iter().all(|&i| i < n), "{n}: {late:?}");
            let mut unique = late.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), late.len(), "{n}: {late:?}");
            assert_eq!(late[0], n - 1);
        }
    }

    #[test]
    fn a_barrier_that_does_not_wait_fails() {
        let error = hold_back_each("no-op", 0, 2, || Ok(())).unwrap_err();
        assert!(error.to_string().contains("did not wait"), "{error}");
    }
}
