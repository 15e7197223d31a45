//! `kiln inspect [--type TYPE] [--cap N] [--json] FILE`: what is inside a
//! Kiln message or directory, a safetensors file or a GGUF file.
//!
//! The format comes from the content (the frame magic `KLN0`, the directory
//! magic `KLNT`, `GGUF`, a safetensors header), the extension only when
//! the content says nothing. safetensors and GGUF files are read with
//! kiln-convert's readers; a Kiln value is walked with the core's walker,
//! which gives every `tensors` field its path (`batch`, `layers[2].w`) and
//! every other value its path and bytes. Files are memory-mapped.

use std::io::{BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use kiln_convert::gguf::Gguf;
use kiln_convert::{MessageType, LIMITS};
use kiln_nostd::walk::{ScalarValue, Span, Visitor};
use kiln_nostd::{
    frame, CompiledType, Directory, DtypeCode, Framing, Limits, Options, Quant, Scalar, TensorView,
};

use crate::common::{
    compile, human_count, human_size, read_input, unknown_option, ArgWalk, Failure,
};
use crate::decode::known_message;
use crate::jsonform::{write_value, Style};
use crate::jsontext::{f32_json, f64_json, quote, JsonOut, MAX_SAFE};

pub const USAGE: &str = "usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE";

const HELP: &str = "\
Shows what is inside a Kiln message or directory, a safetensors file or a
GGUF file: every tensor (name, dtype, shape, elements, size, offset in the
file, quantization links by name, opaque layout) and the metadata.

usage: kiln inspect [--type TYPE] [--cap N] [--json] FILE

  FILE         the file; - for standard input
  --type TYPE  the type of a Kiln value: needed for a framed message of a
               type other than the two `kiln convert` writes (the frame's
               hash does not tell the type) and for a bare value other than
               a directory
  --cap N      count cap and byte-run cap for a Kiln value (default
               4294967295, the wire maximum)
  --json       machine output (its shape: spec/json.md, section 8)

The format comes from the content (KLN0 frame, KLNT directory, GGUF magic,
safetensors header), from the extension (.kiln .safetensors .gguf) only when
the content says nothing. A GGUF file's shapes are shown outermost first and
its block types as the opaque Kiln dtypes of `kiln convert` (Q4_K is 4108),
so a file and its converted .kiln show the same rows.

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

/// Quantization links of one tensor.
struct Links {
    axis: u16,
    group_size: u32,
    scales: (usize, Option<String>),
    outer: Option<(usize, Option<String>)>,
}

/// One tensor.
struct Row {
    index: usize,
    name: Option<String>,
    /// Closed name, or the opaque code.
    dtype: DtypeCode,
    /// A dtype outside Kiln's (a safetensors `F4`), by its own name.
    foreign: Option<String>,
    layout: Option<String>,
    block_size: u32,
    shape: Vec<u64>,
    elements: Option<u64>,
    bytes: u64,
    offset: u64,
    links: Option<Links>,
}

/// One directory (or a safetensors/GGUF file's tensors).
struct Group {
    path: Option<String>,
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

fn row_of(t: &TensorView<'_>) -> Row {
    let link = |v: TensorView<'_>| (v.index(), v.name().map(String::from));
    let links = match t.quant() {
        Quant::None => None,
        Quant::Scales {
            axis,
            group_size,
            scales,
        } => Some(Links {
            axis,
            group_size,
            scales: link(scales),
            outer: None,
        }),
        Quant::ScalesOuter {
            axis,
            group_size,
            scales,
            outer,
        } => Some(Links {
            axis,
            group_size,
            scales: link(scales),
            outer: Some(link(outer)),
        }),
    };
    Row {
        index: t.index(),
        name: t.name().map(String::from),
        dtype: t.dtype(),
        foreign: None,
        layout: t.layout().map(String::from),
        block_size: t.block_size(),
        shape: t.shape().to_vec(),
        elements: Some(t.element_count()),
        bytes: t.byte_length(),
        offset: t.byte_range().start as u64,
        links,
    }
}

fn group_of(path: Option<String>, dir: &Directory<'_>) -> Group {
    Group {
        path,
        offset: dir.offset() as u64,
        bytes: dir.block_len() as u64,
        rows: dir.iter().map(|t| row_of(&t)).collect(),
    }
}

fn product(dims: &[u64]) -> Option<u64> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

// ---------------------------------------------------------------------------
// safetensors and GGUF

fn safetensors_report(file: &str, input: &[u8]) -> Result<Report, Failure> {
    let (n, meta) = kiln_convert::read_safetensors(input)
        .map_err(|e| Failure::invalid(format!("{file}: {e}")))?;
    let data_start = 8 + n as u64;
    let mut rows: Vec<Row> = meta
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            let (start, end) = info.data_offsets;
            let kiln = kiln_convert::kiln_dtype(info.dtype);
            Row {
                index: 0,
                name: Some(name),
                dtype: DtypeCode::Closed(kiln.unwrap_or(kiln_nostd::Dtype::U8)),
                foreign: kiln.is_none().then(|| info.dtype.to_string()),
                layout: None,
                block_size: 0,
                elements: product(&shape),
                shape,
                bytes: (end - start) as u64,
                offset: data_start + start as u64,
                links: None,
            }
        })
        .collect();
    rows.sort_by_key(|r| r.offset);
    for (i, row) in rows.iter_mut().enumerate() {
        row.index = i;
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
            offset: data_start,
            bytes: input.len() as u64 - data_start,
            rows,
        }],
        omitted: 0,
    })
}

