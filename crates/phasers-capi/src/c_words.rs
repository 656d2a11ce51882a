//! The C ABI's words for what the core's error messages say in Rust (issue 31).
//!
//! The core's messages are written for Rust users: they name `Mode::Wait`, `Op::And`, `wait()`,
//! `TeamBuilder::unchecked`, `f64`, constants such as `phasers::team::MAX_MEMBERS`. A C program
//! reading `phasers_last_error()` has none of these; it has `PHASERS_MODE_WAIT`,
//! `PHASERS_OP_AND`, `phasers_registration_wait`, `checked = 0`, `double`. So every core error is
//! rewritten here on its way to C, in two ways:
//!
//! - the variants with structured fields (timeout, broken, terminated, mismatch, capability) get a
//!   message of their own built from the fields, because their Rust text explains Rust-only
//!   situations (an `AnyThreadBarrier`, an `on_advance` action, a dropped handle);
//! - every other text goes through [`PHRASES`], a table of (Rust phrase, C phrase) pairs, so a
//!   core message keeps its wording (what went wrong, whose input, what to do) and only the names
//!   change.
//!
//! The core stays free of C: it cannot know which front end shows its message. A new core message
//! that names a Rust item needs a row here; the audit in `c_message_audit` drives the C entry
//! points and fails on any Rust-only word that reaches `phasers_last_error`.

use phasers_core::{Error, Mode};

/// (Rust phrase, C phrase), applied in this order to every core message that reaches C.
///
/// A phrase matches as a whole word where it begins or ends with a letter, digit or `_`: `i32`
/// becomes `int32_t` but `phasers_accumulator_send_i32` is left alone, and `Mode::Sig` does not
/// match inside `Mode::SigWait`. Longer phrases come before the words they contain. No C phrase
/// contains a Rust phrase, so translating twice changes nothing (a test checks it).
pub(crate) const PHRASES: &[(&str, &str)] = &[
    // Registration modes (phaser create and register, capability hints).
    ("Mode::SigWaitSingle", "PHASERS_MODE_SIG_WAIT_SINGLE"),
    ("Mode::SigWait", "PHASERS_MODE_SIG_WAIT"),
    ("Mode::Sig", "PHASERS_MODE_SIG"),
    ("Mode::Wait", "PHASERS_MODE_WAIT"),
    ("SigWaitSingle", "PHASERS_MODE_SIG_WAIT_SINGLE"),
    ("SigWait", "PHASERS_MODE_SIG_WAIT"),
    ("Sig", "PHASERS_MODE_SIG"),
    ("Wait", "PHASERS_MODE_WAIT"),
    // Registration methods (a second signal in one phase, capability hints).
    ("signal()", "phasers_registration_signal"),
    ("wait()", "phasers_registration_wait"),
    ("next()", "phasers_registration_next"),
    ("force_terminate", "phasers_phaser_terminate"),
    // Operators (a bitwise operator on floating point, for accumulators, reductions and teams).
    // C has no operator of its own making, so the core's advice to write one is left out.
    (
        "use Sum, Product, Min, Max or Op::custom",
        "use PHASERS_OP_SUM, PHASERS_OP_PRODUCT, PHASERS_OP_MIN or PHASERS_OP_MAX",
    ),
    (
        "use Sum, Product, Min, Max or a function of your own",
        "use PHASERS_OP_SUM, PHASERS_OP_PRODUCT, PHASERS_OP_MIN or PHASERS_OP_MAX",
    ),
    ("Op::Sum", "PHASERS_OP_SUM"),
    ("Op::Product", "PHASERS_OP_PRODUCT"),
    ("Op::Min", "PHASERS_OP_MIN"),
    ("Op::Max", "PHASERS_OP_MAX"),
    ("Op::And", "PHASERS_OP_AND"),
    ("Op::Or", "PHASERS_OP_OR"),
    ("Op::Xor", "PHASERS_OP_XOR"),
    // Element types, as `std::any::type_name` spells them in the core's messages.
    ("i32", "int32_t (PHASERS_TYPE_I32)"),
    ("i64", "int64_t (PHASERS_TYPE_I64)"),
    ("u32", "uint32_t (PHASERS_TYPE_U32)"),
    ("u64", "uint64_t (PHASERS_TYPE_U64)"),
    ("f32", "float (PHASERS_TYPE_F32)"),
    ("f64", "double (PHASERS_TYPE_F64)"),
    // Teams: the C team is unchecked by `checked = 0`, and has no sync modes to choose.
    (
        "(`TeamBuilder::unchecked` or PHASERS_CHECKED=off)",
        "(phasers_team_create with checked = 0)",
    ),
    (
        "build the team checked to get Error::Mismatch",
        "create the team with checked non-zero to get PHASERS_EMISMATCH",
    ),
    (
        "the blocking form with AllSync or MySync",
        "the blocking form",
    ),
    (
        "a non-blocking form or NoSync (inputs copied)",
        "the non-blocking form (phasers_member_i*)",
    ),
    // Error variants, where a message names another one.
    ("Error::Mismatch", "PHASERS_EMISMATCH"),
    ("Error::Broken", "PHASERS_EBROKEN"),
    ("Error::Timeout", "PHASERS_ETIMEDOUT"),
    // Limits named by their Rust constant: the number itself is already in the message.
    (" (phasers::barrier::MAX_PARTIES)", ""),
    (" (phasers::barrier::MAX_FAN_IN)", ""),
    (" (phasers::wait::MAX_SPIN_ROUNDS)", ""),
    (" (phasers::phaser::MAX_SUB_PHASERS)", ""),
    (" (phasers::reduce::MAX_PARTIES)", ""),
    (" (phasers::team::MAX_MEMBERS)", ""),
    // Barrier algorithms.
    (
        "Algorithm::SenseReversing",
        "PHASERS_ALGORITHM_SENSE_REVERSING",
    ),
    ("Algorithm::Counting", "PHASERS_ALGORITHM_COUNTING"),
    ("Algorithm::Ticket", "PHASERS_ALGORITHM_TICKET"),
    (
        "Algorithm::CombiningTree",
        "PHASERS_ALGORITHM_COMBINING_TREE",
    ),
    ("Algorithm::McsTree", "PHASERS_ALGORITHM_MCS_TREE"),
    (
        "Algorithm::Dissemination",
        "PHASERS_ALGORITHM_DISSEMINATION",
    ),
    ("Algorithm::Tournament", "PHASERS_ALGORITHM_TOURNAMENT"),
];

