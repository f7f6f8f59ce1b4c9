//! `path_telemetry` RTL: the generator of the cycle model
//! [`mrnic_model::path_telemetry`], with the same ports (declared from the
//! model's [`PortDef`](mrnic_model::block::PortDef) list, plus `clk`) and the
//! same cycle timing. The model's doc comment is the specification: event
//! kinds, update function, latency `L + 1`, forwarding, RTO scanner, read
//! port, output FIFOs and clear sweep.
//!
//! Structure:
//! - event pipeline `p1..pL` (the event packed in one register per stage);
//!   the handshake (or the scanner's TIMER) reads `table_mem` (block RAM,
//!   one packed entry per `{conn, path}`);
//! - execute stage `pL`: the entry from the newest matching forwarding
//!   register `fwJ` (the writes of the last `L` cycles) or from the memory,
//!   decoded into `e_<field>`; the update datapath (two RTO units, the
//!   weight unit with its reciprocal ROM, the AIMD and RTT estimators, the
//!   ECN fraction with a second ROM) feeds one `always @*` block that
//!   computes every `n_<field>` by event kind, as the model's `execute`;
//!   the new entry is written to `table_mem`, its timer word to `timer_mem`
//!   and its view word to `view<path>_mem`;
//! - the scanner reads `timer_mem` one address per cycle (`s1..sL`) and
//!   raises `pending` on a hit; the read port reads the `PATHS` view
//!   memories in parallel (`r1..rL`);
//! - three output FIFOs of `FIFO_DEPTH` registers: `upd`, `rto`, `rdq`.
//!
//! IR notes: the update is one combinational stage (about three
//! multipliers deep: ECN fraction, window cut, weight), as the model's one
//! execute cycle requires; see the model docs for the timing.

use std::collections::HashMap;

use mrnic_model::block::Dir as ModelDir;
use mrnic_model::path_telemetry::{
    self as model, entry_bits, entry_fields, field_pos, kind, recip16, ParamError, PathTelemetryParams, LFSR_SEED,
    LFSR_TAPS, MIN_RTT_NONE, TIMER_BITS, VIEW_BITS,
};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{case, if_else, if_then, set, MemStyle, Module, Reg, Stmt};
use crate::param::{ParamExpr, Size};
use crate::{CheckErrors, Header};

/// Why the block could not be generated for a config.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("{0}")]
    Check(#[from] CheckErrors),
}

/// The file header for `cfg`.
pub fn header(cfg: &Config) -> Header {
    Header::new(
        &format!("mrnic-hdl {}, config {}", model::NAME, cfg.name),
        &format!("mrnic gen --config {} --out DIR", cfg.name),
    )
}

/// The `path_telemetry` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = PathTelemetryParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

/// Event record packed in a stage register, LSB first.
const EVT_FIELDS: [(&str, u32); 13] = [
    ("kind", model::KIND_BITS),
    ("conn", 0), // conn_bits
    ("path", 0), // path_bits
    ("now", 32),
    ("cum_acked", 24),
    ("acked_pkts", model::PKTS_BITS),
    ("acked_bytes", model::BYTES_BITS),
    ("ecn_cnt", model::ECN_BITS),
    ("rtt_valid", 1),
    ("rtt", model::RTT_BITS),
    ("acked_seq", 32),
    ("sport", 16),
    ("plane", 3),
];

struct B {
    m: Module,
}

impl B {
    /// A named wire driven by `e`.
    fn w(&mut self, name: &str, width: u32, comment: &str, e: impl Into<Expr>) -> Signal {
        wire_of(&mut self.m, name, width, comment, e)
    }

    /// `now` is at or after `deadline` (32-bit wrapping signed distance).
    fn reached(&mut self, name: &str, now: &Signal, deadline: impl Into<Expr>) -> Signal {
        let d = self.w(&format!("{name}_dist"), 32, "now - deadline, wrapping", now.expr() - deadline.into());
        self.w(name, 1, "the deadline is reached (distance below 2^31)", d.expr().lt(lit(32, 1 << 31)))
    }

    fn ewma(&mut self, name: &str, width: u32, avg: Expr, sample: Expr, shift: u32) -> Signal {
        ewma(&mut self.m, name, width, avg, sample, shift)
    }

    /// `max(srtt + 4 rttvar, 2 min_rtt)` clamped to [rto_min, rto_max], 32 bits.
    fn rto(&mut self, name: &str, srtt: Expr, rttvar: Expr, min_rtt: Expr, lo: u32, hi: u32) -> Signal {
        let rw = 22u32.max(32 - hi.leading_zeros());
        let base =
            self.w(&format!("{name}_base"), rw, "srtt + 4 rttvar", zext(srtt, rw) + (zext(rttvar, rw) << lit(2, 2)));
        let none = min_rtt.clone().eq(lit(20, u64::from(MIN_RTT_NONE)));
        let floor = self.w(
            &format!("{name}_floor"),
            rw,
            "2 min_rtt, 0 before a sample",
            mux(none, lit(rw, 0), zext(min_rtt, rw) << lit(1, 1)),
        );
        let mx = self.w(&format!("{name}_max"), rw, "the larger", mux(base.expr().lt(&floor), &floor, &base));
        let cl = self.w(
            &format!("{name}_clamped"),
            rw,
            "clamped to the configured RTO range",
            mux(
                mx.expr().lt(lit(rw, u64::from(lo))),
                lit(rw, u64::from(lo)),
                mux(mx.expr().gt(lit(rw, u64::from(hi))), lit(rw, u64::from(hi)), &mx),
            ),
        );
        self.w(name, 32, "RTO, timestamp units", zext(&cl, 32))
    }

    fn recip_rom(&mut self, name: &str, addr: &Signal) -> Signal {
        recip_rom(&mut self.m, name, addr)
    }
}

/// A named wire of `m` driven by `e`.
fn wire_of(m: &mut Module, name: &str, width: u32, comment: &str, e: impl Into<Expr>) -> Signal {
    let s = m.wire(name, width, comment);
    m.assign(&s, e);
    s
}

/// `avg + ((sample - avg) >>> shift)` on `width`-bit values, as the
/// model's `ewma`: up by `(sample - avg) >> shift`, or down by
/// `ceil((avg - sample) / 2^shift)` (the arithmetic shift rounds toward
/// minus infinity). The result lies between `avg` and `sample`. Shared
/// with tx_engine's connection-level estimators.
pub fn ewma(m: &mut Module, name: &str, width: u32, avg: Expr, sample: Expr, shift: u32) -> Signal {
    let ge =
        wire_of(m, &format!("{name}_up"), 1, "the sample is at or above the average", sample.clone().ge(avg.clone()));
    let up = wire_of(m, &format!("{name}_rise"), width, "sample - average", sample.clone() - avg.clone());
    let dn = wire_of(m, &format!("{name}_fall"), width, "average - sample", avg.clone() - sample);
    let mask = lit(width, (1u64 << shift) - 1);
    let step_dn = wire_of(
        m,
        &format!("{name}_fall_step"),
        width,
        "ceil((average - sample) / 2^shift)",
        (dn.expr() >> lit(4, u64::from(shift))) + zext((dn.expr() & mask).ne(lit(width, 0)), width),
    );
    wire_of(
        m,
        name,
        width,
        "EWMA result",
        mux(&ge, avg.clone() + (up.expr() >> lit(4, u64::from(shift))), avg - step_dn.expr()),
    )
}

/// The reciprocal ROM `floor(65536 / max(a, 1))` for an 8-bit address
/// (the model's `recip16`). Shared with tx_engine's ECN fraction.
pub fn recip_rom(m: &mut Module, name: &str, addr: &Signal) -> Signal {
    let out = m.wire(name, 17, "reciprocal ROM: floor(65536 / addr), addr 0 reading as 1");
    let arms =
        (0..256u32).map(|a| (vec![lit(8, u64::from(a))], vec![set(&out, lit(17, u64::from(recip16(a))))])).collect();
    m.comb(vec![case(addr, arms, None)]);
    out
}

