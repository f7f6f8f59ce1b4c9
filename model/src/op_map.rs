//! `op_map`: rx_parser's transport opcode to conn_table's lookup `op`, one
//! of `mrnic_core`'s glue blocks.
//!
//! conn_table answers a lookup by class: DATA (WRITE, WRITE_IMM, SEND,
//! SEND_IMM: 0), PROBE (1), SACK or NACK (2). rx_parser hands on only the
//! seven opcodes proto defines (any other is dropped as `opcode`), so the
//! fourth code, 3, is never produced from a parsed header; conn_table would
//! treat it as 2 (a lookup with no answer of its own).
//!
//! # Timing
//! Combinational (a 4-to-2 bit map between two registered stages).

use mrnic_proto::Opcode;

use crate::block::{put, Bits, Block, PortDef};
use crate::conn_table::{OP_ACK, OP_DATA, OP_PROBE};

/// Module name, shared with the Verilog.
pub const NAME: &str = "op_map";
/// The code of an opcode proto does not define.
pub const OP_NONE: u32 = 3;

/// The map.
pub fn op_of(opcode: u8) -> u32 {
    match Opcode::from_u8(opcode) {
        Some(Opcode::Write | Opcode::WriteImm | Opcode::Send | Opcode::SendImm) => OP_DATA,
        Some(Opcode::Probe) => OP_PROBE,
        Some(Opcode::Sack | Opcode::Nack) => OP_ACK,
        None => OP_NONE,
    }
}

/// The ports, in declaration order.
pub fn ports() -> Vec<PortDef> {
    vec![
        PortDef::input("opcode", 4, "Map", "transport opcode (rx_parser m_hdr_opcode)"),
        PortDef::output("op", 2, "Map", "0 DATA, 1 PROBE, 2 SACK or NACK (conn_table s_lk_op)"),
    ]
}

/// The block (no state).
#[derive(Debug, Clone)]
pub struct OpMap {
    ports: Vec<PortDef>,
}

impl Default for OpMap {
    fn default() -> OpMap {
        OpMap { ports: ports() }
    }
}

impl Block for OpMap {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        put(&self.ports, outputs, 1, op_of(inputs[0].as_u64() as u8) as u64);
    }

    fn tick(&mut self, _inputs: &[Bits]) {}
}
