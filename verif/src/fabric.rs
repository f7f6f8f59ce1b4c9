//! The cycle model's NIC top as a host of the fabric simulator
//! (`testbench/`): [`ModelNic`] puts a [`NicRig`] (the model's
//! `mrnic_core` with host memory) behind the testbench's
//! [`HostTransport`], so a scenario runs the cycle-accurate model where it
//! otherwise runs the reference (`mrnic scenario model-crosscheck`).
//!
//! - **Time.** The NIC runs at the config's core clock. Every call from
//!   the simulator first clocks the top up to the call's time; the NIC
//!   asks to be called at its next cycle, so it runs every cycle and a
//!   frame enters the fabric in the cycle its last beat leaves `m_axis`.
//! - **Frames.** What leaves `m_axis` is taken apart into the testbench's
//!   packet (addresses, ports, plane from `tuser`, ECN, the UDP payload as
//!   bytes); what arrives is wrapped into an Ethernet frame again (the
//!   fabric's ECN mark included) and enters on `s_axis` of its plane.
//! - **Ports.** The top's `port_ready` is the mask the simulator passes
//!   to `poll_transmit` (a port is ready while its queue holds fewer than
//!   `port_queue_pkts` packets), as the reference adapter passes it to
//!   `Nic::poll_transmit_ready`. The simulator asks again after each packet
//!   while some port has room, and not at all when none has; so after
//!   handing out a packet for plane `p` the mask held is the last one
//!   without `p`, which is what the simulator's next mask would be when it
//!   does not ask (`p` filled up, or it was already full).
//! - **Verbs.** As the reference adapter does (`testbench/src/mrnic.rs`):
//!   a connection opens every path of the config, each message is one
//!   SEND on stream 0 from the start of the send area, and
//!   `recv_queue_depth` receives per connection stay posted, each in a
//!   buffer of its own. A receive completion is delivered to the
//!   application only if its buffer holds the sender's bytes; then the
//!   buffer is cleared and posted again (a blocking post: the top runs on
//!   meanwhile, with no new request offered, so it may run a few cycles
//!   ahead of the simulator's time).
//!
//! [`rtl_transports`] puts the Verilated top in lockstep with the model
//! behind each host instead ([`NicRig::twin`]): a mismatch stops the NIC.
//! A fault of the bench itself (a memory rule broken on the AXI bus, a
//! handshake never taken) stops that NIC: the workload cannot finish and
//! the run reports its messages incomplete, with the reason on stderr.

use std::collections::{HashMap, VecDeque};

use mrnic_model::cqe_merge::opcode;
use mrnic_model::dma_write_engine::{ACCESS_RECV, ACCESS_REMOTE_WRITE};
use mrnic_model::tx_engine::{op, status};
use mrnic_proto::packet::{decode_frame, wrap_datagram, NetHeaders, NET_OVERHEAD};
use mrnic_proto::{Config, Header};
use mrnic_testbench::host::{AppEvent, Body, ConnSpec, HostTransport, Packet, PortMask, TransportStats};
use mrnic_testbench::sim::SimConfig;
use mrnic_testbench::switch::host_ip;
use mrnic_testbench::{ConnId, HostId, Time, WIRE_OVERHEAD};

use crate::nic::{mac_of, NicRig, OpenConn, Pressure};

/// The one memory region: the send area (every message's bytes, from
/// [`pattern`]), then every receive buffer.
const KEY: u32 = 16;
pub const SEND_AREA: u64 = 0x1000_0000;
const BASE: u64 = SEND_AREA;
use mrnic_proto::layouts::ICRC_LEN;

/// The byte at `offset` of every message (the send area's contents): a
/// function of the offset alone, so a receiver checks a message without
/// the sender's memory.
pub fn pattern(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9e37_79b9) >> 13) as u8 ^ offset as u8
}

/// One receive buffer of a connection's slot.
fn recv_buf(max_msg: u64, depth: u32, slot: u32, b: u32) -> u64 {
    BASE + max_msg + (slot as u64 * depth as u64 + b as u64) * max_msg
}

/// The cycle model's NIC top of one host.
pub struct ModelNic {
    rig: NicRig,
    cfg: Config,
    host: HostId,
    /// Picoseconds per core clock cycle, and the rig's cycle at time 0.
    ps: u64,
    base: u64,
    max_msg: u64,
    depth: u32,
    /// Connection id to table slot, and back.
    slots: HashMap<ConnId, u32>,
    conn_of: HashMap<u32, ConnId>,
    /// Per slot, the receive buffers posted, in posting order.
    posted: HashMap<u32, VecDeque<u32>>,
    /// Receives to post again: (slot, buffer).
    reposts: VecDeque<(u32, u32)>,
    /// Messages waiting for `s_wr`: (slot, wr_id, bytes); the head is
    /// offered while `offered` is set.
    sends: VecDeque<(u32, u64, u64)>,
    offered: bool,
    next_wr: u64,
    out: VecDeque<Packet>,
    /// The top's `port_ready` now.
    ports: u64,
    events: VecDeque<AppEvent>,
    stats: TransportStats,
    /// Messages whose receive buffer did not hold the sender's bytes.
    pub corrupt: u64,
    /// Why the NIC stopped, if it did.
    pub stopped: Option<String>,
}

