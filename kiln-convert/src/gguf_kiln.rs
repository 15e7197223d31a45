//! GGUF ⇄ Kiln.

use std::collections::HashSet;
use std::io::Write;

use kiln_nostd::{frame, DtypeCode, Encode, Quant, TensorSpec, Tensors};

use crate::error::{Error, Result};
use crate::gguf::cursor::Cursor;
use crate::gguf::value::{self, GgufValue};
use crate::gguf::{
    alignment_value, write_gguf, GgmlType, Gguf, GgufOut, TensorOut, ALIGNMENT_KEY,
    DEFAULT_ALIGNMENT,
};
use crate::heap::check_heap;
use crate::message::{self, MessageType, LIMITS};
use crate::sink::WriteSink;
use crate::Summary;

/// Converts a GGUF file to one framed Kiln message of type
/// [`message::GGUF_MESSAGE`], written to `out`.
///
/// Every metadata pair is kept in file order with its GGUF type (as the
/// Kiln type text of its value, see [`crate::gguf::value`]). The tensors go
/// into the directory in GGUF order: plain types as closed dtypes, block
/// types as opaque dtype `4096 + ggml id` with the ggml type name as the
/// layout name and the block's bytes as the block size. GGUF's dimensions
/// (innermost first) become Kiln's shape (outermost first). Each payload
/// is copied once from `input` to `out`.
pub fn gguf_to_kiln<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    let file = Gguf::parse(input)?;
    let mut entries = Vec::with_capacity(file.metadata.len());
    for kv in &file.metadata {
        let mut c = Cursor::starting_at(input, kv.offset as usize);
        let mut bytes = Vec::with_capacity(kv.raw.len());
        let text = value::gguf_to_kiln(&mut c, kv.value_type, 0, &mut bytes)
            .map_err(|e| e.in_key(kv.key))?;
        entries.push((kv.key, text, bytes));
    }

    let shapes: Vec<Vec<u64>> = file
        .tensors
        .iter()
        .map(|t| t.dims.iter().rev().copied().collect())
        .collect();
    let layout = |t: &crate::gguf::TensorInfo<'_>| t.ggml.closed.is_none().then_some(t.ggml.name);
    check_heap(
        file.tensors.iter().map(|t| (t.name, layout(t))),
        "the GGUF file",
    )?;
    let mut specs = Vec::with_capacity(file.tensors.len());
    let mut payload_bytes = 0u64;
    for (t, shape) in file.tensors.iter().zip(&shapes) {
        payload_bytes += t.data.len() as u64;
        let spec = match t.ggml.kiln_dtype() {
            DtypeCode::Closed(d) => TensorSpec::new(d, shape, t.data),
            DtypeCode::Opaque(code) => {
                // Block sizes in the table are below 2^32.
                TensorSpec::opaque(code, t.ggml.name, t.ggml.block_bytes as u32, shape, t.data)
            }
        };
        specs.push(spec.named(t.name));
    }

    let written = crate::sink::write_message(out, |w| {
        frame::write_header(w, MessageType::Gguf.hash())?;
        w.u32(file.version)?;
        w.count(entries.len(), LIMITS.count_cap)?;
        for (key, text, bytes) in &entries {
            key.encode(w)?;
            text.as_str().encode(w)?;
            w.byte_run(bytes)?;
        }
        Tensors(&specs).encode(w)
    })?;
    Ok(Summary {
        tensors: specs.len(),
        metadata: entries.len(),
        payload_bytes,
        written,
    })
}

