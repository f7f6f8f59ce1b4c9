//! `cpl_engine`: the receive side's completion stage. It counts each
//! accepted packet's bytes once, when its data is in host memory, keeps the
//! per-(connection, stream) message table, and raises every message's
//! completion exactly once and in msn order per stream, as the reference's
//! `RxConn::drain` does.
//!
//! # Function
//! - `s_new_*`: one entry per packet that set a new bitmap bit
//!   (`sack_gen.m_new_*` joined with the packet's message fields), in the
//!   order its placement was given to `dma_write_engine`, with the tag the
//!   placement got. Entries wait in the pending FIFO.
//! - `s_dma_*`: `dma_write_engine.m_cpl_*` (tag, status), in request order.
//!   Each pops the pending head: its tag must be the head's (else
//!   `stat_order_err`: nothing is counted). With status OK the packet's
//!   bytes count into its message (the entry is made by the first packet:
//!   kind, msg_len, imm, rq_seq, the local connection id); the stream turns
//!   active. Any other status counts nothing (`stat_dma_err`): the data is
//!   not in memory, so the message can never complete from it.
//! - Drain: when the counted message is the stream's oldest incomplete one,
//!   the stage walks the stream in msn order: a message whose bytes equal
//!   its msg_len completes. A WRITE without immediate completes silently; a
//!   SEND consumes the receive at its rq_seq and a WRITE_IMM the stream's
//!   next one, through `m_consume_*` (to `recv_match.s_consume_*`) and the
//!   answer on `s_cons_*` (`recv_match.m_cons_*`). A consumed receive gives
//!   one `m_cqe_*` entry (wr_id, opcode RECV (2) or RECV_RDMA_WITH_IMM (3),
//!   the local connection id, stream, byte_len = msg_len, imm); a receive
//!   not posted yet leaves the message waiting (its data is placed, only the
//!   completion waits) until `s_post_*` says a receive was posted on that
//!   stream. Every step that moves `completed_msn` or the active bit is
//!   published on `m_st_*` (to `conn_table.s_st_*`): what SACKs and PROBE
//!   answers report.
//! - `s_open_*`: a connection is (re)opened: every stream of it restarts at
//!   msn 0, inactive, with an empty message table (one stream per cycle).
//!
//! # Timing
//! A state machine does one step per cycle: count one DMA completion, or
//! one drain step (complete a WRITE, or send a consume), or take the
//! consume's answer and push the CQE, or an open's stream reset. `s_new` is
//! taken every cycle the pending FIFO has room. `m_consume`, `m_cqe` and
//! `m_st` are FIFOs; a step that pushes waits for room. The tables are
//! registers here; the RTL will keep them in memory with the read latency
//! and forwarding of the other blocks.
//!
//! # Not here
//! The reference's message checks before a packet is accepted (msn beyond
//! the message window, a packet that disagrees with its message's kind,
//! length or immediate, bytes beyond msg_len) read this table before
//! `sack_gen`; they are not a port of this block yet. An entry whose slot
//! holds another live message is refused with `stat_msg_err`.

use std::collections::VecDeque;

use mrnic_proto::config::Config;

use crate::block::{channel_ports, Bits, Block, Fields, PortDef, PortMap};

/// Module name, shared with the Verilog.
pub const NAME: &str = "cpl_engine";
const SEQ_MASK: u32 = (1 << 24) - 1;

/// `m_cqe_opcode` values (the reference's `CqOpcode` order).
pub const OPCODE_RECV: u8 = 2;
pub const OPCODE_RECV_RDMA_WITH_IMM: u8 = 3;
/// `s_dma_status` OK.
pub const DMA_OK: u8 = 0;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cpl_engine: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `cpl_engine`, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CplEngineParams {
    pub conns: u32,
    pub conn_bits: u32,
    pub streams: u32,
    pub stream_bits: u32,
    /// `hardware.msg_table_depth`: messages per stream in the table.
    pub msg_depth: u32,
    /// Pending FIFO entries: placements between `s_new` and their DMA
    /// completion (`2 * hardware.axi_outstanding`).
    pub pending: u32,
}

