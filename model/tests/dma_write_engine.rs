//! `dma_write_engine` at the cycle level: throughput, burst splitting,
//! unaligned placements, backpressure, rejection, SEND placements by a
//! receive's lkey, zero-length placements, and a property test with an AXI
//! slave memory that checks every write against the region.

use std::collections::{HashMap, VecDeque};

use mrnic_model::dma_write_engine::{
    bursts, check, status, Burst, DmaWriteEngine, DmaWriteEngineParams, Inputs, MrEntry, PAGE_BYTES,
};
use mrnic_proto::Config;
use proptest::prelude::*;

/// One seeded RNG per run (xorshift64*), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `pct` percent.
    fn pct(&mut self, pct: u32) -> bool {
        self.below(100) < pct as u64
    }
}

fn params(name: &str) -> DmaWriteEngineParams {
    DmaWriteEngineParams::from_config(&Config::builtin(name).unwrap()).unwrap()
}

/// A placement the bench offers.
#[derive(Debug, Clone)]
struct Placement {
    tag: u16,
    rkey: u32,
    addr: u64,
    payload: Vec<u8>,
    /// A SEND's placement (`s_req_recv`): the key is a receive's lkey.
    recv: bool,
}

impl Placement {
    fn new(tag: u16, rkey: u32, addr: u64, payload: Vec<u8>) -> Placement {
        Placement { tag, rkey, addr, payload, recv: false }
    }

    /// What the engine must do: the reference's check with the access the
    /// kind needs, and an empty placement accepted without a key.
    fn accepted(&self, table: &HashMap<u32, MrEntry>, mr_entries: u32) -> bool {
        let len = self.payload.len() as u64;
        len == 0
            || table
                .get(&(self.rkey & (mr_entries - 1)))
                .is_some_and(|e| check(e, self.rkey, self.recv, self.addr, len))
    }
}

/// Backpressure and idle percentages (0 = always ready / always valid).
#[derive(Debug, Clone, Copy, Default)]
struct Pressure {
    aw: u32,
    w: u32,
    b: u32,
    cpl: u32,
    req_idle: u32,
    data_idle: u32,
    /// Cycles a B response waits after the burst's last W beat.
    b_delay: u32,
}

/// What one run saw.
#[derive(Debug, Default)]
struct Seen {
    cycles: u64,
    /// (tag, status), in order.
    cpls: Vec<(u16, u8)>,
    /// Every AW burst (address, beats) in order.
    aws: Vec<Burst>,
    /// Cycle of the first W handshake and of the last.
    first_w: Option<u64>,
    last_w: u64,
    w_beats: u64,
    /// Cycle of the first AW valid.
    first_aw_valid: Option<u64>,
    mem: HashMap<u64, u8>,
}

struct Bench {
    dut: DmaWriteEngine,
    p: DmaWriteEngineParams,
    rng: Rng,
    pr: Pressure,
    /// Addresses whose write gets SLVERR.
    bad_addr: Option<(u64, u64)>,
    seed: u64,
}

impl Bench {
    fn new(p: DmaWriteEngineParams, seed: u64, pr: Pressure) -> Bench {
        Bench { dut: DmaWriteEngine::new(p), p, rng: Rng::new(seed), pr, bad_addr: None, seed }
    }

    fn idle(&self) -> Inputs {
        Inputs { tdata: vec![0; self.p.bytes() as usize], ..Inputs::default() }
    }

    /// Reset, wait out the sweep, write the table.
    fn setup(&mut self, table: &[MrEntry]) {
        let mut i = self.idle();
        i.rst = true;
        self.dut.clock(&i);
        let mut n = 0;
        while !self.dut.outputs().mr_ready {
            self.dut.clock(&self.idle());
            n += 1;
            assert!(n <= self.p.mr_entries + 1, "the sweep takes MR_ENTRIES cycles");
        }
        assert_eq!(n, self.p.mr_entries);
        for e in table {
            let i = Inputs {
                mr_valid: true,
                mr_key: e.key,
                mr_entry_valid: e.valid,
                mr_remote_write: e.access & 1 != 0,
                mr_recv: e.access & 2 != 0,
                mr_base: e.base,
                mr_len: e.len,
                ..self.idle()
            };
            assert!(self.dut.outputs().mr_ready);
            self.dut.clock(&i);
        }
    }

