//! `msg_check`: the receive controller's header-sanity and message-table
//! checks of a data packet, before sack_gen decides its bitmap bit, one of
//! `mrnic_core`'s glue blocks. It is the first half of the reference's
//! `RxConn::check` (the MR check is `mr_check`, the receive lookup
//! recv_match's `s_lookup`).
//!
//! # Function
//! A check (`s_chk_*`) is answered on `m_chk_status`, the first failure in
//! the reference's order deciding:
//! 1. `BAD_LEN` (`rx_bad_len`): payload longer than the MTU, a stream the
//!    connection lacks, payload longer than msg_len, or an empty payload of
//!    a non-empty message;
//! 2. `WINDOW` (`rx_msg_window`): `msn - completed_msn` (24-bit) at or
//!    beyond `msg_table_depth`; `completed_msn` is the stream's, from
//!    conn_table's lookup answer (`m_lk_msns`);
//! 3. `MISMATCH` (`rx_msg_mismatch`): the message's slot holds this msn and
//!    its kind (SEND with its rq_seq, or WRITE), msg_len or immediate
//!    differs, or its bytes plus this payload exceed msg_len;
//! 4. `BAD_LEN` again for a SEND whose `msg_offset + len` exceeds msg_len;
//! 5. `OK`.
//!
//! `s_acc_*` records a packet that set a new bitmap bit (the receive
//! controller sends it on sack_gen's `m_new`): the slot `msn mod depth`
//! takes the message's fields with its bytes if it held another msn or
//! nothing, else its bytes grow by the payload. Bytes count at acceptance,
//! as in the reference (where the write is instant); cpl_engine counts
//! them again when the write is in memory, for the completion. An accept
//! of a stream the connection lacks (the check refuses such a packet, so
//! the controller never sends one) writes nothing: the generated module
//! reads every bit of `s_acc_stream`, as lint requires. A slot
//! whose message completed is never cleared: its msn is behind
//! completed_msn, so a packet naming it fails the window check first, and
//! a later message in the slot has another msn. `s_open_*` clears a
//! connection's slots (its streams' valid words, one per cycle), so a
//! reopened connection starts with an empty table.
//!
//! # The table
//! A table of the messages in progress, beside cpl_engine's. Why not a
//! read port on cpl_engine's `msg_mem`: that memory's read port serves the
//! completion state machine, which counts bytes only after the DMA write
//! response, while the checks need the bytes of every packet accepted
//! before (the reference counts at acceptance); a second port is a second
//! copy either way, and this one leaves cpl_engine's generator, lockstep
//! suite and proven properties as they are. Like cpl_engine's, the
//! `default` table (65536 x 16 slots) does not fit on chip.
//!
//! # Timing
//! One operation at a time, priority `s_open` > `s_acc` > `s_chk` (a lower
//! `ready` is low while a higher channel is offered: input-dependent, as in
//! recv_match; otherwise all are high when idle, from registers). A check
//! reads the stream word and the slot at its handshake `t`, has them at
//! `t + L` and answers on `m_chk_valid` at `t + L + 1` (2 / 3), from a
//! register; the next operation is taken once the answer is taken. An
//! accept reads at `t` and writes at `t + L`; the next operation is taken
//! at `t + L + 1`, so it reads the written word (no forwarding). An open takes `STREAMS` cycles. Reset
//! sweeps `CONNS x STREAMS` words with every `ready` low.
//!
//! # Memories
//! `vld_mem`, CONNS x STREAMS x DEPTH (a valid bit per slot); `msg_mem`,
//! CONNS x STREAMS x DEPTH x 146 (msn 24, send 1, rq_seq 24, msg_len 32,
//! imm_valid 1, imm 32, bytes 32): 512 x 146 in `small`, block RAM.

use mrnic_proto::config::Config;

use crate::block::{channel_ports, put, Bits, Block, Fields, PortDef};
use crate::cpl_engine::CplEngineParams;

/// Module name, shared with the Verilog.
pub const NAME: &str = "msg_check";
const SEQ_MASK: u32 = (1 << 24) - 1;

