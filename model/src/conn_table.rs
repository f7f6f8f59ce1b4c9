//! `conn_table`: the connection context table. One slot per connection
//! (slot = the low `CB` bits of the local connection id; the entry keeps the
//! whole 24-bit id as its tag), holding `proto::tables::conn` (valid, local
//! id, the peer's id and address, paths in use), and per (connection,
//! stream) `proto::tables::conn_stream` (completed_msn, active) that the
//! completion stage publishes for SACKs and PROBE answers.
//!
//! # Function
//! - `s_wr_*` (host, through csr): opens or closes the connection whose
//!   local id is `s_wr_local_id`: the context is written whole at slot
//!   `local_id mod CONNS` (`entry_valid` = 0 closes it).
//! - `s_st_*` (completion stage): writes one stream's state at (conn,
//!   stream), or with `clear` = 1 zeroes every stream of the connection (a
//!   connection being opened starts from msn 0 on every stream, inactive).
//! - `s_lk_*` (receive path, one per parsed header): looks up `dst_conn`.
//!   A hit needs the slot valid and its local id equal to all 24 bits of
//!   `dst_conn`. Then, as the reference's `Nic::handle_datagram` and
//!   `RxConn::on_data`/`on_probe` do before anything else:
//!   - DATA or PROBE for no connection: `stat_no_conn` (`rx_no_conn`) and a
//!     NO_CONN (3) NACK on `m_nack_*` back to the sender (`src_addr`, its
//!     UDP source port and plane) naming the unknown id, with the packet's
//!     path id, generation, psn, tx_ts echoed, and its stream and msn
//!     (PROBE: 0 and 0);
//!   - DATA or PROBE for an open connection from an IPv4 source that is not
//!     its peer (`src_addr` != `remote_addr`): `stat_bad_src`
//!     (`rx_bad_src`), dropped, not answered: a connection is bound to its
//!     peer's address, so a spoofed source can neither write nor aim our
//!     answers; SACK or NACK from such a source: `stat_ack_bad_src`
//!     (`ack_bad_src`), dropped (a spoofed SACK would complete sends never
//!     delivered);
//!   - DATA or PROBE on a path at or above the connection's `paths`:
//!     `stat_bad_path` (`rx_bad_path`); DATA is answered with a BAD_HDR (4)
//!     NACK to the peer (`remote_addr`, `remote_id`) at the trigger's port
//!     and plane, a PROBE is not answered;
//!   - SACK or NACK (`op` = ACK) for no connection: `stat_ack_no_conn`
//!     (`ack_no_conn`); nothing is sent.
//!
//!   Every lookup answers on `m_lk_*`, in order, hit or not (`ok` says
//!   whether the packet goes on; a packet that does not must have its
//!   payload drained by the stage that holds it), with the context, the
//!   connection index, and every stream's state (`active` bit i, and
//!   `msns` 24 bits per stream, stream 0 lowest).
//! - `s_rd_*` (transmit side): reads the context of a slot by index; the
//!   answer on `m_rd_*` in order.
//!
//! # Timing (read latency `L` = `hardware.table_read_latency`, 1 or 2)
//! ```text
//! cycle a       s_lk / s_rd handshake; context and stream memories read
//! cycle a+L     read data, with the writes made since (forwarded) -> hit,
//!               path check, NACK; pushed into the output FIFOs
//! cycle a+L+1   m_lk / m_nack / m_rd valid; stat_* pulses
//! ```
//! Latency `L + 1`; one lookup and one read per cycle, sustained, while the
//! outputs are taken; `s_wr` and `s_st` take one write each per cycle.
//!
//! # Writes and forwarding
//! A write handshaken in cycle `w` is in the memory from cycle `w+1`. A read
//! made at the handshake of cycle `a` cannot see the writes of cycles
//! `a..a+L-1`; the block keeps those (the last `L` cycles' writes) in
//! registers and the answer stage applies the matching ones, oldest first,
//! so an answer reflects every write handshaken before its answer cycle
//! `a+L`: an update right before or right after a lookup of the same
//! connection is never lost and never stalls. The context memory has a
//! second copy that serves `s_rd` (one read port each; `s_wr` writes both).
//! The stream state is one memory per stream, so `s_st` is a plain write,
//! never a read-modify-write.
//!
//! # Backpressure
//! Each output channel has a FIFO of `FIFO_DEPTH` (power of 2 >= `L + 2`)
//! entries; `s_lk_ready` is high when both the `m_lk` and `m_nack` FIFOs
//! have room for the lookups in flight plus one, `s_rd_ready` likewise for
//! `m_rd`: functions of registers only.
//!
//! # Reset
//! `rst` empties the pipelines and FIFOs and starts a sweep zeroing one slot
//! of every memory per cycle (`CONNS` cycles) with every `ready` low.
//!
//! # Difference from the reference
//! The reference keys connections by their full 24-bit id with no slot, so
//! it can hold two connections whose ids share their low bits; this table
//! cannot (the second open replaces the first). Drivers number connections
//! by slot. Lookups answer identically otherwise.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::Config;
use mrnic_proto::tables::{conn, conn_stream};

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "conn_table";

