//! One bulk transfer between two NICs over UDP ([`crate::udp`]): what
//! `mrnic ref serve`, `ref send`, `ref loopback` and `bench udp` run.
//!
//! # The transfer
//! The sender registers `bytes` of local memory filled with a seeded
//! pattern ([`pattern_fill`]: the byte at offset `o` is a function of the
//! seed and `o`, so both ends can produce it), and posts one RDMA WRITE per
//! `msg_size` bytes, message `i` on stream `i % streams`, to the same offset
//! of the server's region. The transfer is complete when every WRITE has
//! completed at the sender (each one is acknowledged, so placed at the
//! server). The server then checks its region byte for byte against the
//! pattern of the seed the sender announced (or the one it was told to
//! expect).
//!
//! # Connection setup, out of band \[I\]
//! A tiny handshake in *control datagrams* on the same UDP sockets as the
//! transport: 8 bytes [`CONTROL_MAGIC`], a kind byte, then big-endian
//! fields. The magic's first byte has version nibble 4, so a control
//! datagram is never taken for a transport packet. All go between the two
//! transport sockets, and are resent until answered.
//!
//! | kind | from | fields |
//! |---|---|---|
//! | 1 HELLO | sender | session u64, sender conn id u32, paths u8, streams u8, bytes u64, msg_size u32, seed u64, first psn u32 |
//! | 2 WELCOME | server | session u64, server conn id u32, rkey u32, region base u64 |
//! | 3 REJECT | server | session u64, reason (UTF-8, rest of the datagram) |
//! | 4 DONE | sender | session u64, ok u8, elapsed ns u64, packets u64, retransmits u64, injected drops u64, rows u8, rows x 41 bytes of [`PathRow`] |
//! | 5 VERDICT | server | session u64, matched u8, mismatched bytes u64, first mismatch offset u64, bytes placed u64, duplicates u64 |
//!
//! HELLO is resent every 200 ms until WELCOME or REJECT (5 s at most);
//! DONE every 100 ms until VERDICT (5 s at most). The server answers a
//! repeated HELLO or DONE of its session again, and after its VERDICT lingers
//! [`LINGER`] past the last DONE before it ends. The sender's first psn on
//! every path is derived from the seed, so long transfers cross the 24-bit
//! wrap for some seeds.

use std::fmt;
use std::io;
use std::net::SocketAddrV4;
use std::time::{Duration, Instant};

use mrnic_proto::Config;

use crate::fixed::SEQ_MASK;
use crate::memory::Access;
use crate::path::{PathState, MIN_RTT_NONE};
use crate::rng::splitmix64;
use crate::udp::{DriverOpts, DriverStats, UdpDriver, CONTROL_MAGIC};
use crate::udp_sys;
use crate::verbs::{ConnParams, Sge, Status, VerbsError, WorkRequest, WrOp};

/// Where the sender's source buffer lives in its memory.
pub const SRC_BASE: u64 = 0x1_0000_0000;
/// Where the server's target region lives in its memory.
pub const DST_BASE: u64 = 0x2_0000_0000;
/// Connection ids (they differ so that a swapped id shows).
pub const SENDER_CONN: u32 = 0x000011;
pub const SERVER_CONN: u32 = 0x000022;
/// How long the server keeps answering after the last DONE.
pub const LINGER: Duration = Duration::from_millis(300);
/// Largest transfer: a region is at most 4 GiB.
pub const MAX_BYTES: u64 = 1 << 32;

/// The protocol config the `ref` commands use unless given one: the
/// built-in `default`, with timers for software on a shared host instead of
/// hardware (a 1.024 us timestamp unit, so the 16-bit RTT echo spans 67 ms;
/// RTO 2..60 ms; initial RTT 200 us; DEAD paths probed every 20 ms).
pub fn udp_config() -> Config {
    let mut c = Config::builtin("default").expect("the built-in default config parses");
    c.name = "default+udp-timers".into();
    c.timers.ts_unit_ns = 1024;
    c.timers.initial_rtt_us = 200;
    c.timers.rto_min_us = 2_000;
    c.timers.rto_max_us = 60_000;
    c.timers.dead_probe_interval_us = 20_000;
    c.cc.init_cwnd_bytes = c.cc.max_cwnd_bytes;
    c
}

// ---------------------------------------------------------------- pattern

fn pattern_word(seed: u64, i: u64) -> [u8; 8] {
    let mut s = seed ^ i.wrapping_mul(0xd6e8_feb8_6659_fd93);
    splitmix64(&mut s).to_le_bytes()
}

