//! `op_map`: every 4-bit opcode to conn_table's class, through the ports,
//! against proto's opcode list.

use mrnic_model::block::{zero_values, Bits, Block};
use mrnic_model::conn_table::{OP_ACK, OP_DATA, OP_PROBE};
use mrnic_model::op_map::*;
use mrnic_proto::Opcode;

#[test]
fn every_opcode_maps_to_its_lookup_class() {
    let mut b = OpMap::default();
    let ports = b.ports().to_vec();
    for code in 0u8..16 {
        let mut v = zero_values(&ports);
        v[0] = Bits::from_u64(4, code as u64);
        let mut out = v.clone();
        b.eval(&v, &mut out);
        let want = match Opcode::from_u8(code) {
            Some(Opcode::Write) | Some(Opcode::WriteImm) | Some(Opcode::Send) | Some(Opcode::SendImm) => OP_DATA,
            Some(Opcode::Probe) => OP_PROBE,
            Some(Opcode::Sack) | Some(Opcode::Nack) => OP_ACK,
            None => OP_NONE,
        };
        assert_eq!(out[1].as_u64() as u32, want, "opcode {code}");
    }
    assert_eq!(op_of(Opcode::Sack as u8), 2);
    assert_eq!(op_of(Opcode::Probe as u8), 1);
    assert_eq!(op_of(Opcode::Send as u8), 0);
}
