//! A block's Verilog ports from its model's [`PortDef`] list: `clk` first,
//! then every port in the model's order under its group banner. Generators
//! that use it cannot declare a port the model does not have.

use std::collections::HashMap;

use mrnic_model::block::{Dir as ModelDir, PortDef};

use crate::{Module, Signal};

/// Declares `clk` and every port of `defs` on `m`; returns `clk` and the
/// ports by name.
pub fn declare(m: &mut Module, defs: &[PortDef]) -> (Signal, HashMap<String, Signal>) {
    m.group("Clock and reset");
    let clk = m.input("clk", 1, "clock, rising edge");
    (clk, declare_model_ports(m, defs, "Clock and reset"))
}

/// Declares every port of `defs` and no `clk`: for a block that is
/// combinational in the model (no register anywhere), whose `clk` would be
/// an unread input, which `verilator -Wall` and [`Module::check`] refuse.
/// [`crate::netlist::build`] connects `clk` only to modules that have one.
pub fn declare_combinational(m: &mut Module, defs: &[PortDef]) -> HashMap<String, Signal> {
    declare_model_ports(m, defs, "")
}

fn declare_model_ports(m: &mut Module, defs: &[PortDef], mut group: &str) -> HashMap<String, Signal> {
    let mut sig = HashMap::new();
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
    sig
}

/// A config a glue block cannot be built for, in the shape `gen::BLOCKS`
/// reports (the model's glue blocks have errors of their own shapes).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{field} = {value}: {why}")]
pub struct ConfigError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
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

/// The public surface every block generator has, for a block whose model
/// module is `$model` (with `NAME`), whose params type `$params` has
/// `from_config(&Config) -> Result<_, $perr>`, and whose `build(&$params)`
/// returns the module: `GenError`, `header`, `generate` and `verilog`.
#[macro_export]
macro_rules! block_api {
    ($model:path, $params:ty, $perr:ty) => {
        /// Why a block could not be generated for a config.
        #[derive(Debug, thiserror::Error)]
        pub enum GenError {
            #[error(transparent)]
            Params(#[from] $perr),
            #[error("{0}")]
            Check(#[from] $crate::CheckErrors),
        }

        /// The file header for `cfg`.
        pub fn header(cfg: &mrnic_proto::Config) -> $crate::Header {
            use $model as model;
            $crate::Header::new(
                &format!("mrnic-hdl {}, config {}", model::NAME, cfg.name),
                &format!("mrnic gen --config {} --out DIR", cfg.name),
            )
        }

        /// The module for `cfg`, design-rule checked.
        pub fn generate(cfg: &mrnic_proto::Config) -> Result<$crate::Module, GenError> {
            let p = <$params>::from_config(cfg)?;
            let m = build(&p);
            m.check()?;
            Ok(m)
        }

        /// The module printed as Verilog, with [`header`].
        pub fn verilog(cfg: &mrnic_proto::Config) -> Result<String, GenError> {
            Ok(generate(cfg)?.to_verilog(&header(cfg))?)
        }
    };
}

/// A registered memory read with `latency` cycles (1 or 2): the read
/// register, and with 2 a second one (the block RAM output register).
pub fn read_latency(
    m: &mut Module,
    mem: &crate::Mem,
    name: &str,
    en: &Signal,
    addr: impl Into<crate::Expr>,
    latency: u32,
) -> Signal {
    read_stages(m, mem, name, en, addr, latency).pop().expect("one stage at least")
}

/// [`read_latency`]'s registers, the read register first: for properties
/// that follow a word through the stages.
pub fn read_stages(
    m: &mut Module,
    mem: &crate::Mem,
    name: &str,
    en: &Signal,
    addr: impl Into<crate::Expr>,
    latency: u32,
) -> Vec<Signal> {
    let rd = m.mem_read(mem, &format!("{name}_rd"), en, addr);
    if latency == 2 {
        let pipe = m.reg_no_reset(&format!("{name}_pipe"), mem.width(), "block RAM output register (READ_LATENCY = 2)");
        m.next(crate::set(&pipe.next, &rd));
        vec![rd, pipe.q]
    } else {
        vec![rd]
    }
}
