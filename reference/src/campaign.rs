//! Fault campaigns: many seeded transfers between two NICs over the
//! deterministic lossy [`Channel`], each with its own draw of impairments
//! (loss up to `loss_max_ppm`, reordering by jitter, duplication,
//! corruption, CE marks) and of outages (single lanes — a plane under
//! plane routing, a set of port pairs under ECMP routing — going down at a
//! random time and mostly coming back). What `mrnic campaign` runs.
//!
//! Every run checks, at the end:
//! - every send and every receive completes exactly once, with Success;
//! - completions come in posting (msn) order per stream;
//! - the target regions are bit exact;
//! - every memory write the NICs made (the write trace) lies inside the
//!   span of one message's target, and the guard regions around the
//!   targets are untouched.
//!
//! One lane is never taken down (under plane routing it is a plane a path
//! uses): with every lane dead the connection fails by design
//! (`TransportRetryExceeded`), which `tests/exhaustion.rs` covers.
//!
//! A run is a pure function of its run seed: [`run_seed`] derives it from
//! the campaign seed and the run index, so a campaign is deterministic at
//! any `jobs`, and [`run_one`] replays one failing run alone.

use std::collections::{BTreeMap, BTreeSet};

use mrnic_proto::Config;

use crate::channel::{Channel, ChannelStats, Lane, Outage, Routing};
use crate::memory::Access;
use crate::rng::{splitmix64, Rng};
use crate::sim::{Outcome, Sim};
use crate::verbs::{ConnParams, CqOpcode, RecvRequest, Sge, Status, WorkRequest, WrOp};
use crate::{Nic, NicConfig};

const A_ADDR: u32 = 0x0a00_0001;
const B_ADDR: u32 = 0x0a00_0002;
const A_CONN: u32 = 7;
const B_CONN: u32 = 0x00c0_ffee;
const SRC_BASE: u64 = 0x1000_0000;
const WRITE_BASE: u64 = 0x2000_0000;
const RECV_BASE: u64 = 0x3000_0000;
const GUARD: u64 = 4096;
/// Virtual time a run may take before it counts as a stall.
const DEADLINE_NS: u64 = 20_000_000_000;
const MAX_STEPS: u64 = 2_000_000;

/// Default upper bound of the per-lane drop probability (10%).
pub const DEFAULT_LOSS_MAX_PPM: u32 = 100_000;

/// Faults one run injected: the channel's counters plus the outages drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Faults {
    pub dropped: u64,
    pub lost_to_outage: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub ce_marked: u64,
    /// Runs whose lanes had jitter (reordering); a count of runs.
    pub reordering_runs: u64,
    /// Lane outages scheduled (plane or port-pair set down).
    pub outages: u64,
    /// Of those, outages that end (the lane comes back).
    pub recoveries: u64,
}

impl Faults {
    fn add(&mut self, o: &Faults) {
        self.dropped += o.dropped;
        self.lost_to_outage += o.lost_to_outage;
        self.duplicated += o.duplicated;
        self.corrupted += o.corrupted;
        self.ce_marked += o.ce_marked;
        self.reordering_runs += o.reordering_runs;
        self.outages += o.outages;
        self.recoveries += o.recoveries;
    }

    /// (name, count) for reports; every kind a campaign must inject.
    pub fn kinds(&self) -> [(&'static str, u64); 8] {
        [
            ("dropped", self.dropped),
            ("lost_to_outage", self.lost_to_outage),
            ("duplicated", self.duplicated),
            ("corrupted", self.corrupted),
            ("ce_marked", self.ce_marked),
            ("reordering_runs", self.reordering_runs),
            ("outages", self.outages),
            ("recoveries", self.recoveries),
        ]
    }
}

/// What one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    pub seed: u64,
    pub messages: u64,
    pub bytes: u64,
    pub faults: Faults,
    pub channel: ChannelStats,
    /// The first check that failed.
    pub failure: Option<String>,
    /// Human-readable description of the draw (for replay).
    pub draw: String,
}

/// A campaign's totals.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    pub runs: u64,
    pub messages: u64,
    pub bytes: u64,
    pub faults: Faults,
    /// (run seed, what failed), in run order.
    pub failures: Vec<(u64, String)>,
}

/// The seed of run `i` of a campaign.
pub fn run_seed(campaign_seed: u64, i: u64) -> u64 {
    let mut s = campaign_seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    splitmix64(&mut s)
}

/// Per stream: (receive wr_id, bytes, immediate) in posting order.
type Recvs = BTreeMap<u8, Vec<(u64, u32, Option<u32>)>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
    SendImm,
}