/// One [`ModelNic`] per host of `sim`, from `cfg` (the fabric's planes and
/// line rate already in it), for messages up to `max_msg` bytes.
pub fn transports(sim: &SimConfig, cfg: &Config, max_msg: u64) -> Result<Vec<Box<dyn HostTransport>>, String> {
    let mut out: Vec<Box<dyn HostTransport>> = Vec::new();
    for h in 0..sim.topo.hosts() {
        out.push(Box::new(ModelNic::new(cfg, h, sim.seed, max_msg)?));
    }
    Ok(out)
}

/// As [`transports`], each host's top the model and its Verilated RTL in
/// lockstep ([`NicRig::twin`]): a scenario then runs the RTL, and the
/// first output that differs stops that NIC with the mismatch as its
/// reason (the workload does not finish).
pub fn rtl_transports(sim: &SimConfig, cfg: &Config, max_msg: u64) -> Result<Vec<Box<dyn HostTransport>>, String> {
    let mut out: Vec<Box<dyn HostTransport>> = Vec::new();
    for h in 0..sim.topo.hosts() {
        out.push(Box::new(ModelNic::with_rtl(cfg, h, sim.seed, max_msg, true)?));
    }
    Ok(out)
}

impl ModelNic {
    /// Host `host`'s NIC, reset, its addresses set and its region
    /// registered with the send area filled.
    pub fn new(cfg: &Config, host: HostId, seed: u64, max_msg: u64) -> Result<ModelNic, String> {
        ModelNic::with_rtl(cfg, host, seed, max_msg, false)
    }

    /// As [`ModelNic::new`], with `rtl` the top the model and its Verilated
    /// RTL in lockstep.
    pub fn with_rtl(cfg: &Config, host: HostId, seed: u64, max_msg: u64, rtl: bool) -> Result<ModelNic, String> {
        if max_msg == 0 || max_msg > u32::MAX as u64 {
            return Err(format!("messages of {max_msg} bytes: a receive's length is 1 to 2^32 - 1"));
        }
        let press = Pressure { out_busy: 0, axi_busy: 0, axi_latency: 8 };
        let seed = seed ^ ((host as u64) << 32) ^ 0x6d6f_6465_6c00;
        let mut rig = if rtl { NicRig::twin(cfg, seed, press)? } else { NicRig::new(cfg, seed, press)? };
        rig.wmem.log = None;
        let ip = host_ip(host);
        rig.set("cfg_src_ip", ip as u64)?;
        rig.set("cfg_src_mac", mac_of(ip))?;
        let depth = cfg.hardware.recv_queue_depth;
        let len = max_msg + cfg.transport.connections as u64 * depth as u64 * max_msg;
        rig.register_mr(cfg, KEY, BASE, len, ACCESS_REMOTE_WRITE | ACCESS_RECV)?;
        let src: Vec<u8> = (0..max_msg).map(pattern).collect();
        rig.memory().write(BASE, &src);
        let base = rig.cycle;
        Ok(ModelNic {
            rig,
            cfg: cfg.clone(),
            host,
            ps: 1_000_000 / cfg.hardware.clock_mhz.max(1) as u64,
            base,
            max_msg,
            depth,
            slots: HashMap::new(),
            conn_of: HashMap::new(),
            posted: HashMap::new(),
            reposts: VecDeque::new(),
            sends: VecDeque::new(),
            offered: false,
            next_wr: 1,
            out: VecDeque::new(),
            ports: u64::MAX,
            events: VecDeque::new(),
            stats: TransportStats::default(),
            corrupt: 0,
            stopped: None,
        })
    }

    /// The top and its host memory, for a look inside (or a test that
    /// changes what a sender holds).
    pub fn rig_mut(&mut self) -> &mut NicRig {
        &mut self.rig
    }

    fn stop(&mut self, why: String) {
        if self.stopped.is_none() {
            eprintln!("model NIC of host {}: stopped: {why}", self.host);
            self.stopped = Some(why);
        }
    }

