//! `path_telemetry`: the per-(connection, path) sender state table, its
//! read-modify-write update on SACK, NACK, send, probe and timeout events,
//! the RTO scanner, and the path state machine with re-entropy.
//!
//! # Function
//! The table holds one [`Entry`] per (connection, path): the fields of
//! `proto::tables::path::TABLE` followed by the seven extension fields the
//! reference's `PathEntry` needs and the table does not hold yet
//! ([`EXT_FIELDS`]; `reference/DESIGN.md` proposes them), packed LSB-first
//! in that order ([`entry_fields`], [`pack`], [`unpack`]): 254 + 149 = 403
//! bits per entry.
//!
//! Every event is one application of [`execute`], which is the reference's
//! `path::apply` bit for bit (the tests check it against the reference on
//! random entries and events):
//!
//! | kind | code | reference | event fields used |
//! |---|---|---|---|
//! | OPEN | 0 | `PathEntry::new(sport, plane, first_psn)` | `sport`, `plane`, `cum_acked` (first psn) |
//! | SEND | 1 | `on_send` | `now` |
//! | RETX | 2 | `on_retransmit` | `now` |
//! | PROBE_SENT | 3 | `on_probe_sent` | `now` |
//! | ACK | 4 | `on_ack` | `now`, `cum_acked`, `acked_pkts`, `acked_bytes`, `ecn_cnt`, `rtt_valid`/`rtt`, `acked_seq` |
//! | PROBE_REPLY | 5 | `on_probe_reply` | `now` |
//! | NACK | 6 | `on_nack` | `now` |
//! | TIMEOUT | 7 | `on_timeout(fresh_sport = sport)` | `now`, `sport` |
//! | TICK | 8 | `on_tick` | `now` |
//! | TIMER | 9 | the per-path body of the reference's `TxConn::on_timer`: `on_tick`, then `on_timeout` with the block's fresh port if the timer is armed and `rto_deadline` is reached | `now` |
//! | SILENT | 10 | the reference sender's `silent_losses`: `on_timeout` with the block's fresh port if the path is GOOD (`usable`), else nothing | `now` |
//! | RNR | 11 | `on_rnr`: NACK, and the packet RNR holds leaves `inflight` | `now` |
//! | RESUME | 12 | `on_resume`: RETX, and the packet counts in `inflight` again | `now` |
//! | ACK_STEER | 13 | `on_ack_steered`: ACK with CE steering, a CE cut leaves the path GOOD | as ACK |
//! | 14, 15 | | no operation: the entry is written back unchanged, nothing is emitted | |
//!
//! TIMER is what the RTO scanner injects (with `now = ts_now`); the other
//! kinds come from outside on `s_evt_*`. SILENT is tx_engine's: a loss it
//! found on a path that has not answered since the packet left counts as
//! a timeout of that path, so a path that went silent turns SUSPECT within
//! a few packet times instead of after three RTOs.
//!
//! # Re-entropy: the fresh source port
//! A TIMER that fires takes [`fresh_sport`]`(lfsr, old)`: `0xC000 |
//! lfsr[13:0]` (the ephemeral range 49152..=65535), with bit 0 flipped if
//! that equals the old port; the 16-bit Galois LFSR ([`lfsr_step`], taps
//! `0xB400`, maximal length, seed [`LFSR_SEED`] at reset) steps once per
//! fired TIMER, so the sequence does not depend on cycle timing. The
//! reference NIC (`Ctx::fresh_sport`) follows the same rule from the same
//! seed, so end-to-end runs pick the same ports. An external TIMEOUT takes
//! the port from `s_evt_sport` (the telemetry vectors replay the
//! reference's `on_timeout` with the port it was given).
//!
//! # Outputs
//! - `m_upd_*`, for the selector and the transmit side: one record per
//!   event that changed the path's state or weight, zeroed its deficit
//!   (`clr`: entered SUSPECT from GOOD/SKIP, recovered to GOOD, or OPEN), or
//!   asked for an action (`act`: bit 0 probe, 1 all_lost, 2 died,
//!   3 recovered: the reference's `PathAction`).
//! - `m_rto_*`: one record per timeout applied (TIMEOUT, or a TIMER that
//!   fired): the path's new state, sport, gen and the action.
//! - `m_rd_*`: the answer to `s_rd_*`: `{state, inflight, cwnd, weight}` of
//!   all `PATHS` paths of one connection, from a view memory per path
//!   (written with every update), so one read per cycle is sustained and
//!   never competes with updates. A read reflects every update executed
//!   before the cycle of its handshake (no forwarding on this port).
//!
//! # Timing (read latency `L` = `hardware.table_read_latency`, 1 or 2)
//! ```text
//! cycle a      event handshake (s_evt, or a TIMER from the scanner);
//!              table read at {conn, path}
//! cycle a+L    execute: entry (forwarded or from memory) + event -> new
//!              entry, written at the edge ending this cycle with the view
//!              and timer memories; records pushed into the m_upd / m_rto FIFOs
//! cycle a+L+1  m_upd_valid / m_rto_valid
//! ```
//! Update latency `L + 1` cycles (2 in `small`, 3 in `default`); one event
//! per cycle sustained, while the output FIFOs drain. The read port has the
//! same latency and also sustains one read per cycle.
//!
//! # Forwarding (back-to-back updates of one entry)
//! The read of cycle `a` cannot see the writes of the `L` executes in cycles
//! `a..a+L-1`. The block keeps those `L` writes (address and entry) in
//! registers, and the execute of cycle `a+L` takes the newest one whose
//! address matches, else the memory's data. So events to one entry can
//! follow each other every cycle: none stalls and none is lost.
//!
//! # RTO scanner
//! A timer memory holds, per entry, `{armed, rto_deadline, skip,
//! hold_until}` (66 bits, written with every update). The scanner reads one
//! address per cycle, `0, 1, ..., N-1, 0, ...` (`N = CONNS * PATHS`, address
//! `{conn, path}`); `L` cycles after a read it checks the data against
//! `ts_now`: `armed && ts_reached(ts_now, rto_deadline)` or
//! `skip && ts_reached(ts_now, hold_until)`. A hit becomes a pending TIMER
//! event, which has priority over `s_evt` (`s_evt_ready` is low while one
//! is pending); the scan restarts at the hit's next address (reads in flight
//! are dropped). The TIMER re-checks the current (forwarded) entry, so a
//! stale timer word only costs a no-op event, never a wrong timeout.
//!
//! Rate: one table entry per cycle, a full sweep in `N + H * (L + 1)` cycles
//! when `H` entries are due and the outputs are ready. Bound: an entry that
//! is due from cycle `t` on (`ts_now` reached its deadline, or SKIP hold, by
//! then) and was last written in cycle `w` gets its TIMER injected by cycle
//! `max(t, w + 1) + N + H * (L + 1) + L + 1`, where `H` is the number of hits
//! in between, plus any cycles the outputs hold the FIFOs full.
//!
//! # Backpressure
//! `m_upd`, `m_rto` and `m_rd` are the heads of output FIFOs of
//! [`PathTelemetryParams::fifo_depth`] entries (the power of 2 at or above
//! `L + 2`); they hold still until their handshake. An event (external or
//! TIMER) is accepted only when both update FIFOs have room for every event
//! in the pipeline plus this one; a read only when the read FIFO has room.
//! All `ready` outputs depend on registers only.
//!
//! # Reset and table init
//! `rst` (synchronous, active high) empties the pipelines and FIFOs, resets
//! the LFSR to [`LFSR_SEED`] and starts a clear sweep: one table address per
//! cycle (`0..N`) is zeroed (with its timer word and view slot), `s_evt_ready`
//! and `s_rd_ready` low, the scanner idle. A zero entry is inert (GOOD,
//! nothing in flight, timer not armed); OPEN sets a path up.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::{Config, MAX_PATHS_PER_CONN};
use mrnic_proto::tables::path as pt;
use mrnic_proto::tables::TableField;

