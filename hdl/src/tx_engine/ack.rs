//! The acknowledgement unit's control of `tx_engine` as a clocked unit
//! (`tx_ack`): which piece of work starts each cycle, its busy count and
//! the count's release, the due checks of its two timer queues' heads, the
//! RNR tag counter and the tail-timer scanner, with the cycle timing of the
//! model ([`mrnic_model::tx_engine`]: the unit's branch in `clock`,
//! `ack_step`, `ack_work`, `tail_work`, the scanner, and the places
//! outside the unit that raise its count: `fail`, `open`).
//!
//! # Interface with the rest of the engine
//! - **The turn.** Each cycle the busy count (`m_busy`, from a register)
//!   is first raised to `PATHS x tx_ring_depth` if the scheduler's commit
//!   failed a connection this cycle (`s_hold_pre`). If it is then not 0
//!   the unit counts it down and nothing starts. At 0 (`m_free`, which is
//!   `tx_walk`'s `ack_free`) the unit's events and its completion walk go
//!   first (`s_pend_evt`, `s_walk`: `m_drain`, the turn is theirs); else,
//!   with the scheduler idle after its own turn (`s_sched_idle`), one
//!   step may start.
//! - **The step** is the first of, in the model's order: an `m_rto`
//!   record (`s_rto`), an update (`s_upd`), a SACK's next stage
//!   (`s_cont_valid`; when it waits for path_telemetry's answers,
//!   `s_cont_wait`, only once `s_tel_settled`, and until then nothing
//!   below it starts), a SACK (`s_sack`), a NACK (`s_nack`), the RNR
//!   queue's head when due (`s_rnr_valid`, deadline `s_rnr_until`), the
//!   window-probe queue's head when due (`s_wp_valid`, `s_wp_at`), the
//!   tail-timer hit. `s_rto` .. `s_nack` are the input registers as they
//!   stand after this edge's load. Exactly one `m_go_*` is high in a step
//!   cycle; the handler it names does its work (reads, writes, events)
//!   outside, and tells the busy count it sets on `s_busy` in that cycle
//!   (0 if it sets none). The unit's own three (`m_go_rnr`, `m_go_wp`,
//!   `m_go_tail`: pop the head and act on it if its tag or deadline still
//!   holds; serve the hit if still due) count 1. The count becomes
//!   `max(s_busy, 1) + L`: the step's reads answer `L` cycles after it
//!   starts (architecture.md, tx_engine item 4).
//! - **After the turn** a reopen's ring clear raises the count to
//!   `tx_ring_depth` (`s_hold_open`) and the output stage's failed read
//!   to `PATHS x tx_ring_depth` (`s_hold_fail`).
//! - **The RNR tag** a back-off started this cycle gets is `m_rnr_tag`; a
//!   push (`s_rnr_push`, only in a NACK's step) moves it on (32 bits,
//!   wrapping, as the model's). `m_timer_at` is `ts_now + rto_min`, the
//!   deadline a push into either queue writes this cycle.
//! - **The tail scanner** compares one connection per cycle
//!   (`m_tail_scan`, round robin) whenever no hit waits after the turn:
//!   the engine answers whether its timer is due on `s_tail_due` in that
//!   cycle (the connection's state after the cycle's step), and a due one
//!   becomes the hit (`m_tail_hit_valid`), served by `m_go_tail`
//!   (`m_tail_conn`).
//! - **The queues' storage** stays outside (the engine's FIFOs; their
//!   depth is not decided, architecture.md, tx_engine item 3): the unit
//!   sees each head's valid and deadline and pops with its `m_go_*`.
//!   A window probe pushed this cycle is not at the head the due check
//!   sees when the queue was empty; it could not be due anyway, its
//!   deadline being `rto_min` (at least 1) ahead.
//!
//! While `s_run` is low (the clear sweep) nothing moves; `rst` empties
//! the count, the hit, the scanner and the tag.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::Consts;
use mrnic_model::tx_engine::TxEngineParams;

use crate::expr::{lit, mux, Expr};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_ack";

