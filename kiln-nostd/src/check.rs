//! Checking bytes against type text known only at run time, without
//! allocating: the text is compiled once into a node table on the stack,
//! then the walker runs with a visitor that does nothing.

use crate::error::Result;
use crate::limits::Options;
use crate::schema::{CompiledType, DEFAULT_NODES};

/// Checks that `buf` is one valid value of the type `type_text` (framed or
/// bare, under the caps in `options`). Gives the verdict and error code
/// every Kiln reader gives for the same bytes. Type text of more than
/// [`DEFAULT_NODES`] nodes is refused here; compile it into a larger
/// [`CompiledType`] and call [`CompiledType::check`] for that.
///
/// ```
/// use kiln_nostd::{check, Code, Options};
/// let ok = [2, 0, 0, 0, 1, 0];
/// assert!(check("list<u8>", &ok, Options::BARE).is_ok());
/// let short = [3, 0, 0, 0, 1, 0];
/// let err = check("list<u8>", &short, Options::BARE).unwrap_err();
/// assert_eq!(err.code(), Some(Code::Eof));
/// ```
pub fn check(type_text: &str, buf: &[u8], options: Options) -> Result<()> {
    CompiledType::<DEFAULT_NODES>::parse(type_text)?.check(buf, options)
}
