//! `rx_buffer`: store-and-forward between rx_parser and the receive
//! controller, one of `mrnic_core`'s glue blocks (architecture.md,
//! `mrnic_core` item 4). A packet is handed on only once its last payload
//! beat is in, so a frame whose ICRC (or length, or MAC error) fails at its
//! end never reaches a table: no bitmap bit, no NACK, no write, as in the
//! reference, which never sees such a datagram.
//!
//! # Function
//! - `s_hdr_*`: rx_parser's `m_hdr_*`, every field of it (the port list is
//!   taken from rx_parser's `ports()`), into a header FIFO of 4.
//! - `s_axis_*`: rx_parser's payload; each beat goes into the payload RAM,
//!   a ring of `2 x MAXB` beats, `MAXB = ceil((mtu + 4) / BYTES)` (the
//!   parser's longest payload: 129 / 65 beats). The last beat (`tlast`)
//!   closes the packet with its `tuser` (drop) bit. A packet with more
//!   than `MAXB` beats (the parser never sends one) keeps its first `MAXB`,
//!   discards the rest and is dropped with `stat_oversize`.
//! - Release: when the oldest header's packet is complete, a dropped packet
//!   (`tuser = 1`) is discarded with its header in one cycle (its beats
//!   freed at once, once every packet before it is; rx_parser has counted
//!   the reason); otherwise the header goes out on `m_hdr_*` (a register)
//!   once the previous released header was taken and got its command.
//! - `s_pay_*`: after the `m_hdr` handshake the controller says what
//!   becomes of that packet's payload: `drop = 1` frees its beats at once;
//!   `drop = 0` sends them on `m_axis_*` (`tdata`, `tkeep`, `tlast` on the
//!   packet's last beat) at one beat per cycle. Commands come one per
//!   released header, in order; the next header may be released while a
//!   payload streams, its command waits until the stream ends.
//!
//! # Timing
//! A packet's header is on `m_hdr_valid` 2 cycles after its last beat's
//! `s_axis` handshake (the record is written at the edge, the release
//! register loads at the next), when the header is in and nothing is
//! ahead. A `drop = 0` command at `t` puts the first beat on `m_axis` at
//! `t + 2` (RAM read at `t + 1`, registered), then one beat per cycle while
//! `m_axis_tready` is high (a 2-entry output FIFO with the reads in flight
//! counted). Every `ready` and `valid` is a register or a function of
//! registers only. `s_axis_tready` is high while the ring has a free beat
//! and fewer than `REC_DEPTH` (16) complete packets wait for release;
//! the ring holds two maximum packets, so the parser streams one packet
//! while the controller works on the previous one.
//!
//! # Memories
//! `pay_mem`: `2 x MAXB` x (DW + DW/8) beats: 258 x 72 in `small`, 130 x
//! 576 in `default`, block RAM, one write port (input) and one read port
//! (output).

use std::collections::VecDeque;

use mrnic_proto::Config;

use crate::block::{put, Bits, Block, Dir, PortDef};
use crate::rx_parser::{self, RxParserParams};

