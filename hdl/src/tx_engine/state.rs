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
//! What it holds, each the model's (`mrnic_model::tx_engine`) behaviour
//! restated as hardware, is listed in docs/architecture.md (tx_engine,
//! "The assembly, built"): the clear sweep and the input registers; the
//! block RAM tables (mirror, context, streams' words, rings, work queues,
//! addresses, deadlines), a memory per field with one write port and a
//! read port the units that read one at a time share; the decision's and
//! the walk's copies of their connection's words; the ready set and the
//! per-connection queues in flip-flop vectors (sized for `small`:
//! [`fits`] refuses configs past [`FLOP_VECTOR_MAX`]); the tail scanner's
//! read-ahead compare; failures, frames, events, marks, answers and the
//! counters where several units meet; the turns' levels.

use std::collections::{BTreeSet, HashMap};
use std::ops::Not;

use mrnic_model::block::{Dir, PortDef};
use mrnic_model::tx_engine::TxEngineParams;

use crate::expr::index_bits;
use crate::ir::set;
use crate::{cat, lit, mux, repl, zext, Expr, Module, Signal};

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
    /// The clear sweep: (running, its address), once built.
    sweeping: Option<(Signal, Signal)>,
    /// Per connection: its retransmit queue has an entry (the ready set's
    /// input), once built.
    retx_nonempty: Option<Signal>,
    ready_parts: Option<ReadyParts>,
    /// Per connection: open and not failed after this edge.
    live_after: Option<Signal>,
    /// The input registers' "a record is held or arriving", by channel.
    held: HashMap<String, Signal>,
}

impl S {
    /// Input `name`, marked read.
    fn i(&mut self, name: &str) -> Signal {
        let s = self.sig.get(name).unwrap_or_else(|| panic!("tx_state has no port {name}")).clone();
        self.read.insert(name.to_string());
        s
    }

    /// The clear sweep's write of a table `addr_bits` wide: every word
    /// 0, one a cycle (the sweep runs over the largest table, so every
    /// smaller one is covered; its address wraps in their width).
    fn clear(&self, w: u32, addr_bits: u32) -> FieldWrite {
        let (on, addr) = self.sweeping.clone().expect("the sweep is built first");
        (on.expr(), addr.slice(addr_bits - 1, 0), lit(w, 0))
    }

    fn has(&self, name: &str) -> bool {
        self.sig.contains_key(name)
    }