use crate::block::{Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "path_telemetry";

/// Path states, as in `proto::tables::path::STATE`.
pub const GOOD: u8 = 0;
pub const SKIP: u8 = 1;
pub const SUSPECT: u8 = 2;
pub const DEAD: u8 = 3;

/// Event kinds (`s_evt_kind`, 4 bits).
pub mod kind {
    pub const OPEN: u8 = 0;
    pub const SEND: u8 = 1;
    pub const RETX: u8 = 2;
    pub const PROBE_SENT: u8 = 3;
    pub const ACK: u8 = 4;
    pub const PROBE_REPLY: u8 = 5;
    pub const NACK: u8 = 6;
    pub const TIMEOUT: u8 = 7;
    pub const TICK: u8 = 8;
    pub const TIMER: u8 = 9;
    /// A packet of the path was lost while the path acknowledged nothing
    /// since it left (tx_engine's loss detection): one timeout of the path
    /// if it is GOOD, with the block's fresh port.
    pub const SILENT: u8 = 10;
    /// An RNR NACK put a packet of the path into back-off: a NACK, and the
    /// packet leaves `inflight`, so it does not hold the path's timer.
    pub const RNR: u8 = 11;
    /// The packet RNR held is sent again: a RETX that counts it in
    /// `inflight` again.
    pub const RESUME: u8 = 12;
    /// A SACK applied with CE steering (the reference's default): an ACK
    /// whose CE cut does not pause the path (it stays GOOD, or a SKIP one
    /// is GOOD again); the cut window and weight move load off it.
    pub const ACK_STEER: u8 = 13;
}

/// Action bits of `m_upd_act` / `m_rto_act` (the reference's `PathAction`).
pub mod act {
    pub const PROBE: u8 = 1;
    pub const ALL_LOST: u8 = 2;
    pub const DIED: u8 = 4;
    pub const RECOVERED: u8 = 8;
}

/// Event field widths.
pub const KIND_BITS: u32 = 4;
pub const TS_BITS: u32 = 32;
pub const PKTS_BITS: u32 = pt::INFLIGHT.width;
pub const BYTES_BITS: u32 = pt::ACKED_BYTES.width;
pub const ECN_BITS: u32 = 8;
pub const RTT_BITS: u32 = 16;
pub const ACT_BITS: u32 = 4;

/// `min_rtt` before the first sample (all ones).
pub const MIN_RTT_NONE: u32 = pt::MIN_RTT.max() as u32;

/// LFSR value after reset.
pub const LFSR_SEED: u16 = 0xACE1;
/// Galois taps of the fresh-port LFSR (x^16 + x^14 + x^13 + x^11 + 1).
pub const LFSR_TAPS: u16 = 0xB400;

const fn tf(name: &'static str, width: u32, meaning: &'static str) -> TableField {
    TableField { name, width, meaning }
}

/// Entry fields beyond `proto::tables::path::TABLE`, packed after it.
pub const EXT_FIELDS: [TableField; 7] = [
    tf("hold_until", 32, "end of SKIP; no second CE cut before it"),
    tf("probes_ok", 4, "clean probes in the current SUSPECT round"),
    tf("probe_pending", 1, "a PROBE is outstanding"),
    tf("probe_ts", 16, "tx_ts of the outstanding PROBE"),
    tf("tx_seq", 32, "transmission counter of the path identity"),
    tf("probe_seq", 32, "tx_seq taken by the outstanding PROBE"),
    tf("acked_seq", 32, "one past the highest tx_seq acknowledged"),
];

/// Every field of a packed entry, LSB first.
pub fn entry_fields() -> Vec<TableField> {
    pt::TABLE.fields.iter().copied().chain(EXT_FIELDS).collect()
}

/// Bits of a packed entry.
pub fn entry_bits() -> u32 {
    entry_fields().iter().map(|f| f.width).sum()
}

/// `(lsb, width)` of a field of the packed entry.
pub fn field_pos(name: &str) -> (u32, u32) {
    let mut at = 0;
    for f in entry_fields() {
        if f.name == name {
            return (at, f.width);
        }
        at += f.width;
    }
    panic!("no entry field {name}")
}

/// One table entry, fields in their table widths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Entry {
    pub state: u8,
    pub sport: u16,
    pub gen: u8,
    pub plane: u8,
    pub next_psn: u32,
    pub cum_acked: u32,
    pub inflight: u32,
    pub cwnd: u32,
    pub srtt: u32,
    pub rttvar: u32,
    pub min_rtt: u32,
    pub ecn_ewma: u8,
    pub acked_bytes: u32,
    pub weight: u8,
    pub deficit: u16,
    pub rto_deadline: u32,
    pub retries: u8,
    pub hold_until: u32,
    pub probes_ok: u8,
    pub probe_pending: bool,
    pub probe_ts: u16,
    pub tx_seq: u32,
    pub probe_seq: u32,
    pub acked_seq: u32,
}

impl Entry {
    fn values(&self) -> [u64; 24] {
        [
            self.state as u64,
            self.sport as u64,
            self.gen as u64,
            self.plane as u64,
            self.next_psn as u64,
            self.cum_acked as u64,
            self.inflight as u64,
            self.cwnd as u64,
            self.srtt as u64,
            self.rttvar as u64,
            self.min_rtt as u64,
            self.ecn_ewma as u64,
            self.acked_bytes as u64,
            self.weight as u64,
            self.deficit as u64,
            self.rto_deadline as u64,
            self.retries as u64,
            self.hold_until as u64,
            self.probes_ok as u64,
            self.probe_pending as u64,
            self.probe_ts as u64,
            self.tx_seq as u64,
            self.probe_seq as u64,
            self.acked_seq as u64,
        ]
    }

    /// The path's timer runs (the reference's `timer_armed`).
    pub fn timer_armed(&self) -> bool {
        self.inflight > 0 || self.probe_pending || self.state == DEAD
    }
}

/// The entry packed LSB-first per [`entry_fields`].
pub fn pack(e: &Entry) -> Bits {
    let width = entry_bits();
    let mut b = Bits::zero(width);
    let mut at = 0u32;
    for (f, v) in entry_fields().iter().zip(e.values()) {
        debug_assert!(v <= f.max(), "{} = {v} exceeds {} bits", f.name, f.width);
        for i in 0..f.width {
            if v >> i & 1 == 1 {
                let bit = at + i;
                b.0[(bit / 64) as usize] |= 1 << (bit % 64);
            }
        }
        at += f.width;
    }
    b
}

