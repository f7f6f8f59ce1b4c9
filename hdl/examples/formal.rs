//! `cargo run -p mrnic-hdl --example formal -- [--config NAME] [--out DIR] [--only BLOCK|BLOCK_TASK] [--connections N] [--solver NAME] [--write-only] [--mutants]`:
//! generates every block with its formal properties for a built-in config,
//! writes one SymbiYosys task per block and mode under `DIR/<config>/`, runs
//! them and prints a table of results per property (`--write-only`: writes
//! the tasks and prints the commands that run them, for a solver run by hand). A failed assertion
//! prints its counterexample VCD and the command that replays it.
//! `--solver yices|z3|boolector` runs every task on that solver instead of
//! its own: a second solver's verdict on the same proofs (yices 2.6.5 gave
//! inconsistent models on tx_output, docs/verification.md).
//! `--only` names a block (all its tasks) or one task (`tx_sack_prove`),
//! exactly: as a prefix, `tx_sack_prove` also ran `tx_sack_prove_acks`.
//! `--mutants` runs the deliberately broken copies of `mrnic_hdl::mutants`
//! instead (each on the config it names, so not with `--config`), `--only`
//! naming a block or one mutant (`rx_ctl_flush_own_path`), and prints
//! block, mutant, the assertion that must fail, result and time; it exits
//! non-zero if any mutant survives or could not run.
//! `scripts/formal` installs the tools and runs this.

use std::path::PathBuf;
use std::process::ExitCode;

use mrnic_hdl::proof::{blocks, header, run_task, table, write_task, Status, Tools};
use mrnic_proto::Config;