fn evt_layout(p: &PathTelemetryParams) -> Vec<(&'static str, u32, u32)> {
    let mut at = 0;
    let mut v = Vec::new();
    for (name, w) in EVT_FIELDS {
        let w = match name {
            "conn" => p.conn_bits,
            "path" => p.path_bits,
            _ => w,
        };
        v.push((name, at, w));
        at += w;
    }
    v
}

fn build(p: &PathTelemetryParams) -> Module {
    let k = p.k;
    let paths = p.paths;
    let l = p.read_latency;
    let (cw, pw) = (p.conn_bits, p.path_bits);
    let aw = p.addr_bits();
    let eb = entry_bits();
    let depth = p.fifo_depth();
    let fb = depth.trailing_zeros();
    let evt = evt_layout(p);
    let evt_w: u32 = evt.iter().map(|f| f.2).sum();

    let mut m = Module::new(model::NAME);
    m.describe("per-(connection, path) telemetry table: RMW updates with forwarding, RTO scanner, state machine");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connections (power of 2)");
    let paths_p = m.param("PATHS", u64::from(paths), "paths per connection (power of 2, 1 to 32)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "table memory read latency in cycles (1 or 2)");
    let entries_p = m.localparam("ENTRIES", conns_p.expr() * paths_p.expr(), "table entries: CONNS * PATHS");
    let fifo_p = m.localparam("FIFO_DEPTH", u64::from(depth), "output FIFO entries: power of 2 >= READ_LATENCY + 2");
    m.param_check(
        "conns_pow2",
        conns_p.expr().ge(2u32).and(conns_p.expr().eq(ParamExpr::Const(1) << conns_p.expr().clog2())),
        "CONNS must be a power of 2, at least 2",
    );
    m.param_check(
        "paths_pow2",
        paths_p
            .expr()
            .ge(1u32)
            .and(paths_p.expr().le(32u32))
            .and(paths_p.expr().eq(ParamExpr::Const(1) << paths_p.expr().clog2())),
        "PATHS must be a power of 2 from 1 to 32",
    );
    m.param_check(
        "read_latency",
        lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)).and(fifo_p.expr().ge(lat_p.expr() + 2u32)),
        "READ_LATENCY must be 1 or 2, and FIFO_DEPTH at least READ_LATENCY + 2",
    );
    m.param_check("entries", entries_p.expr().le(1u32 << 20), "CONNS * PATHS must be at most 2^20");

    let symbolic: HashMap<&str, ParamExpr> = [
        ("s_evt_conn", conns_p.expr().clog2()),
        ("m_upd_conn", conns_p.expr().clog2()),
        ("m_rto_conn", conns_p.expr().clog2()),
        ("s_rd_conn", conns_p.expr().clog2()),
        ("m_rd_conn", conns_p.expr().clog2()),
        ("s_evt_path", paths_p.expr().clog2()),
        ("m_upd_path", paths_p.expr().clog2()),
        ("m_rto_path", paths_p.expr().clog2()),
        ("m_rd_state", paths_p.expr() * 2u32),
        ("m_rd_inflight", paths_p.expr() * 9u32),
        ("m_rd_cwnd", paths_p.expr() * 20u32),
        ("m_rd_weight", paths_p.expr() * 8u32),
    ]
    .into_iter()
    .collect();
    let defs = model::ports(p);
    let mut sig: HashMap<String, Signal> = HashMap::new();
    let mut group = "Clock and reset";
    m.group(group);
    let clk = m.input("clk", 1, "clock, rising edge");
    for d in &defs {
        if d.group != group {
            group = d.group;
            m.group(group);
        }
        let size = match symbolic.get(d.name.as_str()) {
            Some(e) if e.eval() == Some(i64::from(d.width)) => Size::from(e.clone()),
            _ => Size::from(d.width),
        };
        let s = match d.dir {
            ModelDir::In => m.input(&d.name, size, &d.comment),
            ModelDir::Out => m.output(&d.name, size, &d.comment),
        };
        sig.insert(d.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let ts_now = port("ts_now");
    let mut b = B { m };

    // ---------------------------------------------------------------- registers
    let init = b.m.reg("init", 1, 1, "clear sweep running: one table address zeroed per cycle");
    let init_addr = b.m.reg("init_addr", aw, 0, "table address the sweep zeroes this cycle");
    struct Stage {
        valid: Reg,
        data: Reg,
    }
    let stages: Vec<Stage> = (1..=l)
        .map(|j| Stage {
            valid: b.m.reg(&format!("p{j}_valid"), 1, 0, &format!("an event is {j} cycle(s) past its handshake")),
            data: b.m.reg_no_reset(&format!("p{j}_evt"), evt_w, "the event, packed"),
        })
        .collect();
    struct Fwd {
        valid: Reg,
        addr: Reg,
        entry: Reg,
    }
    let fwds: Vec<Fwd> = (0..l)
        .map(|j| Fwd {
            valid: b.m.reg(
                &format!("fw{j}_valid"),
                1,
                0,
                &format!("table write {} cycle(s) ago, for forwarding", j + 1),
            ),
            addr: b.m.reg_no_reset(&format!("fw{j}_addr"), aw, "its address"),
            entry: b.m.reg_no_reset(&format!("fw{j}_entry"), eb, "the entry written"),
        })
        .collect();
    let lfsr = b.m.reg("lfsr", 16, u64::from(LFSR_SEED), "fresh-port LFSR, stepped once per fired TIMER");
    let pending = b.m.reg("pending", 1, 0, "the scanner found a due entry; its TIMER waits for the pipeline");
    let pending_addr = b.m.reg_no_reset("pending_addr", aw, "address of that entry");
    let scan_addr = b.m.reg("scan_addr", aw, 0, "next address the scanner reads");
    let sstages: Vec<Stage> = (1..=l)
        .map(|j| Stage {
            valid: b.m.reg(&format!("s{j}_valid"), 1, 0, &format!("a scanner read is {j} cycle(s) old")),
            data: b.m.reg_no_reset(&format!("s{j}_addr"), aw, "its address"),
        })
        .collect();
    let rstages: Vec<Stage> = (1..=l)
        .map(|j| Stage {
            valid: b.m.reg(&format!("r{j}_valid"), 1, 0, &format!("a connection read is {j} cycle(s) old")),
            data: b.m.reg_no_reset(&format!("r{j}_conn"), cw, "its connection"),
        })
        .collect();

    // ---------------------------------------------------------------- FIFOs
    struct Fifo {
        count: Reg,
        wr: Reg,
        rd: Reg,
        slots: Vec<Reg>,
        width: u32,
    }
    let mk_fifo = |b: &mut B, name: &str, width: u32, what: &str| Fifo {
        count: b.m.reg(&format!("{name}_count"), fb + 1, 0, &format!("{what} in the FIFO")),
        wr: b.m.reg(&format!("{name}_wr"), fb, 0, "slot the next record goes to"),
        rd: b.m.reg(&format!("{name}_rd"), fb, 0, "slot of the head record"),
        slots: (0..depth).map(|j| b.m.reg_no_reset(&format!("{name}{j}"), width, what)).collect(),
        width,
    };
    let upd_w = cw + pw + 2 + 8 + 1 + 4;
    let rto_w = cw + pw + 2 + 16 + 8 + 4;
    let rdq_w = cw + paths * VIEW_BITS;
    let upd = mk_fifo(&mut b, "upd", upd_w, "path update {conn, path, state, weight, clr, act}");
    let rto_f = mk_fifo(&mut b, "rto", rto_w, "timeout record {conn, path, state, sport, gen, act}");
    let rdq = mk_fifo(&mut b, "rdq", rdq_w, "read response {conn, views}");

    // ---------------------------------------------------------------- handshakes
    b.m.comment("Ready from registers only: room in both update FIFOs for every event in flight plus this one.");
    let inflight_sum =
        stages.iter().map(|s| zext(&s.valid.q, fb + 1)).reduce(|a, c| a + c).expect("at least one stage");
    let inflight = b.w("evt_inflight", fb + 1, "events in the pipeline", inflight_sum);
    let room = b.w(
        "evt_room",
        1,
        "an event may enter",
        init.q.expr().logic_not().logic_and(
            (upd.count.q.expr() + &inflight)
                .lt(lit(fb + 1, u64::from(depth)))
                .logic_and((rto_f.count.q.expr() + &inflight).lt(lit(fb + 1, u64::from(depth)))),
        ),
    );
    let (s_evt_valid, s_evt_ready) = (port("s_evt_valid"), port("s_evt_ready"));
    b.m.assign(&s_evt_ready, room.expr().logic_and(pending.q.expr().logic_not()));
    let inject = b.w("inject", 1, "the scanner's TIMER enters the pipeline", pending.q.expr().logic_and(&room));
    let evt_fire = b.w("evt_fire", 1, "event handshake", s_evt_valid.expr().logic_and(&s_evt_ready));
    let new_valid = b.w("new_valid", 1, "an event enters the pipeline", inject.expr().logic_or(&evt_fire));
    let addr_of = |conn: Expr, path: Expr| if paths == 1 { conn } else { cat(&[conn, path]) };
    let pa_conn = b.w("pending_conn", cw, "connection of the pending TIMER", pending_addr.q.slice(aw - 1, aw - cw));
    let pa_path = if paths == 1 {
        b.w("pending_path", pw, "path of the pending TIMER", lit(pw, 0))
    } else {
        b.w("pending_path", pw, "path of the pending TIMER", pending_addr.q.slice(pw - 1, 0))
    };
    // The new event, packed (TIMER: only kind, conn, path, now).
    let mut parts_s = Vec::new();
    let mut parts_t = Vec::new();
    for &(name, _, w) in evt.iter().rev() {
        parts_s.push(port(&format!("s_evt_{name}")).expr());
        parts_t.push(match name {
            "kind" => lit(w, u64::from(kind::TIMER)),
            "conn" => pa_conn.expr(),
            "path" => pa_path.expr(),
            "now" => ts_now.expr(),
            _ => lit(w, 0),
        });
    }
    let new_evt = b.w("new_evt", evt_w, "the event entering the pipeline", mux(&inject, cat(&parts_t), cat(&parts_s)));
    let new_addr = b.w(
        "new_addr",
        aw,
        "its table address {conn, path}",
        mux(&inject, &pending_addr.q, addr_of(port("s_evt_conn").expr(), port("s_evt_path").expr())),
    );

    // ---------------------------------------------------------------- memories
    let table = b.m.memory("table", eb, &entries_p, MemStyle::Block, "one packed path entry per {conn, path}");
    let timer = b.m.memory(
        "timer",
        TIMER_BITS,
        &entries_p,
        MemStyle::Block,
        "{armed, rto_deadline, skip, hold_until} per entry, for the scanner",
    );
    let views: Vec<_> = (0..paths)
        .map(|i| {
            b.m.memory(
                &format!("view{i}"),
                VIEW_BITS,
                &conns_p,
                MemStyle::Block,
                &format!("path {i}'s {{state, inflight, cwnd, weight}} per connection, for the read port"),
            )
        })
        .collect();
    let pipe = |b: &mut B, name: &str, width: u32, rd: Signal| -> Signal {
        if l == 2 {
            let r = b.m.reg_no_reset(name, width, "block RAM output register (READ_LATENCY = 2)");
            b.m.next(set(&r.next, &rd));
            r.q
        } else {
            rd
        }
    };
    let table_rd = b.m.mem_read(&table, "table_rd", &new_valid, &new_addr);
    let table_q = pipe(&mut b, "table_pipe", eb, table_rd);
    let hit = b.m.wire("scan_hit", 1, "the scanner's oldest read is due");
    let issue = b.w(
        "scan_issue",
        1,
        "the scanner reads an address this cycle",
        init.q.expr().logic_not().logic_and(pending.q.expr().logic_not()).logic_and(hit.expr().logic_not()),
    );
    let timer_rd = b.m.mem_read(&timer, "timer_rd", &issue, &scan_addr.q);
    let timer_q = pipe(&mut b, "timer_pipe", TIMER_BITS, timer_rd);
    let (s_rd_valid, s_rd_ready) = (port("s_rd_valid"), port("s_rd_ready"));
    let rinflight_sum =
        rstages.iter().map(|s| zext(&s.valid.q, fb + 1)).reduce(|a, c| a + c).expect("at least one stage");
    let rinflight = b.w("rd_inflight", fb + 1, "reads in the pipeline", rinflight_sum);
    b.m.assign(
        &s_rd_ready,
        init.q.expr().logic_not().logic_and((rdq.count.q.expr() + &rinflight).lt(lit(fb + 1, u64::from(depth)))),
    );
    let rd_fire = b.w("rd_fire", 1, "read handshake", s_rd_valid.expr().logic_and(&s_rd_ready));
    for (name, f, fly) in [("upd", &upd, &inflight), ("rto", &rto_f, &inflight), ("rdq", &rdq, &rinflight)] {
        crate::formal::fifo_invariants(&mut b.m, name, depth, &f.count.q, &f.wr.q, &f.rd.q, Some(fly.expr()));
    }
    let view_q: Vec<Signal> = views
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let r = b.m.mem_read(v, &format!("view{i}_rd"), &rd_fire, port("s_rd_conn"));
            pipe(&mut b, &format!("view{i}_pipe"), VIEW_BITS, r)
        })
        .collect();

    // ---------------------------------------------------------------- execute: operands
    let ex = &stages[l as usize - 1];
    let exec_valid = ex.valid.q.clone();
    let mut ev: HashMap<&str, Signal> = HashMap::new();
    for &(name, lsb, w) in &evt {
        let s = b.w(&format!("ev_{name}"), w, "execute stage event field", ex.data.q.slice(lsb + w - 1, lsb));
        ev.insert(name, s);
    }
    let exec_addr =
        b.w("exec_addr", aw, "table address of the execute stage", addr_of(ev["conn"].expr(), ev["path"].expr()));
    b.m.comment("A read cannot see the writes of the READ_LATENCY cycles after it: take the newest matching one.");
    let mut chosen: Expr = table_q.expr();
    for (j, f) in fwds.iter().enumerate().rev() {
        let h = b.w(
            &format!("fw{j}_hit"),
            1,
            "this forwarding register holds the execute stage's entry",
            f.valid.q.expr().logic_and(f.addr.q.expr().eq(&exec_addr)),
        );
        chosen = mux(&h, &f.entry.q, chosen);
    }
    let cur = b.w("cur_entry", eb, "the entry before this event", chosen);
    let mut e: HashMap<&'static str, Signal> = HashMap::new();
    for f in entry_fields() {
        let (lsb, w) = field_pos(f.name);
        let s = b.w(&format!("e_{}", f.name), w, f.meaning, cur.slice(lsb + w - 1, lsb));
        e.insert(f.name, s);
    }
    let now = ev["now"].clone();
    let kd = |x: u8| ev["kind"].expr().eq(lit(4, u64::from(x)));
    let st = |x: u8| lit(2, u64::from(x));

    // Common terms.
    let e_armed = b.w(
        "e_armed",
        1,
        "the timer runs: inflight, a probe outstanding, or DEAD",
        e["inflight"]
            .expr()
            .ne(lit(9, 0))
            .logic_or(&e["probe_pending"])
            .logic_or(e["state"].expr().eq(st(model::DEAD))),
    );
    let e_active = b.w(
        "e_active",
        1,
        "GOOD or SKIP",
        e["state"].expr().eq(st(model::GOOD)).logic_or(e["state"].expr().eq(st(model::SKIP))),
    );
    let rto_e = b.rto("rto_e", e["srtt"].expr(), e["rttvar"].expr(), e["min_rtt"].expr(), k.rto_min, k.rto_max);
    let dl_rto_e = b.w("deadline_rto_e", 32, "now + RTO of the entry", now.expr() + &rto_e);
    let hold_reached = b.reached("hold_reached", &now, &e["hold_until"]);
    let dl_reached = b.reached("deadline_reached", &now, &e["rto_deadline"]);

    // ACK: RTT estimator.
    b.m.comment("ACK: RTT estimator (RFC 6298 with shifts).");
    let r = b.w("ack_rtt", 20, "the RTT sample", zext(&ev["rtt"], 20));
    let first = b.w("ack_first_rtt", 1, "no sample yet", e["min_rtt"].expr().eq(lit(20, u64::from(MIN_RTT_NONE))));
    let err = b.w(
        "ack_rtt_err",
        20,
        "|sample - srtt|",
        mux(r.expr().ge(&e["srtt"]), r.expr() - &e["srtt"], e["srtt"].expr() - &r),
    );
    let srtt_ew = b.ewma("srtt_ewma", 20, e["srtt"].expr(), r.expr(), k.srtt_shift);
    let rttvar_ew = b.ewma("rttvar_ewma", 20, zext(&e["rttvar"], 20), err.expr(), k.rttvar_shift);
    let rttvar_sat = b.w(
        "rttvar_ewma_sat",
        16,
        "saturated to 16 bits",
        mux(rttvar_ew.expr().gt(lit(20, 0xFFFF)), lit(16, 0xFFFF), rttvar_ew.slice(15, 0)),
    );
    let rttv = ev["rtt_valid"].clone();
    let a_srtt = b.w("ack_srtt", 20, "srtt after the sample", mux(&rttv, mux(&first, &r, &srtt_ew), &e["srtt"]));
    let a_rttvar = b.w(
        "ack_rttvar",
        16,
        "rttvar after the sample",
        mux(&rttv, mux(&first, zext(ev["rtt"].slice(15, 1), 16), &rttvar_sat), &e["rttvar"]),
    );
    let a_min = b.w(
        "ack_min_rtt",
        20,
        "min_rtt after the sample",
        mux(&rttv, mux(first.expr().logic_or(r.expr().lt(&e["min_rtt"])), &r, &e["min_rtt"]), &e["min_rtt"]),
    );

    // ACK: ECN fraction and EWMA.
    b.m.comment("ACK: ECN fraction through the reciprocal ROM, then its EWMA.");
    let pkts = ev["acked_pkts"].clone();
    let pkts_lo = b.w("ack_pkts_lo", 8, "low bits of the packet count (ROM address)", pkts.slice(7, 0));
    let recip_pkts_rom = b.recip_rom("recip_pkts_rom", &pkts_lo);
    let recip_pkts =
        b.w("recip_pkts", 17, "65536 / clamp(pkts, 1, 256)", mux(pkts.bit(8), lit(17, 256), &recip_pkts_rom));
    let ecn9 = zext(&ev["ecn_cnt"], 9);
    let marked = b.w("ack_marked", 9, "min(ecn_cnt, pkts)", mux(ecn9.clone().lt(&pkts), ecn9, &pkts));
    let frac_prod = b.w("ecn_frac_prod", 26, "marked * recip", zext(&marked, 26) * zext(&recip_pkts, 26));
    let frac_full = b.w("ecn_frac_full", 26, "marked * recip >> 8", frac_prod.expr() >> lit(4, 8));
    let frac = b.w(
        "ecn_frac",
        8,
        "marked fraction Q0.8, at most 255",
        mux(frac_full.expr().gt(lit(26, 255)), lit(8, 255), frac_full.slice(7, 0)),
    );
    let ecn_ew = b.ewma("ecn_ewma_new", 8, e["ecn_ewma"].expr(), frac.expr(), k.ecn_shift);
    let pkts_nz = b.w("ack_pkts_nz", 1, "packets were acknowledged", pkts.expr().ne(lit(9, 0)));
    let a_ecn = b.w("ack_ecn_ewma", 8, "ecn_ewma after the ACK", mux(&pkts_nz, &ecn_ew, &e["ecn_ewma"]));

    // ACK: AIMD.
    b.m.comment("ACK: AIMD. CE: cut by ecn_ewma/2 at most once per srtt; else one MTU per window of bytes.");
    let ce = b.w("ack_ce", 1, "CE marks reported", ev["ecn_cnt"].expr().ne(lit(8, 0)));
    let cut = b.w("ack_cut", 1, "the window is cut", ce.expr().logic_and(&hold_reached));
    let cut_prod = b.w("cut_prod", 28, "cwnd * ecn_ewma", zext(&e["cwnd"], 28) * zext(&a_ecn, 28));
    let cut_cwnd_raw =
        b.w("cut_cwnd_raw", 28, "cwnd - (cwnd * ecn_ewma >> 9)", zext(&e["cwnd"], 28) - (cut_prod.expr() >> lit(4, 9)));
    let cut_cwnd = b.w(
        "cut_cwnd",
        20,
        "cut window, at least min_cwnd",
        mux(
            cut_cwnd_raw.expr().lt(lit(28, u64::from(k.min_cwnd))),
            lit(20, u64::from(k.min_cwnd)),
            cut_cwnd_raw.slice(19, 0),
        ),
    );
    let srtt_floor = mux(a_srtt.expr().eq(lit(20, 0)), lit(32, 1), zext(&a_srtt, 32));
    let cut_hold = b.w("cut_hold", 32, "now + max(srtt, 1)", now.expr() + srtt_floor);
    let ab_sum = b.w("ab_sum", 25, "acked_bytes + bytes", zext(&e["acked_bytes"], 25) + zext(&ev["acked_bytes"], 25));
    let ab_sat =
        b.w("ab_sat", 24, "saturated to 24 bits", mux(ab_sum.bit(24), lit(24, 0xFF_FFFF), ab_sum.slice(23, 0)));
    let grow = b.w("ack_grow", 1, "a window of bytes was acknowledged", ab_sat.expr().ge(zext(&e["cwnd"], 24)));
    let ab_left = b.w("ab_left", 24, "bytes past the window", ab_sat.expr() - zext(&e["cwnd"], 24));
    let grow_sum = b.w("grow_sum", 21, "cwnd + MTU", zext(&e["cwnd"], 21) + lit(21, u64::from(k.mtu)));
    let grow_cwnd = b.w(
        "grow_cwnd",
        20,
        "cwnd + MTU, at most max_cwnd",
        mux(grow_sum.expr().gt(lit(21, u64::from(k.max_cwnd))), lit(20, u64::from(k.max_cwnd)), grow_sum.slice(19, 0)),
    );
    let a_cwnd = b.w(
        "ack_cwnd",
        20,
        "cwnd after the ACK",
        mux(&ce, mux(&cut, &cut_cwnd, &e["cwnd"]), mux(&grow, &grow_cwnd, &e["cwnd"])),
    );
    let a_ab = b.w(
        "ack_acked_bytes",
        24,
        "acked_bytes after the ACK",
        mux(&ce, mux(&cut, lit(24, 0), &e["acked_bytes"]), mux(&grow, &ab_left, &ab_sat)),
    );
    let a_hold = b.w("ack_hold_until", 32, "hold_until after the ACK", mux(&cut, &cut_hold, &e["hold_until"]));
    let a_state = b.w(
        "ack_state",
        2,
        "GOOD becomes SKIP on a cut",
        mux(cut.expr().logic_and(e["state"].expr().eq(st(model::GOOD))), st(model::SKIP), &e["state"]),
    );
    let rto_a = b.rto("rto_ack", a_srtt.expr(), a_rttvar.expr(), a_min.expr(), k.rto_min, k.rto_max);
    let seq_d = b.w("ack_seq_dist", 32, "acked_seq - stored acked_seq", ev["acked_seq"].expr() - &e["acked_seq"]);
    let seq_adv = b.w(
        "ack_seq_ahead",
        1,
        "the SACK acknowledges a later transmission",
        seq_d.bit(31).logic_not().logic_and(seq_d.expr().ne(lit(32, 0))),
    );

    // Weight unit.
    b.m.comment("Weight: cwnd / srtt scaled to 8 bits through the reciprocal ROM on srtt's 8-bit mantissa.");
    let ws = b.w("wt_srtt", 20, "max(srtt, 1)", mux(a_srtt.expr().eq(lit(20, 0)), lit(20, 1), &a_srtt));
    let mut exp = lit(4, 0);
    for bit in 8..20u32 {
        exp = mux(ws.bit(bit), lit(4, u64::from(bit - 7)), exp);
    }
    let wexp = b.w("wt_exp", 4, "bit length of srtt minus 8, at least 0", exp);
    let wm_full = b.w("wt_mant_full", 20, "srtt >> exp", ws.expr() >> &wexp);
    let wm = b.w(
        "wt_mant",
        8,
        "8-bit mantissa (srtt >> exp is below 256; saturate anyway)",
        mux(wm_full.expr().gt(lit(20, 255)), lit(8, 255), wm_full.slice(7, 0)),
    );
    let recip_m = b.recip_rom("recip_mant_rom", &wm);
    let wprod = b.w("wt_prod", 37, "cwnd * recip(mantissa)", zext(&a_cwnd, 37) * zext(&recip_m, 37));
    let wshift = b.w("wt_shift", 6, "8 + exp + weight shift", zext(&wexp, 6) + lit(6, u64::from(8 + k.weight_shift)));
    let wrate = b.w("wt_rate", 37, "rate >> weight shift", wprod.expr() >> &wshift);
    let a_weight = b.w(
        "ack_weight",
        8,
        "weight, clamped to 1..=255",
        mux(wrate.expr().gt(lit(37, 255)), lit(8, 255), mux(wrate.expr().eq(lit(37, 0)), lit(8, 1), wrate.slice(7, 0))),
    );

    // Timeouts.
    b.m.comment("Timeouts: state after the SKIP expiry (TICK, TIMER), fire condition, fresh port.");
    let tick_kind = b.w("tick_kind", 1, "TICK or TIMER", kd(kind::TICK).logic_or(kd(kind::TIMER)));
    let st1 = b.w(
        "ticked_state",
        2,
        "state after the SKIP expiry check",
        mux(
            tick_kind.expr().logic_and(e["state"].expr().eq(st(model::SKIP))).logic_and(&hold_reached),
            st(model::GOOD),
            &e["state"],
        ),
    );
    let fire = b.w(
        "fire",
        1,
        "a timeout is applied",
        kd(kind::TIMEOUT)
            .logic_or(kd(kind::TIMER).logic_and(&e_armed).logic_and(&dl_reached))
            .logic_or(kd(kind::SILENT).logic_and(e["state"].expr().eq(st(model::GOOD)))),
    );
    let lfsr_port = b.w("lfsr_port", 16, "0xC000 | lfsr[13:0]", cat(&[lit(2, 3), lfsr.q.slice(13, 0)]));
    let lfsr_fresh = b.w(
        "lfsr_fresh",
        16,
        "the LFSR port, bit 0 flipped if it is the old port",
        lfsr_port.expr() ^ zext(lfsr_port.expr().eq(&e["sport"]), 16),
    );
    let fresh =
        b.w("fresh_sport", 16, "the port a re-entropy moves to", mux(kd(kind::TIMEOUT), &ev["sport"], &lfsr_fresh));
    let retries_inc = b.w(
        "retries_inc",
        4,
        "retries + 1, saturating",
        mux(e["retries"].expr().eq(lit(4, 15)), lit(4, 15), e["retries"].expr() + lit(4, 1)),
    );
    let probes_inc = b.w(
        "probes_inc",
        4,
        "probes_ok + 1, saturating",
        mux(e["probes_ok"].expr().eq(lit(4, 15)), lit(4, 15), e["probes_ok"].expr() + lit(4, 1)),
    );

    // ---------------------------------------------------------------- execute: next entry
    let mut n: HashMap<&'static str, Signal> = HashMap::new();
    for f in entry_fields() {
        let s = b.m.wire(&format!("n_{}", f.name), f.width, &format!("{} after the event", f.name));
        n.insert(f.name, s);
    }
    let act = b.m.wire("ex_act", 4, "action bits: probe, all_lost, died, recovered");
    let clr = b.m.wire("ex_clr", 1, "the deficit restarts");
    let fired = b.m.wire("ex_fired", 1, "a timeout was applied");
    let a = |bits: u8| lit(4, u64::from(bits));
    use model::act as A;
    let mut body: Vec<Stmt> = entry_fields().iter().map(|f| set(&n[f.name], &e[f.name])).collect();
    body.push(set(&act, a(0)));
    body.push(set(&clr, lit(1, 0)));
    body.push(set(&fired, lit(1, 0)));
    let ns = |name: &str, v: Expr| set(&n[name], v);
    let inc32 = |s: &Signal| s.expr() + lit(32, 1);
    // OPEN.
    let open_srtt = k.open_srtt();
    let mut open = Vec::new();
    for f in entry_fields() {
        let v = match f.name {
            "sport" => ev["sport"].expr(),
            "plane" => ev["plane"].expr(),
            "next_psn" | "cum_acked" => ev["cum_acked"].expr(),
            "cwnd" => lit(20, u64::from(k.init_cwnd)),
            "srtt" => lit(20, u64::from(open_srtt)),
            "rttvar" => lit(16, u64::from((open_srtt / 2).min(0xFFFF))),
            "min_rtt" => lit(20, u64::from(MIN_RTT_NONE)),
            "weight" => lit(8, u64::from(k.open_weight())),
            _ => lit(f.width, 0),
        };
        open.push(set(&n[f.name], v));
    }
    open.push(set(&clr, lit(1, 1)));
    // SEND / RETX: the RTO starts if the timer was not running.
    let start_rto = if_then(e_armed.expr().logic_not(), vec![ns("rto_deadline", dl_rto_e.expr())]);
    let send = vec![
        ns("next_psn", e["next_psn"].expr() + lit(24, 1)),
        ns("inflight", mux(e["inflight"].expr().eq(lit(9, 511)), lit(9, 511), e["inflight"].expr() + lit(9, 1))),
        ns("tx_seq", inc32(&e["tx_seq"])),
        start_rto.clone(),
    ];
    let retx = vec![ns("tx_seq", inc32(&e["tx_seq"])), start_rto.clone()];
    // RESUME: a RETX that counts the packet RNR held in inflight again.
    let inflight_inc = mux(e["inflight"].expr().eq(lit(9, 511)), lit(9, 511), e["inflight"].expr() + lit(9, 1));
    let resume = vec![ns("inflight", inflight_inc), ns("tx_seq", inc32(&e["tx_seq"])), start_rto];
    let probe_sent = vec![
        ns("probe_pending", lit(1, 1)),
        ns("probe_ts", now.slice(15, 0)),
        ns("probe_seq", e["tx_seq"].expr()),
        ns("tx_seq", inc32(&e["tx_seq"])),
        ns(
            "rto_deadline",
            mux(
                e["state"].expr().eq(st(model::DEAD)),
                now.expr() + lit(32, u64::from(k.dead_probe_interval)),
                &dl_rto_e,
            ),
        ),
    ];
    // ACK_STEER: the same update, but a CE cut leaves the path GOOD (and a
    // SKIP one is GOOD again): CE steering.
    let steered = mux(a_state.expr().eq(st(model::SKIP)), st(model::GOOD), &a_state);
    let ack_with = |state: Expr| {
        vec![
            ns("cum_acked", ev["cum_acked"].expr()),
            ns("inflight", mux(e["inflight"].expr().gt(&pkts), e["inflight"].expr() - &pkts, lit(9, 0))),
            if_then(&seq_adv, vec![ns("acked_seq", ev["acked_seq"].expr())]),
            ns("srtt", a_srtt.expr()),
            ns("rttvar", a_rttvar.expr()),
            ns("min_rtt", a_min.expr()),
            ns("ecn_ewma", a_ecn.expr()),
            ns("cwnd", a_cwnd.expr()),
            ns("acked_bytes", a_ab.expr()),
            ns("hold_until", a_hold.expr()),
            ns("state", state),
            if_then(
                &pkts_nz,
                vec![if_then(&e_active, vec![ns("retries", lit(4, 0))]), ns("rto_deadline", now.expr() + &rto_a)],
            ),
            ns("weight", a_weight.expr()),
        ]
    };
    // PROBE_REPLY: probes_ok counts (DEAD restarts at 1); enough -> GOOD.
    let pok = b.w(
        "reply_probes",
        4,
        "probes_ok after this reply (SUSPECT/DEAD)",
        mux(e["state"].expr().eq(st(model::DEAD)), lit(4, 1), &probes_inc),
    );
    let recovered =
        b.w("reply_recovers", 1, "enough clean probes", pok.expr().ge(lit(4, u64::from(k.good_after_probes))));
    let not_active = e_active.expr().logic_not();
    let reply_armed = e["inflight"].expr().ne(lit(9, 0));
    let probe_reply = vec![
        ns("probe_pending", lit(1, 0)),
        if_else(
            not_active.clone(),
            vec![
                ns("retries", lit(4, 0)),
                if_else(
                    &recovered,
                    vec![
                        ns("state", st(model::GOOD)),
                        ns("probes_ok", lit(4, 0)),
                        ns("deficit", lit(16, 0)),
                        set(&act, a(A::RECOVERED)),
                        set(&clr, lit(1, 1)),
                        if_then(reply_armed.clone(), vec![ns("rto_deadline", dl_rto_e.expr())]),
                    ],
                    vec![ns("state", st(model::SUSPECT)), ns("probes_ok", pok.expr()), set(&act, a(A::PROBE))],
                ),
            ],
            // GOOD/SKIP: unchanged; the RTO restarts if the timer runs (a
            // DEAD state cannot remain here, so inflight decides).
            vec![if_then(reply_armed, vec![ns("rto_deadline", dl_rto_e.expr())])],
        ),
    ];
    let nack = vec![if_then(&e_active, vec![ns("retries", lit(4, 0)), ns("rto_deadline", dl_rto_e.expr())])];
    // RNR: a NACK, and the packet it holds leaves inflight (so it does not
    // hold the path's timer through its back-off).
    let mut rnr = nack.clone();
    rnr.push(ns("inflight", mux(e["inflight"].expr().eq(lit(9, 0)), lit(9, 0), e["inflight"].expr() - lit(9, 1))));
    // Timeout on the ticked state. Every branch that asks for a PROBE
    // restarts the RTO (its srtt, rttvar and min_rtt are the entry's). (The
    // reference's "no probe and timer idle -> restart the RTO" cannot
    // happen: the only branch without a probe leaves the path DEAD, whose
    // timer always runs.)
    let reentropy = |v: &mut Vec<Stmt>| {
        v.push(ns("sport", fresh.expr()));
        v.push(ns("gen", e["gen"].expr() + lit(8, 1)));
    };
    let mut to_suspect = vec![
        ns("state", st(model::SUSPECT)),
        ns("retries", lit(4, 0)),
        ns("probes_ok", lit(4, 0)),
        ns("deficit", lit(16, 0)),
        set(&act, a(A::ALL_LOST | A::PROBE)),
        set(&clr, lit(1, 1)),
        ns("rto_deadline", dl_rto_e.expr()),
    ];
    reentropy(&mut to_suspect);
    let mut suspect_again = vec![
        ns("retries", retries_inc.expr()),
        set(&act, a(A::ALL_LOST | A::PROBE)),
        ns("rto_deadline", dl_rto_e.expr()),
    ];
    reentropy(&mut suspect_again);
    let mut dead_again = vec![set(&act, a(A::ALL_LOST | A::PROBE)), ns("rto_deadline", dl_rto_e.expr())];
    reentropy(&mut dead_again);
    let timeout_body = vec![
        set(&fired, lit(1, 1)),
        ns("probe_pending", lit(1, 0)),
        case(
            &st1,
            vec![
                (
                    vec![st(model::GOOD), st(model::SKIP)],
                    vec![if_else(
                        retries_inc.expr().ge(lit(4, u64::from(k.suspect_after_rtos))),
                        to_suspect,
                        vec![
                            ns("retries", retries_inc.expr()),
                            set(&act, a(A::PROBE)),
                            ns("rto_deadline", dl_rto_e.expr()),
                        ],
                    )],
                ),
                (
                    vec![st(model::SUSPECT)],
                    vec![
                        ns("probes_ok", lit(4, 0)),
                        if_else(
                            retries_inc.expr().ge(lit(4, u64::from(k.dead_after_failures))),
                            vec![
                                ns("state", st(model::DEAD)),
                                ns("retries", lit(4, 0)),
                                set(&act, a(A::ALL_LOST | A::DIED)),
                                ns("rto_deadline", now.expr() + lit(32, u64::from(k.dead_probe_interval))),
                            ],
                            suspect_again,
                        ),
                    ],
                ),
                (vec![st(model::DEAD)], dead_again),
            ],
            None,
        ),
    ];
    // SILENT shares the arm: its ticked state is the entry's own.
    let tick = vec![ns("state", st1.expr()), if_then(&fire, timeout_body.clone())];
    let arms = vec![
        (vec![lit(4, u64::from(kind::OPEN))], open),
        (vec![lit(4, u64::from(kind::SEND))], send),
        (vec![lit(4, u64::from(kind::RETX))], retx),
        (vec![lit(4, u64::from(kind::PROBE_SENT))], probe_sent),
        (vec![lit(4, u64::from(kind::ACK))], ack_with(a_state.expr())),
        (vec![lit(4, u64::from(kind::ACK_STEER))], ack_with(steered)),
        (vec![lit(4, u64::from(kind::PROBE_REPLY))], probe_reply),
        (vec![lit(4, u64::from(kind::NACK))], nack),
        (vec![lit(4, u64::from(kind::RNR))], rnr),
        (vec![lit(4, u64::from(kind::RESUME))], resume),
        (vec![lit(4, u64::from(kind::TIMEOUT))], timeout_body),
        (vec![lit(4, u64::from(kind::TICK)), lit(4, u64::from(kind::TIMER)), lit(4, u64::from(kind::SILENT))], tick),
    ];
    body.push(case(&ev["kind"], arms, Some(Vec::new())));
    b.m.comb(body);

    let new_entry = b.w(
        "new_entry",
        eb,
        "the entry after the event, packed",
        cat(&entry_fields().iter().rev().map(|f| n[f.name].expr()).collect::<Vec<_>>()),
    );
    let emit_upd = b.w(
        "emit_upd",
        1,
        "an m_upd record is due",
        kd(kind::OPEN)
            .logic_or(n["state"].expr().ne(&e["state"]))
            .logic_or(n["weight"].expr().ne(&e["weight"]))
            .logic_or(&clr)
            .logic_or(act.expr().ne(a(0))),
    );
    let n_armed = b.w(
        "n_armed",
        1,
        "the new entry's timer runs",
        n["inflight"]
            .expr()
            .ne(lit(9, 0))
            .logic_or(&n["probe_pending"])
            .logic_or(n["state"].expr().eq(st(model::DEAD))),
    );
    let timer_word = b.w(
        "timer_word",
        TIMER_BITS,
        "{hold_until, skip, rto_deadline, armed} of the new entry",
        cat(&[n["hold_until"].expr(), n["state"].expr().eq(st(model::SKIP)), n["rto_deadline"].expr(), n_armed.expr()]),
    );
    let view_word = b.w(
        "view_word",
        VIEW_BITS,
        "{weight, cwnd, inflight, state} of the new entry",
        cat(&[n["weight"].expr(), n["cwnd"].expr(), n["inflight"].expr(), n["state"].expr()]),
    );

    // ---------------------------------------------------------------- writes
    let wen = init.q.expr().logic_or(&exec_valid);
    let waddr = b.w("write_addr", aw, "table address written", mux(&init.q, &init_addr.q, &exec_addr));
    b.m.mem_write(&table, wen.clone(), &waddr, mux(&init.q, lit(eb, 0), &new_entry));
    b.m.mem_write(&timer, wen, &waddr, mux(&init.q, lit(TIMER_BITS, 0), &timer_word));
    let init_conn = b.w("init_conn", cw, "connection the sweep zeroes", init_addr.q.slice(aw - 1, aw - cw));
    for (i, v) in views.iter().enumerate() {
        let mine = if paths == 1 {
            exec_valid.expr()
        } else {
            exec_valid.expr().logic_and(ev["path"].expr().eq(lit(pw, i as u64)))
        };
        b.m.mem_write(
            v,
            init.q.expr().logic_or(mine),
            mux(&init.q, &init_conn, &ev["conn"]),
            mux(&init.q, lit(VIEW_BITS, 0), &view_word),
        );
    }

    // ---------------------------------------------------------------- properties
    // No lost update: every event executes on the entry as stored now (all
    // earlier events' write-backs included, the last READ_LATENCY of them
    // through forwarding), and writes its result back. The stored word is
    // read by a formal-only peek, so this holds for any table contents.
    let mut busy = pending.q.expr();
    for s in stages.iter().chain(&sstages).chain(&rstages) {
        busy = busy.logic_or(&s.valid.q);
    }
    for f in &fwds {
        busy = busy.logic_or(&f.valid.q);
    }
    crate::formal::table_rmw(&mut b.m, "table", &table, &exec_valid, exec_addr.expr(), cur.expr(), &init.q, busy);
    // The path state machine (docs/spec.md 5.2, 5.3): per event kind, the
    // states an entry may move to.
    let (g, sk, su, de) = (model::GOOD, model::SKIP, model::SUSPECT, model::DEAD);
    let allowed = |k: u8, old: u8| -> Vec<u8> {
        match k {
            kind::OPEN => vec![g],
            kind::ACK if old == g => vec![g, sk],
            kind::ACK_STEER if old == sk => vec![g],
            kind::PROBE_REPLY if old == su || old == de => vec![su, g],
            kind::TIMEOUT | kind::TIMER | kind::SILENT if old == g => vec![g, su],
            kind::TIMEOUT if old == sk => vec![sk, su],
            kind::TIMER if old == sk => vec![sk, g, su],
            kind::TIMEOUT | kind::TIMER if old == su => vec![su, de],
            kind::TICK if old == sk => vec![sk, g],
            _ => vec![old],
        }
    };
    let mut legal = lit(1, 0);
    for k in 0..16u8 {
        for old in [g, sk, su, de] {
            let to = allowed(k, old).into_iter().map(|t| n["state"].expr().eq(st(t))).reduce(|a, c| a.logic_or(c));
            let here = ev["kind"].expr().eq(lit(4, u64::from(k))).logic_and(e["state"].expr().eq(st(old)));
            legal = legal.logic_or(here.logic_and(to.expect("a state")));
        }
    }
    b.m.assert(
        "a_state_transition",
        "an event moves a path only along docs/spec.md's state machine: OPEN to GOOD; ACK with a CE cut GOOD to \
         SKIP (ACK_STEER: never to SKIP, SKIP to GOOD); TICK/TIMER SKIP to GOOD after the hold; TIMEOUT/TIMER GOOD/SKIP (SILENT GOOD) to SUSPECT after \
         the RTOs, SUSPECT to DEAD after the failures; PROBE_REPLY SUSPECT/DEAD to SUSPECT or GOOD; any other change is illegal",
        crate::formal::implies(&exec_valid, legal),
    );
    let ex_at = |k: u8| exec_valid.expr().logic_and(kd(k));
    for (k, name) in [
        (kind::OPEN, "open"),
        (kind::SEND, "send"),
        (kind::RETX, "retx"),
        (kind::PROBE_SENT, "probe_sent"),
        (kind::ACK, "ack"),
        (kind::ACK_STEER, "ack_steer"),
        (kind::PROBE_REPLY, "probe_reply"),
        (kind::NACK, "nack"),
        (kind::RNR, "rnr"),
        (kind::RESUME, "resume"),
        (kind::TIMEOUT, "timeout"),
        (kind::TICK, "tick"),
        (kind::SILENT, "silent"),
    ] {
        b.m.cover(&format!("c_exec_{name}"), &format!("a {} event executes", name.to_uppercase()), ex_at(k));
    }
    b.m.cover(
        "c_back_to_back",
        "an event executes on an entry the previous cycle's event wrote (forwarding in use)",
        exec_valid.expr().logic_and(&fwds[0].valid.q).logic_and(fwds[0].addr.q.expr().eq(&exec_addr)),
    );
    b.m.cover(
        "c_good_to_skip",
        "a CE cut moves a path from GOOD to SKIP",
        ex_at(kind::ACK).logic_and(e["state"].expr().eq(st(g))).logic_and(n["state"].expr().eq(st(sk))),
    );
    b.m.cover(
        "c_suspect",
        "timeouts move a path from GOOD to SUSPECT",
        exec_valid.expr().logic_and(e["state"].expr().eq(st(g))).logic_and(n["state"].expr().eq(st(su))),
    );

    let f_seen = b.m.formal_wire("f_seen_exec", 1, "an event has executed since reset");
    b.m.formal_seq(vec![if_else(
        &rst,
        vec![set(&f_seen, lit(1, 0))],
        vec![if_then(&exec_valid, vec![set(&f_seen, lit(1, 1))])],
    )]);
    let mut idle = f_seen.expr().logic_and(pending.q.expr().logic_not());
    for s in stages.iter().chain(&rstages) {
        idle = idle.logic_and(s.valid.q.expr().logic_not());
    }
    for f in [&upd, &rto_f, &rdq] {
        idle = idle.logic_and(f.count.q.expr().eq(lit(fb + 1, 0)));
    }
    b.m.cover("c_drained", "after events have executed, the pipeline and every FIFO drain empty", idle);

    // ---------------------------------------------------------------- sequencing
    b.m.next(if_then(
        &init.q,
        vec![
            set(&init_addr.next, init_addr.q.expr() + lit(aw, 1)),
            if_then(init_addr.q.expr().eq(lit(aw, u64::from(p.entries() - 1))), vec![set(&init.next, lit(1, 0))]),
        ],
    ));
    b.m.next(set(&stages[0].valid.next, &new_valid));
    b.m.next(set(&stages[0].data.next, &new_evt));
    for j in 1..stages.len() {
        b.m.next(set(&stages[j].valid.next, &stages[j - 1].valid.q));
        b.m.next(set(&stages[j].data.next, &stages[j - 1].data.q));
    }
    b.m.next(set(&fwds[0].valid.next, &exec_valid));
    b.m.next(set(&fwds[0].addr.next, &exec_addr));
    b.m.next(set(&fwds[0].entry.next, &new_entry));
    for j in 1..fwds.len() {
        b.m.next(set(&fwds[j].valid.next, &fwds[j - 1].valid.q));
        b.m.next(set(&fwds[j].addr.next, &fwds[j - 1].addr.q));
        b.m.next(set(&fwds[j].entry.next, &fwds[j - 1].entry.q));
    }
    let lfsr_next = b.w(
        "lfsr_step",
        16,
        "one Galois step",
        mux(lfsr.q.bit(0), (lfsr.q.expr() >> lit(1, 1)) ^ lit(16, u64::from(LFSR_TAPS)), lfsr.q.expr() >> lit(1, 1)),
    );
    b.m.next(if_then(
        exec_valid.expr().logic_and(kd(kind::TIMER).logic_or(kd(kind::SILENT))).logic_and(&fired),
        vec![set(&lfsr.next, &lfsr_next)],
    ));

    // Scanner.
    let sl = &sstages[l as usize - 1];
    let tw = timer_q.clone();
    let t_armed_due = b.reached("scan_deadline_reached", &ts_now, tw.slice(32, 1));
    let t_hold_due = b.reached("scan_hold_reached", &ts_now, tw.slice(65, 34));
    b.m.assign(
        &hit,
        init.q
            .expr()
            .logic_not()
            .logic_and(&sl.valid.q)
            .logic_and(tw.bit(0).logic_and(&t_armed_due).logic_or(tw.bit(33).logic_and(&t_hold_due))),
    );
    b.m.next(if_then(&inject, vec![set(&pending.next, lit(1, 0))]));
    let mut shift = vec![
        set(&sstages[0].valid.next, &issue),
        set(&sstages[0].data.next, &scan_addr.q),
        if_then(&issue, vec![set(&scan_addr.next, scan_addr.q.expr() + lit(aw, 1))]),
    ];
    for j in 1..sstages.len() {
        shift.push(set(&sstages[j].valid.next, &sstages[j - 1].valid.q));
        shift.push(set(&sstages[j].data.next, &sstages[j - 1].data.q));
    }
    let mut on_hit = vec![
        set(&pending.next, lit(1, 1)),
        set(&pending_addr.next, &sl.data.q),
        set(&scan_addr.next, sl.data.q.expr() + lit(aw, 1)),
    ];
    for s in &sstages {
        on_hit.push(set(&s.valid.next, lit(1, 0)));
    }
    b.m.next(if_else(&hit, on_hit, vec![if_then(init.q.expr().logic_not(), shift)]));

    // Read port stages.
    b.m.next(set(&rstages[0].valid.next, &rd_fire));
    b.m.next(set(&rstages[0].data.next, port("s_rd_conn")));
    for j in 1..rstages.len() {
        b.m.next(set(&rstages[j].valid.next, &rstages[j - 1].valid.q));
        b.m.next(set(&rstages[j].data.next, &rstages[j - 1].data.q));
    }

    // ---------------------------------------------------------------- FIFOs
    let fifo_logic =
        |b: &mut B, f: &Fifo, name: &str, push: Expr, entry: Expr, valid: &Signal, ready: &Signal| -> Signal {
            let pop = b.w(&format!("{name}_pop"), 1, "head handshake", valid.expr().logic_and(ready));
            let push = b.w(&format!("{name}_push"), 1, "a record enters", push);
            let ent = b.w(&format!("{name}_entry"), f.width, "the record entering", entry);
            b.m.next(if_then(
                &push,
                vec![
                    case(
                        &f.wr.q,
                        (0..depth)
                            .map(|j| (vec![lit(fb, u64::from(j))], vec![set(&f.slots[j as usize].next, &ent)]))
                            .collect(),
                        None,
                    ),
                    set(&f.wr.next, f.wr.q.expr() + lit(fb, 1)),
                ],
            ));
            b.m.next(if_then(&pop, vec![set(&f.rd.next, f.rd.q.expr() + lit(fb, 1))]));
            b.m.next(if_then(
                push.expr().logic_and(pop.expr().logic_not()),
                vec![set(&f.count.next, f.count.q.expr() + lit(fb + 1, 1))],
            ));
            b.m.next(if_then(
                pop.expr().logic_and(push.expr().logic_not()),
                vec![set(&f.count.next, f.count.q.expr() - lit(fb + 1, 1))],
            ));
            let head = b.m.wire(&format!("{name}_head"), f.width, "the FIFO's head record");
            b.m.comb(vec![case(
                &f.rd.q,
                (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&head, &f.slots[j as usize].q)])).collect(),
                None,
            )]);
            b.m.assign(valid, f.count.q.expr().ne(lit(fb + 1, 0)));
            head
        };
    let upd_entry =
        cat(&[ev["conn"].expr(), ev["path"].expr(), n["state"].expr(), n["weight"].expr(), clr.expr(), act.expr()]);
    let (uv, ur) = (port("m_upd_valid"), port("m_upd_ready"));
    let uh = fifo_logic(&mut b, &upd, "upd", exec_valid.expr().logic_and(&emit_upd), upd_entry, &uv, &ur);
    let mut at = 0;
    for (name, w) in [("act", 4), ("clr", 1), ("weight", 8), ("state", 2), ("path", pw), ("conn", cw)] {
        b.m.assign(port(&format!("m_upd_{name}")), uh.slice(at + w - 1, at));
        at += w;
    }
    let rto_entry =
        cat(&[ev["conn"].expr(), ev["path"].expr(), n["state"].expr(), n["sport"].expr(), n["gen"].expr(), act.expr()]);
    let (tv, tr) = (port("m_rto_valid"), port("m_rto_ready"));
    let th = fifo_logic(&mut b, &rto_f, "rto", exec_valid.expr().logic_and(&fired), rto_entry, &tv, &tr);
    let mut at = 0;
    for (name, w) in [("act", 4), ("gen", 8), ("sport", 16), ("state", 2), ("path", pw), ("conn", cw)] {
        b.m.assign(port(&format!("m_rto_{name}")), th.slice(at + w - 1, at));
        at += w;
    }
    let rl = &rstages[l as usize - 1];
    let mut rd_parts = vec![rl.data.q.expr()];
    rd_parts.extend(view_q.iter().rev().map(Signal::expr));
    let (dv, dr) = (port("m_rd_valid"), port("m_rd_ready"));
    let dh = fifo_logic(&mut b, &rdq, "rdq", rl.valid.q.expr(), cat(&rd_parts), &dv, &dr);
    b.m.assign(port("m_rd_conn"), dh.slice(rdq_w - 1, rdq_w - cw));
    let views_head =
        b.w("rdq_views", paths * VIEW_BITS, "the head's view words, path 0 lowest", dh.slice(paths * VIEW_BITS - 1, 0));
    let mut fields: [(Vec<Expr>, &str); 4] =
        [(Vec::new(), "state"), (Vec::new(), "inflight"), (Vec::new(), "cwnd"), (Vec::new(), "weight")];
    let widths = [(0u32, 2u32), (2, 9), (11, 20), (31, 8)];
    for i in (0..paths).rev() {
        for (fi, (lo, w)) in widths.iter().enumerate() {
            let base = i * VIEW_BITS;
            fields[fi].0.push(views_head.slice(base + lo + w - 1, base + lo));
        }
    }
    for (parts, name) in fields {
        b.m.assign(port(&format!("m_rd_{name}")), cat(&parts));
    }
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut b.m, &rst);
    b.m
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): the covers on the proof configuration's table
/// ([`crate::proof::COVER_CONNECTIONS`]), whose clear sweep takes 8 cycles
/// instead of 64.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{cover_on_proof_config, prove_table_and_cover, COVER_CONNECTIONS};
    cover_on_proof_config(prove_table_and_cover(asserts, 2, 24), COVER_CONNECTIONS, 24)
}
