//! Writers for the streaming-encode tests: a growable byte log that takes
//! at most `step` bytes per write (so the writer loops are exercised), for
//! embedded-io and embedded-io-async, and a one-thread executor for the
//! async encoder (its futures never wait on anything else).

#![allow(dead_code)]

/// Collects what is written, `step` bytes per call at most.
pub struct ShortWriter {
    pub bytes: Vec<u8>,
    pub step: usize,
    pub calls: usize,
}

impl ShortWriter {
    pub fn new(step: usize) -> Self {
        ShortWriter {
            bytes: Vec::new(),
            step,
            calls: 0,
        }
    }

    fn take(&mut self, buf: &[u8]) -> usize {
        let n = buf.len().min(self.step);
        self.bytes.extend_from_slice(&buf[..n]);
        self.calls += 1;
        n
    }
}

impl embedded_io::ErrorType for ShortWriter {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for ShortWriter {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        Ok(self.take(buf))
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(feature = "embedded-io-async")]
impl embedded_io_async::Write for ShortWriter {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        Ok(self.take(buf))
    }
}

/// Runs a future that never waits on another task to completion.
pub fn block_on<F: core::future::Future>(f: F) -> F::Output {
    let mut f = core::pin::pin!(f);
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    loop {
        if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