    fn width(&self, name: &str) -> u32 {
        self.defs.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("tx_state has no port {name}")).width
    }

    /// `e` (`have` bits) fitted to `w` bits: zero-extended, or its low bits
    /// with the high ones sunk by name (bits the taker has no use for, such
    /// as the actions that are path_telemetry's own, or a wider status).
    fn fit(&mut self, name: &str, e: Expr, have: u32, w: u32) -> Expr {
        if have <= w {
            return zext(e, w);
        }
        let full = self.m.wire_from(&format!("{name}_full"), have, "before the cut", e);
        let high = format!("{}_{name}_high", crate::check::UNUSED_SINK);
        self.m.wire_from(&high, have - w, "bits the taker does not use", full.slice(have - 1, w));
        full.slice(w - 1, 0)
    }

    /// Input `name` fitted to `w` bits ([`S::fit`]).
    fn i_fit(&mut self, name: &str, w: u32) -> Expr {
        let (e, have) = (self.i(name).expr(), self.width(name));
        self.fit(name, e, have, w)
    }

    /// Drives output `name` with `e`, cut or zero-extended to its width.
    fn o(&mut self, name: &str, e: impl Into<Expr>, from_width: u32) {
        let w = self.width(name);
        let e = self.fit(name, e.into(), from_width, w);
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

/// The widest per-connection flip-flop vector this state keeps (the ready
/// set's PROBE bits and counts, the retransmit queues' heads and counts):
/// past this the design is not hardware anyone would build (and
/// Verilator refuses such literals), so the assembly is refused for the
/// config with the reason.
pub const FLOP_VECTOR_MAX: u32 = 8192;

/// Whether `p` fits the flip-flop vectors (see [`FLOP_VECTOR_MAX`]).
pub fn fits(p: &TxEngineParams) -> Result<(), String> {
    let pb = index_bits(p.paths).max(1);
    let qb = index_bits(p.paths * p.ring_depth);
    let sb = super::post::pend_streams_bits(p);
    for (what, w) in [
        ("the PROBE bits (CONNS x PATHS)", p.conns * p.paths),
        ("the retransmit queues' heads (CONNS x (path + psn))", p.conns * (pb + 24)),
        ("the retransmit queues' second entries", p.conns * (pb + 24)),
        ("the retransmit queues' counts", p.conns * (qb + 1)),
        ("the counts of streams with bytes to cut", p.conns * sb),
        ("the PROBE queues (CONNS x PATHS x path)", p.conns * p.paths * pb),
    ] {
        if w > FLOP_VECTOR_MAX {
            return Err(format!(
                "tx_state keeps {what} in flip-flops: {w} bits for {} connections, past {FLOP_VECTOR_MAX}; \
                 this size needs them in block RAM (docs/architecture.md, the store map)",
                p.conns
            ));
        }
    }
    Ok(())
}

/// `tx_state` for `p`, with the ports [`super::assembly::state_ports`] gives.
pub fn build(p: &TxEngineParams, defs: &[PortDef]) -> Built {
    let mut m = Module::new(NAME);
    m.describe("tx_engine state: the clear sweep, the input registers, the tables, where units meet");
    let (clk, sig) = crate::ports::declare(&mut m, defs);
    m.clock_domain(&clk, &sig["rst"]);
    let mut s = S {
        m,
        sig,
        defs: defs.to_vec(),
        driven: BTreeSet::new(),
        read: BTreeSet::new(),
        sweeping: None,
        retx_nonempty: None,
        ready_parts: None,
        live_after: None,
        held: HashMap::new(),
    };

    let run = sweep(&mut s, p);
    for (ch, unit) in [("rto", "rto"), ("upd", "rto"), ("sack", "sack"), ("nack", "nack")] {
        input_register(&mut s, ch, unit, &run);
    }
    busy(&mut s);
    sack_holds(&mut s);
    let addr = addresses(&mut s, p);
    answers(&mut s, p, &run, &addr);
    probe_addresses(&mut s, p, &addr);
    let (expired, taken) = marks(&mut s, p);
    let fail = failures(&mut s);
    ready_set(&mut s, p, &expired, &taken, &fail);
    context(&mut s, p, &fail, &addr);
    tail_timers(&mut s, p);
    post_forwards(&mut s);
    let dc_pend = stream_words(&mut s, p);
    let dc_conn = decision_conn(&mut s, p);
    let head = retx_queue(&mut s, p, &dc_conn);
    let slot = ring(&mut s, p, &fail, &dc_conn, &head);
    work_queues(&mut s, p, &dc_conn, &dc_pend, &slot);
    let pm = mirror(&mut s, p);
    probe_queue(&mut s, p, &fail, &pm);
    window_probes(&mut s, p, &dc_conn);
    let ev = events(&mut s, p);
    turns(&mut s, p, &ev);
    sched_ready(&mut s, p);
    frames(&mut s);
    counters(&mut s);

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
    s.sweeping = Some((init.q.clone(), addr.q.clone()));
    let en = s.m.wire_from("en", 1, "the engine runs this cycle", run.expr().logic_and(rst.expr().logic_not()));
    for u in ["post", "open", "out"] {
        s.o(&format!("{u}_en"), &en, 1);
    }
    s.o("ack_s_run", &en, 1);
    run
}

/// An input register's record as the engine sees it in a cycle.
struct Rec {
    /// A record is held or arriving.
    has: Signal,
    /// Each field: the held record's, or the arriving one's with none held.
    fields: HashMap<String, (Signal, u32)>,
}

impl Rec {
    fn f(&self, name: &str) -> Signal {
        self.fields.get(name).unwrap_or_else(|| panic!("no field {name}")).0.clone()
    }
}

/// Input register `s_<ch>_*`: ready while empty and running; its record
/// is seen in its handshake's cycle (the model loads its registers at the
/// start of the cycle, before any unit's turn reads them) and leaves at
/// `take`.
fn record(s: &mut S, ch: &str, run: &Signal, take: Expr) -> Rec {
    let names: Vec<String> = s.fields(&format!("s_{ch}_"), Dir::In).into_iter().filter(|f| f != "valid").collect();
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
    let has = s.m.wire_from(&format!("{ch}_has"), 1, "a record is held or arriving", held.q.expr().logic_or(&accept));
    s.m.next(set(&held.next, has.expr().logic_and(take.logic_not())));
    let mut fields = HashMap::new();
    for f in names {
        let inp = s.i(&format!("s_{ch}_{f}"));
        let w = s.width(&format!("s_{ch}_{f}"));
        let r = s.m.reg_no_reset(&format!("{ch}_{f}_q"), w, "the held record's field");
        s.m.next(set(&r.next, mux(&accept, inp.expr(), r.q.expr())));
        let v = s.m.wire_from(&format!("{ch}_{f}"), w, "the record's field", mux(&held.q, r.q.expr(), inp.expr()));
        fields.insert(f, (v, w));
    }
    Rec { has, fields }
}

/// The acknowledgement unit's input register `s_<ch>`: its presence for
/// `tx_ack` (`s_<ch>`), its fields for the handler `unit`
/// (`<unit>_s_<ch>_<field>`, cut to the unit's width where it takes fewer
/// bits: the actions the handlers act on are the low ones); the step
/// that starts on it (`m_go_<ch>`) takes it.
fn input_register(s: &mut S, ch: &str, unit: &str, run: &Signal) {
    let take = s.i(&format!("ack_m_go_{ch}")).expr();
    let rec = record(s, ch, run, take);
    s.o(&format!("ack_s_{ch}"), &rec.has, 1);
    s.held.insert(ch.to_string(), rec.has.clone());
    let mut names: Vec<&String> = rec.fields.keys().collect();
    names.sort();
    for f in names {
        let out = format!("{unit}_s_{ch}_{f}");
        let (v, w) = rec.fields[f].clone();
        if s.has(&out) {
            s.o(&out, &v, w);
        } else {
            // A field the engine takes and its handler does not (an
            // update's weight is path_selector's, not the engine's).
            s.m.wire_from(&format!("{}_{ch}_{f}", crate::check::UNUSED_SINK), w, "a field no handler takes", v.expr());
        }
    }
}

/// `d` delayed by `n` cycles (a shift register; `n = 0` is `d`).
fn delay(s: &mut S, name: &str, d: &Signal, w: u32, n: u32) -> Signal {
    let mut cur = d.clone();
    for k in 0..n {
        let r = s.m.reg_no_reset(&format!("{name}_d{}", k + 1), w, "a read's answer on its way (table_read_latency)");
        s.m.next(set(&r.next, cur.expr()));
        cur = r.q;
    }
    cur
}

/// The addresses table: a connection's peer MAC and IPv4 address, 80 bits
/// a connection, written by the setup's act (`tx_open` `m_addr_*`) and
/// read where a frame is addressed. It reads first, as block RAM does: a
/// read in the cycle of a write sees the old word (the model's answers
/// read before an `s_open` of the same edge writes).
fn addresses(s: &mut S, p: &TxEngineParams) -> crate::Mem {
    let mem = s.m.memory("addr", 80, p.conns, crate::MemStyle::Block, "per connection: the peer's MAC (high) and IPv4");
    let (v, c) = (s.i("open_m_addr_valid"), s.i("open_m_addr_conn"));
    let word = cat(&[s.i("open_m_addr_dst_mac").expr(), s.i("open_m_addr_dst_ip").expr()]);
    let (en, conn, data) = pick_write(&[(v.expr(), c.expr(), word), s.clear(80, p.conn_bits)], p.conn_bits, 80);
    s.m.mem_write(&mem, en, conn, data);
    mem
}

/// A read port of the addresses table answering `L` cycles after `en`:
/// (MAC, IPv4).
fn address_read(s: &mut S, p: &TxEngineParams, mem: &crate::Mem, name: &str, en: Expr, conn: Expr) -> (Expr, Expr) {
    let first = s.m.mem_read(mem, name, en, conn);
    let ans = delay(s, name, &first, 80, p.read_latency - 1);
    (ans.slice(79, 32), ans.slice(31, 0))
}

/// The answers (SACKs and NACKs to send): the `s_csack` and `s_cnack`
/// input registers, a SACK first, pushed into the output stage's answer
/// queue while it has room, the header placed from proto's layouts, and
/// the connection's addresses read with the push, answering `L` cycles
/// later (a NO_CONN NACK carries its own).
fn answers(s: &mut S, p: &TxEngineParams, run: &Signal, addr: &crate::Mem) {
    let room = s.i("out_s_ans_ready");
    let sack_push = s.m.wire("csack_push", 1, "the held SACK enters the answer queue");
    let nack_push = s.m.wire("cnack_push", 1, "the held NACK enters the answer queue (no SACK held)");
    let cs = record(s, "csack", run, sack_push.expr());
    let cn = record(s, "cnack", run, nack_push.expr());
    s.m.assign(&sack_push, cs.has.expr().logic_and(&room));
    s.m.assign(&nack_push, cs.has.expr().logic_not().logic_and(&cn.has).logic_and(&room));
    s.o("out_s_ans_valid", cs.has.expr().logic_or(&cn.has), 1);
    s.o("out_s_ans_nack", cs.has.expr().logic_not(), 1);
    let sack = super::sack_header(&|f| cs.f(f).expr());
    let sack = s.m.wire_from("ans_sack_hdr", super::output::ANS_HDR_BITS, "the SACK's header", sack);
    let nack = super::nack_header(&|f| cn.f(if f == "path_psn" { "psn" } else { f }).expr());
    let nb = mrnic_proto::layouts::nack::LAYOUT.len as u32 * 8;
    let nack = s.m.wire_from("ans_nack_hdr", nb, "the NACK's header", nack);
    let hdr = mux(&cs.has, sack.expr(), cat(&[nack.expr(), lit(super::output::ANS_HDR_BITS - nb, 0)]));
    s.o("out_s_ans_hdr", hdr, super::output::ANS_HDR_BITS);
    for f in ["sport", "plane"] {
        let w = s.width(&format!("out_s_ans_{f}"));
        s.o(&format!("out_s_ans_{f}"), mux(&cs.has, cs.f(f).expr(), cn.f(f).expr()), w);
    }
    s.o("out_s_ans_direct", cs.has.expr().logic_not().logic_and(cn.f("direct")), 1);
    s.o("out_s_ans_dst_mac", cn.f("dst_mac"), 48);
    s.o("out_s_ans_dst_ip", cn.f("dst_ip"), 32);
    let conn = mux(&cs.has, cs.f("conn").expr(), cn.f("conn").expr());
    let (mac, ip) = address_read(s, p, addr, "ans_addr", sack_push.expr().logic_or(&nack_push), conn);
    s.o("out_s_ans_rd_mac", mac, 48);
    s.o("out_s_ans_rd_ip", ip, 32);
}

/// The PROBE send's addresses: its `m_rd` reads them with the PROBE
/// queue's head and the context.
fn probe_addresses(s: &mut S, p: &TxEngineParams, addr: &crate::Mem) {
    let (en, conn) = (s.i("probe_m_rd_valid"), s.i("probe_m_rd_conn"));
    let (mac, ip) = address_read(s, p, addr, "probe_addr", en.expr(), conn.expr());
    s.o("probe_s_rd_dst_mac", mac, 48);
    s.o("probe_s_rd_dst_ip", ip, 32);
}

/// The plane marks, a register pair per plane for the whole NIC: written
/// by the timeout handler (`tx_rto` `m_mark_*`: a path SUSPECT or DEAD),
/// taken by a PROBE reply (`tx_sack` `m_mark_clr_*`), and cleared when
/// their time comes (one comparator per plane, every cycle, before any
/// unit reads them). Returns the pulses that wake every stalled
/// connection: a mark expired (at the start of the cycle, before the
/// scheduler's turn) and a mark taken (by a SACK, after it).
fn marks(s: &mut S, p: &TxEngineParams) -> (Signal, Signal) {
    let planes = p.cfg.transport.planes;
    let pb = s.width("rto_m_mark_plane");
    let ts = s.i("ts_now");
    let (wv, wp, wu) = (s.i("rto_m_mark_valid"), s.i("rto_m_mark_plane"), s.i("rto_m_mark_until"));
    let (cv, cp) = (s.i("sack_m_mark_clr_valid"), s.i("sack_m_mark_clr_plane"));
    let mut seen = Vec::new();
    let mut untils = Vec::new();
    let mut expired = Vec::new();
    let mut taken = Vec::new();
    for k in 0..planes {
        let v = s.m.reg(&format!("mark{k}_valid"), 1, 0, "the plane is marked unhealthy");
        let u = s.m.reg_no_reset(&format!("mark{k}_until"), 32, "until this timestamp");
        let due = super::ack::reached(ts.expr(), u.q.expr());
        let live = s.m.wire_from(
            &format!("mark{k}_live"),
            1,
            "marked and not due: what every unit reads this cycle",
            v.q.expr().logic_and(due.clone().logic_not()),
        );
        let here = |e: &Signal| e.expr().eq(lit(pb, u64::from(k)));
        let wr = wv.expr().logic_and(here(&wp));
        let clr = cv.expr().logic_and(here(&cp));
        s.m.next(set(&v.next, wr.clone().logic_or(live.expr().logic_and(clr.clone().logic_not()))));
        s.m.next(set(&u.next, mux(wr, wu.expr(), u.q.expr())));
        expired.push(v.q.expr().logic_and(due));
        taken.push(clr.logic_and(&live));
        seen.push(live.expr());
        untils.push(u.q.expr());
    }
    seen.reverse();
    untils.reverse();
    let valid = cat(&seen);
    let until = cat(&untils);
    for u in ["sched", "rto", "sack"] {
        s.o(&format!("{u}_mark_valid"), valid.clone(), planes);
    }
    for u in ["sched", "rto"] {
        s.o(&format!("{u}_mark_until"), until.clone(), 32 * planes);
    }
    let any = |v: Vec<Expr>| v.into_iter().reduce(|a, b| a.logic_or(b)).expect("a plane");
    (
        s.m.wire_from("mark_expired", 1, "a mark's time came: every stalled connection wakes", any(expired)),
        s.m.wire_from("mark_taken", 1, "a PROBE reply took a mark: every stalled connection wakes", any(taken)),
    )
}

/// The output stage's frame queue input: the commit's data frame or the
/// PROBE send's frame (one a cycle: the commit is the scheduler's decision
/// and the PROBE its idle turn's).
fn frames(s: &mut S) {
    let (data, probe) = (s.i("commit_m_valid"), s.i("probe_m_frame_valid"));
    s.o("out_s_frame_valid", data.expr().logic_or(&probe), 1);
    s.o("out_s_frame_probe", &probe, 1);
    for f in ["hdr", "dst_mac", "dst_ip", "sport", "plane"] {
        let w = s.width(&format!("out_s_frame_{f}"));
        let e = mux(&probe, s.i(&format!("probe_m_frame_{f}")).expr(), s.i(&format!("commit_m_frame_{f}")).expr());
        s.o(&format!("out_s_frame_{f}"), e, w);
    }
    for f in ["addr", "len"] {
        let w = s.width(&format!("out_s_frame_{f}"));
        let e = mux(&probe, lit(w, 0), s.i(&format!("commit_m_frame_{f}")).expr());
        s.o(&format!("out_s_frame_{f}"), e, w);
    }
    let cb = s.width("out_s_frame_conn");
    let conn = mux(&probe, s.i("probe_m_frame_conn").expr(), s.i("sched_m_commit_conn").expr());
    s.o("out_s_frame_conn", conn, cb);
    // A data frame's request: its stream and work queue slot, as the ring
    // slot records them.
    let (sw, qw) = (s.width("out_s_frame_stream"), s.width("out_s_frame_slot"));
    let (stream, slot) = (s.i("commit_m_ring_stream"), s.i("commit_m_ring_wq"));
    s.o("out_s_frame_stream", &stream, sw);
    s.o("out_s_frame_slot", &slot, qw);
}

/// A connection's failure, from whichever unit fails it (the commit at
/// its retry limit, a reopen's flush, a NACK, every path DEAD; one a
/// cycle, since each runs in a turn the others do not), into the
/// completion walk, the post and the SACK stages; with the
/// acknowledgement unit's holds: before its turn the commit's
/// (`s_hold_pre`), after it a reopen's, a NACK's, a timeout's or a failed
/// payload read's (`s_hold_fail`; docs/architecture.md, tx_engine item
/// 11).
/// Returns the connection failing this cycle, a failed payload read's
/// (`tx_output` `m_fail_*`, which the walk takes on its own input) among
/// them, for the context's `failed` bit.
fn failures(s: &mut S) -> Failing {
    let cb = s.width("walk_s_fail_conn");
    let commit_conn = s.i("sched_m_commit_conn");
    let units: [(&str, Expr); 4] = [
        ("commit", commit_conn.expr()),
        ("open", s.i("open_m_fail_conn").expr()),
        ("nack", s.i("nack_m_fail_conn").expr()),
        ("rto", s.i("rto_m_fail_conn").expr()),
    ];
    let valid: Vec<Signal> = units.iter().map(|(u, _)| s.i(&format!("{u}_m_fail_valid"))).collect();
    let any = valid.iter().map(|v| v.expr()).reduce(|a, b| a.logic_or(b)).expect("units");
    let any = s.m.wire_from("fail_valid", 1, "a unit fails a connection this cycle", any);
    // The first valid unit's value, else 0.
    let pick = |vals: Vec<Expr>, w: u32| -> Expr {
        vals.into_iter().zip(&valid).rev().fold(lit(w, 0), |acc, (v, ok)| mux(ok, v, acc))
    };
    let conn = pick(units.iter().map(|(_, c)| c.clone()).collect(), cb);
    let conn = s.m.wire_from("fail_conn", cb, "the failing connection", conn);
    for u in ["walk", "post", "stage"] {
        s.o(&format!("{u}_s_fail_valid"), &any, 1);
        s.o(&format!("{u}_s_fail_conn"), &conn, cb);
    }
    // The setup's status is 8 bits wide; WR_FLUSH fits the walk's.
    let field = |s: &mut S, u: &str, f: &str, w: u32| -> Expr {
        let name = format!("{u}_m_fail_{f}");
        if s.has(&name) {
            s.i_fit(&name, w)
        } else {
            lit(w, 0)
        }
    };
    for f in ["culprit_valid", "culprit_stream", "culprit_slot", "status"] {
        let w = s.width(&format!("walk_s_fail_{f}"));
        let vals: Vec<Expr> = ["commit", "open", "nack", "rto"].iter().map(|u| field(s, u, f, w)).collect();
        let e = pick(vals, w);
        s.o(&format!("walk_s_fail_{f}"), e, w);
    }
    s.o("ack_s_hold_pre", &valid[0], 1);
    let (rd_v, rd_c) = (s.i("out_m_fail_valid"), s.i("out_m_fail_conn"));
    // The setup's flush, a NACK's and a timeout's failures act at their
    // reads' answer, after the turn (the model fails a timeout's
    // connection in its step; the unit's count is raised the same).
    let after = valid[1].expr().logic_or(&valid[2]).logic_or(&valid[3]).logic_or(&rd_v);
    s.o("ack_s_hold_fail", after, 1);
    let v = s.m.wire_from("failing", 1, "a connection fails this cycle", any.expr().logic_or(&rd_v));
    let c = s.m.wire_from("failing_conn", cb, "which", mux(&any, conn.expr(), rd_c.expr()));
    Failing { any: (v, c), units: (any, conn) }
}

/// A connection failing this cycle: by any cause, and by a unit (not a
/// failed payload read, which the output stage reports itself).
struct Failing {
    any: (Signal, Signal),
    units: (Signal, Signal),
}

/// One bit per connection: `conn`'s, when `en`.
fn onehot(s: &mut S, name: &str, conns: u32, en: &Expr, conn: &Expr) -> Signal {
    let cb = index_bits(conns);
    let at = lit(conns, 1) << zext(conn.clone(), cb.max(1));
    s.m.wire_from(name, conns, "a connection's bit", mux(en.clone(), at, lit(conns, 0)))
}

/// The ready set: per connection the bits the scheduler's choice reads
/// all at once (`open`, `failed`, `stalled`, `port_wait`, a PROBE queued
/// per path, the count of streams with bytes to cut), flip-flops as
/// vectors a connection wide, each written a bit (or a field) at a time
/// by the units that change it. The scheduler reads them in its turn:
/// the wakes that come before it in the cycle (a plane mark expired, a
/// port that drained) reach it the same cycle, every later write the
/// next. Readers through `m_rd` get the bits as they stood at the read,
/// `L` cycles later.
fn ready_set(s: &mut S, p: &TxEngineParams, expired: &Signal, taken: &Signal, failing: &Failing) {
    let fail = &failing.any;
    let (c, n, l) = (p.conns, p.paths, p.read_latency);
    let cb = p.conn_bits;
    let pb = s.width("rto_m_probe_path");
    let sb = super::post::pend_streams_bits(p);
    let ones = |w: u32| lit(w, if w >= 64 { u64::MAX } else { (1u64 << w) - 1 });
    let all = |e: Expr| repl(c, e);

    // Who writes, as one-hot vectors.
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let open_at = onehot(s, "rs_open_at", c, &ov.expr(), &oc.expr());
    let fail_at = onehot(s, "rs_fail_at", c, &fail.0.expr(), &fail.1.expr());
    let (kv, kc, kw) = (s.i("sched_m_stall_valid"), s.i("sched_m_stall_conn"), s.i("sched_m_stall_port_wait"));
    let stall_at = onehot(s, "rs_stall_at", c, &kv.expr(), &kc.expr());
    let mut wakes: Vec<Expr> = Vec::new();
    for u in ["rto", "nack", "sack"] {
        let (v, cn) = (s.i(&format!("{u}_m_unstall_valid")), s.i(&format!("{u}_m_unstall_conn")));
        wakes.push(onehot(s, &format!("rs_unstall_{u}"), c, &v.expr(), &cn.expr()).expr());
    }
    for u in ["rto", "nack", "sack", "stage", "timer"] {
        let (v, cn) = (s.i(&format!("{u}_m_retx_valid")), s.i(&format!("{u}_m_retx_conn")));
        wakes.push(onehot(s, &format!("rs_retx_{u}"), c, &v.expr(), &cn.expr()).expr());
    }
    let (wv, wc) = (s.i("post_m_wq_wr_valid"), s.i("post_m_wq_wr_conn"));
    let post_at = onehot(s, "rs_post_at", c, &wv.expr(), &wc.expr());
    wakes.push(post_at.expr());
    let later_all = s.i("timer_m_unstall_all").expr().logic_or(s.i("sack_m_unstall_all")).logic_or(taken);
    wakes.push(all(later_all));
    let wake = wakes.into_iter().reduce(|a, b| a | b).expect("wakes");

    // A port that drained: its rise against last cycle's level.
    let planes = p.cfg.transport.planes;
    let pr = s.i("port_ready");
    let pr_q = s.m.reg("port_ready_q", planes, (1u64 << planes) - 1, "port_ready as it was last cycle");
    s.m.next(set(&pr_q.next, pr.expr()));
    let rose = s.m.wire_from("port_rose", 1, "a port's ready bit rose", (pr.expr() & pr_q.q.expr().not()).reduce_or());

    let open = s.m.reg("rs_open", c, 0, "per connection: set up");
    let failed = s.m.reg("rs_failed", c, 0, "per connection: failed (until set up again)");
    let stalled = s.m.reg("rs_stalled", c, 0, "per connection: its last decision found nothing to send");
    let port_wait = s.m.reg("rs_port_wait", c, 0, "per connection: only full ports held its last decision");
    // The wakes before the scheduler's turn.
    let early = all(expired.expr()) | (port_wait.q.expr() & all(rose.expr()));
    let stalled_now =
        s.m.wire_from("rs_stalled_now", c, "stalled as the scheduler sees it", stalled.q.expr() & early.clone().not());
    s.m.next(set(&open.next, open.q.expr() | open_at.expr()));
    // Open and not failed after this cycle's writes (the tail scanner's
    // compare is the model's after the cycle's step).
    let live_after = s.m.wire_from(
        "rs_live_after",
        c,
        "per connection: open and not failed after this edge",
        (open.q.expr() | open_at.expr()) & ((failed.q.expr() | fail_at.expr()) & open_at.expr().not()).not(),
    );
    s.live_after = Some(live_after);
    s.m.next(set(&failed.next, (failed.q.expr() | fail_at.expr()) & open_at.expr().not()));
    s.m.next(set(&stalled.next, (stalled_now.expr() | stall_at.expr()) & wake.not() & open_at.expr().not()));
    let kw_all = all(kw.expr());
    s.m.next(set(
        &port_wait.next,
        mux(
            kv.expr(),
            (port_wait.q.expr() & stall_at.expr().not() & early.clone().not()) | (stall_at.expr() & kw_all),
            port_wait.q.expr() & early.not(),
        ) & open_at.expr().not(),
    ));

    // PROBEs queued, a bit per path: set by a queued PROBE, cleared by
    // its send, every bit by a failure or a setup.
    let probe_q = s.m.reg("rs_probe_q", c * n, 0, "per connection, a bit per path: a PROBE is queued");
    let mut set_bits = lit(c * n, 0);
    for u in ["rto", "stage", "timer"] {
        let (v, cn, pa) =
            (s.i(&format!("{u}_m_probe_valid")), s.i(&format!("{u}_m_probe_conn")), s.i(&format!("{u}_m_probe_path")));
        let at = zext(cn.expr(), cb + pb) * lit(cb + pb, u64::from(n)) + zext(pa.expr(), cb + pb);
        set_bits = set_bits | mux(v.expr(), lit(c * n, 1) << at, lit(c * n, 0));
    }
    let (qv, qc, qp) = (s.i("probe_m_pq_valid"), s.i("probe_m_pq_conn"), s.i("probe_m_pq_path"));
    let at = zext(qc.expr(), cb + pb) * lit(cb + pb, u64::from(n)) + zext(qp.expr(), cb + pb);
    let clr_bit = mux(qv.expr(), lit(c * n, 1) << at, lit(c * n, 0));
    // A failure or a setup clears the connection's whole field.
    let ib_q = index_bits(c * n);
    let at_q = |conn: &Signal| zext(conn.expr(), ib_q) * lit(ib_q, u64::from(n));
    let gone_q = mux(fail.0.expr(), zext(ones(n), c * n) << at_q(&fail.1), lit(c * n, 0))
        | mux(ov.expr(), zext(ones(n), c * n) << at_q(&oc), lit(c * n, 0));
    let probe_next = s.m.wire_from(
        "rs_probe_after",
        c * n,
        "the PROBE bits after this cycle",
        ((probe_q.q.expr() & clr_bit.clone().not()) | set_bits) & gone_q.not(),
    );
    s.m.next(set(&probe_q.next, probe_next.expr()));
    // Whether a connection has any PROBE queued, kept beside the bits
    // (a reduction per connection would be CONNS of them): rewritten for
    // each connection whose bits change this cycle.
    let probe_any = s.m.reg("rs_probe_any", c, 0, "per connection: some PROBE is queued");
    let mut any_next = probe_any.q.expr();
    let touched: Vec<(Expr, Signal)> = {
        let mut v = Vec::new();
        for u in ["rto", "stage", "timer"] {
            v.push((s.i(&format!("{u}_m_probe_valid")).expr(), s.i(&format!("{u}_m_probe_conn"))));
        }
        v.push((qv.expr(), qc.clone()));
        v.push((fail.0.expr(), fail.1.clone()));
        v.push((ov.expr(), oc.clone()));
        v
    };
    for (k, (en, conn)) in touched.iter().enumerate() {
        let bit = s.m.wire_from(
            &format!("rs_probe_any_{k}"),
            1,
            "the touched connection's PROBE bits, any",
            probe_next.expr().part(at_q(conn), n).reduce_or(),
        );
        let one = lit(c, 1) << zext(conn.expr(), cb.max(1));
        any_next = mux(en.clone(), (any_next.clone() & one.clone().not()) | mux(&bit, one, lit(c, 0)), any_next);
    }
    s.m.next(set(&probe_any.next, any_next));

    // Streams with bytes to cut: the post's count wins over the commit's
    // of the same cycle (the post acts last, on a read the commit's cut
    // was forwarded to).
    let pend = s.m.reg("rs_pend", c * sb, 0, "per connection: streams with bytes to cut");
    let (cv, cc, cp) = (s.i("commit_m_cut_valid"), s.i("sched_m_commit_conn"), s.i("commit_m_ctx_pend_streams"));
    let pp = s.i("post_m_pend_streams");
    let field_at = |conn: &Signal| {
        let ib = index_bits(c * sb);
        zext(conn.expr(), ib) * lit(ib, u64::from(sb))
    };
    let put = |q: Expr, en: Expr, conn: &Signal, v: Expr| -> Expr {
        let at = field_at(conn);
        mux(en, (q.clone() & (zext(ones(sb), c * sb) << at.clone()).not()) | (zext(v, c * sb) << at), q)
    };
    // In the model's order: the commit (the scheduler's turn), a failure
    // or a setup's restart, then the post (last in the cycle: a request
    // posted as its connection is set up counts).
    let after_commit_w = s.m.wire_from(
        "rs_pend_committed",
        c * sb,
        "the counts after the commit",
        put(pend.q.expr(), cv.expr(), &cc, cp.expr()),
    );
    let after_commit = after_commit_w.expr();
    let gone_p = mux(fail.0.expr(), zext(ones(sb), c * sb) << field_at(&fail.1), lit(c * sb, 0))
        | mux(ov.expr(), zext(ones(sb), c * sb) << field_at(&oc), lit(c * sb, 0));
    let after_post = put(after_commit & gone_p.not(), wv.expr(), &wc, pp.expr());
    let pend_after = s.m.wire_from("rs_pend_after", c * sb, "the counts after this cycle", after_post);
    s.m.next(set(&pend.next, pend_after.expr()));

    // What each reader takes.
    let pend_of = |conn: &Signal| pend.q.expr().part(field_at(conn), sb);
    s.o("sched_s_probe", &probe_any.q, c);
    s.o("commit_s_ctx_failed", failed.q.expr().bit_at(cc.expr()), 1);
    s.o("commit_s_ctx_pend_streams", pend_of(&cc), sb);
    let live_of =
        |conn: &Signal| open.q.expr().bit_at(conn.expr()).logic_and(failed.q.expr().bit_at(conn.expr()).logic_not());
    let lc = s.i("open_m_live_conn");
    s.o("open_s_live", live_of(&lc), 1);
    let fc = s.i("out_m_fail_conn");
    // "After this edge": a unit's failure of this cycle counts (the
    // output stage's own report is what the bit decides).
    let (uv, uc) = (&failing.units.0, &failing.units.1);
    let same = uv.expr().logic_and(uc.expr().eq(fc.expr()));
    s.o("out_fail_conn_failed", failed.q.expr().bit_at(fc.expr()).logic_or(same), 1);
    // The post reads every cycle: its address is 0 without a read.
    let prc = s.i("post_m_rd_conn");
    let live = s.m.wire_from("rs_post_live", 1, "the post's read: live", live_of(&prc));
    let pendw = s.m.wire_from("rs_post_pend", sb, "the post's read: streams with bytes to cut", pend_of(&prc));
    let live_d = delay(s, "rs_post_live", &live, 1, l);
    let pend_d = delay(s, "rs_post_pend", &pendw, sb, l);
    s.o("post_s_rd_live", &live_d, 1);
    s.o("post_s_rd_pend_streams", &pend_d, sb);
    // The handlers read the bits as the scheduler's turn left them: a step
    // may start in the cycle the commit writes (its count of streams with
    // bytes to cut, its failure) or the PROBE send pops.
    let (uv, uc) = (&failing.units.0, &failing.units.1);
    let failed_mid = s.m.wire_from(
        "rs_failed_mid",
        c,
        "failed after the scheduler's turn",
        failed.q.expr() | mux(uv, lit(c, 1) << zext(uc.expr(), cb.max(1)), lit(c, 0)),
    );
    let probe_mid = s.m.wire_from(
        "rs_probe_q_mid",
        c * n,
        "PROBE bits after the scheduler's turn",
        probe_q.q.expr() & clr_bit.not(),
    );
    let pend_mid = s.m.wire_from("rs_pend_mid", c * sb, "counts after the scheduler's turn", after_commit_w.expr());
    let pend_mid_of = |conn: &Signal| pend_mid.expr().part(field_at(conn), sb);
    for u in ["nack", "rto", "sack", "timer", "stage"] {
        let conn = s.i(&format!("{u}_m_rd_conn"));
        let want = |f: &str| s.has(&format!("{u}_s_rd_{f}"));
        let (wo, wf, wq, wp) = (want("open"), want("failed"), want("probe_q"), want("pend"));
        if wo {
            let v = s.m.wire_from(&format!("rs_{u}_open"), 1, "the read's open bit", open.q.expr().bit_at(conn.expr()));
            let d = delay(s, &format!("rs_{u}_open"), &v, 1, l);
            s.o(&format!("{u}_s_rd_open"), &d, 1);
        }
        if wf {
            let v = s.m.wire_from(
                &format!("rs_{u}_failed"),
                1,
                "the read's failed bit",
                failed_mid.expr().bit_at(conn.expr()),
            );
            let d = delay(s, &format!("rs_{u}_failed"), &v, 1, l);
            s.o(&format!("{u}_s_rd_failed"), &d, 1);
        }
        if wq {
            let ib = index_bits(c * n);
            let at = zext(conn.expr(), ib) * lit(ib, u64::from(n));
            let v = s.m.wire_from(&format!("rs_{u}_probe_q"), n, "the read's PROBE bits", probe_mid.expr().part(at, n));
            let d = delay(s, &format!("rs_{u}_probe_q"), &v, n, l);
            s.o(&format!("{u}_s_rd_probe_q"), &d, n);
        }
        if wp {
            let v = s.m.wire_from(
                &format!("rs_{u}_pend"),
                1,
                "the read: some stream has bytes to cut",
                pend_mid_of(&conn).reduce_or(),
            );
            let d = delay(s, &format!("rs_{u}_pend"), &v, 1, l);
            s.o(&format!("{u}_s_rd_pend"), &d, 1);
        }
    }
    // Whether a connection has streams with bytes to cut, kept beside
    // the counts as the PROBE bits' summary is.
    let pnz = s.m.reg("rs_pend_nz", c, 0, "per connection: some stream has bytes to cut");
    let mut nz_next = pnz.q.expr();
    for (k, (en, conn)) in
        [(cv.expr(), cc.clone()), (wv.expr(), wc.clone()), (fail.0.expr(), fail.1.clone()), (ov.expr(), oc.clone())]
            .into_iter()
            .enumerate()
    {
        let b = s.m.wire_from(
            &format!("rs_pend_nz_{k}"),
            1,
            "the touched connection has streams with bytes to cut",
            pend_after.expr().part(field_at(&conn), sb).ne(lit(sb, 0)),
        );
        let one = lit(c, 1) << zext(conn.expr(), cb.max(1));
        nz_next = mux(en, (nz_next.clone() & one.clone().not()) | mux(&b, one, lit(c, 0)), nz_next);
    }
    s.m.next(set(&pnz.next, nz_next));
    s.ready_parts = Some(ReadyParts {
        live: s.m.wire_from("rs_live", c, "per connection: open and not failed", open.q.expr() & failed.q.expr().not()),
        stalled: stalled_now,
        probe: probe_any.q.clone(),
        pend: pnz.q.clone(),
    });
}

/// What the scheduler's ready bits are made of.
struct ReadyParts {
    live: Signal,
    stalled: Signal,
    probe: Signal,
    pend: Signal,
}

/// The scheduler's ready bits (`conn_has_work`): live, and a PROBE queued,
/// or something to send and not stalled.
fn sched_ready(s: &mut S, p: &TxEngineParams) {
    let r = s.ready_parts.take().expect("the ready set is built");
    let retx = s.retx_nonempty.clone().expect("the retransmit queues are built");
    let e = r.live.expr() & (r.probe.expr() | ((retx.expr() | r.pend.expr()) & r.stalled.expr().not()));
    s.o("sched_s_ready", e, p.conns);
}

/// One write of a table's field: enable, connection, value.
type FieldWrite = (Expr, Expr, Expr);

/// A registered read of `mem` that sees a write of its own cycle to the
/// same word (write-first): a step of the acknowledgement unit may start
/// in the cycle the scheduler's commit writes, and the model's step runs
/// after the commit in that cycle. The answer is a cycle after `en`.
#[allow(clippy::too_many_arguments)]
fn read_fwd(
    s: &mut S,
    mem: &crate::Mem,
    name: &str,
    en: &Signal,
    addr: &Signal,
    w: u32,
    write: &(Expr, Expr, Expr),
) -> Signal {
    let raw = s.m.mem_read(mem, name, en, addr);
    let (we, wa, wd) = write.clone();
    let hit = s.m.reg(&format!("{name}_fwd"), 1, 0, "the read's cycle wrote its word");
    let val = s.m.reg_no_reset(&format!("{name}_fwd_data"), w, "what it wrote");
    s.m.next(set(&hit.next, mux(en, we.logic_and(wa.eq(addr.expr())), hit.q.expr())));
    s.m.next(set(&val.next, mux(en, wd, val.q.expr())));
    s.m.wire_from(
        &format!("{name}_now"),
        w,
        "the read's answer, its cycle's write in",
        mux(&hit.q, val.q.expr(), raw.expr()),
    )
}

/// The first enabled write's (connection, value), for a memory's one
/// write port: the writers of one field never write in the same cycle
/// (each runs in a turn the others do not).
fn pick_write(writes: &[FieldWrite], cb: u32, w: u32) -> (Expr, Expr, Expr) {
    let en = writes.iter().map(|(e, _, _)| e.clone()).reduce(|a, b| a.logic_or(b)).unwrap_or(lit(1, 0));
    let conn = writes.iter().rev().fold(lit(cb, 0), |acc, (e, c, _)| mux(e.clone(), c.clone(), acc));
    let data = writes.iter().rev().fold(lit(w, 0), |acc, (e, _, d)| mux(e.clone(), d.clone(), acc));
    (en, conn, data)
}

/// The path mirror's fields the units read, with their widths (the
/// readers' ports'); the mirror's `state` is written (`tx_rto`) and read
/// by no unit: the DEAD bits in the context are what the engine reads.
const MIRROR: [(&str, u32); 16] = [
    ("sport", 16),
    ("gen", 8),
    ("plane", 3),
    ("next_psn", 24),
    ("cum_acked", 24),
    ("tx_seq", 32),
    ("acked_seq", 32),
    ("probe_pending", 1),
    ("probe_ts", 16),
    ("probe_seq", 32),
    ("clr", 1),
    ("srtt", 20),
    ("rttvar", 16),
    ("min_rtt", 20),
    ("last_progress", 32),
    ("timed_out", 1),
];

/// The path mirror (connection x path): a memory per field and path,
/// `CONNS` words deep, each with one write port fed by the field's
/// writers and one read port shared by the readers, which read one at a
/// time (the acknowledgement unit's handlers one step at a time, the
/// scheduler and the PROBE send while that unit is idle). A read answers
/// `L` cycles after its address with every path of the connection (the
/// word as it stood before the read's cycle's writes, as the model's
/// steps read it); a reader of one path takes its own. The scheduler's
/// decision and the commit read it as levels: the decision's read, with
/// the telemetry's, fills a copy of the connection's paths that serves
/// both until the next decision, forwarded the decision's own credit
/// clears (nothing else writes the mirror while a decision runs).
fn mirror(s: &mut S, p: &TxEngineParams) -> HashMap<&'static str, Vec<Signal>> {
    let (n, cb, l) = (p.paths, p.conn_bits, p.read_latency);
    let pb = s.width("rto_m_pm_path");
    let at = |path: &Signal, k: u32| path.expr().eq(lit(pb, u64::from(k)));
    let bit = |mask: &Signal, k: u32| mask.bit(k);
    let i = |s: &mut S, name: &str| s.i(name);
    // The writers' ports.
    let (ov, oc, op) = (i(s, "open_m_pm_valid"), i(s, "open_m_pm_conn"), i(s, "open_m_pm_path"));
    let (cc, cpath, cv, ccut) =
        (i(s, "sched_m_commit_conn"), i(s, "commit_m_path"), i(s, "commit_m_valid"), i(s, "commit_m_cut_valid"));
    let (rv, rc, rp, rrto) =
        (i(s, "rto_m_pm_valid"), i(s, "rto_m_pm_conn"), i(s, "rto_m_pm_path"), i(s, "rto_m_pm_rto"));
    let (rwe, rto_val, rclr) = (i(s, "rto_m_pm_timed_out_we"), i(s, "rto_m_pm_timed_out"), i(s, "rto_m_pm_clr_set"));
    let (sv, sc, sp) = (i(s, "sack_m_pm_valid"), i(s, "sack_m_pm_conn"), i(s, "sack_m_pm_path"));
    let (srtt_v, sto_clr, spr_clr) =
        (i(s, "sack_m_pm_rtt_valid"), i(s, "sack_m_pm_timed_out_clr"), i(s, "sack_m_pm_probe_clr"));
    let (lv, lc, lm, lts) =
        (i(s, "sack_m_lp_valid"), i(s, "sack_m_lp_conn"), i(s, "sack_m_lp_mask"), i(s, "sack_m_lp_ts"));
    let (pv, pc, pp) = (i(s, "probe_m_pm_valid"), i(s, "probe_m_pm_conn"), i(s, "probe_m_pm_path"));
    let (kv, kc, km) = (i(s, "sched_m_clr_valid"), i(s, "sched_m_clr_conn"), i(s, "sched_m_clr_mask"));
    let open_val = |s: &mut S, f: &str, w: u32| -> Expr { s.i_fit(&format!("open_m_pm_{f}"), w) };

    // The shared read: the one reader this cycle.
    let mut readers: Vec<(Signal, Signal)> = ["nack", "rto", "sack", "stage", "timer", "probe"]
        .iter()
        .map(|u| (s.i(&format!("{u}_m_rd_valid")), s.i(&format!("{u}_m_rd_conn"))))
        .collect();
    readers.push((s.i("sched_m_trd_valid"), s.i("sched_m_trd_conn")));
    let rd_en = readers.iter().map(|(v, _)| v.expr()).reduce(|a, b| a.logic_or(b)).expect("readers");
    let rd_en = s.m.wire_from("pm_rd_en", 1, "a unit reads the mirror this cycle", rd_en);
    let rd_conn = readers.iter().rev().fold(lit(cb, 0), |acc, (v, c)| mux(v, c.expr(), acc));
    let rd_conn = s.m.wire_from("pm_rd_conn", cb, "the connection it reads", rd_conn);
    let path_rd: Vec<(Signal, Signal)> = ["nack", "rto", "sack"]
        .iter()
        .map(|u| (s.i(&format!("{u}_m_rd_valid")), s.i(&format!("{u}_m_rd_path"))))
        .collect();
    let rd_path = path_rd.iter().rev().fold(lit(pb, 0), |acc, (v, c)| mux(v, c.expr(), acc));
    let rd_path = s.m.wire_from("pm_rd_path", pb, "the path a one-path reader reads", rd_path);
    let ans_path = delay(s, "pm_ans_path", &rd_path, pb, l);
    let trd = s.i("sched_m_trd_valid");
    let sched_ans = delay(s, "pm_sched_ans", &trd, 1, l);

    // Per field: each path's memory, and its answer.
    let mut ans: HashMap<&str, Vec<Signal>> = HashMap::new();
    let open_psn = open_val(s, "psn", 24);
    for (f, w) in MIRROR {
        let open_v = match f {
            "sport" | "plane" | "srtt" | "rttvar" | "min_rtt" => open_val(s, f, w),
            "next_psn" | "cum_acked" => open_psn.clone(),
            _ => lit(w, 0),
        };
        let mut per_path = Vec::new();
        for k in 0..n {
            let on = |v: &Signal, path: &Signal| v.expr().logic_and(at(path, k));
            let open_w: FieldWrite = (on(&ov, &op), oc.expr(), open_v.clone());
            let unit = |s: &mut S, name: &str| s.i(name).expr();
            let mut writes: Vec<FieldWrite> = match f {
                "sport" => vec![(on(&rv, &rp).logic_and(&rrto), rc.expr(), unit(s, "rto_m_pm_sport"))],
                "gen" => vec![(on(&rv, &rp).logic_and(&rrto), rc.expr(), unit(s, "rto_m_pm_gen"))],
                "next_psn" => vec![(on(&ccut, &cpath), cc.expr(), unit(s, "commit_m_pm_next_psn"))],
                "cum_acked" => vec![(on(&sv, &sp), sc.expr(), unit(s, "sack_m_pm_cum_acked"))],
                "tx_seq" => vec![
                    (on(&cv, &cpath), cc.expr(), unit(s, "commit_m_pm_tx_seq")),
                    (on(&pv, &pp), pc.expr(), unit(s, "probe_m_pm_tx_seq")),
                ],
                "acked_seq" => vec![(on(&sv, &sp), sc.expr(), unit(s, "sack_m_pm_acked_seq"))],
                "probe_pending" => vec![
                    (on(&rv, &rp).logic_and(&rrto), rc.expr(), lit(1, 0)),
                    (on(&sv, &sp).logic_and(&spr_clr), sc.expr(), lit(1, 0)),
                    (on(&pv, &pp), pc.expr(), lit(1, 1)),
                ],
                "probe_ts" => vec![(on(&pv, &pp), pc.expr(), unit(s, "probe_m_pm_probe_ts"))],
                "probe_seq" => vec![(on(&pv, &pp), pc.expr(), unit(s, "probe_m_pm_probe_seq"))],
                "clr" => vec![
                    (on(&rv, &rp).logic_and(&rclr), rc.expr(), lit(1, 1)),
                    (kv.expr().logic_and(bit(&km, k)), kc.expr(), lit(1, 0)),
                ],
                "srtt" | "rttvar" | "min_rtt" => {
                    vec![(on(&sv, &sp).logic_and(&srtt_v), sc.expr(), unit(s, &format!("sack_m_pm_{f}")))]
                }
                "last_progress" => vec![
                    (on(&ccut, &cpath), cc.expr(), unit(s, "commit_m_pm_last_progress")),
                    (lv.expr().logic_and(bit(&lm, k)), lc.expr(), lts.expr()),
                ],
                "timed_out" => vec![
                    (on(&rv, &rp).logic_and(&rwe), rc.expr(), rto_val.expr()),
                    (on(&sv, &sp).logic_and(&sto_clr), sc.expr(), lit(1, 0)),
                ],
                _ => vec![],
            };
            writes.push(open_w);
            let mem = s.m.memory(
                &format!("pm_{f}_{k}"),
                w,
                p.conns,
                crate::MemStyle::Block,
                "the path mirror's field, per connection",
            );
            let (en, conn, data) = pick_write(&writes, cb, w);
            let wr = (en.clone(), conn.clone(), data.clone());
            s.m.mem_write(&mem, en, conn, data);
            let first = read_fwd(s, &mem, &format!("pm_{f}_{k}_rd"), &rd_en, &rd_conn, w, &wr);
            per_path.push(delay(s, &format!("pm_{f}_{k}_ans"), &first, w, l - 1));
        }
        ans.insert(f, per_path);
    }
    let vec_of = |f: &str, ans: &HashMap<&str, Vec<Signal>>| -> Expr {
        let mut v: Vec<Expr> = ans[f].iter().map(|x| x.expr()).collect();
        v.reverse();
        cat(&v)
    };
    let one = |f: &str, path: &Signal, ans: &HashMap<&str, Vec<Signal>>| -> Expr {
        let w = MIRROR.iter().find(|(x, _)| *x == f).expect("a field").1;
        ans[f].iter().enumerate().rev().fold(lit(w, 0), |acc, (k, x)| mux(at(path, k as u32), x.expr(), acc))
    };
    // One-path readers: the path they read.
    for (u, fields) in [
        ("nack", &["next_psn", "cum_acked"][..]),
        ("rto", &["plane", "next_psn", "cum_acked"][..]),
        (
            "sack",
            &[
                "next_psn",
                "cum_acked",
                "acked_seq",
                "sport",
                "plane",
                "probe_pending",
                "probe_ts",
                "probe_seq",
                "srtt",
                "rttvar",
                "min_rtt",
            ][..],
        ),
    ] {
        for f in fields {
            let e = one(f, &ans_path, &ans);
            let name = format!("{u}_s_pm_{f}");
            let w = s.width(&name);
            s.o(&name, e, w);
        }
    }
    // Every path at once.
    let lp = vec_of("last_progress", &ans);
    s.o("sack_s_lp", lp.clone(), 32 * n);
    s.o("stage_s_lp", lp, 32 * n);
    let low: Vec<Expr> = {
        let w = s.width("stage_s_pm_next_psn") / n;
        let mut v: Vec<Expr> = ans["next_psn"].iter().map(|x| x.slice(w - 1, 0)).collect();
        v.reverse();
        v
    };
    let sw = s.width("stage_s_pm_next_psn");
    s.o("stage_s_pm_next_psn", cat(&low), sw);
    for f in ["cum_acked", "srtt", "rttvar", "probe_pending"] {
        let w = s.width(&format!("stage_s_pm_{f}"));
        s.o(&format!("stage_s_pm_{f}"), vec_of(f, &ans), w);
    }
    s.o("timer_s_pm_probe_pending", vec_of("probe_pending", &ans), n);

    // The decision's copy: loaded with the scheduler's read's answer,
    // read as a level by the decision and the commit.
    let copy_fields = [
        "plane",
        "timed_out",
        "next_psn",
        "cum_acked",
        "probe_pending",
        "clr",
        "tx_seq",
        "last_progress",
        "srtt",
        "rttvar",
        "gen",
        "sport",
    ];
    let mut level: HashMap<&str, Vec<Signal>> = HashMap::new();
    for f in copy_fields {
        let w = MIRROR.iter().find(|(x, _)| *x == f).expect("a field").1;
        let mut per = Vec::new();
        for k in 0..n {
            let r = s.m.reg_no_reset(&format!("dc_pm_{f}_{k}"), w, "the deciding connection's mirror, as read");
            let fresh = ans[f][k as usize].expr();
            let v = s.m.wire_from(
                &format!("dc_pm_{f}_{k}_now"),
                w,
                "the copy as the decision sees it (the answer in its own cycle)",
                mux(&sched_ans, fresh, r.q.expr()),
            );
            // The decision's own credit clears land in the copy too.
            let next = if f == "clr" { mux(kv.expr().logic_and(bit(&km, k)), lit(1, 0), v.expr()) } else { v.expr() };
            s.m.next(set(&r.next, next));
            per.push(v);
        }
        level.insert(f, per);
    }
    for f in ["plane", "timed_out", "next_psn", "cum_acked", "probe_pending", "clr"] {
        let w = s.width(&format!("sched_s_pm_{f}"));
        s.o(&format!("sched_s_pm_{f}"), vec_of(f, &level), w);
    }
    // The commit's path: a retransmission's own, new data's chosen one.
    let (retx, rpath, phys) = (s.i("sched_m_commit_retx"), s.i("sched_m_commit_path"), s.i("sched_m_commit_phys"));
    let own = s.m.wire_from(
        "commit_own_path",
        pb,
        "the path the commit's packet belongs to",
        mux(&retx, rpath.expr(), phys.expr()),
    );
    for f in ["next_psn", "cum_acked", "tx_seq", "last_progress", "srtt", "rttvar", "gen"] {
        let e = one(f, &own, &level);
        let w = s.width(&format!("commit_s_pm_{f}"));
        s.o(&format!("commit_s_pm_{f}"), e, w);
    }
    for f in ["sport", "plane"] {
        let e = one(f, &phys, &level);
        let w = s.width(&format!("commit_s_phys_{f}"));
        s.o(&format!("commit_s_phys_{f}"), e, w);
    }
    ans
}

