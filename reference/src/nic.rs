//! The NIC: host memory, connections, one completion queue, counters, and
//! the sans-IO surface that whatever carries packets drives:
//! [`Nic::handle_packet`], [`Nic::poll_transmit`], [`Nic::on_timer`],
//! [`Nic::next_deadline`]. Time is passed in by the caller as nanoseconds
//! (virtual in the simulator, monotonic in the UDP driver); the NIC never
//! reads a clock and never draws from global randomness, so the same calls
//! give the same packets.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use mrnic_proto::config::MAX_PATHS_PER_CONN;
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{decode_datagram, encode_datagram, Config, Header, NackCode, Problem};

use crate::counters::Counters;
use crate::fixed::{recip16, ts_reached, SEQ_MASK};
use crate::memory::{Access, Memory};
use crate::path::{line_bytes_per_ts, PathEntry, PathParams};
use crate::receiver::{nack_for, RxConn};
use crate::rng::Rng;
use crate::sender::{ConnCc, TxBlock, TxConn};
use crate::verbs::{Completion, ConnParams, RecvRequest, Status, VerbsError, WorkRequest};
use crate::wire::{NodeAddr, WirePacket};

/// The reference's own knobs, beyond the protocol config.
#[derive(Debug, Clone, PartialEq)]
pub struct NicConfig {
    pub proto: Config,
    /// This NIC's address.
    pub addr: NodeAddr,
    /// Seed of the NIC's generator (source ports).
    pub seed: u64,
    /// Wait before a packet refused with RNR is sent again.
    pub rnr_delay_us: u32,
    /// RNR NACKs one packet may receive before its request fails.
    pub rnr_retry: u32,
    /// Retransmissions of one packet before the connection fails (the ring's
    /// 4-bit retx_count: at most 15).
    pub retry_limit: u32,
    /// The acknowledgement-clocked multipath rules of issue 7 (spec 4.2 and
    /// 5.1-5.3, marked "ack clocking"): an ACKREQ is answered for every path,
    /// the sender asks for one every few packets and when it runs dry, the
    /// connection limit has a margin over min_rtt, losses are found across
    /// paths (RACK) with a tail probe, and a path that stopped answering
    /// is left at once. Off: the rules the cycle models `tx_engine` and
    /// `sack_gen` implement today, which their tests compare against.
    pub ack_clocking: bool,
    /// With `ack_clocking`: a CE mark steers load among the connection's
    /// paths instead of pausing them (spec 5.2, "CE steering"). The marked
    /// path's window and weight are cut as before, but the path stays GOOD
    /// (no SKIP), and the connection window does not cut on CE (it is bounded
    /// by the rate hint and the paths' windows). Off: SKIP for one srtt and a
    /// connection-level cut, as the telemetry block and `tx_engine` do today.
    pub ce_steering: bool,
}

impl NicConfig {
    pub fn new(proto: Config, addr: NodeAddr, seed: u64) -> NicConfig {
        let rnr_delay_us = proto.timers.rto_min_us;
        NicConfig {
            proto,
            addr,
            seed,
            rnr_delay_us,
            rnr_retry: 7,
            retry_limit: 15,
            ack_clocking: true,
            ce_steering: true,
        }
    }
}

/// Constants derived once from the config (timestamp units where timed).
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub path: PathParams,
    pub ts_unit_ns: u64,
    pub udp_port: u16,
    /// Packets a path may have unacknowledged: the SACK window, or fewer
    /// when the hardware's retransmit ring (`hardware.tx_ring_depth`) is
    /// smaller.
    pub window: u32,
    pub msg_depth: u32,
    pub recv_depth: u32,
    pub streams: u32,
    pub paths_max: u32,
    pub planes: u32,
    pub line_bytes_per_ts: u32,
    pub conn_init_cwnd: u32,
    pub conn_max_cwnd: u32,
    pub sack_every_pkts: u32,
    pub sack_every_bytes: u32,
    pub rnr_delay: u32,
    pub rnr_retry: u32,
    pub retry_limit: u32,
    /// See [`NicConfig::ack_clocking`].
    pub ack_clocking: bool,
    /// [`NicConfig::ce_steering`], only with `ack_clocking`.
    pub ce_steering: bool,
    /// A connection counts as an active sender for the fair-share hint if
    /// it delivered data within this long (2 x rto_min).
    pub active_window: u32,
}

