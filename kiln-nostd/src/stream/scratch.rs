//! The scratch a message needs, worked out from its bytes before any
//! scratch is given.

use super::checker::Checker;
use crate::limits::Options;
use crate::schema::CompiledType;

/// The scratch a message needs, in bytes: the exact figures, each the
/// smallest that works (one byte fewer is refused, [`Refusal::Capacity`]).
///
/// [`Refusal::Capacity`]: crate::Refusal::Capacity
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Scratch {
    /// For a check: [`super::Checker`], [`super::check_at`],
    /// `check_from`. The [`super::Report::scratch_needed`] of a check with
    /// room to spare.
    pub check: usize,
    /// For a decode, `decode_from`: the scratch also keeps the record's
    /// bytes (the message outside its payload regions).
    pub decode: usize,
}

/// The scratch that checking or decoding `message` as a stream needs,
/// exactly, worked out from the message's bytes with no scratch and no
/// allocation: the same rules in the same order as [`super::Checker`],
/// which reads the bytes from `message` where it would hold them and
/// only counts what it would hold. A program that knows the messages it
/// will receive (a model update, the largest of a sensor's records) sizes
/// its buffer from them, on the host, before the firmware is built.
///
/// The figures are those of the length known ([`Checker::with_len`],
/// [`super::check_at`]); for a valid message they are the same when the
/// length is not ([`Checker::new`], `check_from`, `decode_from`). For an
/// invalid one they are the scratch that reaches its first fault, which a
/// check with that scratch reports.
///
/// ```
/// use kiln_nostd::stream::{check_at, scratch_for};
/// use kiln_nostd::{CompiledType, Directory, Options, Refusal, TensorSpec};
///
/// let weights = [0.5f32; 256];
/// let mut block = vec![0u8; 2048];
/// let dir = Directory::build(&[TensorSpec::from_host(&[256], &weights).named("w")], &mut block).unwrap();
/// let message: &[u8] = dir.as_bytes();
/// let ty = CompiledType::<4>::parse("tensors").unwrap();
/// let need = scratch_for(&ty, message, Options::BARE);
/// assert_eq!(need.check, 257); // the 256-byte head, and a byte for payload bytes
/// let mut scratch = vec![0u8; need.check];
/// assert!(check_at(&ty, message, Options::BARE, &mut scratch).is_ok());
/// let refused = check_at(&ty, message, Options::BARE, &mut scratch[..need.check - 1]);
/// assert_eq!(refused.unwrap_err().refusal(), Some(Refusal::Capacity));
/// ```
pub fn scratch_for<const N: usize>(
    ty: &CompiledType<'_, N>,
    message: &[u8],
    options: Options,
) -> Scratch {
    Scratch {
        check: measure(ty, message, options, false),
        decode: measure(ty, message, options, true),
    }
}

/// The most a check of `message` holds, keeping the record or not.
fn measure<const N: usize>(
    ty: &CompiledType<'_, N>,
    message: &[u8],
    options: Options,
    record: bool,
) -> usize {
    let mut none: [u8; 0] = [];
    let checker = Checker::with_len(ty, options, &mut none, message.len() as u64);
    let mut checker = if record {
        checker.keeping_record()
    } else {
        checker
    }
    .measuring(message);
    // All of it at once; a fault ends the count where the check stops.
    if checker.feed(message).is_ok() {
        // A head that ends the message waits for the next call.
        let _ = checker.need();
    }
    checker.report().scratch_needed
}

/// Enough scratch for every message of type `ty` whose counts and byte runs
/// are within `options`' caps, from the type alone: a `const fn`, for a
/// buffer sized when the firmware is built. A bound, not a message's
/// figure: for a type whose values all hold the same (scalars, structs of
/// them) it is the figure, and otherwise it is what the largest value the
/// caps allow would hold (a dict key of `byte_cap` bytes, a head of
/// `count_cap` descriptors and a `byte_cap` name heap, a record of
/// `count_cap` elements), which [`scratch_for`] of any message never
/// exceeds. Caps a receiver sets to what it expects keep it small; under
/// the default caps a type with a `tensors` field, a dict or a `str` is
/// bounded only by gigabytes. Figures past `usize` are `usize::MAX`.
///
/// ```
/// use kiln_nostd::stream::{scratch_bound, Scratch};
/// use kiln_nostd::{CompiledType, Limits, Options, Schema, Scalar};
///
/// // A reading: struct{id:u32,temp:f32,} (a derived type's SCHEMA too).
/// const READING: CompiledType<'static, 4> = CompiledType::from_schema(&Schema::Struct(&[
///     kiln_nostd::Field { name: "id", ty: &Schema::Scalar(Scalar::U32) },
///     kiln_nostd::Field { name: "temp", ty: &Schema::Scalar(Scalar::F32) },
/// ]));
/// const NEED: Scratch = scratch_bound(&READING, Options::FRAMED);
/// static SCRATCH: [u8; NEED.decode] = [0; NEED.decode];
/// assert_eq!((NEED.check, SCRATCH.len()), (16, 24)); // the frame; the frame and the record
///
/// // A directory of at most 4 tensors named in 64 bytes in all.
/// let ty = CompiledType::<4>::parse("struct{step:u32,weights:tensors,}").unwrap();
/// let caps = Options::BARE.with_limits(Limits { count_cap: 4, byte_cap: 64 });
/// assert_eq!(scratch_bound(&ty, caps).check, 64 + 4 * 128 + 64 + 1);
/// ```
pub const fn scratch_bound<const N: usize>(ty: &CompiledType<'_, N>, options: Options) -> Scratch {
    let (held, image, head) = ty.stream_bounds(options.limits);
    let (check, decode) = if options.is_framed() {
        let frame = crate::frame::FRAME_LEN as u64;
        let check = if held > frame { held } else { frame };
        (check, frame.saturating_add(image).saturating_add(head))
    } else {
        (held, image.saturating_add(head))
    };
    Scratch {
        check: to_usize(check),
        decode: to_usize(decode),
    }
}

const fn to_usize(n: u64) -> usize {
    if n > usize::MAX as u64 {
        usize::MAX
    } else {
        n as usize
    }
}
