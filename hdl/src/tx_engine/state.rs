//! `tx_state`: what `tx_engine` holds between its units, one module that
//! the assembly ([`super::assembly`]) wires to every unit by port name:
//! the clear sweep, the input registers, the places where several units'
//! outputs meet one input, and (to come) the stores of
//! docs/architecture.md's store map.
//!
//! Its ports are not written here: [`super::assembly::state_ports`]
//! derives them from what the units leave open (an output
//! `<unit>_<port>` per undriven unit input, an input per unit output), so
//! this generator drives exactly the inputs the units have. **Work in
//! progress**: an output no piece drives yet is tied to 0 and named in
//! [`Built::pending`]; the assembly becomes `gen::BLOCKS`' `tx_engine` row
//! when that list is empty and its lockstep against the model passes.
//!
//! Built so far, each the model's (`mrnic_model::tx_engine`) behaviour
//! restated as hardware:
//! - **The clear sweep**: after `rst` the engine takes nothing for
//!   `sweep_cycles` (`CONNS x PATHS x tx_ring_depth`) cycles, a word of the
//!   largest memory a cycle; `run` (`en` of the units that have one) rises
//!   after it.
//! - **The input registers** `s_rto`, `s_upd`, `s_sack`, `s_nack`: ready
//!   while empty and running; a record is seen by the acknowledgement
//!   unit in its handshake's cycle (the model loads its registers before
//!   the unit's turn), and leaves when the unit's step takes it
//!   (`m_go_*`).
//! - **The handler's busy count** into `tx_ack`: the started handler's
//!   (each unit's `m_busy` is 0 without its step, and one step starts a
//!   cycle).

use std::collections::{BTreeSet, HashMap};

use mrnic_model::block::{Dir, PortDef};
use mrnic_model::tx_engine::TxEngineParams;

use crate::expr::index_bits;
use crate::ir::set;
use crate::{cat, lit, mux, Expr, Module, Signal};

/// Module name.
pub const NAME: &str = "tx_state";

/// The generated module and the outputs it does not drive yet.
pub struct Built {
    pub module: Module,
    /// Outputs tied to 0 because no piece drives them yet.
    pub pending: Vec<String>,
}

/// The module being built: its ports by name and what has been driven and
/// read, so that the rest can be tied off and sunk at the end.
struct S {
    m: Module,
    sig: HashMap<String, Signal>,
    defs: Vec<PortDef>,
    driven: BTreeSet<String>,
    read: BTreeSet<String>,
}

impl S {
    /// Input `name`, marked read.
    fn i(&mut self, name: &str) -> Signal {
        let s = self.sig.get(name).unwrap_or_else(|| panic!("tx_state has no port {name}")).clone();
        self.read.insert(name.to_string());
        s
    }

    fn has(&self, name: &str) -> bool {
        self.sig.contains_key(name)
    }

    fn width(&self, name: &str) -> u32 {
        self.defs.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("tx_state has no port {name}")).width
    }

    /// Drives output `name` with `e`, cut or zero-extended to its width.
    fn o(&mut self, name: &str, e: impl Into<Expr>, from_width: u32) {
        let w = self.width(name);
        let e: Expr = e.into();
        let e = if from_width > w {
            // A field the unit takes narrower: its low bits (the high ones
            // are bits the unit has no use for, such as the actions that
            // are path_telemetry's own).
            let full = self.m.wire_from(&format!("{name}_full"), from_width, "before the cut to the port", e);
            let high = format!("{}_{name}_high", crate::check::UNUSED_SINK);
            self.m.wire_from(&high, from_width - w, "bits the unit does not take", full.slice(from_width - 1, w));
            full.slice(w - 1, 0)
        } else if from_width < w {
            cat(&[lit(w - from_width, 0), e])
        } else {
            e
        };
        let s = self.sig[name].clone();
        self.m.assign(&s, e);
        assert!(self.driven.insert(name.to_string()), "tx_state drives {name} twice");
    }

    /// The names of the ports of `dir` that start with `prefix`, with the
    /// prefix cut off.
    fn fields(&self, prefix: &str, dir: Dir) -> Vec<String> {
        self.defs
            .iter()
            .filter(|d| d.dir == dir)
            .filter_map(|d| d.name.strip_prefix(prefix).map(str::to_string))
            .collect()
    }
}

/// `tx_state` for `p`, with the ports [`super::assembly::state_ports`] gives.
pub fn build(p: &TxEngineParams, defs: &[PortDef]) -> Built {
    let mut m = Module::new(NAME);
    m.describe("tx_engine state: the clear sweep, the input registers, where units meet (work in progress)");
    let (clk, sig) = crate::ports::declare(&mut m, defs);
    m.clock_domain(&clk, &sig["rst"]);
    let mut s = S { m, sig, defs: defs.to_vec(), driven: BTreeSet::new(), read: BTreeSet::new() };

    let run = sweep(&mut s, p);
    for (ch, unit) in [("rto", "rto"), ("upd", "rto"), ("sack", "sack"), ("nack", "nack")] {
        input_register(&mut s, ch, unit, &run);
    }
    busy(&mut s);

    finish(s)
}

