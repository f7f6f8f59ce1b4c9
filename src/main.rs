//! `mrnic`: the command line of the mrnic transport model and RTL generator.
//! Each subcommand lives in its own file under `src/cmd/`.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cmd;

#[derive(Parser)]
#[command(
    name = "mrnic",
    version,
    about = "MetaRoCE-style RDMA transport: reference, cycle-accurate model and RTL generator"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Configuration files: check one, or print a built-in one.
    #[command(subcommand)]
    Config(cmd::config::ConfigCmd),
    /// Run a block's model and its Verilated RTL in lockstep over random traffic.
    Cosim(cmd::cosim::CosimArgs),
    /// Capture files: decode one, or synthesize a sample exchange.
    #[command(subcommand)]
    Pcap(cmd::pcap::PcapCmd),
    /// Print the Wireshark Lua dissector generated from the field table (`mrnic dissector > mrnic.lua`).
    Dissector(cmd::dissector::DissectorArgs),
    /// Print docs/spec.md, the normative protocol spec.
    Spec,
    /// Generate the RTL of a config with its file list, FuseSoC core, register map, C header and README.
    Gen(cmd::gen::GenArgs),
    /// The reference transport over UDP sockets: serve, send, or both ends in one process.
    #[command(subcommand, name = "ref")]
    Ref(cmd::reference::RefCmd),
    /// Seeded fault campaigns on the reference's lossy channel (`--replay SEED` re-runs one).
    Campaign(cmd::campaign::CampaignArgs),
    /// Throughput benchmarks.
    #[command(subcommand)]
    Bench(cmd::bench::BenchCmd),
    /// Run a named testbench scenario (`mrnic scenario list`), or merge shard results.
    Scenario(cmd::scenario::ScenarioArgs),
    /// Golden vectors: generate them, or check a target (reference, model) against them.
    #[command(subcommand)]
    Vectors(cmd::vectors::VectorsCmd),
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Config(c) => cmd::config::run(c),
        Command::Cosim(a) => cmd::cosim::run(a),
        Command::Pcap(c) => cmd::pcap::run(c),
        Command::Dissector(a) => cmd::dissector::run(a),
        Command::Spec => cmd::spec::run(),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Ref(c) => cmd::reference::run(c),
        Command::Campaign(a) => cmd::campaign::run(a),
        Command::Bench(c) => cmd::bench::run(c),
        Command::Scenario(a) => cmd::scenario::run(a),
        Command::Vectors(c) => cmd::vectors::run(c),
    }
}

/// `mrnic spec | head` must stop quietly, as any Unix filter does. Rust's
/// runtime ignores SIGPIPE, which turns a closed pipe into a panic inside
/// `println!`; the default action ends the process instead. UDP sockets never
/// raise SIGPIPE, so the `ref` commands are unaffected.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; setting a
    // signal's disposition to its default has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Errors print as one chain of causes, without a backtrace: they are
/// messages for the person at the terminal.
fn main() -> ExitCode {
    restore_sigpipe();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
