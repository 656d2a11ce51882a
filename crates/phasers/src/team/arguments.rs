//! The arguments of every collective, blocking or not: each method of a collective builds its
//! [`Call`] here, after checking this member's own arguments.
//!
//! A bad argument does not return at once, because the others would then wait for this member
//! forever: the call goes ahead with the error recorded, and every member of it returns the error.
//! The blocking forms (`collectives.rs`) and the non-blocking ones (`nonblocking.rs`) share these,
//! so the two cannot check differently.

use super::call::Call;
use super::combiner::Combiner;
use super::kind::Kind;
use super::member::Member;
use crate::error::{Error, Result};

impl Member {
    pub(super) fn require(
        &self,
        call: &mut Call<'_, impl Sized>,
        holds: bool,
        message: impl FnOnce() -> String,
    ) {
        if !holds {
            call.fail(Error::invalid(format!(
                "{} on member {}: {}",
                call.kind,
                self.rank,
                message()
            )));
        }
    }

    pub(super) fn check_root(&self, call: &mut Call<'_, impl Sized>) {
        let (root, size) = (call.root, self.parties());
        self.require(call, root < size, || {
            format!(
                "root {root} is out of range; this team has members 0 to {}",
                size - 1
            )
        });
    }

    /// `len == expected`, where `expected` is `size * count` or `count`.
    pub(super) fn check_len(
        &self,
        call: &mut Call<'_, impl Sized>,
        what: &str,
        len: usize,
        expected: Option<usize>,
        rule: &str,
    ) {
        let holds = expected == Some(len);
        self.require(call, holds, || match expected {
            Some(expected) => {
                format!("the {what} has {len} elements but must have {expected} ({rule})")
            }
            None => format!("the {what} would need more elements than memory can hold ({rule})"),
        });
    }

    pub(super) fn with_op<'a, T: Copy>(
        call: Call<'a, T>,
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        match op {
            Ok(op) => call.op(op),
            Err(error) => {
                let mut call = call;
                call.fail(error);
                call
            }
        }
    }

    pub(super) fn broadcast_call<'a, T>(&self, root: usize, buffer: &'a mut [T]) -> Call<'a, T> {
        let count = buffer.len();
        let mut call = Call::new(Kind::Broadcast)
            .in_out(buffer)
            .root(root)
            .count(count);
        self.check_root(&mut call);
        call
    }

    pub(super) fn reduce_call<'a, T: Copy>(
        &self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(Kind::Reduce)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        let mut call = Self::with_op(call, op);
        self.check_root(&mut call);
        if root == self.rank {
            self.check_len(
                &mut call,
                "root's output",
                out,
                Some(count),
                "as long as the input",
            );
        }
        call
    }

    pub(super) fn allreduce_call<'a, T: Copy>(
        &self,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(Kind::Allreduce)
            .input(input)
            .output(output)
            .count(count);
        let mut call = Self::with_op(call, op);
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }

    pub(super) fn gather_call<'a, T>(
        &self,
        kind: Kind,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let mut call = Call::new(kind)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        if kind == Kind::Gather {
            self.check_root(&mut call);
        }
        if kind == Kind::Allgather || root == self.rank {
            let expected = count.checked_mul(self.parties());
            self.check_len(
                &mut call,
                "output",
                out,
                expected,
                "the team's size times the input's length",
            );
        }
        call
    }

    pub(super) fn scatter_call<'a, T>(
        &self,
        root: usize,
        input: &'a [T],
        output: &'a mut [T],
    ) -> Call<'a, T> {
        let (len, count) = (input.len(), output.len());
        let mut call = Call::new(Kind::Scatter)
            .input(input)
            .output(output)
            .root(root)
            .count(count);
        self.check_root(&mut call);
        if root == self.rank {
            let expected = count.checked_mul(self.parties());
            self.check_len(
                &mut call,
                "root's input",
                len,
                expected,
                "the team's size times the output's length",
            );
        }
        call
    }

    pub(super) fn alltoall_call<'a, T>(&self, input: &'a [T], output: &'a mut [T]) -> Call<'a, T> {
        let (count, out, size) = (input.len(), output.len(), self.parties());
        let mut call = Call::new(Kind::Alltoall)
            .input(input)
            .output(output)
            .count(count);
        self.require(&mut call, count % size == 0, || {
            format!("the input has {count} elements, not a multiple of the team's size {size} (one equal block per member)")
        });
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }

    pub(super) fn scan_call<'a, T: Copy>(
        &self,
        kind: Kind,
        input: &'a [T],
        output: &'a mut [T],
        op: Result<Combiner<'a, T>>,
    ) -> Call<'a, T> {
        let (count, out) = (input.len(), output.len());
        let call = Call::new(kind).input(input).output(output).count(count);
        let mut call = Self::with_op(call, op);
        self.check_len(
            &mut call,
            "output",
            out,
            Some(count),
            "as long as the input",
        );
        call
    }
}
