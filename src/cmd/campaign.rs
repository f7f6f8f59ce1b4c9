//! `mrnic campaign --runs N --seed S [--loss-max P] [--jobs J]`: seeded
//! fault campaigns on the reference's lossy channel
//! ([`mrnic_reference::campaign`]); `mrnic campaign --replay SEED` re-runs
//! one run and prints its draw and outcome.

use anyhow::{bail, Context, Result};
use clap::Args;
use mrnic_reference::campaign::{run_campaign, run_one, DEFAULT_LOSS_MAX_PPM};

#[derive(Args)]
pub struct CampaignArgs {
    /// Transfers to run.
    #[arg(long, default_value_t = 1000)]
    pub runs: u64,
    /// Campaign seed: the same seed (and --loss-max) gives the same report at any --jobs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Highest per-lane loss probability, in percent (each run draws 0..=P).
    #[arg(long, default_value_t = 10.0)]
    pub loss_max: f64,
    /// Worker threads (default: available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Re-run the one run with this run seed (as a failure prints it) and describe it.
    #[arg(long)]
    pub replay: Option<u64>,
}

fn loss_ppm(pct: f64) -> Result<u32> {
    if !(0.0..=100.0).contains(&pct) {
        bail!("--loss-max {pct}: give a percentage in 0..=100");
    }
    Ok((pct * 10_000.0).round() as u32)
}

pub fn run(a: CampaignArgs) -> Result<()> {
    let ppm = loss_ppm(a.loss_max)?;
    let loss_flag = if ppm == DEFAULT_LOSS_MAX_PPM { String::new() } else { format!(" --loss-max {}", a.loss_max) };
    if let Some(seed) = a.replay {
        let r = run_one(seed, ppm);
        println!("run {seed}: {}", r.draw);
        println!("messages {}, bytes {}, channel {:?}", r.messages, r.bytes, r.channel);
        match r.failure {
            None => println!("ok"),
            Some(f) => bail!("run {seed} failed: {f}"),
        }
        return Ok(());
    }
    if a.runs == 0 {
        bail!("--runs 0: nothing to run; give at least 1");
    }
    let jobs = match a.jobs {
        Some(0) => bail!("--jobs 0: give at least 1"),
        Some(j) => j,
        None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    };
    let s = run_campaign(a.runs, a.seed, ppm, jobs);
    println!("campaign seed {}, loss up to {}%: {} runs", a.seed, a.loss_max, s.runs);
    println!("faults injected:");
    for (k, n) in s.faults.kinds() {
        println!("  {k:<16} {n}");
    }
    println!("messages {}, bytes {}", s.messages, s.bytes);
    println!("failures {}", s.failures.len());
    for (seed, why) in &s.failures {
        println!("  run {seed}: {why}");
        println!("    replay: mrnic campaign --replay {seed}{loss_flag}");
    }
    if !s.failures.is_empty() {
        return Err(anyhow::anyhow!("{} of {} runs failed", s.failures.len(), s.runs))
            .context("the campaign found failures; replay each with the command printed under it");
    }
    Ok(())
}