/// A Kiln value's JSON form, compact, from its type text and bytes.
fn value_json(type_text: &str, bytes: &[u8]) -> String {
    let shown = CompiledType::<{ crate::common::TYPE_NODES }>::parse(type_text)
        .map(Box::new)
        .and_then(|ty| {
            let value = ty.decode_value(bytes, Options::BARE.with_limits(LIMITS))?;
            let mut out = JsonOut::new(Vec::new(), false);
            let style = Style {
                pretty: false,
                preview: Some(8),
            };
            let _ = write_value(ty.root(), &value, &mut out, style);
            Ok(String::from_utf8(out.into_inner()).unwrap_or_default())
        });
    shown.unwrap_or_else(|e| quote(&format!("(not a {type_text}: {e})")))
}

fn gguf_report(file: &str, input: &[u8]) -> Result<Report, Failure> {
    let gguf = Gguf::parse(input).map_err(|e| Failure::invalid(format!("{file}: {e}")))?;
    let mut meta = Vec::with_capacity(gguf.metadata.len());
    for kv in &gguf.metadata {
        let (ty, bytes) = kv
            .kiln_value()
            .map_err(|e| Failure::invalid(format!("{file}: {e}")))?;
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
            let opaque = t.ggml.closed.is_none();
            Row {
                index: i,
                name: Some(t.name.into()),
                dtype: t.ggml.kiln_dtype(),
                foreign: None,
                layout: opaque.then(|| t.ggml.name.to_string()),
                block_size: if opaque { t.ggml.block_bytes as u32 } else { 0 },
                elements: product(&shape),
                shape,
                bytes: t.data.len() as u64,
                offset: (t.data.as_ptr() as usize).saturating_sub(base) as u64,
                links: None,
            }
        })
        .collect();
    let start = rows.first().map_or(input.len() as u64, |r| r.offset);
    Ok(Report {
        file: file.into(),
        format: "gguf",
        size: input.len() as u64,
        kiln: None,
        gguf: Some((gguf.version, gguf.alignment)),
        meta,
        groups: vec![Group {
            path: None,
            offset: start,
            bytes: input.len() as u64 - start,
            rows,
        }],
        omitted: 0,
    })
}

// ---------------------------------------------------------------------------
// Kiln: the walker with paths

enum Seg {
    Field(String),
    Index(u32),
    Key(String),
}

enum Frame {
    List(u32),
    Other,
}

