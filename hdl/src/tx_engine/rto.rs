//! The acknowledgement unit's timeout and update handlers of `tx_engine`
//! as a clocked unit (`tx_rto`): what the model's `on_rto` and `on_upd`
//! do with path_telemetry's `m_rto` and `m_upd` records, with `act`,
//! `queue_probe` and `all_lost` ([`mrnic_model::tx_engine`]), in the steps
//! `tx_ack` starts for them (`m_go_rto`, `m_go_upd`). Named after the
//! timeout, the handler with the ring walk; an update shares every port
//! but the walk.
//!
//! # Timing
//! A step issues its reads when it starts and they answer `L` cycles later
//! (architecture.md, tx_engine items 4 and 10):
//! - **The step's cycle** (`t`, `s_go_rto` or `s_go_upd` with the record
//!   on `s_rto_*` / `s_upd_*`): the busy count the handler sets goes to
//!   `tx_ack`'s `s_busy` (`m_busy`: `1 + tx_ring_depth` for a timeout with
//!   ALL_LOST, else 1, from the record alone, since the count is due
//!   before the reads answer); the connection's `stalled` bit is cleared
//!   (`m_unstall_*`, which needs only the record's connection); the
//!   context and the path's mirror are read (`m_rd_*`). The record and
//!   `ts_now` are registered.
//! - **The answer's cycle** (`t + L`, `s_rd_*`, `s_pm_*` as the tables
//!   stood at `t`, block RAM reading first; the plane marks `mark_*` are
//!   registers, levels): the mirror write (`m_pm_*`) with the context's
//!   DEAD bits (`m_ctx_dead_*`), the plane mark (`m_mark_*`), and either
//!   the failure (`m_fail_*`, when the bits written cover every path
//!   below `npaths` of a live connection: the reference's `on_timer`
//!   fails it with TRANSPORT_RETRY_EXCEEDED; architecture.md, tx_engine
//!   item 12) or the PROBE push (`m_probe_*`) and, for a timeout with
//!   ALL_LOST on a live connection, the first ring read of the walk.
//! - **The walk**: one ring slot read per cycle (`m_ring_rd_*`) from the
//!   path's `cum_acked` up to its `next_psn`, in psn order, each answering
//!   `L` cycles later (`s_ring_*`): a slot that holds a packet not queued
//!   is written queued (uncharged, its RNR wait dropped) and pushed into
//!   the connection's retransmit queue (`m_retx_*`), in the model's order.
//!   Its last write is at `t + 2L + span - 1`, `span` at most
//!   `tx_ring_depth` (the decision sends only while the ring has a free
//!   slot), before the model's count frees the unit at `t + 2 + L +
//!   tx_ring_depth` when `L <= 2` (1 or 2 here), so the next step's reads
//!   see every write.
//!
//! The model makes all of it in the step's cycle. Nothing else reads what
//! the handler writes before the unit is free again (the scheduler starts
//! only with the unit idle, and the unit's next step waits for its count)
//! except the plane marks' expiry check and a failure or reopen of the
//! connection meanwhile; architecture.md, tx_engine item 10, says what the
//! assembly owes for those.
//!
//! # Interface with the rest of the engine
//! - The record and the step come from `tx_ack` and the engine's input
//!   registers; the handler's count goes back on `m_busy`.
//! - Its reads are ports: the address (`m_rd_*`) in the step's cycle, the
//!   answer `L` cycles later; the ring slots the same way (`m_ring_rd_*`,
//!   `s_ring_*`). The marks are levels.
//! - Its writes are ports of the cycle they happen in, every payload 0
//!   without its valid: `m_pm_*` (the mirror of `m_pm_conn`/`m_pm_path`:
//!   state always; sport and gen and `probe_pending` cleared with
//!   `m_pm_rto`; `timed_out` with `m_pm_timed_out_we`; `clr` set with
//!   `m_pm_clr_set`), `m_mark_*` (plane `m_mark_plane`'s mark becomes
//!   `m_mark_until`), `m_probe_*` (the PROBE queue's push and the
//!   connection's `probe_q` bit), `m_retx_*` (the slot's write and the
//!   retransmit queue's push, which also clears `stalled`),
//!   `m_ctx_dead_*` (the context's DEAD bits, a bit per path),
//!   `m_fail_*` (`tx_walk`'s `s_fail_*` with the connection; no culprit,
//!   so every request completes with `m_fail_status`). The failure's ring
//!   clear is not in `m_busy`, known before the reads answer: the
//!   assembly gives `m_fail_valid` to `tx_ack`'s `s_hold_fail` too, which
//!   raises the count to `PATHS x tx_ring_depth` in the answer's cycle,
//!   the model's count from then on (item 12).
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_rto` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by 2-induction (boolector), with ghosts for the latest step (its
//! record, the cycles since it, tx_ack's count left), the walk (its
//! `cum_acked` and span as the answer read them) and the slot reads in
//! flight:
//! - `tx_ack`'s side, assumed: at most one step a cycle, none in a reset,
//!   and a step only once tx_ack's count for the previous one (`m_busy +
//!   L` at the step, down by one a cycle; architecture.md, tx_engine item
//!   10) has run out (`asm_step_when_free`); a path holds at most
//!   `tx_ring_depth` packets when the walk reads its span
//!   (`asm_span_in_ring`);
//! - `m_busy` is `1 + tx_ring_depth` for a timeout with ALL_LOST, 1 for
//!   any other step, 0 without one; the reads and the unstall go with the
//!   step, for its connection and path;
//! - the mirror, mark and PROBE writes happen exactly `L` cycles after
//!   their step and only for its connection and path (the mark for the
//!   path's plane): an update always writes the mirror, a timeout only on
//!   a live connection, with its sport, gen and timed_out; the credit
//!   clear only with an update's clr;
//! - the plane mark only for a timeout to SUSPECT or DEAD on a live
//!   connection, until `ts + dead_probe_interval`, never moving a later
//!   mark earlier (32-bit serial), and written whenever that holds;
//! - a PROBE only with the PROBE action and none queued for the path: a
//!   timeout on a live connection or an update answering a PROBE reply;
//! - the walk reads exactly one slot a cycle from the answer, in psn order
//!   from `cum_acked`, never past `next_psn` nor more than
//!   `tx_ring_depth`, each read answered and pushed before tx_ack's count
//!   lets the next step start; a push exactly for a slot answered valid
//!   and not queued, naming it;
//! - the connection fails (`m_fail_*`) exactly at the answer of a step
//!   that leaves every path below `npaths` of a live connection DEAD (the
//!   step's path by its record, the others by the context's bits), with
//!   TRANSPORT_RETRY_EXCEEDED and no culprit, and then gets no PROBE and
//!   no walk;
//! - every payload is 0 without its valid;
//! - invariants tying the registers to the ghosts (`a_inv_*`: the reads in
//!   flight, the record, tx_ack's count, the walk's count and psn), which
//!   let the induction close in 2 steps instead of a ring's length;
//! - covers: a timeout with ALL_LOST walking a full ring, a push, an
//!   update's credit clear, a PROBE from a timeout and from a reply, a
//!   plane mark over an earlier one.