    fn connect_slot(&mut self, spec: ConnSpec) -> Result<(), String> {
        let t = &self.cfg.transport;
        // conn_table's slot is the low bits of the local id.
        let slot = spec.id % t.connections;
        if self.conn_of.contains_key(&slot) {
            return Err(format!("connection {} shares table slot {slot} with another", spec.id));
        }
        let paths = (0..t.paths_per_conn)
            .map(|p| (0xC000 + ((slot * t.paths_per_conn + p) % 0x3000) as u16, (p % t.planes) as u8))
            .collect();
        let remote = host_ip(spec.peer);
        let open = OpenConn { local_id: spec.id, remote_id: spec.id, remote, tx_psn: 0, rx_psn: 0, paths };
        self.rig.open_conn(slot, &open)?;
        let mut q = VecDeque::new();
        for b in 0..self.depth {
            let at = recv_buf(self.max_msg, self.depth, slot, b);
            if !self.rig.post_recv(slot, 0, (at, self.max_msg), wr_id_of(slot, b), KEY)? {
                return Err(format!("receive {b} of connection {} refused", spec.id));
            }
            q.push_back(b);
        }
        self.posted.insert(slot, q);
        self.slots.insert(spec.id, slot);
        self.conn_of.insert(slot, spec.id);
        Ok(())
    }

    /// Clocks the top up to simulated time `now`.
    fn advance(&mut self, now: Time) {
        let target = self.base + now / self.ps;
        while self.stopped.is_none() && self.rig.cycle < target {
            if let Err(e) = self.cycle() {
                self.stop(e);
            }
        }
    }

    /// One cycle, or a blocking receive post when no request is offered.
    fn cycle(&mut self) -> Result<(), String> {
        if !self.offered {
            if let Some((slot, b)) = self.reposts.pop_front() {
                let at = recv_buf(self.max_msg, self.depth, slot, b);
                if !self.rig.post_recv(slot, 0, (at, self.max_msg), wr_id_of(slot, b), KEY)? {
                    return Err(format!("receive {b} of slot {slot} refused when posted again"));
                }
                self.posted.entry(slot).or_default().push_back(b);
                return self.collect();
            }
            if let Some(&(slot, wr_id, bytes)) = self.sends.front() {
                let fields = [
                    ("conn", slot as u64),
                    ("stream", 0),
                    ("op", op::SEND as u64),
                    ("wr_id", wr_id),
                    ("laddr", BASE),
                    ("len", bytes),
                    ("raddr", 0),
                    ("rkey", 0),
                    ("imm", 0),
                ];
                for (n, v) in fields {
                    self.rig.set(&format!("s_wr_{n}"), v)?;
                }
                self.rig.set("s_wr_valid", 1)?;
                self.offered = true;
            }
        }
        self.rig.clock();
        if self.offered && self.rig.get("s_wr_ready")? == 1 {
            self.rig.set("s_wr_valid", 0)?;
            self.offered = false;
            self.sends.pop_front();
        }
        self.collect()
    }

    /// Frames and completions the top produced.
    fn collect(&mut self) -> Result<(), String> {
        if let Some(m) = self.rig.mismatch() {
            return Err(format!("the RTL differs from the model: {m}"));
        }
        if !self.rig.violations.is_empty() {
            return Err(format!("host memory: {}", self.rig.violations.join("; ")));
        }
        for f in std::mem::take(&mut self.rig.frames) {
            let pkt = self.packet(&f.bytes, f.plane)?;
            self.out.push_back(pkt);
        }
        for q in std::mem::take(&mut self.rig.cqes) {
            let Some(&conn) = self.conn_of.get(&q.conn) else {
                return Err(format!("a completion for table slot {} that no connection uses: {q:?}", q.conn));
            };
            if q.opcode != opcode::RECV && q.opcode != opcode::RECV_RDMA_WITH_IMM {
                let ev = if q.status == status::SUCCESS {
                    AppEvent::SendDone { conn }
                } else {
                    AppEvent::SendFailed { conn }
                };
                self.events.push_back(ev);
                continue;
            }
            let Some(b) = self.posted.get_mut(&q.conn).and_then(VecDeque::pop_front) else {
                return Err(format!("a receive completion with no receive posted: {q:?}"));
            };
            if q.wr_id != wr_id_of(q.conn, b) {
                return Err(format!("receive completions out of posting order: {q:?}, expected buffer {b}"));
            }
            let at = recv_buf(self.max_msg, self.depth, q.conn, b);
            let len = q.byte_len as u64;
            let got = self.rig.memory().read(at, len as usize);
            let good = q.status == status::SUCCESS && got.iter().enumerate().all(|(i, &x)| x == pattern(i as u64));
            if good {
                self.events.push_back(AppEvent::Received { conn, bytes: len });
            } else {
                // Not delivered: the run counts the message incomplete.
                self.corrupt += 1;
                let why =
                    if q.status == status::SUCCESS { "its buffer does not hold the sender's bytes" } else { "failed" };
                eprintln!("model NIC of host {}: receive {q:?}: {why}", self.host);
            }
            self.rig.memory().write(at, &vec![0; len as usize]);
            self.reposts.push_back((q.conn, b));
        }
        Ok(())
    }

