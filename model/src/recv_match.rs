//! `recv_match`: posted receives per (connection, stream), found by rq_seq.
//!
//! # Function
//! Three request channels, one request per cycle in total (fixed priority
//! `s_consume` > `s_lookup` > `s_post`; a lower channel's `ready` is low
//! while a higher one is valid):
//! - `s_post_*` (conn, stream, addr, len, wr_id, lkey) posts a receive at the
//!   stream's next rq_seq (`next_post`, from 0). The receive goes in slot
//!   `rq_seq mod RQ_DEPTH` of the stream's ring; when that slot still holds
//!   a receive the post is refused (`m_post_ok` = 0). `m_post_*` answers
//!   with the rq_seq given.
//! - `s_lookup_*` (conn, stream, rq_seq, msg_offset, payload_len, msg_len)
//!   is a SEND packet's placement check, in the reference's order:
//!   `msg_offset + payload_len > msg_len` is BAD_HDR (4); no receive posted
//!   at rq_seq is RNR (1); `msg_len` above the receive's length is ACCESS
//!   (2); else a hit (code 0) with `m_match_addr` = receive addr +
//!   msg_offset and `m_match_lkey` = the receive's lkey, the key of the
//!   region its buffer lies in, which the host gives with the receive (an
//!   `ibv_recv_wr` SGE's lkey) and dma_write_engine checks the SEND's
//!   placement against. Lookups change nothing.
//! - `s_consume_*` (conn, stream, imm, rq_seq) is a message completing: a
//!   SEND consumes the receive at its rq_seq, a WRITE_IMM (`imm` = 1) the
//!   stream's next one in order (`next_consume`); either way `next_consume`
//!   becomes the consumed rq_seq + 1 (as the reference's `drain`).
//!   `m_cons_ok` = 0 when nothing is posted there (the WRITE_IMM waits: the
//!   completion stage asks again after the next post); else the receive's
//!   wr_id, len and rq_seq, and it is gone: consumed exactly once.
//!
//! A receive is posted at rq_seq `s` when its slot's valid bit is set and
//! `next_post - s` (mod 2^24) is in `1..=RQ_DEPTH`: the slot's occupant is
//! the only rq_seq of that window with that slot.
//!
//! # Difference from the reference
//! The reference refuses a post when `RQ_DEPTH` receives are posted; the
//! ring refuses it when the slot `next_post mod RQ_DEPTH` is occupied. The
//! two agree whenever receives are consumed in rq_seq order, which is what
//! the protocol does (rq_seqs are numbered in msn order and completions are
//! raised in msn order); they differ only after a SEND consumed out of
//! order (a sender numbering rq_seq out of order).
//!
//! # Timing (read latency `L`)
//! ```text
//! cycle a         handshake; pointer memory read at {conn, stream}
//! cycle a+L       pointer word (or forwarded) -> update (valid bits,
//!                 next_post, next_consume) written back; slot memory
//!                 written (post) or read (lookup, consume) at
//!                 {conn, stream, slot}
//! cycle a+2L      slot data -> answer pushed into its FIFO
//! cycle a+2L+1    m_post / m_match / m_cons valid
//! ```
//! Latency `2L + 1`, one request per cycle sustained. The pointer word is
//! forwarded from the `L` previous updates; the slot memory needs no
//! forwarding (a slot is written by a post `>= 1` cycle before any request
//! that can see it reads it).

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::Config;

use crate::block::{Bits, Block, PortDef};

pub const NAME: &str = "recv_match";
const SEQ_MASK: u32 = (1 << 24) - 1;

pub const CODE_HIT: u8 = 0;
pub const CODE_RNR: u8 = 1;
pub const CODE_ACCESS: u8 = 2;
pub const CODE_BAD_HDR: u8 = 4;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("recv_match: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvMatchParams {
    pub conns: u32,
    pub streams: u32,
    pub depth: u32,
    pub conn_bits: u32,
    pub stream_bits: u32,
    pub slot_bits: u32,
    pub read_latency: u32,
}

