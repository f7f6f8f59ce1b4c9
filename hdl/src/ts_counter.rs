//! `ts_counter` RTL: the generator of the glue block
//! [`mrnic_model::ts_counter`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing: `ts_now` is a register that steps once
//! every `CYCLES_PER_TS` cycles not held by `ts_hold`, its prescaler a
//! register of its own.

use mrnic_model::ts_counter::{self as model, TsCounterParams, MAX_CYCLES_PER_TS, TS_BITS};
use mrnic_proto::Config;

use crate::expr::lit;
use crate::ir::{if_else, if_then, set, Module};
use crate::ports::{declare, ConfigError};

/// The model's sizes, refused in the shape `gen::BLOCKS` reports.
pub struct Params(TsCounterParams);

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ConfigError> {
        TsCounterParams::from_config(cfg).map(Params).map_err(|e| ConfigError {
            field: "timers.ts_unit_ns",
            value: e.0,
            why: format!("needs {} clock cycles per timestamp unit; the prescaler takes 1..={MAX_CYCLES_PER_TS}", e.0),
        })
    }
}

crate::block_api!(mrnic_model::ts_counter, Params, ConfigError);

fn build(p: &Params) -> Module {
    let p = &p.0;
    let pb = p.pre_bits();
    let mut m = Module::new(model::NAME);
    m.describe("the NIC's timestamp counter ts_now, in units of timers.ts_unit_ns");
    let cyc = m.param("CYCLES_PER_TS", p.cycles_per_ts, "clock cycles per timestamp unit (1..65536)");
    m.param_check(
        "cycles_per_ts",
        cyc.expr().ge(1u32).and(cyc.expr().le(MAX_CYCLES_PER_TS)),
        "CYCLES_PER_TS must be in 1..65536",
    );
    let (clk, sig) = declare(&mut m, &model::ports(p));
    let rst = sig["rst"].clone();
    m.clock_domain(&clk, &rst);

    let pre = m.reg("pre", pb, 0, "cycles counted in the current timestamp unit");
    let ts = m.reg("ts", TS_BITS, 0, "ts_now");
    m.next(if_then(
        sig["ts_hold"].expr().logic_not(),
        vec![if_else(
            pre.q.expr().eq(lit(pb, p.cycles_per_ts - 1)),
            vec![set(&pre.next, lit(pb, 0)), set(&ts.next, ts.q.expr() + lit(TS_BITS, 1))],
            vec![set(&pre.next, pre.q.expr() + lit(pb, 1))],
        )],
    ));
    m.assign(&sig["ts_now"], &ts.q);
    m
}