/// The clear sweep; returns `run` (the sweep is over) and drives the
/// units' `en` and `tx_ack`'s `s_run`.
fn sweep(s: &mut S, p: &TxEngineParams) -> Signal {
    let cycles = p.conns * p.paths * p.ring_depth;
    let ab = index_bits(cycles + 1);
    let rst = s.i("rst");
    let init = s.m.reg("init", 1, 1, "the clear sweep runs (from rst)");
    let addr = s.m.reg("init_addr", ab, 0, "cycles of the sweep so far");
    let last = addr.q.expr().eq(lit(ab, u64::from(cycles - 1)));
    s.m.next(crate::ir::if_then(
        &init.q,
        vec![set(&addr.next, addr.q.expr() + lit(ab, 1)), crate::ir::if_then(last, vec![set(&init.next, lit(1, 0))])],
    ));
    let run = s.m.wire_from("run", 1, "the sweep is over: the engine takes inputs", init.q.expr().logic_not());
    let en = s.m.wire_from("en", 1, "the engine runs this cycle", run.expr().logic_and(rst.expr().logic_not()));
    for u in ["post", "open", "out"] {
        s.o(&format!("{u}_en"), &en, 1);
    }
    s.o("ack_s_run", &en, 1);
    run
}

/// Input register `s_<ch>_*`: its ready, the record's presence for
/// `tx_ack` (`s_<ch>`) and its fields for the handler `unit`
/// (`<unit>_s_<ch>_<field>`, cut to the unit's width where it takes
/// fewer bits: the actions the handlers act on are the low ones).
fn input_register(s: &mut S, ch: &str, unit: &str, run: &Signal) {
    let fields: Vec<String> = s.fields(&format!("s_{ch}_"), Dir::In).into_iter().filter(|f| f != "valid").collect();
    let valid = s.i(&format!("s_{ch}_valid"));
    let held = s.m.reg(&format!("{ch}_held"), 1, 0, "the input register holds a record");
    let ready = s.m.wire_from(
        &format!("{ch}_ready"),
        1,
        "the register is empty",
        run.expr().logic_and(held.q.expr().logic_not()),
    );
    s.o(&format!("s_{ch}_ready"), &ready, 1);
    let accept = s.m.wire_from(&format!("{ch}_accept"), 1, "a record is taken", valid.expr().logic_and(&ready));
    // Seen in its handshake's cycle: the model loads the register before
    // the acknowledgement unit's turn reads it.
    let has = s.m.wire_from(&format!("{ch}_has"), 1, "a record is held or arriving", held.q.expr().logic_or(&accept));
    let take = s.i(&format!("ack_m_go_{ch}"));
    s.m.next(set(&held.next, has.expr().logic_and(take.expr().logic_not())));
    s.o(&format!("ack_s_{ch}"), &has, 1);
    for f in fields {
        let inp = s.i(&format!("s_{ch}_{f}"));
        let w = s.width(&format!("s_{ch}_{f}"));
        let r = s.m.reg_no_reset(&format!("{ch}_{f}_q"), w, "the held record's field");
        s.m.next(set(&r.next, mux(&accept, inp.expr(), r.q.expr())));
        let out = format!("{unit}_s_{ch}_{f}");
        if s.has(&out) {
            let v = s.m.wire_from(&format!("{ch}_{f}"), w, "the record's field", mux(&held.q, r.q.expr(), inp.expr()));
            s.o(&out, &v, w);
        }
    }
}

/// `tx_ack`'s `s_busy`: the count the started handler sets.
fn busy(s: &mut S) {
    let w = s.width("ack_s_busy");
    let mut e = lit(w, 0);
    for u in ["rto", "nack", "sack", "stage"] {
        e = e | s.i(&format!("{u}_m_busy")).expr();
    }
    s.o("ack_s_busy", e, w);
}

/// Ties every output not driven yet to 0 and sinks every input not read.
fn finish(mut s: S) -> Built {
    let mut pending = Vec::new();
    for d in s.defs.clone().iter().filter(|d| d.dir == Dir::Out) {
        if !s.driven.contains(&d.name) {
            pending.push(d.name.clone());
            let sg = s.sig[&d.name].clone();
            s.m.assign(&sg, lit(d.width, 0));
        }
    }
    let unread: Vec<Expr> = s
        .defs
        .iter()
        .filter(|d| d.dir == Dir::In && d.name != "rst" && !s.read.contains(&d.name))
        .map(|d| s.sig[&d.name].expr())
        .collect();
    if !unread.is_empty() {
        let sink = format!("{}_inputs", crate::check::UNUSED_SINK);
        s.m.wire_from(&sink, 1, "inputs no piece reads (yet)", cat(&unread).reduce_xor());
    }
    Built { module: s.m, pending }
}