/// Fills `buf` with the pattern of `seed` from byte offset `offset`.
pub fn pattern_fill(seed: u64, offset: u64, buf: &mut [u8]) {
    let mut o = offset;
    let mut i = 0;
    while i < buf.len() {
        let w = pattern_word(seed, o / 8);
        let k = (o % 8) as usize;
        let n = (8 - k).min(buf.len() - i);
        buf[i..i + n].copy_from_slice(&w[k..k + n]);
        i += n;
        o += n as u64;
    }
}

/// Bytes of `data` (at byte offset 0 of the pattern) that differ from the
/// pattern of `seed`, and the offset of the first.
pub fn pattern_mismatch(seed: u64, data: &[u8]) -> (u64, Option<u64>) {
    let mut scratch = vec![0u8; 1 << 16];
    let (mut bad, mut first) = (0u64, None);
    for (c, chunk) in data.chunks(scratch.len()).enumerate() {
        let off = (c * scratch.len()) as u64;
        let want = &mut scratch[..chunk.len()];
        pattern_fill(seed, off, want);
        if want != chunk {
            for (j, (a, b)) in chunk.iter().zip(want.iter()).enumerate() {
                if a != b {
                    bad += 1;
                    first.get_or_insert(off + j as u64);
                }
            }
        }
    }
    (bad, first)
}

// ---------------------------------------------------------------- errors

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("socket: {0}")]
    Io(#[from] io::Error),
    #[error("verbs: {0}")]
    Verbs(#[from] VerbsError),
    #[error("no answer from {0} within 5 s: is `mrnic ref serve --bind {0}` running?")]
    NoServer(SocketAddrV4),
    #[error("the server refused the transfer: {0}")]
    Rejected(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("the transfer failed: a work request completed with {0:?}")]
    Failed(Status),
    #[error("the transfer did not complete within {0:?} ({1} of {2} messages done)")]
    Timeout(Duration, usize, usize),
    #[error("the peer went quiet for {0:?} before the transfer ended")]
    PeerQuiet(Duration),
    #[error("no verdict from the server within 5 s of the end of the transfer")]
    NoVerdict,
}

// ---------------------------------------------------------------- control

const HELLO: u8 = 1;
const WELCOME: u8 = 2;
const REJECT: u8 = 3;
const DONE: u8 = 4;
const VERDICT: u8 = 5;

/// What the sender asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub session: u64,
    pub conn: u32,
    pub paths: u8,
    pub streams: u8,
    pub bytes: u64,
    pub msg_size: u32,
    pub seed: u64,
    pub psn: u32,
}

/// One row of the per-path telemetry table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathRow {
    pub path: u8,
    pub sport: u16,
    pub gen: u8,
    pub state: PathState,
    /// Nanoseconds; `min_rtt_ns` is `u32::MAX` before the first sample.
    pub srtt_ns: u32,
    pub rttvar_ns: u32,
    pub min_rtt_ns: u32,
    pub cwnd: u32,
    pub inflight: u32,
    /// ECN EWMA, Q0.8.
    pub ecn: u8,
    pub weight: u8,
    pub packets: u64,
    pub retx: u64,
}

const ROW_LEN: usize = 41;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ctl {
    Hello(Hello),
    Welcome { session: u64, conn: u32, rkey: u32, base: u64 },
    Reject { session: u64, reason: String },
    Done(Done),
    Verdict(Verdict),
}

/// The sender's end-of-transfer report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub session: u64,
    pub ok: bool,
    pub elapsed_ns: u64,
    pub packets: u64,
    pub retransmits: u64,
    pub injected_drops: u64,
    pub rows: Vec<PathRow>,
}

/// The server's check of its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub session: u64,
    pub matched: bool,
    pub mismatched: u64,
    pub first_mismatch: u64,
    pub placed: u64,
    pub duplicates: u64,
}

struct W(Vec<u8>);
impl W {
    fn new(kind: u8) -> W {
        let mut v = CONTROL_MAGIC.to_vec();
        v.push(kind);
        W(v)
    }
    fn u8(mut self, v: u8) -> W {
        self.0.push(v);
        self
    }
    fn u16(mut self, v: u16) -> W {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u32(mut self, v: u32) -> W {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(mut self, v: u64) -> W {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
}

struct R<'a>(&'a [u8]);
impl R<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (a, b) = self.0.split_at_checked(N)?;
        self.0 = b;
        a.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_be_bytes)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_be_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_be_bytes)
    }
}

