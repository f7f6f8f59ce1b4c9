//! Per-path sender state (one entry of the path table) and its update
//! rules: RTT estimation, ECN EWMA, AIMD window, weight, RTO and the
//! GOOD/SKIP/SUSPECT/DEAD state machine.
//!
//! Every update is a pure function `entry + event -> new entry` over plain
//! integers in the widths of [`mrnic_proto::tables::path`]: the `telemetry`
//! golden vectors are generated from exactly these functions, and the cycle
//! model and the RTL must reproduce them bit for bit. Time is the 32-bit
//! timestamp counter (units of `timers.ts_unit_ns`), wrapping.

use mrnic_proto::tables::path as t;
use mrnic_proto::Config;
use serde::{Deserialize, Serialize};

use crate::fixed::{bit_len, ewma, recip16, sat, seq_add, ts_reached};

/// Path states, encoded as in `proto::tables::path::STATE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PathState {
    /// Carries new traffic.
    Good = 0,
    /// Congested: skipped by the selector for one srtt after a CE cut.
    Skip = 1,
    /// Timed out repeatedly: re-entropied, carries only probes.
    Suspect = 2,
    /// Failed: probed every `dead_probe_interval`, may come back.
    Dead = 3,
}

impl PathState {
    pub fn name(self) -> &'static str {
        match self {
            PathState::Good => "GOOD",
            PathState::Skip => "SKIP",
            PathState::Suspect => "SUSPECT",
            PathState::Dead => "DEAD",
        }
    }
}

/// `min_rtt` before the first sample: all ones (no RTT measured yet).
pub const MIN_RTT_NONE: u32 = t::MIN_RTT.max() as u32;

/// One entry of the path table.
///
/// The first group of fields is `proto::tables::path`, in its widths. The
/// second group is state the protocol draft needs but the table does not
/// hold yet; `DESIGN.md` proposes adding it (widths given per field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathEntry {
    pub state: PathState,
    pub sport: u16,
    pub gen: u8,
    pub plane: u8,
    /// 24 bits.
    pub next_psn: u32,
    /// 24 bits: every psn below is acknowledged.
    pub cum_acked: u32,
    /// 9 bits: packets of this path's identity sent and not acknowledged.
    pub inflight: u32,
    /// 20 bits, bytes.
    pub cwnd: u32,
    /// 20 bits, timestamp units.
    pub srtt: u32,
    /// 16 bits, timestamp units.
    pub rttvar: u32,
    /// 20 bits, timestamp units; [`MIN_RTT_NONE`] until the first sample.
    pub min_rtt: u32,
    /// Q0.8 fraction of CE-marked packets.
    pub ecn_ewma: u8,
    /// 24 bits: bytes acked since the last additive increase (see
    /// [`aimd`]); it doubles as the utilization read-out, the fraction of
    /// the current window acknowledged.
    pub acked_bytes: u32,
    pub weight: u8,
    /// Smooth-WRR credit, two's complement 16 bits, saturating.
    pub deficit: i16,
    /// 32-bit timestamp: RTO, probe timeout, or next DEAD probe.
    pub rto_deadline: u32,
    /// 4 bits: RTOs in a row (GOOD/SKIP) or failed probes (SUSPECT).
    pub retries: u8,

    // ---- extensions (not in proto::tables::path yet) ----
    /// 32-bit timestamp: end of SKIP, and no second CE cut before it.
    pub hold_until: u32,
    /// 4 bits: clean probes in the current SUSPECT round.
    pub probes_ok: u8,
    /// A PROBE is outstanding.
    pub probe_pending: bool,
    /// 16 bits: tx_ts of the outstanding PROBE (matched against echo_ts).
    pub probe_ts: u16,
    /// 32 bits: transmission counter of this path's identity; every data
    /// packet (first or retransmitted) and every probe takes the next value.
    pub tx_seq: u32,
    /// 32 bits: tx_seq of the PROBE outstanding.
    pub probe_seq: u32,
    /// 32 bits: one past the highest tx_seq acknowledged (RACK-style loss
    /// detection: an unacked packet sent before it is lost).
    pub acked_seq: u32,
}

