//! [`Model`]: a converted file opened once, every tensor of every
//! directory of every source file found by name in one call.

use kiln_nostd::{Directory, NameTable, TensorView};

use crate::error::{Error, Result};
use crate::message::{
    check_alignment, AlignedTensors, GgufMessage, MessageType, SafetensorsMessage, LIMITS,
};

/// The decoded message of a converted file.
#[derive(Clone, Debug)]
pub enum Message<'a> {
    /// Converted from safetensors.
    Safetensors(SafetensorsMessage<'a>),
    /// Converted from GGUF.
    Gguf(GgufMessage<'a>),
}

/// A converted Kiln file, checked once by [`Model::open`]: every rule of
/// the format, the alignment of every directory, and names unique across
/// all directories and files. Lookups by name ([`Model::tensor`]) go
/// through one hash table built at open, whatever order the names are in;
/// every payload is borrowed from the input and lies at a multiple of 64
/// bytes from its start, so a memory-mapped file's whole-byte tensors are
/// read in place ([`TensorView::as_slice`]).
///
/// ```
/// use kiln_convert::{convert, Format, Model};
///
/// let data = [0u8, 0, 128, 63, 0, 0, 0, 192];
/// let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &data).unwrap();
/// let original = safetensors::serialize([("w", view)], None).unwrap();
/// let mut kiln = Vec::new();
/// convert(Format::Safetensors, Format::Kiln, &original, &mut kiln).unwrap();
///
/// let model = Model::open(&kiln).unwrap();
/// let w = model.tensor("w").unwrap();
/// assert_eq!(w.byte_range().start % 64, 0);
/// assert_eq!(w.shape(), &[2]);
/// ```
#[derive(Clone, Debug)]
pub struct Model<'a> {
    message: Message<'a>,
    names: NameTable<'a>,
    /// For each directory of `names`, the index of its source file.
    file_of: Vec<u32>,
    files: Vec<&'a str>,
}

impl<'a> Model<'a> {
    /// Checks `input` as one framed conversion message (either type) and
    /// indexes its tensors by name.
    pub fn open(input: &'a [u8]) -> Result<Model<'a>> {
        let message = decode(input)?;
        let (names, file_of, files) = {
            let parts = parts(&message);
            let (names, file_of) = index(&parts)?;
            (names, file_of, parts.iter().map(|(f, _)| *f).collect())
        };
        Ok(Model {
            message,
            names,
            file_of,
            files,
        })
    }

    /// The tensor named `name`, in any directory of any file.
    #[inline]
    pub fn tensor(&self, name: &str) -> Option<TensorView<'a>> {
        self.names.get(name)
    }

    /// The tensor named `name` and the name of the source file that holds
    /// it (empty for a model that was one file).
    pub fn locate(&self, name: &str) -> Option<(&'a str, TensorView<'a>)> {
        let (dir, view) = self.names.located(name)?;
        let file = self.file_of.get(dir)?;
        Some((self.files.get(*file as usize).copied()?, view))
    }

    /// Every tensor, file by file, directory by directory: the source
    /// order of a GGUF file, name order within each safetensors file.
    pub fn tensors(&self) -> impl Iterator<Item = TensorView<'a>> + '_ {
        self.names.directories().iter().flat_map(Directory::iter)
    }

    /// How many tensors.
    pub fn len(&self) -> usize {
        self.names.directories().iter().map(Directory::len).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every directory, file by file.
    pub fn directories(&self) -> &[Directory<'a>] {
        self.names.directories()
    }

    /// The source files' names (one empty name for a model that was one
    /// file).
    pub fn files(&self) -> &[&'a str] {
        &self.files
    }

    /// Which message type the file holds.
    pub fn message_type(&self) -> MessageType {
        match self.message {
            Message::Safetensors(_) => MessageType::Safetensors,
            Message::Gguf(_) => MessageType::Gguf,
        }
    }

    /// The decoded message: metadata, files and directories.
    pub fn message(&self) -> &Message<'a> {
        &self.message
    }
}

