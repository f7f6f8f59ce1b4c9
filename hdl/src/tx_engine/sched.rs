//! The scheduler's control of `tx_engine` as a clocked unit (`tx_sched`):
//! the start, the telemetry read handshake, the decision and the path
//! request handshake, with the cycle timing of the model's scheduler
//! ([`mrnic_model::tx_engine`]: `Sched`, its match in `clock`,
//! `may_start`, `start`, `decide`, `next_stream`, `stall`, and
//! `outputs()` for `m_trd_*` / `m_psel_*`). The rules are the
//! combinational units the model calls too: [`super::rr_pick`]
//! (`rr_first`), [`super::path_choice`] (`choose`), [`super::stream_heads`]
//! and [`super::stream_pick`] (`stream_head`, `stream_choice`).
//!
//! # Interface with the rest of the engine
//! - **The start** (idle, `start_ok` high and `frames` below
//!   `FRAME_QUEUE + PROBE_ROOM`): the first connection of the ready set
//!   (`s_ready`, a bit per connection: the engine's `conn_has_work`, from
//!   each context word) at or after `rr_conn`, round robin; with
//!   `FRAME_QUEUE` frames queued only connections with a PROBE queued
//!   (`s_probe`) may start. `rr_conn` moves past the pick. A pick with a
//!   PROBE queued sends it (`m_probe_*`, the engine pops the connection's
//!   PROBE queue, writes the mirror, pushes the frame and the event) and
//!   the unit stays idle; else the telemetry read starts. `start_ok` is
//!   the engine's `may_start` but for the frame queue (the
//!   acknowledgement unit idle, its input registers empty, the event FIFO
//!   empty and `L` cycles quiet, no update or timeout offered; low during
//!   the clear sweep); `frames` is `tx_output`'s `m_frames`.
//! - **The telemetry read**: `m_trd_*` valid/ready with the connection,
//!   then `s_trd_ready` high until `s_trd_*` answers; the view (state,
//!   inflight, cwnd, weight per path) is held for the decision's later
//!   cycles and the request's weights. `s_trd_conn` is not a port (the
//!   telemetry answers in order, one read at a time).
//! - **The decision**, in the cycle the view arrives and `L` cycles after
//!   each stale head's pop: it reads the deciding connection's state as
//!   levels, valid in that cycle: its context (`s_ctx_*`), its retransmit
//!   queue's head and that head's ring slot's `queued` bit (`s_retx_*`),
//!   its paths' mirrors (`s_pm_*`, paths below `npaths`), its streams'
//!   words (`s_sw_*`), the NIC's plane marks (`mark_*`), `port_ready` and
//!   `ts_now`; the engine keeps them as the model's decision finds them
//!   (the stores' values at the start of the cycle; the ring slot of a
//!   head is read with the telemetry for the first head and as the
//!   previous head pops for the next, `L` cycles, which is the decide
//!   state's wait). A queued head with a path it may take is resent;
//!   one that waits for a full port stalls the connection with
//!   `port_wait`; a stale one (acknowledged or moved to an RNR back-off
//!   since it was queued) is popped (`m_pop_*`) and the decision looks
//!   again `L` cycles later. Else new data: the stream from `rr_stream`
//!   whose head may go; none (a window probe armed, `m_wprobe_*`, when
//!   every pending head waits for the peer's message table, nothing is in
//!   flight or PROBEd and none is armed, unless the window-probe FIFO is
//!   full, `s_wp_full`: then counted on `m_stat_wprobe_full`, and the
//!   engine wakes the connection at the FIFO's next pop) or no path (`port_wait` when only
//!   full ports hold it) stalls the connection (`m_stall_*`);
//!   `m_stat_ring_full` when a stream may send and a path is held by its
//!   ring alone. A packet to send forms the path request and takes the
//!   paths' credit clears (`m_clr_*`: the engine clears those bits).
//! - **The path request**: `m_psel_*` valid/ready, then `s_psel_ready`
//!   while no completion walk runs (`walk_running`, the walk's state at
//!   the start of the cycle: a commit may fail the connection, which
//!   needs the walk) until `s_psel_*` answers. A path hands the decided
//!   packet to the commit (`m_commit_*`: the connection, a retransmission's
//!   path and psn or new data's stream, the chosen path `phys`, and for
//!   new data the paths one more packet fills); `s_psel_none` ends the
//!   decision without one. `s_psel_conn` is not a port (one request
//!   at a time).
//! - `m_sched_idle`: the scheduler is idle after this edge (the
//!   acknowledgement unit steps and a reopen is taken only then).
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_sched` ([`crate::proof::blocks`], [`formal_tasks`]),
//! all by 2-induction (boolector), with ghosts for the outstanding read
//! and request, the picked connection, the decided packet and the cycles
//! since the latest pop:
//! - path_selector's obligation, assumed: an answer with a path names one
//!   the request offered (`asm_s_psel_path_elig`); and the neighbours'
//!   answer channels `s_trd` and `s_psel` hold valid and payload until
//!   taken (`asm_s_trd_*`, `asm_s_psel_*`, the valid/ready rule, which
//!   no assertion needs: the unit takes each answer as it comes);
//! - `m_trd` and `m_psel` hold valid until ready and their payload still;
//!   one read and one request outstanding at a time, never both, and
//!   `s_trd_ready` / `s_psel_ready` only while one is; `s_psel_ready` low
//!   while `walk_running`; the read names the picked connection, the
//!   request the deciding connection and the decided packet's paths;
//! - a commit only from an answered request naming a path, on a path the
//!   decision found eligible, carrying the decided packet;
//! - a decision ends in exactly one of a pop, a request or a stall; a pop
//!   takes a stale head of the deciding connection; a decision comes at
//!   least `L` cycles after the latest pop;
//! - a PROBE starts only when probes may (idle, `start_ok`, the queue below
//!   `FRAME_QUEUE + PROBE_ROOM`, the connection ready with a PROBE queued),
//!   a decision only below `FRAME_QUEUE`;
//! - the start is fair: the connection picked may start and is the first
//!   at or after `rr_conn` in cyclic order, and `rr_conn` is one past the
//!   latest start's pick;
//! - a window probe is armed only by a decision that stalls on new data,
//!   never while one is armed or its FIFO is full, and refused (counted)
//!   only by such a decision; credit clears are taken exactly when a
//!   request is formed, only pending clears of the connection's paths, and
//!   the request carries them; the ring-full count only from a decision
//!   looking for new data;
//! - helper invariants (`a_inv_*`) tie the ghosts to the state;
//! - covers: a commit of each kind, a pop and the decision after it, a
//!   stall, a window probe, one refused, a clear taken, ring full, a start that wraps,
//!   a PROBE start, a no-path answer, each handshake's stall.
//!
//! What it leaves to the engine: the commit itself (the ring slot, the
//! mirror, `cut`, the work queue count, the frame push and the telemetry
//! event, the retry limit's failure), the PROBE's send, the ready set's
//! bits and the stores it reads. `m_trd_*`, `s_trd_ready` and `m_psel_*`
//! come from registers; `s_psel_ready` from a register and
//! `walk_running`; the pulses of the edge (`m_probe_*`, `m_pop_*`,
//! `m_stall_*`, `m_wprobe_*`, `m_clr_*`, `m_stat_ring_full`, `m_stat_wprobe_full`,
//! `m_commit_*`) and `m_sched_idle` from the state and this cycle's
//! inputs, as the model makes them within its clock.

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::{TxEngineParams, FRAME_QUEUE, PROBE_ROOM};
use mrnic_proto::tables::path as pt;

use super::{
    gate, path_choice, rr_pick, stream_heads, stream_pick, stream_ptr_bits, ChoiceIn, ChoiceSizes, StreamWords,
    INFLIGHT_BITS,
};
use crate::expr::{cat, index_bits, lit, mux, repl, zext, Expr, Signal};
use crate::ir::{set, Module, Reg};

/// Module name.
pub const NAME: &str = "tx_sched";

/// Frame queue entries (`tx_output`'s `m_frames` counts to it).
const QUEUE: u32 = (FRAME_QUEUE + PROBE_ROOM) as u32;

/// The scheduler's states, as the model's `Sched`.
const IDLE: u64 = 0;
const READ: u64 = 1;
const DECIDE: u64 = 2;
const SELECT: u64 = 3;

const RST: &str = "Clock and reset";
const START: &str = "The start (ready set, frame queue)";
const DEC: &str = "The deciding connection's state (levels, valid in a decision's cycle)";
const OUT: &str = "The decision's writes";
const SEL: &str = "Path request (path_selector s_req / m_sel)";
const COMMIT: &str = "The decided packet, to the commit";

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb, n, s) = (p.conn_bits, p.stream_bits, p.paths, p.streams);
    let pb = index_bits(n);
    let planes = p.cfg.transport.planes;
    let qb = stream_ptr_bits(p.wq_depth);
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    let shared = |names: &[&str]| super::engine_ports(p, names);
    let mut v = vec![i("rst", 1, RST, "synchronous reset, active high")];
    v.extend(shared(&["ts_now", "port_ready"]));
    v.extend([
        i("start_ok", 1, START, "the engine's may_start but for the frame queue (low in the clear sweep)"),
        i("frames", index_bits(QUEUE + 1), START, "frames queued (tx_output's m_frames)"),
        i("s_ready", p.conns, START, "per connection: it has work (conn_has_work, from its context word)"),
        i("s_probe", p.conns, START, "per connection: a PROBE is queued"),
        o("m_probe_valid", 1, START, "the start sends a PROBE of m_probe_conn (the engine pops its PROBE queue)"),
        o("m_probe_conn", cb, START, "its connection"),
        o("m_sched_idle", 1, START, "the scheduler is idle after this edge"),
    ]);
    v.extend(shared(&[
        "m_trd_valid",
        "m_trd_ready",
        "m_trd_conn",
        "s_trd_valid",
        "s_trd_ready",
        "s_trd_state",
        "s_trd_inflight",
        "s_trd_cwnd",
        "s_trd_weight",
    ]));
    v.extend([
        i("s_ctx_npaths", pb + 1, DEC, "the connection's paths"),
        i("s_ctx_inflight", INFLIGHT_BITS, DEC, "its bytes in flight"),
        i("s_ctx_cap", 32, DEC, "its cap in bytes"),
        i("s_ctx_rr_stream", sb, DEC, "the stream its round robin starts from"),
        i("s_ctx_wprobe_armed", 1, DEC, "a window probe is armed"),
        i("s_wp_full", 1, DEC, "the window-probe FIFO is full: no probe can be armed"),
        i("s_retx_valid", 1, DEC, "its retransmit queue has a head"),
        i("s_retx_path", pb, DEC, "the head's path"),
        i("s_retx_psn", 24, DEC, "the head's psn"),
        i("s_retx_queued", 1, DEC, "the head's ring slot is still queued for retransmission (else stale)"),
        i("s_pm_plane", n * pt::PLANE.width, DEC, "per path (mirror): plane"),
        i("s_pm_timed_out", n, DEC, "per path: timed out since its last progress"),
        i("s_pm_next_psn", n * 24, DEC, "per path: next psn"),
        i("s_pm_cum_acked", n * 24, DEC, "per path: cumulative acknowledged psn"),
        i("s_pm_probe_pending", n, DEC, "per path: a PROBE is unanswered"),
        i("s_pm_clr", n, DEC, "per path: a credit clear is pending"),
        i("s_sw_pend", s * qb, DEC, "per stream: pend"),
        i("s_sw_tail", s * qb, DEC, "per stream: tail"),
        i("s_sw_next_msn", s * 24, DEC, "per stream: the next msn to post"),
        i("s_sw_started", s, DEC, "per stream: the request at pend has bytes cut"),
        i("s_sw_remote_completed", s * 24, DEC, "per stream: the peer's completed_msn"),
        i("mark_valid", planes, DEC, "per plane: marked unhealthy ..."),
        i("mark_until", planes * 32, DEC, "... until this timestamp"),
        o("m_pop_valid", 1, OUT, "the retransmit queue's stale head is popped"),
        o("m_pop_conn", cb, OUT, "its connection"),
        o("m_stall_valid", 1, OUT, "the decision found nothing to send: the connection stalls"),
        o("m_stall_conn", cb, OUT, "its connection"),
        o("m_stall_port_wait", 1, OUT, "only full ports held it (a port_ready rise wakes it)"),
        o("m_wprobe_valid", 1, OUT, "a window probe is armed"),
        o("m_wprobe_conn", cb, OUT, "its connection"),
        o("m_clr_valid", 1, OUT, "a path request is formed: its credit clears are taken"),
        o("m_clr_conn", cb, OUT, "its connection"),
        o("m_clr_mask", n, OUT, "the paths whose clear bit the engine clears"),
        o("m_stat_ring_full", 1, OUT, "a stream may send and a path is held by its ring alone"),
        o("m_stat_wprobe_full", 1, OUT, "a window probe was due but its FIFO was full (the connection stalls)"),
    ]);
    v.extend(shared(&[
        "m_psel_valid",
        "m_psel_ready",
        "m_psel_conn",
        "m_psel_elig",
        "m_psel_weight",
        "m_psel_clr",
        "s_psel_valid",
        "s_psel_ready",
        "s_psel_path",
        "s_psel_none",
    ]));
    v.extend([
        i("walk_running", 1, SEL, "a completion walk runs (its state at the start of the cycle)"),
        o("m_commit_valid", 1, COMMIT, "a decided packet goes to the commit"),
        o("m_commit_conn", cb, COMMIT, "its connection"),
        o("m_commit_retx", 1, COMMIT, "a retransmission (else new data)"),
        o("m_commit_path", pb, COMMIT, "a retransmission's path"),
        o("m_commit_psn", 24, COMMIT, "a retransmission's psn"),
        o("m_commit_stream", sb, COMMIT, "new data's stream"),
        o("m_commit_phys", pb, COMMIT, "the path path_selector chose"),
        o("m_commit_full_after", n, COMMIT, "new data: paths one more packet fills"),
    ]);
    v
}

/// One of the unit's two round trips (the telemetry read, the path
/// request): in its state the request is offered on `m_<bus>_valid` until
/// it handshakes (`issued`), then the answer is awaited on
/// `s_<bus>_ready` and taken when `s_<bus>_valid` comes while `may_take`.
struct Trip {
    /// The request is offered.
    offer: Signal,
    /// The answer is taken.
    taken: Signal,
}

/// The round trip on bus `bus` (`trd`, `psel`) for connection `conn` in
/// state `in_state`; its wires are `<stem>_offer`, `<stem>_wait` and
/// `<stem>_taken`.
fn trip(
    m: &mut Module,
    bus: &str,
    stem: &str,
    in_state: &Signal,
    issued: &Signal,
    may_take: Expr,
    conn: &Signal,
) -> Trip {
    let port = |m: &Module, nm: String| crate::formal::port(m, &nm);
    let offer = in_state.expr().logic_and(issued.expr().logic_not());
    let offer = m.wire_from(&format!("{stem}_offer"), 1, "the request is offered", offer);
    let wait = in_state.expr().logic_and(issued).logic_and(may_take);
    let wait = m.wire_from(&format!("{stem}_wait"), 1, "the answer may be taken: the request handshook", wait);
    m.assign(port(m, format!("m_{bus}_valid")), &offer);
    m.assign(port(m, format!("m_{bus}_conn")), gate(&offer, conn, conn.width()));
    m.assign(port(m, format!("s_{bus}_ready")), &wait);
    let taken = wait.expr().logic_and(port(m, format!("s_{bus}_valid")));
    let taken = m.wire_from(&format!("{stem}_taken"), 1, "the answer is taken", taken);
    Trip { offer, taken }
}

/// The `tx_sched` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb, n) = (p.conn_bits, p.stream_bits, p.paths);
    let pb = index_bits(n);
    let l = p.read_latency;
    assert!(l >= 1, "a table answers a cycle after its read at the earliest");
    let wb = index_bits(l);
    let fb = index_bits(QUEUE + 1);
    let (sw, iw, cw, ww) = (pt::STATE.width, pt::INFLIGHT.width, pt::CWND.width, pt::WEIGHT.width);

    let mut m = Module::new(NAME);
    m.describe("tx_engine scheduler control: start, telemetry read, decision, path request, commit hand-off");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ state
    let st = m.reg("sched_state", 2, IDLE, "0 idle, 1 telemetry read, 2 decide after a pop, 3 path request");
    let issued = m.reg_no_reset("sched_issued", 1, "the read or the request has handshaken");
    let conn = m.reg_no_reset("sched_conn", cb, "the deciding connection");
    let wait = m.reg_no_reset("sched_wait", wb, "decide: cycles until the next head's ring slot is in");
    let rr = m.reg("rr_conn", cb, 0, "the ready set's round robin starts here");
    let v_state = m.reg_no_reset("view_state", n * sw, "the telemetry answer: per path state");
    let v_infl = m.reg_no_reset("view_inflight", n * iw, "per path packets in flight");
    let v_cwnd = m.reg_no_reset("view_cwnd", n * cw, "per path window");
    let v_weight = m.reg_no_reset("view_weight", n * ww, "per path SWRR weight");
    let r_retx = m.reg_no_reset("req_retx", 1, "the request's packet is a retransmission");
    let r_path = m.reg_no_reset("req_path", pb, "its path (a retransmission)");
    let r_psn = m.reg_no_reset("req_psn", 24, "its psn (a retransmission)");
    let r_stream = m.reg_no_reset("req_stream", sb, "its stream (new data)");
    let r_full = m.reg_no_reset("req_full_after", n, "paths one more packet fills (new data)");
    let r_elig = m.reg_no_reset("req_elig", n, "the paths it may take");
    let r_clr = m.reg_no_reset("req_clr", n, "the credit clears it carries");
    let is = |r: &Reg, v: u64| r.q.expr().eq(lit(2, v));
    let in_idle = w(&mut m, "in_idle", 1, "idle", is(&st, IDLE));
    let in_read = w(&mut m, "in_read", 1, "telemetry read", is(&st, READ));
    let in_decide = w(&mut m, "in_decide", 1, "decide after a pop", is(&st, DECIDE));
    let in_select = w(&mut m, "in_select", 1, "path request", is(&st, SELECT));

    // ------------------------------------------------------------ the start
    let fr = sg("frames");
    let may = w(
        &mut m,
        "may_start",
        1,
        "idle, the engine lets a decision start and the frame queue has room",
        in_idle.expr().logic_and(sg("start_ok")).logic_and(fr.expr().lt(lit(fb, u64::from(QUEUE)))),
    );
    let probes_only = w(
        &mut m,
        "probes_only",
        1,
        "FRAME_QUEUE frames are queued: only a PROBE may start",
        fr.expr().ge(lit(fb, FRAME_QUEUE as u64)),
    );
    let set_ = w(
        &mut m,
        "start_set",
        p.conns,
        "the connections that may start",
        sg("s_ready").expr() & mux(&probes_only, sg("s_probe"), repl(p.conns, lit(1, 1))),
    );
    let pick = rr_pick(&mut m, "start", &set_, &rr.q);
    let start = w(&mut m, "start", 1, "a connection is picked", may.expr().logic_and(&pick.found));
    let pick_probe = w(
        &mut m,
        "start_probe",
        1,
        "the picked connection has a PROBE queued: it is sent",
        start.expr().logic_and(sg("s_probe").expr().bit_at(&pick.pick)),
    );
    let start_read = w(
        &mut m,
        "start_read",
        1,
        "the picked connection's decision starts",
        start.expr().logic_and(pick_probe.expr().logic_not()),
    );
    m.assign(sg("m_probe_valid"), &pick_probe);
    m.assign(sg("m_probe_conn"), gate(&pick_probe, &pick.pick, cb));

    // ------------------------------------------------------------ the telemetry read
    let rd = trip(&mut m, "trd", "read", &in_read, &issued.q, lit(1, 1), &conn.q);
    let (read_req, answered) = (rd.offer, rd.taken);

    // ------------------------------------------------------------ the decision
    let dec = w(
        &mut m,
        "decide",
        1,
        "the decision acts: the view arrives, or the next head's ring slot is in",
        answered.expr().logic_or(in_decide.expr().logic_and(wait.q.expr().eq(lit(wb, 0)))),
    );
    let vs = w(&mut m, "dv_state", n * sw, "the view decided on: state", mux(&answered, sg("s_trd_state"), &v_state.q));
    let vi = w(&mut m, "dv_inflight", n * iw, "inflight", mux(&answered, sg("s_trd_inflight"), &v_infl.q));
    let vc = w(&mut m, "dv_cwnd", n * cw, "cwnd", mux(&answered, sg("s_trd_cwnd"), &v_cwnd.q));
    let conn_ok = w(
        &mut m,
        "conn_ok",
        1,
        "the connection is below its cap",
        sg("s_ctx_inflight").expr().lt(zext(sg("s_ctx_cap"), INFLIGHT_BITS)),
    );
    let ch = path_choice(
        &mut m,
        "pc",
        &ChoiceSizes::of(p),
        &ChoiceIn {
            npaths: sg("s_ctx_npaths"),
            state: vs.clone(),
            plane: sg("s_pm_plane"),
            timed_out: sg("s_pm_timed_out"),
            inflight: vi.clone(),
            cwnd: vc,
            next_psn: sg("s_pm_next_psn"),
            cum_acked: sg("s_pm_cum_acked"),
            mark_valid: sg("mark_valid"),
            mark_until: sg("mark_until"),
            port_ready: sg("port_ready"),
            ts: sg("ts_now"),
            conn_ok,
            retx_path: sg("s_retx_path"),
        },
    );
    let np = sg("s_ctx_npaths");
    let exists = w(
        &mut m,
        "exists",
        n,
        "per path: below npaths",
        cat(&(0..n).rev().map(|i| lit(pb + 1, u64::from(i)).lt(&np)).collect::<Vec<_>>()),
    );
    let head = sg("s_retx_valid");
    let queued = sg("s_retx_queued");
    let stale = w(
        &mut m,
        "head_stale",
        1,
        "the head was acknowledged or moved to an RNR back-off since it was queued: popped",
        head.expr().logic_and(queued.expr().logic_not()),
    );
    let retx_go = w(
        &mut m,
        "retx_go",
        1,
        "the queued head has a path",
        head.expr().logic_and(&queued).logic_and(ch.retx_elig.expr().ne(lit(n, 0))),
    );
    let retx_wait = w(
        &mut m,
        "retx_wait",
        1,
        "the queued head waits for a full port: nothing of the connection overtakes it",
        head.expr().logic_and(&queued).logic_and(ch.retx_elig.expr().eq(lit(n, 0))).logic_and(&ch.retx_port_wait),
    );
    let want_new = w(
        &mut m,
        "want_new",
        1,
        "no retransmission goes or waits: new data is looked for",
        stale.expr().logic_or(&retx_go).logic_or(&retx_wait).logic_not(),
    );
    let heads = stream_heads(
        &mut m,
        "sh",
        &StreamWords {
            pend: sg("s_sw_pend"),
            tail: sg("s_sw_tail"),
            next_msn: sg("s_sw_next_msn"),
            pend_started: sg("s_sw_started"),
            remote_completed: sg("s_sw_remote_completed"),
        },
    );
    let sp = stream_pick(&mut m, "sp", p.cfg.hardware.msg_table_depth, &heads, &sg("s_ctx_rr_stream"));
    let new_go = w(
        &mut m,
        "new_go",
        1,
        "a stream may send and a path may take it",
        want_new.expr().logic_and(&sp.found).logic_and(ch.new_elig.expr().ne(lit(n, 0))),
    );
    let quiet = w(
        &mut m,
        "quiet",
        1,
        "nothing in flight and no PROBE unanswered on the connection's paths",
        cat(&(0..n)
            .rev()
            .map(|i| {
                let idle = vi
                    .slice(iw * i + iw - 1, iw * i)
                    .eq(lit(iw, 0))
                    .logic_and(sg("s_pm_probe_pending").bit(i).logic_not());
                exists.bit(i).logic_not().logic_or(idle)
            })
            .collect::<Vec<_>>())
        .reduce_and(),
    );
    let d_new = dec.expr().logic_and(&want_new);
    let wprobe_due = w(
        &mut m,
        "wprobe_due",
        1,
        "every pending head waits for the peer's table, the connection is quiet and no probe is armed",
        d_new.clone().logic_and(&sp.blocked).logic_and(&quiet).logic_and(sg("s_ctx_wprobe_armed").expr().logic_not()),
    );
    let wp_full = sg("s_wp_full");
    let wprobe = w(
        &mut m,
        "wprobe_arm",
        1,
        "a window probe is armed: due, its FIFO not full",
        wprobe_due.expr().logic_and(wp_full.expr().logic_not()),
    );
    m.assign(sg("m_stat_wprobe_full"), wprobe_due.expr().logic_and(&wp_full));
    let go = w(
        &mut m,
        "go",
        1,
        "a packet is decided: the path request is formed",
        dec.expr().logic_and(retx_go.expr().logic_or(&new_go)),
    );
    let pop = w(&mut m, "pop", 1, "the stale head is popped", dec.expr().logic_and(&stale));
    let stall_port = w(
        &mut m,
        "stall_port",
        1,
        "the connection stalls for full ports alone",
        retx_wait.expr().logic_or(want_new.expr().logic_and(&sp.found).logic_and(&ch.new_port_wait)),
    );
    let stall = w(
        &mut m,
        "stall",
        1,
        "the decision found nothing to send",
        dec.expr().logic_and(retx_wait.expr().logic_or(want_new.expr().logic_and(new_go.expr().logic_not()))),
    );
    m.assign(sg("m_pop_valid"), &pop);
    m.assign(sg("m_pop_conn"), gate(&pop, &conn.q, cb));
    m.assign(sg("m_stall_valid"), &stall);
    m.assign(sg("m_stall_conn"), gate(&stall, &conn.q, cb));
    m.assign(sg("m_stall_port_wait"), stall.expr().logic_and(&stall_port));
    m.assign(sg("m_wprobe_valid"), &wprobe);
    m.assign(sg("m_wprobe_conn"), gate(&wprobe, &conn.q, cb));
    let clr =
        w(&mut m, "clr_taken", n, "the credit clears of the connection's paths", sg("s_pm_clr").expr() & exists.expr());
    m.assign(sg("m_clr_valid"), &go);
    m.assign(sg("m_clr_conn"), gate(&go, &conn.q, cb));
    m.assign(sg("m_clr_mask"), gate(&go, &clr, n));
    m.assign(sg("m_stat_ring_full"), d_new.logic_and(&sp.found).logic_and(&ch.ring_held));

    // ------------------------------------------------------------ the path request
    // The answer is not taken while a completion walk runs: it could fail
    // the connection the packet is committed for.
    let not_walking = sg("walk_running").expr().logic_not();
    let sel = trip(&mut m, "psel", "sel", &in_select, &issued.q, not_walking, &conn.q);
    let (req, sel_done) = (sel.offer, sel.taken);
    m.assign(sg("m_psel_elig"), gate(&req, &r_elig.q, n));
    m.assign(sg("m_psel_weight"), gate(&req, &v_weight.q, n * ww));
    m.assign(sg("m_psel_clr"), gate(&req, &r_clr.q, n));
    let commit = w(
        &mut m,
        "commit",
        1,
        "the answer names a path: the packet goes to the commit",
        sel_done.expr().logic_and(sg("s_psel_none").expr().logic_not()),
    );
    m.assign(sg("m_commit_valid"), &commit);
    m.assign(sg("m_commit_conn"), gate(&commit, &conn.q, cb));
    let c_retx = commit.expr().logic_and(&r_retx.q);
    let c_new = commit.expr().logic_and(r_retx.q.expr().logic_not());
    m.assign(sg("m_commit_retx"), c_retx.clone());
    m.assign(sg("m_commit_path"), gate(c_retx.clone(), &r_path.q, pb));
    m.assign(sg("m_commit_psn"), gate(c_retx, &r_psn.q, 24));
    m.assign(sg("m_commit_stream"), gate(c_new.clone(), &r_stream.q, sb));
    m.assign(sg("m_commit_phys"), gate(&commit, sg("s_psel_path"), pb));
    m.assign(sg("m_commit_full_after"), gate(c_new, &r_full.q, n));

    // ------------------------------------------------------------ next state
    // A decision goes to decide (a pop), the request (a packet) or idle
    // (a stall): exactly one of the three.
    let dec_next = mux(&pop, lit(2, DECIDE), mux(&go, lit(2, SELECT), lit(2, IDLE)));
    let st_next = w(
        &mut m,
        "state_next",
        2,
        "the state after this edge",
        mux(&dec, dec_next, mux(&start_read, lit(2, READ), mux(&sel_done, lit(2, IDLE), st.q.expr()))),
    );
    m.assign(sg("m_sched_idle"), st_next.expr().eq(lit(2, IDLE)));
    m.next(set(&st.next, &st_next));
    // `issued` is cleared entering a handshake state and set by its handshake.
    m.next(set(
        &issued.next,
        mux(
            start_read.expr().logic_or(&go),
            lit(1, 0),
            mux(
                req.expr().logic_and(sg("m_psel_ready")).logic_or(read_req.expr().logic_and(sg("m_trd_ready"))),
                lit(1, 1),
                &issued.q,
            ),
        ),
    ));
    m.next(set(&conn.next, mux(&start_read, &pick.pick, &conn.q)));
    m.next(set(&rr.next, mux(&start, pick.pick.expr() + lit(cb, 1), &rr.q)));
    let wait_dec = mux(wait.q.expr().eq(lit(wb, 0)), lit(wb, 0), wait.q.expr() - lit(wb, 1));
    m.next(set(&wait.next, mux(&pop, lit(wb, u64::from(l - 1)), wait_dec)));
    for (r, s) in
        [(&v_state, "s_trd_state"), (&v_infl, "s_trd_inflight"), (&v_cwnd, "s_trd_cwnd"), (&v_weight, "s_trd_weight")]
    {
        m.next(set(&r.next, mux(&answered, sg(s), &r.q)));
    }
    let hold = |r: &Reg, e: Expr| set(&r.next, mux(&go, e, &r.q));
    m.next(hold(&r_retx, retx_go.expr()));
    m.next(hold(&r_path, sg("s_retx_path").expr()));
    m.next(hold(&r_psn, sg("s_retx_psn").expr()));
    m.next(hold(&r_stream, sp.pick.expr()));
    m.next(hold(&r_full, mux(&retx_go, lit(n, 0), &ch.full_after)));
    m.next(hold(&r_elig, mux(&retx_go, &ch.retx_elig, &ch.new_elig)));
    m.next(hold(&r_clr, clr.expr()));
    let inner = Inner {
        in_idle,
        in_read,
        in_decide,
        in_select,
        issued: issued.q,
        conn: conn.q,
        wait: wait.q,
        start,
        start_read,
        start_set: set_,
        rr: rr.q,
        pick: pick.pick,
        dec,
        pop,
        go,
        stall,
        elig: mux(&retx_go, &ch.retx_elig, &ch.new_elig),
        retx_go,
        stream: sp.pick,
        req: [r_retx.q, r_path.q, r_psn.q, r_stream.q, r_elig.q, r_clr.q],
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and decisions its formal properties read.
struct Inner {
    in_idle: Signal,
    in_read: Signal,
    in_decide: Signal,
    in_select: Signal,
    issued: Signal,
    conn: Signal,
    wait: Signal,
    start: Signal,
    start_read: Signal,
    /// The connections that may start, and the round robin's position.
    start_set: Signal,
    rr: Signal,
    pick: Signal,
    dec: Signal,
    pop: Signal,
    go: Signal,
    stall: Signal,
    /// The paths the decided packet may take.
    elig: Expr,
    retx_go: Signal,
    stream: Signal,
    /// The request's registers: retx, path, psn, stream, elig, clr.
    req: [Signal; 6],
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port, valid_ready, Side};
    use crate::ir::{if_else, if_then};
    let (cb, sb, n) = (p.conn_bits, p.stream_bits, p.paths);
    let pb = index_bits(n);
    let l = p.read_latency;
    let wb = f.wait.width();
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");

    // ------------------------------------------------ the handshakes
    let (tv, tr) = (sg(m, "m_trd_valid"), sg(m, "m_trd_ready"));
    valid_ready(m, "m_trd", Side::Source, &tv, &tr, &[sg(m, "m_trd_conn")], &rst);
    let (pv, pr) = (sg(m, "m_psel_valid"), sg(m, "m_psel_ready"));
    let payload: Vec<Signal> =
        ["m_psel_conn", "m_psel_elig", "m_psel_weight", "m_psel_clr"].iter().map(|x| sg(m, x)).collect();
    valid_ready(m, "m_psel", Side::Source, &pv, &pr, &payload, &rst);
    // The answers' channels, from the neighbours' side (path_telemetry's
    // read answer, path_selector's m_sel): valid and payload held until
    // taken, as any valid/ready source keeps them.
    let ans: Vec<Signal> =
        ["s_trd_state", "s_trd_inflight", "s_trd_cwnd", "s_trd_weight"].iter().map(|x| sg(m, x)).collect();
    let (tav, tar) = (sg(m, "s_trd_valid"), sg(m, "s_trd_ready"));
    valid_ready(m, "s_trd", Side::Sink, &tav, &tar, &ans, &rst);
    let sel: Vec<Signal> = ["s_psel_path", "s_psel_none"].iter().map(|x| sg(m, x)).collect();
    let (sav, sar) = (sg(m, "s_psel_valid"), sg(m, "s_psel_ready"));
    valid_ready(m, "s_psel", Side::Sink, &sav, &sar, &sel, &rst);

    // ------------------------------------------------ ghosts
    let (atv, atr) = (sg(m, "s_trd_valid"), sg(m, "s_trd_ready"));
    let (apv, apr) = (sg(m, "s_psel_valid"), sg(m, "s_psel_ready"));
    let trd_out = m.formal_wire("f_trd_out", 1, "a telemetry read handshook and is not answered yet");
    let psel_out = m.formal_wire("f_psel_out", 1, "a path request handshook and is not answered yet");
    let g_conn = m.formal_wire("f_conn", cb, "the connection the latest read started for");
    let sb_w = index_bits(l + 1);
    let since = m.formal_wire("f_since_pop", sb_w, &format!("cycles since the latest pop, saturating at L = {l}"));
    let d_elig = m.formal_wire("f_dec_elig", n, "the paths the latest decided packet may take");
    let d_retx = m.formal_wire("f_dec_retx", 1, "the latest decided packet is a retransmission");
    let d_path = m.formal_wire("f_dec_path", pb, "its path (a retransmission)");
    let d_psn = m.formal_wire("f_dec_psn", 24, "its psn (a retransmission)");
    let d_stream = m.formal_wire("f_dec_stream", sb, "its stream (new data)");
    let q_elig = m.formal_wire("f_psel_elig", n, "the paths the handshaken request offered");
    let d_clr = m.formal_wire("f_dec_clr", n, "the credit clears the latest path request took");
    let g_rr = m.formal_wire("f_rr", cb, "one past the latest start's connection (0 after reset)");
    let sat = lit(sb_w, u64::from(l));
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&trd_out, lit(1, 0)), set(&psel_out, lit(1, 0)), set(&since, sat.clone()), set(&g_rr, lit(cb, 0))],
        vec![
            if_then(tv.expr().logic_and(&tr), vec![set(&trd_out, lit(1, 1))]),
            if_then(atv.expr().logic_and(&atr), vec![set(&trd_out, lit(1, 0))]),
            if_then(pv.expr().logic_and(&pr), vec![set(&psel_out, lit(1, 1)), set(&q_elig, sg(m, "m_psel_elig"))]),
            if_then(apv.expr().logic_and(&apr), vec![set(&psel_out, lit(1, 0))]),
            if_then(&f.start_read, vec![set(&g_conn, &f.pick)]),
            if_then(&f.start, vec![set(&g_rr, f.pick.expr() + lit(cb, 1))]),
            if_else(
                &f.pop,
                vec![set(&since, lit(sb_w, 1))],
                vec![if_then(since.expr().lt(sat.clone()), vec![set(&since, since.expr() + lit(sb_w, 1))])],
            ),
            if_then(
                &f.go,
                vec![
                    set(&d_elig, f.elig.clone()),
                    set(&d_retx, &f.retx_go),
                    set(&d_path, sg(m, "s_retx_path")),
                    set(&d_psn, sg(m, "s_retx_psn")),
                    set(&d_stream, &f.stream),
                    set(&d_clr, sg(m, "m_clr_mask")),
                ],
            ),
        ],
    )]);

    // ------------------------------------------------ the engine's obligation
    let phys = sg(m, "s_psel_path");
    m.assume(
        "asm_s_psel_path_elig",
        "path_selector answers a path only among those the request offered (its s_req_elig)",
        implies(
            apv.expr().logic_and(&apr).logic_and(sg(m, "s_psel_none").expr().logic_not()),
            q_elig.expr().bit_at(&phys),
        ),
    );

    // ------------------------------------------------ one read, one request
    m.assert(
        "a_trd_one",
        "a telemetry read is offered only with no read and no request outstanding",
        implies(&tv, trd_out.expr().logic_not().logic_and(psel_out.expr().logic_not())),
    );
    m.assert("a_trd_ready_outstanding", "s_trd_ready only while a read is outstanding", implies(&atr, &trd_out));
    m.assert(
        "a_psel_one",
        "a path request is offered only with no request and no read outstanding",
        implies(&pv, psel_out.expr().logic_not().logic_and(trd_out.expr().logic_not())),
    );
    m.assert("a_psel_ready_outstanding", "s_psel_ready only while a request is outstanding", implies(&apr, &psel_out));
    m.assert(
        "a_psel_ready_no_walk",
        "s_psel_ready is low while a completion walk runs",
        implies(sg(m, "walk_running"), apr.expr().logic_not()),
    );
    m.assert(
        "a_trd_conn",
        "the read names the connection picked at the start",
        implies(&tv, sg(m, "m_trd_conn").expr().eq(&g_conn)),
    );
    m.assert(
        "a_psel_decided",
        "the request names the deciding connection and the decided packet's eligible paths, some path",
        implies(
            &pv,
            sg(m, "m_psel_conn")
                .expr()
                .eq(&g_conn)
                .logic_and(sg(m, "m_psel_elig").expr().eq(&d_elig))
                .logic_and(d_elig.expr().ne(lit(n, 0))),
        ),
    );

    // ------------------------------------------------ the commit
    let cv = sg(m, "m_commit_valid");
    m.assert(
        "a_commit_answered",
        "a commit only from an answered request that names a path",
        implies(
            &cv,
            psel_out.expr().logic_and(&apv).logic_and(&apr).logic_and(sg(m, "s_psel_none").expr().logic_not()),
        ),
    );
    m.assert(
        "a_commit_path_elig",
        "the commit's path is one the decision found eligible for the packet",
        implies(&cv, d_elig.expr().bit_at(sg(m, "m_commit_phys"))),
    );
    let c_retx = sg(m, "m_commit_retx");
    m.assert(
        "a_commit_decided",
        "the commit carries the decided packet: its connection, kind, and path and psn or stream",
        implies(
            &cv,
            sg(m, "m_commit_conn").expr().eq(&g_conn).logic_and(c_retx.expr().eq(&d_retx)).logic_and(mux(
                &d_retx,
                sg(m, "m_commit_path").expr().eq(&d_path).logic_and(sg(m, "m_commit_psn").expr().eq(&d_psn)),
                sg(m, "m_commit_stream").expr().eq(&d_stream),
            )),
        ),
    );

    // ------------------------------------------------ the decision
    let outcomes = cat(&[f.pop.expr(), f.go.expr(), f.stall.expr()]);
    m.assert(
        "a_decision_one_outcome",
        "a decision ends in exactly one of a pop, a path request or a stall, and none happens outside a decision",
        mux(
            &f.dec,
            outcomes
                .clone()
                .eq(lit(3, 1))
                .logic_or(outcomes.clone().eq(lit(3, 2)))
                .logic_or(outcomes.clone().eq(lit(3, 4))),
            outcomes.eq(lit(3, 0)),
        ),
    );
    m.assert(
        "a_pop_stale",
        "a pop takes the deciding connection's head, only a stale one (not queued)",
        implies(
            sg(m, "m_pop_valid"),
            sg(m, "s_retx_valid")
                .expr()
                .logic_and(sg(m, "s_retx_queued").expr().logic_not())
                .logic_and(sg(m, "m_pop_conn").expr().eq(&g_conn)),
        ),
    );
    m.assert(
        "a_decide_after_pop",
        &format!("the decision after a pop comes at least L = {l} cycles after it (the next head's ring slot is in)"),
        implies(&f.dec, since.expr().ge(sat.clone())),
    );

    // ------------------------------------------------ the start
    let fr = sg(m, "frames");
    let fb = fr.width();
    let pc = sg(m, "m_probe_conn");
    m.assert(
        "a_probe_start",
        "a PROBE starts only when probes may: idle, start_ok, the frame queue below FRAME_QUEUE + PROBE_ROOM, and \
         the connection ready with a PROBE queued",
        implies(
            sg(m, "m_probe_valid"),
            f.in_idle
                .expr()
                .logic_and(sg(m, "start_ok"))
                .logic_and(fr.expr().lt(lit(fb, u64::from(QUEUE))))
                .logic_and(sg(m, "s_ready").expr().bit_at(&pc))
                .logic_and(sg(m, "s_probe").expr().bit_at(&pc)),
        ),
    );
    m.assert(
        "a_read_start_room",
        "a decision starts only when idle, start_ok and the frame queue below FRAME_QUEUE, on a ready connection",
        implies(
            &f.start_read,
            f.in_idle
                .expr()
                .logic_and(sg(m, "start_ok"))
                .logic_and(fr.expr().lt(lit(fb, FRAME_QUEUE as u64)))
                .logic_and(sg(m, "s_ready").expr().bit_at(&f.pick)),
        ),
    );

    // ------------------------------------------------ the round robin
    // The start is fair: the connection picked is the first that may
    // start at or after `rr_conn`, in cyclic order, and the next start
    // looks from the one after it, so every connection that stays ready
    // starts within `conns` starts.
    let set_ = &f.start_set;
    let dist = |x: Expr| x - f.rr.expr();
    // For any one connection (an anyconst, so the check is one comparison,
    // not one per connection: default has 4096 of them).
    let j = m.formal_anyconst("f_rr_conn", cb, "any connection");
    // Above 64 connections `rr_pick` looks through 64-bit words and a
    // summary bit per word: a label of its own, for a task of its own.
    let label = if p.conns > 64 { RR_FIRST_WORDS } else { RR_FIRST };
    m.assert(
        label,
        "a start picks a connection that may start; no connection that may start lies between rr_conn and it in \
         cyclic order",
        implies(
            &f.start,
            set_.expr()
                .bit_at(&f.pick)
                .logic_and(implies(set_.expr().bit_at(&j), dist(j.expr()).ge(dist(f.pick.expr())))),
        ),
    );
    m.assert("a_rr_next", "rr_conn is one past the latest start's connection", f.rr.expr().eq(&g_rr));

    // ------------------------------------------------ the decision's side records
    let stv = sg(m, "m_stall_valid");
    m.assert(
        "a_wprobe_stall",
        "a window probe is armed only by a decision that stalls on new data, for the deciding connection, and not \
         while one is armed or its FIFO is full",
        implies(
            sg(m, "m_wprobe_valid"),
            stv.expr()
                .logic_and(f.retx_go.expr().logic_not())
                .logic_and(sg(m, "m_wprobe_conn").expr().eq(&g_conn))
                .logic_and(sg(m, "s_ctx_wprobe_armed").expr().logic_not())
                .logic_and(sg(m, "s_wp_full").expr().logic_not()),
        ),
    );
    m.assert(
        "a_wprobe_full",
        "a window probe refused for its full FIFO is counted only by a decision that stalls on new data, for no \
         armed probe, and never with one armed",
        implies(
            sg(m, "m_stat_wprobe_full"),
            stv.expr()
                .logic_and(f.retx_go.expr().logic_not())
                .logic_and(sg(m, "s_wp_full"))
                .logic_and(sg(m, "s_ctx_wprobe_armed").expr().logic_not())
                .logic_and(sg(m, "m_wprobe_valid").expr().logic_not()),
        ),
    );
    let np = sg(m, "s_ctx_npaths");
    let below = cat(&(0..n).rev().map(|i| lit(pb + 1, u64::from(i)).lt(&np)).collect::<Vec<_>>());
    let mask = sg(m, "m_clr_mask");
    m.assert(
        "a_clr_taken",
        "credit clears are taken exactly when a path request is formed, for the deciding connection, and only \
         pending clears of the connection's paths",
        sg(m, "m_clr_valid").expr().eq(&f.go).logic_and(mux(
            &f.go,
            sg(m, "m_clr_conn")
                .expr()
                .eq(&g_conn)
                .logic_and((mask.expr() & !(sg(m, "s_pm_clr").expr() & below)).eq(lit(n, 0))),
            mask.expr().eq(lit(n, 0)),
        )),
    );
    m.assert(
        "a_psel_clr",
        "the path request carries the clears taken when it was formed",
        implies(&pv, sg(m, "m_psel_clr").expr().eq(&d_clr)),
    );
    m.assert(
        "a_ring_full_new",
        "the ring-full count is raised only by a decision looking for new data",
        implies(
            sg(m, "m_stat_ring_full"),
            f.dec.expr().logic_and(sg(m, "m_pop_valid").expr().logic_not()).logic_and(f.retx_go.expr().logic_not()),
        ),
    );

    // ------------------------------------------------ invariants the induction needs
    let [r_retx, r_path, r_psn, r_stream, r_elig, r_clr] = &f.req;
    m.assert(
        "a_inv_outstanding",
        "a read is outstanding exactly in the read state after its handshake, a request likewise in the request state",
        trd_out
            .expr()
            .eq(f.in_read.expr().logic_and(&f.issued))
            .logic_and(psel_out.expr().eq(f.in_select.expr().logic_and(&f.issued))),
    );
    m.assert(
        "a_inv_since_pop",
        &format!("after a pop the decide state's wait and the cycles since add up to L = {l}; else L have passed"),
        mux(
            &f.in_decide,
            f.wait.expr().le(lit(wb, u64::from(l - 1))).logic_and(zext(since.expr(), sb_w.max(wb) + 1).eq(zext(
                sat.clone(),
                sb_w.max(wb) + 1,
            ) - zext(
                f.wait.expr(),
                sb_w.max(wb) + 1,
            ))),
            since.expr().eq(sat),
        ),
    );
    m.assert(
        "a_inv_conn",
        "out of idle the deciding connection is the one picked at the start",
        implies(f.in_idle.expr().logic_not(), f.conn.expr().eq(&g_conn)),
    );
    m.assert(
        "a_inv_request",
        "in the request state the request's registers hold the decided packet, and an outstanding request offered \
         its paths",
        implies(
            &f.in_select,
            r_elig
                .expr()
                .eq(&d_elig)
                .logic_and(d_elig.expr().ne(lit(n, 0)))
                .logic_and(r_retx.expr().eq(&d_retx))
                .logic_and(r_path.expr().eq(&d_path))
                .logic_and(r_psn.expr().eq(&d_psn))
                .logic_and(r_stream.expr().eq(&d_stream))
                .logic_and(r_clr.expr().eq(&d_clr))
                .logic_and(implies(&psel_out, q_elig.expr().eq(&d_elig))),
        ),
    );

    // ------------------------------------------------ covers
    m.cover("c_commit_retx", "a retransmission is committed", cv.expr().logic_and(&c_retx));
    m.cover("c_commit_new", "new data is committed", cv.expr().logic_and(c_retx.expr().logic_not()));
    m.cover("c_pop", "a stale head is popped", sg(m, "m_pop_valid"));
    m.cover("c_decide_after_pop", "the decision after a pop acts", f.dec.expr().logic_and(&f.in_decide));
    m.cover("c_stall", "the connection stalls", sg(m, "m_stall_valid"));
    m.cover("c_wprobe", "a window probe is armed", sg(m, "m_wprobe_valid"));
    m.cover("c_wprobe_full", "a window probe is refused for its full FIFO", sg(m, "m_stat_wprobe_full"));
    m.cover("c_clr", "a path request takes a credit clear", sg(m, "m_clr_mask").expr().ne(lit(n, 0)));
    m.cover("c_ring_full", "a stream may send and a path is held by its ring alone", sg(m, "m_stat_ring_full"));
    m.cover(
        "c_rr_wrap",
        "a start picks a connection below rr_conn (the round robin wraps)",
        f.start.expr().logic_and(f.pick.expr().lt(&f.rr)),
    );
    m.cover("c_probe_start", "a PROBE is sent at a start", sg(m, "m_probe_valid"));
    m.cover(
        "c_psel_none",
        "path_selector answers no path: the decision ends without a commit",
        apv.expr().logic_and(&apr).logic_and(sg(m, "s_psel_none")),
    );
}

/// The `tx_sched` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The unit's proof tasks: every assertion by 2-induction and the covers
/// to 16 cycles, with boolector ([`crate::proof::boolector_tasks`]); the
/// start's fairness in a task of its own, `prove_rr`, leaning on the
/// others: by 2-induction when `rr_pick` is one word (up to 64
/// connections), a bounded check above, where its induction did not close,
/// with the same rule proven by 2-induction on [`RR_WORDS_CONNECTIONS`]
/// connections (`prove_rr_conns512`).
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::Mode;
    let mut tasks = crate::proof::boolector_tasks(2, 16);
    let rr_label = |l: &String| l == RR_FIRST || l == RR_FIRST_WORDS;
    let mut rr = tasks[0].clone();
    tasks[0].asserts = Some(asserts.iter().filter(|l| !rr_label(l)).cloned().collect());
    rr.name = "prove_rr";
    rr.asserts = Some(asserts.iter().filter(|l| rr_label(l)).cloned().collect());
    rr.lean_on_proven = true;
    if asserts.iter().any(|l| l == RR_FIRST_WORDS) {
        rr.name = "bmc_rr";
        rr.mode = Mode::Bmc(RR_BMC_DEPTH);
        rr.why_bounded = "on default (4096 connections, 64 words) neither the 2-induction nor a depth-4 check of \
                          the two-level round robin finished in 12 minutes (boolector, load 7; the 2-induction again \
                          not in 25 minutes, load 6-8, 2026-12-03); depth 3 checks a start from rr_conn's reset \
                          value with any ready bits, exhaustively";
        // The induction step is the pick's combinational rule for any
        // rr_conn and ready set, and its time grows fast with the words
        // (128 connections 7 s, 512 17-48 s, 2048 5 minutes at load 8):
        // the same two-level code on 8 words closes in seconds, and needs
        // none of the other rules, so it leans on nothing proven elsewhere.
        let mut words = rr.clone();
        words.name = "prove_rr_conns512";
        words.mode = Mode::Prove(2);
        words.why_bounded = "";
        words.lean_on_proven = false;
        words.connections = Some(RR_WORDS_CONNECTIONS);
        tasks.insert(1, words);
    }
    tasks.insert(1, rr);
    tasks
}

/// The connection count `prove_rr_conns512` proves the words' round robin
/// on: 8 words of 64, where its 2-induction closes.
pub const RR_WORDS_CONNECTIONS: u32 = 512;

/// The start's fairness assertion, proven in its own task; its label when
/// `rr_pick` looks through words.
const RR_FIRST: &str = "a_start_rr_first";
const RR_FIRST_WORDS: &str = "a_start_rr_first_words";

/// Depth of the words' bounded check: the first start after reset (from
/// `rr_conn` = 0, any ready bits) is checked; a start from an arbitrary
/// `rr_conn` needs depth 4, which did not finish. From any `rr_conn` the
/// words' form is checked against the model's `rr_first` under Icarus
/// (`hdl/tests/tx_engine.rs`, `icarus_rr_pick_is_the_models`, 4096 bits).
const RR_BMC_DEPTH: u32 = 3;