impl RecvMatchParams {
    pub fn from_config(cfg: &Config) -> Result<RecvMatchParams, ParamError> {
        RecvMatchParams::new(
            cfg.transport.connections,
            cfg.transport.streams_per_conn,
            cfg.hardware.recv_queue_depth,
            cfg.hardware.table_read_latency,
        )
    }

    pub fn new(conns: u32, streams: u32, depth: u32, read_latency: u32) -> Result<RecvMatchParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24");
        }
        if streams == 0 || !streams.is_power_of_two() || streams > 256 {
            return bad("transport.streams_per_conn", streams, "must be a power of 2 in 1..=256 (one ring each)");
        }
        if depth < 2 || !depth.is_power_of_two() || depth > 256 {
            return bad("hardware.recv_queue_depth", depth, "must be a power of 2 in 2..=256 (valid bits in one word)");
        }
        if !(1..=2).contains(&read_latency) {
            return bad("hardware.table_read_latency", read_latency, "the memories support 1 or 2 cycles");
        }
        Ok(RecvMatchParams {
            conns,
            streams,
            depth,
            conn_bits: Config::index_bits(conns),
            stream_bits: Config::index_bits(streams),
            slot_bits: Config::index_bits(depth),
            read_latency,
        })
    }

    pub fn queues(&self) -> u32 {
        self.conns * self.streams
    }

    pub fn fifo_depth(&self) -> u32 {
        (2 * self.read_latency + 2).next_power_of_two()
    }

    pub fn latency(&self) -> u32 {
        2 * self.read_latency + 1
    }
}

/// A channel: prefix, is an input, banner, fields (name, width, comment).
type Chan = (&'static str, bool, &'static str, Vec<(&'static str, u32, &'static str)>);

/// Ports, in declaration order.
pub fn ports(p: &RecvMatchParams) -> Vec<PortDef> {
    let (cw, sw) = (p.conn_bits, p.stream_bits);
    let mut v =
        vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; starts the clear sweep")];
    let chans: [Chan; 6] = [
        (
            "s_post",
            true,
            "Post a receive",
            vec![
                ("conn", cw, "connection"),
                ("stream", sw, "stream"),
                ("addr", 64, "buffer address"),
                ("len", 32, "buffer length"),
                ("wr_id", 64, "work request id"),
                ("lkey", 32, "key of the region the buffer lies in (checked at placement)"),
            ],
        ),
        (
            "s_lookup",
            true,
            "SEND placement lookup",
            vec![
                ("conn", cw, "connection"),
                ("stream", sw, "stream"),
                ("rq_seq", 24, "the SEND's rq_seq"),
                ("msg_offset", 32, "offset of the packet in its message"),
                ("payload_len", 16, "payload bytes"),
                ("msg_len", 32, "message length"),
            ],
        ),
        (
            "s_consume",
            true,
            "Message completion",
            vec![
                ("conn", cw, "connection"),
                ("stream", sw, "stream"),
                ("imm", 1, "WRITE_IMM: consume the next receive in order"),
                ("rq_seq", 24, "SEND: the rq_seq to consume"),
            ],
        ),
        (
            "m_post",
            false,
            "Post result",
            vec![("ok", 1, "posted (0: the ring slot is occupied)"), ("rq_seq", 24, "rq_seq given")],
        ),
        (
            "m_match",
            false,
            "Lookup result",
            vec![
                ("code", 3, "0 hit, 1 RNR, 2 ACCESS, 4 BAD_HDR (NACK codes)"),
                ("addr", 64, "hit: receive addr + msg_offset (else 0)"),
                ("lkey", 32, "hit: the receive's lkey, for the placement check (else 0)"),
            ],
        ),
        (
            "m_cons",
            false,
            "Consume result",
            vec![
                ("ok", 1, "consumed (0: nothing posted there)"),
                ("rq_seq", 24, "the rq_seq consumed or asked for"),
                ("wr_id", 64, "its work request id (else 0)"),
                ("len", 32, "its buffer length (else 0)"),
            ],
        ),
    ];
    for (ch, input, group, fields) in chans {
        if input {
            v.push(PortDef::input(format!("{ch}_valid"), 1, group, "a request is offered"));
            v.push(PortDef::output(format!("{ch}_ready"), 1, group, "request accepted this cycle if valid"));
            for (n, w, c) in fields {
                v.push(PortDef::input(format!("{ch}_{n}"), w, group, c));
            }
        } else {
            v.push(PortDef::output(format!("{ch}_valid"), 1, group, "a result is offered"));
            v.push(PortDef::input(format!("{ch}_ready"), 1, group, "result taken this cycle if valid"));
            for (n, w, c) in fields {
                v.push(PortDef::output(format!("{ch}_{n}"), w, group, c));
            }
        }
    }
    v
}

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Req {
    Post { conn: u32, stream: u32, addr: u64, len: u32, wr_id: u64, lkey: u32 },
    Lookup { conn: u32, stream: u32, rq_seq: u32, msg_offset: u32, payload_len: u16, msg_len: u32 },
    Consume { conn: u32, stream: u32, imm: bool, rq_seq: u32 },
}