    /// Runs the placements to completion; checks every AXI rule and every
    /// write against the placement's range and region on the way.
    fn run(&mut self, places: &[Placement], table: &HashMap<u32, MrEntry>) -> Seen {
        let p = self.p;
        let b = p.bytes() as usize;
        let seed = self.seed;
        let slot = |key: u32| key & (p.mr_entries - 1);
        let accepted = |pl: &Placement| pl.accepted(table, p.mr_entries);
        // Expected bursts, in order, with their placement's range and region.
        let mut expect_bursts: VecDeque<(Burst, u64, u64, MrEntry)> = VecDeque::new();
        for pl in places {
            if accepted(pl) && !pl.payload.is_empty() {
                let e = table[&slot(pl.rkey)];
                let len = pl.payload.len() as u64;
                for bu in bursts(&p, pl.addr, len) {
                    expect_bursts.push_back((bu, pl.addr, pl.addr + len, e));
                }
            }
        }
        // Stimulus queues.
        let mut reqs: VecDeque<&Placement> = places.iter().collect();
        let mut beats: VecDeque<(Vec<u8>, u128, bool)> = VecDeque::new();
        for pl in places {
            let n = pl.payload.len().div_ceil(b);
            for k in 0..n {
                let chunk = &pl.payload[k * b..((k + 1) * b).min(pl.payload.len())];
                let mut data = chunk.to_vec();
                // Bytes past the payload are garbage: they must not be written.
                data.resize_with(b, || self.rng.next() as u8);
                let keep = if chunk.len() >= 128 { u128::MAX } else { (1u128 << chunk.len()) - 1 };
                beats.push_back((data, keep, k == n - 1));
            }
        }
        let mut seen = Seen::default();
        // Slave state.
        let mut aw_q: VecDeque<(Burst, u32)> = VecDeque::new(); // burst, beats done
        let mut w_q: VecDeque<(Vec<u8>, u128, bool)> = VecDeque::new();
        let mut b_q: VecDeque<(u64, u8)> = VecDeque::new(); // ready cycle, resp
        let mut held_aw: Option<(u64, u8)> = None;
        let mut held_w: Option<(Vec<u8>, u128, bool)> = None;
        let mut held_cpl: Option<(u16, u8)> = None;
        let mut req_on = false;
        let mut data_on = false;
        let mut burst_err = false;
        let mut b_on = false;
        let total_cpl = places.len();
        let mut cycle = 0u64;
        // A rejected placement may complete before its payload has drained.
        while seen.cpls.len() < total_cpl || !beats.is_empty() {
            cycle += 1;
            assert!(cycle < 200_000, "seed {seed:#x}: no progress: {:?}", self.dut);
            let o = self.dut.outputs();
            // Output stability: a valid that was not taken holds its payload.
            if let Some(h) = held_aw.take() {
                assert!(o.awvalid && (o.awaddr, o.awlen) == h, "seed {seed:#x}: AW changed before its handshake");
            }
            if let Some(h) = held_w.take() {
                assert!(o.wvalid && (o.wdata.clone(), o.wstrb, o.wlast) == h, "seed {seed:#x}: W changed");
            }
            if let Some(h) = held_cpl.take() {
                assert!(o.cpl_valid && (o.cpl_tag, o.cpl_status) == h, "seed {seed:#x}: completion changed");
            }
            if o.awvalid && seen.first_aw_valid.is_none() {
                seen.first_aw_valid = Some(cycle);
            }
            let mut i = self.idle();
            // Requests and payload, holding still until taken.
            req_on = req_on || (!reqs.is_empty() && !self.rng.pct(self.pr.req_idle));
            if let (true, Some(pl)) = (req_on, reqs.front()) {
                i.req_valid = true;
                i.req_tag = pl.tag;
                i.req_rkey = pl.rkey;
                i.req_addr = pl.addr;
                i.req_len = pl.payload.len() as u16;
                i.req_recv = pl.recv;
            }
            data_on = data_on || (!beats.is_empty() && !self.rng.pct(self.pr.data_idle));
            if let (true, Some((d, k, l))) = (data_on, beats.front()) {
                i.tvalid = true;
                i.tdata = d.clone();
                i.tkeep = *k;
                i.tlast = *l;
            }
            i.awready = !self.rng.pct(self.pr.aw);
            i.wready = !self.rng.pct(self.pr.w);
            i.cpl_ready = !self.rng.pct(self.pr.cpl);
            if let Some(&(at, resp)) = b_q.front() {
                b_on = b_on || (at <= cycle && !self.rng.pct(self.pr.b));
                if b_on {
                    i.bvalid = true;
                    i.bresp = resp;
                }
            }
            // Handshakes of this cycle.
            if i.req_valid && o.req_ready {
                reqs.pop_front();
                req_on = false;
            }
            if i.tvalid && o.tready {
                beats.pop_front();
                data_on = false;
            }
            assert!(!o.frame_err, "seed {seed:#x}: framing error on well-formed payload");
            if o.awvalid {
                if i.awready {
                    let bu = Burst { addr: o.awaddr, beats: o.awlen as u32 + 1 };
                    let (want, start, end, e) = expect_bursts.pop_front().expect("an AW nobody asked for");
                    assert_eq!(bu, want, "seed {seed:#x}: burst");
                    // Inside the placement, the region, one 4 KiB page, the burst limit.
                    // Subtract before adding: a burst may end on the last byte of the address space.
                    let last_byte = (bu.addr & !(b as u64 - 1)) + (bu.beats as u64 * b as u64 - 1);
                    assert!(bu.addr >= start && bu.addr >= e.base && bu.addr < end, "seed {seed:#x}: {bu:?}");
                    assert_eq!(bu.addr / PAGE_BYTES, last_byte / PAGE_BYTES, "seed {seed:#x}: {bu:?} crosses 4 KiB");
                    assert!(bu.beats <= p.max_burst);
                    seen.aws.push(bu);
                    aw_q.push_back((bu, 0));
                } else {
                    held_aw = Some((o.awaddr, o.awlen));
                }
            }
            if o.wvalid {
                if i.wready {
                    seen.first_w.get_or_insert(cycle);
                    seen.last_w = cycle;
                    seen.w_beats += 1;
                    w_q.push_back((o.wdata.clone(), o.wstrb, o.wlast));
                } else {
                    held_w = Some((o.wdata.clone(), o.wstrb, o.wlast));
                }
            }
            if o.cpl_valid {
                if i.cpl_ready {
                    seen.cpls.push((o.cpl_tag, o.cpl_status));
                } else {
                    held_cpl = Some((o.cpl_tag, o.cpl_status));
                }
            }
            if i.bvalid && o.bready {
                b_q.pop_front();
                b_on = false;
            }
            // The slave writes the beats whose burst it knows.
            while let (Some((bu, done)), Some(_)) = (aw_q.front_mut(), w_q.front()) {
                let (data, strb, last) = w_q.pop_front().unwrap();
                let beat_addr = (bu.addr & !(b as u64 - 1)) + *done as u64 * b as u64;
                for (lane, &byte) in data.iter().enumerate() {
                    if strb >> lane & 1 == 1 {
                        let a = beat_addr + lane as u64;
                        assert!(a >= bu.addr, "seed {seed:#x}: strobe below an unaligned burst start");
                        seen.mem.insert(a, byte);
                        if self.bad_addr.is_some_and(|(lo, hi)| (lo..hi).contains(&a)) {
                            burst_err = true;
                        }
                    }
                }
                *done += 1;
                assert_eq!(last, *done == bu.beats, "seed {seed:#x}: wlast at beat {done} of {bu:?}");
                if last {
                    aw_q.pop_front();
                    b_q.push_back((cycle + self.pr.b_delay as u64, if burst_err { 2 } else { 0 }));
                    burst_err = false;
                }
            }
            self.dut.clock(&i);
        }
        assert!(expect_bursts.is_empty(), "seed {seed:#x}: bursts never issued: {expect_bursts:?}");
        assert!(reqs.is_empty() && beats.is_empty(), "seed {seed:#x}: stimulus left over");
        seen.cycles = cycle;
        // Writes equal the payloads of the accepted placements, nothing else.
        let mut want: HashMap<u64, u8> = HashMap::new();
        for pl in places.iter().filter(|pl| accepted(pl)) {
            for (k, &byte) in pl.payload.iter().enumerate() {
                want.insert(pl.addr + k as u64, byte);
            }
        }
        assert_eq!(seen.mem.len(), want.len(), "seed {seed:#x}: bytes written");
        for (a, v) in &want {
            assert_eq!(seen.mem.get(a), Some(v), "seed {seed:#x}: byte at {a:#x}");
        }
        // One completion per placement, in order, with the check's status.
        for (pl, &(tag, st)) in places.iter().zip(&seen.cpls) {
            assert_eq!(tag, pl.tag, "seed {seed:#x}");
            if !accepted(pl) {
                assert_eq!(st, status::ACCESS, "seed {seed:#x}: {pl:?}");
            } else if self.bad_addr.is_none() {
                assert_eq!(st, status::OK, "seed {seed:#x}: {pl:?}");
            }
        }
        seen
    }
}