impl Params {
    pub fn new(n: &NicConfig) -> Params {
        let cfg = &n.proto;
        let path = PathParams::from_config(cfg);
        let conn_max = cfg.cc.conn_max_cwnd_bytes.min(u32::MAX as u64) as u32;
        Params {
            path,
            ts_unit_ns: cfg.timers.ts_unit_ns as u64,
            udp_port: cfg.transport.udp_port,
            window: cfg.transport.window.min(cfg.hardware.tx_ring_depth),
            msg_depth: cfg.hardware.msg_table_depth,
            recv_depth: cfg.hardware.recv_queue_depth,
            streams: cfg.transport.streams_per_conn,
            paths_max: cfg.transport.paths_per_conn.min(MAX_PATHS_PER_CONN),
            planes: cfg.transport.planes,
            line_bytes_per_ts: line_bytes_per_ts(cfg),
            conn_init_cwnd: (path.init_cwnd as u64 * cfg.transport.paths_per_conn as u64).min(conn_max as u64) as u32,
            conn_max_cwnd: conn_max,
            sack_every_pkts: cfg.timers.sack_every_packets,
            sack_every_bytes: cfg.timers.sack_every_bytes,
            rnr_delay: cfg.us_to_ts(n.rnr_delay_us).max(1) as u32,
            rnr_retry: n.rnr_retry,
            retry_limit: n.retry_limit.min(15),
            ack_clocking: n.ack_clocking,
            ce_steering: n.ack_clocking && n.ce_steering,
            active_window: 2 * path.rto_min,
        }
    }
}

/// What the halves of a connection share with the NIC while handling one
/// event.
pub struct Ctx<'a> {
    pub p: &'a Params,
    pub counters: &'a mut Counters,
    pub cq: &'a mut VecDeque<Completion>,
    pub out: &'a mut VecDeque<WirePacket>,
    /// The re-entropy port generator (see [`Ctx::fresh_sport`]).
    pub lfsr: &'a mut u16,
    pub addr: NodeAddr,
    /// 32-bit timestamp of the event.
    pub ts32_now: u32,
    /// The fair-share hint SACKs carry now.
    pub rate_hint: u16,
    /// The NIC's view of its planes, shared by its connections.
    pub planes: &'a mut PlaneHealth,
    /// NIC ports (bit = plane) with room for another packet now, as the
    /// caller of [`Nic::poll_transmit_ready`] reports them; [`ALL_PORTS`]
    /// when it does not say. Data leaves only by a ready port.
    pub ports: u32,
}

/// Every NIC port ready: the port mask of a caller that keeps no port
/// queues (the UDP driver, the vectors, the lossy channel).
pub const ALL_PORTS: u32 = u32::MAX;

/// Per-NIC plane health (with ack clocking): a plane on which some
/// connection's path just turned SUSPECT or kept failing its probes is
/// avoided by every connection of the NIC for new data and rerouted
/// retransmissions, until a PROBE on that plane is answered or the mark
/// expires (`dead_probe_interval`; then the connections try the plane again
/// and a path that fails there marks it anew). Without it each connection
/// finds a failed plane for itself, path by path, each losing a few packets
/// on each of its paths there: a plane failure then takes every
/// connection's RACK and timeouts together. Hardware: one timestamp register
/// per plane and an AND on the selector's eligibility.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlaneHealth {
    /// Per plane: avoided until this timestamp.
    until: Vec<Option<u32>>,
}

impl PlaneHealth {
    pub fn new(planes: u32) -> PlaneHealth {
        PlaneHealth { until: vec![None; planes as usize] }
    }

    /// Whether paths on `plane` may be chosen at `ts`.
    pub fn ok(&self, plane: u8, ts: u32) -> bool {
        match self.until.get(plane as usize) {
            Some(Some(t)) => ts_reached(ts, *t),
            _ => true,
        }
    }

    /// Whether every plane is fine at `ts` (the common case: no mask).
    pub fn all_ok(&self, ts: u32) -> bool {
        self.until.iter().all(|u| u.is_none_or(|t| ts_reached(ts, t)))
    }

    /// A path on `plane` failed: avoid the plane until `until`.
    pub fn mark(&mut self, plane: u8, until: u32) {
        if let Some(u) = self.until.get_mut(plane as usize) {
            if u.is_none_or(|t| (until.wrapping_sub(t) as i32) > 0) {
                *u = Some(until);
            }
        }
    }