/// The context's fields in block RAM (the ready set's are flip-flops, the
/// tail timer's too, for the scanner), with the readers' widths.
const CONTEXT: [(&str, u32); 17] = [
    ("remote_id", 24),
    ("npaths", 0),
    ("cwnd", 32),
    ("acked_bytes", 24),
    ("ecn_ewma", 8),
    ("hold_until", 32),
    ("srtt", 32),
    ("min_rtt", 20),
    ("cap", 32),
    ("inflight", 33),
    ("rr_stream", 0),
    ("rack_valid", 1),
    ("rack_sent", 32),
    ("rack_rtt", 32),
    ("since_ackreq", 0),
    ("unreq_since", 32),
    ("dead", 0),
];

/// The reads of the tables the acknowledgement unit's handlers, the PROBE
/// send, the setup and the scheduler issue, one at a time: (enable,
/// connection) of this cycle's.
fn shared_read(s: &mut S, prefix: &str, cb: u32, with_open: bool) -> (Signal, Signal) {
    let mut readers: Vec<(Signal, Signal)> = ["nack", "rto", "sack", "stage", "timer", "probe"]
        .iter()
        .map(|u| (s.i(&format!("{u}_m_rd_valid")), s.i(&format!("{u}_m_rd_conn"))))
        .collect();
    if with_open {
        readers.push((s.i("open_m_rd_valid"), s.i("open_m_rd_conn")));
    }
    readers.push((s.i("sched_m_trd_valid"), s.i("sched_m_trd_conn")));
    let en = readers.iter().map(|(v, _)| v.expr()).reduce(|a, b| a.logic_or(b)).expect("readers");
    let en = s.m.wire_from(&format!("{prefix}_rd_en"), 1, "a unit reads the table this cycle", en);
    let conn = readers.iter().rev().fold(lit(cb, 0), |acc, (v, c)| mux(v, c.expr(), acc));
    let conn = s.m.wire_from(&format!("{prefix}_rd_conn"), cb, "the connection it reads", conn);
    (en, conn)
}

