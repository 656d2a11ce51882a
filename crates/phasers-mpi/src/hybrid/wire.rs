//! The fixed-size detailed record each process sends when a checked call's envelopes disagree
//! (see `checked.rs`): its members' common signature and the error it found locally, if any.
//! Every process gathers every record and draws the same conclusion from them, so every member
//! of every process returns the same error, naming both sides.
//!
//! | bytes | content |
//! |---|---|
//! | 0..96 | 12 little-endian `u64`s: kind, element size, length, root, error tag, error `what`, rank, other, everywhere, element type name hash |
//! | 96..224 | element type name (UTF-8, zero padded, cut at 128 bytes) |
//! | 224..256 | op name |
//! | 256..640 | first text (`ours`, or the invalid-argument message) |
//! | 640..1024 | second text (`theirs`) |

use super::bytes::Bytes;
use super::signature::{describe_call, in_process, name_hash, Kind, LocalError, Signature};
use crate::error::Error;

/// Bytes of one process's record.
pub(crate) const RECORD: usize = 1024;

const WORDS: usize = 12;
const TYPE_AT: usize = 96;
const OP_AT: usize = 224;
const FIRST_AT: usize = 256;
/// The longest op name a record carries whole.
#[cfg(test)]
pub(crate) const OP_BYTES: usize = FIRST_AT - OP_AT;
const SECOND_AT: usize = 640;

const NO_ERROR: u64 = 0;
const MISMATCH: u64 = 1;
const INVALID: u64 = 2;
const OTHER: u64 = 3;

const WHATS: [&str; 5] = ["collective", "element type", "length", "root", "operation"];

