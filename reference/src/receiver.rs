//! The receive half of a connection: per-path sequence windows with their
//! 256-bit bitmaps, direct placement of WRITEs by address and of SENDs into
//! the receive posted at their rq_seq, per-stream message tables that count
//! each packet once and raise completions in msn order exactly once, and the
//! SACKs and NACKs that answer.

use std::collections::BTreeMap;

use mrnic_proto::packet::{ECN_CE, ECN_ECT0};
use mrnic_proto::{
    encode_datagram, Bitmap256, DataHeader, Header, NackCode, NackHeader, Placement, ProbeHeader, SackHeader,
};

use crate::fixed::{seq_add, seq_diff, SEQ_HALF};
use crate::memory::{Access, MemError, Memory};
use crate::nic::Ctx;
use crate::verbs::{Completion, CqOpcode, RecvRequest, Status};
use crate::wire::{NodeAddr, WirePacket};

/// Receive state of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxPath {
    /// Every psn below it was received; it was not.
    pub cum_psn: u32,
    /// Bit i: psn cum_psn+1+i received.
    pub bitmap: Bitmap256,
    /// Newest generation seen (data or PROBE).
    pub gen: u8,
    /// CE marks since the last SACK (saturating 8 bits).
    pub ecn_cnt: u8,
    /// Packets and bytes since the last SACK.
    pub pkts: u32,
    pub bytes: u32,
    /// tx_ts of the last data packet placed (echoed when the SACK is sent
    /// for another path's ACKREQ).
    pub last_ts: u16,
    /// Where answers go: the source port and plane of the last packet.
    pub reply_port: u16,
    pub reply_plane: u8,
    /// PROBE answer budget: the timestamp its current `rto_min`-long epoch
    /// began, and the PROBEs answered in it.
    pub probe_epoch: u32,
    pub probe_answers: u8,
}

/// PROBEs a path answers per `timers.rto_min_us` (defined with the config,
/// so the cycle model uses the same number).
pub use mrnic_proto::config::PROBE_ANSWERS_PER_RTO_MIN;

/// What a message's packets say it is; all of them must agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    Send { rq_seq: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RxMsg {
    kind: Kind,
    msg_len: u32,
    imm: Option<u32>,
    /// Bytes of packets that set a new bitmap bit.
    bytes: u64,
}

/// A posted receive with the key of the region that held its buffer when
/// it was posted (an `ibv_recv_wr` SGE's lkey; none for an empty buffer).
#[derive(Debug, Clone, Copy)]
struct Posted {
    r: RecvRequest,
    lkey: Option<u32>,
}

#[derive(Debug, Clone, Default)]
struct RxStream {
    /// Oldest message not yet completed (completed_msn in SACKs).
    next_complete: u32,
    msgs: BTreeMap<u32, RxMsg>,
    /// Posted receives by rq_seq.
    recvs: BTreeMap<u32, Posted>,
    next_post: u32,
    /// The receive the next WRITE_IMM consumes.
    next_consume: u32,
    /// Any message seen: PROBE answers report this stream.
    active: bool,
}

/// The receive half of one connection.
#[derive(Debug, Clone)]
pub struct RxConn {
    pub local_id: u32,
    pub remote_id: u32,
    pub remote: NodeAddr,
    pub paths: Vec<RxPath>,
    streams: Vec<RxStream>,
    /// Timestamp of the last data packet (for the fair-share count).
    pub last_data: Option<u32>,
}

/// How one data packet fares.
enum Verdict {
    Place { addr: u64 },
    Nack(NackCode),
}

impl RxConn {
    pub fn new(local_id: u32, remote_id: u32, remote: NodeAddr, paths: u8, rx_psn: u32, streams: u32) -> Self {
        let p = RxPath {
            cum_psn: rx_psn,
            bitmap: Bitmap256::default(),
            gen: 0,
            ecn_cnt: 0,
            pkts: 0,
            bytes: 0,
            last_ts: 0,
            reply_port: 0,
            reply_plane: 0,
            probe_epoch: 0,
            probe_answers: 0,
        };
        RxConn {
            local_id,
            remote_id,
            remote,
            paths: vec![p; paths as usize],
            streams: vec![RxStream::default(); streams as usize],
            last_data: None,
        }
    }

