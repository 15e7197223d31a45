//! `kiln convert IN OUT`: safetensors or GGUF to Kiln, and back.
//!
//! The formats come from the file extensions. The input is memory-mapped,
//! so a multi-gigabyte model is never read into memory; each payload goes
//! once from the map into the output file. The output is written to a
//! temporary file beside OUT and renamed over OUT only when the conversion
//! succeeded, so a failed run leaves no half-written OUT.

use std::cell::Cell;
use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use kiln_convert::{convert_with_len, Format, Summary};

use crate::common::{foreign_content, map_input, print, unknown_option, ArgWalk, Failure, Input};

pub const USAGE: &str =
    "usage: kiln convert [--quiet] IN OUT | kiln convert [--quiet] IN.kiln OUT/ --shards";

const HELP: &str = "\
Converts a model file between safetensors, GGUF and Kiln.

usage: kiln convert [--quiet] IN OUT
       kiln convert [--quiet] IN.kiln OUT/ --shards

The formats come from the extensions: .safetensors, .gguf, .kiln. One side
must be .kiln and the other .safetensors or .gguf. A .kiln file made from a
safetensors file converts back to .safetensors, one made from GGUF back to
.gguf; every tensor keeps its bytes, dtype and shape, and every metadata
pair its value and type. Every payload of a .kiln file lies at a multiple
of 64 bytes, so a memory map of it reads each tensor in place.

A sharded checkpoint converts to one .kiln file: give its index
(MODEL.safetensors.index.json, the shards beside it) or the first file of
a GGUF split set (MODEL-00001-of-00003.gguf, the others beside it).
--shards writes such a .kiln file back into the folder OUT/ as the
original files, byte for byte.

  --quiet    no progress bar and no summary line
  --shards   IN.kiln holds a sharded checkpoint or split set: write its
             files into the folder OUT/ (made if missing)

examples:
  kiln convert model.safetensors model.kiln
  kiln convert model.kiln model.safetensors
  kiln convert tinyllama-q4_k_m.gguf tinyllama.kiln
  kiln convert model.safetensors.index.json model.kiln
  kiln convert model.kiln out/ --shards

Exit status: 0 converted; 1 the input is not valid or cannot be converted
(one `error:` line says what, and at which byte); 2 usage or I/O error.";

/// What IN and OUT are.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Mode {
    /// One file to one file.
    File,
    /// IN names a set (a safetensors index, or a GGUF split set's first
    /// file): every file of it to one .kiln file.
    FromSet,
    /// IN.kiln to the files of its set, in the folder OUT.
    ToFolder,
}

/// A parsed `kiln convert` command line.
#[derive(Debug, PartialEq)]
pub(crate) struct ConvertArgs {
    input: PathBuf,
    output: PathBuf,
    from: Format,
    /// For [`Mode::ToFolder`], Kiln: the file says which format it holds.
    to: Format,
    mode: Mode,
    quiet: bool,
}

/// Whether `path` names a safetensors index.
fn is_index(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".index.json"))
}

/// The files of the GGUF split set whose first file is `path`.
fn split_set(path: &Path) -> Option<Vec<PathBuf>> {
    let name = path.file_name()?.to_str()?;
    let names = kiln_convert::gguf_split_names(name)?;
    Some(names.into_iter().map(|n| path.with_file_name(n)).collect())
}

#[derive(Debug, PartialEq)]
pub(crate) enum Request {
    Help,
    Convert(ConvertArgs),
}

fn format_of(path: &Path) -> Result<Format, String> {
    kiln_convert::format_of_path(path).ok_or_else(|| {
        format!(
            "cannot tell the format of '{}': use the extension .safetensors, .gguf or .kiln",
            path.display()
        )
    })
}

