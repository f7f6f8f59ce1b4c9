//! `dma_write` vectors: a memory-region table and a sequence of placements
//! (rkey, address, payload) -> for each, either the AXI4 write bursts that
//! place it (AW address and length, W beats with data and strobes) and an
//! OK completion, or an ACCESS completion with nothing written.
//!
//! The verdict is [`Memory::check`] with `REMOTE_WRITE` (a SEND's
//! placement, `recv`, by its receive's lkey with `RECV`; an empty placement
//! checks no key), the reference's own placement check; the bursts are [`mrnic_proto::axi::write_bursts`],
//! the rule the cycle model's engine uses too.

use serde::{Deserialize, Serialize};

use super::format::{hex, hex128, vector_seed, BlockKind};
use super::Outcome;
use crate::memory::{Access, MemError, Memory};
use crate::rng::Rng;
use mrnic_proto::axi::{write_bursts, write_data_beats, PAGE_BYTES};
use mrnic_proto::Config;

/// One change of the memory-region table, in order. A bench writes the
/// table slot `key mod mr_entries`: `reg` fills it, `dereg` frees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum MrOp {
    /// A region registered; `key` is the key the reference handed out.
    Reg {
        key: u32,
        base: u64,
        len: u64,
        access: u8,
    },
    Dereg {
        key: u32,
    },
}

/// One W beat: data (lane 0 first; lanes whose strobe is 0 are written as
/// 00 and are don't-care) and strobe (bit i = lane i).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Beat {
    #[serde(with = "hex")]
    pub d: Vec<u8>,
    #[serde(with = "hex128")]
    pub s: u128,
}

/// One AXI burst: `awaddr`, `awlen` (beats - 1) and its beats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstRec {
    pub awaddr: u64,
    pub awlen: u8,
    pub w: Vec<Beat>,
}

/// One placement request and its expected effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The WRITE's rkey, or with `recv` the lkey of the SEND's receive.
    pub rkey: u32,
    /// A SEND's placement: the key needs `RECV` access, not remote write.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recv: bool,
    pub addr: u64,
    pub len: u32,
    /// The payload (`len` bytes).
    #[serde(with = "hex")]
    pub data: Vec<u8>,
    /// The bench must let the block empty before this placement.
    pub drain: bool,
    /// Expected completion: `OK` or `ACCESS`.
    pub status: String,
    /// Why the reference refused it (`BadKey`, `NoAccess`, `OutOfBounds`).
    pub reason: Option<String>,
    /// Expected bursts, in order (none when refused or empty).
    pub bursts: Vec<BurstRec>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmaVector {
    pub id: String,
    pub desc: String,
    pub seed: u64,
    /// The table, built from empty by these operations before the first
    /// placement.
    pub mr_ops: Vec<MrOp>,
    pub places: Vec<Placement>,
}

/// Bytes per beat and longest burst of a config.
pub fn bus(cfg: &Config) -> (u32, u32) {
    (cfg.hardware.datapath_bits / 8, cfg.hardware.axi_max_burst)
}

/// The expected effect of one placement, from the reference's check.
pub fn expect(
    cfg: &Config,
    mem: &Memory,
    rkey: u32,
    recv: bool,
    addr: u64,
    data: &[u8],
) -> (String, Option<String>, Vec<BurstRec>) {
    let (bb, max_burst) = bus(cfg);
    if data.is_empty() {
        // As the receiver: an empty placement checks no key (RDMA's
        // zero-length WRITE), completes and writes nothing.
        return ("OK".into(), None, Vec::new());
    }
    let need = if recv { Access::RECV } else { Access::REMOTE_WRITE };
    match mem.check(rkey, addr, data.len() as u64, need) {
        Err(e) => ("ACCESS".into(), Some(format!("{e:?}")), Vec::new()),
        Ok(()) => {
            let beats = write_data_beats(addr, data, bb);
            let mut it = beats.into_iter();
            let bursts = write_bursts(addr, data.len() as u64, bb, max_burst)
                .into_iter()
                .map(|b| BurstRec {
                    awaddr: b.addr,
                    awlen: b.awlen(),
                    w: it.by_ref().take(b.beats as usize).map(|w| Beat { d: w.data, s: w.strb }).collect(),
                })
                .collect();
            ("OK".into(), None, bursts)
        }
    }
}