const KEY: u32 = 0x1234_5603;

fn region(base: u64, len: u64) -> MrEntry {
    MrEntry { valid: true, access: 1, key: KEY, base, len }
}

fn table_of(entries: &[MrEntry], p: &DmaWriteEngineParams) -> HashMap<u32, MrEntry> {
    entries.iter().map(|e| (e.key & (p.mr_entries - 1), *e)).collect()
}

fn payload(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next() as u8).collect()
}

/// Runs placements on one region through a bench; returns what it saw.
fn place(p: DmaWriteEngineParams, pr: Pressure, entries: &[MrEntry], places: &[Placement], seed: u64) -> Seen {
    let mut bench = Bench::new(p, seed, pr);
    bench.setup(entries);
    bench.run(places, &table_of(entries, &p))
}

#[test]
fn params_refuse_what_the_engine_cannot_build() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.axi_outstanding = 3;
    let e = DmaWriteEngineParams::from_config(&cfg).unwrap_err();
    assert_eq!(e.field, "hardware.axi_outstanding");
    assert!(e.to_string().contains("power of 2"), "{e}");
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.axi_addr_bits = 48;
    assert_eq!(DmaWriteEngineParams::from_config(&cfg).unwrap_err().field, "hardware.axi_addr_bits");
    let mut cfg = Config::builtin("default").unwrap();
    cfg.hardware.axi_max_burst = 128;
    let e = DmaWriteEngineParams::from_config(&cfg).unwrap_err();
    assert!(e.to_string().contains("4 KiB"), "{e}");
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.mr_entries = 1;
    assert_eq!(DmaWriteEngineParams::from_config(&cfg).unwrap_err().field, "hardware.mr_entries");
    assert!(!params("small").mr_block_ram());
    assert!(params("default").mr_block_ram());
}