/// The inverse of [`pack`].
pub fn unpack(b: &Bits) -> Entry {
    let mut vals = [0u64; 24];
    let mut at = 0u32;
    for (k, f) in entry_fields().iter().enumerate() {
        for i in 0..f.width {
            if b.bit(at + i) {
                vals[k] |= 1 << i;
            }
        }
        at += f.width;
    }
    Entry {
        state: vals[0] as u8,
        sport: vals[1] as u16,
        gen: vals[2] as u8,
        plane: vals[3] as u8,
        next_psn: vals[4] as u32,
        cum_acked: vals[5] as u32,
        inflight: vals[6] as u32,
        cwnd: vals[7] as u32,
        srtt: vals[8] as u32,
        rttvar: vals[9] as u32,
        min_rtt: vals[10] as u32,
        ecn_ewma: vals[11] as u8,
        acked_bytes: vals[12] as u32,
        weight: vals[13] as u8,
        deficit: vals[14] as u16,
        rto_deadline: vals[15] as u32,
        retries: vals[16] as u8,
        hold_until: vals[17] as u32,
        probes_ok: vals[18] as u8,
        probe_pending: vals[19] != 0,
        probe_ts: vals[20] as u16,
        tx_seq: vals[21] as u32,
        probe_seq: vals[22] as u32,
        acked_seq: vals[23] as u32,
    }
}

/// One event, as `s_evt_*` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Event {
    pub kind: u8,
    pub conn: u32,
    pub path: u32,
    /// 32-bit timestamp at which the event applies.
    pub now: u32,
    /// ACK: new cumulative point. OPEN: first psn. 24 bits.
    pub cum_acked: u32,
    /// ACK: packets newly acknowledged (9 bits).
    pub acked_pkts: u32,
    /// ACK: payload bytes newly acknowledged (24 bits).
    pub acked_bytes: u32,
    /// ACK: the SACK's CE count (8 bits).
    pub ecn_cnt: u32,
    /// ACK: an RTT sample is present.
    pub rtt_valid: bool,
    /// ACK: the sample, `ts16(now) - echo_ts` (16 bits).
    pub rtt: u32,
    /// ACK: one past the highest tx_seq newly acknowledged.
    pub acked_seq: u32,
    /// TIMEOUT: the fresh port. OPEN: the path's port.
    pub sport: u16,
    /// OPEN: the plane (3 bits).
    pub plane: u8,
}

/// Constants of the update, derived from the config exactly as the
/// reference's `path::PathParams::from_config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Consts {
    pub mtu: u32,
    pub min_cwnd: u32,
    pub max_cwnd: u32,
    pub init_cwnd: u32,
    pub srtt_shift: u32,
    pub rttvar_shift: u32,
    pub ecn_shift: u32,
    pub initial_rtt: u32,
    pub rto_min: u32,
    pub rto_max: u32,
    pub dead_probe_interval: u32,
    pub suspect_after_rtos: u8,
    pub good_after_probes: u8,
    pub dead_after_failures: u8,
    pub weight_shift: u32,
}

impl Consts {
    pub fn from_config(cfg: &Config) -> Consts {
        let ts = |us: u32| cfg.us_to_ts(us).min(u32::MAX as u64) as u32;
        let line = ((cfg.cc.line_rate_gbps as u64 * cfg.timers.ts_unit_ns as u64) / 8).max(1);
        Consts {
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
            weight_shift: bit_len(line << 8).saturating_sub(8),
        }
    }

    /// srtt of a freshly opened path.
    pub fn open_srtt(&self) -> u32 {
        self.initial_rtt.min(pt::SRTT.max() as u32)
    }

    /// weight of a freshly opened path.
    pub fn open_weight(&self) -> u8 {
        weight_of(self.init_cwnd, self.open_srtt(), self.weight_shift)
    }
}

/// Bits needed to hold `v` (0 for 0).
pub fn bit_len(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// The reciprocal ROM: `floor(65536 / n)` for `n` clamped to 1..=256.
pub fn recip16(n: u32) -> u32 {
    65536 / n.clamp(1, 256)
}

/// `avg + ((sample - avg) >> shift)` with an arithmetic shift.
pub fn ewma(avg: u32, sample: u32, shift: u32) -> u32 {
    let d = sample as i64 - avg as i64;
    (avg as i64 + (d >> shift)).max(0) as u32
}

/// `now` is at or after `deadline` (32-bit wrapping).
pub fn ts_reached(now: u32, deadline: u32) -> bool {
    (now.wrapping_sub(deadline) as i32) >= 0
}

/// The rate weight: `(cwnd * recip16(m)) >> (8 + e) >> shift`, clamped to
/// 1..=255, with `srtt ~= m << e` (8-bit mantissa).
pub fn weight_of(cwnd: u32, srtt: u32, weight_shift: u32) -> u8 {
    let s = srtt.max(1) as u64;
    let e = bit_len(s).saturating_sub(8);
    let m = (s >> e) as u32;
    let rate_q8 = (cwnd as u64 * recip16(m) as u64) >> (8 + e);
    (rate_q8 >> weight_shift).clamp(1, 255) as u8
}

/// `max(srtt + 4 rttvar, 2 min_rtt)` (min_rtt ignored before a sample),
/// clamped to `[rto_min, rto_max]`.
pub fn rto(srtt: u32, rttvar: u32, min_rtt: u32, k: &Consts) -> u32 {
    let base = srtt as u64 + 4 * rttvar as u64;
    let floor = if min_rtt == MIN_RTT_NONE { 0 } else { 2 * min_rtt as u64 };
    base.max(floor).clamp(k.rto_min as u64, k.rto_max as u64) as u32
}

/// One step of the fresh-port LFSR.
pub fn lfsr_step(s: u16) -> u16 {
    let lsb = s & 1;
    let s = s >> 1;
    if lsb == 1 {
        s ^ LFSR_TAPS
    } else {
        s
    }
}

/// The port a TIMER re-entropies to: `0xC000 | lfsr[13:0]`, bit 0 flipped
/// if that is the old port.
pub fn fresh_sport(lfsr: u16, old: u16) -> u16 {
    let p = 0xC000 | (lfsr & 0x3FFF);
    if p == old {
        p ^ 1
    } else {
        p
    }
}

/// What one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    pub entry: Entry,
    /// [`act`] bits.
    pub act: u8,
    /// A timeout was applied (an `m_rto` record).
    pub fired: bool,
    /// The deficit restarts (entered SUSPECT from GOOD/SKIP, recovered, OPEN).
    pub clr: bool,
}

impl Outcome {
    /// An `m_upd` record is due.
    pub fn emits_upd(&self, old: &Entry, kind: u8) -> bool {
        kind == kind::OPEN
            || self.entry.state != old.state
            || self.entry.weight != old.weight
            || self.clr
            || self.act != 0
    }
}

fn sat_inc4(v: u8) -> u8 {
    (v + 1).min(pt::RETRIES.max() as u8)
}

