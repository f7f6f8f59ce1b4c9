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
//! # Timing (read latency `L` = `hardware.table_read_latency`)
//! One operation at a time, each a read of the tables then an act:
//! - count: the `s_dma` handshake (cycle `t`) pops the pending head and
//!   reads the stream word and the message slot; at `t+L` the bytes count,
//!   both are written back, and when the message is the stream's oldest the
//!   stage drains it;
//! - drain: reads the message slot at the stream's completed_msn (one cycle
//!   after any write, so it never needs forwarding); at `+L` it completes a
//!   WRITE (and drains on), sends a consume and waits for its answer, or
//!   stops; the answer completes the message and drains on;
//! - `s_post` reads the stream word and then drains; `s_open` writes a zero
//!   stream word per cycle.
//!
//! In IDLE a DMA answer goes before a post, and a post before an open,
//! except that a post or open refused in the previous IDLE cycle goes first
//! (an open before a post): under a steady stream of DMA answers a waiting
//! post or open is taken within two operations, not starved. The rule reads
//! only registers for `s_dma_ready`.
//!
//! `idle` is high in IDLE with the pending FIFO and the `m_st` FIFO empty
//! (registers only): every packet handed over is counted and drained as
//! far as it goes and published, so the stream state conn_table holds (or
//! the last `m_st` update) is what a SACK for it reports.
//!
//! `s_new` is taken every cycle the pending FIFO has room. `m_consume`,
//! `m_cqe` and `m_st` are FIFOs of 4; an act that pushes waits (holding its
//! read data) until there is room.
//!
//! # Memories
//! `msg_mem` (`CONNS x STREAMS x DEPTH` message slots) needs no clearing:
//! the stream word (`st_mem`, `CONNS x STREAMS`) keeps a valid bit per slot,
//! and the reset sweep zeroes only the stream words.
//!
//! # Not here
//! The reference's message checks before a packet is accepted (msn beyond
//! the message window, a packet that disagrees with its message's kind,
//! length or immediate, bytes beyond msg_len) read this table before
//! `sack_gen`; they are not a port of this block yet. An entry whose slot
//! holds another live message is refused with `stat_msg_err`.

use std::collections::VecDeque;

use mrnic_proto::config::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};

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
    pub read_latency: u32,
}

impl CplEngineParams {
    pub fn from_config(cfg: &Config) -> Result<CplEngineParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        let (conns, streams, depth) =
            (cfg.transport.connections, cfg.transport.streams_per_conn, cfg.hardware.msg_table_depth);
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24");
        }
        if streams < 2 || !streams.is_power_of_two() || streams > 256 {
            return bad("transport.streams_per_conn", streams, "must be a power of 2 in 2..=256");
        }
        if !(2..=64).contains(&depth) || !depth.is_power_of_two() {
            return bad(
                "hardware.msg_table_depth",
                depth,
                "must be a power of 2 in 2..=64 (the slot is msn mod depth; the stream word has a valid bit per slot)",
            );
        }
        let l = cfg.hardware.table_read_latency;
        if !(1..=2).contains(&l) {
            return bad("hardware.table_read_latency", l, "the table memories support 1 or 2 cycles");
        }
        Ok(CplEngineParams {
            conns,
            conn_bits: Config::index_bits(conns),
            streams,
            stream_bits: Config::index_bits(streams),
            msg_depth: depth,
            pending: (2 * cfg.hardware.axi_outstanding).next_power_of_two(),
            read_latency: l,
        })
    }

    pub fn new_fields(&self) -> Fields {
        let mut f = vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream"),
            ("msn", 24, "message"),
            ("payload_len", 16, "payload bytes, counted once"),
            ("tag", 16, "the tag its placement got at dma_write_engine"),
        ];
        f.extend(message_fields());
        f.push(("rq_seq", 24, "SEND: the receive it consumes"));
        f.push(("conn_id", 24, "the local connection id (CQE conn)"));
        f
    }

    pub fn dma_fields(&self) -> Fields {
        vec![("tag", 16, "placement tag"), ("status", 2, "0 OK, 1 ACCESS, 2 AXI error")]
    }

    pub fn cons_fields(&self) -> Fields {
        vec![("ok", 1, "a receive was consumed"), ("rq_seq", 24, "its rq_seq"), ("wr_id", 64, "its work request id")]
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

    /// Width of a stream word: next_complete, next_consume, active, one
    /// valid bit per message slot (LSB first).
    pub fn stream_word_bits(&self) -> u32 {
        24 + 24 + 1 + self.msg_depth
    }

    /// Width of a message slot: msn, send, msg_len, imm_valid, imm, rq_seq,
    /// conn_id, bytes (LSB first).
    pub fn msg_word_bits(&self) -> u32 {
        24 + 1 + 32 + 1 + 32 + 24 + 24 + 32
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

/// What every packet of a message says of it, and must say alike: its kind,
/// length and immediate (here and in [`crate::msg_check`]).
pub fn message_fields() -> Fields {
    vec![
        ("send", 1, "SEND or SEND_IMM (else WRITE or WRITE_IMM)"),
        ("msg_len", 32, "message length"),
        ("imm_valid", 1, "the message carries immediate data"),
        ("imm", 32, "the immediate"),
    ]
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
    v.push(PortDef::output(
        "idle",
        1,
        "Status",
        "every s_new entry is counted and drained as far as it goes, and every m_st update taken",
    ));
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
    /// Nothing pending, nothing in progress, no stream update unpublished:
    /// what a SACK for the last packet handed over may report.
    pub idle: bool,
}

/// A message slot (`msg_mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Msg {
    pub msn: u32,
    pub send: bool,
    pub msg_len: u32,
    pub imm: Option<u32>,
    pub rq_seq: u32,
    pub conn_id: u32,
    /// Bytes counted (32 bits, wrapping).
    pub bytes: u32,
}

/// A stream word (`st_mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stream {
    pub next_complete: u32,
    pub next_consume: u32,
    pub active: bool,
    /// Bit i: message slot i holds a live message.
    pub valid: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reset sweep: the stream word being zeroed.
    Init(u32),
    Idle,
    /// Count: reads out, act when the wait ends.
    CountRd,
    /// Drain: read the message at completed_msn this cycle.
    Drain,
    DrainRd,
    /// A consume request is out for the head message.
    WaitCons,
    /// s_post: the stream word's read is out.
    PostRd,
    /// Zeroing the stream words of an opened connection: this stream.
    Open(u32),
}

