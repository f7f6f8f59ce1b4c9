//! `probe_walk` RTL: the generator of the receive controller's part
//! [`mrnic_model::probe_walk`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification.
//!
//! Structure: the held PROBE's fields in registers, `left` (a bit per
//! stream still to report, loaded at the handshake), and a priority
//! encoder over `left` that picks the lowest stream and its completed_msn
//! for the beat on `m_pkt_*`; a taken beat clears that bit.

use mrnic_model::probe_walk::{self as model, ProbeWalkParams};
use mrnic_model::sack_gen::OP_PROBE;
use mrnic_proto::Config;

use crate::expr::{index_bits, lit, mux, zext, Expr, Signal};
use crate::ir::{if_else, if_then, set, Module, Stmt};
use crate::ports::{declare, ConfigError};

/// The model's sizes, refused in the shape `gen::BLOCKS` reports.
pub struct Params(ProbeWalkParams);

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ConfigError> {
        ProbeWalkParams::from_config(cfg).map(Params).map_err(|e| ConfigError {
            field: e.field,
            value: e.value,
            why: e.why,
        })
    }
}

crate::block_api!(mrnic_model::probe_walk, Params, ConfigError);

/// The PROBE's fields the walk holds and repeats on every beat:
/// (`s_probe_*` field, `m_pkt_*` field).
const HELD: [(&str, &str); 8] = [
    ("conn", "conn"),
    ("remote_id", "dst_conn"),
    ("path_id", "path_id"),
    ("psn", "psn"),
    ("gen", "gen"),
    ("tx_ts", "tx_ts"),
    ("sport", "sport"),
    ("plane", "plane"),
];

fn build(p: &Params) -> Module {
    let p = &p.0;
    let ns = p.streams;
    let mut m = Module::new(model::NAME);
    m.describe("a PROBE as sack_gen beats: one per active stream in stream order, or one on the last stream");
    let streams_p = m.param("STREAMS", u64::from(ns), "streams per connection (1..64)");
    m.param_check("streams", streams_p.expr().ge(1u32).and(streams_p.expr().le(64u32)), "STREAMS must be in 1..64");
    let (clk, sig) = declare(&mut m, &model::ports(p));
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);

    let left = m.reg("left", ns, 0, "streams still to report; the lowest is on m_pkt");
    let first = m.reg("first", 1, 0, "the beat on m_pkt is its PROBE's first");
    let msns = m.reg_no_reset("msns", ns * 24, "completed_msn of each stream, stream i at bits 24i+23..24i");
    let ready = m.wire_from("walk_done", 1, "no beat left: a new PROBE may come", left.q.expr().eq(lit(ns, 0)));
    m.assign(port("s_probe_ready"), &ready);
    let take = m.wire_from("take", 1, "a PROBE is taken", port("s_probe_valid").expr().logic_and(&ready));
    let on = m.wire_from("on", 1, "a beat is on m_pkt", ready.expr().logic_not());
    let pop = m.wire_from("pop", 1, "the beat is taken", on.expr().logic_and(port("m_pkt_ready")));

    let active = port("s_probe_active");
    let none = m.wire_from("none_active", 1, "no stream active: report the last", active.expr().eq(lit(ns, 0)));
    let mut load = vec![
        set(&left.next, mux(&none, lit(ns, 1u64 << (ns - 1)), &active)),
        set(&first.next, lit(1, 1)),
        set(&msns.next, port("s_probe_msns")),
    ];
    let mut out_fields = Vec::new();
    for (from, to) in HELD {
        let src = port(&format!("s_probe_{from}"));
        let r = m.reg_no_reset(&format!("held_{from}"), src.width(), "the held PROBE's field");
        load.push(set(&r.next, &src));
        out_fields.push((to, r.q));
    }
    m.next(if_else(
        &pop,
        vec![set(&left.next, left.q.expr() & (left.q.expr() - lit(ns, 1))), set(&first.next, lit(1, 0))],
        vec![if_then(&take, load)],
    ));

    // Priority encoder: the lowest stream left and its completed_msn.
    let sw = port("m_pkt_stream_id").width();
    let stream = m.wire("beat_stream", sw, "the lowest stream left");
    let msn = m.wire("beat_msn", 24, "its completed_msn");
    let mut enc: Vec<Stmt> = vec![set(&stream, lit(sw, 0)), set(&msn, msns.q.slice(23, 0))];
    for s in (0..ns).rev() {
        enc.push(if_then(
            left.q.bit(s),
            vec![set(&stream, lit(sw, u64::from(s))), set(&msn, msns.q.slice(24 * s + 23, 24 * s))],
        ));
    }
    m.comb(enc);

    let z = |e: Expr, w: u32| mux(&on, e, lit(w, 0));
    m.assign(port("m_pkt_valid"), &on);
    for d in model::ports(p).iter().filter(|d| d.name.starts_with("m_pkt_") && d.name != "m_pkt_valid") {
        let f = &d.name["m_pkt_".len()..];
        let w = d.width;
        let v = match f {
            "ready" => continue,
            "op" => z(lit(w, u64::from(OP_PROBE)), w),
            "stream_id" => z(stream.expr(), w),
            "completed_msn" => z(msn.expr(), w),
            "first" => z(first.q.expr(), w),
            "ce" | "ackreq" | "bad" | "payload_len" | "msn" => lit(w, 0),
            _ => {
                let (_, r) = out_fields.iter().find(|(n, _)| *n == f).unwrap_or_else(|| panic!("m_pkt_{f}"));
                z(r.expr(), w)
            }
        };
        m.assign(port(&d.name), v);
    }
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    let walk = Walk { take: &take, pop: &pop, on: &on, left: &left.q, msns: &msns.q, stream: &stream };
    // One stream has no index to track it by, and nothing to order.
    if ns >= 2 {
        walk_properties(&mut m, ns, &walk, &sig);
    }
    m
}

