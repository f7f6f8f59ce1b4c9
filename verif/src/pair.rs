//! Two model tops back to back: the `mrnic bench model` workload.
//!
//! NIC A (address 1) and NIC B (address 2) are each a [`NicRig`] (the
//! model's `mrnic_core` with host memory); every frame one sends enters the
//! other's MAC port on the same plane, a cycle of each per step. Both open
//! `conns` connections to each other with every path of the config, and
//! both keep every connection busy with RDMA WRITEs of mixed sizes (64 B to
//! three MTUs) into the peer's region, at most `per_conn` outstanding each,
//! on the connection's streams in turn. So both directions carry data and
//! the SACKs, ACKREQs and completions the data causes. (SENDs and WRITEs
//! with immediate data need posted receives, which this workload does not
//! drive yet.)
//!
//! The run checks itself: every WRITE completes exactly once, with
//! success, and [`Pair::finish`] compares what landed in each region with
//! the peer's source bytes (each WRITE has its own slot until it completes,
//! and a slot's source bytes never change, so every byte a slot's WRITEs
//! covered must equal the source).

use mrnic_model::tx_engine::{op, status};
use mrnic_proto::Config;

use crate::nic::{mac_of, NicRig, Pressure};
use crate::stimulus::Rng;

/// The region both NICs register: source bytes in its first half, the
/// peer's WRITEs land in its second.
const KEY: u32 = 16;
const BASE: u64 = 0x1000_0000;

/// What a run did, per NIC summed over both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairStats {
    /// Cycles of each NIC (both run the same number).
    pub cycles: u64,
    /// Frames both NICs sent.
    pub frames: u64,
    /// Work requests posted and completed (successfully) by both.
    pub posted: u64,
    pub completed: u64,
    /// Payload bytes of the completed work requests.
    pub bytes: u64,
}

/// A work request in flight: its slot and length.
#[derive(Debug, Clone, Copy)]
struct Flight {
    slot: u64,
    len: u64,
}

struct Side {
    rig: NicRig,
    /// Per connection: outstanding WRITEs by wr_id.
    flights: Vec<Vec<(u64, Flight)>>,
    /// Per connection: its free slots.
    free_slots: Vec<Vec<u64>>,
    /// Per connection and slot: the longest WRITE it completed.
    covered: Vec<Vec<u64>>,
    next_wr: u64,
    /// The WRITE being offered on `s_wr`: (conn, wr_id, flight).
    offer: Option<(usize, u64, Flight)>,
    rr: usize,
}

