//! `mrnic cosim`: a block's cycle model and its Verilated RTL in lockstep
//! over seeded random traffic, every output compared every cycle; prints
//! cycles, transactions, mismatches and the functional coverage counted.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use mrnic_proto::Config;
use mrnic_verif::lockstep::{Options, TraceWindow};
use mrnic_verif::pair::Pair;
use mrnic_verif::{blocks, Lockstep, Stimulus};

#[derive(Args)]
pub struct CosimArgs {
    /// A config file, or a built-in name (small, default); the block's RTL
    /// must have been built for it (the design table in verif/build.rs).
    #[arg(long, default_value = "small")]
    config: String,
    /// The block (`mrnic cosim --block list` names them; `verif_fifo` is the
    /// harness's own test design), or `all`: every block for `--cycles`
    /// each, one summary line per block, or `top`: the whole mrnic_core in
    /// lockstep, as one of two tops exchanging traffic (`--cycles` of new
    /// work, then until everything completes; the cycles a mismatch and
    /// `--window` name count from the top's reset).
    #[arg(long)]
    block: String,
    /// Cycles to run.
    #[arg(long, default_value_t = 100_000)]
    cycles: u64,
    /// Seed of the random traffic; the same seed gives the same run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Trace the RTL into FILE and the model into FILE's stem + `.model.vcd`.
    #[arg(long, value_name = "FILE")]
    vcd: Option<PathBuf>,
    /// Cycles to trace, A:B inclusive (default: the whole run; with `top`,
    /// from the end of the set-up).
    #[arg(long, value_name = "A:B", requires = "vcd")]
    window: Option<String>,
    /// Do not compare an output stream's payload while its valid is low
    /// (valid itself is always compared). Default: every output, every
    /// cycle, except for the blocks whose contract makes idle payloads
    /// don't-care (path_telemetry; the run says so).
    #[arg(long)]
    idle_payload_dont_care: bool,
    /// `--block top`: percent of the frames lost between the two tops,
    /// both ways (0 to 100).
    #[arg(long, default_value_t = 1.0)]
    loss: f64,
}

fn parse_window(w: Option<&str>, cycles: u64) -> Result<(u64, u64)> {
    let Some(w) = w else { return Ok((0, cycles.saturating_sub(1))) };
    let (a, b) = w.split_once(':').with_context(|| format!("--window {w}: expected A:B, e.g. 1000:1200"))?;
    let a: u64 = a.trim().parse().with_context(|| format!("--window {w}: start `{a}` is not a cycle number"))?;
    let b: u64 = b.trim().parse().with_context(|| format!("--window {w}: end `{b}` is not a cycle number"))?;
    if a > b {
        bail!("--window {w}: the start is after the end");
    }
    Ok((a, b))
}

pub fn run(a: CosimArgs) -> Result<()> {
    let cfg = Config::load(&a.config).with_context(|| format!("loading config {}", a.config))?;
    match a.block.as_str() {
        "top" => top(&a, &cfg),
        "list" => {
            println!("{}", blocks::names().join("\n"));
            Ok(())
        }
        "all" => all(&a, &cfg),
        _ => one(&a, &cfg),
    }
}

