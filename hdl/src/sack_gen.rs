//! `sack_gen` RTL: the generator of the cycle model
//! [`mrnic_model::sack_gen`], with the same ports (the model's [`PortDef`](mrnic_model::block::PortDef)
//! list plus `clk`) and the same cycle timing. The model's doc comment is the
//! specification: checks in the reference's order, latency `L + 1`, one
//! packet per cycle, forwarding, output FIFOs and the clear sweep.
//!
//! Structure, in pipeline order:
//! - `pkt_fire` addresses the receive-state memory (`rx_state_mem`, block
//!   RAM, registered read; with `READ_LATENCY = 2` a second register) at
//!   `{conn, path}` and loads stage `p1` (the whole beat as one vector);
//! - update stage `pL`: the entry from the newest matching forwarding
//!   register or the memory; generation, ECN, psn distance, duplicate bit,
//!   the new bit (`1 << (d - 1)`) or the advance (a trailing-ones tree over
//!   the bitmap and one right shift by `ones + 1`), counts and the SACK
//!   rules; written back and pushed into the FIFOs;
//! - three output FIFOs (`m_sack`, `m_nack`, `m_new`), payload zero while
//!   empty; `stat_*` pulses registered from the update stage.

use std::collections::HashMap;

use mrnic_model::block::Dir as ModelDir;
use mrnic_model::sack_gen::{
    self as model, ParamError, SackGenParams, NACK_BAD_HDR, PROBE_ANSWERS_PER_RTO_MIN, PROBE_COUNT_BITS, PSN_BITS,
};
use mrnic_proto::Config;

use crate::expr::{cat, lit, mux, zext, Expr, Signal};
use crate::ir::{case, if_then, set, MemStyle, Module};
use crate::param::ParamExpr;
use crate::{CheckErrors, Header};

/// Why a block could not be generated for a config.
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

/// The `sack_gen` module for `cfg`, design-rule checked.
pub fn generate(cfg: &Config) -> Result<Module, GenError> {
    let p = SackGenParams::from_config(cfg)?;
    let m = build(&p);
    m.check()?;
    Ok(m)
}

/// The module printed as Verilog, with [`header`].
pub fn verilog(cfg: &Config) -> Result<String, GenError> {
    Ok(generate(cfg)?.to_verilog(&header(cfg))?)
}

/// A FIFO of `depth` registers; returns (valid, head payload zeroed while
/// empty, count). Its formal invariants bound the count by the slots; a
/// block whose ready check lets entries in flight towards it uses
/// [`fifo_in_flight`] so the bound counts them too.
pub(crate) fn fifo(
    m: &mut Module,
    name: &str,
    depth: u32,
    push: &Expr,
    pop: &Signal,
    entry: &Expr,
    width: u32,
) -> (Signal, Signal, Signal) {
    fifo_parts(m, name, depth, None, push, pop, entry, width).outputs()
}

/// A [`fifo`]'s registers, for properties that follow an entry through it
/// (its outputs are [`FifoParts::outputs`]).
pub(crate) struct FifoParts {
    /// The FIFO holds an entry.
    pub valid: Signal,
    /// The head entry, zero while empty.
    pub shown: Signal,
    pub count: Signal,
    pub wr: Signal,
    pub rd: Signal,
    /// The slots' registers, slot `j` at index `j`.
    pub slots: Vec<Signal>,
}

impl FifoParts {
    /// (valid, head entry zeroed while empty, count), as [`fifo`] returns.
    pub fn outputs(self) -> (Signal, Signal, Signal) {
        (self.valid, self.shown, self.count)
    }
}

/// [`fifo`] whose invariants count `inflight`: the entries that may still
/// be pushed after the ready check that let them in.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fifo_in_flight(
    m: &mut Module,
    name: &str,
    depth: u32,
    inflight: &Expr,
    push: &Expr,
    pop: &Signal,
    entry: &Expr,
    width: u32,
) -> (Signal, Signal, Signal) {
    fifo_parts(m, name, depth, Some(inflight), push, pop, entry, width).outputs()
}

