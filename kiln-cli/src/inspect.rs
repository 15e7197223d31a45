//! `kiln inspect [--type TYPE] [--cap N] [--json] FILE`: what is inside a
//! Kiln message or directory, a safetensors file or a GGUF file.
//!
//! The format comes from the content (the frame magic `KLN0`, the directory
//! magic `KLNT`, `GGUF`, a safetensors header), the extension only when
//! the content says nothing. safetensors and GGUF files are read with
//! kiln-convert's readers; a Kiln value is read into the core's inspection
//! model (`kiln_nostd::inspect`: the value tree, every `tensors` value with
//! its path, every tensor's facts), which this module only renders. Files
//! are memory-mapped.

use std::io::{BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use kiln_convert::gguf::Gguf;
use kiln_convert::{MessageType, LIMITS};
use kiln_nostd::inspect::{
    inspect as inspect_value, InPlace, Inspection, Path, QuantLink, Seg, TensorFacts,
};
use kiln_nostd::order::HOST_IS_LITTLE_ENDIAN;
use kiln_nostd::schema::{NodeKind, TypeRef};
use kiln_nostd::{Dtype, DtypeCode, Limits, Options, Scalar, Value, ValueKind};

use crate::common::{
    compile, human_count, human_size, read_input, reading, unknown_option, ArgWalk, Failure,
    ReadFlags,
};
use crate::jsonform::{write_value, Style};
use crate::jsontext::{quote, JsonOut, MAX_SAFE};

pub const USAGE: &str = "usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE";

const HELP: &str = "\
Shows what is inside a Kiln message or directory, a safetensors file or a
GGUF file: every tensor (name, dtype, shape, elements, size, offset in the
file, quantization links by name, opaque layout, whether its payload can be
viewed in place and why not) and the metadata.

usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE

  FILE         the file; - for standard input
  --type TYPE  the type of a Kiln value: needed for a framed message of a
               type other than the ones `kiln convert` writes (the frame's
               hash does not tell the type) and for a bare value other than
               a directory; spaces and a missing last comma are fine
  --cap N      count cap and byte-run cap for a Kiln value (default
               4294967295, the wire maximum)
  --json       machine output (its shape: spec/json.md, section 8)

The format comes from the content (KLN0 frame, KLNT directory, GGUF magic,
safetensors header), from the extension (.kiln .safetensors .gguf) only when
the content says nothing. A GGUF file's shapes are shown outermost first and
its block types as the opaque Kiln dtypes of `kiln convert` (Q4_K is 4108),
so a file and its converted .kiln show the same rows. The `view` column
says whether a payload can be viewed in place (a typed slice over the
memory-mapped file: its offset a multiple of the element size, and a
little-endian host for elements wider than a byte) and, if not, why.

Exit status: 0 shown; 1 the file is truncated, corrupt or of no known format
(one `error:` line with the byte offset); 2 usage or I/O error.

examples:
  kiln inspect samples/batch.kiln
  kiln inspect model.safetensors
  kiln inspect --json model.gguf | jq '.directories[0].tensors[0]'
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
// The report

/// One tensor: the core's facts, plus what only a foreign file has.
struct Row {
    facts: TensorFacts,
    /// A dtype outside Kiln's (a safetensors `F4`), by its own name.
    foreign: Option<String>,
    /// The element count; `None` when the shape's product overflows.
    elements: Option<u64>,
    /// The names of the tensors the quantization links point to.
    scales_name: Option<String>,
    outer_name: Option<String>,
}

impl Row {
    fn in_place(&self) -> InPlace {
        // A memory map starts on a page: the file offset decides.
        self.facts.in_place(0, HOST_IS_LITTLE_ENDIAN)
    }
}

/// One directory (or a safetensors/GGUF file's tensors).
struct Group {
    path: Option<Path>,
    /// The file of a sharded checkpoint or split set that holds it.
    file: Option<String>,
    offset: u64,
    bytes: u64,
    rows: Vec<Row>,
}

/// One metadata value.
struct Meta {
    key: String,
    ty: Option<String>,
    /// The value's JSON form, compact.
    json: String,
}

struct Report {
    file: String,
    format: &'static str,
    size: u64,
    /// Kiln: type text, hash (framed), message type.
    kiln: Option<(String, Option<u64>, Option<MessageType>)>,
    /// GGUF: version and alignment.
    gguf: Option<(u32, u64)>,
    meta: Vec<Meta>,
    groups: Vec<Group>,
    omitted: u64,
}

fn product(dims: &[u64]) -> Option<u64> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// A tensor of a safetensors or GGUF file, as facts.
fn foreign_row(
    index: usize,
    name: &str,
    dtype: DtypeCode,
    shape: Vec<u64>,
    range: std::ops::Range<usize>,
) -> Row {
    let elements = product(&shape);
    Row {
        facts: TensorFacts {
            directory: 0,
            index,
            name: Some(name.into()),
            dtype,
            elements: elements.unwrap_or(u64::MAX),
            shape,
            range,
            layout: None,
            block_size: 0,
            quant: QuantLink::None,
        },
        foreign: None,
        elements,
        scales_name: None,
        outer_name: None,
    }
}

// ---------------------------------------------------------------------------
// safetensors and GGUF

fn safetensors_report(file: &str, input: &[u8]) -> Result<Report, Failure> {
    let (n, meta) =
        kiln_convert::read_safetensors(input).map_err(|e| Failure::convert(&e, file, None))?;
    let data_start = 8 + n;
    let mut rows: Vec<Row> = meta
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            let (start, end) = info.data_offsets;
            let kiln = kiln_convert::kiln_dtype(info.dtype);
            let dtype = DtypeCode::Closed(kiln.unwrap_or(Dtype::U8));
            let range = data_start + start..data_start + end;
            let mut row = foreign_row(0, &name, dtype, shape, range);
            row.foreign = kiln.is_none().then(|| info.dtype.to_string());
            row
        })
        .collect();
    rows.sort_by_key(|r| r.facts.range.start);
    for (i, row) in rows.iter_mut().enumerate() {
        row.facts.index = i;
    }
    let mut metadata: Vec<(&String, &String)> = meta.metadata().iter().flatten().collect();
    metadata.sort();
    Ok(Report {
        file: file.into(),
        format: "safetensors",
        size: input.len() as u64,
        kiln: None,
        gguf: None,
        meta: metadata
            .into_iter()
            .map(|(k, v)| Meta {
                key: k.clone(),
                ty: Some("str".into()),
                json: quote(v),
            })
            .collect(),
        groups: vec![Group {
            path: None,
            file: None,
            offset: data_start as u64,
            bytes: (input.len() - data_start) as u64,
            rows,
        }],
        omitted: 0,
    })
}

