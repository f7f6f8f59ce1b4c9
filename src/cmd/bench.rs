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
use mrnic_verif::pair::{Pair, TopKind};
use mrnic_verif::{blocks, Lockstep, Rtl, Stimulus};

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
    /// Two of the model's NIC tops back to back, each keeping its
    /// connections busy with a mix of WRITEs, SENDs and both with
    /// immediate data, of mixed sizes, to the other (receives posted and
    /// posted again as they complete); prints simulated cycles and packets
    /// per second of wall time, and checks every completion and every byte
    /// landed.
    Model(ModelBenchArgs),
}

#[derive(Args)]
pub struct ModelBenchArgs {
    /// A config file or a built-in name.
    #[arg(long, default_value = "default")]
    pub config: String,
    /// Cycles of each NIC while requests are posted (the drain after comes
    /// on top, untimed).
    #[arg(long, default_value_t = 100_000)]
    pub cycles: u64,
    /// Connections between the two NICs (every path of the config each).
    #[arg(long, default_value_t = 16)]
    pub conns: u32,
    /// Requests outstanding per connection (also the receives each NIC
    /// posts per connection and stream, up to the receive queue depth).
    #[arg(long, default_value_t = 4)]
    pub per_conn: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args)]
pub struct CosimBenchArgs {
    /// A config file or a built-in name; the RTL must be built for it.
    #[arg(long, default_value = "small")]
    pub config: String,
    /// One block, `top` (the whole mrnic_core), or every block built for
    /// the config and the top (default).
    #[arg(long)]
    pub block: Option<String>,
    /// Cycles per run.
    #[arg(long, default_value_t = 300_000)]
    pub cycles: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Generate the traffic inside each timed run (the cost of the
    /// stimulus generator then counts in all three figures) instead of
    /// replaying the inputs recorded from one lockstep run.
    #[arg(long)]
    pub live_stimulus: bool,
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
        BenchCmd::Model(a) => model(a),
    }
}

fn model(a: ModelBenchArgs) -> Result<()> {
    let cfg = Config::load(&a.config).with_context(|| format!("loading config {}", a.config))?;
    let profile = if cfg!(debug_assertions) { "debug build: figures are not meaningful" } else { "release" };
    println!(
        "bench model, config {}, seed {}: two NIC tops back to back, {} connections x {} paths, {} requests \
         outstanding per connection, WRITEs, SENDs and requests with immediate data ({profile})",
        a.config, a.seed, a.conns, cfg.transport.paths_per_conn, a.per_conn
    );
    let t0 = std::time::Instant::now();
    let mut pair = Pair::new(&cfg, a.conns, a.per_conn, a.seed).map_err(anyhow::Error::msg)?;
    let setup = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    for _ in 0..a.cycles {
        pair.step(true).map_err(anyhow::Error::msg)?;
    }
    let wall = t1.elapsed().as_secs_f64();
    let s = pair.stats.clone();
    pair.finish(50 * a.cycles.max(10_000)).map_err(anyhow::Error::msg).context("draining the last requests")?;
    let sim_us = s.cycles as f64 / cfg.hardware.clock_mhz as f64;
    println!("setup (reset sweeps, csr writes, connection opens): {setup:.2} s");
    println!(
        "{} cycles per NIC in {wall:.2} s: {:.0} cycles/s per NIC, {:.0} packets/s (both NICs, {} frames)",
        s.cycles,
        s.cycles as f64 / wall,
        s.frames as f64 / wall,
        s.frames
    );
    println!(
        "simulated: {sim_us:.1} us at {} MHz, {} requests completed ({} WRITEs, {} WRITEs with immediate, {} SENDs), \
         {:.2} Gb/s of payload per NIC",
        cfg.hardware.clock_mhz,
        s.completed,
        s.completed - s.write_imms - s.sends,
        s.write_imms,
        s.sends,
        s.bytes as f64 * 8.0 / 2.0 / (sim_us * 1e3)
    );
    let all = pair.stats.clone();
    println!(
        "checked after the drain: {} requests posted, {} completed once each with success, {} receives completed \
         in order with the sender's length, immediate and bytes, every WRITE byte landed",
        all.posted, all.completed, all.received
    );
    Ok(())
}

