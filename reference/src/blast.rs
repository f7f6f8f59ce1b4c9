//! `mrnic bench udp`: the reference over UDP on loopback against a plain UDP
//! blast of the same bytes, measured side by side in one run.
//!
//! The blast is the yardstick: what the sockets alone move with no
//! transport. To be a fair one it does everything the UDP driver does
//! except the transport:
//! - the same bytes: the transfer's seeded pattern, read from a source
//!   buffer of the transfer's size (datagram `i` is the window of the
//!   datagram's length at byte `i x MTU`), not one cached buffer sent again
//!   and again;
//! - the same datagram size as a full data packet (header + MTU payload +
//!   ICRC), one sending socket per path, one receiving socket, the driver's
//!   socket buffers;
//! - the same batching: rounds of at most the driver's `tx_budget`
//!   datagrams spread round robin over the sockets, one `sendmmsg` per
//!   socket per round ([`SendBatch`]), non-blocking sockets that wait in
//!   `ppoll` when full; the receiver drains with `recvmmsg` batches of the
//!   driver's `rx_batch` into buffers of the driver's size ([`RecvBatch`]),
//!   waiting in `ppoll` when empty.
//!
//! No acknowledgements, no retransmission: what is lost is lost, and the
//! rate counts delivered payload only.
//!
//! One comparison is several rounds, each a blast and a transfer of the same
//! bytes (the order alternates, so that a drift in machine load hits both
//! alike); the medians are the result.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mrnic_proto::layouts::{data, ICRC_LEN};
use mrnic_proto::Config;

use crate::transfer::{self, SendOpts, SendReport, TransferError};
use crate::udp::{DriverOpts, RX_SIZE};
use crate::udp_sys::{self, RecvBatch, SendBatch};

/// What a blast did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlastReport {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Payload bytes delivered (the payload part of each datagram received).
    pub payload_delivered: u64,
    /// From the first send to the last datagram received.
    pub elapsed: Duration,
    pub datagram_len: usize,
    pub sockets: usize,
    /// CPU time of the sending and of the receiving thread.
    pub tx_cpu: Duration,
    pub rx_cpu: Duration,
}

impl BlastReport {
    pub fn goodput_gbps(&self) -> f64 {
        gbps(self.payload_delivered, self.elapsed)
    }

    pub fn loss(&self) -> f64 {
        1.0 - self.datagrams_received as f64 / self.datagrams_sent.max(1) as f64
    }
}

fn gbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 * 8.0 / t.as_secs_f64().max(1e-9) / 1e9
}