/// The back-to-back pair.
pub struct Pair {
    cfg: Config,
    sides: [Side; 2],
    conns: usize,
    per_conn: usize,
    slot_bytes: u64,
    rng: Rng,
    pub stats: PairStats,
}
impl Pair {
    /// Both NICs, reset, with their region registered, the source half
    /// filled and `conns` connections open between them.
    pub fn new(cfg: &Config, conns: u32, per_conn: u32, seed: u64) -> Result<Pair, String> {
        let t = &cfg.transport;
        if conns == 0 || conns > t.connections {
            return Err(format!("conns: {conns} is not within 1..={}", t.connections));
        }
        if per_conn == 0 {
            return Err("per_conn: at least one WRITE per connection".into());
        }
        let slot_bytes = 3 * t.mtu as u64;
        let half = conns as u64 * per_conn as u64 * slot_bytes;
        let mut rng = Rng::new(seed);
        let mut sides = Vec::new();
        for addr in [1u32, 2] {
            let peer = 3 - addr;
            let mut rig = NicRig::new(cfg, seed ^ addr as u64, Pressure::default())?;
            // The write log would grow with every burst of a long run.
            rig.wmem.log = None;
            rig.set("cfg_src_ip", addr as u64)?;
            rig.set("cfg_src_mac", mac_of(addr))?;
            rig.register_mr(
                cfg,
                KEY,
                BASE,
                2 * half,
                mrnic_model::dma_write_engine::ACCESS_REMOTE_WRITE | mrnic_model::dma_write_engine::ACCESS_RECV,
            )?;
            let src: Vec<u8> = (0..half).map(|_| rng.next_u64() as u8).collect();
            rig.memory().write(BASE, &src);
            for c in 0..conns {
                rig.send(
                    "s_conn",
                    &[
                        ("entry_valid", 1),
                        ("local_id", c as u64),
                        ("remote_id", c as u64),
                        ("remote_addr", peer as u64),
                        ("paths", t.paths_per_conn as u64),
                    ],
                )?;
                for p in 0..t.paths_per_conn {
                    // Entropy ports above the transport's, distinct per path.
                    let sport = 0xC000 + ((c * t.paths_per_conn + p) % 0x3000) as u64;
                    rig.send(
                        "s_open",
                        &[
                            ("conn", c as u64),
                            ("path", p as u64),
                            ("npaths", t.paths_per_conn as u64),
                            ("remote_id", c as u64),
                            ("dst_mac", mac_of(peer)),
                            ("dst_ip", peer as u64),
                            ("sport", sport),
                            ("plane", (p % t.planes) as u64),
                            ("psn", 0),
                        ],
                    )?;
                }
                rig.send("s_ropen", &[("conn", c as u64), ("paths", t.paths_per_conn as u64), ("psn", 0)])?;
            }
            let n = conns as usize;
            let free_slots = (0..n).map(|_| (0..per_conn as u64).rev().collect()).collect();
            sides.push(Side {
                rig,
                flights: vec![Vec::new(); n],
                free_slots,
                covered: vec![vec![0; per_conn as usize]; n],
                next_wr: 1,
                offer: None,
                rr: 0,
            });
        }
        let [a, b]: [Side; 2] = sides.try_into().map_err(|_| "two sides".to_string())?;
        Ok(Pair {
            cfg: cfg.clone(),
            sides: [a, b],
            conns: conns as usize,
            per_conn: per_conn as usize,
            slot_bytes,
            rng,
            stats: PairStats::default(),
        })
    }

    /// The offset of connection `c`'s slot `s` within a half.
    fn slot_at(&self, c: usize, s: u64) -> u64 {
        (c as u64 * self.per_conn as u64 + s) * self.slot_bytes
    }

    /// A WRITE length: mostly small and MTU-sized, some of several packets.
    fn length(&mut self) -> u64 {
        let mtu = self.cfg.transport.mtu as u64;
        match self.rng.below(8) {
            0 | 1 => 64,
            2 => 1 + self.rng.below(mtu),
            3 | 4 => mtu,
            5 => 2 * mtu,
            _ => 1 + self.rng.below(self.slot_bytes),
        }
    }

    /// NIC A (0) or B (1), for a look inside.
    pub fn rig(&mut self, side: usize) -> &mut NicRig {
        &mut self.sides[side].rig
    }

    /// Where NIC `side`'s connection `c`, slot `s` lands in its peer's
    /// memory, and the longest WRITE of it completed so far.
    pub fn landing(&self, side: usize, c: usize, s: usize) -> (u64, u64) {
        (BASE + self.half() + self.slot_at(c, s as u64), self.sides[side].covered[c][s])
    }

    /// Bytes per half of a region.
    fn half(&self) -> u64 {
        self.conns as u64 * self.per_conn as u64 * self.slot_bytes
    }

    /// One cycle of each NIC: with `offer`, a new WRITE offered where a
    /// connection has room; frames crossed over, completions taken.
    pub fn step(&mut self, offer: bool) -> Result<(), String> {
        for me in 0..2 {
            if offer && self.sides[me].offer.is_none() {
                self.pick(me)?;
            }
            let side = &mut self.sides[me];
            side.rig.clock();
            if side.offer.is_some() && side.rig.get("s_wr_ready")? == 1 {
                let (c, wr_id, f) = side.offer.take().expect("offered");
                side.flights[c].push((wr_id, f));
                side.rig.set("s_wr_valid", 0)?;
                self.stats.posted += 1;
            }
            if !side.rig.violations.is_empty() {
                return Err(format!("NIC {}: host memory: {}", me + 1, side.rig.violations.join("; ")));
            }
            for f in std::mem::take(&mut side.rig.frames) {
                self.stats.frames += 1;
                self.sides[1 - me].rig.queue_frame(f.bytes, f.plane);
            }
            self.completions(me)?;
        }
        self.stats.cycles += 1;
        Ok(())
    }

