//! Opening a Kiln file into the inspection model, reading only what the
//! rules read.
//!
//! [`KilnOpener`] is sans-I/O: it says which byte range it needs next
//! ([`KilnOpener::next_read`]), takes the bytes when the caller has them
//! ([`KilnOpener::give`]), and gives the [`Inspection`] once every rule passed
//! ([`KilnOpener::finish`]). It drives the incremental checker
//! ([`crate::stream::Checker`]), pausing it between reads, so a caller
//! that awaits each read (a browser's `fetch`, a `Blob` slice) holds no
//! borrow across the wait. Payload bytes no rule reads are skipped, never
//! asked for. [`open_bytes`] runs the same steps over bytes in memory.
//!
//! Reads are planned here, once for every caller: the first read takes
//! [`FIRST_READ`] bytes (a frame and a directory head of thousands of
//! tensors, in one request), later misses read ahead a window that grows
//! while the checker walks on in order (a file of many small tensors is a
//! few reads, not one per gap), and a miss past a skipped payload starts
//! small again.
//!
//! Memory: the checker's scratch holds the record image and the largest
//! directory head and grows (the check starts again) only when the
//! checker refuses it as too small, up to a cap ([`MAX_SCRATCH`] by
//! ranges, the file's length in memory); the heads are kept, and the last
//! read. A file's size does not enter: a 6 GiB file of 300 tensors opens
//! in well under a megabyte.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use super::known::Reading;
use super::{DirectoryFacts, FileFacts, Format, Inspection, KilnFacts, Path, Seg, TensorFacts};
use crate::directory::Directory;
use crate::error::{Error, Refusal, Result};
use crate::limits::Limits;
use crate::schema::{CompiledType, TOOL_NODES};
use crate::stream::{Checker, Need, Paused, ReadAt, Step};

/// The first read of a file opened by ranges: the frame and every head of
/// a file of thousands of tensors (a GGUF or safetensors head of a large
/// vocabulary, too) in one request.
#[doc(hidden)]
pub const FIRST_READ: u64 = 2 << 20;

/// The largest scratch a file opened by ranges may need: the record image
/// (every byte outside the payload regions) plus the largest directory
/// head. A file that needs more is refused ([`Refusal::Capacity`]).
#[doc(hidden)]
pub const MAX_SCRATCH: usize = 64 << 20;

/// The first scratch: enough for most files' images and heads.
const FIRST_SCRATCH: usize = 256 << 10;

/// A read ahead after a miss: small, since the miss may be one head
/// between large payloads.
const WINDOW: u64 = 64 << 10;

/// The largest read ahead, reached by doubling while the misses follow
/// each other.
const WINDOW_MAX: u64 = 16 << 20;

/// What an open read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Bytes read.
    pub bytes: u64,
    /// How many reads.
    pub requests: u64,
    /// Payload bytes the check skipped (never read).
    pub skipped: u64,
    /// The checker's scratch at the end, in bytes.
    pub scratch: usize,
}

/// A block's head as the checker gave it: where the block starts in the
/// file, the head's bytes, and the path of its `tensors` value.
struct Head {
    start: u64,
    bytes: Vec<u8>,
    path: Path,
}

/// Bytes the checker can be fed from: the last read, a whole buffer, or
/// a source read at once ([`ReadAt`]).
trait Source {
    /// `len` bytes at `at`, when held (`None`: to be read first).
    fn get(&mut self, at: u64, len: usize) -> Result<Option<&[u8]>>;
}

/// A whole file in memory.
struct Memory<'a>(&'a [u8]);

impl Source for Memory<'_> {
    fn get(&mut self, at: u64, len: usize) -> Result<Option<&[u8]>> {
        let bytes = usize::try_from(at)
            .ok()
            .and_then(|at| self.0.get(at..at.checked_add(len)?));
        Ok(bytes)
    }
}

/// A source read range by range as the checker names them, into one
/// buffer: nothing but those ranges is read.
struct Reads<'r> {
    reader: &'r mut dyn ReadAt,
    /// The first bytes, read to recognise the file: not read again.
    first: Vec<u8>,
    buf: Vec<u8>,
    stats: ReadStats,
}