fn state_from(v: u8) -> PathState {
    match v {
        0 => PathState::Good,
        1 => PathState::Skip,
        2 => PathState::Suspect,
        _ => PathState::Dead,
    }
}

impl Ctl {
    fn encode(&self) -> Vec<u8> {
        match self {
            Ctl::Hello(h) => {
                W::new(HELLO)
                    .u64(h.session)
                    .u32(h.conn)
                    .u8(h.paths)
                    .u8(h.streams)
                    .u64(h.bytes)
                    .u32(h.msg_size)
                    .u64(h.seed)
                    .u32(h.psn)
                    .0
            }
            Ctl::Welcome { session, conn, rkey, base } => {
                W::new(WELCOME).u64(*session).u32(*conn).u32(*rkey).u64(*base).0
            }
            Ctl::Reject { session, reason } => {
                let mut w = W::new(REJECT).u64(*session);
                w.0.extend_from_slice(reason.as_bytes());
                w.0
            }
            Ctl::Done(d) => {
                let mut w = W::new(DONE)
                    .u64(d.session)
                    .u8(d.ok as u8)
                    .u64(d.elapsed_ns)
                    .u64(d.packets)
                    .u64(d.retransmits)
                    .u64(d.injected_drops)
                    .u8(d.rows.len() as u8);
                for r in &d.rows {
                    w = w
                        .u8(r.path)
                        .u16(r.sport)
                        .u8(r.gen)
                        .u8(r.state as u8)
                        .u32(r.srtt_ns)
                        .u32(r.rttvar_ns)
                        .u32(r.min_rtt_ns)
                        .u32(r.cwnd)
                        .u16(r.inflight as u16)
                        .u8(r.ecn)
                        .u8(r.weight)
                        .u64(r.packets)
                        .u64(r.retx);
                }
                w.0
            }
            Ctl::Verdict(v) => {
                W::new(VERDICT)
                    .u64(v.session)
                    .u8(v.matched as u8)
                    .u64(v.mismatched)
                    .u64(v.first_mismatch)
                    .u64(v.placed)
                    .u64(v.duplicates)
                    .0
            }
        }
    }

    fn decode(b: &[u8]) -> Option<Ctl> {
        let rest = b.strip_prefix(CONTROL_MAGIC)?;
        let (&kind, rest) = rest.split_first()?;
        let mut r = R(rest);
        Some(match kind {
            HELLO => Ctl::Hello(Hello {
                session: r.u64()?,
                conn: r.u32()?,
                paths: r.u8()?,
                streams: r.u8()?,
                bytes: r.u64()?,
                msg_size: r.u32()?,
                seed: r.u64()?,
                psn: r.u32()?,
            }),
            WELCOME => Ctl::Welcome { session: r.u64()?, conn: r.u32()?, rkey: r.u32()?, base: r.u64()? },
            REJECT => Ctl::Reject { session: r.u64()?, reason: String::from_utf8_lossy(r.0).into_owned() },
            DONE => {
                let mut d = Done {
                    session: r.u64()?,
                    ok: r.u8()? != 0,
                    elapsed_ns: r.u64()?,
                    packets: r.u64()?,
                    retransmits: r.u64()?,
                    injected_drops: r.u64()?,
                    rows: Vec::new(),
                };
                let n = r.u8()?;
                if r.0.len() != n as usize * ROW_LEN {
                    return None;
                }
                for _ in 0..n {
                    d.rows.push(PathRow {
                        path: r.u8()?,
                        sport: r.u16()?,
                        gen: r.u8()?,
                        state: state_from(r.u8()?),
                        srtt_ns: r.u32()?,
                        rttvar_ns: r.u32()?,
                        min_rtt_ns: r.u32()?,
                        cwnd: r.u32()?,
                        inflight: r.u16()? as u32,
                        ecn: r.u8()?,
                        weight: r.u8()?,
                        packets: r.u64()?,
                        retx: r.u64()?,
                    });
                }
                Ctl::Done(d)
            }
            VERDICT => Ctl::Verdict(Verdict {
                session: r.u64()?,
                matched: r.u8()? != 0,
                mismatched: r.u64()?,
                first_mismatch: r.u64()?,
                placed: r.u64()?,
                duplicates: r.u64()?,
            }),
            _ => return None,
        })
    }
}

// ---------------------------------------------------------------- reports

