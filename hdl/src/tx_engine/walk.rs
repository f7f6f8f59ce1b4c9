//! The completion walk of `tx_engine` as a clocked unit (`tx_walk`): the
//! walk's state, its table reads and their latency, the completion FIFO
//! and `m_cqe_*`, with the cycle timing of the model's walk
//! ([`mrnic_model::tx_engine`]: `complete`, `fail`, `walk_step`, the
//! acknowledgement unit's walk branch in `clock`, the post's flush push,
//! the `m_cqe` handshake and `outputs()`). Each step's decision is the
//! combinational [`super::walk_step`], the model's `walk_next`.
//!
//! # Interface with the rest of the engine
//! - **Starts**: a SACK's last stage starts a walk of the streams it
//!   acknowledged packets of (`s_done_*`); a failure starts a flush walk
//!   (`s_fail_*`: the commit's retry limit, a NACK, a reopen), and so
//!   does the output stage's failed payload read (`s_rdfail_*`, its
//!   `m_fail_*`, status LOCAL_PROTECTION). The engine starts a walk only
//!   with none running (the model's rule); a start wins over a step in
//!   the same cycle, which is then the walk's last. The failed read has a
//!   port of its own because it comes after every other start in the
//!   model's cycle: `m_walk_busy`, which the output stage waits on before
//!   it reports a failed read, counts the other starts and not that one,
//!   so no loop closes through the two units.
//! - **Steps** happen when the walk runs, the read issued for it has
//!   answered (`L` cycles, `hardware.table_read_latency`), the
//!   acknowledgement unit has no step of its own in progress
//!   (`ack_free`, its busy count is 0) and the completion FIFO has room
//!   after this edge's pop. Every start sets the wait to `L`; the model's
//!   commit fails a connection before its acknowledgement unit counts the
//!   wait down in the same cycle (`L - 1` left), which no output shows:
//!   a failure holds the acknowledgement unit for its ring clear, more
//!   than `L` cycles.
//! - **Reads** stay outside, so the engine can share its memories: the
//!   work queue entry and the slot's two packet counts at
//!   `m_wq_rd_{conn,stream,slot}` while `m_wq_rd_valid`, answered on
//!   `s_wq_rd_*` `L` edges later as a registered read does. The address
//!   is the one the next step needs, presented from the edge that makes
//!   it known (a step, or a SACK's start) and every cycle after until the
//!   step, so the answer at the step is the one the model acts on
//!   whatever the read port does in between; nothing writes what the
//!   walk reads while it runs (architecture.md, tx_engine item 9). A
//!   failure's walk presents its first address from the cycle after its
//!   start: its first step waits for the ring clear (`PATHS x
//!   tx_ring_depth` cycles of the acknowledgement unit), and its
//!   connection's words are read meanwhile.
//! - **The streams' words** (`s_sw_head`, `_pend`, `_tail`, every stream
//!   of the walking connection, stream 0 lowest): the engine's register of
//!   that connection's word, the walk's own writes in from the cycle
//!   after; valid while a walk runs and in a SACK's start cycle (the
//!   SACK's last stage holds them). Only the looked-at stream's `pend`
//!   and `tail` are used, and only in a step.
//! - **Writes**, at the step's edge: the looked-at stream's head moves on
//!   (`m_sw_head_valid`, new value `m_sw_head`), or a stream found empty
//!   by a failure is drained (`m_sw_drain_valid`: `pend` becomes
//!   `m_sw_pend`, its tail, and its bytes cut 0), both at
//!   `m_sw_{conn,stream}`; a flushed request's `acked` count becomes its
//!   `issued` (`m_acked_valid`, `m_acked_{conn,stream,slot,data}`).
//! - **Completions**: the [`CQE_FIFO`]-entry FIFO, the walk's completion
//!   pushed first, then the post's flush (`s_flush_*`, status WR_FLUSH),
//!   which the engine pushes only when `m_cqe_room` (room after this
//!   edge's pop and the walk's push) and the walk is not busy
//!   (`m_walk_busy`), the model's `flush_room`. `m_cqe_*` is the FIFO's
//!   head, from registers.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_walk` ([`crate::proof::blocks`], [`formal_tasks`]):
//! - the engine's obligations, assumed: a SACK's or a failure's start only
//!   with no walk running after this edge's step and never two at once, a
//!   SACK's with some stream touched, a failure's status an error; a
//!   failed read's start only while `m_walk_busy` is low; a flush push only
//!   with `m_cqe_room` and `m_walk_busy` low; `ack_free`, the streams'
//!   words and the read answers otherwise arbitrary;
//! - `m_cqe` holds valid and the completion until its handshake; the FIFO
//!   holds exactly what was pushed and not taken, at most [`CQE_FIFO`],
//!   neither push is ever lost, and completions leave in push order,
//!   unaltered (any one tracked from its push to its handshake);
//! - no write and no completion of the walk without a walk, and only in a
//!   step (its read answered, `ack_free`, room); only a failure's walk
//!   drains a stream or rewrites an acked count; every write, read and
//!   completion names the walking connection (a ghost of the last start);
//!   a SACK's walk completes only streams its SACK acknowledged, with
//!   SUCCESS; a failure's walk completes its culprit with the failure's
//!   status and every other request with it or WR_FLUSH;
//! - the read timing, proven with two more of the engine's obligations (a
//!   failure's ring clear holds `ack_free` low for `L` cycles, and the
//!   heads change only by the walk's writes): a step acts on the answer to
//!   the address shown `L` cycles before, which names the slot it looks at;
//! - covers: a SACK's walk completes a request, a failure's flushes two, the
//!   FIFO fills, a flush is pushed, a walk ends and the unit is idle.

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::{status, TxEngineParams, CQE_FIFO};

