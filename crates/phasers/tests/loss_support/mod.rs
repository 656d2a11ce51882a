//! Losing one participant on purpose while the others are inside a call, and checking that each
//! survivor learned of it promptly: shared by the fault tests of issue 31 (`team_poll_broken.rs`,
//! `reduce_drop_in_call.rs`), which include it with `mod loss_support;`.
#![allow(dead_code)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How soon after the loss every survivor must have its error (issue 31's bound). On a loaded
/// 2-core machine with 64 threads the slowest survivor measured about 9 ms in a debug build.
pub const PROMPTLY: Duration = Duration::from_millis(50);

/// How long the lost participant waits before it goes: long enough that the survivors are
/// inside their calls.
pub const BEFORE_LOSS: Duration = Duration::from_millis(30);

/// What a deliberately lost participant panics with.
pub const PANIC_TEXT: &str = "deliberate panic while the others are in a call";

/// How the participant is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Its handle is dropped.
    Drop,
    /// Its thread panics while holding the handle.
    Panic,
}

impl Loss {
    pub const BOTH: [Loss; 2] = [Loss::Drop, Loss::Panic];
}

/// Keeps the deliberate panics' messages (one per case) out of the test output; every other
/// panic prints as usual.
pub fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let text = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied());
            if text != Some(PANIC_TEXT) {
                hook(info);
            }
        }));
    });
}

/// When the loss happened, shared by the lost participant's thread and the checks after.
#[derive(Clone, Default)]
pub struct LossClock(Arc<OnceLock<Instant>>);

impl LossClock {
    /// Waits [`BEFORE_LOSS`], notes the time, then loses `handle` as `loss` says (a panic does
    /// not return).
    pub fn lose<H>(&self, handle: H, loss: Loss) {
        std::thread::sleep(BEFORE_LOSS);
        self.0.set(Instant::now()).expect("one loss per case");
        match loss {
            Loss::Drop => drop(handle),
            Loss::Panic => {
                let _held = handle;
                panic!("{PANIC_TEXT}")
            }
        }
    }

    /// Fails, naming `what` and `who`, unless `ended` (when `who` had its error) came within
    /// [`PROMPTLY`] of the loss.
    pub fn assert_prompt(&self, what: &str, who: &str, ended: Instant) {
        let lost_at = *self.0.get().expect("the participant was lost");
        let late = ended.saturating_duration_since(lost_at);
        assert!(
            late <= PROMPTLY,
            "{what}: {who} learned of the loss {late:?} after it (at most {PROMPTLY:?})"
        );
    }
}