/// The per-path telemetry table of connection `conn` of the driver's NIC.
pub fn path_rows(d: &UdpDriver, conn: u32) -> Vec<PathRow> {
    let unit = d.nic.params().ts_unit_ns as u32;
    let Some(info) = d.nic.conn_info(conn) else { return Vec::new() };
    info.paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let tx = d.path_tx(i as u8);
            PathRow {
                path: i as u8,
                sport: p.sport,
                gen: p.gen,
                state: p.state,
                srtt_ns: p.srtt.saturating_mul(unit),
                rttvar_ns: p.rttvar.saturating_mul(unit),
                min_rtt_ns: if p.min_rtt == MIN_RTT_NONE { u32::MAX } else { p.min_rtt.saturating_mul(unit) },
                cwnd: p.cwnd,
                inflight: p.inflight,
                ecn: p.ecn_ewma,
                weight: p.weight,
                packets: tx.packets,
                retx: tx.retx,
            }
        })
        .collect()
}

/// Writes the per-path telemetry table.
pub fn write_table(f: &mut impl fmt::Write, rows: &[PathRow]) -> fmt::Result {
    writeln!(
        f,
        "{:>4} {:>5} {:>3} {:>7} {:>9} {:>9} {:>9} {:>8} {:>8} {:>4} {:>6} {:>9} {:>6}",
        "path",
        "sport",
        "gen",
        "state",
        "srtt_us",
        "rttvar_us",
        "minrtt_us",
        "cwnd",
        "inflight",
        "ecn",
        "weight",
        "packets",
        "retx"
    )?;
    let us = |ns: u32| if ns == u32::MAX { "-".to_string() } else { format!("{:.1}", ns as f64 / 1000.0) };
    for r in rows {
        writeln!(
            f,
            "{:>4} {:>5} {:>3} {:>7} {:>9} {:>9} {:>9} {:>8} {:>8} {:>4} {:>6} {:>9} {:>6}",
            r.path,
            r.sport,
            r.gen,
            r.state.name(),
            us(r.srtt_ns),
            us(r.rttvar_ns),
            us(r.min_rtt_ns),
            r.cwnd,
            r.inflight,
            r.ecn,
            r.weight,
            r.packets,
            r.retx
        )?;
    }
    Ok(())
}

fn rate(bytes: u64, ns: u64) -> String {
    let s = ns.max(1) as f64 / 1e9;
    format!("{:.2} Gbit/s ({:.0} MB/s)", bytes as f64 * 8.0 / s / 1e9, bytes as f64 / s / 1e6)
}

/// What `ref send` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct SendReport {
    pub to: SocketAddrV4,
    pub hello: Hello,
    pub messages: usize,
    pub elapsed: Duration,
    pub packets: u64,
    pub retransmits: u64,
    pub injected_drops: u64,
    pub sack_losses: u64,
    pub rto_fired: u64,
    pub re_entropy: u64,
    pub rows: Vec<PathRow>,
    /// The server's verdict, if it answered.
    pub verdict: Option<Verdict>,
    /// The sender's socket-level counts, and its CPU time in the transfer.
    pub driver: DriverStats,
    pub cpu: Duration,
}

impl SendReport {
    pub fn goodput_gbps(&self) -> f64 {
        self.hello.bytes as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9) / 1e9
    }
}

impl fmt::Display for SendReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let h = &self.hello;
        writeln!(
            f,
            "sent {} bytes to {} in {} messages of {} on {} paths, {} streams, seed {}",
            h.bytes, self.to, self.messages, h.msg_size, h.paths, h.streams, h.seed
        )?;
        writeln!(
            f,
            "time {:.3} s, goodput {}",
            self.elapsed.as_secs_f64(),
            rate(h.bytes, self.elapsed.as_nanos() as u64)
        )?;
        writeln!(
            f,
            "packets {}, retransmissions {} ({:.2}%), injected drops {}, SACK-detected losses {}, RTOs {}, re-entropy {}",
            self.packets,
            self.retransmits,
            100.0 * self.retransmits as f64 / self.packets.max(1) as f64,
            self.injected_drops,
            self.sack_losses,
            self.rto_fired,
            self.re_entropy
        )?;
        writeln!(
            f,
            "sender thread: CPU {:.3} s, {} waits for {:.3} s; {} datagrams out, {} in",
            self.cpu.as_secs_f64(),
            self.driver.waits,
            self.driver.wait_ns as f64 / 1e9,
            self.driver.tx_datagrams,
            self.driver.rx_datagrams
        )?;
        match &self.verdict {
            Some(v) if v.matched => writeln!(f, "verify: OK, all {} bytes match at the server", h.bytes)?,
            Some(v) => writeln!(
                f,
                "verify: MISMATCH, {} bytes differ at the server, first at offset {}",
                v.mismatched, v.first_mismatch
            )?,
            None => writeln!(f, "verify: no verdict from the server")?,
        }
        write_table(f, &self.rows)
    }
}

