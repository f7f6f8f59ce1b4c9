//! Interface properties, stated once and attached to any block's ports.
//!
//! Each rule is written from the side that must keep it: on a block's
//! outputs it is an assertion (the block must keep it), on its inputs the
//! same rule is an assumption (the neighbour keeps it; the proof relies on
//! it). Labels start with `a_` (assert), `asm_` (assume) or `c_` (cover),
//! then the channel name, so a report line names the port that broke.
//!
//! Everything here is Verilog-2005 text inside `` `ifdef FORMAL ``: "the
//! previous cycle" is a formal-only register ([`Module::past`]), "for every
//! value" is an `(* anyconst *)` register ([`Module::formal_anyconst`]).

use crate::expr::{cat, lit, zeros, zext, Expr, Signal};
use crate::ir::{case, if_else, if_then, set, Dir, Mem, Module};

/// Which side of a channel the module is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The module drives valid and the payload: the rules are assertions.
    Source,
    /// The module drives ready: the rules are assumptions on its inputs.
    Sink,
}

/// A port of `m` by name. A missing port is a generator bug (the helpers
/// below are called with the block's own port prefixes), so it panics with
/// the name.
pub fn port(m: &Module, name: &str) -> Signal {
    m.ports()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| Signal::new(&p.name, p.width))
        .unwrap_or_else(|| panic!("{}: no port {name}", m.name()))
}

/// Every valid/ready channel of `m`, by its stem: a port `<stem>valid` with
/// a port `<stem>ready` beside it (`s_req_`, `m_axis_t`, `s_axil_aw`). A
/// `..._valid` port without a ready (`s_mr_entry_valid`) is payload.
pub fn channels(m: &Module) -> Vec<String> {
    let ports = m.ports();
    let has = |n: &str| ports.iter().any(|p| p.name == n);
    ports
        .iter()
        .filter_map(|p| p.name.strip_suffix("valid"))
        .filter(|stem| has(&format!("{stem}ready")))
        .map(str::to_string)
        .collect()
}

/// The name a channel's properties carry: the stem without its trailing
/// `_`, and an AXI4-Stream's `_t` dropped (`s_req`, `m_axis`, `s_axil_aw`).
pub fn channel_name(stem: &str) -> String {
    let s = stem.trim_end_matches('_');
    match s.strip_suffix("_t") {
        Some(base) if base.ends_with("axis") => base.to_string(),
        _ => s.to_string(),
    }
}

/// The payload ports of the channel at `stem`: every other port starting
/// with the stem, except those of a longer channel stem.
fn payload(m: &Module, stem: &str) -> Vec<Signal> {
    let others: Vec<String> = channels(m).into_iter().filter(|c| c.len() > stem.len() && c.starts_with(stem)).collect();
    m.ports()
        .into_iter()
        .filter(|p| p.name.starts_with(stem))
        .filter(|p| p.name != format!("{stem}valid") && p.name != format!("{stem}ready"))
        .filter(|p| !others.iter().any(|o| p.name.starts_with(o.as_str())))
        .map(|p| Signal::new(&p.name, p.width))
        .collect()
}

/// The handshake rules of the channel at `stem`, from the side `m` is on:
/// asserted if `m` drives valid, assumed if it drives ready.
fn channel_at(m: &mut Module, stem: &str, rst: &Signal) {
    let valid = port(m, &format!("{stem}valid"));
    let ready = port(m, &format!("{stem}ready"));
    let out = m.ports().iter().any(|p| p.name == valid.name() && p.dir == Dir::Output);
    let side = if out { Side::Source } else { Side::Sink };
    let data = payload(m, stem);
    valid_ready(m, &channel_name(stem), side, &valid, &ready, &data, rst);
}

/// The project's own valid/ready channel `<prefix>_valid` / `<prefix>_ready`
/// (`s_req`, `m_cpl`): valid held until the handshake and every other
/// `<prefix>_*` port stable while stalled. Asserted when the block drives
/// valid, assumed when it drives ready.
pub fn stream(m: &mut Module, prefix: &str, rst: &Signal) {
    channel_at(m, &format!("{prefix}_"), rst);
}