pub(crate) fn parse_args(args: &[String]) -> Result<Request, String> {
    let (mut quiet, mut shards) = (false, false);
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(Request::Help),
            "--quiet" | "-q" => quiet = true,
            "--shards" => shards = true,
            _ => return Err(unknown_option(flag)),
        }
    }
    let files: Vec<PathBuf> = walk.all().into_iter().map(PathBuf::from).collect();
    let [input, output] = <[PathBuf; 2]>::try_from(files)
        .map_err(|files| format!("expected IN and OUT, got {} file names", files.len()))?;
    if shards {
        if format_of(&input)? != Format::Kiln {
            return Err("--shards writes the files of a .kiln file: IN must be .kiln".into());
        }
        return Ok(Request::Convert(ConvertArgs {
            input,
            output,
            from: Format::Kiln,
            to: Format::Kiln,
            mode: Mode::ToFolder,
            quiet,
        }));
    }
    if is_index(&input) {
        if format_of(&output)? != Format::Kiln {
            return Err("a safetensors index converts to one .kiln file: OUT must be .kiln".into());
        }
        return Ok(Request::Convert(ConvertArgs {
            input,
            output,
            from: Format::Safetensors,
            to: Format::Kiln,
            mode: Mode::FromSet,
            quiet,
        }));
    }
    let (from, to) = (format_of(&input)?, format_of(&output)?);
    let mode = if from == Format::Gguf && split_set(&input).is_some() {
        Mode::FromSet
    } else {
        Mode::File
    };
    match (from, to) {
        (Format::Kiln, Format::Kiln) => {
            return Err("both files are .kiln: one side must be .safetensors or .gguf".into())
        }
        (Format::Kiln, _) | (_, Format::Kiln) => {}
        _ => {
            return Err(format!(
                "{} to {}: one side must be .kiln",
                from.title(),
                to.title()
            ))
        }
    }
    Ok(Request::Convert(ConvertArgs {
        input,
        output,
        from,
        to,
        mode,
        quiet,
    }))
}

/// Bytes the prefetcher maps in per step.
const PREFETCH_CHUNK: usize = 16 << 20;
/// How far the prefetcher may run ahead of the bytes written, so that a
/// file larger than memory is not read in all at once (and evicted again
/// before it is used).
const PREFETCH_AHEAD: u64 = 512 << 20;

/// Maps the input in ahead of the conversion: without it, the copy of
/// each payload into the output stops at every page to fault it in, and a
/// conversion takes about twice as long as `cp`. The first
/// [`PREFETCH_AHEAD`] bytes are mapped in before the conversion starts (so
/// a file up to that size is converted from a fully mapped input); the
/// rest on a second thread that stays at most that far ahead of the bytes
/// written. Does nothing where MADV_POPULATE_READ is missing (other
/// systems, Linux before 5.14): the conversion then just runs slower.
#[cfg(target_os = "linux")]
mod prefetch {
    use super::*;

    fn populate(map: &memmap2::Mmap, offset: usize, len: usize) -> bool {
        map.advise_range(memmap2::Advice::PopulateRead, offset, len)
            .is_ok()
    }

    /// Maps in the head of the input; returns where the rest starts, or
    /// `None` when there is nothing left to do.
    pub fn head(input: &Input) -> Option<usize> {
        let Input::Mapped(map) = input else {
            return None;
        };
        let head = map.len().min(PREFETCH_AHEAD as usize);
        (populate(map, 0, head) && head < map.len()).then_some(head)
    }