/// The connection context's block RAM fields: a memory per field,
/// `CONNS` deep, written by the units that change it (one a cycle) and
/// read through one port shared as the mirror's is; the decision and the
/// commit read a copy the scheduler's read fills (nothing else writes
/// these fields while a decision runs; a failure meanwhile zeroes the
/// bytes in flight, and the commit then sees the connection failed). The
/// addresses table's third read port fills the copy's addresses.
fn context(s: &mut S, p: &TxEngineParams, failing: &Failing, addr: &crate::Mem) {
    let (cb, l) = (p.conn_bits, p.read_latency);
    let width = |s: &S, f: &str, w: u32| -> u32 {
        match f {
            "npaths" => s.width("nack_s_rd_npaths"),
            "rr_stream" => s.width("sched_s_ctx_rr_stream"),
            "since_ackreq" => s.width("commit_s_ctx_since_ackreq"),
            "dead" => s.width("rto_s_rd_dead"),
            _ => w,
        }
    };
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let (sv, sc) = (s.i("sack_m_ctx_valid"), s.i("sack_m_ctx_conn"));
    let (cut, cc) = (s.i("commit_m_cut_valid"), s.i("sched_m_commit_conn"));
    let (fv, fc) = (failing.any.0.clone(), failing.any.1.clone());
    let (rdv, rdc, rdd) = (s.i("rto_m_ctx_dead_valid"), s.i("rto_m_ctx_dead_conn"), s.i("rto_m_ctx_dead"));
    let (odv, odc, odd) = (s.i("open_m_ctx_dead_valid"), s.i("open_m_ctx_dead_conn"), s.i("open_m_ctx_dead"));
    let (rd_en, rd_conn) = shared_read(s, "ctx", cb, true);
    let sched_ans = {
        let trd = s.i("sched_m_trd_valid");
        delay(s, "ctx_sched_ans", &trd, 1, l)
    };
    let mut ans: HashMap<&str, (Signal, u32)> = HashMap::new();
    for (f, w0) in CONTEXT {
        let w = width(s, f, w0);
        let cut_to = |s: &mut S, name: &str| -> Expr { s.i_fit(name, w) };
        let open_val = match f {
            "remote_id" | "npaths" | "cwnd" | "srtt" | "min_rtt" | "cap" => cut_to(s, &format!("open_m_ctx_{f}")),
            _ => lit(w, 0),
        };
        let mut writes: Vec<FieldWrite> = Vec::new();
        match f {
            "cwnd" | "acked_bytes" | "ecn_ewma" | "hold_until" | "srtt" | "min_rtt" | "cap" | "rack_valid"
            | "rack_sent" | "rack_rtt" => {
                let v = cut_to(s, &format!("sack_m_ctx_{f}"));
                writes.push((sv.expr(), sc.expr(), v));
            }
            "inflight" => {
                let (cv, sv2) = (cut_to(s, "commit_m_ctx_inflight"), cut_to(s, "sack_m_ctx_inflight"));
                writes.push((cut.expr(), cc.expr(), cv));
                writes.push((sv.expr(), sc.expr(), sv2));
                writes.push((fv.expr(), fc.expr(), lit(w, 0)));
            }
            "rr_stream" | "since_ackreq" | "unreq_since" => {
                let v = cut_to(s, &format!("commit_m_ctx_{f}"));
                writes.push((cut.expr(), cc.expr(), v));
            }
            "dead" => {
                writes.push((rdv.expr(), rdc.expr(), rdd.expr()));
                writes.push((odv.expr(), odc.expr(), odd.expr()));
            }
            _ => {}
        }
        if f != "dead" {
            writes.push((ov.expr(), oc.expr(), open_val));
        }
        writes.push(s.clear(w, cb));
        let mem = s.m.memory(&format!("ctx_{f}"), w, p.conns, crate::MemStyle::Block, "the connection context's field");
        let (en, conn, data) = pick_write(&writes, cb, w);
        let wr = (en.clone(), conn.clone(), data.clone());
        s.m.mem_write(&mem, en, conn, data);
        let first = read_fwd(s, &mem, &format!("ctx_{f}_rd"), &rd_en, &rd_conn, w, &wr);
        let a = delay(s, &format!("ctx_{f}_ans"), &first, w, l - 1);
        ans.insert(f, (a, w));
    }
    // The rate hint the setup and a SACK write (`m_ctx_rate_hint`) is not
    // kept: no unit reads it back (the cap it sets is kept).
    for (u, fields) in [
        ("nack", &["npaths"][..]),
        ("rto", &["npaths", "dead"][..]),
        (
            "sack",
            &[
                "npaths",
                "rack_valid",
                "rack_sent",
                "rack_rtt",
                "cwnd",
                "acked_bytes",
                "ecn_ewma",
                "hold_until",
                "srtt",
                "min_rtt",
                "inflight",
            ][..],
        ),
        ("stage", &["npaths", "rack_valid", "rack_sent", "rack_rtt"][..]),
        ("timer", &["npaths", "dead"][..]),
        ("open", &["dead"][..]),
        ("probe", &["remote_id"][..]),
    ] {
        for f in fields {
            let (a, w) = ans[f].clone();
            s.o(&format!("{u}_s_rd_{f}"), &a, w);
        }
    }
    // The decision's copy.
    let (trd, tconn) = (s.i("sched_m_trd_valid"), s.i("sched_m_trd_conn"));
    let (mac, ip) = address_read(s, p, addr, "dc_addr", trd.expr(), tconn.expr());
    let copy = |s: &mut S, name: &str, fresh: Expr, w: u32| -> Signal {
        let r = s.m.reg_no_reset(&format!("dc_ctx_{name}"), w, "the deciding connection's context, as read");
        let v = s.m.wire_from(
            &format!("dc_ctx_{name}_now"),
            w,
            "the copy as the decision sees it",
            mux(&sched_ans, fresh, r.q.expr()),
        );
        s.m.next(set(&r.next, v.expr()));
        v
    };
    let mut level: HashMap<&str, (Signal, u32)> = HashMap::new();
    for f in ["npaths", "inflight", "cap", "rr_stream", "remote_id", "since_ackreq", "unreq_since", "rack_rtt"] {
        let (a, w) = ans[f].clone();
        level.insert(f, (copy(s, f, a.expr(), w), w));
    }
    let mac = copy(s, "dst_mac", mac, 48);
    let ip = copy(s, "dst_ip", ip, 32);
    for f in ["npaths", "inflight", "cap", "rr_stream"] {
        let (v, w) = level[f].clone();
        s.o(&format!("sched_s_ctx_{f}"), &v, w);
    }
    for f in ["remote_id", "inflight", "cap", "since_ackreq", "unreq_since", "rack_rtt"] {
        let (v, w) = level[f].clone();
        s.o(&format!("commit_s_ctx_{f}"), &v, w);
    }
    s.o("commit_s_ctx_dst_mac", &mac, 48);
    s.o("commit_s_ctx_dst_ip", &ip, 32);
}

/// The tail timers: whether each connection's is armed, flip-flops (a bit
/// a connection), and its deadline, a block RAM word. The acknowledgement
/// unit's scanner compares one connection a cycle, at an address it moves
/// itself (on, or staying while a hit waits), as the timer stands after
/// the cycle's writes: the deadline is read a cycle ahead at both
/// addresses the scanner may be at next, and the writes of both cycles
/// are forwarded. The commit's level read comes from the decision's copy
/// (nothing else writes a tail timer while a decision runs), the timer
/// step's through the shared read.
fn tail_timers(s: &mut S, p: &TxEngineParams) {
    let (c, cb, l) = (p.conns, p.conn_bits, p.read_latency);
    let valid = s.m.reg("tail_valid", c, 0, "per connection: the tail timer is armed");
    let (cut, cc) = (s.i("commit_m_cut_valid"), s.i("sched_m_commit_conn"));
    let (cv, ca) = (s.i("commit_m_ctx_tail_valid"), s.i("commit_m_ctx_tail_at"));
    let (gv, gc, ga, gat) =
        (s.i("stage_m_tail_valid"), s.i("stage_m_tail_conn"), s.i("stage_m_tail_armed"), s.i("stage_m_tail_at"));
    let (tv, tc) = (s.i("timer_m_tail_valid"), s.i("timer_m_tail_conn"));
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let one = |conn: &Signal| lit(c, 1) << zext(conn.expr(), cb.max(1));
    let put_v = |q: Expr, en: Expr, conn: &Signal, v: Expr| -> Expr {
        mux(en, (q.clone() & one(conn).not()) | mux(v, one(conn), lit(c, 0)), q)
    };
    // In the model's order: the commit (the scheduler's turn), then the
    // acknowledgement unit's stage or timer step, then a setup.
    let v1 = put_v(valid.q.expr(), cut.expr(), &cc, cv.expr());
    let v2 = put_v(v1, gv.expr(), &gc, ga.expr());
    let v3 = put_v(v2, tv.expr(), &tc, lit(1, 0));
    let v4 = put_v(v3, ov.expr(), &oc, lit(1, 0));
    let vn = s.m.wire_from("tail_valid_after", c, "armed after this cycle's writes", v4);
    s.m.next(set(&valid.next, vn.expr()));

    // The deadline: one writer a cycle (the commit's cut, or a stage's
    // arm), never both.
    let mem = s.m.memory("tail_at", 32, c, crate::MemStyle::Block, "per connection: the tail timer's deadline");
    let arm = gv.expr().logic_and(&ga);
    let we = s.m.wire_from("tail_at_we", 1, "a deadline is written", cut.expr().logic_or(arm.clone()));
    let wc = s.m.wire_from("tail_at_wc", cb, "its connection", mux(&cut, cc.expr(), gc.expr()));
    let wd = s.m.wire_from("tail_at_wd", 32, "the deadline", mux(&cut, ca.expr(), gat.expr()));
    s.m.mem_write(&mem, &we, &wc, &wd);
    let scan = s.i("ack_m_tail_scan");
    let last = lit(cb, u64::from(c - 1));
    let scan_next = mux(scan.expr().eq(last), lit(cb, 0), scan.expr() + lit(cb, 1));
    let stay = s.m.mem_read(&mem, "tail_scan_stay", lit(1, 1), scan.expr());
    let step = s.m.mem_read(&mem, "tail_scan_step", lit(1, 1), scan_next);
    let scan_q = s.m.reg_no_reset("tail_scan_q", cb, "the scanner's connection last cycle");
    s.m.next(set(&scan_q.next, scan.expr()));
    let (we_q, wc_q, wd_q) = (
        s.m.reg("tail_at_we_q", 1, 0, "last cycle's deadline write"),
        s.m.reg_no_reset("tail_at_wc_q", cb, "its connection"),
        s.m.reg_no_reset("tail_at_wd_q", 32, "its deadline"),
    );
    s.m.next(set(&we_q.next, we.expr()));
    s.m.next(set(&wc_q.next, wc.expr()));
    s.m.next(set(&wd_q.next, wd.expr()));
    let read = mux(scan.expr().eq(scan_q.q.expr()), stay.expr(), step.expr());
    let base = mux(we_q.q.expr().logic_and(wc_q.q.expr().eq(scan.expr())), wd_q.q.expr(), read);
    let now = s.m.wire_from(
        "tail_scan_at",
        32,
        "the scanned connection's deadline after this cycle's writes",
        mux(we.expr().logic_and(wc.expr().eq(scan.expr())), wd.expr(), base),
    );
    let ts = s.i("ts_now");
    // Due only for a live connection (the model's `tail_due`).
    let live = s.live_after.clone().expect("the ready set is built first");
    let due = vn
        .expr()
        .bit_at(scan.expr())
        .logic_and(live.expr().bit_at(scan.expr()))
        .logic_and(super::ack::reached(ts.expr(), now.expr()));
    s.o("ack_s_tail_due", due, 1);

    // The shared read (the timer step's) and the decision's copy.
    let (rd_en, rd_conn) = shared_read(s, "tail", cb, true);
    let first = s.m.mem_read(&mem, "tail_at_rd", &rd_en, &rd_conn);
    let ans = delay(s, "tail_at_ans", &first, 32, l - 1);
    let trc = s.i("timer_m_rd_conn");
    let rv = s.m.wire_from("tail_rd_valid", 1, "the timer step's read", valid.q.expr().bit_at(trc.expr()));
    let rv = delay(s, "tail_rd_valid", &rv, 1, l);
    s.o("timer_s_rd_tail_valid", &rv, 1);
    s.o("timer_s_rd_tail_at", &ans, 32);
    let trd = s.i("sched_m_trd_valid");
    let sched_ans = delay(s, "tail_sched_ans", &trd, 1, l);
    let r = s.m.reg_no_reset("dc_tail_at", 32, "the deciding connection's tail deadline, as read");
    let v =
        s.m.wire_from("dc_tail_at_now", 32, "the copy as the commit sees it", mux(&sched_ans, ans.expr(), r.q.expr()));
    s.m.next(set(&r.next, v.expr()));
    s.o("commit_s_ctx_tail_at", &v, 32);
    s.o("commit_s_ctx_tail_valid", valid.q.expr().bit_at(cc.expr()), 1);
}

/// What the post forwards to its requests in flight: the commit's cut and
/// a setup's restart of the streams.
fn post_forwards(s: &mut S) {
    for (to, from) in [
        ("post_s_cut_valid", "commit_m_cut_valid"),
        ("post_s_cut_conn", "sched_m_commit_conn"),
        ("post_s_cut_stream", "sched_m_commit_stream"),
        ("post_s_cut_pend", "commit_m_sw_pend"),
        ("post_s_cut_pend_streams", "commit_m_ctx_pend_streams"),
        ("post_s_open_valid", "open_m_sw_valid"),
        ("post_s_open_conn", "open_m_sw_conn"),
    ] {
        let v = s.i(from);
        let w = s.width(to);
        s.o(to, &v, w);
    }
}

/// The streams' words' fields: (name, width; 0 for a work queue pointer).
const STREAM: [(&str, u32); 7] = [
    ("head", 0),
    ("pend", 0),
    ("tail", 0),
    ("next_msn", 24),
    ("next_rq_seq", 24),
    ("remote_completed", 24),
    ("pend_sent", 32),
];

/// A copy of one connection's words of a table kept current: loaded from
/// a read `L` cycles after it is issued, every write to its connection
/// applied as it happens from the read's cycle on (a field written
/// meanwhile keeps the write, not the answer). `writes[i]` are the
/// writes of `fields[i]`.
struct Tracked {
    /// Each field's value as of this cycle (before this cycle's writes).
    now: Vec<Signal>,
}