/// The table of a vector, replayed through [`Memory`] (keys checked).
pub fn build_memory(cfg: &Config, ops: &[MrOp]) -> Result<Memory, String> {
    let mut mem = Memory::new(cfg.hardware.mr_entries);
    for (i, op) in ops.iter().enumerate() {
        match *op {
            MrOp::Reg { key, base, len, access } => {
                let k = mem.register(base, len, Access(access)).map_err(|e| format!("mr_ops[{i}]: {e}"))?;
                if k != key {
                    return Err(format!("mr_ops[{i}]: the reference hands out key {k:#x}, the vector says {key:#x}"));
                }
            }
            MrOp::Dereg { key } => mem.deregister(key).map_err(|e| format!("mr_ops[{i}]: {e}"))?,
        }
    }
    Ok(mem)
}

/// Re-runs the reference on a vector.
pub fn check(cfg: &Config, v: &DmaVector) -> Outcome {
    let mem = match build_memory(cfg, &v.mr_ops) {
        Ok(m) => m,
        Err(e) => return Outcome::Fail(e),
    };
    for (k, pl) in v.places.iter().enumerate() {
        if pl.data.len() != pl.len as usize {
            return Outcome::Fail(format!("place {k}: len {} but {} data bytes", pl.len, pl.data.len()));
        }
        let (status, reason, bursts) = expect(cfg, &mem, pl.rkey, pl.recv, pl.addr, &pl.data);
        if status != pl.status || reason != pl.reason {
            return Outcome::Fail(format!(
                "place {k}: reference says {status} {reason:?}, the vector {} {:?}",
                pl.status, pl.reason
            ));
        }
        if bursts != pl.bursts {
            return Outcome::Fail(format!("place {k}: the bursts differ from the reference's"));
        }
    }
    Outcome::Pass
}

struct Gen<'a> {
    cfg: &'a Config,
    mem: Memory,
    ops: Vec<MrOp>,
    places: Vec<Placement>,
    rng: Rng,
}

impl Gen<'_> {
    fn reg(&mut self, base: u64, len: u64, access: Access) -> u32 {
        assert!(self.places.is_empty(), "the table is built before the first placement");
        let key = self.mem.register(base, len, access).expect("generator regions are valid");
        self.ops.push(MrOp::Reg { key, base, len, access: access.0 });
        key
    }

    fn dereg(&mut self, key: u32) {
        assert!(self.places.is_empty(), "the table is built before the first placement");
        self.mem.deregister(key).expect("registered");
        self.ops.push(MrOp::Dereg { key });
    }

    fn place(&mut self, rkey: u32, addr: u64, len: u32) {
        self.place_as(rkey, false, addr, len);
    }

    /// A SEND's placement at a receive's buffer, by its lkey.
    fn place_recv(&mut self, lkey: u32, addr: u64, len: u32) {
        self.place_as(lkey, true, addr, len);
    }

    fn place_as(&mut self, rkey: u32, recv: bool, addr: u64, len: u32) {
        let data: Vec<u8> = (0..len).map(|_| self.rng.below(256) as u8).collect();
        let (status, reason, bursts) = expect(self.cfg, &self.mem, rkey, recv, addr, &data);
        self.places.push(Placement { rkey, recv, addr, len, data, drain: false, status, reason, bursts });
    }
}