    /// Maps in the rest, from `offset`, until `done`.
    pub fn rest(input: &Input, mut offset: usize, written: &AtomicU64, done: &AtomicBool) {
        let Input::Mapped(map) = input else { return };
        let len = map.len();
        while offset < len && !done.load(Ordering::Relaxed) {
            let limit = written
                .load(Ordering::Relaxed)
                .saturating_add(PREFETCH_AHEAD);
            if offset as u64 >= limit {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            let step = PREFETCH_CHUNK.min(len - offset);
            if !populate(map, offset, step) {
                return;
            }
            offset += step;
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod prefetch {
    use super::*;

    pub fn head(_: &Input) -> Option<usize> {
        None
    }

    pub fn rest(_: &Input, _: usize, _: &AtomicU64, _: &AtomicBool) {}
}

/// The output file, written through a progress bar: counts the bytes
/// written (for the prefetcher) and has their disk space reserved first
/// ([`Reservation`]).
struct Output<'a, W> {
    inner: W,
    space: &'a Reservation<'a>,
    written: &'a AtomicU64,
}

impl<W: Write> Write for Output<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let at = self.written.load(Ordering::Relaxed);
        self.space.cover(at.saturating_add(buf.len() as u64));
        let n = self.inner.write(buf)?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The output file's reserved disk space ([`reserve`]): exactly its
/// length when the converter says it before writing
/// ([`kiln_convert::convert_with_len`]), else a guess at it, grown as the
/// writes pass it and given back past the end at the end
/// (in `finish_file`).
struct Reservation<'a> {
    file: &'a std::fs::File,
    /// The end of the reserved bytes; 0 before the first reservation,
    /// `u64::MAX` once one failed (the file is then written without).
    end: Cell<u64>,
    /// The first reservation when the length is not known.
    guess: u64,
}

impl<'a> Reservation<'a> {
    fn new(file: &'a std::fs::File, guess: u64) -> Self {
        Reservation {
            file,
            end: Cell::new(0),
            guess,
        }
    }

    /// Reserves the whole output, `len` bytes, before anything is written.
    fn exact(&self, len: u64) {
        if self.end.get() == 0 {
            self.reserve(len);
        }
    }

    /// Reserves at least up to byte `end` of the file: the guess first,
    /// then in steps that double the reservation.
    fn cover(&self, end: u64) {
        let reserved = self.end.get();
        if end <= reserved {
            return;
        }
        let step = if reserved == 0 {
            self.guess
        } else {
            reserved.saturating_mul(2)
        };
        self.reserve(end.max(step).max(1 << 20));
    }

    fn reserve(&self, end: u64) {
        let from = self.end.get();
        let reserved = reserve::space(self.file, from, end.saturating_sub(from));
        // Not supported here, or no room: the rest is written without.
        self.end.set(if reserved { end } else { u64::MAX });
    }

    /// The end of the reserved bytes, for [`finish_file`].
    fn into_end(self) -> u64 {
        self.end.get()
    }
}

/// The output's disk space, reserved before it is written: with the
/// blocks already allocated, ext4 skips its delayed-allocation bookkeeping
/// for every block a write adds (about a third of the kernel's time per
/// page). Writing a 4.5 MB file in the MoE conversion's pieces took
/// 0.57-0.93 ms into a reserved file and 0.95-1.30 ms into one that grew
/// by its writes (medians of 300 interleaved runs). The reservation keeps
/// the file's length (`FALLOC_FL_KEEP_SIZE`), so what was reserved past
/// the last write is given back by [`reserve::trim`]: a truncation, which
/// on a file system mounted with `discard` waits for the disk to be told
/// (0.1-0.2 ms here), so the reservation is exact where it can be.
#[cfg(target_os = "linux")]
mod reserve {
    use rustix::fs::{fallocate, FallocateFlags};

    /// Reserves `len` bytes of `file` from `offset`; `false` where the
    /// file system cannot (tmpfs on old kernels, network file systems) or
    /// the disk has no room for them.
    pub fn space(file: &std::fs::File, offset: u64, len: u64) -> bool {
        fallocate(file, FallocateFlags::KEEP_SIZE, offset, len).is_ok()
    }

    /// Gives back what was reserved past the end of `file`, `len` bytes
    /// long (a truncation to its own length does it on Linux).
    pub fn trim(file: &std::fs::File, len: u64) -> std::io::Result<()> {
        file.set_len(len)
    }
}

#[cfg(not(target_os = "linux"))]
mod reserve {
    pub fn space(_: &std::fs::File, _: u64, _: u64) -> bool {
        false
    }

    pub fn trim(_: &std::fs::File, _: u64) -> std::io::Result<()> {
        Ok(())
    }
}

/// A temporary file beside `output`, renamed over it on success.
fn temporary_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    output.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

fn progress_bar(len: u64, quiet: bool, label: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let style = ProgressStyle::with_template("{msg} [{wide_bar}] {bytes}/{total_bytes} {eta}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(len)
        .with_style(style)
        .with_message(label.to_string())
}

/// A path as the user gave it (or as a set's index names it), for an
/// error line.
fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// An I/O error reading `path`.
fn read_failure(path: &Path, e: std::io::Error) -> Failure {
    Failure::io(&shown(path), "read", &e)
}

/// An I/O error writing OUT (whatever file beside it was being written:
/// the temporary file is never named).
fn write_failure(args: &ConvertArgs, e: std::io::Error) -> Failure {
    Failure::io(&shown(&args.output), "write", &e)
}

/// The failure of a conversion of IN writing OUT.
fn conversion_failure(e: kiln_convert::Error, args: &ConvertArgs) -> Failure {
    Failure::convert(&e, &shown(&args.input), Some(&shown(&args.output)))
}

/// Maps IN, a Kiln file: refused when its bytes are a safetensors or GGUF
/// file's, with what to do.
fn map_kiln(args: &ConvertArgs) -> Result<Input, Failure> {
    let input = map_input(&args.input).map_err(|e| read_failure(&args.input, e))?;
    if let Some(format) = foreign_content(&input) {
        return Err(Failure::foreign(
            &shown(&args.input),
            crate::common::Foreign::Content(format),
            &format!(
                "give it the extension .{} to convert it",
                format.to_ascii_lowercase()
            ),
        ));
    }
    Ok(input)
}

/// Every file of the set IN names, mapped: (file name, map).
fn map_set(args: &ConvertArgs) -> Result<Vec<(String, Input)>, Failure> {
    let paths: Vec<PathBuf> = if args.from == Format::Gguf {
        split_set(&args.input).unwrap_or_default()
    } else {
        let index = map_input(&args.input).map_err(|e| read_failure(&args.input, e))?;
        let names = kiln_convert::safetensors_index_files(&index)
            .map_err(|e| conversion_failure(e, args))?;
        names.iter().map(|n| args.input.with_file_name(n)).collect()
    };
    paths
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let map = map_input(path).map_err(|e| read_failure(path, e))?;
            Ok((name, map))
        })
        .collect()
}

/// Converts the set IN names into the one file OUT.
fn run_from_set(args: &ConvertArgs) -> Result<Summary, Failure> {
    let maps = map_set(args)?;
    let files: Vec<(&str, &[u8])> = maps.iter().map(|(n, m)| (n.as_str(), &m[..])).collect();
    let index = if args.from == Format::Safetensors {
        Some(map_input(&args.input).map_err(|e| read_failure(&args.input, e))?)
    } else {
        None
    };
    let temp = temporary_path(&args.output);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| write_failure(args, e))?;
    let written = AtomicU64::new(0);
    let input_len = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    let space = Reservation::new(&file, expected_len(args, input_len));
    let out = Output {
        inner: &file,
        space: &space,
        written: &written,
    };
    let result = match &index {
        Some(index) => {
            let index_name = args
                .input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            kiln_convert::safetensors_set_to_kiln(&index_name, index, &files, out)
        }
        None => kiln_convert::gguf_set_to_kiln(&files, out),
    };
    let lengths = (written.into_inner(), space.into_end());
    finish_file(result, file, lengths, &temp, args)
}

