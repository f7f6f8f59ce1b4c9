//! `rx_parser` traffic and coverage: frames from the model's own frame
//! generator (`mrnic_model::rx_parser::stimulus`: valid frames of every
//! opcode, data and control, and faulty ones of every drop reason), one
//! beat per `s_axis` transaction, with idles and backpressure on both
//! outputs.

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::rx_parser::stimulus::{self as frames, Rng as FrameRng};
use mrnic_model::rx_parser::{self as rx, Reason, RxParserParams, HDR_AT};
use mrnic_proto::headers::{NackCode, Opcode};
use mrnic_proto::layouts::{common, nack, sack};

use super::{hs, idx};
use crate::coverage::Coverage;
use crate::stimulus::Traffic;

const UDP_PORT: u64 = 4797;

/// Random frames, 30% faulty (see the module docs).
pub fn traffic(p: &RxParserParams, seed: u64) -> Traffic {
    let ports = rx::ports(p);
    let p = *p;
    let mut rng = FrameRng::new(seed ^ 0x5eed);
    let mut beats: VecDeque<rx::Beat> = VecDeque::new();
    Traffic::new(&ports, seed)
        .idle(20)
        .backpressure(30)
        .input_u64("cfg_udp_port", |_, _| UDP_PORT)
        .source("s_axis_t", move |_, t| {
            if beats.is_empty() {
                let s = if rng.chance(30) {
                    let r = Reason::ALL[rng.below(Reason::ALL.len() as u64) as usize];
                    frames::faulty(&mut rng, r, p.mtu, UDP_PORT as u16, p.bytes())
                } else {
                    frames::good(&mut rng, p.mtu, UDP_PORT as u16)
                };
                beats.extend(frames::beats(&s, p.bytes(), &mut rng));
            }
            let b = beats.pop_front().unwrap_or_else(|| unreachable!("refilled above"));
            let mut d = Bits::zero(p.data_bits);
            for (n, &x) in b.data.iter().enumerate() {
                d.0[n / 8] |= (x as u64) << (8 * (n % 8));
            }
            t.set("data", d)
                .set_u64("keep", b.keep as u64)
                .set_u64("last", b.last as u64)
                .set_u64("user", b.user as u64)
                .set_u64("id", rng.below(1 << rx::PLANE_BITS));
        })
        .monitor(move |c| Monitor::declare(&p, c), Monitor::observe)
}

/// Coverage of opcodes, NACK codes, SACK bitmaps at their edges, drop
/// reasons, and drop reasons of control frames.
pub struct Monitor {
    hdr: [usize; 4],
    drops: Vec<(usize, usize)>,
    opcodes: Vec<(u64, usize)>,
    nack_codes: Vec<(u64, usize)>,
    /// SACK bitmap: empty, full.
    bitmaps: [usize; 2],
    payload_drop: [usize; 4],
    dropped_payload: usize,
    /// `s_axis`: valid, ready, data, last.
    input: [usize; 4],
    beat_bytes: usize,
    /// Beats of the current input frame taken so far.
    beat: usize,
    /// The current frame's opcode field, once its beat has passed.
    op: Option<u64>,
    /// The frames that ended 1, 2 and 3 cycles ago: `Some(true)` for an
    /// opcode of the control range (SACK and up: SACK, NACK, PROBE or an
    /// unassigned one), `Some(false)` for data or a frame that ended before
    /// its opcode, `None` where no frame ended.
    ended: [Option<bool>; PULSE_AFTER_TLAST],
    /// Per reason: a frame of the control range dropped for it.
    control_drops: Vec<usize>,
}

/// Cycles from a frame's tlast handshake to its drop pulse: stage A, the
/// process stage, then the finish stage's registered pulse (as the last
/// payload beat, 3 cycles after the tlast beat; `rx_parser`'s pipeline).
const PULSE_AFTER_TLAST: usize = 3;