/// Constants of the per-path update, derived once from the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathParams {
    /// log2 of the MTU (the MTU is a power of 2).
    pub mtu_shift: u32,
    pub mtu: u32,
    pub min_cwnd: u32,
    pub max_cwnd: u32,
    pub init_cwnd: u32,
    pub srtt_shift: u32,
    pub rttvar_shift: u32,
    pub ecn_shift: u32,
    /// Timestamp units.
    pub initial_rtt: u32,
    pub rto_min: u32,
    pub rto_max: u32,
    pub dead_probe_interval: u32,
    pub suspect_after_rtos: u8,
    pub good_after_probes: u8,
    pub dead_after_failures: u8,
    /// Right shift from rate (Q8 bytes per timestamp unit) to weight, so that
    /// the line rate maps into 128..=255 (see [`weight_of`]).
    pub weight_shift: u32,
    /// Packets in flight per path (the SACK window).
    pub window: u32,
}

impl PathParams {
    pub fn from_config(cfg: &Config) -> PathParams {
        let ts = |us: u32| cfg.us_to_ts(us).min(u32::MAX as u64) as u32;
        PathParams {
            mtu_shift: cfg.transport.mtu.trailing_zeros(),
            mtu: cfg.transport.mtu,
            min_cwnd: cfg.cc.min_cwnd_bytes,
            max_cwnd: cfg.cc.max_cwnd_bytes,
            init_cwnd: cfg.cc.init_cwnd_bytes,
            srtt_shift: cfg.cc.srtt_shift,
            rttvar_shift: cfg.cc.rttvar_shift,
            ecn_shift: cfg.cc.ecn_shift,
            initial_rtt: ts(cfg.timers.initial_rtt_us).max(1),
            rto_min: ts(cfg.timers.rto_min_us).max(1),
            rto_max: ts(cfg.timers.rto_max_us).max(1),
            dead_probe_interval: ts(cfg.timers.dead_probe_interval_us).max(1),
            suspect_after_rtos: cfg.timers.suspect_after_rtos as u8,
            good_after_probes: cfg.timers.good_after_probes as u8,
            dead_after_failures: cfg.timers.dead_after_failures as u8,
            weight_shift: weight_shift(line_bytes_per_ts(cfg)),
            window: cfg.transport.window,
        }
    }
}

/// Line rate in bytes per timestamp unit (Gbit/s x ns / 8), at least 1.
pub fn line_bytes_per_ts(cfg: &Config) -> u32 {
    ((cfg.cc.line_rate_gbps as u64 * cfg.timers.ts_unit_ns as u64) / 8).max(1) as u32
}

/// The smallest shift that brings the line rate, in Q8 bytes per timestamp
/// unit, to at most 255: a path whose window sustains line rate gets a weight
/// in 128..=255; faster windows saturate, slower ones scale down linearly.
pub fn weight_shift(line_bytes_per_ts: u32) -> u32 {
    bit_len((line_bytes_per_ts as u64) << 8).saturating_sub(8)
}

/// Weight of a path: its rate `cwnd / srtt` scaled to 8 bits, at least 1.
///
/// Division-free: srtt is normalised to an 8-bit mantissa `m` and exponent
/// `e` (`srtt ~= m << e`), and `cwnd * 256 / srtt` becomes
/// `(cwnd * recip16(m)) >> (8 + e)` with the reciprocal ROM. Computed only
/// when cwnd or srtt changes, never per decision.
pub fn weight_of(cwnd: u32, srtt: u32, weight_shift: u32) -> u8 {
    let s = srtt.max(1) as u64;
    let e = bit_len(s).saturating_sub(8);
    let m = (s >> e) as u32;
    let rate_q8 = (cwnd as u64 * recip16(m) as u64) >> (8 + e);
    (rate_q8 >> weight_shift).clamp(1, 255) as u8
}

/// RTO = max(srtt + 4 rttvar, 2 min_rtt) clamped to [rto_min, rto_max].
/// Before the first sample min_rtt does not count.
pub fn rto(e: &PathEntry, p: &PathParams) -> u32 {
    let base = e.srtt as u64 + 4 * e.rttvar as u64;
    let floor = if e.min_rtt == MIN_RTT_NONE { 0 } else { 2 * e.min_rtt as u64 };
    base.max(floor).clamp(p.rto_min as u64, p.rto_max as u64) as u32
}