impl Source for Reads<'_> {
    fn get(&mut self, at: u64, len: usize) -> Result<Option<&[u8]>> {
        if let Some(held) = usize::try_from(at)
            .ok()
            .and_then(|at| self.first.get(at..at.checked_add(len)?))
        {
            return Ok(Some(held));
        }
        self.buf.clear();
        self.buf.resize(len, 0);
        // Bytes of the first read at the start of this one are not read
        // again.
        let held = usize::try_from(at)
            .ok()
            .and_then(|at| self.first.get(at..))
            .unwrap_or_default();
        let held = held.len().min(len);
        let (front, rest) = self.buf.split_at_mut(held);
        front.copy_from_slice(
            self.first
                .get(self.first.len() - held..)
                .unwrap_or_default(),
        );
        if !rest.is_empty() {
            self.reader.read_at(at.saturating_add(held as u64), rest)?;
            self.stats.bytes = self.stats.bytes.saturating_add(rest.len() as u64);
            self.stats.requests = self.stats.requests.saturating_add(1);
        }
        Ok(Some(&self.buf))
    }
}

/// The bytes of the last reads, from `base`.
#[derive(Default)]
struct Window {
    base: u64,
    bytes: Vec<u8>,
}

impl Window {
    fn end(&self) -> u64 {
        self.base.saturating_add(self.bytes.len() as u64)
    }
}

impl Source for Window {
    fn get(&mut self, at: u64, len: usize) -> Result<Option<&[u8]>> {
        let held = at
            .checked_sub(self.base)
            .and_then(|from| usize::try_from(from).ok())
            .and_then(|from| self.bytes.get(from..from.checked_add(len)?));
        Ok(held)
    }
}

/// What one run of the checker ended with.
enum Stop {
    /// These bytes are needed and not held.
    Need(u64, usize),
    /// Every rule passed.
    Done,
}

/// Opens one Kiln file of a known length into the inspection model by
/// ranges, sans-I/O: it says which byte range it needs next
/// ([`KilnOpener::next_read`]), takes the bytes when the caller has them
/// ([`KilnOpener::give`]), and gives the model once every rule passed
/// ([`KilnOpener::finish`]), with the verdict, code and offset of
/// [`crate::check()`]. It drives the incremental checker, paused between
/// reads, so a caller that awaits each read holds no borrow across the
/// wait; payload bytes no rule reads are never asked for. Reads are
/// planned here, for every caller: the first takes 2 MiB (a frame and
/// the heads of a file of thousands of tensors in one request), later
/// misses read ahead a window that doubles while the checker walks on in
/// order, and a miss past a skipped payload reads 64 KiB.
///
/// ```
/// use kiln_nostd::inspect::{recognise, KilnOpener};
/// use kiln_nostd::Directory;
///
/// let file = Directory::EMPTY.as_bytes();
/// let reading = recognise(file, None, None, None).unwrap();
/// let mut opener = KilnOpener::new("empty.kiln", file.len() as u64, reading).unwrap();
/// while let Some(range) = opener.next_read().unwrap() {
///     let (at, end) = (range.start as usize, range.end as usize);
///     opener.give(range.start, &file[at..end]).unwrap(); // or after an await
/// }
/// let (model, stats) = opener.finish().unwrap();
/// assert_eq!((model.tensors.len(), stats.requests), (0, 1));
/// ```
pub struct KilnOpener {
    name: String,
    /// How to read the file; `None` until its first bytes say (see
    /// [`KilnOpener::recognising`]).
    reading: Option<Reading>,
    /// What the caller gave, for [`super::recognise`] on the first bytes.
    given: Given,
    len: u64,
    scratch: Vec<u8>,
    max_scratch: usize,
    paused: Option<Paused>,
    heads: Vec<Head>,
    window: Window,
    /// The read asked for and not yet given, and where the need it
    /// serves starts.
    asked: Option<(Range<u64>, u64)>,
    /// The next read ahead's length.
    ahead: u64,
    record: Option<Vec<u8>>,
    /// The type's schema hash, once the check ran.
    hash: u64,
    stats: ReadStats,
}

/// What a caller gave [`KilnOpener::recognising`].
#[derive(Clone, Debug, Default)]
struct Given {
    type_text: Option<String>,
    framed: Option<bool>,
    limits: Option<Limits>,
}

impl KilnOpener {
    /// An opener of the file `name` (what the model calls it), `len` bytes
    /// long, read as `reading` says ([`super::recognise`]).
    pub fn new(name: &str, len: u64, reading: Reading) -> Result<KilnOpener> {
        // The type is compiled once here so that bad type text is refused
        // before any read.
        compile(&reading.type_text)?;
        Ok(KilnOpener::start(
            name,
            len,
            Some(reading),
            Given::default(),
        ))
    }

