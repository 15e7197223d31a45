//! The incremental checker: [`crate::check()`]'s rules run as the bytes
//! arrive, in the same order, with bounded state.
//!
//! The walk keeps an explicit stack (one [`Frame`] per container entered,
//! at most [`MAX_DEPTH`]) and holds bytes only in the caller's scratch: the
//! bytes of the need being served, the previous key of every dict being
//! read (for the key order rule), the head of the open `tensors` block
//! (for the directory rules, run by the directory parser itself), and a
//! string's last 1 to 3 bytes when a character spans two pieces.
//!
//! Claims (a count or length checked against the bytes that remain) are
//! the one rule whose verdict depends on where the input ends. With the
//! length known ([`Checker::with_len`]) each claim is checked when it is
//! read, exactly as the whole-buffer check does. Without it, a claim waits
//! on the stack with its container until its bytes have passed; a fault
//! found while a claim still waits may not be the first fault the
//! whole-buffer check reports (that check may stop at the claim), so the
//! checker then asks for the input's end ([`Need::End`]) and reports the
//! first claim that fails against it, or else the fault.

use crate::directory::parse::{self, Header, Reach};
use crate::error::{Detail, Error, Refusal, Result};
use crate::frame;
use crate::frozen::{check_key_order, read_opt, DICT_BEYOND};
use crate::limits::Options;
use crate::schema::{CompiledType, NodeKind, Scalar};
use crate::walk::{ScalarValue, BYTES_BEYOND, LIST_BEYOND};
use crate::wire::{
    check_claim, check_fits_u64, depth_fault, trailing_fault, utf8, utf8_piece, Reader, COUNT_WORD,
    MAX_DEPTH, OVER_BYTE_CAP, OVER_COUNT_CAP, STR_BEYOND,
};

/// Zero bytes standing in for bytes past the known end, whose fault does
/// not depend on their content (a scalar, an opt tag, a count word).
const ZEROS: [u8; 8] = [0; 8];

/// Where a run of payload bytes belongs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Part {
    /// Which `tensors` value of the message, counted from 0 in wire order.
    pub block: u32,
    /// The tensor's index in its directory.
    pub tensor: u32,
    /// Offset of the run's first byte in the tensor's payload.
    pub offset: u64,
    /// Offset of the run's first byte from the start of its block (what a
    /// caller storing the block, to parse it in place later, writes at).
    pub block_offset: u64,
}

/// What the checker needs next. Positions are absolute offsets in the
/// message (a frame included).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Need {
    /// Bytes `at..at + len`, which the rules read: give them to
    /// [`Checker::feed`] (or write them into [`Checker::unfilled`] and call
    /// [`Checker::filled`]), in one piece or several. `payload` says when
    /// they are tensor payload bytes too (a bool payload, the last byte of
    /// a packed one), which a streaming caller also passes to its sink.
    Bytes {
        /// Where they start.
        at: u64,
        /// How many.
        len: usize,
        /// The tensor they belong to, if they are payload bytes.
        payload: Option<Part>,
    },
    /// Payload bytes `at..at + len` that no rule reads: a caller reading by
    /// ranges skips them ([`Checker::skip`]); a streaming caller passes
    /// them to its sink and feeds them (or calls [`Checker::skip`]).
    Payload {
        /// Where they start.
        at: u64,
        /// How many.
        len: u64,
        /// The tensor they belong to.
        part: Part,
    },
    /// The input's end: feed whatever bytes remain, then call
    /// [`Checker::end`]. Asked only when the length was not given: after
    /// the value (a byte more is TRAILING), or after a fault, to decide
    /// whether a count claimed earlier fits.
    End,
    /// The bytes are one valid value.
    Done,
}

/// What a check read, for a caller (and a test) to account for the bytes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Report {
    /// Bytes the rules read ([`Need::Bytes`]).
    pub read: u64,
    /// Payload bytes that no rule reads ([`Need::Payload`]), skipped or fed.
    pub payload: u64,
    /// How many [`Need::Bytes`] requests there were (ranges a caller reading
    /// by ranges fetches, before merging neighbours).
    pub requests: u64,
    /// The smallest scratch this message can be checked with, in bytes:
    /// any smaller is refused ([`Refusal::Capacity`]), any larger gives the
    /// same verdict. Known once the check is done (up to the fault);
    /// [`super::scratch_for`] gives it from the message's bytes, before.
    pub scratch_needed: usize,
}

/// A claim waiting for its bytes: `needed` bytes from `base`, or EOF at
/// `base - 4` (the count or length word) naming `what`.
#[derive(Copy, Clone, Debug)]
struct Claim {
    base: u64,
    needed: u64,
    /// Which EOF sentence, in [`BEYOND`].
    what: u8,
}

/// The EOF sentences of claims beyond the bytes that remain (an index into
/// this table keeps a frame small).
const BEYOND: [&str; 4] = [STR_BEYOND, BYTES_BEYOND, LIST_BEYOND, DICT_BEYOND];

impl Claim {
    const NONE: Claim = Claim {
        base: 0,
        needed: 0,
        what: 0,
    };

    /// The claim's fault when the input ends at `end`.
    fn check(&self, end: u64) -> Result<()> {
        check_fits_u64(
            self.needed,
            1,
            0,
            end.saturating_sub(self.base),
            BEYOND
                .get(usize::from(self.what))
                .copied()
                .unwrap_or(STR_BEYOND),
            0,
        )
        .map(|_| ())
        .map_err(|e| e.shifted_u64(self.base.saturating_sub(4)))
    }
}

/// One step of the path from the message's value to the value being read
/// ([`Checker::path`]): the steps of `kiln_nostd::inspect::Path`, borrowed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Step<'a> {
    /// A struct field, by name.
    Field(&'a str),
    /// A list element, by index.
    Index(u32),
    /// A dict entry, by key.
    Key(&'a str),
}

/// One container being read.
#[derive(Copy, Clone, Debug)]
enum Frame {
    /// The field being read, the next field's node and the node after the
    /// last field.
    Struct { field: u16, next: u16, end: u16 },
    /// Elements (or, for a zero-size element, the one element walked) not
    /// yet begun, of `walked`.
    List {
        element: u16,
        left: u32,
        walked: u32,
        claim: Claim,
    },
    /// An opt whose value, when present, is node `element`.
    Opt { element: u16 },
    /// Pairs not yet begun, and where the previous key is in scratch.
    Dict {
        value: u16,
        left: u32,
        claim: Claim,
        key: Option<(usize, usize)>,
    },
}

/// What a string-like run's bytes are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Run {
    /// A `str`: UTF-8, checked piece by piece.
    Str,
    /// A `list<u8>` body or a list of fixed-width numbers: any bytes.
    Bytes,
}