fn main() -> ExitCode {
    let mut config: Option<String> = None;
    let mut mutants = false;
    let mut out = PathBuf::from("target/formal-runs");
    let mut only: Option<String> = None;
    let mut connections: Option<u32> = None;
    let mut write_only = false;
    let mut solver: Option<&'static str> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--config" => config = Some(args.next().unwrap_or_default()),
            "--mutants" => mutants = true,
            "--out" => out = PathBuf::from(args.next().unwrap_or_default()),
            "--only" => only = args.next(),
            "--connections" => connections = args.next().and_then(|v| v.parse().ok()),
            "--write-only" => write_only = true,
            "--solver" => match args.next().as_deref() {
                Some("yices") => solver = Some("yices"),
                Some("z3") => solver = Some("z3"),
                Some("boolector") => solver = Some("boolector"),
                other => {
                    eprintln!("formal: --solver takes yices, z3 or boolector, not {other:?}");
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!(
                    "usage: formal [--config small|default] [--out DIR] [--only BLOCK|BLOCK_TASK] [--connections N] \
                     [--solver yices|z3|boolector] [--write-only] [--mutants]"
                );
                return ExitCode::from(2);
            }
        }
    }
    if mutants {
        if config.is_some() || connections.is_some() || solver.is_some() || write_only {
            eprintln!("formal: --mutants runs each mutant as it is written (its config, depth and solver); only --only and --out go with it");
            return ExitCode::from(2);
        }
        return run_mutants(only.as_deref(), &out);
    }
    let cfg = match Config::builtin(config.as_deref().unwrap_or("small")) {
        // A quick look at a smaller table (named apart, so no result is
        // mistaken for the config's own).
        Ok(c) => match connections {
            Some(n) => mrnic_hdl::proof::proof_config(&c, n),
            None => c,
        },
        Err(e) => {
            eprintln!("formal: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(tools) = find_tools() else { return ExitCode::from(2) };
    let blocks = match blocks(&cfg) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("formal: {e}");
            return ExitCode::from(2);
        }
    };
    let ids = |b: &mrnic_hdl::proof::BlockProof| -> Vec<String> {
        b.tasks.iter().map(|t| format!("{}_{}", b.module.name(), t.name)).collect()
    };
    if let Some(o) = &only {
        if !blocks.iter().any(|b| b.module.name() == o || ids(b).contains(o)) {
            let all: Vec<String> = blocks.iter().flat_map(ids).collect();
            eprintln!("formal: --only {o}: no block or task of that name; the tasks: {}", all.join(" "));
            return ExitCode::from(2);
        }
    }
    let mut outcomes = Vec::new();
    for b in &blocks {
        for t in &b.tasks {
            let t = &mrnic_hdl::proof::Task { solver: solver.or(t.solver), ..t.clone() };
            let id = format!("{}_{}", b.module.name(), t.name);
            if only.as_ref().is_some_and(|o| o != b.module.name() && *o != id) {
                continue;
            }
            // A cover task, or a second proof, may run on a proof configuration
            // (Task::connections).
            let (task_cfg, module) = b.target(&cfg, t);
            let dir = out.join(&task_cfg.name);
            let h = header(task_cfg, module.name());
            if let Err(e) = write_task(&dir, module, &h, t, &tools) {
                eprintln!("formal: writing {id} under {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
            if write_only {
                println!("{id}: {}: {}", t.mode.describe(), mrnic_hdl::proof::command(&dir, module, t));
                continue;
            }
            eprintln!(
                "formal: {id}: {} on {} ({}) ...",
                t.mode.describe(),
                task_cfg.name,
                t.solver.unwrap_or(tools.solver)
            );
            let o = run_task(&dir, module, t);
            eprintln!("formal: {id}: {:?} in {:.1} s", o.status, o.seconds);
            outcomes.push(o);
        }
    }
    if write_only {
        return ExitCode::SUCCESS;
    }
    println!("\n{}", table(&blocks, &outcomes));
    let mut bad = false;
    for o in &outcomes {
        let failed = match &o.status {
            Status::Pass => false,
            Status::Error(why) => {
                println!("{}_{}: the tools failed:\n{why}", o.block, o.task.name);
                true
            }
            _ => true,
        };
        if failed {
            bad = true;
            println!("{}_{}: {:?}; failed: {}", o.block, o.task.name, o.status, o.failed.join(", "));
            for t in &o.traces {
                println!("  trace: {}", t.display());
            }
            println!("  replay: {}", o.command);
        }
    }
    if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `--mutants`: each selected mutant's bounded run on its broken copy, one
/// after another (the machine's cores are shared), then the table.
fn run_mutants(only: Option<&str>, out: &std::path::Path) -> ExitCode {
    use mrnic_hdl::mutants::{self, Verdict};
    let Some(picked) = mutants::select(only) else {
        let all: Vec<String> = mutants::MUTANTS.iter().map(|m| m.id()).collect();
        eprintln!(
            "formal: --only {}: no block with mutants, nor a mutant; the mutants: {}",
            only.unwrap_or(""),
            all.join(" ")
        );
        return ExitCode::from(2);
    };
    let Some(tools) = find_tools() else { return ExitCode::from(2) };
    let mut outcomes = Vec::new();
    for m in picked {
        eprintln!("formal: mutant {}: {} ...", m.id(), m.what);
        let o = mutants::run(m, out, &tools);
        eprintln!("formal: mutant {}: {:?}", m.id(), o.verdict);
        outcomes.push(o);
    }
    println!("\n{}", mutants::table(&outcomes));
    let mut bad = false;
    for o in &outcomes {
        if let Some(vcd) = o.vcd() {
            println!("{}: counterexample {}", o.mutant.id(), vcd.display());
        }
        if o.verdict != Verdict::Killed {
            bad = true;
            println!("{}: {:?}", o.mutant.id(), o.verdict);
            if let Some(r) = &o.run {
                println!("  replay: {}", r.command);
            }
        }
    }
    if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The formal tools, or `None` after saying what is missing.
fn find_tools() -> Option<Tools> {
    Tools::find().map_err(|e| eprintln!("formal: {e} (scripts/setup installs it)")).ok()
}
