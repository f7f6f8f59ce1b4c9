//! `mrnic config check FILE` and `mrnic config show NAME`.

use anyhow::{Context, Result};
use clap::Subcommand;
use mrnic_proto::Config;

#[derive(Subcommand)]
pub enum ConfigCmd {
    /// Validate a config file; names every field that is wrong and why.
    Check {
        /// A TOML file, or a built-in name (small, default).
        file: String,
    },
    /// Print a config (a file or a built-in name) as TOML, to start a new one from.
    Show { name: String },
}

pub fn run(c: ConfigCmd) -> Result<()> {
    match c {
        ConfigCmd::Check { file } => {
            let cfg = Config::load(&file).context("config check failed")?;
            println!(
                "{file}: ok ({} connections x {} paths, {} planes, window {}, MTU {}, {}-bit datapath at {} MHz)",
                cfg.transport.connections,
                cfg.transport.paths_per_conn,
                cfg.transport.planes,
                cfg.transport.window,
                cfg.transport.mtu,
                cfg.hardware.datapath_bits,
                cfg.hardware.clock_mhz
            );
            Ok(())
        }
        ConfigCmd::Show { name } => {
            print!("{}", Config::load(&name)?.to_toml());
            Ok(())
        }
    }
}