/// `s_lk_op` values.
pub const OP_DATA: u32 = 0;
pub const OP_PROBE: u32 = 1;
/// SACK or NACK (3 behaves as 2).
pub const OP_ACK: u32 = 2;

/// NACK codes this block sends.
pub const NACK_NO_CONN: u8 = 3;
pub const NACK_BAD_HDR: u8 = 4;

/// Widest stream count: a lookup returns every stream's state in one word.
pub const MAX_STREAMS: u32 = 64;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("conn_table: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `conn_table`, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnTableParams {
    pub conns: u32,
    pub conn_bits: u32,
    pub streams: u32,
    pub stream_bits: u32,
    pub read_latency: u32,
}

impl ConnTableParams {
    pub fn from_config(cfg: &Config) -> Result<ConnTableParams, ParamError> {
        ConnTableParams::new(cfg.transport.connections, cfg.transport.streams_per_conn, cfg.hardware.table_read_latency)
    }

    pub fn new(conns: u32, streams: u32, read_latency: u32) -> Result<ConnTableParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24");
        }
        if streams == 0 || !streams.is_power_of_two() || streams > MAX_STREAMS {
            return bad("transport.streams_per_conn", streams, "must be a power of 2 in 1..=64");
        }
        if !(1..=2).contains(&read_latency) {
            return bad("hardware.table_read_latency", read_latency, "the table memory supports 1 or 2 cycles");
        }
        Ok(ConnTableParams {
            conns,
            conn_bits: Config::index_bits(conns),
            streams,
            stream_bits: Config::index_bits(streams),
            read_latency,
        })
    }

    pub fn fifo_depth(&self) -> u32 {
        (self.read_latency + 2).next_power_of_two()
    }

    pub fn latency(&self) -> u32 {
        self.read_latency + 1
    }

    /// Width of a context word (`proto::tables::conn`).
    pub fn ctx_bits(&self) -> u32 {
        conn::TABLE.width()
    }

    /// Width of a stream word (`proto::tables::conn_stream`).
    pub fn stream_state_bits(&self) -> u32 {
        conn_stream::TABLE.width()
    }

    /// Fields of a context as the ports carry it (`s_wr`, `m_lk`, `m_rd`).
    fn ctx_fields() -> Fields {
        vec![
            ("remote_id", conn::REMOTE_ID.width, conn::REMOTE_ID.meaning),
            ("remote_addr", conn::REMOTE_ADDR.width, conn::REMOTE_ADDR.meaning),
            ("paths", conn::PATHS.width, conn::PATHS.meaning),
        ]
    }

    pub fn wr_fields(&self) -> Fields {
        let mut v = vec![
            ("entry_valid", conn::VALID.width, "1 opens the connection, 0 closes its slot"),
            ("local_id", conn::LOCAL_ID.width, "its local id: slot = low bits, tag = all of it"),
        ];
        v.extend(Self::ctx_fields());
        v
    }

    pub fn st_fields(&self) -> Fields {
        vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", self.stream_bits, "stream (ignored with clear)"),
            ("clear", 1, "zero every stream of the connection"),
            ("completed_msn", conn_stream::COMPLETED_MSN.width, conn_stream::COMPLETED_MSN.meaning),
            ("active", conn_stream::ACTIVE.width, conn_stream::ACTIVE.meaning),
        ]
    }

    pub fn lk_fields(&self) -> Fields {
        vec![
            ("op", 2, "0 DATA, 1 PROBE, 2 SACK or NACK (3 as 2)"),
            ("dst_conn", 24, "the header's dst_conn"),
            ("path_id", 8, "the header's path_id"),
            ("path_gen", 8, "the header's path_gen (echoed in a NACK)"),
            ("psn", 24, "the header's path_psn (echoed in a NACK)"),
            ("stream_id", 8, "DATA: the header's stream_id (echoed in a NACK)"),
            ("msn", 24, "DATA: the header's msn (echoed in a NACK)"),
            ("tx_ts", 16, "the header's tx_ts (echoed in a NACK)"),
            ("sport", 16, "the packet's UDP source port: where a NACK goes"),
            ("plane", 3, "the plane it arrived on"),
            ("src_addr", 32, "its IPv4 source: must be the peer's; where a NO_CONN NACK goes"),
        ]
    }

    pub fn lk_out_fields(&self) -> Fields {
        let mut v = vec![
            ("op", 2, "the lookup's op"),
            ("hit", 1, "an open connection has this id"),
            ("ok", 1, "the packet goes on (hit, from the peer, and for DATA/PROBE a valid path)"),
            ("conn", self.conn_bits, "connection slot (dst_conn's low bits)"),
        ];
        v.extend(Self::ctx_fields());
        v.push(("active", self.streams, "bit i: stream i active"));
        v.push(("msns", self.streams * 24, "stream i's completed_msn at bits 24i+23..24i"));
        v
    }

    pub fn nack_fields(&self) -> Fields {
        vec![
            ("dst_addr", 32, "IPv4 address the NACK goes to"),
            ("dst_conn", 24, "connection id at the NACK's receiver"),
            ("code", 8, "3 NO_CONN, 4 BAD_HDR"),
            ("path_id", 8, "path of the refused packet"),
            ("path_gen", 8, "its generation"),
            ("psn", 24, "its psn"),
            ("stream_id", 8, "its stream (PROBE: 0)"),
            ("msn", 24, "its msn (PROBE: 0)"),
            ("echo_ts", 16, "its tx_ts"),
            ("sport", 16, "its UDP source port (the NACK's destination port)"),
            ("plane", 3, "its plane"),
        ]
    }

    pub fn rd_fields(&self) -> Fields {
        vec![("conn", self.conn_bits, "connection slot")]
    }

    pub fn rd_out_fields(&self) -> Fields {
        let mut v = vec![
            ("conn", self.conn_bits, "connection slot read"),
            ("entry_valid", 1, "the slot holds an open connection"),
            ("local_id", 24, "its local id"),
        ];
        v.extend(Self::ctx_fields());
        v
    }
}