/// Output FIFO entries.
pub const OUT_DEPTH: usize = 4;

/// The cycle-accurate `cpl_engine`. See the module docs.
pub struct CplEngine {
    p: CplEngineParams,
    ports: Vec<PortDef>,
    ids: Ids,
    pending: VecDeque<NewPkt>,
    msg_mem: Vec<Msg>,
    st_mem: Vec<Stream>,
    state: State,
    /// Cycles left before the read data is there.
    wait: u32,
    /// The operation's queue.
    conn: u32,
    stream: u32,
    /// Count: the packet, whether its tag matched, the DMA status.
    pkt: NewPkt,
    tag_ok: bool,
    status: u8,
    /// The stream word being worked on, and the message a consume waits for.
    stw: Stream,
    msg: Msg,
    rd_st: Stream,
    rd_msg: Msg,
    consumes: VecDeque<Consume>,
    cqes: VecDeque<Cqe>,
    sts: VecDeque<StPub>,
    stats: Stats,
    /// A post or open was offered in the last IDLE cycle and not taken: the
    /// next IDLE cycle is theirs, so a steady stream of DMA answers cannot
    /// hold a receive's completion back for as long as traffic lasts.
    lower_wait: bool,
    /// Of the two, it was the open: it goes before the post, so a steady
    /// stream of posts cannot hold a connection setup back either.
    open_first: bool,
}

impl CplEngine {
    /// A block in the state `rst` leaves it in (sweep pending).
    pub fn new(p: CplEngineParams) -> CplEngine {
        let qs = (p.conns * p.streams) as usize;
        let ports = ports(&p);
        CplEngine {
            ids: Ids::new(&ports),
            ports,
            pending: VecDeque::new(),
            msg_mem: vec![Msg::default(); qs * p.msg_depth as usize],
            st_mem: vec![Stream::default(); qs],
            state: State::Init(0),
            wait: 0,
            conn: 0,
            stream: 0,
            pkt: NewPkt::default(),
            tag_ok: false,
            status: 0,
            stw: Stream::default(),
            msg: Msg::default(),
            rd_st: Stream::default(),
            rd_msg: Msg::default(),
            consumes: VecDeque::new(),
            cqes: VecDeque::new(),
            sts: VecDeque::new(),
            stats: Stats::default(),
            lower_wait: false,
            open_first: false,
            p,
        }
    }

    pub fn params(&self) -> &CplEngineParams {
        &self.p
    }

    pub fn initializing(&self) -> bool {
        matches!(self.state, State::Init(_))
    }