    /// A PROBE on `plane` was answered: it delivers.
    pub fn clear(&mut self, plane: u8) {
        if let Some(u) = self.until.get_mut(plane as usize) {
            *u = None;
        }
    }
}

impl Ctx<'_> {
    /// Whether NIC port (plane) `plane` has room for a packet now. A plane
    /// beyond the mask's 32 bits is always ready.
    pub fn port_ready(&self, plane: u8) -> bool {
        plane >= 32 || (self.ports >> plane) & 1 == 1
    }

    /// Whether some port is full now (a connection that finds nothing to
    /// send may then only be waiting for it).
    pub fn ports_limited(&self) -> bool {
        (0..self.p.planes.min(32)).any(|pl| (self.ports >> pl) & 1 == 0)
    }

    /// The 32-bit timestamp counter at `now` nanoseconds.
    pub fn ts32(&self, now: u64) -> u32 {
        (now / self.p.ts_unit_ns) as u32
    }

    /// A source port for re-entropy, by the hardware's rule
    /// (`path_telemetry`): `0xC000 | lfsr[13:0]` (the ephemeral range
    /// 49152..=65535), bit 0 flipped if that is the current port; the 16-bit
    /// Galois LFSR steps once per timeout that fires, whether or not the
    /// timeout re-entropies, so the reference and the RTL pick the same
    /// ports.
    pub fn fresh_sport(&mut self, old: u16) -> u16 {
        let p = 0xC000 | (*self.lfsr & 0x3FFF);
        *self.lfsr = lfsr_step(*self.lfsr);
        if p == old {
            p ^ 1
        } else {
            p
        }
    }
}

/// The re-entropy LFSR's value at NIC start (and after the hardware's reset).
pub const LFSR_SEED: u16 = 0xACE1;
/// Galois taps of the re-entropy LFSR (x^16 + x^14 + x^13 + x^11 + 1, maximal length).
pub const LFSR_TAPS: u16 = 0xB400;

/// One step of the re-entropy LFSR.
pub fn lfsr_step(s: u16) -> u16 {
    if s & 1 == 1 {
        (s >> 1) ^ LFSR_TAPS
    } else {
        s >> 1
    }
}

struct Conn {
    tx: TxConn,
    rx: RxConn,
}

/// A connection's state as the API reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnInfo {
    pub params: ConnParams,
    pub paths: Vec<PathEntry>,
    pub cc: ConnCc,
    /// Why the connection failed, if it did.
    pub failed: Option<Status>,
    /// Send work requests not yet completed.
    pub outstanding_sends: usize,
}

/// One NIC with its host memory.
pub struct Nic {
    params: Params,
    cfg: NicConfig,
    mem: Memory,
    conns: BTreeMap<u32, (ConnParams, Conn)>,
    cq: VecDeque<Completion>,
    out: VecDeque<WirePacket>,
    counters: Counters,
    rng: Rng,
    lfsr: u16,
    last_now: u64,
    rr: u32,
    /// Connections that may have a packet to send: a connection leaves when
    /// a poll finds nothing, and comes back when something that can change
    /// that happens to it (a post, an acknowledgement, a timer). Polling
    /// only these keeps a packet's cost independent of the connection count.
    sendable: BTreeSet<u32>,
    /// Every connection's next timer (absolute timestamp units), ordered, and
    /// by connection: a timer wheel in place of a scan of every path of
    /// every connection per deadline query.
    timers: BTreeSet<(u64, u32)>,
    timer_of: BTreeMap<u32, u64>,
    /// Receive connections by the absolute timestamp of their last placed
    /// data, for the fair-share count (entries older than the active window
    /// are dropped as time passes).
    recent: BTreeSet<(u64, u32)>,
    recent_of: BTreeMap<u32, u64>,
    planes: PlaneHealth,
}

impl Nic {
    pub fn new(cfg: NicConfig) -> Nic {
        let params = Params::new(&cfg);
        let params_planes = params.planes;
        Nic {
            mem: Memory::new(cfg.proto.hardware.mr_entries),
            rng: Rng::new(cfg.seed),
            lfsr: LFSR_SEED,
            params,
            cfg,
            conns: BTreeMap::new(),
            cq: VecDeque::new(),
            out: VecDeque::new(),
            counters: Counters::default(),
            last_now: 0,
            rr: 0,
            sendable: BTreeSet::new(),
            timers: BTreeSet::new(),
            timer_of: BTreeMap::new(),
            recent: BTreeSet::new(),
            recent_of: BTreeMap::new(),
            planes: PlaneHealth::new(params_planes),
        }
    }

