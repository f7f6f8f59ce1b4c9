//! The RoCEv2 baseline, reliable connected as deployed: one queue pair per
//! connection on a fixed UDP source port (so ECMP pins it to one path and,
//! on a multiplane fabric, to one plane), go-back-N on loss (the responder
//! NAKs the first out-of-order packet once per expected PSN; the requester
//! resends everything from that PSN; a timeout does the same), and DCQCN rate
//! control (CNP on CE, alpha EWMA, cut, fast recovery, additive increase).
//! Constants follow the DCQCN paper (Zhu et al., SIGCOMM 2015), scaled to
//! the line rate where they are rates.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::host::{
    AppEvent, Body, ConnSpec, HostTransport, Packet, PortMask, TransportStats, ECN_CE, ECN_ECT0, ECN_NOT_ECT,
};
use crate::rng::mix64;
use crate::{ConnId, HostId, Time, US, WIRE_OVERHEAD};

/// RoCEv2 UDP destination port.
pub const ROCE_PORT: u16 = 4791;
/// Base transport header bytes.
const BTH: u32 = 12;
/// RDMA extended header (first packet of a WRITE).
const RETH: u32 = 16;
/// ACK extended header.
const AETH: u32 = 4;

/// What a RoCEv2 packet is, reduced to what the baseline acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceOp {
    /// A data packet; `last` ends its message.
    Data { first: bool, last: bool },
    /// Cumulative ACK: every PSN below `psn` was received.
    Ack,
    /// NAK sequence error: `psn` is the next one expected.
    Nak,
    /// Congestion notification for the sender of the marked packets.
    Cnp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceHdr {
    pub op: RoceOp,
    pub conn: ConnId,
    /// PSN, never wrapped in the simulator (24 bits on the wire).
    pub psn: u64,
}

/// DCQCN reaction point and notification point constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Dcqcn {
    pub enabled: bool,
    /// Alpha gain g.
    pub g: f64,
    /// Alpha decay period without CNPs (K).
    pub alpha_timer_us: f64,
    /// Rate increase timer period (T).
    pub increase_timer_us: f64,
    /// Fast recovery stages before additive increase (F).
    pub fast_recovery_steps: u32,
    /// Additive increase as a fraction of the port rate (R_AI).
    pub rai_fraction: f64,
    /// Floor of the current rate as a fraction of the port rate.
    pub min_rate_fraction: f64,
    /// At most one CNP per queue pair per this interval (N).
    pub cnp_interval_us: f64,
}