/// Port list: rst, then the channels s_wr, s_st, s_lk, m_lk, m_nack, s_rd,
/// m_rd, then the counter pulses.
pub fn ports(p: &ConnTableParams) -> Vec<PortDef> {
    let mut v =
        vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; starts the clear sweep")];
    channel_ports(&mut v, "s_wr", true, "Connection write", &p.wr_fields());
    channel_ports(&mut v, "s_st", true, "Stream state write", &p.st_fields());
    channel_ports(&mut v, "s_lk", true, "Receive lookup", &p.lk_fields());
    channel_ports(&mut v, "m_lk", false, "Lookup result", &p.lk_out_fields());
    channel_ports(&mut v, "m_nack", false, "NACK output", &p.nack_fields());
    channel_ports(&mut v, "s_rd", true, "Transmit read", &p.rd_fields());
    channel_ports(&mut v, "m_rd", false, "Read result", &p.rd_out_fields());
    for (n, c) in [
        ("stat_no_conn", "pulse: DATA or PROBE for no connection (rx_no_conn)"),
        ("stat_ack_no_conn", "pulse: SACK or NACK for no connection (ack_no_conn)"),
        ("stat_bad_path", "pulse: DATA or PROBE on a path the connection does not have (rx_bad_path)"),
        ("stat_bad_src", "pulse: DATA or PROBE for a connection from a source not its peer (rx_bad_src)"),
        ("stat_ack_bad_src", "pulse: SACK or NACK for a connection from a source not its peer (ack_bad_src)"),
    ] {
        v.push(PortDef::output(n, 1, "Counters", c));
    }
    v
}

