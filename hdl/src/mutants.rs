//! Deliberately broken copies of the generated blocks, each of which a
//! named assertion must catch: regression tests that the formal properties
//! are not vacuous.
//!
//! A property that passes on the real design proves nothing if it would
//! pass on a broken one too. Each [`Mutant`] is one small breakage of one
//! block (the kind of bug the property is there for), a bounded check of
//! the block's properties on the broken copy, and the assertion that must
//! fail; [`run`] says whether it did, with a counterexample VCD.
//!
//! The breakage is an exact-text substitution on the printed Verilog, not
//! an edit of the IR: the IR's expressions are built by Rust code, so a
//! breakage there would be code per mutant, where this table is data. Text
//! is fragile in one way, which [`Mutant::apply`] turns into a failure:
//! each substitution must match exactly once in the design (before
//! `` `ifdef FORMAL ``, so a mutant never edits a property), else the
//! generator's output changed and the mutant says so by name; a mutant can
//! never silently run as the unmodified design. The generators' own output
//! and `hdl/generated/` are never touched: the broken copy is written
//! only into the mutant's work folder.
//!
//! `scripts/formal --mutants` runs them all and prints a table;
//! `hdl/tests/formal.rs` runs the quick ones (rx_ctl's) on every `cargo test`.

use std::path::{Path, PathBuf};

use mrnic_proto::Config;

use crate::proof::{asserts, header, run_task, text_table, write_task_verilog, Mode, Outcome, Status, Task, Tools};
use crate::Module;

/// One deliberately broken copy of a block and the assertion that must
/// catch it.
#[derive(Clone, Copy, Debug)]
pub struct Mutant {
    /// The block, as [`crate::proof::blocks`] names it.
    pub block: &'static str,
    /// The built-in config it is generated for (the text it edits is
    /// that config's).
    pub config: &'static str,
    /// Short name, unique within the block; `<block>_<name>` names its
    /// work folder and `--only` takes it.
    pub name: &'static str,
    /// The breakage in one line: the bug it stands for.
    pub what: &'static str,
    /// Exact-text substitutions `(from, to)` on the printed Verilog, each
    /// `from` found exactly once in the design part. Usually one; two where
    /// the generator prints one rule on two lines (a helper called twice).
    pub edits: &'static [(&'static str, &'static str)],
    /// Bounded model check to this many cycles.
    pub depth: u32,
    /// The SMT solver (see [`Task::solver`]); `None` is the machine's.
    pub solver: Option<&'static str>,
    /// The assertions checked; `None` checks every assertion of the block.
    /// The others are removed, not assumed, as in a [`Task`].
    pub checks: Option<&'static [&'static str]>,
    /// Assertions taken out of `checks`: one that catches the breakage
    /// sooner than the one this mutant is for.
    pub unchecked: &'static [&'static str],
    /// The assertion that must fail.
    pub fails: &'static str,
}

/// rx_ctl's packet-sequencing rules (its `prove_pkt` task without the
/// strengthening `a_inv_*` and the channel rules): what its breakages
/// below are checked against, as docs/verification.md describes them.
const RX_CTL_PKT: &[&str] = &[
    "a_hdr_after_packet",
    "a_open_between_packets",
    "a_pay_once_per_hdr",
    "a_req_only_new",
    "a_req_not_refused",
    "a_req_once",
    "a_beat_bad_is_refusal",
    "a_pay_refused_drops",
    "a_pay_kept_with_req",
    "a_sack_held_until_idle",
    "a_sack_unheld_otherwise",
    "a_flush_after_placed_ackreq",
    "a_flush_other_paths",
    "a_open_beats_in_order",
    "a_own_nack_refused_once",
];