/// A Kiln value's JSON form, compact, from its type text and bytes.
fn value_json(type_text: &str, bytes: &[u8]) -> String {
    let shown = crate::common::compile(type_text)
        .map_err(|f| f.message)
        .and_then(|ty| {
            let value = ty
                .decode_value(bytes, Options::BARE.with_limits(LIMITS))
                .map_err(|e| e.to_string())?;
            Ok(json_of(ty.root(), &value))
        });
    shown.unwrap_or_else(|e| quote(&format!("(not a {type_text}: {e})")))
}

/// The compact JSON form of `value` (directories shown by preview).
fn json_of(ty: TypeRef<'_, '_>, value: &Value<'_>) -> String {
    let mut out = JsonOut::new(Vec::new(), false);
    let style = Style {
        pretty: false,
        preview: Some(8),
    };
    let _ = write_value(ty, value, &mut out, style);
    String::from_utf8(out.into_inner()).unwrap_or_default()
}

fn gguf_report(file: &str, input: &[u8]) -> Result<Report, Failure> {
    let invalid = |e: kiln_convert::Error| Failure::convert(&e, file, None);
    let gguf = Gguf::parse(input).map_err(invalid)?;
    let mut meta = Vec::with_capacity(gguf.metadata.len());
    for kv in &gguf.metadata {
        let (ty, bytes) = kv.kiln_value().map_err(invalid)?;
        meta.push(Meta {
            key: kv.key.into(),
            json: value_json(&ty, &bytes),
            ty: Some(ty),
        });
    }
    let base = input.as_ptr() as usize;
    let rows: Vec<Row> = gguf
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let shape: Vec<u64> = t.dims.iter().rev().copied().collect();
            let start = (t.data.as_ptr() as usize).saturating_sub(base);
            let mut row = foreign_row(
                i,
                t.name,
                t.ggml.kiln_dtype(),
                shape,
                start..start + t.data.len(),
            );
            if t.ggml.closed.is_none() {
                row.facts.layout = Some(t.ggml.name.to_string());
                row.facts.block_size = t.ggml.block_bytes as u32;
            }
            row
        })
        .collect();
    let start = rows.first().map_or(input.len(), |r| r.facts.range.start);
    Ok(Report {
        file: file.into(),
        format: "gguf",
        size: input.len() as u64,
        kiln: None,
        gguf: Some((gguf.version, gguf.alignment)),
        meta,
        groups: vec![Group {
            path: None,
            file: None,
            offset: start as u64,
            bytes: (input.len() - start) as u64,
            rows,
        }],
        omitted: 0,
    })
}