    /// An opener that reads the file as its first bytes say, with what
    /// the caller gives (each `None` to let the bytes decide), the rule of
    /// [`super::recognise`]: the first read's bytes decide, so nothing is
    /// read twice. Type text given is compiled now, so bad text is refused
    /// before any read.
    pub fn recognising(
        name: &str,
        len: u64,
        type_text: Option<&str>,
        framed: Option<bool>,
        limits: Option<Limits>,
    ) -> Result<KilnOpener> {
        if let Some(text) = type_text {
            compile(text)?;
        }
        let given = Given {
            type_text: type_text.map(String::from),
            framed,
            limits,
        };
        let mut opener = KilnOpener::start(name, len, None, given);
        if len == 0 {
            opener.recognise(&[])?;
        }
        Ok(opener)
    }

    fn recognise(&mut self, first: &[u8]) -> Result<()> {
        let g = &self.given;
        // The type is the caller's (compiled when given) or one the
        // recognition names (known to compile).
        let reading = super::recognise(first, g.type_text.as_deref(), g.framed, g.limits)?;
        self.reading = Some(reading);
        Ok(())
    }

    /// How the file is read, once known.
    #[doc(hidden)]
    pub fn reading(&self) -> Option<&Reading> {
        self.reading.as_ref()
    }

    fn start(name: &str, len: u64, reading: Option<Reading>, given: Given) -> KilnOpener {
        KilnOpener {
            name: name.into(),
            reading,
            given,
            len,
            scratch: Vec::new(),
            max_scratch: MAX_SCRATCH,
            paused: None,
            heads: Vec::new(),
            window: Window::default(),
            asked: None,
            ahead: WINDOW,
            record: None,
            hash: 0,
            stats: ReadStats::default(),
        }
    }

    /// The range to read next (within the file), or `None` when the check
    /// is done: then [`KilnOpener::finish`]. The same range is asked again
    /// until it is given. A fault of the file is its wire code, at the
    /// offset the whole-file check gives.
    pub fn next_read(&mut self) -> Result<Option<Range<u64>>> {
        if let Some((asked, _)) = &self.asked {
            return Ok(Some(asked.clone()));
        }
        if self.record.is_some() {
            return Ok(None);
        }
        if self.reading.is_none() {
            let range = 0..FIRST_READ.min(self.len);
            self.asked = Some((range.clone(), 0));
            return Ok(Some(range));
        }
        let mut window = core::mem::take(&mut self.window);
        let stop = self.run(&mut window);
        self.window = window;
        match stop? {
            Stop::Done => Ok(None),
            Stop::Need(at, len) => {
                let range = self.plan(at, len);
                self.asked = Some((range.clone(), at));
                Ok(Some(range))
            }
        }
    }

    /// The bytes of the range [`KilnOpener::next_read`] asked for, read
    /// from `at`. Bytes of another range, or fewer or more than asked, are
    /// refused ([`Refusal::WrongValue`]): a read that returned short is
    /// the source's fault, not the file's.
    pub fn give(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let Some((asked, need_at)) = self.asked.clone() else {
            return Err(Error::refused(Refusal::WrongValue, "no read was asked for"));
        };
        if at != asked.start || bytes.len() as u64 != asked.end.saturating_sub(asked.start) {
            return Err(Error::refused(
                Refusal::WrongValue,
                "the bytes given are not the range asked for",
            ));
        }
        self.asked = None;
        if self.reading.is_none() {
            self.recognise(bytes)?;
        }
        self.stats.bytes = self.stats.bytes.saturating_add(bytes.len() as u64);
        self.stats.requests = self.stats.requests.saturating_add(1);
        // A read that continues the window is appended to it (the bytes
        // before the need it serves are dropped); any other replaces it.
        if at == self.window.end() && !self.window.bytes.is_empty() {
            let keep_from = need_at.saturating_sub(self.window.base);
            let keep_from = usize::try_from(keep_from)
                .map_or(self.window.bytes.len(), |k| k.min(self.window.bytes.len()));
            self.window.bytes.drain(..keep_from);
            self.window.base = self.window.base.saturating_add(keep_from as u64);
            self.window.bytes.extend_from_slice(bytes);
        } else {
            self.window = Window {
                base: at,
                bytes: bytes.to_vec(),
            };
        }
        Ok(())
    }

    /// The model, once [`KilnOpener::next_read`] said `None`, and what the
    /// open read. Its metadata is not read yet: [`Inspection::read_metadata`].
    pub fn finish(self) -> Result<(Inspection, ReadStats)> {
        let Some(record) = self.record else {
            return Err(Error::refused(
                Refusal::WrongValue,
                "finish before the check is done",
            ));
        };
        let reading = self.reading.ok_or_else(unknown_reading)?;
        let mut model = Inspection {
            name: self.name.clone(),
            format: Format::Kiln,
            files: vec![FileFacts {
                name: self.name,
                bytes: self.len,
            }],
            kiln: Some(KilnFacts {
                type_text: reading.type_text.clone(),
                framed: reading.framed,
                hash: self.hash,
                converted_from: reading.known.map(|k| k.converted_from),
            }),
            record,
            ..Inspection::default()
        };
        add_heads(&mut model, reading.limits, self.len, self.heads)?;
        Ok((model, self.stats))
    }