/// A connection context (`proto::tables::conn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ctx {
    pub valid: bool,
    pub local_id: u32,
    pub remote_id: u32,
    pub remote_addr: u32,
    pub paths: u8,
}

/// One stream's published receive state (`proto::tables::conn_stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamState {
    pub completed_msn: u32,
    pub active: bool,
}

/// A stream state write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StWrite {
    pub conn: u32,
    pub stream: u32,
    pub clear: bool,
    pub state: StreamState,
}

/// A receive lookup: the header fields it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lookup {
    pub op: u32,
    pub dst_conn: u32,
    pub path_id: u8,
    pub path_gen: u8,
    pub psn: u32,
    pub stream_id: u8,
    pub msn: u32,
    pub tx_ts: u16,
    pub sport: u16,
    pub plane: u8,
    pub src_addr: u32,
}

/// A lookup's answer on `m_lk_*`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LkResult {
    pub op: u32,
    pub hit: bool,
    pub ok: bool,
    pub conn: u32,
    pub remote_id: u32,
    pub remote_addr: u32,
    pub paths: u8,
    /// Every stream's state, stream 0 first (zeros on a miss).
    pub streams: Vec<StreamState>,
}

/// A NACK on `m_nack_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nack {
    pub dst_addr: u32,
    pub dst_conn: u32,
    pub code: u8,
    pub path_id: u8,
    pub path_gen: u8,
    pub psn: u32,
    pub stream_id: u8,
    pub msn: u32,
    pub echo_ts: u16,
    pub sport: u16,
    pub plane: u8,
}

/// A transmit read's answer on `m_rd_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RdResult {
    pub conn: u32,
    pub ctx: Ctx,
}

/// Counter pulses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub no_conn: bool,
    pub ack_no_conn: bool,
    pub bad_path: bool,
    pub bad_src: bool,
    pub ack_bad_src: bool,
}

/// Inputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub wr: Option<Ctx>,
    pub st: Option<StWrite>,
    pub lk: Option<Lookup>,
    pub lk_ready: bool,
    pub nack_ready: bool,
    pub rd: Option<u32>,
    pub rd_ready: bool,
}

/// Outputs of one cycle (a function of registers only).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outputs {
    pub wr_ready: bool,
    pub st_ready: bool,
    pub lk_ready: bool,
    pub rd_ready: bool,
    pub lk: Option<LkResult>,
    pub nack: Option<Nack>,
    pub rd: Option<RdResult>,
    pub stats: Stats,
}

/// What a lookup decides, given the connection's context and streams: the
/// reference's checks before a packet reaches its connection's receive
/// state.
pub fn decide(p: &ConnTableParams, ctx: &Ctx, streams: &[StreamState], k: &Lookup) -> (LkResult, Option<Nack>, Stats) {
    let hit = ctx.valid && ctx.local_id == k.dst_conn;
    let path_ok = u32::from(k.path_id) < u32::from(ctx.paths);
    let from_peer = ctx.remote_addr == k.src_addr;
    let mut st = Stats::default();
    let data = k.op == OP_DATA;
    let nack = |dst_addr, dst_conn, code| {
        Some(Nack {
            dst_addr,
            dst_conn,
            code,
            path_id: k.path_id,
            path_gen: k.path_gen,
            psn: k.psn,
            stream_id: if data { k.stream_id } else { 0 },
            msn: if data { k.msn } else { 0 },
            echo_ts: k.tx_ts,
            sport: k.sport,
            plane: k.plane,
        })
    };
    let (ok, n) = if k.op >= OP_ACK {
        st.ack_no_conn = !hit;
        st.ack_bad_src = hit && !from_peer;
        (hit && from_peer, None)
    } else if !hit {
        st.no_conn = true;
        (false, nack(k.src_addr, k.dst_conn, NACK_NO_CONN))
    } else if !from_peer {
        st.bad_src = true;
        (false, None)
    } else if !path_ok {
        st.bad_path = true;
        (false, if data { nack(ctx.remote_addr, ctx.remote_id, NACK_BAD_HDR) } else { None })
    } else {
        (true, None)
    };
    let r = LkResult {
        op: k.op,
        hit,
        ok,
        conn: k.dst_conn & (p.conns - 1),
        remote_id: if hit { ctx.remote_id } else { 0 },
        remote_addr: if hit { ctx.remote_addr } else { 0 },
        paths: if hit { ctx.paths } else { 0 },
        streams: if hit { streams.to_vec() } else { vec![StreamState::default(); p.streams as usize] },
    };
    (r, n, st)
}