use super::{lowest, stream_ptr_bits, walk_count_bits, walk_step, WalkNets, WalkSizes};
use crate::expr::{cat, index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{if_else, if_then, set, Module, Reg};

/// Module name.
pub const NAME: &str = "tx_walk";

const RST: &str = "Clock and reset";
const START: &str = "Walk starts (a SACK's last stage, failures, the output stage's failed read)";
const WORDS: &str = "The walking connection's streams' words (the engine's register)";
const RD: &str = "Work queue entry and packet counts read (registered, L cycles)";
const WR: &str = "Writes of the step";
const FLUSH: &str = "Flush completions of the post";

/// Bits of the slot index in a work queue (`tx_wq_depth` slots).
fn slot_bits(p: &TxEngineParams) -> u32 {
    index_bits(p.wq_depth)
}

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb, s) = (p.conn_bits, p.stream_bits, p.streams);
    let pb = stream_ptr_bits(p.wq_depth);
    let kb = walk_count_bits(p);
    let i = |n: &str, w: u32, g: &'static str, c: &str| PortDef::input(n, w, g, c);
    let o = |n: &str, w: u32, g: &'static str, c: &str| PortDef::output(n, w, g, c);
    let shared = |names: &[&str]| super::engine_ports(p, names);
    let wr = shared(&["s_wr_wr_id", "s_wr_op", "s_wr_len", "s_wr_imm"]);
    let (idw, opw, lenw, immw) = (wr[0].width, wr[1].width, wr[2].width, wr[3].width);
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ack_free", 1, RST, "the acknowledgement unit has no step of its own in progress: the walk may step"),
        i("s_done_valid", 1, START, "a SACK's walk starts (no walk running)"),
        i("s_done_conn", cb, START, "its connection"),
        i("s_done_touched", s, START, "bit i: the SACK acknowledged a packet of stream i (some bit set)"),
        i("s_fail_valid", 1, START, "a failure's flush walk starts (no walk running)"),
        i("s_fail_conn", cb, START, "the failed connection"),
        i("s_fail_culprit_valid", 1, START, "a request caused it: it completes first with s_fail_status"),
        i("s_fail_culprit_stream", sb, START, "the culprit's stream"),
        i("s_fail_culprit_slot", pb, START, "the culprit's work queue pointer"),
        i("s_fail_status", 4, START, "the culprit's status (every request's, without a culprit)"),
        i("s_rdfail_valid", 1, START, "the output stage dropped a frame whose read failed: its connection fails"),
        i("s_rdfail_conn", cb, START, "the frame's connection"),
        i("s_rdfail_stream", sb, START, "its request's stream"),
        i("s_rdfail_slot", pb, START, "its request's work queue pointer"),
        o("m_walk_busy", 1, START, "a walk runs after this edge (a start on s_rdfail aside)"),
        o("m_walk_stays", 1, START, "the running walk runs after this edge (m_walk_busy without this cycle's starts)"),
        i("s_sw_head", s * pb, WORDS, "per stream: head, the oldest request not completed"),
        i("s_sw_pend", s * pb, WORDS, "per stream: pend, the first request with bytes to cut"),
        i("s_sw_tail", s * pb, WORDS, "per stream: tail, where the next request is posted"),
        o("m_wq_rd_valid", 1, RD, "the walk reads: the slot its next step looks at"),
        o("m_wq_rd_conn", cb, RD, "connection (0 without a read)"),
        o("m_wq_rd_stream", sb, RD, "stream"),
        o("m_wq_rd_slot", slot_bits(p), RD, "work queue slot"),
        i("s_wq_rd_wr_id", idw, RD, "the entry's wr_id, L edges after the address"),
        i("s_wq_rd_op", opw, RD, "its op"),
        i("s_wq_rd_len", lenw, RD, "its message bytes"),
        i("s_wq_rd_imm", immw, RD, "its immediate"),
        i("s_wq_rd_issued", kb, RD, "the slot's packets cut (free-running)"),
        i("s_wq_rd_acked", kb, RD, "the slot's packets acknowledged (free-running)"),
        o("m_sw_head_valid", 1, WR, "the looked-at stream's head moves on"),
        o("m_sw_drain_valid", 1, WR, "the looked-at stream is found empty by a failure: pend = tail, bytes cut 0"),
        o("m_sw_conn", cb, WR, "the walking connection"),
        o("m_sw_stream", sb, WR, "the looked-at stream"),
        o("m_sw_head", pb, WR, "the new head"),
        o("m_sw_pend", pb, WR, "the new pend (the tail)"),
        o("m_acked_valid", 1, WR, "a flushed request's acked count is made its issued count"),
        o("m_acked_conn", cb, WR, "connection"),
        o("m_acked_stream", sb, WR, "stream"),
        o("m_acked_slot", slot_bits(p), WR, "work queue slot"),
        o("m_acked_data", kb, WR, "the new acked count"),
        i("s_flush_valid", 1, FLUSH, "the post flushes a request (only with m_cqe_room and the walk not busy)"),
    ];
    // tx_post's m_flush_* fields, as the engine's s_wr_* sizes them.
    let names: Vec<String> = super::post::FLUSHED.iter().map(|(f, _)| format!("s_wr_{f}")).collect();
    let widths = shared(&names.iter().map(String::as_str).collect::<Vec<_>>());
    for ((f, c), d) in super::post::FLUSHED.iter().zip(&widths) {
        v.push(i(&format!("s_flush_{f}"), d.width, FLUSH, c));
    }
    v.push(o("m_cqe_room", 1, FLUSH, "the completion FIFO has room after this edge's pop and the walk's push"));
    v.extend(shared(&[
        "m_cqe_valid",
        "m_cqe_ready",
        "m_cqe_conn",
        "m_cqe_stream",
        "m_cqe_wr_id",
        "m_cqe_status",
        "m_cqe_opcode",
        "m_cqe_byte_len",
        "m_cqe_imm_valid",
        "m_cqe_imm",
    ]));
    v
}

/// A completion's fields, in FIFO entry order.
const CQE_FIELDS: [&str; 8] = ["conn", "stream", "wr_id", "status", "opcode", "byte_len", "imm_valid", "imm"];