const RST: &str = "Clock and reset";
const TURN: &str = "The unit's turn";
const WORK: &str = "Work waiting, in priority order";
const STEP: &str = "The step started";
const HOLD: &str = "Holds from outside the unit";
const TIMERS: &str = "Timer queues and the tail scanner";

/// The steps in priority order: port suffix and what it starts.
pub const GOES: [(&str, &str); 8] = [
    ("rto", "an m_rto record is acted on (on_rto)"),
    ("upd", "an update is acted on (on_upd)"),
    ("stage", "a SACK's next stage (sack_stage)"),
    ("sack", "a SACK's first pass (on_sack)"),
    ("nack", "a NACK (on_nack)"),
    ("rnr", "the RNR queue's head is popped and, tag matching, its packet re-queued"),
    ("wp", "the window-probe queue's head is popped and, still armed, a PROBE queued"),
    ("tail", "the tail-timer hit is served (its connection's stages start if still due)"),
];

/// Bits of the busy count: a handler sets at most `2 + 2 x
/// tx_ring_depth` (a SACK's two passes) or `1 + PATHS x tx_ring_depth` (a
/// stage's ring reads; a failure's ring clear is `PATHS x
/// tx_ring_depth`), and the step adds `L`.
pub fn busy_bits(p: &TxEngineParams) -> u32 {
    let r = u64::from(p.ring_depth);
    let most = (2 + 2 * r).max(1 + u64::from(p.paths) * r) + u64::from(p.read_latency);
    64 - most.leading_zeros()
}

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, bb) = (p.conn_bits, busy_bits(p));
    let i = |n: &str, w: u32, g: &'static str, c: &str| PortDef::input(n, w, g, c);
    let o = |n: &str, w: u32, g: &'static str, c: &str| PortDef::output(n, w, g, c);
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("s_run", 1, RST, "the engine is out of its clear sweep (nothing moves during it)"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_hold_pre", 1, TURN, "the commit failed a connection this cycle: count at least PATHS x tx_ring_depth"),
        o("m_busy", bb, TURN, "the busy count (cycles the current step still holds the unit)"),
        o("m_free", 1, TURN, "the count is 0 at the turn: the walk may step (tx_walk's ack_free)"),
        i("s_pend_evt", 1, TURN, "the unit's events wait for the event FIFO"),
        i("s_walk", 1, TURN, "a completion walk runs"),
        o("m_drain", 1, TURN, "the turn goes to the unit's events and walk"),
        i("s_sched_idle", 1, TURN, "the scheduler is idle after its own turn: a step may start"),
        i("s_rto", 1, WORK, "the m_rto input register holds a record"),
        i("s_upd", 1, WORK, "the update input register holds one"),
        i("s_cont_valid", 1, WORK, "a SACK is between its stages"),
        i("s_cont_wait", 1, WORK, "its next stage waits for path_telemetry's answers"),
        i("s_tel_settled", 1, WORK, "path_telemetry has answered every event sent"),
        i("s_sack", 1, WORK, "the SACK input register holds one"),
        i("s_nack", 1, WORK, "the NACK input register holds one"),
        i("s_rnr_valid", 1, WORK, "the RNR queue is not empty"),
        i("s_rnr_until", 32, WORK, "its head's deadline"),
        i("s_wp_valid", 1, WORK, "the window-probe queue is not empty"),
        i("s_wp_at", 32, WORK, "its head's deadline"),
    ];
    for (g, c) in GOES {
        v.push(o(&format!("m_go_{g}"), 1, STEP, c));
    }
    v.extend([
        i("s_busy", bb, STEP, "the busy count the started handler sets (rto .. nack; 0 if none)"),
        i("s_hold_open", 1, HOLD, "after the turn, a reopen's ring clear: count at least tx_ring_depth"),
        i("s_hold_fail", 1, HOLD, "after the turn, a failure: count at least PATHS x tx_ring_depth"),
        o("m_rnr_tag", 32, TIMERS, "the tag an RNR back-off started this cycle gets"),
        i("s_rnr_push", 1, TIMERS, "a NACK's step pushes an RNR back-off (tag m_rnr_tag)"),
        o("m_timer_at", 32, TIMERS, "ts_now + rto_min: the deadline a push into either queue writes"),
        o("m_tail_scan", cb, TIMERS, "the connection the scanner compares this cycle"),
        i("s_tail_due", 1, TIMERS, "m_tail_scan's tail timer is due (after this cycle's step)"),
        o("m_tail_hit_valid", 1, TIMERS, "a due tail timer waits for the unit"),
        o("m_tail_conn", cb, TIMERS, "its connection, with m_go_tail (0 otherwise)"),
    ]);
    v
}

