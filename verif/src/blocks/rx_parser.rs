//! `rx_parser` traffic and coverage: frames from the model's own frame
//! generator (`mrnic_model::rx_parser::stimulus`: valid frames of every
//! opcode and faulty ones of every drop reason), one beat per `s_axis`
//! transaction, with idles and backpressure on both outputs.

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::rx_parser::stimulus::{self as frames, Rng as FrameRng};
use mrnic_model::rx_parser::{self as rx, Reason, RxParserParams};
use mrnic_proto::headers::Opcode;

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

/// Coverage of opcodes and drop reasons.
pub struct Monitor {
    hdr: [usize; 3],
    drops: Vec<(usize, usize)>,
    opcodes: Vec<(u64, usize)>,
    payload_drop: [usize; 4],
    dropped_payload: usize,
}

impl Monitor {
    fn declare(p: &RxParserParams, c: &mut Coverage) -> Monitor {
        let ports = rx::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            hdr: ["m_hdr_valid", "m_hdr_ready", "m_hdr_opcode"].map(i),
            drops: Reason::ALL
                .iter()
                .map(|r| (i(&format!("stat_drop_{}", r.name())), c.bin(format!("drop: {}", r.name()))))
                .collect(),
            opcodes: Opcode::ALL.iter().map(|o| (*o as u64, c.bin(format!("header: {}", o.name())))).collect(),
            payload_drop: ["m_axis_tvalid", "m_axis_tready", "m_axis_tlast", "m_axis_tuser"].map(i),
            dropped_payload: c.bin("payload: packet dropped on its last beat (tuser)"),
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            return;
        }
        if hs(v, self.hdr[0], self.hdr[1]) {
            let op = v[self.hdr[2]].as_u64();
            if let Some(&(_, b)) = self.opcodes.iter().find(|(o, _)| *o == op) {
                c.hit(b);
            }
        }
        for &(port, bin) in &self.drops {
            if v[port].bit(0) {
                c.hit(bin);
            }
        }
        let [tv, tr, tl, tu] = self.payload_drop;
        if hs(v, tv, tr) && v[tl].bit(0) && v[tu].bit(0) {
            c.hit(self.dropped_payload);
        }
    }
}