    /// Runs the checker (from where it paused) over `source` until it
    /// needs bytes `source` lacks, or is done.
    fn run(&mut self, source: &mut dyn Source) -> Result<Stop> {
        let reading = self.reading.as_ref().ok_or_else(unknown_reading)?;
        let ty = compile(&reading.type_text)?;
        self.hash = ty.hash();
        let options = reading.options();
        loop {
            if self.scratch.is_empty() {
                // A small file needs no more scratch than its length (and
                // a parked head's header).
                let size = usize::try_from(self.len.saturating_add(128))
                    .unwrap_or(usize::MAX)
                    .min(FIRST_SCRATCH)
                    .min(self.max_scratch);
                self.scratch = vec![0u8; size];
            }
            let scratch_len = self.scratch.len();
            let mut checker = match self.paused.take() {
                Some(paused) => paused.resume(&*ty, &mut self.scratch)?,
                None => {
                    Checker::with_len(&*ty, options, &mut self.scratch, self.len).keeping_record()
                }
            };
            match drive(&mut checker, source, &mut self.heads, &mut self.stats) {
                Ok(Stop::Need(at, len)) => {
                    self.paused = Some(checker.pause());
                    return Ok(Stop::Need(at, len));
                }
                Ok(Stop::Done) => {
                    self.stats.scratch = scratch_len;
                    let image = checker.into_image().map(<[u8]>::to_vec);
                    self.record = Some(
                        image
                            .ok_or_else(|| Error::refused(Refusal::Capacity, "no record image"))?,
                    );
                    return Ok(Stop::Done);
                }
                Err(e)
                    if e.refusal() == Some(Refusal::Capacity)
                        && self.scratch.len() < self.max_scratch =>
                {
                    // Start again with more room: the heads and the
                    // skipped bytes come again.
                    let size = self.scratch.len().saturating_mul(8).min(self.max_scratch);
                    self.scratch = vec![0u8; size];
                    self.heads.clear();
                    self.stats.skipped = 0;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Runs the check over a source that holds (or reads) every range.
    fn run_to_end(&mut self, source: &mut dyn Source) -> Result<()> {
        match self.run(source)? {
            Stop::Done => Ok(()),
            Stop::Need(..) => Err(Error::refused(
                Refusal::WrongValue,
                "the checker asked for bytes past the source",
            )),
        }
    }

    /// The read for a need of `len` bytes at `at`: at least the need, and
    /// ahead of it a window that doubles while the misses follow on.
    fn plan(&mut self, at: u64, len: usize) -> Range<u64> {
        let need_end = at.saturating_add(len as u64);
        let (start, ahead) = if self.stats.requests == 0 {
            (at, FIRST_READ)
        } else if at >= self.window.base && at <= self.window.end() {
            // The walk goes on past the last read: read on from its end.
            self.ahead = self.ahead.saturating_mul(2).min(WINDOW_MAX);
            (self.window.end(), self.ahead)
        } else {
            self.ahead = WINDOW;
            (at, WINDOW)
        };
        let end = need_end
            .max(start.saturating_add(ahead))
            .min(self.len)
            .max(need_end.min(self.len));
        start..end.max(start)
    }
}

/// Opens the Kiln file `bytes` (named `name`) into the inspection model:
/// [`KilnOpener`]'s steps, fed from memory, with no copy of the file.
/// Same verdict, code and offset as [`crate::check()`]. The metadata is
/// not read yet ([`Inspection::read_metadata`]).
pub fn open_bytes(name: &str, bytes: &[u8], reading: &Reading) -> Result<(Inspection, ReadStats)> {
    let mut opener = KilnOpener::new(name, bytes.len() as u64, reading.clone())?;
    // In memory the record image may be as large as the file.
    opener.max_scratch = bytes.len().saturating_add(128).max(FIRST_SCRATCH);
    opener.run_to_end(&mut Memory(bytes))?;
    // Every byte the check did not skip was read, in one piece.
    opener.stats.bytes = (bytes.len() as u64).saturating_sub(opener.stats.skipped);
    opener.stats.requests = 1;
    opener.finish()
}

/// Opens the Kiln file in `reader` (named `name`), reading each range the
/// checker names as it names it, nothing more (a buffer another runtime
/// holds, where each read is a copy of just those bytes): the first 16
/// bytes, then the check's ranges. What the caller gives decides the
/// rest with the first bytes ([`super::recognise`]).
pub fn open_read_at(
    name: &str,
    reader: &mut dyn ReadAt,
    type_text: Option<&str>,
    framed: Option<bool>,
    limits: Option<Limits>,
) -> Result<(Inspection, ReadStats)> {
    let len = reader.size()?;
    let mut first = [0u8; crate::frame::FRAME_LEN];
    let first = first
        .get_mut(
            ..usize::try_from(len)
                .unwrap_or(usize::MAX)
                .min(crate::frame::FRAME_LEN),
        )
        .unwrap_or_default();
    reader.read_at(0, first)?;
    // The check compiles the type at once: no compile before it.
    let given = Given {
        type_text: type_text.map(String::from),
        framed,
        limits,
    };
    let mut opener = KilnOpener::start(name, len, None, given);
    opener.recognise(first)?;
    let mut source = Reads {
        first: first.to_vec(),
        reader,
        buf: Vec::new(),
        stats: ReadStats {
            bytes: first.len() as u64,
            requests: 1,
            ..ReadStats::default()
        },
    };
    opener.run_to_end(&mut source)?;
    opener.stats.bytes = source.stats.bytes;
    opener.stats.requests = source.stats.requests;
    opener.finish()
}

fn unknown_reading() -> Error {
    Error::refused(Refusal::WrongValue, "the file's first bytes were not given")
}

fn compile(text: &str) -> Result<Box<CompiledType<'_, TOOL_NODES>>> {
    CompiledType::parse(text).map(Box::new)
}

/// Feeds the checker from `source` until it needs bytes `source` lacks or
/// is done, keeping each head as the checker gives it.
fn drive<const N: usize>(
    checker: &mut Checker<'_, '_, '_, N>,
    source: &mut dyn Source,
    heads: &mut Vec<Head>,
    stats: &mut ReadStats,
) -> Result<Stop> {
    loop {
        match checker.need()? {
            Need::Done => return Ok(Stop::Done),
            // A known length never asks for the end; answer it anyway.
            Need::End => checker.end()?,
            Need::Payload { len, .. } => {
                checker.skip(len)?;
                stats.skipped = stats.skipped.saturating_add(len);
            }
            Need::Bytes { at, len, .. } => {
                let Some(bytes) = source.get(at, len)? else {
                    return Ok(Stop::Need(at, len));
                };
                checker.feed(bytes)?;
                let end = checker.position();
                if let Some((_, head)) = checker.take_head() {
                    let start = end.saturating_sub(head.len() as u64);
                    let bytes = head.to_vec();
                    let path = path_of(checker.path());
                    heads.push(Head { start, bytes, path });
                }
            }
        }
    }
}

/// The checker's steps as a [`Path`].
fn path_of<'a>(steps: impl Iterator<Item = Step<'a>>) -> Path {
    let mut path = Path::root();
    for step in steps {
        path.push(match step {
            Step::Field(name) => Seg::Field(name.into()),
            Step::Index(i) => Seg::Index(i),
            Step::Key(key) => Seg::Key(key.into()),
        });
    }
    path
}

/// The directories and tensors of the checked heads.
fn add_heads(model: &mut Inspection, limits: Limits, len: u64, heads: Vec<Head>) -> Result<()> {
    for Head { start, bytes, path } in heads {
        let (dir, payload_bytes) = Directory::of_checked_head(&bytes, limits)?;
        let head_len = dir.payload_offset() as u64;
        let payload_offset = start.saturating_add(head_len);
        let length = head_len.saturating_add(payload_bytes);
        if start.saturating_add(length) > len {
            return Err(Error::refused(
                Refusal::WrongValue,
                "a checked block lies past the end",
            ));
        }
        let index = model.directories.len();
        let first = model.tensors.len();
        model.tensors.extend(
            dir.iter()
                .map(|t| TensorFacts::of_view(index, payload_offset, &t)),
        );
        let names = model.tensors.get(first..).unwrap_or(&[]);
        let names_sorted = dir.has_names()
            && names.windows(2).all(|w| match w {
                [a, b] => {
                    matches!((&a.name, &b.name), (Some(x), Some(y)) if x.as_bytes() < y.as_bytes())
                }
                _ => true,
            });
        model.directories.push(DirectoryFacts {
            path: Some(path),
            file: 0,
            source: None,
            offset: start,
            length,
            payload_offset,
            first,
            count: dir.len(),
            named: dir.has_names(),
            names_sorted,
        });
    }
    Ok(())
}