/// Module name, shared with the Verilog.
pub const NAME: &str = "rx_buffer";
/// Header FIFO entries.
pub const HDR_DEPTH: usize = 4;
/// Output FIFO entries (beats).
pub const OUT_DEPTH: usize = 2;
/// Complete packets not yet released (their beat counts and drop bits).
/// rx_parser pushes a header no later than its packet's last beat, so a
/// backlog beyond the header FIFO's 4 needs the parser's own queues; the
/// bound only keeps the record FIFO a few registers instead of one entry
/// per ring beat (a FIFO of `2 x MAXB` records would be one-beat packets).
pub const REC_DEPTH: usize = 16;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rx_buffer: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `rx_buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxBufferParams {
    pub parser: RxParserParams,
    /// Beats of the longest payload.
    pub max_beats: u32,
}

impl RxBufferParams {
    pub fn from_config(cfg: &Config) -> Result<RxBufferParams, ParamError> {
        let parser = RxParserParams::from_config(cfg).map_err(|e| ParamError {
            field: e.field,
            value: e.value,
            why: format!("rx_parser: {}", e.why),
        })?;
        let max_beats = (parser.mtu as usize + 4).div_ceil(parser.bytes()) as u32;
        Ok(RxBufferParams { parser, max_beats })
    }

    pub fn data_bits(&self) -> u32 {
        self.parser.data_bits
    }

    /// Ring size in beats.
    pub fn ring(&self) -> u32 {
        2 * self.max_beats
    }

    /// rx_parser's header fields: (name after `m_hdr_`, width, comment).
    pub fn hdr_fields(&self) -> Vec<(String, u32, String)> {
        rx_parser::ports(&self.parser)
            .into_iter()
            .filter(|p| p.dir == Dir::Out)
            .filter_map(|p| {
                let f = p.name.strip_prefix("m_hdr_")?;
                (f != "valid").then(|| (f.to_string(), p.width, p.comment.clone()))
            })
            .collect()
    }
}

/// The ports, in declaration order.
pub fn ports(p: &RxBufferParams) -> Vec<PortDef> {
    const HI: &str = "Parsed header in (rx_parser m_hdr_*)";
    const PI: &str = "Payload in (rx_parser m_axis_*)";
    const HO: &str = "Header out (complete, good packets)";
    const CMD: &str = "Payload command";
    const PO: &str = "Payload out";
    let (d, b) = (p.data_bits(), p.data_bits() / 8);
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; empties the buffer")];
    v.push(PortDef::input("s_hdr_valid", 1, HI, "a header is offered"));
    v.push(PortDef::output("s_hdr_ready", 1, HI, "taken this cycle if valid (the FIFO has room)"));
    for (f, w, c) in p.hdr_fields() {
        v.push(PortDef::input(format!("s_hdr_{f}"), w, HI, c));
    }
    v.push(PortDef::input("s_axis_tdata", d, PI, "payload beat, lane 0 first"));
    v.push(PortDef::input("s_axis_tkeep", b, PI, "bytes present"));
    v.push(PortDef::input("s_axis_tvalid", 1, PI, "a beat is offered"));
    v.push(PortDef::output(
        "s_axis_tready",
        1,
        PI,
        "taken this cycle if valid (the ring has a free beat, the record FIFO room)",
    ));
    v.push(PortDef::input("s_axis_tlast", 1, PI, "last beat of the packet"));
    v.push(PortDef::input("s_axis_tuser", 1, PI, "on the last beat: drop the packet"));
    v.push(PortDef::output("m_hdr_valid", 1, HO, "the oldest complete good packet's header"));
    v.push(PortDef::input("m_hdr_ready", 1, HO, "taken this cycle if valid"));
    for (f, w, c) in p.hdr_fields() {
        v.push(PortDef::output(format!("m_hdr_{f}"), w, HO, c));
    }
    v.push(PortDef::input("s_pay_valid", 1, CMD, "a command for the last released header's payload"));
    v.push(PortDef::output("s_pay_ready", 1, CMD, "taken this cycle if valid"));
    v.push(PortDef::input("s_pay_drop", 1, CMD, "1: discard the payload; 0: send it on m_axis"));
    v.push(PortDef::output("m_axis_tdata", d, PO, "payload beat"));
    v.push(PortDef::output("m_axis_tkeep", b, PO, "bytes present"));
    v.push(PortDef::output("m_axis_tvalid", 1, PO, "a beat is offered"));
    v.push(PortDef::input("m_axis_tready", 1, PO, "taken this cycle if valid"));
    v.push(PortDef::output("m_axis_tlast", 1, PO, "last beat of the packet"));
    v.push(PortDef::output("stat_oversize", 1, "Counters", "pulse: a packet longer than the buffer's slot, dropped"));
    v
}

/// One payload beat.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Beat {
    pub data: Bits,
    pub keep: Bits,
    pub last: bool,
}

/// A complete packet in the ring: its beats and whether it is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rec {
    beats: u32,
    drop: bool,
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct RxBuffer {
    p: RxBufferParams,
    ports: Vec<PortDef>,
    /// Port indices of the header fields, in and out.
    hdr_in: Vec<usize>,
    hdr_out: Vec<usize>,
    ids: Ids,
    hdrs: VecDeque<Vec<Bits>>,
    ram: Vec<Beat>,
    wr: u32,
    rd: u32,
    free: u32,
    /// The packet coming in: beats stored, and too long.
    cur_beats: u32,
    cur_over: bool,
    recs: VecDeque<Rec>,
    /// The released header.
    out_hdr: Option<Vec<Bits>>,
    /// Released headers whose command has not come (0 or 1 with the
    /// register empty; the register may hold the next).
    cmd_wait: Option<Rec>,
    /// Beats left to read of the streaming packet.
    stream_left: u32,
    /// Reads issued last cycle (the RAM's output register).
    rd_pipe: Option<Beat>,
    outq: VecDeque<Beat>,
    stat_oversize: bool,
}

crate::port_ids!(struct Ids {
    rst, s_hdr_valid, s_hdr_ready, s_axis_tdata, s_axis_tkeep, s_axis_tvalid, s_axis_tready, s_axis_tlast,
    s_axis_tuser, m_hdr_valid, m_hdr_ready, s_pay_valid, s_pay_ready, s_pay_drop, m_axis_tdata, m_axis_tkeep,
    m_axis_tvalid, m_axis_tready, m_axis_tlast, stat_oversize
});

impl RxBuffer {
    pub fn new(p: RxBufferParams) -> RxBuffer {
        let ports = ports(&p);
        let idx = |pre: &str| -> Vec<usize> {
            p.hdr_fields()
                .iter()
                .map(|(f, _, _)| ports.iter().position(|q| q.name == format!("{pre}{f}")).expect("own port"))
                .collect()
        };
        let (hdr_in, hdr_out) = (idx("s_hdr_"), idx("m_hdr_"));
        let d = p.data_bits();
        let empty = Beat { data: Bits::zero(d), keep: Bits::zero(d / 8), last: false };
        RxBuffer {
            ids: Ids::new(&ports),
            hdr_in,
            hdr_out,
            ports,
            hdrs: VecDeque::new(),
            ram: vec![empty; p.ring() as usize],
            wr: 0,
            rd: 0,
            free: p.ring(),
            cur_beats: 0,
            cur_over: false,
            recs: VecDeque::new(),
            out_hdr: None,
            cmd_wait: None,
            stream_left: 0,
            rd_pipe: None,
            outq: VecDeque::new(),
            stat_oversize: false,
            p,
        }
    }

    pub fn params(&self) -> &RxBufferParams {
        &self.p
    }

    /// Nothing buffered, nothing released and waiting.
    pub fn idle(&self) -> bool {
        self.hdrs.is_empty()
            && self.recs.is_empty()
            && self.out_hdr.is_none()
            && self.cmd_wait.is_none()
            && self.stream_left == 0
            && self.rd_pipe.is_none()
            && self.outq.is_empty()
            && self.cur_beats == 0
    }

    fn axis_ready(&self) -> bool {
        self.free > 0 && self.recs.len() < REC_DEPTH
    }

    fn pay_ready(&self) -> bool {
        self.cmd_wait.is_some() && self.stream_left == 0
    }

    fn advance(&mut self, beats: u32) {
        self.rd = (self.rd + beats) % self.p.ring();
        self.free += beats;
    }

    /// The edge.
    #[allow(clippy::too_many_arguments)]
    fn clock(
        &mut self,
        rst: bool,
        hdr: Option<Vec<Bits>>,
        beat: Option<(Beat, bool)>,
        hdr_taken: bool,
        pay: Option<bool>,
        out_taken: bool,
    ) {
        self.stat_oversize = false;
        if rst {
            *self = RxBuffer::new(self.p);
            return;
        }
        // Registered readies, as eval() showed them.
        let (hdr_ready, axis_ready, pay_ready) = (self.hdrs.len() < HDR_DEPTH, self.axis_ready(), self.pay_ready());
        if out_taken {
            self.outq.pop_front();
        }
        if let Some(b) = self.rd_pipe.take() {
            self.outq.push_back(b);
        }
        // Read the streaming packet's next beat when the output FIFO will
        // have room for it.
        if self.stream_left > 0 && self.outq.len() < OUT_DEPTH {
            let mut b = self.ram[self.rd as usize].clone();
            b.last = self.stream_left == 1;
            self.rd_pipe = Some(b);
            self.stream_left -= 1;
            self.advance(1);
        }
        if let (Some(drop), true) = (pay, pay_ready) {
            let r = self.cmd_wait.take().expect("pay_ready implies a waiting packet");
            if drop {
                self.advance(r.beats);
            } else {
                self.stream_left = r.beats;
            }
        }
        if hdr_taken && self.out_hdr.is_some() {
            self.out_hdr = None;
        }
        // Release the oldest complete packet (one per cycle): a dropped one
        // with its header; a good one into the header register when it and
        // the command slot are free.
        // Beats are freed in ring order, so a dropped packet goes only once
        // every packet before it is freed.
        let before_done = self.out_hdr.is_none() && self.cmd_wait.is_none();
        if let (Some(r), false, true) = (self.recs.front().copied(), self.hdrs.is_empty(), before_done) {
            if r.drop {
                if self.stream_left == 0 {
                    self.recs.pop_front();
                    self.hdrs.pop_front();
                    self.advance(r.beats);
                }
            } else {
                self.recs.pop_front();
                self.out_hdr = self.hdrs.pop_front();
                self.cmd_wait = Some(r);
            }
        }
        if let (Some(h), true) = (hdr, hdr_ready) {
            self.hdrs.push_back(h);
        }
        if let (Some((b, tuser)), true) = (beat, axis_ready) {
            let last = b.last;
            if self.cur_beats < self.p.max_beats {
                self.ram[self.wr as usize] = b;
                self.wr = (self.wr + 1) % self.p.ring();
                self.free -= 1;
                self.cur_beats += 1;
            } else {
                self.cur_over = true;
            }
            if last {
                self.recs.push_back(Rec { beats: self.cur_beats, drop: tuser || self.cur_over });
                self.stat_oversize = self.cur_over;
                self.cur_beats = 0;
                self.cur_over = false;
            }
        }
    }
}

impl Block for RxBuffer {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let ids = self.ids;
        put(&self.ports, outputs, ids.s_hdr_ready, (self.hdrs.len() < HDR_DEPTH) as u64);
        put(&self.ports, outputs, ids.s_axis_tready, self.axis_ready() as u64);
        put(&self.ports, outputs, ids.s_pay_ready, self.pay_ready() as u64);
        put(&self.ports, outputs, ids.m_hdr_valid, self.out_hdr.is_some() as u64);
        // In place: nothing allocated per cycle.
        for (k, &i) in self.hdr_out.iter().enumerate() {
            match &self.out_hdr {
                Some(h) => outputs[i].clone_from(&h[k]),
                None => outputs[i].set_u64(self.ports[i].width, 0),
            }
        }
        let head = self.outq.front();
        put(&self.ports, outputs, ids.m_axis_tvalid, head.is_some() as u64);
        put(&self.ports, outputs, ids.m_axis_tlast, head.is_some_and(|b| b.last) as u64);
        let (dw, kw) = (self.ports[ids.m_axis_tdata].width, self.ports[ids.m_axis_tkeep].width);
        match head {
            Some(b) => {
                outputs[ids.m_axis_tdata].clone_from(&b.data);
                outputs[ids.m_axis_tkeep].clone_from(&b.keep);
            }
            None => {
                outputs[ids.m_axis_tdata].set_u64(dw, 0);
                outputs[ids.m_axis_tkeep].set_u64(kw, 0);
            }
        }
        put(&self.ports, outputs, ids.stat_oversize, self.stat_oversize as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        // A header or beat is copied only when the edge takes it (`clock`
        // drops it otherwise, with the readies of before the edge).
        let hdr = (b(ids.s_hdr_valid) && self.hdrs.len() < HDR_DEPTH)
            .then(|| self.hdr_in.iter().map(|&i| inputs[i].clone()).collect());
        let beat = (b(ids.s_axis_tvalid) && self.axis_ready()).then(|| {
            let beat = Beat {
                data: inputs[ids.s_axis_tdata].clone(),
                keep: inputs[ids.s_axis_tkeep].clone(),
                last: b(ids.s_axis_tlast),
            };
            (beat, b(ids.s_axis_tuser))
        });
        let hdr_taken = b(ids.m_hdr_ready);
        let pay = b(ids.s_pay_valid).then(|| b(ids.s_pay_drop));
        let out_taken = b(ids.m_axis_tready) && !self.outq.is_empty();
        self.clock(b(ids.rst), hdr, beat, hdr_taken, pay, out_taken);
    }
}
