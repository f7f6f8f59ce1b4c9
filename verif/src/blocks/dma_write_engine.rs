//! `dma_write_engine` traffic and coverage.
//!
//! The three inputs are tied together: a memory-region write on `s_mr_*`
//! now and then (one transaction in thirty), placements on `s_req_*`
//! mostly inside a region the generator has written (so they are
//! accepted), some outside it or with an unknown key (ACCESS), a third of
//! them SEND placements (`s_req_recv`, needing the region's receive bit
//! where a WRITE needs its remote-write bit), and each
//! placement's payload beats on `s_axis_*` in order (exactly
//! `ceil(len / BYTES)` beats, `tlast` on the last; one placement in a
//! hundred has its `tlast` on the wrong beat, which the engine must count
//! and survive). Lengths reach past 4 KiB and past `axi_max_burst` beats,
//! addresses are unaligned and often just below a 4 KiB boundary. The AXI
//! side is [`crate::axi::AxiWriteSlave`]: random `awready`/`wready`,
//! responses after a random latency, one in fifty an error.
//!
//! [`Directed`] placements go first: the tests queue edge cases there.

use std::collections::VecDeque;

use mrnic_model::block::Bits;
use mrnic_model::dma_write_engine::{self as dwe, DmaWriteEngineParams};

use super::{hs, idx, shared, Shared};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

/// A region as written on `s_mr_*`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    pub key: u32,
    pub valid: bool,
    pub remote_write: bool,
    /// Receive buffers may lie in it (access bit 1).
    pub recv: bool,
    pub base: u64,
    pub len: u64,
}

/// A placement to send: request and payload (`data.len()` = `len`).
#[derive(Clone, Debug)]
pub struct Placement {
    pub rkey: u32,
    pub addr: u64,
    pub data: Vec<u8>,
    /// Beat (0-based) whose `tlast` is flipped: a framing error.
    pub bad_tlast: Option<usize>,
    /// A SEND's placement: `rkey` is its receive's lkey.
    pub recv: bool,
}

/// What the generators share, and where tests queue directed cases.
#[derive(Default)]
pub struct Directed {
    /// Region writes sent before any random one.
    pub regions: VecDeque<Region>,
    /// Placements sent before any random one.
    pub placements: VecDeque<Placement>,
    /// Only the directed transactions, nothing random; and a placement
    /// waits until every region write offered before it was taken (random
    /// traffic lets them race: a request sees only the table writes of
    /// earlier cycles).
    pub only_directed: bool,
    regions_offered: u64,
    regions_taken: u64,
    /// Regions the generator has offered (by slot).
    table: Vec<Option<Region>>,
    /// Payload beats to send, in order: (data, keep, last).
    beats: VecDeque<(Bits, u64, bool)>,
    next_tag: u64,
}

/// Random traffic, and the handle through which tests add directed cases.
pub fn traffic(p: &DmaWriteEngineParams, seed: u64) -> (Traffic, Shared<Directed>) {
    let ports = dwe::ports(p);
    let st = shared(Directed { table: vec![None; p.mr_entries as usize], ..Directed::default() });
    let (s1, s2, s3, s4) = (st.clone(), st.clone(), st.clone(), st.clone());
    let (p1, p2, p3) = (*p, *p, *p);
    let t = Traffic::new(&ports, seed)
        .idle(15)
        .backpressure(25)
        .axi_write_slave("m_axi_", 6, 2)
        .source("s_mr_", move |rng, t| region(&p1, &mut s1.borrow_mut(), rng, t))
        .source("s_req_", move |rng, t| request(&p2, &mut s2.borrow_mut(), rng, t))
        .source("s_axis_t", move |_, t| {
            let mut s = s3.borrow_mut();
            match s.beats.pop_front() {
                Some((d, keep, last)) => {
                    t.set("data", d).set_u64("keep", keep).set_u64("last", last as u64);
                }
                None => {
                    t.skip();
                }
            }
        })
        .monitor(move |c| Monitor::declare(&p3, c, s4), Monitor::observe);
    (t, st)
}

fn region(p: &DmaWriteEngineParams, s: &mut Directed, rng: &mut Rng, t: &mut Txn) {
    let r = match s.regions.pop_front() {
        Some(r) => r,
        None if s.only_directed || !rng.percent(4) => {
            t.skip();
            return;
        }
        None => {
            let slot = rng.below(p.mr_entries as u64) as u32;
            let key = slot | (rng.below(4) as u32) << p.index_bits();
            let base = (rng.next_u64() & 0x0000_00ff_ffff_f000) + rng.below(4096);
            let len = match rng.below(10) {
                0 => rng.next_u64() >> rng.below(64),
                1..=3 => rng.below(8192),
                _ => 8192 + rng.below(1 << 18),
            };
            let (remote_write, recv) = match rng.below(10) {
                0 => (false, false),
                1..=3 => (false, true),
                4..=5 => (true, true),
                _ => (true, false),
            };
            Region { key, valid: !rng.percent(10), remote_write, recv, base, len }
        }
    };
    s.table[(r.key % p.mr_entries) as usize] = Some(r);
    s.regions_offered += 1;
    t.set_u64("key", r.key as u64)
        .set_u64("entry_valid", r.valid as u64)
        .set_u64("remote_write", r.remote_write as u64)
        .set_u64("recv", r.recv as u64)
        .set_u64("base", r.base)
        .set_u64("len", r.len);
}

