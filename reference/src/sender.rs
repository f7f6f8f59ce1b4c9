//! The transmit half of a connection: work requests cut into packets,
//! sprayed over the paths by the selector, kept in per-path retransmit rings
//! until SACKed, retransmitted on loss (SACK gap, probe, timeout, RNR,
//! BAD_HDR), completed in msn order per stream.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{
    encode_datagram, DataHeader, Flags, Header, NackCode, NackHeader, Placement, ProbeHeader, SackHeader,
};

use crate::fixed::{seq_add, seq_before, seq_diff, ts_reached, SEQ_HALF, SEQ_MASK};
use crate::memory::Memory;
use crate::nic::{Ctx, Params};
use crate::path::{self, Aimd, PathAction, PathEntry, PathParams, PathState};
use crate::selector::{self, Request};
use crate::verbs::{Completion, CqOpcode, Status, WorkRequest, WrOp};
use crate::wire::{NodeAddr, WirePacket};

/// One outstanding psn of a path (the retransmit ring slot, plus the
/// reference's bookkeeping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    /// Key of the work request in `TxConn::wrs`.
    wr: u64,
    offset: u32,
    len: u32,
    tx_ts: u16,
    /// 4 bits in the ring: retransmissions charged to this packet (it was
    /// lost on a path that delivered other packets sent after it, or came
    /// back with BAD_HDR); the transport retry limit applies to it. A
    /// retransmission because a path went silent is the path's failure, not
    /// the packet's: it is not charged (see `charge`).
    retx_count: u8,
    /// Retransmitted at least once for loss (charged or not): its
    /// acknowledgement may answer an earlier copy.
    resent: bool,
    /// The pending retransmission is charged to `retx_count`.
    charge: bool,
    /// Path whose port and plane the last transmission left by (the packet's
    /// own path unless it was rerouted).
    phys: u8,
    /// RNR NACKs received for this packet (the RNR retry limit applies to
    /// it, separately, as in RDMA).
    rnr_count: u8,
    /// The pending retransmission answers an RNR back-off, not a loss.
    /// Also: the packet is out of its path's `inflight` (`path::on_rnr`)
    /// until that retransmission (`path::on_resume`).
    rnr_resend: bool,
    /// The path identity's tx_seq of the last transmission.
    tx_seq: u32,
    /// Waiting in the retransmit queue.
    queued: bool,
    /// 32-bit timestamp of the last transmission (the ring's 16-bit tx_ts
    /// extended; for loss detection across paths).
    sent: u32,
    /// RNR back-off: not retransmitted before this timestamp.
    rnr_until: Option<u32>,
}

#[derive(Debug, Clone)]
struct TxWr {
    wr: WorkRequest,
    stream: u8,
    msn: u32,
    /// Receive sequence at the peer (SEND, SEND_IMM, WRITE_IMM consume one).
    rq_seq: u32,
    len: u32,
    /// Bytes cut into packets so far.
    sent: u32,
    /// The first packet has left (a zero-length message has one packet).
    started: bool,
    /// Packets sent and not yet acknowledged.
    outstanding: u32,
}

impl TxWr {
    fn done(&self) -> bool {
        self.started && self.sent == self.len && self.outstanding == 0
    }
}

#[derive(Debug, Clone, Default)]
struct TxStream {
    next_msn: u32,
    next_rq_seq: u32,
    /// Work requests with bytes still to cut, in msn order.
    pending: VecDeque<u64>,
    /// Work requests not yet completed, in msn order.
    order: VecDeque<u64>,
    /// The peer's completed_msn: every msn below it completed there. New
    /// messages start only within `msg_table_depth` of it.
    remote_completed: u32,
}

/// Connection-level congestion state: AIMD over all paths, the receiver's
/// rate hint and the resulting cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnCc {
    pub aimd: Aimd,
    /// Smoothed RTT over every path's samples (timestamp units).
    pub srtt: u32,
    /// Smallest RTT sample of any path (u32::MAX before the first).
    pub min_rtt: u32,
    /// Last rate hint from the peer, Q0.16 of line rate.
    pub rate_hint: u16,
    /// min(cwnd, rate_hint x line x srtt) computed when either changes.
    pub cap: u32,
    pub inflight_bytes: u64,
}

/// Why a connection sends nothing now (diagnosis: where the idle goes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TxBlock {
    /// Nothing to send: no bytes left to cut, nothing to retransmit.
    Idle,
    /// The next message waits for the peer's message table.
    MsgTable,
    /// The connection's in-flight bytes reached its cap (cwnd or rate hint x srtt).
    ConnWindow,
    /// Every GOOD path is at its cwnd or psn window.
    PathWindow,
    /// No path is GOOD (all SKIP, SUSPECT or DEAD).
    NoPath,
    /// The next packet may only leave by NIC ports that are full now.
    PortFull,
    /// The connection failed.
    Failed,
}

impl TxBlock {
    pub const ALL: [TxBlock; 7] = [
        TxBlock::Idle,
        TxBlock::MsgTable,
        TxBlock::ConnWindow,
        TxBlock::PathWindow,
        TxBlock::NoPath,
        TxBlock::PortFull,
        TxBlock::Failed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxBlock::Idle => "idle",
            TxBlock::MsgTable => "msg_table",
            TxBlock::ConnWindow => "conn_window",
            TxBlock::PathWindow => "path_window",
            TxBlock::NoPath => "no_good_path",
            TxBlock::PortFull => "port_full",
            TxBlock::Failed => "failed",
        }
    }
}