impl Monitor {
    fn declare(p: &RxParserParams, c: &mut Coverage) -> Monitor {
        let ports = rx::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            hdr: ["m_hdr_valid", "m_hdr_ready", "m_hdr_opcode", "m_hdr_raw"].map(i),
            drops: Reason::ALL
                .iter()
                .map(|r| (i(&format!("stat_drop_{}", r.name())), c.bin(format!("drop: {}", r.name()))))
                .collect(),
            opcodes: Opcode::ALL.iter().map(|o| (*o as u64, c.bin(format!("header: {}", o.name())))).collect(),
            nack_codes: NackCode::ALL
                .iter()
                .map(|k| (*k as u64, c.bin(format!("header: NACK {}", k.name()))))
                .collect(),
            bitmaps: [c.bin("header: SACK, bitmap empty"), c.bin("header: SACK, bitmap full")],
            payload_drop: ["m_axis_tvalid", "m_axis_tready", "m_axis_tlast", "m_axis_tuser"].map(i),
            dropped_payload: c.bin("payload: packet dropped on its last beat (tuser)"),
            input: ["s_axis_tvalid", "s_axis_tready", "s_axis_tdata", "s_axis_tlast"].map(i),
            beat_bytes: p.bytes(),
            beat: 0,
            op: None,
            ended: [None; PULSE_AFTER_TLAST],
            control_drops: Reason::ALL.iter().map(|r| c.bin(format!("control frame dropped: {}", r.name()))).collect(),
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            (self.beat, self.op, self.ended) = (0, None, [None; PULSE_AFTER_TLAST]);
            return;
        }
        if hs(v, self.hdr[0], self.hdr[1]) {
            let op = v[self.hdr[2]].as_u64();
            if let Some(&(_, b)) = self.opcodes.iter().find(|(o, _)| *o == op) {
                c.hit(b);
            }
            let raw = rx::raw_header(&v[self.hdr[3]]);
            if op == Opcode::Nack as u64 {
                let code = nack::CODE.get(&raw);
                if let Some(&(_, b)) = self.nack_codes.iter().find(|(k, _)| *k == code) {
                    c.hit(b);
                }
            }
            if op == Opcode::Sack as u64 {
                let bitmap = &raw[sack::BITMAP.offset..sack::BITMAP.end_byte()];
                if bitmap.iter().all(|&b| b == 0) {
                    c.hit(self.bitmaps[0]);
                } else if bitmap.iter().all(|&b| b == 0xff) {
                    c.hit(self.bitmaps[1]);
                }
            }
        }
        let mut pulse = None;
        for (r, &(port, bin)) in self.drops.iter().enumerate() {
            if v[port].bit(0) {
                c.hit(bin);
                pulse = Some(r);
            }
        }
        // The pulse is the frame's that ended PULSE_AFTER_TLAST cycles ago.
        assert!(
            pulse.is_none() || self.ended[PULSE_AFTER_TLAST - 1].is_some(),
            "rx_parser monitor: a drop pulse {PULSE_AFTER_TLAST} cycles after no frame's end (the latency changed?)"
        );
        if let (Some(r), Some(true)) = (pulse, self.ended[PULSE_AFTER_TLAST - 1]) {
            c.hit(self.control_drops[r]);
        }
        self.ended.rotate_right(1);
        self.ended[0] = None;
        let [iv, ir, id, il] = self.input;
        if hs(v, iv, ir) {
            if self.beat == HDR_AT / self.beat_bytes {
                let lane = HDR_AT % self.beat_bytes;
                let byte = (v[id].0[lane / 8] >> (8 * (lane % 8))) as u8;
                self.op = Some(common::OPCODE.get(&[byte]));
            }
            self.beat += 1;
            if v[il].bit(0) {
                self.ended[0] = Some(self.op.take().is_some_and(|op| op >= Opcode::Sack as u64));
                self.beat = 0;
            }
        }
        let [tv, tr, tl, tu] = self.payload_drop;
        if hs(v, tv, tr) && v[tl].bit(0) && v[tu].bit(0) {
            c.hit(self.dropped_payload);
        }
    }
}