    pub fn streams(&self) -> usize {
        self.streams.len()
    }

    /// Receives posted and not consumed on a stream.
    pub fn posted(&self, stream: u8) -> usize {
        self.streams[stream as usize].recvs.len()
    }

    /// Posts `r`, whose buffer lies in the region of `lkey` (found with
    /// `Access::RECV` by the caller; `None` for an empty buffer).
    pub fn post_recv(&mut self, stream: u8, r: RecvRequest, lkey: Option<u32>, c: &mut Ctx) {
        let s = &mut self.streams[stream as usize];
        s.recvs.insert(s.next_post, Posted { r, lkey });
        s.next_post = seq_add(s.next_post, 1);
        // A WRITE_IMM may have been waiting for this receive.
        self.drain(stream as usize, c);
    }

    /// A data packet for this connection. Checks run in the order a
    /// pipeline would: path, generation, psn window, header sanity, message
    /// table, placement; the first failure decides the NACK and counter.
    pub fn on_data(&mut self, meta: &WirePacket, h: &DataHeader, payload: &[u8], mem: &mut Memory, c: &mut Ctx) {
        let pid = h.path_id as usize;
        if pid >= self.paths.len() {
            c.counters.rx_bad_path += 1;
            self.nack_to(meta.sport, meta.plane, h, NackCode::BadHdr, c);
            return;
        }
        let rp = &mut self.paths[pid];
        rp.reply_port = meta.sport;
        rp.reply_plane = meta.plane;
        // Generations: newer ones are adopted; one behind is still in flight
        // from before a re-entropy and accepted; older ones are stale. A
        // newer one is adopted only from a psn within one window of cum_psn
        // (ahead or behind), where the path's sender can be: a packet far
        // outside (NACKed or a duplicate) cannot make live data stale.
        let g = h.path_gen.wrapping_sub(rp.gen) as i8;
        if g < -1 {
            c.counters.rx_stale_gen += 1;
            self.nack(pid, h, NackCode::BadHdr, c);
            return;
        }
        let d = seq_diff(h.path_psn, rp.cum_psn);
        if g > 0 && (d <= Bitmap256::BITS || seq_diff(rp.cum_psn, h.path_psn) <= Bitmap256::BITS) {
            rp.gen = h.path_gen;
        }
        if meta.ecn == ECN_CE {
            rp.ecn_cnt = rp.ecn_cnt.saturating_add(1);
        }
        let duplicate = if d >= SEQ_HALF {
            true
        } else if d == 0 {
            false
        } else if d <= Bitmap256::BITS {
            rp.bitmap.get(d - 1)
        } else {
            c.counters.rx_psn_window += 1;
            self.nack(pid, h, NackCode::BadHdr, c);
            return;
        };
        if duplicate {
            // The sender thinks it lost this one: tell it what we have.
            c.counters.rx_duplicate += 1;
            self.sack(pid, h.stream_id, h.tx_ts, c);
            return;
        }
        let verdict = self.check(h, payload.len(), mem, c);
        let addr = match verdict {
            Verdict::Place { addr } => addr,
            Verdict::Nack(code) => {
                self.nack(pid, h, code, c);
                return;
            }
        };
        if !payload.is_empty() && mem.write(addr, payload).is_err() {
            // Never: both kinds of placement were checked against their
            // region above.
            c.counters.rx_out_of_bounds += 1;
            self.nack(pid, h, NackCode::Access, c);
            return;
        }
        c.counters.rx_placed_bytes += payload.len() as u64;
        self.last_data = Some(c.ts32_now);
        accept(&mut self.paths[pid], d);
        let si = h.stream_id as usize;
        let s = &mut self.streams[si];
        s.active = true;
        let kind = kind_of(h);
        let m = s.msgs.entry(h.msn).or_insert(RxMsg { kind, msg_len: h.msg_len, imm: h.imm, bytes: 0 });
        m.bytes += payload.len() as u64;
        self.drain(si, c);
        let rp = &mut self.paths[pid];
        rp.pkts += 1;
        rp.bytes += payload.len() as u32;
        rp.last_ts = h.tx_ts;
        if h.flags.ackreq || meta.ecn == ECN_CE || rp.pkts >= c.p.sack_every_pkts || rp.bytes >= c.p.sack_every_bytes {
            self.sack(pid, h.stream_id, h.tx_ts, c);
        }
        if h.flags.ackreq && c.p.ack_clocking {
            // The sender asks for everything: every other path with packets
            // not yet acknowledged is acknowledged too, echoing the tx_ts of
            // its own last packet (the path's RTT sample then includes the
            // short wait for this request, but without it a path whose
            // packets are always acknowledged this way would get none).
            for q in 0..self.paths.len() {
                if q != pid && self.paths[q].pkts > 0 {
                    let ts = self.paths[q].last_ts;
                    self.sack(q, h.stream_id, ts, c);
                }
            }
        }
    }

