//! `mrnic gen --config FILE --out DIR`: the RTL and its companion files.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use mrnic_proto::Config;

#[derive(Args)]
pub struct GenArgs {
    /// A config TOML file, or a built-in name (small, default).
    #[arg(long)]
    config: String,
    /// Output folder: created, or replaced if it holds an earlier `mrnic gen` output.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(a: GenArgs) -> Result<()> {
    let cfg = Config::load(&a.config).with_context(|| format!("mrnic gen: config {} refused", a.config))?;
    let files = mrnic_hdl::gen::write(&cfg, &a.out)
        .with_context(|| format!("mrnic gen: nothing written to {}", a.out.display()))?;
    println!("{}: {} files for config {}", a.out.display(), files.len(), cfg.name);
    for f in files {
        println!("  {f}");
    }
    Ok(())
}