    /// Absolute timestamp units of `now` nanoseconds.
    fn abs_ts(&self, now: u64) -> u64 {
        now / self.params.ts_unit_ns
    }

    /// Something happened to connection `id` at `now`: it may send again and
    /// its next timer is taken anew.
    fn touch(&mut self, id: u32, now: u64) {
        if self.conns.contains_key(&id) {
            self.sendable.insert(id);
        }
        self.retime(id, now);
    }

    /// Takes connection `id`'s next timer anew.
    fn retime(&mut self, id: u32, now: u64) {
        let Some((_, c)) = self.conns.get(&id) else { return };
        let now_abs = self.abs_ts(now);
        let d = c.tx.next_deadline(now_abs as u32, &self.params).map(|d| {
            let diff = d.wrapping_sub(now_abs as u32) as i32 as i64;
            (now_abs as i64 + diff).max(0) as u64
        });
        if let Some(old) = self.timer_of.remove(&id) {
            self.timers.remove(&(old, id));
        }
        if let Some(d) = d {
            self.timers.insert((d, id));
            self.timer_of.insert(id, d);
        }
    }

    pub fn addr(&self) -> NodeAddr {
        self.cfg.addr
    }

    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn memory(&self) -> &Memory {
        &self.mem
    }

    // ------------------------------------------------------------ memory

    /// Registers `len` zeroed bytes of host memory at `addr` (`ibv_reg_mr`);
    /// returns the key, used as lkey and rkey.
    pub fn reg_mr(&mut self, addr: u64, len: u64, access: Access) -> Result<u32, VerbsError> {
        Ok(self.mem.register(addr, len, access)?)
    }

    pub fn dereg_mr(&mut self, key: u32) -> Result<(), VerbsError> {
        Ok(self.mem.deregister(key)?)
    }

    /// The host writes its own memory (the application filling a buffer).
    pub fn write_mem(&mut self, addr: u64, data: &[u8]) -> Result<(), VerbsError> {
        Ok(self.mem.write(addr, data)?)
    }

    pub fn read_mem(&self, addr: u64, len: u64) -> Result<&[u8], VerbsError> {
        Ok(self.mem.read(addr, len)?)
    }

    /// Records every write into host memory from now on (golden vectors).
    pub fn set_write_trace(&mut self, on: bool) {
        self.mem.set_write_trace(on);
    }

    /// Memory writes (address, bytes) since the last call, oldest first.
    pub fn take_write_trace(&mut self) -> Vec<(u64, Vec<u8>)> {
        self.mem.take_write_trace()
    }

    // ------------------------------------------------------------ connections

    /// Creates a connection, like moving an RC QP to RTS with the peer's
    /// parameters exchanged out of band.
    pub fn create_conn(&mut self, cp: ConnParams) -> Result<(), VerbsError> {
        if cp.local_id > SEQ_MASK || cp.remote_id > SEQ_MASK {
            return Err(VerbsError::BadConnId(cp.local_id.max(cp.remote_id)));
        }
        // The NIC holds at most `transport.connections` contexts, as the
        // hardware's connection table does. (Ids are not yet table indexes:
        // the reference keys contexts by the full 24-bit id.)
        let table = self.cfg.proto.transport.connections;
        if self.conns.len() as u32 >= table && !self.conns.contains_key(&cp.local_id) {
            return Err(VerbsError::ConnTableFull(cp.local_id, table));
        }
        if self.conns.contains_key(&cp.local_id) {
            return Err(VerbsError::ConnExists(cp.local_id));
        }
        if cp.paths == 0 || cp.paths as u32 > self.params.paths_max {
            return Err(VerbsError::BadPaths(cp.paths, self.params.paths_max));
        }
        let pp = &self.params.path;
        let mut paths = Vec::new();
        for i in 0..cp.paths {
            let sport = 49152 + self.rng.below(16384) as u16;
            let plane = (i as u32 % self.params.planes) as u8;
            paths.push(PathEntry::new(sport, plane, cp.tx_psn & SEQ_MASK, pp));
        }
        let streams = self.params.streams;
        let ctx = ctx_parts(
            &self.params,
            &mut self.counters,
            &mut self.cq,
            &mut self.out,
            &mut self.lfsr,
            &mut self.planes,
            self.cfg.addr,
        );
        let tx = TxConn::new(cp.local_id, cp.remote_id, cp.remote, paths, streams, &ctx);
        let rx = RxConn::new(cp.local_id, cp.remote_id, cp.remote, cp.paths, cp.rx_psn & SEQ_MASK, streams);
        self.conns.insert(cp.local_id, (cp, Conn { tx, rx }));
        self.sendable.insert(cp.local_id);
        Ok(())
    }