    /// Header sanity, message table and placement checks; nothing changes
    /// except counters.
    fn check(&self, h: &DataHeader, len: usize, mem: &Memory, c: &mut Ctx) -> Verdict {
        let bad_hdr = Verdict::Nack(NackCode::BadHdr);
        // An empty packet belongs only to an empty message: one that
        // declared bytes and carried none would hold its message-table slot
        // without a key check.
        if len > c.p.path.mtu as usize
            || h.stream_id as usize >= self.streams.len()
            || len as u64 > h.msg_len as u64
            || (len == 0 && h.msg_len != 0)
        {
            c.counters.rx_bad_len += 1;
            return bad_hdr;
        }
        let s = &self.streams[h.stream_id as usize];
        if seq_diff(h.msn, s.next_complete) >= c.p.msg_depth {
            c.counters.rx_msg_window += 1;
            return bad_hdr;
        }
        if let Some(m) = s.msgs.get(&h.msn) {
            if m.kind != kind_of(h)
                || m.msg_len != h.msg_len
                || m.imm != h.imm
                || m.bytes + len as u64 > m.msg_len as u64
            {
                c.counters.rx_msg_mismatch += 1;
                return bad_hdr;
            }
        }
        match h.place {
            Placement::Write { rkey, addr } => {
                if len == 0 {
                    // As in RDMA, a zero-length WRITE checks no key.
                    return Verdict::Place { addr };
                }
                match mem.check(rkey, addr, len as u64, Access::REMOTE_WRITE) {
                    // A WRITE message lies in one region, so one that
                    // declares more bytes than its region holds can never
                    // complete: refused like a SEND longer than its receive.
                    Ok(()) if mem.region(rkey).is_some_and(|r| h.msg_len as u64 > r.len()) => {
                        c.counters.rx_msg_too_long += 1;
                        Verdict::Nack(NackCode::Access)
                    }
                    Ok(()) => Verdict::Place { addr },
                    Err(e) => {
                        match e {
                            MemError::BadKey => c.counters.rx_bad_rkey += 1,
                            MemError::NoAccess => c.counters.rx_no_access += 1,
                            _ => c.counters.rx_out_of_bounds += 1,
                        }
                        Verdict::Nack(NackCode::Access)
                    }
                }
            }
            Placement::Send { rq_seq, msg_offset } => {
                if msg_offset as u64 + len as u64 > h.msg_len as u64 {
                    c.counters.rx_bad_len += 1;
                    return bad_hdr;
                }
                let Some(&Posted { r, lkey }) = s.recvs.get(&rq_seq) else {
                    c.counters.rx_rnr += 1;
                    return Verdict::Nack(NackCode::Rnr);
                };
                if h.msg_len > r.len {
                    c.counters.rx_recv_too_short += 1;
                    return Verdict::Nack(NackCode::Access);
                }
                let addr = r.addr + msg_offset as u64;
                // The region is checked again, by the key it had when the
                // receive was posted: one deregistered since (or replaced
                // by another region, which has another key) takes nothing.
                // An empty packet checks no key, as an empty WRITE.
                if len > 0 {
                    let held = lkey.is_some_and(|k| mem.check(k, addr, len as u64, Access::RECV).is_ok());
                    if !held {
                        c.counters.rx_out_of_bounds += 1;
                        return Verdict::Nack(NackCode::Access);
                    }
                }
                Verdict::Place { addr }
            }
        }
    }