#[test]
fn check_matches_the_reference_rules() {
    use mrnic_reference::memory::{Access, Memory};
    let mut m = Memory::new(4);
    let k = m.register(0x1000, 0x100, Access::REMOTE_WRITE).unwrap();
    let kr = m.register(0x2000, 0x100, Access::RECV).unwrap();
    let top = m.register(u64::MAX - 0xff, 0xff, Access::REMOTE_WRITE).unwrap();
    let entry = |key: u32| {
        let r = m.region(key).unwrap();
        MrEntry { valid: true, access: r.access.0, key, base: r.base, len: r.len() }
    };
    let cases = [
        (k, 0x1000, 0x100),
        (k, 0x1100, 0),
        (k, 0x10ff, 2),
        (k, 0xfff, 1),
        (k, u64::MAX, 2),
        (k, 0x1000, 1),
        (kr, 0x2000, 1),
        (kr, 0x2000, 0x100),
        (kr, 0x20ff, 2),
        (kr, 0x1fff, 1),
        (top, u64::MAX - 0xff, 0xff),
        (top, u64::MAX - 0xff, 0x100),
        (top, u64::MAX, 1),
        (top, u64::MAX, 0),
    ];
    for (key, addr, len) in cases {
        for (recv, need) in [(false, Access::REMOTE_WRITE), (true, Access::RECV)] {
            let want = m.check(key, addr, len, need).is_ok();
            let at = format!("key {key:#x} [{addr:#x}, +{len:#x}) recv {recv}");
            assert_eq!(check(&entry(key), key, recv, addr, len), want, "{at}");
            assert!(!check(&entry(key), key ^ 0x100, recv, addr, len), "a different key never matches: {at}");
            let invalid = MrEntry { valid: false, ..entry(key) };
            assert!(!check(&invalid, key, recv, addr, len), "an invalid entry never matches: {at}");
        }
    }
}

#[test]
fn sustains_one_beat_per_cycle_without_backpressure() {
    for name in ["small", "default"] {
        let p = params(name);
        let b = p.bytes() as usize;
        let mut rng = Rng::new(1);
        // 16 back-to-back aligned placements of 32 beats each.
        let base = 0x10_0000u64;
        let n_beats = 32usize;
        let places: Vec<Placement> = (0..16)
            .map(|i| Placement::new(i, KEY, base + (i as u64) * (n_beats * b) as u64, payload(&mut rng, n_beats * b)))
            .collect();
        let seen = place(p, Pressure::default(), &[region(base, 1 << 20)], &places, 1);
        let total = 16 * n_beats as u64;
        assert_eq!(seen.w_beats, total);
        let span = seen.last_w - seen.first_w.unwrap() + 1;
        assert_eq!(span, total, "{name}: {total} beats took {span} cycles");
        // Fixed latency: request handshake in cycle 1, first AW valid L + 2 later.
        assert_eq!(seen.first_aw_valid, Some(1 + p.latency() as u64), "{name}");
        assert_eq!(seen.first_w, Some(1 + p.latency() as u64), "{name}");
        // Unaligned placements cost at most one extra cycle each.
        let places: Vec<Placement> = (0..16)
            .map(|i| Placement::new(i, KEY, base + 3 + (i as u64) * 4096, payload(&mut rng, n_beats * b)))
            .collect();
        let seen = place(p, Pressure::default(), &[region(base, 1 << 20)], &places, 2);
        let span = seen.last_w - seen.first_w.unwrap() + 1;
        assert_eq!(seen.w_beats, 16 * (n_beats as u64 + 1));
        assert_eq!(span, 16 * (n_beats as u64 + 1), "{name}");
    }
}