// ---------------------------------------------------------------------------
// Kiln: the core's inspection model, rendered

/// Most values a report lists; a value with millions of small fields is
/// summarized.
const MAX_LEAVES: usize = 10_000;

/// The metadata rows of a Kiln value, from its tree and its type. Every
/// value that is not a container or a directory is a row keyed by its path
/// (a list of numbers is one row). Two shapes are read for what they say,
/// whatever their place in the type: a struct `{key:str, type:str,
/// value:list<u8>}` is one typed pair (the value's bytes shown as that
/// type), and in a conversion message (`converted`) a dict entry is keyed
/// by its own key and other values are the message's structure, not
/// metadata.
struct Rows<'r> {
    rows: &'r mut Vec<Meta>,
    omitted: u64,
    converted: bool,
}

/// A typed pair: a struct of three fields, `key: str`, a `str` naming the
/// Kiln type of the value (`type`, `value_type`), and `value: list<u8>`.
fn typed_pair<'v>(
    ty: TypeRef<'_, '_>,
    value: &'v Value<'_>,
) -> Option<(&'v str, &'v str, &'v [u8])> {
    let shape: Vec<(&str, NodeKind, bool)> = ty
        .fields()
        .map(|(name, t)| (name, t.kind(), t.is_bytes()))
        .collect();
    match shape.as_slice() {
        [("key", NodeKind::Str, _), (_, NodeKind::Str, _), ("value", NodeKind::List, true)] => {}
        _ => return None,
    }
    let ValueKind::Struct(fields) = &value.kind else {
        return None;
    };
    match fields.as_slice() {
        [(_, k), (_, t), (_, v)] => match (&k.kind, &t.kind, &v.kind) {
            (ValueKind::Str(k), ValueKind::Str(t), ValueKind::Bytes(v)) => Some((k, t, v)),
            _ => None,
        },
        _ => None,
    }
}

