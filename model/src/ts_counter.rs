//! `ts_counter`: the NIC's 32-bit timestamp counter (`ts_now`), one of
//! `mrnic_core`'s glue blocks.
//!
//! # Function
//! `ts_now` counts units of `timers.ts_unit_ns`: a prescaler counts
//! [`Config::cycles_per_ts`] clock cycles per unit (7 in `small`: 100 MHz x
//! 64 ns, rounded up; 21 in `default`), so the counter runs at most as fast
//! as real time and slow by the rounding (6.4 -> 7 cycles is 9% slow in
//! `small`), never fast: an RTO never fires early. It wraps at 2^32 as the
//! reference's `ts32_now` does. Every block that stamps or times reads this
//! one counter (path_telemetry, tx_engine, the rate hint).
//!
//! `ts_hold` stops the counter (and its prescaler) while high. A NIC steps
//! its clock this way when a time source disciplines it; the vector bench
//! uses it to keep the time of a step while the step drains, because the
//! reference is untimed within a step (every answer of an event leaves at
//! the event's time).
//!
//! # Timing
//! `ts_now` is a register: it changes at the edge that ends the
//! `cycles_per_ts`-th cycle counted since the last change. After reset it
//! is 0 and the prescaler starts from 0.
//!
//! [`Config::cycles_per_ts`]: mrnic_proto::Config::cycles_per_ts

use mrnic_proto::Config;

use crate::block::{put, Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "ts_counter";
/// Width of `ts_now`.
pub const TS_BITS: u32 = 32;
/// The largest prescale the block accepts (a 16-bit prescaler).
pub const MAX_CYCLES_PER_TS: u64 = 1 << 16;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ts_counter: cycles per timestamp unit = {0}: must be in 1..=65536")]
pub struct ParamError(pub u64);

/// Sizes of one `ts_counter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsCounterParams {
    /// Clock cycles per timestamp unit.
    pub cycles_per_ts: u64,
}

impl TsCounterParams {
    pub fn from_config(cfg: &Config) -> Result<TsCounterParams, ParamError> {
        TsCounterParams::new(cfg.cycles_per_ts())
    }

    pub fn new(cycles_per_ts: u64) -> Result<TsCounterParams, ParamError> {
        if !(1..=MAX_CYCLES_PER_TS).contains(&cycles_per_ts) {
            return Err(ParamError(cycles_per_ts));
        }
        Ok(TsCounterParams { cycles_per_ts })
    }

    /// Bits of the prescaler register.
    pub fn pre_bits(&self) -> u32 {
        Config::index_bits(self.cycles_per_ts as u32)
    }
}

/// The ports, in declaration order.
pub fn ports(_p: &TsCounterParams) -> Vec<PortDef> {
    const G: &str = "Timestamp";
    vec![
        PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high: ts_now restarts from 0"),
        PortDef::input("ts_hold", 1, G, "stops the counter while high (time stepped by its source)"),
        PortDef::output("ts_now", TS_BITS, G, "timestamp in units of timers.ts_unit_ns, wraps at 2^32"),
    ]
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct TsCounter {
    p: TsCounterParams,
    ports: Vec<PortDef>,
    pre: u64,
    ts: u32,
}

impl TsCounter {
    pub fn new(p: TsCounterParams) -> TsCounter {
        TsCounter { ports: ports(&p), p, pre: 0, ts: 0 }
    }

    /// `ts_now` this cycle.
    pub fn now(&self) -> u32 {
        self.ts
    }

    /// The edge.
    pub fn clock(&mut self, rst: bool, hold: bool) {
        if rst {
            self.pre = 0;
            self.ts = 0;
        } else if !hold {
            if self.pre + 1 == self.p.cycles_per_ts {
                self.pre = 0;
                self.ts = self.ts.wrapping_add(1);
            } else {
                self.pre += 1;
            }
        }
    }
}

const RST: usize = 0;
const HOLD: usize = 1;
const NOW: usize = 2;

impl Block for TsCounter {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        put(&self.ports, outputs, NOW, self.ts as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        self.clock(inputs[RST].bit(0), inputs[HOLD].bit(0));
    }
}