/// Every block (but the harness's own `verif_fifo`) in turn: one line each.
fn all(a: &CosimArgs, cfg: &Config) -> Result<()> {
    if a.vcd.is_some() {
        bail!("--block all: --vcd traces one block; name it");
    }
    println!(
        "cosim, config {}, seed {}, {} cycles per block, every output compared every cycle",
        a.config, a.seed, a.cycles
    );
    println!(
        "{:<18} {:>9} {:>13} {:>11} {:>10} {:>11}",
        "block", "cycles", "transactions", "mismatches", "coverage", "cycles/s"
    );
    let (mut failed, mut ran) = (Vec::new(), 0);
    for b in blocks::names().iter().filter(|b| **b != "verif_fifo") {
        let mut s = match blocks::session(b, cfg, &a.config, a.seed) {
            Ok(s) => s,
            // verif/build.rs builds most blocks for `small` only.
            Err(e @ mrnic_verif::VerifError::UnknownDesign { .. }) => {
                println!("{b:<18} not run: {e}");
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("{b}: cosim cannot start")),
        };
        ran += 1;
        let opts = Options {
            vcd_dir: Some(std::env::temp_dir().join("mrnic-cosim")),
            ignore_idle_payload: a.idle_payload_dont_care || s.idle_payload_dont_care,
            ..Options::default()
        };
        let mut ls = Lockstep::new(s.make_model, s.config, opts).with_context(|| format!("{b}: cosim cannot start"))?;
        match ls.run(&mut s.traffic, a.cycles) {
            Ok(stats) => {
                ls.finish()?;
                let (hit, bins) = s.traffic.coverage().score();
                let broken = s.traffic.violations().len();
                println!(
                    "{b:<18} {:>9} {:>13} {:>11} {:>10} {:>11.0}{}",
                    stats.cycles,
                    stats.transactions,
                    0,
                    format!("{hit}/{bins}"),
                    stats.cycles_per_second(),
                    if broken > 0 { format!("  {broken} valid/ready violations") } else { String::new() }
                );
                if broken > 0 {
                    failed.push(b.to_string());
                }
            }
            Err(m) => {
                println!(
                    "{b:<18} {:>9} {:>13} {:>11}  first on `{}` (rerun with --block {b})",
                    m.cycle + 1,
                    s.traffic.transactions(),
                    1,
                    m.port
                );
                failed.push(b.to_string());
            }
        }
    }
    if !failed.is_empty() {
        bail!("lockstep failed for {} (seed {})", failed.join(", "), a.seed);
    }
    if ran == 0 {
        bail!("no block has RTL built for config {}", a.config);
    }
    Ok(())
}

/// `--block top`: two tops back to back ([`mrnic_verif::pair`]), NIC A the
/// model's mrnic_core and its Verilated RTL in lockstep, every output of
/// the top compared every cycle, NIC B the model; both keep eight
/// connections busy with WRITEs, SENDs and both with immediate data, both
/// ways, through `--loss`. The pair checks every completion and every
/// landed byte on top of the comparison.
fn top(a: &CosimArgs, cfg: &Config) -> Result<()> {
    let name = mrnic_model::mrnic_core::NAME;
    let config = blocks::built_config(name, cfg, &a.config).context("cosim cannot start")?;
    if !(0.0..=100.0).contains(&a.loss) {
        bail!("--loss {}: a percentage, 0 to 100", a.loss);
    }
    let conns = cfg.transport.connections.min(8);
    println!(
        "cosim top ({name}, config {config}), seed {}, {} cycles of new work, {}% loss, {conns} connections",
        a.seed, a.cycles, a.loss
    );
    let window = match a.window {
        Some(_) => Some(parse_window(a.window.as_deref(), u64::MAX)?),
        None => None,
    };
    let trace = a.vcd.as_ref().map(|rtl| (window, rtl.clone()));
    let t0 = std::time::Instant::now();
    let (mut pair, run, trace) = run_top(a, cfg, conns, trace, false)?;
    let secs = t0.elapsed().as_secs_f64();
    let s = pair.stats.clone();
    let rig = pair.rig(0);
    println!(
        "cycles: {} (NIC A's clock from reset: {})
transactions: {} work requests completed of {} ({} SENDs, {} WRITEs with immediate), {} receives, {} frames, {} lost, {} bytes",
        s.cycles, rig.cycle, s.completed, s.posted, s.sends, s.write_imms, s.received, s.frames, s.lost, s.bytes
    );
    let mismatch = rig.mismatch().map(|m| (m.to_string(), rig.mismatch_cycle().unwrap_or(0)));
    println!("mismatches: {}", u8::from(mismatch.is_some()));
    println!("speed: {:.0} cycles/s (two tops, one of them model and RTL in lockstep)", s.cycles as f64 / secs);
    if let Some(t) = &trace {
        println!("trace: cycles {}..={}: RTL {}, model {}", t.start, t.end, t.rtl.display(), t.model_path().display());
    }
    print!("{}", rig.coverage());
    match (mismatch, run) {
        (Some((m, at)), _) => {
            if a.vcd.is_none() {
                // The run is seeded: the same run again, traced up to the
                // mismatch, gives its waves (the model's file has the
                // top's inputs of every cycle before it).
                let rtl = std::env::temp_dir().join("mrnic-cosim").join(format!("top-seed{}.vcd", a.seed));
                let (_, _, t) = run_top(a, cfg, conns, Some((Some((at.saturating_sub(200), at + 1)), rtl)), true)?;
                if let Some(t) = t {
                    println!(
                        "waves of cycles {}..={}: RTL {} (every signal), model {} (the top's ports)",
                        t.start,
                        t.end,
                        t.rtl.display(),
                        t.model_path().display()
                    );
                }
            }
            bail!("{m} (seed {})", a.seed)
        }
        (None, Err(e)) => bail!("{e} (seed {})", a.seed),
        (None, Ok(())) => Ok(()),
    }
}