impl Rows<'_> {
    fn push(&mut self, meta: Meta) {
        if self.rows.len() < MAX_LEAVES {
            self.rows.push(meta);
        } else {
            self.omitted += 1;
        }
    }

    fn visit(&mut self, ty: TypeRef<'_, '_>, value: &Value<'_>, path: &mut Path) {
        if let Some((key, kind, bytes)) = typed_pair(ty, value) {
            return self.push(Meta {
                key: key.into(),
                json: value_json(kind, bytes),
                ty: Some(kind.into()),
            });
        }
        let mut inside = |rows: &mut Self, seg: Seg, t: TypeRef<'_, '_>, v: &Value<'_>| {
            path.push(seg);
            rows.visit(t, v, path);
            path.pop();
        };
        match (&value.kind, ty.element()) {
            (ValueKind::List(items), Some(element))
                if !items.is_empty()
                    && !matches!(element.kind(), NodeKind::Scalar(s) if s != Scalar::Bool) =>
            {
                for (i, item) in items.iter().enumerate() {
                    inside(self, Seg::Index(i as u32), element, item);
                }
            }
            (ValueKind::Opt(Some(inner)), Some(element)) => self.visit(element, inner, path),
            (ValueKind::Dict(pairs), Some(element)) if self.converted => {
                for (key, item) in pairs {
                    self.push(Meta {
                        key: key.to_string(),
                        ty: Some(element.to_string()),
                        json: json_of(element, item),
                    });
                }
            }
            (ValueKind::Dict(pairs), Some(element)) if !pairs.is_empty() => {
                for (key, item) in pairs {
                    inside(self, Seg::Key(key.to_string()), element, item);
                }
            }
            (ValueKind::Struct(fields), _) if !fields.is_empty() => {
                for ((_, field_ty), (name, item)) in ty.fields().zip(fields) {
                    inside(self, Seg::Field(name.to_string()), field_ty, item);
                }
            }
            (ValueKind::Tensors(_), _) => {}
            _ if self.converted => {}
            _ => {
                let key = if path.is_root() {
                    "(value)".to_string()
                } else {
                    path.text()
                };
                let json = json_of(ty, value);
                self.push(Meta {
                    key,
                    ty: None,
                    json,
                })
            }
        }
    }
}

/// The first `version: u32` field of a value, depth first.
fn version_field(ty: TypeRef<'_, '_>, value: &Value<'_>) -> Option<u32> {
    match (&value.kind, ty.element()) {
        (ValueKind::Struct(fields), _) => {
            ty.fields().zip(fields).find_map(|((name, t), (_, v))| {
                match (name, t.kind(), &v.kind) {
                    ("version", NodeKind::Scalar(Scalar::U32), ValueKind::Integer(n)) => {
                        u32::try_from(*n).ok()
                    }
                    _ => version_field(t, v),
                }
            })
        }
        (ValueKind::List(items), Some(element)) => {
            items.iter().find_map(|v| version_field(element, v))
        }
        (ValueKind::Opt(Some(inner)), Some(element)) => version_field(element, inner),
        _ => None,
    }
}

/// The GGUF header of a message converted from GGUF: its `version` field
/// (the first, for a split set), and the alignment its metadata names.
fn gguf_header(ty: TypeRef<'_, '_>, value: &Value<'_>, meta: &[Meta]) -> Option<(u32, u64)> {
    let version = version_field(ty, value)?;
    let alignment = meta
        .iter()
        .find(|m| m.key == kiln_convert::gguf::ALIGNMENT_KEY && m.ty.as_deref() == Some("u32"))
        .and_then(|m| m.json.parse().ok())
        .unwrap_or(kiln_convert::gguf::DEFAULT_ALIGNMENT);
    Some((version, alignment))
}

