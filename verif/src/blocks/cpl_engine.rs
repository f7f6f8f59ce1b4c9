//! `cpl_engine` traffic and coverage.
//!
//! The inputs play the stages around the block, so messages really
//! complete:
//! - `s_new`: per (connection, stream) the generator walks messages in msn
//!   order, each cut into packets whose payloads add up to its length
//!   (zero-length messages too); a packet of the next message is sometimes
//!   sent first (out of order), and now and then a packet is for a msn a
//!   table depth ahead (its slot holds a live message: `stat_msg_err`) or
//!   carries a length that overshoots (that message never completes; an
//!   open clears it). Tags count up, as the DMA engine gives them.
//! - `s_dma`: answers the accepted packets in order with their tags (the
//!   monitor queues them at the `s_new` handshake); some answers are
//!   ACCESS or AXI errors, a few carry the wrong tag; the packet of such
//!   an answer is sent again later (a retransmission: its bytes were not
//!   counted).
//! - `s_cons`: answers each `m_consume` in order, mostly with a receive
//!   (ok), sometimes none (the message waits for `s_post`).
//! - `s_post`: a receive posted on a stream whose consume was refused,
//!   or on any stream; `s_open`: rarely, a connection reopened.
//!
//! [`Directed`] packets go first: the tests queue edge cases there.

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::cpl_engine::{self as ce, CplEngineParams, NewPkt, OPCODE_RECV};