/// `m_chk_status` codes.
pub mod status {
    pub const OK: u8 = 0;
    pub const BAD_LEN: u8 = 1;
    pub const WINDOW: u8 = 2;
    pub const MISMATCH: u8 = 3;
}

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("msg_check: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `msg_check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgCheckParams {
    pub conns: u32,
    pub conn_bits: u32,
    pub streams: u32,
    pub stream_bits: u32,
    pub depth: u32,
    pub mtu: u32,
    pub read_latency: u32,
}

impl MsgCheckParams {
    /// The sizes are cpl_engine's (the same table shape), refused by the
    /// same rules.
    pub fn from_config(cfg: &Config) -> Result<MsgCheckParams, ParamError> {
        let c =
            CplEngineParams::from_config(cfg).map_err(|e| ParamError { field: e.field, value: e.value, why: e.why })?;
        Ok(MsgCheckParams {
            conns: c.conns,
            conn_bits: c.conn_bits,
            streams: c.streams,
            stream_bits: c.stream_bits,
            depth: c.msg_depth,
            mtu: cfg.transport.mtu,
            read_latency: c.read_latency,
        })
    }

    /// The fields of a packet's message, shared by `s_chk` and `s_acc`.
    fn msg_fields(&self) -> Fields {
        let mut f = vec![
            ("conn", self.conn_bits, "connection slot"),
            ("stream", 8, "the header's stream_id (checked against the streams)"),
            ("msn", 24, "message"),
        ];
        f.extend(crate::cpl_engine::message_fields());
        f.push(("rq_seq", 24, "SEND: the receive it consumes"));
        f.push(("len", 16, "payload bytes"));
        f
    }

    pub fn chk_fields(&self) -> Fields {
        let mut f = self.msg_fields();
        f.push(("msg_offset", 32, "SEND: the payload's offset in the message"));
        f.push(("completed_msn", 24, "the stream's completed_msn (conn_table m_lk_msns)"));
        f
    }

    pub fn acc_fields(&self) -> Fields {
        self.msg_fields()
    }
}

/// The ports, in declaration order.
pub fn ports(p: &MsgCheckParams) -> Vec<PortDef> {
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; sweeps the table")];
    channel_ports(&mut v, "s_open", true, "Connection opened", &vec![("conn", p.conn_bits, "connection slot")]);
    channel_ports(&mut v, "s_acc", true, "Packet accepted (set a new bit)", &p.acc_fields());
    channel_ports(&mut v, "s_chk", true, "Check request", &p.chk_fields());
    channel_ports(
        &mut v,
        "m_chk",
        false,
        "Check answer",
        &vec![("status", 2, "0 OK, 1 bad length, 2 msn beyond the message window, 3 message mismatch")],
    );
    v
}

/// A packet's message fields (`s_chk` / `s_acc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pkt {
    pub conn: u32,
    pub stream: u8,
    pub msn: u32,
    pub send: bool,
    pub rq_seq: u32,
    pub msg_len: u32,
    pub imm: Option<u32>,
    pub len: u16,
    pub msg_offset: u32,
    pub completed_msn: u32,
}

/// A message slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    pub msn: u32,
    pub send: bool,
    pub rq_seq: u32,
    pub msg_len: u32,
    pub imm: Option<u32>,
    pub bytes: u32,
}