/// What the bytes of the need being served are for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Want {
    /// The 16-byte frame.
    Frame,
    /// One scalar.
    Scalar(Scalar),
    /// An opt's tag byte.
    OptTag,
    /// A count or length word.
    Word(Word),
    /// A piece of a run; `left` bytes of the run follow it.
    Run { run: Run, left: u64 },
    /// A whole dict key.
    Key,
    /// A block's 64-byte header.
    DirHeader,
    /// The rest of a block's head: descriptors, name heap, padding.
    DirHead,
    /// A piece of the alignment gap before tensor `i`'s payload.
    Gap(u32),
    /// A piece of the part of tensor `i`'s payload its bit rule reads.
    Bits(u32),
    /// Payload bytes no rule reads.
    Skip(u32),
    /// A pause of no bytes after a head passed its rules, so that a caller
    /// can take it ([`Checker::take_head`]) before its payloads begin.
    Head,
}

/// Which word.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Word {
    Str,
    Bytes,
    List,
    Dict,
    Key,
}

/// The `tensors` block being read.
#[derive(Copy, Clone, Debug)]
struct Block {
    /// Absolute offset of its first byte.
    at: u64,
    /// Where its head starts in scratch.
    scratch_at: usize,
    header: Option<Header>,
    /// The first fault of its head, and how far the payload rules run
    /// before it.
    fault: Option<Error>,
    reach: Reach,
    /// A fault of the bit rules, reported once no gap fault can come first.
    held: Option<Error>,
    /// The tensor whose gap or payload comes next.
    tensor: u32,
}

#[derive(Copy, Clone, Debug)]
enum State {
    /// Serving `Checker::cur`.
    Running,
    /// The value ended; the input should end here (length not given).
    AfterValue,
    /// A fault waits for the input's end, to be weighed against claims.
    Draining(Error),
    Done,
    Failed(Error),
}

/// The need being served.
#[derive(Copy, Clone, Debug)]
struct Cur {
    at: u64,
    len: u64,
    filled: u64,
    want: Want,
    /// Cut short by the known length: the bytes that exist, then the fault
    /// they show.
    short: bool,
}

/// The incremental checker of one message against a [`CompiledType`]: push
/// style and sans-IO, so the same state machine serves a blocking reader,
/// an async one, a file read by ranges and a browser that awaits each
/// range. [`Checker::need`] says what it needs; the caller gives bytes
/// ([`Checker::feed`], or [`Checker::unfilled`] and [`Checker::filled`]),
/// skips payload bytes ([`Checker::skip`]) and says where the input ends
/// ([`Checker::end`]). The verdict, the error code and the offset are those
/// of [`crate::check()`] on the whole message.
///
/// ```
/// use kiln_nostd::stream::{Checker, Need};
/// use kiln_nostd::{CompiledType, Options};
///
/// let ty = CompiledType::<8>::parse("struct{id:u8,name:str,}").unwrap();
/// let message = [7, 2, 0, 0, 0, b'h', b'i'];
/// let mut scratch = [0u8; 16];
/// let mut checker = Checker::new(&ty, Options::BARE, &mut scratch);
/// // One byte at a time, as a UART gives them.
/// for byte in message {
///     assert!(matches!(checker.need().unwrap(), Need::Bytes { .. }));
///     checker.feed(&[byte]).unwrap();
/// }
/// assert_eq!(checker.need().unwrap(), Need::End); // a byte more is TRAILING
/// checker.end().unwrap();
/// assert_eq!(checker.need().unwrap(), Need::Done);
/// ```
///
/// `DEPTH` is how many nested containers the checker can follow: its
/// state holds one frame per open container, so the format's 64 (the
/// default, [`MAX_DEPTH`]) cost about 3.4 KB. A receiver whose messages
/// nest only a few deep takes a smaller one ([`Checker::with_depth`]):
/// every message that stays within `DEPTH` gets the verdict of the
/// whole-buffer check, and one that goes deeper is refused
/// ([`Refusal::Capacity`], with the depth it reached and `DEPTH` as its
/// [`Detail::Cap`]), never given a verdict. A `DEPTH` above 64 follows 64:
/// the 65th container is the wire fault DEPTH, as everywhere.
pub struct Checker<'c, 't, 's, const N: usize, const DEPTH: usize = { MAX_DEPTH as usize }> {
    ty: &'c CompiledType<'t, N>,
    options: Options,
    scratch: &'s mut [u8],
    /// Keep every byte outside the payload regions (the record image).
    keep: bool,
    len: Option<u64>,
    started: bool,
    /// Absolute offset of the next byte to arrive.
    pos: u64,
    /// Scratch bytes held below the need being served.
    top: usize,
    cur: Cur,
    state: State,
    stack: [Frame; DEPTH],
    depth: usize,
    /// The claim of the string or byte run being read.
    run: Option<Claim>,
    /// Where the run being read started in scratch, and the bytes of a
    /// character split across pieces carried there.
    run_base: usize,
    carry: usize,
    block: Option<Block>,
    blocks: u32,
    first: [u8; 4],
    report: Report,
    /// When measuring ([`Checker::measuring`]): the whole message, which
    /// the rules read in place of scratch, which is never refused.
    measure: Option<&'s [u8]>,
}

/// A [`Checker`] set aside by [`Checker::pause`]: its state without the
/// type and the scratch it borrows.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct Paused<const DEPTH: usize = { MAX_DEPTH as usize }> {
    type_hash: u64,
    scratch_len: usize,
    options: Options,
    keep: bool,
    len: Option<u64>,
    started: bool,
    pos: u64,
    top: usize,
    cur: Cur,
    state: State,
    stack: [Frame; DEPTH],
    depth: usize,
    run: Option<Claim>,
    run_base: usize,
    carry: usize,
    block: Option<Block>,
    blocks: u32,
    first: [u8; 4],
    report: Report,
}

impl<const DEPTH: usize> Paused<DEPTH> {
    /// The checker again, over `ty` and `scratch`: the type it was paused
    /// with (same schema hash) and a scratch of the same length holding
    /// the bytes it held. Another type or scratch length is refused
    /// ([`Refusal::WrongValue`]); a scratch whose bytes changed gives a
    /// verdict about those bytes, not the message's.
    pub fn resume<'c, 't, 's, const N: usize>(
        self,
        ty: &'c CompiledType<'t, N>,
        scratch: &'s mut [u8],
    ) -> Result<Checker<'c, 't, 's, N, DEPTH>> {
        if ty.hash() != self.type_hash || scratch.len() != self.scratch_len {
            return Err(Error::refused(
                Refusal::WrongValue,
                "resumed with another type or scratch than it was paused with",
            ));
        }
        Ok(Checker {
            ty,
            options: self.options,
            scratch,
            keep: self.keep,
            len: self.len,
            started: self.started,
            pos: self.pos,
            top: self.top,
            cur: self.cur,
            state: self.state,
            stack: self.stack,
            depth: self.depth,
            run: self.run,
            run_base: self.run_base,
            carry: self.carry,
            block: self.block,
            blocks: self.blocks,
            first: self.first,
            report: self.report,
            measure: None,
        })
    }
}

