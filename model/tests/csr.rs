//! The CSR block driven by an AXI4-Lite master model with random valid
//! delays and backpressure (fixed seeds, printed on failure): reset values,
//! write/read back with strobes, RO writes ignored, counters counting and
//! clearing, error responses, the protection policy and the MR commit.

use mrnic_model::csr::{regmap, resp, strb_mask, Access, Csr, CsrParams, Inputs, Outputs, MAGIC, STATS};
use mrnic_proto::Config;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
}

#[derive(Clone, Copy)]
struct Write {
    addr: u32,
    data: u32,
    strb: u8,
    prot: u8,
}

/// What the environment around the block does each cycle: `stat_*` bits and
/// `m_mr_ready`.
type Env<'a> = &'a mut dyn FnMut(u64, &Outputs) -> (u32, bool);

/// An AXI4-Lite master: valid after a random delay, held until the
/// handshake; ready for B and R with probability `ready_pct`. Checks that
/// the slave holds B and R stable until taken.
struct Master {
    dut: Csr,
    rng: Rng,
    cycle: u64,
    ready_pct: u64,
    seed: u64,
}

impl Master {
    fn new(cfg: &str, seed: u64) -> Master {
        let p = CsrParams::from_config(&Config::builtin(cfg).unwrap()).unwrap();
        let mut dut = Csr::new(p);
        dut.clock(&Inputs { rst: true, ..Inputs::default() });
        Master { dut, rng: Rng(seed), cycle: 0, ready_pct: 60, seed }
    }

    /// Runs a write and/or a read concurrently to completion; returns
    /// (bresp, (rdata, rresp)).
    fn run(&mut self, w: Option<Write>, r: Option<(u32, u8)>, env: Env) -> (Option<u8>, Option<(u32, u8)>) {
        let fast = self.ready_pct >= 100;
        let delay = |rng: &mut Rng| if fast { 0 } else { rng.next() % 4 };
        let (mut aw_wait, mut w_wait, mut ar_wait) = (delay(&mut self.rng), delay(&mut self.rng), delay(&mut self.rng));
        let (mut aw_done, mut w_done, mut ar_done) = (w.is_none(), w.is_none(), r.is_none());
        let (mut bres, mut rres) = (None, None);
        // The previous cycle's outputs and whether B and R were taken.
        let mut last: Option<(Outputs, bool, bool)> = None;
        for _ in 0..10_000 {
            let o = self.dut.outputs();
            if let Some((l, b_taken, r_taken)) = last {
                if l.bvalid && !b_taken {
                    assert!(o.bvalid && o.bresp == l.bresp, "seed {}: B changed before taken", self.seed);
                }
                if l.rvalid && !r_taken {
                    assert!(o.rvalid && (o.rdata, o.rresp) == (l.rdata, l.rresp), "seed {}: R changed", self.seed);
                }
            }
            let (stats, mr_ready) = env(self.cycle, &o);
            let mut inp = Inputs { stats, mr_ready, ..Inputs::default() };
            if let Some(w) = w {
                if !aw_done && aw_wait == 0 {
                    inp.awvalid = true;
                    inp.awaddr = w.addr;
                    inp.awprot = w.prot;
                }
                if !w_done && w_wait == 0 {
                    inp.wvalid = true;
                    inp.wdata = w.data;
                    inp.wstrb = w.strb;
                }
            }
            if let Some((addr, prot)) = r {
                if !ar_done && ar_wait == 0 {
                    inp.arvalid = true;
                    inp.araddr = addr;
                    inp.arprot = prot;
                }
            }
            inp.bready = self.rng.chance(self.ready_pct);
            inp.rready = self.rng.chance(self.ready_pct);
            aw_wait = aw_wait.saturating_sub(1);
            w_wait = w_wait.saturating_sub(1);
            ar_wait = ar_wait.saturating_sub(1);
            aw_done |= inp.awvalid && o.awready;
            w_done |= inp.wvalid && o.wready;
            ar_done |= inp.arvalid && o.arready;
            if o.bvalid && inp.bready {
                assert!(w.is_some() && bres.is_none(), "seed {}: unexpected B", self.seed);
                bres = Some(o.bresp);
            }
            if o.rvalid && inp.rready {
                assert!(r.is_some() && rres.is_none(), "seed {}: unexpected R", self.seed);
                rres = Some((o.rdata, o.rresp));
            }
            last = Some((o, inp.bready, inp.rready));
            self.dut.clock(&inp);
            self.cycle += 1;
            if aw_done && w_done && ar_done && (w.is_none() || bres.is_some()) && (r.is_none() || rres.is_some()) {
                return (bres, rres);
            }
        }
        panic!("seed {}: transaction did not finish", self.seed);
    }