use super::{hs, idx, shared, Shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

const SEQ_MASK: u32 = (1 << 24) - 1;
/// Largest payload the generator cuts: longer messages take several packets.
pub const MAX_PAYLOAD: u32 = 4096;

/// A message being sent on one (connection, stream).
#[derive(Clone, Copy, Debug, Default)]
struct Msg {
    msn: u32,
    send: bool,
    len: u32,
    imm: Option<u32>,
    rq_seq: u32,
    /// Bytes not sent yet.
    left: u32,
}

/// What the generators and the monitor share, and where tests queue
/// directed packets.
#[derive(Default)]
pub struct Directed {
    /// Packets sent before any random one (their `tag` is overwritten
    /// with the next tag in order).
    pub pkts: VecDeque<NewPkt>,
    /// Only the directed packets, nothing random on `s_new`, `s_post`,
    /// `s_open`; DMA answers OK with the right tag, every consume ok.
    pub only_directed: bool,
    /// Hold every DMA answer back (the pending FIFO fills).
    pub hold_dma: bool,
    /// Slots (connection, stream pairs) most packets go to.
    pub hot_queues: u32,
    /// Random faults (bytes beyond a message, a msn a table depth ahead,
    /// DMA errors, wrong tags, consumes that find no receive); off, every
    /// message completes.
    pub faults: bool,
    /// Offer an open in 1 cycle of 1000 instead of 2 of 100: a NIC's
    /// setup rate, for runs where opens would wipe the traffic under test.
    pub rare_opens: bool,
    /// Per queue: the messages in flight (current, maybe the next).
    msgs: Vec<VecDeque<Msg>>,
    /// Per queue: the msn of the next message to start, the next rq_seq.
    next_msn: Vec<u32>,
    next_rq: Vec<u32>,
    next_tag: u16,
    /// Packets offered on `s_new` (with their tags), not yet taken.
    offered: VecDeque<(u16, NewPkt)>,
    /// Packets taken on `s_new`, waiting for their DMA answer.
    tags: VecDeque<(u16, NewPkt)>,
    /// Packets whose DMA answer counted nothing: sent again.
    retry: VecDeque<NewPkt>,
    /// The packet the DMA answer on offer is for.
    dma_current: Option<NewPkt>,
    /// Consume requests taken, waiting for their answer.
    consumes: VecDeque<(u32, u32, u32)>,
    /// Queues whose consume found no receive.
    refused: VecDeque<(u32, u32)>,
    /// Connections whose open was taken (the generator restarts them).
    opened: Vec<u32>,
}

/// Random packets and answers (see the module docs), and the handle
/// through which tests add directed packets.
pub fn traffic(p: &CplEngineParams, seed: u64) -> (Traffic, Shared<Directed>) {
    let ports = ce::ports(p);
    let qs = (p.conns * p.streams) as usize;
    let st = shared(Directed {
        hot_queues: 3,
        faults: true,
        msgs: vec![VecDeque::new(); qs],
        next_msn: vec![0; qs],
        next_rq: vec![0; qs],
        ..Directed::default()
    });
    let (s1, s2, s3, s4, s5, s6) = (st.clone(), st.clone(), st.clone(), st.clone(), st.clone(), st.clone());
    let (p1, p2, p3) = (*p, *p, *p);
    let t = Traffic::new(&ports, seed)
        .idle(25)
        .backpressure(30)
        .random_resets(super::sweep_resets(u64::from(p.conns * p.streams)))
        .source("s_new_", move |rng, t| new_pkt(&p1, &mut s1.borrow_mut(), rng, t))
        .source("s_dma_", move |rng, t| {
            let mut s = s2.borrow_mut();
            let (tag, pkt) = match s.tags.front() {
                Some(&k) if !s.hold_dma => k,
                _ => {
                    t.skip();
                    return;
                }
            };
            s.tags.pop_front();
            s.dma_current = Some(pkt);
            let clean = s.only_directed || !s.faults;
            let (tag, status) = match rng.below(100) {
                _ if clean => (tag, 0),
                0..=3 => (tag, 1),
                4..=5 => (tag, 2),
                6 => (tag.wrapping_add(1 + rng.below(100) as u16), 0),
                _ => (tag, 0),
            };
            if (tag, status) != (pkt.tag, 0) {
                s.retry.push_back(pkt);
            }
            t.set_u64("tag", tag as u64).set_u64("status", status);
        })
        .source("s_cons_", move |rng, t| {
            let mut s = s3.borrow_mut();
            let Some((conn, stream, rq_seq)) = s.consumes.pop_front() else {
                t.skip();
                return;
            };
            let ok = s.only_directed || !s.faults || rng.percent(80);
            if !ok {
                s.refused.push_back((conn, stream));
            }
            t.set_u64("ok", ok as u64).set_u64("rq_seq", rq_seq as u64);
        })
        .source("s_post_", move |rng, t| {
            let mut s = s4.borrow_mut();
            let q = match s.refused.pop_front() {
                Some(q) if rng.percent(70) => q,
                Some(q) => {
                    s.refused.push_back(q);
                    t.skip();
                    return;
                }
                None if s.only_directed || rng.percent(90) => {
                    t.skip();
                    return;
                }
                None => queue(&p2, &s, rng),
            };
            t.set_u64("conn", q.0 as u64).set_u64("stream", q.1 as u64);
        })
        .source("s_open_", move |rng, t| {
            let s = s5.borrow();
            let offer = if s.rare_opens { rng.below(1000) == 0 } else { rng.percent(2) };
            if s.only_directed || !offer {
                t.skip();
                return;
            }
            t.set_u64("conn", queue(&p3, &s, rng).0 as u64);
        });
    let p = *p;
    let t = t.monitor(move |c| Monitor::declare(&p, s6, c), Monitor::observe);
    (t, st)
}

/// A (connection, stream), mostly one of the hot ones.
fn queue(p: &CplEngineParams, s: &Directed, rng: &mut Rng) -> (u32, u32) {
    let q = if rng.percent(80) {
        rng.below(s.hot_queues.clamp(1, p.conns * p.streams) as u64) as u32
    } else {
        rng.below((p.conns * p.streams) as u64) as u32
    };
    (q / p.streams, q % p.streams)
}

fn new_pkt(p: &CplEngineParams, s: &mut Directed, rng: &mut Rng, t: &mut Txn) {
    // A reopened connection starts over at msn 0: forget its messages.
    for conn in std::mem::take(&mut s.opened) {
        for q in conn * p.streams..(conn + 1) * p.streams {
            s.msgs[q as usize].clear();
            s.next_msn[q as usize] = 0;
        }
        s.retry.retain(|k| k.conn != conn);
    }
    let k = match s.pkts.pop_front() {
        Some(k) => k,
        None if s.only_directed => {
            t.skip();
            return;
        }
        None => match s.retry.pop_front() {
            Some(k) if rng.percent(50) => k,
            Some(k) => {
                s.retry.push_back(k);
                random_pkt(p, s, rng)
            }
            None => random_pkt(p, s, rng),
        },
    };
    let tag = s.next_tag;
    s.next_tag = s.next_tag.wrapping_add(1);
    s.offered.push_back((tag, NewPkt { tag, ..k }));
    t.set_u64("conn", k.conn as u64)
        .set_u64("stream", k.stream as u64)
        .set_u64("msn", k.msn as u64)
        .set_u64("payload_len", k.payload_len as u64)
        .set_u64("tag", tag as u64)
        .set_u64("send", k.send as u64)
        .set_u64("msg_len", k.msg_len as u64)
        .set_u64("imm_valid", k.imm.is_some() as u64)
        .set_u64("imm", k.imm.unwrap_or(0) as u64)
        .set_u64("rq_seq", k.rq_seq as u64)
        .set_u64("conn_id", k.conn_id as u64);
}

/// The next packet of a random queue's messages.
fn random_pkt(p: &CplEngineParams, s: &mut Directed, rng: &mut Rng) -> NewPkt {
    let (conn, stream) = queue(p, s, rng);
    let q = (conn * p.streams + stream) as usize;
    let fresh = |rng: &mut Rng, next_msn: &mut u32, rq: &mut u32| {
        let msn = *next_msn;
        *next_msn = (msn + 1) & SEQ_MASK;
        let len = match rng.below(100) {
            0..=4 => 0,
            5..=59 => 1 + rng.below(MAX_PAYLOAD as u64) as u32,
            _ => 1 + rng.below(4 * MAX_PAYLOAD as u64) as u32,
        };
        let (send, imm) = match rng.below(3) {
            0 => (true, rng.percent(30).then(|| rng.next_u64() as u32)),
            1 => (false, Some(rng.next_u64() as u32)),
            _ => (false, None),
        };
        let rq_seq = *rq;
        if send {
            *rq = (*rq + 1) & SEQ_MASK;
        }
        Msg { msn, send, len, imm, rq_seq, left: len }
    };
    let msgs = &mut s.msgs[q];
    if msgs.is_empty() {
        msgs.push_back(fresh(rng, &mut s.next_msn[q], &mut s.next_rq[q]));
    }
    // Sometimes the next message starts before this one is done.
    if msgs.len() == 1 && rng.percent(15) {
        msgs.push_back(fresh(rng, &mut s.next_msn[q], &mut s.next_rq[q]));
    }
    let i = if msgs.len() > 1 && rng.percent(50) { 1 } else { 0 };
    let m = &mut msgs[i];
    let mut chunk = if m.left == 0 { 0 } else { 1 + rng.below(m.left.min(MAX_PAYLOAD) as u64) as u32 };
    let mut msn = m.msn;
    match if s.faults { rng.below(1000) } else { 1000 } {
        // Bytes beyond the message: it never completes (until an open).
        0..=2 => chunk = chunk.saturating_add(1 + rng.below(100) as u32).min(u16::MAX as u32),
        // A msn one table depth ahead: its slot is taken.
        3..=5 => msn = (msn + p.msg_depth) & SEQ_MASK,
        _ => {}
    }
    let pkt = NewPkt {
        conn,
        stream,
        msn,
        payload_len: chunk as u16,
        tag: 0,
        send: m.send,
        msg_len: m.len,
        imm: m.imm,
        rq_seq: m.rq_seq,
        conn_id: 0x40_0000 | conn,
    };
    if msn == m.msn {
        m.left -= chunk.min(m.left);
        if m.left == 0 {
            msgs.remove(i);
        }
    }
    pkt
}

/// Coverage of what completes and how.
pub struct Monitor {
    st: Shared<Directed>,
    new: [usize; 5],
    dma: [usize; 3],
    consume: [usize; 6],
    cons: [usize; 3],
    cqe: [usize; 5],
    stp: [usize; 4],
    post: [usize; 2],
    open: [usize; 3],
    stats: [usize; 4],
    // Bins.
    dma_status: [usize; 3],
    consume_kind: [usize; 2],
    cons_ok: [usize; 2],
    cqe_kind: [usize; 3],
    multi: usize,
    zero: usize,
    st_clear: usize,
    st_advance: usize,
    stat_bins: [usize; 4],
    post_bin: usize,
    open_bin: usize,
    b2b: usize,
    b2b_dma: usize,
    last_new: Option<(u64, u64)>,
    /// The queue of the last DMA answer, and whether any other operation
    /// (post, open) was taken since.
    last_dma: Option<(u32, u32)>,
}

impl Monitor {
    fn declare(p: &CplEngineParams, st: Shared<Directed>, c: &mut Coverage) -> Monitor {
        let ports = ce::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            st,
            new: ["s_new_valid", "s_new_ready", "s_new_tag", "s_new_conn", "s_new_stream"].map(i),
            dma: ["s_dma_valid", "s_dma_ready", "s_dma_status"].map(i),
            consume: [
                "m_consume_valid",
                "m_consume_ready",
                "m_consume_conn",
                "m_consume_stream",
                "m_consume_imm",
                "m_consume_rq_seq",
            ]
            .map(i),
            cons: ["s_cons_valid", "s_cons_ready", "s_cons_ok"].map(i),
            cqe: ["m_cqe_valid", "m_cqe_ready", "m_cqe_opcode", "m_cqe_byte_len", "m_cqe_imm_valid"].map(i),
            stp: ["m_st_valid", "m_st_ready", "m_st_clear", "m_st_completed_msn"].map(i),
            post: ["s_post_valid", "s_post_ready"].map(i),
            open: ["s_open_valid", "s_open_ready", "s_open_conn"].map(i),
            stats: ["stat_dma_err", "stat_order_err", "stat_msg_err", "stat_recv_cpl"].map(i),
            dma_status: ["OK", "ACCESS", "AXI error"].map(|n| c.bin(format!("DMA completion: {n}"))),
            consume_kind: [c.bin("consume: SEND (its rq_seq)"), c.bin("consume: WRITE_IMM (next in order)")],
            cons_ok: [c.bin("consume answer: no receive (waits for a post)"), c.bin("consume answer: receive taken")],
            cqe_kind: [
                c.bin("CQE: RECV"),
                c.bin("CQE: RECV with immediate (SEND_IMM)"),
                c.bin("CQE: RECV_RDMA_WITH_IMM (WRITE_IMM)"),
            ],
            multi: c.bin(format!("CQE of a message longer than {MAX_PAYLOAD} bytes (several packets)")),
            zero: c.bin("CQE of a zero-length message"),
            st_clear: c.bin("stream state: connection cleared (open)"),
            st_advance: c.bin("stream state: completed_msn moved"),
            stat_bins: [
                "DMA error (bytes not counted)",
                "tag not the pending head's",
                "message slot taken",
                "receive completion",
            ]
            .map(|n| c.bin(format!("counter: {n}"))),
            post_bin: c.bin("receive posted"),
            open_bin: c.bin("connection opened"),
            b2b: c.bin("packets of one stream on consecutive cycles"),
            b2b_dma: c.bin("DMA answers of one stream in consecutive operations (its word read right after the write)"),
            last_new: None,
            last_dma: None,
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        let mut s = self.st.borrow_mut();
        if rst {
            // The block forgets everything in flight; so do the answerers.
            s.tags.clear();
            s.offered.clear();
            s.retry.clear();
            s.consumes.clear();
            s.refused.clear();
            s.next_tag = 0;
            s.msgs.iter_mut().for_each(VecDeque::clear);
            s.next_msn.iter_mut().for_each(|m| *m = 0);
            self.last_new = None;
            self.last_dma = None;
            return;
        }
        if hs(v, self.new[0], self.new[1]) {
            let tag = v[self.new[2]].as_u64() as u16;
            // The source holds its offer until taken: the oldest offered.
            while let Some(k) = s.offered.pop_front() {
                if k.0 == tag {
                    s.tags.push_back(k);
                    break;
                }
            }
            let q = (v[self.new[3]].as_u64(), v[self.new[4]].as_u64());
            if self.last_new == Some(q) {
                c.hit(self.b2b);
            }
            self.last_new = Some(q);
        } else {
            self.last_new = None;
        }
        if hs(v, self.dma[0], self.dma[1]) {
            c.hit(self.dma_status[(v[self.dma[2]].as_u64() as usize).min(2)]);
            let q = s.dma_current.map(|k| (k.conn, k.stream));
            if q.is_some() && q == self.last_dma {
                c.hit(self.b2b_dma);
            }
            self.last_dma = q;
        }
        if hs(v, self.post[0], self.post[1]) || hs(v, self.open[0], self.open[1]) {
            self.last_dma = None;
        }
        if hs(v, self.consume[0], self.consume[1]) {
            let imm = v[self.consume[4]].bit(0);
            c.hit(self.consume_kind[imm as usize]);
            let (conn, stream, rq) = (
                v[self.consume[2]].as_u64() as u32,
                v[self.consume[3]].as_u64() as u32,
                v[self.consume[5]].as_u64() as u32,
            );
            s.consumes.push_back((conn, stream, rq));
        }
        if hs(v, self.cons[0], self.cons[1]) {
            c.hit(self.cons_ok[v[self.cons[2]].bit(0) as usize]);
        }
        if hs(v, self.cqe[0], self.cqe[1]) {
            let imm = v[self.cqe[4]].bit(0);
            let kind = if v[self.cqe[2]].as_u64() as u8 == OPCODE_RECV { imm as usize } else { 2 };
            c.hit(self.cqe_kind[kind]);
            let len = v[self.cqe[3]].as_u64();
            if len > MAX_PAYLOAD as u64 {
                c.hit(self.multi);
            }
            if len == 0 {
                c.hit(self.zero);
            }
        }
        if hs(v, self.stp[0], self.stp[1]) {
            if v[self.stp[2]].bit(0) {
                c.hit(self.st_clear);
            } else if v[self.stp[3]].as_u64() != 0 {
                c.hit(self.st_advance);
            }
        }
        if hs(v, self.post[0], self.post[1]) {
            c.hit(self.post_bin);
        }
        if hs(v, self.open[0], self.open[1]) {
            c.hit(self.open_bin);
            let conn = v[self.open[2]].as_u64() as u32;
            s.opened.push(conn);
        }
        for (p, b) in self.stats.iter().zip(self.stat_bins) {
            if v[*p].bit(0) {
                c.hit(b);
            }
        }
    }
}