impl<'c, 't, 's, const N: usize> Checker<'c, 't, 's, N> {
    /// A checker of one value of type `ty` (framed or bare, under the caps
    /// in `options`) whose length is not known in advance: a stream that
    /// ends where the value should.
    pub fn new(ty: &'c CompiledType<'t, N>, options: Options, scratch: &'s mut [u8]) -> Self {
        Checker::start(ty, options, scratch, None)
    }

    /// A checker of a message of exactly `len` bytes (a file, a buffer, an
    /// HTTP resource, an enveloped frame): every claim is checked when it
    /// is read, bytes past `len` are never asked for, and [`Need::End`]
    /// never comes.
    pub fn with_len(
        ty: &'c CompiledType<'t, N>,
        options: Options,
        scratch: &'s mut [u8],
        len: u64,
    ) -> Self {
        Checker::start(ty, options, scratch, Some(len))
    }

    /// [`Checker::new`] (`len` `None`) or [`Checker::with_len`], following
    /// at most `D` nested containers: a message nested deeper is refused
    /// ([`Refusal::Capacity`]), and the state is `D` frames instead of 64.
    ///
    /// ```
    /// use kiln_nostd::stream::{Checker, Need};
    /// use kiln_nostd::{CompiledType, Options, Refusal};
    ///
    /// let ty = CompiledType::<8>::parse("opt<opt<u8>>").unwrap();
    /// let mut scratch = [0u8; 16];
    /// // An absent outer opt is one container: followed ...
    /// let mut one = Checker::with_depth::<1>(&ty, Options::BARE, &mut scratch, Some(1));
    /// one.feed(&[0]).unwrap();
    /// assert_eq!(one.need().unwrap(), Need::Done);
    /// // ... a present one opens the second: refused, not judged.
    /// let mut one = Checker::with_depth::<1>(&ty, Options::BARE, &mut scratch, Some(2));
    /// let refused = one.feed(&[1, 0]).unwrap_err();
    /// assert_eq!(refused.refusal(), Some(Refusal::Capacity));
    /// // Two follow both.
    /// let mut two = Checker::with_depth::<2>(&ty, Options::BARE, &mut scratch, Some(3));
    /// two.feed(&[1, 1, 7]).unwrap();
    /// assert_eq!(two.need().unwrap(), Need::Done);
    /// ```
    pub fn with_depth<const D: usize>(
        ty: &'c CompiledType<'t, N>,
        options: Options,
        scratch: &'s mut [u8],
        len: Option<u64>,
    ) -> Checker<'c, 't, 's, N, D> {
        Checker::start(ty, options, scratch, len)
    }
}

impl<'c, 't, 's, const N: usize, const DEPTH: usize> Checker<'c, 't, 's, N, DEPTH> {
    fn start(
        ty: &'c CompiledType<'t, N>,
        options: Options,
        scratch: &'s mut [u8],
        len: Option<u64>,
    ) -> Self {
        Checker {
            ty,
            options,
            scratch,
            keep: false,
            len,
            started: false,
            pos: 0,
            top: 0,
            cur: Cur {
                at: 0,
                len: 0,
                filled: 0,
                want: Want::Frame,
                short: false,
            },
            state: State::Running,
            stack: [Frame::Opt { element: 0 }; DEPTH],
            depth: 0,
            run: None,
            run_base: 0,
            carry: 0,
            block: None,
            blocks: 0,
            first: [0; 4],
            report: Report {
                read: 0,
                payload: 0,
                requests: 0,
                scratch_needed: 0,
            },
            measure: None,
        }
    }

    /// Keeps the message's bytes outside the payload regions in scratch, in
    /// order, each `tensors` block replaced by the empty directory (its 64
    /// header bytes): once [`Need::Done`], [`Checker::into_image`] is one
    /// valid message of the same type, for a typed decoder to read the
    /// record from. The scratch must then hold all of it.
    #[doc(hidden)]
    pub fn keeping_record(mut self) -> Self {
        self.keep = true;
        self
    }

    /// Measures instead of checking into scratch: the rules read the bytes
    /// of `message` (the whole message, given to [`Checker::feed`] too)
    /// where they would read scratch, and a scratch too small is never
    /// refused, so [`Report::scratch_needed`] ends as the most this message
    /// needs. Pieces are as large as a roomy scratch makes them, which
    /// changes no figure: each need's least scratch is required before its
    /// piece is sized.
    pub(crate) fn measuring(mut self, message: &'s [u8]) -> Self {
        self.measure = Some(message);
        self
    }

    /// `len` held bytes: from `from` in scratch, or, when measuring, the
    /// message's bytes from `at` that scratch would hold there.
    fn held(&self, from: usize, at: u64, len: usize) -> &[u8] {
        match self.measure {
            Some(message) => usize::try_from(at)
                .ok()
                .and_then(|at| message.get(at..at.saturating_add(len)))
                .unwrap_or(&[]),
            None => self
                .scratch
                .get(from..from.saturating_add(len))
                .unwrap_or(&[]),
        }
    }

    /// Scratch bytes free above those held (without limit when measuring).
    fn free(&self) -> u64 {
        match self.measure {
            Some(_) => u64::MAX,
            None => self.scratch.len().saturating_sub(self.top) as u64,
        }
    }

    fn ensure_started(&mut self) {
        if self.started {
            if let (State::Running, Want::Head) = (self.state, self.cur.want) {
                let outcome = self.payload_step();
                self.settle(outcome);
            }
            return;
        }
        self.started = true;
        let begun = if self.options.is_framed() {
            self.want(frame::FRAME_LEN as u64, Want::Frame)
        } else {
            self.advance(Some(0))
        };
        self.settle(begun);
    }

    /// What the checker needs next, or the fault it found (the same fault
    /// on every later call).
    pub fn need(&mut self) -> Result<Need> {
        self.ensure_started();
        match self.state {
            State::Failed(e) => Err(e),
            State::Done => Ok(Need::Done),
            State::AfterValue | State::Draining(_) => Ok(Need::End),
            State::Running => {
                let at = self.pos;
                let left = self.cur.len.saturating_sub(self.cur.filled);
                Ok(match self.cur.want {
                    Want::Skip(i) => Need::Payload {
                        at,
                        len: left,
                        part: self.part(i, at),
                    },
                    want => Need::Bytes {
                        at,
                        len: usize::try_from(left).unwrap_or(usize::MAX),
                        payload: match want {
                            Want::Bits(i) => Some(self.part(i, at)),
                            _ => None,
                        },
                    },
                })
            }
        }
    }

    /// What the check has read and skipped so far, and the scratch this
    /// message needs.
    pub fn report(&self) -> Report {
        self.report
    }