    /// Drives the top's `port_ready` with `mask` from the next cycle on.
    fn set_ports(&mut self, mask: u64) {
        if mask != self.ports {
            self.ports = mask;
            if let Err(e) = self.rig.set("port_ready", mask) {
                self.stop(e);
            }
        }
    }

    /// The testbench's packet for a frame that left on `plane`.
    fn packet(&mut self, bytes: &[u8], plane: u8) -> Result<Packet, String> {
        let f = decode_frame(bytes).map_err(|e| format!("the top sent a frame it cannot decode: {e}"))?;
        let dgram = bytes[NET_OVERHEAD..].to_vec();
        let ip = |a: [u8; 4]| u32::from_be_bytes(a) & 0x00ff_ffff;
        match f.header {
            Header::Data(d) => {
                self.stats.data_pkts += 1;
                self.stats.retx_pkts += d.flags.retx as u64;
            }
            Header::Nack(_) => {
                self.stats.naks += 1;
                self.stats.ctrl_pkts += 1;
            }
            _ => self.stats.ctrl_pkts += 1,
        }
        Ok(Packet {
            src: ip(f.net.src_ip),
            dst: ip(f.net.dst_ip),
            sport: f.net.src_port,
            dport: f.net.dst_port,
            plane,
            ecn: f.net.ecn,
            wire_bytes: (dgram.len() - ICRC_LEN) as u32 + WIRE_OVERHEAD,
            payload: f.payload.len() as u32,
            body: Body::Bytes(dgram),
        })
    }
}

fn wr_id_of(slot: u32, b: u32) -> u64 {
    1 << 48 | (slot as u64) << 16 | b as u64
}

fn octets(addr: u32) -> [u8; 4] {
    addr.to_be_bytes()
}

fn mac_octets(addr: u32) -> [u8; 6] {
    mac_of(addr).to_be_bytes()[2..].try_into().expect("six bytes")
}

impl HostTransport for ModelNic {
    fn name(&self) -> &'static str {
        "mrnic-model"
    }

    fn connect(&mut self, spec: ConnSpec) {
        if let Err(e) = self.connect_slot(spec) {
            self.stop(format!("connection {}: {e}", spec.id));
        }
        // Setup takes cycles before time 0: time starts after it.
        self.base = self.rig.cycle;
    }

    fn post_send(&mut self, now: Time, conn: ConnId, bytes: u64) {
        self.advance(now);
        match self.slots.get(&conn) {
            Some(&slot) if bytes <= self.max_msg => {
                self.sends.push_back((slot, self.next_wr, bytes));
                self.next_wr += 1;
            }
            _ => self.events.push_back(AppEvent::SendFailed { conn }),
        }
    }

    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.advance(now);
        let Body::Bytes(dgram) = pkt.body else { return };
        let (src, dst) = (host_ip(pkt.src), host_ip(pkt.dst));
        let net = NetHeaders {
            dst_mac: mac_octets(dst),
            src_mac: mac_octets(src),
            src_ip: octets(src),
            dst_ip: octets(dst),
            ecn: pkt.ecn,
            src_port: pkt.sport,
            dst_port: pkt.dport,
            ..NetHeaders::default()
        };
        let mut frame = Vec::with_capacity(NET_OVERHEAD + dgram.len());
        if wrap_datagram(&net, &dgram, &mut frame).is_ok() {
            self.rig.queue_frame(frame, pkt.plane);
        }
    }

    fn poll_transmit(&mut self, now: Time, ready: PortMask) -> Option<Packet> {
        self.advance(now);
        let pkt = self.out.pop_front();
        let taken = pkt.as_ref().map_or(0, |p| 1u64 << (p.plane as u32 % self.cfg.transport.planes));
        self.set_ports(ready as u64 & !taken);
        pkt
    }

    fn on_timer(&mut self, now: Time) {
        self.advance(now);
    }

    fn next_deadline(&mut self) -> Option<Time> {
        // Every cycle: the top's timers and pipelines run on the clock.
        self.stopped.is_none().then(|| (self.rig.cycle + 1).saturating_sub(self.base) * self.ps)
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    fn stats(&self) -> TransportStats {
        self.stats
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("corrupt_messages", self.corrupt), ("cycles", self.rig.cycle - self.base)]
    }
}
