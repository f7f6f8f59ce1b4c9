//! `mrnic ref serve|send|loopback`: the reference transport over real UDP
//! sockets (`mrnic_reference::udp`), one bulk transfer of seeded data that
//! the receiving end checks byte for byte (`mrnic_reference::transfer`
//! documents the transfer and its out-of-band handshake).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use mrnic_proto::Config;
use mrnic_reference::transfer::{self, SendOpts, ServeOpts};
use mrnic_reference::udp::{DriverOpts, UdpDriver};

#[derive(Subcommand)]
pub enum RefCmd {
    /// Take one transfer on a UDP port, check every byte, exit 0 only if all
    /// matched (with --keep-serving: take transfers until interrupted).
    Serve(ServeArgs),
    /// Send one transfer to a `ref serve`; exit non-zero unless it completes
    /// (and, with --verify, unless the server found every byte right).
    Send(SendArgs),
    /// Both ends in one process on 127.0.0.1 (two NICs, two threads).
    Loopback(LoopbackArgs),
}

#[derive(Args, Clone)]
pub struct Common {
    /// Protocol config, a file or a built-in name. Default: the built-in
    /// `default` with timers for software (RTO 2-60 ms, 1.024 us timestamps).
    #[arg(long)]
    pub config: Option<String>,
    /// Seed of the data pattern, the drop injection and the source ports.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address of the transport socket: IP or IP:PORT (port defaults to the
    /// config's transport.udp_port, 4797; 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Serve transfer after transfer instead of exiting after the first.
    #[arg(long)]
    pub keep_serving: bool,
    /// Check the data against this seed's pattern instead of the sender's.
    #[arg(long)]
    pub expect_seed: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Clone)]