impl Default for Dcqcn {
    fn default() -> Self {
        Dcqcn {
            enabled: true,
            g: 1.0 / 256.0,
            alpha_timer_us: 55.0,
            increase_timer_us: 55.0,
            fast_recovery_steps: 5,
            rai_fraction: 0.001,
            min_rate_fraction: 0.001,
            cnp_interval_us: 50.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoceConfig {
    pub mtu: u32,
    /// NIC rate in Gbit/s (split over the planes, like the simulator's NIC).
    pub nic_gbps: f64,
    pub planes: u32,
    /// Retransmission timeout (fixed, no backoff).
    pub rto_us: f64,
    /// Timeouts in a row without progress before the QP goes to error and
    /// its outstanding messages are reported lost.
    pub retry_limit: u32,
    /// The responder ACKs at least every this many packets (and every
    /// message's last packet).
    pub ack_every: u32,
    /// Most packets in flight per QP (the NIC's outstanding-PSN limit).
    pub max_inflight_pkts: u32,
    pub dcqcn: Dcqcn,
}

impl RoceConfig {
    pub fn new(mtu: u32, nic_gbps: f64, planes: u32) -> RoceConfig {
        RoceConfig {
            mtu,
            nic_gbps,
            planes,
            // IRN (Mittal et al., SIGCOMM 2018) compares against RoCE with a
            // 320 us timeout; deployed NCCL settings are far longer.
            rto_us: 320.0,
            retry_limit: 7,
            ack_every: 8,
            max_inflight_pkts: 1024,
            dcqcn: Dcqcn::default(),
        }
    }
}

/// A message's PSN range at the requester.
#[derive(Debug, Clone, Copy)]
struct Seg {
    start: u64,
    end: u64,
    bytes: u64,
}

#[derive(Debug, Clone)]
struct Qp {
    conn: ConnId,
    peer: HostId,
    sport: u16,
    plane: u8,
    // Requester.
    segs: VecDeque<Seg>,
    /// PSN after the last packet posted.
    tail: u64,
    snd_una: u64,
    snd_nxt: u64,
    high_sent: u64,
    rto_at: Option<Time>,
    retries: u32,
    errored: bool,
    in_active: bool,
    in_ready: bool,
    // DCQCN reaction point (rates in Gbit/s).
    rc: f64,
    rt: f64,
    alpha: f64,
    stage: u32,
    t_inc: Time,
    t_alpha: Time,
    next_tx: Time,
    // Responder.
    epsn: u64,
    nak_sent: bool,
    rx_bytes: u64,
    unacked: u32,
    last_cnp: Option<Time>,
}

/// One host's RoCEv2 NIC: all its queue pairs.
pub struct RoceNic {
    host: HostId,
    cfg: RoceConfig,
    port_gbps: f64,
    qps: Vec<Qp>,
    by_conn: HashMap<ConnId, usize>,
    /// QPs with unacknowledged or unsent data (for timer scans).
    active: VecDeque<usize>,
    /// Per plane: QPs that may send now (data unsent, window open, pacing
    /// time reached), in round-robin order. A QP that cannot send is on no
    /// list: its pacing deadline (`pacing`), an acknowledgement, a NAK, a
    /// timeout or a post puts it back (`schedule`), so a packet costs the
    /// QPs it serves, not every QP of the host.
    ready: Vec<VecDeque<usize>>,
    /// Plane to serve first on the next poll (round robin over the ports).
    next_plane: usize,
    ctrl: VecDeque<Packet>,
    events: VecDeque<AppEvent>,
    stats: TransportStats,
    /// Time of the latest call, so deadlines already past are not reported.
    now: Time,
    /// Pacing deadlines (time, QP), stale entries dropped lazily.
    pacing: BinaryHeap<Reverse<(Time, usize)>>,
    /// Next scan of the QPs for expired retransmission timers. Scans run
    /// every rto/8 while any QP has data outstanding, so a timeout fires
    /// between rto and 9/8 rto after the last progress; one scan costs the
    /// active QPs, instead of every deadline query costing them.
    next_scan: Time,
}

impl RoceNic {
    pub fn new(host: HostId, cfg: RoceConfig) -> RoceNic {
        RoceNic {
            host,
            port_gbps: cfg.nic_gbps / cfg.planes as f64,
            cfg,
            qps: Vec::new(),
            by_conn: HashMap::new(),
            active: VecDeque::new(),
            ready: vec![VecDeque::new(); cfg.planes.max(1) as usize],
            next_plane: 0,
            ctrl: VecDeque::new(),
            events: VecDeque::new(),
            stats: TransportStats::default(),
            now: 0,
            pacing: BinaryHeap::new(),
            next_scan: 0,
        }
    }

    /// The fixed source port and plane of a connection's QP (both ends
    /// agree, so the ACKs share the plane).
    pub fn qp_route(conn: ConnId, planes: u32) -> (u16, u8) {
        let h = mix64(0x0dc9_c000 ^ conn as u64);
        (49152 + (h & 0x3fff) as u16, ((h >> 32) % planes as u64) as u8)
    }

    fn ctrl_pkt(&mut self, qi: usize, op: RoceOp, psn: u64) {
        let q = &self.qps[qi];
        let extra = match op {
            RoceOp::Cnp => 16,
            _ => AETH,
        };
        self.stats.ctrl_pkts += 1;
        self.ctrl.push_back(Packet {
            src: self.host,
            dst: q.peer,
            sport: q.sport,
            dport: ROCE_PORT,
            plane: q.plane,
            ecn: ECN_NOT_ECT,
            wire_bytes: WIRE_OVERHEAD + BTH + extra,
            payload: 0,
            body: Body::Roce(RoceHdr { op, conn: q.conn, psn }),
        });
    }

    /// Puts a QP with data on the timer scan list and schedules it.
    fn activate(&mut self, qi: usize, now: Time) {
        if !self.qps[qi].in_active {
            self.qps[qi].in_active = true;
            self.active.push_back(qi);
        }
        self.schedule(qi, now);
    }

    /// Data unsent and the window open (pacing aside).
    fn has_work(&self, qi: usize) -> bool {
        let q = &self.qps[qi];
        !q.errored && q.snd_nxt < q.tail && q.snd_nxt - q.snd_una < self.cfg.max_inflight_pkts as u64
    }

    /// Puts a QP where it waits for its next chance: its plane's ready list
    /// if it may send now, the pacing heap if only its rate holds it back,
    /// nowhere if it has nothing to send or its window is full (then the
    /// event that changes that calls this again).
    fn schedule(&mut self, qi: usize, now: Time) {
        if self.qps[qi].in_ready || !self.has_work(qi) {
            return;
        }
        let q = &mut self.qps[qi];
        if q.next_tx > now {
            self.pacing.push(Reverse((q.next_tx, qi)));
        } else {
            q.in_ready = true;
            let plane = q.plane as usize % self.ready.len();
            self.ready[plane].push_back(qi);
        }
    }

    /// Moves the QPs whose pacing time has come to their ready lists.
    fn release_paced(&mut self, now: Time) {
        while let Some(&Reverse((t, qi))) = self.pacing.peek() {
            if t > now {
                break;
            }
            self.pacing.pop();
            if self.qps[qi].next_tx == t {
                self.schedule(qi, now);
            }
        }
    }

    /// Applies the DCQCN timers that expired since the QP was last touched.
    fn dcqcn_advance(&mut self, qi: usize, now: Time) {
        let d = self.cfg.dcqcn;
        if !d.enabled {
            return;
        }
        let port = self.port_gbps;
        let q = &mut self.qps[qi];
        let k = (d.alpha_timer_us * US as f64) as Time;
        let n = (now.saturating_sub(q.t_alpha)) / k;
        if n > 0 {
            q.alpha *= (1.0 - d.g).powi(n.min(1 << 20) as i32);
            q.t_alpha += n * k;
        }
        if q.rc >= port {
            q.t_inc = now;
            return;
        }
        let t = (d.increase_timer_us * US as f64) as Time;
        let n = (now.saturating_sub(q.t_inc)) / t;
        for _ in 0..n.min(64) {
            q.stage += 1;
            if q.stage > d.fast_recovery_steps {
                q.rt = (q.rt + d.rai_fraction * port).min(port);
            }
            q.rc = ((q.rt + q.rc) / 2.0).min(port);
        }
        q.t_inc += n * t;
    }

    fn on_cnp(&mut self, qi: usize, now: Time) {
        self.dcqcn_advance(qi, now);
        let d = self.cfg.dcqcn;
        let floor = d.min_rate_fraction * self.port_gbps;
        let q = &mut self.qps[qi];
        q.rt = q.rc;
        q.rc = (q.rc * (1.0 - q.alpha / 2.0)).max(floor);
        q.alpha = (1.0 - d.g) * q.alpha + d.g;
        q.stage = 0;
        q.t_inc = now;
        q.t_alpha = now;
    }

    /// Cumulative acknowledgement up to (not including) `psn`.
    fn on_ack(&mut self, qi: usize, now: Time, psn: u64) {
        let rto = (self.cfg.rto_us * US as f64) as Time;
        let q = &mut self.qps[qi];
        if psn <= q.snd_una || psn > q.high_sent {
            return;
        }
        q.snd_una = psn;
        q.retries = 0;
        q.snd_nxt = q.snd_nxt.max(psn);
        while let Some(s) = q.segs.front() {
            if s.end > psn {
                break;
            }
            q.segs.pop_front();
            self.events.push_back(AppEvent::SendDone { conn: q.conn });
        }
        q.rto_at = if q.snd_una < q.high_sent { Some(now + rto) } else { None };
        // The window may have opened.
        self.schedule(qi, now);
    }

    fn data_pkt(&mut self, qi: usize, now: Time) -> Packet {
        let rto = (self.cfg.rto_us * US as f64) as Time;
        let mtu = self.cfg.mtu as u64;
        let port = self.port_gbps;
        let q = &mut self.qps[qi];
        let psn = q.snd_nxt;
        let seg = *q.segs.iter().find(|s| s.start <= psn && psn < s.end).expect("psn inside a posted message");
        let idx = psn - seg.start;
        let payload = (seg.bytes - idx * mtu).min(mtu) as u32;
        let first = idx == 0;
        let last = psn + 1 == seg.end;
        let wire = WIRE_OVERHEAD + BTH + if first { RETH } else { 0 } + payload;
        if psn < q.high_sent {
            self.stats.retx_pkts += 1;
        }
        self.stats.data_pkts += 1;
        q.snd_nxt += 1;
        q.high_sent = q.high_sent.max(q.snd_nxt);
        if q.rto_at.is_none() {
            q.rto_at = Some(now + rto);
        }
        if q.rc < port {
            let gap = (wire as f64 * 8000.0 / q.rc) as Time;
            q.next_tx = q.next_tx.max(now) + gap;
        }
        Packet {
            src: self.host,
            dst: q.peer,
            sport: q.sport,
            dport: ROCE_PORT,
            plane: q.plane,
            ecn: ECN_ECT0,
            wire_bytes: wire,
            payload,
            body: Body::Roce(RoceHdr { op: RoceOp::Data { first, last }, conn: q.conn, psn }),
        }
    }

    fn on_data(&mut self, qi: usize, now: Time, pkt: &Packet, psn: u64, last: bool) {
        let d = self.cfg.dcqcn;
        if pkt.ecn == ECN_CE && d.enabled {
            let interval = (d.cnp_interval_us * US as f64) as Time;
            let q = &mut self.qps[qi];
            if q.last_cnp.is_none_or(|t| now >= t + interval) {
                q.last_cnp = Some(now);
                self.stats.cnps += 1;
                self.ctrl_pkt(qi, RoceOp::Cnp, 0);
            }
        }
        let ack_every = self.cfg.ack_every;
        let q = &mut self.qps[qi];
        if psn == q.epsn {
            q.epsn += 1;
            q.nak_sent = false;
            q.rx_bytes += pkt.payload as u64;
            q.unacked += 1;
            if last {
                let bytes = std::mem::take(&mut q.rx_bytes);
                self.events.push_back(AppEvent::Received { conn: q.conn, bytes });
            }
            if last || q.unacked >= ack_every {
                q.unacked = 0;
                let e = q.epsn;
                self.ctrl_pkt(qi, RoceOp::Ack, e);
            }
        } else if psn > q.epsn {
            if !q.nak_sent {
                q.nak_sent = true;
                let e = q.epsn;
                self.stats.naks += 1;
                self.ctrl_pkt(qi, RoceOp::Nak, e);
            }
        } else {
            // Duplicate after a go-back: re-acknowledge.
            let e = q.epsn;
            self.ctrl_pkt(qi, RoceOp::Ack, e);
        }
    }
}

impl HostTransport for RoceNic {
    fn name(&self) -> &'static str {
        "roce"
    }

    fn connect(&mut self, spec: ConnSpec) {
        let (sport, plane) = RoceNic::qp_route(spec.id, self.cfg.planes);
        self.by_conn.insert(spec.id, self.qps.len());
        self.qps.push(Qp {
            conn: spec.id,
            peer: spec.peer,
            sport,
            plane,
            segs: VecDeque::new(),
            tail: 0,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            rto_at: None,
            retries: 0,
            errored: false,
            in_active: false,
            in_ready: false,
            rc: self.port_gbps,
            rt: self.port_gbps,
            alpha: 1.0,
            stage: 0,
            t_inc: 0,
            t_alpha: 0,
            next_tx: 0,
            epsn: 0,
            nak_sent: false,
            rx_bytes: 0,
            unacked: 0,
            last_cnp: None,
        });
    }

    fn post_send(&mut self, now: Time, conn: ConnId, bytes: u64) {
        self.now = now;
        let qi = self.by_conn[&conn];
        let q = &mut self.qps[qi];
        if q.errored {
            self.events.push_back(AppEvent::SendFailed { conn });
            return;
        }
        let pkts = bytes.div_ceil(self.cfg.mtu as u64).max(1);
        q.segs.push_back(Seg { start: q.tail, end: q.tail + pkts, bytes });
        q.tail += pkts;
        self.activate(qi, now);
    }

    fn handle_packet(&mut self, now: Time, pkt: Packet) {
        self.now = now;
        let Body::Roce(h) = pkt.body else { return };
        let Some(&qi) = self.by_conn.get(&h.conn) else { return };
        match h.op {
            RoceOp::Data { last, .. } => self.on_data(qi, now, &pkt, h.psn, last),
            RoceOp::Ack => self.on_ack(qi, now, h.psn),
            RoceOp::Nak => {
                self.on_ack(qi, now, h.psn);
                let q = &mut self.qps[qi];
                if h.psn >= q.snd_una && h.psn < q.snd_nxt {
                    q.snd_nxt = h.psn;
                    self.activate(qi, now);
                }
            }
            RoceOp::Cnp => self.on_cnp(qi, now),
        }
    }

    fn poll_transmit(&mut self, now: Time, ready: PortMask) -> Option<Packet> {
        self.now = now;
        if let Some(p) = self.ctrl.pop_front() {
            return Some(p);
        }
        self.release_paced(now);
        let planes = self.ready.len();
        for k in 0..planes {
            let plane = (self.next_plane + k) % planes;
            if ready & (1 << plane) == 0 {
                continue;
            }
            while let Some(qi) = self.ready[plane].pop_front() {
                self.qps[qi].in_ready = false;
                // Its state may have changed since it was listed (a go-back
                // past its data, an error).
                if !self.has_work(qi) || self.qps[qi].next_tx > now {
                    self.schedule(qi, now);
                    continue;
                }
                self.dcqcn_advance(qi, now);
                let p = self.data_pkt(qi, now);
                self.schedule(qi, now);
                self.next_plane = (plane + 1) % planes;
                return Some(p);
            }
        }
        None
    }

    fn on_timer(&mut self, now: Time) {
        self.now = now;
        if now < self.next_scan {
            return;
        }
        let rto = (self.cfg.rto_us * US as f64) as Time;
        self.next_scan = now + rto / 8;
        let mut i = 0;
        while i < self.active.len() {
            let qi = self.active[i];
            let q = &mut self.qps[qi];
            if q.errored || q.snd_una >= q.tail {
                q.in_active = false;
                self.active.swap_remove_back(i);
                continue;
            }
            i += 1;
            if q.rto_at.is_some_and(|t| t <= now) {
                self.stats.timeouts += 1;
                q.retries += 1;
                if q.retries > self.cfg.retry_limit {
                    q.errored = true;
                    q.rto_at = None;
                    for _ in q.segs.drain(..) {
                        self.events.push_back(AppEvent::SendFailed { conn: q.conn });
                    }
                    q.snd_una = q.tail;
                } else {
                    q.snd_nxt = q.snd_una;
                    q.rto_at = Some(now + rto);
                    self.schedule(qi, now);
                }
            }
        }
    }

    fn next_deadline(&mut self) -> Option<Time> {
        // Pacing: the earliest future send time of a QP that still has
        // data; those already due go to their ready lists (the next poll
        // serves them).
        self.release_paced(self.now);
        while let Some(&Reverse((t, qi))) = self.pacing.peek() {
            if self.qps[qi].next_tx == t && self.has_work(qi) {
                break;
            }
            self.pacing.pop();
        }
        let pace = self.pacing.peek().map(|r| r.0 .0);
        let scan = if !self.active.is_empty() {
            let rto = (self.cfg.rto_us * US as f64) as Time;
            if self.next_scan <= self.now {
                self.next_scan = self.now + rto / 8;
            }
            Some(self.next_scan)
        } else {
            None
        };
        match (pace, scan) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_event(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    fn stats(&self) -> TransportStats {
        self.stats
    }
}
