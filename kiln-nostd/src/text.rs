//! Text without `core::fmt` (which the browser's core module leaves out):
//! decimals and JSON string literals, for the JSON writer and for paths.

use alloc::string::String;

pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `text` as a JSON string literal: `"`, `\` and the control
/// characters below U+0020 escaped (`\n \r \t \b \f`, else `\u00xx` in
/// lowercase hex), nothing else.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.push('"');
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let escaped = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(text.get(start..i).unwrap_or(""));
        if escaped.is_empty() {
            let b = c as usize;
            out.push_str("\\u00");
            for digit in [b >> 4, b & 15] {
                out.push(HEX.get(digit).map_or('0', |&h| char::from(h)));
            }
        } else {
            out.push_str(escaped);
        }
        start = i + c.len_utf8();
    }
    out.push_str(text.get(start..).unwrap_or(""));
    out.push('"');
}

/// `n`'s decimal digits, at the end of `digits` (without `core::fmt`,
/// which the browser's core module leaves out).
pub(crate) fn decimal(digits: &mut [u8; 20], n: u64) -> &[u8] {
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    digits.get(i..).unwrap_or(&[])
}

/// Appends `n` in decimal.
pub(crate) fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    for &d in decimal(&mut digits, n) {
        out.push(char::from(d));
    }
}