/// An AXI4-Stream port `<prefix>_tvalid` / `<prefix>_tready` (`s_axis`):
/// the same rules over `tdata`, `tkeep`, `tlast`, `tuser` and any other
/// `<prefix>_t*` port.
pub fn axis(m: &mut Module, prefix: &str, rst: &Signal) {
    channel_at(m, &format!("{prefix}_t"), rst);
}

/// Every valid/ready channel of `m` that no call above has covered yet:
/// a block whose channels all follow the naming calls this once, after its
/// ports are declared (AXI4 and AXI4-Lite ports need [`axi_write`] and
/// [`axi_lite_slave`] first, for their response rules).
pub fn every_channel(m: &mut Module, rst: &Signal) {
    for stem in channels(m) {
        let name = channel_name(&stem);
        let done = m.properties().iter().any(|p| p.label.ends_with(&format!("_{name}_valid_held")));
        if !done {
            channel_at(m, &stem, rst);
        }
    }
}

/// Ghost counters of [`axi_lite_slave`], for a block to tie to its own
/// state (the strengthening invariants that let induction close).
pub struct AxiLiteGhost {
    /// Write addresses taken and not yet answered on B.
    pub aw_open: Signal,
    /// Write data beats taken and not yet answered on B.
    pub w_open: Signal,
    /// Read addresses taken and not yet answered on R.
    pub ar_open: Signal,
}

/// Width of the [`AxiLiteGhost`] counters.
pub const LITE_OPEN_BITS: u32 = 4;

/// The AXI4-Lite slave rules on port prefix `<prefix>` (`s_axil`): AW, W
/// and AR keep the handshake rules (assumed, the master keeps them), B and
/// R keep them too (asserted), and no response leaves without its request:
/// a B only for a write whose address and data were both taken and not yet
/// answered, an R only for a read address taken and not yet answered
/// (asserted). Returns the ghost counters so the block can state how its
/// registers hold the requests (which is what makes the rules inductive).
pub fn axi_lite_slave(m: &mut Module, prefix: &str, rst: &Signal) -> AxiLiteGhost {
    for ch in ["aw", "w", "ar", "b", "r"] {
        channel_at(m, &format!("{prefix}_{ch}"), rst);
    }
    let fire = |m: &Module, ch: &str| {
        port(m, &format!("{prefix}_{ch}valid")).expr().logic_and(port(m, &format!("{prefix}_{ch}ready")))
    };
    let (aw, w, ar, b, r) = (fire(m, "aw"), fire(m, "w"), fire(m, "ar"), fire(m, "b"), fire(m, "r"));
    let cw = LITE_OPEN_BITS;
    let counter = |m: &mut Module, ch: &str, up: Expr, down: Expr, comment: &str| -> Signal {
        let c = m.formal_wire(&format!("f_{prefix}_{ch}_open"), cw, comment);
        m.formal_seq(vec![if_else(
            rst,
            vec![set(&c, lit(cw, 0))],
            vec![set(&c, c.expr() + zext(up, cw) - zext(down, cw))],
        )]);
        c
    };
    let aw_open = counter(m, "aw", aw, b.clone(), "write addresses taken, not yet answered on B");
    let w_open = counter(m, "w", w, b, "write data taken, not yet answered on B");
    let ar_open = counter(m, "ar", ar, r, "read addresses taken, not yet answered on R");
    let zero = lit(cw, 0);
    let bvalid = port(m, &format!("{prefix}_bvalid"));
    let rvalid = port(m, &format!("{prefix}_rvalid"));
    m.assert(
        &format!("a_{prefix}_b_after_write"),
        "a write response is offered only for a write whose address and data were taken and not yet answered",
        implies(&bvalid, aw_open.expr().ne(zero.clone()).logic_and(w_open.expr().ne(zero.clone()))),
    );
    m.assert(
        &format!("a_{prefix}_r_after_read"),
        "read data is offered only for a read address taken and not yet answered",
        implies(&rvalid, ar_open.expr().ne(zero)),
    );
    AxiLiteGhost { aw_open, w_open, ar_open }
}