    fn write(&mut self, addr: u32, data: u32, strb: u8) -> u8 {
        self.run(Some(Write { addr, data, strb, prot: 0 }), None, &mut |_, _| (0, true)).0.unwrap()
    }

    fn read(&mut self, addr: u32) -> (u32, u8) {
        self.run(None, Some((addr, 0)), &mut |_, _| (0, true)).1.unwrap()
    }
}

const CONFIGS: [&str; 2] = ["small", "default"];

#[test]
fn every_register_reads_its_reset_value() {
    for cfg in CONFIGS {
        let mut m = Master::new(cfg, 1);
        for r in m.dut.map().to_vec() {
            let want = if r.access == Access::WoPulse { 0 } else { r.reset() };
            assert_eq!(m.read(r.offset), (want, resp::OKAY), "{cfg}: {}", r.name);
        }
        assert_eq!(m.read(0).0, MAGIC);
        let c = Config::builtin(cfg).unwrap();
        assert_eq!(m.read(0x18).0, u32::from(c.transport.udp_port));
        assert_eq!(m.dut.outputs().udp_port, c.transport.udp_port);
    }
}

#[test]
fn config_hash_and_sizes_follow_the_config() {
    let s = CsrParams::from_config(&Config::builtin("small").unwrap()).unwrap();
    let d = CsrParams::from_config(&Config::builtin("default").unwrap()).unwrap();
    assert_ne!(s.config_hash, d.config_hash);
    assert_eq!((s.log2_conns, s.log2_paths, s.log2_mr_entries, s.log2_datapath), (4, 2, 4, 6));
    assert_eq!((d.log2_conns, d.log2_paths, d.log2_mr_entries, d.log2_datapath), (12, 4, 10, 9));
}

#[test]
fn map_is_well_formed() {
    let p = CsrParams::from_config(&Config::builtin("default").unwrap()).unwrap();
    let map = regmap(&p);
    for (i, r) in map.iter().enumerate() {
        assert_eq!(r.offset % 4, 0, "{}", r.name);
        assert!(r.offset < 1 << p.addr_bits(), "{}", r.name);
        if i > 0 {
            assert!(map[i - 1].offset < r.offset, "{} out of order", r.name);
        }
        let mut seen = 0u32;
        for f in &r.fields {
            assert!(f.width >= 1 && f.lsb + f.width <= 32, "{}.{}", r.name, f.name);
            assert_eq!(seen & f.mask(), 0, "{}.{} overlaps", r.name, f.name);
            assert!(u64::from(f.reset) < 1u64 << f.width, "{}.{} reset", r.name, f.name);
            seen |= f.mask();
        }
        assert_eq!(r.stat.is_some(), r.access == Access::W1c, "{}", r.name);
    }
    assert_eq!(map.iter().filter(|r| r.stat.is_some()).count(), STATS.len());
}

#[test]
fn rw_registers_write_and_read_back_with_strobes() {
    for seed in 1..=4u64 {
        let mut m = Master::new("small", seed);
        let mut rng = Rng(seed * 77);
        let map = m.dut.map().to_vec();
        let mut shadow: Vec<u32> = map.iter().map(|r| r.reset()).collect();
        for _ in 0..300 {
            let k = (rng.next() % map.len() as u64) as usize;
            let r = &map[k];
            if r.access != Access::Rw || r.name == "CONTROL" {
                continue;
            }
            let data = rng.next() as u32;
            let strb = (rng.next() % 16) as u8;
            assert_eq!(m.write(r.offset, data, strb), resp::OKAY, "seed {seed}: {}", r.name);
            let mask = strb_mask(strb) & r.mask();
            shadow[k] = (shadow[k] & !mask) | (data & mask);
            let j = (rng.next() % map.len() as u64) as usize;
            let want = if map[j].access == Access::W1c { 0 } else { shadow[j] };
            if map[j].access != Access::WoPulse {
                assert_eq!(m.read(map[j].offset), (want, resp::OKAY), "seed {seed}: {}", map[j].name);
            }
        }
        for (k, r) in map.iter().enumerate() {
            if r.access == Access::Rw {
                assert_eq!(m.read(r.offset).0, shadow[k], "seed {seed}: {}", r.name);
            }
        }
    }
}

#[test]
fn ro_and_wo_registers_ignore_writes() {
    let mut m = Master::new("default", 9);
    for r in m.dut.map().to_vec() {
        if r.access == Access::Ro {
            assert_eq!(m.write(r.offset, !r.reset(), 0xF), resp::OKAY);
            assert_eq!(m.read(r.offset), (r.reset(), resp::OKAY), "{}", r.name);
        }
    }
    // MR_COMMIT with go = 0 does nothing and reads 0.
    assert_eq!(m.write(0x38, 0xFFFF_FFFE, 0xF), resp::OKAY);
    assert_eq!(m.read(0x38), (0, resp::OKAY));
    assert!(!m.dut.outputs().mr_valid);
    // go = 1 in a byte whose strobe is off does nothing either.
    assert_eq!(m.write(0x38, 1, 0xE), resp::OKAY);
    assert!(!m.dut.outputs().mr_valid);
}

