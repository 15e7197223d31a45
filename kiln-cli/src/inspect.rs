//! `kiln inspect [--type TYPE] [--cap N] [--json] FILE`: what is inside a
//! Kiln message or directory, a safetensors or GGUF file, or a set of
//! files.
//!
//! This module only renders: the facts are the core's inspection model
//! (`kiln_nostd::inspect::Inspection`), filled by kiln-nostd for a Kiln
//! file and by kiln-convert for the rest (`kiln_convert::head` for a
//! safetensors or GGUF head, `kiln_convert::inspect` for a converted
//! model and a set), and `--json` is the model's one JSON form, the text
//! the browser module gives for the same file. Files are memory-mapped;
//! only their heads are touched.

use std::io::{BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use kiln_convert::head::{inspect_head, sniff};
use kiln_convert::inspect::{inspect_kiln, join};
use kiln_convert::{Format, LIMITS};
use kiln_nostd::inspect::{InPlace, Inspection, QuantLink, Reading, TensorFacts};
use kiln_nostd::Limits;

use crate::common::{
    human_count, human_size, read_input, reading, unknown_option, ArgWalk, Failure, ReadFlags,
};

pub const USAGE: &str = "usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE";

const HELP: &str = "\
Shows what is inside a Kiln message or directory, a safetensors file, a
GGUF file, or a set of them: every tensor (name, dtype, shape, elements,
size, offset in the file, quantization links by name, whether its payload
can be viewed in place and why not) and the metadata.

usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE

  FILE         the file; - for standard input; a safetensors index
               (model.safetensors.index.json) or the first file of a GGUF
               split set (MODEL-00001-of-00003.gguf) for the whole set
  --type TYPE  the type of a Kiln value: needed for a framed message of a
               type other than the ones `kiln convert` writes (the frame's
               hash does not tell the type) and for a bare value other than
               a directory; spaces and a missing last comma are fine
  --cap N      count cap and byte-run cap for a Kiln value (default
               4294967295, the wire maximum)
  --json       machine output (its shape: spec/json.md, section 8; the
               browser module's json() gives the same text)

The format comes from the content (KLN0 frame, KLNT directory, GGUF magic,
safetensors header), from the extension (.kiln .safetensors .gguf) only when
the content says nothing. A GGUF file's shapes are shown outermost first and
its block types by their ggml names (Q4_K), so a file and its converted
.kiln show the same rows, in the same order (the source file's). The `view`
column says whether a payload can be viewed in place (a typed slice over the
memory-mapped file: its offset a multiple of the element size, and a
little-endian host for elements wider than a byte) and, if not, why.

Exit status: 0 shown; 1 the file is truncated, corrupt or of no known format
(one `error:` line with the byte offset); 2 usage or I/O error.

examples:
  kiln inspect samples/batch.kiln
  kiln inspect model.safetensors
  kiln inspect --json model.gguf | jq '.tensors[0]'
  kiln inspect --type 'struct{id:i64,batch:tensors,}' message.kiln";

#[derive(Debug, PartialEq)]
struct InspectArgs {
    type_text: Option<String>,
    limits: Limits,
    json: bool,
    file: String,
}

fn parse_args(args: &[String]) -> Result<Option<InspectArgs>, String> {
    let mut parsed = InspectArgs {
        type_text: None,
        limits: LIMITS,
        json: false,
        file: String::new(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(None),
            "--type" => parsed.type_text = Some(walk.value(flag)?.into()),
            "--cap" => parsed.limits = walk.cap(flag)?,
            "--json" => parsed.json = true,
            _ => return Err(unknown_option(flag)),
        }
    }
    parsed.file = walk.one("FILE")?.ok_or("missing FILE")?.into();
    Ok(Some(parsed))
}

// ---------------------------------------------------------------------------
// The model of FILE

fn invalid(file: &str, e: kiln_convert::Error) -> Failure {
    Failure::convert(&e, file, None)
}

/// A Kiln file's model, read as the flags and its bytes say.
fn kiln(args: &InspectArgs, input: &[u8]) -> Result<Inspection, Failure> {
    let file = args.file.as_str();
    let flags = ReadFlags {
        type_text: args.type_text.clone(),
        framed: None,
        limits: Some(args.limits),
    };
    let read = reading(input, &flags, file)?;
    let reading = Reading {
        type_text: read.type_text,
        framed: read.framed,
        limits: read.limits,
        known: read.known,
    };
    inspect_kiln(file, input, &reading).map_err(|e| Failure::kiln(file, e))
}

/// FILE's model: the format from its bytes, else its extension.
fn file_model(args: &InspectArgs, input: &[u8]) -> Result<Inspection, Failure> {
    let file = args.file.as_str();
    let sniffed = sniff(input);
    match (&args.type_text, sniffed) {
        (Some(_), _) | (None, Some(Format::Kiln)) => return kiln(args, input),
        (None, Some(format)) => {
            return inspect_head(file, format, input).map_err(|e| invalid(file, e))
        }
        (None, None) => {}
    }
    let ext = std::path::Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("safetensors") => {
            inspect_head(file, Format::Safetensors, input).map_err(|e| invalid(file, e))
        }
        Some("gguf") => inspect_head(file, Format::Gguf, input).map_err(|e| invalid(file, e)),
        Some("kiln") => kiln(args, input),
        // Read as Kiln, the bytes break its first rule (the magic), as
        // `kiln check` says of them; the sentence names what else was tried.
        _ => Err(Failure::invalid(
            file,
            "FRAME",
            "not a Kiln message (KLN0) or directory (KLNT), a GGUF file or a safetensors file, \
             and its name does not end in .kiln, .gguf or .safetensors",
            Some(0),
        )),
    }
}

/// The files of the set `file` names (a safetensors index, or the first
/// file of a GGUF split set), beside it; `None` when it names one file.
fn set_files(file: &str) -> Option<Vec<std::path::PathBuf>> {
    let path = std::path::Path::new(file);
    let name = path.file_name()?.to_str()?;
    if let Some(names) = kiln_convert::gguf_split_names(name) {
        return Some(names.into_iter().map(|n| path.with_file_name(n)).collect());
    }
    if !name.to_ascii_lowercase().ends_with(".index.json") {
        return None;
    }
    let index = std::fs::read(path).ok()?;
    let names = kiln_convert::safetensors_index_files(&index).ok()?;
    Some(names.into_iter().map(|n| path.with_file_name(n)).collect())
}

/// A sharded checkpoint or a split set as one model: each file's head,
/// then the set checked the way `kiln convert` checks it.
fn set_model(args: &InspectArgs, paths: &[std::path::PathBuf]) -> Result<Inspection, Failure> {
    let mut parts = Vec::with_capacity(paths.len());
    let mut format = None;
    for p in paths {
        let shown = p.to_string_lossy().into_owned();
        let input = read_input(&shown)?;
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let f = match sniff(&input) {
            Some(f @ (Format::Safetensors | Format::Gguf)) => f,
            _ if name.ends_with(".gguf") => Format::Gguf,
            _ => Format::Safetensors,
        };
        format.get_or_insert(f);
        parts.push(inspect_head(&name, f, &input).map_err(|e| invalid(&shown, e))?);
    }
    let index = match format {
        Some(Format::Safetensors) => Some(read_input(&args.file)?),
        _ => None,
    };
    join(&args.file, parts, index.as_deref()).map_err(|e| invalid(&args.file, e))
}

fn inspect(args: &InspectArgs) -> Result<(), Failure> {
    let model = match set_files(&args.file) {
        Some(paths) if args.type_text.is_none() => set_model(args, &paths)?,
        _ => file_model(args, &read_input(&args.file)?)?,
    };
    let stdout = std::io::stdout().lock();
    let mut w = BufWriter::new(stdout);
    let written = if args.json {
        let mut out = FmtWriter {
            inner: &mut w,
            error: None,
        };
        match model.write_json(&mut out) {
            Ok(()) => Ok(()),
            Err(_) => Err(out
                .error
                .unwrap_or_else(|| std::io::Error::other("the JSON writer failed"))),
        }
    } else {
        write_text(&model, &mut w)
    };
    crate::common::output_result(written.and_then(|()| w.flush()))
}

/// A `core::fmt::Write` over an `io::Write`, keeping the I/O error.
pub struct FmtWriter<'w, W: Write> {
    pub inner: &'w mut W,
    pub error: Option<std::io::Error>,
}

impl<W: Write> std::fmt::Write for FmtWriter<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.inner.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// Runs `kiln inspect` with the arguments after `inspect`.
pub fn run(args: &[String]) -> ExitCode {
    crate::common::run_subcommand(args, parse_args, HELP, USAGE, inspect)
}

// ---------------------------------------------------------------------------
// Text

fn links(model: &Inspection, t: &TensorFacts) -> String {
    let mut out = Vec::new();
    let (scales, outer) = model.links_of(t);
    let name = |i: Option<usize>| match i.and_then(|i| model.tensors.get(i).map(|t| (i, t))) {
        Some((_, t)) if t.name.is_some() => t.name.clone().unwrap_or_default(),
        Some((i, _)) => format!("#{i}"),
        None => "?".into(),
    };
    if let QuantLink::Scales {
        axis, group_size, ..
    }
    | QuantLink::ScalesOuter {
        axis, group_size, ..
    } = t.quant
    {
        out.push(format!(
            "scales {} (axis {axis}, groups of {group_size})",
            name(scales)
        ));
    }
    if let QuantLink::ScalesOuter { .. } = t.quant {
        out.push(format!("outer {}", name(outer)));
    }
    if t.block_size > 0 {
        out.push(format!("blocks of {} B", t.block_size));
    }
    if matches!(t.dtype, kiln_nostd::inspect::TensorDtype::Foreign(_)) {
        out.push("no Kiln dtype".into());
    }
    out.join("; ")
}

/// The `view` column: `in place`, or why a view would be a copy.
fn view_text(t: &TensorFacts) -> String {
    match t.in_place {
        InPlace::Yes => "in place".into(),
        InPlace::Misaligned { offset, align } => {
            format!("copy: offset {offset} is not a multiple of {align}")
        }
        InPlace::BigEndianHost => "copy: big-endian host".into(),
    }
}

fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// Cuts `s` to `width` characters, marking the cut.
fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(n);
    }
    if std::io::stdout().is_terminal() {
        return console::Term::stdout()
            .size_checked()
            .map(|(_, cols)| usize::from(cols));
    }
    None
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The tables: per directory in wire order, or (a model listed in its
/// source's order) per source file.
fn groups(model: &Inspection) -> Vec<(String, u64, u64, Vec<usize>)> {
    if model.order.is_empty() {
        return model
            .directories
            .iter()
            .map(|d| {
                let label = match (&d.source, &d.path) {
                    (Some(f), _) => format!("tensors of {f}"),
                    (None, Some(p)) if p.is_root() => "directory (the whole value)".to_string(),
                    (None, Some(p)) => format!("directory at {p}"),
                    (None, None) => "tensors".to_string(),
                };
                (
                    label,
                    d.offset,
                    d.length,
                    (d.first..d.first + d.count).collect(),
                )
            })
            .collect();
    }
    let mut out: Vec<(String, u64, u64, Vec<usize>)> = Vec::new();
    for i in model.listing() {
        let Some(t) = model.tensors.get(i) else {
            continue;
        };
        let source = model.source_of(t).map(String::from);
        let label = match &source {
            Some(f) => format!("tensors of {f}"),
            None => "tensors".to_string(),
        };
        let d = model.directories.get(t.directory);
        match out.last_mut() {
            Some(last) if last.0 == label => last.3.push(i),
            _ => out.push((label, d.map_or(0, |d| d.offset), 0, vec![i])),
        }
    }
    // Each group's bytes: its directories' blocks.
    for g in &mut out {
        let mut dirs: Vec<usize> =
            g.3.iter()
                .filter_map(|&i| model.tensors.get(i).map(|t| t.directory))
                .collect();
        dirs.dedup();
        dirs.sort_unstable();
        dirs.dedup();
        g.1 = dirs
            .first()
            .and_then(|&d| model.directories.get(d))
            .map_or(0, |d| d.offset);
        g.2 = dirs
            .iter()
            .filter_map(|&d| model.directories.get(d))
            .map(|d| d.length)
            .sum();
    }
    out
}

fn write_text<W: Write>(model: &Inspection, out: &mut W) -> std::io::Result<()> {
    let width = terminal_width();
    let cut = |s: &str, used: usize| match width {
        Some(w) => fit(s, w.saturating_sub(used).max(12)),
        None => s.to_string(),
    };
    let kind = match (model.format, &model.kiln) {
        (Format::Kiln, Some(k)) if k.framed => "Kiln message",
        (Format::Kiln, Some(k)) if k.type_text == "tensors" => "Kiln tensor directory",
        (Format::Kiln, _) => "Kiln value",
        (f, _) => f.title(),
    };
    let files = if model.files.len() > 1 {
        format!(" ({} files)", model.files.len())
    } else {
        String::new()
    };
    let size = model.bytes();
    writeln!(
        out,
        "{}{files}: {kind}, {} ({size} bytes), {}, {}",
        model.name,
        human_size(size),
        plural(model.tensors.len(), "tensor"),
        plural(model.metadata.len(), "metadata value"),
    )?;
    if let Some(k) = &model.kiln {
        writeln!(out, "  type  {}", cut(&k.type_text, 8))?;
        if k.framed {
            let from = match k.converted_from {
                Some(f) => format!(" (converted from {})", f.title()),
                None => String::new(),
            };
            writeln!(out, "  hash  {:#018x}{from}", k.hash)?;
        }
    }
    if let Some(g) = model.gguf {
        writeln!(
            out,
            "  GGUF version {}, alignment {}",
            g.version, g.alignment
        )?;
    }
    if !model.metadata.is_empty() {
        writeln!(out, "\nmetadata:")?;
        let key_width = model
            .metadata
            .iter()
            .map(|m| m.key.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        let type_width = model
            .metadata
            .iter()
            .map(|m| m.type_text.chars().count())
            .max()
            .unwrap_or(0)
            .min(24);
        for m in &model.metadata {
            let key = if m.key.is_empty() {
                "(the value)"
            } else {
                &m.key
            };
            let key = fit(key, key_width.max(11));
            let ty = fit(&m.type_text, type_width);
            let value = m
                .json()
                .unwrap_or_else(|e| format!("(not a {}: {})", m.type_text, e.fault()));
            let used = 2 + key_width + 2 + type_width + 2;
            writeln!(
                out,
                "  {key:<key_width$}  {ty:<type_width$}  {}",
                cut(&value, used)
            )?;
        }
        if model.omitted > 0 {
            writeln!(out, "  … and {} more values", model.omitted)?;
        }
    }
    for (label, offset, bytes, rows) in groups(model) {
        writeln!(
            out,
            "\n{label}: {}, {} from byte {offset}",
            plural(rows.len(), "tensor"),
            human_size(bytes),
        )?;
        if rows.is_empty() {
            continue;
        }
        let cells: Vec<[String; 9]> = rows
            .iter()
            .filter_map(|&i| model.tensors.get(i).map(|t| (i, t)))
            .map(|(i, t)| {
                [
                    i.to_string(),
                    t.name.clone().unwrap_or_else(|| "-".into()),
                    t.dtype_name(),
                    shape_text(&t.shape),
                    t.elements.map_or("?".into(), human_count),
                    human_size(t.length),
                    t.offset.to_string(),
                    view_text(t),
                    links(model, t),
                ]
            })
            .collect();
        let heads = [
            "#", "name", "dtype", "shape", "elements", "size", "offset", "view", "links",
        ];
        let mut widths: Vec<usize> = heads.iter().map(|h| h.len()).collect();
        for c in &cells {
            for (w, cell) in widths.iter_mut().zip(c) {
                *w = (*w).max(cell.chars().count());
            }
        }
        // The name column gives way first when the terminal is narrow.
        if let Some(w) = width {
            let others: usize = widths
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 1 && *i != 8)
                .map(|(_, w)| w + 2)
                .sum::<usize>()
                + 2;
            let room = w.saturating_sub(others + widths[8] + 2);
            widths[1] = widths[1].min(room.max(16));
        }
        let line = |cols: &[String]| {
            let mut s = String::from(" ");
            for (i, (cell, w)) in cols.iter().zip(&widths).enumerate() {
                let cell = fit(cell, *w);
                s.push(' ');
                if matches!(i, 0 | 4 | 5 | 6) {
                    s.push_str(&format!("{cell:>w$}"));
                } else {
                    s.push_str(&format!("{cell:<w$}"));
                }
                s.push(' ');
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&heads.map(String::from)))?;
        for c in &cells {
            let text = line(c);
            match width {
                Some(w) => writeln!(out, "{}", fit(&text, w))?,
                None => writeln!(out, "{text}")?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;

    #[test]
    fn cuts_mark_the_cut() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(shape_text(&[2, 3]), "[2, 3]");
    }

    #[test]
    fn options() {
        let parse = |l: &[&str]| parse_args(&strings(l));
        let args = parse(&["--json", "--type", "u8", "f"]).unwrap().unwrap();
        assert!(args.json);
        assert_eq!(args.type_text.as_deref(), Some("u8"));
        assert_eq!(args.limits, LIMITS);
        assert!(parse(&[]).is_err());
        assert!(parse(&["--x", "f"]).is_err());
    }
}