/// Reads a Kiln message of type [`message::GGUF_MESSAGE`] into what the
/// GGUF writer needs; tensor data stays borrowed.
fn kiln_gguf_parts(input: &[u8]) -> Result<GgufOut<'_>> {
    let mut fields = message::open(input, MessageType::Gguf)?;
    let version_at = fields.position();
    let version = fields.u32()?;
    if !(2..=3).contains(&version) {
        return Err(Error::kiln(
            Some(version_at as u64),
            format!("GGUF version {version}: only versions 2 and 3 can be written"),
        ));
    }
    let count = fields.u32()?;
    // The message passed the Kiln count check, so `count` entries of at
    // least 12 bytes are there.
    let mut metadata = Vec::with_capacity(count as usize);
    let mut keys = HashSet::new();
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..count {
        let key_at = fields.position();
        let key = fields.str()?;
        if !keys.insert(key) {
            return Err(Error::kiln(
                Some(key_at as u64),
                format!("metadata key {key:?} appears twice; GGUF keys are unique"),
            ));
        }
        let text = fields.str()?;
        let value_at = fields.position() + 4;
        let bytes = fields.bytes()?;
        let value: GgufValue = value::kiln_to_gguf(key, text, bytes, value_at, 0)?;
        if key == ALIGNMENT_KEY {
            alignment = alignment_value(value.ty, &value.bytes)
                .map_err(|what| Error::kiln(Some(value_at as u64), what))?;
        }
        metadata.push((key, value));
    }
    let dir = fields.directory()?;
    let mut tensors = Vec::with_capacity(dir.len());
    for t in &dir {
        let name = t.name().ok_or_else(|| {
            Error::unsupported(format!("tensor {} has no name; GGUF needs one", t.index()))
        })?;
        let ggml = GgmlType::from_kiln(t.dtype()).ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {name:?} has Kiln dtype {}, which has no ggml type",
                match t.dtype() {
                    DtypeCode::Closed(d) => d.name().to_string(),
                    DtypeCode::Opaque(c) => format!("{c}"),
                }
            ))
        })?;
        if ggml.closed.is_none()
            && (t.layout() != Some(ggml.name) || u64::from(t.block_size()) != ggml.block_bytes)
        {
            return Err(Error::unsupported(format!(
                "tensor {name:?}: opaque dtype {} stands for ggml {} (block of {} bytes), but \
                 the tensor says layout {:?} with blocks of {} bytes",
                t.dtype().code(),
                ggml.name,
                ggml.block_bytes,
                t.layout().unwrap_or(""),
                t.block_size()
            )));
        }
        if t.quant() != Quant::None {
            return Err(Error::unsupported(format!(
                "tensor {name:?} links scale tensors; GGUF cannot record that"
            )));
        }
        let dims: Vec<u64> = t.shape().iter().rev().copied().collect();
        let expected = ggml.byte_len(&dims).map_err(|what| {
            Error::unsupported(format!(
                "tensor {name:?} of ggml type {} and shape {:?}: {what}",
                ggml.name,
                t.shape()
            ))
        })?;
        if expected != t.bytes().len() as u64 {
            return Err(Error::unsupported(format!(
                "tensor {name:?} of ggml type {} and shape {:?} needs {expected} bytes, not {}",
                ggml.name,
                t.shape(),
                t.bytes().len()
            )));
        }
        tensors.push(TensorOut {
            name,
            dims,
            ggml,
            data: t.bytes(),
        });
    }
    Ok(GgufOut {
        version,
        alignment,
        metadata,
        tensors,
    })
}

/// Converts a Kiln message of type [`message::GGUF_MESSAGE`] back to a GGUF
/// file, written to `out`: the same version, metadata pairs in the same
/// order with the same types, tensors in the same order with the same
/// types and dimensions, data at the same aligned offsets.
pub fn kiln_to_gguf<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    let file = kiln_gguf_parts(input)?;
    let mut sink = WriteSink::new(out);
    write_gguf(&file, &mut sink)?;
    let (_, written) = sink.finish()?;
    Ok(Summary {
        tensors: file.tensors.len(),
        metadata: file.metadata.len(),
        payload_bytes: file.tensors.iter().map(|t| t.data.len() as u64).sum(),
        written,
    })
}