impl PathEntry {
    /// A fresh path at connection setup: GOOD, initial window and RTT guess.
    pub fn new(sport: u16, plane: u8, first_psn: u32, p: &PathParams) -> PathEntry {
        let srtt = p.initial_rtt.min(t::SRTT.max() as u32);
        let rttvar = sat(srtt as u64 / 2, &t::RTTVAR);
        PathEntry {
            state: PathState::Good,
            sport,
            gen: 0,
            plane,
            next_psn: first_psn,
            cum_acked: first_psn,
            inflight: 0,
            cwnd: p.init_cwnd,
            srtt,
            rttvar,
            min_rtt: MIN_RTT_NONE,
            ecn_ewma: 0,
            acked_bytes: 0,
            weight: weight_of(p.init_cwnd, srtt, p.weight_shift),
            deficit: 0,
            rto_deadline: 0,
            retries: 0,
            hold_until: 0,
            probes_ok: 0,
            probe_pending: false,
            probe_ts: 0,
            tx_seq: 0,
            probe_seq: 0,
            acked_seq: 0,
        }
    }

    /// The path's RTO timer runs: data outstanding, a probe outstanding, or
    /// a DEAD path waiting for its next probe.
    pub fn timer_armed(&self) -> bool {
        self.inflight > 0 || self.probe_pending || self.state == PathState::Dead
    }

    /// May carry new data (the state part of selector eligibility).
    pub fn usable(&self) -> bool {
        self.state == PathState::Good
    }
}

/// One round of the window update shared by paths and connections: ECN
/// multiplicative decrease at most once per srtt, otherwise additive
/// increase of one MTU per window of acknowledged bytes (the integer form of
/// `cwnd += MTU*MTU/cwnd` per acked MTU, without its division).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aimd {
    pub cwnd: u32,
    pub acked_bytes: u32,
    pub ecn_ewma: u8,
    pub hold_until: u32,
}

/// Applies one acknowledgement to an [`Aimd`] state. `marked` CE marks among
/// `pkts` newly acked packets of `bytes` bytes; returns the new state and
/// whether the window was cut.
#[allow(clippy::too_many_arguments)]
pub fn aimd(
    s: Aimd,
    now: u32,
    pkts: u32,
    bytes: u32,
    marked: u32,
    srtt: u32,
    ecn_shift: u32,
    mtu: u32,
    min: u32,
    max: u32,
) -> (Aimd, bool) {
    let mut s = s;
    if pkts > 0 {
        // Fraction of marked packets in this acknowledgement, Q0.8, through
        // the reciprocal ROM instead of a divider.
        let m = marked.min(pkts).min(256);
        let frac = ((m * recip16(pkts)) >> 8).min(255);
        s.ecn_ewma = ewma(s.ecn_ewma as u32, frac, ecn_shift).min(255) as u8;
    }
    if marked > 0 {
        if !ts_reached(now, s.hold_until) {
            return (s, false);
        }
        // cwnd *= 1 - ewma/2, with ewma in Q0.8: subtract cwnd*ewma >> 9.
        let cut = (s.cwnd as u64 * s.ecn_ewma as u64) >> 9;
        s.cwnd = (s.cwnd as u64 - cut).max(min as u64) as u32;
        s.hold_until = now.wrapping_add(srtt.max(1));
        s.acked_bytes = 0;
        return (s, true);
    }
    s.acked_bytes = (s.acked_bytes as u64 + bytes as u64).min(t::ACKED_BYTES.max()) as u32;
    if s.acked_bytes >= s.cwnd {
        s.acked_bytes -= s.cwnd;
        s.cwnd = (s.cwnd as u64 + mtu as u64).min(max as u64) as u32;
    }
    (s, false)
}

/// What a SACK did to one path, as the telemetry block sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckEvent {
    /// 32-bit timestamp of the arrival.
    pub now: u32,
    /// New cumulative point (24 bits).
    pub cum_acked: u32,
    /// Packets newly acknowledged by this SACK that count in `inflight`
    /// (a packet in RNR back-off does not: `on_rnr`).
    pub acked_pkts: u32,
    /// Payload bytes newly acknowledged by this SACK.
    pub acked_bytes: u32,
    /// CE marks reported (the SACK's ecn_cnt).
    pub ecn_cnt: u32,
    /// RTT sample in timestamp units, when the SACK's echo_ts belongs to a
    /// first transmission (or a probe) of this path.
    pub rtt: Option<u32>,
    /// One past the highest tx_seq newly acknowledged.
    pub acked_seq: u32,
}