/// One event applied to one entry: the reference's `path::apply` (and for
/// TIMER its `on_tick` + conditional `on_timeout`). `lfsr` is the block's
/// fresh-port LFSR, used by a TIMER that fires.
pub fn execute(e: &Entry, ev: &Event, lfsr: u16, k: &Consts) -> Outcome {
    let mut n = *e;
    let mut o = Outcome::default();
    let now = ev.now;
    match ev.kind {
        kind::OPEN => {
            let srtt = k.open_srtt();
            n = Entry {
                state: GOOD,
                sport: ev.sport,
                plane: ev.plane,
                next_psn: ev.cum_acked,
                cum_acked: ev.cum_acked,
                cwnd: k.init_cwnd,
                srtt,
                rttvar: (srtt / 2).min(pt::RTTVAR.max() as u32),
                min_rtt: MIN_RTT_NONE,
                weight: k.open_weight(),
                ..Entry::default()
            };
            o.clr = true;
        }
        kind::SEND => {
            n.next_psn = (e.next_psn + 1) & pt::NEXT_PSN.max() as u32;
            n.inflight = (e.inflight + 1).min(pt::INFLIGHT.max() as u32);
            n.tx_seq = e.tx_seq.wrapping_add(1);
            if !e.timer_armed() {
                n.rto_deadline = now.wrapping_add(rto(e.srtt, e.rttvar, e.min_rtt, k));
            }
        }
        kind::RETX | kind::RESUME => {
            if ev.kind == kind::RESUME {
                n.inflight = (e.inflight + 1).min(pt::INFLIGHT.max() as u32);
            }
            n.tx_seq = e.tx_seq.wrapping_add(1);
            if !e.timer_armed() {
                n.rto_deadline = now.wrapping_add(rto(e.srtt, e.rttvar, e.min_rtt, k));
            }
        }
        kind::PROBE_SENT => {
            n.probe_pending = true;
            n.probe_ts = now as u16;
            n.probe_seq = e.tx_seq;
            n.tx_seq = e.tx_seq.wrapping_add(1);
            let wait = if e.state == DEAD { k.dead_probe_interval } else { rto(e.srtt, e.rttvar, e.min_rtt, k) };
            n.rto_deadline = now.wrapping_add(wait);
        }
        kind::ACK | kind::ACK_STEER => {
            on_ack(e, &mut n, ev, k);
            if ev.kind == kind::ACK_STEER && n.state == SKIP {
                n.state = GOOD;
            }
        }
        kind::PROBE_REPLY => {
            n.probe_pending = false;
            if e.state == SUSPECT || e.state == DEAD {
                n.probes_ok = if e.state == DEAD { 1 } else { (e.probes_ok + 1).min(15) };
                n.retries = 0;
                n.state = SUSPECT;
                if n.probes_ok >= k.good_after_probes {
                    n.state = GOOD;
                    n.probes_ok = 0;
                    n.deficit = 0;
                    o.act |= act::RECOVERED;
                    o.clr = true;
                } else {
                    o.act |= act::PROBE;
                }
            }
            if n.timer_armed() && o.act & act::PROBE == 0 {
                n.rto_deadline = now.wrapping_add(rto(n.srtt, n.rttvar, n.min_rtt, k));
            }
        }
        kind::NACK | kind::RNR => {
            if ev.kind == kind::RNR {
                n.inflight = e.inflight.saturating_sub(1);
            }
            if e.state == GOOD || e.state == SKIP {
                n.retries = 0;
                n.rto_deadline = now.wrapping_add(rto(e.srtt, e.rttvar, e.min_rtt, k));
            }
        }
        kind::TIMEOUT => {
            timeout(&mut n, &mut o, now, ev.sport, k);
        }
        kind::TICK | kind::TIMER => {
            if n.state == SKIP && ts_reached(now, n.hold_until) {
                n.state = GOOD;
            }
            if ev.kind == kind::TIMER && n.timer_armed() && ts_reached(now, n.rto_deadline) {
                let fresh = fresh_sport(lfsr, n.sport);
                timeout(&mut n, &mut o, now, fresh, k);
            }
        }
        kind::SILENT if e.state == GOOD => {
            let fresh = fresh_sport(lfsr, n.sport);
            timeout(&mut n, &mut o, now, fresh, k);
        }
        _ => {}
    }
    o.entry = n;
    o
}

fn on_ack(e: &Entry, n: &mut Entry, ev: &Event, k: &Consts) {
    let now = ev.now;
    n.cum_acked = ev.cum_acked;
    n.inflight = e.inflight.saturating_sub(ev.acked_pkts);
    if (ev.acked_seq.wrapping_sub(e.acked_seq) as i32) > 0 {
        n.acked_seq = ev.acked_seq;
    }
    if ev.rtt_valid {
        let r = ev.rtt.min(pt::SRTT.max() as u32);
        if e.min_rtt == MIN_RTT_NONE {
            n.srtt = r;
            n.rttvar = (r / 2).min(pt::RTTVAR.max() as u32);
            n.min_rtt = r.min(MIN_RTT_NONE - 1);
        } else {
            let err = r.abs_diff(e.srtt);
            n.srtt = ewma(e.srtt, r, k.srtt_shift).min(pt::SRTT.max() as u32);
            n.rttvar = ewma(e.rttvar, err, k.rttvar_shift).min(pt::RTTVAR.max() as u32);
            n.min_rtt = e.min_rtt.min(r);
        }
    }
    // AIMD (the reference's `aimd` with this path's constants).
    let pkts = ev.acked_pkts;
    if pkts > 0 {
        let m = ev.ecn_cnt.min(pkts).min(256);
        let frac = ((m * recip16(pkts)) >> 8).min(255);
        n.ecn_ewma = ewma(e.ecn_ewma as u32, frac, k.ecn_shift).min(255) as u8;
    }
    let mut cut = false;
    if ev.ecn_cnt > 0 {
        if ts_reached(now, e.hold_until) {
            let c = (e.cwnd as u64 * n.ecn_ewma as u64) >> 9;
            n.cwnd = (e.cwnd as u64 - c).max(k.min_cwnd as u64) as u32;
            n.hold_until = now.wrapping_add(n.srtt.max(1));
            n.acked_bytes = 0;
            cut = true;
        }
    } else {
        let mut ab = (e.acked_bytes as u64 + ev.acked_bytes as u64).min(pt::ACKED_BYTES.max()) as u32;
        if ab >= e.cwnd {
            ab -= e.cwnd;
            n.cwnd = (e.cwnd as u64 + k.mtu as u64).min(k.max_cwnd as u64) as u32;
        }
        n.acked_bytes = ab;
    }
    if cut && n.state == GOOD {
        n.state = SKIP;
    }
    if pkts > 0 {
        if n.state == GOOD || n.state == SKIP {
            n.retries = 0;
        }
        n.rto_deadline = now.wrapping_add(rto(n.srtt, n.rttvar, n.min_rtt, k));
    }
    n.weight = weight_of(n.cwnd, n.srtt, k.weight_shift);
}