/// The message of a converted file (either type), decoded and checked.
fn decode(input: &[u8]) -> Result<Message<'_>> {
    Ok(match MessageType::of(input)? {
        MessageType::Safetensors => Message::Safetensors(
            kiln_nostd::from_frame_with(input, LIMITS)
                .map_err(|e| Error::from_kiln(e, 0, "safetensors conversion message"))?,
        ),
        MessageType::Gguf => Message::Gguf(
            kiln_nostd::from_frame_with(input, LIMITS)
                .map_err(|e| Error::from_kiln(e, 0, "GGUF conversion message"))?,
        ),
    })
}

/// Each file of `message` with its directories.
fn parts<'m, 'a>(message: &'m Message<'a>) -> Vec<(&'a str, &'m [AlignedTensors<'a>])> {
    match message {
        Message::Safetensors(m) => m
            .files
            .iter()
            .map(|f| (f.file, f.directories.as_slice()))
            .collect(),
        Message::Gguf(m) => m
            .files
            .iter()
            .map(|f| (f.file, f.directories.as_slice()))
            .collect(),
    }
}

/// The decoded message of a converted file, with every check
/// [`Model::open`] makes and the same error for a file it refuses, but no
/// lookup table: for a reader that walks the tensors in order. Names that
/// run in strictly increasing byte order through every named directory,
/// as the safetensors converter writes them, are unique without one (a
/// comparison per directory); others get the table's check.
pub(crate) fn open_message(input: &[u8]) -> Result<Message<'_>> {
    let message = decode(input)?;
    let parts = parts(&message);
    for (file, aligned) in &parts {
        check_alignment(aligned, file)?;
    }
    let dirs = parts
        .iter()
        .flat_map(|(_, aligned)| aligned.iter().map(|d| &d.tensors));
    if !names_increase(dirs) {
        index(&parts)?;
    }
    Ok(message)
}

/// Whether the names of the named directories of `dirs` are in strictly
/// increasing byte order from the first to the last (and so unique), told
/// from each directory's own order and the names where two meet. `false`
/// says only that this did not show it. Past `u32::MAX - 1` directories
/// `false`, so that [`NameTable::new`] gives its refusal.
pub(crate) fn names_increase<'d, 'a: 'd>(dirs: impl Iterator<Item = &'d Directory<'a>>) -> bool {
    let mut last: Option<&str> = None;
    for (count, dir) in (1usize..).zip(dirs) {
        if count >= u32::MAX as usize {
            return false;
        }
        if !dir.has_names() {
            continue;
        }
        let name = |i: usize| dir.get(i).and_then(|t| t.name());
        let (Some(first), Some(end)) = (name(0), name(dir.len().wrapping_sub(1))) else {
            return false;
        };
        if !dir.names_sorted() || last.is_some_and(|last| last.as_bytes() >= first.as_bytes()) {
            return false;
        }
        last = Some(end);
    }
    true
}

/// Checks every directory's alignment and indexes all names, refusing one
/// that two tensors share.
fn index<'a>(files: &[(&'a str, &[AlignedTensors<'a>])]) -> Result<(NameTable<'a>, Vec<u32>)> {
    let mut dirs = Vec::new();
    let mut file_of = Vec::new();
    for (i, (file, aligned)) in (0u32..).zip(files) {
        check_alignment(aligned, file)?;
        for d in aligned.iter() {
            dirs.push(d.tensors.clone());
            file_of.push(i);
        }
    }
    let flat: Vec<Directory<'a>> = dirs;
    match NameTable::new(flat) {
        Ok(table) => Ok((table, file_of)),
        Err(repeat) => {
            let mut all = files
                .iter()
                .flat_map(|(f, aligned)| aligned.iter().map(move |d| (*f, d.tensors.clone())));
            let (file, dir) = all.nth(repeat.directory).unwrap_or_default();
            let name = dir.get(repeat.index).and_then(|v| v.name()).unwrap_or("?");
            let in_file = if file.is_empty() {
                String::new()
            } else {
                format!(" (file {file:?})")
            };
            Err(Error::kiln(
                Some(dir.offset() as u64),
                format!(
                    "conversion message: tensor name {name:?} appears twice (again in directory \
                     {}{in_file}); names are unique across a converted file",
                    repeat.directory
                ),
            ))
        }
    }
}