/// Telemetry update on a SACK (RFC 6298 estimator, DCTCP-style EWMA, AIMD).
pub fn on_ack(e: &PathEntry, ev: &AckEvent, p: &PathParams) -> PathEntry {
    let mut n = *e;
    n.cum_acked = ev.cum_acked;
    n.inflight = e.inflight.saturating_sub(ev.acked_pkts);
    if (ev.acked_seq.wrapping_sub(n.acked_seq) as i32) > 0 {
        n.acked_seq = ev.acked_seq;
    }
    if let Some(r) = ev.rtt {
        let r = r.min(t::SRTT.max() as u32);
        if e.min_rtt == MIN_RTT_NONE {
            n.srtt = r;
            n.rttvar = sat(r as u64 / 2, &t::RTTVAR);
            n.min_rtt = r.min(MIN_RTT_NONE - 1);
        } else {
            let err = (r as i64 - e.srtt as i64).unsigned_abs() as u32;
            n.srtt = sat(ewma(e.srtt, r, p.srtt_shift) as u64, &t::SRTT);
            n.rttvar = sat(ewma(e.rttvar, err, p.rttvar_shift) as u64, &t::RTTVAR);
            n.min_rtt = e.min_rtt.min(r);
        }
    }
    let s = Aimd { cwnd: e.cwnd, acked_bytes: e.acked_bytes, ecn_ewma: e.ecn_ewma, hold_until: e.hold_until };
    let (s, cut) =
        aimd(s, ev.now, ev.acked_pkts, ev.acked_bytes, ev.ecn_cnt, n.srtt, p.ecn_shift, p.mtu, p.min_cwnd, p.max_cwnd);
    n.cwnd = s.cwnd;
    n.acked_bytes = s.acked_bytes;
    n.ecn_ewma = s.ecn_ewma;
    n.hold_until = s.hold_until;
    if cut && n.state == PathState::Good {
        n.state = PathState::Skip;
    }
    if ev.acked_pkts > 0 {
        if matches!(n.state, PathState::Good | PathState::Skip) {
            n.retries = 0;
        }
        // Progress restarts the RTO.
        n.rto_deadline = ev.now.wrapping_add(rto(&n, p));
    }
    n.weight = weight_of(n.cwnd, n.srtt, p.weight_shift);
    n
}

/// A SACK applied with CE steering (`NicConfig::ce_steering`): as
/// `on_ack`, but a CE cut does not pause the path. The cut window and
/// weight already move load off the marked path; pausing it too (SKIP for
/// an srtt) paused every path through a hot switch port at once: that port
/// drained, the paths came back together and refilled it (leaf-spine at
/// 0% loss: uplinks 85% busy with 1 MB queues and tail drops).
pub fn on_ack_steered(e: &PathEntry, ev: &AckEvent, p: &PathParams) -> PathEntry {
    let mut n = on_ack(e, ev, p);
    if n.state == PathState::Skip {
        n.state = PathState::Good;
    }
    n
}

/// A new data packet leaves on this path's identity: it takes `next_psn`.
pub fn on_send(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = *e;
    n.next_psn = seq_add(e.next_psn, 1);
    n.inflight = (e.inflight + 1).min(t::INFLIGHT.max() as u32);
    n.tx_seq = e.tx_seq.wrapping_add(1);
    if !e.timer_armed() {
        n.rto_deadline = now.wrapping_add(rto(e, p));
    }
    n
}

/// A packet of this identity is retransmitted (on this or another path):
/// it takes a new tx_seq; the RTO starts if it was not running.
pub fn on_retransmit(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = *e;
    n.tx_seq = e.tx_seq.wrapping_add(1);
    if !e.timer_armed() {
        n.rto_deadline = now.wrapping_add(rto(e, p));
    }
    n
}