fn tracked(
    s: &mut S,
    name: &str,
    cb: u32,
    l: u32,
    read: (&Expr, &Expr),
    fields: &[(String, u32, Signal, Vec<FieldWrite>)],
) -> Tracked {
    let conn = s.m.reg_no_reset(&format!("{name}_conn"), cb, "the connection the copy is of");
    s.m.next(set(&conn.next, mux(read.0.clone(), read.1.clone(), conn.q.expr())));
    // Cycles until the read answers (0: none in flight).
    let wb = index_bits(l + 1);
    let wait = s.m.reg(&format!("{name}_wait"), wb, 0, "cycles until the copy's read answers");
    let wait_next = mux(
        read.0.clone(),
        lit(wb, u64::from(l)),
        mux(wait.q.expr().eq(lit(wb, 0)), lit(wb, 0), wait.q.expr() - lit(wb, 1)),
    );
    s.m.next(set(&wait.next, wait_next));
    let answer =
        s.m.wire_from(&format!("{name}_answer"), 1, "the copy's read answers this cycle", wait.q.expr().eq(lit(wb, 1)));
    let cur_conn = mux(read.0.clone(), read.1.clone(), conn.q.expr());
    let mut now = Vec::new();
    for (f, w, ans, writes) in fields {
        let w = *w;
        let r = s.m.reg_no_reset(&format!("{name}_{f}"), w, "the copy's field");
        let dirty = s.m.reg(&format!("{name}_{f}_dirty"), 1, 0, "written since the copy's read was issued");
        let v = s.m.wire_from(
            &format!("{name}_{f}_now"),
            w,
            "the field as of this cycle",
            mux(answer.expr().logic_and(dirty.q.expr().logic_not()), ans.expr(), r.q.expr()),
        );
        let hit: Vec<FieldWrite> = writes
            .iter()
            .map(|(e, c, d)| (e.clone().logic_and(c.clone().eq(cur_conn.clone())), c.clone(), d.clone()))
            .collect();
        let any = hit.iter().map(|(e, _, _)| e.clone()).reduce(|a, b| a.logic_or(b)).unwrap_or(lit(1, 0));
        let val = hit.iter().rev().fold(v.expr(), |acc, (e, _, d)| mux(e.clone(), d.clone(), acc));
        s.m.next(set(&r.next, val));
        // A new read starts clean but for this cycle's own writes (the
        // read sees the word before them).
        s.m.next(set(&dirty.next, mux(read.0.clone(), any.clone(), dirty.q.expr().logic_or(any).logic_or(&answer))));
        now.push(v);
    }
    Tracked { now }
}

/// The streams' words (connection x stream): a memory per field and
/// stream, written by the post (tail and counters), the commit (pend and
/// bytes cut), the walk (head; a failure's drain of pend), a SACK's last
/// stage (remote_completed) and a setup (every stream of the connection
/// restarting at its tail); read through the post's own port (the post
/// runs beside everything), the shared port (the setup's tails, a SACK
/// stage's remote_completed, the decision's copy), and the walk's port
/// (its connection's words, from the failure that starts it; a SACK's
/// walk takes the stage's read). The decision's and the walk's copies
/// are kept current with every write to their connection: the post
/// writes while a decision or a walk runs.
fn stream_words(s: &mut S, p: &TxEngineParams) -> Vec<Signal> {
    let (cb, l, ns) = (p.conn_bits, p.read_latency, p.streams);
    let qb = s.width("walk_s_sw_head") / ns;
    let sbits = s.width("sched_m_commit_stream");
    let at = |st: &Signal, k: u32| st.expr().eq(lit(sbits, u64::from(k)));
    // Writers.
    let (pv, pc, ps) = (s.i("post_m_wq_wr_valid"), s.i("post_m_wq_wr_conn"), s.i("post_m_wq_wr_stream"));
    let (cut, cc, cs) = (s.i("commit_m_cut_valid"), s.i("sched_m_commit_conn"), s.i("sched_m_commit_stream"));
    let (hv, dv, wc, ws) =
        (s.i("walk_m_sw_head_valid"), s.i("walk_m_sw_drain_valid"), s.i("walk_m_sw_conn"), s.i("walk_m_sw_stream"));
    let (rcv, rcc, rcs, rcm) =
        (s.i("stage_m_rc_valid"), s.i("stage_m_rc_conn"), s.i("stage_m_rc_stream"), s.i("stage_m_rc_msn"));
    let (ov, oc, ot) = (s.i("open_m_sw_valid"), s.i("open_m_sw_conn"), s.i("open_m_sw_tails"));
    let val = |s: &mut S, n: &str| s.i(n).expr();
    let mut writes: HashMap<(String, u32), Vec<FieldWrite>> = HashMap::new();
    for (f, w0) in STREAM {
        let w = if w0 == 0 { qb } else { w0 };
        for k in 0..ns {
            let on = |v: &Signal, st: &Signal| v.expr().logic_and(at(st, k));
            let tail_k = ot.slice(k * qb + qb - 1, k * qb);
            let mut v: Vec<FieldWrite> = match f {
                "head" => vec![(on(&hv, &ws), wc.expr(), val(s, "walk_m_sw_head"))],
                "pend" => vec![
                    (on(&cut, &cs), cc.expr(), val(s, "commit_m_sw_pend")),
                    (on(&dv, &ws), wc.expr(), val(s, "walk_m_sw_pend")),
                ],
                "tail" => vec![(on(&pv, &ps), pc.expr(), val(s, "post_m_sw_tail"))],
                "next_msn" => vec![(on(&pv, &ps), pc.expr(), val(s, "post_m_sw_next_msn"))],
                "next_rq_seq" => vec![(on(&pv, &ps), pc.expr(), val(s, "post_m_sw_next_rq_seq"))],
                "remote_completed" => vec![(on(&rcv, &rcs), rcc.expr(), rcm.expr())],
                "pend_sent" => vec![
                    (on(&cut, &cs), cc.expr(), val(s, "commit_m_sw_pend_sent")),
                    (on(&dv, &ws), wc.expr(), lit(w, 0)),
                ],
                _ => vec![],
            };
            let open_val = if matches!(f, "head" | "pend" | "tail") { tail_k } else { lit(w, 0) };
            v.push((ov.expr(), oc.expr(), open_val));
            v.push(s.clear(w, cb));
            writes.insert((f.to_string(), k), v);
        }
    }
    // Read ports: the post's, the shared one, the walk's.
    let (prv, prc, prs) = (s.i("post_m_rd_valid"), s.i("post_m_rd_conn"), s.i("post_m_rd_stream"));
    let (sh_en, sh_conn) = shared_read(s, "sw", cb, true);
    // The walk's read: a failure's connection as it starts the walk.
    let failing = (s.i("walk_s_fail_valid"), s.i("walk_s_fail_conn"));
    let (rfv, rfc) = (s.i("out_m_fail_valid"), s.i("out_m_fail_conn"));
    let wk_en =
        s.m.wire_from("sw_walk_rd", 1, "a failure starts a walk: its words are read", failing.0.expr().logic_or(&rfv));
    let wk_conn = s.m.wire_from("sw_walk_conn", cb, "its connection", mux(&failing.0, failing.1.expr(), rfc.expr()));
    let mut post_ans: HashMap<(String, u32), Signal> = HashMap::new();
    let mut sh_ans: HashMap<(String, u32), Signal> = HashMap::new();
    let mut wk_ans: HashMap<(String, u32), Signal> = HashMap::new();
    for (f, w0) in STREAM {
        let w = if w0 == 0 { qb } else { w0 };
        for k in 0..ns {
            let mem = s.m.memory(
                &format!("sw_{f}_{k}"),
                w,
                p.conns,
                crate::MemStyle::Block,
                "a stream word's field, per connection",
            );
            let (en, conn, data) = pick_write(&writes[&(f.to_string(), k)], cb, w);
            s.m.mem_write(&mem, en, conn, data);
            // Each port reads only the fields its readers take.
            if matches!(f, "head" | "pend" | "tail" | "next_msn" | "next_rq_seq") {
                let a = s.m.mem_read(&mem, &format!("sw_{f}_{k}_post"), &prv, &prc);
                post_ans.insert((f.to_string(), k), delay(s, &format!("sw_{f}_{k}_post_ans"), &a, w, l - 1));
            }
            if f != "next_rq_seq" {
                let a = s.m.mem_read(&mem, &format!("sw_{f}_{k}_sh"), &sh_en, &sh_conn);
                sh_ans.insert((f.to_string(), k), delay(s, &format!("sw_{f}_{k}_sh_ans"), &a, w, l - 1));
            }
            if matches!(f, "head" | "pend" | "tail") {
                let a = s.m.mem_read(&mem, &format!("sw_{f}_{k}_wk"), &wk_en, &wk_conn);
                wk_ans.insert((f.to_string(), k), delay(s, &format!("sw_{f}_{k}_wk_ans"), &a, w, l - 1));
            }
        }
    }
    let width_of =
        |f: &str| STREAM.iter().find(|(x, _)| *x == f).map(|&(_, w)| if w == 0 { qb } else { w }).expect("a field");
    let pick_stream = |ans: &HashMap<(String, u32), Signal>, f: &str, st: &Signal| -> Expr {
        (0..ns).rev().fold(lit(width_of(f), 0), |acc, k| mux(at(st, k), ans[&(f.to_string(), k)].expr(), acc))
    };
    let all_streams = |vals: &dyn Fn(u32) -> Expr| -> Expr {
        let v: Vec<Expr> = (0..ns).rev().map(vals).collect();
        cat(&v)
    };
    // The post's answer: its stream's.
    let ps_d = delay(s, "sw_post_stream", &prs, sbits, l);
    for f in ["head", "pend", "tail", "next_msn", "next_rq_seq"] {
        let e = pick_stream(&post_ans, f, &ps_d);
        s.o(&format!("post_s_rd_{f}"), e, width_of(f));
    }
    // The setup's tails, a stage's remote_completed.
    let tails = all_streams(&|k| sh_ans[&("tail".to_string(), k)].expr());
    s.o("open_s_rd_tails", tails, ns * qb);
    let gs = s.i("stage_m_rd_stream");
    let gs_d = delay(s, "sw_stage_stream", &gs, sbits, l);
    let rc = pick_stream(&sh_ans, "remote_completed", &gs_d);
    s.o("stage_s_rd_remote_completed", rc, 24);

    // The decision's copy: the scheduler's read.
    let (trd, tconn) = (s.i("sched_m_trd_valid"), s.i("sched_m_trd_conn"));
    let mk = |names: &[&str], ans: &HashMap<(String, u32), Signal>| -> Vec<(String, u32, Signal, Vec<FieldWrite>)> {
        let mut v = Vec::new();
        for f in names {
            for k in 0..ns {
                let key = (f.to_string(), k);
                v.push((format!("{f}_{k}"), width_of(f), ans[&key].clone(), writes[&key].clone()));
            }
        }
        v
    };
    let dnames = ["pend", "tail", "next_msn", "remote_completed", "pend_sent"];
    let dc = tracked(s, "dc_sw", cb, l, (&trd.expr(), &tconn.expr()), &mk(&dnames, &sh_ans));
    let dget = |f: &str, k: u32| -> Signal {
        let i = dnames.iter().position(|x| *x == f).expect("a field") * ns as usize + k as usize;
        dc.now[i].clone()
    };
    for f in ["pend", "tail", "next_msn", "remote_completed"] {
        let e = all_streams(&|k| dget(f, k).expr());
        let w = s.width(&format!("sched_s_sw_{f}"));
        s.o(&format!("sched_s_sw_{f}"), e, w);
    }
    let started = all_streams(&|k| dget("pend_sent", k).expr().ne(lit(32, 0)));
    s.o("sched_s_sw_started", started, ns);
    for f in ["pend", "tail", "pend_sent"] {
        let e = (0..ns).rev().fold(lit(width_of(f), 0), |acc, k| mux(at(&cs, k), dget(f, k).expr(), acc));
        s.o(&format!("commit_s_sw_{f}"), e, width_of(f));
    }

    // The walk's copy: a SACK stage's read, or a failure's own.
    let (gv, gc) = (s.i("stage_m_rd_valid"), s.i("stage_m_rd_conn"));
    let wk_read_en = gv.expr().logic_or(&wk_en);
    let wk_read_conn = mux(&wk_en, wk_conn.expr(), gc.expr());
    // Its answer: the walk port's after a failure's read, the shared
    // port's after the stage's.
    let src_wk = s.m.wire_from("sw_walk_src", 1, "the walk copy's read is the walk port's", wk_en.expr());
    let src_d = delay(s, "sw_walk_src", &src_wk, 1, l);
    let wnames = ["head", "pend", "tail"];
    let mut wfields = Vec::new();
    for f in wnames {
        for k in 0..ns {
            let key = (f.to_string(), k);
            let a = s.m.wire_from(
                &format!("sw_walk_{f}_{k}_ans"),
                qb,
                "the walk copy's answer",
                mux(&src_d, wk_ans[&key].expr(), sh_ans[&key].expr()),
            );
            wfields.push((format!("{f}_{k}"), qb, a, writes[&key].clone()));
        }
    }
    let wk = tracked(s, "wk_sw", cb, l, (&wk_read_en, &wk_read_conn), &wfields);
    for (i, f) in wnames.iter().enumerate() {
        let e = all_streams(&|k| wk.now[i * ns as usize + k as usize].expr());
        s.o(&format!("walk_s_sw_{f}"), e, ns * qb);
    }
    (0..ns).map(|k| dget("pend", k)).collect()
}

/// The deciding connection: the scheduler's telemetry read names it, and
/// the decision's levels are its.
fn decision_conn(s: &mut S, p: &TxEngineParams) -> Signal {
    let (v, c) = (s.i("sched_m_trd_valid"), s.i("sched_m_trd_conn"));
    let r = s.m.reg("dc_conn", p.conn_bits, 0, "the connection the scheduler decides for");
    s.m.next(set(&r.next, mux(&v, c.expr(), r.q.expr())));
    r.q
}

/// The retransmit queue's head the decision will see next cycle, whose
/// ring slot the decision's port reads now.
struct RetxHead {
    next_path: Signal,
    next_slot: Signal,
}

/// A retransmit queue push's ports: valid, connection, path, psn.
type Push = (Signal, Signal, Signal, Signal);

/// The retransmit queues, one per connection: a FIFO of (path, psn) in
/// block RAM (`PATHS x tx_ring_depth` entries a connection, its
/// read and write pointers in flip-flops) and each connection's head in
/// flip-flops, so that the decision sees its connection's head as a level
/// and the head's ring slot can be read as the decision starts. Pushed by
/// the handlers that queue a retransmission (one a cycle), popped by the
/// commit and by the scheduler's stale heads (the next head is read from
/// the FIFO at the pop and lands the cycle after: the scheduler waits `L`
/// cycles after a pop), emptied by a failure or a setup. A list threaded
/// through the ring's slots would need no FIFO memory (docs/architecture.md,
/// the store map); the head flip-flops are `CONNS x (path + psn)` bits.
fn retx_queue(s: &mut S, p: &TxEngineParams, dc_conn: &Signal) -> RetxHead {
    let (c, cb, pb) = (p.conns, p.conn_bits, s.width("sched_s_retx_path"));
    let depth = p.paths * p.ring_depth;
    let qb = index_bits(depth);
    let eb = pb + 24;
    // The pushes (one a cycle).
    let mut pushes: Vec<Push> = Vec::new();
    for u in ["rto", "nack", "sack", "stage", "timer"] {
        pushes.push((
            s.i(&format!("{u}_m_retx_valid")),
            s.i(&format!("{u}_m_retx_conn")),
            s.i(&format!("{u}_m_retx_path")),
            s.i(&format!("{u}_m_retx_psn")),
        ));
    }
    let push = pushes.iter().map(|(v, _, _, _)| v.expr()).reduce(|a, b| a.logic_or(b)).expect("pushers");
    let push = s.m.wire_from("rq_push", 1, "an entry is pushed", push);
    let pick = |w: u32, f: &dyn Fn(&Push) -> Expr| -> Expr {
        pushes.iter().rev().fold(lit(w, 0), |acc, x| mux(&x.0, f(x), acc))
    };
    let pc = s.m.wire_from("rq_push_conn", cb, "its connection", pick(cb, &|x| x.1.expr()));
    let pe = s.m.wire_from("rq_push_entry", eb, "its (path, psn)", pick(eb, &|x| cat(&[x.2.expr(), x.3.expr()])));
    // The pops: the commit's (the decided retransmission) and the
    // scheduler's stale heads.
    let (cp, cc) = (s.i("commit_m_pop_valid"), s.i("sched_m_commit_conn"));
    let (sp, sc) = (s.i("sched_m_pop_valid"), s.i("sched_m_pop_conn"));
    let pop = s.m.wire_from("rq_pop", 1, "a head is popped", cp.expr().logic_or(&sp));
    let popc = s.m.wire_from("rq_pop_conn", cb, "its connection", mux(&cp, cc.expr(), sc.expr()));
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let failing = (s.i("walk_s_fail_valid"), s.i("walk_s_fail_conn"));
    let (rfv, rfc) = (s.i("out_m_fail_valid"), s.i("out_m_fail_conn"));

    let rd = s.m.reg("rq_rd", c * qb, 0, "per connection: the FIFO's head index");
    let cnt = s.m.reg("rq_count", c * (qb + 1), 0, "per connection: entries queued");
    let heads = s.m.reg_no_reset("rq_head", c * eb, "per connection: the head entry (valid with a count)");
    let at = |conn: &Signal, w: u32| {
        let ib = index_bits(c * w);
        zext(conn.expr(), ib) * lit(ib, u64::from(w))
    };
    let get = |v: &Signal, conn: &Signal, w: u32| v.expr().part(at(conn, w), w);
    let put = |q: Expr, en: Expr, conn: &Signal, w: u32, val: Expr| -> Expr {
        let mask = lit(w, if w >= 64 { u64::MAX } else { (1u64 << w) - 1 });
        mux(en, (q.clone() & (zext(mask, c * w) << at(conn, w)).not()) | (zext(val, c * w) << at(conn, w)), q)
    };
    let mem =
        s.m.memory("rq", eb, c * (1 << qb), crate::MemStyle::Block, "per connection: the retransmit FIFO's entries");
    // Push: at (head + count) of its connection; an empty queue's entry is
    // its head at once.
    let push_cnt = s.m.wire_from("rq_push_count", qb + 1, "the pushed queue's count", get(&cnt.q, &pc, qb + 1));
    let push_at = get(&rd.q, &pc, qb) + push_cnt.slice(qb - 1, 0);
    s.m.mem_write(&mem, &push, cat(&[pc.expr(), push_at.clone()]), &pe);
    // Pop: the head's place is taken by the second entry, kept in
    // flip-flops beside the head so that the new head is a level the cycle
    // after the pop (the scheduler decides again `L` cycles after popping
    // a stale head, and its ring slot is read as the head pops). The entry
    // after it, the new second, is read from the FIFO now (seeing a push of
    // this cycle to the same word) and lands next cycle.
    let pop_rd = get(&rd.q, &popc, qb) + lit(qb, 1);
    let third = s.m.wire_from("rq_third_at", qb, "the popped queue's third entry", pop_rd.clone() + lit(qb, 1));
    let push_word = cat(&[pc.expr(), push_at.clone()]);
    let third_at = s.m.wire_from("rq_third_word", cb + qb, "its word", cat(&[popc.expr(), third.expr()]));
    let landed = read_fwd(s, &mem, "rq_next_second", &pop, &third_at, eb, &(push.expr(), push_word.clone(), pe.expr()));
    let pop_q = s.m.reg("rq_pop_q", 1, 0, "a pop last cycle: its new second lands");
    let popc_q = s.m.reg_no_reset("rq_pop_conn_q", cb, "its connection");
    s.m.next(set(&pop_q.next, pop.expr()));
    s.m.next(set(&popc_q.next, popc.expr()));
    let secs =
        s.m.reg_no_reset("rq_second", c * eb, "per connection: the entry after the head (valid with a count of 2)");
    let sec_now = s.m.wire_from(
        "rq_second_now",
        c * eb,
        "the seconds with last cycle's pop's landed in",
        put(secs.q.expr(), pop_q.q.expr(), &popc_q.q, eb, landed.expr()),
    );
    // Counts and indices.
    let cnt1 = put(cnt.q.expr(), push.expr(), &pc, qb + 1, push_cnt.expr() + lit(qb + 1, 1));
    let cnt2 = {
        let q = s.m.wire_from("rq_count_pushed", c * (qb + 1), "counts after the push", cnt1);
        let now = get(&q, &popc, qb + 1);
        put(q.expr(), pop.expr(), &popc, qb + 1, now - lit(qb + 1, 1))
    };
    let cnt3 = put(cnt2, failing.0.expr(), &failing.1, qb + 1, lit(qb + 1, 0));
    let cnt4 = put(cnt3, rfv.expr(), &rfc, qb + 1, lit(qb + 1, 0));
    let cnt5 = put(cnt4, ov.expr(), &oc, qb + 1, lit(qb + 1, 0));
    let after = s.m.wire_from("rq_count_after", c * (qb + 1), "counts after this cycle", cnt5);
    s.m.next(set(&cnt.next, after.expr()));
    s.m.next(set(&rd.next, put(rd.q.expr(), pop.expr(), &popc, qb, pop_rd)));
    // The pushed entry's place after this cycle's pop: head (0), second
    // (1) or the FIFO alone.
    let popped_too = pop.expr().logic_and(popc.expr().eq(pc.expr()));
    let place = s.m.wire_from(
        "rq_push_place",
        qb + 1,
        "the pushed entry's index after the pop",
        push_cnt.expr() - zext(popped_too, qb + 1),
    );
    let h1 = put(heads.q.expr(), pop.expr(), &popc, eb, get(&sec_now, &popc, eb));
    let h2 = put(h1, push.expr().logic_and(place.expr().eq(lit(qb + 1, 0))), &pc, eb, pe.expr());
    let heads_after = s.m.wire_from("rq_head_after", c * eb, "the heads after this cycle", h2);
    s.m.next(set(&heads.next, heads_after.expr()));
    let s2 = put(sec_now.expr(), push.expr().logic_and(place.expr().eq(lit(qb + 1, 1))), &pc, eb, pe.expr());
    s.m.next(set(&secs.next, s2));

    // The decision's levels.
    let head = s.m.wire_from("rq_dc_head", eb, "the deciding connection's head entry", get(&heads.q, dc_conn, eb));
    let valid = s.m.wire_from("rq_dc_valid", 1, "it has a head", get(&cnt.q, dc_conn, qb + 1).ne(lit(qb + 1, 0)));
    s.o("sched_s_retx_valid", &valid, 1);

    // Whether each connection has one, for the ready set: the counts'
    // changes touch at most a few connections a cycle, so the bit vector
    // is kept beside them.
    let ne = s.m.reg("rq_nonempty", c, 0, "per connection: its retransmit queue has an entry");
    let one = |conn: &Signal| lit(c, 1) << zext(conn.expr(), cb.max(1));
    let mut ne_next = ne.q.expr();
    for (k, (en, conn)) in [
        (push.expr(), pc.clone()),
        (pop.expr(), popc.clone()),
        (failing.0.expr(), failing.1.clone()),
        (rfv.expr(), rfc.clone()),
        (ov.expr(), oc.clone()),
    ]
    .into_iter()
    .enumerate()
    {
        let b = s.m.wire_from(
            &format!("rq_ne_{k}"),
            1,
            "the touched connection has entries",
            get(&after, &conn, qb + 1).ne(lit(qb + 1, 0)),
        );
        ne_next = mux(en, (ne_next.clone() & one(&conn).not()) | mux(&b, one(&conn), lit(c, 0)), ne_next);
    }
    s.m.next(set(&ne.next, ne_next));
    s.retx_nonempty = Some(ne.q.clone());
    let path = s.m.wire_from("rq_dc_path", pb, "the head's path", head.slice(eb - 1, 24));
    let psn = s.m.wire_from("rq_dc_psn", 24, "the head's psn", head.slice(23, 0));
    s.o("sched_s_retx_path", &path, pb);
    s.o("sched_s_retx_psn", &psn, 24);
    // Its ring slot is read a cycle ahead: at the head it will be.
    let rb = index_bits(p.ring_depth);
    let ib = index_bits(c * eb);
    let next_path = s.m.wire_from(
        "rq_dc_next_path",
        pb,
        "the deciding connection's head's path next cycle",
        heads_after.expr().part(at(dc_conn, eb) + lit(ib, 24), pb),
    );
    let next_psn =
        s.m.wire_from("rq_dc_next_slot", rb, "and its psn's ring slot", heads_after.expr().part(at(dc_conn, eb), rb));
    RetxHead { next_path, next_slot: next_psn }
}