enum Leaf<'de> {
    Scalar(ScalarValue),
    Str(&'de str),
    Bytes(&'de [u8]),
    Numbers(Scalar, &'de [u8]),
    Text(String),
}

/// Most values a report lists; a value with millions of small fields is
/// summarized.
const MAX_LEAVES: usize = 10_000;

#[derive(Default)]
struct Collector<'de> {
    segs: Vec<Option<Seg>>,
    frames: Vec<Frame>,
    pending: Option<Seg>,
    dirs: Vec<(String, Directory<'de>)>,
    leaves: Vec<(String, Leaf<'de>)>,
    omitted: u64,
}

impl<'de> Collector<'de> {
    fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.segs.iter().flatten() {
            match seg {
                Seg::Field(name) if out.is_empty() => out.push_str(name),
                Seg::Field(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
                Seg::Key(k) => out.push_str(&format!("[{}]", quote(k))),
            }
        }
        out
    }

    fn begin(&mut self) {
        let seg = self
            .pending
            .take()
            .or_else(|| match self.frames.last_mut() {
                Some(Frame::List(next)) => {
                    let i = *next;
                    *next = next.saturating_add(1);
                    Some(Seg::Index(i))
                }
                _ => None,
            });
        self.segs.push(seg);
    }

    fn leaf(&mut self, leaf: Leaf<'de>) {
        if self.leaves.len() < MAX_LEAVES {
            let path = self.path();
            self.leaves.push((path, leaf));
        } else {
            self.omitted += 1;
        }
    }

    fn end(&mut self) {
        self.segs.pop();
    }

    fn close(&mut self) {
        self.frames.pop();
        self.segs.pop();
    }
}

impl<'de> Visitor<'de> for Collector<'de> {
    fn scalar(&mut self, _: usize, value: ScalarValue) -> kiln_nostd::Result<()> {
        self.begin();
        self.leaf(Leaf::Scalar(value));
        self.end();
        Ok(())
    }

    fn str(&mut self, _: Span, value: &'de str) -> kiln_nostd::Result<()> {
        self.begin();
        self.leaf(Leaf::Str(value));
        self.end();
        Ok(())
    }

    fn bytes(&mut self, _: Span, value: &'de [u8]) -> kiln_nostd::Result<()> {
        self.begin();
        self.leaf(Leaf::Bytes(value));
        self.end();
        Ok(())
    }

    fn begin_list(&mut self, _: usize, count: u32) -> kiln_nostd::Result<()> {
        self.begin();
        if count == 0 {
            self.leaf(Leaf::Text("[]".into()));
        }
        self.frames.push(Frame::List(0));
        Ok(())
    }

    fn numbers(&mut self, scalar: Scalar, _: Span, bytes: &'de [u8]) -> kiln_nostd::Result<()> {
        if !bytes.is_empty() {
            self.leaf(Leaf::Numbers(scalar, bytes));
        }
        Ok(())
    }

    fn repeat(&mut self, times: u32) -> kiln_nostd::Result<()> {
        self.leaf(Leaf::Text(format!(
            "{{\"count\":{}}}",
            u64::from(times) + 1
        )));
        Ok(())
    }

    fn end_list(&mut self) -> kiln_nostd::Result<()> {
        self.close();
        Ok(())
    }

    fn begin_opt(&mut self, _: usize, present: bool) -> kiln_nostd::Result<()> {
        self.begin();
        if !present {
            self.leaf(Leaf::Text("null".into()));
        }
        self.frames.push(Frame::Other);
        Ok(())
    }

    fn end_opt(&mut self) -> kiln_nostd::Result<()> {
        self.close();
        Ok(())
    }

    fn begin_dict(&mut self, _: usize, count: u32) -> kiln_nostd::Result<()> {
        self.begin();
        if count == 0 {
            self.leaf(Leaf::Text("{}".into()));
        }
        self.frames.push(Frame::Other);
        Ok(())
    }

    fn key(&mut self, _: Span, key: &'de str) -> kiln_nostd::Result<()> {
        self.pending = Some(Seg::Key(key.into()));
        Ok(())
    }

    fn end_dict(&mut self) -> kiln_nostd::Result<()> {
        self.close();
        Ok(())
    }

    fn begin_struct(&mut self, _: usize, fields: usize) -> kiln_nostd::Result<()> {
        self.begin();
        if fields == 0 {
            self.leaf(Leaf::Text("{}".into()));
        }
        self.frames.push(Frame::Other);
        Ok(())
    }

    fn field(&mut self, name: &str) -> kiln_nostd::Result<()> {
        self.pending = Some(Seg::Field(name.into()));
        Ok(())
    }

    fn end_struct(&mut self) -> kiln_nostd::Result<()> {
        self.close();
        Ok(())
    }

    fn tensors(&mut self, directory: Directory<'de>) -> kiln_nostd::Result<()> {
        self.begin();
        let path = self.path();
        self.dirs.push((path, directory));
        self.end();
        Ok(())
    }
}

fn scalar_json(v: ScalarValue) -> String {
    match v {
        ScalarValue::Bool(b) => b.to_string(),
        ScalarValue::I8(n) => n.to_string(),
        ScalarValue::U8(n) => n.to_string(),
        ScalarValue::I16(n) => n.to_string(),
        ScalarValue::U16(n) => n.to_string(),
        ScalarValue::I32(n) => n.to_string(),
        ScalarValue::U32(n) => n.to_string(),
        ScalarValue::I64(n) | ScalarValue::Int(n) => quote(&n.to_string()),
        ScalarValue::U64(n) | ScalarValue::Uint(n) => quote(&n.to_string()),
        ScalarValue::F32(x) => float_json(f32_json(x)),
        ScalarValue::F64(x) => float_json(f64_json(x)),
    }
}

fn float_json((number, text): (bool, String)) -> String {
    if number {
        text
    } else {
        quote(&text)
    }
}

fn leaf_json(leaf: &Leaf<'_>) -> String {
    match leaf {
        Leaf::Scalar(v) => scalar_json(*v),
        Leaf::Str(s) => quote(s),
        Leaf::Bytes(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            quote(&hex)
        }
        Leaf::Numbers(scalar, bytes) => {
            let width = scalar.width() as usize;
            let mut r = kiln_nostd::Reader::new(bytes, Limits::DEFAULT);
            let mut items = Vec::with_capacity(bytes.len() / width.max(1));
            while r.remaining() >= width {
                match ScalarValue::read(*scalar, &mut r) {
                    Ok(v) => items.push(scalar_json(v)),
                    Err(_) => break,
                }
            }
            format!("[{}]", items.join(","))
        }
        Leaf::Text(t) => t.clone(),
    }
}

/// A field of a conversion message that places the model (a set's file
/// names and index, a directory's alignment zeros) rather than holds its
/// metadata.
fn is_conversion_field(path: &str) -> bool {
    path == "index_file" || path == "index" || path.ends_with("].file") || path.ends_with("].align")
}

fn kiln_report(
    file: &str,
    input: &[u8],
    type_text: &str,
    framed: bool,
    message: Option<MessageType>,
    limits: Limits,
) -> Result<Report, Failure> {
    let ty = compile(type_text)?;
    let options = Options {
        framing: if framed {
            Framing::Framed
        } else {
            Framing::Bare
        },
        limits,
    };
    let mut c = Collector::default();
    ty.walk(input, options, &mut c)
        .map_err(|e| Failure::kiln(file, e))?;
    let mut meta = Vec::new();
    let mut gguf = None;
    match message {
        Some(MessageType::Gguf) => {
            // version, then metadata[i].key, .type, .value: one entry per
            // pair; the version and alignment as for a GGUF file.
            let (mut key, mut kind) = (String::new(), String::new());
            let mut alignment = kiln_convert::gguf::DEFAULT_ALIGNMENT;
            for (path, leaf) in &c.leaves {
                match leaf {
                    // The conversion message's own placing fields (file
                    // names of a set, alignment zeros) are not metadata.
                    _ if is_conversion_field(path) => {}
                    Leaf::Scalar(ScalarValue::U32(v)) if path.ends_with("].version") => {
                        gguf = Some((*v, alignment))
                    }
                    Leaf::Bytes(b)
                        if path.ends_with("].value")
                            && key == kiln_convert::gguf::ALIGNMENT_KEY
                            && kind == "u32" =>
                    {
                        if let Ok(a) = <[u8; 4]>::try_from(*b) {
                            alignment = u32::from_le_bytes(a).into();
                            gguf = gguf.map(|(v, _)| (v, alignment));
                        }
                        meta.push(Meta {
                            key: std::mem::take(&mut key),
                            json: value_json(&kind, b),
                            ty: Some(std::mem::take(&mut kind)),
                        })
                    }
                    Leaf::Str(s) if path.ends_with("].key") => key = s.to_string(),
                    Leaf::Str(s) if path.ends_with("].value_type") => kind = s.to_string(),
                    Leaf::Bytes(b) if path.ends_with("].value") => meta.push(Meta {
                        key: std::mem::take(&mut key),
                        json: value_json(&kind, b),
                        ty: Some(std::mem::take(&mut kind)),
                    }),
                    _ => meta.push(Meta {
                        key: path.clone(),
                        ty: None,
                        json: leaf_json(leaf),
                    }),
                }
            }
        }
        Some(MessageType::Safetensors) => {
            for (path, leaf) in c.leaves.iter().filter(|(p, _)| !is_conversion_field(p)) {
                let key = match leaf {
                    Leaf::Str(_) => path
                        .split_once("].metadata[")
                        .and_then(|(_, k)| k.strip_suffix(']'))
                        .and_then(|k| serde_json::from_str::<String>(k).ok()),
                    _ => None,
                };
                meta.push(Meta {
                    ty: key.is_some().then(|| "str".to_string()),
                    key: key.unwrap_or_else(|| path.clone()),
                    json: leaf_json(leaf),
                });
            }
        }
        None => {
            for (path, leaf) in &c.leaves {
                meta.push(Meta {
                    key: if path.is_empty() {
                        "(value)".into()
                    } else {
                        path.clone()
                    },
                    ty: None,
                    json: leaf_json(leaf),
                });
            }
        }
    }
    let hash = framed.then(|| ty.hash());
    Ok(Report {
        file: file.into(),
        format: "kiln",
        size: input.len() as u64,
        kiln: Some((type_text.to_string(), hash, message)),
        gguf,
        meta,
        groups: c
            .dirs
            .iter()
            .map(|(path, dir)| group_of(Some(path.clone()), dir))
            .collect(),
        omitted: c.omitted,
    })
}

/// Which format FILE holds: from its bytes, else its extension.
fn report(args: &InspectArgs, input: &[u8]) -> Result<Report, Failure> {
    let file = args.file.as_str();
    let framed = input.starts_with(&frame::FRAME_MAGIC);
    if let Some(type_text) = &args.type_text {
        return kiln_report(file, input, type_text, framed, None, args.limits);
    }
    if framed {
        if let Some(message) = known_message(input) {
            return kiln_report(
                file,
                input,
                message.type_text(),
                true,
                Some(message),
                args.limits,
            );
        }
        let hash = input
            .get(8..16)
            .and_then(|h| h.try_into().ok())
            .map(u64::from_le_bytes);
        return Err(match hash {
            Some(hash) => Failure::usage(format!(
                "{file} is a framed Kiln message of a type other than the two `kiln convert` \
                 writes (schema hash {hash:#018x}); the hash does not tell the type: give it \
                 with --type TYPE"
            )),
            None => Failure::invalid(format!(
                "{file}: EOF: the file ends inside the 16-byte Kiln frame at byte {}",
                input.len()
            )),
        });
    }
    if input.starts_with(&kiln_nostd::directory::MAGIC) {
        return kiln_report(file, input, "tensors", false, None, args.limits);
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
        Some("kiln") => {
            kiln_report(file, input, "tensors", false, None, args.limits).map_err(|mut f| {
                f.message.push_str(
                    " (read as a bare tensor directory: neither KLN0 nor KLNT starts the file; \
                     a bare value of another type needs --type TYPE)",
                );
                f
            })
        }
        _ => Err(Failure::invalid(format!(
            "{file}: at byte 0: not a Kiln message (KLN0) or directory (KLNT), GGUF or safetensors file, \
             and its name does not end in .kiln, .gguf or .safetensors"
        ))),
    }
}

// ---------------------------------------------------------------------------
// Output

fn dtype_text(row: &Row) -> String {
    if let Some(f) = &row.foreign {
        return f.clone();
    }
    match (row.dtype, &row.layout) {
        (DtypeCode::Closed(d), _) => d.name().into(),
        (DtypeCode::Opaque(code), Some(layout)) => format!("{layout} ({code})"),
        (DtypeCode::Opaque(code), None) => format!("opaque({code})"),
    }
}

fn link_name((index, name): &(usize, Option<String>)) -> String {
    match name {
        Some(name) => name.clone(),
        None => format!("#{index}"),
    }
}

fn notes(row: &Row) -> String {
    let mut out = Vec::new();
    if let Some(l) = &row.links {
        out.push(format!(
            "scales {} (axis {}, groups of {})",
            link_name(&l.scales),
            l.axis,
            l.group_size
        ));
        if let Some(outer) = &l.outer {
            out.push(format!("outer {}", link_name(outer)));
        }
    }
    if row.block_size > 0 {
        out.push(format!("blocks of {} B", row.block_size));
    }
    if row.foreign.is_some() {
        out.push("no Kiln dtype".into());
    }
    out.join("; ")
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
        let label = match &g.path {
            Some(p) if p.is_empty() => "directory (the whole value)".to_string(),
            Some(p) => format!("directory at {p}"),
            None => "tensors".to_string(),
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
        let cells: Vec<[String; 8]> = g
            .rows
            .iter()
            .map(|row| {
                [
                    row.index.to_string(),
                    row.name.clone().unwrap_or_else(|| "-".into()),
                    dtype_text(row),
                    shape_text(&row.shape),
                    row.elements.map_or("?".into(), human_count),
                    human_size(row.bytes),
                    row.offset.to_string(),
                    notes(row),
                ]
            })
            .collect();
        let heads = [
            "#", "name", "dtype", "shape", "elements", "size", "offset", "links",
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
                .filter(|(i, _)| *i != 1 && *i != 7)
                .map(|(_, w)| w + 2)
                .sum::<usize>()
                + 2;
            let room = w.saturating_sub(others + widths[7] + 2);
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
            Some(p) => out.string(p)?,
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
    out.begin_object()?;
    out.name("index")?;
    uint(out, row.index as u64)?;
    out.name("name")?;
    opt_str(out, &row.name)?;
    out.name("dtype")?;
    match (&row.foreign, row.dtype) {
        (Some(f), _) => out.string(f)?,
        (None, DtypeCode::Closed(d)) => out.string(d.name())?,
        (None, DtypeCode::Opaque(code)) => uint(out, code.into())?,
    }
    out.name("layout")?;
    opt_str(out, &row.layout)?;
    out.name("block_size")?;
    uint(out, row.block_size.into())?;
    out.name("shape")?;
    out.begin_array()?;
    for &d in &row.shape {
        uint(out, d)?;
    }
    out.end_array()?;
    out.name("elements")?;
    match row.elements {
        Some(n) => uint(out, n)?,
        None => out.literal("null")?,
    }
    out.name("bytes")?;
    uint(out, row.bytes)?;
    out.name("offset")?;
    uint(out, row.offset)?;
    out.name("quant")?;
    match &row.links {
        None => out.literal("null")?,
        Some(l) => {
            out.begin_object()?;
            out.name("axis")?;
            uint(out, l.axis.into())?;
            out.name("group_size")?;
            uint(out, l.group_size.into())?;
            out.name("scales")?;
            uint(out, l.scales.0 as u64)?;
            out.name("scales_name")?;
            opt_str(out, &l.scales.1)?;
            if let Some(outer) = &l.outer {
                out.name("outer")?;
                uint(out, outer.0 as u64)?;
                out.name("outer_name")?;
                opt_str(out, &outer.1)?;
            }
            out.end_object()?;
        }
    }
    out.end_object()
}

fn inspect(args: &InspectArgs) -> Result<(), Failure> {
    let input = read_input(&args.file)?;
    let report = report(args, &input)?;
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