    /// Queues a send work request on a stream (`ibv_post_send`). Checks the
    /// local buffer against registered memory now; reads it when packets
    /// leave (as a NIC DMAs it).
    pub fn post_send(&mut self, conn: u32, stream: u8, wr: WorkRequest) -> Result<(), VerbsError> {
        let streams = self.params.streams;
        let (_, c) = self.conns.get_mut(&conn).ok_or(VerbsError::NoConn(conn))?;
        if c.tx.failed.is_some() {
            return Err(VerbsError::ConnFailed(conn));
        }
        if stream as u32 >= streams {
            return Err(VerbsError::BadStream(stream, streams));
        }
        if wr.local.len > u32::MAX as u64 {
            return Err(VerbsError::TooLong(wr.local.len));
        }
        if wr.local.len > 0 {
            self.mem.find(wr.local.addr, wr.local.len, Access::LOCAL)?;
        }
        c.tx.post(stream, wr, wr.local.len as u32);
        self.sendable.insert(conn);
        Ok(())
    }

    /// Posts a receive buffer on a stream (`ibv_post_recv`); SENDs and
    /// WRITE_IMMs of that stream consume receives in posting order.
    pub fn post_recv(&mut self, conn: u32, stream: u8, r: RecvRequest) -> Result<(), VerbsError> {
        let (streams, depth) = (self.params.streams, self.params.recv_depth);
        let (_, c) = self.conns.get_mut(&conn).ok_or(VerbsError::NoConn(conn))?;
        if stream as u32 >= streams {
            return Err(VerbsError::BadStream(stream, streams));
        }
        if c.rx.posted(stream) >= depth as usize {
            return Err(VerbsError::RecvQueueFull(stream, depth));
        }
        let lkey = if r.len > 0 { Some(self.mem.find(r.addr, r.len as u64, Access::RECV)?) } else { None };
        let mut ctx = ctx_parts(
            &self.params,
            &mut self.counters,
            &mut self.cq,
            &mut self.out,
            &mut self.lfsr,
            &mut self.planes,
            self.cfg.addr,
        );
        c.rx.post_recv(stream, r, lkey, &mut ctx);
        Ok(())
    }

    /// Up to `max` completions, oldest first (`ibv_poll_cq`).
    pub fn poll_cq(&mut self, max: usize) -> Vec<Completion> {
        let n = max.min(self.cq.len());
        self.cq.drain(..n).collect()
    }

    /// Per-path telemetry and connection state (`mrnic` extension).
    pub fn conn_info(&self, conn: u32) -> Option<ConnInfo> {
        self.conns.get(&conn).map(|(cp, c)| ConnInfo {
            params: *cp,
            paths: c.tx.paths.clone(),
            cc: c.tx.cc,
            failed: c.tx.failed,
            outstanding_sends: c.tx.outstanding_wrs(),
        })
    }

