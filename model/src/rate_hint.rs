//! `rate_hint`: the receiver's fair-share hint that every SACK carries
//! (sack_gen's `rate_hint` level), one of `mrnic_core`'s glue blocks.
//!
//! # Function
//! The reference (`Nic::rate_hint`) divides the line rate among the
//! connections that delivered data within the last `2 x rto_min` (a
//! connection is recent while `now < last_data + window`), this packet's
//! connection included: `recip16(others + 1)` in Q0.16, 1.0 saturating to
//! 0xffff, where `others` counts the recent connections other than the
//! packet's. Here:
//! - a connection delivers data when sack_gen hands on a packet that set a
//!   new bit (its `m_new` handshake, observed on `tap_new_*`; the
//!   reference's `last_data` moves for exactly those packets): its
//!   `last_mem` word takes `ts_now` and its `recent` bit is set (the count
//!   goes up if it was clear);
//! - a sweep walks the connections, one per cycle, reads `last_mem` and, `L`
//!   cycles later, clears the `recent` bit (count down) of a connection
//!   whose last data is `window` or more units old (`ts_now - last` taken
//!   mod 2^32). A write to the connection while its read is in flight is
//!   forwarded to it;
//! - the hint is for the connection of the packet sack_gen took `L` cycles
//!   ago (its `s_pkt` handshake, observed on `tap_pkt_*`), which is the
//!   cycle sack_gen samples `rate_hint` in (its update stage, `L` cycles
//!   after the handshake): `recip16(count - recent[conn] + 1)`.
//!
//! # Difference from the reference
//! The reference drops a connection from the count at the exact unit its
//! window ends; the sweep does it up to `CONNS + L` cycles later (16 + 1
//! cycles in `small`, 4096 + 2 = 12.7 us at 322 MHz in `default`, against a
//! window of `2 x rto_min` = 2 ms there), so for that long a hint can still
//! count a connection that just went quiet. Connections are keyed by
//! their table index, as everywhere in the hardware (the reference keys by
//! the 24-bit id; conn_table holds one id per index).
//!
//! # Timing
//! `hint` is a function of registers only (the delayed connection,
//! `count`, the `recent` bits). A `tap_new` handshake counts from the next
//! cycle. Throughput: one packet and one new-data write per cycle.
//!
//! # Memories
//! `last_mem`, CONNS x 32 (16 x 32 / 4096 x 32), one read port (the sweep)
//! and one write port; the `recent` bits are CONNS flip-flops with reset.

use std::collections::VecDeque;

use mrnic_proto::Config;

