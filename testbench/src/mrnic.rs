//! The mrnic (MetaRoCE-style) transport in the simulator: the reference
//! transport (`reference/`, crate `mrnic-reference`) behind
//! [`HostTransport`]. The testbench carries no transport logic of its own
//! for it; this file only translates: time (ps to ns), addresses (host index
//! to IPv4), packets (the reference's encoded datagrams ride as
//! [`Body::Bytes`] with their real length), and verbs (each message is one
//! SEND on stream 0 into a receive the adapter keeps posted; completions
//! become [`AppEvent`]s).

use std::collections::{BTreeMap, VecDeque};

use mrnic_proto::layouts::common::OPCODE;
use mrnic_proto::Header;
use mrnic_reference::sender::TxBlock;
use mrnic_reference::{
    Access, ConnParams, CqOpcode, Nic, NicConfig, RecvRequest, Sge, Status, WirePacket, WorkRequest, WrOp,
};

use crate::host::{AppEvent, Body, ConnSpec, HostTransport, Packet, PortMask, TransportStats};
use crate::switch::host_ip;
use crate::{ConnId, HostId, Time, NS, WIRE_OVERHEAD};

/// ICRC bytes, inside the datagram the reference encodes and also counted
/// in [`WIRE_OVERHEAD`].
const ICRC: u32 = 4;
/// Bytes of the data header before the payload.
const DATA_HEADER: usize = 40;
/// Where each host's send and receive buffers live.
const SEND_BUF: u64 = 0x1000_0000;
const RECV_BUF: u64 = 0x8000_0000;

/// Why the mrnic transport cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mrnic transport unavailable: {0}")]
pub struct Unavailable(pub String);

/// Settings the adapter needs from the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MrnicSetup {
    pub seed: u64,
    pub hosts: u32,
    pub planes: u32,
    pub nic_gbps: f64,
    pub mtu: u32,
    /// Largest message the workload posts (sizes the buffers).
    pub max_msg_bytes: u64,
    /// Paths per connection (None: the config's paths_per_conn).
    pub paths: Option<u8>,
    /// Account the time each NIC could send but had nothing eligible, by
    /// reason ([`HostTransport::idle_breakdown`]); costs a walk of every
    /// connection per refused poll, so off in scenarios.
    pub diagnose: bool,
}

/// Since when and why the last poll found nothing to send, and the time
/// accumulated per reason.
type IdleAccount = (Option<(TxBlock, Time)>, BTreeMap<TxBlock, Time>);

/// One reference NIC and the verbs bookkeeping around it.
pub struct RefNic {
    nic: Nic,
    paths: u8,
    recv_len: u32,
    recv_depth: u32,
    events: VecDeque<AppEvent>,
    wr_id: u64,
    now: Time,
    ts_unit_ns: u64,
    /// Diagnosis: since when, and why, the last poll found nothing to send;
    /// time accumulated per reason.
    diag: Option<IdleAccount>,
}

/// The protocol config a run uses: the built-in default with the run's
/// planes, MTU and line rate.
pub fn proto_config(setup: &MrnicSetup) -> Result<mrnic_proto::Config, Unavailable> {
    let mut cfg = mrnic_proto::Config::builtin("default").map_err(|e| Unavailable(e.to_string()))?;
    cfg.transport.planes = setup.planes;
    cfg.transport.mtu = setup.mtu;
    cfg.cc.line_rate_gbps = setup.nic_gbps.round() as u32;
    let issues = cfg.check();
    if let Some(i) = issues.first() {
        return Err(Unavailable(format!("config for this fabric is invalid: {i}")));
    }
    Ok(cfg)
}

/// One reference NIC per host.
pub fn transports(setup: &MrnicSetup) -> Result<Vec<Box<dyn HostTransport>>, Unavailable> {
    transports_with(proto_config(setup)?, setup)
}