    /// Why each connection sends nothing now (`None`: it could send), for
    /// diagnosing where a sender's idle time goes.
    pub fn tx_blocks(&self) -> impl Iterator<Item = (u32, Option<TxBlock>)> + '_ {
        self.conns.iter().map(|(&id, (_, c))| (id, c.tx.block(&self.params)))
    }

    /// Nothing left to send or complete on any connection.
    pub fn idle(&self) -> bool {
        self.conns.values().all(|(_, c)| c.tx.outstanding_wrs() == 0)
    }

    // ------------------------------------------------------------ sans-IO

    /// A packet from the wire: decoded (ICRC checked) and dispatched.
    /// Undecodable packets are counted and dropped.
    pub fn handle_packet(&mut self, now: u64, pkt: &WirePacket) {
        self.handle_received(now, pkt, &pkt.bytes);
    }

    /// [`Nic::handle_packet`] for a datagram that is not in a `WirePacket`:
    /// `meta` gives its addressing (its bytes are not looked at) and `bytes`
    /// the datagram, placed from where it lies (a socket's receive buffer)
    /// without a copy first.
    pub fn handle_received(&mut self, now: u64, meta: &WirePacket, bytes: &[u8]) {
        self.last_now = self.last_now.max(now);
        match decode_datagram(bytes) {
            Ok(d) => self.handle_datagram(now, meta, &d.header, d.payload),
            Err(e) if matches!(e.problem, Problem::BadChecksum { .. }) => self.counters.rx_bad_icrc += 1,
            Err(_) => self.counters.rx_decode_error += 1,
        }
    }

    /// A decoded packet (`meta` gives its addressing; its bytes are not
    /// looked at). Entry point for vectors that start after the parser.
    pub fn handle_datagram(&mut self, now: u64, meta: &WirePacket, header: &Header, payload: &[u8]) {
        self.last_now = self.last_now.max(now);
        self.counters.rx_packets += 1;
        let ts = (now / self.params.ts_unit_ns) as u32;
        let hint = self.rate_hint(header.dst_conn());
        let mut touched = None;
        let mut ctx = ctx_parts(
            &self.params,
            &mut self.counters,
            &mut self.cq,
            &mut self.out,
            &mut self.lfsr,
            &mut self.planes,
            self.cfg.addr,
        );
        ctx.ts32_now = ts;
        ctx.rate_hint = hint;
        // A connection is bound to its peer's IPv4 address (one compare in
        // the connection table's lookup): a packet naming it from anywhere
        // else is counted and dropped, never placed, never answered, so a
        // spoofed source can neither write nor aim our answers.
        let from_peer = |cp: &ConnParams| cp.remote == meta.src;
        match header {
            Header::Data(h) => match self.conns.get_mut(&h.dst_conn) {
                Some((cp, _)) if !from_peer(cp) => ctx.counters.rx_bad_src += 1,
                Some((_, c)) => {
                    let before = c.rx.last_data;
                    c.rx.on_data(meta, h, payload, &mut self.mem, &mut ctx);
                    if c.rx.last_data != before {
                        let at = now / self.params.ts_unit_ns;
                        if let Some(old) = self.recent_of.insert(h.dst_conn, at) {
                            self.recent.remove(&(old, h.dst_conn));
                        }
                        self.recent.insert((at, h.dst_conn));
                    }
                }
                None => {
                    ctx.counters.rx_no_conn += 1;
                    ctx.counters.nacks_sent += 1;
                    let n = nack_for(
                        NackCode::NoConn,
                        h.dst_conn,
                        h.path_id,
                        h.path_gen,
                        h.path_psn,
                        h.stream_id,
                        h.msn,
                        h.tx_ts,
                    );
                    let pkt = answer(&ctx, meta, &n);
                    ctx.out.push_back(pkt);
                }
            },
            Header::Probe(h) => match self.conns.get_mut(&h.dst_conn) {
                Some((cp, _)) if !from_peer(cp) => {
                    ctx.counters.rx_probes += 1;
                    ctx.counters.rx_bad_src += 1;
                }
                Some((_, c)) => {
                    if c.rx.admit_probe(h, &mut ctx) {
                        c.rx.on_probe(meta, h, &mut ctx);
                    }
                }
                None => {
                    ctx.counters.rx_no_conn += 1;
                    ctx.counters.nacks_sent += 1;
                    let n = nack_for(NackCode::NoConn, h.dst_conn, h.path_id, h.path_gen, h.path_psn, 0, 0, h.tx_ts);
                    let pkt = answer(&ctx, meta, &n);
                    ctx.out.push_back(pkt);
                }
            },
            Header::Sack(h) => match self.conns.get_mut(&h.dst_conn) {
                Some((cp, _)) if !from_peer(cp) => ctx.counters.ack_bad_src += 1,
                Some((_, c)) => {
                    c.tx.on_sack(now, h, meta.dport, &mut ctx);
                    touched = Some(h.dst_conn);
                }
                None => ctx.counters.ack_no_conn += 1,
            },
            Header::Nack(h) => {
                // A NO_CONN NACK names the id the peer did not know: ours for
                // it, the remote id of one of our connections.
                let found = if h.code == NackCode::NoConn {
                    self.conns.values_mut().find(|(cp, _)| cp.remote_id == h.dst_conn && cp.remote == meta.src)
                } else {
                    self.conns.get_mut(&h.dst_conn)
                };
                match found {
                    Some((cp, _)) if !from_peer(cp) => ctx.counters.ack_bad_src += 1,
                    Some((_, c)) => {
                        c.tx.on_nack(now, h, &mut ctx);
                        touched = Some(c.tx.local_id);
                    }
                    None => ctx.counters.ack_no_conn += 1,
                }
            }
        }
        if let Some(id) = touched {
            self.touch(id, now);
        }
    }

    /// The fair-share hint: line rate divided among the connections that
    /// delivered data recently (this one included), through the reciprocal
    /// ROM, in Q0.16 (1.0 saturates to 0xffff).
    fn rate_hint(&mut self, conn: u32) -> u16 {
        // A connection is recent while now < its last data + the window.
        let w = self.params.active_window as u64;
        let at = self.abs_ts(self.last_now);
        while let Some(&(t, id)) = self.recent.first() {
            if t + w > at {
                break;
            }
            self.recent.pop_first();
            self.recent_of.remove(&id);
        }
        // Every entry left is recent at `now` too (now <= last_now).
        let others = (self.recent.len() - self.recent_of.contains_key(&conn) as usize) as u32;
        recip16(others + 1).min(0xffff) as u16
    }

    /// The next packet to put on the wire, if any: answers first, then
    /// connections in round robin.
    pub fn poll_transmit(&mut self, now: u64) -> Option<WirePacket> {
        self.poll_transmit_ready(now, ALL_PORTS)
    }

    /// [`Nic::poll_transmit`] for a caller with a queue per NIC port:
    /// `ready` has a bit per port (plane) that has room for another packet.
    /// Data (new and retransmitted) leaves only by a ready port; a
    /// connection whose next packet can only take a full port waits (and
    /// stays ready to send), while answers and probes leave regardless.
    /// With every port ready this is exactly [`Nic::poll_transmit`].
    pub fn poll_transmit_ready(&mut self, now: u64, ready: u32) -> Option<WirePacket> {
        let mut bytes = Vec::new();
        let mut p = self.poll_transmit_into_ready(now, ready, &mut bytes)?;
        p.bytes = bytes;
        Some(p)
    }

    /// [`Nic::poll_transmit`] into a buffer the caller keeps: the datagram
    /// replaces what `buf` held (a data packet's payload is encoded straight
    /// from host memory), and the packet returned carries the addressing
    /// with empty `bytes`. A driver that reuses its buffers sends without an
    /// allocation per packet.
    pub fn poll_transmit_into(&mut self, now: u64, buf: &mut Vec<u8>) -> Option<WirePacket> {
        self.poll_transmit_into_ready(now, ALL_PORTS, buf)
    }

    /// [`Nic::poll_transmit_into`] with the ports' readiness, as
    /// [`Nic::poll_transmit_ready`].
    pub fn poll_transmit_into_ready(&mut self, now: u64, ready: u32, buf: &mut Vec<u8>) -> Option<WirePacket> {
        self.last_now = self.last_now.max(now);
        if let Some(p) = self.out.pop_front() {
            return Some(take_bytes(p, buf));
        }
        // Round robin from `rr` over the connections that may send; one that
        // has nothing leaves the set until something happens to it.
        // Walked lazily: the first connection usually sends, and a NIC with
        // a thousand sendable connections (alltoall at scale) would copy
        // them all on every poll.
        let order = self.sendable.range(self.rr..).chain(self.sendable.range(..self.rr)).copied();
        let mut ctx = ctx_parts(
            &self.params,
            &mut self.counters,
            &mut self.cq,
            &mut self.out,
            &mut self.lfsr,
            &mut self.planes,
            self.cfg.addr,
        );
        ctx.ts32_now = (now / self.params.ts_unit_ns) as u32;
        ctx.ports = ready;
        let mut sent = None;
        let mut idle = Vec::new();
        for id in order {
            let (_, c) = self.conns.get_mut(&id).expect("a sendable connection exists");
            match c.tx.poll(now, &self.mem, &mut ctx, buf) {
                Some(p) => {
                    sent = Some((id, p));
                    break;
                }
                None => idle.push((id, c.tx.port_blocked)),
            }
        }
        let extra = ctx.out.pop_front();
        for (id, waits_for_port) in idle {
            // One that only waits for a full port may send when it drains.
            if !waits_for_port {
                self.sendable.remove(&id);
            }
            // A poll that sends nothing may still arm a window probe or fail
            // the connection.
            self.retime(id, now);
        }
        match sent {
            Some((id, p)) => {
                self.rr = id.wrapping_add(1);
                self.touch(id, now);
                if let Some(x) = extra {
                    self.out.push_front(x);
                }
                Some(p)
            }
            None => extra.map(|p| take_bytes(p, buf)),
        }
    }

    /// Runs every timer due at `now`, connection by connection in id order.
    pub fn on_timer(&mut self, now: u64) {
        self.last_now = self.last_now.max(now);
        let at = self.abs_ts(now);
        let mut due: Vec<u32> = Vec::new();
        while let Some(&(d, id)) = self.timers.first() {
            if d > at {
                break;
            }
            self.timers.pop_first();
            self.timer_of.remove(&id);
            due.push(id);
        }
        due.sort_unstable();
        let mut ctx = ctx_parts(
            &self.params,
            &mut self.counters,
            &mut self.cq,
            &mut self.out,
            &mut self.lfsr,
            &mut self.planes,
            self.cfg.addr,
        );
        ctx.ts32_now = (now / self.params.ts_unit_ns) as u32;
        for &id in &due {
            if let Some((_, c)) = self.conns.get_mut(&id) {
                c.tx.on_timer(now, &mut ctx);
            }
        }
        for id in due {
            self.touch(id, now);
        }
    }

    /// When `on_timer` next has work (nanoseconds), measured from the latest
    /// time this NIC was given.
    pub fn next_deadline(&self) -> Option<u64> {
        let unit = self.params.ts_unit_ns;
        let now_abs = self.last_now / unit;
        let &(d, _) = self.timers.first()?;
        if d <= now_abs {
            Some(self.last_now)
        } else {
            Some(d * unit)
        }
    }
}