/// The reference's `on_timeout` on `n` in place.
fn timeout(n: &mut Entry, o: &mut Outcome, now: u32, fresh: u16, k: &Consts) {
    o.fired = true;
    n.probe_pending = false;
    let mut probe = false;
    match n.state {
        GOOD | SKIP => {
            n.retries = sat_inc4(n.retries);
            if n.retries >= k.suspect_after_rtos {
                n.state = SUSPECT;
                n.sport = fresh;
                n.gen = n.gen.wrapping_add(1);
                n.retries = 0;
                n.probes_ok = 0;
                n.deficit = 0;
                o.act |= act::ALL_LOST;
                o.clr = true;
            }
            probe = true;
        }
        SUSPECT => {
            o.act |= act::ALL_LOST;
            n.retries = sat_inc4(n.retries);
            n.probes_ok = 0;
            if n.retries >= k.dead_after_failures {
                n.state = DEAD;
                n.retries = 0;
                o.act |= act::DIED;
                n.rto_deadline = now.wrapping_add(k.dead_probe_interval);
            } else {
                n.sport = fresh;
                n.gen = n.gen.wrapping_add(1);
                probe = true;
            }
        }
        _ => {
            o.act |= act::ALL_LOST;
            n.sport = fresh;
            n.gen = n.gen.wrapping_add(1);
            probe = true;
        }
    }
    if probe {
        o.act |= act::PROBE;
    }
    // A PROBE's timeout restarts the timer (the reference's rule: the
    // scanner would otherwise fire again while the PROBE waits to leave).
    if probe || !n.timer_armed() {
        n.rto_deadline = now.wrapping_add(rto(n.srtt, n.rttvar, n.min_rtt, k));
    }
}

/// The scanner's view of an entry (the timer memory word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerWord {
    pub armed: bool,
    pub deadline: u32,
    pub skip: bool,
    pub hold_until: u32,
}

impl TimerWord {
    pub fn of(e: &Entry) -> TimerWord {
        TimerWord { armed: e.timer_armed(), deadline: e.rto_deadline, skip: e.state == SKIP, hold_until: e.hold_until }
    }

    /// A TIMER event is due at `now`.
    pub fn due(&self, now: u32) -> bool {
        (self.armed && ts_reached(now, self.deadline)) || (self.skip && ts_reached(now, self.hold_until))
    }
}

/// One path's slot of the read port (the view memory word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct View {
    pub state: u8,
    pub inflight: u32,
    pub cwnd: u32,
    pub weight: u8,
}

impl View {
    pub fn of(e: &Entry) -> View {
        View { state: e.state, inflight: e.inflight, cwnd: e.cwnd, weight: e.weight }
    }
}

/// Bits of a view word: state, inflight, cwnd, weight.
pub const VIEW_BITS: u32 = pt::STATE.width + pt::INFLIGHT.width + pt::CWND.width + pt::WEIGHT.width;
/// Bits of a timer word: armed, deadline, skip, hold_until.
pub const TIMER_BITS: u32 = 1 + 32 + 1 + 32;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path_telemetry: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes and constants of one block, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathTelemetryParams {
    pub conns: u32,
    pub paths: u32,
    pub conn_bits: u32,
    pub path_bits: u32,
    pub read_latency: u32,
    pub k: Consts,
}

impl PathTelemetryParams {
    pub fn from_config(cfg: &Config) -> Result<PathTelemetryParams, ParamError> {
        let bad = |field, value: u64, why: String| Err(ParamError { field, value, why });
        let (conns, paths, l) =
            (cfg.transport.connections, cfg.transport.paths_per_conn, cfg.hardware.table_read_latency);
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns.into(), "must be a power of 2 in 2..=2^24".into());
        }
        if paths == 0 || !paths.is_power_of_two() || paths > MAX_PATHS_PER_CONN {
            return bad(
                "transport.paths_per_conn",
                paths.into(),
                format!("must be a power of 2 in 1..={MAX_PATHS_PER_CONN}"),
            );
        }
        if conns as u64 * paths as u64 > 1 << 20 {
            return bad(
                "transport.paths_per_conn",
                paths.into(),
                "connections x paths exceeds the 2^20 entries of the path table".into(),
            );
        }
        if !(1..=2).contains(&l) {
            return bad("hardware.table_read_latency", l.into(), "the table memories support 1 or 2 cycles".into());
        }
        let t = &cfg.timers;
        for (field, v) in [
            ("timers.suspect_after_rtos", t.suspect_after_rtos),
            ("timers.good_after_probes", t.good_after_probes),
            ("timers.dead_after_failures", t.dead_after_failures),
        ] {
            if !(1..=15).contains(&v) {
                return bad(field, v.into(), "compared with a 4-bit counter: 1..=15".into());
            }
        }
        let k = Consts::from_config(cfg);
        if k.init_cwnd as u64 > pt::CWND.max() || k.max_cwnd as u64 > pt::CWND.max() || k.min_cwnd > k.max_cwnd {
            return bad("cc.max_cwnd_bytes", k.max_cwnd.into(), "windows must fit the 20-bit cwnd, min <= max".into());
        }
        if k.weight_shift > 40 {
            return bad("cc.line_rate_gbps", cfg.cc.line_rate_gbps.into(), "weight shift out of range".into());
        }
        Ok(PathTelemetryParams {
            conns,
            paths,
            conn_bits: Config::index_bits(conns),
            path_bits: Config::index_bits(paths),
            read_latency: l,
            k,
        })
    }

    /// Table entries `N = CONNS * PATHS`.
    pub fn entries(&self) -> u32 {
        self.conns * self.paths
    }

    /// Table address width: `conn_bits + log2(PATHS)` (the address is
    /// `{conn, path}`; at one path the path bit is dropped).
    pub fn addr_bits(&self) -> u32 {
        self.conn_bits + self.paths.trailing_zeros()
    }

    /// The table address of (conn, path).
    pub fn addr(&self, conn: u32, path: u32) -> u32 {
        conn * self.paths + path
    }

    /// Output FIFO entries: the power of 2 at or above `L + 2`.
    pub fn fifo_depth(&self) -> u32 {
        (self.read_latency + 2).next_power_of_two()
    }

    /// Cycles from a handshake to the record's valid.
    pub fn latency(&self) -> u32 {
        self.read_latency + 1
    }
}

/// Port indices in [`ports`] order.
pub mod port {
    pub const RST: usize = 0;
    pub const TS_NOW: usize = 1;
    pub const S_EVT_VALID: usize = 2;
    pub const S_EVT_READY: usize = 3;
    pub const S_EVT_KIND: usize = 4;
    pub const S_EVT_CONN: usize = 5;
    pub const S_EVT_PATH: usize = 6;
    pub const S_EVT_NOW: usize = 7;
    pub const S_EVT_CUM_ACKED: usize = 8;
    pub const S_EVT_ACKED_PKTS: usize = 9;
    pub const S_EVT_ACKED_BYTES: usize = 10;
    pub const S_EVT_ECN_CNT: usize = 11;
    pub const S_EVT_RTT_VALID: usize = 12;
    pub const S_EVT_RTT: usize = 13;
    pub const S_EVT_ACKED_SEQ: usize = 14;
    pub const S_EVT_SPORT: usize = 15;
    pub const S_EVT_PLANE: usize = 16;
    pub const M_UPD_VALID: usize = 17;
    pub const M_UPD_READY: usize = 18;
    pub const M_UPD_CONN: usize = 19;
    pub const M_UPD_PATH: usize = 20;
    pub const M_UPD_STATE: usize = 21;
    pub const M_UPD_WEIGHT: usize = 22;
    pub const M_UPD_CLR: usize = 23;
    pub const M_UPD_ACT: usize = 24;
    pub const M_RTO_VALID: usize = 25;
    pub const M_RTO_READY: usize = 26;
    pub const M_RTO_CONN: usize = 27;
    pub const M_RTO_PATH: usize = 28;
    pub const M_RTO_STATE: usize = 29;
    pub const M_RTO_SPORT: usize = 30;
    pub const M_RTO_GEN: usize = 31;
    pub const M_RTO_ACT: usize = 32;
    pub const S_RD_VALID: usize = 33;
    pub const S_RD_READY: usize = 34;
    pub const S_RD_CONN: usize = 35;
    pub const M_RD_VALID: usize = 36;
    pub const M_RD_READY: usize = 37;
    pub const M_RD_CONN: usize = 38;
    pub const M_RD_STATE: usize = 39;
    pub const M_RD_INFLIGHT: usize = 40;
    pub const M_RD_CWND: usize = 41;
    pub const M_RD_WEIGHT: usize = 42;
}

