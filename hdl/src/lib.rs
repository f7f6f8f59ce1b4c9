//! mrnic RTL generator: a typed Verilog-2005 IR, its design-rule checks and
//! its one printer.
//!
//! A block generator is a Rust function from a config to a [`Module`]. It
//! declares parameters, ports, wires, registers and memories through the
//! builder, connects them with [`Expr`]essions, and prints with
//! [`Module::to_verilog`], which runs [`Module::check`] first. Widths are
//! concrete integers computed from the config; parameters are printed for
//! documentation and instance overrides, and a [`Size`] made from a
//! [`Param`] prints as `[NAME-1:0]`.
//!
//! ```
//! use mrnic_hdl::*;
//!
//! let mut m = Module::new("credit_counter");
//! let w = m.param("CREDIT_W", 8, "credit counter bits");
//! m.group("Clock and reset");
//! let clk = m.input("clk", 1, "clock");
//! let rst = m.input("rst", 1, "synchronous reset, active high");
//! m.clock_domain(&clk, &rst);
//! m.group("Credit events");
//! let grant = m.input("grant", 1, "the peer returned one credit");
//! let spend = m.input("spend", 1, "a packet used one credit");
//! m.group("Status");
//! let credits = m.output("credits", &w, "credits available");
//!
//! // credit_reg / credit_next; the next-state block starts with
//! // `credit_next = credit_reg`, so only changes are written here.
//! let credit = m.reg("credit", &w, 4, "credits available");
//! let one = lit(8, 1);
//! m.next(if_else(
//!     grant.expr().logic_and(spend.expr().logic_not()),
//!     vec![set(&credit.next, credit.q.expr() + one.clone())],
//!     vec![if_then(
//!         spend.expr().logic_and(grant.expr().logic_not()),
//!         vec![set(&credit.next, credit.q.expr() - one)],
//!     )],
//! ));
//! m.assign(&credits, &credit.q);
//!
//! let v = m
//!     .to_verilog(&Header::new("credit_counter example", "cargo test --doc"))
//!     .unwrap();
//! assert!(v.contains("reg  [CREDIT_W-1:0] credit_reg, credit_next;"));
//! ```
//!
//! The rules [`Module::check`] enforces (each failure is a [`CheckError`]
//! naming the module and net):
//! - widths agree exactly: assignment targets, port connections, memory
//!   ports, and the operands of `+ - * & | ^` and comparisons; extend with
//!   [`zext`] or select with [`Expr::slice`], Verilog would do it silently;
//!   a variable index (`x[i]`, `x[i +: n]`, a memory address) is exactly
//!   [`index_bits`]`(width)` bits, as Verilator's WIDTH lint wants;
//! - every bit of every net has exactly one driver: one always block, or
//!   assigns and instance outputs on disjoint bits; inputs are never driven;
//! - no combinational loop through assigns, `always @*` blocks and instances
//!   (registers and memories break loops);
//! - an `always @*` block assigns everything it writes on every path, and a
//!   `case` has a `default` unless its labels cover every value;
//! - every bit of every non-output net and every parameter is used;
//! - names are legal identifiers (no `$`, no reserved words) and unique;
//!   parameter rules ([`Module::param_check`]) hold.
//!
//! Parameter rules print as a Verilog-2005 elaboration guard: a generate-if
//! that instantiates a module which does not exist
//! (`illegal_parameter_combination_<label>`) when the rule fails, so an
//! instance overridden into an illegal combination stops Verilator, Icarus
//! and Yosys. `$error` would need SystemVerilog.
//!
//! Conventions the printer follows: a header naming the generator and the
//! regenerate command, `` `resetall `` / `` `timescale 1ns / 1ps `` /
//! `` `default_nettype none ``, ANSI ports grouped under `/* banner */`
//! comments, one `always @*` next-state block and one `always @(posedge clk)`
//! register block with `if (rst)` last, memories with both vendors' RAM
//! style attributes on one line and a registered read (one cycle latency),
//! two-space indentation, and no `initial` blocks.
//!
//! Formal properties ([`Module::assert`], [`Module::assume`],
//! [`Module::cover`]) and their ghost logic ([`Module::formal_wire`],
//! [`Module::past`], [`Module::formal_anyconst`]) print inside
//! `` `ifdef FORMAL ``, so synthesis and simulators never see them; the
//! checks keep design and formal nets apart. [`formal`] has the interface
//! rules every block reuses, [`proof`] runs SymbiYosys on them
//! (`scripts/formal`, `docs/verification.md`).
//!
//! See [`example`]: `event_log_design` is a two-module design (a register
//! block, a memory, an instance with a parameter override) and `tour` uses
//! every remaining expression and statement form. Both are snapshotted under
//! `tests/snapshots/` and run through Verilator, Icarus and Yosys by
//! `tests/tools.rs`.

pub mod check;
pub mod conn_search;
pub mod conn_table;
pub mod cpl_engine;
pub mod cqe_merge;
pub mod csr;
pub mod dma_write_engine;
pub mod enable_gate;
pub mod example;
pub mod expr;
pub mod formal;
pub mod gen;
pub mod ir;
pub mod mr_check;
pub mod mrnic_core;
pub mod msg_check;
pub mod mutants;
pub mod netlist;
pub mod op_map;
pub mod param;
pub mod path_selector;
pub mod path_telemetry;
pub mod ports;
pub mod print;
pub mod probe_walk;
pub mod proof;
pub mod rate_hint;
pub mod recv_match;
pub mod rx_buffer;
pub mod rx_ctl;
pub mod rx_drop_or;
pub mod rx_parser;
pub mod sack_gen;
pub mod ts_counter;
pub mod tx_engine;

pub use check::{CheckError, CheckErrors};
pub use expr::{cat, index_bits, lit, mux, repl, zext, BinOp, Expr, LValue, Signal, UnOp, WidthError};
pub use ir::{
    case, if_else, if_then, set, CaseArm, Dir, Instance, Mem, MemStyle, Module, ModuleSig, PortSig, PropKind, Property,
    Reg, Stmt,
};
pub use param::{Param, ParamExpr, ParamOp, Size};
pub use print::{expr_string, Header};