/// A guess at the length of the output of converting `input_len` bytes,
/// for the first reservation: a Kiln file is about as long as its source
/// plus 200 bytes a tensor (descriptor and alignment; up to twice the
/// source for a model of many tiny tensors), a source file about as long
/// as its Kiln file.
fn expected_len(args: &ConvertArgs, input_len: u64) -> u64 {
    if args.to == Format::Kiln {
        input_len.saturating_add(input_len.min(64 << 20))
    } else {
        input_len
    }
}

/// Renames `temp` over OUT when `result` is a success, else removes it.
/// `written` is the file's length: what was reserved past it (up to
/// `reserved`, [`Reservation::into_end`]) is given back first.
fn finish_file(
    result: kiln_convert::Result<Summary>,
    file: std::fs::File,
    (written, reserved): (u64, u64),
    temp: &Path,
    args: &ConvertArgs,
) -> Result<Summary, Failure> {
    let finished = result.and_then(|summary| {
        (&file).flush().map_err(kiln_convert::Error::from)?;
        if reserved > written && reserved != u64::MAX {
            reserve::trim(&file, written).map_err(kiln_convert::Error::from)?;
        }
        Ok(summary)
    });
    drop(file);
    match finished {
        Ok(summary) => {
            std::fs::rename(temp, &args.output).map_err(|e| {
                let _ = std::fs::remove_file(temp);
                write_failure(args, e)
            })?;
            Ok(summary)
        }
        Err(e) => {
            let _ = std::fs::remove_file(temp);
            Err(conversion_failure(e, args))
        }
    }
}