    /// Raises, in msn order, every message of the stream that is complete
    /// (and, for WRITE_IMM, has a receive to consume).
    fn drain(&mut self, si: usize, c: &mut Ctx) {
        let s = &mut self.streams[si];
        while let Some(m) = s.msgs.get(&s.next_complete).copied() {
            if m.bytes != m.msg_len as u64 {
                break;
            }
            let (seq, opcode) = match m.kind {
                Kind::Write if m.imm.is_none() => (None, CqOpcode::RecvRdmaWithImm),
                Kind::Write => (Some(s.next_consume), CqOpcode::RecvRdmaWithImm),
                Kind::Send { rq_seq } => (Some(rq_seq), CqOpcode::Recv),
            };
            if let Some(seq) = seq {
                // A WRITE_IMM whose receive is not posted yet waits for it:
                // its data is already placed, only the completion waits.
                let Some(Posted { r, .. }) = s.recvs.remove(&seq) else { break };
                s.next_consume = seq_add(seq, 1);
                c.cq.push_back(Completion {
                    wr_id: r.wr_id,
                    status: Status::Success,
                    opcode,
                    conn: self.local_id,
                    stream: si as u8,
                    byte_len: m.msg_len,
                    imm: m.imm,
                });
                c.counters.recv_completions += 1;
            }
            s.msgs.remove(&s.next_complete);
            s.next_complete = seq_add(s.next_complete, 1);
        }
    }

    /// Whether a PROBE for this connection (its source already checked
    /// against the peer) may reach [`RxConn::on_probe`]. A PROBE's `path_psn`
    /// is its sender's next psn, which is never behind what this side has
    /// received (`cum_psn`) and never more than the window past it; one
    /// outside that range is not from the connection's sender and gets
    /// nothing, neither an answer nor its generation adopted. A PROBE inside
    /// it is answered within the path's budget
    /// ([`PROBE_ANSWERS_PER_RTO_MIN`] per `rto_min`). Counted: `rx_probes`
    /// always, and `rx_probe_psn` or `rx_probe_limited` when refused. A
    /// `path_id` the connection lacks passes (on_probe counts it).
    pub fn admit_probe(&mut self, h: &ProbeHeader, c: &mut Ctx) -> bool {
        let Some(rp) = self.paths.get_mut(h.path_id as usize) else { return true };
        if seq_diff(h.path_psn, rp.cum_psn) > Bitmap256::BITS {
            c.counters.rx_probes += 1;
            c.counters.rx_probe_psn += 1;
            return false;
        }
        if c.ts32_now.wrapping_sub(rp.probe_epoch) >= c.p.path.rto_min {
            rp.probe_epoch = c.ts32_now;
            rp.probe_answers = 0;
        }
        if rp.probe_answers >= PROBE_ANSWERS_PER_RTO_MIN {
            c.counters.rx_probes += 1;
            c.counters.rx_probe_limited += 1;
            return false;
        }
        rp.probe_answers += 1;
        true
    }

    /// A PROBE: adopt its generation and answer with the path's SACK, one
    /// per active stream so the sender learns every completed_msn.
    pub fn on_probe(&mut self, meta: &WirePacket, h: &ProbeHeader, c: &mut Ctx) {
        c.counters.rx_probes += 1;
        let pid = h.path_id as usize;
        if pid >= self.paths.len() {
            c.counters.rx_bad_path += 1;
            return;
        }
        let rp = &mut self.paths[pid];
        rp.gen = h.path_gen;
        rp.reply_port = meta.sport;
        rp.reply_plane = meta.plane;
        let mut any = false;
        for si in 0..self.streams.len() {
            if self.streams[si].active || (si == self.streams.len() - 1 && !any) {
                any = true;
                self.sack(pid, si as u8, h.tx_ts, c);
            }
        }
    }

