//! The UDP driver: the sans-IO [`Nic`] over real sockets, the way
//! [`crate::sim`] runs it over the lossy channel.
//!
//! Sockets (IPv4, Linux):
//! - one *transport* socket at the NIC's UDP port (the address given to
//!   [`UdpDriver::bind`]): data and PROBEs of the peer arrive here, and
//!   SACKs and NACKs leave from it;
//! - one socket *per path*, bound to the path's source port, so each path
//!   has its own source port on the wire as ECMP needs. The NIC names the
//!   port (`PathEntry::sport`); the socket is bound the first time a packet
//!   leaves with that port. Re-entropy is the NIC naming a new port: a new
//!   socket is bound, and the old one is closed once unused for
//!   [`IDLE_SOCKET`]. If the port is taken on this host the socket falls back
//!   to an ephemeral port, and the driver keeps presenting the NIC's port to
//!   the NIC (its SACKs come back to the socket, whichever port it has).
//!   SACKs for a path arrive on the path's socket.
//!
//! The loop ([`UdpDriver::step`]): receive everything waiting (batched with
//! `recvmmsg`), run the NIC's timers when due, transmit what the NIC gives
//! (a bounded batch, so receiving is never starved), and when none of these
//! had work, wait in `ppoll` for a socket or the NIC's next deadline. Time is
//! a monotonic clock in nanoseconds since the driver started.
//!
//! Addressing: a [`NodeAddr`] is an IPv4 address. Peers are registered with
//! their transport socket address ([`UdpDriver::add_peer`]): data and
//! PROBEs to a peer go there; SACKs and NACKs go to the peer's IP at the
//! packet's `dport` (the source port of the packet they answer). Incoming
//! packets take the peer whose IP they come from (two NICs on one IP, as in
//! a one-process loopback, each have one peer, so this is unambiguous).
//! Received packets carry ECT(0): reading the IP ECN field would need
//! IP_RECVTOS, and loopback marks nothing.
//!
//! Datagrams starting with [`CONTROL_MAGIC`] on the transport socket are
//! not transport packets (the first byte's version nibble is 4, not 0): they
//! are kept for the application ([`UdpDriver::take_control`]), which uses
//! them for out-of-band connection setup ([`crate::transfer`]).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mrnic_proto::headers::Opcode;
use mrnic_proto::layouts::{common, data};
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::Config;

use crate::nic::{Nic, NicConfig};
use crate::rng::Rng;
use crate::udp_sys::{self, RecvBatch, SendBatch};
use crate::verbs::{ConnParams, VerbsError};
use crate::wire::{NodeAddr, WirePacket};

/// First bytes of a control datagram (connection setup, end of transfer).
pub const CONTROL_MAGIC: &[u8; 8] = b"MRNICCTL";
/// A path socket unused this long after its path moved away is closed.
pub const IDLE_SOCKET: Duration = Duration::from_secs(1);
/// Largest datagram received (the MTU is at most 8192).
pub const RX_SIZE: usize = 9216;

/// Driver knobs.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverOpts {
    /// Drop each datagram this end sends with this probability, parts per
    /// million (loss injected at the sender).
    pub drop_ppm: u32,
    /// Seed of the drop generator.
    pub drop_seed: u64,
    /// Socket send and receive buffer asked for, bytes.
    pub socket_buffer: usize,
    /// Datagrams taken per `recvmmsg` call.
    pub rx_batch: usize,
    /// Packets transmitted per step at most (then the sockets are read).
    pub tx_budget: usize,
}

impl Default for DriverOpts {
    fn default() -> DriverOpts {
        DriverOpts { drop_ppm: 0, drop_seed: 1, socket_buffer: 32 << 20, rx_batch: 32, tx_budget: 64 }
    }
}

