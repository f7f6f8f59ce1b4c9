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

use crate::expr::{lit, mux, Expr};
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
    m
}

/// How the properties of [`generate`]'s module are checked: a glue
/// block's, [`crate::proof::handshake_tasks`].
pub use crate::proof::handshake_tasks as formal_tasks;