use crate::block::{put, Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "rate_hint";

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate_hint: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `rate_hint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateHintParams {
    pub conns: u32,
    pub conn_bits: u32,
    /// `L`, the `last_mem` read latency.
    pub read_latency: u32,
    /// A connection is recent for this many timestamp units after its last
    /// data (2 x rto_min).
    pub window: u32,
}

impl RateHintParams {
    pub fn from_config(cfg: &Config) -> Result<RateHintParams, ParamError> {
        let rto_min = cfg.us_to_ts(cfg.timers.rto_min_us).clamp(1, u32::MAX as u64);
        RateHintParams::new(
            cfg.transport.connections,
            cfg.hardware.table_read_latency,
            (2 * rto_min).min(u32::MAX as u64) as u32,
        )
    }

    pub fn new(conns: u32, read_latency: u32, window: u32) -> Result<RateHintParams, ParamError> {
        let bad = |field, value: u64, why: &str| Err(ParamError { field, value, why: why.into() });
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns as u64, "must be a power of 2 in 2..=2^24");
        }
        if !(1..=2).contains(&read_latency) {
            return bad("hardware.table_read_latency", read_latency as u64, "must be 1 or 2");
        }
        if window == 0 {
            return bad("timers.rto_min_us", 0, "the activity window must be at least one timestamp unit");
        }
        Ok(RateHintParams { conns, conn_bits: Config::index_bits(conns), read_latency, window })
    }
}

/// The ports, in declaration order.
pub fn ports(p: &RateHintParams) -> Vec<PortDef> {
    const T: &str = "Observed handshakes (sack_gen)";
    let cb = p.conn_bits;
    vec![
        PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high: no connection is recent"),
        PortDef::input("ts_now", 32, "Clock and reset", "timestamp counter"),
        PortDef::input("tap_pkt_valid", 1, T, "sack_gen s_pkt_valid"),
        PortDef::input("tap_pkt_ready", 1, T, "sack_gen s_pkt_ready"),
        PortDef::input("tap_pkt_conn", cb, T, "sack_gen s_pkt_conn"),
        PortDef::input("tap_new_valid", 1, T, "sack_gen m_new_valid"),
        PortDef::input("tap_new_ready", 1, T, "sack_gen m_new_ready"),
        PortDef::input("tap_new_conn", cb, T, "sack_gen m_new_conn"),
        // Not `rate_hint`: Verilator refuses a port named like its module.
        PortDef::output("hint", 16, "Hint", "sack_gen rate_hint: fair share of the packet it updates now, Q0.16"),
    ]
}

/// The reference's reciprocal ROM (`fixed::recip16`) saturated to 16 bits.
pub fn hint_of(others: u32) -> u16 {
    (65536 / (others + 1).clamp(1, 256)).min(0xffff) as u16
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct RateHint {
    p: RateHintParams,
    ports: Vec<PortDef>,
    ids: Ids,
    last_mem: Vec<u32>,
    recent: Vec<bool>,
    count: u32,
    sweep: u32,
    /// Sweep reads in flight, oldest first: (conn, last data read).
    reads: VecDeque<(u32, u32)>,
    /// Connections of the last `L` s_pkt handshakes, oldest first
    /// (`None`: no handshake that cycle).
    pkts: VecDeque<Option<u32>>,
}

impl RateHint {
    pub fn new(p: RateHintParams) -> RateHint {
        let ports = ports(&p);
        RateHint {
            ids: Ids::new(&ports),
            ports,
            last_mem: vec![0; p.conns as usize],
            recent: vec![false; p.conns as usize],
            count: 0,
            sweep: 0,
            reads: VecDeque::new(),
            pkts: VecDeque::from(vec![None; p.read_latency as usize]),
            p,
        }
    }

    /// Connections counted as recent now.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// `rate_hint` this cycle.
    pub fn hint(&self) -> u16 {
        let c = self.pkts.front().copied().flatten().unwrap_or(0) as usize;
        hint_of(self.count - self.recent[c] as u32)
    }

    /// The edge: `pkt` / `new_data` are the connections of this cycle's
    /// handshakes.
    pub fn clock(&mut self, rst: bool, ts_now: u32, pkt: Option<u32>, new_data: Option<u32>) {
        let mask = self.p.conns - 1;
        if rst {
            self.recent.iter_mut().for_each(|r| *r = false);
            self.count = 0;
            self.sweep = 0;
            self.reads.clear();
            self.pkts = VecDeque::from(vec![None; self.p.read_latency as usize]);
            return;
        }
        if let Some(c) = new_data.map(|c| c & mask) {
            self.last_mem[c as usize] = ts_now;
            for r in self.reads.iter_mut().filter(|r| r.0 == c) {
                r.1 = ts_now;
            }
        }
        // The sweep acts on the read issued L cycles ago.
        if self.reads.len() == self.p.read_latency as usize {
            if let Some((c, last)) = self.reads.pop_front() {
                let i = c as usize;
                if self.recent[i] && ts_now.wrapping_sub(last) >= self.p.window {
                    self.recent[i] = false;
                    self.count -= 1;
                }
            }
        }
        if let Some(c) = new_data.map(|c| c & mask) {
            if !self.recent[c as usize] {
                self.recent[c as usize] = true;
                self.count += 1;
            }
        }
        self.reads.push_back((self.sweep, self.last_mem[self.sweep as usize]));
        self.sweep = (self.sweep + 1) & mask;
        self.pkts.pop_front();
        self.pkts.push_back(pkt.map(|c| c & mask));
    }
}

crate::port_ids!(struct Ids {
    rst, ts_now, tap_pkt_valid, tap_pkt_ready, tap_pkt_conn, tap_new_valid, tap_new_ready, tap_new_conn, hint
});

impl Block for RateHint {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let i = self.ids.hint;
        put(&self.ports, outputs, i, self.hint() as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ids = self.ids;
        let b = |i: usize| inputs[i].bit(0);
        let g = |i: usize| inputs[i].as_u64() as u32;
        let pkt = (b(ids.tap_pkt_valid) && b(ids.tap_pkt_ready)).then(|| g(ids.tap_pkt_conn));
        let new_data = (b(ids.tap_new_valid) && b(ids.tap_new_ready)).then(|| g(ids.tap_new_conn));
        self.clock(b(ids.rst), g(ids.ts_now), pkt, new_data);
    }
}
