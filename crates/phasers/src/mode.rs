//! What a registration may do on its phaser: the capability lattice of seed 000, Figure 2.
//!
//! It sits below both the phaser and [`Error`](crate::Error): an error names the mode that lacked
//! a capability ([`Error::Capability`](crate::Error::Capability)), and every room may import the
//! error, so the mode cannot live inside `phaser/` without the error importing the phaser back.
//! It imports nothing of the crate. Users name it `phasers::Mode` or `phasers::phaser::Mode`.

/// How a task is registered on a [`Phaser`](crate::Phaser).
///
/// The modes form a lattice: `SigWaitSingle > SigWait > {Sig, Wait}`. A registration may register a
/// child with its own mode or a weaker one, never a stronger one (HJ's `async phased` rule).
///
/// | mode | signals (holds phases back) | waits | `next_single` |
/// |---|---|---|---|
/// | `SigWaitSingle` | yes | yes | yes |
/// | `SigWait` | yes | yes | no |
/// | `Sig` | yes, never blocks | no | no |
/// | `Wait` | no | yes | no |
///
/// ```
/// use phasers::Mode;
///
/// assert!(Mode::SigWait.includes(Mode::Sig));
/// assert!(Mode::SigWait.includes(Mode::Wait));
/// assert!(!Mode::Sig.includes(Mode::Wait));
/// assert!(!Mode::SigWait.includes(Mode::SigWaitSingle));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Signal, wait, and run `next_single` actions.
    SigWaitSingle,
    /// Signal and wait: barrier synchronization. The default.
    #[default]
    SigWait,
    /// Signal only: a producer. Its signals never block, and it may run ahead of the phaser.
    Sig,
    /// Wait only: a consumer. It never holds a phase back.
    Wait,
}

impl Mode {
    /// Every mode, strongest first.
    ///
    /// ```
    /// use phasers::Mode;
    ///
    /// assert_eq!(Mode::ALL.len(), 4);
    /// assert!(Mode::ALL.iter().all(|&mode| Mode::ALL[0].includes(mode)));
    /// ```
    pub const ALL: [Mode; 4] = [Mode::SigWaitSingle, Mode::SigWait, Mode::Sig, Mode::Wait];

    /// Whether registrations of this mode signal, so that phases wait for them.
    ///
    /// ```
    /// use phasers::Mode;
    ///
    /// assert!(Mode::Sig.can_signal() && Mode::SigWait.can_signal());
    /// assert!(!Mode::Wait.can_signal());
    /// ```
    pub fn can_signal(self) -> bool {
        !matches!(self, Mode::Wait)
    }

    /// Whether registrations of this mode may wait for a phase to complete.
    ///
    /// ```
    /// use phasers::Mode;
    ///
    /// assert!(Mode::Wait.can_wait() && Mode::SigWaitSingle.can_wait());
    /// assert!(!Mode::Sig.can_wait());
    /// ```
    pub fn can_wait(self) -> bool {
        !matches!(self, Mode::Sig)
    }

    /// Whether registrations of this mode may call `next_single`.
    ///
    /// ```
    /// use phasers::Mode;
    ///
    /// let single: Vec<_> = Mode::ALL.into_iter().filter(|m| m.can_single()).collect();
    /// assert_eq!(single, [Mode::SigWaitSingle]);
    /// ```
    pub fn can_single(self) -> bool {
        matches!(self, Mode::SigWaitSingle)
    }

    /// Whether every capability of `other` is also one of `self`: a registration of mode `self`
    /// may register a child of mode `other`.
    ///
    /// ```
    /// use phasers::{Error, Mode, Phaser};
    ///
    /// assert!(Mode::SigWait.includes(Mode::Wait));
    /// assert!(!Mode::Wait.includes(Mode::Sig));
    /// let (_phaser, creator) = Phaser::new(Mode::SigWait)?;
    /// let consumer = creator.register(Mode::Wait)?;
    /// let err = consumer.register(Mode::Sig).unwrap_err();
    /// assert!(matches!(err, Error::Capability { .. }));
    /// # Ok::<(), phasers::Error>(())
    /// ```
    pub fn includes(self, other: Mode) -> bool {
        (!other.can_signal() || self.can_signal())
            && (!other.can_wait() || self.can_wait())
            && (!other.can_single() || self.can_single())
    }

    /// The name used in messages and on the command line.
    ///
    /// ```
    /// use phasers::Mode;
    ///
    /// assert_eq!(Mode::SigWaitSingle.name(), "SigWaitSingle");
    /// assert_eq!(Mode::Wait.to_string(), Mode::Wait.name());
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Mode::SigWaitSingle => "SigWaitSingle",
            Mode::SigWait => "SigWait",
            Mode::Sig => "Sig",
            Mode::Wait => "Wait",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_of_figure_2() {
        for mode in Mode::ALL {
            assert!(mode.includes(mode), "{mode} includes itself");
            assert!(Mode::SigWaitSingle.includes(mode));
        }
        assert!(!Mode::Sig.includes(Mode::SigWait));
        assert!(!Mode::Wait.includes(Mode::SigWait));
        assert!(!Mode::Wait.includes(Mode::Sig));
        assert!(!Mode::SigWait.includes(Mode::SigWaitSingle));
    }
}