use mrnic_model::block::PortDef;
use mrnic_model::path_telemetry::{self as tel, Consts};
use mrnic_model::tx_engine::{status, TxEngineParams};

use super::ack::busy_bits;
use super::PSN;
use super::{gate, stream_ptr_bits};
use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{set, Module};

/// Module name.
pub const NAME: &str = "tx_rto";

const RST: &str = "Clock and reset";
const STEP: &str = "The step (tx_ack m_go_rto / m_go_upd) and its record";
const RD: &str = "The step's reads: issued with the step, answered L cycles later";
const WR: &str = "The handler's writes, when its reads answer";
const WALK: &str = "The ALL_LOST walk over the path's unacked ring slots";
const FAIL: &str = "Every path DEAD: the connection fails (tx_walk s_fail_*)";

/// The actions the handlers take, the low bits of path_telemetry's `act`
/// (PROBE, ALL_LOST); a slot written here pushes no RNR back-off, so the
/// slot's RNR wait is not read (the write drops it whatever it was).
const ACT: u32 = 2;
const _: () = assert!(tel::act::PROBE == 1 && tel::act::ALL_LOST == 2, "PROBE and ALL_LOST are act's bits 0 and 1");

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, pb, n) = (p.conn_bits, p.path_bits, p.paths);
    let (sb, qb) = (p.stream_bits, stream_ptr_bits(p.wq_depth));
    let planes = p.cfg.transport.planes;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_go_rto", 1, STEP, "tx_ack starts the timeout handler on the m_rto input register's record"),
        i("s_rto_conn", cb, STEP, "its connection"),
        i("s_rto_path", pb, STEP, "its path"),
        i("s_rto_state", 2, STEP, "the path's new state"),
        i("s_rto_sport", 16, STEP, "its new UDP source port"),
        i("s_rto_gen", 8, STEP, "its new generation"),
        i(
            "s_rto_act",
            ACT,
            STEP,
            "its actions PROBE (bit 0) and ALL_LOST (bit 1); DIED and RECOVERED are not the handlers'",
        ),
        i("s_go_upd", 1, STEP, "tx_ack starts the update handler on the update input register's record"),
        i("s_upd_conn", cb, STEP, "its connection"),
        i("s_upd_path", pb, STEP, "its path"),
        i("s_upd_state", 2, STEP, "the path's new state"),
        i("s_upd_clr", 1, STEP, "the path's credit is to be cleared at the next request"),
        i("s_upd_act", ACT, STEP, "its actions PROBE and ALL_LOST"),
        o("m_busy", busy_bits(p), STEP, "the busy count the handler sets (tx_ack s_busy; 0 without a step)"),
        o("m_unstall_valid", 1, STEP, "the connection's stalled bit is cleared"),
        o("m_unstall_conn", cb, STEP, "which connection"),
        o("m_rd_valid", 1, RD, "the context and the path's mirror are read"),
        o("m_rd_conn", cb, RD, "the connection"),
        o("m_rd_path", pb, RD, "the path"),
        i("s_rd_open", 1, RD, "the context's open bit, L cycles after m_rd_valid"),
        i("s_rd_failed", 1, RD, "the connection has failed"),
        i("s_rd_probe_q", n, RD, "its paths with a PROBE queued, a bit each"),
        i("s_rd_npaths", pb + 1, RD, "its path count"),
        i("s_rd_dead", n, RD, "its paths whose state is DEAD, a bit each"),
        i("s_pm_plane", 3, RD, "the path's plane"),
        i("s_pm_next_psn", PSN, RD, "its next psn"),
        i("s_pm_cum_acked", PSN, RD, "its cumulative acknowledged psn"),
        i("mark_valid", planes, RD, "per plane: marked unhealthy (registers, a level) ..."),
        i("mark_until", planes * 32, RD, "... until this timestamp"),
        o("m_pm_valid", 1, WR, "the mirror of (m_pm_conn, m_pm_path) is written: its state"),
        o("m_pm_conn", cb, WR, "the connection"),
        o("m_pm_path", pb, WR, "the path"),
        o("m_pm_state", 2, WR, "the state written"),
        o("m_pm_rto", 1, WR, "a timeout's write: sport and gen too, probe_pending cleared"),
        o("m_pm_sport", 16, WR, "the sport written"),
        o("m_pm_gen", 8, WR, "the gen written"),
        o("m_pm_timed_out_we", 1, WR, "timed_out is written"),
        o("m_pm_timed_out", 1, WR, "its value"),
        o("m_pm_clr_set", 1, WR, "the credit clear is set"),
        o("m_ctx_dead_valid", 1, WR, "the context's DEAD bits are written (with the mirror's state)"),
        o("m_ctx_dead_conn", cb, WR, "the connection"),
        o("m_ctx_dead", n, WR, "the bits written: the path's own from the new state, the others as read"),
        o("m_mark_valid", 1, WR, "a plane mark is written (the NIC avoids the plane)"),
        o("m_mark_plane", 3, WR, "the plane"),
        o("m_mark_until", 32, WR, "the mark's deadline"),
        o("m_probe_valid", 1, WR, "a PROBE is queued (and the connection's probe_q bit set)"),
        o("m_probe_conn", cb, WR, "its connection"),
        o("m_probe_path", pb, WR, "its path"),
        o("m_ring_rd_valid", 1, WALK, "a ring slot of the walked path is read"),
        o("m_ring_rd_conn", cb, WALK, "the connection"),
        o("m_ring_rd_path", pb, WALK, "the path"),
        o("m_ring_rd_psn", PSN, WALK, "the psn (the slot is psn mod tx_ring_depth)"),
        i("s_ring_valid", 1, WALK, "the slot holds a packet, L cycles after m_ring_rd_valid"),
        i("s_ring_queued", 1, WALK, "it is queued for retransmission already"),
        o("m_retx_valid", 1, WALK, "the slot is written queued (uncharged, no RNR wait) and pushed for retransmission"),
        o("m_retx_conn", cb, WALK, "its connection"),
        o("m_retx_path", pb, WALK, "its path"),
        o("m_retx_psn", PSN, WALK, "its psn"),
        o("m_fail_valid", 1, FAIL, "every path below npaths is DEAD: the live connection fails, nothing queued"),
        o("m_fail_conn", cb, FAIL, "the connection"),
        o("m_fail_culprit_valid", 1, FAIL, "a request caused it (never: every request gets the status)"),
        o("m_fail_culprit_stream", sb, FAIL, "the culprit's stream (0)"),
        o("m_fail_culprit_slot", qb, FAIL, "the culprit's work queue pointer (0)"),
        o("m_fail_status", 4, FAIL, "TRANSPORT_RETRY_EXCEEDED"),
    ]
}