/// One run of [`top`], traced into `trace` ((cycles, RTL file); the
/// cycles from the end of the set-up when not given; an `auto` window is
/// moved past the set-up) if asked: the pair after it, how the run ended,
/// and the window traced.
fn run_top(
    a: &CosimArgs,
    cfg: &Config,
    conns: u32,
    trace: Option<(Option<(u64, u64)>, PathBuf)>,
    auto: bool,
) -> Result<(Pair, std::result::Result<(), String>, Option<TraceWindow>)> {
    let mut pair = Pair::with_rtl(cfg, conns, 2, a.seed, [true, false]).map_err(anyhow::Error::msg)?;
    pair.lose((a.loss * 10_000.0).round() as u32, a.seed ^ 0x1055);
    let trace = match trace {
        Some((window, rtl)) => {
            let ready = pair.rig(0).cycle;
            let (start, end) = match window {
                Some((s, e)) if auto => (s.max(ready), e.max(ready)),
                Some(w) => w,
                None => (ready, u64::MAX),
            };
            if start < ready {
                bail!("--window {start}:{end}: the tops are reset and set up by cycle {ready}; trace from there");
            }
            let t = TraceWindow { start, end, rtl };
            pair.rig(0).trace(start, end, &t.rtl, &t.model_path()).map_err(anyhow::Error::msg)?;
            Some(t)
        }
        None => None,
    };
    let mut run = (0..a.cycles).try_for_each(|_| pair.step(true));
    if run.is_ok() {
        run = pair.finish(20 * a.cycles.max(100_000));
    }
    pair.rig(0).trace_close().map_err(|e| anyhow::anyhow!("the trace ended early: {e}"))?;
    Ok((pair, run, trace))
}

fn one(a: &CosimArgs, cfg: &Config) -> Result<()> {
    let mut s = blocks::session(&a.block, cfg, &a.config, a.seed).context("cosim cannot start")?;
    let idle_dont_care = a.idle_payload_dont_care || s.idle_payload_dont_care;
    let (start, end) = parse_window(a.window.as_deref(), a.cycles)?;
    let trace = a.vcd.clone().map(|rtl| TraceWindow { start, end, rtl });
    let vcd_dir = std::env::temp_dir().join("mrnic-cosim");
    let opts = Options {
        trace: trace.clone(),
        vcd_dir: Some(vcd_dir),
        ignore_idle_payload: idle_dont_care,
        ..Options::default()
    };
    let mut ls = Lockstep::new(s.make_model, s.config, opts).context("cosim cannot start")?;
    let streams = |t: &mrnic_verif::Traffic| {
        t.counts()
            .iter()
            .map(|(p, into, n)| format!("{p} {n} {}", if *into { "in" } else { "out" }))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("cosim {} (config {}), seed {}, {} cycles", a.block, s.config, a.seed, a.cycles);
    if idle_dont_care {
        println!("output payloads compared while their valid is high (valid and ready every cycle)");
    }
    match ls.run(&mut s.traffic, a.cycles) {
        Ok(stats) => {
            ls.finish()?;
            println!(
                "cycles: {}\ntransactions: {} ({})\nmismatches: 0\nspeed: {:.0} cycles/s (model and RTL in lockstep)",
                stats.cycles,
                stats.transactions,
                streams(&s.traffic),
                stats.cycles_per_second()
            );
            if let Some(t) = &trace {
                println!(
                    "trace: cycles {}..={}: RTL {}, model {}",
                    t.start,
                    t.end,
                    t.rtl.display(),
                    t.model_path().display()
                );
            }
            print!("{}", s.traffic.coverage());
            let v = s.traffic.violations();
            if !v.is_empty() {
                bail!("valid/ready rule broken by the block's outputs (seed {}):\n  {}", a.seed, v.join("\n  "));
            }
            Ok(())
        }
        Err(m) => {
            println!(
                "cycles: {}\ntransactions: {} ({})\nmismatches: 1 (the run stops at the first)\n\n{m}",
                m.cycle + 1,
                s.traffic.transactions(),
                streams(&s.traffic)
            );
            bail!("lockstep mismatch at cycle {} on `{}` (seed {})", m.cycle, m.port, a.seed)
        }
    }
}