#[test]
fn splits_at_4k_boundaries_and_at_the_burst_limit() {
    let p = params("small"); // 8-byte beats, 64-beat bursts (512 bytes)
    let base = 0x4_0000u64;
    let mut rng = Rng::new(3);
    // 0x4_0f00 .. 0x4_1300: to the page end is 256 bytes = 32 beats, then 512 bytes
    // (the burst limit), then 256 bytes.
    let places = [Placement::new(7, KEY, base + 0xf00, payload(&mut rng, 0x400))];
    let seen = place(p, Pressure::default(), &[region(base, 0x10000)], &places, 3);
    let got: Vec<(u64, u32)> = seen.aws.iter().map(|b| (b.addr, b.beats - 1)).collect();
    assert_eq!(got, [(0x4_0f00, 31), (0x4_1000, 63), (0x4_1200, 31)]);
    assert_eq!(seen.cpls, [(7, status::OK)]);

    // Default: 64-byte beats, 64-beat bursts = one whole page per burst; an
    // unaligned start 0x20 below a page boundary gives a 1-beat burst.
    let p = params("default");
    let places = [Placement::new(9, KEY, base + 0xfe0, payload(&mut rng, 0x1040))];
    let seen = place(p, Pressure::default(), &[region(base, 0x10000)], &places, 4);
    let got: Vec<(u64, u32)> = seen.aws.iter().map(|b| (b.addr, b.beats - 1)).collect();
    assert_eq!(got, [(0x4_0fe0, 0), (0x4_1000, 63), (0x4_2000, 0)]);
}

#[test]
fn unaligned_start_and_end_have_exact_strobes() {
    let p = params("small");
    let base = 0x8000u64;
    let mut rng = Rng::new(5);
    // Each (offset, len) in one run; the bench checks the bytes written.
    let mut places = Vec::new();
    for (i, (off, len)) in [(3u64, 2usize), (5, 3), (1, 14), (7, 9), (0, 1), (6, 8), (2, 23)].iter().enumerate() {
        places.push(Placement::new(i as u16, KEY, base + 0x100 * i as u64 + off, payload(&mut rng, *len)));
    }
    let seen = place(p, Pressure::default(), &[region(base, 0x1000)], &places, 5);
    assert!(seen.cpls.iter().all(|&(_, s)| s == status::OK));
    // [3, 5) within one beat: one burst of one beat, awaddr unaligned.
    assert_eq!(seen.aws[0], Burst { addr: base + 3, beats: 1 });
    // [0x105, 0x108): one beat; [0x201, 0x20f): two beats.
    assert_eq!(seen.aws[1], Burst { addr: base + 0x105, beats: 1 });
    assert_eq!(seen.aws[2], Burst { addr: base + 0x201, beats: 2 });

    // The strobes themselves, beat by beat, on a fresh engine.
    let mut dut = DmaWriteEngine::new(p);
    let idle = || Inputs { tdata: vec![0; 8], awready: true, wready: true, cpl_ready: true, ..Inputs::default() };
    dut.clock(&Inputs { rst: true, ..idle() });
    while !dut.outputs().mr_ready {
        dut.clock(&idle());
    }
    let e = region(base, 0x1000);
    dut.clock(&Inputs {
        mr_valid: true,
        mr_key: KEY,
        mr_entry_valid: true,
        mr_remote_write: true,
        mr_base: e.base,
        mr_len: e.len,
        ..idle()
    });
    // 13 bytes at offset 6: beats cover lanes 6..8, 0..8, 0..3.
    let data: Vec<u8> = (1..=16).collect();
    let mut beats = VecDeque::from([(data[0..8].to_vec(), 0xffu128, false), (data[8..16].to_vec(), 0x1f, true)]);
    let mut req = true;
    let mut strobes = Vec::new();
    for _ in 0..20 {
        let o = dut.outputs();
        if o.wvalid {
            strobes.push((o.wstrb, o.wdata.clone(), o.wlast));
        }
        let mut i = idle();
        if req {
            (i.req_valid, i.req_tag, i.req_rkey, i.req_addr, i.req_len) = (true, 1, KEY, base + 0x806, 13);
        }
        if let Some((d, k, l)) = beats.front() {
            (i.tvalid, i.tdata, i.tkeep, i.tlast) = (true, d.clone(), *k, *l);
        }
        if i.req_valid && o.req_ready {
            req = false;
        }
        if i.tvalid && o.tready {
            beats.pop_front();
        }
        dut.clock(&i);
    }
    assert_eq!(strobes.len(), 3);
    assert_eq!(strobes[0].0, 0b1100_0000);
    assert_eq!(strobes[1].0, 0xff);
    assert_eq!(strobes[2].0, 0b0000_0111);
    assert_eq!(&strobes[0].1[6..8], &[1, 2]);
    assert_eq!(&strobes[1].1[..], &[3, 4, 5, 6, 7, 8, 9, 10]);
    assert_eq!(&strobes[2].1[0..3], &[11, 12, 13]);
    assert_eq!(strobes.iter().map(|s| s.2).collect::<Vec<_>>(), [false, false, true]);
}