fn rows_of(seen: &Inspection<'_>) -> Vec<Group> {
    seen.directories
        .iter()
        .map(|d| {
            let facts = seen.tensors_of(d);
            let name = |i: usize| facts.get(i).and_then(|t| t.name.clone());
            Group {
                path: Some(d.path.clone()),
                file: None,
                offset: d.span.start as u64,
                bytes: d.span.len() as u64,
                rows: facts
                    .iter()
                    .map(|t| {
                        let (scales_name, outer_name) = match t.quant {
                            QuantLink::None => (None, None),
                            QuantLink::Scales { scales, .. } => (name(scales), None),
                            QuantLink::ScalesOuter { scales, outer, .. } => {
                                (name(scales), name(outer))
                            }
                        };
                        Row {
                            facts: t.clone(),
                            foreign: None,
                            elements: Some(t.elements),
                            scales_name,
                            outer_name,
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

fn kiln_report(
    file: &str,
    input: &[u8],
    reading: &crate::common::Reading,
) -> Result<Report, Failure> {
    let ty = compile(&reading.type_text)?;
    let seen = inspect_value(&*ty, input, reading.options()).map_err(|e| Failure::kiln(file, e))?;
    let mut meta = Vec::new();
    let mut rows = Rows {
        rows: &mut meta,
        omitted: 0,
        converted: reading.message.is_some(),
    };
    rows.visit(ty.root(), &seen.value, &mut Path::root());
    let omitted = rows.omitted;
    let gguf = reading
        .message
        .filter(|m| m.format_name() == "GGUF")
        .and_then(|_| gguf_header(ty.root(), &seen.value, &meta));
    Ok(Report {
        file: file.into(),
        format: "kiln",
        size: input.len() as u64,
        kiln: Some((
            reading.type_text.clone(),
            reading.framed.then(|| ty.hash()),
            reading.message,
        )),
        gguf,
        meta,
        groups: rows_of(&seen),
        omitted,
    })
}

/// Which format FILE holds: from its bytes, else its extension.
fn report(args: &InspectArgs, input: &[u8]) -> Result<Report, Failure> {
    let file = args.file.as_str();
    let kiln = |flags: ReadFlags| -> Result<Report, Failure> {
        let reading = reading(input, &flags, file)?;
        kiln_report(file, input, &reading)
    };
    let flags = ReadFlags {
        type_text: args.type_text.clone(),
        framed: None,
        limits: Some(args.limits),
    };
    let framed = kiln_nostd::frame::peek(input).is_some();
    if args.type_text.is_some() || framed {
        return kiln(flags);
    }
    if input.starts_with(&kiln_nostd::frame::FRAME_MAGIC)
        || input.starts_with(&kiln_nostd::DIRECTORY_MAGIC)
    {
        return kiln(flags);
    }
    if input.starts_with(&kiln_convert::gguf::MAGIC) {
        return gguf_report(file, input);
    }
    if input.len() >= 9 && input[8] == b'{' {
        return safetensors_report(file, input);
    }
    let ext = std::path::Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("safetensors") => safetensors_report(file, input),
        Some("gguf") => gguf_report(file, input),
        Some("kiln") => kiln(flags),
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

// ---------------------------------------------------------------------------
// Output

fn dtype_text(row: &Row) -> String {
    if let Some(f) = &row.foreign {
        return f.clone();
    }
    match (row.facts.dtype, &row.facts.layout) {
        (DtypeCode::Closed(d), _) => d.name().into(),
        (DtypeCode::Opaque(code), Some(layout)) => format!("{layout} ({code})"),
        (DtypeCode::Opaque(code), None) => format!("opaque({code})"),
    }
}

fn link_name(index: usize, name: &Option<String>) -> String {
    match name {
        Some(name) => name.clone(),
        None => format!("#{index}"),
    }
}

fn notes(row: &Row) -> String {
    let mut out = Vec::new();
    match row.facts.quant {
        QuantLink::None => {}
        QuantLink::Scales {
            axis,
            group_size,
            scales,
        }
        | QuantLink::ScalesOuter {
            axis,
            group_size,
            scales,
            ..
        } => out.push(format!(
            "scales {} (axis {axis}, groups of {group_size})",
            link_name(scales, &row.scales_name)
        )),
    }
    if let QuantLink::ScalesOuter { outer, .. } = row.facts.quant {
        out.push(format!("outer {}", link_name(outer, &row.outer_name)));
    }
    if row.facts.block_size > 0 {
        out.push(format!("blocks of {} B", row.facts.block_size));
    }
    if row.foreign.is_some() {
        out.push("no Kiln dtype".into());
    }
    out.join("; ")
}

/// The `view` column: `in place`, or why a view would be a copy.
fn view_text(row: &Row) -> String {
    match row.in_place() {
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

fn write_text<W: Write>(r: &Report, out: &mut W) -> std::io::Result<()> {
    let width = terminal_width();
    let cut = |s: &str, used: usize| match width {
        Some(w) => fit(s, w.saturating_sub(used).max(12)),
        None => s.to_string(),
    };
    let tensors: usize = r.groups.iter().map(|g| g.rows.len()).sum();
    let kind = match (r.format, &r.kiln) {
        ("kiln", Some((_, Some(_), _))) => "Kiln message",
        ("kiln", Some((t, None, _))) if t == "tensors" => "Kiln tensor directory",
        ("kiln", _) => "Kiln value",
        ("gguf", _) => "GGUF",
        _ => "safetensors",
    };
    writeln!(
        out,
        "{}: {kind}, {} ({} bytes), {tensors} tensor{}, {} metadata value{}",
        r.file,
        human_size(r.size),
        r.size,
        if tensors == 1 { "" } else { "s" },
        r.meta.len(),
        if r.meta.len() == 1 { "" } else { "s" },
    )?;
    if let Some((text, hash, message)) = &r.kiln {
        writeln!(out, "  type  {}", cut(text, 8))?;
        if let Some(hash) = hash {
            let from = match message {
                Some(MessageType::Safetensors) => " (converted from safetensors)",
                Some(MessageType::Gguf) => " (converted from GGUF)",
                None => "",
            };
            writeln!(out, "  hash  {hash:#018x}{from}")?;
        }
    }
    if let Some((version, alignment)) = r.gguf {
        writeln!(out, "  GGUF version {version}, alignment {alignment}")?;
    }
    if !r.meta.is_empty() {
        writeln!(out, "\nmetadata:")?;
        let key_width = r
            .meta
            .iter()
            .map(|m| m.key.chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        let type_width = r
            .meta
            .iter()
            .map(|m| m.ty.as_deref().map_or(0, |t| t.chars().count()))
            .max()
            .unwrap_or(0)
            .min(24);
        for m in &r.meta {
            let key = fit(&m.key, key_width);
            let ty = fit(m.ty.as_deref().unwrap_or(""), type_width);
            let used = 2 + key_width + 2 + if type_width > 0 { type_width + 2 } else { 0 };
            if type_width > 0 {
                writeln!(
                    out,
                    "  {key:<key_width$}  {ty:<type_width$}  {}",
                    cut(&m.json, used)
                )?;
            } else {
                writeln!(out, "  {key:<key_width$}  {}", cut(&m.json, used))?;
            }
        }
        if r.omitted > 0 {
            writeln!(out, "  … and {} more values", r.omitted)?;
        }
    }
    for g in &r.groups {
        let label = match (&g.path, &g.file) {
            (_, Some(f)) => format!("tensors of {f}"),
            (Some(p), None) if p.is_root() => "directory (the whole value)".to_string(),
            (Some(p), None) => format!("directory at {p}"),
            (None, None) => "tensors".to_string(),
        };
        writeln!(
            out,
            "\n{label}: {} tensor{}, {} from byte {}",
            g.rows.len(),
            if g.rows.len() == 1 { "" } else { "s" },
            human_size(g.bytes),
            g.offset
        )?;
        if g.rows.is_empty() {
            continue;
        }
        let cells: Vec<[String; 9]> = g
            .rows
            .iter()
            .map(|row| {
                [
                    row.facts.index.to_string(),
                    row.facts.name.clone().unwrap_or_else(|| "-".into()),
                    dtype_text(row),
                    shape_text(&row.facts.shape),
                    row.elements.map_or("?".into(), human_count),
                    human_size(row.facts.range.len() as u64),
                    row.facts.range.start.to_string(),
                    view_text(row),
                    notes(row),
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

fn uint<W: Write>(out: &mut JsonOut<W>, n: u64) -> std::io::Result<()> {
    if i128::from(n) <= MAX_SAFE {
        out.literal(&n.to_string())
    } else {
        out.string(&n.to_string())
    }
}

fn write_json<W: Write>(r: &Report, out: &mut JsonOut<W>) -> std::io::Result<()> {
    out.begin_object()?;
    out.name("file")?;
    out.string(&r.file)?;
    out.name("format")?;
    out.string(r.format)?;
    out.name("bytes")?;
    uint(out, r.size)?;
    if let Some((text, hash, message)) = &r.kiln {
        out.name("kiln")?;
        out.begin_object()?;
        out.name("type")?;
        out.string(text)?;
        out.name("framed")?;
        out.literal(if hash.is_some() { "true" } else { "false" })?;
        out.name("hash")?;
        match hash {
            Some(h) => out.string(&format!("{h:#018x}"))?,
            None => out.literal("null")?,
        }
        out.name("converted_from")?;
        match message {
            Some(m) => out.string(m.format_name())?,
            None => out.literal("null")?,
        }
        out.end_object()?;
    }
    if let Some((version, alignment)) = r.gguf {
        out.name("gguf")?;
        out.begin_object()?;
        out.name("version")?;
        uint(out, version.into())?;
        out.name("alignment")?;
        uint(out, alignment)?;
        out.end_object()?;
    }
    out.name("metadata")?;
    out.begin_array()?;
    for m in &r.meta {
        out.begin_object()?;
        out.name("key")?;
        out.string(&m.key)?;
        out.name("type")?;
        match &m.ty {
            Some(t) => out.string(t)?,
            None => out.literal("null")?,
        }
        out.name("value")?;
        out.literal(&m.json)?;
        out.end_object()?;
    }
    out.end_array()?;
    if r.omitted > 0 {
        out.name("omitted_values")?;
        uint(out, r.omitted)?;
    }
    out.name("directories")?;
    out.begin_array()?;
    for g in &r.groups {
        out.begin_object()?;
        out.name("path")?;
        match &g.path {
            Some(p) => out.string(&p.text())?,
            None => out.literal("null")?,
        }
        out.name("file")?;
        match &g.file {
            Some(f) => out.string(f)?,
            None => out.literal("null")?,
        }
        out.name("offset")?;
        uint(out, g.offset)?;
        out.name("bytes")?;
        uint(out, g.bytes)?;
        out.name("tensors")?;
        out.begin_array()?;
        for row in &g.rows {
            write_row(row, out)?;
        }
        out.end_array()?;
        out.end_object()?;
    }
    out.end_array()?;
    out.end_object()
}

fn write_row<W: Write>(row: &Row, out: &mut JsonOut<W>) -> std::io::Result<()> {
    let opt_str = |out: &mut JsonOut<W>, s: &Option<String>| match s {
        Some(s) => out.string(s),
        None => out.literal("null"),
    };
    let t = &row.facts;
    out.begin_object()?;
    out.name("index")?;
    uint(out, t.index as u64)?;
    out.name("name")?;
    opt_str(out, &t.name)?;
    out.name("dtype")?;
    match (&row.foreign, t.dtype) {
        (Some(f), _) => out.string(f)?,
        (None, DtypeCode::Closed(d)) => out.string(d.name())?,
        (None, DtypeCode::Opaque(code)) => uint(out, code.into())?,
    }
    out.name("layout")?;
    opt_str(out, &t.layout)?;
    out.name("block_size")?;
    uint(out, t.block_size.into())?;
    out.name("shape")?;
    out.begin_array()?;
    for &d in &t.shape {
        uint(out, d)?;
    }
    out.end_array()?;
    out.name("elements")?;
    match row.elements {
        Some(n) => uint(out, n)?,
        None => out.literal("null")?,
    }
    out.name("bytes")?;
    uint(out, t.range.len() as u64)?;
    out.name("offset")?;
    uint(out, t.range.start as u64)?;
    out.name("quant")?;
    let link = |out: &mut JsonOut<W>, axis: u16, group_size: u32, scales: usize| {
        out.name("axis")?;
        uint(out, axis.into())?;
        out.name("group_size")?;
        uint(out, group_size.into())?;
        out.name("scales")?;
        uint(out, scales as u64)?;
        out.name("scales_name")?;
        opt_str(out, &row.scales_name)
    };
    match t.quant {
        QuantLink::None => out.literal("null")?,
        QuantLink::Scales {
            axis,
            group_size,
            scales,
        } => {
            out.begin_object()?;
            link(out, axis, group_size, scales)?;
            out.end_object()?;
        }
        QuantLink::ScalesOuter {
            axis,
            group_size,
            scales,
            outer,
        } => {
            out.begin_object()?;
            link(out, axis, group_size, scales)?;
            out.name("outer")?;
            uint(out, outer as u64)?;
            out.name("outer_name")?;
            opt_str(out, &row.outer_name)?;
            out.end_object()?;
        }
    }
    let view = row.in_place();
    out.name("in_place")?;
    out.literal(if view.is_yes() { "true" } else { "false" })?;
    out.name("not_in_place")?;
    match view {
        InPlace::Yes => out.literal("null")?,
        _ => out.string(view.reason())?,
    }
    out.end_object()
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

/// A sharded checkpoint or a split set as one model: the set is checked
/// the way `kiln convert` checks it (a safetensors index's `weight_map`
/// against the shards' contents; a split set's numbering and counts), then
/// every file's tensors are listed, each group labelled with its file.
fn set_report(args: &InspectArgs, paths: &[std::path::PathBuf]) -> Result<Report, Failure> {
    let invalid = |e: kiln_convert::Error| Failure::convert(&e, &args.file, None);
    let inputs: Vec<(String, crate::common::Input)> = paths
        .iter()
        .map(|p| {
            let shown = p.to_string_lossy().into_owned();
            read_input(&shown).map(|bytes| (shown, bytes))
        })
        .collect::<Result<_, _>>()?;
    let base = |p: &str| -> String {
        std::path::Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let names: Vec<String> = inputs.iter().map(|(p, _)| base(p)).collect();
    let named: Vec<(&str, &[u8])> = names
        .iter()
        .zip(&inputs)
        .map(|(n, (_, b))| (n.as_str(), &b[..]))
        .collect();
    let gguf = named
        .first()
        .is_some_and(|(_, b)| b.starts_with(&kiln_convert::gguf::MAGIC));
    if gguf {
        kiln_convert::check_gguf_set(&named).map_err(invalid)?;
    } else {
        let index = read_input(&args.file)?;
        kiln_convert::check_safetensors_set(&index, &named).map_err(invalid)?;
    }
    let mut whole: Option<Report> = None;
    for (path, bytes) in &inputs {
        let mut one = if gguf {
            gguf_report(path, bytes)?
        } else {
            safetensors_report(path, bytes)?
        };
        for g in &mut one.groups {
            g.file = Some(base(path));
        }
        match &mut whole {
            None => whole = Some(one),
            Some(w) => {
                w.size += one.size;
                w.groups.append(&mut one.groups);
                // GGUF metadata repeats the split keys in every file; the
                // first file's pairs describe the model.
                if !gguf {
                    w.meta.append(&mut one.meta);
                }
            }
        }
    }
    let mut whole = whole.ok_or_else(|| {
        Failure::invalid(
            &args.file,
            crate::common::code::SAFETENSORS,
            "the index's weight_map names no shard",
            None,
        )
    })?;
    whole.file = format!("{} ({} files)", args.file, inputs.len());
    Ok(whole)
}

fn inspect(args: &InspectArgs) -> Result<(), Failure> {
    let report = match set_files(&args.file) {
        Some(paths) if args.type_text.is_none() => set_report(args, &paths)?,
        _ => report(args, &read_input(&args.file)?)?,
    };
    let stdout = std::io::stdout().lock();
    let mut w = BufWriter::new(stdout);
    let written = if args.json {
        let mut out = JsonOut::new(&mut w, true);
        write_json(&report, &mut out).and_then(|()| writeln!(out.into_inner()))
    } else {
        write_text(&report, &mut w)
    };
    crate::common::output_result(written.and_then(|()| w.flush()))
}

/// Runs `kiln inspect` with the arguments after `inspect`.
pub fn run(args: &[String]) -> ExitCode {
    crate::common::run_subcommand(args, parse_args, HELP, USAGE, inspect)
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
        assert_eq!(product(&[u64::MAX, 0]), Some(0));
        assert_eq!(product(&[u64::MAX, 2]), None);
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
