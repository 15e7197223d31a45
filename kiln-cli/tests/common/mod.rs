//! What the `kiln` binary's integration tests share: running it, the
//! repository root, and hex.
#![allow(dead_code)] // each test file uses a part

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};

/// The repository root (samples/, spec/).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// What one run of `kiln` gave.
pub struct Out {
    /// The exit status; -1 when a signal ended the process.
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Out {
    /// Standard output as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("kiln writes UTF-8 text")
    }
}

/// Runs the `kiln` binary of this build with `args` and `input` on
/// standard input, from the crate's directory, at the default terminal
/// width (`COLUMNS` removed) and with backtraces on, so that a panic
/// shows where.
pub fn kiln<S: AsRef<OsStr>>(args: &[S], input: &[u8]) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("COLUMNS")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kiln binary starts");
    // A command may stop reading early; that is not the test's concern.
    let _ = child.stdin.take().expect("piped").write_all(input);
    let out = child.wait_with_output().expect("kiln runs");
    Out {
        status: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Bytes from hex digits (the case file's form).
pub fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}
