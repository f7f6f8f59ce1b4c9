//! The yardstick of `mrnic bench udp`: the same bytes as a transfer, sent as
//! a plain UDP blast with no transport. Same datagram size as a full data
//! packet (header + MTU payload + ICRC), same number of sending sockets (one
//! per path), the same socket buffers, datagrams sent in
//! `sendmmsg` batches like the driver's, and a receiver thread draining one socket with `recvmmsg` like
//! the driver. No acknowledgements, no retransmission: what is lost is
//! lost, and the rate counts delivered payload only.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::fmt;

use mrnic_proto::layouts::{data, ICRC_LEN};
use mrnic_proto::Config;

use crate::transfer::{self, SendOpts, SendReport, TransferError};
use crate::udp::DriverOpts;
use crate::udp_sys::{self, RecvBatch};

/// What a blast did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlastReport {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// Payload bytes delivered (datagrams received x payload per datagram).
    pub payload_delivered: u64,
    /// From the first send to the last datagram received.
    pub elapsed: Duration,
    pub datagram_len: usize,
    pub sockets: usize,
}

impl BlastReport {
    pub fn goodput_gbps(&self) -> f64 {
        self.payload_delivered as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9) / 1e9
    }

    pub fn loss(&self) -> f64 {
        1.0 - self.datagrams_received as f64 / self.datagrams_sent.max(1) as f64
    }
}

/// Blasts `bytes` of payload in datagrams of `payload + overhead` bytes from
/// `sockets` sockets on 127.0.0.1 to one receiving socket.
pub fn blast(bytes: u64, payload: usize, overhead: usize, sockets: usize) -> io::Result<BlastReport> {
    let opts = DriverOpts::default();
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
        udp_sys::set_buffers(&s, opts.socket_buffer)?;
        txs.push(s);
    }
    let n = bytes.div_ceil(payload as u64);
    let sender_done = Arc::new(AtomicBool::new(false));
    let done2 = sender_done.clone();
    let rx_batch = opts.rx_batch;
    let receiver =
        std::thread::Builder::new().name("blast-rx".into()).spawn(move || -> io::Result<(u64, Instant)> {
            let mut b = RecvBatch::new(rx_batch, payload + overhead + 64);
            let (mut got, mut last) = (0u64, Instant::now());
            let mut quiet_since: Option<Instant> = None;
            while got < n {
                let k = udp_sys::recv_batch(&rx, &mut b)?;
                if k > 0 {
                    got += k as u64;
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
                udp_sys::wait(&[std::os::fd::AsRawFd::as_raw_fd(&rx)], None, Duration::from_millis(5))?;
            }
            Ok((got, last))
        })?;
    let buf = vec![0xa5u8; payload + overhead];
    let start = Instant::now();
    let mut sent = 0u64;
    // Batches like the driver's: up to `tx_budget` datagrams round robin
    // over the sockets, one `sendmmsg` per socket (blocking sockets: a full
    // buffer waits instead of failing).
    let mut i = 0u64;
    while i < n {
        let k = (n - i).min(opts.tx_budget as u64);
        for (si, s) in txs.iter().enumerate() {
            let mine = (i..i + k).filter(|j| (j % txs.len() as u64) as usize == si).count();
            let msgs: Vec<(&[u8], SocketAddrV4)> = (0..mine).map(|_| (buf.as_slice(), to)).collect();
            let mut done = 0;
            while done < msgs.len() {
                match udp_sys::send_batch(s, &msgs[done..]) {
                    Ok(0) | Err(_) => break,
                    Ok(m) => done += m,
                }
            }
            sent += done as u64;
        }
        i += k;
    }
    sender_done.store(true, Ordering::Release);
    let (got, last) = receiver.join().expect("the receiver thread does not panic")?;
    Ok(BlastReport {
        datagrams_sent: sent,
        datagrams_received: got,
        payload_delivered: got * payload as u64,
        elapsed: last.saturating_duration_since(start),
        datagram_len: payload + overhead,
        sockets: txs.len(),
    })
}

/// `mrnic bench udp`: the blast, then the reference on loopback, with the
/// wall time and the process CPU time of each.
#[derive(Debug)]
pub struct Comparison {
    pub blast: BlastReport,
    pub blast_cpu: Duration,
    pub reference: SendReport,
    pub reference_cpu: Duration,
    pub verified: bool,
}

impl Comparison {
    pub fn ratio(&self) -> f64 {
        self.reference.goodput_gbps() / self.blast.goodput_gbps().max(1e-9)
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (b, r) = (&self.blast, &self.reference);
        writeln!(
            f,
            "plain UDP blast:  {:>7.2} Gbit/s  {:.3} s, CPU {:.3} s ({} datagrams of {} bytes from {} sockets, {:.2}% lost)",
            b.goodput_gbps(),
            b.elapsed.as_secs_f64(),
            self.blast_cpu.as_secs_f64(),
            b.datagrams_sent,
            b.datagram_len,
            b.sockets,
            100.0 * b.loss()
        )?;
        writeln!(
            f,
            "reference (UDP):  {:>7.2} Gbit/s  {:.3} s, CPU {:.3} s ({} packets, {} retransmitted, verify {})",
            r.goodput_gbps(),
            r.elapsed.as_secs_f64(),
            self.reference_cpu.as_secs_f64(),
            r.packets,
            r.retransmits,
            if self.verified { "OK" } else { "MISMATCH" }
        )?;
        writeln!(f, "ratio reference / blast: {:.2} (goal >= 0.80)", self.ratio())
    }
}

/// Runs the blast and the reference transfer of the same bytes.
pub fn compare(cfg: &Config, o: &SendOpts) -> Result<Comparison, TransferError> {
    let mtu = cfg.transport.mtu as usize;
    let overhead = data::LAYOUT.len + ICRC_LEN;
    let c0 = udp_sys::cpu_time();
    let blast = blast(o.bytes, mtu, overhead, o.paths as usize)?;
    let c1 = udp_sys::cpu_time();
    let (reference, served) = transfer::loopback(cfg, o, 0, None)?;
    let c2 = udp_sys::cpu_time();
    let served = served?;
    Ok(Comparison { blast, blast_cpu: c1 - c0, reference, reference_cpu: c2 - c1, verified: served.verdict.matched })
}