/// [`fifo`] (or [`fifo_in_flight`] with `inflight`), returning its
/// registers too.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fifo_parts(
    m: &mut Module,
    name: &str,
    depth: u32,
    inflight: Option<&Expr>,
    push: &Expr,
    pop: &Signal,
    entry: &Expr,
    width: u32,
) -> FifoParts {
    let fb = depth.trailing_zeros();
    let count = m.reg(&format!("{name}_count"), fb + 1, 0, "entries in the FIFO");
    let wr = m.reg(&format!("{name}_wr"), fb, 0, "slot the next entry goes to");
    let rd = m.reg(&format!("{name}_rd"), fb, 0, "slot of the head entry");
    let slots: Vec<crate::Reg> =
        (0..depth).map(|j| m.reg_no_reset(&format!("{name}{j}"), width, "FIFO slot")).collect();
    m.next(if_then(
        push.clone(),
        vec![
            case(
                &wr.q,
                (0..depth)
                    .map(|j| (vec![lit(fb, u64::from(j))], vec![set(&slots[j as usize].next, entry.clone())]))
                    .collect(),
                None,
            ),
            set(&wr.next, wr.q.expr() + lit(fb, 1)),
        ],
    ));
    m.next(if_then(pop, vec![set(&rd.next, rd.q.expr() + lit(fb, 1))]));
    m.next(if_then(
        push.clone().logic_and(pop.expr().logic_not()),
        vec![set(&count.next, count.q.expr() + lit(fb + 1, 1))],
    ));
    m.next(if_then(
        pop.expr().logic_and(push.clone().logic_not()),
        vec![set(&count.next, count.q.expr() - lit(fb + 1, 1))],
    ));
    crate::formal::fifo_invariants(m, name, depth, &count.q, &wr.q, &rd.q, inflight.cloned());
    let head = m.wire(&format!("{name}_head"), width, "the FIFO's head entry");
    m.comb(vec![case(
        &rd.q,
        (0..depth).map(|j| (vec![lit(fb, u64::from(j))], vec![set(&head, &slots[j as usize].q)])).collect(),
        None,
    )]);
    let valid = m.wire(&format!("{name}_head_valid"), 1, "the FIFO holds an entry");
    m.assign(&valid, count.q.expr().ne(lit(fb + 1, 0)));
    let shown = m.wire(&format!("{name}_shown"), width, "the head entry, zero while the FIFO is empty");
    m.assign(&shown, mux(&valid, &head, lit(width, 0)));
    let slots = slots.into_iter().map(|r| r.q).collect();
    FifoParts { valid, shown, count: count.q, wr: wr.q, rd: rd.q, slots }
}

/// An output channel's fields: (name, width, comment).
type Fields = Vec<(&'static str, u32, &'static str)>;

