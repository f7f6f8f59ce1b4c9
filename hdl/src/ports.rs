//! A block's Verilog ports from its model's [`PortDef`] list: `clk` first,
//! then every port in the model's order under its group banner. Generators
//! that use it cannot declare a port the model does not have.

use std::collections::HashMap;

use mrnic_model::block::{Dir as ModelDir, PortDef};

use crate::{Module, Signal};

/// Declares `clk` and every port of `defs` on `m`; returns `clk` and the
/// ports by name.
pub fn declare(m: &mut Module, defs: &[PortDef]) -> (Signal, HashMap<String, Signal>) {
    let mut sig = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for d in defs {
        if d.group != group {
            group = d.group;
            m.group(group);
        }
        let s = match d.dir {
            ModelDir::In => m.input(&d.name, d.width, &d.comment),
            ModelDir::Out => m.output(&d.name, d.width, &d.comment),
        };
        sig.insert(d.name.clone(), s);
    }
    (clk, sig)
}

/// Packs named values into one vector, first field lowest, in `fields`
/// order (a FIFO entry or a pipeline register).
pub fn pack(fields: &[(&'static str, u32, &'static str)], value: impl Fn(&str) -> crate::Expr) -> crate::Expr {
    let parts: Vec<crate::Expr> = fields.iter().rev().map(|(n, _, _)| value(n)).collect();
    crate::cat(&parts)
}

/// Bit offsets of `fields` packed by [`pack`]: name -> (lsb, width).
pub fn offsets(fields: &[(&'static str, u32, &'static str)]) -> HashMap<&'static str, (u32, u32)> {
    let mut off = HashMap::new();
    let mut o = 0;
    for (n, w, _) in fields {
        off.insert(*n, (o, *w));
        o += w;
    }
    off
}