/// The ports of `path_telemetry`, in declaration order (see [`port`]).
pub fn ports(p: &PathTelemetryParams) -> Vec<PortDef> {
    const RST: &str = "Clock and reset";
    const TIME: &str = "Time";
    const EVT: &str = "Update events";
    const UPD: &str = "Path updates";
    const RTO: &str = "Timeouts";
    const RDQ: &str = "Connection read request";
    const RD: &str = "Connection read response";
    let (cw, pw, n) = (p.conn_bits, p.path_bits, p.paths);
    vec![
        PortDef::input("rst", 1, RST, "synchronous reset, active high; starts the table clear sweep"),
        PortDef::input("ts_now", TS_BITS, TIME, "the 32-bit timestamp counter, for the RTO scanner"),
        PortDef::input("s_evt_valid", 1, EVT, "an event is offered"),
        PortDef::output("s_evt_ready", 1, EVT, "event accepted this cycle if valid"),
        PortDef::input(
            "s_evt_kind",
            KIND_BITS,
            EVT,
            "OPEN 0, SEND 1, RETX 2, PROBE_SENT 3, ACK 4, PROBE_REPLY 5, NACK 6, TIMEOUT 7, TICK 8, TIMER 9, SILENT 10, RNR 11, RESUME 12, ACK_STEER 13",
        ),
        PortDef::input("s_evt_conn", cw, EVT, "connection"),
        PortDef::input("s_evt_path", pw, EVT, "path of the connection"),
        PortDef::input("s_evt_now", TS_BITS, EVT, "timestamp the event applies at"),
        PortDef::input("s_evt_cum_acked", pt::CUM_ACKED.width, EVT, "ACK: new cumulative psn; OPEN: first psn"),
        PortDef::input("s_evt_acked_pkts", PKTS_BITS, EVT, "ACK: packets newly acknowledged"),
        PortDef::input("s_evt_acked_bytes", BYTES_BITS, EVT, "ACK: bytes newly acknowledged"),
        PortDef::input("s_evt_ecn_cnt", ECN_BITS, EVT, "ACK: CE marks reported"),
        PortDef::input("s_evt_rtt_valid", 1, EVT, "ACK: s_evt_rtt holds a sample"),
        PortDef::input("s_evt_rtt", RTT_BITS, EVT, "ACK: RTT sample, timestamp units"),
        PortDef::input("s_evt_acked_seq", 32, EVT, "ACK: one past the highest tx_seq acknowledged"),
        PortDef::input("s_evt_sport", pt::SPORT.width, EVT, "TIMEOUT: fresh source port; OPEN: the path's port"),
        PortDef::input("s_evt_plane", pt::PLANE.width, EVT, "OPEN: the path's plane"),
        PortDef::output("m_upd_valid", 1, UPD, "a path update is offered"),
        PortDef::input("m_upd_ready", 1, UPD, "the update is taken this cycle if valid"),
        PortDef::output("m_upd_conn", cw, UPD, "connection"),
        PortDef::output("m_upd_path", pw, UPD, "path"),
        PortDef::output("m_upd_state", pt::STATE.width, UPD, "new state"),
        PortDef::output("m_upd_weight", pt::WEIGHT.width, UPD, "new weight"),
        PortDef::output("m_upd_clr", 1, UPD, "the path's SWRR credit restarts from 0"),
        PortDef::output("m_upd_act", ACT_BITS, UPD, "bit 0 probe, 1 all_lost, 2 died, 3 recovered"),
        PortDef::output("m_rto_valid", 1, RTO, "a timeout was applied"),
        PortDef::input("m_rto_ready", 1, RTO, "the timeout record is taken this cycle if valid"),
        PortDef::output("m_rto_conn", cw, RTO, "connection"),
        PortDef::output("m_rto_path", pw, RTO, "path"),
        PortDef::output("m_rto_state", pt::STATE.width, RTO, "state after the timeout"),
        PortDef::output("m_rto_sport", pt::SPORT.width, RTO, "source port after the timeout (new on re-entropy)"),
        PortDef::output("m_rto_gen", pt::GEN.width, RTO, "generation after the timeout"),
        PortDef::output("m_rto_act", ACT_BITS, RTO, "bit 0 probe, 1 all_lost, 2 died, 3 recovered"),
        PortDef::input("s_rd_valid", 1, RDQ, "a connection read is offered"),
        PortDef::output("s_rd_ready", 1, RDQ, "read accepted this cycle if valid"),
        PortDef::input("s_rd_conn", cw, RDQ, "connection to read"),
        PortDef::output("m_rd_valid", 1, RD, "a read response is offered"),
        PortDef::input("m_rd_ready", 1, RD, "the response is taken this cycle if valid"),
        PortDef::output("m_rd_conn", cw, RD, "connection read"),
        PortDef::output("m_rd_state", n * pt::STATE.width, RD, "bits 2i+1..2i: state of path i"),
        PortDef::output("m_rd_inflight", n * pt::INFLIGHT.width, RD, "bits 9i+8..9i: inflight of path i"),
        PortDef::output("m_rd_cwnd", n * pt::CWND.width, RD, "bits 20i+19..20i: cwnd of path i"),
        PortDef::output("m_rd_weight", n * pt::WEIGHT.width, RD, "bits 8i+7..8i: weight of path i"),
    ]
}

/// An `m_upd` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Upd {
    pub conn: u32,
    pub path: u32,
    pub state: u8,
    pub weight: u8,
    pub clr: bool,
    pub act: u8,
}

/// An `m_rto` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rto {
    pub conn: u32,
    pub path: u32,
    pub state: u8,
    pub sport: u16,
    pub gen: u8,
    pub act: u8,
}

/// An `m_rd` record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RdResp {
    pub conn: u32,
    pub paths: Vec<View>,
}

/// Inputs of one cycle, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub ts_now: u32,
    pub evt_valid: bool,
    pub evt: Event,
    pub upd_ready: bool,
    pub rto_ready: bool,
    pub rd_valid: bool,
    pub rd_conn: u32,
    pub rd_resp_ready: bool,
}

/// Outputs of one cycle, typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outputs {
    pub evt_ready: bool,
    pub upd: Option<Upd>,
    pub rto: Option<Rto>,
    pub rd_ready: bool,
    pub rd: Option<RdResp>,
}