/// A PROBE leaves: it takes a tx_seq and its timestamp is remembered; its
/// timeout is the RTO (the DEAD interval for a DEAD path).
pub fn on_probe_sent(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = *e;
    n.probe_pending = true;
    n.probe_ts = now as u16;
    n.probe_seq = e.tx_seq;
    n.tx_seq = e.tx_seq.wrapping_add(1);
    let wait = if e.state == PathState::Dead { p.dead_probe_interval } else { rto(e, p) };
    n.rto_deadline = now.wrapping_add(wait);
    n
}

/// What the transmit side must do after a timeout or a probe reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PathAction {
    /// Send a PROBE on this path now.
    pub probe: bool,
    /// Every unacknowledged packet of this path is presumed lost: queue all
    /// for retransmission (on other GOOD paths while this one is not GOOD).
    pub all_lost: bool,
    /// The path just entered DEAD.
    pub died: bool,
    /// The path just came back to GOOD from SUSPECT.
    pub recovered: bool,
}

/// Moves to a new source port and bumps the generation (re-entropy).
fn re_entropy(n: &mut PathEntry, fresh_sport: u16) {
    n.sport = fresh_sport;
    n.gen = n.gen.wrapping_add(1);
}

/// The path's timer expired (`rto_deadline` reached). `fresh_sport` is the
/// source port to move to if this timeout re-entropies the path.
pub fn on_timeout(e: &PathEntry, now: u32, fresh_sport: u16, p: &PathParams) -> (PathEntry, PathAction) {
    let mut n = *e;
    let mut a = PathAction::default();
    n.probe_pending = false;
    match e.state {
        PathState::Good | PathState::Skip => {
            n.retries = (e.retries + 1).min(t::RETRIES.max() as u8);
            if n.retries >= p.suspect_after_rtos {
                n.state = PathState::Suspect;
                re_entropy(&mut n, fresh_sport);
                n.retries = 0;
                n.probes_ok = 0;
                n.deficit = 0;
                a.all_lost = true;
            }
            a.probe = true;
        }
        PathState::Suspect => {
            // Packets of this path rerouted over others may be lost too, and
            // nothing else would notice: every timeout of a path that is not
            // GOOD sends its unacknowledged packets again.
            a.all_lost = true;
            n.retries = (e.retries + 1).min(t::RETRIES.max() as u8);
            n.probes_ok = 0;
            if n.retries >= p.dead_after_failures {
                n.state = PathState::Dead;
                n.retries = 0;
                a.died = true;
                a.all_lost = true;
                n.rto_deadline = now.wrapping_add(p.dead_probe_interval);
            } else {
                re_entropy(&mut n, fresh_sport);
                a.probe = true;
            }
        }
        PathState::Dead => {
            a.all_lost = true;
            re_entropy(&mut n, fresh_sport);
            a.probe = true;
        }
    }
    // A timeout that asks for a PROBE restarts the timer: the sender holds
    // the path's RTO while the PROBE waits to leave, and its departure
    // sets the deadline again (`on_probe_sent`), so the value is never
    // seen here; a timer block that does not know of the wait (the
    // hardware's scanner) would otherwise fire again and again.
    if a.probe || !n.timer_armed() {
        n.rto_deadline = now.wrapping_add(rto(&n, p));
    }
    (n, a)
}

/// The SACK answering the outstanding PROBE arrived.
pub fn on_probe_reply(e: &PathEntry, now: u32, p: &PathParams) -> (PathEntry, PathAction) {
    let mut n = *e;
    let mut a = PathAction::default();
    n.probe_pending = false;
    match e.state {
        PathState::Good | PathState::Skip => {}
        PathState::Suspect | PathState::Dead => {
            n.probes_ok = if e.state == PathState::Dead { 1 } else { (e.probes_ok + 1).min(15) };
            n.retries = 0;
            n.state = PathState::Suspect;
            if n.probes_ok >= p.good_after_probes {
                n.state = PathState::Good;
                n.probes_ok = 0;
                n.deficit = 0;
                a.recovered = true;
            } else {
                a.probe = true;
            }
        }
    }
    if n.timer_armed() && !a.probe {
        n.rto_deadline = now.wrapping_add(rto(&n, p));
    }
    (n, a)
}