    /// Absolute offset of the next byte the checker expects.
    #[doc(hidden)]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Gives the next bytes of the message, in order, any number: they may
    /// complete several needs, and payload bytes among them count as
    /// skipped. Returns how many were taken: all of them, unless the check
    /// ended first ([`Need::Done`]). A byte after the value is TRAILING.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<usize> {
        self.ensure_started();
        let mut taken = 0usize;
        while let Some(rest) = bytes.get(taken..).filter(|r| !r.is_empty()) {
            match self.state {
                State::Failed(e) => return Err(e),
                State::Done => break,
                State::AfterValue => {
                    self.note_first(rest);
                    let e = trailing_fault(0).shifted_u64(self.pos);
                    self.fail(e);
                }
                State::Draining(_) => {
                    self.note_first(rest);
                    self.pos = self.pos.saturating_add(rest.len() as u64);
                    taken = bytes.len();
                }
                State::Running if self.cur.want == Want::Head => self.ensure_started(),
                State::Running => {
                    let left = self.cur.len.saturating_sub(self.cur.filled);
                    let step = usize::try_from(left).map_or(rest.len(), |l| l.min(rest.len()));
                    let piece = rest.get(..step).unwrap_or(&[]);
                    if !matches!(self.cur.want, Want::Skip(_)) && self.measure.is_none() {
                        let from = self.fill_at();
                        if let Some(slot) = self.scratch.get_mut(from..from.saturating_add(step)) {
                            slot.copy_from_slice(piece);
                        }
                    }
                    taken = taken.saturating_add(step);
                    self.took(step);
                }
            }
        }
        match self.state {
            State::Failed(e) => Err(e),
            _ => Ok(taken),
        }
    }

    /// Where the caller may write the next bytes: the rest of a
    /// [`Need::Bytes`]; for a [`Need::Payload`] or [`Need::End`], the free
    /// scratch, through which a streaming caller passes those bytes. Then
    /// call [`Checker::filled`] with how many it wrote.
    pub fn unfilled(&mut self) -> &mut [u8] {
        self.ensure_started();
        let free = self.scratch.len().saturating_sub(self.top);
        let left =
            usize::try_from(self.cur.len.saturating_sub(self.cur.filled)).unwrap_or(usize::MAX);
        let (from, len) = match (self.state, self.cur.want) {
            (State::Running, Want::Skip(_)) => (self.top, left.min(free)),
            (State::Running, _) => (self.fill_at(), left),
            (State::AfterValue | State::Draining(_), _) => (self.top, free),
            _ => (self.top, 0),
        };
        self.scratch
            .get_mut(from..from.saturating_add(len))
            .unwrap_or_default()
    }

    /// `count` bytes were written into [`Checker::unfilled`] (at most its
    /// length). Payload bytes count as skipped.
    pub fn filled(&mut self, count: usize) -> Result<()> {
        self.ensure_started();
        if count > 0 {
            match self.state {
                State::AfterValue | State::Draining(_) => {
                    let mut first = [0u8; 4];
                    let n = count.min(4);
                    if let (Some(dst), Some(src)) = (
                        first.get_mut(..n),
                        self.scratch.get(self.top..self.top.saturating_add(n)),
                    ) {
                        dst.copy_from_slice(src);
                    }
                    self.note_first(first.get(..n).unwrap_or(&[]));
                    if let State::AfterValue = self.state {
                        let e = trailing_fault(0).shifted_u64(self.pos);
                        self.fail(e);
                    } else {
                        self.pos = self.pos.saturating_add(count as u64);
                    }
                }
                State::Running => self.took(count),
                State::Done | State::Failed(_) => {}
            }
        }
        match self.state {
            State::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Skips `count` bytes of a [`Need::Payload`] (at most its length). A
    /// caller reading by ranges never fetches them.
    pub fn skip(&mut self, count: u64) -> Result<()> {
        self.ensure_started();
        match (self.state, self.cur.want) {
            (State::Failed(e), _) => Err(e),
            (State::Running, Want::Skip(_))
                if count <= self.cur.len.saturating_sub(self.cur.filled) =>
            {
                self.took_u64(count);
                match self.state {
                    State::Failed(e) => Err(e),
                    _ => Ok(()),
                }
            }
            _ => Err(Error::refused(
                Refusal::WrongValue,
                "skip outside a payload need, or past its end",
            )),
        }
    }

    /// The input ends after the bytes given so far. After the value: the
    /// check is done. Inside it: EOF, the fault the whole-buffer check reports
    /// for bytes that end there. After a fault: that fault, or the EOF of a
    /// count claimed before it that does not fit.
    pub fn end(&mut self) -> Result<()> {
        self.ensure_started();
        let end = self.pos;
        match self.state {
            State::Failed(e) => return Err(e),
            State::Done => return Ok(()),
            State::AfterValue => {
                self.state = State::Done;
                return Ok(());
            }
            State::Draining(e) => {
                let e = self.weigh(e, end);
                self.state = State::Failed(e);
            }
            State::Running => {
                let partial = self.fill_at().saturating_sub(self.top);
                let e = self.short_fault(self.held(self.top, self.cur.at, partial));
                let e = self.weigh(e, end);
                self.state = State::Failed(e);
            }
        }
        match self.state {
            State::Failed(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// A block head checked since the last call: which `tensors` value of
    /// the message it is (from 0) and its bytes (header, descriptors, name
    /// heap, padding), for a caller that stores the block to parse it in
    /// place later. Given once per block, before its payloads.
    pub fn take_head(&mut self) -> Option<(u32, &[u8])> {
        if !matches!((self.state, self.cur.want), (State::Running, Want::Head)) {
            return None;
        }
        let block = self.block?;
        let header = block.header?;
        Some((self.blocks, self.head_bytes(&block, &header)))
    }

    /// The path to the value being read, outermost step first: a struct's
    /// field, a list's element, a dict's entry per open container (an opt
    /// adds none). While [`Checker::take_head`] gives a block's head, the
    /// path of that `tensors` value: the [`crate::inspect::Path`] the walk
    /// of the same message gives it (`layers[2].w`).
    ///
    /// ```
    /// use kiln_nostd::stream::{Checker, Need, Step};
    /// use kiln_nostd::{CompiledType, Directory, Options};
    ///
    /// let ty = CompiledType::<8>::parse("struct{layers:list<tensors>,}").unwrap();
    /// let mut message = vec![2, 0, 0, 0];
    /// message.extend_from_slice(Directory::EMPTY.as_bytes());
    /// message.extend_from_slice(Directory::EMPTY.as_bytes());
    /// let mut scratch = [0u8; 256];
    /// let mut checker = Checker::with_len(&ty, Options::BARE, &mut scratch, message.len() as u64);
    /// let mut paths = Vec::new();
    /// while let Need::Bytes { at, len, .. } = checker.need().unwrap() {
    ///     checker.feed(&message[at as usize..at as usize + len]).unwrap();
    ///     if checker.take_head().is_some() {
    ///         let text = checker.path().map(|step| match step {
    ///             Step::Field(name) => format!(".{name}"),
    ///             Step::Index(i) => format!("[{i}]"),
    ///             Step::Key(key) => format!("[{key:?}]"),
    ///         });
    ///         paths.push(text.collect::<String>());
    ///     }
    /// }
    /// assert_eq!(checker.need().unwrap(), Need::Done);
    /// assert_eq!(paths, [".layers[0]", ".layers[1]"]);
    /// ```
    pub fn path(&self) -> impl Iterator<Item = Step<'_>> + '_ {
        let open = self.stack.get(..self.depth).unwrap_or(&[]);
        open.iter().filter_map(move |frame| match *frame {
            Frame::Struct { field, .. } => Some(Step::Field(
                self.ty.node_at(field).field_name().unwrap_or(""),
            )),
            Frame::List { left, walked, .. } => {
                Some(Step::Index(walked.saturating_sub(left).saturating_sub(1)))
            }
            Frame::Dict { key, .. } => {
                let bytes = key.map_or(&[][..], |(at, len)| self.held(at, at as u64, len));
                // A key is held once it passed the UTF-8 rule.
                Some(Step::Key(core::str::from_utf8(bytes).unwrap_or("")))
            }
            Frame::Opt { .. } => None,
        })
    }

    /// Sets the checker aside without its type and scratch, for a caller
    /// that cannot hold borrows between steps (a browser module whose
    /// reads come back in later calls): [`Paused::resume`] with the same
    /// type and the same scratch, its bytes untouched, goes on where it
    /// stopped.
    #[doc(hidden)]
    pub fn pause(self) -> Paused<DEPTH> {
        Paused {
            type_hash: self.ty.hash(),
            scratch_len: self.scratch.len(),
            options: self.options,
            keep: self.keep,
            len: self.len,
            started: self.started,
            pos: self.pos,
            top: self.top,
            cur: self.cur,
            state: self.state,
            stack: self.stack,
            depth: self.depth,
            run: self.run,
            run_base: self.run_base,
            carry: self.carry,
            block: self.block,
            blocks: self.blocks,
            first: self.first,
            report: self.report,
        }
    }

    /// The record image kept by [`Checker::keeping_record`], once
    /// [`Need::Done`]: the message's bytes outside its payload regions,
    /// each `tensors` block replaced by the empty directory. `None` before
    /// that, or without [`Checker::keeping_record`].
    #[doc(hidden)]
    pub fn into_image(self) -> Option<&'s [u8]> {
        if !self.keep || !matches!(self.state, State::Done) {
            return None;
        }
        let top = self.top;
        let scratch: &'s [u8] = self.scratch;
        scratch.get(..top)
    }

    // -- bytes arriving ------------------------------------------------------

    /// Where the next byte of the need being served goes in scratch.
    fn fill_at(&self) -> usize {
        self.top
            .saturating_add(usize::try_from(self.cur.filled).unwrap_or(usize::MAX))
    }

    /// `count` bytes of the need being served arrived (in scratch, unless
    /// payload bytes no rule reads).
    fn took(&mut self, count: usize) {
        if !matches!(self.cur.want, Want::Skip(_)) && self.pos < 4 {
            let from = self.fill_at();
            let mut first = [0u8; 4];
            let n = count.min(4);
            let src = self.held(from, self.pos, n);
            if let Some(dst) = first.get_mut(..src.len()) {
                dst.copy_from_slice(src);
            }
            self.note_first(first.get(..n).unwrap_or(&[]));
        }
        self.took_u64(count as u64);
    }

    fn took_u64(&mut self, count: u64) {
        let count = count.min(self.cur.len.saturating_sub(self.cur.filled));
        if matches!(self.cur.want, Want::Skip(_)) {
            self.report.payload = self.report.payload.saturating_add(count);
        } else {
            self.report.read = self.report.read.saturating_add(count);
        }
        self.cur.filled = self.cur.filled.saturating_add(count);
        self.pos = self.pos.saturating_add(count);
        self.settle(Ok(()));
    }

    /// Notes the message's first four bytes (`bytes` start at the current
    /// position): bare bytes that begin with the frame magic get the hint
    /// the whole-buffer check gives them.
    fn note_first(&mut self, bytes: &[u8]) {
        for (k, &b) in bytes.iter().enumerate() {
            let at = self.pos.saturating_add(k as u64);
            match usize::try_from(at).ok().and_then(|i| self.first.get_mut(i)) {
                Some(slot) => *slot = b,
                None => break,
            }
        }
    }

    // -- verdicts ------------------------------------------------------------

    /// Completes needs while the one being served is full (a need of zero
    /// bytes at once), then records a fault as the verdict.
    fn settle(&mut self, outcome: Result<()>) {
        let outcome = outcome.and_then(|()| {
            while matches!(self.state, State::Running)
                && self.cur.filled >= self.cur.len
                && self.cur.want != Want::Head
            {
                if self.cur.short {
                    let end = self.fill_at().saturating_sub(self.top);
                    return Err(self.short_fault(self.held(self.top, self.cur.at, end)));
                }
                self.complete()?;
            }
            Ok(())
        });
        if let Err(e) = outcome {
            self.fail(e);
        }
    }

    /// A fault: the verdict, or, when a claim read before it may not fit
    /// (the length not being known), a fault that waits for the input's
    /// end ([`Need::End`]).
    fn fail(&mut self, e: Error) {
        if matches!(self.state, State::Failed(_)) {
            return;
        }
        let waiting = self.len.is_none() && (self.claims().next().is_some() || self.block_open());
        self.state = if waiting {
            State::Draining(e)
        } else {
            State::Failed(self.hinted(e))
        };
    }

    fn hinted(&self, e: Error) -> Error {
        if !self.options.is_framed() && self.first == frame::FRAME_MAGIC {
            e.hint_framed()
        } else {
            e
        }
    }

    /// The claims read and not yet proven by the bytes that passed, in the
    /// order they were read.
    fn claims(&self) -> impl Iterator<Item = Claim> + '_ {
        let frames = self.stack.get(..self.depth).unwrap_or(&[]).iter();
        frames
            .filter_map(|f| match *f {
                Frame::List { claim, .. } | Frame::Dict { claim, .. } => Some(claim),
                _ => None,
            })
            .chain(self.run)
            .filter(move |c| c.base.saturating_add(c.needed) > self.pos)
    }

    /// Whether the open block's extent (steps 5 and 6) is not yet proven.
    fn block_open(&self) -> bool {
        self.block
            .and_then(|b| Some((b, b.header?)))
            .is_some_and(|(b, h)| {
                let len = h.payload_base.saturating_add(h.payload_bytes);
                b.at.saturating_add(len) > self.pos
            })
    }

    /// The first fault when the input ends at `end`: a claim read before
    /// `e` that does not fit, or else `e`.
    fn weigh(&self, e: Error, end: u64) -> Error {
        for claim in self.claims() {
            if let Err(first) = claim.check(end) {
                return self.hinted(first);
            }
        }
        if let Some((block, header)) = self.block.and_then(|b| Some((b, b.header?))) {
            if let Err(first) = parse::check_extent(&header, end.saturating_sub(block.at)) {
                return self.hinted(first.shifted_u64(block.at));
            }
        }
        self.hinted(e)
    }

    /// The fault of the need being served when only `bytes` of it exist:
    /// what the whole-buffer check reports for bytes that end there, from
    /// the same rule run on those bytes.
    fn short_fault(&self, bytes: &[u8]) -> Error {
        let limits = self.options.limits;
        let fault = match self.cur.want {
            Want::Frame => frame::open(bytes, self.ty.hash()).err(),
            Want::Scalar(s) => ScalarValue::check(s, &mut Reader::new(bytes, limits)).err(),
            Want::OptTag => read_opt(&mut Reader::new(bytes, limits), |_, _, _| Ok(())).err(),
            Want::Word(_) => Reader::new(bytes, limits).u32(COUNT_WORD).err(),
            Want::DirHeader => parse::check_header_fields(bytes, limits).err(),
            _ => None,
        };
        // Every other need lies inside a claim, which `weigh` finds does
        // not fit.
        fault
            .unwrap_or(Error::wire(
                crate::Code::Eof,
                "input ends inside a claimed region",
                0,
            ))
            .shifted_u64(self.cur.at)
    }

    // -- needs ---------------------------------------------------------------

    /// Asks for `len` bytes for `want`, after checking that scratch can
    /// hold them.
    fn want(&mut self, len: u64, want: Want) -> Result<()> {
        self.ask(len, want, None)
    }

    /// Asks for a piece of `len` bytes of a run, gap or bit part that the
    /// caller sized to the free scratch, having checked the least scratch
    /// it needs ([`Checker::require`]).
    fn want_piece(&mut self, len: u64, want: Want) -> Result<()> {
        self.ask(len, want, Some(()))
    }

    fn ask(&mut self, len: u64, want: Want, sized: Option<()>) -> Result<()> {
        self.cur = Cur {
            at: self.pos,
            len,
            filled: 0,
            want,
            short: false,
        };
        if let Some(total) = self.len {
            let available = total.saturating_sub(self.pos);
            if len > available {
                match want {
                    // Their faults depend on the bytes that exist.
                    Want::Frame | Want::DirHeader => {
                        self.cur.len = available;
                        self.cur.short = true;
                    }
                    _ => {
                        let n =
                            usize::try_from(available).map_or(ZEROS.len(), |a| a.min(ZEROS.len()));
                        return Err(self.short_fault(ZEROS.get(..n).unwrap_or(&[])));
                    }
                }
            }
        }
        let holds = !matches!(want, Want::Skip(_));
        let len = usize::try_from(self.cur.len).unwrap_or(usize::MAX);
        let needed = if holds {
            self.top.saturating_add(len)
        } else {
            // Payload bytes pass through a streaming caller's free scratch.
            self.top.saturating_add(usize::from(len > 0))
        };
        if sized.is_none() {
            self.require(needed)?;
        }
        if holds && len > 0 {
            self.report.requests = self.report.requests.saturating_add(1);
        }
        Ok(())
    }

    /// Refuses a scratch smaller than `needed` bytes, and notes the most
    /// this message needs.
    fn require(&mut self, needed: usize) -> Result<()> {
        self.report.scratch_needed = self.report.scratch_needed.max(needed);
        if needed > self.scratch.len() && self.measure.is_none() {
            // Later needs may be larger: the figure is a lower bound.
            return Err(Error::refused(
                Refusal::Capacity,
                "scratch too small: the message needs at least the first figure",
            )
            .at(0)
            .shifted_u64(self.pos)
            .with_detail(Detail::Cap {
                claimed: needed as u64,
                cap: self.scratch.len() as u64,
            }));
        }
        Ok(())
    }

    /// Asks for the next piece of a run with `left` bytes to go.
    fn want_run(&mut self, run: Run, left: u64) -> Result<()> {
        if left == 0 {
            return self.run_done();
        }
        if !self.keep {
            // A string needs room for a character split across two pieces
            // (up to 3 bytes carried, and one more); other runs one byte.
            let room = match run {
                Run::Str => left.saturating_add(self.carry as u64).min(4) as usize,
                Run::Bytes => 1,
            };
            self.require(self.run_base.saturating_add(room))?;
        }
        let piece = if self.keep {
            left
        } else {
            left.min(self.free())
        };
        if self.keep {
            self.require(
                self.top
                    .saturating_add(usize::try_from(left).unwrap_or(usize::MAX)),
            )?;
        }
        self.want_piece(
            piece,
            Want::Run {
                run,
                left: left.saturating_sub(piece),
            },
        )
    }

    fn run_done(&mut self) -> Result<()> {
        self.carry = 0;
        if !self.keep {
            self.top = self.run_base;
        }
        self.run = None;
        self.advance(None)
    }

    /// Drops the `len` bytes just served, unless the record image keeps
    /// them.
    fn release(&mut self, len: usize) {
        if self.keep {
            self.top = self.top.saturating_add(len);
        }
    }

    // -- the walk ------------------------------------------------------------

    /// Begins value `next` (if any), then continues the walk until a need
    /// is set: the next field, element or pair, or the end of the value.
    fn advance(&mut self, mut next: Option<u16>) -> Result<()> {
        loop {
            if let Some(index) = next.take() {
                if self.begin(index)? {
                    return Ok(());
                }
            }
            let Some(top) = self.depth.checked_sub(1) else {
                return self.value_end();
            };
            let Some(frame) = self.stack.get_mut(top) else {
                return self.value_end();
            };
            match frame {
                Frame::Struct {
                    field,
                    next: after,
                    end,
                } if *after < *end => {
                    let index = *after;
                    *field = index;
                    *after = self.ty.node_at(index).subtree_end();
                    next = Some(index);
                }
                Frame::List { element, left, .. } if *left > 0 => {
                    *left -= 1;
                    next = Some(*element);
                }
                Frame::Dict { left, .. } if *left > 0 => {
                    *left -= 1;
                    return self.want(4, Want::Word(Word::Key));
                }
                Frame::Dict { key, .. } => {
                    if let (Some((start, len)), false) = (*key, self.keep) {
                        // When measuring, the key is the one thing held
                        // above the dict's place.
                        self.top = match self.measure {
                            Some(_) => self.top.saturating_sub(len),
                            None => start,
                        };
                    }
                    self.depth = top;
                }
                _ => self.depth = top,
            }
        }
    }

    /// Begins a value of node `index`; `true` when it set a need.
    fn begin(&mut self, index: u16) -> Result<bool> {
        let node = self.ty.node_at(index);
        let inner = index.saturating_add(1);
        match node.kind() {
            NodeKind::Scalar(s) => self.want(s.width(), Want::Scalar(s))?,
            NodeKind::Str => self.want(4, Want::Word(Word::Str))?,
            NodeKind::Tensors => {
                self.block = Some(Block {
                    at: self.pos,
                    scratch_at: self.top,
                    header: None,
                    fault: None,
                    reach: Reach::All,
                    held: None,
                    tensor: 0,
                });
                self.want(64, Want::DirHeader)?;
            }
            NodeKind::List => {
                self.enter(Frame::List {
                    element: inner,
                    left: 0,
                    walked: 0,
                    claim: Claim::NONE,
                })?;
                let word = if node.is_bytes() {
                    Word::Bytes
                } else {
                    Word::List
                };
                self.want(4, Want::Word(word))?;
            }
            NodeKind::Opt => {
                self.enter(Frame::Opt { element: inner })?;
                self.want(1, Want::OptTag)?;
            }
            NodeKind::Dict => {
                self.enter(Frame::Dict {
                    value: inner,
                    left: 0,
                    claim: Claim::NONE,
                    key: None,
                })?;
                self.want(4, Want::Word(Word::Dict))?;
            }
            NodeKind::Struct => {
                self.enter(Frame::Struct {
                    field: inner,
                    next: inner,
                    end: node.subtree_end(),
                })?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Enters a container: the 65th nested one is DEPTH, before any of its
    /// bytes is read; one past the checker's own `DEPTH` (when smaller) is
    /// refused, as the state has no room for it.
    fn enter(&mut self, frame: Frame) -> Result<()> {
        if self.depth >= usize::from(MAX_DEPTH) {
            return Err(depth_fault(0).shifted_u64(self.pos));
        }
        match self.stack.get_mut(self.depth) {
            Some(slot) => {
                *slot = frame;
                self.depth += 1;
                Ok(())
            }
            None => Err(Error::refused(
                Refusal::Capacity,
                "nested deeper than the checker's depth",
            )
            .at(0)
            .shifted_u64(self.pos)
            .with_detail(Detail::Cap {
                claimed: self.depth as u64 + 1,
                cap: DEPTH as u64,
            })),
        }
    }

    /// The whole value has passed.
    fn value_end(&mut self) -> Result<()> {
        match self.len {
            Some(total) if self.pos < total => Err(trailing_fault(0).shifted_u64(self.pos)),
            Some(_) => {
                self.state = State::Done;
                Ok(())
            }
            None => {
                self.state = State::AfterValue;
                Ok(())
            }
        }
    }

    /// The innermost open container.
    fn frame_mut(&mut self) -> Option<&mut Frame> {
        self.stack.get_mut(self.depth.checked_sub(1)?)
    }

    /// The need being served is full: run its rules and ask for the next.
    fn complete(&mut self) -> Result<()> {
        let at = self.cur.at;
        let len = usize::try_from(self.cur.len).unwrap_or(usize::MAX);
        let from = self.top;
        let end = from.saturating_add(len);
        let limits = self.options.limits;
        match self.cur.want {
            Want::Frame => {
                let bytes = self.held(from, at, len);
                frame::open(bytes, self.ty.hash())?;
                self.release(len);
                self.advance(Some(0))
            }
            Want::Scalar(s) => {
                let bytes = self.held(from, at, len);
                ScalarValue::check(s, &mut Reader::new(bytes, limits))
                    .map_err(|e| e.shifted_u64(at))?;
                self.release(len);
                self.advance(None)
            }
            Want::OptTag => {
                let bytes = self.held(from, at, len);
                let present =
                    read_opt(&mut Reader::new(bytes, limits), |_, _, present| Ok(present))
                        .map_err(|e| e.shifted_u64(at))?;
                self.release(len);
                let element = match self.frame_mut() {
                    Some(Frame::Opt { element }) => Some(*element),
                    _ => None,
                };
                self.advance(element.filter(|_| present))
            }
            Want::Word(word) => {
                let value = self
                    .held(from, at, 4)
                    .first_chunk::<4>()
                    .map_or(0, |b| u32::from_le_bytes(*b));
                self.release(len);
                self.word(word, value)
            }
            Want::Run { run, left } => {
                if run == Run::Str {
                    let region_start = from.saturating_sub(self.carry);
                    let region_at = at.saturating_sub(self.carry as u64);
                    let region =
                        self.held(region_start, region_at, end.saturating_sub(region_start));
                    let carry = utf8_piece(region, region_at, left == 0)?;
                    if self.keep {
                        self.top = end;
                    } else {
                        if self.measure.is_none() {
                            self.scratch
                                .copy_within(end.saturating_sub(carry)..end, self.run_base);
                        }
                        self.top = self.run_base.saturating_add(carry);
                    }
                    self.carry = carry;
                } else {
                    self.release(len);
                }
                self.want_run(run, left)
            }
            Want::Key => self.key(from, len),
            Want::DirHeader => {
                let bytes = self.held(from, at, len);
                let header =
                    parse::check_header_fields(bytes, limits).map_err(|e| e.shifted_u64(at))?;
                if let Some(block) = self.block.as_mut() {
                    block.header = Some(header);
                }
                let available = self.len.map_or(u64::MAX, |l| l.saturating_sub(at));
                parse::check_extent(&header, available).map_err(|e| e.shifted_u64(at))?;
                // The header stays: the rest of the head follows it.
                self.top = end;
                let head = usize::try_from(header.payload_base).unwrap_or(usize::MAX);
                self.require(
                    from.saturating_add(head)
                        .saturating_add(usize::from(header.payload_bytes > 0)),
                )?;
                self.want(header.payload_base.saturating_sub(64), Want::DirHead)
            }
            Want::DirHead => {
                self.top = end;
                let Some((mut block, header)) = self.block.and_then(|b| Some((b, b.header?)))
                else {
                    return Ok(());
                };
                let verdict = parse::check_head(self.head_bytes(&block, &header), &header);
                if let (Some(e), Reach::Nothing) = (verdict.fault, verdict.reach) {
                    return Err(e.shifted_u64(block.at));
                }
                block.fault = verdict.fault.map(|e| e.shifted_u64(block.at));
                block.reach = verdict.reach;
                self.block = Some(block);
                self.want(0, Want::Head)
            }
            Want::Gap(i) => {
                let bytes = self.held(from, at, len);
                parse::check_gap(bytes, i).map_err(|e| e.shifted_u64(at))?;
                self.payload_step()
            }
            Want::Bits(i) => {
                if let Some((block, header)) = self.block.and_then(|b| Some((b, b.header?))) {
                    let bytes = self.held(from, at, len);
                    let head = self.head_bytes(&block, &header);
                    if let Err(e) = parse::check_payload_part(head, &header, i, bytes) {
                        if let Some(block) = self.block.as_mut() {
                            block.held = Some(e.shifted_u64(at));
                        }
                    }
                }
                self.payload_step()
            }
            Want::Skip(_) | Want::Head => self.payload_step(),
        }
    }

    /// A count or length word `value` has arrived.
    fn word(&mut self, word: Word, value: u32) -> Result<()> {
        let at = self.cur.at;
        let base = at.saturating_add(4);
        let unread = self.len.map_or(u64::MAX, |l| l.saturating_sub(base));
        let limits = self.options.limits;
        let claim = |cap, min, over, what: u8| -> Result<Claim> {
            let beyond = BEYOND.get(usize::from(what)).copied().unwrap_or(STR_BEYOND);
            let needed = check_claim(value, cap, min, over, beyond, unread, 0)
                .map_err(|e| e.shifted_u64(at))?;
            Ok(Claim { base, needed, what })
        };
        match word {
            Word::Str | Word::Key => {
                self.run = Some(claim(limits.byte_cap, 1, OVER_BYTE_CAP, 0)?);
                self.run_base = self.top;
                self.carry = 0;
                if word == Word::Key {
                    self.want(u64::from(value), Want::Key)
                } else {
                    self.want_run(Run::Str, u64::from(value))
                }
            }
            Word::Bytes => {
                self.run = Some(claim(limits.byte_cap, 1, OVER_BYTE_CAP, 1)?);
                self.run_base = self.top;
                self.want_run(Run::Bytes, u64::from(value))
            }
            Word::List => {
                let Some(&mut Frame::List { element, .. }) = self.frame_mut() else {
                    return Ok(());
                };
                let node = self.ty.node_at(element);
                let checked = claim(limits.count_cap, node.min_size(), OVER_COUNT_CAP, 2)?;
                // Fixed-width numbers: one run of bytes, every pattern a
                // value. A zero-size element: walked once (it may still be
                // too deep), whatever the count.
                let (left, numbers) = match node.kind() {
                    NodeKind::Scalar(s) if s != Scalar::Bool => {
                        (0, Some(u64::from(value).saturating_mul(s.width())))
                    }
                    _ if node.is_zero_size() => (value.min(1), None),
                    _ => (value, None),
                };
                if let Some(Frame::List {
                    left: l,
                    walked,
                    claim: c,
                    ..
                }) = self.frame_mut()
                {
                    *l = left;
                    *walked = left;
                    *c = checked;
                }
                match numbers {
                    Some(len) => {
                        self.run_base = self.top;
                        self.want_run(Run::Bytes, len)
                    }
                    None => self.advance(None),
                }
            }
            Word::Dict => {
                let Some(&mut Frame::Dict { value: v, .. }) = self.frame_mut() else {
                    return Ok(());
                };
                let pair_min = self.ty.node_at(v).min_size().saturating_add(4);
                let checked = claim(limits.count_cap, pair_min, OVER_COUNT_CAP, 3)?;
                if let Some(Frame::Dict { left, claim: c, .. }) = self.frame_mut() {
                    *left = value;
                    *c = checked;
                }
                self.advance(None)
            }
        }
    }

    /// A whole dict key of `len` bytes is at `from` in scratch: UTF-8, then
    /// greater than the key before it, which it replaces.
    fn key(&mut self, from: usize, len: usize) -> Result<()> {
        let at = self.cur.at;
        let key_at = at.saturating_sub(4);
        let (value, previous) = match self.frame_mut() {
            Some(&mut Frame::Dict { value, key, .. }) => (value, key),
            _ => return Ok(()),
        };
        let bytes = self.held(from, at, len);
        utf8(bytes, 0).map_err(|e| e.shifted_u64(at))?;
        // Where the previous key is: in scratch, or, when measuring, in the
        // message (its scratch place being just below `from`).
        let before = previous.map(|(s, l)| self.held(s, s as u64, l));
        check_key_order(before, bytes, 0).map_err(|e| e.shifted_u64(key_at))?;
        let kept = match previous {
            Some((_, l)) if !self.keep && self.measure.is_some() => from.saturating_sub(l),
            Some((start, _)) if !self.keep => {
                self.scratch
                    .copy_within(from..from.saturating_add(len), start);
                start
            }
            _ => from,
        };
        self.top = kept.saturating_add(len);
        let place = match self.measure {
            Some(_) => usize::try_from(at).unwrap_or(usize::MAX),
            None => kept,
        };
        if let Some(Frame::Dict { key, .. }) = self.frame_mut() {
            *key = Some((place, len));
        }
        self.run = None;
        self.advance(Some(value))
    }

    // -- a tensors block's payload region ------------------------------------

    fn head_bytes(&self, block: &Block, header: &Header) -> &[u8] {
        let len = usize::try_from(header.payload_base).unwrap_or(usize::MAX);
        self.held(block.scratch_at, block.at, len)
    }

    /// The part of tensor `i` that absolute offset `at` is in.
    fn part(&self, i: u32, at: u64) -> Part {
        let (block_at, base, offset) = match self.block.and_then(|b| Some((b, b.header?))) {
            Some((b, h)) => {
                let (offset, ..) = parse::payload_of(self.head_bytes(&b, &h), &h, i);
                (b.at, h.payload_base, offset)
            }
            None => (0, 0, 0),
        };
        let block_offset = at.saturating_sub(block_at);
        Part {
            block: self.blocks,
            tensor: i,
            offset: block_offset.saturating_sub(base).saturating_sub(offset),
            block_offset,
        }
    }

    /// Asks for the next bytes of the payload region that the rules read
    /// (each gap, then each payload's bit part, as far as the head's
    /// verdict reaches), skipping the rest; then ends the block.
    fn payload_step(&mut self) -> Result<()> {
        let Some((block, header)) = self.block.and_then(|b| Some((b, b.header?))) else {
            return Ok(());
        };
        let cursor = self
            .pos
            .saturating_sub(block.at)
            .saturating_sub(header.payload_base);
        let (limit, bits) = match block.reach {
            Reach::Gaps(n) => (n, false),
            _ => (header.tensor_count, block.held.is_none()),
        };
        let mut tensor = block.tensor;
        while tensor < limit {
            let (offset, length, skip, read) =
                parse::payload_of(self.head_bytes(&block, &header), &header, tensor);
            let end = offset.saturating_add(length);
            let (bits_from, bits_to) = (
                offset.saturating_add(skip),
                offset.saturating_add(skip).saturating_add(read),
            );
            let next = if cursor < offset {
                Some((offset - cursor, Want::Gap(tensor)))
            } else if bits && read > 0 && cursor >= bits_from && cursor < bits_to {
                Some((bits_to - cursor, Want::Bits(tensor)))
            } else if cursor < end {
                let stop = if bits && read > 0 && cursor < bits_from {
                    bits_from
                } else {
                    end
                };
                Some((stop - cursor, Want::Skip(tensor)))
            } else {
                None
            };
            if let Some((len, want)) = next {
                if let Some(b) = self.block.as_mut() {
                    b.tensor = tensor;
                }
                if matches!(want, Want::Skip(_)) {
                    return self.want(len, want);
                }
                self.require(self.top.saturating_add(1))?;
                return self.want_piece(len.min(self.free()), want);
            }
            tensor += 1;
        }
        // The payload rules found nothing before the head's fault, or a
        // bit fault no gap fault comes before.
        if let Some(e) = block.held.or(block.fault) {
            return Err(e);
        }
        if self.keep {
            let empty = crate::Directory::EMPTY.as_bytes();
            let at = block.scratch_at;
            if let Some(slot) = self.scratch.get_mut(at..at.saturating_add(empty.len())) {
                slot.copy_from_slice(empty);
            }
            self.top = at.saturating_add(empty.len());
        } else {
            self.top = block.scratch_at;
        }
        self.block = None;
        self.blocks = self.blocks.saturating_add(1);
        self.advance(None)
    }
}