fn request(p: &DmaWriteEngineParams, s: &mut Directed, rng: &mut Rng, t: &mut Txn) {
    if s.only_directed && s.regions_taken < s.regions_offered {
        t.skip();
        return;
    }
    let pl = match s.placements.pop_front() {
        Some(pl) => pl,
        None if s.only_directed => {
            t.skip();
            return;
        }
        None => random_placement(p, s, rng),
    };
    let b = p.bytes() as usize;
    let n = pl.data.len().div_ceil(b);
    for (i, chunk) in pl.data.chunks(b).enumerate() {
        let mut d = Bits::zero(p.data_bits);
        for (k, &x) in chunk.iter().enumerate() {
            d.0[k / 8] |= (x as u64) << (8 * (k % 8));
        }
        let keep = if chunk.len() >= 64 { u64::MAX } else { (1u64 << chunk.len()) - 1 };
        let last = (i + 1 == n) != (pl.bad_tlast == Some(i));
        s.beats.push_back((d, keep, last));
    }
    s.next_tag += 1;
    t.set_u64("tag", s.next_tag)
        .set_u64("rkey", pl.rkey as u64)
        .set_u64("addr", pl.addr)
        .set_u64("len", pl.data.len() as u64)
        .set_u64("recv", pl.recv as u64);
}

fn random_placement(p: &DmaWriteEngineParams, s: &Directed, rng: &mut Rng) -> Placement {
    let max_burst_bytes = (p.max_burst * p.bytes()) as u64;
    let len = match rng.below(20) {
        0 => 0,
        1..=7 => 1 + rng.below(64),
        8..=15 => rng.below(1100),
        16..=18 => max_burst_bytes - 16 + rng.below(32),
        _ => rng.below(9000),
    } as usize;
    let regions: Vec<Region> = s.table.iter().flatten().copied().collect();
    let (rkey, addr) = match regions.get(rng.below(regions.len().max(1) as u64) as usize) {
        Some(r) if !rng.percent(15) && r.len >= len as u64 => {
            let room = r.len - len as u64;
            // Often just below a 4 KiB boundary, so the placement splits.
            let off = if rng.percent(40) {
                let page_end = (r.base | 0xfff) + 1;
                (page_end - r.base).saturating_sub(1 + rng.below(64)).min(room)
            } else {
                rng.below(room.min(1 << 20) + 1)
            };
            (r.key, r.base + off)
        }
        Some(r) => (if rng.percent(50) { r.key } else { rng.next_u64() as u32 }, r.base.wrapping_add(r.len)),
        None => (rng.next_u64() as u32, rng.next_u64()),
    };
    let data = (0..len).map(|_| rng.next_u64() as u8).collect();
    let bad_tlast = rng.percent(1).then(|| rng.below(len.div_ceil(8).max(1) as u64) as usize);
    Placement { rkey, addr, data, bad_tlast, recv: rng.percent(33) }
}

/// Coverage of completions, bursts and framing.
pub struct Monitor {
    cpl: [usize; 3],
    aw: [usize; 4],
    req: [usize; 4],
    frame: usize,
    status: [usize; 4],
    max_burst_bin: usize,
    split: usize,
    unaligned: usize,
    zero_len: usize,
    recv: usize,
    frame_err: usize,
    max_burst: u64,
    bytes: u64,
    mr: [usize; 2],
    shared: Shared<Directed>,
}

impl Monitor {
    fn declare(p: &DmaWriteEngineParams, c: &mut Coverage, shared: Shared<Directed>) -> Monitor {
        let ports = dwe::ports(p);
        let i = |n: &str| idx(&ports, n);
        Monitor {
            cpl: ["m_cpl_valid", "m_cpl_ready", "m_cpl_status"].map(i),
            aw: ["m_axi_awvalid", "m_axi_awready", "m_axi_awaddr", "m_axi_awlen"].map(i),
            req: ["s_req_valid", "s_req_ready", "s_req_len", "s_req_recv"].map(i),
            frame: i("stat_frame_err"),
            status: ["OK", "ACCESS", "AXI error", "code 3"].map(|s| c.bin(format!("completion: {s}"))),
            max_burst_bin: c.bin("AW: a maximum burst (axi_max_burst beats)"),
            split: c.bin("AW: cut short by a 4 KiB boundary"),
            unaligned: c.bin("AW: unaligned first address"),
            zero_len: c.bin("request: zero length"),
            recv: c.bin("request: a SEND's placement (s_req_recv)"),
            frame_err: c.bin("framing error counted (stat_frame_err)"),
            max_burst: p.max_burst as u64,
            bytes: p.bytes() as u64,
            mr: ["s_mr_valid", "s_mr_ready"].map(i),
            shared,
        }
    }

    fn observe(&mut self, v: &[Bits], rst: bool, c: &mut Coverage) {
        if rst {
            return;
        }
        if hs(v, self.mr[0], self.mr[1]) {
            self.shared.borrow_mut().regions_taken += 1;
        }
        if hs(v, self.cpl[0], self.cpl[1]) {
            c.hit(self.status[v[self.cpl[2]].as_u64() as usize & 3]);
        }
        if hs(v, self.aw[0], self.aw[1]) {
            let (addr, beats) = (v[self.aw[2]].as_u64(), v[self.aw[3]].as_u64() + 1);
            if beats == self.max_burst {
                c.hit(self.max_burst_bin);
            }
            let end = (addr & !(self.bytes - 1)).wrapping_add(beats * self.bytes);
            if end % 4096 == 0 && beats < self.max_burst {
                c.hit(self.split);
            }
            if addr % self.bytes != 0 {
                c.hit(self.unaligned);
            }
        }
        if hs(v, self.req[0], self.req[1]) {
            if v[self.req[2]].as_u64() == 0 {
                c.hit(self.zero_len);
            }
            if v[self.req[3]].bit(0) {
                c.hit(self.recv);
            }
        }
        if v[self.frame].bit(0) {
            c.hit(self.frame_err);
        }
    }
}