/// What `ref serve` reports for one transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeReport {
    pub from: SocketAddrV4,
    pub hello: Hello,
    /// The seed checked against.
    pub expected_seed: u64,
    pub done: Done,
    pub verdict: Verdict,
    /// From WELCOME to DONE.
    pub elapsed: Duration,
    /// CPU time of the serving thread over `elapsed`.
    pub cpu: Duration,
    pub sacks_sent: u64,
    pub rx_packets: u64,
    pub bad_icrc: u64,
}

impl fmt::Display for ServeReport {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (h, v, d) = (&self.hello, &self.verdict, &self.done);
        writeln!(
            f,
            "received {} bytes from {} on {} paths, {} streams, seed {}",
            h.bytes, self.from, h.paths, h.streams, h.seed
        )?;
        writeln!(
            f,
            "time {:.3} s, goodput {} (sender: {:.3} s, {})",
            self.elapsed.as_secs_f64(),
            rate(h.bytes, self.elapsed.as_nanos() as u64),
            d.elapsed_ns as f64 / 1e9,
            rate(h.bytes, d.elapsed_ns)
        )?;
        writeln!(f, "server thread: CPU {:.3} s", self.cpu.as_secs_f64())?;
        writeln!(
            f,
            "packets received {}, placed bytes {}, duplicates {}, bad ICRC {}, SACKs sent {}; sender: packets {}, retransmissions {} ({:.2}%), injected drops {}",
            self.rx_packets,
            v.placed,
            v.duplicates,
            self.bad_icrc,
            self.sacks_sent,
            d.packets,
            d.retransmits,
            100.0 * d.retransmits as f64 / d.packets.max(1) as f64,
            d.injected_drops
        )?;
        if v.matched {
            writeln!(f, "verify: OK, all {} bytes match the pattern of seed {}", h.bytes, self.expected_seed)?;
        } else {
            writeln!(
                f,
                "verify: MISMATCH against the pattern of seed {}: {} bytes differ, first at offset {}",
                self.expected_seed, v.mismatched, v.first_mismatch
            )?;
        }
        writeln!(f, "per-path telemetry (the sender's, from its DONE):")?;
        write_table(f, &d.rows)
    }
}

// ---------------------------------------------------------------- sender

/// What to send.
#[derive(Debug, Clone, PartialEq)]
pub struct SendOpts {
    pub bytes: u64,
    pub msg_size: u32,
    pub paths: u8,
    pub streams: u8,
    pub seed: u64,
    /// Give up after this long.
    pub timeout: Duration,
}

fn now_session() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
}

