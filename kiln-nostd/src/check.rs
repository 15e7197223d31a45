//! Checking bytes against type text known only at run time, without
//! allocating: the type text is walked alongside the bytes, through the
//! same reader primitives the typed decoders use.

use crate::directory::Directory;
use crate::error::Result;
use crate::frame;
use crate::frozen::{list_cap, read_dict, read_opt, Decode};
use crate::limits::Limits;
use crate::schema::{Node, Scalar, TypeText};
use crate::wire::Reader;

/// Checks that `buf` is one valid value of the type `type_text` (inside a
/// frame when `framed`), under `limits`. Gives the verdict and error code
/// every Kiln reader gives for the same bytes.
///
/// ```
/// use kiln_nostd::{check, Code, Limits};
/// let ok = [2, 0, 0, 0, 1, 0];
/// assert!(check("list<u8>", &ok, false, Limits::DEFAULT).is_ok());
/// let short = [3, 0, 0, 0, 1, 0];
/// let err = check("list<u8>", &short, false, Limits::DEFAULT).unwrap_err();
/// assert_eq!(err.code(), Some(Code::Eof));
/// ```
pub fn check(type_text: &str, buf: &[u8], framed: bool, limits: Limits) -> Result<()> {
    let ty = TypeText::parse(type_text)?;
    let (body, base) = if framed {
        (frame::open(buf, ty.hash()?)?, frame::FRAME_LEN)
    } else {
        (buf, 0)
    };
    let mut r = Reader::new(body, limits);
    walk(ty, &mut r)
        .and_then(|()| r.finish())
        .map_err(|e| e.shifted(base))
}

/// Reads one value of type `ty`.
fn walk(ty: TypeText<'_>, r: &mut Reader<'_>) -> Result<()> {
    match ty.node()? {
        Node::Scalar(Scalar::Bool) => bool::decode(r).map(drop),
        Node::Scalar(scalar) => r.skip(scalar.width() as usize, scalar.name()),
        Node::Str => r.str().map(drop),
        Node::Tensors => Directory::decode(r).map(drop),
        Node::List(element) => r.nested(|r| {
            let of_u8 = element.is_u8();
            let cap = list_cap(r.limits(), of_u8);
            let min = element.min_size()?;
            let count = r.claim(cap, min, "list longer than the bytes that remain")?;
            match element.node()? {
                // Fixed-width numbers other than bool: the claim already
                // proved the bytes are there.
                Node::Scalar(s) if s != Scalar::Bool => {
                    r.skip((count as usize).saturating_mul(s.width() as usize), "list")
                }
                _ => (0..count).try_for_each(|_| walk(element, r)),
            }
        }),
        Node::Opt(inner) => read_opt(r, |r| walk(inner, r)).map(drop),
        Node::Dict(value) => {
            let min = value.min_size()?;
            read_dict(r, usize::MAX, min, |r, _, _| walk(value, r)).map(drop)
        }
        Node::Struct(fields) => r.nested(|r| {
            for field in fields {
                walk(field?.1, r)?;
            }
            Ok(())
        }),
    }
}
