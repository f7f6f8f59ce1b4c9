//! `op_map` RTL: the generator of the glue block [`mrnic_model::op_map`],
//! with the model's ports and its timing: combinational, so the module has
//! no `clk` (see [`crate::ports::declare_combinational`]). The map is a
//! case over every 4-bit opcode, each label's value taken from the model's
//! [`op_of`], so the two cannot differ.

use mrnic_model::op_map::{self as model, op_of};
use mrnic_proto::Config;

use crate::expr::lit;
use crate::ir::{case, set, Module};
use crate::ports::{declare_combinational, ConfigError};

/// No sizes: the block is the same for every config.
pub struct Params;

impl Params {
    pub fn from_config(_cfg: &Config) -> Result<Params, ConfigError> {
        Ok(Params)
    }
}

crate::block_api!(mrnic_model::op_map, Params, ConfigError);

fn build(_p: &Params) -> Module {
    let mut m = Module::new(model::NAME);
    m.describe("rx_parser's opcode to conn_table's lookup class: 0 DATA, 1 PROBE, 2 SACK or NACK, 3 undefined");
    let sig = declare_combinational(&mut m, &model::ports());
    let (opcode, op) = (&sig["opcode"], &sig["op"]);
    let ow = opcode.width();
    let arms = (0..1u64 << ow).map(|c| (vec![lit(ow, c)], vec![set(op, lit(op.width(), u64::from(op_of(c as u8))))]));
    m.comb(vec![case(opcode, arms.collect(), None)]);
    m
}
