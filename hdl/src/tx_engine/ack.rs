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
//!   `tx_ring_depth` (`s_hold_open`), the output stage's failed read
//!   to `PATHS x tx_ring_depth` (`s_hold_fail`), and a live SACK's reads,
//!   answering `L` cycles after its step, to its two passes' `2 + 2 x
//!   span` (`s_hold_sack` with the value on `s_hold_cnt`; the SACK's own
//!   `s_busy` is 1, from the record alone: architecture.md, tx_engine
//!   item 13); the same hold carries a SACK stage's 2 in each cycle its
//!   walk reads the ring (`tx_stage`'s `m_hold_*`, item 14).
//! - **The RNR tag** a back-off started this cycle gets is `m_rnr_tag`; a
//!   push (`s_rnr_push`, only when a NACK's reads answer, `L` cycles after
//!   its step: `tx_nack`'s `m_rnr_valid`) moves it on (`rnr_tag_bits`
//!   wide, wrapping, as the model's; a refused back-off takes no tag). `m_timer_at` is `ts_now + rto_min`, the deadline a
//!   window probe's push writes this cycle (an RNR push's counts from its
//!   NACK's step, `tx_nack`'s `m_rnr_until`).
//! - **The tail scanner** compares one connection per cycle
//!   (`m_tail_scan`, round robin) whenever no hit waits after the turn:
//!   the engine answers whether its timer is due on `s_tail_due` in that
//!   cycle (the connection's state after the cycle's step), and a due one
//!   becomes the hit (`m_tail_hit_valid`), served by `m_go_tail`
//!   (`m_tail_conn`).
//! - **The queues' storage** stays outside (the engine's FIFOs,
//!   `rnr_depth` and `wprobe_depth` entries, architecture.md, tx_engine
//!   item 3; a push into a full one is refused where it is made, in
//!   `tx_nack` and the decision): the unit sees each head's valid and
//!   deadline and pops with its `m_go_*`.
//!   A window probe pushed this cycle is not at the head the due check
//!   sees when the queue was empty; it could not be due anyway, its
//!   deadline being `rto_min` (at least 1) ahead.
//!
//! While `s_run` is low (the clear sweep) nothing moves; `rst` empties
//! the count, the hit, the scanner and the tag.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_ack` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by 2-induction (boolector):
//! - the engine's obligation, assumed: a handler sets `s_busy` to at most
//!   `max(2 + 2 x tx_ring_depth, 1 + PATHS x tx_ring_depth)`
//!   (`asm_s_busy_most`, [`busy_bits`]) and a SACK's hold `s_hold_cnt`
//!   to at most `2 + 2 x tx_ring_depth` (`asm_s_hold_cnt_most`);
//! - one step: at most one `m_go_*` a cycle, only with `s_run`, the count
//!   0 at the turn, no drain and the scheduler idle; `m_drain` only when
//!   free and events or a walk wait;
//! - the priority: each `m_go_*` only with its own work waiting and never
//!   while a step above it has work; a SACK stage waiting for
//!   path_telemetry holds every step from it down; a step does start when
//!   one may and work that can start waits;
//! - the busy count: counts down by one, loads `max(s_busy, 1) + L` on a
//!   step (`1 + L` for the unit's own three), stays 0 otherwise, is raised
//!   (never lowered) by the holds after the turn to `tx_ring_depth`,
//!   `PATHS x tx_ring_depth` or `s_hold_cnt`, is at least `PATHS x tx_ring_depth - 1` after
//!   the commit's failure, and fits its bits;
//! - while `s_run` is low the registers hold and nothing starts or drains;
//! - the tail: the scanner compares in each running cycle with no hit
//!   waiting, round robin below `conns`; a hit is the compared connection,
//!   only when the engine called it due, and is held until served;
//!   `m_tail_conn` names it only with `m_go_tail`; the RNR tag moves by one
//!   per push;
//! - covers: each of the eight steps starts, a waiting stage holds a NACK,
//!   the count runs back to free, a failure's hold.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::Consts;
use mrnic_model::tx_engine::TxEngineParams;