/// [`axi_write_master`] on the ports `<prefix>_aw*`, `<prefix>_w*` and
/// `<prefix>_b*` of `m` (`m_axi`).
pub fn axi_write(m: &mut Module, prefix: &str, rst: &Signal, max_burst: u32, data_bytes: u32) {
    let s = |n: &str| port(m, &format!("{prefix}_{n}"));
    let names = [
        "awid", "awaddr", "awlen", "awsize", "awburst", "awvalid", "awready", "wdata", "wstrb", "wlast", "wvalid",
        "wready", "bid", "bresp", "bvalid", "bready",
    ];
    let v: Vec<Signal> = names.iter().map(|n| s(n)).collect();
    let p = AxiWrite {
        name: prefix,
        awid: &v[0],
        awaddr: &v[1],
        awlen: &v[2],
        awsize: &v[3],
        awburst: &v[4],
        awvalid: &v[5],
        awready: &v[6],
        wdata: &v[7],
        wstrb: &v[8],
        wlast: &v[9],
        wvalid: &v[10],
        wready: &v[11],
        bid: &v[12],
        bresp: &v[13],
        bvalid: &v[14],
        bready: &v[15],
    };
    axi_write_master(m, &p, rst, max_burst, data_bytes);
}

/// A tracked entry of a shifting register FIFO (slot 0 its head): entries
/// are numbered as they enter, `k` is the tracked one's number and `left`
/// counts those that left (both of one width, mod 2^width); while the
/// tracked entry is inside (`k - left` below `count`), the slot it is in
/// holds `tracked`, the entry as it entered. `ahead` and `at` name the
/// ghost wires: entries ahead of it, and its slot's contents.
#[allow(clippy::too_many_arguments)]
pub fn tracked_in_place(
    m: &mut Module,
    (label, comment): (&str, &str),
    (ahead, at): (&str, &str),
    k: &Signal,
    left: &Signal,
    count: &Signal,
    slots: &[Expr],
    tracked: &Signal,
) {
    let nb = k.width();
    let ew = tracked.width();
    let a = m.formal_wire(ahead, nb, "entries to leave the FIFO before the tracked one");
    m.formal_assign(&a, k.expr() - left);
    let w = m.formal_wire(at, ew, "the slot the tracked entry is in, when inside");
    m.formal_comb(vec![case(
        a.expr(),
        slots.iter().enumerate().map(|(j, e)| (vec![lit(nb, j as u64)], vec![set(&w, e.clone())])).collect(),
        Some(vec![set(&w, zeros(ew))]),
    )]);
    m.assert(label, comment, implies(a.expr().lt(zext(count, nb)), w.expr().eq(tracked)));
}

/// The invariants of a register FIFO of `depth` (a power of 2) slots with
/// a count and write/read pointers, stated next to the FIFO so k-induction
/// never starts from a FIFO whose pointers disagree with its count: the
/// pointers are apart by the count, and the count never exceeds the
/// slots, counting the `inflight` entries that may still be pushed without
/// a ready check (the block's pipeline behind a ready that had room).
pub fn fifo_invariants(
    m: &mut Module,
    name: &str,
    depth: u32,
    count: &Signal,
    wr: &Signal,
    rd: &Signal,
    inflight: Option<Expr>,
) {
    let fb = depth.trailing_zeros();
    let cw = count.width() + 1;
    m.assert(
        &format!("a_{name}_fifo_pointers"),
        &format!("{name} FIFO: the pointers are apart by the count"),
        (wr.expr() - rd).eq(count.slice(fb.max(1) - 1, 0)),
    );
    let used = match inflight {
        Some(e) => zext(count, cw) + zext(e, cw),
        None => zext(count, cw),
    };
    m.assert(
        &format!("a_{name}_fifo_room"),
        &format!("{name} FIFO: entries (and those still in flight towards it) never exceed its {depth} slots"),
        used.le(lit(cw, u64::from(depth))),
    );
}