/// One reference NIC per host, built from `cfg` as given (the setup's
/// planes, MTU and rate are not applied to it).
pub fn transports_with(
    cfg: mrnic_proto::Config,
    setup: &MrnicSetup,
) -> Result<Vec<Box<dyn HostTransport>>, Unavailable> {
    if let Some(i) = cfg.check().first() {
        return Err(Unavailable(format!("config for this fabric is invalid: {i}")));
    }
    let paths = setup.paths.unwrap_or(cfg.transport.paths_per_conn.min(u8::MAX as u32) as u8);
    let recv_depth = cfg.hardware.recv_queue_depth.min(16);
    let len = setup.max_msg_bytes.max(1);
    if len > u32::MAX as u64 {
        return Err(Unavailable(format!("messages of {len} bytes exceed a receive's 32-bit length")));
    }
    let mut out: Vec<Box<dyn HostTransport>> = Vec::new();
    for h in 0..setup.hosts {
        let ncfg = NicConfig::new(cfg.clone(), host_ip(h), setup.seed ^ ((h as u64) << 32) ^ 0x6d72_6e69);
        let mut nic = Nic::new(ncfg);
        nic.reg_mr(SEND_BUF, len, Access::LOCAL).map_err(|e| Unavailable(format!("send buffer: {e}")))?;
        nic.reg_mr(RECV_BUF, len, Access::RECV).map_err(|e| Unavailable(format!("receive buffer: {e}")))?;
        out.push(Box::new(RefNic {
            nic,
            paths,
            recv_len: len as u32,
            recv_depth,
            events: VecDeque::new(),
            wr_id: 0,
            now: 0,
            ts_unit_ns: cfg.timers.ts_unit_ns as u64,
            diag: setup.diagnose.then(|| (None, BTreeMap::new())),
        }));
    }
    Ok(out)
}

impl RefNic {
    fn post_recv(&mut self, conn: ConnId) {
        self.wr_id += 1;
        let r = RecvRequest { wr_id: self.wr_id, addr: RECV_BUF, len: self.recv_len };
        // A full receive queue only means enough are posted.
        let _ = self.nic.post_recv(conn, 0, r);
    }

    /// Turns completions into application events, re-posting receives.
    fn drain_cq(&mut self) {
        for c in self.nic.poll_cq(usize::MAX) {
            match (c.opcode, c.status) {
                (CqOpcode::Recv | CqOpcode::RecvRdmaWithImm, Status::Success) => {
                    self.events.push_back(AppEvent::Received { conn: c.conn, bytes: c.byte_len as u64 });
                    self.post_recv(c.conn);
                }
                (CqOpcode::Recv | CqOpcode::RecvRdmaWithImm, _) => {}
                (_, Status::Success) => self.events.push_back(AppEvent::SendDone { conn: c.conn }),
                (_, _) => self.events.push_back(AppEvent::SendFailed { conn: c.conn }),
            }
        }
    }

    fn ns(now: Time) -> u64 {
        now / NS
    }
}

/// A header the fast path could not parse goes through the reference's own
/// decoder, which counts it.
fn meta_fallback(nic: &mut Nic, now_ns: u64, mut meta: WirePacket, bytes: Vec<u8>) {
    meta.bytes = bytes;
    nic.handle_packet(now_ns, &meta);
}

fn host_of(addr: u32) -> HostId {
    addr & 0x00ff_ffff
}

