//! `mrnic bench ...`: throughput measurements. `bench udp` compares the
//! reference transport on loopback with a plain UDP blast of the same bytes;
//! `bench cosim` runs one stimulus on a block's model alone, its Verilated
//! RTL alone and the two in lockstep.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use mrnic_proto::Config;
use mrnic_reference::blast;
use mrnic_reference::transfer::{self, SendOpts};
use mrnic_verif::lockstep::{run_alone, ModelDut, Options, RunStats};
use mrnic_verif::{blocks, Lockstep, Rtl};

use crate::cmd::reference::parse_size;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// The reference over UDP on loopback against a plain UDP blast of the
    /// same bytes (same datagram size, sockets and batching), in rounds that
    /// alternate which goes first; prints every round and the medians
    /// (goal: a ratio of at least 0.8).
    Udp(UdpArgs),
    /// The same seeded stimulus on each block's cycle model alone, its
    /// Verilated RTL alone and the two in lockstep, in one run; prints
    /// cycles per second and the ratios (goals: model at least 10x the RTL,
    /// lockstep at most 1.3x the cost of the RTL alone).
    Cosim(CosimBenchArgs),
}

#[derive(Args)]
pub struct CosimBenchArgs {
    /// A config file or a built-in name; the RTL must be built for it.
    #[arg(long, default_value = "small")]
    pub config: String,
    /// One block, or every block built for the config (default).
    #[arg(long)]
    pub block: Option<String>,
    /// Cycles per run.
    #[arg(long, default_value_t = 300_000)]
    pub cycles: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args)]
pub struct UdpArgs {
    /// Bytes to move (suffixes K, M, G: binary units).
    #[arg(long, default_value = "256M", value_parser = parse_size)]
    pub bytes: u64,
    /// Paths of the connection, and sockets of the blast.
    #[arg(long, default_value_t = 4)]
    pub paths: u8,
    /// Bytes per message of the transfer.
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    pub msg_size: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rounds (each a blast and a transfer); the medians are reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
}

pub fn run(c: BenchCmd) -> Result<()> {
    match c {
        BenchCmd::Udp(a) => udp(a),
        BenchCmd::Cosim(a) => cosim(a),
    }
}

fn cosim(a: CosimBenchArgs) -> Result<()> {
    let cfg = Config::load(&a.config).with_context(|| format!("loading config {}", a.config))?;
    let names: Vec<&str> = match &a.block {
        Some(b) => vec![b.as_str()],
        None => blocks::names().iter().copied().filter(|b| *b != "verif_fifo").collect(),
    };
    let profile = if cfg!(debug_assertions) { "debug build: figures are not meaningful" } else { "release" };
    println!("bench cosim, config {}, seed {}, {} cycles per run ({profile})", a.config, a.seed, a.cycles);
    println!(
        "{:<18} {:>12} {:>12} {:>12} {:>11} {:>15}",
        "block", "model c/s", "RTL c/s", "lockstep c/s", "model/RTL", "lockstep cost"
    );
    let mut failed = false;
    for b in names {
        match bench_block(b, &cfg, &a) {
            Ok((m, r, l)) => {
                let (mc, rc, lc) = (m.cycles_per_second(), r.cycles_per_second(), l.cycles_per_second());
                println!("{b:<18} {:>12.0} {:>12.0} {:>12.0} {:>10.1}x {:>14.2}x", mc, rc, lc, mc / rc, rc / lc);
            }
            Err(e) => {
                failed = true;
                println!("{b:<18} {e:#}");
            }
        }
    }
    println!(
        "model/RTL: speed of the model over the RTL (goal >= 10); lockstep cost: RTL alone / lockstep (goal <= 1.3)"
    );
    if failed {
        bail!("bench cosim: some blocks did not run");
    }
    Ok(())
}

/// (model alone, RTL alone, lockstep) on the same stimulus: the traffic is
/// a function of the seed and of the outputs, which agree.
fn bench_block(block: &str, cfg: &Config, a: &CosimBenchArgs) -> Result<(RunStats, RunStats, RunStats)> {
    let session = || blocks::session(block, cfg, &a.config, a.seed).context("no session");
    let s = session()?;
    let model = s.make_model;
    let ports = model().ports().to_vec();
    let mut t = s.traffic;
    let m = run_alone(&mut ModelDut::new(model()), &ports, &mut t, a.cycles);
    let s = session()?;
    let mut t = s.traffic;
    let mut rtl = Rtl::open(block, s.config)?;
    let r = run_alone(&mut rtl, &ports, &mut t, a.cycles);
    let s = session()?;
    let mut t = s.traffic;
    let opts = Options { ignore_idle_payload: s.idle_payload_dont_care, ..Options::default() };
    let mut ls = Lockstep::new(s.make_model, s.config, opts)?;
    let l = ls.run(&mut t, a.cycles).map_err(|m| anyhow::anyhow!("lockstep mismatch:\n{m}"))?;
    if (m.transactions, r.transactions) != (l.transactions, l.transactions) {
        bail!(
            "the three runs saw different traffic: {} / {} / {} transactions",
            m.transactions,
            r.transactions,
            l.transactions
        );
    }
    Ok((m, r, l))
}

fn udp(a: UdpArgs) -> Result<()> {
    let opts = SendOpts {
        bytes: a.bytes,
        msg_size: u32::try_from(a.msg_size).ok().filter(|&m| m > 0).context("--msg-size: 1 byte to 4 GiB - 1")?,
        paths: a.paths,
        streams: 1,
        seed: a.seed,
        timeout: std::time::Duration::from_secs(600),
    };
    let c = blast::compare(&transfer::udp_config(), &opts, a.rounds).context("bench udp")?;
    print!("{c}");
    if !c.verified() {
        anyhow::bail!("bench udp: a transfer did not verify byte for byte at the receiver");
    }
    Ok(())
}
