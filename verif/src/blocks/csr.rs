//! `csr` traffic and coverage.
//!
//! AXI4-Lite writes and reads, mostly at the register map's offsets (every
//! register is read and written in a run of some thousand cycles), some
//! at unmapped aligned addresses (DECERR) and some misaligned (SLVERR);
//! one access in eight with a random `prot` (refused once software has
//! set a protection bit in CONTROL). AW and W come independently, as
//! AXI4-Lite allows. The counter inputs pulse at random, and `m_mr` (the
//! table write to the DMA engine) sees random backpressure, so an MR
//! commit's write response waits.

use mrnic_model::block::Bits;
use mrnic_model::csr::{self as csr_model, regmap, CsrParams, STATS};

use super::{hs, idx};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic};

/// Random register traffic (see the module docs).
pub fn traffic(p: &CsrParams, seed: u64) -> Traffic {
    let ports = csr_model::ports(p);
    let offsets: Vec<u64> = regmap(p).iter().map(|r| r.offset as u64).collect();
    let span = 1u64 << p.addr_bits();
    let addr = move |rng: &mut Rng| match rng.below(100) {
        0..=84 => offsets[rng.below(offsets.len() as u64) as usize],
        85..=94 => rng.below(span) & !3,
        _ => rng.below(span) | (1 + rng.below(3)),
    };
    let addr2 = addr.clone();
    let prot = |rng: &mut Rng| if rng.percent(12) { rng.below(8) } else { 0 };
    let mut t = Traffic::new(&ports, seed)
        .idle(25)
        .backpressure(30)
        .random_resets(1)
        .source("s_axil_aw", move |rng, t| {
            t.set_u64("addr", addr(rng)).set_u64("prot", prot(rng));
        })
        .source("s_axil_w", |rng, t| {
            t.set_u64("strb", if rng.percent(70) { 0xf } else { rng.below(16) });
        })
        .source("s_axil_ar", move |rng, t| {
            t.set_u64("addr", addr2(rng)).set_u64("prot", prot(rng));
        });
    for (port, _, _) in STATS {
        t = t.input_u64(port, |rng, _| rng.percent(20) as u64);
    }
    let p = *p;
    t.monitor(move |c| Monitor::declare(&p, c), Monitor::observe)
}

/// Coverage of registers, responses and MR commits.
pub struct Monitor {
    aw: [usize; 3],
    ar: [usize; 3],
    b: [usize; 3],
    r: [usize; 3],
    mr: [usize; 3],
    /// Register index at each word address (`usize::MAX`: unmapped).
    reg_at: Vec<usize>,
    reads: Vec<usize>,
    writes: Vec<usize>,
    bresp: [usize; 4],
    rresp: [usize; 4],
    commit: usize,
    free: usize,
}

impl Monitor {
    fn declare(p: &CsrParams, c: &mut Coverage) -> Monitor {
        let ports = csr_model::ports(p);
        let i = |n: &str| idx(&ports, n);
        let map = regmap(p);
        let mut reg_at = vec![usize::MAX; 1 << (p.addr_bits() - 2)];
        for (k, r) in map.iter().enumerate() {
            reg_at[(r.offset / 4) as usize] = k;
        }
        let resp =
            |c: &mut Coverage, ch: &str| ["OKAY", "EXOKAY", "SLVERR", "DECERR"].map(|r| c.bin(format!("{ch}: {r}")));
        Monitor {
            aw: ["s_axil_awvalid", "s_axil_awready", "s_axil_awaddr"].map(i),
            ar: ["s_axil_arvalid", "s_axil_arready", "s_axil_araddr"].map(i),
            b: ["s_axil_bvalid", "s_axil_bready", "s_axil_bresp"].map(i),
            r: ["s_axil_rvalid", "s_axil_rready", "s_axil_rresp"].map(i),
            mr: ["m_mr_valid", "m_mr_ready", "m_mr_entry_valid"].map(i),
            reads: map.iter().map(|r| c.bin(format!("read {}", r.name))).collect(),
            writes: map.iter().map(|r| c.bin(format!("write {}", r.name))).collect(),
            bresp: resp(c, "write response"),
            rresp: resp(c, "read response"),
            commit: c.bin("MR commit: entry installed"),
            free: c.bin("MR commit: slot freed"),
            reg_at,
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            return;
        }
        for (ch, bins) in [(self.aw, &self.writes), (self.ar, &self.reads)] {
            if hs(v, ch[0], ch[1]) {
                let a = v[ch[2]].as_u64();
                if a % 4 == 0 {
                    if let Some(&k) = self.reg_at.get((a / 4) as usize).filter(|&&k| k != usize::MAX) {
                        c.hit(bins[k]);
                    }
                }
            }
        }
        if hs(v, self.b[0], self.b[1]) {
            c.hit(self.bresp[v[self.b[2]].as_u64() as usize & 3]);
        }
        if hs(v, self.r[0], self.r[1]) {
            c.hit(self.rresp[v[self.r[2]].as_u64() as usize & 3]);
        }
        if hs(v, self.mr[0], self.mr[1]) {
            c.hit(if v[self.mr[2]].bit(0) { self.commit } else { self.free });
        }
    }
}