/// The transmit half of one connection.
#[derive(Debug, Clone)]
pub struct TxConn {
    pub local_id: u32,
    pub remote_id: u32,
    pub remote: NodeAddr,
    pub paths: Vec<PathEntry>,
    /// Unwrapped cum_acked of each path (the 24-bit psn extended to 64 bits),
    /// so that rings order correctly across the psn wrap.
    base: Vec<u64>,
    rings: Vec<BTreeMap<u64, Slot>>,
    pub cc: ConnCc,
    streams: Vec<TxStream>,
    wrs: BTreeMap<u64, TxWr>,
    next_wr_key: u64,
    retx: VecDeque<(u8, u64)>,
    probes: VecDeque<u8>,
    rnr_wait: Vec<(u8, u64, u32)>,
    rr_stream: usize,
    /// Set when a stream is blocked on the peer's message table with nothing
    /// in flight: a PROBE then fetches fresh completed_msn values.
    window_probe_at: Option<u32>,
    pub failed: Option<Status>,
    /// Send timestamp of the most recently sent first transmission that was
    /// acknowledged, on any path: every packet sent well before it and still
    /// unacknowledged is lost (RACK across paths, see `detect_overdue`).
    rack_sent: Option<u32>,
    /// How long that packet took to be acknowledged (the connection's most
    /// recent RTT, acknowledgement delay included).
    rack_rtt: u32,
    /// Per path: timestamp of its last acknowledgement (or of the first send
    /// after it was idle).
    last_progress: Vec<u32>,
    /// Data packets since the last one that asked for a SACK.
    since_ackreq: u32,
    /// Timestamp of the first of them (meaningful while `since_ackreq > 0`).
    unreq_since: u32,
    /// When nothing is left to send, no later packet can show an outstanding
    /// one lost: this timer then finds overdue packets by time alone.
    tail_at: Option<u32>,
    /// The last [`TxConn::poll`] sent nothing only because the packet it
    /// had could leave by full NIC ports alone (`Ctx::ports`): the
    /// connection may send once a port drains.
    pub port_blocked: bool,
}

impl TxConn {
    pub fn new(local_id: u32, remote_id: u32, remote: NodeAddr, paths: Vec<PathEntry>, streams: u32, c: &Ctx) -> Self {
        let n = paths.len();
        let base = paths.iter().map(|p| p.cum_acked as u64).collect();
        let aimd = Aimd { cwnd: c.p.conn_init_cwnd, acked_bytes: 0, ecn_ewma: 0, hold_until: 0 };
        let srtt = c.p.path.initial_rtt;
        let mut cc = ConnCc { aimd, srtt, min_rtt: u32::MAX, rate_hint: u16::MAX, cap: 0, inflight_bytes: 0 };
        cc.cap = conn_cap(&cc, c);
        TxConn {
            local_id,
            remote_id,
            remote,
            paths,
            base,
            rings: vec![BTreeMap::new(); n],
            cc,
            streams: vec![TxStream::default(); streams as usize],
            wrs: BTreeMap::new(),
            next_wr_key: 0,
            retx: VecDeque::new(),
            probes: VecDeque::new(),
            rnr_wait: Vec::new(),
            rr_stream: 0,
            window_probe_at: None,
            failed: None,
            rack_sent: None,
            rack_rtt: 0,
            last_progress: vec![0; n],
            since_ackreq: 0,
            unreq_since: 0,
            tail_at: None,
            port_blocked: false,
        }
    }

    /// Queues a checked work request (the Nic validated stream, length and
    /// local buffer).
    pub fn post(&mut self, stream: u8, wr: WorkRequest, len: u32) {
        let s = &mut self.streams[stream as usize];
        let msn = s.next_msn;
        s.next_msn = seq_add(msn, 1);
        let consumes_recv = matches!(wr.op, WrOp::Send) || wr.imm.is_some();
        let rq_seq = s.next_rq_seq;
        if consumes_recv {
            s.next_rq_seq = seq_add(rq_seq, 1);
        }
        let key = self.next_wr_key;
        self.next_wr_key += 1;
        self.wrs.insert(key, TxWr { wr, stream, msn, rq_seq, len, sent: 0, started: false, outstanding: 0 });
        s.pending.push_back(key);
        s.order.push_back(key);
    }

    /// Work requests not yet completed.
    pub fn outstanding_wrs(&self) -> usize {
        self.wrs.len()
    }

    fn ext(&self, pid: usize, psn: u32) -> Option<u64> {
        let d = seq_diff(psn, self.paths[pid].cum_acked);
        let span = seq_diff(self.paths[pid].next_psn, self.paths[pid].cum_acked);
        (d < span).then(|| self.base[pid] + d as u64)
    }

    // ---------------------------------------------------------------- transmit

    /// The next packet of this connection, if any may leave now: probes
    /// first, then retransmissions, then new data. The datagram is written
    /// into `buf` (replacing what it held; payloads go straight from `mem`
    /// into it); the packet returned carries the addressing, its `bytes`
    /// are empty.
    pub fn poll(&mut self, now: u64, mem: &Memory, c: &mut Ctx, buf: &mut Vec<u8>) -> Option<WirePacket> {
        self.port_blocked = false;
        if self.failed.is_some() {
            return None;
        }
        let ts = c.ts32(now);
        if let Some(pid) = self.probes.pop_front() {
            return Some(self.send_probe(pid as usize, ts, c, buf));
        }
        while let Some(&(pid, ext)) = self.retx.front() {
            let slot = match self.rings[pid as usize].get(&ext) {
                // Acked, or moved to an RNR back-off since it was queued.
                None => None,
                Some(s) if !s.queued => None,
                Some(s) => Some(*s),
            };
            let Some(slot) = slot else {
                self.retx.pop_front();
                continue;
            };
            // On its own path if GOOD, unless that path is timing out
            // (silent since its last acknowledgement): then elsewhere.
            let good = self.paths[pid as usize].state == PathState::Good;
            let own = !c.p.ack_clocking
                || (self.paths[pid as usize].retries == 0 && c.planes.ok(self.paths[pid as usize].plane, ts));
            let phys = if good && own {
                pid
            } else {
                let s = self.select(&Request::Retx { avoid: pid }, ts, c);
                match s.chosen {
                    Some(p) => {
                        self.apply_deficits(&s.deficits);
                        p
                    }
                    // Another path would take it once its port drains:
                    // the retransmission waits for that, and nothing else
                    // of the connection leaves before it.
                    None if self.blocked_by_ports(&Request::Retx { avoid: pid }, ts, c) => {
                        self.port_blocked = true;
                        return None;
                    }
                    None if good => pid,
                    None => break,
                }
            };
            if !c.port_ready(self.paths[phys as usize].plane) {
                // Its port is full: the retransmission waits for it, and
                // nothing else of the connection leaves before it.
                self.port_blocked = true;
                return None;
            }
            self.retx.pop_front();
            return self.retransmit(pid as usize, ext, slot, phys as usize, ts, mem, c, buf);
        }
        self.send_new(ts, mem, c, buf)
    }

