//! `mrnic scenario NAME [--seed S] [--out DIR] [--shard I/N] [--quick]`:
//! runs a named testbench scenario; `mrnic scenario merge DIR...` merges
//! shard results; `mrnic scenario list` names them.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use mrnic_testbench::scenario::{self, Options, SCENARIOS};

#[derive(Args)]
pub struct ScenarioArgs {
    /// Scenario name, `list`, or `merge` followed by result directories.
    pub name: String,
    /// For `merge`: directories holding shard results (*.json).
    pub dirs: Vec<PathBuf>,
    /// Seed of the run's one PRNG: the same seed gives the same results.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (default target/scenario/NAME; for merge, the first DIR).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run every N-th sweep point starting at I (0-based), as I/N.
    #[arg(long)]
    pub shard: Option<String>,
    /// The reduced size CI runs.
    #[arg(long)]
    pub quick: bool,
}

fn parse_shard(s: &str) -> Result<(u32, u32)> {
    let (i, n) = s.split_once('/').with_context(|| format!("--shard {s}: expected I/N, e.g. 0/4"))?;
    let i: u32 = i.trim().parse().with_context(|| format!("--shard {s}: I is not a number"))?;
    let n: u32 = n.trim().parse().with_context(|| format!("--shard {s}: N is not a number"))?;
    if n == 0 || i >= n {
        bail!("--shard {s}: need 0 <= I < N");
    }
    Ok((i, n))
}

fn report(res: &scenario::ScenarioResult) {
    for t in scenario::targets(res) {
        let v = t.value.map_or("-".to_string(), |v| format!("{v:.3}"));
        let met = match t.met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "not measured",
        };
        println!("target: {}: {v} (goal {}): {met}", t.what, t.target);
    }
}

pub fn run(a: ScenarioArgs) -> Result<()> {
    match a.name.as_str() {
        "list" => {
            for (n, d) in SCENARIOS {
                println!("{n:14} {d}");
            }
            Ok(())
        }
        "merge" => {
            if a.dirs.is_empty() {
                bail!("merge needs at least one directory of shard results");
            }
            let out = a.out.clone().unwrap_or_else(|| a.dirs[0].clone());
            for res in scenario::merge(&a.dirs).context("merging shard results")? {
                let missing = res.total_points as usize - res.points.len();
                for f in scenario::write(&res, &out)? {
                    println!("wrote {}", f.display());
                }
                if missing > 0 {
                    println!("{}: {missing} of {} points still missing", res.scenario, res.total_points);
                } else {
                    report(&res);
                }
            }
            Ok(())
        }
        name => {
            if !a.dirs.is_empty() {
                bail!("unexpected arguments after the scenario name: {:?}", a.dirs);
            }
            let shard = a.shard.as_deref().map(parse_shard).transpose()?.unwrap_or((0, 1));
            let model = Some(mrnic_verif::fabric::transports as scenario::ModelFactory);
            let opts = Options { seed: a.seed, quick: a.quick, shard, verbose: true, model };
            let res = scenario::run(name, &opts).with_context(|| format!("scenario {name}"))?;
            let out = a.out.clone().unwrap_or_else(|| PathBuf::from("target/scenario").join(name));
            for f in scenario::write(&res, &out)? {
                println!("wrote {}", f.display());
            }
            for p in &res.points {
                if let Some(perf) = p.perf {
                    println!("{}: {:.2} M events/s ({:.2} s wall)", p.label, perf.events_per_s / 1e6, perf.wall_s);
                }
            }
            if res.points.len() as u32 == res.total_points {
                report(&res);
            }
            Ok(())
        }
    }
}