/// What the driver counted (the NIC counts the transport's own events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DriverStats {
    pub tx_datagrams: u64,
    pub tx_bytes: u64,
    pub rx_datagrams: u64,
    pub rx_bytes: u64,
    /// Datagrams dropped on purpose (`drop_ppm`).
    pub injected_drops: u64,
    /// Sends the kernel refused (other than "try again"): counted as lost.
    pub send_errors: u64,
    /// Packets to a NodeAddr with no registered peer: dropped.
    pub no_route: u64,
    /// Path sockets bound (the first per path, then one per re-entropy).
    pub path_binds: u64,
    /// Path sockets that could not get the NIC's port and took another.
    pub port_fallbacks: u64,
    /// Steps that found nothing to do and waited.
    pub waits: u64,
    /// Nanoseconds spent in those waits.
    pub wait_ns: u64,
}

/// Data packets that left with a given logical path id (the header's
/// path_id: a rerouted retransmission counts for its own path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathTx {
    pub packets: u64,
    pub retx: u64,
}

/// A datagram on its way out: the socket it leaves by (None: the transport
/// socket; Some(port): that path's socket) and where it goes.
struct Outgoing {
    via: Option<u16>,
    dst: SocketAddrV4,
    bytes: Vec<u8>,
    /// Handed to the kernel (or lost there) in this transmit round.
    sent: bool,
}

struct PathSock {
    sock: UdpSocket,
    last_used: Instant,
}

/// One NIC on UDP sockets.
pub struct UdpDriver {
    pub nic: Nic,
    ip: Ipv4Addr,
    transport: UdpSocket,
    local: SocketAddrV4,
    paths: HashMap<u16, PathSock>,
    peers: Vec<(NodeAddr, SocketAddrV4)>,
    clock: Instant,
    opts: DriverOpts,
    drop: Rng,
    /// Addressing of the datagram being received (its bytes stay in
    /// `batch`).
    rx: WirePacket,
    batch: RecvBatch,
    txq: VecDeque<Outgoing>,
    /// Buffers of sent datagrams, reused for the next ones.
    spare: Vec<Vec<u8>>,
    send: SendBatch,
    /// Path ports, reused by every `receive`.
    ports: Vec<u16>,
    /// Sockets already sent from in one transmit round.
    vias: Vec<Option<u16>>,
    /// The socket whose buffer refused the last send.
    blocked: Option<Option<u16>>,
    control: VecDeque<(SocketAddrV4, Vec<u8>)>,
    last_gc: Instant,
    pub stats: DriverStats,
    path_tx: Vec<PathTx>,
    conns: Vec<u32>,
}

impl UdpDriver {
    /// Binds the transport socket at `addr` (port 0: any free port) and
    /// builds a NIC on it with `cfg` (its `transport.udp_port` becomes the
    /// bound port) and `seed`.
    pub fn bind(addr: SocketAddrV4, cfg: Config, seed: u64, opts: DriverOpts) -> io::Result<UdpDriver> {
        let transport = UdpSocket::bind(addr)?;
        transport.set_nonblocking(true)?;
        udp_sys::set_buffers(&transport, opts.socket_buffer)?;
        let local = match transport.local_addr()? {
            SocketAddr::V4(a) => a,
            SocketAddr::V6(_) => unreachable!("bound to an IPv4 address"),
        };
        let nic = Nic::new(Self::nic_config(cfg, local, seed));
        let now = Instant::now();
        Ok(UdpDriver {
            nic,
            ip: *local.ip(),
            transport,
            local,
            paths: HashMap::new(),
            peers: Vec::new(),
            clock: now,
            drop: Rng::new(opts.drop_seed),
            rx: WirePacket { src: 0, dst: 0, sport: 0, dport: 0, plane: 0, ecn: ECN_ECT0, bytes: Vec::new() },
            batch: RecvBatch::new(opts.rx_batch.max(1), RX_SIZE),
            send: SendBatch::new(opts.tx_budget),
            opts,
            txq: VecDeque::new(),
            spare: Vec::new(),
            ports: Vec::new(),
            vias: Vec::new(),
            blocked: None,
            control: VecDeque::new(),
            last_gc: now,
            stats: DriverStats::default(),
            path_tx: vec![PathTx::default(); 256],
            conns: Vec::new(),
        })
    }