fn ctx_parts<'a>(
    p: &'a Params,
    counters: &'a mut Counters,
    cq: &'a mut VecDeque<Completion>,
    out: &'a mut VecDeque<WirePacket>,
    lfsr: &'a mut u16,
    planes: &'a mut PlaneHealth,
    addr: NodeAddr,
) -> Ctx<'a> {
    Ctx { p, counters, cq, out, lfsr, addr, ts32_now: 0, rate_hint: 0xffff, planes, ports: ALL_PORTS }
}

/// Moves a queued packet's bytes into `buf` (replacing its contents).
fn take_bytes(mut p: WirePacket, buf: &mut Vec<u8>) -> WirePacket {
    buf.clear();
    buf.extend_from_slice(&p.bytes);
    p.bytes = Vec::new();
    p
}

/// An answer to a packet for which no connection exists: back to where it
/// came from.
fn answer(c: &Ctx, meta: &WirePacket, h: &Header) -> WirePacket {
    let mut bytes = Vec::new();
    encode_datagram(h, &[], &mut bytes).expect("answer headers are built from checked fields");
    WirePacket {
        src: c.addr,
        dst: meta.src,
        sport: c.p.udp_port,
        dport: meta.sport,
        plane: meta.plane,
        ecn: ECN_ECT0,
        bytes,
    }
}

#[cfg(test)]
mod plane_tests {
    use super::PlaneHealth;

    #[test]
    fn a_marked_plane_is_avoided_until_answered_or_expired() {
        let mut h = PlaneHealth::new(4);
        assert!(h.all_ok(100));
        h.mark(2, 500);
        assert!(!h.ok(2, 100) && h.ok(1, 100) && !h.all_ok(100));
        // A later mark extends, an earlier one does not shorten.
        h.mark(2, 300);
        assert!(!h.ok(2, 400));
        h.mark(2, 900);
        assert!(!h.ok(2, 600) && h.ok(2, 900));
        h.clear(2);
        assert!(h.ok(2, 600) && h.all_ok(600));
        // Across the 32-bit wrap.
        h.mark(0, 10);
        assert!(!h.ok(0, u32::MAX - 5) && h.ok(0, 10));
        // A plane beyond the table is never avoided (nor marked).
        h.mark(9, 50);
        assert!(h.ok(9, 0));
    }
}