/// The writes of one edge, kept for forwarding.
#[derive(Debug, Clone, Copy, Default)]
struct Writes {
    ctx: Option<(u32, Ctx)>,
    st: Option<StWrite>,
}

impl Writes {
    fn apply_ctx(&self, index: u32, c: &mut Ctx) {
        if let Some((i, v)) = self.ctx {
            if i == index {
                *c = v;
            }
        }
    }

    fn apply_streams(&self, index: u32, s: &mut [StreamState]) {
        if let Some(w) = self.st {
            if w.conn == index {
                for (i, e) in s.iter_mut().enumerate() {
                    if w.clear {
                        *e = StreamState::default();
                    } else if i as u32 == w.stream {
                        *e = w.state;
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
struct LkReq {
    k: Lookup,
    index: u32,
    ctx: Ctx,
    streams: Vec<StreamState>,
}

#[derive(Debug, Clone, Copy)]
struct RdReq {
    index: u32,
    ctx: Ctx,
}

/// The cycle-accurate `conn_table`. See the module docs.
pub struct ConnTable {
    p: ConnTableParams,
    ports: Vec<PortDef>,
    ids: Ids,
    ctx_mem: Vec<Ctx>,
    /// Stream memories, one per stream, indexed `[stream][conn]`.
    stream_mem: Vec<Vec<StreamState>>,
    lk_stage: Vec<Option<LkReq>>,
    rd_stage: Vec<Option<RdReq>>,
    /// Writes of the last `L` edges, newest first.
    hist: Vec<Writes>,
    lks: VecDeque<LkResult>,
    nacks: VecDeque<Nack>,
    rds: VecDeque<RdResult>,
    stats: Stats,
    init: bool,
    init_addr: u32,
}

impl fmt::Debug for ConnTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnTable").field("p", &self.p).field("init", &self.init).finish_non_exhaustive()
    }
}

impl ConnTable {
    /// A block in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: ConnTableParams) -> ConnTable {
        let l = p.read_latency as usize;
        let ports = ports(&p);
        ConnTable {
            ids: Ids::new(&ports),
            ports,
            ctx_mem: vec![Ctx::default(); p.conns as usize],
            stream_mem: vec![vec![StreamState::default(); p.conns as usize]; p.streams as usize],
            lk_stage: vec![None; l],
            rd_stage: vec![None; l],
            hist: vec![Writes::default(); l],
            lks: VecDeque::new(),
            nacks: VecDeque::new(),
            rds: VecDeque::new(),
            stats: Stats::default(),
            init: true,
            init_addr: 0,
            p,
        }
    }

    pub fn params(&self) -> &ConnTableParams {
        &self.p
    }

    pub fn initializing(&self) -> bool {
        self.init
    }

    /// The stored context of a slot (writes land at once; forwarding only
    /// hides the read latency).
    pub fn ctx(&self, slot: u32) -> &Ctx {
        &self.ctx_mem[slot as usize]
    }

    /// The stored state of (slot, stream).
    pub fn stream(&self, slot: u32, stream: u32) -> &StreamState {
        &self.stream_mem[stream as usize][slot as usize]
    }

    /// True when nothing is in the pipelines or the FIFOs.
    pub fn idle(&self) -> bool {
        self.lk_stage.iter().all(Option::is_none)
            && self.rd_stage.iter().all(Option::is_none)
            && self.lks.is_empty()
            && self.nacks.is_empty()
            && self.rds.is_empty()
    }

    /// (s_wr, s_st, s_lk, s_rd) ready: functions of registers only.
    fn readies(&self) -> (bool, bool, bool, bool) {
        let depth = self.p.fifo_depth() as usize;
        let lk_in = self.lk_stage.iter().flatten().count();
        let rd_in = self.rd_stage.iter().flatten().count();
        (
            !self.init,
            !self.init,
            !self.init && self.lks.len() + lk_in < depth && self.nacks.len() + lk_in < depth,
            !self.init && self.rds.len() + rd_in < depth,
        )
    }

    pub fn outputs(&self) -> Outputs {
        let (wr_ready, st_ready, lk_ready, rd_ready) = self.readies();
        Outputs {
            wr_ready,
            st_ready,
            lk_ready,
            rd_ready,
            lk: self.lks.front().cloned(),
            nack: self.nacks.front().copied(),
            rd: self.rds.front().copied(),
            stats: self.stats,
        }
    }

    fn read_streams(&self, index: u32) -> Vec<StreamState> {
        self.stream_mem.iter().map(|m| m[index as usize]).collect()
    }

    /// The rising clock edge.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        let l = self.p.read_latency as usize;
        let mask = self.p.conns - 1;
        // Answer stage: the read data with the writes it could not see,
        // oldest first.
        let mut lk_done = None;
        if let Some(r) = self.lk_stage[l - 1].take() {
            let (mut ctx, mut streams) = (r.ctx, r.streams);
            for w in self.hist.iter().rev() {
                w.apply_ctx(r.index, &mut ctx);
                w.apply_streams(r.index, &mut streams);
            }
            lk_done = Some(decide(&self.p, &ctx, &streams, &r.k));
        }
        let mut rd_done = None;
        if let Some(r) = self.rd_stage[l - 1].take() {
            let mut ctx = r.ctx;
            for w in self.hist.iter().rev() {
                w.apply_ctx(r.index, &mut ctx);
            }
            rd_done = Some(RdResult { conn: r.index, ctx });
        }
        // Reads at the handshake see the memory before this edge's writes.
        let lk_fire = inp.lk.filter(|_| out.lk_ready);
        let lk_new = lk_fire.map(|k| {
            let index = k.dst_conn & mask;
            LkReq { k, index, ctx: self.ctx_mem[index as usize], streams: self.read_streams(index) }
        });
        let rd_new = inp.rd.filter(|_| out.rd_ready).map(|c| {
            let index = c & mask;
            RdReq { index, ctx: self.ctx_mem[index as usize] }
        });
        let mut writes = Writes::default();
        if self.init {
            let a = self.init_addr as usize;
            self.ctx_mem[a] = Ctx::default();
            self.stream_mem.iter_mut().for_each(|m| m[a] = StreamState::default());
        } else {
            if let Some(c) = inp.wr.filter(|_| out.wr_ready) {
                let c = Ctx {
                    local_id: c.local_id & 0xff_ffff,
                    remote_id: c.remote_id & 0xff_ffff,
                    paths: c.paths & 0x3f,
                    ..c
                };
                let index = c.local_id & mask;
                self.ctx_mem[index as usize] = c;
                writes.ctx = Some((index, c));
            }
            if let Some(mut w) = inp.st.filter(|_| out.st_ready) {
                w.conn &= mask;
                w.stream &= self.p.streams - 1;
                w.state.completed_msn &= 0xff_ffff;
                for (i, m) in self.stream_mem.iter_mut().enumerate() {
                    if w.clear {
                        m[w.conn as usize] = StreamState::default();
                    } else if i as u32 == w.stream {
                        m[w.conn as usize] = w.state;
                    }
                }
                writes.st = Some(w);
            }
        }
        if inp.rst {
            self.lk_stage.iter_mut().for_each(|s| *s = None);
            self.rd_stage.iter_mut().for_each(|s| *s = None);
            self.hist.iter_mut().for_each(|h| *h = Writes::default());
            self.lks.clear();
            self.nacks.clear();
            self.rds.clear();
            self.stats = Stats::default();
            self.init = true;
            self.init_addr = 0;
            return;
        }
        if self.init {
            if self.init_addr == self.p.conns - 1 {
                self.init = false;
            }
            self.init_addr = (self.init_addr + 1) & mask;
        }
        self.hist.rotate_right(1);
        self.hist[0] = writes;
        if out.lk.is_some() && inp.lk_ready {
            self.lks.pop_front();
        }
        if out.nack.is_some() && inp.nack_ready {
            self.nacks.pop_front();
        }
        if out.rd.is_some() && inp.rd_ready {
            self.rds.pop_front();
        }
        self.stats = Stats::default();
        if let Some((r, n, st)) = lk_done {
            self.lks.push_back(r);
            self.nacks.extend(n);
            self.stats = st;
        }
        self.rds.extend(rd_done);
        let depth = self.p.fifo_depth() as usize;
        debug_assert!(self.lks.len() <= depth && self.nacks.len() <= depth && self.rds.len() <= depth);
        self.lk_stage.rotate_right(1);
        self.lk_stage[0] = lk_new;
        self.rd_stage.rotate_right(1);
        self.rd_stage[0] = rd_new;
    }
}

crate::port_ids!(pub(crate) struct Ids {
    rst,
    s_wr_valid, s_wr_ready, s_wr_entry_valid, s_wr_local_id, s_wr_remote_id, s_wr_remote_addr, s_wr_paths,
    s_st_valid, s_st_ready, s_st_conn, s_st_stream, s_st_clear, s_st_completed_msn, s_st_active,
    s_lk_valid, s_lk_ready, s_lk_op, s_lk_dst_conn, s_lk_path_id, s_lk_path_gen, s_lk_psn, s_lk_stream_id,
    s_lk_msn, s_lk_tx_ts, s_lk_sport, s_lk_plane, s_lk_src_addr,
    m_lk_valid, m_lk_ready, m_lk_op, m_lk_hit, m_lk_ok, m_lk_conn, m_lk_remote_id, m_lk_remote_addr,
    m_lk_paths, m_lk_active, m_lk_msns,
    m_nack_valid, m_nack_ready, m_nack_dst_addr, m_nack_dst_conn, m_nack_code, m_nack_path_id,
    m_nack_path_gen, m_nack_psn, m_nack_stream_id, m_nack_msn, m_nack_echo_ts, m_nack_sport, m_nack_plane,
    s_rd_valid, s_rd_ready, s_rd_conn,
    m_rd_valid, m_rd_ready, m_rd_conn, m_rd_entry_valid, m_rd_local_id, m_rd_remote_id, m_rd_remote_addr,
    m_rd_paths,
    stat_no_conn, stat_ack_no_conn, stat_bad_path, stat_bad_src, stat_ack_bad_src,
});

impl Block for ConnTable {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        // Straight from the queues (no `Outputs` copy: a lookup answer
        // holds every stream's state).
        let (p, ids) = (&self.ports, &self.ids);
        let (wr_ready, st_ready, lk_ready, rd_ready) = self.readies();
        let lk = self.lks.front();
        let n = self.nacks.front().copied().unwrap_or_default();
        let d = self.rds.front().copied().unwrap_or_default();
        let st = self.stats;
        let none = LkResult::default();
        let r = lk.unwrap_or(&none);
        for (i, v) in [
            (ids.s_wr_ready, wr_ready as u64),
            (ids.s_st_ready, st_ready as u64),
            (ids.s_lk_ready, lk_ready as u64),
            (ids.s_rd_ready, rd_ready as u64),
            (ids.m_lk_valid, lk.is_some() as u64),
            (ids.m_nack_valid, !self.nacks.is_empty() as u64),
            (ids.m_rd_valid, !self.rds.is_empty() as u64),
            (ids.stat_no_conn, st.no_conn as u64),
            (ids.stat_ack_no_conn, st.ack_no_conn as u64),
            (ids.stat_bad_path, st.bad_path as u64),
            (ids.stat_bad_src, st.bad_src as u64),
            (ids.stat_ack_bad_src, st.ack_bad_src as u64),
            (ids.m_lk_op, r.op as u64),
            (ids.m_lk_hit, r.hit as u64),
            (ids.m_lk_ok, r.ok as u64),
            (ids.m_lk_conn, r.conn as u64),
            (ids.m_lk_remote_id, r.remote_id as u64),
            (ids.m_lk_remote_addr, r.remote_addr as u64),
            (ids.m_lk_paths, r.paths as u64),
            (ids.m_nack_dst_addr, n.dst_addr as u64),
            (ids.m_nack_dst_conn, n.dst_conn as u64),
            (ids.m_nack_code, n.code as u64),
            (ids.m_nack_path_id, n.path_id as u64),
            (ids.m_nack_path_gen, n.path_gen as u64),
            (ids.m_nack_psn, n.psn as u64),
            (ids.m_nack_stream_id, n.stream_id as u64),
            (ids.m_nack_msn, n.msn as u64),
            (ids.m_nack_echo_ts, n.echo_ts as u64),
            (ids.m_nack_sport, n.sport as u64),
            (ids.m_nack_plane, n.plane as u64),
            (ids.m_rd_conn, d.conn as u64),
            (ids.m_rd_entry_valid, d.ctx.valid as u64),
            (ids.m_rd_local_id, d.ctx.local_id as u64),
            (ids.m_rd_remote_id, d.ctx.remote_id as u64),
            (ids.m_rd_remote_addr, d.ctx.remote_addr as u64),
            (ids.m_rd_paths, d.ctx.paths as u64),
        ] {
            put(p, outputs, i, v);
        }
        // A miss (or no answer) shows every stream as zero.
        outputs[ids.m_lk_active].set_packed(p[ids.m_lk_active].width, r.streams.iter().map(|s| (s.active as u64, 1)));
        outputs[ids.m_lk_msns]
            .set_packed(p[ids.m_lk_msns].width, r.streams.iter().map(|s| (s.completed_msn as u64, 24)));
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let g = |i: usize| inputs[i].as_u64();
        let inp = Inputs {
            rst: g(ids.rst) == 1,
            wr: (g(ids.s_wr_valid) == 1).then(|| Ctx {
                valid: g(ids.s_wr_entry_valid) == 1,
                local_id: g(ids.s_wr_local_id) as u32,
                remote_id: g(ids.s_wr_remote_id) as u32,
                remote_addr: g(ids.s_wr_remote_addr) as u32,
                paths: g(ids.s_wr_paths) as u8,
            }),
            st: (g(ids.s_st_valid) == 1).then(|| StWrite {
                conn: g(ids.s_st_conn) as u32,
                stream: g(ids.s_st_stream) as u32,
                clear: g(ids.s_st_clear) == 1,
                state: StreamState { completed_msn: g(ids.s_st_completed_msn) as u32, active: g(ids.s_st_active) == 1 },
            }),
            lk: (g(ids.s_lk_valid) == 1).then(|| Lookup {
                op: g(ids.s_lk_op) as u32,
                dst_conn: g(ids.s_lk_dst_conn) as u32,
                path_id: g(ids.s_lk_path_id) as u8,
                path_gen: g(ids.s_lk_path_gen) as u8,
                psn: g(ids.s_lk_psn) as u32,
                stream_id: g(ids.s_lk_stream_id) as u8,
                msn: g(ids.s_lk_msn) as u32,
                tx_ts: g(ids.s_lk_tx_ts) as u16,
                sport: g(ids.s_lk_sport) as u16,
                plane: g(ids.s_lk_plane) as u8,
                src_addr: g(ids.s_lk_src_addr) as u32,
            }),
            lk_ready: g(ids.m_lk_ready) == 1,
            nack_ready: g(ids.m_nack_ready) == 1,
            rd: (g(ids.s_rd_valid) == 1).then(|| g(ids.s_rd_conn) as u32),
            rd_ready: g(ids.m_rd_ready) == 1,
        };
        self.clock(&inp);
    }
}