/// `text` with every Rust phrase of [`PHRASES`] replaced by its C phrase.
pub(crate) fn c_text(text: &str) -> String {
    PHRASES.iter().fold(text.to_string(), |text, (rust, c)| {
        replace_whole(&text, rust, c)
    })
}

/// The message `phasers_last_error` gives for a core error.
pub(crate) fn c_message(error: &Error) -> String {
    match error {
        Error::Timeout {
            episode,
            missing,
            resumable,
        } => format!(
            "timed out in episode {episode}: {} participant(s) had not arrived (ranks \
             {missing:?}); {}",
            missing.len(),
            if *resumable {
                "the arrival stays in place, so waiting again with the same rank, registration \
                 or request completes this episode"
            } else {
                "the timeout broke the barrier, and every other wait now returns \
                 PHASERS_EBROKEN: destroy it and create a new one to go on"
            }
        ),
        Error::Broken { by, episode } => format!(
            "broken: participant {by} was lost before completing episode {episode} (a team \
             member destroyed while the others still needed it, or a panic inside the library), \
             so waits from that episode on cannot complete; destroy this object and its handles, \
             create a new one and restart the computation"
        ),
        Error::Terminated { phase } => format!(
            "the phaser is terminated (phasers_phaser_terminate was called, or every registration \
             that could signal was dropped), so phase {phase} will never complete; drop its \
             registrations and create a new phaser"
        ),
        Error::Mismatch {
            what,
            rank,
            ours,
            other,
            theirs,
        } => format!(
            "mismatched {what}: participant {rank} passed {} but participant {other} passed {}; \
             every participant of one call must pass the same {what}",
            c_value(ours),
            c_value(theirs),
            what = c_text(what),
        ),
        Error::Capability {
            operation,
            needed,
            mode,
            hint,
        } => format!(
            "{} needs {}, but this registration is {}; {}",
            c_operation(operation),
            c_text(needed),
            c_mode(*mode),
            c_text(hint)
        ),
        // Invalid arguments, unsupported operations and variants added later keep the core's
        // wording with the C names.
        other => c_text(&other.to_string()),
    }
}

/// A mismatch's description of what one participant passed. Operators come as the core's bare
/// names (`Sum`), which only a whole-value match can tell from ordinary words.
fn c_value(value: &str) -> String {
    let operator = match value {
        "Sum" => "PHASERS_OP_SUM",
        "Product" => "PHASERS_OP_PRODUCT",
        "Min" => "PHASERS_OP_MIN",
        "Max" => "PHASERS_OP_MAX",
        "And" => "PHASERS_OP_AND",
        "Or" => "PHASERS_OP_OR",
        "Xor" => "PHASERS_OP_XOR",
        _ => return c_text(value),
    };
    operator.to_string()
}