/// The rule: `slot` is the live slot of the packet's msn, if any.
pub fn verdict(p: &MsgCheckParams, k: &Pkt, slot: Option<&Slot>) -> u8 {
    let len = k.len as u32;
    if len > p.mtu || k.stream as u32 >= p.streams || len > k.msg_len || (len == 0 && k.msg_len != 0) {
        return status::BAD_LEN;
    }
    if k.msn.wrapping_sub(k.completed_msn) & SEQ_MASK >= p.depth {
        return status::WINDOW;
    }
    if let Some(m) = slot {
        let kind_differs = m.send != k.send || (k.send && m.rq_seq != k.rq_seq);
        if kind_differs || m.msg_len != k.msg_len || m.imm != k.imm || m.bytes as u64 + len as u64 > m.msg_len as u64 {
            return status::MISMATCH;
        }
    }
    if k.send && k.msg_offset as u64 + len as u64 > k.msg_len as u64 {
        return status::BAD_LEN;
    }
    status::OK
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Chk(Pkt),
    Acc(Pkt),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Clearing stream words: the next one and the last.
    Sweep(u32, u32),
    Idle,
    /// Reads out: the operation, the words read, cycles left.
    Read(Op, u64, Option<Slot>, u32),
    /// The answer waits in its register.
    Answer(u8),
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct MsgCheck {
    p: MsgCheckParams,
    ports: Vec<PortDef>,
    ids: Ids,
    vld_mem: Vec<u64>,
    msg_mem: Vec<Slot>,
    state: State,
}

crate::port_ids!(struct Ids {
    rst, s_open_valid, s_open_ready, s_open_conn, s_acc_valid, s_acc_ready, s_acc_conn, s_acc_stream, s_acc_msn,
    s_acc_send, s_acc_rq_seq, s_acc_msg_len, s_acc_imm_valid, s_acc_imm, s_acc_len, s_chk_valid, s_chk_ready,
    s_chk_conn, s_chk_stream, s_chk_msn, s_chk_send, s_chk_rq_seq, s_chk_msg_len, s_chk_imm_valid, s_chk_imm,
    s_chk_len, s_chk_msg_offset, s_chk_completed_msn, m_chk_valid, m_chk_ready, m_chk_status
});

/// The three channels' `ready` this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Readies {
    pub open: bool,
    pub acc: bool,
    pub chk: bool,
}

impl MsgCheck {
    /// A block as `rst` leaves it (sweep pending).
    pub fn new(p: MsgCheckParams) -> MsgCheck {
        let ports = ports(&p);
        let words = (p.conns * p.streams) as usize;
        MsgCheck {
            ids: Ids::new(&ports),
            ports,
            vld_mem: vec![0; words],
            msg_mem: vec![Slot::default(); words * p.depth as usize],
            state: State::Sweep(0, p.conns * p.streams - 1),
            p,
        }
    }

    pub fn params(&self) -> &MsgCheckParams {
        &self.p
    }

    /// `ready`s given which channels are offered.
    pub fn readies(&self, open_valid: bool, acc_valid: bool) -> Readies {
        let idle = self.state == State::Idle;
        Readies { open: idle, acc: idle && !open_valid, chk: idle && !open_valid && !acc_valid }
    }

    /// The answer register.
    pub fn answer(&self) -> Option<u8> {
        match self.state {
            State::Answer(s) => Some(s),
            _ => None,
        }
    }

    fn word(&self, k: &Pkt) -> usize {
        let stream = k.stream as u32 & (self.p.streams - 1);
        ((k.conn & (self.p.conns - 1)) * self.p.streams + stream) as usize
    }

    fn slot_index(&self, k: &Pkt) -> usize {
        self.word(k) * self.p.depth as usize + (k.msn & (self.p.depth - 1)) as usize
    }

    /// The edge.
    pub fn clock(&mut self, rst: bool, open: Option<u32>, acc: Option<Pkt>, chk: Option<Pkt>, out_ready: bool) {
        if rst {
            self.state = State::Sweep(0, self.p.conns * self.p.streams - 1);
            return;
        }
        self.state = match self.state {
            State::Sweep(w, last) => {
                self.vld_mem[w as usize] = 0;
                if w == last {
                    State::Idle
                } else {
                    State::Sweep(w + 1, last)
                }
            }
            State::Idle => {
                if let Some(c) = open {
                    let first = (c & (self.p.conns - 1)) * self.p.streams;
                    self.vld_mem[first as usize] = 0;
                    if self.p.streams == 1 {
                        State::Idle
                    } else {
                        State::Sweep(first + 1, first + self.p.streams - 1)
                    }
                } else if let Some(op) = acc.map(Op::Acc).or(chk.map(Op::Chk)) {
                    let k = match op {
                        Op::Acc(k) | Op::Chk(k) => k,
                    };
                    let vld = self.vld_mem[self.word(&k)];
                    let at = self.slot_index(&k);
                    let live = (vld >> (k.msn & (self.p.depth - 1)) & 1 == 1).then_some(self.msg_mem[at]);
                    self.step(State::Read(op, vld, live, self.p.read_latency + 1))
                } else {
                    State::Idle
                }
            }
            State::Read(op, vld, live, left) => self.step(State::Read(op, vld, live, left)),
            State::Answer(s) => {
                if out_ready {
                    State::Idle
                } else {
                    State::Answer(s)
                }
            }
        };
    }