/// The cycle-accurate path telemetry block. See the module docs.
pub struct PathTelemetry {
    p: PathTelemetryParams,
    ports: Vec<PortDef>,
    /// The table, address `conn * PATHS + path`. The view and timer
    /// memories of the RTL are projections of it written at the same
    /// edges, so the model derives them at read time.
    mem: Vec<Entry>,
    /// Event pipeline: `stage[L-1]` is the execute stage.
    stage: Vec<Option<Event>>,
    rd: Vec<Entry>,
    /// The `L` most recent table writes (address, entry), newest first.
    hist: Vec<Option<(u32, Entry)>>,
    lfsr: u16,
    upd_fifo: VecDeque<Upd>,
    rto_fifo: VecDeque<Rto>,
    // Scanner.
    scan_addr: u32,
    sstage: Vec<Option<u32>>,
    srd: Vec<TimerWord>,
    pending: Option<u32>,
    // Read port.
    rstage: Vec<Option<u32>>,
    rrd: Vec<Vec<View>>,
    rd_fifo: VecDeque<RdResp>,
    init: bool,
    init_addr: u32,
    /// Count of TIMER events injected by the scanner.
    pub timers_injected: u64,
}

impl PathTelemetry {
    /// A block in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: PathTelemetryParams) -> PathTelemetry {
        let l = p.read_latency as usize;
        PathTelemetry {
            ports: ports(&p),
            mem: vec![Entry::default(); p.entries() as usize],
            stage: vec![None; l],
            rd: vec![Entry::default(); l],
            hist: vec![None; l],
            lfsr: LFSR_SEED,
            upd_fifo: VecDeque::new(),
            rto_fifo: VecDeque::new(),
            scan_addr: 0,
            sstage: vec![None; l],
            srd: vec![TimerWord::default(); l],
            pending: None,
            rstage: vec![None; l],
            rrd: vec![vec![View::default(); p.paths as usize]; l],
            rd_fifo: VecDeque::new(),
            init: true,
            init_addr: 0,
            timers_injected: 0,
            p,
        }
    }

    pub fn params(&self) -> &PathTelemetryParams {
        &self.p
    }

    /// The stored entry of (conn, path) (every executed update is in memory).
    pub fn entry(&self, conn: u32, path: u32) -> Entry {
        self.mem[self.p.addr(conn, path) as usize]
    }

    /// Writes an entry directly (test setup; not a hardware port).
    pub fn poke(&mut self, conn: u32, path: u32, e: Entry) {
        let a = self.p.addr(conn, path) as usize;
        self.mem[a] = e;
    }

    pub fn initializing(&self) -> bool {
        self.init
    }

    /// The event accepted at the last edge (from `s_evt`, or a TIMER the
    /// scanner injected), now in the first pipeline stage. For tests that
    /// replay the accepted stream through the reference.
    pub fn accepted(&self) -> Option<&Event> {
        self.stage[0].as_ref()
    }

    /// The fresh-port LFSR.
    pub fn lfsr(&self) -> u16 {
        self.lfsr
    }

    fn evt_inflight(&self) -> usize {
        self.stage.iter().filter(|s| s.is_some()).count()
    }

    fn evt_room(&self) -> bool {
        let d = self.p.fifo_depth() as usize;
        let n = self.evt_inflight();
        !self.init && self.upd_fifo.len() + n < d && self.rto_fifo.len() + n < d
    }

    /// Outputs from registered state (no combinational input-to-output path).
    pub fn outputs(&self) -> Outputs {
        Outputs { rd: self.rd_fifo.front().cloned(), ..self.outputs_but_rd() }
    }

    /// [`PathTelemetry::outputs`] without the read response (`rd: None`),
    /// which is a `Vec` to clone: the per-cycle paths read the FIFO head
    /// in place instead.
    fn outputs_but_rd(&self) -> Outputs {
        let d = self.p.fifo_depth() as usize;
        let rd_inflight = self.rstage.iter().filter(|s| s.is_some()).count();
        Outputs {
            evt_ready: self.evt_room() && self.pending.is_none(),
            upd: self.upd_fifo.front().copied(),
            rto: self.rto_fifo.front().copied(),
            rd_ready: !self.init && self.rd_fifo.len() + rd_inflight < d,
            rd: None,
        }
    }

    /// The rising clock edge with typed inputs.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs_but_rd();
        let rd_valid = !self.rd_fifo.is_empty();
        let l = self.p.read_latency as usize;
        let paths = self.p.paths;
        let n_entries = self.p.entries();

        // Execute stage.
        let mut write: Option<(u32, Entry)> = None;
        let mut push_upd = None;
        let mut push_rto = None;
        let mut step_lfsr = false;
        if let Some(ev) = &self.stage[l - 1] {
            let addr = self.p.addr(ev.conn, ev.path);
            let cur = match self.hist.iter().flatten().find(|(a, _)| *a == addr) {
                Some((_, e)) => *e,
                None => self.rd[l - 1],
            };
            let o = execute(&cur, ev, self.lfsr, &self.p.k);
            if o.emits_upd(&cur, ev.kind) {
                push_upd = Some(Upd {
                    conn: ev.conn,
                    path: ev.path,
                    state: o.entry.state,
                    weight: o.entry.weight,
                    clr: o.clr,
                    act: o.act,
                });
            }
            if o.fired {
                push_rto = Some(Rto {
                    conn: ev.conn,
                    path: ev.path,
                    state: o.entry.state,
                    sport: o.entry.sport,
                    gen: o.entry.gen,
                    act: o.act,
                });
            }
            step_lfsr = (ev.kind == kind::TIMER || ev.kind == kind::SILENT) && o.fired;
            write = Some((addr, o.entry));
        }

        // Scanner check (stage L-1 of the timer reads) and injection.
        let hit = if self.init {
            None
        } else {
            match self.sstage[l - 1] {
                Some(a) if self.srd[l - 1].due(inp.ts_now) => Some(a),
                _ => None,
            }
        };
        let inject = self.pending.filter(|_| self.evt_room());
        let evt_fire = inp.evt_valid && out.evt_ready;
        let issue = !self.init && self.pending.is_none() && hit.is_none();
        let rd_fire = inp.rd_valid && out.rd_ready;
        let push_rd = self.rstage[l - 1].map(|c| RdResp { conn: c, paths: self.rrd[l - 1].clone() });

        // Memory reads (old data on a same-address write).
        if l == 2 {
            self.rd[1] = self.rd[0];
            self.srd[1] = self.srd[0];
            let (a, b) = self.rrd.split_at_mut(1);
            b[0].copy_from_slice(&a[0]);
        }
        let new_evt = if let Some(a) = inject {
            Some(Event { kind: kind::TIMER, conn: a / paths, path: a % paths, now: inp.ts_now, ..Event::default() })
        } else if evt_fire {
            let mut e = inp.evt;
            assert!(e.conn < self.p.conns && e.path < paths, "event address out of range: {e:?}");
            e.kind &= 0xF;
            Some(e)
        } else {
            None
        };
        if let Some(e) = &new_evt {
            self.rd[0] = self.mem[self.p.addr(e.conn, e.path) as usize];
        }
        if issue {
            self.srd[0] = TimerWord::of(&self.mem[self.scan_addr as usize]);
        }
        if rd_fire {
            assert!(inp.rd_conn < self.p.conns, "read connection out of range");
            let base = (inp.rd_conn * paths) as usize;
            for (i, v) in self.rrd[0].iter_mut().enumerate() {
                *v = View::of(&self.mem[base + i]);
            }
        }
        // Write port: the sweep, else the execute stage.
        if self.init {
            self.mem[self.init_addr as usize] = Entry::default();
        } else if let Some((a, e)) = write {
            self.mem[a as usize] = e;
        }

        if inp.rst {
            self.stage.iter_mut().for_each(|s| *s = None);
            self.hist.iter_mut().for_each(|h| *h = None);
            self.sstage.iter_mut().for_each(|s| *s = None);
            self.rstage.iter_mut().for_each(|s| *s = None);
            self.upd_fifo.clear();
            self.rto_fifo.clear();
            self.rd_fifo.clear();
            self.pending = None;
            self.scan_addr = 0;
            self.lfsr = LFSR_SEED;
            self.init = true;
            self.init_addr = 0;
            return;
        }

        if self.init {
            if self.init_addr == n_entries - 1 {
                self.init = false;
            }
            self.init_addr = (self.init_addr + 1) & (n_entries - 1);
        }
        if step_lfsr {
            self.lfsr = lfsr_step(self.lfsr);
        }
        self.hist.rotate_right(1);
        self.hist[0] = write;
        if out.upd.is_some() && inp.upd_ready {
            self.upd_fifo.pop_front();
        }
        if out.rto.is_some() && inp.rto_ready {
            self.rto_fifo.pop_front();
        }
        if rd_valid && inp.rd_resp_ready {
            self.rd_fifo.pop_front();
        }
        if let Some(u) = push_upd {
            self.upd_fifo.push_back(u);
        }
        if let Some(r) = push_rto {
            self.rto_fifo.push_back(r);
        }
        let depth = self.p.fifo_depth() as usize;
        debug_assert!(self.upd_fifo.len() <= depth && self.rto_fifo.len() <= depth, "update FIFO overflow");
        self.stage.rotate_right(1);
        self.stage[0] = new_evt;
        if inject.is_some() {
            self.pending = None;
            self.timers_injected += 1;
        }

        // Read port.
        if let Some(r) = push_rd {
            self.rd_fifo.push_back(r);
            debug_assert!(self.rd_fifo.len() <= depth, "read FIFO overflow");
        }
        self.rstage.rotate_right(1);
        self.rstage[0] = rd_fire.then_some(inp.rd_conn);

        // Scanner.
        if let Some(a) = hit {
            self.pending = Some(a);
            self.sstage.iter_mut().for_each(|s| *s = None);
            self.scan_addr = (a + 1) & (n_entries - 1);
        } else if !self.init {
            self.sstage.rotate_right(1);
            self.sstage[0] = issue.then_some(self.scan_addr);
            if issue {
                self.scan_addr = (self.scan_addr + 1) & (n_entries - 1);
            }
        }
    }
}