impl CplEngineParams {
    pub fn from_config(cfg: &Config) -> Result<CplEngineParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        let (conns, streams, depth) =
            (cfg.transport.connections, cfg.transport.streams_per_conn, cfg.hardware.msg_table_depth);
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24");
        }
        if streams == 0 || !streams.is_power_of_two() || streams > 256 {
            return bad("transport.streams_per_conn", streams, "must be a power of 2 in 1..=256");
        }
        if depth == 0 || !depth.is_power_of_two() {
            return bad("hardware.msg_table_depth", depth, "must be a power of 2 (the slot is msn mod depth)");
        }
        Ok(CplEngineParams {
            conns,
            conn_bits: Config::index_bits(conns),
            streams,
            stream_bits: Config::index_bits(streams),
            msg_depth: depth,
            pending: (2 * cfg.hardware.axi_outstanding).next_power_of_two(),
        })
    }

    pub fn new_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream"),
            ("msn", 24, "message"),
            ("payload_len", 16, "payload bytes, counted once"),
            ("tag", 16, "the tag its placement got at dma_write_engine"),
            ("send", 1, "SEND or SEND_IMM (else WRITE or WRITE_IMM)"),
            ("msg_len", 32, "message length"),
            ("imm_valid", 1, "the message carries immediate data"),
            ("imm", 32, "the immediate"),
            ("rq_seq", 24, "SEND: the receive it consumes"),
            ("conn_id", 24, "the local connection id (CQE conn)"),
        ]
    }

    pub fn dma_fields(&self) -> Fields {
        vec![("tag", 16, "placement tag"), ("status", 2, "0 OK, 1 ACCESS, 2 AXI error")]
    }

    pub fn cons_fields(&self) -> Fields {
        vec![
            ("ok", 1, "a receive was consumed"),
            ("rq_seq", 24, "its rq_seq"),
            ("wr_id", 64, "its work request id"),
            ("len", 32, "its length"),
        ]
    }

    pub fn post_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream a receive was posted on"),
        ]
    }

    pub fn open_fields(&self) -> Fields {
        vec![("conn", self.conn_bits, "connection slot being opened")]
    }

    pub fn consume_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream"),
            ("imm", 1, "WRITE_IMM: the next receive in order"),
            ("rq_seq", 24, "SEND: its rq_seq"),
        ]
    }

    pub fn cqe_fields(&self) -> Fields {
        vec![
            ("wr_id", 64, "the receive's work request id"),
            ("status", 2, "0 success"),
            ("opcode", 2, "2 RECV, 3 RECV_RDMA_WITH_IMM"),
            ("conn", 24, "local connection id"),
            ("stream", 8, "stream"),
            ("byte_len", 32, "message length"),
            ("imm_valid", 1, "imm holds immediate data"),
            ("imm", 32, "immediate data"),
        ]
    }

    pub fn st_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream"),
            ("clear", 1, "zero every stream of the connection (an open)"),
            ("completed_msn", 24, "the stream's oldest incomplete msn"),
            ("active", 1, "a message was accepted on the stream"),
        ]
    }
}

/// Port list, in declaration order.
pub fn ports(p: &CplEngineParams) -> Vec<PortDef> {
    let mut v =
        vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; empties every table")];
    channel_ports(&mut v, "s_new", true, "Accepted packets", &p.new_fields());
    channel_ports(&mut v, "s_dma", true, "DMA completions", &p.dma_fields());
    channel_ports(&mut v, "s_post", true, "Receive posted", &p.post_fields());
    channel_ports(&mut v, "s_open", true, "Connection opened", &p.open_fields());
    channel_ports(&mut v, "m_consume", false, "Consume request", &p.consume_fields());
    channel_ports(&mut v, "s_cons", true, "Consume answer", &p.cons_fields());
    channel_ports(&mut v, "m_cqe", false, "Completion queue entries", &p.cqe_fields());
    channel_ports(&mut v, "m_st", false, "Stream state", &p.st_fields());
    for (n, c) in [
        ("stat_dma_err", "pulse: a placement failed in DMA; its bytes are not counted"),
        ("stat_order_err", "pulse: a DMA completion's tag is not the pending head's"),
        ("stat_msg_err", "pulse: a packet's message slot holds another live message"),
        ("stat_recv_cpl", "pulse: a receive completion was raised (recv_completions)"),
    ] {
        v.push(PortDef::output(n, 1, "Counters", c));
    }
    v
}

/// An accepted packet, as `s_new_*` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NewPkt {
    pub conn: u32,
    pub stream: u32,
    pub msn: u32,
    pub payload_len: u16,
    pub tag: u16,
    pub send: bool,
    pub msg_len: u32,
    pub imm: Option<u32>,
    pub rq_seq: u32,
    pub conn_id: u32,
}

/// A consume request on `m_consume_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Consume {
    pub conn: u32,
    pub stream: u32,
    pub imm: bool,
    pub rq_seq: u32,
}