/// An rx_ctl breakage on `small`: bmc depth 20 with boolector over
/// [`RX_CTL_PKT`], as docs/verification.md ran them.
const fn rx_ctl(
    name: &'static str,
    what: &'static str,
    edits: &'static [(&'static str, &'static str)],
    fails: &'static str,
) -> Mutant {
    Mutant {
        block: "rx_ctl",
        config: "small",
        name,
        what,
        edits,
        depth: 20,
        solver: Some("boolector"),
        checks: Some(RX_CTL_PKT),
        unchecked: &[],
        fails,
    }
}

/// Every mutant: docs/verification.md's tables of breakages, by block.
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        // a_beat_bad_is_refusal, added after this breakage was first tried,
        // catches it sooner (step 8: the beat is not marked bad); unchecked
        // here so a_req_not_refused is seen to catch it too.
        unchecked: &["a_beat_bad_is_refusal"],
        ..rx_ctl(
            "chk_refusal_ok",
            "msg_check's bad length and window answers taken as OK (a refused packet goes on)",
            &[("if (s_chkr_status != 2'd0) begin", "if (s_chkr_status == 2'd3) begin")],
            "a_req_not_refused",
        )
    },
    rx_ctl(
        "hold_released_on_sack",
        "the SACK hold released when a SACK waits, not when cpl_engine is idle",
        &[("if (cpl_idle & !csack_presented) begin", "if (s_gsack_valid & !csack_presented) begin")],
        "a_sack_held_until_idle",
    ),
    rx_ctl(
        "flush_own_path",
        "the FLUSH beats do not skip the packet's own path",
        &[
            (
                "assign release_path = release_from == {1'b0, hdr_path_id_reg} ? release_from + 9'd1 : release_from;",
                "assign release_path = release_from;",
            ),
            (
                "assign flush_path = flush_from == {1'b0, hdr_path_id_reg} ? flush_from + 9'd1 : flush_from;",
                "assign flush_path = flush_from;",
            ),
        ],
        "a_flush_other_paths",
    ),
    rx_ctl(
        "flush_past_paths",
        "a FLUSH beat for path = npaths (`<=` for `<`)",
        &[
            ("(release_path < {3'd0, lkr_paths_reg})", "(release_path <= {3'd0, lkr_paths_reg})"),
            ("(flush_path < {3'd0, lkr_paths_reg})", "(flush_path <= {3'd0, lkr_paths_reg})"),
        ],
        "a_flush_other_paths",
    ),
    rx_ctl(
        "nack_though_answered",
        "the own NACK sent though sack_gen answered the beat",
        &[("if ((code_reg != 3'd0) & !answered_now) begin", "if (code_reg != 3'd0) begin")],
        "a_own_nack_refused_once",
    ),
    rx_ctl(
        "open_mid_packet",
        "s_open_ready in any step with nothing offered (an open taken mid-packet)",
        &[("assign s_open_ready = idle;", "assign s_open_ready = free;")],
        "a_open_between_packets",
    ),
    rx_ctl(
        "bad_only_access",
        "the beat's bad only for an ACCESS refusal (the verdict still refuses the packet)",
        &[("pkt_bad_next = code_reg != 3'd0;", "pkt_bad_next = code_reg == 3'd2;")],
        "a_beat_bad_is_refusal",
    ),
];

impl Mutant {
    /// `<block>_<name>`: the work folder's name, and what `--only` takes.
    pub fn id(&self) -> String {
        format!("{}_{}", self.block, self.name)
    }

    /// `verilog` (the block as printed) with the edits made. Each `from`
    /// must occur exactly once before `` `ifdef FORMAL ``: zero or several
    /// matches mean the generator's output changed, and running anyway
    /// could check the unmodified design or break the wrong line.
    pub fn apply(&self, verilog: &str) -> Result<String, String> {
        let (mut design, formal) = match verilog.find("`ifdef FORMAL") {
            Some(i) => (verilog[..i].to_string(), &verilog[i..]),
            None => return Err(format!("{}: the generated {} has no formal section", self.id(), self.block)),
        };
        for (from, to) in self.edits {
            if from == to {
                return Err(format!("{}: the edit of `{from}` changes nothing", self.id()));
            }
            let n = design.matches(from).count();
            if n != 1 {
                return Err(format!(
                    "{}: `{from}` occurs {n} times in the generated {} (exactly once expected): the generator \
                     changed; update this mutant in hdl/src/mutants.rs",
                    self.id(),
                    self.block
                ));
            }
            design = design.replacen(from, to, 1);
        }
        if self.edits.is_empty() {
            return Err(format!("{}: no edit, so no breakage", self.id()));
        }
        Ok(design + formal)
    }

