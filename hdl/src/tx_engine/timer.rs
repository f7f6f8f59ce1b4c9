//! The acknowledgement unit's timer queues and its own steps of
//! `tx_engine` as a clocked unit (`tx_timer`): the RNR back-off FIFO and
//! the window-probe FIFO (their storage, full flags and heads), and what
//! the model's RNR, window-probe and tail-timer steps do when `tx_ack`
//! starts them (`m_go_rnr`, `m_go_wp`, `m_go_tail`;
//! [`mrnic_model::tx_engine`], `ack_work`, `tail_work`, `timer_tick`).
//!
//! # The queues
//! Each is a first-word-fall-through FIFO over one memory with a
//! registered read (block RAM in `default`: 4,096 RNR entries of about 84
//! bits, 4,096 window probes of 44), the head in a register so `tx_ack`
//! sees it as a level: an entry pushed into an empty queue goes straight
//! to the head register; otherwise it is written to the memory, and a pop
//! reads the next entry out of it, in by the next cycle. The model's
//! depths (architecture.md, tx_engine item 3): `rnr_depth` entries and
//! `conns` window probes; `m_rnr_full` and `m_wp_full` are the counts at
//! the start of the cycle, which is what the model's checks see (nothing
//! pops the RNR queue while the NACK handler that pushes it is busy; the
//! window probe's check comes before the unit's turn).
//! - RNR: pushed by `tx_nack` (`s_rnr_*`, its `m_rnr_*`) when a back-off
//!   starts; the head's deadline to `tx_ack` (`m_rnr_head_*`); popped by
//!   the RNR step.
//! - Window probes: pushed by `tx_sched` (`s_wp_*`, its `m_wprobe_*`, with
//!   `tx_ack`'s `m_timer_at` as the deadline); a probe refused for the
//!   full queue (`s_wp_refused`, `tx_sched`'s `m_stat_wprobe_full`) is
//!   remembered, and the next pop wakes every stalled connection
//!   (`m_unstall_all`, a flash clear of the ready set's stalled bits).
//!
//! # The steps' timing
//! A step issues its reads when it starts and they answer `L` cycles
//! later (architecture.md, tx_engine items 4 and 10); `tx_ack` counts the
//! step 1 + `L`, so nothing else runs, and nothing writes what the step
//! read, until it has acted (the output stage's failure waits for the
//! answer, as for a NACK's):
//! - **RNR** (`s_go_rnr`, the head popped): its ring slot is read
//!   (`m_ring_rd_*`). At the answer the entry is live when the slot holds
//!   a packet waiting for a back-off with the entry's tag; then the wait
//!   ends (`m_ring_wr_*`: `rnr_wait` cleared, `queued` set) and, unless
//!   the slot was queued already, the packet is pushed into the
//!   connection's retransmit queue (`m_retx_*`).
//! - **Window probe** (`s_go_wp`, the head popped): the connection's
//!   context and its paths' PROBE bits are read (`m_rd_*`). At the answer
//!   it is live when the context still holds this deadline and the
//!   connection has not failed; then the deadline is cleared
//!   (`m_wp_clr_*`) and the first path below `npaths` that is not DEAD
//!   (the context's DEAD bits) is PROBEd (`m_probe_*`) unless its PROBE
//!   is pending (the mirror's `probe_pending`) or queued (`probe_q`).
//! - **Tail timer** (`s_go_tail` with `s_tail_conn`, the scanner's hit):
//!   the context is read. At the answer, when the connection is open, has
//!   not failed and its tail timer is still due at the step's `ts_now`,
//!   the timer is cleared and the SACK stages start for it (`m_tail_*`,
//!   `tx_stage`'s `s_tail_*`).
//!
//! Every payload is 0 without its valid. Not yet: the assembly's wiring
//! (tx_engine's generator).
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_timer` ([`crate::proof::blocks`], [`formal_tasks`]),
//! all by 2-induction (boolector, the memories as SMT arrays), with the
//! step ghosts `tx_nack` uses (`tx_engine::step`: the cycles since the
//! latest step, tx_ack's count of 1 + `L` for it) and, per queue, a
//! tracked entry (any one, by its number among the pushes) from its push
//! to its pop. The rules are stated over the ghosts, the ports and the
//! answer's inputs:
//! - the neighbours' side, assumed: no step in a reset, at most one step
//!   a cycle, a queue's step only with its head valid, and only once
//!   tx_ack's count for the previous step has run out
//!   (`asm_step_when_free`); a push only into a queue not full (the
//!   model's rule at `tx_nack` and `tx_sched`);
//! - each queue: the count is the pushes less the pops, never past the
//!   depth; the full flag exactly at the depth; the head valid exactly
//!   while not empty, and it is the oldest entry as pushed (every field:
//!   none lost, doubled, reordered or altered); helper invariants: the
//!   memory's pointers apart by the entries behind the head, and the
//!   tracked entry, while behind the head, in its slot;
//! - the reads: exactly with their step, naming the head (RNR: its
//!   connection, path and psn; window probe: its connection; tail:
//!   `s_tail_conn`);
//! - the answers: nothing written but exactly `L` cycles after a step of
//!   the matching kind; the RNR write exactly when the slot holds a packet
//!   waiting with the popped entry's tag, naming that entry, and the
//!   retransmit push exactly with it when the slot was not queued; the
//!   window probe's clear exactly when the context holds the popped
//!   deadline on a connection not failed, and its PROBE exactly when the
//!   first path below `npaths` not DEAD has no PROBE pending or queued,
//!   for that path; the tail exactly when the connection is open, not
//!   failed and its timer armed and due at the step's `ts_now`, for the
//!   step's connection;
//! - `m_unstall_all` exactly on a window-probe pop with a refusal since
//!   the last pop or in its cycle; every payload 0 without its valid;
//! - invariants tying the read pipe, the record registers, tx_ack's
//!   count and the refusal register to the ghosts (`a_inv_*`);
//! - covers: each step's live and stale answers, pops with entries
//!   stored, a tracked entry through the memory, a push into a queue
//!   whose only entry leaves, a full window-probe queue, both wakes, and
//!   a second step as soon as the unit is free.

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::TxEngineParams;

use super::ack::reached;
use super::{gate, PSN};
use crate::expr::{cat, index_bits, lit, mux, zext, Expr, Signal};
use crate::ir::{if_then, set, Mem, MemStyle, Module};

/// Module name.
pub const NAME: &str = "tx_timer";

const RST: &str = "Clock and reset";
const RNR: &str = "The RNR back-off queue";
const WP: &str = "The window-probe queue";
const STEP: &str = "The steps (tx_ack m_go_rnr / m_go_wp / m_go_tail) and their reads, answered L cycles later";
const ACT: &str = "The steps' writes, when their reads answer";

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let cb = p.conn_bits;
    let pb = index_bits(p.paths);
    let tb = p.rnr_tag_bits;
    let np = p.paths;
    let i = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::input(nm, w, g, c);
    let o = |nm: &str, w: u32, g: &'static str, c: &str| PortDef::output(nm, w, g, c);
    vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("ts_now", 32, RST, "timestamp"),
        i("s_rnr_valid", 1, RNR, "an RNR back-off is pushed (tx_nack m_rnr_valid)"),
        i("s_rnr_conn", cb, RNR, "its connection"),
        i("s_rnr_path", pb, RNR, "its path"),
        i("s_rnr_psn", PSN, RNR, "its psn"),
        i("s_rnr_until", 32, RNR, "its deadline"),
        i("s_rnr_tag", tb, RNR, "its tag (the slot's rnr_tag)"),
        o("m_rnr_full", 1, RNR, "the queue holds rnr_depth entries (tx_nack s_rnr_full)"),
        o("m_rnr_head_valid", 1, RNR, "the queue is not empty (tx_ack s_rnr_valid)"),
        o("m_rnr_head_until", 32, RNR, "its head's deadline (tx_ack s_rnr_until)"),
        i("s_wp_valid", 1, WP, "a window probe is armed (tx_sched m_wprobe_valid)"),
        i("s_wp_conn", cb, WP, "its connection"),
        i("s_wp_at", 32, WP, "its deadline (tx_ack m_timer_at)"),
        i("s_wp_refused", 1, WP, "a window probe was refused for the full queue (tx_sched m_stat_wprobe_full)"),
        o("m_wp_full", 1, WP, "the queue holds one entry per connection (tx_sched s_wp_full)"),
        o("m_wp_head_valid", 1, WP, "the queue is not empty (tx_ack s_wp_valid)"),
        o("m_wp_head_at", 32, WP, "its head's deadline (tx_ack s_wp_at)"),
        o("m_unstall_all", 1, WP, "a pop after a refusal: every stalled connection wakes"),
        i("s_go_rnr", 1, STEP, "tx_ack starts the RNR step: the head is popped"),
        i("s_go_wp", 1, STEP, "tx_ack starts the window-probe step: the head is popped"),
        i("s_go_tail", 1, STEP, "tx_ack starts the tail-timer step"),
        i("s_tail_conn", cb, STEP, "its connection (tx_ack m_tail_conn)"),
        o("m_ring_rd_valid", 1, STEP, "the RNR head's ring slot is read"),
        o("m_ring_rd_conn", cb, STEP, "its connection"),
        o("m_ring_rd_path", pb, STEP, "its path"),
        o("m_ring_rd_psn", PSN, STEP, "its psn"),
        i("s_ring_valid", 1, STEP, "the slot holds a packet, L cycles after m_ring_rd_valid"),
        i("s_ring_rnr_wait", 1, STEP, "it waits for an RNR back-off"),
        i("s_ring_rnr_tag", tb, STEP, "the tag of the back-off that may end it"),
        i("s_ring_queued", 1, STEP, "it is queued for retransmission"),
        o("m_rd_valid", 1, STEP, "a window probe's or tail timer's connection context is read"),
        o("m_rd_conn", cb, STEP, "the connection"),
        i("s_rd_open", 1, STEP, "the context's open bit, L cycles after m_rd_valid"),
        i("s_rd_failed", 1, STEP, "the connection has failed"),
        i("s_rd_npaths", pb + 1, STEP, "its paths"),
        i("s_rd_dead", np, STEP, "per path: DEAD (the context's bits)"),
        i("s_rd_probe_q", np, STEP, "per path: a PROBE is queued"),
        i("s_rd_wp_valid", 1, STEP, "a window probe is armed"),
        i("s_rd_wp_at", 32, STEP, "its deadline"),
        i("s_rd_tail_valid", 1, STEP, "the tail timer is armed"),
        i("s_rd_tail_at", 32, STEP, "its deadline"),
        i("s_pm_probe_pending", np, STEP, "per path (mirror): a PROBE waits for its answer"),
        o("m_ring_wr_valid", 1, ACT, "a live RNR entry: the slot's rnr_wait is cleared and queued set"),
        o("m_ring_wr_conn", cb, ACT, "its connection"),
        o("m_ring_wr_path", pb, ACT, "its path"),
        o("m_ring_wr_psn", PSN, ACT, "its psn"),
        o("m_retx_valid", 1, ACT, "the slot, not queued before, is pushed into the retransmit queue"),
        o("m_retx_conn", cb, ACT, "its connection"),
        o("m_retx_path", pb, ACT, "its path"),
        o("m_retx_psn", PSN, ACT, "its psn"),
        o("m_wp_clr_valid", 1, ACT, "a live window probe: the context's deadline is cleared"),
        o("m_wp_clr_conn", cb, ACT, "its connection"),
        o("m_probe_valid", 1, ACT, "a PROBE is queued (probe_q bit set, PROBE queue pushed)"),
        o("m_probe_conn", cb, ACT, "its connection"),
        o("m_probe_path", pb, ACT, "its path"),
        o("m_tail_valid", 1, ACT, "a due tail timer: cleared, and the SACK stages start (tx_stage s_tail_*)"),
        o("m_tail_conn", cb, ACT, "its connection"),
    ]
}

/// A queue built by [`fwft`]: what the unit uses (`valid`, `head`, `full`)
/// and the state its formal properties tie to their ghosts.
struct Fifo {
    /// The queue is not empty.
    valid: Signal,
    /// The head entry, zero while the queue is empty.
    head: Signal,
    /// The queue holds `depth` entries.
    full: Signal,
    depth: u32,
    /// Entries, the head included.
    count: Signal,
    /// Memory slots: the next stored entry's, the entry behind the head's.
    wr: Signal,
    rd: Signal,
    mem: Mem,
}

/// A first-word-fall-through FIFO of `depth` entries (a power of two) over
/// one memory with a registered read.
/// The memory holds the entries behind the head; the head lives in the
/// memory's read register or, for an entry pushed into an empty queue (or
/// behind a head popped with nothing stored), in a bypass register.
fn fwft(m: &mut Module, name: &str, depth: u32, push: &Expr, entry: &Expr, width: u32, pop: &Expr) -> Fifo {
    assert!(depth.is_power_of_two() && depth >= 2, "{name}: a power-of-two depth of at least 2");
    let fb = depth.trailing_zeros();
    let style = if u64::from(depth) * u64::from(width) > 64 * 64 { MemStyle::Block } else { MemStyle::Distributed };
    let mem = m.memory(name, width, depth, style, "the entries behind the head, oldest at rd");
    let count = m.reg(&format!("{name}_count"), fb + 1, 0, "entries, the head included");
    let wr = m.reg(&format!("{name}_wr"), fb, 0, "memory slot the next stored entry goes to");
    let rd = m.reg(&format!("{name}_rd"), fb, 0, "memory slot of the entry behind the head");
    let from_mem = m.reg(&format!("{name}_from_mem"), 1, 0, "the head is the memory's read register, else the bypass");
    let byp = m.reg_no_reset(&format!("{name}_byp"), width, "the head when it bypassed the memory");
    let valid =
        m.wire_from(&format!("{name}_head_valid"), 1, "the queue is not empty", count.q.expr().ne(lit(fb + 1, 0)));
    let popped = m.wire_from(&format!("{name}_pop"), 1, "the head leaves", pop.clone().logic_and(&valid));
    let pushed = m.wire_from(&format!("{name}_push"), 1, "an entry arrives", push.clone());
    let one = count.q.expr().eq(lit(fb + 1, 1));
    let stored = m.wire_from(
        &format!("{name}_stored"),
        1,
        "entries wait behind the head in the memory",
        valid.expr().logic_and(one.clone().logic_not()),
    );
    // The next head from the memory: a pop with entries stored.
    let rd_en =
        m.wire_from(&format!("{name}_rd_en"), 1, "a pop reads the next entry", popped.expr().logic_and(&stored));
    let head_mem = m.mem_read(&mem, &format!("{name}_rdata"), &rd_en, rd.q.expr());
    // A push goes to the head (bypass) when nothing else will be the head.
    let to_head = m.wire_from(
        &format!("{name}_to_head"),
        1,
        "the pushed entry becomes the head",
        pushed.expr().logic_and(valid.expr().logic_not().logic_or(popped.expr().logic_and(stored.expr().logic_not()))),
    );
    let to_mem =
        m.wire_from(&format!("{name}_to_mem"), 1, "the pushed entry is stored", pushed.expr().logic_and(!&to_head));
    m.mem_write(&mem, &to_mem, wr.q.expr(), entry.clone());
    m.next(if_then(&to_mem, vec![set(&wr.next, wr.q.expr() + lit(fb, 1))]));
    m.next(if_then(&rd_en, vec![set(&rd.next, rd.q.expr() + lit(fb, 1)), set(&from_mem.next, lit(1, 1))]));
    m.next(if_then(&to_head, vec![set(&byp.next, entry.clone()), set(&from_mem.next, lit(1, 0))]));
    let up = pushed.expr().logic_and(popped.expr().logic_not());
    let down = popped.expr().logic_and(pushed.expr().logic_not());
    m.next(if_then(up, vec![set(&count.next, count.q.expr() + lit(fb + 1, 1))]));
    m.next(if_then(down, vec![set(&count.next, count.q.expr() - lit(fb + 1, 1))]));
    let head = m.wire_from(
        &format!("{name}_head"),
        width,
        "the head entry, zero while the queue is empty",
        gate(&valid, mux(&from_mem.q, &head_mem, &byp.q), width),
    );
    let full = m.wire_from(
        &format!("{name}_full"),
        1,
        "the queue holds depth entries",
        count.q.expr().eq(lit(fb + 1, u64::from(depth))),
    );
    Fifo { valid, head, full, depth, count: count.q, wr: wr.q, rd: rd.q, mem }
}

/// The `tx_timer` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, l, tb, np) = (p.conn_bits, p.read_latency, p.rnr_tag_bits, p.paths);
    let pb = index_bits(p.paths);
    assert!(l >= 1, "the reads answer at least a cycle after the step");

    let mut m = Module::new(NAME);
    m.describe(
        "tx_engine acknowledgement unit's timer queues (RNR, window probe) and its RNR, window-probe and tail steps",
    );
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |nm: &str| sig[nm].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| m.wire_from(nm, width, c, e);

    // ------------------------------------------------------------ the queues
    // RNR entry, low to high: tag, until, psn, path, conn.
    let rw = tb + 32 + PSN + pb + cb;
    let r_entry = cat(&[
        sg("s_rnr_conn").expr(),
        sg("s_rnr_path").expr(),
        sg("s_rnr_psn").expr(),
        sg("s_rnr_until").expr(),
        sg("s_rnr_tag").expr(),
    ]);
    let rnr = fwft(&mut m, "rnr", p.rnr_depth, &sg("s_rnr_valid").expr(), &r_entry, rw, &sg("s_go_rnr").expr());
    let (r_valid, r_head, r_full) = (rnr.valid.clone(), rnr.head.clone(), rnr.full.clone());
    let h_tag = r_head.slice(tb - 1, 0);
    let h_until = r_head.slice(tb + 31, tb);
    let h_psn = r_head.slice(tb + 32 + PSN - 1, tb + 32);
    let h_path = r_head.slice(tb + 32 + PSN + pb - 1, tb + 32 + PSN);
    let h_conn = r_head.slice(rw - 1, rw - cb);
    m.assign(sg("m_rnr_full"), &r_full);
    m.assign(sg("m_rnr_head_valid"), &r_valid);
    m.assign(sg("m_rnr_head_until"), h_until);

    // Window-probe entry, low to high: at, conn.
    let ww = 32 + cb;
    let w_entry = cat(&[sg("s_wp_conn").expr(), sg("s_wp_at").expr()]);
    let wprobe = fwft(&mut m, "wprobe", p.wprobe_depth, &sg("s_wp_valid").expr(), &w_entry, ww, &sg("s_go_wp").expr());
    let (w_valid, w_head, w_full) = (wprobe.valid.clone(), wprobe.head.clone(), wprobe.full.clone());
    let h_at = w_head.slice(31, 0);
    let h_wconn = w_head.slice(ww - 1, 32);
    m.assign(sg("m_wp_full"), &w_full);
    m.assign(sg("m_wp_head_valid"), &w_valid);
    m.assign(sg("m_wp_head_at"), h_at.clone());
    // A refusal is remembered until the next pop, which wakes everyone
    // (a refusal in the pop's own cycle included: the decision comes
    // before the unit's turn).
    let refused = m.reg("wp_refused", 1, 0, "a window probe was refused since the last pop");
    let refused_now = w(
        &mut m,
        "wp_refused_now",
        1,
        "refused before this cycle or in it",
        refused.q.expr().logic_or(sg("s_wp_refused")),
    );
    let wp_pop = sg("s_go_wp");
    m.assign(sg("m_unstall_all"), wp_pop.expr().logic_and(&refused_now));
    m.next(set(&refused.next, refused_now.expr().logic_and(wp_pop.expr().logic_not())));

    // ------------------------------------------------------------ the steps
    let (g_rnr, g_wp, g_tail) = (sg("s_go_rnr"), sg("s_go_wp"), sg("s_go_tail"));
    m.assign(sg("m_ring_rd_valid"), &g_rnr);
    m.assign(sg("m_ring_rd_conn"), gate(&g_rnr, h_conn.clone(), cb));
    m.assign(sg("m_ring_rd_path"), gate(&g_rnr, h_path.clone(), pb));
    m.assign(sg("m_ring_rd_psn"), gate(&g_rnr, h_psn.clone(), PSN));
    let ctx = w(
        &mut m,
        "ctx_rd",
        1,
        "a window probe's or tail timer's step reads its context",
        g_wp.expr().logic_or(&g_tail),
    );
    let step_conn = w(
        &mut m,
        "step_conn",
        cb,
        "the step's connection",
        mux(&g_rnr, h_conn, mux(&g_wp, h_wconn, sg("s_tail_conn").expr())),
    );
    m.assign(sg("m_rd_valid"), &ctx);
    m.assign(sg("m_rd_conn"), gate(&ctx, step_conn.expr(), cb));

    // The step's record, held until its answer (tx_ack's count keeps the
    // next step at least L + 1 cycles away).
    let go = w(&mut m, "go", 1, "a step starts", g_rnr.expr().logic_or(&g_wp).logic_or(&g_tail));
    let rec = |m: &mut Module, nm: &str, width: u32, c: &str, e: Expr| {
        let r = m.reg_no_reset(nm, width, c);
        m.next(set(&r.next, mux(&go, e, r.q.expr())));
        r.q
    };
    let k_rnr = rec(&mut m, "rec_rnr", 1, "the step is an RNR step", g_rnr.expr());
    let k_wp = rec(&mut m, "rec_wp", 1, "the step is a window probe's", g_wp.expr());
    let r_conn = rec(&mut m, "rec_conn", cb, "its connection", step_conn.expr());
    let r_path = rec(&mut m, "rec_path", pb, "an RNR entry's path", h_path);
    let r_psn = rec(&mut m, "rec_psn", PSN, "its psn", h_psn);
    let r_tag = rec(&mut m, "rec_tag", tb, "its tag", h_tag);
    let r_at = rec(&mut m, "rec_at", 32, "a window probe's deadline", h_at);
    let r_ts =
        rec(&mut m, "rec_ts", 32, "ts_now at the step (the tail timer is compared with it)", sg("ts_now").expr());
    let (pipe, ans) = super::read_answer(&mut m, &go, l);

    // ------------------------------------------------------------ RNR
    let rnr_live = w(
        &mut m,
        "rnr_live",
        1,
        "an RNR entry still names its waiting slot: the back-off ends",
        ans.expr()
            .logic_and(&k_rnr)
            .logic_and(sg("s_ring_valid"))
            .logic_and(sg("s_ring_rnr_wait"))
            .logic_and(sg("s_ring_rnr_tag").expr().eq(&r_tag)),
    );
    let retx = w(
        &mut m,
        "rnr_retx",
        1,
        "the slot was not queued: pushed now",
        rnr_live.expr().logic_and(!&sg("s_ring_queued")),
    );
    for (v, pre) in [(&rnr_live, "m_ring_wr"), (&retx, "m_retx")] {
        m.assign(sg(&format!("{pre}_valid")), v);
        m.assign(sg(&format!("{pre}_conn")), gate(v, r_conn.expr(), cb));
        m.assign(sg(&format!("{pre}_path")), gate(v, r_path.expr(), pb));
        m.assign(sg(&format!("{pre}_psn")), gate(v, r_psn.expr(), PSN));
    }

    // ------------------------------------------------------------ window probe
    let wp_live = w(
        &mut m,
        "wp_live",
        1,
        "the context still holds this probe's deadline and the connection has not failed",
        ans.expr()
            .logic_and(&k_wp)
            .logic_and(sg("s_rd_wp_valid"))
            .logic_and(sg("s_rd_wp_at").expr().eq(&r_at))
            .logic_and(!&sg("s_rd_failed")),
    );
    m.assign(sg("m_wp_clr_valid"), &wp_live);
    m.assign(sg("m_wp_clr_conn"), gate(&wp_live, r_conn.expr(), cb));
    let npaths = sg("s_rd_npaths");
    let below: Vec<Expr> = (0..np).rev().map(|q| lit(pb + 1, u64::from(q)).lt(npaths.expr())).collect();
    let alive =
        w(&mut m, "wp_alive", np, "paths below npaths that are not DEAD", cat(&below) & !sg("s_rd_dead").expr());
    // The first of them (a priority encoder over at most 16 paths).
    let first = (0..np).rev().fold(lit(pb, 0), |acc, q| mux(alive.bit(q), lit(pb, u64::from(q)), acc));
    let first = w(&mut m, "wp_path", pb, "the first path not DEAD", first);
    let busy = w(
        &mut m,
        "wp_probe_busy",
        np,
        "paths whose PROBE is pending or queued",
        sg("s_pm_probe_pending").expr() | sg("s_rd_probe_q").expr(),
    );
    let probe = w(
        &mut m,
        "wp_probe",
        1,
        "a live probe PROBEs that path unless its PROBE is pending or queued",
        wp_live.expr().logic_and(alive.expr().reduce_or()).logic_and(busy.expr().bit_at(first.expr()).logic_not()),
    );
    m.assign(sg("m_probe_valid"), &probe);
    m.assign(sg("m_probe_conn"), gate(&probe, r_conn.expr(), cb));
    m.assign(sg("m_probe_path"), gate(&probe, first.expr(), pb));

    // ------------------------------------------------------------ tail timer
    let tail = w(
        &mut m,
        "tail_live",
        1,
        "the tail timer is still due at the step's time on a live connection",
        ans.expr()
            .logic_and(k_rnr.expr().logic_or(&k_wp).logic_not())
            .logic_and(sg("s_rd_open"))
            .logic_and(!&sg("s_rd_failed"))
            .logic_and(sg("s_rd_tail_valid"))
            .logic_and(reached(r_ts.expr(), sg("s_rd_tail_at").expr())),
    );
    m.assign(sg("m_tail_valid"), &tail);
    m.assign(sg("m_tail_conn"), gate(&tail, r_conn.expr(), cb));
    let inner = Inner {
        rnr,
        wprobe,
        refused: refused.q,
        pipe,
        rec: Rec { rnr: k_rnr, wp: k_wp, conn: r_conn, path: r_path, psn: r_psn, tag: r_tag, at: r_at, ts: r_ts },
    };
    properties(&mut m, p, &inner);
    m
}

/// The `tx_timer` module for `cfg`'s engine parameters.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The step's record registers, which the properties tie to their ghosts.
struct Rec {
    rnr: Signal,
    wp: Signal,
    conn: Signal,
    path: Signal,
    psn: Signal,
    tag: Signal,
    at: Signal,
    ts: Signal,
}

/// The unit's state its formal properties tie to their ghosts (the
/// invariants that let induction close).
struct Inner {
    rnr: Fifo,
    wprobe: Fifo,
    /// A window probe was refused since the last pop.
    refused: Signal,
    /// The step's reads in flight.
    pipe: Signal,
    rec: Rec,
}

/// The unit's proof tasks, with boolector ([`crate::proof::boolector_tasks`]):
/// every assertion by 2-induction (`prove`) and the covers to 12 cycles on
/// the proof configuration with 2 connections (a window-probe queue of 2
/// entries, so "full" is a few pushes deep; the RNR queue's depth comes
/// from the paths and the ring, 256 entries on `small`). Both with the
/// memories as SMT arrays: mapped to flip-flops, `small`'s RNR memory made
/// the proof ten times slower (86 s), and `default`'s hold 4,096 entries
/// each.
pub fn formal_tasks(_asserts: &[String]) -> Vec<crate::proof::Task> {
    let mut tasks =
        crate::proof::cover_on_proof_config(crate::proof::boolector_tasks(2, 12), crate::proof::COVER_CONNECTIONS, 12);
    for t in tasks.iter_mut() {
        t.arrays = true;
    }
    tasks
}

/// The ghosts of one queue: entries are numbered as they are pushed and
/// as they are popped, and the one numbered `k` (any) is tracked from its
/// push to its pop.
struct Tracked {
    k: Signal,
    /// Entries popped since reset (mod 2^width).
    out: Signal,
    /// Entries inside: pushed less popped.
    n: Signal,
    /// The tracked entry as pushed.
    entry: Signal,
}

/// The tracked entry of `q` (`name`: `rnr`, `wp`), pushed by `push`
/// with `entry` and popped by `pop`, and the queue's rules over it: the
/// count is what was pushed and not popped, never past the depth
/// (`a_<name>_count`); the head is the entry numbered by those popped
/// before it, as it was pushed (`a_<name>_in_order`); and the invariants
/// that let induction close, the pointers apart by the entries behind the
/// head (`a_<name>_pointers`) and the tracked entry, while behind the
/// head, in its memory slot (`a_<name>_stored`).
fn tracked(m: &mut Module, name: &str, q: &Fifo, push: Expr, entry: Expr, pop: Expr) -> Tracked {
    use crate::formal::{ghost, implies, port};
    let rst = port(m, "rst");
    let fb = q.depth.trailing_zeros();
    // Two bits past the count's width: numbers a full queue apart never meet.
    let nb = fb + 2;
    let ew = entry.width().expect("an entry's width");
    let k = m.formal_anyconst(&format!("f_{name}_k"), nb, "the tracked entry's number");
    let pushed = ghost(
        m,
        (&format!("f_{name}_in"), nb),
        "entries pushed since reset (mod 2^width)",
        &rst,
        |c| c.expr() + zext(push.clone(), nb),
        lit(nb, 0),
    );
    let out = ghost(
        m,
        (&format!("f_{name}_out"), nb),
        "entries popped since reset (mod 2^width)",
        &rst,
        |c| c.expr() + zext(pop, nb),
        lit(nb, 0),
    );
    let tracked = m.formal_wire(&format!("f_{name}_tracked"), ew, "the tracked entry, as pushed");
    m.formal_seq(vec![if_then(push.logic_and(pushed.expr().eq(&k)), vec![set(&tracked, entry)])]);
    let n = m.formal_wire(&format!("f_{name}_n"), nb, "entries inside: pushed and not popped");
    m.formal_assign(&n, pushed.expr() - out.expr());
    let ahead = m.formal_wire(&format!("f_{name}_ahead"), nb, "entries to leave before the tracked one");
    m.formal_assign(&ahead, k.expr() - out.expr());
    let count = &q.count;
    let d = u64::from(q.depth);
    m.assert(
        &format!("a_{name}_count"),
        &format!(
            "{name}: the count is the entries pushed and not popped, at most the depth {d}: never overflows, never \
             popped empty"
        ),
        zext(count, nb).eq(&n).logic_and(count.expr().le(lit(count.width(), d))),
    );
    m.assert(
        &format!("a_{name}_in_order"),
        &format!(
            "{name}: the head (every field) is the entry numbered by those popped before it, as it was pushed: none \
             lost, doubled or altered"
        ),
        implies(q.valid.expr().logic_and(out.expr().eq(&k)), q.head.expr().eq(&tracked)),
    );
    let cw = count.width();
    // The count's low bits less one: depth - 1 for a full queue.
    let behind = mux(count.expr().eq(lit(cw, 0)), lit(fb, 0), count.slice(fb - 1, 0) - lit(fb, 1));
    m.assert(
        &format!("a_{name}_pointers"),
        &format!("{name}: the memory's pointers are apart by the entries behind the head"),
        (q.wr.expr() - q.rd.expr()).eq(behind),
    );
    let slot = q.rd.expr() + ahead.slice(fb - 1, 0) - lit(fb, 1);
    let word = m.formal_mem_word(&q.mem, &format!("f_{name}_slot"), slot);
    m.assert(
        &format!("a_{name}_stored"),
        &format!("{name}: the tracked entry, while behind the head, is in its memory slot as it was pushed"),
        implies(ahead.expr().ne(lit(nb, 0)).logic_and(ahead.expr().lt(&n)), word.expr().eq(&tracked)),
    );
    Tracked { k, out, n, entry: tracked }
}

/// At most one of the 1-bit `bits` is set.
fn at_most_one(bits: &[Expr]) -> Expr {
    let v = cat(bits);
    let w = bits.len() as u32;
    (v.clone() & (v - lit(w, 1))).eq(lit(w, 0))
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{ghost, implies, port, quiet_without};
    let (cb, l, tb, np) = (p.conn_bits, p.read_latency, p.rnr_tag_bits, p.paths);
    let pb = index_bits(p.paths);
    let bb = super::ack::busy_bits(p);
    let sg = |m: &Module, nm: &str| port(m, nm);
    let rst = sg(m, "rst");
    let (g_rnr, g_wp, g_tail) = (sg(m, "s_go_rnr"), sg(m, "s_go_wp"), sg(m, "s_go_tail"));
    let go = g_rnr.expr().logic_or(&g_wp).logic_or(&g_tail);

    // ------------------------------------------------ tx_ack's and the pushers' side, assumed
    m.assume(
        "asm_no_step_in_reset",
        "no step starts in a reset (tx_ack is reset with the unit)",
        implies(&rst, go.clone().logic_not()),
    );
    m.assume(
        "asm_one_step",
        "at most one step starts a cycle (tx_ack starts one piece of work at a time)",
        at_most_one(&[g_rnr.expr(), g_wp.expr(), g_tail.expr()]),
    );
    m.assume(
        "asm_rnr_step_with_head",
        "the RNR step starts only with an entry at the head (tx_ack's s_rnr_valid)",
        implies(&g_rnr, sg(m, "m_rnr_head_valid")),
    );
    m.assume(
        "asm_wp_step_with_head",
        "the window-probe step starts only with an entry at the head (tx_ack's s_wp_valid)",
        implies(&g_wp, sg(m, "m_wp_head_valid")),
    );
    m.assume(
        "asm_rnr_push_room",
        "tx_nack pushes a back-off only while the queue is not full (its s_rnr_full; a full queue refuses it)",
        implies(sg(m, "s_rnr_valid"), sg(m, "m_rnr_full").expr().logic_not()),
    );
    m.assume(
        "asm_wp_push_room",
        "tx_sched arms a window probe only while the queue is not full (its s_wp_full; a full queue refuses it)",
        implies(sg(m, "s_wp_valid"), sg(m, "m_wp_full").expr().logic_not()),
    );
    // tx_ack's count for a timer step is 1 + L; the age tells apart the
    // cycles up to the next step's earliest (1 + L + 1).
    let step =
        super::step::ghosts_counted(m, go.clone(), lit(bb, 1), bb, l, 1 + u64::from(l) + 2, None, &super::step::TX_ACK);
    let at_ans = step.at_answer.clone();

    // ------------------------------------------------ the queues
    let entry = |m: &Module, names: &[&str]| cat(&names.iter().map(|n| sg(m, n).expr()).collect::<Vec<_>>());
    let r_entry = entry(m, &["s_rnr_conn", "s_rnr_path", "s_rnr_psn", "s_rnr_until", "s_rnr_tag"]);
    let rq = tracked(m, "rnr", &f.rnr, sg(m, "s_rnr_valid").expr(), r_entry, g_rnr.expr());
    let w_entry = entry(m, &["s_wp_conn", "s_wp_at"]);
    let wq = tracked(m, "wp", &f.wprobe, sg(m, "s_wp_valid").expr(), w_entry, g_wp.expr());
    // The tracked entries' fields, as pushed (low to high as cat lists them
    // high to low).
    let rt = |hi: u32, lo: u32| rq.entry.slice(hi, lo);
    let rw = rq.entry.width();
    let (t_conn, t_path) = (rt(rw - 1, rw - cb), rt(rw - cb - 1, rw - cb - pb));
    let t_psn = rt(rw - cb - pb - 1, tb + 32);
    let (t_until, t_tag) = (rt(tb + 31, tb), rt(tb - 1, 0));
    let (w_conn, w_at) = (wq.entry.slice(cb + 31, 32), wq.entry.slice(31, 0));
    for (q, t, name) in [(&f.rnr, &rq, "rnr"), (&f.wprobe, &wq, "wp")] {
        let nb = t.n.width();
        m.assert(
            &format!("a_{name}_full"),
            &format!("m_{name}_full exactly when the queue holds its depth, {}", q.depth),
            sg(m, &format!("m_{name}_full")).expr().eq(t.n.expr().eq(lit(nb, u64::from(q.depth)))),
        );
    }
    let is_head = |t: &Tracked| t.out.expr().eq(&t.k);
    let (rv, wv) = (sg(m, "m_rnr_head_valid"), sg(m, "m_wp_head_valid"));
    m.assert(
        "a_rnr_head",
        "tx_ack sees the RNR queue's head: valid exactly while it holds an entry, with the oldest entry's deadline",
        rv.expr()
            .eq(rq.n.expr().ne(lit(rq.n.width(), 0)))
            .logic_and(implies(rv.expr().logic_and(is_head(&rq)), sg(m, "m_rnr_head_until").expr().eq(t_until))),
    );
    m.assert(
        "a_wp_head",
        "tx_ack sees the window-probe queue's head: valid exactly while it holds an entry, with the oldest entry's \
         deadline",
        wv.expr()
            .eq(wq.n.expr().ne(lit(wq.n.width(), 0)))
            .logic_and(implies(wv.expr().logic_and(is_head(&wq)), sg(m, "m_wp_head_at").expr().eq(w_at.clone()))),
    );

    // ------------------------------------------------ the steps' reads
    m.assert(
        "a_step_reads",
        "the reads go out exactly with their step: the ring slot with the RNR step, the context with the window \
         probe's and the tail timer's, the tail's for s_tail_conn",
        sg(m, "m_ring_rd_valid")
            .expr()
            .eq(&g_rnr)
            .logic_and(sg(m, "m_rd_valid").expr().eq(g_wp.expr().logic_or(&g_tail)))
            .logic_and(implies(&g_tail, sg(m, "m_rd_conn").expr().eq(sg(m, "s_tail_conn")))),
    );
    let names = |m: &Module, pre: &str| {
        sg(m, &format!("{pre}_conn"))
            .expr()
            .eq(t_conn.clone())
            .logic_and(sg(m, &format!("{pre}_path")).expr().eq(t_path.clone()))
            .logic_and(sg(m, &format!("{pre}_psn")).expr().eq(t_psn.clone()))
    };
    m.assert(
        "a_rnr_reads_head",
        "the RNR step reads the slot its head names: the oldest entry's connection, path and psn",
        implies(g_rnr.expr().logic_and(is_head(&rq)), names(m, "m_ring_rd")),
    );
    m.assert(
        "a_wp_reads_head",
        "the window-probe step reads its head's connection, the oldest entry's",
        implies(g_wp.expr().logic_and(is_head(&wq)), sg(m, "m_rd_conn").expr().eq(w_conn.clone())),
    );

    // ------------------------------------------------ the step's ghosts
    let g = |m: &mut Module, nm: &str, w: u32, c: &str, e: Expr| step.record(m, &go, (nm, w), c, e);
    let f_rnr = g(m, "f_step_rnr", 1, "the latest step is an RNR step", g_rnr.expr());
    let f_wp = g(m, "f_step_wp", 1, "the latest step is a window probe's", g_wp.expr());
    let f_tail = g(m, "f_step_tail", 1, "the latest step is a tail timer's", g_tail.expr());
    let f_rnr_mine =
        g(m, "f_rnr_mine", 1, "the latest step popped the tracked RNR entry", g_rnr.expr().logic_and(is_head(&rq)));
    let f_wp_mine =
        g(m, "f_wp_mine", 1, "the latest step popped the tracked window probe", g_wp.expr().logic_and(is_head(&wq)));
    let ts_now = sg(m, "ts_now").expr();
    let f_ts = g(m, "f_ts", 32, "ts_now at the latest step", ts_now);
    let tail_conn = sg(m, "s_tail_conn").expr();
    let f_tail_conn = g(m, "f_tail_conn", cb, "the tail step's connection (s_tail_conn)", tail_conn);

    // ------------------------------------------------ RNR: the answer
    let (wr, retx) = (sg(m, "m_ring_wr_valid"), sg(m, "m_retx_valid"));
    let rnr_ans = at_ans.expr().logic_and(&f_rnr);
    m.assert(
        "a_rnr_at_answer",
        &format!("the slot's write and the retransmit push only exactly L = {l} cycles after an RNR step"),
        implies(wr.expr().logic_or(&retx), rnr_ans.clone()),
    );
    m.assert(
        "a_rnr_when",
        "an RNR step's answer ends the back-off exactly when the slot holds a packet waiting for one, with the \
         popped entry's tag",
        implies(
            rnr_ans.clone().logic_and(&f_rnr_mine),
            wr.expr().eq(sg(m, "s_ring_valid")
                .expr()
                .logic_and(sg(m, "s_ring_rnr_wait"))
                .logic_and(sg(m, "s_ring_rnr_tag").expr().eq(t_tag))),
        ),
    );
    m.assert(
        "a_rnr_record",
        "the slot's write names the popped entry's connection, path and psn",
        implies(wr.expr().logic_and(&f_rnr_mine), names(m, "m_ring_wr")),
    );
    m.assert(
        "a_retx_when",
        "the retransmit push exactly with the slot's write, when the slot was not queued already",
        retx.expr().eq(wr.expr().logic_and(sg(m, "s_ring_queued").expr().logic_not())),
    );
    let same = |m: &Module, f: &str| sg(m, &format!("m_retx_{f}")).expr().eq(sg(m, &format!("m_ring_wr_{f}")));
    m.assert(
        "a_retx_record",
        "the retransmit push names the slot written",
        implies(&retx, same(m, "conn").logic_and(same(m, "path")).logic_and(same(m, "psn"))),
    );

    // ------------------------------------------------ window probe: the answer
    let (clr, probe) = (sg(m, "m_wp_clr_valid"), sg(m, "m_probe_valid"));
    let wp_ans = at_ans.expr().logic_and(&f_wp);
    m.assert(
        "a_wp_at_answer",
        &format!("the window probe's clear and PROBE only exactly L = {l} cycles after a window-probe step"),
        implies(clr.expr().logic_or(&probe), wp_ans.clone()),
    );
    m.assert(
        "a_wp_clr_when",
        "a window-probe step's answer clears the deadline exactly when the context holds the popped entry's \
         deadline and the connection has not failed",
        implies(
            wp_ans.logic_and(&f_wp_mine),
            clr.expr().eq(sg(m, "s_rd_wp_valid")
                .expr()
                .logic_and(sg(m, "s_rd_wp_at").expr().eq(w_at))
                .logic_and(sg(m, "s_rd_failed").expr().logic_not())),
        ),
    );
    m.assert(
        "a_wp_clr_record",
        "the clear names the popped entry's connection",
        implies(clr.expr().logic_and(&f_wp_mine), sg(m, "m_wp_clr_conn").expr().eq(w_conn)),
    );
    // Path q is alive: below npaths and not DEAD; the first such path.
    let npaths = sg(m, "s_rd_npaths");
    let (dead, pend, pq) = (sg(m, "s_rd_dead"), sg(m, "s_pm_probe_pending"), sg(m, "s_rd_probe_q"));
    let alive = |q: u32| lit(pb + 1, u64::from(q)).lt(&npaths).logic_and(dead.bit(q).logic_not());
    let first = |q: u32| (0..q).fold(alive(q), |a, r| a.logic_and(alive(r).logic_not()));
    let free = |q: u32| pend.bit(q).logic_or(pq.bit(q)).logic_not();
    let want = (0..np).fold(lit(1, 0), |a, q| a.logic_or(first(q).logic_and(free(q))));
    m.assert(
        "a_probe_when",
        "a PROBE exactly with a clear whose first path below npaths not DEAD has no PROBE pending or queued",
        probe.expr().eq(clr.expr().logic_and(want)),
    );
    let at_first = (0..np)
        .fold(lit(1, 0), |a, q| a.logic_or(sg(m, "m_probe_path").expr().eq(lit(pb, u64::from(q))).logic_and(first(q))));
    m.assert(
        "a_probe_record",
        "the PROBE is for the clear's connection and that first path",
        implies(&probe, sg(m, "m_probe_conn").expr().eq(sg(m, "m_wp_clr_conn")).logic_and(at_first)),
    );

    // ------------------------------------------------ tail timer: the answer
    let tail = sg(m, "m_tail_valid");
    let tail_ans = at_ans.expr().logic_and(&f_tail);
    m.assert(
        "a_tail_at_answer",
        &format!("the tail's clear and the stages' start only exactly L = {l} cycles after a tail step"),
        implies(&tail, tail_ans.clone()),
    );
    // ts_reached: the step's time less the deadline, as a signed 32-bit
    // number, is not negative.
    let since = m.formal_wire("f_tail_since", 32, "the step's ts_now less the tail timer's deadline");
    m.formal_assign(&since, f_ts.expr() - sg(m, "s_rd_tail_at").expr());
    let due = since.expr().lt(lit(32, 1 << 31));
    m.assert(
        "a_tail_when",
        "a tail step's answer starts the stages exactly when the connection is open, has not failed and its tail \
         timer is armed and due at the step's ts_now",
        implies(
            tail_ans,
            tail.expr().eq(sg(m, "s_rd_open")
                .expr()
                .logic_and(sg(m, "s_rd_failed").expr().logic_not())
                .logic_and(sg(m, "s_rd_tail_valid"))
                .logic_and(due)),
        ),
    );
    m.assert(
        "a_tail_record",
        "the stages start for the tail step's connection",
        implies(&tail, sg(m, "m_tail_conn").expr().eq(&f_tail_conn)),
    );

    // ------------------------------------------------ the wake after a refusal
    let refusal = sg(m, "s_wp_refused");
    let f_refused = ghost(
        m,
        ("f_wp_refused", 1),
        "a window probe was refused since the last window-probe pop",
        &rst,
        |r| r.expr().logic_or(&refusal).logic_and(g_wp.expr().logic_not()),
        lit(1, 0),
    );
    m.assert(
        "a_unstall_all",
        "m_unstall_all exactly on a window-probe pop with a refusal since the last pop or in its cycle",
        sg(m, "m_unstall_all").expr().eq(g_wp.expr().logic_and(f_refused.expr().logic_or(&refusal))),
    );

    // ------------------------------------------------ payloads
    for (valid, payload) in [
        ("m_rnr_head_valid", &["m_rnr_head_until"][..]),
        ("m_wp_head_valid", &["m_wp_head_at"]),
        ("m_ring_rd_valid", &["m_ring_rd_conn", "m_ring_rd_path", "m_ring_rd_psn"]),
        ("m_rd_valid", &["m_rd_conn"]),
        ("m_ring_wr_valid", &["m_ring_wr_conn", "m_ring_wr_path", "m_ring_wr_psn"]),
        ("m_retx_valid", &["m_retx_conn", "m_retx_path", "m_retx_psn"]),
        ("m_wp_clr_valid", &["m_wp_clr_conn"]),
        ("m_probe_valid", &["m_probe_conn", "m_probe_path"]),
        ("m_tail_valid", &["m_tail_conn"]),
    ] {
        quiet_without(m, valid, payload);
    }

    // ------------------------------------------------ invariants: the registers hold what the ghosts say
    let r = &f.rec;
    step.invariants(
        m,
        &f.pipe,
        (&[r.rnr.clone(), r.wp.clone(), r.ts.clone()], &[&f_rnr, &f_wp, &f_ts]),
        lit(step.agw, 1),
    );
    let after = step.age.expr().ne(step.sat.clone());
    let popped_last = |t: &Tracked| t.out.expr().eq(t.k.expr() + lit(t.k.width(), 1));
    let rec_is = |regs: &[&Signal], want: Expr| cat(&regs.iter().map(|s| s.expr()).collect::<Vec<_>>()).eq(want);
    m.assert(
        "a_inv_rnr_record",
        "after an RNR step that popped the tracked entry, it is the last entry popped (only steps pop) and the \
         record registers hold its connection, path, psn and tag",
        implies(
            after.clone().logic_and(&f_rnr).logic_and(&f_rnr_mine),
            popped_last(&rq)
                .logic_and(rec_is(&[&r.conn, &r.path, &r.psn, &r.tag], cat(&[rt(rw - 1, tb + 32), rt(tb - 1, 0)]))),
        ),
    );
    m.assert(
        "a_inv_wp_record",
        "after a window-probe step that popped the tracked entry, it is the last entry popped and the record \
         registers hold its connection and deadline",
        implies(
            after.clone().logic_and(&f_wp).logic_and(&f_wp_mine),
            popped_last(&wq).logic_and(rec_is(&[&r.conn, &r.at], wq.entry.expr())),
        ),
    );
    m.assert(
        "a_inv_kind",
        "after a step, the latest step was of exactly one kind (one step a cycle)",
        implies(
            after.clone(),
            at_most_one(&[f_rnr.expr(), f_wp.expr(), f_tail.expr()])
                .logic_and(f_rnr.expr().logic_or(&f_wp).logic_or(&f_tail)),
        ),
    );
    m.assert(
        "a_inv_tail_record",
        "after a tail step, the record's connection is s_tail_conn's at the step",
        implies(after.logic_and(&f_tail), r.conn.expr().eq(&f_tail_conn)),
    );
    m.assert("a_inv_refused", "the refusal register is the ghost's", f.refused.expr().eq(&f_refused));

    // ------------------------------------------------ covers
    let two = |t: &Tracked| t.n.expr().ge(lit(t.n.width(), 2));
    m.cover("c_rnr_retx", "an RNR entry ends its back-off and queues the packet", retx.expr());
    m.cover(
        "c_rnr_queued",
        "an RNR entry ends the back-off of a packet queued already: no push",
        wr.expr().logic_and(sg(m, "s_ring_queued")),
    );
    m.cover(
        "c_rnr_stale_tag",
        "an RNR entry whose slot waits under another tag does nothing",
        rnr_ans.logic_and(sg(m, "s_ring_valid")).logic_and(sg(m, "s_ring_rnr_wait")).logic_and(wr.expr().logic_not()),
    );
    m.cover(
        "c_rnr_pop_stored",
        "the RNR step pops the head with entries stored behind it (the next head comes from the memory)",
        g_rnr.expr().logic_and(two(&rq)),
    );
    m.cover(
        "c_rnr_tracked_from_mem",
        "the tracked RNR entry, pushed behind two others, is popped",
        g_rnr.expr().logic_and(is_head(&rq)).logic_and(rq.k.expr().eq(lit(rq.k.width(), 2))),
    );
    m.cover(
        "c_rnr_push_pop_one",
        "a back-off pushed as the only entry is popped: it bypasses the memory",
        sg(m, "s_rnr_valid").expr().logic_and(&g_rnr).logic_and(rq.n.expr().eq(lit(rq.n.width(), 1))),
    );
    m.cover("c_wp_probe", "a window probe clears its deadline and PROBEs", probe.expr());
    m.cover(
        "c_wp_probe_past_dead",
        "a window probe PROBEs a path past a DEAD first path",
        probe.expr().logic_and(sg(m, "m_probe_path").expr().ne(lit(pb, 0))),
    );
    m.cover(
        "c_wp_probe_busy",
        "a window probe clears its deadline but its path's PROBE is pending or queued",
        clr.expr().logic_and(probe.expr().logic_not()).logic_and(dead.expr().ne(lit(np, (1u64 << np) - 1))),
    );
    m.cover(
        "c_wp_stale",
        "a window probe whose deadline was re-armed does nothing",
        at_ans
            .expr()
            .logic_and(&f_wp)
            .logic_and(sg(m, "s_rd_wp_valid"))
            .logic_and(sg(m, "s_rd_failed").expr().logic_not())
            .logic_and(clr.expr().logic_not()),
    );
    m.cover("c_wp_pop_stored", "a window-probe pop with entries stored", g_wp.expr().logic_and(two(&wq)));
    m.cover("c_wp_full", "the window-probe queue is full", sg(m, "m_wp_full").expr());
    m.cover(
        "c_unstall_all",
        "a window-probe pop after a refusal wakes every stalled connection",
        sg(m, "m_unstall_all").expr(),
    );
    m.cover(
        "c_unstall_same_cycle",
        "a refusal in the pop's own cycle wakes them too",
        sg(m, "m_unstall_all").expr().logic_and(f_refused.expr().logic_not()),
    );
    m.cover("c_tail", "a tail timer still due starts the SACK stages", tail.expr());
    m.cover(
        "c_tail_not_due",
        "a tail timer re-armed later since the scanner saw it does nothing",
        at_ans
            .expr()
            .logic_and(&f_tail)
            .logic_and(sg(m, "s_rd_open"))
            .logic_and(sg(m, "s_rd_failed").expr().logic_not())
            .logic_and(sg(m, "s_rd_tail_valid"))
            .logic_and(tail.expr().logic_not()),
    );
    m.cover(
        "c_back_to_back",
        "a second step as soon as tx_ack's count frees the unit, L + 2 cycles after the first",
        go.logic_and(step.age.expr().eq(lit(step.agw, u64::from(l) + 2))),
    );
}