/// Runs one transfer to the server at `to`; `Ok` when every message
/// completed (the verdict is in the report). The driver's drop injection
/// applies to what it sends.
pub fn send(d: &mut UdpDriver, to: SocketAddrV4, o: &SendOpts) -> Result<SendReport, TransferError> {
    let p = d.nic.params();
    if o.bytes == 0 || o.bytes > MAX_BYTES {
        return Err(TransferError::BadRequest(format!("--bytes {}: give 1..={MAX_BYTES}", o.bytes)));
    }
    if o.msg_size == 0 {
        return Err(TransferError::BadRequest("--msg-size 0: give at least 1".into()));
    }
    if o.paths == 0 || o.paths as u32 > p.paths_max {
        return Err(TransferError::BadRequest(format!("--paths {}: the config allows 1..={}", o.paths, p.paths_max)));
    }
    if o.streams == 0 || o.streams as u32 > p.streams {
        return Err(TransferError::BadRequest(format!("--streams {}: the config allows 1..={}", o.streams, p.streams)));
    }
    let mut s = o.seed;
    let hello = Hello {
        session: now_session(),
        conn: SENDER_CONN,
        paths: o.paths,
        streams: o.streams,
        bytes: o.bytes,
        msg_size: o.msg_size,
        seed: o.seed,
        psn: (splitmix64(&mut s) as u32) & SEQ_MASK,
    };

    // Source memory, filled with the pattern.
    d.nic.reg_mr(SRC_BASE, o.bytes, Access::LOCAL)?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < o.bytes {
        let n = (o.bytes - off).min(chunk.len() as u64) as usize;
        pattern_fill(o.seed, off, &mut chunk[..n]);
        d.nic.write_mem(SRC_BASE + off, &chunk[..n])?;
        off += n as u64;
    }

    // Handshake.
    let hello_bytes = Ctl::Hello(hello).encode();
    let mut welcome = None;
    let start = Instant::now();
    let mut last_sent: Option<Instant> = None;
    while welcome.is_none() {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(TransferError::NoServer(to));
        }
        if last_sent.is_none_or(|t| t.elapsed() >= Duration::from_millis(200)) {
            d.send_control(to, &hello_bytes);
            last_sent = Some(Instant::now());
        }
        d.step(Duration::from_millis(20))?;
        while let Some((_, b)) = d.take_control() {
            match Ctl::decode(&b) {
                Some(Ctl::Welcome { session, conn, rkey, base }) if session == hello.session => {
                    welcome = Some((conn, rkey, base))
                }
                Some(Ctl::Reject { session, reason }) if session == hello.session => {
                    return Err(TransferError::Rejected(reason))
                }
                _ => {}
            }
        }
    }
    let (server_conn, rkey, base) = welcome.expect("loop ends with it");
    let server_node = u32::from(*to.ip());
    d.add_peer(server_node, to);
    d.create_conn(ConnParams {
        local_id: SENDER_CONN,
        remote_id: server_conn,
        remote: server_node,
        paths: o.paths,
        tx_psn: hello.psn,
        rx_psn: 0,
    })?;

    // The messages.
    let n_msgs = o.bytes.div_ceil(o.msg_size as u64) as usize;
    let t0 = Instant::now();
    for i in 0..n_msgs {
        let off = i as u64 * o.msg_size as u64;
        let len = (o.bytes - off).min(o.msg_size as u64);
        let wr = WorkRequest {
            wr_id: i as u64,
            op: WrOp::Write { remote_addr: base + off, rkey },
            imm: None,
            local: Sge { addr: SRC_BASE + off, len },
        };
        d.nic.post_send(SENDER_CONN, (i % o.streams as usize) as u8, wr)?;
    }
    let (cpu0, stats0) = (udp_sys::thread_cpu_time(), d.stats);
    let mut completed = 0usize;
    let mut failure = None;
    let finished = d.run_until(o.timeout, |d| {
        for c in d.nic.poll_cq(usize::MAX) {
            if c.status == Status::Success {
                completed += 1;
            } else {
                failure.get_or_insert(c.status);
            }
        }
        completed == n_msgs || failure.is_some()
    })?;
    let elapsed = t0.elapsed();
    let cpu = udp_sys::thread_cpu_time().saturating_sub(cpu0);
    let mut driver = d.stats;
    driver.waits -= stats0.waits;
    driver.wait_ns -= stats0.wait_ns;
    if let Some(st) = failure {
        return Err(TransferError::Failed(st));
    }
    if !finished {
        return Err(TransferError::Timeout(o.timeout, completed, n_msgs));
    }

    let c = *d.nic.counters();
    let rows = path_rows(d, SENDER_CONN);
    let done = Done {
        session: hello.session,
        ok: true,
        elapsed_ns: elapsed.as_nanos() as u64,
        packets: c.tx_packets + c.tx_retransmits,
        retransmits: c.tx_retransmits,
        injected_drops: d.stats.injected_drops,
        rows: rows.clone(),
    };
    let done_bytes = Ctl::Done(done).encode();
    let mut verdict = None;
    let vstart = Instant::now();
    let mut last_sent: Option<Instant> = None;
    while verdict.is_none() && vstart.elapsed() < Duration::from_secs(5) {
        if last_sent.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) {
            d.send_control(to, &done_bytes);
            last_sent = Some(Instant::now());
        }
        d.step(Duration::from_millis(10))?;
        while let Some((_, b)) = d.take_control() {
            if let Some(Ctl::Verdict(v)) = Ctl::decode(&b) {
                if v.session == hello.session {
                    verdict = Some(v);
                }
            }
        }
    }
    Ok(SendReport {
        to,
        hello,
        messages: n_msgs,
        elapsed,
        packets: c.tx_packets + c.tx_retransmits,
        retransmits: c.tx_retransmits,
        injected_drops: d.stats.injected_drops,
        sack_losses: c.sack_losses,
        rto_fired: c.rto_fired,
        re_entropy: c.re_entropy,
        rows,
        verdict,
        driver,
        cpu,
    })
}

// ---------------------------------------------------------------- server

