//! One walk of a Kiln value in memory: its value tree (every node with its
//! absolute span) and the path and span of every `tensors` value. What
//! the model's metadata is read from (the record image).

use alloc::vec::Vec;

use super::Path;
use crate::directory::Directory;
use crate::error::Result;
use crate::frame::FRAME_LEN;
use crate::limits::Options;
use crate::schema::{CompiledType, Scalar};
use crate::value::{Builder, Value};
use crate::walk::{ScalarValue, Span, Visitor};

/// What one walk found.
pub(crate) struct Walked<'a> {
    /// The value, borrowed from the buffer, with absolute spans.
    pub(crate) value: Value<'a>,
    /// Every `tensors` value, in wire order: its path and its block's span.
    pub(crate) directories: Vec<(Path, Span)>,
}

/// Walks `buf` as one value of `ty` (framed or bare, as `options` say).
/// Same verdicts and codes as [`crate::check()`].
pub(crate) fn walk_value<'a, const N: usize>(
    ty: &CompiledType<'_, N>,
    buf: &'a [u8],
    options: Options,
) -> Result<Walked<'a>> {
    let mut collector = Collector {
        builder: Builder::starting_at(if options.is_framed() { FRAME_LEN } else { 0 }),
        directories: Vec::new(),
    };
    ty.walk(buf, options, &mut collector)?;
    Ok(Walked {
        value: collector.builder.finish()?,
        directories: collector.directories,
    })
}

/// The tree being built, and the directories so far.
struct Collector<'a> {
    builder: Builder<'a>,
    directories: Vec<(Path, Span)>,
}

impl<'de> Visitor<'de> for Collector<'de> {
    fn scalar(&mut self, at: usize, value: ScalarValue) -> Result<()> {
        self.builder.scalar(at, value)
    }
    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        self.builder.str(span, value)
    }
    fn bytes(&mut self, span: Span, value: &'de [u8]) -> Result<()> {
        self.builder.bytes(span, value)
    }
    fn begin_list(&mut self, at: usize, count: u32) -> Result<()> {
        self.builder.begin_list(at, count)
    }
    fn numbers(&mut self, scalar: Scalar, span: Span, bytes: &'de [u8]) -> Result<()> {
        self.builder.numbers(scalar, span, bytes)
    }
    fn repeat(&mut self, times: u32) -> Result<()> {
        self.builder.repeat(times)
    }
    fn end_list(&mut self) -> Result<()> {
        self.builder.end_list()
    }
    fn begin_opt(&mut self, at: usize, present: bool) -> Result<()> {
        self.builder.begin_opt(at, present)
    }
    fn end_opt(&mut self) -> Result<()> {
        self.builder.end_opt()
    }
    fn begin_dict(&mut self, at: usize, count: u32) -> Result<()> {
        self.builder.begin_dict(at, count)
    }
    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        self.builder.key(span, key)
    }
    fn end_dict(&mut self) -> Result<()> {
        self.builder.end_dict()
    }
    fn begin_struct(&mut self, at: usize, fields: usize) -> Result<()> {
        self.builder.begin_struct(at, fields)
    }
    fn field(&mut self, name: &str) -> Result<()> {
        self.builder.field(name)
    }
    fn end_struct(&mut self) -> Result<()> {
        self.builder.end_struct()
    }
    fn tensors(&mut self, dir: Directory<'de>) -> Result<()> {
        self.directories
            .push((self.builder.path(), dir.byte_range()));
        self.builder.tensors(dir)
    }
}