/// `now` at or after `deadline`, 32-bit wrapping (`ts_reached`): the
/// difference, as a signed number, is not negative.
fn reached(now: Expr, deadline: Expr) -> Expr {
    (now - deadline).lt(lit(32, 1 << 31))
}

/// The larger of two equal-width values.
fn max(a: Expr, b: Expr) -> Expr {
    mux(a.clone().lt(b.clone()), b, a)
}

/// The `tx_ack` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, bb) = (p.conn_bits, busy_bits(p));
    let k = Consts::from_config(&p.cfg);
    let pr = u64::from(p.paths) * u64::from(p.ring_depth);

    let mut m = Module::new(NAME);
    m.describe("tx_engine acknowledgement unit's control: step priority, busy count, timer heads, tail scanner");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |n: &str| sig[n].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, n: &str, width: u32, c: &str, e: Expr| m.wire_from(n, width, c, e);

    let busy = m.reg("busy", bb, 0, "the busy count");
    let hit_v = m.reg("tail_hit_valid", 1, 0, "a due tail timer waits");
    let hit_c = m.reg("tail_hit_conn", cb, 0, "its connection");
    let scan = m.reg("tail_scan", cb, 0, "the connection the scanner compares next");
    let tag = m.reg("rnr_tag", 32, 0, "the next RNR tag");
    let run = sg("s_run").expr();

    // ------------------------------------------------------------ the turn
    let b1 = w(
        &mut m,
        "busy_turn",
        bb,
        "the count at the turn: a commit's failure first",
        mux(sg("s_hold_pre"), max(busy.q.expr(), lit(bb, pr)), busy.q.expr()),
    );
    let free = w(&mut m, "free", 1, "the count is 0 at the turn", run.clone().logic_and(b1.expr().eq(lit(bb, 0))));
    let drain = w(
        &mut m,
        "drain",
        1,
        "the turn goes to the events and the walk",
        free.expr().logic_and(sg("s_pend_evt").expr().logic_or(sg("s_walk"))),
    );
    let may = w(
        &mut m,
        "may_step",
        1,
        "a step may start",
        free.expr().logic_and(drain.expr().logic_not()).logic_and(sg("s_sched_idle")),
    );
    m.assign(sg("m_busy"), &busy.q);
    m.assign(sg("m_free"), &free);
    m.assign(sg("m_drain"), &drain);

    // ------------------------------------------------------------ the step
    // Each candidate in priority order; a waiting SACK stage is a
    // candidate that starts nothing, so nothing below it starts either.
    let ts = sg("ts_now");
    let stage_ok = sg("s_cont_wait").expr().logic_not().logic_or(sg("s_tel_settled"));
    let rnr_reached = reached(ts.expr(), sg("s_rnr_until").expr());
    let rnr_due =
        w(&mut m, "rnr_due", 1, "the RNR queue's head is due", sg("s_rnr_valid").expr().logic_and(rnr_reached));
    let wp_reached = reached(ts.expr(), sg("s_wp_at").expr());
    let wp_due =
        w(&mut m, "wp_due", 1, "the window-probe queue's head is due", sg("s_wp_valid").expr().logic_and(wp_reached));
    let cands: [(Expr, Expr); 8] = [
        (sg("s_rto").expr(), lit(1, 1)),
        (sg("s_upd").expr(), lit(1, 1)),
        (sg("s_cont_valid").expr(), stage_ok),
        (sg("s_sack").expr(), lit(1, 1)),
        (sg("s_nack").expr(), lit(1, 1)),
        (rnr_due.expr(), lit(1, 1)),
        (wp_due.expr(), lit(1, 1)),
        (hit_v.q.expr(), lit(1, 1)),
    ];
    let mut above = lit(1, 0);
    let mut goes = Vec::new();
    for ((g, _), (cand, starts)) in GOES.iter().zip(cands) {
        let go = w(
            &mut m,
            &format!("go_{g}"),
            1,
            "this step starts",
            may.expr().logic_and(above.clone().logic_not()).logic_and(cand.clone()).logic_and(starts),
        );
        m.assign(sg(&format!("m_go_{g}")), &go);
        above = above.logic_or(cand);
        goes.push(go);
    }
    let own = goes[5].expr().logic_or(&goes[6]).logic_or(&goes[7]);
    let started = goes.iter().fold(lit(1, 0), |a, g| a.logic_or(g));
    let started = w(&mut m, "started", 1, "a step starts", started);
    let set_by = w(
        &mut m,
        "handler_busy",
        bb,
        "the count the step's handler sets, at least 1",
        mux(own, lit(bb, 1), max(sg("s_busy").expr(), lit(bb, 1))),
    );
    let after_turn = w(
        &mut m,
        "busy_after_turn",
        bb,
        "the count after the turn: counted down, or the step's",
        mux(
            b1.expr().ne(lit(bb, 0)),
            b1.expr() - lit(bb, 1),
            mux(&started, set_by.expr() + lit(bb, u64::from(p.read_latency)), lit(bb, 0)),
        ),
    );
    let opened = mux(sg("s_hold_open"), max(after_turn.expr(), lit(bb, u64::from(p.ring_depth))), after_turn.expr());
    let held = mux(sg("s_hold_fail"), max(opened.clone(), lit(bb, pr)), opened);
    m.next(set(&busy.next, mux(run.clone(), held, busy.q.expr())));

    // ------------------------------------------------------------ RNR tag, deadlines
    m.assign(sg("m_rnr_tag"), &tag.q);
    let push = run.clone().logic_and(sg("s_rnr_push"));
    m.next(set(&tag.next, mux(push, tag.q.expr() + lit(32, 1), tag.q.expr())));
    m.assign(sg("m_timer_at"), ts.expr() + lit(32, u64::from(k.rto_min)));

    // ------------------------------------------------------------ the tail scanner
    let go_tail = goes[7].clone();
    m.assign(sg("m_tail_conn"), mux(&go_tail, &hit_c.q, lit(cb, 0)));
    m.assign(sg("m_tail_scan"), &scan.q);
    m.assign(sg("m_tail_hit_valid"), &hit_v.q);
    let compares = w(
        &mut m,
        "scan_compares",
        1,
        "no hit waits after the turn: the scanner compares",
        run.clone().logic_and(hit_v.q.expr().logic_not().logic_or(&go_tail)),
    );
    let found = compares.expr().logic_and(sg("s_tail_due"));
    m.next(set(&hit_v.next, mux(&compares, sg("s_tail_due"), hit_v.q.expr())));
    m.next(set(&hit_c.next, mux(found, &scan.q, hit_c.q.expr())));
    let last = lit(cb, u64::from(p.conns - 1));
    let scan_next = mux(scan.q.expr().eq(last), lit(cb, 0), scan.q.expr() + lit(cb, 1));
    m.next(set(&scan.next, mux(&compares, scan_next, scan.q.expr())));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_bits_hold_the_largest_count() {
        for name in ["small", "default"] {
            let p = TxEngineParams::from_config(&mrnic_proto::Config::builtin(name).unwrap()).unwrap();
            let most = (2 + 2 * p.ring_depth).max(1 + p.paths * p.ring_depth) + p.read_latency;
            assert!(u64::from(most) < 1 << busy_bits(&p), "{name}");
        }
    }
}