/// Writes the files of the set IN.kiln holds into the folder OUT: each to
/// a temporary file there, renamed into place when all are written.
fn run_to_folder(args: &ConvertArgs) -> Result<Summary, Failure> {
    let input = map_kiln(args)?;
    let ty = kiln_convert::MessageType::of(&input).map_err(|e| conversion_failure(e, args))?;
    std::fs::create_dir_all(&args.output).map_err(|e| write_failure(args, e))?;
    let mut written: Vec<(PathBuf, PathBuf)> = Vec::new();
    let create = |name: &str| -> std::io::Result<std::io::BufWriter<std::fs::File>> {
        let target = args.output.join(name);
        let temp = temporary_path(&target);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        written.push((temp, target));
        Ok(std::io::BufWriter::new(file))
    };
    let result = match ty {
        kiln_convert::MessageType::Safetensors => {
            kiln_convert::kiln_to_safetensors_set(&input, create)
        }
        kiln_convert::MessageType::Gguf => kiln_convert::kiln_to_gguf_set(&input, create),
    };
    match result {
        Ok(summary) => {
            for (temp, target) in &written {
                std::fs::rename(temp, target)
                    .map_err(|e| Failure::io(&shown(target), "write", &e))?;
            }
            Ok(summary)
        }
        Err(e) => {
            for (temp, _) in &written {
                let _ = std::fs::remove_file(temp);
            }
            Err(conversion_failure(e, args))
        }
    }
}

pub(crate) fn run_conversion(args: &ConvertArgs) -> Result<Summary, Failure> {
    match args.mode {
        Mode::File => {}
        Mode::FromSet => return run_from_set(args),
        Mode::ToFolder => return run_to_folder(args),
    }
    let input = if args.from == Format::Kiln {
        map_kiln(args)?
    } else {
        map_input(&args.input).map_err(|e| read_failure(&args.input, e))?
    };
    let temp = temporary_path(&args.output);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| write_failure(args, e))?;
    let label = format!("{} -> {}", args.from.title(), args.to.title());
    let bar = progress_bar(input.len() as u64, args.quiet, &label);
    let (written, done) = (AtomicU64::new(0), AtomicBool::new(false));
    let space = Reservation::new(&file, expected_len(args, input.len() as u64));
    let rest = prefetch::head(&input);
    let result = std::thread::scope(|scope| {
        if let Some(offset) = rest {
            let (input, written, done) = (&input, &written, &done);
            scope.spawn(move || prefetch::rest(input, offset, written, done));
        }
        let out = Output {
            inner: bar.wrap_write(&file),
            space: &space,
            written: &written,
        };
        let result = convert_with_len(args.from, args.to, &input, out, |len| space.exact(len));
        done.store(true, Ordering::Relaxed);
        result
    });
    bar.finish_and_clear();
    let lengths = (written.into_inner(), space.into_end());
    finish_file(result, file, lengths, &temp, args)
}

/// Converts, then says what was written (unless `--quiet`).
fn convert(args: &ConvertArgs) -> Result<(), Failure> {
    let summary = run_conversion(args)?;
    if args.quiet {
        return Ok(());
    }
    print(&format!(
        "{} ({}) -> {} ({}): {} tensors, {} metadata pairs, {} bytes written\n",
        args.input.display(),
        args.from.title(),
        args.output.display(),
        if args.mode == Mode::ToFolder {
            "folder"
        } else {
            args.to.title()
        },
        summary.tensors,
        summary.metadata,
        summary.written
    ))
}