/// A valid NACK for this path arrived: the path delivers, so the timeout
/// run ends (the NACKed packet is handled by the transmit side).
pub fn on_nack(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = *e;
    if matches!(n.state, PathState::Good | PathState::Skip) {
        n.retries = 0;
        n.rto_deadline = now.wrapping_add(rto(&n, p));
    }
    n
}

/// An RNR NACK put one of the path's packets into back-off: a NACK (the
/// path answers), and the packet leaves `inflight`. It is not in the
/// network but waiting at the sender, so it must not hold the path's
/// timer: with the back-off at least the RTO, the path timed out when the
/// back-off ended and the packet was rerouted as if the path had failed.
pub fn on_rnr(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = on_nack(e, now, p);
    n.inflight = e.inflight.saturating_sub(1);
    n
}

/// The packet an RNR NACK held is sent again: a retransmission that
/// counts in `inflight` again (`on_rnr` took it out).
pub fn on_resume(e: &PathEntry, now: u32, p: &PathParams) -> PathEntry {
    let mut n = on_retransmit(e, now, p);
    n.inflight = (e.inflight + 1).min(t::INFLIGHT.max() as u32);
    n
}

/// Time passes: a SKIP path whose hold has expired is GOOD again.
pub fn on_tick(e: &PathEntry, now: u32) -> PathEntry {
    let mut n = *e;
    if n.state == PathState::Skip && ts_reached(now, n.hold_until) {
        n.state = PathState::Good;
    }
    n
}

/// Every event the telemetry block takes, for vectors and the cycle model:
/// one entry point, `entry + event -> (new entry, action)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PathEvent {
    /// A new data packet took `next_psn`.
    Send,
    /// A packet of this identity was sent again.
    Retransmit,
    /// A PROBE left.
    ProbeSent,
    /// A SACK was applied.
    Ack(AckEvent),
    /// A SACK was applied with CE steering (`on_ack_steered`).
    AckSteered(AckEvent),
    /// The SACK answering the PROBE arrived.
    ProbeReply,
    /// A valid NACK arrived.
    Nack,
    /// An RNR NACK put a packet of this path into back-off.
    Rnr,
    /// The packet an RNR NACK held was sent again.
    Resume,
    /// `rto_deadline` was reached; the fresh port is used if re-entropied.
    Timeout { fresh_sport: u16 },
    /// Time passed (SKIP expiry).
    Tick,
}