#[test]
fn unmapped_misaligned_and_refused_accesses_error() {
    let mut m = Master::new("small", 3);
    let before = m.read(0x10).0;
    assert_eq!(m.write(0x1C, 5, 0xF), resp::DECERR);
    assert_eq!(m.read(0x1C), (0, resp::DECERR));
    assert_eq!(m.read(0xFC), (0, resp::DECERR));
    assert_eq!(m.write(0x11, 5, 0xF), resp::SLVERR);
    assert_eq!(m.read(0x12), (0, resp::SLVERR));
    assert_eq!(m.read(0x10).0, before, "an erroring write changes nothing");
    // Address bits above the port width do not exist: the port is as wide
    // as the map needs.
    let bits = m.dut.params().addr_bits();
    assert_eq!(bits, 8);

    // Protection policy: priv_only refuses prot[0] = 0.
    assert_eq!(m.write(0x14, 0b0010, 0xF), resp::OKAY);
    assert_eq!(m.read(0x10).1, resp::SLVERR);
    let (_, r) = m.run(None, Some((0x14, 0b001)), &mut |_, _| (0, true));
    assert_eq!(r, Some((0b0010, resp::OKAY)));
    let (b, _) = m.run(Some(Write { addr: 0x10, data: 7, strb: 0xF, prot: 0 }), None, &mut |_, _| (0, true));
    assert_eq!(b, Some(resp::SLVERR));
    // secure_only and data_only, set by a privileged write.
    let (b, _) = m.run(Some(Write { addr: 0x14, data: 0b1101, strb: 0xF, prot: 0b001 }), None, &mut |_, _| (0, true));
    assert_eq!(b, Some(resp::OKAY));
    assert!(m.dut.outputs().enable);
    for (prot, want) in [(0b000, resp::OKAY), (0b010, resp::SLVERR), (0b100, resp::SLVERR), (0b001, resp::OKAY)] {
        let (_, r) = m.run(None, Some((0x14, prot)), &mut |_, _| (0, true));
        assert_eq!(r.unwrap().1, want, "prot {prot:03b}");
    }
}

#[test]
fn counters_count_saturate_never_and_clear_by_w1c() {
    let mut m = Master::new("small", 5);
    let n = STATS.len();
    // Count: each stat input high in a known pattern for 200 cycles.
    let mut expect = vec![0u32; n];
    let mut rng = Rng(99);
    for _ in 0..200 {
        let s = (rng.next() as u32) & ((1 << n) - 1);
        for (j, e) in expect.iter_mut().enumerate() {
            *e += s >> j & 1;
        }
        m.dut.clock(&Inputs { stats: s, ..Inputs::default() });
    }
    let map = m.dut.map().to_vec();
    let counters: Vec<_> = map.iter().filter(|r| r.access == Access::W1c).cloned().collect();
    for (j, r) in counters.iter().enumerate() {
        assert_eq!(m.read(r.offset), (expect[j], resp::OKAY), "{}", r.name);
    }
    // Partial clear: W1C clears only the bits written as 1, in strobed bytes.
    let r0 = &counters[0];
    assert_eq!(m.write(r0.offset, 0xFFFF_FFFF, 0b0001), resp::OKAY);
    assert_eq!(m.read(r0.offset).0, expect[0] & !0xFF);
    assert_eq!(m.write(r0.offset, 0xFFFF_FFFF, 0xF), resp::OKAY);
    assert_eq!(m.read(r0.offset).0, 0);
    // An event in the cycle the clear executes is kept; the other counters
    // keep counting while a clear of one runs.
    let r1 = &counters[1];
    let (b, _) =
        m.run(Some(Write { addr: r1.offset, data: 0xFFFF_FFFF, strb: 0xF, prot: 0 }), None, &mut |_, _| (0b11, true));
    assert_eq!(b, Some(resp::OKAY));
    let c0 = m.read(r0.offset).0;
    let c1 = m.read(r1.offset).0;
    assert!(c0 >= 2, "counter 0 counted during the write: {c0}");
    assert!(c1 >= 1 && c1 < c0, "counter 1 cleared mid-way and kept counting after: {c1} (counter 0: {c0})");
}