/// The read-modify-write table rules of a block that reads a table entry
/// at its handshake, updates it `READ_LATENCY` cycles later and writes it
/// back (forwarding the writes its read could not see), after a clear
/// sweep that has the table to itself:
/// - `a_<name>_no_lost_update`: whenever the update stage holds a request,
///   the entry it works on (`stage_word`, after forwarding) is the one
///   stored in the table now, so back-to-back updates of one entry each
///   see the one before; the stored word is read by a formal-only peek
///   ([`Module::formal_mem_word`]), so this holds for any table contents;
/// - `a_<name>_sweep_alone`: while `sweep` runs, `busy` (every valid bit
///   of the pipeline) is low: the sweep's writes never replace an update.
///
/// Both close by k-induction with k at least `READ_LATENCY + 2`. Returns
/// the peek at the stored word, for the block's own rules on it.
#[allow(clippy::too_many_arguments)]
pub fn table_rmw(
    m: &mut Module,
    name: &str,
    mem: &Mem,
    stage_valid: &Signal,
    stage_addr: Expr,
    stage_word: Expr,
    sweep: &Signal,
    busy: Expr,
) -> Signal {
    let stored = m.formal_mem_word(mem, &format!("f_{name}_stored"), stage_addr);
    m.assert(
        &format!("a_{name}_no_lost_update"),
        &format!("{name}: the update stage works on the entry stored now (back-to-back updates see each other)"),
        implies(stage_valid, stage_word.eq(&stored)),
    );
    m.assert(
        &format!("a_{name}_sweep_alone"),
        &format!("{name}: nothing is in flight while the clear sweep writes the table"),
        implies(sweep, busy.logic_not()),
    );
    stored
}

/// A ghost register `(name, width)`: `reset` in a reset, else `next` of
/// itself (formal-only state that follows the block's ports).
pub fn ghost(
    m: &mut Module,
    (name, width): (&str, u32),
    comment: &str,
    rst: &Signal,
    next: impl FnOnce(&Signal) -> Expr,
    reset: Expr,
) -> Signal {
    let s = m.formal_wire(name, width, comment);
    let e = next(&s);
    m.formal_seq(vec![if_else(rst, vec![set(&s, reset)], vec![set(&s, e)])]);
    s
}

/// Any of the 1-bit ports `names` is high: "this unit acts" over its
/// valids.
pub fn any_port(m: &Module, names: &[&str]) -> Expr {
    names.iter().fold(lit(1, 0), |a, n| a.logic_or(port(m, n)))
}

/// `!a || b`.
pub fn implies(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    a.into().logic_not().logic_or(b)
}

/// `a_quiet_without_<valid>` (the port's name without its `m_`): every
/// port of `payload` is 0 while the output `valid` is low.
pub fn quiet_without<S: AsRef<str>>(m: &mut Module, valid: &str, payload: &[S]) {
    let ports: Vec<Signal> = payload.iter().map(|nm| port(m, nm.as_ref())).collect();
    let bits = crate::expr::cat(&ports.iter().map(Signal::expr).collect::<Vec<_>>());
    let w = ports.iter().map(Signal::width).sum::<u32>();
    m.assert(
        &format!("a_quiet_without_{}", valid.trim_start_matches("m_")),
        &format!("every payload of {valid} is 0 without it"),
        implies(port(m, valid).expr().logic_not(), bits.eq(crate::expr::lit(w, 0))),
    );
}