    fn sack(&mut self, pid: usize, stream: u8, echo_ts: u16, c: &mut Ctx) {
        let rp = &mut self.paths[pid];
        let completed_msn = self.streams.get(stream as usize).map_or(0, |s| s.next_complete);
        let h = Header::Sack(SackHeader {
            rate_hint: c.rate_hint,
            dst_conn: self.remote_id,
            path_id: pid as u8,
            path_gen: rp.gen,
            cum_psn: rp.cum_psn,
            stream_id: stream,
            completed_msn,
            echo_ts,
            ecn_cnt: rp.ecn_cnt,
            bitmap: rp.bitmap,
        });
        rp.ecn_cnt = 0;
        rp.pkts = 0;
        rp.bytes = 0;
        c.counters.sacks_sent += 1;
        let (port, plane) = (rp.reply_port, rp.reply_plane);
        let pkt = reply(c, self.remote, port, plane, &h);
        c.out.push_back(pkt);
    }

    fn nack(&mut self, pid: usize, h: &DataHeader, code: NackCode, c: &mut Ctx) {
        let (port, plane) = (self.paths[pid].reply_port, self.paths[pid].reply_plane);
        self.nack_to(port, plane, h, code, c);
    }

    fn nack_to(&self, port: u16, plane: u8, h: &DataHeader, code: NackCode, c: &mut Ctx) {
        let n = nack_for(code, self.remote_id, h.path_id, h.path_gen, h.path_psn, h.stream_id, h.msn, h.tx_ts);
        c.counters.nacks_sent += 1;
        let pkt = reply(c, self.remote, port, plane, &n);
        c.out.push_back(pkt);
    }
}

/// Records psn `cum_psn + d` as received and slides the window over every
/// psn now contiguous.
fn accept(rp: &mut RxPath, d: u32) {
    if d > 0 {
        rp.bitmap.set(d - 1);
        return;
    }
    // d == 0: cum_psn itself arrived; advance past it and past the run of
    // set bits that follows.
    let mut n = 1;
    while rp.bitmap.get(n - 1) {
        n += 1;
    }
    rp.cum_psn = seq_add(rp.cum_psn, n);
    rp.bitmap = rp.bitmap.shift_down(n);
}

fn kind_of(h: &DataHeader) -> Kind {
    match h.place {
        Placement::Write { .. } => Kind::Write,
        Placement::Send { rq_seq, .. } => Kind::Send { rq_seq },
    }
}

#[allow(clippy::too_many_arguments)]
pub fn nack_for(
    code: NackCode,
    dst_conn: u32,
    path_id: u8,
    gen: u8,
    psn: u32,
    stream: u8,
    msn: u32,
    ts: u16,
) -> Header {
    Header::Nack(NackHeader {
        code,
        dst_conn,
        path_id,
        path_gen: gen,
        path_psn: psn,
        stream_id: stream,
        msn,
        echo_ts: ts,
    })
}

/// An answer (SACK or NACK) to `dst`, back to the port and plane its
/// trigger came from.
pub fn reply(c: &Ctx, dst: NodeAddr, port: u16, plane: u8, h: &Header) -> WirePacket {
    let mut bytes = Vec::with_capacity(h.len() + 4);
    encode_datagram(h, &[], &mut bytes).expect("answer headers are built from checked fields");
    WirePacket { src: c.addr, dst, sport: c.p.udp_port, dport: port, plane, ecn: ECN_ECT0, bytes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_slides_over_contiguous_bits() {
        let mut rp = RxConn::new(1, 2, 0, 1, 10, 1).paths[0];
        accept(&mut rp, 2); // psn 12
        accept(&mut rp, 1); // psn 11
        assert_eq!(rp.cum_psn, 10);
        assert_eq!(rp.bitmap.count(), 2);
        accept(&mut rp, 0); // psn 10
        assert_eq!(rp.cum_psn, 13);
        assert!(rp.bitmap.is_empty());
    }
}