    /// The assertions checked on `module`: [`Mutant::checks`] without
    /// [`Mutant::unchecked`]. Every label named must be one of the block's
    /// assertions, and [`Mutant::fails`] among those checked, so a renamed
    /// property fails the mutant instead of leaving it checking nothing.
    pub fn checked(&self, module: &Module) -> Result<Vec<String>, String> {
        let all = asserts(module);
        let named = self.checks.unwrap_or_default().iter().chain(self.unchecked).chain([&self.fails]);
        if let Some(l) = named.into_iter().find(|l| !all.iter().any(|a| a == *l)) {
            return Err(format!("{}: {} has no assertion {l}; update this mutant", self.id(), self.block));
        }
        let checked: Vec<String> = all
            .into_iter()
            .filter(|a| self.checks.is_none_or(|c| c.contains(&a.as_str())))
            .filter(|a| !self.unchecked.contains(&a.as_str()))
            .collect();
        if !checked.iter().any(|a| a == self.fails) {
            return Err(format!("{}: {} is not among the assertions checked", self.id(), self.fails));
        }
        Ok(checked)
    }

    /// The bounded task that checks the broken copy.
    pub fn task(&self, checked: Vec<String>) -> Task {
        Task {
            name: self.name,
            mode: Mode::Bmc(self.depth),
            asserts: Some(checked),
            why_bounded: "a mutant: a bounded run finds its counterexample",
            arrays: false,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: self.solver,
        }
    }
}

/// What became of a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The expected assertion failed, with a counterexample VCD.
    Killed,
    /// The broken copy got through: the text says how (no counterexample
    /// to the depth, another assertion failed, no VCD).
    Survived(String),
    /// No verdict: the edit no longer matches, a label is gone, or the
    /// tools failed.
    Error(String),
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct MutantOutcome {
    pub mutant: Mutant,
    pub verdict: Verdict,
    /// SymbiYosys's run, when it ran.
    pub run: Option<Outcome>,
}

impl MutantOutcome {
    /// The counterexample VCD, when there is one.
    pub fn vcd(&self) -> Option<&PathBuf> {
        self.run.as_ref()?.traces.iter().find(|t| t.extension().is_some_and(|e| e == "vcd"))
    }
}

/// Generates `mutant`'s block for its config, breaks it, writes the task
/// under `out/<config>/mutants/` and runs it.
pub fn run(mutant: &Mutant, out: &Path, tools: &Tools) -> MutantOutcome {
    let error = |why: String| MutantOutcome { mutant: *mutant, verdict: Verdict::Error(why), run: None };
    let cfg = match Config::builtin(mutant.config) {
        Ok(c) => c,
        Err(e) => return error(format!("{}: {e}", mutant.id())),
    };
    let module = match crate::proof::block(&cfg, mutant.block) {
        Ok(b) => b.module,
        Err(e) => return error(format!("{}: {e}", mutant.id())),
    };
    run_on(mutant, &cfg, &module, out, tools)
}