/// A registered answer followed from the request it answers: when `act`
/// loads the answer register with `verdict`, ghosts note whether it
/// answers the tracked request (`on`) and the verdict; `label` asserts that
/// while the answer waits (`out_valid`), `status` shows that verdict.
/// Returns the ghost "the waiting answer is the tracked request's", for
/// covers.
pub fn answer_held(
    m: &mut Module,
    label: &str,
    act: &Signal,
    on: &Signal,
    verdict: &Signal,
    out_valid: &Signal,
    status: &Signal,
) -> Signal {
    let out_on = m.formal_wire("f_out_on", 1, "the answer waiting is the tracked request's");
    let out_verdict = m.formal_wire("f_out_status", verdict.width(), "its verdict");
    m.formal_seq(vec![crate::ir::if_then(
        act,
        vec![crate::ir::set(&out_on, on), crate::ir::set(&out_verdict, verdict)],
    )]);
    m.assert(
        label,
        "an answer waiting for the tracked request is its verdict",
        implies(out_valid.expr().logic_and(&out_on), status.expr().eq(&out_verdict)),
    );
    out_on
}

fn prop(m: &mut Module, side: Side, label: &str, comment: &str, cond: Expr) {
    match side {
        Side::Source => m.assert(&format!("a_{label}"), comment, cond),
        Side::Sink => m.assume(&format!("asm_{label}"), comment, cond),
    }
}

/// A valid/ready channel (AXI4-Stream, an AXI4 or AXI4-Lite channel, or a
/// block's own request/response ports): once valid is high it stays high
/// until the handshake, and the payload holds still meanwhile. `name` is
/// the channel's port prefix (`s_req`, `m_axi_aw`); `rst` cancels the rule
/// for the cycle after a reset.
pub fn valid_ready(
    m: &mut Module,
    name: &str,
    side: Side,
    valid: &Signal,
    ready: &Signal,
    payload: &[Signal],
    rst: &Signal,
) {
    let stall = valid.expr().logic_and(ready.expr().logic_not()).logic_and(rst.expr().logic_not());
    let stalled = m.past(&format!("{name}_stall"), stall, &format!("{name}: valid and not ready last cycle"));
    let who = match side {
        Side::Source => "this block",
        Side::Sink => "the neighbour",
    };
    prop(
        m,
        side,
        &format!("{name}_valid_held"),
        &format!("{name}: valid stays high until its handshake ({who} keeps it)"),
        implies(&stalled, valid),
    );
    if side == Side::Source {
        m.cover(
            &format!("c_{name}_stall_fire"),
            &format!("{name}: a stalled offer completes its handshake (the rules above are not vacuous)"),
            stalled.expr().logic_and(valid).logic_and(ready),
        );
    }
    if payload.is_empty() {
        return;
    }
    let data = cat(&payload.iter().map(Signal::expr).collect::<Vec<_>>());
    let before = m.past(&format!("{name}_payload"), data.clone(), &format!("{name}: payload last cycle"));
    prop(
        m,
        side,
        &format!("{name}_payload_stable"),
        &format!("{name}: payload holds while valid and not ready ({who} keeps it)"),
        implies(&stalled, data.eq(&before)),
    );
}

/// The ports of an AXI4 write master (the block issues the writes).
pub struct AxiWrite<'a> {
    /// Port prefix, e.g. `m_axi`.
    pub name: &'a str,
    pub awid: &'a Signal,
    pub awaddr: &'a Signal,
    pub awlen: &'a Signal,
    pub awsize: &'a Signal,
    pub awburst: &'a Signal,
    pub awvalid: &'a Signal,
    pub awready: &'a Signal,
    pub wdata: &'a Signal,
    pub wstrb: &'a Signal,
    pub wlast: &'a Signal,
    pub wvalid: &'a Signal,
    pub wready: &'a Signal,
    pub bid: &'a Signal,
    pub bresp: &'a Signal,
    pub bvalid: &'a Signal,
    pub bready: &'a Signal,
}

/// Widths of the ghost counters of [`axi_write_master`]: bursts are
/// tracked by number up to `2^BURST_NO_BITS - 1`, which BMC depths reach.
pub const BURST_NO_BITS: u32 = 3;