/// The retransmit rings (connection x path x `tx_ring_depth` slots), a
/// memory per field at `{conn, path, psn mod depth}`; every field's
/// writers, one a cycle. The handlers read through one shared port `L`
/// cycles; the decision reads the head's slot through a port of its own
/// every cycle (the commit of a retransmission takes the slot's request
/// fields, the scheduler its `queued` bit). A failure empties the
/// connection's slots one a cycle while `tx_ack` holds for
/// `PATHS x tx_ring_depth` cycles; a setup its path's (`tx_open`
/// `m_ring_clr_*`); the sweep every slot.
fn ring(s: &mut S, p: &TxEngineParams, failing: &Failing, dc_conn: &Signal, head: &RetxHead) -> (Signal, Signal) {
    let (cb, l) = (p.conn_bits, p.read_latency);
    let pb = s.width("rto_m_ring_rd_path");
    let rb = index_bits(p.ring_depth);
    let ab = cb + pb + rb;
    let addr = |conn: Expr, path: Expr, psn: Expr| -> Expr { cat(&[conn, path, psn]) };
    // A slot is a psn's low bits; the rest names the packet, which the
    // slot's owner checks, not the ring.
    let low = |s: &mut S, name: &str| -> Expr {
        let x = s.i(name);
        s.m.wire_from(
            &format!("{}_{name}_high", crate::check::UNUSED_SINK),
            24 - rb,
            "above the slot index",
            x.slice(23, rb),
        );
        x.slice(rb - 1, 0)
    };
    let ts = s.i("ts_now");
    // Writers' addresses.
    let (cv, cc, cpath) = (s.i("commit_m_valid"), s.i("sched_m_commit_conn"), s.i("commit_m_path"));
    let cretx = s.i("sched_m_commit_retx");
    let c_at = addr(cc.expr(), cpath.expr(), low(s, "commit_m_ring_psn"));
    let (nv, nc, np, nrnr) = (
        s.i("nack_m_ring_wr_valid"),
        s.i("nack_m_ring_wr_conn"),
        s.i("nack_m_ring_wr_path"),
        s.i("nack_m_ring_wr_rnr"),
    );
    let n_at = addr(nc.expr(), np.expr(), low(s, "nack_m_ring_wr_psn"));
    let (tv, tc, tp) = (s.i("timer_m_ring_wr_valid"), s.i("timer_m_ring_wr_conn"), s.i("timer_m_ring_wr_path"));
    let t_at = addr(tc.expr(), tp.expr(), low(s, "timer_m_ring_wr_psn"));
    let (rv, rc, rp, rpsn) =
        (s.i("rto_m_retx_valid"), s.i("rto_m_retx_conn"), s.i("rto_m_retx_path"), s.i("rto_m_retx_psn"));
    let r_at = addr(rc.expr(), rp.expr(), rpsn.slice(rb - 1, 0));
    // A SACK's and a stage's slots are of the connection (and, for a SACK,
    // the path) their step read.
    let latch = |s: &mut S, name: &str, en: &str, v: &str, w: u32| -> Signal {
        let (e, x) = (s.i(en), s.i(v));
        let r = s.m.reg_no_reset(name, w, "the step's, as its read named it");
        s.m.next(set(&r.next, mux(&e, x.expr(), r.q.expr())));
        r.q
    };
    let sconn = latch(s, "ring_sack_conn", "sack_m_rd_valid", "sack_m_rd_conn", cb);
    let spath = latch(s, "ring_sack_path", "sack_m_rd_valid", "sack_m_rd_path", pb);
    let gconn = latch(s, "ring_stage_conn", "stage_m_rd_valid", "stage_m_rd_conn", cb);
    let sclr = s.i("sack_m_ring_clr_valid");
    let (slost, slost_ch) = (s.i("sack_m_ring_lost_valid"), s.i("sack_m_ring_lost_charge"));
    let (glost, glost_path, glost_ch) =
        (s.i("stage_m_ring_lost_valid"), s.i("stage_m_ring_lost_path"), s.i("stage_m_ring_lost_charge"));
    let sclr_at = addr(sconn.expr(), spath.expr(), low(s, "sack_m_ring_clr_psn"));
    let slost_at = addr(sconn.expr(), spath.expr(), low(s, "sack_m_ring_lost_psn"));
    let glost_at = addr(gconn.expr(), glost_path.expr(), low(s, "stage_m_ring_lost_psn"));
    let (ov, oc, op, os) = (
        s.i("open_m_ring_clr_valid"),
        s.i("open_m_ring_clr_conn"),
        s.i("open_m_ring_clr_path"),
        s.i("open_m_ring_clr_slot"),
    );
    let o_at = cat(&[oc.expr(), op.expr(), os.slice(rb - 1, 0)]);
    // A failure's clear: a slot a cycle from the failing cycle on.
    let fb = pb + rb;
    let fclr = s.m.reg("ring_fclr", 1, 0, "a failure's ring clear runs");
    let fcnt = s.m.reg("ring_fclr_at", fb, 0, "the next slot it clears");
    let fconn = s.m.reg_no_reset("ring_fclr_conn", cb, "the failed connection");
    let (fv, fc) = (failing.any.0.clone(), failing.any.1.clone());
    let last = fcnt.q.expr().eq(lit(fb, (1u64 << fb) - 1));
    s.m.next(set(&fclr.next, fv.expr().logic_or(fclr.q.expr().logic_and(last.logic_not()))));
    s.m.next(set(&fcnt.next, mux(&fv, lit(fb, 0), mux(&fclr.q, fcnt.q.expr() + lit(fb, 1), fcnt.q.expr()))));
    s.m.next(set(&fconn.next, mux(&fv, fc.expr(), fconn.q.expr())));
    let f_at = cat(&[fconn.q.expr(), fcnt.q.expr()]);
    let ts16 = ts.slice(15, 0);
    let newdata = cretx.expr().logic_not();
    let v = |s: &mut S, n: &str| s.i(n).expr();
    let fields: Vec<(&str, u32, Vec<FieldWrite>)> = vec![
        (
            "valid",
            1,
            vec![
                (cv.expr(), c_at.clone(), lit(1, 1)),
                (sclr.expr(), sclr_at.clone(), lit(1, 0)),
                (ov.expr(), o_at.clone(), lit(1, 0)),
                (fclr.q.expr(), f_at.clone(), lit(1, 0)),
            ],
        ),
        (
            "queued",
            1,
            vec![
                (cv.expr(), c_at.clone(), lit(1, 0)),
                (nv.expr(), n_at.clone(), nrnr.expr().logic_not()),
                (tv.expr(), t_at.clone(), lit(1, 1)),
                (rv.expr(), r_at.clone(), lit(1, 1)),
                (slost.expr(), slost_at.clone(), lit(1, 1)),
                (glost.expr(), glost_at.clone(), lit(1, 1)),
            ],
        ),
        (
            "charge",
            1,
            vec![
                (cv.expr(), c_at.clone(), lit(1, 0)),
                (nv.expr().logic_and(nrnr.expr().logic_not()), n_at.clone(), lit(1, 1)),
                (rv.expr(), r_at.clone(), lit(1, 0)),
                (slost.expr(), slost_at.clone(), slost_ch.expr()),
                (glost.expr(), glost_at.clone(), glost_ch.expr()),
            ],
        ),
        (
            "rnr_wait",
            1,
            vec![
                (cv.expr(), c_at.clone(), lit(1, 0)),
                (nv.expr().logic_and(&nrnr), n_at.clone(), lit(1, 1)),
                (tv.expr(), t_at.clone(), lit(1, 0)),
                (rv.expr(), r_at.clone(), lit(1, 0)),
            ],
        ),
        (
            "rnr_resend",
            1,
            vec![(cv.expr(), c_at.clone(), lit(1, 0)), (nv.expr().logic_and(&nrnr), n_at.clone(), lit(1, 1))],
        ),
        (
            "rnr_count",
            s.width("nack_s_ring_rnr_count"),
            vec![
                (cv.expr().logic_and(newdata.clone()), c_at.clone(), lit(s.width("nack_s_ring_rnr_count"), 0)),
                (nv.expr().logic_and(&nrnr), n_at.clone(), v(s, "nack_m_ring_wr_rnr_count")),
            ],
        ),
        (
            "rnr_tag",
            p.rnr_tag_bits,
            vec![
                (cv.expr().logic_and(newdata), c_at.clone(), lit(p.rnr_tag_bits, 0)),
                (nv.expr().logic_and(&nrnr), n_at.clone(), v(s, "nack_m_ring_wr_rnr_tag")),
            ],
        ),
        ("stream", s.width("commit_m_ring_stream"), vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_stream"))]),
        ("wq", s.width("commit_m_ring_wq"), vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_wq"))]),
        ("offset", 32, vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_offset"))]),
        ("len", s.width("commit_m_ring_len"), vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_len"))]),
        ("tx_seq", 32, vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_tx_seq"))]),
        (
            "retx_count",
            s.width("commit_m_ring_retx_count"),
            vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_retx_count"))],
        ),
        ("resent", 1, vec![(cv.expr(), c_at.clone(), v(s, "commit_m_ring_resent"))]),
        ("phys", pb, vec![(cv.expr(), c_at.clone(), v(s, "sched_m_commit_phys"))]),
        ("sent", 32, vec![(cv.expr(), c_at.clone(), ts.expr())]),
        ("tx_ts", 16, vec![(cv.expr(), c_at.clone(), ts16)]),
    ];
    // Reads: the handlers' (one a cycle) and the decision's head slot.
    let mut readers: Vec<(Signal, Expr)> = Vec::new();
    for u in ["rto", "sack", "stage", "timer"] {
        let (e, c, pa) = (
            s.i(&format!("{u}_m_ring_rd_valid")),
            s.i(&format!("{u}_m_ring_rd_conn")),
            s.i(&format!("{u}_m_ring_rd_path")),
        );
        let ps = low(s, &format!("{u}_m_ring_rd_psn"));
        readers.push((e, addr(c.expr(), pa.expr(), ps)));
    }
    let (ne, nconn, npath) = (s.i("nack_m_rd_valid"), s.i("nack_m_rd_conn"), s.i("nack_m_rd_path"));
    let npsn2 = low(s, "nack_m_rd_psn");
    readers.push((ne, addr(nconn.expr(), npath.expr(), npsn2)));
    let rd_en = readers.iter().map(|(e, _)| e.expr()).reduce(|a, b| a.logic_or(b)).expect("readers");
    let rd_en = s.m.wire_from("ring_rd_en", 1, "a handler reads a slot", rd_en);
    let rd_at = readers.iter().rev().fold(lit(ab, 0), |acc, (e, a)| mux(e, a.clone(), acc));
    let rd_at = s.m.wire_from("ring_rd_at", ab, "the slot it reads", rd_at);
    let dc_at = s.m.wire_from(
        "ring_dc_at",
        ab,
        "the deciding connection's head slot",
        addr(dc_conn.expr(), head.next_path.expr(), head.next_slot.expr()),
    );
    let one = s.m.wire_from("ring_dc_en", 1, "the decision's port reads every cycle", lit(1, 1));
    let mut ans: HashMap<&str, (Option<Signal>, Option<Signal>, u32)> = HashMap::new();
    for (f, w, mut writes) in fields {
        writes.push(s.clear(w, ab));
        let mem =
            s.m.memory(&format!("ring_{f}"), w, 1u32 << ab, crate::MemStyle::Block, "a retransmit ring slot's field");
        let (en, at, data) = pick_write(&writes, ab, w);
        let wr = (en.clone(), at.clone(), data.clone());
        s.m.mem_write(&mem, en, at, data);
        // Each port reads only the fields its readers take.
        let a = if matches!(f, "offset" | "retx_count" | "charge") {
            None
        } else {
            let a = read_fwd(s, &mem, &format!("ring_{f}_rd"), &rd_en, &rd_at, w, &wr);
            Some(delay(s, &format!("ring_{f}_ans"), &a, w, l - 1))
        };
        let d = if matches!(
            f,
            "valid" | "stream" | "wq" | "offset" | "len" | "retx_count" | "rnr_resend" | "charge" | "resent" | "queued"
        ) {
            Some(read_fwd(s, &mem, &format!("ring_{f}_dc"), &one, &dc_at, w, &wr))
        } else {
            None
        };
        ans.insert(f, (a, d, w));
    }
    for (u, fs) in [
        ("rto", &["valid", "queued"][..]),
        ("nack", &["valid", "stream", "wq", "rnr_count", "rnr_resend", "rnr_wait", "queued"][..]),
        (
            "sack",
            &[
                "valid",
                "stream",
                "wq",
                "len",
                "tx_ts",
                "sent",
                "tx_seq",
                "phys",
                "rnr_count",
                "rnr_resend",
                "rnr_wait",
                "resent",
                "queued",
            ][..],
        ),
        ("stage", &["valid", "queued", "rnr_wait", "resent", "sent", "phys"][..]),
        ("timer", &["valid", "rnr_wait", "rnr_tag", "queued"][..]),
    ] {
        for f in fs {
            let (a, _, w) = ans[f].clone();
            s.o(&format!("{u}_s_ring_{f}"), a.expect("read by the handlers"), w);
        }
    }
    for f in ["stream", "wq", "offset", "len", "retx_count", "rnr_resend", "charge", "resent"] {
        let (_, d, w) = ans[f].clone();
        let d = d.map(|x| x.expr());
        s.o(&format!("commit_s_ring_{f}"), d.expect("read by the decision"), w);
    }
    // An emptied slot (acknowledged meanwhile) is no longer queued: the
    // model's slot is gone, its bits with it.
    let (_, q, _) = ans["queued"].clone();
    let (_, v, _) = ans["valid"].clone();
    s.o("sched_s_retx_queued", q.expect("read by the decision").expr().logic_and(v.expect("read by the decision")), 1);
    (ans["stream"].1.clone().expect("read"), ans["wq"].1.clone().expect("read"))
}

/// The work queue entries' fields, as the post writes them.
const WQ: [&str; 9] = ["op", "wr_id", "laddr", "len", "raddr", "rkey", "imm", "msn", "rq_seq"];

/// The work queues (connection x stream x `tx_wq_depth`): per stream a
/// memory per request field at `{conn, slot}` written by the post, and the
/// slot's two packet counts (issued, the commit's at the stream's pend;
/// acknowledged, a SACK's increment, read-modify-write with the last
/// write forwarded, and the walk's). The commit reads the request at each
/// stream's pend of the deciding connection (every cycle, from the
/// decision's copy of the words) and at the head retransmission's slot
/// (from the ring's read), a cycle later, as levels; the walk through its
/// read port, `L` cycles.
fn work_queues(s: &mut S, p: &TxEngineParams, dc_conn: &Signal, dc_pend: &[Signal], slot: &(Signal, Signal)) {
    let (cb, l, ns) = (p.conn_bits, p.read_latency, p.streams);
    let wb = index_bits(p.wq_depth);
    let ab = cb + wb;
    let sbits = s.width("sched_m_commit_stream");
    let at_s = |st: &Signal, k: u32| st.expr().eq(lit(sbits, u64::from(k)));
    let cntb = s.width("walk_s_wq_rd_acked");
    // Writers.
    let (pv, pc, ps, pslot) =
        (s.i("post_m_wq_wr_valid"), s.i("post_m_wq_wr_conn"), s.i("post_m_wq_wr_stream"), s.i("post_m_wq_wr_slot"));
    let (cut, cc, cs) = (s.i("commit_m_cut_valid"), s.i("sched_m_commit_conn"), s.i("sched_m_commit_stream"));
    let issued_w = s.i("commit_m_wq_issued");
    let (iv, is, iq) = (s.i("sack_m_wq_inc_valid"), s.i("sack_m_wq_inc_stream"), s.i("sack_m_wq_inc_wq"));
    let sconn = s.m.reg_no_reset("wq_sack_conn", cb, "the SACK's connection, as its read named it");
    let (srv, src) = (s.i("sack_m_rd_valid"), s.i("sack_m_rd_conn"));
    s.m.next(set(&sconn.next, mux(&srv, src.expr(), sconn.q.expr())));
    let (av, ac, ast, aslot, adata) = (
        s.i("walk_m_acked_valid"),
        s.i("walk_m_acked_conn"),
        s.i("walk_m_acked_stream"),
        s.i("walk_m_acked_slot"),
        s.i("walk_m_acked_data"),
    );
    // Reads.
    let (wrv, wrc, wrs, wrslot) =
        (s.i("walk_m_wq_rd_valid"), s.i("walk_m_wq_rd_conn"), s.i("walk_m_wq_rd_stream"), s.i("walk_m_wq_rd_slot"));
    let walk_at = cat(&[wrc.expr(), wrslot.expr()]);
    let slot_wq =
        s.m.wire_from("wq_retx_slot", wb, "the head retransmission's work queue slot", slot.1.slice(wb - 1, 0));
    let _ = s.m.wire_from(
        &format!("{}_wq_retx_slot_high", crate::check::UNUSED_SINK),
        s.width("commit_s_ring_wq") - wb,
        "the pointer's wrap bit",
        slot.1.slice(s.width("commit_s_ring_wq") - 1, wb),
    );
    let retx_at = cat(&[dc_conn.expr(), slot_wq.expr()]);
    let walk_st = delay(s, "wq_walk_stream", &wrs, sbits, l);
    let retx = s.i("sched_m_commit_retx");
    let mut walk_vals: HashMap<&str, Vec<Signal>> = HashMap::new();
    let mut pend_vals: HashMap<&str, Vec<Signal>> = HashMap::new();
    let mut retx_vals: HashMap<&str, Vec<Signal>> = HashMap::new();
    // The acked count's increment: read now, written next cycle.
    let inc_q = s.m.reg("wq_inc_q", 1, 0, "a SACK's increment read last cycle");
    let inc_at = cat(&[sconn.q.expr(), iq.slice(wb - 1, 0)]);
    let inc_at_q = s.m.reg_no_reset("wq_inc_at_q", ab, "its slot");
    let inc_st_q = s.m.reg_no_reset("wq_inc_stream_q", sbits, "its stream");
    s.m.next(set(&inc_q.next, iv.expr()));
    s.m.next(set(&inc_at_q.next, inc_at.clone()));
    s.m.next(set(&inc_st_q.next, is.expr()));
    let _ = s.m.wire_from(
        &format!("{}_wq_inc_wq_high", crate::check::UNUSED_SINK),
        s.width("sack_m_wq_inc_wq") - wb,
        "the pointer's wrap bit",
        iq.slice(s.width("sack_m_wq_inc_wq") - 1, wb),
    );
    for k in 0..ns {
        let pend_k = s.m.wire_from(
            &format!("wq_pend_{k}"),
            wb,
            "the deciding connection's stream's pend slot",
            dc_pend[k as usize].slice(wb - 1, 0),
        );
        let pend_at = cat(&[dc_conn.expr(), pend_k.expr()]);
        for f in WQ {
            let w = s.width(&format!("post_m_wq_wr_{f}"));
            let mem =
                s.m.memory(&format!("wq_{f}_{k}"), w, 1u32 << ab, crate::MemStyle::Block, "a work request's field");
            let en = pv.expr().logic_and(at_s(&ps, k));
            let data = s.i(&format!("post_m_wq_wr_{f}"));
            s.m.mem_write(&mem, en, cat(&[pc.expr(), pslot.expr()]), &data);
            if matches!(f, "wr_id" | "op" | "len" | "imm") {
                let a = s.m.mem_read(&mem, &format!("wq_{f}_{k}_walk"), &wrv, &walk_at);
                let a = delay(s, &format!("wq_{f}_{k}_walk_ans"), &a, w, l - 1);
                walk_vals.entry(f).or_default().push(a);
            }
            if f != "wr_id" {
                let a = s.m.mem_read(&mem, &format!("wq_{f}_{k}_pend"), lit(1, 1), &pend_at);
                pend_vals.entry(f).or_default().push(a);
                let a = s.m.mem_read(&mem, &format!("wq_{f}_{k}_retx"), lit(1, 1), &retx_at);
                retx_vals.entry(f).or_default().push(a);
            }
        }
        // Issued: the commit's cut of new data, at the stream's pend.
        let iw = 32;
        let mem = s.m.memory(
            &format!("wq_issued_{k}"),
            iw,
            1u32 << ab,
            crate::MemStyle::Block,
            "a slot's packets cut (free-running)",
        );
        let cut_at = cat(&[cc.expr(), pend_k.expr()]);
        let writes = vec![(cut.expr().logic_and(at_s(&cs, k)), cut_at, issued_w.expr()), s.clear(iw, ab)];
        let (en, a_at, data) = pick_write(&writes, ab, iw);
        s.m.mem_write(&mem, en, a_at, data);
        let a = s.m.mem_read(&mem, &format!("wq_issued_{k}_walk"), &wrv, &walk_at);
        let a = delay(s, &format!("wq_issued_{k}_walk_ans"), &a, iw, l - 1);
        walk_vals.entry("issued").or_default().push(a);
        let a = s.m.mem_read(&mem, &format!("wq_issued_{k}_pend"), lit(1, 1), &pend_at);
        pend_vals.entry("issued").or_default().push(a);
        // Acked: the SACK's increment (the last write forwarded) or the walk's.
        let mem = s.m.memory(
            &format!("wq_acked_{k}"),
            cntb,
            1u32 << ab,
            crate::MemStyle::Block,
            "a slot's packets acknowledged (free-running)",
        );
        let old = s.m.mem_read(&mem, &format!("wq_acked_{k}_inc"), iv.expr().logic_and(at_s(&is, k)), &inc_at);
        let we = s.m.wire(&format!("wq_acked_we_{k}"), 1, "the acked count is written");
        let wa = s.m.wire(&format!("wq_acked_wa_{k}"), ab, "where");
        let wd = s.m.wire(&format!("wq_acked_wd_{k}"), cntb, "what");
        let lw = s.m.reg(&format!("wq_acked_lw_{k}"), 1, 0, "last cycle's write");
        let la = s.m.reg_no_reset(&format!("wq_acked_la_{k}"), ab, "its slot");
        let ld = s.m.reg_no_reset(&format!("wq_acked_ld_{k}"), cntb, "its count");
        s.m.next(set(&lw.next, we.expr()));
        s.m.next(set(&la.next, wa.expr()));
        s.m.next(set(&ld.next, wd.expr()));
        let base = mux(lw.q.expr().logic_and(la.q.expr().eq(inc_at_q.q.expr())), ld.q.expr(), old.expr());
        let inc_here = inc_q.q.expr().logic_and(at_s(&inc_st_q.q, k));
        let writes = vec![
            (inc_here, inc_at_q.q.expr(), base + lit(cntb, 1)),
            (av.expr().logic_and(at_s(&ast, k)), cat(&[ac.expr(), aslot.expr()]), adata.expr()),
            s.clear(cntb, ab),
        ];
        let (en, a_at, data) = pick_write(&writes, ab, cntb);
        s.m.assign(&we, en);
        s.m.assign(&wa, a_at);
        s.m.assign(&wd, data);
        s.m.mem_write(&mem, &we, &wa, &wd);
        let a = s.m.mem_read(&mem, &format!("wq_acked_{k}_walk"), &wrv, &walk_at);
        let a = delay(s, &format!("wq_acked_{k}_walk_ans"), &a, cntb, l - 1);
        walk_vals.entry("acked").or_default().push(a);
    }
    let pick = |vals: &HashMap<&str, Vec<Signal>>, f: &str, st: &Expr, w: u32| -> Expr {
        (0..ns)
            .rev()
            .fold(lit(w, 0), |acc, k| mux(st.clone().eq(lit(sbits, u64::from(k))), vals[f][k as usize].expr(), acc))
    };
    for f in ["wr_id", "op", "len", "imm"] {
        let w = s.width(&format!("walk_s_wq_rd_{f}"));
        s.o(&format!("walk_s_wq_rd_{f}"), pick(&walk_vals, f, &walk_st.expr(), w), w);
    }
    let issued_walk = pick(&walk_vals, "issued", &walk_st.expr(), 32);
    let iwide = s.m.wire_from("wq_walk_issued", 32, "the walk's issued count", issued_walk);
    s.o("walk_s_wq_rd_issued", iwide.slice(cntb - 1, 0), cntb);
    let _ = s.m.wire_from(
        &format!("{}_wq_walk_issued_high", crate::check::UNUSED_SINK),
        32 - cntb,
        "the count's bits past the walk's compare",
        iwide.slice(31, cntb),
    );
    s.o("walk_s_wq_rd_acked", pick(&walk_vals, "acked", &walk_st.expr(), cntb), cntb);
    // The commit's request: a retransmission's at its slot, new data's at
    // its stream's pend.
    let rst = slot.0.expr();
    for f in ["op", "laddr", "len", "raddr", "rkey", "imm", "msn", "rq_seq"] {
        let w = s.width(&format!("commit_s_wr_{f}"));
        let e = mux(&retx, pick(&retx_vals, f, &rst, w), pick(&pend_vals, f, &cs.expr(), w));
        s.o(&format!("commit_s_wr_{f}"), e, w);
    }
    s.o("commit_s_wq_issued", pick(&pend_vals, "issued", &cs.expr(), 32), 32);
}

/// The PROBE queues: per connection the paths with a PROBE queued, in
/// order, at most one entry a path (its `probe_q` bit keeps a second out),
/// as a flip-flop word a connection. Pushed by the timeout handler, a
/// SACK stage and the timer step (one a cycle), popped by the PROBE send,
/// emptied by a failure or a setup. The PROBE send reads the head with its
/// other reads and the head path's mirror.
fn probe_queue(s: &mut S, p: &TxEngineParams, failing: &Failing, pm: &HashMap<&'static str, Vec<Signal>>) {
    let (c, n, cb, l) = (p.conns, p.paths, p.conn_bits, p.read_latency);
    let pb = s.width("probe_s_rd_path");
    let ww = n * pb;
    let nb = index_bits(n + 1);
    let words = s.m.reg("pq_words", c * ww, 0, "per connection: the paths queued, the head lowest");
    let cnts = s.m.reg("pq_counts", c * nb, 0, "per connection: how many");
    let at = |conn: &Signal, w: u32| {
        let ib = index_bits(c * w);
        zext(conn.expr(), ib) * lit(ib, u64::from(w))
    };
    let get = |v: &Signal, conn: &Signal, w: u32| v.expr().part(at(conn, w), w);
    let put = |q: Expr, en: Expr, conn: &Signal, w: u32, val: Expr| -> Expr {
        let mask = lit(w, if w >= 64 { u64::MAX } else { (1u64 << w) - 1 });
        mux(en, (q.clone() & (zext(mask, c * w) << at(conn, w)).not()) | (zext(val, c * w) << at(conn, w)), q)
    };
    let mut pushes: Vec<(Signal, Signal, Signal)> = Vec::new();
    for u in ["rto", "stage", "timer"] {
        pushes.push((
            s.i(&format!("{u}_m_probe_valid")),
            s.i(&format!("{u}_m_probe_conn")),
            s.i(&format!("{u}_m_probe_path")),
        ));
    }
    let push = s.m.wire_from(
        "pq_push",
        1,
        "a PROBE is queued",
        pushes.iter().map(|x| x.0.expr()).reduce(|a, b| a.logic_or(b)).expect("pushers"),
    );
    let pc = s.m.wire_from(
        "pq_push_conn",
        cb,
        "its connection",
        pushes.iter().rev().fold(lit(cb, 0), |acc, x| mux(&x.0, x.1.expr(), acc)),
    );
    let pp = s.m.wire_from(
        "pq_push_path",
        pb,
        "its path",
        pushes.iter().rev().fold(lit(pb, 0), |acc, x| mux(&x.0, x.2.expr(), acc)),
    );
    let (qv, qc) = (s.i("probe_m_pq_valid"), s.i("probe_m_pq_conn"));
    // Pop first (the PROBE send is the scheduler's turn), then the push.
    let pop_word = s.m.wire_from("pq_pop_word", ww, "the popped connection's word", get(&words.q, &qc, ww));
    let pop_cnt = s.m.wire_from("pq_pop_count", nb, "its count", get(&cnts.q, &qc, nb));
    let w1 = put(words.q.expr(), qv.expr(), &qc, ww, pop_word.expr() >> lit(8, u64::from(pb)));
    let c1 = put(cnts.q.expr(), qv.expr(), &qc, nb, pop_cnt.expr() - lit(nb, 1));
    let w1 = s.m.wire_from("pq_words_popped", c * ww, "after the pop", w1);
    let c1 = s.m.wire_from("pq_counts_popped", c * nb, "after the pop", c1);
    let push_word = get(&w1, &pc, ww);
    let push_cnt = s.m.wire_from("pq_push_count", nb, "the pushed connection's count", get(&c1, &pc, nb));
    let shift = zext(push_cnt.expr(), 8) * lit(8, u64::from(pb));
    let w2 = put(w1.expr(), push.expr(), &pc, ww, push_word | (zext(pp.expr(), ww) << shift));
    let c2 = put(c1.expr(), push.expr(), &pc, nb, push_cnt.expr() + lit(nb, 1));
    let (fv, fc) = (failing.any.0.clone(), failing.any.1.clone());
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let c3 = put(put(c2, fv.expr(), &fc, nb, lit(nb, 0)), ov.expr(), &oc, nb, lit(nb, 0));
    let w3 = put(put(w2, fv.expr(), &fc, ww, lit(ww, 0)), ov.expr(), &oc, ww, lit(ww, 0));
    s.m.next(set(&words.next, w3));
    s.m.next(set(&cnts.next, c3));
    // The PROBE send's read: the head path, and its mirror fields.
    let rc = s.i("probe_m_rd_conn");
    let head = s.m.wire_from("pq_head", pb, "the read connection's head path", words.q.expr().part(at(&rc, ww), pb));
    let head_d = delay(s, "pq_head", &head, pb, l);
    s.o("probe_s_rd_path", &head_d, pb);
    let at_p = |k: u32| head_d.expr().eq(lit(pb, u64::from(k)));
    for f in ["gen", "next_psn", "tx_seq", "sport", "plane"] {
        let w = s.width(&format!("probe_s_pm_{f}"));
        let e = (0..n).rev().fold(lit(w, 0), |acc, k| mux(at_p(k), pm[f][k as usize].expr(), acc));
        s.o(&format!("probe_s_pm_{f}"), e, w);
    }
}

/// The window probes' deadlines: armed (a bit a connection, flip-flops:
/// the decision reads its connection's as a level) and the deadline (block
/// RAM, the timer step reads it). Armed by a decision that finds the
/// connection blocked and quiet (`ts_now + rto_min`, `tx_ack`'s
/// `m_timer_at`), cleared by the timer step's live probe, a SACK stage
/// moving `remote_completed` on, and a setup.
fn window_probes(s: &mut S, p: &TxEngineParams, dc_conn: &Signal) {
    let (c, cb, l) = (p.conns, p.conn_bits, p.read_latency);
    let armed = s.m.reg("wp_armed", c, 0, "per connection: a window probe is armed");
    let (av, ac, at) = (s.i("sched_m_wprobe_valid"), s.i("sched_m_wprobe_conn"), s.i("ack_m_timer_at"));
    let (tv, tc) = (s.i("timer_m_wp_clr_valid"), s.i("timer_m_wp_clr_conn"));
    let (rv, rc) = (s.i("stage_m_rc_valid"), s.i("stage_m_rc_conn"));
    let (ov, oc) = (s.i("open_m_ctx_valid"), s.i("open_m_ctx_conn"));
    let one = |conn: &Signal| lit(c, 1) << zext(conn.expr(), cb.max(1));
    let put = |q: Expr, en: Expr, conn: &Signal, v: bool| -> Expr {
        mux(en, if v { q.clone() | one(conn) } else { q.clone() & one(conn).not() }, q)
    };
    let a1 = put(armed.q.expr(), av.expr(), &ac, true);
    let a2 = put(a1, tv.expr(), &tc, false);
    let a3 = put(a2, rv.expr(), &rc, false);
    let a4 = put(a3, ov.expr(), &oc, false);
    s.m.next(set(&armed.next, a4));
    let mem = s.m.memory("wp_at", 32, c, crate::MemStyle::Block, "per connection: the window probe's deadline");
    s.m.mem_write(&mem, &av, &ac, &at);
    s.o("sched_s_ctx_wprobe_armed", armed.q.expr().bit_at(dc_conn.expr()), 1);
    let trc = s.i("timer_m_rd_conn");
    let v = s.m.wire_from("wp_rd_armed", 1, "the timer step's read", armed.q.expr().bit_at(trc.expr()));
    let v = delay(s, "wp_rd_armed", &v, 1, l);
    s.o("timer_s_rd_wp_valid", &v, 1);
    let (en, conn) = shared_read(s, "wp", cb, true);
    let a = s.m.mem_read(&mem, "wp_at_rd", &en, &conn);
    let a = delay(s, "wp_at_ans", &a, 32, l - 1);
    s.o("timer_s_rd_wp_at", &a, 32);
}

/// The event FIFO's state the turns read.
struct Events {
    /// Entries in the FIFO after this cycle's pop, before its pushes.
    fifo_after_pop: Expr,
    /// The pending list is empty after this edge.
    pend_empty_after: Expr,
    /// An event entered the FIFO this cycle.
    pushed: Signal,
    /// The acknowledgement unit's pending list is empty (start of cycle).
    pend_empty: Expr,
    /// Cycles since the last `m_evt` handshake, after this cycle's.
    quiet: Signal,
}

/// The event FIFO (`EVT_FIFO` entries) on `m_evt`, one push a cycle:
/// the commit's and the PROBE send's (the scheduler's turn), a setup's
/// OPEN, or the acknowledgement unit's pending list's head when its turn
/// goes to its events (`m_drain`) and nothing else pushed. The pending
/// list takes the NACK, SACK and SACK-stage handlers' events as they come
/// (`evt_pend` entries, one step's events at most: a step starts with the
/// list empty, [`TxEngineParams::evt_pend`]).
fn events(s: &mut S, p: &TxEngineParams) -> Events {
    let evt_pend = p.evt_pend;
    let depth = mrnic_model::tx_engine::EVT_FIFO as u32;
    let names: Vec<(String, u32)> = s
        .defs
        .iter()
        .filter(|d| d.dir == Dir::Out && d.name.starts_with("m_evt_") && d.name != "m_evt_valid")
        .map(|d| (d.name["m_evt_".len()..].to_string(), d.width))
        .collect();
    let ew: u32 = names.iter().map(|(_, w)| w).sum();
    let field = |s: &mut S, u: &str, f: &str, w: u32| -> Expr {
        let n = format!("{u}_m_evt_{f}");
        if s.has(&n) {
            zext(s.i(&n).expr(), w)
        } else {
            lit(w, 0)
        }
    };
    let record = |s: &mut S, u: &str, conn: Option<Expr>, path: Option<Expr>| -> Expr {
        let mut parts = Vec::new();
        for (f, w) in names.iter().rev() {
            let e = match (f.as_str(), &conn, &path) {
                ("conn", Some(c), _) => c.clone(),
                ("path", _, Some(p)) => p.clone(),
                _ => field(s, u, f, *w),
            };
            parts.push(e);
        }
        cat(&parts)
    };
    // Direct pushes.
    let cv = s.i("commit_m_valid");
    let (cc, cpath) = (s.i("sched_m_commit_conn"), s.i("commit_m_path"));
    let commit_rec = record(s, "commit", Some(cc.expr()), Some(cpath.expr()));
    let (pv, ov) = (s.i("probe_m_evt_valid"), s.i("open_m_evt_valid"));
    let probe_rec = record(s, "probe", None, None);
    let open_rec = record(s, "open", None, None);
    // Pending pushes.
    let (nv, sv, gv) = (s.i("nack_m_evt_valid"), s.i("sack_m_evt_valid"), s.i("stage_m_evt_valid"));
    let nack_rec = record(s, "nack", None, None);
    let sack_rec = record(s, "sack", None, None);
    let stage_rec = record(s, "stage", None, None);
    let pend_in = mux(&nv, nack_rec, mux(&sv, sack_rec, stage_rec));
    let pend_push = nv.expr().logic_or(&sv).logic_or(&gv);

    // The pending list: flip-flops, the head at index 0.
    let pb = index_bits(evt_pend + 1);
    let pend = s.m.reg_no_reset("evp_words", evt_pend * ew, "the pending events, the head lowest");
    let pcnt = s.m.reg("evp_count", pb, 0, "how many");
    // The FIFO.
    let fb = index_bits(depth + 1);
    let fifo = s.m.reg("evf_words", depth * ew, 0, "the event FIFO, the head lowest");
    let fcnt = s.m.reg("evf_count", fb, 0, "how many");
    let ready = s.i("m_evt_ready");
    let pop = s.m.wire_from("evf_pop", 1, "the head is taken", fcnt.q.expr().ne(lit(fb, 0)).logic_and(&ready));
    let f_after = s.m.wire_from("evf_after_pop", fb, "entries after the pop", fcnt.q.expr() - zext(pop.expr(), fb));
    let direct = cv.expr().logic_or(&pv).logic_or(&ov);
    let turn = s.i("ack_m_drain");
    let drain = s.m.wire_from(
        "evp_drain",
        1,
        "the pending list's head moves into the FIFO",
        turn.expr()
            .logic_and(pcnt.q.expr().ne(lit(pb, 0)))
            .logic_and(direct.clone().logic_not())
            .logic_and(f_after.expr().lt(lit(fb, u64::from(depth)))),
    );
    let pushed = s.m.wire_from("evf_push", 1, "an event enters the FIFO", direct.logic_or(&drain));
    let pend_head = pend.q.slice(ew - 1, 0);
    let push_rec = mux(&cv, commit_rec, mux(&pv, probe_rec, mux(&ov, open_rec, pend_head)));
    let popped = mux(&pop, fifo.q.expr() >> lit(16, u64::from(ew)), fifo.q.expr());
    let slot_at = zext(f_after.expr(), 16) * lit(16, u64::from(ew));
    let fifo_next = mux(&pushed, popped.clone() | (zext(push_rec, depth * ew) << slot_at), popped);
    s.m.next(set(&fifo.next, fifo_next));
    s.m.next(set(&fcnt.next, f_after.expr() + zext(pushed.expr(), fb)));
    let p_after =
        s.m.wire_from("evp_after_drain", pb, "pending after the drain", pcnt.q.expr() - zext(drain.expr(), pb));
    // Slot by slot (a shift by the count would be a barrel shifter as wide
    // as the list): a drain moves each slot down one, and a push writes the
    // slot above what is left.
    let pend_in = s.m.wire_from("evp_in", ew, "the record pushed this cycle", pend_in);
    let slots: Vec<Expr> = (0..evt_pend)
        .rev()
        .map(|i| {
            let here = pend.q.slice(ew * i + ew - 1, ew * i);
            let above = if i + 1 < evt_pend { pend.q.slice(ew * (i + 1) + ew - 1, ew * (i + 1)) } else { here.clone() };
            let kept = mux(&drain, above, here);
            let at = pend_push.clone().logic_and(p_after.expr().eq(lit(pb, u64::from(i))));
            mux(at, pend_in.expr(), kept)
        })
        .collect();
    s.m.next(set(&pend.next, cat(&slots)));
    let p_next = s.m.wire_from("evp_next", pb, "pending after this edge", p_after.expr() + zext(pend_push, pb));
    s.m.next(set(&pcnt.next, p_next.expr()));
    // m_evt: the FIFO's head.
    let has = s.m.wire_from("evf_has", 1, "the FIFO has an event", fcnt.q.expr().ne(lit(fb, 0)));
    s.o("m_evt_valid", &has, 1);
    let mut lsb = 0;
    for (f, w) in &names {
        // 0 with no event, as the model shows (its words are not reset).
        let e = mux(&has, fifo.q.slice(lsb + w - 1, lsb), lit(*w, 0));
        s.o(&format!("m_evt_{f}"), e, *w);
        lsb += w;
    }
    s.o("ack_s_pend_evt", pcnt.q.expr().ne(lit(pb, 0)), 1);
    // Quiet cycles since the last handshake (saturating at L + 2, all
    // anyone compares with).
    let l = p.read_latency;
    let qb = index_bits(l + 3);
    let quiet = s.m.reg("evt_quiet", qb, 0, "cycles since the last m_evt handshake (saturating)");
    let top = lit(qb, u64::from(l + 2));
    let q_after = s.m.wire_from(
        "evt_quiet_after",
        qb,
        "after this cycle's handshake",
        mux(&pop, lit(qb, 0), mux(quiet.q.expr().eq(top.clone()), top, quiet.q.expr() + lit(qb, 1))),
    );
    s.m.next(set(&quiet.next, q_after.expr()));
    Events {
        fifo_after_pop: f_after.expr(),
        pend_empty_after: p_next.expr().eq(lit(pb, 0)),
        pushed,
        pend_empty: pcnt.q.expr().eq(lit(pb, 0)),
        quiet: q_after,
    }
}

/// The levels that say whose turn it is, as the model's cycle computes
/// them: `tel_settled` (path_telemetry has answered every event sent),
/// the scheduler's `start_ok` (`may_start` but for the frame queue), the
/// acknowledgement unit's view of the scheduler (idle after its turn, no
/// PROBE send or setup running) and of the walk, the walk's state at the
/// cycle's start.
fn turns(s: &mut S, p: &TxEngineParams, ev: &Events) {
    let l = p.read_latency;
    let fb = index_bits(mrnic_model::tx_engine::EVT_FIFO as u32 + 1);
    let qw = index_bits(l + 3);
    let fifo_empty = s.m.wire_from(
        "evf_empty_after_pop",
        1,
        "the event FIFO is empty after this cycle's pop",
        ev.fifo_after_pop.clone().eq(lit(fb, 0)),
    );
    let has = |s: &S, ch: &str| s.held.get(ch).unwrap_or_else(|| panic!("input register {ch}")).clone();
    let (rto_has, upd_has, sack_has, nack_has) = (has(s, "rto"), has(s, "upd"), has(s, "sack"), has(s, "nack"));
    let (uv, rv) = (s.i("s_upd_valid"), s.i("s_rto_valid"));
    let no_upd = uv.expr().logic_or(&rv).logic_or(&upd_has).logic_or(&rto_has).logic_not();
    let settled = fifo_empty
        .expr()
        .logic_and(ev.pend_empty.clone())
        .logic_and(ev.quiet.expr().ge(lit(qw, u64::from(l + 2))))
        .logic_and(no_upd.clone());
    s.o("ack_s_tel_settled", settled, 1);

    // The walk at the cycle's start: its own "after this edge", and a
    // failed payload read's start, which that leaves out.
    let (wb, rdf) = (s.i("walk_m_walk_busy"), s.i("out_m_fail_valid"));
    let walk_q = s.m.reg("walk_running", 1, 0, "a completion walk runs (the cycle's start)");
    s.m.next(set(&walk_q.next, wb.expr().logic_or(&rdf)));
    s.o("sched_walk_running", &walk_q.q, 1);
    // The acknowledgement unit's turn sees the commit's failure of this
    // cycle start its walk.
    let cf = s.i("commit_m_fail_valid");
    s.o("ack_s_walk", walk_q.q.expr().logic_or(&cf), 1);

    // A PROBE send from the start that chose it to the cycle it leaves.
    let (ps, pl) = (s.i("sched_m_probe_valid"), s.i("probe_m_frame_valid"));
    let probe_q = s.m.reg("probe_running", 1, 0, "a PROBE send runs (the cycle's start)");
    s.m.next(set(&probe_q.next, probe_q.q.expr().logic_or(&ps).logic_and(pl.expr().logic_not())));
    let (running, wr_hold, ov, ordy) =
        (s.i("open_m_running"), s.i("open_m_wr_hold"), s.i("s_open_valid"), s.i("open_s_open_ready"));
    let open_busy = wr_hold.expr().logic_or(&running).logic_or(ov.expr().logic_and(&ordy));
    let busy = s.i("ack_m_busy");
    let bw = s.width("ack_m_busy");
    let cont = s.i("stage_m_cont_valid");
    let ack_idle = busy
        .expr()
        .eq(lit(bw, 0))
        .logic_and(ev.pend_empty.clone())
        .logic_and(walk_q.q.expr().logic_not())
        .logic_and(cont.expr().logic_not());
    let start_ok = probe_q
        .q
        .expr()
        .logic_not()
        .logic_and(ack_idle)
        .logic_and(sack_has.expr().logic_or(&nack_has).logic_not())
        .logic_and(no_upd)
        .logic_and(open_busy.logic_not())
        .logic_and(&fifo_empty)
        .logic_and(ev.quiet.expr().ge(lit(qw, u64::from(l))));
    s.o("sched_start_ok", start_ok, 1);
    let idle = s.i("sched_m_sched_idle");
    s.o(
        "ack_s_sched_idle",
        idle.expr()
            .logic_and(probe_q.q.expr().logic_not())
            .logic_and(ps.expr().logic_not())
            .logic_and(running.expr().logic_not()),
        1,
    );
    // A setup record may be taken (the model's `free`, at the end of its
    // cycle): no event entered the FIFO this cycle and it has room; the
    // acknowledgement unit idle after its turn (its count, its pending
    // events, the walk (a failed read's start comes after the setup in
    // the model's cycle), a SACK between its stages); the scheduler idle
    // after its step; no PROBE send; no frame of the record's connection
    // queued.
    let (cn, q) = (s.i("stage_m_cont_next"), s.i("out_m_qry_queued"));
    // The walk after the acknowledgement unit's turn: the running one if
    // it does not end, or a SACK's started by its last stage (a failure's
    // is among `raised`; a setup's flush and a failed read's come later).
    let wb2 = s.i("walk_m_walk_stays").expr().logic_or(s.i("stage_m_done_valid"));
    // The acknowledgement unit's count is 0 after its turn and the
    // handlers' answers: it was at most 1, no step started, and nothing
    // raised it (a live SACK's or a stage's hold, a NACK's or the commit's
    // failure). A setup's own flush and a failed read's come later in the
    // model's cycle, so they do not count here (and `m_fail_valid` of
    // `tx_open` depends on this: no loop).
    let mut started = lit(1, 0);
    for (g, _) in super::ack::GOES {
        started = started.logic_or(s.i(&format!("ack_m_go_{g}")));
    }
    let raised = s
        .i("sack_m_hold_valid")
        .expr()
        .logic_or(s.i("stage_m_hold_valid"))
        .logic_or(s.i("nack_m_fail_valid"))
        .logic_or(s.i("commit_m_fail_valid"));
    let ack_after = busy.expr().le(lit(bw, 1)).logic_and(started.logic_not()).logic_and(raised.logic_not());
    let free = ev
        .pushed
        .expr()
        .logic_not()
        .logic_and(ev.fifo_after_pop.clone().lt(lit(fb, mrnic_model::tx_engine::EVT_FIFO as u64)))
        .logic_and(ack_after)
        .logic_and(ev.pend_empty_after.clone())
        .logic_and(wb2.logic_not())
        .logic_and(cn.expr().logic_not())
        .logic_and(&idle)
        .logic_and(probe_q.q.expr().logic_or(&ps).logic_not())
        .logic_and(q.expr().logic_not());
    s.o("open_s_free", free, 1);
}

/// The event counters' pulses, each a register: the engine shows a pulse
/// the cycle after the unit's (the model's outputs show the `stats` its
/// last clock set). A data frame and a retransmission are counted at
/// their commit, a PROBE at its send, an answer as it starts on `m_axis`
/// (`tx_output`'s `m_stat_tx_answer`).
fn counters(s: &mut S) {
    // The setup's question to the output stage: a frame of its record's
    // connection queued (half of what `s_free` needs).
    let lc = s.i("open_m_live_conn");
    let cb = s.width("out_s_qry_conn");
    s.o("out_s_qry_conn", &lc, cb);
    let (cv, retx) = (s.i("commit_m_valid"), s.i("sched_m_commit_retx"));
    let pulses: Vec<(&str, Expr)> = vec![
        ("stat_tx_data", cv.expr().logic_and(retx.expr().logic_not())),
        ("stat_tx_retx", cv.expr().logic_and(&retx)),
        ("stat_tx_probe", s.i("probe_m_stat_tx_probe").expr()),
        ("stat_ring_full", s.i("sched_m_stat_ring_full").expr()),
        ("stat_nack_stale", s.i("nack_m_stat_nack_stale").expr()),
        ("stat_rnr_full", s.i("nack_m_stat_rnr_full").expr()),
        ("stat_wprobe_full", s.i("sched_m_stat_wprobe_full").expr()),
        ("stat_tx_answer", s.i("out_m_stat_tx_answer").expr()),
    ];
    for (name, e) in pulses {
        let r = s.m.reg(&format!("{name}_q"), 1, 0, "the counter's pulse, a cycle on");
        s.m.next(set(&r.next, e));
        s.o(name, &r.q, 1);
    }
    // A stale SACK: the model counts it in the step's cycle, the unit
    // knows it when the step's reads answer (`L` cycles on), which for
    // `L = 1` is the cycle the model's count shows: passed straight
    // through. (For `L > 1` the model shows it before any hardware could:
    // its count belongs at the answer.)
    let stale = s.i("sack_m_stat_sack_stale");
    s.o("stat_sack_stale", &stale, 1);
}

/// `tx_ack`'s holds that come from two units: a live SACK's reads
/// answered (`tx_sack`) and a SACK stage's ring reads (`tx_stage`), never
/// in one cycle (one handler at a time).
fn sack_holds(s: &mut S) {
    let w = s.width("ack_s_hold_cnt");
    let (sv, sc, gv, gc) =
        (s.i("sack_m_hold_valid"), s.i("sack_m_hold_cnt"), s.i("stage_m_hold_valid"), s.i("stage_m_hold_cnt"));
    s.o("ack_s_hold_sack", sv.expr().logic_or(&gv), 1);
    s.o("ack_s_hold_cnt", mux(&sv, sc.expr(), gc.expr()), w);
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