/// recv_match's answer on `s_cons_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConsAnswer {
    pub ok: bool,
    pub rq_seq: u32,
    pub wr_id: u64,
    pub len: u32,
}

/// A completion queue entry on `m_cqe_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cqe {
    pub wr_id: u64,
    pub opcode: u8,
    pub conn: u32,
    pub stream: u8,
    pub byte_len: u32,
    pub imm: Option<u32>,
}

/// A stream state publication on `m_st_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StPub {
    pub conn: u32,
    pub stream: u32,
    pub clear: bool,
    pub completed_msn: u32,
    pub active: bool,
}

/// Counter pulses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub dma_err: bool,
    pub order_err: bool,
    pub msg_err: bool,
    pub recv_cpl: bool,
}

/// Inputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub new: Option<NewPkt>,
    /// (tag, status)
    pub dma: Option<(u16, u8)>,
    /// (conn, stream)
    pub post: Option<(u32, u32)>,
    pub open: Option<u32>,
    pub cons: Option<ConsAnswer>,
    pub consume_ready: bool,
    pub cqe_ready: bool,
    pub st_ready: bool,
}

/// Outputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outputs {
    pub new_ready: bool,
    pub dma_ready: bool,
    /// Low while a DMA completion is offered and taken first.
    pub post_ready: bool,
    pub open_ready: bool,
    pub cons_ready: bool,
    pub consume: Option<Consume>,
    pub cqe: Option<Cqe>,
    pub st: Option<StPub>,
    pub stats: Stats,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Msg {
    msn: u32,
    send: bool,
    msg_len: u32,
    imm: Option<u32>,
    rq_seq: u32,
    conn_id: u32,
    bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stream {
    next_complete: u32,
    next_consume: u32,
    active: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    /// Walking a stream's completed messages in msn order.
    Drain(u32, u32),
    /// A consume request is out for the stream's head message.
    WaitCons(u32, u32),
    /// Resetting the streams of a connection being opened: next stream.
    Open(u32, u32),
}

/// Output FIFO entries.
const OUT_DEPTH: usize = 4;

/// The cycle-accurate `cpl_engine`. See the module docs.
pub struct CplEngine {
    p: CplEngineParams,
    ports: Vec<PortDef>,
    pending: VecDeque<NewPkt>,
    msgs: Vec<Option<Msg>>,
    streams: Vec<Stream>,
    state: State,
    consumes: VecDeque<Consume>,
    cqes: VecDeque<Cqe>,
    sts: VecDeque<StPub>,
    stats: Stats,
}

impl CplEngine {
    pub fn new(p: CplEngineParams) -> CplEngine {
        let qs = (p.conns * p.streams) as usize;
        CplEngine {
            ports: ports(&p),
            pending: VecDeque::new(),
            msgs: vec![None; qs * p.msg_depth as usize],
            streams: vec![Stream::default(); qs],
            state: State::Idle,
            consumes: VecDeque::new(),
            cqes: VecDeque::new(),
            sts: VecDeque::new(),
            stats: Stats::default(),
            p,
        }
    }

    pub fn params(&self) -> &CplEngineParams {
        &self.p
    }

    /// A stream's oldest incomplete msn.
    pub fn completed_msn(&self, conn: u32, stream: u32) -> u32 {
        self.streams[self.q(conn, stream)].next_complete
    }

    /// Nothing pending, no step running, every output FIFO empty.
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
            && self.state == State::Idle
            && self.consumes.is_empty()
            && self.cqes.is_empty()
            && self.sts.is_empty()
    }

    fn q(&self, conn: u32, stream: u32) -> usize {
        (conn * self.p.streams + stream) as usize
    }

    fn slot(&self, conn: u32, stream: u32, msn: u32) -> usize {
        self.q(conn, stream) * self.p.msg_depth as usize + (msn & (self.p.msg_depth - 1)) as usize
    }

    pub fn outputs(&self, dma_valid: bool) -> Outputs {
        let idle = self.state == State::Idle;
        let room = self.sts.len() < OUT_DEPTH;
        let dma_ready = idle && room && !self.pending.is_empty();
        Outputs {
            new_ready: self.pending.len() < self.p.pending as usize,
            dma_ready,
            post_ready: idle && !(dma_valid && dma_ready),
            open_ready: idle && !(dma_valid && dma_ready),
            cons_ready: matches!(self.state, State::WaitCons(..)) && self.cqes.len() < OUT_DEPTH && room,
            consume: self.consumes.front().copied(),
            cqe: self.cqes.front().copied(),
            st: self.sts.front().copied(),
            stats: self.stats,
        }
    }

    fn publish(&mut self, conn: u32, stream: u32) {
        let s = self.streams[self.q(conn, stream)];
        self.sts.push_back(StPub { conn, stream, clear: false, completed_msn: s.next_complete, active: s.active });
    }

    /// Completes the stream's head message: removes it and moves on.
    fn advance(&mut self, conn: u32, stream: u32) {
        let q = self.q(conn, stream);
        let slot = self.slot(conn, stream, self.streams[q].next_complete);
        self.msgs[slot] = None;
        self.streams[q].next_complete = (self.streams[q].next_complete + 1) & SEQ_MASK;
        self.publish(conn, stream);
    }

    /// The rising clock edge.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs(inp.dma.is_some());
        if inp.rst {
            *self = CplEngine::new(self.p);
            return;
        }
        if out.consume.is_some() && inp.consume_ready {
            self.consumes.pop_front();
        }
        if out.cqe.is_some() && inp.cqe_ready {
            self.cqes.pop_front();
        }
        if out.st.is_some() && inp.st_ready {
            self.sts.pop_front();
        }
        self.stats = Stats::default();
        let (cmask, smask) = (self.p.conns - 1, self.p.streams - 1);
        match self.state {
            State::Idle => {
                if let (Some((tag, status)), true) = (inp.dma, out.dma_ready) {
                    let k = self.pending.pop_front().expect("dma_ready needs a pending entry");
                    if tag != k.tag {
                        self.stats.order_err = true;
                    } else if status != DMA_OK {
                        self.stats.dma_err = true;
                    } else {
                        self.count(&k);
                    }
                } else if let (Some((c, s)), true) = (inp.post, out.post_ready) {
                    self.state = State::Drain(c & cmask, s & smask);
                } else if let (Some(c), true) = (inp.open, out.open_ready) {
                    self.state = State::Open(c & cmask, 0);
                }
            }
            State::Drain(c, s) => self.drain_step(c, s),
            State::WaitCons(c, s) => {
                if let (Some(a), true) = (inp.cons, out.cons_ready) {
                    if a.ok {
                        let q = self.q(c, s);
                        let st = self.streams[q];
                        let m = self.msgs[self.slot(c, s, st.next_complete)].expect("the head message waits");
                        self.streams[q].next_consume = (a.rq_seq + 1) & SEQ_MASK;
                        self.cqes.push_back(Cqe {
                            wr_id: a.wr_id,
                            opcode: if m.send { OPCODE_RECV } else { OPCODE_RECV_RDMA_WITH_IMM },
                            conn: m.conn_id,
                            stream: s as u8,
                            byte_len: m.msg_len,
                            imm: m.imm,
                        });
                        self.stats.recv_cpl = true;
                        self.advance(c, s);
                        self.state = State::Drain(c, s);
                    } else {
                        // Not posted yet: the message waits for s_post.
                        self.state = State::Idle;
                    }
                }
            }
            State::Open(c, s) => {
                if self.sts.len() < OUT_DEPTH {
                    let q = self.q(c, s);
                    self.streams[q] = Stream::default();
                    for d in 0..self.p.msg_depth as usize {
                        self.msgs[q * self.p.msg_depth as usize + d] = None;
                    }
                    if s == 0 {
                        self.sts.push_back(StPub { conn: c, stream: 0, clear: true, completed_msn: 0, active: false });
                    }
                    self.state = if s == smask { State::Idle } else { State::Open(c, s + 1) };
                }
            }
        }
        if let (Some(k), true) = (inp.new, out.new_ready) {
            self.pending.push_back(NewPkt {
                conn: k.conn & cmask,
                stream: k.stream & smask,
                msn: k.msn & SEQ_MASK,
                ..k
            });
        }
    }

    /// A DMA completion of an accepted packet: its bytes count once.
    fn count(&mut self, k: &NewPkt) {
        let q = self.q(k.conn, k.stream);
        let slot = self.slot(k.conn, k.stream, k.msn);
        let m = self.msgs[slot].get_or_insert(Msg {
            msn: k.msn,
            send: k.send,
            msg_len: k.msg_len,
            imm: k.imm,
            rq_seq: k.rq_seq,
            conn_id: k.conn_id,
            bytes: 0,
        });
        if m.msn != k.msn {
            self.stats.msg_err = true;
            return;
        }
        m.bytes += u64::from(k.payload_len);
        let st = self.streams[q];
        if !st.active {
            self.streams[q].active = true;
            self.publish(k.conn, k.stream);
        }
        if k.msn == st.next_complete {
            self.state = State::Drain(k.conn, k.stream);
        }
    }

    /// One step of walking a stream in msn order.
    fn drain_step(&mut self, c: u32, s: u32) {
        let st = self.streams[self.q(c, s)];
        let Some(m) = self.msgs[self.slot(c, s, st.next_complete)] else {
            self.state = State::Idle;
            return;
        };
        if m.msn != st.next_complete || m.bytes != u64::from(m.msg_len) {
            self.state = State::Idle;
            return;
        }
        if !m.send && m.imm.is_none() {
            if self.sts.len() < OUT_DEPTH {
                self.advance(c, s);
            }
            return;
        }
        if self.consumes.len() < OUT_DEPTH {
            let rq_seq = if m.send { m.rq_seq } else { st.next_consume };
            self.consumes.push_back(Consume { conn: c, stream: s, imm: !m.send, rq_seq });
            self.state = State::WaitCons(c, s);
        }
    }
}