/// Runs `runs` seeded transfers on `jobs` threads; the summary does not
/// depend on `jobs`.
pub fn run_campaign(runs: u64, seed: u64, loss_max_ppm: u32, jobs: usize) -> Summary {
    let jobs = jobs.max(1).min(runs.max(1) as usize);
    let mut reports: Vec<Option<RunReport>> = vec![None; runs as usize];
    std::thread::scope(|sc| {
        let chunks: Vec<_> = reports.chunks_mut(runs.div_ceil(jobs as u64).max(1) as usize).collect();
        let mut start = 0u64;
        for chunk in chunks {
            let first = start;
            start += chunk.len() as u64;
            sc.spawn(move || {
                for (k, slot) in chunk.iter_mut().enumerate() {
                    *slot = Some(run_one(run_seed(seed, first + k as u64), loss_max_ppm));
                }
            });
        }
    });
    let mut s = Summary::default();
    for r in reports.into_iter().flatten() {
        s.runs += 1;
        s.messages += r.messages;
        s.bytes += r.bytes;
        s.faults.add(&r.faults);
        if let Some(f) = r.failure {
            s.failures.push((r.seed, f));
        }
    }
    s
}

/// One run, a pure function of `seed` and `loss_max_ppm`.
pub fn run_one(seed: u64, loss_max_ppm: u32) -> RunReport {
    let mut rng = Rng::new(seed);
    let cfg = Config::builtin("small").expect("the built-in small config parses");
    let planes = cfg.transport.planes as usize;
    let paths = 1 + rng.below(cfg.transport.paths_per_conn as u64) as u8;
    let routing = if rng.below(2) == 0 { Routing::ByPlane } else { Routing::ByPorts };
    let drop_ppm = rng.below(loss_max_ppm as u64 + 1) as u32;
    let dup_ppm = rng.below(50_001) as u32;
    let corrupt_ppm = rng.below(20_001) as u32;
    let ce_ppm = rng.below(100_001) as u32;
    let jitter_ns = if rng.below(4) == 0 { 0 } else { rng.below(8_000) };
    let lanes: Vec<Lane> = (0..planes as u64)
        .map(|i| Lane { drop_ppm, dup_ppm, corrupt_ppm, ce_ppm, delay_ns: 2_000 + 500 * i, jitter_ns })
        .collect();
    let tx_psn = match rng.below(3) {
        0 => 0,
        1 => (1 << 24) - 1 - rng.below(64) as u32,
        _ => rng.below(1 << 24) as u32,
    };
    // Lanes a path can be on: under plane routing the planes its paths use.
    let used = match routing {
        Routing::ByPlane => (paths as usize).min(planes),
        Routing::ByPorts => planes,
    };
    let survivor = rng.below(used as u64) as usize;
    let mut outages = Vec::new();
    if used >= 2 {
        for _ in 0..rng.below(4) {
            let mut lane = rng.below(used as u64 - 1) as usize;
            if lane >= survivor {
                lane += 1;
            }
            let from = rng.below(2_000_000);
            let to = if rng.below(5) == 0 { u64::MAX } else { from + 50_000 + rng.below(5_000_000) };
            outages.push(Outage { lane, from, to });
        }
    }
    let n_msgs = 1 + rng.below(8) as usize;
    let msgs: Vec<(u8, Kind, u32)> = (0..n_msgs)
        .map(|_| {
            let stream = rng.below(cfg.transport.streams_per_conn as u64) as u8;
            let kind = [Kind::Write, Kind::WriteImm, Kind::Send, Kind::SendImm][rng.below(4) as usize];
            let len = match rng.below(6) {
                0 => 0,
                1 => 3_000 + rng.below(9_000) as u32,
                _ => rng.below(3_000) as u32,
            };
            (stream, kind, len)
        })
        .collect();
    let draw = format!(
        "paths {paths}, {routing:?}, drop {drop_ppm} ppm, dup {dup_ppm} ppm, corrupt {corrupt_ppm} ppm, \
         ce {ce_ppm} ppm, jitter {jitter_ns} ns, tx_psn {tx_psn:#x}, outages {outages:?}, messages {msgs:?}"
    );

    // Two NICs, one connection, memory with guards around the targets.
    let a = Nic::new(NicConfig::new(cfg.clone(), A_ADDR, seed ^ 0xa));
    let b = Nic::new(NicConfig::new(cfg.clone(), B_ADDR, seed ^ 0xb));
    let mut channel = Channel::new(seed ^ 0xc4a1, lanes, routing);
    channel.outages = outages.clone();
    let mut sim = Sim::new(vec![a, b], channel);
    let pa = ConnParams { local_id: A_CONN, remote_id: B_CONN, remote: B_ADDR, paths, tx_psn, rx_psn: tx_psn };
    let pb = ConnParams { local_id: B_CONN, remote_id: A_CONN, remote: A_ADDR, ..pa };
    sim.nics[0].create_conn(pa).expect("connection A");
    sim.nics[1].create_conn(pb).expect("connection B");
    let total: u64 = msgs.iter().map(|m| m.2 as u64).sum();
    let region = total.max(1);
    sim.nics[0].reg_mr(SRC_BASE, region, Access::LOCAL).expect("source region");
    let nb = &mut sim.nics[1];
    let mut reg = |base: u64, len: u64, acc: Access| nb.reg_mr(base, len, acc).expect("region");
    reg(WRITE_BASE - GUARD, GUARD, Access::ALL);
    let rkey = reg(WRITE_BASE, region, Access::REMOTE_WRITE);
    reg(WRITE_BASE + region, GUARD, Access::ALL);
    reg(RECV_BASE - GUARD, GUARD, Access::ALL);
    reg(RECV_BASE, region, Access::RECV);
    reg(RECV_BASE + region, GUARD, Access::ALL);

    let mut data_rng = Rng::new(seed ^ 0x5eed);
    let mut expect_write = vec![0u8; region as usize];
    let mut expect_recv = vec![0u8; region as usize];
    let mut spans = Vec::new();
    let mut sends: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    let mut recvs: Recvs = BTreeMap::new();
    let mut off = 0u64;
    for (i, &(stream, kind, len)) in msgs.iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|_| data_rng.next_u64() as u8).collect();
        if len > 0 {
            sim.nics[0].write_mem(SRC_BASE + off, &data).expect("source write");
        }
        let imm = matches!(kind, Kind::WriteImm | Kind::SendImm).then_some(0x1000_0000 | i as u32);
        let range = off as usize..(off + len as u64) as usize;
        let op = match kind {
            Kind::Write | Kind::WriteImm => {
                expect_write[range].copy_from_slice(&data);
                spans.push((WRITE_BASE + off, len as u64));
                WrOp::Write { remote_addr: WRITE_BASE + off, rkey }
            }
            Kind::Send | Kind::SendImm => {
                expect_recv[range].copy_from_slice(&data);
                spans.push((RECV_BASE + off, len as u64));
                WrOp::Send
            }
        };
        if kind != Kind::Write {
            let rid = 1_000_000 + i as u64;
            let rlen = if matches!(kind, Kind::Send | Kind::SendImm) { len } else { 0 };
            let r = RecvRequest { wr_id: rid, addr: RECV_BASE + off, len: rlen };
            sim.nics[1].post_recv(B_CONN, stream, r).expect("post_recv");
            recvs.entry(stream).or_default().push((rid, len, imm));
        }
        let wr = WorkRequest { wr_id: i as u64, op, imm, local: Sge { addr: SRC_BASE + off, len: len as u64 } };
        sim.nics[0].post_send(A_CONN, stream, wr).expect("post_send");
        sends.entry(stream).or_default().push(i as u64);
        off += len as u64;
    }
    for n in &mut sim.nics {
        n.set_write_trace(true);
    }

    let (na, nb) = (n_msgs, recvs.values().map(Vec::len).sum::<usize>());
    let outcome =
        sim.run_until(DEADLINE_NS, MAX_STEPS, |s| s.completions[0].len() >= na && s.completions[1].len() >= nb);
    // Let late duplicates and answers arrive: they must change nothing.
    let until = sim.now + 3_000_000;
    sim.run_until(until, 200_000, |_| false);

    let failure = if outcome != Outcome::Done {
        Some(format!(
            "stalled ({outcome:?}) at {} ns: {} of {na} sends, {} of {nb} receives completed; A {:?}; B {:?}",
            sim.now,
            sim.completions[0].len(),
            sim.completions[1].len(),
            sim.nics[0].counters(),
            sim.nics[1].counters()
        ))
    } else {
        check(&mut sim, &sends, &recvs, &msgs, &expect_write, &expect_recv, &spans).err()
    };
    let st = sim.channel.stats;
    let faults = Faults {
        dropped: st.dropped,
        lost_to_outage: st.lost_to_outage,
        duplicated: st.duplicated,
        corrupted: st.corrupted,
        ce_marked: st.ce_marked,
        reordering_runs: u64::from(jitter_ns > 0),
        outages: outages.len() as u64,
        recoveries: outages.iter().filter(|o| o.to != u64::MAX).count() as u64,
    };
    RunReport { seed, messages: n_msgs as u64, bytes: total, faults, channel: st, failure, draw }
}

