//! The slow-input oracle. libFuzzer's `-timeout` counts whole seconds and
//! misses an input that takes half a second; this target times each call
//! and fails when one takes longer than 100 ms on an input under 4 KiB.
//! A call over the bound in wall time is run three more times and measured
//! in this thread's CPU time (`/proc/thread-self/stat`, 10 ms ticks), and
//! only the fastest of those counts, so a busy machine that takes the CPU
//! away does not fail it. That
//! is what finds work that grows faster than the input: `check`, `Value`
//! decode and encode, `Directory::parse`, a typed decoder with nested
//! zero-size lists, and both converters' readers.
#![no_main]

use std::time::{Duration, Instant};

use kiln_fuzz::{split, Ty};
use kiln_nostd::{from_bytes, Directory, Empty, Frozen, Limits};
use libfuzzer_sys::fuzz_target;

/// The bound for one call on an input under [`SMALL`] bytes.
const BOUND: Duration = Duration::from_millis(100);
const SMALL: usize = 4096;

#[derive(Frozen)]
#[allow(dead_code)]
struct Owned {
    nested: Vec<Vec<Empty>>,
    words: Vec<String>,
    map: heapless::LinearMap<heapless::String<8>, Vec<Empty>, 4>,
}

/// CPU time this thread has used (user and system), from
/// `/proc/thread-self/stat` in clock ticks of 10 ms (USER_HZ is 100 on
/// Linux); wall time where that file cannot be read.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name, which is in parentheses: state is
    // the first, utime the 12th and stime the 13th.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split(' ').skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Runs `call`; when it takes longer than [`BOUND`], runs it three more
/// times timed by this thread's CPU time, and fails when even the fastest
/// of those took longer than the bound.
fn bounded(what: &str, data: &[u8], mut call: impl FnMut()) {
    let start = Instant::now();
    call();
    if start.elapsed() <= BOUND {
        return;
    }
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let (wall, cpu) = (Instant::now(), thread_cpu());
        call();
        let took = match (cpu, thread_cpu()) {
            (Some(before), Some(after)) => after.saturating_sub(before),
            _ => wall.elapsed(),
        };
        fastest = fastest.min(took);
        if fastest <= BOUND {
            return;
        }
    }
    panic!(
        "slow input: {what} took {fastest:?} of CPU time (bound {BOUND:?}) on {} bytes",
        data.len()
    );
}

fuzz_target!(|data: &[u8]| {
    if data.len() >= SMALL {
        return;
    }
    if let Some(input) = split(data) {
        let ty = Ty::parse(input.type_text).expect("types.txt parses");
        bounded("check", data, || {
            let _ = ty.check(input.bytes, input.options);
        });
        bounded("decode_value and encode_value", data, || {
            if let Ok(value) = ty.decode_value(input.bytes, input.options) {
                let _ = ty.encode_value(&value, input.options);
            }
        });
        bounded("typed decode", data, || {
            let _ = from_bytes::<Owned>(input.bytes);
        });
    }
    bounded("Directory::parse", data, || {
        let _ = Directory::parse_with(data, Limits::uniform(u32::MAX));
        let _ = Directory::parse_trusted(data, Limits::uniform(u32::MAX));
    });
    bounded("GGUF reader", data, || {
        let _ = kiln_convert::gguf_to_kiln(data, std::io::sink());
    });
    bounded("safetensors reader", data, || {
        let _ = kiln_convert::safetensors_to_kiln(data, std::io::sink());
    });
    bounded("Kiln message readers", data, || {
        let _ = kiln_convert::kiln_to_gguf(data, std::io::sink());
        let _ = kiln_convert::kiln_to_safetensors(data, std::io::sink());
    });
});