impl Block for CplEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let pm = PortMap { ports: &self.ports };
        let o = self.outputs(pm.get(inputs, "s_dma_valid") == 1);
        let c = o.consume.unwrap_or_default();
        let e = o.cqe.unwrap_or_default();
        let s = o.st.unwrap_or_default();
        for (n, v) in [
            ("s_new_ready", o.new_ready as u64),
            ("s_dma_ready", o.dma_ready as u64),
            ("s_post_ready", o.post_ready as u64),
            ("s_open_ready", o.open_ready as u64),
            ("s_cons_ready", o.cons_ready as u64),
            ("m_consume_valid", o.consume.is_some() as u64),
            ("m_consume_conn", c.conn as u64),
            ("m_consume_stream", c.stream as u64),
            ("m_consume_imm", c.imm as u64),
            ("m_consume_rq_seq", c.rq_seq as u64),
            ("m_cqe_valid", o.cqe.is_some() as u64),
            ("m_cqe_wr_id", e.wr_id),
            ("m_cqe_status", 0),
            ("m_cqe_opcode", e.opcode as u64),
            ("m_cqe_conn", e.conn as u64),
            ("m_cqe_stream", e.stream as u64),
            ("m_cqe_byte_len", e.byte_len as u64),
            ("m_cqe_imm_valid", e.imm.is_some() as u64),
            ("m_cqe_imm", e.imm.unwrap_or(0) as u64),
            ("m_st_valid", o.st.is_some() as u64),
            ("m_st_conn", s.conn as u64),
            ("m_st_stream", s.stream as u64),
            ("m_st_clear", s.clear as u64),
            ("m_st_completed_msn", s.completed_msn as u64),
            ("m_st_active", s.active as u64),
            ("stat_dma_err", o.stats.dma_err as u64),
            ("stat_order_err", o.stats.order_err as u64),
            ("stat_msg_err", o.stats.msg_err as u64),
            ("stat_recv_cpl", o.stats.recv_cpl as u64),
        ] {
            pm.set(outputs, n, v);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let pm = PortMap { ports: &self.ports };
        let g = |n: &str| pm.get(inputs, n);
        let inp = Inputs {
            rst: g("rst") == 1,
            new: (g("s_new_valid") == 1).then(|| NewPkt {
                conn: g("s_new_conn") as u32,
                stream: g("s_new_stream") as u32,
                msn: g("s_new_msn") as u32,
                payload_len: g("s_new_payload_len") as u16,
                tag: g("s_new_tag") as u16,
                send: g("s_new_send") == 1,
                msg_len: g("s_new_msg_len") as u32,
                imm: (g("s_new_imm_valid") == 1).then(|| g("s_new_imm") as u32),
                rq_seq: g("s_new_rq_seq") as u32,
                conn_id: g("s_new_conn_id") as u32,
            }),
            dma: (g("s_dma_valid") == 1).then(|| (g("s_dma_tag") as u16, g("s_dma_status") as u8)),
            post: (g("s_post_valid") == 1).then(|| (g("s_post_conn") as u32, g("s_post_stream") as u32)),
            open: (g("s_open_valid") == 1).then(|| g("s_open_conn") as u32),
            cons: (g("s_cons_valid") == 1).then(|| ConsAnswer {
                ok: g("s_cons_ok") == 1,
                rq_seq: g("s_cons_rq_seq") as u32,
                wr_id: g("s_cons_wr_id"),
                len: g("s_cons_len") as u32,
            }),
            consume_ready: g("m_consume_ready") == 1,
            cqe_ready: g("m_cqe_ready") == 1,
            st_ready: g("m_st_ready") == 1,
        };
        self.clock(&inp);
    }
}