/// The vectors for `cfg` and `seed`.
pub fn generate(cfg: &Config, seed: u64) -> Vec<DmaVector> {
    let (bb, max_burst) = bus(cfg);
    let bb = bb as u64;
    let max_bytes = max_burst as u64 * bb;
    let mtu = cfg.transport.mtu;
    let mut out = Vec::new();
    let mut push = |desc: &str, f: &dyn Fn(&mut Gen)| {
        let index = out.len();
        let vseed = vector_seed(seed, BlockKind::DmaWrite, index);
        let mut g = Gen {
            cfg,
            mem: Memory::new(cfg.hardware.mr_entries),
            ops: Vec::new(),
            places: Vec::new(),
            rng: Rng::new(vseed),
        };
        f(&mut g);
        out.push(DmaVector {
            id: format!("dma_write-{index:03}"),
            desc: desc.to_string(),
            seed: vseed,
            mr_ops: g.ops,
            places: g.places,
        });
    };

    push("aligned, unaligned start, unaligned end, inside one beat, across one beat boundary", &|g| {
        let k = g.reg(0x10000, 0x2000, Access::REMOTE_WRITE);
        g.place(k, 0x10000, bb as u32 * 4);
        g.place(k, 0x10003, 20);
        g.place(k, 0x10100, 13);
        g.place(k, 0x10201, 3);
        g.place(k, 0x10300 + bb - 2, 4);
        g.place(k, 0x10400, 1);
    });
    push("4 KiB crossings: a small write over the boundary, and a long one", &|g| {
        let k = g.reg(0x2_0000, 0x4000, Access::REMOTE_WRITE);
        g.place(k, 0x2_0ffc, 8);
        g.place(k, 0x2_1000 - 3 * bb - 1, 4 * bb as u32 + 7);
        g.place(k, 0x2_2000 - 100, 200);
        g.place(k, 0x2_3000 - bb, bb as u32);
    });
    push("maximum bursts: exactly one max burst, one beat more, unaligned over two", &|g| {
        let k = g.reg(0x4_0000, 0x4000, Access::REMOTE_WRITE);
        g.place(k, 0x4_0000, max_bytes as u32);
        g.place(k, 0x4_1000, max_bytes as u32 + bb as u32);
        g.place(k, 0x4_2005, max_bytes as u32 + 2 * bb as u32);
    });
    push("the longest placement the receiver makes: one MTU, unaligned, over a 4 KiB boundary", &|g| {
        let k = g.reg(0x8_0000, 0x3000, Access::REMOTE_WRITE);
        g.place(k, 0x8_1000 - 0x111, mtu);
    });
    push("region bounds: to the last byte is OK, one byte more or one byte before is ACCESS", &|g| {
        let base = 0x5_0000u64;
        let len = 0x1000u64;
        let k = g.reg(base, len, Access::REMOTE_WRITE);
        g.place(k, base + len - 16, 16);
        g.place(k, base + len - 16, 17);
        g.place(k, base - 1, 8);
        g.place(k, base, len as u32);
        g.place(k, base, len as u32 + 1);
        g.place(k, base + len, 1);
    });
    push("zero-length placements check no key: inside, at the end, beyond the end, with a wrong key, all OK with no burst", &|g| {
        let k = g.reg(0x6_0000, 0x100, Access::REMOTE_WRITE);
        g.place(k, 0x6_0010, 0);
        g.place(k, 0x6_0100, 0);
        g.place(k, 0x6_0101, 0);
        g.place(k ^ 0x100, 0x6_0010, 0);
    });
    push("wrapping ranges: addr + len past 2^64 is ACCESS; a region at the top of the space ends exactly", &|g| {
        let top = u64::MAX - PAGE_BYTES * 2 + 1;
        let k = g.reg(top, PAGE_BYTES * 2 - 1, Access::REMOTE_WRITE);
        g.place(k, u64::MAX - 3, 8);
        g.place(k, u64::MAX - 100, 100);
        g.place(k, u64::MAX - 99, 100);
        g.place(k, u64::MAX, 1);
        g.place(k, top + 0xffd, 9);
    });
    push("keys: unknown slot, stale tag after re-registration, no remote-write access", &|g| {
        let k1 = g.reg(0x7_0000, 0x1000, Access::REMOTE_WRITE);
        let recv = g.reg(0x7_1000, 0x1000, Access::RECV);
        g.dereg(k1);
        let k2 = g.reg(0x7_0000, 0x1000, Access::ALL);
        g.place(k1, 0x7_0000, 16);
        g.place(k2, 0x7_0000, 16);
        g.place(recv, 0x7_1000, 16);
        let entries = g.cfg.hardware.mr_entries;
        g.place(entries - 1, 0x7_0000, 16);
        g.place(k2, 0x7_1000, 16);
    });
    for k in 0..2 {
        push(&format!("random placements over several regions ({k})"), &|g| {
            let mut keys = Vec::new();
            for r in 0..4u64 {
                let base = 0x100_0000 * (r + 1) + g.rng.below(0x1000) * bb;
                let len = 0x800 + g.rng.below(0x2000);
                let acc = if g.rng.below(5) == 0 { Access::RECV } else { Access::REMOTE_WRITE };
                keys.push((g.reg(base, len, acc), base, len));
            }
            for _ in 0..8 {
                let (key, base, len) = keys[g.rng.below(keys.len() as u64) as usize];
                let cap = if g.rng.below(4) == 0 { mtu as u64 + 1 } else { 65 };
                let n = g.rng.below(cap) as u32;
                let addr = match g.rng.below(6) {
                    0 => base + len - n as u64,
                    1 => base + len - n as u64 + 1,
                    2 => (base + len / 2) & !(PAGE_BYTES - 1),
                    _ => base + g.rng.below(len),
                };
                let key = if g.rng.below(12) == 0 { key ^ 1 } else { key };
                g.place(key, addr, n);
            }
        });
    }
    push(
        "hostile placements on a full table: 24 guessed 32-bit rkeys (ACCESS BadKey unless a guess is live), \
         every region crossed by one byte at its end and entered one byte before its base (ACCESS OutOfBounds), \
         the longest payload_len (65535) from the last byte, addresses whose end passes 2^64 by 1 byte and by \
         100 (ACCESS), and each region's last byte written (OK)",
        &|g| {
            let entries = g.cfg.hardware.mr_entries as u64;
            let mut regs = Vec::new();
            for i in 0..entries {
                let base = 0x1000_0000 * (i + 1) + g.rng.below(64) * 8;
                let len = 0x100 + g.rng.below(0x800);
                regs.push((g.reg(base, len, Access::REMOTE_WRITE), base, len));
            }
            for _ in 0..24 {
                let guess = g.rng.next_u64() as u32;
                g.place(guess, regs[0].1, 8);
            }
            for &(k, base, len) in &regs {
                g.place(k, base + len - 3, 4);
                g.place(k, base - 1, 2);
                g.place(k, base + len - 1, 1);
            }
            let (k, base, len) = regs[1];
            g.place(k, base + len - 1, u16::MAX as u32);
            g.place(k, u64::MAX - 6, 8);
            g.place(k, u64::MAX - 100, 200);
        },
    );
    push(
        "SEND placements by a receive's lkey: a RECV region takes them (not a WRITE by the same key), a \
         remote-write-only or local region refuses them (NoAccess), bounds as a WRITE's, a deregistered region's \
         key and its successor's stale tag refuse (BadKey), empty ones check no key",
        &|g| {
            let recv = g.reg(0x9_0000, 0x2000, Access::RECV);
            let write = g.reg(0xa_0000, 0x1000, Access::REMOTE_WRITE);
            let local = g.reg(0xb_0000, 0x1000, Access::LOCAL);
            let both = g.reg(0xc_0000, 0x1000, Access::ALL);
            let gone = g.reg(0xd_0000, 0x1000, Access::RECV);
            g.dereg(gone);
            let again = g.reg(0xe_0000, 0x1000, Access::RECV);
            g.place_recv(recv, 0x9_0003, 200);
            g.place_recv(recv, 0x9_0ff0, 0x40);
            g.place(recv, 0x9_0000, 16);
            g.place_recv(write, 0xa_0000, 16);
            g.place_recv(local, 0xb_0000, 16);
            g.place_recv(both, 0xc_0000, 16);
            g.place(both, 0xc_0010, 16);
            g.place_recv(recv, 0x9_2000 - 15, 16);
            g.place_recv(recv, 0x9_0000 - 1, 2);
            g.place_recv(gone, 0xd_0000, 16);
            g.place_recv(again, 0xe_0000, 16);
            g.place_recv(gone, 0xe_0000, 16);
            g.place_recv(gone, 0xd_0000, 0);
            g.place_recv(write, 0x9_0000, 0);
        },
    );
    out
}

/// Reason names of [`MemError`] as the vectors spell them.
pub fn reason_name(e: MemError) -> String {
    format!("{e:?}")
}
