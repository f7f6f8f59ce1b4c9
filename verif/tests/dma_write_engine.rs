//! `dma_write_engine` (small): the cycle model and the generated RTL in
//! lockstep with an AXI4 host-memory responder (random `awready`/`wready`,
//! B after a random latency, some error responses) over random region
//! writes and placements (accepted, refused, zero-length, unaligned, across
//! 4 KiB boundaries, maximum bursts, framing errors) with idle cycles and
//! backpressure on every output; a proptest over seeds and rates; the
//! golden vectors run through `mrnic vectors check --target rtl`; the
//! directed cases, with host memory checked byte for byte; and a
//! deliberately broken model caught with cycle, port and VCD window.

mod common;

use common::{assert_covered, cycles, lockstep, proptest_sessions, run, session};
use mrnic_model::block::{port_index, Block};
use mrnic_model::dma_write_engine::{self as dwe, DmaWriteEngine, DmaWriteEngineParams};
use mrnic_proto::Config;
use mrnic_verif::blocks::dma_write_engine::{self as blk, Placement, Region};
use mrnic_verif::lockstep::{FlipBit, Options};
use mrnic_verif::{skip_without_verilator, Lockstep};

const BLOCK: &str = "dma_write_engine";

fn params() -> DmaWriteEngineParams {
    DmaWriteEngineParams::from_config(&Config::builtin("small").unwrap()).unwrap()
}

fn model() -> Box<dyn Block> {
    Box::new(DmaWriteEngine::new(params()))
}

#[test]
fn small_random_placements_with_a_host_memory_responder() {
    let Some(cov) = session("dwe_small_random", BLOCK, "small", 0xd3a0_0001, cycles(60_000), |t| t) else { return };
    // Status 3 does not exist. A table write while the engine is not ready
    // would need a reset in the middle of traffic (the clear sweep), and
    // the engine issues a burst's AW no later than its last W beat.
    assert_covered(
        &cov,
        &["completion: code 3", "s_mr_: offered while the block is not ready", "axi: W burst done before its AW"],
    );
}

#[test]
fn small_no_idle_no_backpressure_fast_responses() {
    // The full-rate path: a beat per cycle, B at once.
    session("dwe_small_fast", BLOCK, "small", 0xd3a0_0002, cycles(20_000), |t| {
        t.idle(0).backpressure(0).axi_write_slave("m_axi_", 0, 0)
    });
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

#[test]
fn small_directed_4k_crossings_and_max_bursts_land_in_host_memory() {
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, d) = blk::traffic(&p, 0x4096);
    let max = (p.max_burst * p.bytes()) as usize;
    let base = 0x10_0000u64;
    let cases: Vec<(u64, usize)> = vec![
        (base + 0x0ff0, 100),              // crosses one 4 KiB boundary
        (base + 0x2000, 3 * max),          // aligned: three maximum bursts
        (base + 0x2ffd, 5000),             // unaligned, crosses two boundaries
        (base + 0x5000 - max as u64, max), // one maximum burst ending at a boundary
        (base + 0x5001, 1),
        (base + 0x6000, 0),
        (base + 0x7fff, 4097),
        (base + 0x9000 + 3, max + 5),
    ];
    let mut rng = mrnic_verif::Rng::new(1);
    let placements: Vec<Placement> = cases
        .iter()
        .map(|&(addr, len)| Placement {
            rkey: 0x25,
            addr,
            data: (0..len).map(|_| rng.next_u64() as u8).collect(),
            bad_tlast: None,
            recv: false,
        })
        .collect();
    {
        let mut d = d.borrow_mut();
        d.only_directed = true;
        d.regions.push_back(Region { key: 0x25, valid: true, remote_write: true, recv: false, base, len: 0x10_0000 });
        d.placements.extend(placements.iter().cloned());
    }
    let mut t = t.idle(20).backpressure(30).axi_write_slave("m_axi_", 8, 0).record("m_cpl_");
    let mut ls = lockstep(Box::new(model), "small", "dwe_small_directed");
    run("dma_write_engine directed", &mut ls, &mut t, 6_000);
    println!("{}", t.coverage());
    let cpls = t.received("m_cpl_");
    assert_eq!(cpls.len(), placements.len(), "every placement completes once");
    for (k, c) in cpls.iter().enumerate() {
        assert_eq!((c[0].as_u64(), c[1].as_u64()), (k as u64 + 1, dwe::status::OK as u64), "completion {k}");
    }
    let axi = t.axi().unwrap();
    for (k, pl) in placements.iter().enumerate() {
        let got = axi.read(pl.addr, pl.data.len());
        let bad = got.iter().zip(&pl.data).position(|(a, b)| a != b);
        assert_eq!(bad, None, "placement {k} at {:#x}: first wrong byte at offset {bad:?}", pl.addr);
    }
    // Nothing outside the placements was written.
    assert_eq!(axi.read(base + 0x0ff0 - 16, 16), vec![0; 16]);
    let cov = t.coverage();
    for bin in [
        "AW: a maximum burst (axi_max_burst beats)",
        "AW: cut short by a 4 KiB boundary",
        "AW: unaligned first address",
    ] {
        assert!(cov.count(bin) > 0, "{bin}\n{cov}");
    }
}