/// How to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOpts {
    /// Check against this seed instead of the one the sender announces.
    pub expect_seed: Option<u64>,
    /// Give up when the sender is silent this long mid-transfer.
    pub quiet_timeout: Duration,
    /// Give up waiting for a HELLO after this long (None: wait forever).
    pub wait_timeout: Option<Duration>,
}

impl Default for ServeOpts {
    fn default() -> ServeOpts {
        ServeOpts { expect_seed: None, quiet_timeout: Duration::from_secs(30), wait_timeout: None }
    }
}

fn check_hello(h: &Hello, d: &UdpDriver) -> Result<(), String> {
    let p = d.nic.params();
    if h.bytes == 0 || h.bytes > MAX_BYTES {
        return Err(format!("{} bytes: the server takes 1..={MAX_BYTES}", h.bytes));
    }
    if h.paths == 0 || h.paths as u32 > p.paths_max {
        return Err(format!("{} paths: the server's config allows 1..={}", h.paths, p.paths_max));
    }
    if h.streams == 0 || h.streams as u32 > p.streams {
        return Err(format!("{} streams: the server's config allows 1..={}", h.streams, p.streams));
    }
    Ok(())
}

/// Serves one transfer: waits for a HELLO, takes the data, checks it when
/// the sender says DONE, answers with the verdict, lingers, returns.
pub fn serve(d: &mut UdpDriver, o: &ServeOpts) -> Result<ServeReport, TransferError> {
    // Wait for a valid HELLO.
    let wait_start = Instant::now();
    let (from, hello) = loop {
        if o.wait_timeout.is_some_and(|t| wait_start.elapsed() > t) {
            return Err(TransferError::PeerQuiet(wait_start.elapsed()));
        }
        d.step(Duration::from_millis(50))?;
        let mut got = None;
        while let Some((from, b)) = d.take_control() {
            if let Some(Ctl::Hello(h)) = Ctl::decode(&b) {
                match check_hello(&h, d) {
                    Ok(()) => got = Some((from, h)),
                    Err(reason) => {
                        d.send_control(from, &Ctl::Reject { session: h.session, reason }.encode());
                    }
                }
            }
        }
        if let Some(g) = got {
            break g;
        }
    };
    let expected_seed = o.expect_seed.unwrap_or(hello.seed);
    d.reset_nic(hello.seed ^ 0x5e7e);
    let rkey = d.nic.reg_mr(DST_BASE, hello.bytes, Access::REMOTE_WRITE)?;
    // Touch every page of the region now, so that page faults are not
    // charged to the transfer.
    let zeros = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < hello.bytes {
        let n = (hello.bytes - off).min(zeros.len() as u64) as usize;
        d.nic.write_mem(DST_BASE + off, &zeros[..n])?;
        off += n as u64;
    }
    let peer = u32::from(*from.ip());
    d.add_peer(peer, from);
    d.create_conn(ConnParams {
        local_id: SERVER_CONN,
        remote_id: hello.conn,
        remote: peer,
        paths: hello.paths,
        tx_psn: 0,
        rx_psn: hello.psn,
    })?;
    let welcome = Ctl::Welcome { session: hello.session, conn: SERVER_CONN, rkey, base: DST_BASE }.encode();
    d.send_control(from, &welcome);
    let (t0, cpu0) = (Instant::now(), udp_sys::thread_cpu_time());

    // Take the data until DONE.
    let mut last_rx = (d.stats.rx_datagrams, Instant::now());
    let done = loop {
        d.step(Duration::from_millis(20))?;
        let mut got = None;
        while let Some((f, b)) = d.take_control() {
            match Ctl::decode(&b) {
                Some(Ctl::Hello(h)) if h.session == hello.session => {
                    d.send_control(f, &welcome);
                }
                Some(Ctl::Hello(h)) => {
                    let reason = "busy with another transfer".to_string();
                    d.send_control(f, &Ctl::Reject { session: h.session, reason }.encode());
                }
                Some(Ctl::Done(dn)) if dn.session == hello.session => got = Some(dn),
                _ => {}
            }
        }
        if let Some(dn) = got {
            break dn;
        }
        if d.stats.rx_datagrams != last_rx.0 {
            last_rx = (d.stats.rx_datagrams, Instant::now());
        } else if last_rx.1.elapsed() > o.quiet_timeout {
            return Err(TransferError::PeerQuiet(o.quiet_timeout));
        }
    };
    let (elapsed, cpu) = (t0.elapsed(), udp_sys::thread_cpu_time().saturating_sub(cpu0));

    // Check the region.
    let c = *d.nic.counters();
    let image = d.nic.read_mem(DST_BASE, hello.bytes)?;
    let (mismatched, first) = pattern_mismatch(expected_seed, image);
    let verdict = Verdict {
        session: hello.session,
        matched: done.ok && mismatched == 0,
        mismatched,
        first_mismatch: first.unwrap_or(0),
        placed: c.rx_placed_bytes,
        duplicates: c.rx_duplicate,
    };
    let vbytes = Ctl::Verdict(verdict).encode();
    d.send_control(from, &vbytes);

    // Linger: answer a repeated DONE (the VERDICT may be lost).
    let mut last_done = Instant::now();
    while last_done.elapsed() < LINGER {
        d.step(Duration::from_millis(10))?;
        while let Some((f, b)) = d.take_control() {
            if let Some(Ctl::Done(dn)) = Ctl::decode(&b) {
                if dn.session == hello.session {
                    d.send_control(f, &vbytes);
                    last_done = Instant::now();
                }
            }
        }
    }
    Ok(ServeReport {
        from,
        hello,
        expected_seed,
        done,
        verdict,
        elapsed,
        cpu,
        sacks_sent: c.sacks_sent,
        rx_packets: c.rx_packets,
        bad_icrc: c.rx_bad_icrc,
    })
}