/// The walk as its properties see it.
struct Walk<'a> {
    take: &'a Signal,
    pop: &'a Signal,
    on: &'a Signal,
    left: &'a Signal,
    msns: &'a Signal,
    stream: &'a Signal,
}

/// Every stream the answer must report is reported once, in stream order,
/// with its completed_msn, and none other: for a tracked stream `f_s`
/// (any), a ghost records at the PROBE's handshake whether it must be
/// reported (active, or the last stream when none is) and its
/// completed_msn, and whether its beat has been taken since. A beat of
/// `f_s` is owed and carries that msn; a beat of a later stream comes only
/// after `f_s`'s; a new PROBE is taken only when nothing is owed. The
/// invariant that makes it inductive: `f_s`'s bit of the streams left is
/// exactly "owed", and while owed its stored msn is the recorded one.
fn walk_properties(m: &mut Module, ns: u32, w: &Walk, sig: &std::collections::HashMap<String, Signal>) {
    let port = |n: &str| sig[n].clone();
    let (sb, ib) = (w.stream.width(), index_bits(ns));
    let s = m.formal_anyconst("f_s", ib, "the tracked stream");
    if !ns.is_power_of_two() {
        m.assume("a_f_s_stream", "the tracked stream is one the connection has", s.expr().lt(lit(ib, u64::from(ns))));
    }
    let s_wide = zext(&s, sb);
    let rep = m.formal_wire("f_report", 1, "ghost: the PROBE in hand must report the tracked stream");
    let sent = m.formal_wire("f_sent", 1, "ghost: its beat has been taken");
    let msn = m.formal_wire("f_msn", 24, "ghost: its completed_msn, as the PROBE came");
    let active = port("s_probe_active");
    let msns_in = port("s_probe_msns");
    let owed_now = mux(active.expr().eq(lit(ns, 0)), s.expr().eq(lit(ib, u64::from(ns - 1))), active.expr().bit_at(&s));
    m.formal_seq(vec![if_else(
        port("rst"),
        vec![set(&rep, lit(1, 0)), set(&sent, lit(1, 0))],
        vec![
            if_then(
                w.take,
                vec![set(&rep, owed_now), set(&sent, lit(1, 0)), set(&msn, msns_in.expr().part(offset24(&s, ns), 24))],
            ),
            if_then(w.pop.expr().logic_and(w.stream.expr().eq(s_wide.clone())), vec![set(&sent, lit(1, 1))]),
        ],
    )]);
    let owed = rep.expr().logic_and(sent.expr().logic_not());
    m.assert(
        "a_walk_left_is_owed",
        "the tracked stream is among the streams left exactly while its report is owed",
        w.left.expr().bit_at(&s).eq(owed.clone()),
    );
    m.assert(
        "a_walk_msn_held",
        "while owed, the tracked stream's stored completed_msn is the one the PROBE came with",
        crate::formal::implies(owed.clone(), w.msns.expr().part(offset24(&s, ns), 24).eq(&msn)),
    );
    m.assert(
        "a_walk_beat_owed",
        "a beat of the tracked stream is owed (none unasked, none twice) and carries its completed_msn",
        crate::formal::implies(
            w.on.expr().logic_and(w.stream.expr().eq(s_wide.clone())),
            owed.clone().logic_and(port("m_pkt_completed_msn").expr().eq(&msn)),
        ),
    );
    m.assert(
        "a_walk_in_order",
        "a beat of a later stream comes only once the tracked stream's is taken, if it is reported",
        crate::formal::implies(w.on.expr().logic_and(w.stream.expr().gt(s_wide.clone())), owed.clone().logic_not()),
    );
    m.assert(
        "a_walk_done_owes_nothing",
        "a new PROBE is taken only when nothing of the last is owed",
        crate::formal::implies(w.take, owed.logic_not()),
    );
    m.cover("c_walk_tracked_later", "the tracked stream reported after an earlier one", {
        w.on.expr().logic_and(w.stream.expr().eq(s_wide)).logic_and(port("m_pkt_first").expr().logic_not())
    });
}

/// `24 * s`, the bit offset of stream `s`'s completed_msn among `ns`.
fn offset24(s: &Signal, ns: u32) -> Expr {
    // 24 s = 16 s + 8 s.
    let w = index_bits(24 * ns);
    (zext(s, w) << lit(3, 4)) + (zext(s, w) << lit(3, 3))
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