    /// Side `me`'s completions: each must end a WRITE in flight, with
    /// success; its slot is free again.
    fn completions(&mut self, me: usize) -> Result<(), String> {
        let side = &mut self.sides[me];
        for q in std::mem::take(&mut side.rig.cqes) {
            let c = q.conn as usize;
            let pos = side.flights.get(c).and_then(|v| v.iter().position(|(id, _)| *id == q.wr_id));
            let Some(pos) = pos else {
                return Err(format!("NIC {}: a completion for no WRITE in flight: {q:?}", me + 1));
            };
            if q.status != status::SUCCESS {
                return Err(format!("NIC {}: WRITE {} completed with status {}", me + 1, q.wr_id, q.status));
            }
            let (_, f) = side.flights[c].remove(pos);
            let cov = &mut side.covered[c][f.slot as usize];
            *cov = (*cov).max(f.len);
            side.free_slots[c].push(f.slot);
            self.stats.completed += 1;
            self.stats.bytes += f.len;
        }
        Ok(())
    }

    /// Chooses the next WRITE of side `me`: the next connection, round
    /// robin, with a free slot.
    fn pick(&mut self, me: usize) -> Result<(), String> {
        for k in 0..self.conns {
            let c = (self.sides[me].rr + k) % self.conns;
            let Some(slot) = self.sides[me].free_slots[c].pop() else { continue };
            let len = self.length();
            let (at, half, streams) = (self.slot_at(c, slot), self.half(), self.cfg.transport.streams_per_conn as u64);
            let side = &mut self.sides[me];
            side.rr = (c + 1) % self.conns;
            let wr_id = side.next_wr;
            side.next_wr += 1;
            side.offer = Some((c, wr_id, Flight { slot, len }));
            for (n, v) in [
                ("conn", c as u64),
                ("stream", wr_id % streams),
                ("op", op::WRITE as u64),
                ("wr_id", wr_id),
                ("laddr", BASE + at),
                ("len", len),
                ("raddr", BASE + half + at),
                ("rkey", KEY as u64),
                ("imm", 0),
            ] {
                side.rig.set(&format!("s_wr_{n}"), v)?;
            }
            side.rig.set("s_wr_valid", 1)?;
            return Ok(());
        }
        Ok(())
    }

    /// Stops offering and runs until both NICs have completed every WRITE
    /// (at most `limit` cycles); then checks that every byte the WRITEs
    /// covered in each region is the peer's source byte.
    pub fn finish(&mut self, limit: u64) -> Result<(), String> {
        for s in &mut self.sides {
            if let Some((c, _, f)) = s.offer.take() {
                s.free_slots[c].push(f.slot);
                s.rig.set("s_wr_valid", 0)?;
            }
        }
        let start = self.stats.cycles;
        while self.sides.iter().any(|s| s.flights.iter().any(|v| !v.is_empty())) {
            if self.stats.cycles - start > limit {
                let left: usize = self.sides.iter().map(|s| s.flights.iter().map(Vec::len).sum::<usize>()).sum();
                return Err(format!("{left} WRITEs not complete {limit} cycles after the last was posted"));
            }
            self.step(false)?;
        }
        self.check_landed()
    }

    /// Every byte the completed WRITEs covered in each region is the peer's
    /// source byte.
    pub fn check_landed(&mut self) -> Result<(), String> {
        let half = self.half();
        for me in 0..2 {
            for c in 0..self.conns {
                for s in 0..self.per_conn {
                    let len = self.sides[me].covered[c][s] as usize;
                    let at = self.slot_at(c, s as u64);
                    let src = self.sides[me].rig.memory().read(BASE + at, len);
                    let dst = self.sides[1 - me].rig.memory().read(BASE + half + at, len);
                    if src != dst {
                        let first = src.iter().zip(&dst).position(|(a, b)| a != b).unwrap_or(0);
                        return Err(format!(
                            "NIC {}'s WRITEs on conn {c}, slot {s}: byte {first} of {len} differs at NIC {}",
                            me + 1,
                            2 - me
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
