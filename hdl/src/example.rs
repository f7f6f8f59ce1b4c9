//! A small two-module design that uses every construct of the IR. It is the
//! reference for writing a block generator, and the design the snapshot and
//! tool tests print and lint.

use crate::expr::{cat, lit, mux, repl, zext};
use crate::ir::{case, if_else, if_then, set, MemStyle, Module, ModuleSig};
use crate::param::ParamExpr;

/// A configuration the generators reject.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExampleError {
    #[error("sync_stages is {0}; a synchronizer needs at least 2 stages")]
    SyncStages(u32),
    #[error("depth is {0}; the log needs a power of two of at least 2 entries so its pointer wraps")]
    Depth(u32),
    #[error("width is {0}; counts are 1 to 32 bits")]
    Width(u32),
}

/// Configuration of [`event_log`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventLog {
    /// Bits per event count.
    pub width: u32,
    /// Log entries; a power of two.
    pub depth: u32,
    /// Synchronizer stages in front of the edge detector.
    pub sync_stages: u32,
    /// RAM resource for the log.
    pub style: MemStyle,
}

impl Default for EventLog {
    fn default() -> EventLog {
        EventLog { width: 8, depth: 16, sync_stages: 2, style: MemStyle::Block }
    }
}

/// Both modules of the design, child first.
pub fn event_log_design(cfg: &EventLog) -> Result<Vec<Module>, ExampleError> {
    let edge = edge_sync(cfg.sync_stages)?;
    let top = event_log(cfg, &edge.signature())?;
    Ok(vec![edge, top])
}

/// `edge_sync`: synchronizes a level and reports its edges, one cycle pulses.
pub fn edge_sync(sync_stages: u32) -> Result<Module, ExampleError> {
    // The same rule as the param_check below, so a bad config fails here with
    // a Rust error before any RTL exists.
    if sync_stages < 2 {
        return Err(ExampleError::SyncStages(sync_stages));
    }
    let mut m = Module::new("edge_sync");
    m.describe("synchronizes a level input and reports its rising and falling edges");
    let stages =
        m.param("SYNC_STAGES", u64::from(sync_stages), "synchronizer flip-flops in front of the edge detector");
    m.param_check("sync_stages_min", stages.expr().ge(2u32), "SYNC_STAGES must be at least 2");

    m.group("Clock and reset");
    let clk = m.input("clk", 1, "clock");
    let rst = m.input("rst", 1, "synchronous reset, active high");
    m.clock_domain(&clk, &rst);
    m.group("Level input");
    let level = m.input("level", 1, "may change at any time, asynchronous to clk");
    m.group("Edges");
    let rise = m.output("rise", 1, "level went high; one cycle per edge");
    let fall = m.output("fall", 1, "level went low; one cycle per edge");

    let sync = m.reg("sync", &stages, 0, "shift register, newest sample in bit 0");
    let prev = m.reg("prev", 1, 0, "synchronized level one cycle earlier");
    let top = sync_stages - 1;

    m.next(set(&sync.next, cat(&[sync.q.slice(top - 1, 0), level.expr()])));
    m.next(set(&prev.next, sync.q.bit(top)));
    m.comment("Registered inputs only, so an edge costs SYNC_STAGES + 1 cycles of latency.");
    m.assign(&rise, sync.q.bit(top) & !prev.q.expr());
    m.assign(&fall, !sync.q.bit(top) & &prev.q);
    Ok(m)
}

/// `event_log`: counts selected edges of an event line and logs each new
/// count in a memory that software reads back.
pub fn event_log(cfg: &EventLog, edge: &ModuleSig) -> Result<Module, ExampleError> {
    if !cfg.depth.is_power_of_two() || cfg.depth < 2 {
        return Err(ExampleError::Depth(cfg.depth));
    }
    if !(1..=32).contains(&cfg.width) {
        return Err(ExampleError::Width(cfg.width));
    }
    let w = cfg.width;
    let aw = cfg.depth.trailing_zeros();

    let mut m = Module::new("event_log");
    m.describe("counts edges of an event line and logs each new count");
    let width = m.param("WIDTH", u64::from(w), "bits per event count");
    let depth = m.param("DEPTH", u64::from(cfg.depth), "log entries; a power of two so the write pointer wraps");
    let stages = m.param("SYNC_STAGES", u64::from(cfg.sync_stages), "synchronizer stages of the event line");
    let addr_w = m.localparam("ADDR_W", depth.expr().clog2(), "log address bits");
    m.param_check(
        "depth_pow2",
        depth.expr().ge(2u32).and(depth.expr().eq(ParamExpr::Const(1) << addr_w.expr())),
        "DEPTH must be a power of two, at least 2",
    );
    m.param_check("width_range", width.expr().ge(1u32).and(width.expr().le(32u32)), "WIDTH must be 1 to 32");

    m.group("Clock and reset");
    let clk = m.input("clk", 1, "clock");
    let rst = m.input("rst", 1, "synchronous reset, active high");
    m.clock_domain(&clk, &rst);
    m.group("Event input");
    let event_in = m.input("event_in", 1, "event line, asynchronous to clk");
    let mode = m.input("mode", 2, "edges counted: 0 rising, 1 falling, 2 both, 3 none");
    m.group("Log read");
    let rd_en = m.input("rd_en", 1, "read the entry at rd_addr");
    // A port cannot use ADDR_W: Verilog-2005 declares localparams after the ports.
    let rd_addr = m.input("rd_addr", depth.expr().clog2(), "entry to read");
    let rd_data = m.output("rd_data", &width, "entry at rd_addr, one cycle after rd_en");
    m.group("Status");
    let count = m.output("count", &width, "events counted since reset; wraps");
    let wrapped = m.output("wrapped", 1, "the log has been overwritten at least once");

    let rise = m.wire("event_rise", 1, "event_in went high");
    let fall = m.wire("event_fall", 1, "event_in went low");
    let hit = m.wire("event_hit", 1, "an edge that mode selects");
    let count_r = m.reg("count", &width, 0, "events counted since reset");
    let wr_ptr = m.reg("wr_ptr", &addr_w, 0, "log entry the next event writes");
    let wrapped_r = m.reg("wrapped", 1, 0, "wr_ptr has wrapped");
    let log = m.memory("log", &width, &depth, cfg.style, "count after each event, oldest overwritten first");

    m.instance("u_edge", edge)
        .param("SYNC_STAGES", &stages)
        .connect("clk", &clk)
        .connect("rst", &rst)
        .connect("level", &event_in)
        .connect("rise", &rise)
        .connect("fall", &fall);

    m.comb(vec![
        set(&hit, lit(1, 0)),
        case(
            &mode,
            vec![
                (vec![lit(2, 0)], vec![set(&hit, &rise)]),
                (vec![lit(2, 1)], vec![set(&hit, &fall)]),
                (vec![lit(2, 2)], vec![set(&hit, &rise | &fall)]),
            ],
            Some(vec![]),
        ),
    ]);

    let new_count = count_r.q.expr() + lit(w, 1);
    m.next(if_then(
        &hit,
        vec![
            set(&count_r.next, new_count.clone()),
            set(&wr_ptr.next, wr_ptr.q.expr() + lit(aw, 1)),
            if_then(wr_ptr.q.expr().eq(lit(aw, u64::from(cfg.depth - 1))), vec![set(&wrapped_r.next, lit(1, 1))]),
        ],
    ));
    m.mem_write(&log, &hit, &wr_ptr.q, new_count);
    let rd = m.mem_read(&log, "log_rd_data", &rd_en, &rd_addr);

    m.assign(&rd_data, &rd);
    m.assign(&count, &count_r.q);
    m.assign(&wrapped, &wrapped_r.q);
    Ok(m)
}