use crate::expr::{cat, lit, mux, Expr, Signal};
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
        i("s_hold_sack", 1, HOLD, "after the turn, a live SACK's reads answered: count at least s_hold_cnt"),
        i("s_hold_cnt", bb, HOLD, "its two passes' count, 2 + 2 x span (tx_sack m_hold_cnt)"),
        o("m_rnr_tag", p.rnr_tag_bits, TIMERS, "the tag an RNR back-off started this cycle gets"),
        i("s_rnr_push", 1, TIMERS, "a NACK's answer pushes an RNR back-off (tag m_rnr_tag; tx_nack m_rnr_valid)"),
        o("m_timer_at", 32, TIMERS, "ts_now + rto_min: the deadline a window probe's push writes"),
        o("m_tail_scan", cb, TIMERS, "the connection the scanner compares this cycle"),
        i("s_tail_due", 1, TIMERS, "m_tail_scan's tail timer is due (after this cycle's step)"),
        o("m_tail_hit_valid", 1, TIMERS, "a due tail timer waits for the unit"),
        o("m_tail_conn", cb, TIMERS, "its connection, with m_go_tail (0 otherwise)"),
    ]);
    v
}

/// `now` at or after `deadline`, 32-bit wrapping (`ts_reached`): the
/// difference, as a signed number, is not negative.
pub(crate) fn reached(now: Expr, deadline: Expr) -> Expr {
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
    let tag = m.reg("rnr_tag", p.rnr_tag_bits, 0, "the next RNR tag");
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
    let failed = mux(sg("s_hold_fail"), max(opened.clone(), lit(bb, pr)), opened);
    let held = mux(sg("s_hold_sack"), max(failed.clone(), sg("s_hold_cnt").expr()), failed);
    m.next(set(&busy.next, mux(run.clone(), held, busy.q.expr())));

    // ------------------------------------------------------------ RNR tag, deadlines
    m.assign(sg("m_rnr_tag"), &tag.q);
    let push = run.clone().logic_and(sg("s_rnr_push"));
    m.next(set(&tag.next, mux(push, tag.q.expr() + lit(p.rnr_tag_bits, 1), tag.q.expr())));
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
    let inner = Inner {
        busy: busy.q,
        busy_turn: b1,
        may,
        goes,
        started,
        rnr_due,
        wp_due,
        hit_v: hit_v.q,
        hit_c: hit_c.q,
        scan: scan.q,
        tag: tag.q,
        compares,
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and decisions its formal properties read.
struct Inner {
    busy: Signal,
    busy_turn: Signal,
    may: Signal,
    goes: Vec<Signal>,
    started: Signal,
    rnr_due: Signal,
    wp_due: Signal,
    hit_v: Signal,
    hit_c: Signal,
    scan: Signal,
    tag: Signal,
    compares: Signal,
}

/// The most a handler sets the busy count to (`s_busy`): a SACK's two
/// passes, `2 + 2 x tx_ring_depth`, or a stage's ring reads, `1 + PATHS x
/// tx_ring_depth` ([`busy_bits`]).
fn handler_most(p: &TxEngineParams) -> u64 {
    let r = u64::from(p.ring_depth);
    (2 + 2 * r).max(1 + u64::from(p.paths) * r)
}

/// The `tx_ack` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]). The connection count may be one the config's
/// check refuses, not a power of two (`prove_conns3`, [`formal_tasks`]):
/// the unit's one use of it is the scanner, which wraps at the last
/// connection rather than at its counter's end, and only such a count
/// tells the two apart. The other parameters are the engine's for the
/// count rounded up to a power of two.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let n = cfg.transport.connections;
    let mut valid = cfg.clone();
    valid.transport.connections = n.next_power_of_two();
    let mut p = TxEngineParams::from_config(&valid).map_err(|e| e.to_string())?;
    p.conns = n;
    p.conn_bits = mrnic_proto::Config::index_bits(n);
    Ok(build(&p))
}

/// The unit's proof tasks: every assertion by 2-induction (`prove`) and
/// the covers to 12 cycles, with boolector ([`crate::proof::boolector_tasks`]);
/// and `prove` again on [`ODD_CONNECTIONS`] connections (`prove_conns3`).
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    let mut tasks = crate::proof::boolector_tasks(2, 12);
    // Both built-in counts are powers of two, where the scanner's counter
    // has no value past the last connection and `a_scan_in_range` cannot
    // fail; on 3 connections its 2-bit counter has one (3), so a scanner
    // that does not wrap at the last connection fails it.
    let mut odd = tasks[0].clone();
    odd.name = "prove_conns3";
    odd.connections = Some(ODD_CONNECTIONS);
    tasks.insert(1, odd);
    tasks
}

