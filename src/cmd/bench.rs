//! `mrnic bench ...`: throughput measurements. `bench udp` compares the
//! reference transport on loopback with a plain UDP blast of the same bytes.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use mrnic_reference::blast;
use mrnic_reference::transfer::{self, SendOpts};

use crate::cmd::reference::parse_size;

#[derive(Subcommand)]
pub enum BenchCmd {
    /// The reference over UDP on loopback against a plain UDP blast of the
    /// same bytes (same datagram size, sockets and batching), in rounds that
    /// alternate which goes first; prints every round and the medians
    /// (goal: a ratio of at least 0.8).
    Udp(UdpArgs),
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
    }
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