/// Applies one event at 32-bit timestamp `now`.
pub fn apply(e: &PathEntry, now: u32, ev: &PathEvent, p: &PathParams) -> (PathEntry, PathAction) {
    let none = PathAction::default();
    match *ev {
        PathEvent::Send => (on_send(e, now, p), none),
        PathEvent::Retransmit => (on_retransmit(e, now, p), none),
        PathEvent::ProbeSent => (on_probe_sent(e, now, p), none),
        PathEvent::Ack(a) => (on_ack(e, &AckEvent { now, ..a }, p), none),
        PathEvent::AckSteered(a) => (on_ack_steered(e, &AckEvent { now, ..a }, p), none),
        PathEvent::ProbeReply => on_probe_reply(e, now, p),
        PathEvent::Nack => (on_nack(e, now, p), none),
        PathEvent::Rnr => (on_rnr(e, now, p), none),
        PathEvent::Resume => (on_resume(e, now, p), none),
        PathEvent::Timeout { fresh_sport } => on_timeout(e, now, fresh_sport, p),
        PathEvent::Tick => (on_tick(e, now), none),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PathParams {
        PathParams::from_config(&Config::builtin("small").unwrap())
    }

    #[test]
    fn weight_is_proportional_to_rate_and_bounded() {
        let p = params();
        // 10 Gbit/s, 64 ns units: 80 bytes per unit, Q8 20480, shift 7.
        assert_eq!(p.weight_shift, 7);
        let line = weight_of(80 * 1000, 1000, p.weight_shift);
        assert!((128..=255).contains(&line), "{line}");
        let half = weight_of(40 * 1000, 1000, p.weight_shift);
        assert!(half.abs_diff(line / 2) <= 1);
        assert_eq!(weight_of(p.max_cwnd, 1, p.weight_shift), 255);
        assert_eq!(weight_of(1024, 1_000_000, p.weight_shift), 1);
    }

    #[test]
    fn first_rtt_sample_seeds_the_estimator() {
        let p = params();
        let e = PathEntry::new(1000, 0, 0, &p);
        let e = on_send(&e, 0, &p);
        let ev = AckEvent {
            now: 200,
            cum_acked: 1,
            acked_pkts: 1,
            acked_bytes: 1024,
            ecn_cnt: 0,
            rtt: Some(200),
            acked_seq: 1,
        };
        let n = on_ack(&e, &ev, &p);
        assert_eq!((n.srtt, n.rttvar, n.min_rtt, n.inflight), (200, 100, 200, 0));
        let ev2 = AckEvent { rtt: Some(280), ..ev };
        let m = on_ack(&n, &ev2, &p);
        assert_eq!(m.srtt, 210);
        assert_eq!(m.rttvar, 95);
        assert_eq!(m.min_rtt, 200);
    }

    #[test]
    fn ce_cuts_once_per_srtt_and_skips() {
        let p = params();
        let mut e = PathEntry::new(1000, 0, 0, &p);
        e.ecn_ewma = 128;
        let ev =
            AckEvent { now: 10, cum_acked: 0, acked_pkts: 4, acked_bytes: 4096, ecn_cnt: 4, rtt: None, acked_seq: 0 };
        let n = on_ack(&e, &ev, &p);
        assert_eq!(n.state, PathState::Skip);
        // ewma moved from 128 toward 255 by 1/16, then cwnd * (1 - ewma/2).
        assert_eq!(n.ecn_ewma, 135);
        assert_eq!(n.cwnd, 65536 - ((65536 * 135) >> 9));
        let m = on_ack(&n, &AckEvent { now: 11, ..ev }, &p);
        assert_eq!(m.cwnd, n.cwnd, "no second cut within one srtt");
        assert_eq!(on_tick(&m, n.hold_until).state, PathState::Good);
    }

    #[test]
    fn additive_increase_is_one_mtu_per_window() {
        let p = params();
        let mut e = PathEntry::new(1000, 0, 0, &p);
        e.cwnd = 8192;
        for now in 1..=8 {
            e = on_ack(
                &e,
                &AckEvent { now, cum_acked: 0, acked_pkts: 1, acked_bytes: 1024, ecn_cnt: 0, rtt: None, acked_seq: 0 },
                &p,
            );
        }
        assert_eq!((e.cwnd, e.acked_bytes), (8192 + 1024, 0));
    }

    #[test]
    fn timeouts_walk_good_suspect_dead_and_probes_bring_it_back() {
        let p = params();
        let mut e = PathEntry::new(1000, 0, 0, &p);
        let mut a = PathAction::default();
        for i in 0..p.suspect_after_rtos {
            (e, a) = on_timeout(&e, 100 * i as u32, 2000 + i as u16, &p);
            assert!(a.probe);
        }
        assert_eq!((e.state, e.gen, e.sport), (PathState::Suspect, 1, 2002));
        assert!(a.all_lost);
        for i in 0..p.dead_after_failures {
            (e, a) = on_timeout(&e, 1000 + i as u32, 3000, &p);
        }
        assert_eq!(e.state, PathState::Dead);
        assert!(a.died && !a.probe);
        (e, a) = on_timeout(&e, 5000, 4000, &p);
        assert!(a.probe);
        e = on_probe_sent(&e, 5000, &p);
        (e, a) = on_probe_reply(&e, 5010, &p);
        assert_eq!(e.state, PathState::Suspect);
        assert!(a.probe);
        e = on_probe_sent(&e, 5010, &p);
        (e, a) = on_probe_reply(&e, 5020, &p);
        assert_eq!(e.state, PathState::Good);
        assert!(a.recovered);
    }

    #[test]
    fn rto_uses_min_rtt_floor_and_clamps() {
        let p = params();
        let mut e = PathEntry::new(1000, 0, 0, &p);
        e.srtt = 10;
        e.rttvar = 1;
        assert_eq!(rto(&e, &p), p.rto_min);
        e.min_rtt = 2000;
        assert_eq!(rto(&e, &p), 4000.min(p.rto_max));
        e.srtt = 100_000;
        assert_eq!(rto(&e, &p), p.rto_max);
    }
}
