//! Port-level benches shared by the vector checkers: they drive any
//! [`Block`] by port name, so the cycle model and its Verilated RTL (behind
//! the same trait) run the same stimulus with the same idle cycles and
//! backpressure, and report what came out for the caller to compare.

use crate::block::{port_index, zero_values, Bits, Block};
use crate::rx_parser::{raw_header, Reason};

/// xorshift64*: the bench's own seeded generator (idle cycles, stalls).
#[derive(Debug, Clone)]
pub struct BenchRng(u64);

impl BenchRng {
    pub fn new(seed: u64) -> BenchRng {
        BenchRng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// A frame as the MAC puts it on the stream: its bytes packed from lane 0,
/// `tlast` on the beat of the last byte, plus damage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamIn {
    pub bytes: Vec<u8>,
    /// Byte positions whose `tkeep` bit is cleared.
    pub keep_holes: Vec<u32>,
    /// `tuser` on the beat holding this byte (past the end: the last beat).
    pub tuser_byte: Option<u32>,
}

/// One packet handed on by `rx_parser`: its `m_hdr` entry and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxPacket {
    /// `m_hdr_raw`, header byte 0 first.
    pub raw: Vec<u8>,
    pub ecn: u8,
    pub udp_sport: u16,
    /// Payload bytes within `tkeep`.
    pub payload: Vec<u8>,
    /// `m_axis_tuser` on its last beat: downstream drops it.
    pub dropped: bool,
}

/// What `rx_parser` did with a run of frames.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RxRun {
    pub packets: Vec<RxPacket>,
    /// `stat_drop_*` pulses, in order.
    pub drops: Vec<Reason>,
    pub cycles: u64,
}

/// Stimulus pacing: percent of cycles with `s_axis_tvalid` low, and with
/// each output's ready low.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub idle: u64,
    pub stall: u64,
    pub seed: u64,
}

/// Cycles without any progress before the bench calls the block stuck.
pub const PATIENCE: u64 = 10_000;

struct Ports {
    rst: usize,
    tdata: usize,
    tkeep: usize,
    tvalid: usize,
    tready: usize,
    tlast: usize,
    tuser: usize,
    udp_port: usize,
    hdr_valid: usize,
    hdr_ready: usize,
    hdr_raw: usize,
    ecn: usize,
    sport: usize,
    m_tdata: usize,
    m_tkeep: usize,
    m_tvalid: usize,
    m_tready: usize,
    m_tlast: usize,
    m_tuser: usize,
    stat: Vec<usize>,
}

fn ports(dut: &dyn Block) -> Result<Ports, String> {
    let ps = dut.ports();
    let at = |n: &str| port_index(ps, n).ok_or_else(|| format!("{} has no port {n}", dut.name()));
    Ok(Ports {
        rst: at("rst")?,
        tdata: at("s_axis_tdata")?,
        tkeep: at("s_axis_tkeep")?,
        tvalid: at("s_axis_tvalid")?,
        tready: at("s_axis_tready")?,
        tlast: at("s_axis_tlast")?,
        tuser: at("s_axis_tuser")?,
        udp_port: at("cfg_udp_port")?,
        hdr_valid: at("m_hdr_valid")?,
        hdr_ready: at("m_hdr_ready")?,
        hdr_raw: at("m_hdr_raw")?,
        ecn: at("m_hdr_ecn")?,
        sport: at("m_hdr_udp_sport")?,
        m_tdata: at("m_axis_tdata")?,
        m_tkeep: at("m_axis_tkeep")?,
        m_tvalid: at("m_axis_tvalid")?,
        m_tready: at("m_axis_tready")?,
        m_tlast: at("m_axis_tlast")?,
        m_tuser: at("m_axis_tuser")?,
        stat: Reason::ALL.iter().map(|r| at(&format!("stat_drop_{}", r.name()))).collect::<Result<_, _>>()?,
    })
}

fn bytes_of(b: &Bits, n: usize) -> Vec<u8> {
    (0..n).map(|i| (b.0.get(i / 8).copied().unwrap_or(0) >> (8 * (i % 8))) as u8).collect()
}

fn bits_of(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, &x) in bytes.iter().enumerate() {
        b.0[i / 8] |= (x as u64) << (8 * (i % 8));
    }
    b.truncate(width);
    b
}

/// One beat on the input stream: data, keep mask bytes (lane i: keep bit
/// i), last, user.
type InBeat = (Vec<u8>, Vec<bool>, bool, bool);

fn beats_of(f: &StreamIn, n: usize, rng: &mut BenchRng) -> Vec<InBeat> {
    let beats = f.bytes.len().div_ceil(n).max(1);
    let tuser_beat = f.tuser_byte.map(|b| (b as usize / n).min(beats - 1));
    (0..beats)
        .map(|k| {
            let lo = k * n;
            // Lanes past the frame carry whatever a MAC leaves there.
            let data: Vec<u8> = (lo..lo + n).map(|i| f.bytes.get(i).copied().unwrap_or(rng.next_u64() as u8)).collect();
            let keep = (lo..lo + n).map(|i| i < f.bytes.len() && !f.keep_holes.contains(&(i as u32))).collect();
            (data, keep, k == beats - 1, tuser_beat == Some(k))
        })
        .collect()
}