/// The record of a process whose members agree on `sig` (or found `error`).
pub(crate) fn encode(sig: &Signature, error: Option<&LocalError>) -> Bytes {
    let mut record = Bytes::zeroed(RECORD);
    let bytes = record.as_mut_slice();
    let mut words = [0u64; WORDS];
    words[0] = sig.kind as u64;
    words[1] = sig.elem_size as u64;
    words[2] = sig.len as u64;
    words[3] = sig.root as u64;
    // The name field cuts long names; the hash tells apart types whose names differ further on.
    words[9] = name_hash(sig.type_name);
    let (mut first, mut second) = (String::new(), String::new());
    if let Some(local) = error {
        words[8] = u64::from(local.everywhere);
        match &local.error {
            Error::Mismatch {
                what,
                rank,
                ours,
                other,
                theirs,
            } => {
                words[4] = MISMATCH;
                words[5] = WHATS.iter().position(|w| w == what).unwrap_or(0) as u64;
                words[6] = *rank as u64;
                words[7] = *other as u64;
                first.clone_from(ours);
                second.clone_from(theirs);
            }
            Error::InvalidArgument { message } => {
                words[4] = INVALID;
                first.clone_from(message);
            }
            other => {
                words[4] = OTHER;
                first = other.to_string();
            }
        }
    }
    for (i, w) in words.iter().enumerate() {
        bytes[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    put(&mut bytes[TYPE_AT..OP_AT], sig.type_name);
    put(&mut bytes[OP_AT..FIRST_AT], sig.op);
    put(&mut bytes[FIRST_AT..SECOND_AT], &first);
    put(&mut bytes[SECOND_AT..RECORD], &second);
    record
}

/// Writes `text` cut at a character boundary to fit.
fn put(field: &mut [u8], text: &str) {
    let mut end = text.len().min(field.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    field[..end].copy_from_slice(&text.as_bytes()[..end]);
}

fn get(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

struct Record {
    words: [u64; WORDS],
    type_name: String,
    op: String,
    first: String,
    second: String,
}

fn decode(bytes: &[u8]) -> Record {
    let mut words = [0u64; WORDS];
    for (i, w) in words.iter_mut().enumerate() {
        let mut le = [0u8; 8];
        le.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
        *w = u64::from_le_bytes(le);
    }
    Record {
        words,
        type_name: get(&bytes[TYPE_AT..OP_AT]),
        op: get(&bytes[OP_AT..FIRST_AT]),
        first: get(&bytes[FIRST_AT..SECOND_AT]),
        second: get(&bytes[SECOND_AT..RECORD]),
    }
}

impl Record {
    fn error(&self) -> Option<Error> {
        match self.words[4] {
            NO_ERROR => None,
            MISMATCH => Some(Error::Mismatch {
                what: WHATS
                    .get(self.words[5] as usize)
                    .copied()
                    .unwrap_or("collective"),
                rank: self.words[6] as usize,
                ours: self.first.clone(),
                other: self.words[7] as usize,
                theirs: self.second.clone(),
            }),
            INVALID => Some(Error::invalid(self.first.clone())),
            _ => Some(Error::Broken {
                what: "hybrid team",
                reason: self.first.clone(),
            }),
        }
    }

    fn kind(&self) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| *k as u64 == self.words[0])
    }

    /// The call in words, with the process that made it.
    fn describe(&self, process: usize) -> String {
        let call = match self.kind() {
            Some(kind) => describe_call(
                kind,
                &self.type_name,
                self.words[2] as usize,
                self.words[3] as usize,
                &self.op,
            ),
            None => format!("an unknown collective (code {})", self.words[0]),
        };
        format!("{call}{}", in_process(Some(process)))
    }
}

/// The verdict on every process's record (`records` holds them in process order; `offsets[p]`
/// is process `p`'s first global rank): the first member, in rank order, whose call differs
/// from member 0's, or the first bad argument.
///
/// Processes are visited in order; for each, a difference between its first member and member
/// 0 comes first, then the error it found among its own members.
pub(crate) fn verdict(records: &[u8], offsets: &[usize], full: bool) -> Option<Error> {
    let all: Vec<Record> = records.chunks_exact(RECORD).map(decode).collect();
    let first = all.first()?;
    for (p, rec) in all.iter().enumerate() {
        let what = if rec.words[0] != first.words[0] {
            Some("collective")
        } else if rec.words[1] != first.words[1]
            || rec.words[9] != first.words[9]
            || rec.type_name != first.type_name
        {
            Some("element type")
        } else if rec.words[2] != first.words[2] {
            Some("length")
        } else if first.kind().is_some_and(Kind::has_root) && rec.words[3] != first.words[3] {
            Some("root")
        } else if full && rec.op != first.op {
            Some("operation")
        } else {
            None
        };
        if let Some(what) = what {
            return Some(Error::Mismatch {
                what,
                rank: offsets[0],
                ours: first.describe(0),
                other: offsets[p],
                theirs: rec.describe(p),
            });
        }
        match rec.error() {
            // The process's first member agrees with member 0 (compared above), so the member
            // that differs from it differs from member 0: report it against member 0, as the
            // thread team does.
            Some(Error::Mismatch {
                what,
                other,
                theirs,
                ..
            }) => {
                return Some(Error::Mismatch {
                    what,
                    rank: offsets[0],
                    ours: first.describe(0),
                    other,
                    theirs,
                })
            }
            Some(error) => return Some(error),
            None => {}
        }
    }
    None
}

/// The error when the envelopes disagreed but no field of the detailed records differs (the
/// records compare every field the envelope carries, so only a record damaged on the way can
/// get here): every process draws it alike from the same records.
pub(crate) fn unnamed_difference() -> Error {
    Error::Broken {
        what: "hybrid team",
        reason: "the processes' calls differ (their envelopes disagree) in a way their detailed \
                 records do not show; every member of every process must make the same call"
            .to_owned(),
    }
}

/// Whether every process's record says MPI is left out of the call alike (see
/// [`LocalError::everywhere`]); used when the verdict is an error.
#[cfg(test)]
fn everywhere(records: &[u8]) -> bool {
    records
        .chunks_exact(RECORD)
        .map(decode)
        .all(|r| r.words[8] == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut sig = Signature::new::<f64>(Kind::Allreduce, 7, 0);
        sig.op = "Sum";
        let a = encode(&sig, None);
        let mut other = sig;
        other.len = 8;
        let b = encode(&other, None);
        let mut both = Bytes::zeroed(0);
        both.extend(a.as_slice());
        both.extend(b.as_slice());
        match verdict(both.as_slice(), &[0, 3], true) {
            Some(Error::Mismatch {
                what: "length",
                rank: 0,
                other: 3,
                ours,
                theirs,
            }) => {
                assert_eq!(ours, "allreduce of 7 f64 elements with Op::Sum (process 0)");
                assert_eq!(
                    theirs,
                    "allreduce of 8 f64 elements with Op::Sum (process 1)"
                );
            }
            v => panic!("unexpected verdict {v:?}"),
        }
        assert!(!everywhere(both.as_slice()));
        let local = LocalError {
            error: Error::invalid("root 9 is out of range"),
            everywhere: true,
        };
        let c = encode(&sig, Some(&local));
        assert_eq!(
            verdict(c.as_slice(), &[0], true),
            Some(Error::invalid("root 9 is out of range"))
        );
    }
}