    fn nic_config(mut cfg: Config, local: SocketAddrV4, seed: u64) -> NicConfig {
        cfg.transport.udp_port = local.port();
        NicConfig::new(cfg, u32::from(*local.ip()), seed)
    }

    /// Replaces the NIC by a fresh one (a new transfer on the same sockets):
    /// connections, memory and counters start over.
    pub fn reset_nic(&mut self, seed: u64) {
        let cfg = self.nic.config().proto.clone();
        self.nic = Nic::new(Self::nic_config(cfg, self.local, seed));
        self.peers.clear();
        self.txq.clear();
        self.blocked = None;
        self.path_tx = vec![PathTx::default(); 256];
        self.conns.clear();
    }

    /// Creates a connection on the NIC (`Nic::create_conn`), remembered so
    /// that the driver knows which path ports are live.
    pub fn create_conn(&mut self, cp: ConnParams) -> Result<(), VerbsError> {
        self.nic.create_conn(cp)?;
        self.conns.push(cp.local_id);
        Ok(())
    }

    /// The transport socket's address.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    /// This NIC's node address (its IPv4 address).
    pub fn node(&self) -> NodeAddr {
        u32::from(self.ip)
    }

    /// Nanoseconds since the driver started (the NIC's time).
    pub fn now(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    /// Registers a peer: packets for `node` go to its transport socket
    /// `addr`.
    pub fn add_peer(&mut self, node: NodeAddr, addr: SocketAddrV4) {
        self.peers.retain(|(n, _)| *n != node);
        self.peers.push((node, addr));
    }

    /// Per-logical-path transmit counts.
    pub fn path_tx(&self, path_id: u8) -> PathTx {
        self.path_tx[path_id as usize]
    }

    /// Sends a control datagram from the transport socket (never dropped
    /// on purpose). Returns false if the socket refused it.
    pub fn send_control(&self, to: SocketAddrV4, bytes: &[u8]) -> bool {
        self.transport.send_to(bytes, to).is_ok()
    }

    /// The oldest control datagram received, with its sender.
    pub fn take_control(&mut self) -> Option<(SocketAddrV4, Vec<u8>)> {
        self.control.pop_front()
    }

    /// One turn of the loop; waits at most `max_wait` when idle. Returns true
    /// if anything was received, fired or transmitted.
    pub fn step(&mut self, max_wait: Duration) -> io::Result<bool> {
        let mut busy = self.receive()? > 0;
        let now = self.now();
        if self.nic.next_deadline().is_some_and(|d| d <= now) {
            self.nic.on_timer(now);
            busy = true;
        }
        busy |= self.transmit(now)? > 0;
        if self.last_gc.elapsed() >= IDLE_SOCKET / 4 {
            self.gc();
        }
        if !busy {
            self.stats.waits += 1;
            let now = self.now();
            let mut wait = max_wait;
            if let Some(d) = self.nic.next_deadline() {
                wait = wait.min(Duration::from_nanos(d.saturating_sub(now)));
            }
            if !wait.is_zero() {
                let mut fds = vec![self.transport.as_raw_fd()];
                fds.extend(self.paths.values().map(|p| p.sock.as_raw_fd()));
                let w = self.blocked.and_then(|v| self.socket_of(v)).map(|s| s.as_raw_fd());
                let t = Instant::now();
                udp_sys::wait(&fds, w, wait)?;
                self.stats.wait_ns += t.elapsed().as_nanos() as u64;
            }
        }
        Ok(busy)
    }

    /// Steps until `done(self)` holds or `timeout` passes; returns whether
    /// `done` held.
    pub fn run_until(&mut self, timeout: Duration, mut done: impl FnMut(&mut UdpDriver) -> bool) -> io::Result<bool> {
        let end = Instant::now() + timeout;
        loop {
            if done(self) {
                return Ok(true);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            self.step(left.min(Duration::from_millis(20)))?;
        }
    }

    // ------------------------------------------------------------ receive

    fn receive(&mut self) -> io::Result<usize> {
        let mut total = 0;
        // The transport socket, then every path socket (SACKs).
        let mut ports = std::mem::take(&mut self.ports);
        ports.clear();
        ports.extend(self.paths.keys());
        total += self.receive_from(None)?;
        for &p in &ports {
            total += self.receive_from(Some(p))?;
        }
        self.ports = ports;
        Ok(total)
    }

    /// Drains one socket, a few batches at most.
    fn receive_from(&mut self, path_port: Option<u16>) -> io::Result<usize> {
        let mut total = 0;
        for _ in 0..4 {
            let sock = match path_port {
                None => &self.transport,
                Some(p) => &self.paths[&p].sock,
            };
            let n = udp_sys::recv_batch(sock, &mut self.batch)?;
            if n == 0 {
                break;
            }
            total += n;
            let now = self.now();
            for i in 0..n {
                let (bytes, from) = self.batch.get(i);
                self.stats.rx_datagrams += 1;
                self.stats.rx_bytes += bytes.len() as u64;
                if path_port.is_none() && bytes.starts_with(CONTROL_MAGIC) {
                    self.control.push_back((from, bytes.to_vec()));
                    continue;
                }
                let src = self.peers.iter().find(|(_, a)| a.ip() == from.ip()).map_or(u32::from(*from.ip()), |p| p.0);
                self.rx.src = src;
                self.rx.dst = u32::from(self.ip);
                self.rx.sport = from.port();
                self.rx.dport = path_port.unwrap_or(self.local.port());
                self.nic.handle_received(now, &self.rx, bytes);
            }
            if n < self.batch_capacity() {
                break;
            }
        }
        Ok(total)
    }

    fn batch_capacity(&self) -> usize {
        self.opts.rx_batch.max(1)
    }

    // ------------------------------------------------------------ transmit

    /// Takes up to the budget of packets from the NIC and puts them on the
    /// wire, one `sendmmsg` per socket. Packets a full socket buffer refuses
    /// wait in the queue (and the next wait asks for POLLOUT). Datagram
    /// buffers go round from the NIC to the kernel and back to `spare`: no
    /// allocation per packet.
    fn transmit(&mut self, now: u64) -> io::Result<usize> {
        let mut taken = 0;
        let at = Instant::now();
        while self.txq.len() < self.opts.tx_budget {
            let mut buf = self.spare.pop().unwrap_or_default();
            let Some(meta) = self.nic.poll_transmit_into(now, &mut buf) else {
                self.spare.push(buf);
                break;
            };
            taken += 1;
            match self.route(&meta, &buf, at)? {
                Some((via, dst)) => self.txq.push_back(Outgoing { via, dst, bytes: buf, sent: false }),
                None => self.spare.push(buf),
            }
        }
        self.blocked = None;
        // One group per socket, in the order the sockets first appear; each
        // socket's datagrams leave in queue order.
        self.vias.clear();
        for k in 0..self.txq.len() {
            let via = self.txq[k].via;
            if self.vias.contains(&via) {
                continue;
            }
            self.vias.push(via);
            let sock = match via {
                None => &self.transport,
                Some(port) => match self.paths.get(&port) {
                    Some(s) => &s.sock,
                    // Closed under a queued packet (cannot happen: a queued
                    // port is in use): the packet is lost.
                    None => {
                        self.txq.iter_mut().filter(|o| o.via == via).for_each(|o| o.sent = true);
                        continue;
                    }
                },
            };
            loop {
                let group = self.txq.iter().skip(k).filter(|o| o.via == via && !o.sent);
                let n = match self.send.send(sock, group.map(|o| (o.bytes.as_slice(), o.dst))) {
                    Ok(0) => {
                        if self.txq.iter().skip(k).any(|o| o.via == via && !o.sent) {
                            self.blocked = Some(via);
                        }
                        break;
                    }
                    Ok(n) => n,
                    // ENOBUFS, ECONNREFUSED from an earlier ICMP and the
                    // like: the datagram is lost; the transport recovers as
                    // from loss.
                    Err(_) => {
                        self.stats.send_errors += 1;
                        1
                    }
                };
                self.txq.iter_mut().skip(k).filter(|o| o.via == via && !o.sent).take(n).for_each(|o| o.sent = true);
            }
        }
        // Keep the unsent, in order; their buffers stay with them.
        for _ in 0..self.txq.len() {
            let o = self.txq.pop_front().expect("counted");
            if o.sent {
                self.spare.push(o.bytes);
            } else {
                self.txq.push_back(o);
            }
        }
        Ok(taken)
    }

    fn is_answer(bytes: &[u8]) -> bool {
        let op = if bytes.is_empty() { None } else { Opcode::from_u8(common::OPCODE.get(bytes) as u8) };
        matches!(op, Some(Opcode::Sack) | Some(Opcode::Nack))
    }

    /// The socket a queued packet leaves by, for the POLLOUT wait.
    fn socket_of(&self, via: Option<u16>) -> Option<&UdpSocket> {
        match via {
            None => Some(&self.transport),
            Some(port) => self.paths.get(&port).map(|s| &s.sock),
        }
    }

    /// The socket of path port `sport`, bound now if new.
    fn path_socket(&mut self, sport: u16) -> io::Result<&mut PathSock> {
        if !self.paths.contains_key(&sport) {
            let sock = match UdpSocket::bind(SocketAddrV4::new(self.ip, sport)) {
                Ok(s) => s,
                Err(_) => {
                    self.stats.port_fallbacks += 1;
                    UdpSocket::bind(SocketAddrV4::new(self.ip, 0))?
                }
            };
            sock.set_nonblocking(true)?;
            udp_sys::set_buffers(&sock, self.opts.socket_buffer)?;
            self.stats.path_binds += 1;
            self.paths.insert(sport, PathSock { sock, last_used: Instant::now() });
        }
        Ok(self.paths.get_mut(&sport).expect("inserted"))
    }

    /// Decides where a datagram from the NIC goes (its socket and
    /// destination) and counts it; None when it is dropped (on purpose, or
    /// for want of a route).
    fn route(&mut self, p: &WirePacket, bytes: &[u8], at: Instant) -> io::Result<Option<(Option<u16>, SocketAddrV4)>> {
        let answer = Self::is_answer(bytes);
        let peer = self.peers.iter().find(|(n, _)| *n == p.dst).map(|(_, a)| *a);
        let dst = if answer {
            SocketAddrV4::new(peer.map_or(Ipv4Addr::from(p.dst), |a| *a.ip()), p.dport)
        } else {
            match peer {
                Some(a) => a,
                None => {
                    self.stats.no_route += 1;
                    return Ok(None);
                }
            }
        };
        let via = if answer {
            None
        } else {
            self.path_socket(p.sport)?.last_used = at;
            Some(p.sport)
        };
        self.stats.tx_datagrams += 1;
        self.stats.tx_bytes += bytes.len() as u64;
        let op = Opcode::from_u8(common::OPCODE.get(bytes) as u8);
        if op.is_some_and(|o| o.is_data()) {
            let t = &mut self.path_tx[common::PATH_ID.get(bytes) as usize];
            t.packets += 1;
            t.retx += data::RETX.get(bytes);
        }
        if self.opts.drop_ppm > 0 && self.drop.chance_ppm(self.opts.drop_ppm) {
            self.stats.injected_drops += 1;
            return Ok(None);
        }
        Ok(Some((via, dst)))
    }

    /// Closes path sockets idle for [`IDLE_SOCKET`] whose port no path of
    /// the NIC uses any more.
    fn gc(&mut self) {
        self.last_gc = Instant::now();
        let live: Vec<u16> = self
            .conns
            .iter()
            .filter_map(|&c| self.nic.conn_info(c))
            .flat_map(|i| i.paths.into_iter().map(|p| p.sport))
            .collect();
        self.paths.retain(|port, s| live.contains(port) || s.last_used.elapsed() < IDLE_SOCKET);
    }
}
