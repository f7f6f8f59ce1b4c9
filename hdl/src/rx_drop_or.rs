//! `rx_drop_or` RTL: the generator of the glue block
//! [`mrnic_model::rx_drop_or`], with the model's ports and its timing:
//! combinational, so the module has no `clk` (an unread clock input would
//! fail `verilator -Wall`; see [`crate::ports::declare_combinational`]).

use mrnic_model::rx_drop_or as model;
use mrnic_proto::Config;

use crate::expr::cat;
use crate::ir::Module;
use crate::ports::{declare_combinational, ConfigError};

/// No sizes: the block is the same for every config.
pub struct Params;

impl Params {
    pub fn from_config(_cfg: &Config) -> Result<Params, ConfigError> {
        Ok(Params)
    }
}

crate::block_api!(mrnic_model::rx_drop_or, Params, ConfigError);

fn build(_p: &Params) -> Module {
    let mut m = Module::new(model::NAME);
    m.describe("rx_parser's drop pulses but the ICRC's, ORed into csr's stat_rx_decode_error");
    let defs = model::ports();
    let sig = declare_combinational(&mut m, &defs);
    let pulses: Vec<_> = model::reasons().map(|r| sig[&format!("stat_drop_{}", r.name())].expr()).collect();
    m.assign(&sig["stat_rx_decode_error"], cat(&pulses).reduce_or());
    m
}
