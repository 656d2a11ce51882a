//! Loom models of leaving, for the algorithms that support it (sense-reversing and counting): 3
//! participants complete episode 0, then one leaves (arriving at episode 1 without waiting) and the
//! other two complete episodes 1 and 2 as a barrier of two. Every episode must complete with the
//! barrier invariant and its completion action exactly once (see `loom_support`); episodes 0 and 2
//! have exactly one leader, episode 1 at most one (the leaver leads it, unreported, when it arrives
//! last). A participant that has left is refused further waits, and dropping it breaks nothing.
//! Timeouts in the episodes after the leave must not list the leaver as missing.
//!
//! Run with `scripts/loom.sh`.
#![cfg(phasers_loom)]

mod loom_support;

use loom_support::*;
use phasers::Error;

const EPISODES: u64 = 3;

/// Rank `leaver` leaves after episode 0. Ranks in one group share a loom thread, polled with timed
/// waits (see `loom_support`).
fn leave_after_first_episode(config: Config, leaver: usize, groups: &'static [&'static [usize]]) {
    model(move || {
        let (reports, ledger) = scenario(
            config,
            3,
            EPISODES as usize,
            groups,
            move |mut group, ledger| {
                let mut led = complete(&mut group, ledger, 0);
                if let Some(at) = group.iter().position(|p| p.rank() == leaver) {
                    let mut participant = group.remove(at);
                    ledger.leave(leaver, 1);
                    participant.leave().expect("leaving after episode 0");
                    assert!(matches!(
                        participant.wait(),
                        Err(Error::InvalidArgument { .. })
                    ));
                    std::mem::drop(participant);
                }
                for episode in 1..EPISODES {
                    // Timeouts after the leave episode must not name the leaver as missing; in the
                    // leave episode itself its arrival may race with the reading.
                    let check = move |missing: &[usize]| {
                        assert!(
                            episode == 1 || !missing.contains(&leaver),
                            "episode {episode}: rank {leaver} left in episode 1, yet a timeout \
                             lists it as missing: {missing:?}"
                        );
                    };
                    led.extend(match &mut group[..] {
                        [] => break,
                        [participant] => {
                            if wait_checked(participant, ledger, episode) {
                                vec![episode]
                            } else {
                                vec![]
                            }
                        }
                        group => poll_all_checked_with(group, ledger, episode, &check),
                    });
                }
                led
            },
        );
        assert_eq!(leaders_of(&reports, 0), 1);
        assert!(leaders_of(&reports, 1) <= 1);
        assert_eq!(leaders_of(&reports, 2), 1);
        assert_eq!(ledger.completions(), EPISODES);
    });
}

macro_rules! leave_models {
    ($($algorithm:ident: $config:expr;)*) => {
        $(
            mod $algorithm {
                use super::*;

                /// The leaver shares its thread with another rank.
                #[test]
                fn leaver_polled() {
                    leave_after_first_episode($config, 2, &[&[0], &[1, 2]]);
                }

                /// The leaver has its own thread; the remaining two are polled.
                #[test]
                fn leaver_alone() {
                    leave_after_first_episode($config, 2, &[&[0, 1], &[2]]);
                }

                /// Every rank has its own thread.
                #[test]
                fn three_threads() {
                    leave_after_first_episode($config, 1, &[&[0], &[1], &[2]]);
                }
            }
        )*
    };
}

leave_models! {
    sense_reversing: SENSE_REVERSING;
    counting: COUNTING;
}