fn build(p: &SackGenParams) -> Module {
    let l = p.read_latency;
    let (pb, bb) = (p.pkts_bits, p.bytes_bits);
    let ew = p.entry_bits();
    let depth = p.fifo_depth();
    let fb = depth.trailing_zeros();
    let ab = Config::index_bits(p.entries());

    let mut m = Module::new(model::NAME);
    m.describe("per-(connection, path) receive bitmaps and the SACK / NACK / new-bit decisions, one packet per cycle");
    let conns_p = m.param("CONNS", u64::from(p.conns), "connections (power of 2)");
    let paths_p = m.param("PATHS", u64::from(p.paths), "paths per connection (power of 2)");
    let lat_p = m.param("READ_LATENCY", u64::from(l), "receive-state memory read latency in cycles (1 or 2)");
    let pkts_p = m.param("SACK_PKTS", u64::from(p.sack_pkts), "a SACK at least every this many packets per path");
    let bytes_p = m.param("SACK_BYTES", u64::from(p.sack_bytes), "a SACK at least every this many bytes per path");
    let entries_p = m.localparam("ENTRIES", conns_p.expr() * paths_p.expr(), "receive-state entries: CONNS * PATHS");
    let fifo_p = m.localparam("FIFO_DEPTH", u64::from(depth), "output FIFO entries: power of 2 >= READ_LATENCY + 2");
    m.param_check(
        "sizes",
        conns_p
            .expr()
            .ge(2u32)
            .and(conns_p.expr().eq(ParamExpr::Const(1) << conns_p.expr().clog2()))
            .and(paths_p.expr().ge(1u32))
            .and(paths_p.expr().eq(ParamExpr::Const(1) << paths_p.expr().clog2())),
        "CONNS and PATHS must be powers of 2, CONNS at least 2",
    );
    m.param_check(
        "read_latency",
        lat_p.expr().ge(1u32).and(lat_p.expr().le(2u32)).and(fifo_p.expr().ge(lat_p.expr() + 2u32)),
        "READ_LATENCY must be 1 or 2, and FIFO_DEPTH at least READ_LATENCY + 2",
    );
    m.param_check(
        "sack_rules",
        pkts_p.expr().ge(1u32).and(bytes_p.expr().ge(1u32)),
        "SACK_PKTS and SACK_BYTES must be at least 1",
    );

    // Ports, from the model's list.
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
        let s = match d.dir {
            ModelDir::In => m.input(&d.name, d.width, &d.comment),
            ModelDir::Out => m.output(&d.name, d.width, &d.comment),
        };
        sig.insert(d.name.clone(), s);
    }
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    // The beat as one vector, fields in pkt_fields order, first field lowest.
    let pkt_fields = p.pkt_fields();
    let kw: u32 = pkt_fields.iter().map(|f| f.1).sum();
    let mut off = HashMap::new();
    let mut o = 0;
    for (n, w, _) in &pkt_fields {
        off.insert(*n, (o, *w));
        o += w;
    }
    let beat_in: Vec<Expr> = pkt_fields.iter().rev().map(|(n, _, _)| port(&format!("s_pkt_{n}")).expr()).collect();

    // ---- registers ----
    let init = m.reg("init", 1, 1, "clear sweep running: one entry zeroed per cycle");
    let init_addr = m.reg("init_addr", ab, 0, "entry the sweep zeroes this cycle");
    let stages: Vec<(crate::Reg, crate::Reg)> = (1..=l)
        .map(|j| {
            (
                m.reg(&format!("p{j}_valid"), 1, 0, &format!("a beat is {j} cycle(s) past its handshake")),
                m.reg_no_reset(&format!("p{j}_pkt"), kw, "the beat, fields as on s_pkt"),
            )
        })
        .collect();
    let (pick_valid, pick_pkt) = (stages[l as usize - 1].0.q.clone(), stages[l as usize - 1].1.q.clone());
    let fwds: Vec<(crate::Reg, crate::Reg, crate::Reg)> = (0..l)
        .map(|j| {
            (
                m.reg(&format!("fw{j}_valid"), 1, 0, &format!("entry write {} cycle(s) ago, for forwarding", j + 1)),
                m.reg_no_reset(&format!("fw{j}_addr"), ab, "its entry index"),
                m.reg_no_reset(&format!("fw{j}_entry"), ew, "the entry written"),
            )
        })
        .collect();

    // ---- handshake and memory ----
    let pkt_fire = m.wire("pkt_fire", 1, "packet handshake");
    let inflight = m.wire("inflight", fb + 1, "beats in the read pipeline");
    let inflight_sum = stages.iter().map(|s| zext(&s.0.q, fb + 1)).reduce(|a, b| a + b).expect("at least one stage");
    m.assign(&inflight, inflight_sum);
    let addr_of = |conn: Expr, path: Expr| -> Expr {
        if p.paths == 1 {
            conn
        } else {
            cat(&[conn, path])
        }
    };
    let in_addr = m.wire("pkt_addr", ab, "entry index of the offered beat: {conn, path}");
    m.assign(&in_addr, addr_of(port("s_pkt_conn").expr(), port("s_pkt_path_id").expr()));
    let pick_slice = |n: &str| -> Expr {
        let (o, w) = off[n];
        pick_pkt.slice(o + w - 1, o)
    };
    let pick_addr = m.wire("pick_addr", ab, "entry index of the update stage's beat");
    m.assign(&pick_addr, addr_of(pick_slice("conn"), pick_slice("path_id")));

    let mem = m.memory(
        "rx_state",
        ew,
        &entries_p,
        MemStyle::Block,
        "per-(connection, path) receive state {probe_answers, probe_epoch, reply_plane, reply_port, last_ts, bytes, \
         pkts, ecn_cnt, gen, bitmap, cum_psn}; written by the clear \
         sweep (no beat enters until it ends) or by the update stage",
    );
    let new_entry = m.wire("new_entry", ew, "the entry after the update");
    m.mem_write(
        &mem,
        init.q.expr().logic_or(&pick_valid),
        mux(&init.q, &init_addr.q, &pick_addr),
        mux(&init.q, lit(ew, 0), &new_entry),
    );
    let rd = m.mem_read(&mem, "rx_state_rd", &pkt_fire, &in_addr);
    let mem_entry = if l == 2 {
        let pipe = m.reg_no_reset("rx_state_pipe", ew, "block RAM output register (READ_LATENCY = 2)");
        m.next(set(&pipe.next, &rd));
        pipe.q
    } else {
        rd
    };

    m.next(set(&stages[0].0.next, &pkt_fire));
    m.next(set(&stages[0].1.next, cat(&beat_in)));
    for j in 1..stages.len() {
        m.next(set(&stages[j].0.next, &stages[j - 1].0.q));
        m.next(set(&stages[j].1.next, &stages[j - 1].1.q));
    }
    m.next(if_then(
        &init.q,
        vec![
            set(&init_addr.next, init_addr.q.expr() + lit(ab, 1)),
            if_then(init_addr.q.expr().eq(lit(ab, u64::from(p.entries() - 1))), vec![set(&init.next, lit(1, 0))]),
        ],
    ));

    // ---- update stage: forwarding ----
    m.comment("A read cannot see the writes of the READ_LATENCY cycles after it: take the newest matching one.");
    let cur = m.wire("cur_entry", ew, "the update stage's entry before the update");
    let mut chosen: Expr = mem_entry.expr();
    for (j, f) in fwds.iter().enumerate().rev() {
        let hit = m.wire(&format!("fw{j}_hit"), 1, "this forwarding register holds the update stage's entry");
        m.assign(&hit, f.0.q.expr().logic_and(f.1.q.expr().eq(&pick_addr)));
        chosen = mux(&hit, &f.2.q, chosen);
    }
    m.assign(&cur, chosen);
    m.next(set(&fwds[0].0.next, &pick_valid));
    m.next(set(&fwds[0].1.next, &pick_addr));
    m.next(set(&fwds[0].2.next, &new_entry));
    for j in 1..fwds.len() {
        m.next(set(&fwds[j].0.next, &fwds[j - 1].0.q));
        m.next(set(&fwds[j].1.next, &fwds[j - 1].1.q));
        m.next(set(&fwds[j].2.next, &fwds[j - 1].2.q));
    }

    // ---- update stage: fields ----
    let (o_bm, o_gen, o_ecn, o_pk, o_by) =
        (PSN_BITS, PSN_BITS + 256, PSN_BITS + 264, PSN_BITS + 272, PSN_BITS + 272 + pb);
    let o_ts = o_by + bb;
    let (o_port, o_plane, o_epoch, o_cnt) = (o_ts + 16, o_ts + 32, o_ts + 35, o_ts + 67);
    let cw = PROBE_COUNT_BITS;
    let w_ = |m: &mut Module, n: &str, w: u32, c: &str, e: Expr| -> Signal {
        let s = m.wire(n, w, c);
        m.assign(&s, e);
        s
    };
    let cum = w_(&mut m, "cur_cum", PSN_BITS, "cum_psn", cur.slice(PSN_BITS - 1, 0));
    let bm = w_(&mut m, "cur_bitmap", 256, "bitmap", cur.slice(o_bm + 255, o_bm));
    let gen = w_(&mut m, "cur_gen", 8, "newest generation", cur.slice(o_gen + 7, o_gen));
    let ecn = w_(&mut m, "cur_ecn", 8, "CE marks since the last SACK", cur.slice(o_ecn + 7, o_ecn));
    let pkts = w_(&mut m, "cur_pkts", pb, "packets since the last SACK", cur.slice(o_pk + pb - 1, o_pk));
    let bytes = w_(&mut m, "cur_bytes", bb, "bytes since the last SACK", cur.slice(o_by + bb - 1, o_by));
    let last_ts = w_(&mut m, "cur_last_ts", 16, "tx_ts of the last accepted packet", cur.slice(o_ts + 15, o_ts));
    let r_port =
        w_(&mut m, "cur_reply_port", 16, "where the path's answers go: UDP port", cur.slice(o_port + 15, o_port));
    let r_plane =
        w_(&mut m, "cur_reply_plane", 3, "where the path's answers go: plane", cur.slice(o_plane + 2, o_plane));
    let epoch =
        w_(&mut m, "cur_probe_epoch", 32, "start of the PROBE budget's period", cur.slice(o_epoch + 31, o_epoch));
    let answers =
        w_(&mut m, "cur_probe_answers", cw, "PROBEs answered in the period", cur.slice(o_cnt + cw - 1, o_cnt));
    let op = pick_slice("op");
    let k_psn = pick_slice("psn");
    let k_gen = pick_slice("gen");
    let is_open = w_(&mut m, "is_open", 1, "OPEN beat", pick_valid.expr().logic_and(op.clone().eq(lit(2, 2))));
    let is_probe = w_(&mut m, "is_probe", 1, "PROBE beat", pick_valid.expr().logic_and(op.clone().eq(lit(2, 1))));
    let is_flush = w_(
        &mut m,
        "is_flush",
        1,
        "FLUSH beat: SACK the path's pending packets",
        pick_valid.expr().logic_and(op.clone().eq(lit(2, 3))),
    );
    let is_data = w_(&mut m, "is_data", 1, "DATA beat", pick_valid.expr().logic_and(op.eq(lit(2, 0))));
    let gd = w_(&mut m, "gen_dist", 8, "packet generation - entry generation, 8-bit signed", k_gen.clone() - &gen);
    let adopt =
        w_(&mut m, "gen_newer", 1, "signed distance > 0", gd.bit(7).logic_not().logic_and(gd.expr().ne(lit(8, 0))));
    let stale = w_(
        &mut m,
        "stale",
        1,
        "DATA of a generation older than one behind",
        is_data.expr().logic_and(gd.bit(7)).logic_and(gd.expr().ne(lit(8, 0xff))),
    );
    let live =
        w_(&mut m, "live", 1, "DATA past the generation check", is_data.expr().logic_and(stale.expr().logic_not()));
    let d = w_(&mut m, "psn_dist", PSN_BITS, "psn - cum_psn mod 2^24", k_psn.clone() - &cum);
    let behind = d.bit(PSN_BITS - 1);
    let near = w_(
        &mut m,
        "psn_near",
        1,
        "the psn lies within 256 of cum_psn, ahead or behind: only such a packet may move the generation",
        d.expr().le(lit(PSN_BITS, 256)).logic_or((cum.expr() - &k_psn).le(lit(PSN_BITS, 256))),
    );
    let d_zero = w_(&mut m, "psn_next", 1, "the psn is cum_psn", d.expr().eq(lit(PSN_BITS, 0)));
    let far = w_(
        &mut m,
        "far",
        1,
        "live DATA beyond the window (d > 256)",
        live.expr().logic_and(behind.clone().logic_not()).logic_and(d.expr().gt(lit(PSN_BITS, 256))),
    );
    let dm1 = w_(
        &mut m,
        "bit_index",
        8,
        "d - 1 mod 256: the bitmap bit of the psn (when 1 <= d <= 256)",
        d.slice(7, 0) - lit(8, 1),
    );
    let dup =
        w_(
            &mut m,
            "dup",
            1,
            "live DATA already received: behind cum_psn or its bit set",
            live.expr().logic_and(behind.logic_or(
                d_zero.expr().logic_not().logic_and(far.expr().logic_not()).logic_and(bm.expr().bit_at(&dm1)),
            )),
        );
    let ok = w_(
        &mut m,
        "accept",
        1,
        "live DATA inside the window, new, not refused later: sets a new bit",
        live.expr()
            .logic_and(far.expr().logic_not())
            .logic_and(dup.expr().logic_not())
            .logic_and(pick_slice("bad").logic_not()),
    );

    // PROBE admission, decided by a PROBE's first beat (the reference's
    // admit_probe): the psn window, then the budget of answers per period.
    let probe_first =
        w_(&mut m, "probe_first", 1, "the first beat of a PROBE", is_probe.expr().logic_and(pick_slice("first")));
    let probe_psn = w_(
        &mut m,
        "probe_psn_bad",
        1,
        "a PROBE whose psn is outside [cum_psn, cum_psn + 256]",
        probe_first.expr().logic_and(d.expr().gt(lit(PSN_BITS, 256))),
    );
    let elapsed = w_(&mut m, "probe_elapsed", 32, "ts_now - the period's start", port("ts_now").expr() - &epoch);
    let expired = w_(
        &mut m,
        "probe_period_over",
        1,
        "the budget's period is over: a new one starts at ts_now",
        probe_first
            .expr()
            .logic_and(probe_psn.expr().logic_not())
            .logic_and(elapsed.expr().ge(lit(32, u64::from(p.rto_min)))),
    );
    let answers_now =
        w_(&mut m, "probe_answers_now", cw, "answers in the current period", mux(&expired, lit(cw, 0), &answers));
    let limited = w_(
        &mut m,
        "probe_limited",
        1,
        "a PROBE past its path's budget",
        probe_first
            .expr()
            .logic_and(probe_psn.expr().logic_not())
            .logic_and(answers_now.expr().ge(lit(cw, u64::from(PROBE_ANSWERS_PER_RTO_MIN)))),
    );
    let admit = w_(
        &mut m,
        "probe_admit",
        1,
        "a PROBE's first beat admitted: answered, and the budget charged",
        probe_first.expr().logic_and(probe_psn.expr().logic_not()).logic_and(limited.expr().logic_not()),
    );
    let probe_ok = m.reg("probe_ok", 1, 0, "the verdict of the last PROBE's first beat, for its other beats");
    m.next(if_then(&probe_first, vec![set(&probe_ok.next, &admit)]));
    let probe_ans = w_(
        &mut m,
        "probe_answered",
        1,
        "an admitted PROBE beat: adopts the generation and answers",
        is_probe.expr().logic_and(mux(pick_slice("first"), &admit, &probe_ok.q)),
    );

    // Trailing ones of the bitmap: a tree finding the lowest 0 bit.
    m.comment("Trailing ones of the bitmap: a priority tree over its complement, level k nodes span 2^k bits.");
    let mut found = w_(&mut m, "ctz_l0_found", 256, "bit i is 0", !bm.expr());
    let mut idx: Option<Signal> = None;
    for k in 1..=8u32 {
        let n = 256 >> k;
        let f = m.wire(&format!("ctz_l{k}_found"), n, "a 0 bit in this node's span");
        let x = m.wire(&format!("ctz_l{k}_idx"), n * k, "offset of the lowest 0 bit in the span");
        let mut fs = Vec::new();
        let mut xs = Vec::new();
        for j in (0..n).rev() {
            let (fl, fr) = (found.bit(2 * j), found.bit(2 * j + 1));
            fs.push(fl.clone().logic_or(fr));
            let (il, ir) = match &idx {
                None => (lit(1, 0), lit(1, 0)),
                Some(s) => {
                    let w = k - 1;
                    (s.slice(2 * j * w + w - 1, 2 * j * w), s.slice((2 * j + 1) * w + w - 1, (2 * j + 1) * w))
                }
            };
            let part = if k == 1 {
                mux(fl, lit(1, 0), lit(1, 1))
            } else {
                mux(fl, cat(&[lit(1, 0), il]), cat(&[lit(1, 1), ir]))
            };
            xs.push(part);
        }
        m.assign(&f, cat(&fs));
        m.assign(&x, cat(&xs));
        found = f;
        idx = Some(x);
    }
    let idx = idx.expect("eight levels");
    let adv = w_(
        &mut m,
        "advance",
        9,
        "psns cum_psn advances by: 1 + trailing ones (257 when the bitmap is full)",
        mux(found.bit(0), zext(&idx, 9), lit(9, 256)) + lit(9, 1),
    );

    let cum1 = w_(
        &mut m,
        "upd_cum",
        PSN_BITS,
        "cum_psn after the update",
        mux(&is_open, k_psn.clone(), mux(ok.expr().logic_and(&d_zero), cum.expr() + zext(&adv, PSN_BITS), &cum)),
    );
    let bm1 = w_(
        &mut m,
        "upd_bitmap",
        256,
        "bitmap after the update",
        mux(
            &is_open,
            lit(256, 0),
            mux(&ok, mux(&d_zero, bm.expr() >> adv.expr(), bm.expr() | (lit(256, 1) << dm1.expr())), &bm),
        ),
    );
    let gen1 = w_(
        &mut m,
        "upd_gen",
        8,
        "generation after the update",
        mux(
            is_open.expr().logic_or(&probe_ans).logic_or(live.expr().logic_and(&adopt).logic_and(&near)),
            k_gen.clone(),
            &gen,
        ),
    );
    let ecn1 = w_(
        &mut m,
        "upd_ecn",
        8,
        "ECN count with this packet's CE mark, saturating",
        mux(
            live.expr().logic_and(pick_slice("ce")).logic_and(ecn.expr().ne(lit(8, 0xff))),
            ecn.expr() + lit(8, 1),
            &ecn,
        ),
    );
    let pkts_sum = w_(&mut m, "pkts_sum", pb + 1, "packets with this one", zext(&pkts, pb + 1) + lit(pb + 1, 1));
    let sw = bb.max(16) + 1;
    let bytes_sum =
        w_(&mut m, "bytes_sum", sw, "bytes with this one", zext(&bytes, sw) + zext(pick_slice("payload_len"), sw));
    let due = w_(
        &mut m,
        "sack_due",
        1,
        "an accepted packet with ACKREQ, CE, or the packet or byte count reached",
        ok.expr().logic_and(
            pick_slice("ackreq")
                .logic_or(pick_slice("ce"))
                .logic_or(pkts_sum.expr().ge(lit(pb + 1, u64::from(p.sack_pkts))))
                .logic_or(bytes_sum.expr().ge(lit(sw, u64::from(p.sack_bytes)))),
        ),
    );
    let flush_sack = w_(
        &mut m,
        "flush_sack",
        1,
        "a FLUSH of a path with packets not yet acknowledged",
        is_flush.expr().logic_and(pkts.expr().ne(lit(pb, 0))),
    );
    let sack = w_(
        &mut m,
        "sack",
        1,
        "this beat answers with a SACK",
        probe_ans.expr().logic_or(&dup).logic_or(&due).logic_or(&flush_sack),
    );
    let to_reply = is_data.expr().logic_or(&probe_ans);
    let port1 = w_(
        &mut m,
        "upd_reply_port",
        16,
        "reply port after the update: every DATA beat's and an admitted PROBE's source port",
        mux(&is_open, lit(16, 0), mux(to_reply.clone(), pick_slice("sport"), &r_port)),
    );
    let plane1 = w_(
        &mut m,
        "upd_reply_plane",
        3,
        "reply plane after the update",
        mux(&is_open, lit(3, 0), mux(to_reply, pick_slice("plane"), &r_plane)),
    );
    let ts1 = mux(&is_open, lit(16, 0), mux(&ok, pick_slice("tx_ts"), &last_ts));
    let epoch1 = mux(&is_open, lit(32, 0), mux(&expired, port("ts_now").expr(), &epoch));
    let answers1 = mux(&is_open, lit(cw, 0), mux(&admit, answers_now.expr() + lit(cw, 1), &answers));
    let nack = w_(&mut m, "nack", 1, "this beat answers with a BAD_HDR NACK", stale.expr().logic_or(&far));
    let clear = sack.expr().logic_or(&is_open);
    let pkts2 = mux(clear.clone(), lit(pb, 0), mux(&ok, pkts_sum.slice(pb - 1, 0), &pkts));
    let bytes2 = mux(clear.clone(), lit(bb, 0), mux(&ok, bytes_sum.slice(bb - 1, 0), &bytes));
    let ecn2 = mux(clear, lit(8, 0), &ecn1);
    m.assign(
        &new_entry,
        cat(&[
            answers1,
            epoch1,
            plane1.expr(),
            port1.expr(),
            ts1,
            bytes2,
            pkts2,
            ecn2,
            gen1.expr(),
            bm1.expr(),
            cum1.expr(),
        ]),
    );

    // ---- outputs ----
    let mut val: HashMap<&str, Expr> = HashMap::new();
    for n in ["conn", "path_id", "stream_id", "msn", "payload_len", "dst_conn", "completed_msn", "sport", "plane"] {
        val.insert(n, pick_slice(n));
    }
    val.insert("echo_ts", pick_slice("tx_ts"));
    let sack_echo = mux(&is_flush, &last_ts, pick_slice("tx_ts"));
    val.insert("rate_hint", port("rate_hint").expr());
    val.insert("cum_psn", cum1.expr());
    val.insert("bitmap", bm1.expr());
    val.insert("ecn_cnt", ecn1.expr());
    val.insert("code", lit(8, NACK_BAD_HDR));
    val.insert("psn", k_psn);
    let chans: Vec<(&str, Fields, Signal)> = vec![
        ("sack", p.sack_fields(), sack.clone()),
        ("nack", p.nack_fields(), nack.clone()),
        ("new", p.new_fields(), ok.clone()),
    ];
    let mut counts = Vec::new();
    for (ch, fields, push) in &chans {
        let width: u32 = fields.iter().map(|f| f.1).sum();
        let parts: Vec<Expr> = fields
            .iter()
            .rev()
            .map(|(n, _, _)| match (*ch, *n) {
                ("sack", "path_gen") => gen1.expr(),
                ("sack", "echo_ts") => sack_echo.clone(),
                ("sack", "sport") => port1.expr(),
                ("sack", "plane") => plane1.expr(),
                (_, "path_gen") => k_gen.clone(),
                _ => val[n].clone(),
            })
            .collect();
        let entry =
            w_(&mut m, &format!("{ch}_push_data"), width, "the update stage's entry for this FIFO", cat(&parts));
        let valid = port(&format!("m_{ch}_valid"));
        let pop = m.wire(&format!("{ch}_pop"), 1, "output handshake");
        m.assign(&pop, valid.expr().logic_and(port(&format!("m_{ch}_ready"))));
        let (v, shown, count) =
            fifo_in_flight(&mut m, ch, depth, &inflight.expr(), &push.expr(), &pop, &entry.expr(), width);
        m.assign(&valid, &v);
        let mut o = 0;
        for (n, w, _) in fields {
            m.assign(port(&format!("m_{ch}_{n}")), shown.slice(o + w - 1, o));
            o += w;
        }
        counts.push(count);
    }
    m.comment("Ready from registers only: room in every FIFO for every beat in flight plus this one.");
    let mut ready = init.q.expr().logic_not();
    for c in &counts {
        ready = ready.logic_and((c.expr() + &inflight).lt(lit(fb + 1, u64::from(depth))));
    }
    m.assign(port("s_pkt_ready"), ready);
    m.assign(&pkt_fire, port("s_pkt_valid").expr().logic_and(port("s_pkt_ready")));

    for (n, e) in [
        ("stale_gen", stale.expr()),
        ("psn_window", far.expr()),
        ("duplicate", dup.expr()),
        ("sack", sack.expr()),
        ("probe_psn", probe_psn.expr()),
        ("probe_limited", limited.expr()),
    ] {
        let r = m.reg(&format!("stat_{n}"), 1, 0, "counter pulse, one cycle after the update");
        m.next(set(&r.next, e));
        m.assign(port(&format!("stat_{n}")), &r.q);
    }
    // Properties. The table: no lost update, the sweep alone.
    let busy =
        stages.iter().map(|s| s.0.q.expr()).chain(fwds.iter().map(|f| f.0.q.expr())).reduce(|a, b| a.logic_or(b));
    crate::formal::table_rmw(
        &mut m,
        "rx_state",
        &mem,
        &pick_valid,
        pick_addr.expr(),
        cur.expr(),
        &init.q,
        busy.expect("a stage"),
    );
    // A bitmap bit is set once per sequence number: a psn inside the
    // window sets its bit only when the bit is clear (else it is a
    // duplicate), sets no other bit, and a duplicate changes nothing. With
    // the rule above (every update sees the stored entry) no psn is
    // accepted twice while the window holds it.
    let f_bit = m.formal_wire("f_new_bit", 256, "the accepted psn's bit");
    m.formal_assign(&f_bit, lit(256, 1) << dm1.expr());
    m.assert(
        "a_bit_set_once",
        "an accepted psn beyond cum_psn sets exactly its own bit, which was clear",
        crate::formal::implies(
            ok.expr().logic_and(d_zero.expr().logic_not()),
            (bm.expr() & &f_bit).eq(lit(256, 0)).logic_and(bm1.expr().eq(bm.expr() | &f_bit)),
        ),
    );
    m.assert(
        "a_in_order_advance",
        "the psn at cum_psn moves cum_psn past itself and the run of received psns after it, shifting them out",
        crate::formal::implies(
            ok.expr().logic_and(&d_zero),
            bm1.expr().eq(bm.expr() >> adv.expr()).logic_and(cum1.expr().eq(cum.expr() + zext(&adv, PSN_BITS))),
        ),
    );
    m.assert(
        "a_dup_no_change",
        "a duplicate (behind cum_psn or its bit set) changes neither the bitmap nor cum_psn",
        crate::formal::implies(&dup, bm1.expr().eq(&bm).logic_and(cum1.expr().eq(&cum))),
    );
    m.assert(
        "a_dup_not_new",
        "a duplicate is never reported as a new packet",
        crate::formal::implies(&dup, ok.expr().logic_not()),
    );
    m.cover("c_bit_set", "a psn ahead of cum_psn sets its bit", ok.expr().logic_and(d_zero.expr().logic_not()));
    m.cover("c_in_order", "the psn at cum_psn advances it", ok.expr().logic_and(&d_zero));
    m.cover("c_dup", "a duplicate is recognised", dup.expr());
    m.cover("c_open", "an OPEN beat completes", is_open.expr());
    m.cover("c_probe", "a PROBE beat completes", is_probe.expr());
    // A path answers at most PROBE_ANSWERS_PER_RTO_MIN PROBEs per period,
    // and only PROBEs inside its psn window: an answer is charged while the
    // period's count is below the budget, and never for a psn outside.
    m.assert(
        "a_probe_budget",
        "a PROBE is admitted only while its path's answers in the period are below the budget, and counts one",
        crate::formal::implies(
            &admit,
            answers_now
                .expr()
                .lt(lit(cw, u64::from(PROBE_ANSWERS_PER_RTO_MIN)))
                .logic_and(d.expr().le(lit(PSN_BITS, 256))),
        ),
    );
    m.assert(
        "a_probe_refused_silent",
        "a PROBE beat not admitted (its first beat refused) answers nothing and keeps the generation",
        crate::formal::implies(
            is_probe.expr().logic_and(probe_ans.expr().logic_not()),
            sack.expr().logic_not().logic_and(gen1.expr().eq(&gen)),
        ),
    );
    m.cover("c_probe_limited", "a PROBE past its budget is refused", limited.expr());
    m.cover("c_probe_psn", "a PROBE outside the psn window is refused", probe_psn.expr());
    m.cover("c_flush_sack", "a FLUSH acknowledges a path's pending packets", flush_sack.expr());
    m.cover("c_nack", "a beat answers with a NACK", nack.expr());
    let f_seen = m.formal_wire("f_seen_beat", 1, "a beat has been through the update stage");
    m.formal_seq(vec![crate::ir::if_else(
        &rst,
        vec![set(&f_seen, lit(1, 0))],
        vec![if_then(&pick_valid, vec![set(&f_seen, lit(1, 1))])],
    )]);
    let mut idle = f_seen.expr().logic_and(inflight.expr().eq(lit(fb + 1, 0)));
    for c in &counts {
        idle = idle.logic_and(c.expr().eq(lit(fb + 1, 0)));
    }
    m.cover("c_drained", "after beats, the pipeline and every FIFO drain empty", idle);
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    m
}

/// How the properties of [`generate`]'s module are checked (see
/// [`crate::proof`]): the covers on the proof configuration's table
/// ([`crate::proof::COVER_CONNECTIONS`]), whose clear sweep takes 8 cycles
/// instead of 64.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{cover_on_proof_config, prove_table_and_cover, COVER_CONNECTIONS};
    cover_on_proof_config(prove_table_and_cover(asserts, 2, 24), COVER_CONNECTIONS, 24)
}