#[test]
fn counter_keeps_the_event_of_the_clearing_cycle() {
    let p = CsrParams::from_config(&Config::builtin("small").unwrap()).unwrap();
    let mut d = Csr::new(p);
    let off = regmap(&p).iter().find(|r| r.access == Access::W1c).unwrap().offset;
    for _ in 0..5 {
        d.clock(&Inputs { stats: 1, ..Inputs::default() });
    }
    // AW and W in one cycle; the write executes in the next, with an event.
    d.clock(&Inputs { awvalid: true, awaddr: off, wvalid: true, wdata: !0, wstrb: 0xF, stats: 1, ..Inputs::default() });
    d.clock(&Inputs { stats: 1, ..Inputs::default() });
    assert_eq!(d.reg(STATS[0].1), 1);
    assert!(d.outputs().bvalid);
}

#[test]
fn mr_commit_holds_bresp_until_the_table_takes_it() {
    for seed in 1..=3u64 {
        let mut m = Master::new("default", seed);
        m.write(0x20, 0xDEAD_0005, 0xF);
        m.write(0x24, 0x1000, 0xF);
        m.write(0x28, 0x7, 0xF);
        m.write(0x2C, 0x2000, 0xF);
        m.write(0x30, 0x0, 0xF);
        m.write(0x34, 3, 0xF);
        let mut taken = None;
        let mut offered = 0;
        let (b, r) = m.run(Some(Write { addr: 0x38, data: 1, strb: 1, prot: 0 }), Some((0x20, 0)), &mut |c, o| {
            if o.mr_valid {
                offered += 1;
                assert!(taken.is_none(), "seed {seed}: m_mr_valid after the handshake");
                assert_eq!(
                    (o.mr_key, o.mr_base, o.mr_len, o.mr_remote_write, o.mr_recv, o.mr_entry_valid),
                    (0xDEAD_0005, 0x7_0000_1000, 0x2000, true, true, true)
                );
                assert!(!o.bvalid && !o.awready && !o.wready, "seed {seed}: B or a new write while the commit waits");
            }
            let ready = o.mr_valid && offered > 5;
            if ready {
                taken = Some(c);
            }
            (0, ready)
        });
        assert_eq!(b, Some(resp::OKAY));
        assert_eq!(r, Some((0xDEAD_0005, resp::OKAY)), "reads go on while a commit waits");
        assert!(taken.is_some());
        assert!(!m.dut.outputs().mr_valid);
        // free = 1 frees the slot.
        let (b, _) = m.run(Some(Write { addr: 0x38, data: 3, strb: 1, prot: 0 }), None, &mut |_, o| {
            if o.mr_valid {
                assert!(!o.mr_entry_valid);
            }
            (0, true)
        });
        assert_eq!(b, Some(resp::OKAY));
    }
}

#[test]
fn random_traffic_with_backpressure_matches_a_shadow() {
    for seed in [11u64, 12, 13] {
        let mut m = Master::new("small", seed);
        m.ready_pct = 40;
        let map = m.dut.map().to_vec();
        let mut shadow: Vec<u32> = map.iter().map(|r| r.reset()).collect();
        let mut rng = Rng(seed ^ 0xABCD);
        for _ in 0..400 {
            let wk = (rng.next() % map.len() as u64) as usize;
            let rk = (rng.next() % map.len() as u64) as usize;
            let (wr, rd) = (&map[wk], &map[rk]);
            let write = (wr.access == Access::Rw && wr.name != "CONTROL" && rng.chance(70)).then(|| Write {
                addr: wr.offset,
                data: rng.next() as u32,
                strb: (rng.next() % 16) as u8,
                prot: (rng.next() % 8) as u8,
            });
            let read = rng.chance(70).then_some((rd.offset, (rng.next() % 8) as u8));
            let (b, r) = m.run(write, read, &mut |_, _| (0, true));
            if let Some(r) = r {
                // The read executes at its AR handshake; with the write
                // racing it, it sees the old or the new value.
                let old = shadow[rk];
                let mut new = old;
                if let Some(w) = write {
                    if wk == rk {
                        let mask = strb_mask(w.strb) & wr.mask();
                        new = (old & !mask) | (w.data & mask);
                    }
                }
                let want = match rd.access {
                    Access::WoPulse | Access::W1c => 0,
                    _ => old,
                };
                assert_eq!(r.1, resp::OKAY, "seed {seed}");
                assert!(
                    r.0 == want || r.0 == new,
                    "seed {seed}: {} read {:#x}, want {want:#x} or {new:#x}",
                    rd.name,
                    r.0
                );
            }
            if let Some(w) = write {
                assert_eq!(b, Some(resp::OKAY), "seed {seed}");
                let mask = strb_mask(w.strb) & wr.mask();
                shadow[wk] = (shadow[wk] & !mask) | (w.data & mask);
            }
        }
        for (k, r) in map.iter().enumerate() {
            if r.access == Access::Rw {
                assert_eq!(m.dut.reg(r.name), shadow[k], "seed {seed}: {}", r.name);
            }
        }
    }
}