/// The `tx_walk` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb, s) = (p.conn_bits, p.stream_bits, p.streams);
    let pb = stream_ptr_bits(p.wq_depth);
    let kb = walk_count_bits(p);
    let slb = slot_bits(p);
    let l = p.read_latency;
    let wb = index_bits(l + 1);
    let qn = CQE_FIFO as u32;
    let nb = index_bits(qn + 1);
    assert!(l >= 1, "a table answers a cycle after its read at the earliest");

    let mut m = Module::new(NAME);
    m.describe("tx_engine completion walk: walk state, its table reads, the completion FIFO and m_cqe");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |n: &str| sig[n].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, n: &str, width: u32, c: &str, e: Expr| m.wire_from(n, width, c, e);
    let width = |n: &str| defs.iter().find(|d| d.name == n).expect("declared").width;
    let (idw, lenw, immw) = (width("s_wq_rd_wr_id"), width("s_wq_rd_len"), width("s_wq_rd_imm"));
    let slot_of = |ptr: Expr| -> Expr {
        if p.wq_depth == 1 {
            lit(slb, 0)
        } else {
            ptr.slice(slb - 1, 0)
        }
    };

    // ------------------------------------------------------------ state
    let active = m.reg("walk_active", 1, 0, "a walk runs");
    let fail = m.reg_no_reset("walk_fail", 1, "a failure's walk (else a SACK's)");
    let conn = m.reg_no_reset("walk_conn", cb, "the walking connection");
    let touched = m.reg_no_reset("walk_touched", s, "a SACK's walk: the streams still to visit");
    let stream = m.reg_no_reset("walk_stream", sb, "the stream the next step looks at");
    let cul_v = m.reg_no_reset("walk_cul_valid", 1, "a failure's culprit");
    let cul_s = m.reg_no_reset("walk_cul_stream", sb, "its stream");
    let cul_p = m.reg_no_reset("walk_cul_slot", pb, "its work queue pointer");
    let cul_pend = m.reg_no_reset("walk_cul_pending", 1, "the culprit is still to complete");
    let st = m.reg_no_reset("walk_status", 4, "the failure's status");
    let wait = m.reg_no_reset("walk_wait", wb, "edges until the read issued for the next step answers");
    let q_n = m.reg("cq_n", nb, 0, "completions queued");
    let widths = [cb, sb, idw, 4, 1, lenw, 1, immw];
    let fifo: Vec<Vec<Reg>> = (0..qn)
        .map(|k| {
            CQE_FIELDS
                .iter()
                .zip(widths)
                .map(|(f, wd)| m.reg_no_reset(&format!("cq{k}_{f}"), wd, "a queued completion's field"))
                .collect()
        })
        .collect();

    // ------------------------------------------------------------ the step
    let pop = w(
        &mut m,
        "cq_pop",
        1,
        "the head completion is taken",
        q_n.q.expr().ne(lit(nb, 0)).logic_and(sg("m_cqe_ready")),
    );
    let after_pop = w(&mut m, "cq_after_pop", nb, "completions queued after the pop", q_n.q.expr() - zext(&pop, nb));
    // The read answers at the edge the wait runs out (it is at most 1).
    let answered = w(
        &mut m,
        "rd_answered",
        1,
        "the read issued for the next step has answered by this edge",
        if wb == 1 { lit(1, 1) } else { wait.q.slice(wb - 1, 1).eq(lit(wb - 1, 0)) },
    );
    let step = w(
        &mut m,
        "step",
        1,
        "the walk steps: its read has answered, the unit is free, the FIFO has room",
        active
            .q
            .expr()
            .logic_and(&answered)
            .logic_and(sg("ack_free"))
            .logic_and(after_pop.expr().lt(lit(nb, u64::from(qn)))),
    );
    let head_s = w(
        &mut m,
        "head_s",
        pb,
        "the looked-at stream's head",
        super::pick(&sg("s_sw_head"), &stream.q.expr(), s, pb, pb),
    );
    let pend_s = w(&mut m, "pend_s", pb, "its pend", super::pick(&sg("s_sw_pend"), &stream.q.expr(), s, pb, pb));
    let tail_s = w(&mut m, "tail_s", pb, "its tail", super::pick(&sg("s_sw_tail"), &stream.q.expr(), s, pb, pb));
    let sz = WalkSizes::of(p);
    let d = walk_step(
        &mut m,
        "ws",
        &sz,
        &WalkNets {
            fail: fail.q.clone(),
            touched: touched.q.clone(),
            stream: stream.q.clone(),
            culprit_valid: cul_v.q.clone(),
            culprit_stream: cul_s.q.clone(),
            culprit_slot: cul_p.q.clone(),
            culprit_pending: cul_pend.q.clone(),
            st: st.q.clone(),
            head: head_s.clone(),
            pend: pend_s.clone(),
            tail: tail_s.clone(),
            issued: sg("s_wq_rd_issued"),
            acked: sg("s_wq_rd_acked"),
        },
    );
    let push_w = w(&mut m, "cq_push_walk", 1, "the step completes a request", step.expr().logic_and(&d.cqe_valid));
    let push_f = sg("s_flush_valid");

    // ------------------------------------------------------------ writes
    // Their fields are 0 without a write, so that every output has one
    // value every cycle.
    let cul_now = cul_pend.q.expr();
    let adv = w(&mut m, "sw_adv", 1, "the head moves on", step.expr().logic_and(&d.advance));
    let drain = w(&mut m, "sw_drain", 1, "the stream is drained", step.expr().logic_and(&d.drain));
    let sw = w(&mut m, "sw_write", 1, "the stream's word is written", adv.expr().logic_or(&drain));
    let eq = w(&mut m, "acked_write", 1, "the slot's acked count is written", step.expr().logic_and(&d.equalize));
    m.assign(sg("m_sw_head_valid"), &adv);
    m.assign(sg("m_sw_drain_valid"), &drain);
    m.assign(sg("m_sw_conn"), mux(&sw, &conn.q, lit(cb, 0)));
    m.assign(sg("m_sw_stream"), mux(&sw, &stream.q, lit(sb, 0)));
    let head_inc = w(&mut m, "head_inc", pb, "the looked-at stream's next slot", head_s.expr() + lit(pb, 1));
    m.assign(sg("m_sw_head"), mux(&adv, &head_inc, lit(pb, 0)));
    m.assign(sg("m_sw_pend"), mux(&drain, &tail_s, lit(pb, 0)));
    m.assign(sg("m_acked_valid"), &eq);
    m.assign(sg("m_acked_conn"), mux(&eq, &conn.q, lit(cb, 0)));
    m.assign(sg("m_acked_stream"), mux(&eq, &stream.q, lit(sb, 0)));
    m.assign(sg("m_acked_slot"), mux(&eq, slot_of(head_s.expr()), lit(slb, 0)));
    m.assign(sg("m_acked_data"), mux(&eq, sg("s_wq_rd_issued"), lit(kb, 0)));

    // ------------------------------------------------------------ starts
    let done_v = sg("s_done_valid");
    let fail_v = sg("s_fail_valid");
    let rdf_v = sg("s_rdfail_valid");
    let start = w(&mut m, "start", 1, "a walk starts", done_v.expr().logic_or(&fail_v).logic_or(&rdf_v));
    let p2 = if s == 1 { 1 } else { 1u32 << index_bits(s) };
    let dt = sg("s_done_touched");
    let first = match lowest(&dt, 0, p2).1 {
        Some(i) => i,
        None => lit(1, 0),
    };
    let first = w(&mut m, "done_first", sb, "a SACK's walk's first stream: its lowest touched", first);
    let ends =
        w(&mut m, "step_ends", 1, "the step is the walk's last", step.expr().logic_and(d.more.expr().logic_not()));
    m.assign(sg("m_walk_busy"), active.q.expr().logic_and(ends.expr().logic_not()).logic_or(&done_v).logic_or(&fail_v));
    m.assign(sg("m_walk_stays"), active.q.expr().logic_and(ends.expr().logic_not()));

    // ------------------------------------------------------------ the next read
    // The slot the next step looks at: after a step the walk's next state
    // (its stream's head moved on if this step advanced it; no other
    // stream's head changes), after a SACK's start its first touched
    // stream's head, else the running walk's own.
    let more = w(&mut m, "step_more", 1, "the step leaves the walk running", step.expr().logic_and(&d.more));
    let rd_v = w(
        &mut m,
        "rd_valid",
        1,
        "the walk reads this cycle",
        more.expr().logic_or(active.q.expr().logic_and(step.expr().logic_not())).logic_or(&done_v),
    );
    let rd_s =
        w(&mut m, "rd_stream_sel", sb, "the stream read", mux(&done_v, &first, mux(&step, &d.stream, &stream.q)));
    let rd_cul = w(
        &mut m,
        "rd_culprit",
        1,
        "the culprit's slot is read: it is still to complete and no step or start moves the walk",
        active.q.expr().logic_and(cul_now.clone()).logic_and(step.expr().logic_not()),
    );
    let rd_slot = w(
        &mut m,
        "rd_slot",
        slb,
        "the slot read",
        mux(
            &rd_cul,
            slot_of(cul_p.q.expr()),
            mux(
                step.expr().logic_and(&d.advance),
                slot_of(head_inc.expr()),
                if p.wq_depth == 1 { lit(slb, 0) } else { super::pick(&sg("s_sw_head"), &rd_s.expr(), s, pb, slb) },
            ),
        ),
    );
    m.assign(sg("m_wq_rd_valid"), &rd_v);
    m.assign(sg("m_wq_rd_conn"), mux(&rd_v, mux(&done_v, sg("s_done_conn"), &conn.q), lit(cb, 0)));
    m.assign(sg("m_wq_rd_stream"), mux(&rd_v, mux(&rd_cul, &cul_s.q, &rd_s), lit(sb, 0)));
    m.assign(sg("m_wq_rd_slot"), mux(&rd_v, &rd_slot, lit(slb, 0)));

    // ------------------------------------------------------------ the walk's next state
    let fail_any = fail_v.expr().logic_or(&rdf_v);
    let lw = lit(wb, u64::from(l));
    let nx = |m: &mut Module, r: &Reg, on_start: Expr, on_step: Expr| {
        m.next(set(&r.next, mux(&start, on_start, mux(&step, on_step, &r.q))));
    };
    nx(&mut m, &active, lit(1, 1), d.more.expr());
    nx(&mut m, &fail, fail_any.clone(), fail.q.expr());
    nx(
        &mut m,
        &conn,
        mux(&done_v, sg("s_done_conn"), mux(&fail_v, sg("s_fail_conn"), sg("s_rdfail_conn"))),
        conn.q.expr(),
    );
    nx(&mut m, &touched, dt.expr(), d.touched.expr());
    nx(&mut m, &stream, mux(&done_v, &first, lit(sb, 0)), d.stream.expr());
    let cv = mux(&fail_v, sg("s_fail_culprit_valid"), rdf_v.expr());
    nx(&mut m, &cul_v, cv.clone(), cul_v.q.expr());
    nx(&mut m, &cul_s, mux(&fail_v, sg("s_fail_culprit_stream"), sg("s_rdfail_stream")), cul_s.q.expr());
    nx(&mut m, &cul_p, mux(&fail_v, sg("s_fail_culprit_slot"), sg("s_rdfail_slot")), cul_p.q.expr());
    nx(&mut m, &cul_pend, done_v.expr().logic_not().logic_and(cv), lit(1, 0));
    nx(&mut m, &st, mux(&fail_v, sg("s_fail_status"), lit(4, u64::from(status::LOCAL_PROTECTION))), st.q.expr());
    let wait_dec = mux(wait.q.expr().eq(lit(wb, 0)), lit(wb, 0), wait.q.expr() - lit(wb, 1));
    m.next(set(&wait.next, mux(start.expr().logic_or(&step), lw, wait_dec)));

    // ------------------------------------------------------------ the completion FIFO
    // The walk's completion: the looked-at request (the culprit's, at its
    // step) as the entry read answered.
    let op = sg("s_wq_rd_op");
    let cqe_stream = mux(cul_now, &cul_s.q, &stream.q);
    let walk_entry: Vec<Expr> = vec![
        conn.q.expr(),
        cqe_stream,
        sg("s_wq_rd_wr_id").expr(),
        d.cqe_status.expr(),
        op.bit(1),
        sg("s_wq_rd_len").expr(),
        op.bit(0),
        mux(op.bit(0), sg("s_wq_rd_imm"), zeros(immw)),
    ];
    let fop = sg("s_flush_op");
    let flush_entry: Vec<Expr> = vec![
        sg("s_flush_conn").expr(),
        sg("s_flush_stream").expr(),
        sg("s_flush_wr_id").expr(),
        lit(4, u64::from(status::WR_FLUSH)),
        fop.bit(1),
        sg("s_flush_len").expr(),
        fop.bit(0),
        mux(fop.bit(0), sg("s_flush_imm"), zeros(immw)),
    ];
    let at_f = w(&mut m, "cq_flush_pos", nb, "where the flush's completion goes", after_pop.expr() + zext(&push_w, nb));
    m.assign(sg("m_cqe_room"), at_f.expr().lt(lit(nb, u64::from(qn))));
    for k in 0..qn as usize {
        let here_w = push_w.expr().logic_and(after_pop.expr().eq(lit(nb, k as u64)));
        let here_f = push_f.expr().logic_and(at_f.expr().eq(lit(nb, k as u64)));
        for (f, r) in fifo[k].iter().enumerate() {
            let kept = if k + 1 < qn as usize { mux(&pop, &fifo[k + 1][f].q, &r.q) } else { r.q.expr() };
            let v = mux(here_w.clone(), walk_entry[f].clone(), mux(here_f.clone(), flush_entry[f].clone(), kept));
            m.next(set(&r.next, v));
        }
    }
    m.next(set(&q_n.next, at_f.expr() + zext(&push_f, nb)));
    let any = q_n.q.expr().ne(lit(nb, 0));
    m.assign(sg("m_cqe_valid"), any.clone());
    for (k, (f, wd)) in CQE_FIELDS.iter().zip(widths).enumerate() {
        m.assign(sg(&format!("m_cqe_{f}")), mux(any.clone(), &fifo[0][k].q, lit(wd, 0)));
    }

    let inner = Inner {
        active: active.q.clone(),
        fail: fail.q.clone(),
        conn: conn.q.clone(),
        touched: touched.q.clone(),
        stream: stream.q.clone(),
        cul_v: cul_v.q.clone(),
        cul_s: cul_s.q.clone(),
        cul_p: cul_p.q.clone(),
        cul_pend: cul_pend.q.clone(),
        st: st.q.clone(),
        wait: wait.q.clone(),
        q_n: q_n.q.clone(),
        after_pop,
        at_f,
        step,
        answered,
        ends,
        push_w,
        cqe_status: d.cqe_status.clone(),
        head_s,
        walk_cqe: cat(&walk_entry),
        flush_cqe: cat(&flush_entry),
        slots: fifo.iter().map(|e| cat(&e.iter().map(|r| r.q.expr()).collect::<Vec<_>>())).collect(),
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and decisions its formal properties read.
struct Inner {
    active: Signal,
    fail: Signal,
    conn: Signal,
    touched: Signal,
    stream: Signal,
    cul_v: Signal,
    cul_s: Signal,
    cul_p: Signal,
    cul_pend: Signal,
    st: Signal,
    wait: Signal,
    q_n: Signal,
    after_pop: Signal,
    at_f: Signal,
    step: Signal,
    answered: Signal,
    ends: Signal,
    push_w: Signal,
    cqe_status: Signal,
    head_s: Signal,
    /// The walk's and the flush's completion as pushed, and each FIFO
    /// slot's (head first), fields in [`CQE_FIELDS`] order.
    walk_cqe: Expr,
    flush_cqe: Expr,
    slots: Vec<Expr>,
}

/// The `tx_walk` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The assumptions only the read timing needs ([`formal_tasks`]): the
/// failure's ring clear holding `ack_free` low and the streams' heads
/// changing only by the walk's own writes. The other assertions are
/// proven without them (`ack_free` and the words arbitrary).
pub const READ_ASSUMES: &[&str] = &["asm_ack_free_ring_clear", "asm_s_sw_head_held"];

/// The read timing's assertions ([`READ_ASSUMES`]).
fn read_timing(label: &str) -> bool {
    label.starts_with("a_rd_")
}

/// The unit's proof tasks (boolector, see [`crate::proof::Task::solver`]):
/// every assertion but the read timing by k-induction without the
/// [`READ_ASSUMES`] (`prove`, k = 2); the read timing by its own
/// 2-induction with them (`prove_read`), leaning on what `prove` proves;
/// the covers to 20 cycles.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{prove_and_cover, Mode, Task};
    let mut tasks = prove_and_cover(2, 20, false);
    for t in tasks.iter_mut() {
        t.solver = Some("boolector");
    }
    tasks[0].asserts = Some(asserts.iter().filter(|l| !read_timing(l)).cloned().collect());
    tasks[0].without = READ_ASSUMES;
    tasks.insert(
        1,
        Task {
            name: "prove_read",
            mode: Mode::Prove(2),
            asserts: Some(asserts.iter().filter(|l| read_timing(l)).cloned().collect()),
            why_bounded: "",
            arrays: false,
            without: &[],
            lean_on_proven: true,
            connections: None,
            solver: Some("boolector"),
        },
    );
    tasks
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port, valid_ready, Side};
    let (cb, sb, s) = (p.conn_bits, p.stream_bits, p.streams);
    let pb = stream_ptr_bits(p.wq_depth);
    let slb = slot_bits(p);
    let l = p.read_latency;
    let qn = CQE_FIFO as u32;
    let nb = f.q_n.width();
    let sg = |m: &Module, n: &str| port(m, n);
    let rst = sg(m, "rst");
    let st_lit = |v: u8| lit(4, u64::from(v));

    // ------------------------------------------------ m_cqe
    // The payload is the completion (m_cqe_room is not: it is the push rule's).
    let cqe: Vec<Signal> = CQE_FIELDS.iter().map(|n| sg(m, &format!("m_cqe_{n}"))).collect();
    let (cv, cr) = (sg(m, "m_cqe_valid"), sg(m, "m_cqe_ready"));
    valid_ready(m, "m_cqe", Side::Source, &cv, &cr, &cqe, &rst);

    // ------------------------------------------------ the engine's obligations
    // A walk runs after this edge's step (m_walk_busy without the starts).
    let done_v = sg(m, "s_done_valid");
    let fail_v = sg(m, "s_fail_valid");
    let rdf_v = sg(m, "s_rdfail_valid");
    let busy = sg(m, "m_walk_busy");
    let running = f.active.expr().logic_and(f.ends.expr().logic_not());
    m.assume(
        "asm_s_done_idle",
        "a SACK's walk starts only with no walk running after this edge's step (the model's rule)",
        implies(&done_v, running.clone().logic_not()),
    );
    m.assume(
        "asm_s_done_touched",
        "a SACK's walk names some stream it acknowledged a packet of (the model starts none otherwise)",
        implies(&done_v, sg(m, "s_done_touched").expr().ne(lit(s, 0))),
    );
    m.assume(
        "asm_s_fail_idle",
        "a failure's walk starts only with no walk running after this edge's step, and not with a SACK's",
        implies(&fail_v, running.logic_not().logic_and(done_v.expr().logic_not())),
    );
    let fst = sg(m, "s_fail_status");
    m.assume(
        "asm_s_fail_status",
        "a failure's status is an error (the model's fail: LOCAL_PROTECTION to WR_FLUSH), never SUCCESS",
        implies(&fail_v, fst.expr().ne(st_lit(status::SUCCESS)).logic_and(fst.expr().le(st_lit(status::WR_FLUSH)))),
    );
    m.assume(
        "asm_s_rdfail_idle",
        "a failed read starts a walk only while m_walk_busy is low (the output stage waits on it), so with no \
         other start",
        implies(&rdf_v, busy.expr().logic_not()),
    );
    let flush_v = sg(m, "s_flush_valid");
    let room = sg(m, "m_cqe_room");
    m.assume(
        "asm_s_flush_room",
        "the post flushes a request only with m_cqe_room and the walk not busy (the model's flush_room)",
        implies(&flush_v, room.expr().logic_and(busy.expr().logic_not())),
    );

    // ------------------------------------------------ the walk's ghosts
    // What the latest start said: its kind, connection, status and the
    // SACK's streams.
    let start = done_v.expr().logic_or(&fail_v).logic_or(&rdf_v);
    let g_fail = m.formal_wire("f_walk_fail", 1, "the latest start was a failure's");
    let g_conn = m.formal_wire("f_walk_conn", cb, "the latest start's connection");
    let g_st = m.formal_wire("f_walk_status", 4, "the latest failure's status (LOCAL_PROTECTION for a failed read)");
    let g_touched = m.formal_wire("f_walk_touched", s, "the latest SACK's acknowledged streams");
    let g_pushes = m.formal_wire("f_walk_pushes", 2, "completions the walk pushed since its start (saturating at 3)");
    m.formal_seq(vec![
        if_then(
            &done_v,
            vec![set(&g_fail, lit(1, 0)), set(&g_conn, sg(m, "s_done_conn")), set(&g_touched, sg(m, "s_done_touched"))],
        ),
        if_then(&fail_v, vec![set(&g_fail, lit(1, 1)), set(&g_conn, sg(m, "s_fail_conn")), set(&g_st, &fst)]),
        if_then(
            &rdf_v,
            vec![
                set(&g_fail, lit(1, 1)),
                set(&g_conn, sg(m, "s_rdfail_conn")),
                set(&g_st, st_lit(status::LOCAL_PROTECTION)),
            ],
        ),
        if_else(
            start.clone(),
            vec![set(&g_pushes, lit(2, 0))],
            vec![if_then(
                f.push_w.expr().logic_and(g_pushes.expr().ne(lit(2, 3))),
                vec![set(&g_pushes, g_pushes.expr() + lit(2, 1))],
            )],
        ),
    ]);
    let act = f.active.expr();
    m.assert(
        "a_walk_conn",
        "a running walk's connection is the one its start named",
        implies(act.clone(), f.conn.expr().eq(&g_conn)),
    );
    m.assert(
        "a_walk_kind",
        "a running walk is a failure's exactly when its start was",
        implies(act.clone(), f.fail.expr().eq(&g_fail)),
    );
    m.assert(
        "a_walk_status",
        "a failure's walk keeps the status its start gave, an error",
        implies(
            act.clone().logic_and(&g_fail),
            f.st.expr().eq(&g_st).logic_and(g_st.expr().ne(st_lit(status::SUCCESS))),
        ),
    );
    m.assert(
        "a_walk_culprit",
        "a running walk's culprit is still to complete only in a failure's walk that has one, before its first step",
        implies(
            act.clone().logic_and(&f.cul_pend),
            f.fail.expr().logic_and(&f.cul_v).logic_and(g_pushes.expr().eq(lit(2, 0))),
        ),
    );
    let in_touched = |x: &Expr| x.clone().logic_and(f.touched.expr().bit_at(f.stream.expr()));
    let sub = (f.touched.expr() & !g_touched.expr()).eq(lit(s, 0));
    m.assert(
        "a_walk_touched",
        "a SACK's walk visits only streams its SACK acknowledged, and looks at one still to visit",
        implies(act.clone().logic_and(f.fail.expr().logic_not()), in_touched(&sub)),
    );
    m.assert(
        "a_walk_wait",
        &format!("the read's wait is at most L = {l}"),
        implies(act.clone(), f.wait.expr().le(lit(f.wait.width(), u64::from(l)))),
    );

    // ------------------------------------------------ the completion FIFO
    // Completions are numbered as they are pushed (the walk's first, as
    // the FIFO places them) and as they leave on m_cqe; the one numbered
    // f_cq_k (any) is tracked from its push to its handshake.
    const NB: u32 = 8;
    let hs = cv.expr().logic_and(&cr);
    let k = m.formal_anyconst("f_cq_k", NB, "the tracked completion's number");
    let taken = m.formal_wire("f_cq_taken", NB, "completions pushed since reset (mod 256)");
    let left = m.formal_wire("f_cq_left", NB, "completions taken on m_cqe since reset (mod 256)");
    let ew = f.slots[0].width().expect("a completion's width");
    let tracked = m.formal_wire("f_cq_tracked", ew, "the tracked completion, as pushed");
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&taken, lit(NB, 0)), set(&left, lit(NB, 0))],
        vec![
            set(&taken, taken.expr() + zext(&f.push_w, NB) + zext(&flush_v, NB)),
            if_then(hs.clone(), vec![set(&left, left.expr() + lit(NB, 1))]),
            if_then(f.push_w.expr().logic_and(taken.expr().eq(&k)), vec![set(&tracked, f.walk_cqe.clone())]),
            if_then(
                flush_v.expr().logic_and((taken.expr() + zext(&f.push_w, NB)).eq(&k)),
                vec![set(&tracked, f.flush_cqe.clone())],
            ),
        ],
    )]);
    m.assert(
        "a_cq_count",
        &format!("the FIFO holds what was pushed and not taken, at most CQE_FIFO = {qn} (never popped empty)"),
        zext(&f.q_n, NB).eq(taken.expr() - &left).logic_and(f.q_n.expr().le(lit(nb, u64::from(qn)))),
    );
    crate::formal::tracked_in_place(
        m,
        ("a_cq_tracked_in_place", "while the tracked completion is inside, its slot holds it as it was pushed"),
        ("f_cq_ahead", "f_cq_at"),
        &k,
        &left,
        &f.q_n,
        &f.slots,
        &tracked,
    );
    let out = cat(&cqe.iter().map(Signal::expr).collect::<Vec<_>>());
    m.assert(
        "a_cq_leaves_in_order",
        "the completion on m_cqe is the one numbered by those taken before it: none lost, doubled or altered, in \
         push order",
        implies(cv.expr().logic_and(k.expr().eq(&left)), out.eq(&tracked)),
    );
    m.assert(
        "a_cq_walk_fits",
        "the walk's completion always finds room after this edge's pop",
        implies(&f.push_w, f.after_pop.expr().lt(lit(nb, u64::from(qn)))),
    );
    m.assert(
        "a_cq_flush_fits",
        "a flush's completion always finds room after the pop and the walk's push (no push is lost)",
        implies(&flush_v, f.at_f.expr().lt(lit(nb, u64::from(qn)))),
    );

    // ------------------------------------------------ steps, writes, reads
    let head_v = sg(m, "m_sw_head_valid");
    let drain_v = sg(m, "m_sw_drain_valid");
    let acked_v = sg(m, "m_acked_valid");
    let acts = head_v.expr().logic_or(&drain_v).logic_or(&acked_v).logic_or(&f.push_w);
    m.assert(
        "a_quiet_when_idle",
        "no write and no completion of the walk while no walk runs",
        implies(act.clone().logic_not(), acts.clone().logic_not()),
    );
    m.assert(
        "a_step_gated",
        "a write or a walk's completion only in a step: the walk runs, its read answered, ack_free and room",
        implies(
            acts,
            act.clone()
                .logic_and(&f.answered)
                .logic_and(sg(m, "ack_free"))
                .logic_and(f.after_pop.expr().lt(lit(nb, u64::from(qn)))),
        ),
    );
    m.assert(
        "a_sw_one_write",
        "a step either moves the head on or drains the stream, never both",
        head_v.expr().logic_and(&drain_v).logic_not(),
    );
    m.assert(
        "a_fail_only_writes",
        "only a failure's walk drains a stream or rewrites an acked count",
        implies(drain_v.expr().logic_or(&acked_v), g_fail.expr()),
    );
    let sw_conn = sg(m, "m_sw_conn");
    let ak_conn = sg(m, "m_acked_conn");
    m.assert(
        "a_writes_name_the_walk",
        "every write of a step names the walking connection (the latest start's)",
        implies(head_v.expr().logic_or(&drain_v), sw_conn.expr().eq(&g_conn))
            .logic_and(implies(&acked_v, ak_conn.expr().eq(&g_conn))),
    );
    m.assert(
        "a_cqe_names_the_walk",
        "a walk's completion names the walking connection",
        implies(&f.push_w, f.conn.expr().eq(&g_conn)),
    );
    let rd_v = sg(m, "m_wq_rd_valid");
    let rd_conn = sg(m, "m_wq_rd_conn");
    m.assert(
        "a_wq_rd_in_walk",
        "the walk reads only while a walk runs or in a SACK's start cycle, and the walking (or starting) \
         connection",
        implies(
            &rd_v,
            act.clone().logic_or(&done_v).logic_and(rd_conn.expr().eq(mux(
                &done_v,
                sg(m, "s_done_conn"),
                g_conn.expr(),
            ))),
        ),
    );
    m.assert(
        "a_sack_cqe_success",
        "a SACK's walk completes requests with SUCCESS, only of the streams its SACK acknowledged",
        implies(
            f.push_w.expr().logic_and(g_fail.expr().logic_not()),
            f.cqe_status.expr().eq(st_lit(status::SUCCESS)).logic_and(g_touched.expr().bit_at(f.stream.expr())),
        ),
    );
    m.assert(
        "a_fail_cqe_status",
        "a failure's walk completes its culprit with the failure's status, every other request with it or \
         WR_FLUSH (so never SUCCESS)",
        implies(
            f.push_w.expr().logic_and(&g_fail),
            mux(
                &f.cul_pend,
                f.cqe_status.expr().eq(&g_st),
                f.cqe_status.expr().eq(&g_st).logic_or(f.cqe_status.expr().eq(st_lit(status::WR_FLUSH))),
            )
            .logic_and(f.cqe_status.expr().ne(st_lit(status::SUCCESS))),
        ),
    );

    // ------------------------------------------------ read timing
    // The engine's side: a failure's ring clear holds the acknowledgement
    // unit (ack_free low) for more than L cycles after the start, and the
    // walking connection's heads change only by the walk's own writes,
    // seen from the cycle after (valid from a SACK's start cycle, and from
    // the cycle after a failure's start).
    let rb = index_bits(l + 1);
    let ring = m.formal_wire("f_ring_clear", rb, "cycles of a failure's ring clear still to come (L at its start)");
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&ring, lit(rb, 0))],
        vec![if_else(
            fail_v.expr().logic_or(&rdf_v),
            vec![set(&ring, lit(rb, u64::from(l)))],
            vec![if_then(ring.expr().ne(lit(rb, 0)), vec![set(&ring, ring.expr() - lit(rb, 1))])],
        )],
    )]);
    m.assume(
        "asm_ack_free_ring_clear",
        &format!(
            "a failure's ring clear holds ack_free low for the L = {l} cycles after its start (PATHS x tx_ring_depth)"
        ),
        implies(sg(m, "ack_free"), ring.expr().eq(lit(rb, 0))),
    );
    let heads = sg(m, "s_sw_head");
    let sw_stream = sg(m, "m_sw_stream");
    let new_head = sg(m, "m_sw_head");
    let written: Vec<Expr> = (0..s)
        .rev()
        .map(|i| {
            mux(
                head_v.expr().logic_and(sw_stream.expr().eq(lit(sb, u64::from(i)))),
                &new_head,
                heads.slice(pb * i + pb - 1, pb * i),
            )
        })
        .collect();
    let after = m.past("sw_head_after", cat(&written), "the heads last cycle with the walk's write applied");
    let words_ok = act.clone().logic_and(fail_v.expr().logic_or(&rdf_v).logic_not()).logic_or(&done_v);
    let was_ok =
        m.past("sw_words_valid", words_ok, "last cycle a walk ran on (no failure's start) or a SACK's started");
    m.assume(
        "asm_s_sw_head_held",
        "while a walk runs, its connection's heads are last cycle's with the walk's own write (nothing else writes \
         them)",
        implies(act.clone().logic_and(&was_ok), heads.expr().eq(&after)),
    );
    // The unit's side: a step acts on the answer to the address shown L
    // cycles before, and that address is the slot the step looks at.
    let step_stream = mux(&f.cul_pend, &f.cul_s, &f.stream);
    let step_slot = if p.wq_depth == 1 {
        lit(slb, 0)
    } else {
        mux(&f.cul_pend, f.cul_p.slice(slb - 1, 0), f.head_s.slice(slb - 1, 0))
    };
    let rd = cat(&[rd_v.expr(), rd_conn.expr(), sg(m, "m_wq_rd_stream").expr(), sg(m, "m_wq_rd_slot").expr()]);
    let mut back = m.past("wq_rd_1", rd, "m_wq_rd valid, connection, stream and slot 1 cycle ago");
    let first_past = back.clone();
    let mut shown = back.bit(cb + sb + slb);
    for k in 2..=l {
        back = m.past(&format!("wq_rd_{k}"), &back, &format!("m_wq_rd {k} cycles ago"));
        shown = shown.logic_and(back.bit(cb + sb + slb));
    }
    let want = m.formal_wire("f_rd_want", 1 + cb + sb + slb, "m_wq_rd as it names the slot the next step looks at");
    m.formal_assign(&want, cat(&[lit(1, 1), f.conn.expr(), step_stream, step_slot]));
    // Helper invariants for the induction (L > 1): the ring clear counts
    // down with the failure's first wait, and every cycle of a walk but
    // the first of a failure's follows one that showed its next step's slot.
    m.assert(
        "a_rd_ring_wait",
        "during a failure's ring clear the walk runs and its wait counts down with it (no step, no other start)",
        implies(ring.expr().ne(lit(rb, 0)), act.clone().logic_and(f.wait.expr().eq(&ring))),
    );
    m.assert(
        "a_rd_shown",
        "a running walk, but in the cycle after a failure's start, showed last cycle the slot it looks at now",
        implies(act.clone().logic_and(ring.expr().ne(lit(rb, u64::from(l)))), first_past.expr().eq(&want)),
    );
    m.assert(
        "a_rd_step_answered",
        &format!(
            "a step acts on the answer to the address shown L = {l} cycles before (and every cycle since): the \
             walking connection, the looked-at stream (the culprit's) and its head's slot (the culprit's)"
        ),
        implies(&f.step, shown.logic_and(back.expr().eq(&want))),
    );

    // ------------------------------------------------ covers
    m.cover(
        "c_sack_completes",
        "a SACK's walk completes a request",
        f.push_w.expr().logic_and(g_fail.expr().logic_not()),
    );
    m.cover(
        "c_fail_flushes_two",
        "a failure's walk pushes its second completion",
        f.push_w.expr().logic_and(&g_fail).logic_and(g_pushes.expr().eq(lit(2, 1))),
    );
    m.cover(
        "c_cq_tracked_out",
        "a completion after the first leaves on m_cqe as tracked",
        hs.logic_and(k.expr().eq(&left)).logic_and(k.expr().ne(lit(NB, 0))),
    );
    m.cover("c_cq_full", &format!("the FIFO fills to CQE_FIFO = {qn}"), f.q_n.expr().eq(lit(nb, u64::from(qn))));
    m.cover("c_flush_push", "the post pushes a flush completion", flush_v.expr());
    let ended = m.past(
        "walk_ended",
        f.ends
            .expr()
            .logic_and(start.logic_not())
            .logic_and(rst.expr().logic_not())
            .logic_and(g_pushes.expr().ne(lit(2, 0)).logic_or(&f.push_w)),
        "a walk that completed a request ended, out of reset, with no start",
    );
    m.cover(
        "c_walk_ends_idle",
        "a walk that completed a request ends and the unit is idle again: no walk, m_walk_busy low",
        ended.expr().logic_and(act.logic_not()).logic_and(busy.expr().logic_not()),
    );
}