fn cosim(a: CosimBenchArgs) -> Result<()> {
    let cfg = Config::load(&a.config).with_context(|| format!("loading config {}", a.config))?;
    let mut names: Vec<&str> = match &a.block {
        Some(b) => vec![b.as_str()],
        None => blocks::names().iter().copied().filter(|b| *b != "verif_fifo").collect(),
    };
    if a.block.is_none() && blocks::built_config(mrnic_model::mrnic_core::NAME, &cfg, &a.config).is_ok() {
        names.push("top");
    }
    let profile = if cfg!(debug_assertions) { "debug build: figures are not meaningful" } else { "release" };
    let how = if a.live_stimulus { "live traffic in every run" } else { "recorded inputs replayed" };
    println!("bench cosim, config {}, seed {}, {} cycles per run, {how} ({profile})", a.config, a.seed, a.cycles);
    println!(
        "{:<18} {:>12} {:>12} {:>12} {:>11} {:>15}",
        "block", "model c/s", "RTL c/s", "lockstep c/s", "model/RTL", "lockstep cost"
    );
    let mut failed = false;
    for &b in &names {
        let run = if b == "top" { bench_top(&cfg, &a) } else { bench_block(b, &cfg, &a) };
        match run {
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
    if names.contains(&"top") {
        println!(
            "top: two tops back to back in a closed loop, live (not replayed); the figures time NIC A's top alone"
        );
    }
    if failed {
        bail!("bench cosim: some blocks did not run");
    }
    Ok(())
}

/// The whole top: the back-to-back pair of `cosim --block top` (eight
/// connections, every opcode both ways, 1% loss) run three times on one
/// seed with NIC A's top the model, the Verilated RTL, and the two in
/// lockstep, NIC B the model. The figures time NIC A's top alone (its
/// `eval` and `tick`, `NicRig::top_seconds`), not the bench around it;
/// the pair is a closed loop, and while the RTL agrees with the model all
/// three runs see the same traffic (their completions are checked equal).
/// `--cycles` counts cycles of new work; each run then drains.
fn bench_top(cfg: &Config, a: &CosimBenchArgs) -> Result<(RunStats, RunStats, RunStats)> {
    let conns = cfg.transport.connections.min(8);
    let mut runs = Vec::new();
    for kind in [TopKind::Model, TopKind::Rtl, TopKind::Lockstep] {
        let mut pair = Pair::with_tops(cfg, conns, 2, a.seed, [kind, TopKind::Model]).map_err(anyhow::Error::msg)?;
        pair.lose(10_000, a.seed ^ 0x1055);
        (0..a.cycles).try_for_each(|_| pair.step(true)).map_err(anyhow::Error::msg)?;
        pair.finish(20 * a.cycles.max(100_000)).map_err(anyhow::Error::msg)?;
        let done = pair.stats.completed;
        let rig = pair.rig(0);
        runs.push(RunStats { cycles: rig.cycle, transactions: done, seconds: rig.top_seconds() });
    }
    let [m, r, l]: [RunStats; 3] = runs.try_into().map_err(|_| anyhow::anyhow!("three runs"))?;
    if (m.cycles, m.transactions) != (r.cycles, r.transactions)
        || (m.cycles, m.transactions) != (l.cycles, l.transactions)
    {
        bail!(
            "the three runs saw different traffic: {}/{}/{} cycles, {}/{}/{} completions",
            m.cycles,
            r.cycles,
            l.cycles,
            m.transactions,
            r.transactions,
            l.transactions
        );
    }
    Ok((m, r, l))
}

/// (model alone, RTL alone, lockstep) on the same stimulus. By default the
/// inputs of one lockstep run of the traffic are recorded (model and RTL
/// agreed on every output, so the traffic, which reacts to the outputs,
/// would drive either side the same way) and replayed into each timed run:
/// the figures are the block's and the harness's, not the generator's.
fn bench_block(block: &str, cfg: &Config, a: &CosimBenchArgs) -> Result<(RunStats, RunStats, RunStats)> {
    if a.live_stimulus {
        return bench_block_live(block, cfg, a);
    }
    let s = blocks::session(block, cfg, &a.config, a.seed).context("no session")?;
    let ports = (s.make_model)().ports().to_vec();
    let opts = Options { ignore_idle_payload: s.idle_payload_dont_care, vcd_dir: None, ..Options::default() };
    let mut rec = Recorder::new(s.traffic, &ports);
    let mut ls = Lockstep::new(s.make_model, s.config, opts.clone())?;
    ls.run(&mut rec, a.cycles).map_err(|m| anyhow::anyhow!("lockstep mismatch:\n{m}"))?;
    let s = blocks::session(block, cfg, &a.config, a.seed).context("no session")?;
    let m = run_alone(&mut ModelDut::new((s.make_model)()), &ports, &mut rec.replay(), a.cycles);
    let r = run_alone(&mut Rtl::open(block, s.config)?, &ports, &mut rec.replay(), a.cycles);
    let mut ls = Lockstep::new(s.make_model, s.config, opts)?;
    let l =
        ls.run(&mut rec.replay(), a.cycles).map_err(|m| anyhow::anyhow!("lockstep mismatch in the replay:\n{m}"))?;
    Ok((m, r, l))
}

/// A stimulus that records the inputs it drives (flat, a few words per
/// cycle), and replays them.
struct Recorder {
    inner: mrnic_verif::Traffic,
    /// (input port, its words)
    inputs: Vec<(usize, usize)>,
    words: Vec<u64>,
}

impl Recorder {
    fn new(inner: mrnic_verif::Traffic, ports: &[mrnic_model::block::PortDef]) -> Recorder {
        let inputs = (0..ports.len())
            .filter(|&i| ports[i].dir == mrnic_model::block::Dir::In)
            .map(|i| (i, ports[i].words().max(1)))
            .collect();
        Recorder { inner, inputs, words: Vec::new() }
    }

    fn replay(&self) -> Replay<'_> {
        Replay { rec: self, at: 0 }
    }
}

impl Stimulus for Recorder {
    fn drive(&mut self, cycle: u64, values: &mut [mrnic_model::block::Bits]) {
        self.inner.drive(cycle, values);
        for &(i, n) in &self.inputs {
            self.words.extend((0..n).map(|k| values[i].0.get(k).copied().unwrap_or(0)));
        }
    }
    fn observe(&mut self, cycle: u64, values: &[mrnic_model::block::Bits]) {
        self.inner.observe(cycle, values);
    }
}

/// The recorded inputs, cycle by cycle.
struct Replay<'a> {
    rec: &'a Recorder,
    at: usize,
}

impl Stimulus for Replay<'_> {
    fn drive(&mut self, _cycle: u64, values: &mut [mrnic_model::block::Bits]) {
        for &(i, n) in &self.rec.inputs {
            let dst = &mut values[i].0;
            if dst.len() != n {
                dst.resize(n, 0);
            }
            for (d, s) in dst.iter_mut().zip(&self.rec.words[self.at..self.at + n]) {
                *d = *s;
            }
            self.at += n;
        }
    }
}

/// [`bench_block`] with the traffic generated inside each timed run.
fn bench_block_live(block: &str, cfg: &Config, a: &CosimBenchArgs) -> Result<(RunStats, RunStats, RunStats)> {
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