/// `tour`: every expression and statement form the IR prints, in one small
/// module, so the tool tests lint each of them. Not a useful circuit.
pub fn tour(width: u32) -> Module {
    let w = width.max(8);
    let mut m = Module::new("tour");
    m.describe("every construct of the IR once, for the tool tests");
    let pw = m.param("W", u64::from(w), "operand bits, at least 8");
    m.param_check("w_min", pw.expr().ge(8u32), "W must be at least 8");

    m.group("Clock and reset");
    let clk = m.input("clk", 1, "clock");
    let rst = m.input("rst", 1, "synchronous reset, active high");
    m.clock_domain(&clk, &rst);
    m.group("Operands");
    let a = m.input("a", &pw, "first operand");
    let b = m.input("b", &pw, "second operand");
    let sel = m.input("sel", 2, "result select");
    let iw = crate::expr::index_bits(w);
    let idx = m.input("idx", pw.expr().clog2(), "bit index into b");
    m.group("Results");
    let sum = m.output("sum", pw.expr() + 1u32, "a + b with carry");
    let picked = m.output("picked", &pw, "operand chosen by sel");
    let flags = m.output("flags", 4, "reductions and comparisons");
    let mixed = m.output("mixed", &pw, "shifts, part selects and negation");
    let magic = m.output("magic", 1, "{a[7:0], b[7:0]} is 0xbeef");
    let stamp = m.output("stamp", &pw, "clocked in a plain always block");
    let hold = m.output("hold", &pw, "a, sampled when sel is 3");

    let held = m.reg_no_reset("held", &pw, "a sampled when sel is 3; no reset needed");
    m.next(if_then(sel.expr().eq(lit(2, 3)), vec![set(&held.next, &a)]));

    m.assign(&sum, zext(&a, w + 1) + zext(&b, w + 1));
    m.assign(&magic, cat(&[a.slice(7, 0), b.slice(7, 0)]).eq(lit(16, 0xbeef)));
    m.assign(
        &mixed,
        (((a.expr() << &idx) ^ (b.expr() >> lit(3, 1))) - (-a.expr()))
            | zext(a.expr().part(zext(cat(&[idx.bit(0), lit(2, 0)]), iw), 4), w),
    );
    m.assign(&hold, &held.q);

    m.comb(vec![if_else(
        a.expr().eq(&b),
        vec![set(
            &flags,
            cat(&[a.expr().reduce_and(), b.expr().reduce_or(), a.expr().reduce_xor(), b.expr().bit_at(&idx)]),
        )],
        vec![if_else(
            a.expr().gt(&b).logic_and(sel.bit(1).logic_not()),
            vec![set(&flags, repl(4, sel.bit(0)))],
            vec![if_else(
                a.expr().le(&b).logic_or(a.expr().ne(&b)),
                vec![set(&flags, lit(4, 5))],
                vec![set(&flags, lit(4, 0))],
            )],
        )],
    )]);

    m.comb(vec![case(
        &sel,
        vec![
            (vec![lit(2, 0), lit(2, 1)], vec![set(&picked, &a)]),
            (vec![lit(2, 2)], vec![set(&picked, &b), set(picked.lv_slice(0, 0), lit(1, 1))]),
        ],
        Some(vec![set(&picked, mux(a.expr().lt(&b), &a, &b))]),
    )]);

    m.comment("Written as a plain clocked block to exercise Module::seq.");
    m.seq(vec![if_else(
        &rst,
        vec![set(&stamp, lit(w, 0))],
        vec![if_else(a.expr().ge(&b), vec![set(&stamp, stamp.expr() + lit(w, 1))], vec![])],
    )]);
    m
}