    /// One cycle of a read in flight (the handshake's cycle included):
    /// acts when the read data is there.
    fn step(&mut self, s: State) -> State {
        let State::Read(op, vld, live, left) = s else { return s };
        if left > 1 {
            return State::Read(op, vld, live, left - 1);
        }
        match op {
            Op::Chk(k) => {
                let slot = live.filter(|m| m.msn == k.msn);
                State::Answer(verdict(&self.p, &k, slot.as_ref()))
            }
            Op::Acc(k) if k.stream as u32 >= self.p.streams => State::Idle,
            Op::Acc(k) => {
                let at = self.slot_index(&k);
                let m = match live.filter(|m| m.msn == k.msn) {
                    Some(m) => Slot { bytes: m.bytes.wrapping_add(k.len as u32), ..m },
                    None => Slot {
                        msn: k.msn,
                        send: k.send,
                        rq_seq: k.rq_seq,
                        msg_len: k.msg_len,
                        imm: k.imm,
                        bytes: k.len as u32,
                    },
                };
                self.msg_mem[at] = m;
                let w = self.word(&k);
                self.vld_mem[w] = vld | 1 << (k.msn & (self.p.depth - 1));
                State::Idle
            }
        }
    }
}

impl Block for MsgCheck {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        let r = self.readies(inputs[ids.s_open_valid].bit(0), inputs[ids.s_acc_valid].bit(0));
        put(&self.ports, outputs, ids.s_open_ready, r.open as u64);
        put(&self.ports, outputs, ids.s_acc_ready, r.acc as u64);
        put(&self.ports, outputs, ids.s_chk_ready, r.chk as u64);
        put(&self.ports, outputs, ids.m_chk_valid, self.answer().is_some() as u64);
        put(&self.ports, outputs, ids.m_chk_status, self.answer().unwrap_or(0) as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        let g = |i: usize| inputs[i].as_u64() as u32;
        let pkt = |c: [usize; 9], off: usize, cm: usize| Pkt {
            conn: g(c[0]),
            stream: g(c[1]) as u8,
            msn: g(c[2]),
            send: b(c[3]),
            rq_seq: g(c[4]),
            msg_len: g(c[5]),
            imm: b(c[6]).then(|| g(c[7])),
            len: g(c[8]) as u16,
            msg_offset: if off == usize::MAX { 0 } else { g(off) },
            completed_msn: if cm == usize::MAX { 0 } else { g(cm) },
        };
        let open = b(ids.s_open_valid).then(|| g(ids.s_open_conn));
        let acc = b(ids.s_acc_valid).then(|| {
            let f = [
                ids.s_acc_conn,
                ids.s_acc_stream,
                ids.s_acc_msn,
                ids.s_acc_send,
                ids.s_acc_rq_seq,
                ids.s_acc_msg_len,
                ids.s_acc_imm_valid,
                ids.s_acc_imm,
                ids.s_acc_len,
            ];
            pkt(f, usize::MAX, usize::MAX)
        });
        let chk = b(ids.s_chk_valid).then(|| {
            let f = [
                ids.s_chk_conn,
                ids.s_chk_stream,
                ids.s_chk_msn,
                ids.s_chk_send,
                ids.s_chk_rq_seq,
                ids.s_chk_msg_len,
                ids.s_chk_imm_valid,
                ids.s_chk_imm,
                ids.s_chk_len,
            ];
            pkt(f, ids.s_chk_msg_offset, ids.s_chk_completed_msn)
        });
        self.clock(b(ids.rst), open, acc, chk, b(ids.m_chk_ready));
    }
}