/// Drives `frames` through an `rx_parser` (model or RTL) after a two-cycle
/// reset, with seeded idle cycles and backpressure, until everything has
/// come out. Fails if the block makes no progress for [`PATIENCE`] cycles,
/// raises two drop pulses in one cycle, or hands on a different number of
/// headers and payload packets.
pub fn rx_parser(dut: &mut dyn Block, frames: &[StreamIn], udp_port: u16, pace: Pace) -> Result<RxRun, String> {
    let p = ports(dut)?;
    let defs = dut.ports().to_vec();
    let n = defs[p.tdata].width as usize / 8;
    let mut rng = BenchRng::new(pace.seed);
    let beats: Vec<InBeat> = frames.iter().flat_map(|f| beats_of(f, n, &mut rng)).collect();
    let mut inp = zero_values(&defs);
    let mut out = zero_values(&defs);
    inp[p.udp_port] = Bits::from_u64(16, udp_port as u64);
    inp[p.rst] = Bits::from_u64(1, 1);
    for _ in 0..2 {
        dut.eval(&inp, &mut out);
        dut.tick(&inp);
    }
    inp[p.rst] = Bits::from_u64(1, 0);
    let mut run = RxRun::default();
    // Headers and payload packets leave through separate FIFOs, each at its
    // own ready: they pair up in order at the end.
    let mut hdrs: Vec<(Vec<u8>, u8, u16)> = Vec::new();
    let mut pkts: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    // `quiet`: cycles without progress (the stuck check); `settled`: of
    // those, the ones where both outputs were ready, so that the end is not
    // declared while heavy backpressure still holds packets inside.
    let (mut i, mut quiet, mut settled) = (0usize, 0u64, 0u64);
    loop {
        let offer = i < beats.len() && !rng.chance(pace.idle);
        if let Some((d, keep, last, user)) = beats.get(i) {
            inp[p.tdata] = bits_of(defs[p.tdata].width, d);
            let mask: Vec<u8> = keep.chunks(8).map(|c| c.iter().rev().fold(0u8, |a, &k| (a << 1) | k as u8)).collect();
            inp[p.tkeep] = bits_of(defs[p.tkeep].width, &mask);
            inp[p.tlast] = Bits::from_u64(1, *last as u64);
            inp[p.tuser] = Bits::from_u64(1, *user as u64);
        }
        inp[p.tvalid] = Bits::from_u64(1, offer as u64);
        let hdr_ready = !rng.chance(pace.stall);
        let axis_ready = !rng.chance(pace.stall);
        inp[p.hdr_ready] = Bits::from_u64(1, hdr_ready as u64);
        inp[p.m_tready] = Bits::from_u64(1, axis_ready as u64);
        dut.eval(&inp, &mut out);
        let mut progress = false;
        if offer && out[p.tready].bit(0) {
            i += 1;
            progress = true;
        }
        if hdr_ready && out[p.hdr_valid].bit(0) {
            let raw = raw_header(&out[p.hdr_raw]).to_vec();
            hdrs.push((raw, out[p.ecn].as_u64() as u8, out[p.sport].as_u64() as u16));
            progress = true;
        }
        if axis_ready && out[p.m_tvalid].bit(0) {
            let data = bytes_of(&out[p.m_tdata], n);
            let keep = &out[p.m_tkeep];
            cur.extend((0..n).filter(|&l| keep.bit(l as u32)).map(|l| data[l]));
            if out[p.m_tlast].bit(0) {
                pkts.push((std::mem::take(&mut cur), out[p.m_tuser].bit(0)));
            }
            progress = true;
        }
        let pulses: Vec<Reason> = Reason::ALL.into_iter().filter(|r| out[p.stat[r.index()]].bit(0)).collect();
        if pulses.len() > 1 {
            return Err(format!("cycle {}: drop pulses {pulses:?} at once", run.cycles));
        }
        run.drops.extend(pulses);
        dut.tick(&inp);
        run.cycles += 1;
        quiet = if progress { 0 } else { quiet + 1 };
        settled = if progress { 0 } else { settled + (hdr_ready && axis_ready) as u64 };
        if i == beats.len() && settled > 64 {
            break;
        }
        if quiet > PATIENCE {
            return Err(format!("no progress for {PATIENCE} cycles after {i} of {} input beats", beats.len()));
        }
    }
    if hdrs.len() != pkts.len() {
        return Err(format!("{} headers handed on but {} payload packets", hdrs.len(), pkts.len()));
    }
    run.packets = hdrs
        .into_iter()
        .zip(pkts)
        .map(|((raw, ecn, udp_sport), (payload, dropped))| RxPacket { raw, ecn, udp_sport, payload, dropped })
        .collect();
    Ok(run)
}