// ---------------------------------------------------------------- loopback

/// Both ends in one process on 127.0.0.1, each on its own thread with its
/// own driver: the server on an ephemeral port, the sender with `drop_ppm`
/// loss injected. Returns both reports (the server's may be an error).
pub fn loopback(
    cfg: &Config,
    o: &SendOpts,
    drop_ppm: u32,
    expect_seed: Option<u64>,
) -> Result<(SendReport, Result<ServeReport, TransferError>), TransferError> {
    let any = SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 0);
    let mut server = UdpDriver::bind(any, cfg.clone(), o.seed ^ 0x5e7e, DriverOpts::default())?;
    let to = server.local_addr();
    let sopts = ServeOpts { expect_seed, quiet_timeout: Duration::from_secs(30), wait_timeout: Some(o.timeout) };
    let handle = std::thread::Builder::new().name("ref-serve".into()).spawn(move || serve(&mut server, &sopts))?;
    let dopts = DriverOpts { drop_ppm, drop_seed: o.seed, ..DriverOpts::default() };
    let sent = UdpDriver::bind(any, cfg.clone(), o.seed, dopts)
        .map_err(TransferError::from)
        .and_then(|mut d| send(&mut d, to, o));
    let served = handle.join().expect("the server thread does not panic");
    Ok((sent?, served))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_position_dependent_and_checks() {
        let mut a = vec![0u8; 1000];
        pattern_fill(7, 0, &mut a);
        let mut b = vec![0u8; 13];
        pattern_fill(7, 501, &mut b);
        assert_eq!(&a[501..514], &b[..]);
        assert_eq!(pattern_mismatch(7, &a), (0, None));
        a[77] ^= 1;
        assert_eq!(pattern_mismatch(7, &a), (1, Some(77)));
        assert!(pattern_mismatch(8, &a).0 > 900);
    }

    #[test]
    fn control_messages_round_trip() {
        let h = Hello { session: 9, conn: 3, paths: 4, streams: 2, bytes: 1 << 30, msg_size: 65536, seed: 5, psn: 77 };
        let row = PathRow {
            path: 1,
            sport: 50000,
            gen: 2,
            state: PathState::Suspect,
            srtt_ns: 1,
            rttvar_ns: 2,
            min_rtt_ns: u32::MAX,
            cwnd: 4,
            inflight: 5,
            ecn: 6,
            weight: 7,
            packets: 8,
            retx: 9,
        };
        let all = [
            Ctl::Hello(h),
            Ctl::Welcome { session: 9, conn: 1, rkey: 2, base: 3 },
            Ctl::Reject { session: 9, reason: "no".into() },
            Ctl::Done(Done {
                session: 9,
                ok: true,
                elapsed_ns: 1,
                packets: 2,
                retransmits: 3,
                injected_drops: 4,
                rows: vec![row, row],
            }),
            Ctl::Verdict(Verdict {
                session: 9,
                matched: false,
                mismatched: 1,
                first_mismatch: 2,
                placed: 3,
                duplicates: 4,
            }),
        ];
        for c in all {
            assert_eq!(Ctl::decode(&c.encode()), Some(c));
        }
        assert_eq!(Ctl::decode(b"MRNICCTL\x01\x00"), None);
    }
}