    /// A stream's oldest incomplete msn (as stored).
    pub fn completed_msn(&self, conn: u32, stream: u32) -> u32 {
        self.st_mem[self.q(conn, stream)].next_complete
    }

    /// Nothing pending, no operation running, every output FIFO empty.
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

    fn slot(&self, msn: u32) -> u32 {
        msn & (self.p.msg_depth - 1)
    }

    fn msg_addr(&self, conn: u32, stream: u32, msn: u32) -> usize {
        self.q(conn, stream) * self.p.msg_depth as usize + self.slot(msn) as usize
    }

    /// Outputs; `dma_valid` and `post_valid` are the inputs the lower
    /// channels' `ready` depends on.
    pub fn outputs(&self, dma_valid: bool, post_valid: bool) -> Outputs {
        let idle = self.state == State::Idle;
        let init = self.initializing();
        let dma_ready = idle && !self.pending.is_empty() && !self.lower_wait;
        let dma_take = dma_valid && dma_ready;
        Outputs {
            new_ready: !init && self.pending.len() < self.p.pending as usize,
            dma_ready,
            post_ready: idle && !dma_take && !self.open_first,
            open_ready: idle && !dma_take && (!post_valid || self.open_first),
            cons_ready: self.state == State::WaitCons && self.cqes.len() < OUT_DEPTH && self.sts.len() < OUT_DEPTH,
            consume: self.consumes.front().copied(),
            cqe: self.cqes.front().copied(),
            st: self.sts.front().copied(),
            idle: idle && self.pending.is_empty() && self.sts.is_empty(),
            stats: self.stats,
        }
    }

    fn publish(&mut self, clear: bool) {
        let w = self.stw;
        self.sts.push_back(StPub {
            conn: self.conn,
            stream: self.stream,
            clear,
            completed_msn: w.next_complete,
            active: w.active,
        });
    }

    /// Completes the head message of the worked stream: frees its slot,
    /// moves completed_msn on, writes and publishes the stream word.
    fn advance(&mut self) {
        let slot = self.slot(self.stw.next_complete);
        self.stw.valid &= !(1u64 << slot);
        self.stw.next_complete = (self.stw.next_complete + 1) & SEQ_MASK;
        let q = self.q(self.conn, self.stream);
        self.st_mem[q] = self.stw;
        self.publish(false);
        self.state = State::Drain;
    }

    /// Issues the reads of an operation; its act comes `L` cycles later.
    fn read(&mut self, next: State, msg_at: Option<u32>) {
        let q = self.q(self.conn, self.stream);
        self.rd_st = self.st_mem[q];
        if let Some(msn) = msg_at {
            self.rd_msg = self.msg_mem[self.msg_addr(self.conn, self.stream, msn)];
        }
        self.wait = self.p.read_latency - 1;
        self.state = next;
    }