    /// What keeps this connection from sending new data now; `None` when a
    /// probe, a retransmission or new data could leave. Read-only, for
    /// diagnosis (it mirrors the checks of [`TxConn::poll`]).
    pub fn block(&self, c: &Params) -> Option<TxBlock> {
        if self.failed.is_some() {
            return Some(TxBlock::Failed);
        }
        if self.port_blocked {
            // As the last poll found it (the block knows no port state).
            return Some(TxBlock::PortFull);
        }
        if !self.probes.is_empty()
            || self.retx.iter().any(|&(p, e)| self.rings[p as usize].get(&e).is_some_and(|s| s.queued))
        {
            return None;
        }
        let mut blocked = false;
        let mut any = false;
        for s in &self.streams {
            let Some(&key) = s.pending.front() else { continue };
            let w = &self.wrs[&key];
            if !w.started && seq_diff(w.msn, s.remote_completed) >= c.msg_depth {
                blocked = true;
            } else {
                any = true;
            }
        }
        if !any {
            return Some(if blocked { TxBlock::MsgTable } else { TxBlock::Idle });
        }
        if self.cc.inflight_bytes >= self.cc.cap as u64 {
            return Some(TxBlock::ConnWindow);
        }
        if !self.paths.iter().any(|p| p.usable()) {
            return Some(TxBlock::NoPath);
        }
        let req = Request::New { conn_ok: true };
        if !self.paths.iter().enumerate().any(|(i, p)| selector::eligible(p, i, &req, c.path.mtu_shift, c.window)) {
            return Some(TxBlock::PathWindow);
        }
        None
    }

    /// The selector's choice, among paths on planes the NIC holds healthy
    /// (with ack clocking) unless no GOOD path is left on those, and among
    /// those only paths whose NIC port has room now (`Ctx::ports`; every
    /// port when the caller keeps no port queues). Without the port rule
    /// the NIC put a packet on a full port whenever the round robin chose
    /// it: the host-uplink queues grew to 600-900 KB (unmarked, so no
    /// window reacted), every path's srtt carried them, and after a plane
    /// failure the dead port's queue drained into the void and the
    /// retransmissions waited behind the live ports' queues (plane-failure:
    /// 58 us to redistribute, 6.1 base RTTs; with the rule 24 us). The
    /// hardware has the same AND on the eligibility vector, with the egress
    /// FIFOs' ready bits.
    fn select(&self, req: &Request, ts: u32, c: &Ctx) -> selector::Selection {
        self.select_ports(req, ts, c, true)
    }

    /// [`TxConn::select`], with the port rule (`ports`) or without.
    fn select_ports(&self, req: &Request, ts: u32, c: &Ctx, ports: bool) -> selector::Selection {
        let (shift, window) = (c.p.path.mtu_shift, c.p.window);
        let ready = |i: usize| !ports || c.port_ready(self.paths[i].plane);
        if c.p.ack_clocking && !c.planes.all_ok(ts) {
            let healthy = |i: usize| c.planes.ok(self.paths[i].plane, ts);
            if (0..self.paths.len()).any(|i| self.paths[i].state == PathState::Good && healthy(i)) {
                return selector::select_among(&self.paths, req, shift, window, |i| healthy(i) && ready(i));
            }
        }
        if ports && c.ports_limited() {
            return selector::select_among(&self.paths, req, shift, window, ready);
        }
        selector::select(&self.paths, req, shift, window)
    }

    /// The selector found nothing for `req`, but would have with every
    /// port ready.
    fn blocked_by_ports(&self, req: &Request, ts: u32, c: &Ctx) -> bool {
        c.ports_limited() && self.select_ports(req, ts, c, false).chosen.is_some()
    }

    fn apply_deficits(&mut self, d: &[i16]) {
        for (p, &v) in self.paths.iter_mut().zip(d) {
            p.deficit = v;
        }
    }

    fn send_probe(&mut self, pid: usize, ts: u32, c: &mut Ctx, buf: &mut Vec<u8>) -> WirePacket {
        self.paths[pid] = path::on_probe_sent(&self.paths[pid], ts, &c.p.path);
        let p = &self.paths[pid];
        let h = Header::Probe(ProbeHeader {
            tx_ts: p.probe_ts,
            dst_conn: self.remote_id,
            path_id: pid as u8,
            path_gen: p.gen,
            path_psn: p.next_psn,
        });
        c.counters.tx_probes += 1;
        self.packet(&h, &[], pid, c, buf)
    }

    /// Encodes header and payload into `buf` and returns the addressing of
    /// the packet leaving by path `phys`.
    fn packet(&self, h: &Header, payload: &[u8], phys: usize, c: &Ctx, buf: &mut Vec<u8>) -> WirePacket {
        buf.clear();
        encode_datagram(h, payload, buf).expect("headers built from checked fields");
        let p = &self.paths[phys];
        WirePacket {
            src: c.addr,
            dst: self.remote,
            sport: p.sport,
            dport: c.p.udp_port,
            plane: p.plane,
            ecn: ECN_ECT0,
            bytes: Vec::new(),
        }
    }