impl fmt::Debug for PathTelemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathTelemetry")
            .field("p", &self.p)
            .field("init", &self.init)
            .field("stage", &self.stage)
            .field("pending", &self.pending)
            .field("scan_addr", &self.scan_addr)
            .finish_non_exhaustive()
    }
}

fn field(b: &Bits, lsb: u32, width: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..width {
        if b.bit(lsb + i) {
            v |= 1 << i;
        }
    }
    v
}

fn put(b: &mut Bits, lsb: u32, width: u32, v: u64) {
    for i in 0..width {
        if v >> i & 1 == 1 {
            let bit = lsb + i;
            b.0[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }
}

impl PathTelemetry {
    /// Typed inputs from port values.
    pub fn decode(&self, inputs: &[Bits]) -> Inputs {
        let u = |i: usize| inputs[i].as_u64();
        let b = |i: usize| inputs[i].bit(0);
        Inputs {
            rst: b(port::RST),
            ts_now: u(port::TS_NOW) as u32,
            evt_valid: b(port::S_EVT_VALID),
            evt: Event {
                kind: u(port::S_EVT_KIND) as u8,
                conn: u(port::S_EVT_CONN) as u32,
                path: u(port::S_EVT_PATH) as u32,
                now: u(port::S_EVT_NOW) as u32,
                cum_acked: u(port::S_EVT_CUM_ACKED) as u32,
                acked_pkts: u(port::S_EVT_ACKED_PKTS) as u32,
                acked_bytes: u(port::S_EVT_ACKED_BYTES) as u32,
                ecn_cnt: u(port::S_EVT_ECN_CNT) as u32,
                rtt_valid: b(port::S_EVT_RTT_VALID),
                rtt: u(port::S_EVT_RTT) as u32,
                acked_seq: u(port::S_EVT_ACKED_SEQ) as u32,
                sport: u(port::S_EVT_SPORT) as u16,
                plane: u(port::S_EVT_PLANE) as u8,
            },
            upd_ready: b(port::M_UPD_READY),
            rto_ready: b(port::M_RTO_READY),
            rd_valid: b(port::S_RD_VALID),
            rd_conn: u(port::S_RD_CONN) as u32,
            rd_resp_ready: b(port::M_RD_READY),
        }
    }
}

impl Block for PathTelemetry {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs_but_rd();
        let rd = self.rd_fifo.front();
        let w = |i: usize| self.ports[i].width;
        let mut set = |i: usize, v: u64| outputs[i].set_u64(w(i), v);
        set(port::S_EVT_READY, o.evt_ready as u64);
        let u = o.upd.unwrap_or_default();
        set(port::M_UPD_VALID, o.upd.is_some() as u64);
        set(port::M_UPD_CONN, u.conn as u64);
        set(port::M_UPD_PATH, u.path as u64);
        set(port::M_UPD_STATE, u.state as u64);
        set(port::M_UPD_WEIGHT, u.weight as u64);
        set(port::M_UPD_CLR, u.clr as u64);
        set(port::M_UPD_ACT, u.act as u64);
        let r = o.rto.unwrap_or_default();
        set(port::M_RTO_VALID, o.rto.is_some() as u64);
        set(port::M_RTO_CONN, r.conn as u64);
        set(port::M_RTO_PATH, r.path as u64);
        set(port::M_RTO_STATE, r.state as u64);
        set(port::M_RTO_SPORT, r.sport as u64);
        set(port::M_RTO_GEN, r.gen as u64);
        set(port::M_RTO_ACT, r.act as u64);
        set(port::S_RD_READY, o.rd_ready as u64);
        set(port::M_RD_VALID, rd.is_some() as u64);
        set(port::M_RD_CONN, rd.map_or(0, |r| r.conn) as u64);
        for i in [port::M_RD_STATE, port::M_RD_INFLIGHT, port::M_RD_CWND, port::M_RD_WEIGHT] {
            outputs[i].set_u64(w(i), 0);
        }
        for (i, v) in rd.map_or(&[][..], |r| &r.paths).iter().enumerate() {
            let i = i as u32;
            put(&mut outputs[port::M_RD_STATE], 2 * i, 2, v.state as u64);
            put(&mut outputs[port::M_RD_INFLIGHT], 9 * i, 9, v.inflight as u64);
            put(&mut outputs[port::M_RD_CWND], 20 * i, 20, v.cwnd as u64);
            put(&mut outputs[port::M_RD_WEIGHT], 8 * i, 8, v.weight as u64);
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let inp = self.decode(inputs);
        self.clock(&inp);
    }
}

/// A field of a packed entry (for benches that read the table word).
pub fn entry_field(b: &Bits, name: &str) -> u64 {
    let (lsb, w) = field_pos(name);
    field(b, lsb, w)
}