    /// The rising clock edge.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs(inp.dma.is_some(), inp.post.is_some());
        // Acts that push wait for room, judged on the counts before this
        // edge's pops (registers only, as in the RTL).
        let room_st = self.sts.len() < OUT_DEPTH;
        let room_consume = self.consumes.len() < OUT_DEPTH;
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
        if self.state == State::Idle {
            let open_refused = inp.open.is_some() && !out.open_ready;
            self.lower_wait = (inp.post.is_some() && !out.post_ready) || open_refused;
            self.open_first = open_refused;
        }
        let (cmask, smask) = (self.p.conns - 1, self.p.streams - 1);
        match self.state {
            State::Init(a) => {
                self.st_mem[a as usize] = Stream::default();
                let last = self.p.conns * self.p.streams - 1;
                self.state = if a == last { State::Idle } else { State::Init(a + 1) };
            }
            State::Idle => {
                if let (Some((tag, status)), true) = (inp.dma, out.dma_ready) {
                    let k = self.pending.pop_front().expect("dma_ready needs a pending entry");
                    (self.conn, self.stream, self.pkt, self.tag_ok, self.status) =
                        (k.conn, k.stream, k, tag == k.tag, status);
                    self.read(State::CountRd, Some(k.msn));
                } else if let (Some((c, s)), true) = (inp.post, out.post_ready) {
                    (self.conn, self.stream) = (c & cmask, s & smask);
                    self.read(State::PostRd, None);
                } else if let (Some(c), true) = (inp.open, out.open_ready) {
                    (self.conn, self.stream) = (c & cmask, 0);
                    self.state = State::Open(0);
                }
            }
            State::CountRd if self.wait > 0 => self.wait -= 1,
            State::CountRd => {
                if room_st {
                    self.count();
                }
            }
            State::Drain => {
                let nc = self.stw.next_complete;
                self.read(State::DrainRd, Some(nc));
            }
            State::DrainRd if self.wait > 0 => self.wait -= 1,
            State::DrainRd => self.drain_act(room_st, room_consume),
            State::WaitCons => {
                if let (Some(a), true) = (inp.cons, out.cons_ready) {
                    if a.ok {
                        let m = self.msg;
                        self.cqes.push_back(Cqe {
                            wr_id: a.wr_id,
                            opcode: if m.send { OPCODE_RECV } else { OPCODE_RECV_RDMA_WITH_IMM },
                            conn: m.conn_id,
                            stream: self.stream as u8,
                            byte_len: m.msg_len,
                            imm: m.imm,
                        });
                        self.stats.recv_cpl = true;
                        self.stw.next_consume = (a.rq_seq + 1) & SEQ_MASK;
                        self.advance();
                    } else {
                        // Not posted yet: the message waits for s_post.
                        self.state = State::Idle;
                    }
                }
            }
            State::PostRd if self.wait > 0 => self.wait -= 1,
            State::PostRd => {
                self.stw = self.rd_st;
                self.state = State::Drain;
            }
            State::Open(s) => {
                if room_st {
                    self.stream = s;
                    self.stw = Stream::default();
                    let q = self.q(self.conn, s);
                    self.st_mem[q] = self.stw;
                    if s == 0 {
                        self.publish(true);
                    }
                    self.state = if s == smask { State::Idle } else { State::Open(s + 1) };
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

    /// The act of a count: the packet's bytes into its message, once.
    fn count(&mut self) {
        let k = self.pkt;
        self.state = State::Idle;
        if !self.tag_ok {
            self.stats.order_err = true;
            return;
        }
        if self.status != DMA_OK {
            self.stats.dma_err = true;
            return;
        }
        let mut st = self.rd_st;
        let bit = 1u64 << self.slot(k.msn);
        let live = st.valid & bit != 0;
        let mut m = if live {
            self.rd_msg
        } else {
            Msg {
                msn: k.msn,
                send: k.send,
                msg_len: k.msg_len,
                imm: k.imm,
                rq_seq: k.rq_seq,
                conn_id: k.conn_id,
                bytes: 0,
            }
        };
        if m.msn != k.msn {
            self.stats.msg_err = true;
            return;
        }
        m.bytes = m.bytes.wrapping_add(u32::from(k.payload_len));
        let addr = self.msg_addr(k.conn, k.stream, k.msn);
        self.msg_mem[addr] = m;
        let newly_active = !st.active;
        st.valid |= bit;
        st.active = true;
        let q = self.q(k.conn, k.stream);
        self.st_mem[q] = st;
        self.stw = st;
        if newly_active {
            self.publish(false);
        }
        if k.msn == st.next_complete {
            self.state = State::Drain;
        }
    }

    /// The act of a drain step on the message read at completed_msn.
    fn drain_act(&mut self, room_st: bool, room_consume: bool) {
        let m = self.rd_msg;
        let w = self.stw;
        let live = w.valid & (1u64 << self.slot(w.next_complete)) != 0;
        if !live || m.msn != w.next_complete || m.bytes != m.msg_len {
            self.state = State::Idle;
        } else if !m.send && m.imm.is_none() {
            if room_st {
                self.advance();
            }
        } else if room_consume {
            let rq_seq = if m.send { m.rq_seq } else { w.next_consume };
            self.consumes.push_back(Consume { conn: self.conn, stream: self.stream, imm: !m.send, rq_seq });
            self.msg = m;
            self.state = State::WaitCons;
        }
    }
}

crate::port_ids!(pub(crate) struct Ids {
    rst,
    s_new_valid, s_new_ready, s_new_conn, s_new_stream, s_new_msn, s_new_payload_len, s_new_tag, s_new_send,
    s_new_msg_len, s_new_imm_valid, s_new_imm, s_new_rq_seq, s_new_conn_id,
    s_dma_valid, s_dma_ready, s_dma_tag, s_dma_status,
    s_post_valid, s_post_ready, s_post_conn, s_post_stream,
    s_open_valid, s_open_ready, s_open_conn,
    m_consume_valid, m_consume_ready, m_consume_conn, m_consume_stream, m_consume_imm, m_consume_rq_seq,
    s_cons_valid, s_cons_ready, s_cons_ok, s_cons_rq_seq, s_cons_wr_id,
    m_cqe_valid, m_cqe_ready, m_cqe_wr_id, m_cqe_status, m_cqe_opcode, m_cqe_conn, m_cqe_stream, m_cqe_byte_len,
    m_cqe_imm_valid, m_cqe_imm,
    m_st_valid, m_st_ready, m_st_conn, m_st_stream, m_st_clear, m_st_completed_msn, m_st_active,
    stat_dma_err, stat_order_err, stat_msg_err, stat_recv_cpl, idle,
});

impl Block for CplEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        let o = self.outputs(inputs[ids.s_dma_valid].bit(0), inputs[ids.s_post_valid].bit(0));
        let c = o.consume.unwrap_or_default();
        let e = o.cqe.unwrap_or_default();
        let s = o.st.unwrap_or_default();
        for (i, v) in [
            (ids.s_new_ready, o.new_ready as u64),
            (ids.s_dma_ready, o.dma_ready as u64),
            (ids.s_post_ready, o.post_ready as u64),
            (ids.s_open_ready, o.open_ready as u64),
            (ids.s_cons_ready, o.cons_ready as u64),
            (ids.m_consume_valid, o.consume.is_some() as u64),
            (ids.m_consume_conn, c.conn as u64),
            (ids.m_consume_stream, c.stream as u64),
            (ids.m_consume_imm, c.imm as u64),
            (ids.m_consume_rq_seq, c.rq_seq as u64),
            (ids.m_cqe_valid, o.cqe.is_some() as u64),
            (ids.m_cqe_wr_id, e.wr_id),
            (ids.m_cqe_status, 0),
            (ids.m_cqe_opcode, e.opcode as u64),
            (ids.m_cqe_conn, e.conn as u64),
            (ids.m_cqe_stream, e.stream as u64),
            (ids.m_cqe_byte_len, e.byte_len as u64),
            (ids.m_cqe_imm_valid, e.imm.is_some() as u64),
            (ids.m_cqe_imm, e.imm.unwrap_or(0) as u64),
            (ids.m_st_valid, o.st.is_some() as u64),
            (ids.m_st_conn, s.conn as u64),
            (ids.m_st_stream, s.stream as u64),
            (ids.m_st_clear, s.clear as u64),
            (ids.m_st_completed_msn, s.completed_msn as u64),
            (ids.m_st_active, s.active as u64),
            (ids.stat_dma_err, o.stats.dma_err as u64),
            (ids.stat_order_err, o.stats.order_err as u64),
            (ids.stat_msg_err, o.stats.msg_err as u64),
            (ids.stat_recv_cpl, o.stats.recv_cpl as u64),
            (ids.idle, o.idle as u64),
        ] {
            put(&self.ports, outputs, i, v);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let g = |i: usize| inputs[i].as_u64();
        let inp = Inputs {
            rst: g(ids.rst) == 1,
            new: (g(ids.s_new_valid) == 1).then(|| NewPkt {
                conn: g(ids.s_new_conn) as u32,
                stream: g(ids.s_new_stream) as u32,
                msn: g(ids.s_new_msn) as u32,
                payload_len: g(ids.s_new_payload_len) as u16,
                tag: g(ids.s_new_tag) as u16,
                send: g(ids.s_new_send) == 1,
                msg_len: g(ids.s_new_msg_len) as u32,
                imm: (g(ids.s_new_imm_valid) == 1).then(|| g(ids.s_new_imm) as u32),
                rq_seq: g(ids.s_new_rq_seq) as u32,
                conn_id: g(ids.s_new_conn_id) as u32,
            }),
            dma: (g(ids.s_dma_valid) == 1).then(|| (g(ids.s_dma_tag) as u16, g(ids.s_dma_status) as u8)),
            post: (g(ids.s_post_valid) == 1).then(|| (g(ids.s_post_conn) as u32, g(ids.s_post_stream) as u32)),
            open: (g(ids.s_open_valid) == 1).then(|| g(ids.s_open_conn) as u32),
            cons: (g(ids.s_cons_valid) == 1).then(|| ConsAnswer {
                ok: g(ids.s_cons_ok) == 1,
                rq_seq: g(ids.s_cons_rq_seq) as u32,
                wr_id: g(ids.s_cons_wr_id),
            }),
            consume_ready: g(ids.m_consume_ready) == 1,
            cqe_ready: g(ids.m_cqe_ready) == 1,
            st_ready: g(ids.m_st_ready) == 1,
        };
        self.clock(&inp);
    }
}