#[test]
fn random_backpressure_keeps_payloads_stable_and_data_exact() {
    for (name, seed) in [("small", 0x11u64), ("default", 0x12), ("small", 0x13)] {
        let p = params(name);
        let mut rng = Rng::new(seed);
        let base = 0x20_0000u64;
        let places: Vec<Placement> = (0..60)
            .map(|i| {
                let len = rng.below(600) as usize;
                Placement::new(i, KEY, base + rng.below(0x8000), payload(&mut rng, len))
            })
            .collect();
        // Later placements overwrite earlier ones in order: keep them disjoint.
        let places: Vec<Placement> = places
            .into_iter()
            .enumerate()
            .map(|(i, mut pl)| {
                pl.addr = base + i as u64 * 0x1000 + (pl.addr & 0x3ff);
                pl
            })
            .collect();
        let pr = Pressure { aw: 40, w: 40, b: 40, cpl: 30, req_idle: 20, data_idle: 20, b_delay: 5 };
        let seen = place(p, pr, &[region(base, 0x10_0000)], &places, seed);
        assert_eq!(seen.cpls.len(), 60);
    }
}

#[test]
fn rejected_placements_issue_no_write_and_drain_their_payload() {
    let p = params("small");
    let base = 0x1_0000u64;
    let mut rng = Rng::new(6);
    let mut ro = region(base + 0x1000, 0x100);
    ro.key = KEY + 1; // slot 4 (16 entries), no remote write
    ro.access = 2;
    let entries = [region(base, 0x100), ro];
    let mk = |tag, rkey, addr, len: usize, rng: &mut Rng| Placement::new(tag, rkey, addr, payload(rng, len));
    let places = [
        mk(1, KEY, base, 0x20, &mut rng),              // ok
        mk(2, KEY, base + 0xf0, 0x20, &mut rng),       // past the end
        mk(3, KEY ^ 0x1000, base, 0x20, &mut rng),     // key differs in high bits
        mk(4, KEY + 1, base + 0x1000, 0x10, &mut rng), // no remote write
        mk(5, KEY + 2, base, 8, &mut rng),             // empty slot
        mk(6, KEY, base - 1, 2, &mut rng),             // below the base
        mk(7, KEY, base + 0x40, 0, &mut rng),          // empty, ok
        mk(8, KEY, u64::MAX - 3, 8, &mut rng),         // wraps
        mk(9, KEY, base + 0x80, 0x80, &mut rng),       // ok, to the end
    ];
    let seen = place(p, Pressure { aw: 30, w: 30, ..Pressure::default() }, &entries, &places, 6);
    let st: Vec<u8> = seen.cpls.iter().map(|c| c.1).collect();
    use status::{ACCESS as A, OK};
    assert_eq!(st, [OK, A, A, A, A, A, OK, A, OK]);
    assert_eq!(seen.aws.len(), 2, "only the accepted placements wrote: {:?}", seen.aws);
}