/// Issue 8, RTL under attack at block level: placements an attacker would
/// try (guessed keys, a region without remote write, an invalid one, one
/// byte past the end or before the base, longer than the region, wrapping
/// past 2^64, a region at the top of the address space, SEND placements by
/// a receive region's lkey and by keys without the receive bit) plus 300
/// random ones near the edges, WRITEs and SENDs, in lockstep, with an AXI
/// checker on `m_axi_*` that counts every byte written outside the valid
/// regions that allow a placement: none may be, every OK placement lands
/// byte for byte, and every empty one completes OK whatever its key.
#[test]
fn small_hostile_placements_never_write_outside_a_region() {
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (t, d) = blk::traffic(&p, 0x0bad);
    let r1 = Region { key: 0x25, valid: true, remote_write: true, recv: false, base: 0x10_0000, len: 0x4000 };
    let top = Region { key: 0x48, valid: true, remote_write: true, recv: true, base: u64::MAX - 0xfff, len: 0xfff };
    let regions = [
        r1,
        Region { key: 0x46, valid: true, remote_write: false, recv: true, base: 0x20_0000, len: 0x1000 },
        Region { key: 0x67, valid: false, remote_write: true, recv: true, base: 0x30_0000, len: 0x1000 },
        top,
        Region { key: 0x52, valid: true, remote_write: false, recv: false, base: 0x40_0000, len: 0x1000 },
    ];
    let end = |r: &Region| r.base.wrapping_add(r.len);
    // (key, addr, len, a SEND's placement)
    let mut cases: Vec<(u32, u64, usize, bool)> = vec![
        (0x25, end(&r1) - 16, 16, false),    // to the last byte
        (0x25, end(&r1) - 15, 16, false),    // one byte past the end
        (0x25, r1.base - 1, 16, false),      // one byte before the base
        (0x25, end(&r1), 1, false),          // at the end
        (0x25, end(&r1), 0, false),          // zero length at the end
        (0x25, r1.base, 0x4001, false),      // longer than the region
        (0x25, u64::MAX - 7, 16, false),     // wrapping 2^64
        (0x35, r1.base, 16, false),          // the right slot, another tag
        (0x1b, r1.base, 16, false),          // an empty slot
        (0x46, 0x20_0000, 16, false),        // no remote write
        (0x67, 0x30_0000, 16, false),        // invalid entry
        (0x48, u64::MAX - 16, 16, false),    // the top region's last bytes
        (0x48, u64::MAX - 15, 16, false),    // one past it: ends at 2^64
        (0x48, u64::MAX - 0x1000, 8, false), // one byte below its base
        (0x46, 0x20_0000, 16, true),         // a SEND into a receive region
        (0x46, 0x20_1000 - 16, 16, true),    // ... to its last byte
        (0x46, 0x20_1000 - 15, 16, true),    // ... one byte past it
        (0x25, r1.base, 16, true),           // a SEND by a remote-write-only key
        (0x52, 0x40_0000, 16, true),         // a SEND by a local region's key
        (0x52, 0x40_0000, 16, false),        // a WRITE there
        (0x67, 0x30_0000, 16, true),         // a SEND by an invalid entry's key
        (0x1b, 0x40_0000, 0, true),          // an empty SEND by an empty slot: OK
        (0x35, 0x9_0000, 0, false),          // an empty WRITE by a stale key: OK
    ];
    let mut rng = mrnic_verif::Rng::new(0x0bad);
    for _ in 0..300 {
        let r = &regions[rng.below(regions.len() as u64) as usize];
        let key = if rng.below(5) == 0 { rng.next_u64() as u32 & 0xff } else { r.key };
        let len = match rng.below(4) {
            0 => rng.below(17),
            1 => rng.below(600),
            2 => r.len - 8 + rng.below(16),
            _ => rng.below(9000),
        } as usize;
        let delta = rng.below(64);
        let addr = match rng.below(4) {
            0 => end(r).wrapping_sub(len as u64).wrapping_add(delta).wrapping_sub(32),
            1 => r.base.wrapping_sub(delta).wrapping_add(32),
            2 => u64::MAX - delta,
            _ => r.base.wrapping_add(rng.below(r.len)),
        };
        cases.push((key, addr, len, rng.below(3) == 0));
    }
    // Never-zero payloads: the bytes of a placement differ from unwritten memory.
    let placements: Vec<Placement> = cases
        .iter()
        .map(|&(rkey, addr, len, recv)| Placement {
            rkey,
            addr,
            data: (0..len).map(|_| 1 + rng.below(255) as u8).collect(),
            bad_tlast: None,
            recv,
        })
        .collect();
    {
        let mut d = d.borrow_mut();
        d.only_directed = true;
        d.regions.extend(regions);
        d.placements.extend(placements.iter().cloned());
    }
    let writable: Vec<(u64, u64)> =
        regions.iter().filter(|r| r.valid && (r.remote_write || r.recv)).map(|r| (r.base, r.base + r.len)).collect();
    let mut t = t.idle(15).backpressure(30).axi_write_slave("m_axi_", 8, 0).axi_guard(writable).record("m_cpl_");
    let mut ls = lockstep(Box::new(model), "small", "dwe_small_hostile");
    run("dma_write_engine hostile", &mut ls, &mut t, 400_000);
    let cpls = t.received("m_cpl_");
    assert_eq!(cpls.len(), placements.len(), "every placement completes once");
    let ok = dwe::status::OK as u64;
    let mut accepted = 0;
    // Host memory as the OK placements leave it, in completion order (later
    // ones overwrite earlier ones where they overlap).
    let mut want = std::collections::BTreeMap::new();
    for (k, (c, pl)) in cpls.iter().zip(&placements).enumerate() {
        assert_eq!(c[0].as_u64(), k as u64 + 1, "completion {k} in order");
        // The rule: a valid region that allows the placement's kind holds
        // [addr, addr + len); an empty placement checks no key.
        let fits = regions.iter().any(|r| {
            r.valid
                && if pl.recv { r.recv } else { r.remote_write }
                && r.key == pl.rkey
                && pl.addr >= r.base
                && pl.addr.checked_add(pl.data.len() as u64).is_some_and(|e| e <= r.base + r.len)
        });
        let at = format!("placement {k} ({:#x}, {:#x}, {}, recv {})", pl.rkey, pl.addr, pl.data.len(), pl.recv);
        assert_eq!(c[1].as_u64() == ok, fits || pl.data.is_empty(), "{at}");
        if c[1].as_u64() == ok && !pl.data.is_empty() {
            accepted += 1;
            for (i, &b) in pl.data.iter().enumerate() {
                want.insert(pl.addr + i as u64, b);
            }
        }
    }
    for (&a, &b) in &want {
        assert_eq!(t.axi().unwrap().read(a, 1)[0], b, "byte at {a:#x}: the last OK placement's");
    }
    let axi = t.axi().unwrap();
    println!(
        "dma_write_engine hostile: {} placements, {accepted} accepted, {} bytes written, {} outside a region",
        placements.len(),
        axi.written,
        axi.outside
    );
    assert_eq!(axi.outside, 0, "bytes written outside every writable region, first at {:x?}", axi.outside_at);
}