/// Blasts `src[..payload_bytes]` in datagrams of `payload + overhead` bytes
/// (the window of that length at each multiple of `payload`; `src` holds
/// `overhead` bytes past the payload for the last one) from `sockets`
/// sockets on 127.0.0.1 to one receiving socket, batched like the UDP
/// driver with `opts`.
pub fn blast(
    src: &[u8],
    payload_bytes: u64,
    payload: usize,
    overhead: usize,
    sockets: usize,
    opts: &DriverOpts,
) -> io::Result<BlastReport> {
    assert!(payload > 0 && src.len() as u64 >= payload_bytes + overhead as u64, "the source holds every datagram");
    let lo = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0);
    let rx = UdpSocket::bind(lo)?;
    rx.set_nonblocking(true)?;
    udp_sys::set_buffers(&rx, opts.socket_buffer)?;
    let to = match rx.local_addr()? {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(_) => unreachable!("bound to 127.0.0.1"),
    };
    let mut txs = Vec::new();
    for _ in 0..sockets.max(1) {
        let s = UdpSocket::bind(lo)?;
        s.set_nonblocking(true)?;
        udp_sys::set_buffers(&s, opts.socket_buffer)?;
        txs.push(s);
    }
    let n = payload_bytes.div_ceil(payload as u64);
    let sender_done = Arc::new(AtomicBool::new(false));
    let done2 = sender_done.clone();
    let rx_batch = opts.rx_batch.max(1);
    let receiver = std::thread::Builder::new().name("blast-rx".into()).spawn(
        move || -> io::Result<(u64, u64, Instant, Duration)> {
            let cpu0 = udp_sys::thread_cpu_time();
            let mut b = RecvBatch::new(rx_batch, RX_SIZE);
            let (mut got, mut bytes, mut last) = (0u64, 0u64, Instant::now());
            let mut quiet_since: Option<Instant> = None;
            while got < n {
                let k = udp_sys::recv_batch(&rx, &mut b)?;
                if k > 0 {
                    got += k as u64;
                    bytes += (0..k).map(|i| (b.get(i).0.len() - overhead) as u64).sum::<u64>();
                    last = Instant::now();
                    quiet_since = None;
                    continue;
                }
                if done2.load(Ordering::Acquire) {
                    let q = *quiet_since.get_or_insert_with(Instant::now);
                    if q.elapsed() > Duration::from_millis(200) {
                        break;
                    }
                }
                udp_sys::wait(&[rx.as_raw_fd()], None, Duration::from_millis(5))?;
            }
            Ok((got, bytes, last, udp_sys::thread_cpu_time().saturating_sub(cpu0)))
        },
    )?;
    let datagram = |j: u64| {
        let at = (j * payload as u64) as usize;
        let len = (payload_bytes - j * payload as u64).min(payload as u64) as usize + overhead;
        &src[at..at + len]
    };
    let mut batch = SendBatch::new(opts.tx_budget);
    let socks = txs.len() as u64;
    let (start, cpu0) = (Instant::now(), udp_sys::thread_cpu_time());
    let mut sent = 0u64;
    let mut i = 0u64;
    while i < n {
        let k = (n - i).min(opts.tx_budget.max(1) as u64);
        for (si, s) in txs.iter().enumerate() {
            let mine = (i..i + k).filter(|j| j % socks == si as u64);
            let total = mine.clone().count();
            let mut done = 0;
            while done < total {
                match batch.send(s, mine.clone().skip(done).map(|j| (datagram(j), to))) {
                    Ok(0) => udp_sys::wait(&[], Some(s.as_raw_fd()), Duration::from_millis(5))?,
                    Ok(m) => done += m,
                    // Lost, as the driver counts a refused send.
                    Err(_) => done += 1,
                }
            }
            sent += done as u64;
        }
        i += k;
    }
    let tx_cpu = udp_sys::thread_cpu_time().saturating_sub(cpu0);
    sender_done.store(true, Ordering::Release);
    let (got, bytes, last, rx_cpu) = receiver.join().expect("the receiver thread does not panic")?;
    Ok(BlastReport {
        datagrams_sent: sent,
        datagrams_received: got,
        payload_delivered: bytes,
        elapsed: last.saturating_duration_since(start),
        datagram_len: payload + overhead,
        sockets: txs.len(),
        tx_cpu,
        rx_cpu,
    })
}

/// One round of `mrnic bench udp`: a blast and a transfer of the same bytes.
#[derive(Debug)]
pub struct Round {
    pub blast: BlastReport,
    pub reference: SendReport,
    /// CPU time of the reference's serving thread during the transfer.
    pub server_cpu: Duration,
    pub verified: bool,
    /// Whether the blast ran before the transfer in this round.
    pub blast_first: bool,
}

impl Round {
    pub fn ratio(&self) -> f64 {
        self.reference.goodput_gbps() / self.blast.goodput_gbps().max(1e-9)
    }
}