    /// The data header of `len` bytes at `offset` of a work request.
    fn data_header(&self, w: &TxWr, pid: usize, psn: u32, offset: u32, len: u32, ts: u32) -> DataHeader {
        let place = match w.wr.op {
            WrOp::Write { remote_addr, rkey } => {
                Placement::Write { rkey, addr: remote_addr.wrapping_add(offset as u64) }
            }
            WrOp::Send => Placement::Send { rq_seq: w.rq_seq, msg_offset: offset },
        };
        DataHeader {
            flags: Flags { som: offset == 0, eom: offset + len == w.len, retx: false, ackreq: false, se: false },
            payload_len: len as u16,
            dst_conn: self.remote_id,
            path_id: pid as u8,
            path_psn: psn,
            path_gen: self.paths[pid].gen,
            stream_id: w.stream,
            msn: w.msn,
            msg_len: w.len,
            place,
            tx_ts: ts as u16,
            imm: w.wr.imm,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn retransmit(
        &mut self,
        pid: usize,
        ext: u64,
        mut slot: Slot,
        phys: usize,
        ts: u32,
        mem: &Memory,
        c: &mut Ctx,
        buf: &mut Vec<u8>,
    ) -> Option<WirePacket> {
        let charged = !slot.rnr_resend && slot.charge;
        if charged && slot.retx_count as u32 >= c.p.retry_limit {
            self.fail(Some(slot.wr), Status::TransportRetryExceeded, c);
            return None;
        }
        let w = self.wrs.get(&slot.wr).expect("a ring slot's work request lives until acked").clone();
        let Ok(payload) = mem.read(w.wr.local.addr + slot.offset as u64, slot.len as u64) else {
            self.fail(Some(slot.wr), Status::LocalProtectionError, c);
            return None;
        };
        let psn = (ext & SEQ_MASK as u64) as u32;
        let mut h = self.data_header(&w, pid, psn, slot.offset, slot.len, ts);
        h.flags.retx = true;
        h.flags.ackreq = true;
        if charged {
            slot.retx_count += 1;
        }
        slot.resent |= !slot.rnr_resend;
        slot.charge = false;
        slot.phys = phys as u8;
        slot.tx_seq = self.paths[pid].tx_seq;
        slot.tx_ts = ts as u16;
        slot.sent = ts;
        slot.queued = false;
        slot.rnr_until = None;
        let resume = slot.rnr_resend;
        slot.rnr_resend = false;
        self.rings[pid].insert(ext, slot);
        self.paths[pid] = if resume {
            path::on_resume(&self.paths[pid], ts, &c.p.path)
        } else {
            path::on_retransmit(&self.paths[pid], ts, &c.p.path)
        };
        c.counters.tx_retransmits += 1;
        if phys != pid {
            c.counters.tx_rerouted += 1;
        }
        Some(self.packet(&Header::Data(h), payload, phys, c, buf))
    }

    /// The next stream (round robin) with bytes to cut whose head message
    /// fits the peer's message table.
    fn next_stream(&mut self, ts: u32, c: &Ctx) -> Option<(usize, u64)> {
        let n = self.streams.len();
        let mut blocked = false;
        for k in 0..n {
            let si = (self.rr_stream + k) % n;
            let s = &self.streams[si];
            let Some(&key) = s.pending.front() else { continue };
            let w = &self.wrs[&key];
            if !w.started && seq_diff(w.msn, s.remote_completed) >= c.p.msg_depth {
                blocked = true;
                continue;
            }
            return Some((si, key));
        }
        if blocked && self.paths.iter().all(|p| p.inflight == 0 && !p.probe_pending) && self.window_probe_at.is_none() {
            self.window_probe_at = Some(ts.wrapping_add(c.p.path.rto_min));
        }
        None
    }

    fn send_new(&mut self, ts: u32, mem: &Memory, c: &mut Ctx, buf: &mut Vec<u8>) -> Option<WirePacket> {
        let (si, key) = self.next_stream(ts, c)?;
        let conn_ok = self.cc.inflight_bytes < self.cc.cap as u64;
        let req = Request::New { conn_ok };
        let s = self.select(&req, ts, c);
        let Some(pid) = s.chosen.map(usize::from) else {
            self.port_blocked |= self.blocked_by_ports(&req, ts, c);
            return None;
        };
        self.apply_deficits(&s.deficits);
        self.rr_stream = (si + 1) % self.streams.len();
        let w = self.wrs[&key].clone();
        let offset = w.sent;
        let len = (w.len - offset).min(c.p.path.mtu);
        let Ok(payload) = mem.read(w.wr.local.addr + offset as u64, len as u64) else {
            self.fail(Some(key), Status::LocalProtectionError, c);
            return None;
        };
        let psn = self.paths[pid].next_psn;
        let ext = self.base[pid] + seq_diff(psn, self.paths[pid].cum_acked) as u64;
        let mut h = self.data_header(&w, pid, psn, offset, len, ts);
        let slot = Slot {
            wr: key,
            offset,
            len,
            tx_ts: ts as u16,
            retx_count: 0,
            resent: false,
            charge: false,
            phys: pid as u8,
            rnr_count: 0,
            rnr_resend: false,
            tx_seq: self.paths[pid].tx_seq,
            queued: false,
            sent: ts,
            rnr_until: None,
        };
        if self.paths[pid].inflight == 0 {
            self.last_progress[pid] = ts;
        }
        self.rings[pid].insert(ext, slot);
        self.paths[pid] = path::on_send(&self.paths[pid], ts, &c.p.path);
        let wm = self.wrs.get_mut(&key).expect("picked from pending");
        wm.sent += len;
        wm.started = true;
        wm.outstanding += 1;
        if wm.sent == wm.len {
            self.streams[si].pending.pop_front();
        }
        self.cc.inflight_bytes += len as u64;
        // Ask for a SACK (the receiver then acknowledges every path with
        // packets not yet acknowledged) at the end of a message, when this
        // packet fills the path's or the connection's window, when nothing
        // else is ready to go, and every `sack_every_pkts` packets of the
        // connection. Per-path coalescing alone leaves up to a threshold of
        // received packets unacknowledged on every path: with 16 paths that
        // is most of a bandwidth-delay product, which the window then cannot
        // reuse. Asking at these points clocks the window by acknowledgements
        // and bounds how late any arrival is reported, which loss detection
        // across paths relies on. A count of packets bounds that delay in
        // time only while the connection sends fast: one of 63 sharing a
        // NIC (alltoall-64) sends a packet every 5 us, eight packets took
        // 40 us, and a path whose first packet waited that long for its
        // SACK timed out at rto_min (3,405 RTOs at 0% loss, no packet
        // lost). So the sender also asks once its oldest packet not yet
        // covered by a request has waited `ackreq_wait` (which is also
        // bounded by the path's srtt, for RACK: see there).
        let p = &self.paths[pid];
        let path_full = ((p.inflight as u64) << c.p.path.mtu_shift) >= p.cwnd as u64;
        let conn_full = self.cc.inflight_bytes >= self.cc.cap as u64;
        let drained = self.streams.iter().all(|s| s.pending.is_empty());
        if !c.p.ack_clocking {
            // Before issue 7: at the end of a message and when the path's
            // window fills.
            h.flags.ackreq = h.flags.eom || path_full;
            c.counters.tx_packets += 1;
            c.counters.tx_payload_bytes += len as u64;
            return Some(self.packet(&Header::Data(h), payload, pid, c, buf));
        }
        if drained && self.tail_at.is_none() {
            self.tail_at = Some(ts.wrapping_add(overdue_wait(&self.paths[pid], self.rack_rtt)));
        }
        if self.since_ackreq == 0 {
            self.unreq_since = ts;
        }
        self.since_ackreq += 1;
        h.flags.ackreq = h.flags.eom
            || path_full
            || conn_full
            || drained
            || self.since_ackreq >= c.p.sack_every_pkts
            || ts.wrapping_sub(self.unreq_since) >= ackreq_wait(&c.p.path, self.paths[pid].srtt);
        if h.flags.ackreq {
            self.since_ackreq = 0;
        }
        c.counters.tx_packets += 1;
        c.counters.tx_payload_bytes += len as u64;
        Some(self.packet(&Header::Data(h), payload, pid, c, buf))
    }

    // ---------------------------------------------------------------- receive

    /// A SACK for this connection, arrived at our UDP port `port`.
    pub fn on_sack(&mut self, now: u64, h: &SackHeader, port: u16, c: &mut Ctx) {
        let pid = h.path_id as usize;
        if pid >= self.paths.len() {
            c.counters.ack_bad_path += 1;
            return;
        }
        let ts = c.ts32(now);
        let p = self.paths[pid];
        let base = self.base[pid];
        let span = seq_diff(p.next_psn, p.cum_acked) as i64;
        // Where the SACK's cum_psn sits relative to ours (negative: an old
        // SACK overtaken by a newer one).
        let d = seq_diff(h.cum_psn, p.cum_acked);
        let rel = if d < SEQ_HALF { d as i64 } else { d as i64 - (1 << 24) };
        let top = h.bitmap.highest().map_or(rel, |b| rel + 1 + b as i64);
        if rel > span || (h.bitmap.highest().is_some() && top >= span) {
            c.counters.sack_beyond_sent += 1;
            return;
        }
        c.counters.sacks_received += 1;
        let mut acked: Vec<u64> = Vec::new();
        if rel > 0 {
            acked.extend(self.rings[pid].range(base..base + rel as u64).map(|(&k, _)| k));
        }
        for i in h.bitmap.ones() {
            let r = rel + 1 + i as i64;
            if r >= 0 && self.rings[pid].contains_key(&(base + r as u64)) {
                acked.push(base + r as u64);
            }
        }
        let (mut pkts, mut bytes, mut rtt_ok, mut max_seq) = (0u32, 0u32, false, p.acked_seq);
        // Physical paths known to have delivered a packet this SACK acknowledges.
        let mut delivered = 0u32;
        for ext in acked {
            let slot = self.rings[pid].remove(&ext).expect("collected from the ring");
            // A packet in RNR back-off left the path's inflight already.
            pkts += u32::from(!slot.rnr_resend);
            bytes += slot.len;
            if !slot.resent && slot.tx_ts == h.echo_ts {
                rtt_ok = true;
            }
            // A retransmitted packet's acknowledgement may answer its earlier
            // copy: only when it triggered this SACK is its last transmission
            // known to be the one acknowledged. Otherwise every packet sent
            // between the copies would be taken for lost.
            let known = !slot.resent || slot.tx_ts == h.echo_ts || !c.p.ack_clocking;
            if known && slot.rnr_count == 0 && self.rack_sent.is_none_or(|r| (slot.sent.wrapping_sub(r) as i32) > 0) {
                self.rack_sent = Some(slot.sent);
                self.rack_rtt = ts.wrapping_sub(slot.sent);
            }
            if known {
                delivered |= 1 << slot.phys;
            }
            if known && (slot.tx_seq.wrapping_add(1).wrapping_sub(max_seq) as i32) > 0 {
                max_seq = slot.tx_seq.wrapping_add(1);
            }
            self.cc.inflight_bytes -= slot.len as u64;
            if let Some(w) = self.wrs.get_mut(&slot.wr) {
                w.outstanding -= 1;
            }
        }
        // The answer to the PROBE echoes its timestamp and comes back to the
        // path's own source port: a SACK for a packet of this path that was
        // rerouted over another path (and sent in the same timestamp unit)
        // arrives at that path's port instead and proves nothing about this
        // one.
        let probe_reply = p.probe_pending && h.echo_ts == p.probe_ts && port == p.sport;
        let rtt = (rtt_ok || probe_reply).then(|| (ts as u16).wrapping_sub(h.echo_ts) as u32);
        let next_ext = base + span as u64;
        let new_base = self.rings[pid].keys().next().copied().unwrap_or(next_ext);
        let ev = path::AckEvent {
            now: ts,
            cum_acked: (new_base & SEQ_MASK as u64) as u32,
            acked_pkts: pkts,
            acked_bytes: bytes,
            ecn_cnt: h.ecn_cnt as u32,
            rtt,
            acked_seq: max_seq,
        };
        self.paths[pid] = if c.p.ce_steering {
            path::on_ack_steered(&self.paths[pid], &ev, &c.p.path)
        } else {
            path::on_ack(&self.paths[pid], &ev, &c.p.path)
        };
        self.base[pid] = new_base;
        if c.p.ack_clocking {
            // Progress is credited to the path a packet's acknowledged copy
            // left by, not to the path whose sequence it carries: a
            // retransmission of a dead path's packet rerouted over a live
            // one made the dead path look alive, its later losses were
            // charged to the packets instead of timing it out, and it stayed
            // GOOD and took new data for as long as that went on (a failed
            // plane carried 5% of its load 90 us after failing). An answered
            // PROBE left by this path's own port: it delivers.
            for (i, t) in self.last_progress.iter_mut().enumerate() {
                if delivered & (1 << i) != 0 || (probe_reply && i == pid) {
                    *t = ts;
                }
            }
        } else if pkts > 0 || probe_reply {
            self.last_progress[pid] = ts;
        }
        self.conn_ack(ts, pkts, bytes, h, rtt, c);
        let mut lost_before = self.paths[pid].acked_seq;
        if probe_reply {
            if c.p.ack_clocking {
                c.planes.clear(p.plane);
            }
            let (e, a) = path::on_probe_reply(&self.paths[pid], ts, &c.p.path);
            if (p.probe_seq.wrapping_sub(lost_before) as i32) > 0 {
                lost_before = p.probe_seq;
            }
            self.paths[pid] = e;
            self.act(pid, a, c);
        }
        self.detect_losses(pid, lost_before, ts, c);
        if c.p.ack_clocking {
            self.detect_overdue(ts, c);
            self.arm_tail();
        }
        if let Some(s) = self.streams.get_mut(h.stream_id as usize) {
            if seq_before(s.remote_completed, h.completed_msn) {
                s.remote_completed = h.completed_msn;
                self.window_probe_at = None;
            }
        }
        self.complete(c);
    }

    fn conn_ack(&mut self, ts: u32, pkts: u32, bytes: u32, h: &SackHeader, rtt: Option<u32>, c: &mut Ctx) {
        if let Some(r) = rtt {
            self.cc.srtt = crate::fixed::ewma(self.cc.srtt, r, c.p.path.srtt_shift).max(1);
            self.cc.min_rtt = self.cc.min_rtt.min(r.max(1));
        }
        let (a, _) = path::aimd(
            self.cc.aimd,
            ts,
            pkts,
            bytes,
            // CE steering: a mark tells of one path's queue, which that
            // path's own cut answers; cutting the connection as well idled
            // the sender with room on its other paths (13-18% of the time
            // at 0% loss on a leaf-spine). A bottleneck every path shares
            // marks every path, and their windows shrink together.
            if c.p.ce_steering { 0 } else { h.ecn_cnt as u32 },
            self.cc.srtt,
            c.p.path.ecn_shift,
            // One MTU per window and path: the connection grows as fast as
            // its paths do together (a window of 16 paths would otherwise
            // take a hundred RTTs to regain one bandwidth-delay product).
            if c.p.ack_clocking { c.p.path.mtu * self.paths.len() as u32 } else { c.p.path.mtu },
            c.p.path.min_cwnd,
            c.p.conn_max_cwnd,
        );
        self.cc.aimd = a;
        self.cc.rate_hint = h.rate_hint;
        self.cc.cap = conn_cap(&self.cc, c);
    }

    /// Queues every unacked, not yet queued packet of `pid` sent before
    /// `before` (its tx_seq is older than an acknowledged transmission).
    fn detect_losses(&mut self, pid: usize, before: u32, ts: u32, c: &mut Ctx) {
        let mut silent = Vec::new();
        for (&ext, slot) in self.rings[pid].iter_mut() {
            if !slot.queued && slot.rnr_until.is_none() && (before.wrapping_sub(slot.tx_seq) as i32) > 0 {
                slot.queued = true;
                self.retx.push_back((pid as u8, ext));
                c.counters.sack_losses += 1;
                if !charge(slot, &self.last_progress, c.p.ack_clocking) {
                    silent.push(slot.phys as usize);
                }
            }
        }
        self.silent_losses(&silent, ts, c);
    }

    /// Packets lost on paths that have not answered since they left: each
    /// counts as one timeout of that path (the event its RTO raises), so
    /// that a silent path turns SUSPECT after `suspect_after_rtos` of them,
    /// a few packet times after the first, and is left.
    fn silent_losses(&mut self, phys: &[usize], ts: u32, c: &mut Ctx) {
        for &p in phys {
            if self.paths[p].usable() {
                c.counters.silent_path_timeouts += 1;
                self.time_out(p, ts, c);
            }
        }
    }

    /// Loss detection across paths (RACK, RFC 8985, with each path's own RTT):
    /// a packet still unacknowledged `overdue_wait` after it left, while a
    /// packet sent later on any path was already acknowledged, is lost. This
    /// catches what the per-path SACK gap cannot: every packet of a path that
    /// went silent (a failed link or plane), within about one RTT instead of
    /// an RTO. Each such loss on a GOOD path that has not been acknowledged
    /// for that long also counts as a timeout of the path (the event its RTO
    /// raises), so that a silent path turns SUSPECT after three of them,
    /// a few packet times after the first, and new data leaves it.
    fn detect_overdue(&mut self, ts: u32, c: &mut Ctx) {
        let Some(rack) = self.rack_sent else { return };
        for pid in 0..self.paths.len() {
            let p = self.paths[pid];
            if p.inflight == 0 {
                continue;
            }
            let wait = overdue_wait(&p, self.rack_rtt);
            let mut silent = Vec::new();
            for (&ext, slot) in self.rings[pid].iter_mut() {
                if slot.queued || slot.rnr_until.is_some() {
                    continue;
                }
                let overdue = ts.wrapping_sub(slot.sent) as i32 >= wait as i32;
                if (rack.wrapping_sub(slot.sent) as i32) > 0 && overdue {
                    slot.queued = true;
                    self.retx.push_back((pid as u8, ext));
                    c.counters.overdue_losses += 1;
                    if !charge(slot, &self.last_progress, true) {
                        silent.push(slot.phys as usize);
                    }
                } else if !slot.resent {
                    // First transmissions leave in psn order: the rest are
                    // newer still.
                    break;
                }
            }
            self.silent_losses(&silent, ts, c);
        }
    }

    /// The tail timer fired: nothing is left to send, so no later packet
    /// will show the outstanding ones lost. Rather than retransmit them
    /// (they may only wait for a SACK: the last ACKREQ may have overtaken
    /// them on a faster path), every path holding an overdue packet is
    /// probed (a tail loss probe): its SACK then shows exactly what is
    /// missing (everything sent before the probe and not acknowledged).
    fn probe_tail(&mut self, ts: u32) {
        for pid in 0..self.paths.len() {
            let p = self.paths[pid];
            if p.probe_pending || self.probes.contains(&(pid as u8)) {
                continue;
            }
            let wait = overdue_wait(&p, self.rack_rtt);
            let overdue = self.rings[pid]
                .values()
                .any(|s| !s.queued && s.rnr_until.is_none() && ts.wrapping_sub(s.sent) as i32 >= wait as i32);
            if overdue {
                self.probes.push_back(pid as u8);
            }
        }
    }

    /// Arms the tail timer when every byte has left and packets are
    /// outstanding: at the earliest time one of them is overdue.
    fn arm_tail(&mut self) {
        self.tail_at = None;
        if !self.streams.iter().all(|s| s.pending.is_empty()) {
            return;
        }
        for (pid, ring) in self.rings.iter().enumerate() {
            let wait = overdue_wait(&self.paths[pid], self.rack_rtt);
            for slot in ring.values() {
                if slot.queued || slot.rnr_until.is_some() {
                    continue;
                }
                let at = slot.sent.wrapping_add(wait);
                if self.tail_at.is_none_or(|t| (at.wrapping_sub(t) as i32) < 0) {
                    self.tail_at = Some(at);
                }
                if !slot.resent {
                    break;
                }
            }
        }
    }

    /// Path `pid`'s timer expired (or the path was found silent).
    fn time_out(&mut self, pid: usize, ts: u32, c: &mut Ctx) {
        let e = self.paths[pid];
        let fresh = c.fresh_sport(e.sport);
        let (n, a) = path::on_timeout(&e, ts, fresh, &c.p.path);
        if n.gen != e.gen {
            c.counters.re_entropy += 1;
        }
        if n.state == PathState::Suspect && e.state != PathState::Suspect {
            c.counters.path_suspect += 1;
        }
        if c.p.ack_clocking && matches!(n.state, PathState::Suspect | PathState::Dead) {
            c.planes.mark(e.plane, ts.wrapping_add(c.p.path.dead_probe_interval));
        }
        self.paths[pid] = n;
        self.act(pid, a, c);
    }

    /// Every unacked packet of `pid` goes to the retransmit queue. The path
    /// failed, not the packets: with ack clocking their retransmissions are
    /// not charged to them.
    fn all_lost(&mut self, pid: usize, c: &Ctx) {
        for (&ext, slot) in self.rings[pid].iter_mut() {
            if !slot.queued {
                slot.queued = true;
                slot.charge = !c.p.ack_clocking;
                slot.rnr_until = None;
                self.retx.push_back((pid as u8, ext));
            }
        }
        self.rnr_wait.retain(|&(p, _, _)| p as usize != pid);
    }

    fn act(&mut self, pid: usize, a: PathAction, c: &mut Ctx) {
        if a.all_lost {
            self.all_lost(pid, c);
        }
        if a.probe && !self.probes.contains(&(pid as u8)) {
            self.probes.push_back(pid as u8);
        }
        if a.died {
            c.counters.path_dead += 1;
        }
        if a.recovered {
            c.counters.path_recovered += 1;
        }
    }

    /// A NACK for this connection.
    pub fn on_nack(&mut self, now: u64, h: &NackHeader, c: &mut Ctx) {
        let pid = h.path_id as usize;
        if pid >= self.paths.len() {
            c.counters.ack_bad_path += 1;
            return;
        }
        if h.code == NackCode::NoConn {
            c.counters.nacks_received += 1;
            self.fail(None, Status::RemoteInvalidRequest, c);
            return;
        }
        let Some(ext) = self.ext(pid, h.path_psn) else {
            c.counters.nack_stale += 1;
            return;
        };
        let Some(slot) = self.rings[pid].get(&ext).copied() else {
            c.counters.nack_stale += 1;
            return;
        };
        c.counters.nacks_received += 1;
        let ts = c.ts32(now);
        // An RNR that starts a back-off takes the packet out of inflight;
        // one for a packet already out (a second copy's) is a plain NACK.
        let backs_off = h.code == NackCode::Rnr && !slot.rnr_resend && (slot.rnr_count as u32) < c.p.rnr_retry;
        self.paths[pid] = if backs_off {
            path::on_rnr(&self.paths[pid], ts, &c.p.path)
        } else {
            path::on_nack(&self.paths[pid], ts, &c.p.path)
        };
        match h.code {
            NackCode::Rnr => {
                if slot.rnr_until.is_some() {
                    return;
                }
                if slot.rnr_count as u32 >= c.p.rnr_retry {
                    self.fail(Some(slot.wr), Status::RnrRetryExceeded, c);
                    return;
                }
                // Back off: a retransmission already queued for a presumed
                // loss is cancelled, the receiver has no buffer for it yet.
                let until = ts.wrapping_add(c.p.rnr_delay);
                let sl = self.rings[pid].get_mut(&ext).expect("present");
                sl.rnr_count += 1;
                sl.rnr_until = Some(until);
                sl.rnr_resend = true;
                sl.queued = false;
                self.rnr_wait.push((pid as u8, ext, until));
                c.counters.rnr_retries += 1;
            }
            NackCode::Access => self.fail(Some(slot.wr), Status::RemoteAccessError, c),
            NackCode::BadHdr => {
                if !slot.queued {
                    // It arrived damaged: a loss of this packet.
                    let sl = self.rings[pid].get_mut(&ext).expect("present");
                    sl.queued = true;
                    sl.charge = true;
                    self.retx.push_back((pid as u8, ext));
                }
            }
            NackCode::NoConn => unreachable!("handled above"),
        }
    }

    // ---------------------------------------------------------------- timers

    /// Earliest timestamp at which `on_timer` has work, if any.
    pub fn next_deadline(&self, now_ts: u32, c: &Params) -> Option<u32> {
        if self.failed.is_some() {
            return None;
        }
        let mut best: Option<u32> = None;
        let mut take = |d: u32| {
            if best.is_none_or(|b| (d.wrapping_sub(now_ts) as i32) < (b.wrapping_sub(now_ts) as i32)) {
                best = Some(d);
            }
        };
        for (i, p) in self.paths.iter().enumerate() {
            // A path whose probe waits to leave has no timer running: the
            // probe's departure starts it (`path::on_probe_sent`); until then
            // its old deadline would fire again and again.
            if p.timer_armed() && !(c.ack_clocking && self.probes.contains(&(i as u8))) {
                take(p.rto_deadline);
            }
            if p.state == PathState::Skip {
                take(p.hold_until);
            }
        }
        for &(_, _, until) in &self.rnr_wait {
            take(until);
        }
        if let Some(w) = self.window_probe_at {
            take(w);
        }
        if let Some(t) = self.tail_at {
            take(t);
        }
        best
    }

    /// Timers: SKIP expiry, RTO and probe timeouts, RNR back-off, window
    /// probes; then the connection fails if every path is DEAD.
    pub fn on_timer(&mut self, now: u64, c: &mut Ctx) {
        if self.failed.is_some() {
            return;
        }
        let ts = c.ts32(now);
        for pid in 0..self.paths.len() {
            self.paths[pid] = path::on_tick(&self.paths[pid], ts);
            let e = self.paths[pid];
            let waiting = c.p.ack_clocking && self.probes.contains(&(pid as u8));
            if !(e.timer_armed() && ts_reached(ts, e.rto_deadline)) || waiting {
                continue;
            }
            c.counters.rto_fired += 1;
            self.time_out(pid, ts, c);
        }
        let due: Vec<(u8, u64, u32)> =
            self.rnr_wait.iter().copied().filter(|&(_, _, until)| ts_reached(ts, until)).collect();
        self.rnr_wait.retain(|&(_, _, until)| !ts_reached(ts, until));
        for (pid, ext, _) in due {
            if let Some(slot) = self.rings[pid as usize].get_mut(&ext) {
                slot.rnr_until = None;
                if !slot.queued {
                    slot.queued = true;
                    self.retx.push_back((pid, ext));
                }
            }
        }
        if self.tail_at.is_some_and(|t| ts_reached(ts, t)) {
            // Once: the probes' answers re-arm it.
            self.tail_at = None;
            if c.p.ack_clocking {
                // RACK's reordering timer (RFC 8985): a packet overdue while
                // one sent after it was acknowledged is lost now, not after
                // a PROBE's round trip or an RTO. Without this a path that
                // died under a connection with nothing more to send kept
                // its packets until the PROBE sent on it timed out (55 us,
                // six base RTTs, in plane-failure). Only the overdue
                // packets with no such evidence are probed.
                self.detect_overdue(ts, c);
            }
            self.probe_tail(ts);
        }
        match self.window_probe_at {
            Some(w) if ts_reached(ts, w) => {
                self.window_probe_at = None;
                if let Some(pid) = self.paths.iter().position(|p| p.state != PathState::Dead) {
                    if !self.paths[pid].probe_pending && !self.probes.contains(&(pid as u8)) {
                        self.probes.push_back(pid as u8);
                    }
                }
            }
            _ => {}
        }
        if self.paths.iter().all(|p| p.state == PathState::Dead) {
            self.fail(None, Status::TransportRetryExceeded, c);
        }
    }

    // ---------------------------------------------------------------- completion

    /// Raises sender completions in msn order per stream, each once.
    fn complete(&mut self, c: &mut Ctx) {
        for si in 0..self.streams.len() {
            while let Some(&key) = self.streams[si].order.front() {
                if !self.wrs[&key].done() {
                    break;
                }
                self.streams[si].order.pop_front();
                let w = self.wrs.remove(&key).expect("in order");
                c.cq.push_back(completion(self.local_id, &w, Status::Success));
            }
        }
    }

    /// The connection fails: `culprit` (if any) completes with `status`,
    /// every other incomplete work request with WrFlushError, in msn order
    /// per stream. Nothing is sent on the connection afterwards.
    pub fn fail(&mut self, culprit: Option<u64>, status: Status, c: &mut Ctx) {
        if self.failed.is_some() {
            return;
        }
        self.failed = Some(status);
        if let Some(key) = culprit {
            if let Some(w) = self.wrs.remove(&key) {
                c.cq.push_back(completion(self.local_id, &w, status));
                c.counters.error_completions += 1;
            }
        }
        let flush = if culprit.is_some() { Status::WrFlushError } else { status };
        for s in &mut self.streams {
            s.pending.clear();
            for key in s.order.drain(..) {
                if let Some(w) = self.wrs.remove(&key) {
                    c.cq.push_back(completion(self.local_id, &w, flush));
                    c.counters.error_completions += 1;
                }
            }
        }
        for r in &mut self.rings {
            r.clear();
        }
        self.retx.clear();
        self.probes.clear();
        self.rnr_wait.clear();
        self.cc.inflight_bytes = 0;
    }
}

fn completion(conn: u32, w: &TxWr, status: Status) -> Completion {
    Completion {
        wr_id: w.wr.wr_id,
        status,
        opcode: match w.wr.op {
            WrOp::Write { .. } => CqOpcode::Write,
            WrOp::Send => CqOpcode::Send,
        },
        conn,
        stream: w.stream,
        byte_len: w.len,
        imm: w.wr.imm,
    }
}

/// Whether the retransmission of a packet just found lost is charged to its
/// retry budget: with ack clocking, only when the path it last left by has
/// acknowledged something since (the path works, the packet was lost);
/// otherwise the path is silent and the loss is the path's (its timeouts,
/// SUSPECT, DEAD; the connection fails when every path is DEAD). Without,
/// always (the rules before issue 7).
fn charge(slot: &mut Slot, last_progress: &[u32], ack_clocking: bool) -> bool {
    slot.charge = !ack_clocking || (last_progress[slot.phys as usize].wrapping_sub(slot.sent) as i32) > 0;
    slot.charge
}

/// How long a data packet may wait for a later one to carry ACKREQ: a
/// quarter of the RTO floor, so that its SACK is asked for well before any
/// path's timer can fire (a path without an RTT sample times out at
/// `rto_min`), and at most a quarter of the srtt of the path the packet
/// carrying the request leaves by, so that the wait stays well inside
/// RACK's reordering allowance (`overdue_wait`: srtt + max(srtt / 2, 4
/// rttvar)). With only the RTO floor, a connection whose eight packets
/// took longer than half an RTT (one plane at 6.4 Gbit/s, MTU 1 KiB: 11 us
/// against a 6 us base RTT) left packets at the receiver for up to 13 us
/// before a request flushed them; the requesting path's SACK, first of
/// the burst, then showed a newer packet delivered, and the other paths'
/// packets were declared overdue a SACK or two before their own SACKs of
/// the same burst arrived (16% of all packets retransmitted at 0% loss).
pub fn ackreq_wait(p: &PathParams, srtt: u32) -> u32 {
    (p.rto_min / 4).min(srtt / 4)
}

/// How long past its send a packet of path `p` is overdue: the path's srtt,
/// or the connection's latest RTT if longer (path samples are sparse and lag
/// a growing queue), plus a reordering allowance of half the srtt (queues on
/// the paths of one connection differ by that much), or 4 rttvar if larger.
fn overdue_wait(p: &PathEntry, rack_rtt: u32) -> u32 {
    p.srtt.max(rack_rtt) + (p.srtt / 2).max(4 * p.rttvar)
}

/// The connection's send limit: min(cwnd, rate_hint x line rate x
/// max(srtt, 5/4 min_rtt)), at least one MTU. One multiply chain, done when
/// the hint, srtt or cwnd changes, never per packet. With exactly one
/// bandwidth-delay product a lone connection idled 14% of the time on its
/// window (a SACK is asked for every few packets and covers one path, so
/// acknowledgements come in bunches); the quarter of the base RTT on top
/// covers that. It is taken over min_rtt, not srtt: a margin over srtt would
/// grow the queue it measures, round after round.
fn conn_cap(cc: &ConnCc, c: &Ctx) -> u32 {
    let base = if cc.min_rtt == u32::MAX || !c.p.ack_clocking { cc.srtt } else { cc.min_rtt } as u64;
    let rtt = (cc.srtt as u64).max(base + if c.p.ack_clocking { base >> 2 } else { 0 });
    let share = (cc.rate_hint as u64 * c.p.line_bytes_per_ts as u64 * rtt) >> 16;
    share.min(cc.aimd.cwnd as u64).max(c.p.path.mtu as u64) as u32
}