/// The C function a capability error's operation is.
fn c_operation(operation: &str) -> String {
    match operation {
        "signal" => "phasers_registration_signal".to_string(),
        "wait" => "phasers_registration_wait".to_string(),
        "registering a child" => "phasers_registration_register".to_string(),
        "sending to an accumulator" => "phasers_accumulator_send_*".to_string(),
        other => c_text(other),
    }
}

/// The `PHASERS_MODE_*` constant of `mode`.
pub(crate) fn c_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::SigWaitSingle => "PHASERS_MODE_SIG_WAIT_SINGLE",
        Mode::SigWait => "PHASERS_MODE_SIG_WAIT",
        Mode::Sig => "PHASERS_MODE_SIG",
        Mode::Wait => "PHASERS_MODE_WAIT",
    }
}

/// Whether `c` can be part of an identifier.
fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with each whole-word occurrence of `rust` replaced by `c` (see [`PHRASES`]).
fn replace_whole(text: &str, rust: &str, c: &str) -> String {
    let starts_word = rust.starts_with(is_word);
    let ends_word = rust.ends_with(is_word);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices(rust) {
        let end = at + rust.len();
        let joined_before = starts_word && text[..at].ends_with(is_word);
        let joined_after = ends_word && text[end..].starts_with(is_word);
        if joined_before || joined_after {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str(c);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phrase_becomes_its_c_phrase_and_c_phrases_stay() {
        for (rust, c) in PHRASES {
            let sentence = format!("before {rust} after");
            assert_eq!(
                c_text(&sentence),
                format!("before {c} after"),
                "the row for {rust:?}"
            );
            assert_eq!(c_text(c), *c, "the C phrase {c:?} is translated again");
        }
    }

    #[test]
    fn phrases_match_whole_words_only() {
        assert_eq!(
            c_text("call phasers_accumulator_send_i32 for i32"),
            "call phasers_accumulator_send_i32 for int32_t (PHASERS_TYPE_I32)"
        );
        assert_eq!(
            c_text("Mode::SigWait, not Mode::Sig; PHASERS_WAIT=spin"),
            "PHASERS_MODE_SIG_WAIT, not PHASERS_MODE_SIG; PHASERS_WAIT=spin"
        );
        assert_eq!(
            c_text("wait() then next()"),
            "phasers_registration_wait then phasers_registration_next"
        );
    }

    #[test]
    fn structured_variants_are_rebuilt_in_c_words() {
        let timeout = c_message(&Error::Timeout {
            episode: 3,
            missing: vec![1, 4],
            resumable: true,
        });
        assert!(timeout.contains("ranks [1, 4]"), "{timeout}");
        assert!(!timeout.contains("AnyThreadBarrier"), "{timeout}");
        let terminated = c_message(&Error::Terminated { phase: 2 });
        assert!(
            terminated.contains("phasers_phaser_terminate"),
            "{terminated}"
        );
        let broken = c_message(&Error::Broken { by: 1, episode: 0 });
        assert!(broken.starts_with("broken: participant 1"), "{broken}");
        let mismatch = c_message(&Error::Mismatch {
            what: "operation",
            rank: 0,
            ours: "Sum".into(),
            other: 1,
            theirs: "Max".into(),
        });
        assert!(
            mismatch.contains("passed PHASERS_OP_SUM but participant 1 passed PHASERS_OP_MAX"),
            "{mismatch}"
        );
        let types = c_message(&Error::Mismatch {
            what: "element type",
            rank: 0,
            ours: "i64".into(),
            other: 1,
            theirs: "f64".into(),
        });
        assert!(
            types.contains("passed int64_t (PHASERS_TYPE_I64) but participant 1 passed double"),
            "{types}"
        );
    }

    #[test]
    fn element_types_read_as_the_capi_names_them() {
        for element in crate::enums::ELEMENT_TYPES {
            assert_eq!(c_text(element.suffix()), element.c_name());
        }
    }

    #[test]
    fn every_mode_has_its_header_constant() {
        const HEADER: &str = include_str!("../include/phasers.h");
        for mode in Mode::ALL {
            assert!(HEADER.contains(&format!("{} = ", c_mode(mode))), "{mode}");
        }
    }
}
