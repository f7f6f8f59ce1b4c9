//! `mr_check` through its ports against the reference's WRITE check
//! (`Memory::check(rkey, addr, len, REMOTE_WRITE)` and then the
//! `rx_msg_too_long` rule of `RxConn::check`) and its SEND check
//! (`Memory::check(lkey, addr, len, RECV)`, `recv` = 1): regions registered and
//! deregistered by the reference's own `Memory` (its keys, slots and tags)
//! and written into the block as csr would, then checks with guessed and
//! stale keys, one byte in or out of either end, wrapping 2^64, message
//! lengths around the region's, under random answer backpressure.

use mrnic_model::block::{cycle_named, port_index, PortDef};
use mrnic_model::dma_write_engine::{self as dma, MrEntry};
use mrnic_model::mr_check::*;
use mrnic_proto::Config;
use mrnic_reference::memory::{Access, MemError, Memory};
use mrnic_reference::rng::Rng;

struct Rig {
    b: MrCheck,
    ports: Vec<PortDef>,
    cycles: u64,
}

impl Rig {
    /// One cycle; returns (s_chk_ready, m_chk answer if valid).
    fn cycle(&mut self, set: &[(&str, u64)]) -> (bool, Option<u8>) {
        let o = cycle_named(&mut self.b, &self.ports, set);
        self.cycles += 1;
        let get = |n: &str| o[port_index(&self.ports, n).unwrap()].as_u64();
        (get("s_chk_ready") == 1, (get("m_chk_valid") == 1).then(|| get("m_chk_status") as u8))
    }

    fn write(&mut self, key: u32, valid: bool, access: Access, base: u64, len: u64) {
        self.cycle(&[
            ("tap_mr_valid", 1),
            ("tap_mr_ready", 1),
            ("tap_mr_key", key as u64),
            ("tap_mr_entry_valid", valid as u64),
            ("tap_mr_remote_write", access.contains(Access::REMOTE_WRITE) as u64),
            ("tap_mr_recv", access.contains(Access::RECV) as u64),
            ("tap_mr_base", base),
            ("tap_mr_len", len),
        ]);
    }

    /// Offers a check until taken, then waits for the answer with random
    /// backpressure; the answer must hold still while not taken.
    fn check(&mut self, rng: &mut Rng, c: &Chk, l: u32) -> u8 {
        let req = [
            ("s_chk_valid", 1),
            ("s_chk_rkey", c.rkey as u64),
            ("s_chk_addr", c.addr),
            ("s_chk_len", c.len as u64),
            ("s_chk_msg_len", c.msg_len as u64),
            ("s_chk_recv", c.recv as u64),
        ];
        let mut t = 0;
        while !self.cycle(&req).0 {
            t += 1;
            assert!(t < 10, "s_chk_ready stayed low");
        }
        let mut seen = None;
        for k in 1..=40u32 {
            let ready = rng.below(3) != 0;
            let (_, a) = self.cycle(&[("m_chk_ready", ready as u64)]);
            if k < l {
                assert_eq!(a, None, "answer before the documented latency");
            } else if k == l {
                assert!(a.is_some(), "no answer at the documented latency {l}");
            }
            if let Some(s) = a {
                if let Some(prev) = seen {
                    assert_eq!(prev, s, "answer changed while not taken");
                }
                seen = Some(s);
                if ready {
                    return s;
                }
            }
        }
        panic!("no answer to {c:?}");
    }
}

fn want(m: &Memory, c: &Chk) -> u8 {
    let need = if c.recv { Access::RECV } else { Access::REMOTE_WRITE };
    match m.check(c.rkey, c.addr, c.len as u64, need) {
        Ok(()) if !c.recv && m.region(c.rkey).is_some_and(|r| c.msg_len as u64 > r.len()) => status::TOO_LONG,
        Ok(()) => status::OK,
        Err(MemError::BadKey) => status::BAD_KEY,
        Err(MemError::NoAccess) => status::NO_ACCESS,
        Err(_) => status::BOUNDS,
    }
}

