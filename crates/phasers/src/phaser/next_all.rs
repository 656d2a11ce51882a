//! Advancing several phasers together: HJ's `next` over every registration of a task.

use super::registration::Registration;
use crate::error::Result;

/// Advances every registration in `registrations` together: signals all of them first, then waits
/// for each (HJ's `next` over all the phasers a task is registered on). Signalling first means a
/// task never holds one phaser back while it waits on another.
///
/// ```
/// use phasers::{phaser::next_all, Mode, Phaser};
///
/// let (_a, mut on_a) = Phaser::new(Mode::SigWait)?;
/// let (_b, mut on_b) = Phaser::new(Mode::SigWait)?;
/// next_all(&mut [&mut on_a, &mut on_b])?;
/// assert_eq!((on_a.phase(), on_b.phase()), (1, 1));
/// # Ok::<(), phasers::Error>(())
/// ```
///
/// # Errors
///
/// The first error any of the signals or waits returned; the registrations after it in the list
/// are then left as they were (signalled but not waited for, if the error came from a wait).
pub fn next_all(registrations: &mut [&mut Registration]) -> Result<()> {
    for registration in registrations.iter_mut() {
        if registration.mode().can_signal() && registration.mode().can_wait() {
            if registration.phase() == registration.waited() {
                registration.signal()?;
            }
        } else if registration.mode().can_signal() {
            registration.signal()?;
        }
    }
    for registration in registrations.iter_mut() {
        if registration.mode().can_wait() {
            registration.wait()?;
        }
    }
    Ok(())
}