/// [`run`] on the block already generated (`module`, for `cfg`).
pub fn run_on(mutant: &Mutant, cfg: &Config, module: &Module, out: &Path, tools: &Tools) -> MutantOutcome {
    let error = |why: String| MutantOutcome { mutant: *mutant, verdict: Verdict::Error(why), run: None };
    let verilog = match module.to_verilog(&header(cfg, module.name())) {
        Ok(v) => v,
        Err(e) => return error(format!("{}: {e}", mutant.id())),
    };
    let broken = match mutant.apply(&verilog) {
        Ok(v) => v,
        Err(e) => return error(e),
    };
    let task = match mutant.checked(module) {
        Ok(c) => mutant.task(c),
        Err(e) => return error(e),
    };
    let dir = out.join(&cfg.name).join("mutants").join(mutant.id());
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = write_task_verilog(&dir, module, &broken, &task, tools) {
        return error(format!("{}: writing {}: {e}", mutant.id(), dir.display()));
    }
    let o = run_task(&dir, module, &task);
    let vcd = o.traces.iter().any(|t| t.extension().is_some_and(|e| e == "vcd") && t.is_file());
    let verdict = match &o.status {
        Status::Error(why) => Verdict::Error(why.clone()),
        Status::Fail if o.failed.iter().any(|f| f == mutant.fails) && vcd => Verdict::Killed,
        Status::Fail if o.failed.iter().any(|f| f == mutant.fails) => {
            Verdict::Survived("it failed, but no counterexample VCD was written".into())
        }
        Status::Fail => Verdict::Survived(format!("{} failed instead", o.failed.join(", "))),
        Status::Pass => Verdict::Survived(format!("no counterexample to depth {}", mutant.depth)),
        Status::Unknown => Verdict::Survived("no verdict (UNKNOWN)".into()),
    };
    MutantOutcome { mutant: *mutant, verdict, run: Some(o) }
}

/// The mutants `only` selects: all, or those of a block, or one by
/// [`Mutant::id`]. `None` when `only` names neither.
pub fn select(only: Option<&str>) -> Option<Vec<&'static Mutant>> {
    let picked: Vec<&Mutant> = MUTANTS.iter().filter(|m| only.is_none_or(|o| o == m.block || o == m.id())).collect();
    (!picked.is_empty()).then_some(picked)
}

/// One row per mutant: block, mutant, the assertion that must fail, the
/// result (with the failure's step) and the run's time.
pub fn table(outcomes: &[MutantOutcome]) -> String {
    let rows: Vec<[String; 5]> = outcomes
        .iter()
        .map(|o| {
            let step = o.run.as_ref().and_then(|r| r.fail_step).map(|s| format!(" (step {s})")).unwrap_or_default();
            let result = match &o.verdict {
                Verdict::Killed => format!("killed{step}"),
                Verdict::Survived(why) => format!("SURVIVED: {why}"),
                Verdict::Error(why) => format!("ERROR: {}", why.lines().next().unwrap_or("")),
            };
            let time = o.run.as_ref().map(|r| format!("{:.1} s", r.seconds)).unwrap_or_else(|| "-".into());
            [o.mutant.block.to_string(), o.mutant.name.to_string(), o.mutant.fails.to_string(), result, time]
        })
        .collect();
    text_table(&["block", "mutant", "must fail", "result", "time"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_edit_breaks_something() {
        let mut ids: Vec<String> = MUTANTS.iter().map(Mutant::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), MUTANTS.len(), "two mutants share a name");
        for m in MUTANTS {
            assert!(!m.edits.is_empty(), "{}", m.id());
            assert!(m.edits.iter().all(|(a, b)| a != b), "{}", m.id());
        }
    }

    #[test]
    fn an_edit_must_match_exactly_once_in_the_design() {
        let m = Mutant { edits: &[("x = 1;", "x = 0;")], ..MUTANTS[0] };
        let once = "assign x = 1;\n`ifdef FORMAL\na: assert (x = 1;);\n`endif\n";
        let broken = m.apply(once).unwrap();
        assert!(broken.starts_with("assign x = 0;\n`ifdef FORMAL\na: assert (x = 1;)"), "{broken}");
        for text in ["assign y;\n`ifdef FORMAL\nx = 1;\n", "x = 1; x = 1;\n`ifdef FORMAL\n"] {
            let e = m.apply(text).unwrap_err();
            assert!(e.contains(&m.id()) && e.contains("the generator changed"), "{e}");
        }
    }
}