/// Every round of one `mrnic bench udp`.
#[derive(Debug)]
pub struct Comparison {
    pub rounds: Vec<Round>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl Comparison {
    pub fn median_ratio(&self) -> f64 {
        median(self.rounds.iter().map(Round::ratio).collect())
    }

    pub fn median_blast_gbps(&self) -> f64 {
        median(self.rounds.iter().map(|r| r.blast.goodput_gbps()).collect())
    }

    pub fn median_reference_gbps(&self) -> f64 {
        median(self.rounds.iter().map(|r| r.reference.goodput_gbps()).collect())
    }

    /// Every transfer verified byte for byte.
    pub fn verified(&self) -> bool {
        self.rounds.iter().all(|r| r.verified)
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(r) = self.rounds.first() {
            let (b, h) = (&r.blast, &r.reference.hello);
            writeln!(
                f,
                "{} bytes each way: blast of {} datagrams of {} bytes from {} sockets; reference WRITEs of {} bytes on {} paths",
                h.bytes, b.datagrams_sent, b.datagram_len, b.sockets, h.msg_size, h.paths
            )?;
        }
        writeln!(
            f,
            "{:>5}  {:>5}  {:>12} {:>8} {:>8} {:>6}  {:>12} {:>8} {:>8} {:>5} {:>6}  {:>5}",
            "round",
            "first",
            "blast Gb/s",
            "tx CPU",
            "rx CPU",
            "lost",
            "ref Gb/s",
            "tx CPU",
            "rx CPU",
            "retx",
            "verify",
            "ratio"
        )?;
        for (i, r) in self.rounds.iter().enumerate() {
            let (b, s) = (&r.blast, &r.reference);
            writeln!(
                f,
                "{:>5}  {:>5}  {:>12.2} {:>7.3}s {:>7.3}s {:>5.2}%  {:>12.2} {:>7.3}s {:>7.3}s {:>5} {:>6}  {:>5.2}",
                i + 1,
                if r.blast_first { "blast" } else { "ref" },
                b.goodput_gbps(),
                b.tx_cpu.as_secs_f64(),
                b.rx_cpu.as_secs_f64(),
                100.0 * b.loss(),
                s.goodput_gbps(),
                s.cpu.as_secs_f64(),
                r.server_cpu.as_secs_f64(),
                s.retransmits,
                if r.verified { "OK" } else { "FAIL" },
                r.ratio()
            )?;
        }
        let ratios: Vec<f64> = self.rounds.iter().map(Round::ratio).collect();
        writeln!(
            f,
            "median: blast {:.2} Gbit/s, reference {:.2} Gbit/s, ratio reference / blast {:.2} (min {:.2}, max {:.2}; goal >= 0.80)",
            self.median_blast_gbps(),
            self.median_reference_gbps(),
            self.median_ratio(),
            ratios.iter().copied().fold(f64::INFINITY, f64::min),
            ratios.iter().copied().fold(0.0, f64::max)
        )
    }
}

/// Runs `rounds` rounds of a blast and a reference transfer of `o.bytes`
/// (the transfer on loopback, both ends in this process, no loss).
pub fn compare(cfg: &Config, o: &SendOpts, rounds: usize) -> Result<Comparison, TransferError> {
    let mtu = cfg.transport.mtu as usize;
    let overhead = data::LAYOUT.len + ICRC_LEN;
    let opts = DriverOpts::default();
    let mut src = vec![0u8; o.bytes as usize + overhead];
    transfer::pattern_fill(o.seed, 0, &mut src);
    let mut out = Vec::new();
    for i in 0..rounds.max(1) {
        let blast_first = i % 2 == 0;
        let mut b = None;
        if blast_first {
            b = Some(blast(&src, o.bytes, mtu, overhead, o.paths as usize, &opts)?);
        }
        let (reference, served) = transfer::loopback(cfg, o, 0, None)?;
        if !blast_first {
            b = Some(blast(&src, o.bytes, mtu, overhead, o.paths as usize, &opts)?);
        }
        let served = served?;
        out.push(Round {
            blast: b.expect("ran"),
            reference,
            server_cpu: served.cpu,
            verified: served.verdict.matched,
            blast_first,
        });
    }
    Ok(Comparison { rounds: out })
}