impl HostTransport for RefNic {
    fn name(&self) -> &'static str {
        "mrnic"
    }

    fn connect(&mut self, spec: ConnSpec) {
        let cp = ConnParams {
            local_id: spec.id,
            remote_id: spec.id,
            remote: host_ip(spec.peer),
            paths: self.paths,
            tx_psn: 0,
            rx_psn: 0,
        };
        self.nic.create_conn(cp).expect("connection ids are unique per NIC and within 24 bits");
        for _ in 0..self.recv_depth {
            self.post_recv(spec.id);
        }
    }

    fn post_send(&mut self, now: Time, conn: ConnId, bytes: u64) {
        self.now = now;
        self.wr_id += 1;
        let wr =
            WorkRequest { wr_id: self.wr_id, op: WrOp::Send, imm: None, local: Sge { addr: SEND_BUF, len: bytes } };
        if self.nic.post_send(conn, 0, wr).is_err() {
            self.events.push_back(AppEvent::SendFailed { conn });
        }
    }

    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.now = now;
        let Body::Bytes(bytes) = pkt.body else { return };
        let meta = WirePacket {
            src: host_ip(pkt.src),
            dst: host_ip(pkt.dst),
            sport: pkt.sport,
            dport: pkt.dport,
            plane: pkt.plane,
            ecn: pkt.ecn,
            bytes: Vec::new(),
        };
        // The fabric never corrupts a packet, so the ICRC check (most of
        // the cost of a full decode) is skipped: the header is parsed and
        // handed on with its payload, the reference's post-parser entry.
        match Header::decode(&bytes) {
            Ok(h) => {
                let start = h.len().min(bytes.len());
                let end = bytes.len().saturating_sub(ICRC as usize).max(start);
                self.nic.handle_datagram(Self::ns(now), &meta, &h, &bytes[start..end]);
            }
            Err(_) => {
                meta_fallback(&mut self.nic, Self::ns(now), meta, bytes);
            }
        }
        self.drain_cq();
    }

    fn poll_transmit(&mut self, now: Time, ready: PortMask) -> Option<Packet> {
        self.now = now;
        let polled = self.nic.poll_transmit_ready(Self::ns(now), ready);
        if let Some((since, acc)) = &mut self.diag {
            if let Some((why, t0)) = since.take() {
                *acc.entry(why).or_default() += now - t0;
            }
            if polled.is_none() {
                // The most specific reason any connection gives.
                let why = self.nic.tx_blocks().filter_map(|(_, b)| b).max().unwrap_or(TxBlock::Idle);
                *since = Some((why, now));
            }
        }
        let wp = polled?;
        self.drain_cq();
        let len = wp.bytes.len();
        let payload = if len > DATA_HEADER && (OPCODE.get(&wp.bytes) as u8) < 8 {
            (len - DATA_HEADER - ICRC as usize) as u32
        } else {
            0
        };
        Some(Packet {
            src: host_of(wp.src),
            dst: host_of(wp.dst),
            sport: wp.sport,
            dport: wp.dport,
            plane: wp.plane,
            ecn: wp.ecn,
            wire_bytes: len as u32 + WIRE_OVERHEAD - ICRC,
            payload,
            body: Body::Bytes(wp.bytes),
        })
    }

    fn on_timer(&mut self, now: Time) {
        self.now = now;
        self.nic.on_timer(Self::ns(now));
        self.drain_cq();
    }

    fn next_deadline(&mut self) -> Option<Time> {
        // The reference keeps its timers ordered (one entry per connection),
        // so asking after every event is cheap. Its timers count in
        // timestamp units: a deadline reported at or before now is served at
        // the next unit boundary at the earliest.
        let unit = self.ts_unit_ns * NS;
        self.nic.next_deadline().map(|d| (d * NS).max((self.now / unit + 1) * unit))
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    fn stats(&self) -> TransportStats {
        let c = self.nic.counters();
        TransportStats {
            data_pkts: c.tx_packets + c.tx_retransmits,
            retx_pkts: c.tx_retransmits,
            ctrl_pkts: c.sacks_sent + c.nacks_sent + c.tx_probes,
            timeouts: c.rto_fired,
            naks: c.nacks_sent,
            cnps: 0,
        }
    }

    fn idle_breakdown(&self) -> Vec<(&'static str, Time)> {
        self.diag.as_ref().map_or(Vec::new(), |(_, acc)| acc.iter().map(|(k, &v)| (k.name(), v)).collect())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = self.nic.counters();
        vec![
            ("sacks_sent", c.sacks_sent),
            ("sack_losses", c.sack_losses),
            ("overdue_losses", c.overdue_losses),
            ("silent_path_timeouts", c.silent_path_timeouts),
            ("rto_fired", c.rto_fired),
            ("tx_rerouted", c.tx_rerouted),
            ("rx_duplicate", c.rx_duplicate),
            ("path_suspect", c.path_suspect),
            ("path_dead", c.path_dead),
        ]
    }

    fn describe_conn(&self, conn: ConnId) -> Option<String> {
        self.nic.conn_info(conn).map(|i| format!("{i:?}"))
    }
}