/// The `tx_rto` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, pb, n, l) = (p.conn_bits, p.path_bits, p.paths, p.read_latency);
    let (sb, qb) = (p.stream_bits, stream_ptr_bits(p.wq_depth));
    let bb = busy_bits(p);
    let planes = p.cfg.transport.planes;
    let k = Consts::from_config(&p.cfg);
    assert!((1..=2).contains(&l), "the walk's last write precedes the next step's reads only for L <= 2");

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine acknowledgement unit's timeout and update handlers: mirror, plane mark, PROBE, ALL_LOST walk",
    );
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the step
    let (go_rto, go_upd) = (sg("s_go_rto"), sg("s_go_upd"));
    let go = w(&mut m, "go", 1, "a handler starts", go_rto.expr().logic_or(&go_upd));
    let conn = w(&mut m, "step_conn", cb, "the record's connection", mux(&go_rto, sg("s_rto_conn"), sg("s_upd_conn")));
    let path = w(&mut m, "step_path", pb, "the record's path", mux(&go_rto, sg("s_rto_path"), sg("s_upd_path")));
    let all_lost_bit = u64::from(tel::act::ALL_LOST);
    let rto_all_lost = sg("s_rto_act").expr().bit(all_lost_bit.trailing_zeros()).logic_and(&go_rto);
    // The count comes from the record alone: whether the connection is
    // open is known only when the reads answer.
    m.assign(sg("m_busy"), mux(&go, mux(rto_all_lost, lit(bb, 1 + u64::from(p.ring_depth)), lit(bb, 1)), lit(bb, 0)));
    m.assign(sg("m_unstall_valid"), &go);
    m.assign(sg("m_unstall_conn"), gate(&go, conn.expr(), cb));
    m.assign(sg("m_rd_valid"), &go);
    m.assign(sg("m_rd_conn"), gate(&go, conn.expr(), cb));
    m.assign(sg("m_rd_path"), gate(&go, path.expr(), pb));

    // The record, held until the next step (at least L + 2 cycles on).
    let r_rto = m.reg_no_reset("rec_rto", 1, "the record is a timeout's (else an update's)");
    let r_conn = m.reg_no_reset("rec_conn", cb, "its connection");
    let r_path = m.reg_no_reset("rec_path", pb, "its path");
    let r_state = m.reg_no_reset("rec_state", 2, "its state");
    let r_sport = m.reg_no_reset("rec_sport", 16, "a timeout's sport");
    let r_gen = m.reg_no_reset("rec_gen", 8, "a timeout's gen");
    let r_act = m.reg_no_reset("rec_act", ACT, "its actions");
    let r_clr = m.reg_no_reset("rec_clr", 1, "an update's credit clear");
    let r_ts = m.reg_no_reset("rec_ts", 32, "ts_now in the step's cycle (the mark's deadline counts from it)");
    for (r, e) in [
        (&r_rto, go_rto.expr()),
        (&r_conn, conn.expr()),
        (&r_path, path.expr()),
        (&r_state, mux(&go_rto, sg("s_rto_state"), sg("s_upd_state"))),
        (&r_sport, sg("s_rto_sport").expr()),
        (&r_gen, sg("s_rto_gen").expr()),
        (&r_act, mux(&go_rto, sg("s_rto_act"), sg("s_upd_act"))),
        (&r_clr, sg("s_upd_clr").expr()),
        (&r_ts, sg("ts_now").expr()),
    ] {
        m.next(set(&r.next, mux(&go, e, r.q.expr())));
    }
    // The step's reads in flight: bit i set i + 1 edges after the step.
    let (pipe, ans) = super::read_answer(&mut m, &go, l);

    // ------------------------------------------------------------ the handler
    let is_rto = r_rto.q.expr();
    let st = r_state.q.expr();
    let suspect_or_dead = w(
        &mut m,
        "suspect_or_dead",
        1,
        "the new state is SUSPECT or DEAD",
        st.clone().eq(lit(2, u64::from(tel::SUSPECT))).logic_or(st.clone().eq(lit(2, u64::from(tel::DEAD)))),
    );
    let live = w(
        &mut m,
        "live",
        1,
        "the connection is open and has not failed",
        sg("s_rd_open").expr().logic_and(sg("s_rd_failed").expr().logic_not()),
    );
    let rto_live = w(
        &mut m,
        "rto_live",
        1,
        "a timeout acts: its connection is live",
        ans.expr().logic_and(is_rto.clone()).logic_and(&live),
    );
    let upd = w(
        &mut m,
        "upd_acts",
        1,
        "an update acts (on any connection)",
        ans.expr().logic_and(is_rto.clone().logic_not()),
    );
    let pm_v = w(&mut m, "pm_write", 1, "the mirror is written", rto_live.expr().logic_or(&upd));
    m.assign(sg("m_pm_valid"), &pm_v);
    m.assign(sg("m_pm_conn"), gate(&pm_v, r_conn.q.expr(), cb));
    m.assign(sg("m_pm_path"), gate(&pm_v, r_path.q.expr(), pb));
    m.assign(sg("m_pm_state"), gate(&pm_v, st.clone(), 2));
    m.assign(sg("m_pm_rto"), &rto_live);
    m.assign(sg("m_pm_sport"), gate(&rto_live, r_sport.q.expr(), 16));
    m.assign(sg("m_pm_gen"), gate(&rto_live, r_gen.q.expr(), 8));
    // A timeout sets timed_out exactly when the path stays GOOD or SKIP;
    // an update to SUSPECT or DEAD clears it (only PROBE replies lead back).
    let to_we = w(
        &mut m,
        "timed_out_we",
        1,
        "timed_out is written",
        rto_live.expr().logic_or(upd.expr().logic_and(&suspect_or_dead)),
    );
    m.assign(sg("m_pm_timed_out_we"), &to_we);
    m.assign(sg("m_pm_timed_out"), rto_live.expr().logic_and(suspect_or_dead.expr().logic_not()));
    m.assign(sg("m_pm_clr_set"), upd.expr().logic_and(&r_clr.q));

    // The context's DEAD bits, written with the mirror's state: the path's
    // own from the new state, the rest as read. A live connection whose
    // every path below npaths is then DEAD fails (the reference's
    // `on_timer`), with no culprit: every request completes with
    // TRANSPORT_RETRY_EXCEEDED; nothing is queued for it.
    let is_dead = st.clone().eq(lit(2, u64::from(tel::DEAD)));
    let np = sg("s_rd_npaths");
    let (mut bits, mut exist) = (Vec::new(), Vec::new());
    for i in (0..n).rev() {
        let own = if n == 1 { lit(1, 1) } else { r_path.q.expr().eq(lit(pb, u64::from(i))) };
        let read = if n == 1 { sg("s_rd_dead").expr() } else { sg("s_rd_dead").bit(i) };
        bits.push(mux(own, is_dead.clone(), read));
        exist.push(lit(pb + 1, u64::from(i)).lt(&np));
    }
    let dead = w(&mut m, "dead_new", n, "the DEAD bits after the write", cat(&bits));
    let exists = w(&mut m, "exists", n, "per path: below npaths", cat(&exist));
    m.assign(sg("m_ctx_dead_valid"), &pm_v);
    m.assign(sg("m_ctx_dead_conn"), gate(&pm_v, r_conn.q.expr(), cb));
    m.assign(sg("m_ctx_dead"), gate(&pm_v, dead.expr(), n));
    let fail = w(
        &mut m,
        "fail",
        1,
        "the mirror is written on a live connection and every path below npaths is DEAD",
        pm_v.expr().logic_and(&live).logic_and((dead.expr() & exists.expr()).eq(exists.expr())),
    );
    m.assign(sg("m_fail_valid"), &fail);
    m.assign(sg("m_fail_conn"), gate(&fail, r_conn.q.expr(), cb));
    m.assign(sg("m_fail_culprit_valid"), lit(1, 0));
    m.assign(sg("m_fail_culprit_stream"), lit(sb, 0));
    m.assign(sg("m_fail_culprit_slot"), lit(qb, 0));
    m.assign(sg("m_fail_status"), gate(&fail, lit(4, u64::from(status::TRANSPORT_RETRY_EXCEEDED)), 4));

    // The plane mark: a timeout to SUSPECT or DEAD marks the path's plane
    // until ts + dead_probe_interval, unless the plane's mark is later
    // (32-bit serial); a plane past the NIC's planes is not marked.
    let plane = sg("s_pm_plane");
    let (mut cur_v, mut cur_u, mut known) = (lit(1, 0), lit(32, 0), lit(1, 0));
    for pl in 0..planes {
        let here = plane.expr().eq(lit(3, u64::from(pl)));
        cur_v = mux(here.clone(), sg("mark_valid").bit(pl), cur_v);
        cur_u = mux(here.clone(), sg("mark_until").slice(32 * pl + 31, 32 * pl), cur_u);
        known = known.logic_or(here);
    }
    let until = w(
        &mut m,
        "mark_until_new",
        32,
        "the new mark's deadline",
        r_ts.q.expr() + lit(32, u64::from(k.dead_probe_interval)),
    );
    let cur_u = w(&mut m, "mark_until_cur", 32, "the plane's mark now", cur_u);
    let diff = w(&mut m, "mark_diff", 32, "the new deadline less the plane's mark", until.expr() - cur_u.expr());
    let later = diff.expr().ne(lit(32, 0)).logic_and(diff.expr().lt(lit(32, 1 << 31)));
    let mark = w(
        &mut m,
        "mark_write",
        1,
        "the plane's mark is written",
        rto_live.expr().logic_and(&suspect_or_dead).logic_and(known).logic_and(cur_v.logic_not().logic_or(later)),
    );
    m.assign(sg("m_mark_valid"), &mark);
    m.assign(sg("m_mark_plane"), gate(&mark, plane.expr(), 3));
    m.assign(sg("m_mark_until"), gate(&mark, until.expr(), 32));

    // The PROBE: a timeout's PROBE action, or an update answering a PROBE
    // reply (SUSPECT, no ALL_LOST) on a connection not failed; queued
    // unless the path's bit says one is queued already.
    let act = r_act.q.expr();
    let probe_bit = u64::from(tel::act::PROBE).trailing_zeros();
    let lost_bit = all_lost_bit.trailing_zeros();
    let queued = if n == 1 { sg("s_rd_probe_q").expr() } else { sg("s_rd_probe_q").expr().bit_at(r_path.q.expr()) };
    let reply = upd
        .expr()
        .logic_and(st.clone().eq(lit(2, u64::from(tel::SUSPECT))))
        .logic_and(act.clone().bit(lost_bit).logic_not())
        .logic_and(sg("s_rd_failed").expr().logic_not());
    let probe = w(
        &mut m,
        "probe_push",
        1,
        "a PROBE is queued",
        rto_live
            .expr()
            .logic_or(reply)
            .logic_and(act.clone().bit(probe_bit))
            .logic_and(queued.logic_not())
            .logic_and(fail.expr().logic_not()),
    );
    m.assign(sg("m_probe_valid"), &probe);
    m.assign(sg("m_probe_conn"), gate(&probe, r_conn.q.expr(), cb));
    m.assign(sg("m_probe_path"), gate(&probe, r_path.q.expr(), pb));

    // ------------------------------------------------------------ the walk
    // One slot read a cycle from cum_acked, the first in the answer's
    // cycle; the count left is the model's span, next_psn - cum_acked.
    let start = w(
        &mut m,
        "walk_start",
        1,
        "a timeout with ALL_LOST on a live connection that does not fail starts the walk",
        rto_live.expr().logic_and(act.bit(lost_bit)).logic_and(fail.expr().logic_not()),
    );
    let w_psn = m.reg_no_reset("walk_psn", PSN, "the psn the walk reads next");
    let w_left = m.reg("walk_left", PSN, 0, "slots the walk has still to read");
    let span = sg("s_pm_next_psn").expr() - sg("s_pm_cum_acked").expr();
    let cur_psn =
        w(&mut m, "walk_cur_psn", PSN, "the psn read this cycle", mux(&start, sg("s_pm_cum_acked"), w_psn.q.expr()));
    let cur_left =
        w(&mut m, "walk_cur_left", PSN, "slots left to read, this one included", mux(&start, span, w_left.q.expr()));
    let rd = w(&mut m, "ring_rd", 1, "a slot is read this cycle", cur_left.expr().ne(lit(PSN, 0)));
    m.next(set(&w_psn.next, cur_psn.expr() + lit(PSN, 1)));
    m.next(set(&w_left.next, mux(&rd, cur_left.expr() - lit(PSN, 1), lit(PSN, 0))));
    m.assign(sg("m_ring_rd_valid"), &rd);
    m.assign(sg("m_ring_rd_conn"), gate(&rd, r_conn.q.expr(), cb));
    m.assign(sg("m_ring_rd_path"), gate(&rd, r_path.q.expr(), pb));
    m.assign(sg("m_ring_rd_psn"), gate(&rd, cur_psn.expr(), PSN));
    // The slot reads in flight, L deep, with their psns.
    let mut v_prev = rd.expr();
    let mut p_prev = cur_psn.expr();
    let mut last = None;
    let mut rd_regs = Vec::new();
    for s in 0..l {
        let v = m.reg(&format!("ring_rd{s}_valid"), 1, 0, "a slot read in flight");
        let q = m.reg_no_reset(&format!("ring_rd{s}_psn"), PSN, "its psn");
        m.next(set(&v.next, v_prev));
        m.next(set(&q.next, p_prev));
        v_prev = v.q.expr();
        p_prev = q.q.expr();
        rd_regs.push((v.q.clone(), q.q.clone()));
        last = Some((v.q, q.q));
    }
    let (a_v, a_psn) = last.expect("L >= 1");
    let push = w(
        &mut m,
        "retx_push",
        1,
        "the answered slot holds a packet not queued: queue it",
        a_v.expr().logic_and(sg("s_ring_valid")).logic_and(sg("s_ring_queued").expr().logic_not()),
    );
    m.assign(sg("m_retx_valid"), &push);
    m.assign(sg("m_retx_conn"), gate(&push, r_conn.q.expr(), cb));
    m.assign(sg("m_retx_path"), gate(&push, r_path.q.expr(), pb));
    m.assign(sg("m_retx_psn"), gate(&push, a_psn.expr(), PSN));
    let inner = Inner {
        pipe,
        rec: [r_rto, r_conn, r_path, r_state, r_sport, r_gen, r_act, r_clr, r_ts].into_iter().map(|r| r.q).collect(),
        walk_psn: w_psn.q,
        walk_left: w_left.q,
        rd_v: rd_regs.iter().map(|(v, _)| v.clone()).collect(),
        rd_psn: rd_regs.iter().map(|(_, q)| q.clone()).collect(),
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers its formal properties tie to their ghosts (the
/// invariants that let induction close).
struct Inner {
    pipe: Signal,
    rec: Vec<Signal>,
    walk_psn: Signal,
    walk_left: Signal,
    rd_v: Vec<Signal>,
    rd_psn: Vec<Signal>,
}

/// The `tx_rto` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction (`prove`, the ghosts tied to the
/// registers) and the covers to `tx_ring_depth + 2L + 6` cycles, which a
/// timeout walking a full ring needs.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    crate::proof::boolector_tasks(2, COVER_DEPTH)
}

/// The cover depth: a full ring's walk (64 slots on both built-in
/// configs) after the reset, the step and its reads.
const COVER_DEPTH: u32 = 64 + 2 * 2 + 6;

/// `a` is later than `b` in 32-bit serial order.
fn later(a: Expr, b: Expr) -> Expr {
    let d = a - b;
    d.clone().ne(lit(32, 0)).logic_and(d.lt(lit(32, 1 << 31)))
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port};
    use crate::ir::{case, if_else, if_then};
    let (cb, pb, n, l) = (p.conn_bits, p.path_bits, p.paths, p.read_latency);
    let (r, bb) = (u64::from(p.ring_depth), busy_bits(p));
    let planes = p.cfg.transport.planes;
    let interval = u64::from(Consts::from_config(&p.cfg).dead_probe_interval);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let (go_rto, go_upd) = (sg(m, "s_go_rto"), sg(m, "s_go_upd"));
    let go = go_rto.expr().logic_or(&go_upd);
    let lost_bit = tel::act::ALL_LOST.trailing_zeros();
    let probe_bit = tel::act::PROBE.trailing_zeros();
    let step_conn = mux(&go_rto, sg(m, "s_rto_conn"), sg(m, "s_upd_conn"));
    let step_path = mux(&go_rto, sg(m, "s_rto_path"), sg(m, "s_upd_path"));

    // ------------------------------------------------ tx_ack's side, assumed
    m.assume("asm_one_step", "tx_ack starts at most one step a cycle", go_rto.expr().logic_and(&go_upd).logic_not());
    m.assume(
        "asm_no_step_in_reset",
        "no step starts in a reset (tx_ack is reset with the unit)",
        implies(&rst, go.clone().logic_not()),
    );

    // ------------------------------------------------ ghosts: the latest step
    let step = super::step::ghosts(m, go.clone(), bb, l, r + 2 * u64::from(l) + 4);
    let (wait, age, agw) = (step.wait.clone(), step.age.clone(), step.agw);
    let at_ans = step.at_answer.clone();
    let g = |m: &mut Module, nm: &str, w: u32, c: &str, e: Expr| step.record(m, &go, (nm, w), c, e);
    let f_rto = g(m, "f_rto", 1, "the latest step is a timeout", go_rto.expr());
    let f_conn = g(m, "f_conn", cb, "its connection", step_conn.clone());
    let f_path = g(m, "f_path", pb, "its path", step_path.clone());
    let f_state = g(m, "f_state", 2, "its record's state", mux(&go_rto, sg(m, "s_rto_state"), sg(m, "s_upd_state")));
    let f_sport = g(m, "f_sport", 16, "a timeout's sport", sg(m, "s_rto_sport").expr());
    let f_gen = g(m, "f_gen", 8, "a timeout's gen", sg(m, "s_rto_gen").expr());
    let f_act = g(m, "f_act", ACT, "its actions", mux(&go_rto, sg(m, "s_rto_act"), sg(m, "s_upd_act")));
    let f_clr = g(m, "f_clr", 1, "an update's credit clear", sg(m, "s_upd_clr").expr());
    let f_ts = g(m, "f_ts", 32, "ts_now at the step", sg(m, "ts_now").expr());
    let live = sg(m, "s_rd_open").expr().logic_and(sg(m, "s_rd_failed").expr().logic_not());
    let st = f_state.expr();
    let sus_dead = st.clone().eq(lit(2, u64::from(tel::SUSPECT))).logic_or(st.clone().eq(lit(2, u64::from(tel::DEAD))));

    // The connection fails at the answer when the mirror is written on a
    // live connection (a timeout's or an update's) and then every path
    // below npaths is DEAD: the step's path by the record's state, the
    // others by the context's bits as read (the reference's `on_timer`).
    let np = sg(m, "s_rd_npaths");
    let dead_after = cat(&(0..n)
        .rev()
        .map(|i| {
            // One path: no path index, and the bits are one bit wide.
            let own = if n == 1 { lit(1, 1) } else { f_path.expr().eq(lit(pb, u64::from(i))) };
            let read = if n == 1 { sg(m, "s_rd_dead").expr() } else { sg(m, "s_rd_dead").bit(i) };
            let bit = mux(own, st.clone().eq(lit(2, u64::from(tel::DEAD))), read);
            lit(pb + 1, u64::from(i)).lt(&np).logic_not().logic_or(bit)
        })
        .collect::<Vec<_>>())
    .reduce_and();
    let fails = at_ans.expr().logic_and(live.clone()).logic_and(dead_after);

    // ------------------------------------------------ ghosts: the walk
    let starts = at_ans
        .expr()
        .logic_and(&f_rto)
        .logic_and(f_act.bit(lost_bit))
        .logic_and(live.clone())
        .logic_and(fails.clone().logic_not());
    let span_in = sg(m, "s_pm_next_psn").expr() - sg(m, "s_pm_cum_acked").expr();
    m.assume(
        "asm_span_in_ring",
        &format!(
            "a path holds at most tx_ring_depth = {r} packets (the decision sends only while the ring has a free \
             slot): next_psn - cum_acked, as the walk's start reads them"
        ),
        implies(starts.clone(), span_in.clone().le(lit(PSN, r))),
    );
    let f_walk = m.formal_wire("f_walk", 1, "the latest step walks the ring (from its answer on)");
    let f_cum = m.formal_wire("f_cum", PSN, "the walked path's cum_acked at the answer");
    let f_span = m.formal_wire("f_span", PSN, "its next_psn - cum_acked");
    m.formal_seq(vec![if_else(
        rst.expr().logic_or(go.clone()),
        vec![set(&f_walk, lit(1, 0))],
        vec![if_then(
            &at_ans,
            vec![set(&f_walk, starts.clone()), set(&f_cum, sg(m, "s_pm_cum_acked")), set(&f_span, span_in.clone())],
        )],
    )]);
    let now = |m: &mut Module, nm: &str, w: u32, c: &str, at: Expr, reg: &Signal| -> Signal {
        let s = m.formal_wire(nm, w, c);
        m.formal_assign(&s, mux(&at_ans, at, reg.expr()));
        s
    };
    let walk_now =
        now(m, "f_walk_now", 1, "the walk runs for the latest step (its answer's cycle included)", starts, &f_walk);
    let cum_now = now(m, "f_cum_now", PSN, "its cum_acked", sg(m, "s_pm_cum_acked").expr(), &f_cum);
    let span_now = now(m, "f_span_now", PSN, "its span", span_in, &f_span);
    let j = m.formal_wire("f_walk_index", agw, "the slot a read now would be: cycles since the answer");
    m.formal_assign(&j, age.expr() - lit(agw, u64::from(l)));
    let in_walk = m.formal_wire("f_in_walk", 1, "a slot of the walk is due to be read now");
    m.formal_assign(
        &in_walk,
        walk_now.expr().logic_and(age.expr().ge(lit(agw, u64::from(l)))).logic_and(zext(&j, PSN).lt(&span_now)),
    );
    // The slot reads in flight, L deep, as they left.
    let (mut pv, mut pp) = (sg(m, "m_ring_rd_valid").expr(), sg(m, "m_ring_rd_psn").expr());
    let mut shift = Vec::new();
    for s in 0..l {
        let v = m.formal_wire(&format!("f_ring_rd{s}_valid"), 1, "a slot read s + 1 cycles ago");
        let q = m.formal_wire(&format!("f_ring_rd{s}_psn"), PSN, "its psn");
        m.formal_seq(vec![if_else(&rst, vec![set(&v, lit(1, 0))], vec![set(&v, pv)]), set(&q, pp)]);
        (pv, pp) = (v.expr(), q.expr());
        shift.push((v, q));
    }
    let (ans_v, ans_psn) = shift.last().cloned().expect("L >= 1");

    // ------------------------------------------------ the busy count and the step's reads
    let busy_want = mux(
        go_rto.expr().logic_and(sg(m, "s_rto_act").bit(lost_bit)),
        lit(bb, 1 + r),
        mux(go.clone(), lit(bb, 1), lit(bb, 0)),
    );
    m.assert(
        "a_busy_count",
        &format!(
            "m_busy is 1 + tx_ring_depth = {} for a timeout with ALL_LOST, 1 for any other step, 0 without one",
            1 + r
        ),
        sg(m, "m_busy").expr().eq(busy_want),
    );
    m.assert(
        "a_step_reads",
        "the step's reads and the unstall are issued with the step, for its connection and path",
        sg(m, "m_rd_valid").expr().eq(go.clone()).logic_and(sg(m, "m_unstall_valid").expr().eq(go.clone())).logic_and(
            implies(
                go.clone(),
                sg(m, "m_rd_conn")
                    .expr()
                    .eq(step_conn.clone())
                    .logic_and(sg(m, "m_rd_path").expr().eq(step_path))
                    .logic_and(sg(m, "m_unstall_conn").expr().eq(step_conn)),
            ),
        ),
    );

    // ------------------------------------------------ the mirror
    let pm_v = sg(m, "m_pm_valid");
    let mine = |m: &Module, c: &str, pth: &str| sg(m, c).expr().eq(&f_conn).logic_and(sg(m, pth).expr().eq(&f_path));
    m.assert(
        "a_pm_at_answer",
        &format!(
            "the mirror is written only L = {l} cycles after the step, for its connection and path, with its state"
        ),
        implies(
            &pm_v,
            at_ans
                .expr()
                .logic_and(mine(m, "m_pm_conn", "m_pm_path"))
                .logic_and(sg(m, "m_pm_state").expr().eq(&f_state))
                .logic_and(sg(m, "m_pm_rto").expr().eq(&f_rto)),
        ),
    );
    m.assert(
        "a_pm_when",
        "at the answer an update always writes the mirror, a timeout only on a live connection",
        implies(&at_ans, pm_v.expr().eq(f_rto.expr().logic_not().logic_or(live.clone()))),
    );
    m.assert(
        "a_pm_fields",
        "a timeout's write carries its sport and gen and sets timed_out exactly when the path stays GOOD or SKIP; an \
         update sets the credit clear only with its clr",
        implies(
            sg(m, "m_pm_rto"),
            sg(m, "m_pm_sport")
                .expr()
                .eq(&f_sport)
                .logic_and(sg(m, "m_pm_gen").expr().eq(&f_gen))
                .logic_and(sg(m, "m_pm_timed_out_we"))
                .logic_and(sg(m, "m_pm_timed_out").expr().eq(sus_dead.clone().logic_not())),
        )
        .logic_and(implies(sg(m, "m_pm_clr_set"), pm_v.expr().logic_and(f_rto.expr().logic_not()).logic_and(&f_clr))),
    );

    // ------------------------------------------------ the plane mark
    let plane = sg(m, "s_pm_plane");
    let cur_u = m.formal_wire("f_mark_cur", 32, "the path's plane's mark deadline");
    let cur_vs = m.formal_wire("f_mark_cur_valid", 1, "the path's plane is marked");
    let (mv, mu) = (sg(m, "mark_valid"), sg(m, "mark_until"));
    m.formal_comb(vec![case(
        plane.expr(),
        (0..planes)
            .map(|pl| {
                let at = vec![set(&cur_vs, mv.bit(pl)), set(&cur_u, mu.slice(32 * pl + 31, 32 * pl))];
                (vec![lit(3, u64::from(pl))], at)
            })
            .collect(),
        Some(vec![set(&cur_vs, lit(1, 0)), set(&cur_u, lit(32, 0))]),
    )]);
    let in_planes = zext(&plane, 4).lt(lit(4, u64::from(planes)));
    let cur_v = cur_vs.expr();
    let until = f_ts.expr() + lit(32, interval);
    let mark_v = sg(m, "m_mark_valid");
    m.assert(
        "a_mark_only",
        &format!(
            "a plane mark is written only at a timeout's answer to SUSPECT or DEAD on a live connection, for the path's \
             plane (one of the {planes}), until the step's ts_now + dead_probe_interval ({interval})"
        ),
        implies(
            &mark_v,
            at_ans
                .expr()
                .logic_and(&f_rto)
                .logic_and(sus_dead.clone())
                .logic_and(live.clone())
                .logic_and(in_planes.clone())
                .logic_and(sg(m, "m_mark_plane").expr().eq(&plane))
                .logic_and(sg(m, "m_mark_until").expr().eq(until.clone())),
        ),
    );
    m.assert(
        "a_mark_never_earlier",
        "a plane's mark is never moved earlier: a marked plane is written only with a later deadline (32-bit serial)",
        implies(mark_v.expr().logic_and(cur_v.clone()), later(sg(m, "m_mark_until").expr(), cur_u.expr())),
    );
    m.assert(
        "a_mark_when",
        "such a timeout does mark the plane when it is unmarked or its mark is earlier",
        implies(
            at_ans
                .expr()
                .logic_and(&f_rto)
                .logic_and(sus_dead.clone())
                .logic_and(live.clone())
                .logic_and(in_planes)
                .logic_and(cur_v.clone().logic_not().logic_or(later(until, cur_u.expr()))),
            &mark_v,
        ),
    );

    // ------------------------------------------------ the PROBE
    let queued = sg(m, "s_rd_probe_q").expr().bit_at(&f_path);
    let reply = f_rto
        .expr()
        .logic_not()
        .logic_and(st.eq(lit(2, u64::from(tel::SUSPECT))))
        .logic_and(f_act.bit(lost_bit).logic_not())
        .logic_and(sg(m, "s_rd_failed").expr().logic_not());
    m.assert(
        "a_probe_only",
        "a PROBE is pushed only at the answer of a step with the PROBE action, for its connection and path, when none \
         is queued for the path: a timeout on a live connection, or an update to SUSPECT without ALL_LOST (a PROBE \
         reply) on a connection not failed",
        implies(
            sg(m, "m_probe_valid"),
            at_ans
                .expr()
                .logic_and(mine(m, "m_probe_conn", "m_probe_path"))
                .logic_and(f_act.bit(probe_bit))
                .logic_and(queued.logic_not())
                .logic_and(f_rto.expr().logic_and(live).logic_or(reply)),
        ),
    );

    // ------------------------------------------------ every path DEAD
    let fv = sg(m, "m_fail_valid");
    m.assert(
        "a_fail_all_dead",
        "the connection fails exactly at the answer of a step that leaves every path below npaths of a live \
         connection DEAD, for the step's connection, TRANSPORT_RETRY_EXCEEDED with no culprit",
        fv.expr().eq(fails.clone()).logic_and(implies(
            &fv,
            sg(m, "m_fail_conn")
                .expr()
                .eq(&f_conn)
                .logic_and(sg(m, "m_fail_status").expr().eq(lit(4, u64::from(status::TRANSPORT_RETRY_EXCEEDED))))
                .logic_and(sg(m, "m_fail_culprit_valid").expr().logic_not()),
        )),
    );
    m.assert(
        "a_fail_queues_nothing",
        "a failing connection gets no PROBE and no walk (the failure flushes both)",
        implies(&fv, sg(m, "m_probe_valid").expr().logic_not().logic_and(sg(m, "m_ring_rd_valid").expr().logic_not())),
    );

    // ------------------------------------------------ the walk
    let rd = sg(m, "m_ring_rd_valid");
    m.assert(
        "a_walk_reads",
        "the walk reads exactly one slot a cycle from the answer of a timeout with ALL_LOST on a live connection, \
         while slots below next_psn are left (never past next_psn)",
        rd.expr().eq(&in_walk),
    );
    m.assert(
        "a_walk_order",
        "the walk's reads go in psn order from cum_acked (mod 2^24), on the step's connection and path",
        implies(
            &rd,
            sg(m, "m_ring_rd_psn").expr().eq(cum_now.expr() + zext(&j, PSN)).logic_and(mine(
                m,
                "m_ring_rd_conn",
                "m_ring_rd_path",
            )),
        ),
    );
    m.assert(
        "a_walk_within_ring",
        &format!("the walk reads at most tx_ring_depth = {r} slots"),
        implies(&rd, j.expr().lt(lit(agw, r))),
    );
    m.assert(
        "a_walk_before_free",
        "every slot read is answered, and its push made, before tx_ack's count lets the next step start",
        implies(&rd, wait.expr().gt(lit(bb, u64::from(l))))
            .logic_and(implies(sg(m, "m_retx_valid"), wait.expr().ne(lit(bb, 0)))),
    );
    let push_want = ans_v.expr().logic_and(sg(m, "s_ring_valid")).logic_and(sg(m, "s_ring_queued").expr().logic_not());
    m.assert(
        "a_retx_push",
        "a slot is queued for retransmission exactly when the walk's read of it, L cycles ago, answers valid and not \
         queued; the push names that slot on the step's connection and path",
        sg(m, "m_retx_valid").expr().eq(push_want).logic_and(implies(
            sg(m, "m_retx_valid"),
            sg(m, "m_retx_psn").expr().eq(&ans_psn).logic_and(mine(m, "m_retx_conn", "m_retx_path")),
        )),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_unstall_valid", &["m_unstall_conn"][..]),
        ("m_rd_valid", &["m_rd_conn", "m_rd_path"]),
        (
            "m_pm_valid",
            &[
                "m_pm_conn",
                "m_pm_path",
                "m_pm_state",
                "m_pm_rto",
                "m_pm_sport",
                "m_pm_gen",
                "m_pm_timed_out_we",
                "m_pm_timed_out",
                "m_pm_clr_set",
            ],
        ),
        ("m_mark_valid", &["m_mark_plane", "m_mark_until"]),
        ("m_probe_valid", &["m_probe_conn", "m_probe_path"]),
        ("m_ring_rd_valid", &["m_ring_rd_conn", "m_ring_rd_path", "m_ring_rd_psn"]),
        ("m_retx_valid", &["m_retx_conn", "m_retx_path", "m_retx_psn"]),
        ("m_ctx_dead_valid", &["m_ctx_dead_conn", "m_ctx_dead"]),
        ("m_fail_valid", &["m_fail_conn", "m_fail_culprit_stream", "m_fail_culprit_slot", "m_fail_status"]),
    ] {
        crate::formal::quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    let ghosts = [&f_rto, &f_conn, &f_path, &f_state, &f_sport, &f_gen, &f_act, &f_clr, &f_ts];
    let busy_prev = mux(f_rto.expr().logic_and(f_act.bit(lost_bit)), lit(agw, 1 + r), lit(agw, 1));
    step.invariants(m, &f.pipe, (&f.rec, &ghosts), busy_prev);
    let after = age.expr().gt(lit(agw, u64::from(l)));
    let left_want = mux(
        f_walk.expr().logic_and(after.clone()).logic_and(zext(&j, PSN).lt(&f_span)),
        f_span.expr() - zext(&j, PSN),
        lit(PSN, 0),
    );
    m.assert(
        "a_inv_walk",
        "the walk's count left is its span less the slots read, 0 with no walk; while it runs its next psn is \
         cum_acked plus the slots read; a walk's span is at most tx_ring_depth, and it is a timeout's with ALL_LOST",
        f.walk_left.expr().eq(left_want).logic_and(implies(
            f_walk.expr().logic_and(after).logic_and(zext(&j, PSN).le(&f_span)),
            f.walk_psn
                .expr()
                .eq(f_cum.expr() + zext(&j, PSN))
                .logic_and(f_span.expr().le(lit(PSN, r)))
                .logic_and(f_rto.expr().logic_and(f_act.bit(lost_bit))),
        )),
    );
    for (s, (v, q)) in shift.iter().enumerate() {
        let ago = lit(agw, s as u64 + 1);
        let k = j.expr() - ago.clone();
        m.assert(
            &format!("a_inv_ring_rd{s}"),
            &format!(
                "the slot reads in flight are the walk's reads as they left, {} cycle(s) ago: a slot of the running walk",
                s + 1
            ),
            f.rd_v[s].expr().eq(v).logic_and(implies(
                v,
                f.rd_psn[s]
                    .expr()
                    .eq(q)
                    .logic_and(&f_walk)
                    .logic_and(age.expr().ge(lit(agw, u64::from(l))  + ago))
                    .logic_and(zext(k.clone(), PSN).lt(&f_span))
                    .logic_and(q.expr().eq(f_cum.expr() + zext(k, PSN))),
            )),
        );
    }

    // ------------------------------------------------ covers
    m.cover(
        "c_walk_full_ring",
        &format!("a timeout with ALL_LOST walks a full ring: the {r}th slot is read"),
        rd.expr().logic_and(j.expr().eq(lit(agw, r - 1))),
    );
    m.cover("c_retx_push", "a walked slot is queued for retransmission", sg(m, "m_retx_valid").expr());
    m.cover("c_upd_clr", "an update sets the credit clear", sg(m, "m_pm_clr_set").expr());
    m.cover("c_probe_rto", "a timeout pushes a PROBE", sg(m, "m_probe_valid").expr().logic_and(&f_rto));
    m.cover(
        "c_probe_reply",
        "an update (a PROBE reply) pushes a PROBE",
        sg(m, "m_probe_valid").expr().logic_and(f_rto.expr().logic_not()),
    );
    m.cover("c_mark", "a timeout marks a plane over an earlier mark", mark_v.expr().logic_and(cur_v));
}