/// The AXI4 write rules for a master issuing INCR bursts of full-width
/// beats, at most `max_burst` beats, on a `data_bytes`-byte bus:
/// - AW and W hold valid and payload until their handshakes (asserted), B
///   holds its response until bready (assumed);
/// - `awburst` is INCR, `awsize` the bus width, `awlen < max_burst`, and a
///   burst never crosses a 4 KiB boundary (asserted);
/// - `wlast` is on the last beat of each burst and nowhere else: for an
///   arbitrary burst number N (an `anyconst`), the W beats of the N-th
///   burst number `awlen + 1` of the N-th AW, whichever channel runs ahead
///   (asserted; bursts 0 to `2^BURST_NO_BITS - 2`, where N can point);
/// - no B response without a burst that is both addressed and fully
///   written and has not had its response yet (assumed).
pub fn axi_write_master(m: &mut Module, p: &AxiWrite, rst: &Signal, max_burst: u32, data_bytes: u32) {
    let n = p.name;
    let aw = format!("{n}_aw");
    let payload = [p.awid.clone(), p.awaddr.clone(), p.awlen.clone(), p.awsize.clone(), p.awburst.clone()];
    valid_ready(m, &aw, Side::Source, p.awvalid, p.awready, &payload, rst);
    let w = format!("{n}_w");
    valid_ready(m, &w, Side::Source, p.wvalid, p.wready, &[p.wdata.clone(), p.wstrb.clone(), p.wlast.clone()], rst);
    let b = format!("{n}_b");
    valid_ready(m, &b, Side::Sink, p.bvalid, p.bready, &[p.bid.clone(), p.bresp.clone()], rst);

    let lb = data_bytes.trailing_zeros();
    let lw = p.awlen.width();
    m.assert(
        &format!("a_{n}_awburst_incr"),
        "every burst is INCR of full-width beats",
        implies(p.awvalid, p.awburst.expr().eq(lit(2, 1)).logic_and(p.awsize.expr().eq(lit(3, u64::from(lb))))),
    );
    m.assert(
        &format!("a_{n}_awlen_max"),
        &format!("a burst has at most MAX_BURST = {max_burst} beats"),
        implies(p.awvalid, p.awlen.expr().le(lit(lw, u64::from(max_burst - 1)))),
    );
    let page_beats = 4096 / data_bytes;
    m.assert(
        &format!("a_{n}_aw_4k"),
        "a burst never crosses a 4 KiB boundary: its first beat's index in the page plus awlen stays in the page",
        implies(
            p.awvalid,
            (zext(p.awaddr.slice(11, lb), 13) + zext(p.awlen, 13)).le(lit(13, u64::from(page_beats - 1))),
        ),
    );

    // Ghost counters for B and wlast.
    let cw = 9;
    let aw_fire = p.awvalid.expr().logic_and(p.awready);
    let w_fire = p.wvalid.expr().logic_and(p.wready);
    let b_fire = p.bvalid.expr().logic_and(p.bready);
    let aw_open = m.formal_wire(&format!("f_{n}_aw_open"), cw, "bursts addressed and not yet answered on B");
    let w_open = m.formal_wire(&format!("f_{n}_w_open"), cw, "bursts fully written (wlast) and not yet answered");
    let up_aw = m.formal_wire(&format!("f_{n}_aw_open_up"), cw, "aw_open + 1 on an AW handshake");
    m.formal_assign(&up_aw, aw_open.expr() + zext(aw_fire.clone(), cw));
    let up_w = m.formal_wire(&format!("f_{n}_w_open_up"), cw, "w_open + 1 on a wlast handshake");
    m.formal_assign(&up_w, w_open.expr() + zext(w_fire.clone().logic_and(p.wlast), cw));
    m.formal_seq(vec![if_else(
        rst,
        vec![set(&aw_open, lit(cw, 0)), set(&w_open, lit(cw, 0))],
        vec![
            set(&aw_open, up_aw.expr() - zext(b_fire.clone(), cw)),
            set(&w_open, up_w.expr() - zext(b_fire.clone(), cw)),
        ],
    )]);
    m.assume(
        &format!("asm_{n}_b_after_write"),
        "the slave answers only a burst that was addressed and fully written and not yet answered",
        implies(p.bvalid, aw_open.expr().ne(lit(cw, 0)).logic_and(w_open.expr().ne(lit(cw, 0)))),
    );

    // wlast: the N-th burst on AW against the N-th burst on W.
    let nb = BURST_NO_BITS + 1;
    let pick = m.formal_anyconst(&format!("f_{n}_burst_no"), BURST_NO_BITS, "the burst whose beats are counted");
    let pick = zext(&pick, nb);
    let aw_no = m.formal_wire(&format!("f_{n}_aw_no"), nb, "AW handshakes so far (saturating)");
    let w_no = m.formal_wire(&format!("f_{n}_w_no"), nb, "bursts finished on W so far (saturating)");
    let len_known = m.formal_wire(&format!("f_{n}_len_known"), 1, "the picked burst's AW has been seen");
    let len = m.formal_wire(&format!("f_{n}_len"), lw, "its awlen");
    let beats = m.formal_wire(&format!("f_{n}_beats"), cw, "W beats of the picked burst so far");
    let w_done = m.formal_wire(&format!("f_{n}_w_done"), 1, "the picked burst's wlast has been seen");
    let sat = lit(nb, (1 << nb) - 1);
    let aw_mine = m.formal_wire(&format!("f_{n}_aw_mine"), 1, "this AW handshake is the picked burst's");
    m.formal_assign(&aw_mine, aw_fire.clone().logic_and(aw_no.expr().eq(pick.clone())));
    let w_mine = m.formal_wire(&format!("f_{n}_w_mine"), 1, "this W handshake is a beat of the picked burst");
    m.formal_assign(&w_mine, w_fire.clone().logic_and(w_no.expr().eq(pick.clone())));
    m.formal_seq(vec![if_else(
        rst,
        vec![
            set(&aw_no, lit(nb, 0)),
            set(&w_no, lit(nb, 0)),
            set(&len_known, lit(1, 0)),
            set(&len, lit(lw, 0)),
            set(&beats, lit(cw, 0)),
            set(&w_done, lit(1, 0)),
        ],
        vec![
            if_then(
                aw_fire.clone().logic_and(aw_no.expr().ne(sat.clone())),
                vec![set(&aw_no, aw_no.expr() + lit(nb, 1))],
            ),
            if_then(
                w_fire.clone().logic_and(p.wlast).logic_and(w_no.expr().ne(sat)),
                vec![set(&w_no, w_no.expr() + lit(nb, 1))],
            ),
            if_then(&aw_mine, vec![set(&len_known, lit(1, 1)), set(&len, p.awlen)]),
            if_then(
                &w_mine,
                vec![set(&beats, beats.expr() + lit(cw, 1)), if_then(p.wlast, vec![set(&w_done, lit(1, 1))])],
            ),
        ],
    )]);
    m.assert(
        &format!("a_{n}_wlast_beat"),
        "on a beat of the picked burst whose AW is known, wlast is set exactly on beat awlen",
        implies(w_mine.expr().logic_and(&len_known), p.wlast.expr().eq(beats.expr().eq(zext(&len, cw)))),
    );
    m.assert(
        &format!("a_{n}_wlast_ahead"),
        "when W runs ahead, the picked burst's AW has awlen + 1 beats if W finished it, and no fewer than W sent",
        implies(
            &aw_mine,
            mux1(w_done.expr(), beats.expr().eq(zext(p.awlen, cw) + lit(cw, 1)), beats.expr().le(zext(p.awlen, cw))),
        ),
    );
    m.cover(
        &format!("c_{n}_second_burst_done"),
        "a second burst is answered (the counters above are not vacuous)",
        b_fire.logic_and(aw_no.expr().ge(lit(nb, 2))),
    );
}

