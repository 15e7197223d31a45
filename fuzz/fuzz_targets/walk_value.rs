//! The walker with a visitor that checks every position it is told (each
//! span inside the buffer, each string and byte run the bytes at its
//! span, events nested properly), `Value` decode and encode: the same
//! verdict as `check`, and an accepted value encodes to the same bytes.
#![no_main]

use kiln_fuzz::{split, verdict, Ty, Verdict};
use kiln_nostd::{Directory, Result, Scalar, ScalarValue, Span, Visitor};
use libfuzzer_sys::fuzz_target;

struct Positions<'a> {
    buf: &'a [u8],
    open: Vec<char>,
    events: u64,
}

impl<'a> Positions<'a> {
    fn span(&mut self, span: &Span) -> &'a [u8] {
        self.events += 1;
        assert!(
            span.start <= span.end && span.end <= self.buf.len(),
            "{span:?}"
        );
        &self.buf[span.clone()]
    }
    fn at(&mut self, at: usize) {
        self.events += 1;
        assert!(at <= self.buf.len());
    }
    fn close(&mut self, kind: char) -> Result<()> {
        assert_eq!(self.open.pop(), Some(kind));
        Ok(())
    }
}

impl<'de> Visitor<'de> for Positions<'de> {
    fn scalar(&mut self, at: usize, _: ScalarValue) -> Result<()> {
        self.at(at);
        Ok(())
    }
    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        assert_eq!(self.span(&span), value.as_bytes());
        Ok(())
    }
    fn bytes(&mut self, span: Span, value: &'de [u8]) -> Result<()> {
        assert_eq!(self.span(&span), value);
        Ok(())
    }
    fn begin_list(&mut self, at: usize, _: u32) -> Result<()> {
        self.at(at);
        self.open.push('l');
        Ok(())
    }
    fn numbers(&mut self, scalar: Scalar, span: Span, bytes: &'de [u8]) -> Result<()> {
        assert_eq!(self.span(&span), bytes);
        assert_eq!(bytes.len() % scalar.width() as usize, 0);
        Ok(())
    }
    fn repeat(&mut self, _: u32) -> Result<()> {
        assert_eq!(self.open.last(), Some(&'l'));
        Ok(())
    }
    fn end_list(&mut self) -> Result<()> {
        self.close('l')
    }
    fn begin_opt(&mut self, at: usize, _: bool) -> Result<()> {
        self.at(at);
        self.open.push('o');
        Ok(())
    }
    fn end_opt(&mut self) -> Result<()> {
        self.close('o')
    }
    fn begin_dict(&mut self, at: usize, _: u32) -> Result<()> {
        self.at(at);
        self.open.push('d');
        Ok(())
    }
    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        assert_eq!(self.span(&span), key.as_bytes());
        Ok(())
    }
    fn end_dict(&mut self) -> Result<()> {
        self.close('d')
    }
    fn begin_struct(&mut self, at: usize, _: usize) -> Result<()> {
        self.at(at);
        self.open.push('s');
        Ok(())
    }
    fn end_struct(&mut self) -> Result<()> {
        self.close('s')
    }
    fn tensors(&mut self, directory: Directory<'de>) -> Result<()> {
        let range = directory.byte_range();
        assert_eq!(self.span(&range), directory.as_bytes());
        for t in directory.iter() {
            let r = t.byte_range();
            assert!(r.end <= self.buf.len());
            assert_eq!(&self.buf[r], t.bytes());
        }
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = split(data) else { return };
    let len = input.bytes.len();
    let ty = Ty::parse(input.type_text).expect("types.txt parses");
    let checked = verdict(&ty.check(input.bytes, input.options), len);

    let mut positions = Positions {
        buf: input.bytes,
        open: Vec::new(),
        events: 0,
    };
    let walked = ty.walk(input.bytes, input.options, &mut positions);
    assert_eq!(verdict(&walked, len), checked);
    if walked.is_ok() {
        assert!(positions.open.is_empty());
    }
    // Work is bounded by the input: a zero-size list is one element.
    assert!(
        positions.events <= 8 * len as u64 + 256,
        "{} events",
        positions.events
    );

    let value = ty.decode_value(input.bytes, input.options);
    assert_eq!(verdict(&value, len), checked);
    if let Ok(value) = value {
        let again = ty
            .encode_value(&value, input.options)
            .expect("an accepted value encodes");
        assert_eq!(
            again, input.bytes,
            "decode then encode gives the same bytes"
        );
        assert_eq!(
            verdict(&ty.check(&again, input.options), again.len()),
            Verdict::Accept
        );
    }
});