impl Req {
    fn queue(&self) -> (u32, u32) {
        match *self {
            Req::Post { conn, stream, .. } | Req::Lookup { conn, stream, .. } | Req::Consume { conn, stream, .. } => {
                (conn, stream)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PostResult {
    pub ok: bool,
    pub rq_seq: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchResult {
    pub code: u8,
    pub addr: u64,
    pub lkey: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConsResult {
    pub ok: bool,
    pub rq_seq: u32,
    pub wr_id: u64,
    pub len: u32,
}

/// Inputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub post: Option<Req>,
    pub lookup: Option<Req>,
    pub consume: Option<Req>,
    pub post_ready: bool,
    pub match_ready: bool,
    pub cons_ready: bool,
}

/// Outputs of one cycle (registers only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outputs {
    /// Ready of the channel if it were the highest valid one.
    pub room: bool,
    pub post: Option<PostResult>,
    pub matched: Option<MatchResult>,
    pub cons: Option<ConsResult>,
}

impl Outputs {
    pub fn consume_ready(&self) -> bool {
        self.room
    }
    pub fn lookup_ready(&self, consume_valid: bool) -> bool {
        self.room && !consume_valid
    }
    pub fn post_ready(&self, consume_valid: bool, lookup_valid: bool) -> bool {
        self.room && !consume_valid && !lookup_valid
    }
}

/// Pointer word of one (conn, stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Queue {
    pub next_post: u32,
    pub next_consume: u32,
    /// Bit i: slot i holds a receive (bit vector of up to 256).
    pub valid: [u64; 4],
}

impl Queue {
    fn get(&self, i: u32) -> bool {
        self.valid[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn put(&mut self, i: u32, v: bool) {
        let w = &mut self.valid[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }
    /// A receive is posted at `seq`.
    pub fn posted(&self, depth: u32, seq: u32) -> bool {
        let age = self.next_post.wrapping_sub(seq) & SEQ_MASK;
        (1..=depth).contains(&age) && self.get(seq % depth)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    pub addr: u64,
    pub len: u32,
    pub wr_id: u64,
    pub lkey: u32,
}

/// What stage B does with the slot read.
#[derive(Debug, Clone, Copy)]
enum Pending {
    Post(PostResult),
    Lookup { code: u8, msg_offset: u32, msg_len: u32 },
    Consume { ok: bool, rq_seq: u32 },
}

pub struct RecvMatch {
    p: RecvMatchParams,
    ports: Vec<PortDef>,
    qmem: Vec<Queue>,
    smem: Vec<Slot>,
    /// Stage A: requests waiting for the pointer read.
    qrd: Vec<Queue>,
    stage_a: Vec<Option<Req>>,
    hist: Vec<Option<(u32, Queue)>>,
    /// Stage B: slot reads in flight.
    srd: Vec<Slot>,
    stage_b: Vec<Option<Pending>>,
    posts: VecDeque<PostResult>,
    matches: VecDeque<MatchResult>,
    conses: VecDeque<ConsResult>,
    init: bool,
    init_addr: u32,
    /// Port indices, resolved once (the per-cycle `Block` calls do no
    /// name lookups).
    ix: PortIx,
}

/// Port indices of [`ports`], by role.
#[derive(Debug, Clone)]
struct PortIx {
    rst: usize,
    /// valid, conn, stream, addr, len, wr_id, lkey.
    post: [usize; 7],
    /// valid, conn, stream, rq_seq, msg_offset, payload_len, msg_len.
    lookup: [usize; 7],
    /// valid, conn, stream, imm, rq_seq.
    consume: [usize; 5],
    /// m_post_ready, m_match_ready, m_cons_ready.
    ready: [usize; 3],
    /// The outputs, in the order `eval` computes them.
    outputs: [usize; 15],
}

impl PortIx {
    fn of(ports: &[PortDef]) -> PortIx {
        let i = |n: &str| crate::block::port_index(ports, n).expect("port exists");
        PortIx {
            rst: i("rst"),
            post: [
                "s_post_valid",
                "s_post_conn",
                "s_post_stream",
                "s_post_addr",
                "s_post_len",
                "s_post_wr_id",
                "s_post_lkey",
            ]
            .map(i),
            lookup: [
                "s_lookup_valid",
                "s_lookup_conn",
                "s_lookup_stream",
                "s_lookup_rq_seq",
                "s_lookup_msg_offset",
                "s_lookup_payload_len",
                "s_lookup_msg_len",
            ]
            .map(i),
            consume: ["s_consume_valid", "s_consume_conn", "s_consume_stream", "s_consume_imm", "s_consume_rq_seq"]
                .map(i),
            ready: ["m_post_ready", "m_match_ready", "m_cons_ready"].map(i),
            outputs: [
                "s_post_ready",
                "s_lookup_ready",
                "s_consume_ready",
                "m_post_valid",
                "m_post_ok",
                "m_post_rq_seq",
                "m_match_valid",
                "m_match_code",
                "m_match_addr",
                "m_match_lkey",
                "m_cons_valid",
                "m_cons_ok",
                "m_cons_rq_seq",
                "m_cons_wr_id",
                "m_cons_len",
            ]
            .map(i),
        }
    }
}

impl fmt::Debug for RecvMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvMatch").field("p", &self.p).field("init", &self.init).finish_non_exhaustive()
    }
}

impl RecvMatch {
    pub fn new(p: RecvMatchParams) -> RecvMatch {
        let l = p.read_latency as usize;
        let ports = ports(&p);
        RecvMatch {
            ix: PortIx::of(&ports),
            ports,
            qmem: vec![Queue::default(); p.queues() as usize],
            smem: vec![Slot::default(); (p.queues() * p.depth) as usize],
            qrd: vec![Queue::default(); l],
            stage_a: vec![None; l],
            hist: vec![None; l],
            srd: vec![Slot::default(); l],
            stage_b: vec![None; l],
            posts: VecDeque::new(),
            matches: VecDeque::new(),
            conses: VecDeque::new(),
            init: true,
            init_addr: 0,
            p,
        }
    }

    pub fn params(&self) -> &RecvMatchParams {
        &self.p
    }

    pub fn queue(&self, conn: u32, stream: u32) -> &Queue {
        &self.qmem[(conn * self.p.streams + stream) as usize]
    }

    pub fn idle(&self) -> bool {
        self.stage_a.iter().all(Option::is_none)
            && self.stage_b.iter().all(Option::is_none)
            && self.posts.is_empty()
            && self.matches.is_empty()
            && self.conses.is_empty()
    }

    pub fn outputs(&self) -> Outputs {
        let inflight =
            self.stage_a.iter().filter(|s| s.is_some()).count() + self.stage_b.iter().filter(|s| s.is_some()).count();
        let room = |n: usize| n + inflight < self.p.fifo_depth() as usize;
        Outputs {
            room: !self.init && room(self.posts.len()) && room(self.matches.len()) && room(self.conses.len()),
            post: self.posts.front().copied(),
            matched: self.matches.front().copied(),
            cons: self.conses.front().copied(),
        }
    }

    fn qindex(&self, conn: u32, stream: u32) -> u32 {
        (conn & (self.p.conns - 1)) * self.p.streams + (stream & (self.p.streams - 1))
    }

    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        let l = self.p.read_latency as usize;
        let d = self.p.depth;

        // Stage B end: slot data -> answers.
        let mut push_post = None;
        let mut push_match = None;
        let mut push_cons = None;
        if let Some(pd) = self.stage_b[l - 1] {
            let s = self.srd[l - 1];
            match pd {
                Pending::Post(r) => push_post = Some(r),
                Pending::Lookup { code, msg_offset, msg_len } => {
                    let code = if code != CODE_HIT {
                        code
                    } else if msg_len > s.len {
                        CODE_ACCESS
                    } else {
                        CODE_HIT
                    };
                    let (addr, lkey) =
                        if code == CODE_HIT { (s.addr.wrapping_add(msg_offset as u64), s.lkey) } else { (0, 0) };
                    push_match = Some(MatchResult { code, addr, lkey });
                }
                Pending::Consume { ok, rq_seq } => {
                    push_cons = Some(if ok {
                        ConsResult { ok, rq_seq, wr_id: s.wr_id, len: s.len }
                    } else {
                        ConsResult { ok, rq_seq, ..ConsResult::default() }
                    })
                }
            }
        }

        // Stage A end: pointer update, slot access.
        let mut qwrite = None;
        let mut pending = None;
        let mut slot_write = None;
        let mut slot_read = None;
        if let Some(req) = self.stage_a[l - 1] {
            let (c, st) = req.queue();
            let qi = self.qindex(c, st);
            let mut q = match self.hist.iter().flatten().find(|(i, _)| *i == qi) {
                Some((_, q)) => *q,
                None => self.qrd[l - 1],
            };
            let base = qi * d;
            match req {
                Req::Post { addr, len, wr_id, lkey, .. } => {
                    let seq = q.next_post;
                    let ok = !q.get(seq % d);
                    if ok {
                        q.put(seq % d, true);
                        q.next_post = (seq + 1) & SEQ_MASK;
                        slot_write = Some((base + seq % d, Slot { addr, len, wr_id, lkey }));
                    }
                    pending = Some(Pending::Post(PostResult { ok, rq_seq: seq }));
                }
                Req::Lookup { rq_seq, msg_offset, payload_len, msg_len, .. } => {
                    let code = if msg_offset as u64 + payload_len as u64 > msg_len as u64 {
                        CODE_BAD_HDR
                    } else if !q.posted(d, rq_seq) {
                        CODE_RNR
                    } else {
                        CODE_HIT
                    };
                    slot_read = Some(base + rq_seq % d);
                    pending = Some(Pending::Lookup { code, msg_offset, msg_len });
                }
                Req::Consume { imm, rq_seq, .. } => {
                    let seq = if imm { q.next_consume } else { rq_seq };
                    let ok = q.posted(d, seq);
                    if ok {
                        q.put(seq % d, false);
                        q.next_consume = (seq + 1) & SEQ_MASK;
                    }
                    slot_read = Some(base + seq % d);
                    pending = Some(Pending::Consume { ok, rq_seq: seq });
                }
            }
            qwrite = Some((qi, q));
        }

        // Request arbitration.
        let cv = inp.consume.is_some();
        let lv = inp.lookup.is_some();
        let fire = if cv && out.consume_ready() {
            inp.consume
        } else if lv && out.lookup_ready(cv) {
            inp.lookup
        } else if inp.post.is_some() && out.post_ready(cv, lv) {
            inp.post
        } else {
            None
        };

        // Memories.
        if l == 2 {
            self.qrd[1] = self.qrd[0];
            self.srd[1] = self.srd[0];
        }
        if let Some(r) = &fire {
            let (c, st) = r.queue();
            self.qrd[0] = self.qmem[self.qindex(c, st) as usize];
        }
        if let Some(a) = slot_read {
            self.srd[0] = self.smem[a as usize];
        }
        if let Some((a, s)) = slot_write {
            self.smem[a as usize] = s;
        }
        if self.init {
            self.qmem[self.init_addr as usize] = Queue::default();
        } else if let Some((i, q)) = qwrite {
            self.qmem[i as usize] = q;
        }

        if inp.rst {
            self.stage_a.iter_mut().for_each(|s| *s = None);
            self.stage_b.iter_mut().for_each(|s| *s = None);
            self.hist.iter_mut().for_each(|h| *h = None);
            self.posts.clear();
            self.matches.clear();
            self.conses.clear();
            self.init = true;
            self.init_addr = 0;
            return;
        }
        if self.init {
            if self.init_addr == self.p.queues() - 1 {
                self.init = false;
            }
            self.init_addr = (self.init_addr + 1) & (self.p.queues() - 1);
        }
        self.hist.rotate_right(1);
        self.hist[0] = qwrite;
        if out.post.is_some() && inp.post_ready {
            self.posts.pop_front();
        }
        if out.matched.is_some() && inp.match_ready {
            self.matches.pop_front();
        }
        if out.cons.is_some() && inp.cons_ready {
            self.conses.pop_front();
        }
        self.posts.extend(push_post);
        self.matches.extend(push_match);
        self.conses.extend(push_cons);
        self.stage_b.rotate_right(1);
        self.stage_b[0] = pending;
        self.stage_a.rotate_right(1);
        self.stage_a[0] = fire;
    }
}

impl Block for RecvMatch {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let ix = &self.ix;
        let (cv, lv) = (inputs[ix.consume[0]].bit(0), inputs[ix.lookup[0]].bit(0));
        let p = o.post.unwrap_or_default();
        let m = o.matched.unwrap_or_default();
        let c = o.cons.unwrap_or_default();
        let vals: [u64; 15] = [
            o.post_ready(cv, lv) as u64,
            o.lookup_ready(cv) as u64,
            o.consume_ready() as u64,
            o.post.is_some() as u64,
            p.ok as u64,
            p.rq_seq as u64,
            o.matched.is_some() as u64,
            m.code as u64,
            m.addr,
            m.lkey as u64,
            o.cons.is_some() as u64,
            c.ok as u64,
            c.rq_seq as u64,
            c.wr_id,
            c.len as u64,
        ];
        for (&i, v) in ix.outputs.iter().zip(vals) {
            outputs[i].set_u64(self.ports[i].width, v);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ix = &self.ix;
        let g = |i: usize| inputs[i].as_u64();
        let [pv, pc, ps, pa, pl, pw, pk] = ix.post;
        let [lv, lc, ls, lq, lo, lp, lm] = ix.lookup;
        let [cv, cc, cs, ci, cq] = ix.consume;
        let [pr, mr, cr] = ix.ready;
        let inp = Inputs {
            rst: g(ix.rst) == 1,
            post: (g(pv) == 1).then(|| Req::Post {
                conn: g(pc) as u32,
                stream: g(ps) as u32,
                addr: g(pa),
                len: g(pl) as u32,
                wr_id: g(pw),
                lkey: g(pk) as u32,
            }),
            lookup: (g(lv) == 1).then(|| Req::Lookup {
                conn: g(lc) as u32,
                stream: g(ls) as u32,
                rq_seq: g(lq) as u32,
                msg_offset: g(lo) as u32,
                payload_len: g(lp) as u16,
                msg_len: g(lm) as u32,
            }),
            consume: (g(cv) == 1).then(|| Req::Consume {
                conn: g(cc) as u32,
                stream: g(cs) as u32,
                imm: g(ci) == 1,
                rq_seq: g(cq) as u32,
            }),
            post_ready: g(pr) == 1,
            match_ready: g(mr) == 1,
            cons_ready: g(cr) == 1,
        };
        self.clock(&inp);
    }
}