#[test]
fn send_placements_need_receive_access_and_empty_ones_no_key() {
    let p = params("small");
    let base = 0x1_0000u64;
    let mut rng = Rng::new(9);
    let mut rb = region(base + 0x1000, 0x100);
    rb.key = KEY + 1; // receive buffers only
    rb.access = 2;
    let mut local = region(base + 0x2000, 0x100);
    local.key = KEY + 2; // neither access bit: a local source buffer
    local.access = 0;
    let entries = [region(base, 0x100), rb, local];
    let mk = |tag, rkey, recv, addr, len: usize, rng: &mut Rng| Placement {
        recv,
        ..Placement::new(tag, rkey, addr, payload(rng, len))
    };
    let places = [
        mk(1, KEY + 1, true, base + 0x1003, 0x21, &mut rng), // SEND into a receive region: ok
        mk(2, KEY + 1, false, base + 0x1000, 0x10, &mut rng), // a WRITE by the same key: no remote write
        mk(3, KEY, true, base, 0x10, &mut rng),              // SEND by a remote-write-only key
        mk(4, KEY + 2, true, base + 0x2000, 0x10, &mut rng), // SEND by a local region's key
        mk(5, KEY + 1, true, base + 0x10f1, 0x10, &mut rng), // SEND one byte past the end
        mk(6, KEY + 1, true, base + 0xfff, 2, &mut rng),     // SEND one byte below the base
        mk(7, KEY + 3, true, base + 0x1000, 8, &mut rng),    // SEND by a key with an empty slot
        mk(8, KEY + 3, false, u64::MAX, 0, &mut rng),        // empty WRITE, no region: ok
        mk(9, KEY ^ 0x100, true, base + 0x1000, 0, &mut rng), // empty SEND, stale key: ok
        mk(10, KEY + 1, true, base + 0x10f0, 0x10, &mut rng), // SEND to the last byte: ok
    ];
    let seen = place(p, Pressure { aw: 30, w: 30, b: 20, ..Pressure::default() }, &entries, &places, 9);
    let st: Vec<u8> = seen.cpls.iter().map(|c| c.1).collect();
    use status::{ACCESS as A, OK};
    assert_eq!(st, [OK, A, A, A, A, A, A, OK, OK, OK]);
    assert_eq!(seen.aws.len(), 2, "only the two non-empty accepted placements wrote: {:?}", seen.aws);
}

#[test]
fn an_empty_placement_completes_ok_without_a_table_entry() {
    // Nothing in the table at all: every non-empty placement is refused,
    // every empty one completes OK, in order, with no AW.
    let p = params("default");
    let mut rng = Rng::new(10);
    let places: Vec<Placement> = (0..12u16)
        .map(|i| {
            let len = if i % 3 == 0 { 0x40 } else { 0 };
            Placement { recv: i % 2 == 1, ..Placement::new(i, rng.next() as u32, rng.next(), payload(&mut rng, len)) }
        })
        .collect();
    let seen = place(p, Pressure { cpl: 30, ..Pressure::default() }, &[], &places, 10);
    let want: Vec<(u16, u8)> = (0..12u16).map(|i| (i, if i % 3 == 0 { status::ACCESS } else { status::OK })).collect();
    assert_eq!(seen.cpls, want);
    assert!(seen.aws.is_empty());
}

#[test]
fn error_responses_fail_the_placement() {
    let p = params("small");
    let base = 0x1_0000u64;
    let mut rng = Rng::new(7);
    let places: Vec<Placement> =
        (0..4).map(|i| Placement::new(i, KEY, base + i as u64 * 0x400, payload(&mut rng, 0x300))).collect();
    let mut bench = Bench::new(p, 7, Pressure { b_delay: 3, ..Pressure::default() });
    bench.bad_addr = Some((base + 0x500, base + 0x501)); // first burst of placement 1
    let entries = [region(base, 0x10000)];
    bench.setup(&entries);
    let seen = bench.run(&places, &table_of(&entries, &p));
    let st: Vec<u8> = seen.cpls.iter().map(|c| c.1).collect();
    assert_eq!(st, [status::OK, status::AXI, status::OK, status::OK]);
}

#[test]
fn completion_waits_for_every_response() {
    // With a long B delay, the completion comes after the last burst's B.
    let p = params("small");
    let base = 0x1_0000u64;
    let mut rng = Rng::new(8);
    let places = [Placement::new(3, KEY, base, payload(&mut rng, 0x1000))];
    let seen = place(p, Pressure { b_delay: 50, ..Pressure::default() }, &[region(base, 0x1000)], &places, 8);
    assert_eq!(seen.aws.len(), 8);
    assert!(seen.cycles > seen.last_w + 50, "completion before the last response: {seen:?}");
}