#[test]
fn small_broken_model_is_caught_with_cycle_port_and_vcd_window() {
    if skip_without_verilator() {
        return;
    }
    let at = 3210;
    let port = port_index(&dwe::ports(&params()), "m_axi_wstrb").unwrap();
    let make = move || -> Box<dyn Block> { Box::new(FlipBit::new(model(), port, 3, at)) };
    let dir = common::vcd_dir("dwe_broken");
    let _ = std::fs::remove_dir_all(&dir);
    let opts = Options { vcd_dir: Some(dir), window_before: 30, ..Options::default() };
    let mut ls = Lockstep::new(Box::new(make), "small", opts).unwrap();
    let (mut t, _) = blk::traffic(&params(), 99);
    let m = ls.run(&mut t, 10_000).expect_err("the flipped bit must be caught");
    println!("{m}");
    assert_eq!((m.cycle, m.port.as_str(), m.seed), (at, "m_axi_wstrb", Some(99)));
    assert_eq!(m.expected.as_u64() ^ m.actual.as_u64(), 1 << 3);
    let w = m.vcd.as_ref().unwrap_or_else(|| panic!("no VCD: {:?}", m.vcd_error));
    assert_eq!((w.start, w.end), (at - 30, at));
    for path in [&w.rtl, &w.model] {
        let vcd = std::fs::read_to_string(path).unwrap();
        assert!(vcd.contains(" m_axi_wstrb [7:0] $end"), "{} lacks m_axi_wstrb", path.display());
    }
}

// Holes as on small (status 3 does not exist, a table write while not
// ready needs a reset mid-traffic, AW never trails its last W beat).
default_random!(
    "dma_write_engine",
    0xd3a0_1001,
    40_000,
    ["completion: code 3", "s_mr_: offered while the block is not ready", "axi: W burst done before its AW"]
);