fn run(name: &str, seed: u64, steps: usize) {
    let cfg = Config::builtin(name).unwrap();
    let p = MrCheckParams::from_config(&cfg).unwrap();
    let mut r = Rig { ports: ports(&p), b: MrCheck::new(p), cycles: 0 };
    let mut rng = Rng::new(seed);
    // Reset, and the sweep: no check is taken during it.
    r.cycle(&[("rst", 1)]);
    for _ in 0..p.mr_entries {
        assert!(!r.cycle(&[]).0, "{name}: ready during the reset sweep");
    }
    let mut mem = Memory::new(p.mr_entries);
    // The table as csr holds it: slot -> entry (for the dma rule check).
    let mut table = vec![MrEntry::default(); p.mr_entries as usize];
    let mut keys: Vec<u32> = Vec::new();
    let mut stale: Vec<u32> = Vec::new();
    let mut seen = [0u32; 5];
    // [recv][ok]: both kinds of check, each accepted and refused.
    let mut seen_recv = [[0u32; 2]; 2];
    for step in 0..steps {
        match rng.below(8) {
            0 | 1 => {
                // Register: small regions, one at the top of memory.
                let len = 1 + rng.below(300);
                let base = if rng.below(6) == 0 { u64::MAX - len + 1 } else { rng.below(1 << 20) * 512 };
                let access = [Access::RECV, Access::ALL, Access::REMOTE_WRITE, Access::LOCAL][rng.below(4) as usize];
                if let Ok(k) = mem.register(base, len, access) {
                    keys.push(k);
                    r.write(k, true, access, base, len);
                    table[(k & (p.mr_entries - 1)) as usize] =
                        MrEntry { valid: true, access: access.0, key: k, base, len };
                }
            }
            2 if !keys.is_empty() => {
                let k = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                mem.deregister(k).unwrap();
                stale.push(k);
                r.write(k, false, Access::LOCAL, 0, 0);
                table[(k & (p.mr_entries - 1)) as usize] = MrEntry::default();
            }
            _ => {
                let rkey = match (rng.below(6), keys.is_empty(), stale.is_empty()) {
                    (0, _, _) | (_, true, true) => rng.next_u64() as u32,
                    (1, _, false) => stale[rng.below(stale.len() as u64) as usize],
                    (_, false, _) => keys[rng.below(keys.len() as u64) as usize],
                    _ => stale[0],
                };
                let (base, rlen) = mem.region(rkey).map_or((rng.next_u64(), 64), |g| (g.base, g.len()));
                let len = (1 + rng.below(rlen.min(0xffff) + 1)) as u16;
                let addr = match rng.below(5) {
                    0 => base.wrapping_sub(1),
                    1 => base.wrapping_add(rlen).wrapping_sub(len as u64),
                    2 => base.wrapping_add(rlen).wrapping_sub(len as u64).wrapping_add(1),
                    3 => u64::MAX - rng.below(4),
                    _ => base.wrapping_add(rng.below(rlen)),
                };
                let msg_len = match rng.below(4) {
                    0 => rlen as u32,
                    1 => rlen as u32 + 1,
                    2 => len as u32,
                    _ => len as u32 + rng.below(2 * rlen) as u32,
                };
                let recv = rng.below(3) == 0;
                let c = Chk { rkey, addr, len, msg_len, recv };
                let got = r.check(&mut rng, &c, p.read_latency + 1);
                assert_eq!(got, want(&mem, &c), "{name} seed {seed} step {step}: {c:?}");
                // Never more permissive than the engine's own check.
                let e = table[(rkey & (p.mr_entries - 1)) as usize];
                if got == status::OK {
                    let ok = dma::check(&e, rkey, recv, addr, len as u64);
                    assert!(ok, "{name}: OK where the engine refuses: {c:?}");
                }
                seen[got as usize] += 1;
                seen_recv[recv as usize][(got == status::OK) as usize] += 1;
            }
        }
    }
    assert!(seen.iter().all(|&n| n >= 5), "{name}: every verdict must occur: {seen:?}");
    assert!(
        seen_recv.iter().flatten().all(|&n| n >= 5),
        "{name}: SEND and WRITE checks, each both ways: {seen_recv:?}"
    );
    // A reset empties the copy: a key that was good is refused afterwards.
    if let Some(&k) = keys.first() {
        r.cycle(&[("rst", 1)]);
        for _ in 0..p.mr_entries {
            r.cycle(&[]);
        }
        let g = mem.region(k).unwrap();
        let c = Chk { rkey: k, addr: g.base, len: 1, msg_len: 1, recv: false };
        assert_eq!(r.check(&mut rng, &c, p.read_latency + 1), status::BAD_KEY, "{name}: reset kept an entry");
    }
}

#[test]
fn verdicts_match_the_reference_small() {
    for seed in 1..4 {
        run("small", seed, 3000);
    }
}

#[test]
fn verdicts_match_the_reference_default() {
    run("default", 7, 3000);
}

#[test]
fn a_write_in_the_handshake_cycle_is_not_seen_and_the_next_is() {
    let cfg = Config::builtin("small").unwrap();
    let p = MrCheckParams::from_config(&cfg).unwrap();
    let mut r = Rig { ports: ports(&p), b: MrCheck::new(p), cycles: 0 };
    let mut rng = Rng::new(3);
    r.cycle(&[("rst", 1)]);
    for _ in 0..p.mr_entries {
        r.cycle(&[]);
    }
    let c = Chk { rkey: 0x105, addr: 0x1000, len: 8, msg_len: 8, recv: false };
    // Written and checked in the same cycle: the check reads the old word.
    let mut both = vec![
        ("tap_mr_valid", 1),
        ("tap_mr_ready", 1),
        ("tap_mr_key", 0x105),
        ("tap_mr_entry_valid", 1),
        ("tap_mr_remote_write", 1),
        ("tap_mr_base", 0x1000),
        ("tap_mr_len", 0x100),
    ];
    both.extend([("s_chk_valid", 1), ("s_chk_rkey", 0x105), ("s_chk_addr", 0x1000), ("s_chk_len", 8)]);
    both.push(("s_chk_msg_len", 8));
    assert!(r.cycle(&both).0);
    let a = (0..p.read_latency + 1).map(|_| r.cycle(&[("m_chk_ready", 1)]).1).last().flatten();
    assert_eq!(a, Some(status::BAD_KEY));
    assert_eq!(r.check(&mut rng, &c, p.read_latency + 1), status::OK);
}
