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
//! Every payload is 0 without its valid. Not yet: formal properties (the
//! queues' order and bounds, the steps' actions), and the assembly's
//! wiring (tx_engine's generator).

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::TxEngineParams;

use super::ack::reached;
use super::{gate, PSN};
use crate::expr::{cat, index_bits, lit, mux, Expr, Signal};
use crate::ir::{if_then, set, MemStyle, Module};

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

/// A first-word-fall-through FIFO of `depth` entries (a power of two) over
/// one memory with a registered read; returns (head valid, head, full).
/// The memory holds the entries behind the head; the head lives in the
/// memory's read register or, for an entry pushed into an empty queue (or
/// behind a head popped with nothing stored), in a bypass register.
fn fwft(m: &mut Module, name: &str, depth: u32, push: &Expr, entry: &Expr, width: u32, pop: &Expr) -> [Signal; 3] {
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
    [valid, head, full]
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
    let [r_valid, r_head, r_full] =
        fwft(&mut m, "rnr", p.rnr_depth, &sg("s_rnr_valid").expr(), &r_entry, rw, &sg("s_go_rnr").expr());
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
    let [w_valid, w_head, w_full] =
        fwft(&mut m, "wprobe", p.wprobe_depth, &sg("s_wp_valid").expr(), &w_entry, ww, &sg("s_go_wp").expr());
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
    let (_pipe, ans) = super::read_answer(&mut m, &go, l);

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
    m
}

/// The `tx_timer` module for `cfg`'s engine parameters.
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}