/// Runs `kiln convert` with the arguments after `convert`.
pub fn run(args: &[String]) -> ExitCode {
    let parse = |args: &[String]| {
        parse_args(args).map(|request| match request {
            Request::Help => None,
            Request::Convert(parsed) => Some(parsed),
        })
    };
    crate::common::run_subcommand(args, parse, HELP, USAGE, convert)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;

    /// A reservation covers every write: the guess first (at least 1
    /// MiB), then doubling; an exact one is the length given; the file's
    /// length stays what was written.
    #[cfg(target_os = "linux")]
    #[test]
    fn reservations_cover_the_writes() {
        use std::os::unix::fs::MetadataExt;
        let path = std::env::temp_dir().join(format!("kiln-reserve-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let held = |file: &std::fs::File| file.metadata().unwrap().blocks() * 512;
        let space = Reservation::new(&file, 10);
        space.cover(5);
        if space.end.get() == u64::MAX {
            // This file system reserves nothing (the next test's case).
            eprintln!("{}: no reservation on this file system", path.display());
            drop(file);
            std::fs::remove_file(&path).unwrap();
            return;
        }
        assert_eq!(space.end.get(), 1 << 20);
        space.cover(1 << 20);
        assert_eq!(space.end.get(), 1 << 20);
        space.cover((1 << 20) + 1);
        assert_eq!(space.end.get(), 2 << 20);
        assert!(held(&file) >= 2 << 20, "{} bytes held", held(&file));
        assert_eq!(file.metadata().unwrap().len(), 0);
        assert_eq!(space.into_end(), 2 << 20);
        reserve::trim(&file, 0).unwrap();
        assert_eq!(held(&file), 0);
        let exact = Reservation::new(&file, 1 << 30);
        exact.exact(5000);
        exact.cover(5000);
        assert_eq!(exact.into_end(), 5000);
        drop(file);
        std::fs::remove_file(&path).unwrap();
    }

    /// Where the file cannot be reserved (a pipe), it is written without.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_that_cannot_be_reserved_is_written_without() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let file = std::fs::File::from(std::os::fd::OwnedFd::from(writer));
        let space = Reservation::new(&file, 10);
        let written = AtomicU64::new(0);
        let mut out = Output {
            inner: &file,
            space: &space,
            written: &written,
        };
        out.write_all(b"kiln").unwrap();
        assert_eq!(space.into_end(), u64::MAX);
        drop(file);
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut got).unwrap();
        assert_eq!(got, b"kiln");
    }

    fn parse(list: &[&str]) -> Result<Request, String> {
        parse_args(&strings(list))
    }

    #[test]
    fn formats_come_from_the_extensions() {
        let Ok(Request::Convert(args)) = parse(&["m.safetensors", "out/m.KILN"]) else {
            panic!()
        };
        assert_eq!(
            (args.from, args.to, args.quiet),
            (Format::Safetensors, Format::Kiln, false)
        );
        let Ok(Request::Convert(args)) = parse(&["-q", "m.kiln", "m.gguf"]) else {
            panic!()
        };
        assert_eq!(
            (args.from, args.to, args.quiet),
            (Format::Kiln, Format::Gguf, true)
        );
        let Ok(Request::Convert(args)) = parse(&["m.safetensors.index.json", "m.kiln"]) else {
            panic!()
        };
        assert_eq!((args.from, args.mode), (Format::Safetensors, Mode::FromSet));
        let Ok(Request::Convert(args)) = parse(&["m-00001-of-00002.gguf", "m.kiln"]) else {
            panic!()
        };
        assert_eq!((args.from, args.mode), (Format::Gguf, Mode::FromSet));
        let Ok(Request::Convert(args)) = parse(&["m.kiln", "out", "--shards"]) else {
            panic!()
        };
        assert_eq!(args.mode, Mode::ToFolder);
        assert!(parse(&["m.gguf", "out", "--shards"]).is_err());
        assert!(parse(&["m.safetensors.index.json", "m.gguf"]).is_err());
    }

    #[test]
    fn refuses_what_it_cannot_convert() {
        for bad in [
            &["a.kiln", "b.kiln"][..],
            &["a.gguf", "b.safetensors"],
            &["a.bin", "b.kiln"],
            &["a.kiln"],
            &["a.kiln", "b.gguf", "c.gguf"],
            &["--frob", "a.kiln", "b.gguf"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse(&["--help"]), Ok(Request::Help));
    }

    #[test]
    fn the_temporary_file_is_beside_the_output() {
        let temp = temporary_path(Path::new("dir/model.kiln"));
        assert_eq!(temp.parent(), Some(Path::new("dir")));
        assert!(temp
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".model.kiln."));
    }
}