fn check(
    sim: &mut Sim,
    sends: &BTreeMap<u8, Vec<u64>>,
    recvs: &Recvs,
    msgs: &[(u8, Kind, u32)],
    expect_write: &[u8],
    expect_recv: &[u8],
    spans: &[(u64, u64)],
) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    let mut per_stream: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    for c in &sim.completions[0] {
        if !seen.insert(c.wr_id) {
            return Err(format!("send completion {} raised twice", c.wr_id));
        }
        if c.status != Status::Success {
            return Err(format!("send {} completed with {:?}", c.wr_id, c.status));
        }
        per_stream.entry(c.stream).or_default().push(c.wr_id);
    }
    if &per_stream != sends {
        return Err(format!("send completions {per_stream:?}, expected (msn order) {sends:?}"));
    }
    let mut seen = BTreeSet::new();
    let mut per_stream: Recvs = BTreeMap::new();
    for c in &sim.completions[1] {
        if !seen.insert(c.wr_id) {
            return Err(format!("receive completion {} raised twice", c.wr_id));
        }
        if c.status != Status::Success {
            return Err(format!("receive {} completed with {:?}", c.wr_id, c.status));
        }
        let write_imm = msgs.get((c.wr_id - 1_000_000) as usize).is_some_and(|m| m.1 == Kind::WriteImm);
        let want = if write_imm { CqOpcode::RecvRdmaWithImm } else { CqOpcode::Recv };
        if c.opcode != want {
            return Err(format!("receive {} has opcode {:?}", c.wr_id, c.opcode));
        }
        per_stream.entry(c.stream).or_default().push((c.wr_id, c.byte_len, c.imm));
    }
    if &per_stream != recvs {
        return Err(format!("receive completions {per_stream:?}, expected (posting order) {recvs:?}"));
    }
    let b = &sim.nics[1];
    let region = expect_write.len() as u64;
    if b.read_mem(WRITE_BASE, region).map_err(|e| e.to_string())? != expect_write {
        return Err("write region differs from what was sent".into());
    }
    if b.read_mem(RECV_BASE, region).map_err(|e| e.to_string())? != expect_recv {
        return Err("receive region differs from what was sent".into());
    }
    for g in [WRITE_BASE - GUARD, WRITE_BASE + region, RECV_BASE - GUARD, RECV_BASE + region] {
        if b.read_mem(g, GUARD).map_err(|e| e.to_string())?.iter().any(|&x| x != 0) {
            return Err(format!("guard region at {g:#x} was written"));
        }
    }
    if let Some((addr, bytes)) = sim.nics[0].take_write_trace().into_iter().next() {
        return Err(format!("the sender's memory was written: {} bytes at {addr:#x}", bytes.len()));
    }
    for (addr, bytes) in sim.nics[1].take_write_trace() {
        let len = bytes.len() as u64;
        let inside = spans.iter().any(|&(s, l)| addr >= s && addr.checked_add(len).is_some_and(|e| e <= s + l));
        if !inside {
            return Err(format!("write of {len} bytes at {addr:#x} lies outside every message's target"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_a_function_of_its_seed() {
        let a = run_one(42, DEFAULT_LOSS_MAX_PPM);
        let b = run_one(42, DEFAULT_LOSS_MAX_PPM);
        assert_eq!(a, b);
        assert_eq!(a.failure, None, "{}", a.draw);
    }

    /// The reduced campaign: zero failures, every kind of fault injected.
    #[test]
    fn small_campaign_has_no_failures_and_every_fault_kind() {
        let s = run_campaign(200, 1, DEFAULT_LOSS_MAX_PPM, 2);
        assert_eq!(s.runs, 200);
        assert!(s.failures.is_empty(), "{:?}", s.failures);
        for (kind, n) in s.faults.kinds() {
            assert!(n > 0, "no {kind} fault injected: {:?}", s.faults);
        }
    }

    #[test]
    fn jobs_do_not_change_the_summary() {
        assert_eq!(run_campaign(12, 3, DEFAULT_LOSS_MAX_PPM, 1), run_campaign(12, 3, DEFAULT_LOSS_MAX_PPM, 3));
    }
}
