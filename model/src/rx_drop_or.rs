//! `rx_drop_or`: folds rx_parser's drop pulses into the csr's two receive
//! error counters, one of `mrnic_core`'s glue blocks.
//!
//! The reference counts a datagram whose ICRC is wrong in `rx_bad_icrc` and
//! every other datagram it cannot decode in `rx_decode_error`. rx_parser
//! reports one of [`Reason::ALL`] per dropped frame; the ICRC reason goes to
//! `stat_rx_bad_icrc` by a wire, and this block ORs the other fourteen
//! (the MAC and stream faults the reference never sees, since it is handed
//! whole UDP datagrams, included: they are frames the NIC could not decode)
//! into `stat_rx_decode_error`. The parser raises at most one pulse per
//! cycle, so the OR loses no count. Its per-reason pulses stay visible to a
//! probe of the netlist.
//!
//! # Timing
//! Combinational: the output follows the inputs in the same cycle (the csr
//! registers its counters, so no path leaves the top unregistered).

use crate::block::{put, Bits, Block, PortDef};
use crate::rx_parser::Reason;

/// Module name, shared with the Verilog.
pub const NAME: &str = "rx_drop_or";

/// The reasons this block ORs: every one but the ICRC's.
pub fn reasons() -> impl Iterator<Item = Reason> {
    Reason::ALL.into_iter().filter(|r| *r != Reason::Icrc)
}

/// The ports, in declaration order: one input per reason of [`reasons`],
/// named like rx_parser's output, then the OR.
pub fn ports() -> Vec<PortDef> {
    let mut v: Vec<PortDef> = reasons()
        .map(|r| PortDef::input(format!("stat_drop_{}", r.name()), 1, "Drop pulses (rx_parser)", "one-cycle pulse"))
        .collect();
    v.push(PortDef::output(
        "stat_rx_decode_error",
        1,
        "Counter pulse (csr)",
        "a frame was dropped for any reason but its ICRC",
    ));
    v
}

/// The block (no state).
#[derive(Debug, Clone)]
pub struct RxDropOr {
    ports: Vec<PortDef>,
}

impl Default for RxDropOr {
    fn default() -> RxDropOr {
        RxDropOr { ports: ports() }
    }
}

impl Block for RxDropOr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let n = self.ports.len() - 1;
        let any = inputs[..n].iter().any(|b| b.bit(0));
        put(&self.ports, outputs, n, any as u64);
    }

    fn tick(&mut self, _inputs: &[Bits]) {}
}