fn mux1(c: Expr, a: Expr, b: Expr) -> Expr {
    crate::expr::mux(c, a, b)
}

/// The AXI4 read rules for a master on the ports `<prefix>_ar*` and
/// `<prefix>_r*` of `m` (`m_axi`) that issues INCR bursts of full-width
/// beats, at most `max_burst` beats, on a `data_bytes`-byte bus, and
/// counts its R beats (no `rid` or `rlast` needed):
/// - AR holds valid and payload until its handshake (asserted), R holds
///   valid and payload until `rready` (assumed);
/// - `arburst` is INCR, `arsize` the bus width, `arlen < max_burst`, and a
///   burst never crosses a 4 KiB boundary (asserted);
/// - no R beat while no requested beat is outstanding (assumed): the slave
///   answers only what was asked.
///
/// Returns the ghost count of beats requested on AR and not yet taken on
/// R (`open_bits` wide), for the block to tie to its own count of the
/// beats it waits for (which is what makes the rules inductive, and says
/// the block never waits for more beats than it asked for).
pub fn axi_read(m: &mut Module, prefix: &str, rst: &Signal, max_burst: u32, data_bytes: u32, open_bits: u32) -> Signal {
    let names =
        ["arid", "araddr", "arlen", "arsize", "arburst", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready"];
    let v: Vec<Signal> = names.iter().map(|n| port(m, &format!("{prefix}_{n}"))).collect();
    let s = |n: &str| v[names.iter().position(|x| *x == n).expect("an AXI4 read port")].clone();
    let (arvalid, arready, arlen, araddr) = (s("arvalid"), s("arready"), s("arlen"), s("araddr"));
    let (rvalid, rready) = (s("rvalid"), s("rready"));
    let ar_payload = [s("arid"), araddr.clone(), arlen.clone(), s("arsize"), s("arburst")];
    valid_ready(m, &format!("{prefix}_ar"), Side::Source, &arvalid, &arready, &ar_payload, rst);
    valid_ready(m, &format!("{prefix}_r"), Side::Sink, &rvalid, &rready, &[s("rdata"), s("rresp")], rst);
    let lb = data_bytes.trailing_zeros();
    m.assert(
        &format!("a_{prefix}_arburst_incr"),
        "every burst is INCR of full-width beats",
        implies(&arvalid, s("arburst").expr().eq(lit(2, 1)).logic_and(s("arsize").expr().eq(lit(3, u64::from(lb))))),
    );
    m.assert(
        &format!("a_{prefix}_arlen_max"),
        &format!("a burst has at most MAX_BURST = {max_burst} beats"),
        implies(&arvalid, arlen.expr().le(lit(arlen.width(), u64::from(max_burst - 1)))),
    );
    m.assert(
        &format!("a_{prefix}_ar_4k"),
        "a burst never crosses a 4 KiB boundary: its first beat's index in the page plus arlen stays in the page",
        implies(
            &arvalid,
            (zext(araddr.slice(11, lb), 13) + zext(&arlen, 13)).le(lit(13, u64::from(4096 / data_bytes - 1))),
        ),
    );
    let ar_fire = arvalid.expr().logic_and(&arready);
    let r_fire = rvalid.expr().logic_and(&rready);
    let open = m.formal_wire(&format!("f_{prefix}_r_open"), open_bits, "beats requested on AR, not yet taken on R");
    m.formal_seq(vec![if_else(
        rst,
        vec![set(&open, lit(open_bits, 0))],
        vec![set(
            &open,
            open.expr() + mux1(ar_fire, zext(&arlen, open_bits) + lit(open_bits, 1), lit(open_bits, 0))
                - zext(r_fire, open_bits),
        )],
    )]);
    m.assume(
        &format!("asm_{prefix}_r_after_read"),
        "the slave sends a read beat only while a requested beat is outstanding",
        implies(&rvalid, open.expr().ne(lit(open_bits, 0))),
    );
    open
}
