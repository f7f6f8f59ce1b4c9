//! What a run measures: goodput per host, collective completion time, flow
//! completion time percentiles, retransmissions, drops, per-path and
//! per-plane utilization over time, and the conservation ledger.

use serde::{Deserialize, Serialize};

use crate::host::TransportStats;
use crate::sim::{Drops, Sim};
use crate::topo::LinkKind;
use crate::Time;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub n: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `v` (sorted in place).
    pub fn of(v: &mut [f64]) -> Percentiles {
        if v.is_empty() {
            return Percentiles::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Percentiles {
            n: v.len() as u64,
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: v[v.len() - 1],
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(v: &[f64]) -> Summary {
        if v.is_empty() {
            return Summary::default();
        }
        Summary {
            min: v.iter().cloned().fold(f64::INFINITY, f64::min),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            max: v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Every byte posted ends in exactly one of received, failed (reported
/// lost by the transport) or incomplete (the run ended first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub msgs_posted: u64,
    pub msgs_received: u64,
    pub msgs_failed: u64,
    pub msgs_incomplete: u64,
    pub bytes_posted: u64,
    pub bytes_received: u64,
    pub bytes_failed: u64,
    pub bytes_incomplete: u64,
    /// Completions that matched no outstanding message (a duplicate delivery).
    pub unmatched_completions: u64,
    /// Completions whose byte count differed from the message's.
    pub wrong_size_completions: u64,
}

impl Ledger {
    /// Every byte accounted for once, no duplicate and no short delivery.
    pub fn balanced(&self) -> bool {
        self.bytes_posted == self.bytes_received + self.bytes_failed + self.bytes_incomplete
            && self.msgs_posted == self.msgs_received + self.msgs_failed + self.msgs_incomplete
            && self.unmatched_completions == 0
            && self.wrong_size_completions == 0
    }
}

/// The deterministic result of a run: the same seed gives an equal value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub transport: String,
    pub seed: u64,
    pub topology: String,
    pub workload: String,
    pub loss: f64,
    /// Simulated time at the end of the run.
    pub end_us: f64,
    pub finished: bool,
    pub ledger: Ledger,
    /// Goodput of each receiving host over the measurement window.
    pub goodput_gbps: Vec<f64>,
    pub goodput: Summary,
    pub window_us: (f64, f64),
    /// Time the last message was received (the collective's completion).
    pub completion_us: Option<f64>,
    /// Message (flow) completion times, post to full receipt.
    pub fct_us: Percentiles,
    pub transport_stats: TransportStats,
    pub drops: Drops,
    pub ce_marks: u64,
    /// Utilization of each ECMP choice (switch uplinks) over the run.
    pub path_util: Summary,
    pub bucket_us: f64,
    /// Host egress utilization per plane, one row per time bucket.
    pub plane_util: Vec<Vec<f64>>,
    /// Data payload arriving at hosts, all hosts together, per bucket (Gbit/s).
    pub rx_gbps: Vec<f64>,
    pub events: u64,
}

/// Wall-clock facts of a run (not part of the deterministic result).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Perf {
    pub wall_s: f64,
    pub events_per_s: f64,
}

fn us(t: Time) -> f64 {
    t as f64 / 1e6
}

/// Reads a finished simulation. `window` is the goodput measurement window;
/// `None` takes from 0 to the last receipt.
pub fn collect(sim: &Sim, window: Option<(Time, Time)>) -> RunResult {
    let wl = &sim.wl;
    let mut led = Ledger {
        unmatched_completions: wl.unmatched_completions,
        wrong_size_completions: wl.wrong_size_completions,
        ..Ledger::default()
    };
    let mut fct = Vec::new();
    let mut last_rx: Option<Time> = None;
    for m in &wl.msgs {
        led.msgs_posted += 1;
        led.bytes_posted += m.bytes;
        if let Some(t) = m.recv_done {
            led.msgs_received += 1;
            led.bytes_received += m.bytes;
            fct.push(us(t - m.posted));
            last_rx = Some(last_rx.map_or(t, |x| x.max(t)));
        } else if m.failed {
            led.msgs_failed += 1;
            led.bytes_failed += m.bytes;
        } else {
            led.msgs_incomplete += 1;
            led.bytes_incomplete += m.bytes;
        }
    }
    let (w0, w1) = window.unwrap_or((0, last_rx.unwrap_or(sim.now).max(1)));
    let hosts = sim.topo.hosts as usize;
    let mut rx_bytes = vec![0u64; hosts];
    let mut is_rx = vec![false; hosts];
    for c in &wl.conns {
        is_rx[c.dst as usize] = true;
    }
    for m in &wl.msgs {
        if let Some(t) = m.recv_done {
            if t > w0 && t <= w1 {
                rx_bytes[wl.conns[m.conn as usize].dst as usize] += m.bytes;
            }
        }
    }
    let span = (w1 - w0).max(1) as f64;
    let goodput_gbps: Vec<f64> =
        (0..hosts).filter(|&h| is_rx[h]).map(|h| rx_bytes[h] as f64 * 8.0 * 1000.0 / span).collect();
    let end = sim.now.max(1) as f64;
    let path: Vec<f64> = sim
        .links
        .iter()
        .filter(|l| l.kind == LinkKind::Up)
        .map(|l| l.tx_bytes as f64 * 8.0 * 1000.0 / end / l.gbps)
        .collect();
    let bucket = sim.cfg.bucket_ns.max(1) as f64 * 1000.0;
    let port_gbps = sim.cfg.nic.gbps / sim.topo.planes as f64;
    let plane_util = sim
        .plane_tx
        .iter()
        .map(|row| row.iter().map(|&b| b as f64 * 8.0 * 1000.0 / bucket / (port_gbps * hosts as f64)).collect())
        .collect();
    let rx_gbps = sim.rx_payload.iter().map(|&b| b as f64 * 8.0 * 1000.0 / bucket).collect();
    let mut stats = TransportStats::default();
    for n in &sim.nics {
        stats += n.stats();
    }
    RunResult {
        transport: sim.nics.first().map_or("none", |n| n.name()).to_string(),
        seed: sim.cfg.seed,
        topology: sim.cfg.topo.describe(),
        workload: wl.pattern.describe(),
        loss: sim.cfg.loss,
        end_us: us(sim.now),
        finished: wl.finished(),
        ledger: led,
        goodput: Summary::of(&goodput_gbps),
        goodput_gbps,
        window_us: (us(w0), us(w1)),
        completion_us: if wl.finished() { last_rx.map(us) } else { None },
        fct_us: Percentiles::of(&mut fct),
        transport_stats: stats,
        drops: sim.drops,
        ce_marks: sim.ce_marks(),
        path_util: Summary::of(&path),
        bucket_us: bucket / 1e6,
        plane_util,
        rx_gbps,
        events: sim.events,
    }
}