pub struct Transfer {
    /// Bytes to move (suffixes K, M, G: binary units).
    #[arg(long, default_value = "16M", value_parser = parse_size)]
    pub bytes: u64,
    /// Bytes per message (one RDMA WRITE each).
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    pub msg_size: u64,
    /// Paths of the connection (source ports).
    #[arg(long, default_value_t = 4)]
    pub paths: u8,
    /// Ordered streams the messages are spread over.
    #[arg(long, default_value_t = 1)]
    pub streams: u8,
    /// Drop each packet the sender sends with this probability (0.01 or 1%).
    #[arg(long, default_value = "0", value_parser = parse_drop)]
    pub drop: u32,
    /// Fail unless the receiver reports every byte matched.
    #[arg(long)]
    pub verify: bool,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct SendArgs {
    /// The server's transport socket: IP or IP:PORT.
    #[arg(long)]
    pub to: String,
    /// Local address (default: 127.0.0.1 for a loopback server, else
    /// 0.0.0.0; port 0).
    #[arg(long)]
    pub bind: Option<String>,
    #[command(flatten)]
    pub t: Transfer,
}

#[derive(Args)]
pub struct LoopbackArgs {
    /// The receiving end checks against this seed instead of the sender's.
    #[arg(long)]
    pub expect_seed: Option<u64>,
    #[command(flatten)]
    pub t: Transfer,
}

/// `16M`, `256MiB`, `4096`, `1g`: binary units.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let num_end = lower.find(|c: char| !c.is_ascii_digit()).unwrap_or(lower.len());
    let (num, unit) = lower.split_at(num_end);
    let n: u64 = num.parse().map_err(|_| format!("`{s}`: give a number of bytes, e.g. 4096, 64K, 16M, 1G"))?;
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        _ => return Err(format!("`{s}`: unknown unit (K, M, G)")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{s}` overflows"))
}

/// `0.01` or `1%` -> parts per million.
pub fn parse_drop(s: &str) -> Result<u32, String> {
    let (v, scale) = match s.strip_suffix('%') {
        Some(p) => (p, 1e4),
        None => (s, 1e6),
    };
    let f: f64 = v.trim().parse().map_err(|_| format!("`{s}`: give a probability like 0.01 or 1%"))?;
    let ppm = (f * scale).round();
    if !(0.0..=1e6).contains(&ppm) {
        return Err(format!("`{s}`: a probability is between 0 and 1"));
    }
    Ok(ppm as u32)
}

fn load_config(c: &Common) -> Result<Config> {
    match &c.config {
        None => Ok(transfer::udp_config()),
        Some(name) => Config::load(name).with_context(|| format!("config {name}")),
    }
}

/// `IP` or `IP:PORT`, IPv4.
fn parse_addr(s: &str, default_port: u16) -> Result<SocketAddrV4> {
    if let Ok(a) = s.parse::<SocketAddrV4>() {
        return Ok(a);
    }
    let ip: Ipv4Addr = s.parse().with_context(|| format!("`{s}`: give an IPv4 address, IP or IP:PORT"))?;
    Ok(SocketAddrV4::new(ip, default_port))
}

fn send_opts(t: &Transfer) -> Result<SendOpts> {
    let msg_size = u32::try_from(t.msg_size).ok().filter(|&m| m > 0).context("--msg-size: give 1 byte to 4 GiB - 1")?;
    Ok(SendOpts {
        bytes: t.bytes,
        msg_size,
        paths: t.paths,
        streams: t.streams,
        seed: t.common.seed,
        timeout: Duration::from_secs(t.timeout),
    })
}

pub fn run(c: RefCmd) -> Result<()> {
    match c {
        RefCmd::Serve(a) => serve(a),
        RefCmd::Send(a) => send(a),
        RefCmd::Loopback(a) => loopback(a),
    }
}

fn serve(a: ServeArgs) -> Result<()> {
    let cfg = load_config(&a.common)?;
    let bind = parse_addr(&a.bind, cfg.transport.udp_port)?;
    let mut d = UdpDriver::bind(bind, cfg, a.common.seed, DriverOpts::default())
        .with_context(|| format!("cannot bind the transport socket at {bind}"))?;
    // The first line names the port, for callers that bound port 0.
    println!("listening on {}", d.local_addr());
    let opts = ServeOpts { expect_seed: a.expect_seed, ..ServeOpts::default() };
    loop {
        let r = transfer::serve(&mut d, &opts).context("serving a transfer")?;
        print!("{r}");
        if !a.keep_serving {
            if !r.verdict.matched {
                bail!(
                    "verification failed: {} of {} bytes differ, first at offset {}",
                    r.verdict.mismatched,
                    r.hello.bytes,
                    r.verdict.first_mismatch
                );
            }
            return Ok(());
        }
        println!();
    }
}

fn send(a: SendArgs) -> Result<()> {
    let cfg = load_config(&a.t.common)?;
    let to = parse_addr(&a.to, cfg.transport.udp_port)?;
    let bind = match &a.bind {
        Some(b) => parse_addr(b, 0)?,
        None if to.ip().is_loopback() => SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0),
        None => SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0),
    };
    let opts = send_opts(&a.t)?;
    let dopts = DriverOpts { drop_ppm: a.t.drop, drop_seed: a.t.common.seed, ..DriverOpts::default() };
    let mut d = UdpDriver::bind(bind, cfg, a.t.common.seed, dopts).with_context(|| format!("cannot bind {bind}"))?;
    let r = transfer::send(&mut d, to, &opts).with_context(|| format!("sending to {to}"))?;
    print!("{r}");
    check_verdict(&a.t, &r)
}

fn check_verdict(t: &Transfer, r: &transfer::SendReport) -> Result<()> {
    if t.verify {
        match r.verdict {
            Some(v) if v.matched => {}
            Some(v) => bail!("verification failed at the server: {} bytes differ", v.mismatched),
            None => bail!("--verify: the server sent no verdict"),
        }
    }
    Ok(())
}

fn loopback(a: LoopbackArgs) -> Result<()> {
    let cfg = load_config(&a.t.common)?;
    let opts = send_opts(&a.t)?;
    let (sent, served) = transfer::loopback(&cfg, &opts, a.t.drop, a.expect_seed).context("loopback transfer")?;
    println!("== sender");
    print!("{sent}");
    println!("== receiver");
    let served = served.context("the receiving end")?;
    print!("{served}");
    check_verdict(&a.t, &sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_drops_parse() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("12x").is_err());
        assert_eq!(parse_drop("1%"), Ok(10_000));
        assert_eq!(parse_drop("0.05"), Ok(50_000));
        assert!(parse_drop("2").is_err());
    }
}