#[test]
fn a_framing_error_is_flagged_and_writes_stay_in_range() {
    let p = params("small");
    let mut dut = DmaWriteEngine::new(p);
    let idle = || Inputs { tdata: vec![0xaa; 8], awready: true, wready: true, cpl_ready: true, ..Inputs::default() };
    dut.clock(&Inputs { rst: true, ..idle() });
    while !dut.outputs().mr_ready {
        dut.clock(&idle());
    }
    dut.clock(&Inputs {
        mr_valid: true,
        mr_key: KEY,
        mr_entry_valid: true,
        mr_remote_write: true,
        mr_base: 0x1000,
        mr_len: 0x10,
        ..idle()
    });
    let mut req = true;
    let mut errs = 0;
    let mut strb_total = 0;
    for _ in 0..20 {
        let o = dut.outputs();
        errs += o.frame_err as u32;
        if o.wvalid {
            strb_total += o.wstrb.count_ones();
        }
        let mut i = idle();
        if req {
            (i.req_valid, i.req_rkey, i.req_addr, i.req_len) = (true, KEY, 0x1000, 16);
        }
        // tlast on every beat: the first one is wrong.
        (i.tvalid, i.tkeep, i.tlast) = (true, 0xff, true);
        if i.req_valid && o.req_ready {
            req = false;
        }
        dut.clock(&i);
    }
    assert_eq!(errs, 1);
    assert_eq!(strb_total, 16);
}

/// (valid, access, base offset, len) of a region.
type ArbRegion = (bool, u8, u64, u64);
/// (region index, offset, len, random key) of a request.
type ArbReq = (u8, u64, u16, bool, bool);

fn arb_case() -> impl Strategy<Value = (u64, Vec<ArbRegion>, Vec<ArbReq>)> {
    // Regions: (valid, access, base offset, len); requests: (region index,
    // offset from the region's base (may go below via wrapping), len, random key,
    // a SEND's placement).
    let regions = prop::collection::vec((prop::bool::weighted(0.9), 0u8..4, 0u64..0x3000, 1u64..0x2000), 1..5);
    let reqs = prop::collection::vec(
        (0u8..6, 0u64..0x2400, 0u16..0x900, prop::bool::weighted(0.1), prop::bool::weighted(0.4)),
        1..25,
    );
    (any::<u64>(), regions, reqs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// For random table contents and requests, every burst lies inside its
    /// placement's region and page, and the bytes written are the payloads.
    #[test]
    fn every_burst_stays_in_its_region((seed, regions, reqs) in arb_case()) {
        for name in ["small", "default"] {
            let p = params(name);
            let mut rng = Rng::new(seed);
            // Regions spaced 0x10000 apart, some near the top of the address space.
            let entries: Vec<MrEntry> = regions
                .iter()
                .enumerate()
                .map(|(i, &(valid, access, off, len))| {
                    let base = if i == 3 { u64::MAX - 0x2000 + off / 2 } else { 0x10_0000 * (i as u64 + 1) + off };
                    MrEntry { valid, access, key: ((rng.next() as u32) << 4) | i as u32, base, len }
                })
                .collect();
            let places: Vec<Placement> = reqs
                .iter()
                .enumerate()
                .map(|(k, &(ri, off, len, random_key, recv))| {
                    let e = entries.get(ri as usize).copied().unwrap_or(MrEntry { key: 0x77, ..entries[0] });
                    let rkey = if random_key { rng.next() as u32 } else { e.key };
                    let addr = e.base.wrapping_add(off).wrapping_sub(0x200);
                    Placement { tag: k as u16, rkey, addr, payload: payload(&mut rng, len as usize), recv }
                })
                .collect();
            // Overlapping accepted placements would make "bytes written" ambiguous:
            // keep only the first of any overlapping pair among the accepted.
            let table = table_of(&entries, &p);
            let mut taken: Vec<(u64, u64)> = Vec::new();
            let places: Vec<Placement> = places
                .into_iter()
                .filter(|pl| {
                    if !pl.accepted(&table, p.mr_entries) || pl.payload.is_empty() {
                        return true;
                    }
                    let (lo, hi) = (pl.addr, pl.addr + pl.payload.len() as u64);
                    if taken.iter().any(|&(a, b)| lo < b && a < hi) {
                        return false;
                    }
                    taken.push((lo, hi));
                    true
                })
                .collect();
            let pr = Pressure { aw: 25, w: 25, b: 25, cpl: 25, req_idle: 15, data_idle: 15, b_delay: 2 };
            place(p, pr, &entries, &places, seed);
        }
    }
}