/// The connection count `prove_conns3` runs on: the smallest that is not a
/// power of two.
pub const ODD_CONNECTIONS: u32 = 3;

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port};
    let (cb, bb) = (p.conn_bits, busy_bits(p));
    let l = u64::from(p.read_latency);
    let pr = u64::from(p.paths) * u64::from(p.ring_depth);
    let sg = |m: &Module, n: &str| port(m, n);
    let rst = sg(m, "rst");
    let run = sg(m, "s_run");
    let live = |e: Expr| e.logic_and(rst.expr().logic_not());
    let go = |g: usize| f.goes[g].expr();

    // ------------------------------------------------ the engine's obligations
    let most = handler_most(p);
    m.assume(
        "asm_s_busy_most",
        &format!(
            "a handler sets the count to at most {most} (a SACK's two passes or a stage's ring reads, busy_bits), and \
             only in its step"
        ),
        sg(m, "s_busy").expr().le(lit(bb, most)),
    );
    let sack_most = 2 + 2 * u64::from(p.ring_depth);
    m.assume(
        "asm_s_hold_cnt_most",
        &format!("a SACK's hold sets the count to at most {sack_most} (its two passes, 2 + 2 x tx_ring_depth)"),
        sg(m, "s_hold_cnt").expr().le(lit(bb, sack_most)),
    );

    // ------------------------------------------------ one step, when free
    let gv = cat_goes(&f.goes);
    let ng = f.goes.len() as u32;
    m.assert("a_go_one", "at most one m_go_* per cycle", (gv.clone() & (gv.clone() - lit(ng, 1))).eq(lit(ng, 0)));
    m.assert(
        "a_go_when_free",
        "a step starts only with s_run, the count 0 at the turn (m_busy 0, no s_hold_pre), no drain and the \
         scheduler idle",
        implies(
            &f.started,
            run.expr()
                .logic_and(sg(m, "m_busy").expr().eq(lit(bb, 0)))
                .logic_and(sg(m, "s_hold_pre").expr().logic_not())
                .logic_and(sg(m, "m_free"))
                .logic_and(sg(m, "m_drain").expr().logic_not())
                .logic_and(sg(m, "s_sched_idle")),
        ),
    );
    m.assert(
        "a_drain_when_free",
        "the turn goes to the events and the walk only when the count is 0 and one of them waits",
        implies(
            sg(m, "m_drain"),
            sg(m, "m_free").expr().logic_and(sg(m, "s_pend_evt").expr().logic_or(sg(m, "s_walk"))),
        ),
    );

    // ------------------------------------------------ the priority order
    let cands: Vec<Expr> = vec![
        sg(m, "s_rto").expr(),
        sg(m, "s_upd").expr(),
        sg(m, "s_cont_valid").expr(),
        sg(m, "s_sack").expr(),
        sg(m, "s_nack").expr(),
        f.rnr_due.expr(),
        f.wp_due.expr(),
        f.hit_v.expr(),
    ];
    let ts = sg(m, "ts_now");
    let due = |at: &str| (ts.expr() - sg(m, at).expr()).lt(lit(32, 1 << 31));
    let own_work: Vec<Expr> = vec![
        sg(m, "s_rto").expr(),
        sg(m, "s_upd").expr(),
        sg(m, "s_cont_valid")
            .expr()
            .logic_and(sg(m, "s_cont_wait").expr().logic_not().logic_or(sg(m, "s_tel_settled"))),
        sg(m, "s_sack").expr(),
        sg(m, "s_nack").expr(),
        sg(m, "s_rnr_valid").expr().logic_and(due("s_rnr_until")),
        sg(m, "s_wp_valid").expr().logic_and(due("s_wp_at")),
        sg(m, "m_tail_hit_valid").expr(),
    ];
    let mut above = lit(1, 0);
    for (i, (g, _)) in GOES.iter().enumerate() {
        m.assert(
            &format!("a_go_{g}_work"),
            &format!("m_go_{g} only with its work waiting (and, a SACK stage, its answers in)"),
            implies(go(i), own_work[i].clone()),
        );
        if i > 0 {
            m.assert(
                &format!("a_go_{g}_order"),
                &format!("m_go_{g} never while the work of a step above it waits"),
                implies(go(i), above.clone().logic_not()),
            );
        }
        above = above.logic_or(cands[i].clone());
    }
    let stage_waits = sg(m, "s_cont_valid")
        .expr()
        .logic_and(sg(m, "s_cont_wait"))
        .logic_and(sg(m, "s_tel_settled").expr().logic_not());
    m.assert(
        "a_stage_wait_holds",
        "a SACK stage waiting for path_telemetry (until s_tel_settled) holds every step from it down",
        implies(stage_waits.clone(), cat_goes(&f.goes[2..]).eq(lit(ng - 2, 0))),
    );
    m.assert(
        "a_step_when_work",
        "a step starts whenever one may and some work that can start waits, unless a waiting SACK stage holds it",
        implies(
            f.may.expr().logic_and(
                own_work[0].clone().logic_or(own_work[1].clone()).logic_or(
                    stage_waits
                        .clone()
                        .logic_not()
                        .logic_and(own_work.iter().cloned().reduce(|a, b| a.logic_or(b)).unwrap()),
                ),
            ),
            &f.started,
        ),
    );
    m.assert(
        "a_may_step",
        "a step may start exactly when the count is 0 at the turn, no drain and the scheduler idle (m_free)",
        f.may
            .expr()
            .eq(sg(m, "m_free").expr().logic_and(sg(m, "m_drain").expr().logic_not()).logic_and(sg(m, "s_sched_idle"))),
    );

    // ------------------------------------------------ the busy count
    // The count after a cycle that ran, without the holds after the turn,
    // from the rules: counted down from the turn's, or loaded by a step.
    let bt = f.busy_turn.expr();
    let own = go(5).logic_or(go(6)).logic_or(go(7));
    let loaded = mux(own, lit(bb, 1), max(sg(m, "s_busy").expr(), lit(bb, 1))) + lit(bb, l);
    let plain = m.formal_wire("f_busy_plain", bb, "the count the rules give, before the holds after the turn");
    m.formal_assign(
        &plain,
        mux(bt.clone().ne(lit(bb, 0)), bt.clone() - lit(bb, 1), mux(&f.started, loaded, lit(bb, 0))),
    );
    let holds = sg(m, "s_hold_open").expr().logic_or(sg(m, "s_hold_fail")).logic_or(sg(m, "s_hold_sack"));
    let ran = live(run.expr());
    let p_plain = m.past("busy_plain", plain.expr(), "the rules' count last cycle");
    let p_down = m.past(
        "busy_down",
        ran.clone().logic_and(bt.clone().ne(lit(bb, 0))).logic_and(holds.clone().logic_not()),
        "last cycle ran, counted down, no hold after the turn",
    );
    let p_step = m.past(
        "busy_step",
        ran.clone().logic_and(&f.started).logic_and(holds.clone().logic_not()),
        "last cycle ran and started a step, no hold after the turn",
    );
    let p_none = m.past(
        "busy_none",
        ran.clone()
            .logic_and(bt.clone().eq(lit(bb, 0)))
            .logic_and(f.started.expr().logic_not())
            .logic_and(holds.clone().logic_not()),
        "last cycle ran at count 0 with no step and no hold",
    );
    let p_bt = m.past("busy_turn", bt.clone(), "the count at last cycle's turn");
    let p_load = m.past(
        "busy_load",
        {
            let own = go(5).logic_or(go(6)).logic_or(go(7));
            mux(own, lit(bb, 1), max(sg(m, "s_busy").expr(), lit(bb, 1))) + lit(bb, l)
        },
        "max(s_busy, 1) + L (1 + L for the unit's own steps) last cycle",
    );
    let b = f.busy.expr();
    m.assert(
        "a_busy_counts_down",
        "a count not 0 at the turn goes down by one",
        implies(&p_down, b.clone().eq(p_bt.expr() - lit(bb, 1))),
    );
    m.assert(
        "a_busy_step_load",
        &format!("a step loads max(s_busy, 1) + L (L = {l}); the unit's own steps 1 + L"),
        implies(&p_step, b.clone().eq(&p_load)),
    );
    m.assert(
        "a_busy_stays_zero",
        "with no step and no hold a count of 0 stays 0",
        implies(&p_none, b.clone().eq(lit(bb, 0))),
    );
    let p_open =
        m.past("hold_open", ran.clone().logic_and(sg(m, "s_hold_open")), "last cycle ran with a reopen's hold");
    let p_fail =
        m.past("hold_fail", ran.clone().logic_and(sg(m, "s_hold_fail")), "last cycle ran with a failure's hold");
    let p_sack = m.past(
        "hold_sack",
        mux(ran.clone().logic_and(sg(m, "s_hold_sack")), sg(m, "s_hold_cnt").expr(), lit(bb, 0)),
        "last cycle's SACK hold count (0 without one)",
    );
    let want = max(
        max(
            mux(&p_open, max(p_plain.expr(), lit(bb, u64::from(p.ring_depth))), p_plain.expr()),
            mux(&p_fail, lit(bb, pr), lit(bb, 0)),
        ),
        p_sack.expr(),
    );
    let p_held = m.past("hold_any", ran.clone().logic_and(holds.clone()), "last cycle ran with a hold after the turn");
    m.assert(
        "a_busy_holds_raise",
        &format!(
            "a hold after the turn raises the count to at least tx_ring_depth (a reopen), {pr} (a failure) or \
             s_hold_cnt (a SACK's reads answered), never lowers it"
        ),
        implies(&p_held, b.clone().eq(want)),
    );
    let p_pre =
        m.past("hold_pre", ran.clone().logic_and(sg(m, "s_hold_pre")), "last cycle ran with the commit's failure");
    m.assert(
        "a_busy_hold_pre",
        &format!(
            "the commit's failure holds the unit: the count at the turn at least {pr}, so at least {} after",
            pr - 1
        ),
        implies(&p_pre, b.clone().ge(lit(bb, pr - 1))),
    );
    m.assert(
        "a_busy_most",
        &format!(
            "the count never passes {} (the largest a handler or a hold sets, plus L): it fits busy_bits",
            most + l
        ),
        b.clone().le(lit(bb, most + l)),
    );

    // ------------------------------------------------ nothing moves while s_run is low
    let p_stop = m.past("stopped", live(run.expr().logic_not()), "last cycle s_run was low, out of reset");
    let regs = cat(&[f.busy.expr(), f.hit_v.expr(), f.hit_c.expr(), f.scan.expr(), f.tag.expr()]);
    let p_regs = m.past("ack_regs", regs.clone(), "the count, the hit, the scanner and the tag last cycle");
    m.assert(
        "a_frozen_regs",
        "while s_run is low the count, the hit, the scanner and the tag hold",
        implies(&p_stop, regs.eq(&p_regs)),
    );
    m.assert(
        "a_frozen_outputs",
        "while s_run is low no step starts, the turn is not free and nothing drains",
        implies(
            run.expr().logic_not(),
            f.started
                .expr()
                .logic_not()
                .logic_and(sg(m, "m_free").expr().logic_not())
                .logic_and(sg(m, "m_drain").expr().logic_not()),
        ),
    );

    // ------------------------------------------------ the tail hit and the scanner
    let p_cmp = m.past("scan_cmp", live(f.compares.expr()), "last cycle the scanner compared, out of reset");
    let p_due = m.past("scan_due", sg(m, "s_tail_due"), "last cycle's s_tail_due");
    let p_scan = m.past("scan", f.scan.expr(), "the scanned connection last cycle");
    let p_hit = m.past("hit", cat(&[f.hit_v.expr(), f.hit_c.expr()]), "the hit last cycle");
    let p_ran = m.past("ran", ran.clone(), "last cycle ran, out of reset");
    let p_tail = m.past("go_tail", go(7), "last cycle served the hit");
    let p_hitv = m.past("hit_valid", f.hit_v.expr(), "a hit waited last cycle");
    m.assert(
        "a_scan_when_no_hit",
        "the scanner compares in every running cycle with no hit waiting after the turn",
        implies(p_ran.expr().logic_and(p_hitv.expr().logic_not().logic_or(&p_tail)), &p_cmp),
    );
    m.assert(
        "a_tail_hit_due",
        "a hit is the compared connection, and only when the engine called it due",
        implies(&p_cmp, f.hit_v.expr().eq(&p_due).logic_and(implies(&p_due, f.hit_c.expr().eq(&p_scan)))),
    );
    let p_keep = m.past(
        "scan_idle",
        live(f.compares.expr().logic_not()),
        "last cycle the scanner did not compare, out of reset",
    );
    m.assert(
        "a_tail_hit_held",
        "a waiting hit not served stays, unchanged, and the scanner waits with it",
        implies(&p_keep, cat(&[f.hit_v.expr(), f.hit_c.expr(), f.scan.expr()]).eq(cat(&[p_hit.expr(), p_scan.expr()]))),
    );
    m.assert(
        "a_go_tail_conn",
        "m_tail_conn names the hit with m_go_tail, 0 otherwise",
        sg(m, "m_tail_conn").expr().eq(mux(go(7), f.hit_c.expr(), lit(cb, 0))),
    );
    let last = u64::from(p.conns - 1);
    m.assert(
        "a_scan_round_robin",
        &format!("the scanner moves to the next connection after each compare, 0 after {last}"),
        implies(&p_cmp, f.scan.expr().eq(mux(p_scan.expr().eq(lit(cb, last)), lit(cb, 0), p_scan.expr() + lit(cb, 1)))),
    );
    m.assert(
        "a_scan_in_range",
        &format!("the scanner and the hit name a connection (below {})", p.conns),
        f.scan.expr().le(lit(cb, last)).logic_and(f.hit_c.expr().le(lit(cb, last))),
    );

    // ------------------------------------------------ the RNR tag
    let p_tag = m.past("tag", f.tag.expr(), "the tag last cycle");
    let p_push = m.past("push", ran.logic_and(sg(m, "s_rnr_push")), "last cycle ran and pushed an RNR back-off");
    m.assert(
        "a_rnr_tag",
        "the RNR tag moves on by one with each push and holds otherwise",
        implies(&p_ran, f.tag.expr().eq(mux(&p_push, p_tag.expr() + lit(p.rnr_tag_bits, 1), p_tag.expr()))),
    );

    // ------------------------------------------------ covers
    for (i, (g, what)) in GOES.iter().enumerate() {
        m.cover(&format!("c_go_{g}"), &format!("m_go_{g}: {what}"), go(i));
    }
    m.cover(
        "c_stage_holds_below",
        "a waiting SACK stage holds a NACK back while the unit may step",
        stage_waits.logic_and(&f.may).logic_and(sg(m, "s_nack")),
    );
    let counted = m.past(
        "counted_to_zero",
        live(run.expr()).logic_and(f.busy.expr().eq(lit(bb, 1))),
        "last cycle the count was 1",
    );
    m.cover(
        "c_busy_back_to_free",
        "a step's count runs down to 0 and the unit is free again",
        counted.expr().logic_and(sg(m, "m_free")),
    );
    m.cover("c_hold_fail", "a failure's hold raises the count", p_fail.expr());
    m.cover("c_hold_sack", "a SACK's hold raises the count", p_sack.expr().ne(lit(bb, 0)));
}

/// The step enables as one vector, the first step in the lowest bit.
fn cat_goes(goes: &[Signal]) -> Expr {
    cat(&goes.iter().rev().map(|g| g.expr()).collect::<Vec<_>>())
}
