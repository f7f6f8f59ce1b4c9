//! The post pipeline of `tx_engine` as a clocked unit (`tx_post`): the
//! `s_wr` FIFO, the `L` stages a request spends with its reads in flight
//! (`L` = `hardware.table_read_latency`), the forwarding of every write to
//! the fields those reads return, and the write stage, with the cycle
//! timing of the model's post ([`mrnic_model::tx_engine`]: the `s_wr`
//! input register, the `post_pipe` handling in `clock`, `post`). The
//! write stage's decision is the combinational [`super::post_rule`], the
//! model's `post_rule` (architecture.md, tx_engine item 7).
//!
//! # Interface with the rest of the engine
//! - **Requests** (`s_wr_*`, the engine's port): into a [`WR_FIFO`]-entry
//!   FIFO, `s_wr_ready` while it has room (and `en`: not during the clear
//!   sweep; and not while a setup record waits or runs, `s_open_busy`, so
//!   that a request taken after a record's `s_open` handshake reads the
//!   connection as the setup left it: architecture.md, tx_engine item 17). The FIFO is part of the unit because its head feeds the
//!   pipeline in the cycle the request arrives (the model pushes the input
//!   register and pops the head in one clock), so the read address is
//!   `s_wr`'s own fields when the FIFO is empty: a bypass that belongs
//!   with the FIFO.
//! - **Reads**: a request leaves the FIFO's head when the pipeline has
//!   room after this cycle's post (fewer than `L` requests), and presents
//!   its connection and stream on `m_rd_{conn,stream}` with `m_rd_valid`
//!   in that cycle; the engine's memories (the connection's context and
//!   the stream's word) answer on `s_rd_*` `L` cycles later with what they
//!   held before that cycle's writes, as a read-first block RAM does. The
//!   memories stay outside, as `tx_walk`'s do, so the engine can share
//!   their ports.
//! - **Forwarding**: every write the rest of the engine makes to a field
//!   the post reads comes in as it happens (`s_cut_*` the commit's `pend`
//!   and `pend_streams`, `s_sw_*` the walk's `head` and drain of `pend`,
//!   `s_fail_*` a failure, `s_open_*` a reopen's new context and words,
//!   `s_rdfail_*` the output stage's failed read) and is applied to every
//!   stage whose connection (and stream) it names, in the order the
//!   model's cycle makes them: commit, walk, failure, reopen, then the
//!   post itself (its `tail`, `next_msn`, `next_rq_seq`, `pend_streams`
//!   to the stages behind it), then the failed read, which the model makes
//!   after the post: the write stage sees it from the next cycle on, the
//!   others at once. A stage whose answer has not come keeps, per field,
//!   whether a write overrode it and the value; a reopen sets `head` and
//!   `pend` to the stream's `tail`, which before the answer is "the
//!   answer's tail" (a mode bit), since only the post writes `tail`. When
//!   the answer comes (`L` cycles after the read) the fields not
//!   overridden take it, and from then on the stage holds every field. So
//!   the write stage acts on the state as it is in its own cycle, the
//!   model's rule: a post in flight across the commit of its stream's last
//!   byte still counts the stream in `pend_streams`.
//! - **The write stage** is the oldest request once its answer has come:
//!   [`super::post_rule`] on its fields with this cycle's writes applied
//!   (`m_flush_room`: the completion FIFO has room after the walk's push
//!   and the acknowledgement unit is idle, the model's `flush_room`). It
//!   holds while the stream's queue is full, or while a flush has no
//!   room, and the stages behind it wait (no new read either when `L`
//!   requests are in).
//! - **Writes**, at the post's edge: the work queue entry (`m_wq_wr_*`:
//!   the request, its msn and rq_seq, at the slot of the stream's tail),
//!   the stream's word (`m_sw_tail`, `m_sw_next_msn`, `m_sw_next_rq_seq`)
//!   and the connection's `m_pend_streams` (the engine clears the
//!   connection's `stalled` bit with them), all valid with
//!   `m_wq_wr_valid`; or the flush completion (`m_flush_*`, push-style,
//!   only with `m_flush_room`), which is `tx_walk`'s `s_flush_*`. Every
//!   output field is 0 without its valid.
//!
//! # Timing
//! A request taken on `s_wr` in cycle `t` with the FIFO empty and the
//! pipeline not full issues its reads in cycle `t` and is posted in cycle
//! `t + L` at the earliest; requests offered back to back are taken, read
//! and posted one per cycle (the model test
//! `a_post_in_flight_is_not_lost_to_the_commit_of_its_streams_last_byte`
//! checks eight on consecutive cycles). `s_wr_ready` is a register's
//! (the FIFO's count); `m_rd_*` and the writes depend combinationally on
//! the cycle's forwarded writes and `m_flush_room`, as the model's post
//! acts on the state as it is in its own cycle.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_post` ([`crate::proof::blocks`], [`formal_tasks`]), all
//! by boolector.
//! - assumed: `s_wr`'s valid/ready rule (its sender holds valid and the
//!   request until the handshake); for the forwarding only, that a read
//!   answers, `L` cycles later, what the memory held at the start of the
//!   read's cycle (read-first). `m_flush_room`, `en` and the forwarded
//!   writes are arbitrary; the rules below but the forwarding pass with no
//!   assumption at all;
//! - `s_wr_ready` is `en`, no setup busy and room in the FIFO, registers
//!   only (`s_open_busy` is the engine's registers too; never
//!   `s_wr_valid`); the FIFO holds exactly the requests taken and not
//!   read, at most [`WR_FIFO`], is never popped empty and never
//!   overflows;
//! - the stages hold exactly the requests read and not posted, at most
//!   `L`, oldest first with no gap; a shadow of the reads issued
//!   (`m_rd_*`, 1 to `L` cycles back) shows that a stage's answer, `L`
//!   cycles after its read, is its own read's, and the write stage acts
//!   only on the oldest request once it has answered;
//! - requests are tracked (any one, from its arrival on `s_wr` to its
//!   post): it sits unaltered in its FIFO slot and then its stage, issues
//!   its read and leaves in arrival order, none lost or doubled;
//! - a request that leaves is posted or flushed, never both, and a try
//!   that does not leave holds only on a full stream (live) or no flush
//!   room (not live); a post only to a live connection with a free slot
//!   (`tail - head < tx_wq_depth` on the forwarded state), at its tail,
//!   with its connection, stream, fields, msn and rq_seq, moving tail, msn
//!   and rq_seq on by one (rq_seq only for a request that consumes a
//!   receive) and `pend_streams` by one exactly when its stream had no
//!   bytes to cut; a flush only to a connection not live, with
//!   `m_flush_room`, naming its request; every output field 0 without its
//!   valid;
//! - the forwarding: a ghost of one connection's context fields and one of
//!   its streams' word (any), with every write applied in the model's
//!   order; the write stage acts on them as they stand after this cycle's
//!   writes before the post (each stage holds the memory's value of every
//!   field it holds, and the memory still holds what a pending read will
//!   answer);
//! - covers: posts back to back, a hold on a full stream, a flush and a
//!   flush waiting for room, a post whose pend a commit wrote while its
//!   read was in flight, the FIFO full, a tracked request leaving.
//!
//! By 2-induction: all but the forwarding in `prove`; the forwarding in
//! `prove_fw` on `L` = 1, and on `L` = 2 one group of fields at a time,
//! then the write stage's rule, but for the `pend` group, a bounded check
//! of [`FW_BMC_DEPTH`] cycles there (see [`formal_tasks`]).
//!
//! # Cost
//! Per stage the request (about 300 bits), seven fields with an override
//! bit each and two mode bits; per stage and writer a connection
//! comparator (commit, walk, failure, reopen, post, failed read) and for
//! the stream-wide writes a stream comparator: `L` is 1 or 2, so at most
//! three sets (the stages and the request entering).

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::{TxEngineParams, WR_FIFO};

use super::{post_rule, stream_ptr_bits, PostNets};
use crate::expr::{cat, index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{if_else, if_then, set, Module, Reg};

/// Module name.
pub const NAME: &str = "tx_post";

const RST: &str = "Clock and reset";
const RD: &str = "Context and stream word read (read-first, L cycles)";
const FWD: &str = "Writes of the other units this cycle (forwarded)";
const POST: &str = "Writes of the post";
const FLUSH: &str = "Flush completions (tx_walk's s_flush)";

/// The request fields a stage carries, as the engine's `s_wr_*` names
/// them (and `m_wq_wr_*` from `op` on).
pub const REQ: [&str; 9] = ["conn", "stream", "op", "wr_id", "laddr", "len", "raddr", "rkey", "imm"];

/// The request fields a flush completion carries, as `m_flush_*` (and
/// `tx_walk`'s `s_flush_*`) name them, with their port comments.
pub const FLUSHED: [(&str, &str); 6] = [
    ("conn", "its connection"),
    ("stream", "its stream"),
    ("wr_id", "its wr_id"),
    ("op", "its op"),
    ("len", "its message bytes"),
    ("imm", "its immediate"),
];

/// A field's position in [`REQ`].
fn req_index(f: &str) -> usize {
    REQ.iter().position(|x| *x == f).expect("a request field")
}

/// Bits of a count of streams (0 to `STREAMS`), as the cut's.
pub fn pend_streams_bits(p: &TxEngineParams) -> u32 {
    32 - p.streams.leading_zeros()
}

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let pb = stream_ptr_bits(p.wq_depth);
    let nb = pend_streams_bits(p);
    let slb = index_bits(p.wq_depth);
    let i = |n: &str, w: u32, g: &'static str, c: &str| PortDef::input(n, w, g, c);
    let o = |n: &str, w: u32, g: &'static str, c: &str| PortDef::output(n, w, g, c);
    let wr: Vec<String> = REQ.iter().map(|f| format!("s_wr_{f}")).collect();
    let wr: Vec<&str> = wr.iter().map(String::as_str).collect();
    let req = super::engine_ports(p, &wr);
    let wid = |f: &str| req[req_index(f)].width;
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("en", 1, RST, "the engine runs (its clear sweep is over)"),
        i("s_open_busy", 1, RST, "a setup record waits or runs until it acts (registers): no request is taken"),
    ];
    v.extend(super::engine_ports(p, &["s_wr_valid", "s_wr_ready"]));
    v.extend(req.iter().cloned());
    v.extend([
        o("m_rd_valid", 1, RD, "a request leaves the FIFO's head: its reads are issued"),
        o("m_rd_conn", cb, RD, "its connection (0 without a read)"),
        o("m_rd_stream", sb, RD, "its stream"),
        i("s_rd_live", 1, RD, "the connection is open and has not failed, L cycles after the read"),
        i("s_rd_pend_streams", nb, RD, "its streams with bytes to cut"),
        i("s_rd_head", pb, RD, "the stream's head"),
        i("s_rd_pend", pb, RD, "its pend"),
        i("s_rd_tail", pb, RD, "its tail"),
        i("s_rd_next_msn", 24, RD, "its next msn"),
        i("s_rd_next_rq_seq", 24, RD, "its next rq_seq"),
        i("s_cut_valid", 1, FWD, "the commit cut new data of a stream"),
        i("s_cut_conn", cb, FWD, "its connection"),
        i("s_cut_stream", sb, FWD, "its stream"),
        i("s_cut_pend", pb, FWD, "the stream's new pend"),
        i("s_cut_pend_streams", nb, FWD, "the connection's new count of streams with bytes to cut"),
    ]);
    // The walk's writes of a stream's word, its `m_sw_*` as inputs.
    v.extend(super::walk::ports(p).into_iter().filter(|d| d.name.starts_with("m_sw_")).map(|d| {
        PortDef::input(d.name.replacen("m_", "s_", 1), d.width, FWD, format!("tx_walk's {}: {}", d.name, d.comment))
    }));
    v.extend([
        i("s_fail_valid", 1, FWD, "a connection fails (the commit, a NACK, a reopen): before the post"),
        i("s_fail_conn", cb, FWD, "the connection"),
        i("s_open_valid", 1, FWD, "path 0 of a connection not live is set up: context and words start again"),
        i("s_open_conn", cb, FWD, "the connection"),
        i("s_rdfail_valid", 1, FWD, "a connection fails by a failed payload read: after the post"),
        i("s_rdfail_conn", cb, FWD, "the connection"),
        o("m_wq_wr_valid", 1, POST, "a request is posted: entry, stream word and count written"),
        o("m_wq_wr_conn", cb, POST, "its connection"),
        o("m_wq_wr_stream", sb, POST, "its stream"),
        o("m_wq_wr_slot", slb, POST, "the work queue slot (the stream's tail)"),
    ]);
    for f in &REQ[2..] {
        v.push(o(&format!("m_wq_wr_{f}"), wid(f), POST, "the request's field"));
    }
    v.extend([
        o("m_wq_wr_msn", 24, POST, "its msn"),
        o("m_wq_wr_rq_seq", 24, POST, "its rq_seq"),
        o("m_sw_tail", pb, POST, "the stream's new tail"),
        o("m_sw_next_msn", 24, POST, "the stream's new next msn"),
        o("m_sw_next_rq_seq", 24, POST, "the stream's new next rq_seq"),
        o("m_pend_streams", nb, POST, "the connection's new count of streams with bytes to cut"),
        i("m_flush_room", 1, FLUSH, "the completion FIFO has room and the acknowledgement unit is idle"),
        o("m_flush_valid", 1, FLUSH, "a request to a connection not live completes with WR_FLUSH"),
    ]);
    v.extend(FLUSHED.iter().map(|(f, c)| o(&format!("m_flush_{f}"), wid(f), FLUSH, c)));
    v
}

/// A field a stage reads, as it stands: overridden by a write (`ov`) with
/// `val`, or still the answer's; `eqt` (head and pend only): overridden by
/// a reopen before the answer came, so it is the answer's tail.
#[derive(Clone)]
struct Fld {
    ov: Expr,
    eqt: Option<Expr>,
    val: Expr,
}

impl Fld {
    /// Written with `v` when `c`.
    fn write(&self, c: &Expr, v: Expr) -> Fld {
        Fld {
            ov: c.clone().logic_or(self.ov.clone()),
            eqt: self.eqt.as_ref().map(|e| c.clone().logic_not().logic_and(e.clone())),
            val: mux(c.clone(), v, self.val.clone()),
        }
    }
}

/// The fields a stage reads, in [`FIELDS`] order.
type View = Vec<Fld>;

/// The stage's fields: (name, `s_rd_*` answer, has a mode bit).
const FIELDS: [(&str, &str, bool); 7] = [
    ("live", "s_rd_live", false),
    ("ps", "s_rd_pend_streams", false),
    ("tail", "s_rd_tail", false),
    ("msn", "s_rd_next_msn", false),
    ("rq", "s_rd_next_rq_seq", false),
    ("head", "s_rd_head", true),
    ("pend", "s_rd_pend", true),
];
const LIVE: usize = 0;
const PS: usize = 1;
const TAIL: usize = 2;
const MSN: usize = 3;
const RQ: usize = 4;
const HEAD: usize = 5;
const PEND: usize = 6;

/// The forwarding's assertions come one per group of fields ([`FIELDS`]
/// indices), `a_pp<i>_fw_<group>` and `a_post_fw_<group>`, so that on `L`
/// = 2 each group's stage invariant is an induction of its own
/// ([`formal_tasks`]): head and pend each go with tail, which a reopen
/// copies into them. Per group: its name, its task's, its fields and the
/// assertions its task removes (the other groups' and the write stage's).
const FW_GROUPS: [(&str, &str, &[usize], &[&str]); 6] = [
    (
        "live",
        "prove_fw_live",
        &[LIVE],
        &["a_pp*_fw_ps", "a_pp*_fw_msn", "a_pp*_fw_rq", "a_pp*_fw_head", "a_pp*_fw_pend", "a_post_fw_*"],
    ),
    (
        "ps",
        "prove_fw_ps",
        &[PS],
        &["a_pp*_fw_live", "a_pp*_fw_msn", "a_pp*_fw_rq", "a_pp*_fw_head", "a_pp*_fw_pend", "a_post_fw_*"],
    ),
    (
        "msn",
        "prove_fw_msn",
        &[MSN],
        &["a_pp*_fw_live", "a_pp*_fw_ps", "a_pp*_fw_rq", "a_pp*_fw_head", "a_pp*_fw_pend", "a_post_fw_*"],
    ),
    (
        "rq",
        "prove_fw_rq",
        &[RQ],
        &["a_pp*_fw_live", "a_pp*_fw_ps", "a_pp*_fw_msn", "a_pp*_fw_head", "a_pp*_fw_pend", "a_post_fw_*"],
    ),
    (
        "head",
        "prove_fw_head",
        &[TAIL, HEAD],
        &["a_pp*_fw_live", "a_pp*_fw_ps", "a_pp*_fw_msn", "a_pp*_fw_rq", "a_pp*_fw_pend", "a_post_fw_*"],
    ),
    (
        "pend",
        "prove_fw_pend",
        &[TAIL, PEND],
        &["a_pp*_fw_live", "a_pp*_fw_ps", "a_pp*_fw_msn", "a_pp*_fw_rq", "a_pp*_fw_head", "a_post_fw_*"],
    ),
];

/// The group whose forwarding stays a bounded check of [`FW_BMC_DEPTH`]
/// cycles on `L` = 2 ([`formal_tasks`]), and its assertions as patterns.
const FW_BOUNDED: &str = "pend";
const FW_BOUNDED_ASSERTS: &[&str] = &["*_fw_pend"];

/// Bounded depth of `FW_BOUNDED`'s check: a request read, answered and
/// posted from reset.
pub const FW_BMC_DEPTH: u32 = 4;

/// The fields `ks` by name: `live`, `tail, head and pend`.
fn names(ks: &[usize]) -> String {
    let n: Vec<&str> = ks.iter().map(|&k| FIELDS[k].0).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// One pipeline stage's registers.
struct Stage {
    valid: Reg,
    /// Edges until the read's answer (absent for `L` = 1: always 0).
    wait: Option<Reg>,
    known: Reg,
    req: Vec<Reg>,
    ov: Vec<Reg>,
    eqt: Vec<Option<Reg>>,
    val: Vec<Reg>,
}

/// The `tx_post` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let pb = stream_ptr_bits(p.wq_depth);
    let slb = index_bits(p.wq_depth);
    let l = p.read_latency;
    assert!(l >= 1, "a table answers a cycle after its read at the earliest");
    let wb = index_bits(l);
    let qn = WR_FIFO as u32;
    let qb = index_bits(qn + 1);

    let mut m = Module::new(NAME);
    m.describe("tx_engine post pipeline: the s_wr FIFO, L stages with forwarding, the write stage");
    let defs = ports(p);
    let (clk, sig) = crate::ports::declare(&mut m, &defs);
    let sg = |n: &str| sig[n].clone();
    m.clock_domain(&clk, &sg("rst"));
    let w = |m: &mut Module, n: &str, width: u32, c: &str, e: Expr| m.wire_from(n, width, c, e);
    let width = |n: &str| defs.iter().find(|d| d.name == n).expect("declared").width;
    let req_w: Vec<u32> = REQ.iter().map(|f| width(&format!("s_wr_{f}"))).collect();
    let fld_w: Vec<u32> = FIELDS.iter().map(|(_, a, _)| width(a)).collect();
    let en = sg("en");

    // ------------------------------------------------------------ state
    let q_n = m.reg("wf_n", qb, 0, "requests in the FIFO");
    let fifo: Vec<Vec<Reg>> = (0..qn)
        .map(|k| {
            REQ.iter()
                .zip(&req_w)
                .map(|(f, &wd)| m.reg_no_reset(&format!("wf{k}_{f}"), wd, "a queued request's field"))
                .collect()
        })
        .collect();
    let stages: Vec<Stage> = (0..l)
        .map(|i| Stage {
            valid: m.reg(&format!("pp{i}_valid"), 1, 0, "the stage holds a request (stage 0 the oldest)"),
            wait: (l > 1).then(|| m.reg_no_reset(&format!("pp{i}_wait"), wb, "edges until its read answers")),
            known: m.reg_no_reset(&format!("pp{i}_known"), 1, "its read has answered: every field is held"),
            req: REQ
                .iter()
                .zip(&req_w)
                .map(|(f, &wd)| m.reg_no_reset(&format!("pp{i}_{f}"), wd, "the request's field"))
                .collect(),
            ov: FIELDS
                .iter()
                .map(|(f, _, _)| m.reg_no_reset(&format!("pp{i}_{f}_ov"), 1, "the field is held (written or answered)"))
                .collect(),
            eqt: FIELDS
                .iter()
                .map(|(f, _, e)| {
                    e.then(|| {
                        m.reg_no_reset(&format!("pp{i}_{f}_eqt"), 1, "reopened before the answer: the answer's tail")
                    })
                })
                .collect(),
            val: FIELDS
                .iter()
                .zip(&fld_w)
                .map(|((f, _, _), &wd)| m.reg_no_reset(&format!("pp{i}_{f}"), wd, "the field's value when held"))
                .collect(),
        })
        .collect();

    // ------------------------------------------------------------ each stage as it stands this cycle
    // A stage whose answer comes this cycle takes it for every field not
    // overridden (an override by a reopen before the answer: its tail).
    let views: Vec<View> = stages
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let wait0 = st.wait.as_ref().map_or(lit(1, 1), |r| r.q.expr().eq(lit(wb, 0)));
            let ans = w(
                &mut m,
                &format!("pp{i}_ans"),
                1,
                "the stage's read answers this cycle",
                st.valid.q.expr().logic_and(wait0).logic_and(st.known.q.expr().logic_not()),
            );
            FIELDS
                .iter()
                .enumerate()
                .map(|(k, (f, a, _))| {
                    let held = st.ov[k].q.expr();
                    let own = match &st.eqt[k] {
                        Some(e) => mux(e.q.expr(), sg("s_rd_tail"), &st.val[k].q),
                        None => st.val[k].q.expr(),
                    };
                    let val = w(
                        &mut m,
                        &format!("pp{i}_{f}_cur"),
                        fld_w[k],
                        "the field as it stands",
                        mux(held.clone(), own, sg(a)),
                    );
                    Fld {
                        ov: held.logic_or(&ans),
                        eqt: st.eqt[k].as_ref().map(|e| e.q.expr().logic_and(ans.expr().logic_not())),
                        val: val.expr(),
                    }
                })
                .collect()
        })
        .collect();

    // ------------------------------------------------------------ this cycle's writes before the post
    let cut_v = sg("s_cut_valid");
    let adv_v = sg("s_sw_head_valid");
    let drn_v = sg("s_sw_drain_valid");
    let fail_v = sg("s_fail_valid");
    let open_v = sg("s_open_valid");
    let rdf_v = sg("s_rdfail_valid");
    // The writes of the commit, the walk, a failure and a reopen, in the
    // model's order, to a stage of connection `c` and stream `s`.
    let before = |m: &mut Module, tag: &str, c: &Expr, s: &Expr, v: &View| -> View {
        let on = |m: &mut Module, n: &str, valid: &Signal, conn: &str, stream: Option<&str>| -> Expr {
            let mut e = valid.expr().logic_and(c.clone().eq(sg(conn)));
            if let Some(st) = stream {
                e = e.logic_and(s.clone().eq(sg(st)));
            }
            w(m, &format!("{tag}_{n}"), 1, "a write names the stage's connection (and stream)", e).expr()
        };
        let cut_c = on(m, "cut_c", &cut_v, "s_cut_conn", None);
        let cut_s = on(m, "cut_s", &cut_v, "s_cut_conn", Some("s_cut_stream"));
        let adv = on(m, "adv", &adv_v, "s_sw_conn", Some("s_sw_stream"));
        let drn = on(m, "drain", &drn_v, "s_sw_conn", Some("s_sw_stream"));
        let fail = on(m, "fail", &fail_v, "s_fail_conn", None);
        let open = on(m, "open", &open_v, "s_open_conn", None);
        let mut v = v.clone();
        v[PEND] = v[PEND].write(&cut_s, sg("s_cut_pend").expr());
        v[PS] = v[PS].write(&cut_c, sg("s_cut_pend_streams").expr());
        v[HEAD] = v[HEAD].write(&adv, sg("s_sw_head").expr());
        v[PEND] = v[PEND].write(&drn, sg("s_sw_pend").expr());
        v[LIVE] = v[LIVE].write(&fail, lit(1, 0));
        v[PS] = v[PS].write(&fail, lit(fld_w[PS], 0));
        v[LIVE] = v[LIVE].write(&open, lit(1, 1));
        v[PS] = v[PS].write(&open, lit(fld_w[PS], 0));
        v[MSN] = v[MSN].write(&open, lit(24, 0));
        v[RQ] = v[RQ].write(&open, lit(24, 0));
        // head = pend = tail: the tail as it stands, or, not known yet,
        // the answer's (only the post writes a tail).
        let tail = v[TAIL].clone();
        for k in [HEAD, PEND] {
            let f = &v[k];
            v[k] = Fld {
                ov: open.clone().logic_or(f.ov.clone()),
                eqt: f.eqt.as_ref().map(|e| mux(open.clone(), tail.ov.clone().logic_not(), e.clone())),
                val: mux(open.clone(), tail.val.clone(), f.val.clone()),
            };
        }
        // Wires, so that the next writes build on names.
        v.iter()
            .zip(FIELDS)
            .zip(&fld_w)
            .map(|((f, (n, _, _)), &wd)| Fld {
                ov: w(m, &format!("{tag}_{n}_ov"), 1, "held after the writes", f.ov.clone()).expr(),
                eqt: f
                    .eqt
                    .as_ref()
                    .map(|e| w(m, &format!("{tag}_{n}_eqt"), 1, "mode after the writes", e.clone()).expr()),
                val: w(m, &format!("{tag}_{n}_v"), wd, "value after the writes", f.val.clone()).expr(),
            })
            .collect()
    };
    let conn_of = |i: usize| stages[i].req[0].q.expr();
    let stream_of = |i: usize| stages[i].req[1].q.expr();
    let pre: Vec<View> =
        (0..l as usize).map(|i| before(&mut m, &format!("pp{i}_fw"), &conn_of(i), &stream_of(i), &views[i])).collect();

    // ------------------------------------------------------------ the write stage
    let s0 = &stages[0];
    let wait0 = s0.wait.as_ref().map_or(lit(1, 1), |r| r.q.expr().eq(lit(wb, 0)));
    let try_ = w(
        &mut m,
        "post_try",
        1,
        "the oldest request's read has answered: it is posted or held",
        en.expr().logic_and(&s0.valid.q).logic_and(wait0),
    );
    let op0 = s0.req[2].q.clone();
    let consumes =
        w(&mut m, "post_consumes", 1, "the request consumes a receive (not a WRITE)", op0.expr().ne(lit(2, 0)));
    let pv = &pre[0];
    let net = |m: &mut Module, n: &str, k: usize| {
        w(m, &format!("post_{n}"), fld_w[k], "the write stage's field", pv[k].val.clone())
    };
    let nets = PostNets {
        consumes,
        live: net(&mut m, "live", LIVE),
        flush_room: sg("m_flush_room"),
        head: net(&mut m, "head", HEAD),
        pend: net(&mut m, "pend", PEND),
        tail: net(&mut m, "tail", TAIL),
        next_msn: net(&mut m, "next_msn", MSN),
        next_rq_seq: net(&mut m, "next_rq_seq", RQ),
        pend_streams: net(&mut m, "pend_streams", PS),
    };
    let o = post_rule(&mut m, "pr", p.wq_depth, &nets);
    let take = w(&mut m, "post_take", 1, "the oldest request leaves the pipeline", try_.expr().logic_and(&o.take));
    let write = w(&mut m, "post_write", 1, "it is written into its stream's queue", try_.expr().logic_and(&o.write));
    let flush = w(&mut m, "post_flush", 1, "it completes with WR_FLUSH", try_.expr().logic_and(&o.flush));

    m.assign(sg("m_wq_wr_valid"), &write);
    let z = |c: &Signal, v: Expr, wd: u32| mux(c, v, lit(wd, 0));
    m.assign(sg("m_wq_wr_conn"), z(&write, conn_of(0), cb));
    m.assign(sg("m_wq_wr_stream"), z(&write, stream_of(0), sb));
    let slot = if p.wq_depth == 1 { lit(slb, 0) } else { nets.tail.slice(slb - 1, 0) };
    m.assign(sg("m_wq_wr_slot"), z(&write, slot, slb));
    for (k, f) in REQ.iter().enumerate().skip(2) {
        m.assign(sg(&format!("m_wq_wr_{f}")), z(&write, s0.req[k].q.expr(), req_w[k]));
    }
    m.assign(sg("m_wq_wr_msn"), z(&write, o.msn.expr(), 24));
    m.assign(sg("m_wq_wr_rq_seq"), z(&write, o.rq_seq.expr(), 24));
    m.assign(sg("m_sw_tail"), z(&write, o.tail.expr(), pb));
    m.assign(sg("m_sw_next_msn"), z(&write, o.next_msn.expr(), 24));
    m.assign(sg("m_sw_next_rq_seq"), z(&write, o.next_rq_seq.expr(), 24));
    m.assign(sg("m_pend_streams"), z(&write, o.pend_streams.expr(), fld_w[PS]));
    m.assign(sg("m_flush_valid"), &flush);
    for (n, _) in FLUSHED {
        let k = req_index(n);
        m.assign(sg(&format!("m_flush_{n}")), z(&flush, s0.req[k].q.expr(), req_w[k]));
    }

    // ------------------------------------------------------------ writes after the edge's post
    // The post's own writes, then the failed read's (the model's order),
    // onto every stage as it stands after the earlier writes.
    let post_c = sg("m_wq_wr_conn");
    let post_s = sg("m_wq_wr_stream");
    let rdf_c = sg("s_rdfail_conn");
    let after = |m: &mut Module, tag: &str, c: &Expr, s: &Expr, v: &View| -> View {
        let pc = w(
            m,
            &format!("{tag}_post_c"),
            1,
            "the post names the stage's connection",
            write.expr().logic_and(c.clone().eq(&post_c)),
        )
        .expr();
        let ps = w(
            m,
            &format!("{tag}_post_s"),
            1,
            "the post names the stage's stream",
            pc.clone().logic_and(s.clone().eq(&post_s)),
        )
        .expr();
        let rf = w(
            m,
            &format!("{tag}_rdfail"),
            1,
            "a failed read names the stage's connection",
            rdf_v.expr().logic_and(c.clone().eq(&rdf_c)),
        )
        .expr();
        let mut v = v.clone();
        v[TAIL] = v[TAIL].write(&ps, o.tail.expr());
        v[MSN] = v[MSN].write(&ps, o.next_msn.expr());
        v[RQ] = v[RQ].write(&ps, o.next_rq_seq.expr());
        v[PS] = v[PS].write(&pc, o.pend_streams.expr());
        v[LIVE] = v[LIVE].write(&rf, lit(1, 0));
        v[PS] = v[PS].write(&rf, lit(fld_w[PS], 0));
        v
    };
    let next: Vec<View> =
        (0..l as usize).map(|i| after(&mut m, &format!("pp{i}_nx"), &conn_of(i), &stream_of(i), &pre[i])).collect();

    // ------------------------------------------------------------ the FIFO's head and the pipeline's room
    let accept =
        w(&mut m, "wr_accept", 1, "a request is taken on s_wr", sg("s_wr_valid").expr().logic_and(sg("s_wr_ready")));
    m.assign(
        sg("s_wr_ready"),
        en.expr().logic_and(sg("s_open_busy").expr().logic_not()).logic_and(q_n.q.expr().lt(lit(qb, u64::from(qn)))),
    );
    let some = w(&mut m, "wf_some", 1, "the FIFO holds a request", q_n.q.expr().ne(lit(qb, 0)));
    let head: Vec<Signal> = REQ
        .iter()
        .enumerate()
        .map(|(k, f)| {
            w(
                &mut m,
                &format!("head_{f}"),
                req_w[k],
                "the FIFO's head (s_wr's own when it is empty)",
                mux(&some, &fifo[0][k].q, sg(&format!("s_wr_{f}"))),
            )
        })
        .collect();
    let last = &stages[l as usize - 1];
    let room = last.valid.q.expr().logic_not().logic_or(&take);
    let pop = w(
        &mut m,
        "pipe_pop",
        1,
        "the head leaves into the pipeline and issues its reads",
        en.expr().logic_and(some.expr().logic_or(&accept)).logic_and(room),
    );
    m.assign(sg("m_rd_valid"), &pop);
    m.assign(sg("m_rd_conn"), mux(&pop, &head[0], lit(cb, 0)));
    m.assign(sg("m_rd_stream"), mux(&pop, &head[1], lit(sb, 0)));

    // ------------------------------------------------------------ the FIFO's next state
    let from_q =
        w(&mut m, "wf_pop", 1, "the head leaves from the FIFO (not s_wr's bypass)", pop.expr().logic_and(&some));
    let n1 = w(&mut m, "wf_n_left", qb, "requests left after the pop", q_n.q.expr() - zext(&from_q, qb));
    let placed = w(
        &mut m,
        "wf_place",
        1,
        "the request taken on s_wr is queued (it did not leave at once)",
        accept.expr().logic_and(pop.expr().logic_and(some.expr().logic_not()).logic_not()),
    );
    for k in 0..qn as usize {
        let here = placed.expr().logic_and(n1.expr().eq(lit(qb, k as u64)));
        for (f, r) in fifo[k].iter().enumerate() {
            let kept = if k + 1 < qn as usize { mux(&from_q, &fifo[k + 1][f].q, &r.q) } else { r.q.expr() };
            m.next(set(&r.next, mux(here.clone(), sg(&format!("s_wr_{}", REQ[f])), kept)));
        }
    }
    m.next(set(&q_n.next, n1.expr() + zext(&placed, qb)));

    // ------------------------------------------------------------ the pipeline's next state
    // Stage k after the edge: the stage behind it when the oldest left,
    // else its own; the head's request in the first stage left empty.
    // A new stage holds this edge's writes of its fields (its read does
    // not see them) and nothing else yet.
    let none: View = FIELDS
        .iter()
        .zip(&fld_w)
        .map(|((_, _, e), &wd)| Fld { ov: lit(1, 0), eqt: e.then(|| lit(1, 0)), val: lit(wd, 0) })
        .collect();
    let hc = head[0].expr();
    let hs = head[1].expr();
    let in_pre = before(&mut m, "in_fw", &hc, &hs, &none);
    let incoming = after(&mut m, "in_nx", &hc, &hs, &in_pre);
    for k in 0..l as usize {
        let st = &stages[k];
        let src_valid = |j: usize| -> Expr {
            if j < l as usize {
                stages[j].valid.q.expr()
            } else {
                lit(1, 0)
            }
        };
        let sv = w(
            &mut m,
            &format!("pp{k}_src_valid"),
            1,
            "the stage that moves here holds a request",
            mux(&take, src_valid(k + 1), src_valid(k)),
        );
        let prev_valid = if k == 0 { lit(1, 1) } else { mux(&take, src_valid(k), src_valid(k - 1)) };
        let fill = w(
            &mut m,
            &format!("pp{k}_fill"),
            1,
            "the head's request enters here",
            pop.expr().logic_and(sv.expr().logic_not()).logic_and(prev_valid),
        );
        let pick_e = |own: Expr, behind: Option<Expr>, new: Expr| -> Expr {
            match behind {
                Some(b) => mux(&fill, new, mux(&take, b, own)),
                None => mux(&fill, new, own),
            }
        };
        m.next(set(&st.valid.next, sv.expr().logic_or(&fill)));
        if let Some(wr) = &st.wait {
            let dec = |r: &Reg| mux(r.q.expr().eq(lit(wb, 0)), lit(wb, 0), r.q.expr() - lit(wb, 1));
            let behind = stages.get(k + 1).map(|s| dec(s.wait.as_ref().expect("L > 1")));
            m.next(set(&wr.next, pick_e(dec(wr), behind, lit(wb, u64::from(l - 1)))));
        }
        let kn = |s: &Stage| -> Expr {
            let wait0 = s.wait.as_ref().map_or(lit(1, 1), |r| r.q.expr().eq(lit(wb, 0)));
            s.known.q.expr().logic_or(s.valid.q.expr().logic_and(wait0))
        };
        m.next(set(&st.known.next, pick_e(kn(st), stages.get(k + 1).map(kn), lit(1, 0))));
        for (f, r) in st.req.iter().enumerate() {
            let behind = stages.get(k + 1).map(|s| s.req[f].q.expr());
            m.next(set(&r.next, pick_e(r.q.expr(), behind, head[f].expr())));
        }
        for (f, _) in FIELDS.iter().enumerate() {
            let behind = next.get(k + 1);
            m.next(set(
                &st.ov[f].next,
                pick_e(next[k][f].ov.clone(), behind.map(|v| v[f].ov.clone()), incoming[f].ov.clone()),
            ));
            if let Some(e) = &st.eqt[f] {
                let g = |v: &View| v[f].eqt.clone().expect("a mode bit");
                m.next(set(&e.next, pick_e(g(&next[k]), behind.map(g), g(&incoming))));
            }
            m.next(set(
                &st.val[f].next,
                pick_e(next[k][f].val.clone(), behind.map(|v| v[f].val.clone()), incoming[f].val.clone()),
            ));
        }
    }

    let inner = Inner {
        q_n: q_n.q.clone(),
        slots: fifo.iter().map(|e| cat(&e.iter().map(|r| r.q.expr()).collect::<Vec<_>>())).collect(),
        valid: stages.iter().map(|s| s.valid.q.clone()).collect(),
        wait: stages.iter().map(|s| s.wait.as_ref().map(|r| r.q.clone())).collect(),
        known: stages.iter().map(|s| s.known.q.clone()).collect(),
        held: stages
            .iter()
            .map(|s| {
                (0..FIELDS.len())
                    .map(|k| (s.ov[k].q.clone(), s.eqt[k].as_ref().map(|r| r.q.clone()), s.val[k].q.clone()))
                    .collect()
            })
            .collect(),
        reqs: stages.iter().map(|s| cat(&s.req.iter().map(|r| r.q.expr()).collect::<Vec<_>>())).collect(),
        head: cat(&head.iter().map(Signal::expr).collect::<Vec<_>>()),
        accept,
        pop,
        placed,
        n1,
        try_,
        take,
        post: [nets.live, nets.head, nets.pend, nets.tail, nets.next_msn, nets.next_rq_seq, nets.pend_streams],
        consumes: nets.consumes,
        room: o.write.clone(),
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and decisions its formal properties read.
struct Inner {
    q_n: Signal,
    /// Each FIFO slot's request (head first) and each stage's (the oldest
    /// first), fields in [`REQ`] order, and the FIFO's head (s_wr's own
    /// when it is empty).
    slots: Vec<Expr>,
    valid: Vec<Signal>,
    wait: Vec<Option<Signal>>,
    known: Vec<Signal>,
    /// Per stage and field ([`FIELDS`] order): held, its mode bit (head
    /// and pend) and its value.
    held: Vec<Vec<(Signal, Option<Signal>, Signal)>>,
    reqs: Vec<Expr>,
    head: Expr,
    accept: Signal,
    pop: Signal,
    placed: Signal,
    n1: Signal,
    try_: Signal,
    take: Signal,
    /// The write stage's fields as it acts on them: live, head, pend,
    /// tail, next msn, next rq_seq, pend_streams.
    post: [Signal; 7],
    consumes: Signal,
    /// `post_rule`'s write (live and a free slot), before the stage gate.
    room: Signal,
}

/// The `tx_post` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// The assumption only the forwarding needs: a read answers what the
/// memory held at the start of its cycle ([`formal_tasks`]). The other
/// assertions are proven without it (the answers arbitrary).
pub const FW_ASSUMES: &[&str] = &["asm_s_rd_read_first"];

/// The forwarding's assertions ([`FW_ASSUMES`]).
fn forwarding(label: &str) -> bool {
    label.contains("_fw_")
}

/// The unit's proof tasks (boolector, see [`crate::proof::Task::solver`]):
/// every assertion but the forwarding by k-induction without the
/// [`FW_ASSUMES`] (`prove`, k = 2); the forwarding with them, leaning on
/// what `prove` proves, by 2-induction: for `L` = 1 in one task
/// (`prove_fw`); for `L` = 2 the stages' invariant one group of fields at
/// a time (`prove_fw_<group>`, `FW_GROUPS`, each without the other
/// groups' assertions: neither checked nor assumed), then the write
/// stage's rules leaning on them (`prove_fw_post`). In one query the
/// whole forwarding did not finish in 10 minutes, nor tail, head and pend
/// with the write stage's rule; apart, each group closes in seconds to
/// minutes but `FW_BOUNDED`, a bounded check of [`FW_BMC_DEPTH`]
/// cycles with its write stage's rule. The covers to 12 cycles.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{prove_and_cover, Mode, Task};
    let mut tasks = prove_and_cover(2, 12, false);
    for t in tasks.iter_mut() {
        t.solver = Some("boolector");
    }
    tasks[0].asserts = Some(asserts.iter().filter(|l| !forwarding(l)).cloned().collect());
    tasks[0].without = FW_ASSUMES;
    let fw = |name: &'static str, keep: &dyn Fn(&str) -> bool, without: &'static [&'static str]| Task {
        name,
        mode: Mode::Prove(2),
        asserts: Some(asserts.iter().filter(|l| forwarding(l) && keep(l)).cloned().collect()),
        why_bounded: "",
        arrays: false,
        without,
        lean_on_proven: true,
        connections: None,
        solver: Some("boolector"),
    };
    let two_stages = asserts.iter().any(|l| l.starts_with("a_pp1_"));
    if two_stages {
        for (k, (g, name, _, others)) in FW_GROUPS.iter().enumerate() {
            let own = format!("_fw_{g}");
            let mut t = fw(name, &|l: &str| l.starts_with("a_pp") && l.ends_with(&own), others);
            if *g == FW_BOUNDED {
                // Its write stage's rule with it, removed from prove_fw_post.
                t.asserts = Some(asserts.iter().filter(|l| l.ends_with(&own)).cloned().collect());
                t.mode = Mode::Bmc(FW_BMC_DEPTH);
                t.why_bounded = "on L = 2 the pend group's 2-induction (tail and pend with the other groups' rules \
                                 removed) did not finish in 7 minutes (boolector, load 3-6)";
                t.without = &[];
                t.lean_on_proven = false;
            }
            tasks.insert(1 + k, t);
        }
        // The write stage's rules, leaning on every stage invariant the
        // tasks above prove.
        let post = |l: &str| l.starts_with("a_post_fw_") && !l.ends_with(FW_BOUNDED);
        tasks.insert(1 + FW_GROUPS.len(), fw("prove_fw_post", &post, FW_BOUNDED_ASSERTS));
    } else {
        tasks.insert(1, fw("prove_fw", &|_: &str| true, &[]));
    }
    tasks
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{implies, port};
    let pb = stream_ptr_bits(p.wq_depth);
    let slb = index_bits(p.wq_depth);
    let l = p.read_latency;
    let qn = WR_FIFO as u32;
    let qb = f.q_n.width();
    let sg = |m: &Module, n: &str| port(m, n);
    let rst = sg(m, "rst");
    let en = sg(m, "en");
    let fields = |m: &Module, pre: &str, names: &[&str]| -> Expr {
        cat(&names.iter().map(|n| sg(m, &format!("{pre}{n}")).expr()).collect::<Vec<_>>())
    };
    // A request's fields in REQ order, from an expression of them all.
    let rw: Vec<u32> = REQ.iter().map(|n| sg(m, &format!("s_wr_{n}")).width()).collect();
    let reqs: Vec<Expr> = f
        .reqs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let w = m.formal_wire(&format!("f_pp{i}_req"), e.width().expect("a width"), "the stage's request");
            m.formal_assign(&w, e.clone());
            w.expr()
        })
        .collect();
    let field_of = |e: &Expr, k: usize| -> Expr {
        let lo: u32 = rw[k + 1..].iter().sum();
        e.clone().slice(lo + rw[k] - 1, lo)
    };

    // ------------------------------------------------ the engine's obligations
    // s_wr is a valid/ready channel (AXI4-Stream style): its sender holds
    // valid and the request until the handshake. Nothing else is assumed:
    // the read answers' data, m_flush_room, en and the forwarded writes
    // are arbitrary, so these rules hold whatever the engine does; the
    // read answers' timing is the unit's own (checked below with a shadow
    // of the reads it issues).
    let wr_payload: Vec<Signal> = REQ.iter().map(|n| sg(m, &format!("s_wr_{n}"))).collect();
    crate::formal::valid_ready(
        m,
        "s_wr",
        crate::formal::Side::Sink,
        &sg(m, "s_wr_valid"),
        &sg(m, "s_wr_ready"),
        &wr_payload,
        &rst,
    );

    // ------------------------------------------------ s_wr and the FIFO
    m.assert(
        "a_s_wr_ready",
        &format!(
            "s_wr_ready is en, no setup busy and room in the FIFO (fewer than WR_FIFO = {qn}): registers, never \
             s_wr_valid"
        ),
        sg(m, "s_wr_ready").expr().eq(en
            .expr()
            .logic_and(sg(m, "s_open_busy").expr().logic_not())
            .logic_and(f.q_n.expr().lt(lit(qb, u64::from(qn))))),
    );
    // Requests are numbered as they are taken on s_wr, as they issue
    // their reads (leave the FIFO's head) and as they leave the write
    // stage; the one numbered f_wr_k (any) is tracked throughout.
    const NB: u32 = 8;
    let k = m.formal_anyconst("f_wr_k", NB, "the tracked request's number");
    let acc = m.formal_wire("f_wr_taken", NB, "requests taken on s_wr since reset (mod 256)");
    let rd = m.formal_wire("f_wr_read", NB, "requests that issued their reads since reset (mod 256)");
    let out = m.formal_wire("f_wr_left", NB, "requests that left the write stage since reset (mod 256)");
    let s_wr = fields(m, "s_wr_", &REQ);
    let ew = s_wr.width().expect("a request's width");
    let tracked = m.formal_wire("f_wr_tracked", ew, "the tracked request, as taken");
    let arriving = f.accept.expr().logic_and(acc.expr().eq(&k));
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&acc, lit(NB, 0)), set(&rd, lit(NB, 0)), set(&out, lit(NB, 0))],
        vec![
            if_then(&f.accept, vec![set(&acc, acc.expr() + lit(NB, 1))]),
            if_then(&f.pop, vec![set(&rd, rd.expr() + lit(NB, 1))]),
            if_then(&f.take, vec![set(&out, out.expr() + lit(NB, 1))]),
            if_then(arriving.clone(), vec![set(&tracked, s_wr.clone())]),
        ],
    )]);
    let now = mux(arriving, s_wr, tracked.expr());
    m.assert(
        "a_wf_count",
        &format!("the FIFO holds the requests taken and not read, at most WR_FIFO = {qn}"),
        zext(&f.q_n, NB).eq(acc.expr() - &rd).logic_and(f.q_n.expr().le(lit(qb, u64::from(qn)))),
    );
    m.assert(
        "a_wf_never_empty_pop",
        "a read is issued only with a request in the FIFO or taken this cycle (never from an empty FIFO)",
        implies(&f.pop, f.q_n.expr().ne(lit(qb, 0)).logic_or(&f.accept)),
    );
    m.assert(
        "a_wf_never_overflows",
        &format!("a request queued finds a free slot after this cycle's pop (fewer than WR_FIFO = {qn})"),
        implies(&f.placed, f.n1.expr().lt(lit(qb, u64::from(qn)))),
    );
    crate::formal::tracked_in_place(
        m,
        ("a_wf_tracked_in_place", "while the tracked request is in the FIFO, its slot holds it as taken"),
        ("f_wr_in_fifo", "f_wr_fifo_at"),
        &k,
        &rd,
        &f.q_n,
        &f.slots,
        &tracked,
    );
    m.assert(
        "a_rd_in_order",
        "a read is issued for the request numbered by those read before it, unaltered (s_wr's own in the bypass)",
        implies(f.pop.expr().logic_and(k.expr().eq(&rd)), f.head.clone().eq(&now)),
    );

    // ------------------------------------------------ the stages
    let lb = index_bits(l + 1);
    let occ = f.valid.iter().fold(lit(lb, 0), |a, v| a + zext(v, lb));
    let mut order = lit(1, 1);
    for i in 1..l as usize {
        order = order.logic_and(implies(&f.valid[i], &f.valid[i - 1]));
    }
    m.assert(
        "a_pp_count",
        &format!("the stages hold the requests read and not posted, at most L = {l}, the oldest first with no gap"),
        zext(occ, NB).eq(rd.expr() - &out).logic_and(order),
    );
    let behind = m.formal_wire("f_wr_in_pipe", NB, "requests to leave the write stage before the tracked one");
    m.formal_assign(&behind, k.expr() - &out);
    for (i, r) in reqs.iter().enumerate() {
        m.assert(
            &format!("a_pp{i}_tracked_in_place"),
            &format!("while the tracked request is in stage {i}, the stage holds it as taken"),
            implies(behind.expr().eq(lit(NB, i as u64)).logic_and(&f.valid[i]), r.clone().eq(&tracked)),
        );
    }
    // The read shadow: m_rd valid, connection and stream, 1 to L cycles ago.
    let rdv = cat(&[sg(m, "m_rd_valid").expr(), sg(m, "m_rd_conn").expr(), sg(m, "m_rd_stream").expr()]);
    let mut shadow = vec![m.past("m_rd_1", rdv, "m_rd valid, connection and stream 1 cycle ago")];
    for j in 2..=l {
        let e = shadow[j as usize - 2].expr();
        shadow.push(m.past(&format!("m_rd_{j}"), e, &format!("m_rd {j} cycles ago")));
    }
    for (i, r) in reqs.iter().enumerate() {
        let own = |j: usize| cat(&[lit(1, 1), field_of(r, 0), field_of(r, 1)]).eq(&shadow[j]);
        let fresh = f.valid[i].expr().logic_and(f.known[i].expr().logic_not());
        match &f.wait[i] {
            None => m.assert(
                &format!("a_pp{i}_answer_own"),
                "a stage not answered yet issued its read the cycle before: its answer (this cycle) is its own",
                implies(fresh, own(0)),
            ),
            Some(w) => {
                let wb = w.width();
                m.assert(
                    &format!("a_pp{i}_wait"),
                    &format!("a stage's wait is below L = {l}, and 0 once answered"),
                    implies(&f.valid[i], w.expr().le(lit(wb, u64::from(l - 1))))
                        .logic_and(implies(f.valid[i].expr().logic_and(&f.known[i]), w.expr().eq(lit(wb, 0)))),
                );
                for j in 0..l as usize {
                    let wj = u64::from(l) - 1 - j as u64;
                    m.assert(
                        &format!("a_pp{i}_answer_own_{}", j + 1),
                        &format!(
                            "a stage not answered with wait {wj} issued its read {} cycles ago (its answer at wait 0 \
                             is its own, L = {l} cycles after)",
                            j + 1
                        ),
                        implies(fresh.clone().logic_and(w.expr().eq(lit(wb, wj))), own(j)),
                    );
                }
            }
        }
    }
    let answered0 = f.known[0].expr().logic_or(match &f.wait[0] {
        None => lit(1, 1),
        Some(w) => w.expr().eq(lit(w.width(), 0)),
    });
    m.assert(
        "a_post_after_answer",
        "the write stage acts (posts, flushes or holds) only on the oldest request, once its read answered",
        implies(&f.try_, en.expr().logic_and(&f.valid[0]).logic_and(answered0)),
    );

    // ------------------------------------------------ the write stage
    let [live, head, pend, tail, msn, rq, ps] = f.post.clone();
    let (wv, fv) = (sg(m, "m_wq_wr_valid"), sg(m, "m_flush_valid"));
    m.assert(
        "a_post_one",
        "a request leaves as a post or a flush, never both, and only from the write stage's try",
        wv.expr()
            .logic_and(&fv)
            .logic_not()
            .logic_and(f.take.expr().eq(wv.expr().logic_or(&fv)))
            .logic_and(implies(&f.take, &f.try_)),
    );
    let room_w = m.formal_wire("f_post_room", 1, "the stream's queue has a free slot (tail - head < depth)");
    m.formal_assign(&room_w, (tail.expr() - head.expr()).lt(lit(pb, u64::from(p.wq_depth))));
    m.assert(
        "a_post_hold",
        "a try that does not leave holds only on a full stream (live) or no flush room (not live)",
        implies(
            f.try_.expr().logic_and(f.take.expr().logic_not()),
            mux(&live, room_w.expr().logic_not(), sg(m, "m_flush_room").expr().logic_not()),
        ),
    );
    m.assert(
        "a_post_write_room",
        &format!("a post only to a live connection and a stream with a free slot (tail - head < {})", p.wq_depth),
        implies(&wv, live.expr().logic_and(&room_w)),
    );
    m.assert(
        "a_flush_room",
        "a flush only to a connection not live and only with m_flush_room",
        implies(&fv, live.expr().logic_not().logic_and(sg(m, "m_flush_room"))),
    );
    let slot = if p.wq_depth == 1 { lit(slb, 0) } else { tail.expr().slice(slb - 1, 0) };
    let r0 = &reqs[0];
    m.assert(
        "a_post_names_the_request",
        "a post writes the write stage's request at its stream's tail, its msn and rq_seq, and moves the stream's \
         tail, msn and rq_seq (only a request that consumes a receive) on by one",
        implies(
            &wv,
            sg(m, "m_wq_wr_conn")
                .expr()
                .eq(field_of(r0, 0))
                .logic_and(sg(m, "m_wq_wr_stream").expr().eq(field_of(r0, 1)))
                .logic_and(sg(m, "m_wq_wr_slot").expr().eq(slot))
                .logic_and(fields(m, "m_wq_wr_", &REQ[2..]).eq(r0.clone().slice(rw[2..].iter().sum::<u32>() - 1, 0)))
                .logic_and(sg(m, "m_wq_wr_msn").expr().eq(&msn))
                .logic_and(sg(m, "m_wq_wr_rq_seq").expr().eq(&rq))
                .logic_and(sg(m, "m_sw_tail").expr().eq(tail.expr() + lit(pb, 1)))
                .logic_and(sg(m, "m_sw_next_msn").expr().eq(msn.expr() + lit(24, 1)))
                .logic_and(sg(m, "m_sw_next_rq_seq").expr().eq(rq.expr() + zext(&f.consumes, 24))),
        ),
    );
    let nb = ps.width();
    m.assert(
        "a_post_pend_streams",
        "a post counts its stream in pend_streams if it had no bytes to cut (pend = tail), else keeps the count",
        implies(&wv, sg(m, "m_pend_streams").expr().eq(ps.expr() + zext(pend.expr().eq(&tail), nb))),
    );
    let fl = FLUSHED.map(|(f, _)| f);
    let fl_req = cat(&fl.iter().map(|n| field_of(r0, req_index(n))).collect::<Vec<_>>());
    m.assert(
        "a_flush_names_the_request",
        "a flush completes the write stage's request",
        implies(&fv, fields(m, "m_flush_", &fl).eq(fl_req)),
    );
    let wq_all = fields(
        m,
        "",
        &[
            "m_wq_wr_conn",
            "m_wq_wr_stream",
            "m_wq_wr_slot",
            "m_wq_wr_op",
            "m_wq_wr_wr_id",
            "m_wq_wr_laddr",
            "m_wq_wr_len",
            "m_wq_wr_raddr",
            "m_wq_wr_rkey",
            "m_wq_wr_imm",
            "m_wq_wr_msn",
            "m_wq_wr_rq_seq",
            "m_sw_tail",
            "m_sw_next_msn",
            "m_sw_next_rq_seq",
            "m_pend_streams",
        ],
    );
    let wq_w = wq_all.width().expect("a width");
    let fl_all = fields(m, "m_flush_", &fl);
    let fl_w = fl_all.width().expect("a width");
    m.assert(
        "a_outputs_zero",
        "every write field is 0 without m_wq_wr_valid, every flush field without m_flush_valid",
        implies(wv.expr().logic_not(), wq_all.eq(zeros(wq_w)))
            .logic_and(implies(fv.expr().logic_not(), fl_all.eq(zeros(fl_w)))),
    );
    let left = cat(&[field_of(&tracked.expr(), 0), field_of(&tracked.expr(), 1)]);
    m.assert(
        "a_post_in_order",
        "the request leaving is the one numbered by those that left before it: none lost, doubled or altered, in \
         arrival order",
        implies(f.take.expr().logic_and(k.expr().eq(&out)), r0.clone().eq(&tracked))
            .logic_and(implies(
                wv.expr().logic_and(k.expr().eq(&out)),
                cat(&[sg(m, "m_wq_wr_conn").expr(), sg(m, "m_wq_wr_stream").expr()]).eq(left.clone()),
            ))
            .logic_and(implies(
                fv.expr().logic_and(k.expr().eq(&out)),
                cat(&[sg(m, "m_flush_conn").expr(), sg(m, "m_flush_stream").expr()]).eq(left),
            )),
    );

    // ------------------------------------------------ forwarding
    // A ghost of one connection's (f_fw_conn, any) context fields and one
    // of its streams' (f_fw_stream, any) word, in FIELDS order, with every
    // write the unit is told of or makes applied in the model's order. The
    // engine's obligation: a read of them answers, L cycles later, what
    // they held at the start of the read's cycle (read-first). The unit's
    // side: the write stage acts on them as they stand after this cycle's
    // writes before the post.
    let cb = sg(m, "s_wr_conn").width();
    let sb = sg(m, "s_wr_stream").width();
    let gc = m.formal_anyconst("f_fw_conn", cb, "the tracked connection");
    let gs = m.formal_anyconst("f_fw_stream", sb, "the tracked stream of it");
    let fw: Vec<u32> = FIELDS.iter().map(|(_, a, _)| sg(m, a).width()).collect();
    let g: Vec<Signal> = FIELDS
        .iter()
        .zip(&fw)
        .map(|((n, _, _), &wd)| m.formal_wire(&format!("f_fw_{n}"), wd, "the tracked field as the memory holds it"))
        .collect();
    let on_c = |m: &Module, v: &str, c: &str| sg(m, v).expr().logic_and(sg(m, c).expr().eq(&gc));
    let on_s = |m: &Module, v: &str, c: &str, st: &str| on_c(m, v, c).logic_and(sg(m, st).expr().eq(&gs));
    let upd = |v: &mut [Expr], k: usize, c: &Expr, e: Expr| v[k] = mux(c.clone(), e, v[k].clone());
    let mut v: Vec<Expr> = g.iter().map(Signal::expr).collect();
    let (cut_c, cut_s) = (on_c(m, "s_cut_valid", "s_cut_conn"), on_s(m, "s_cut_valid", "s_cut_conn", "s_cut_stream"));
    upd(&mut v, PEND, &cut_s, sg(m, "s_cut_pend").expr());
    upd(&mut v, PS, &cut_c, sg(m, "s_cut_pend_streams").expr());
    upd(&mut v, HEAD, &on_s(m, "s_sw_head_valid", "s_sw_conn", "s_sw_stream"), sg(m, "s_sw_head").expr());
    upd(&mut v, PEND, &on_s(m, "s_sw_drain_valid", "s_sw_conn", "s_sw_stream"), sg(m, "s_sw_pend").expr());
    let fail = on_c(m, "s_fail_valid", "s_fail_conn");
    upd(&mut v, LIVE, &fail, lit(1, 0));
    upd(&mut v, PS, &fail, lit(fw[PS], 0));
    let open = on_c(m, "s_open_valid", "s_open_conn");
    upd(&mut v, LIVE, &open, lit(1, 1));
    upd(&mut v, PS, &open, lit(fw[PS], 0));
    upd(&mut v, MSN, &open, lit(24, 0));
    upd(&mut v, RQ, &open, lit(24, 0));
    let t = v[TAIL].clone();
    upd(&mut v, HEAD, &open, t.clone());
    upd(&mut v, PEND, &open, t);
    let pre: Vec<Signal> = FIELDS
        .iter()
        .zip(&fw)
        .zip(&v)
        .map(|(((n, _, _), &wd), e)| {
            let w = m.formal_wire(
                &format!("f_fw_{n}_pre"),
                wd,
                "the tracked field after this cycle's writes before the post",
            );
            m.formal_assign(&w, e.clone());
            w
        })
        .collect();
    let mut v: Vec<Expr> = pre.iter().map(Signal::expr).collect();
    let post_c = on_c(m, "m_wq_wr_valid", "m_wq_wr_conn");
    let post_s = post_c.clone().logic_and(sg(m, "m_wq_wr_stream").expr().eq(&gs));
    upd(&mut v, TAIL, &post_s, sg(m, "m_sw_tail").expr());
    upd(&mut v, MSN, &post_s, sg(m, "m_sw_next_msn").expr());
    upd(&mut v, RQ, &post_s, sg(m, "m_sw_next_rq_seq").expr());
    upd(&mut v, PS, &post_c, sg(m, "m_pend_streams").expr());
    let rdf = on_c(m, "s_rdfail_valid", "s_rdfail_conn");
    upd(&mut v, LIVE, &rdf, lit(1, 0));
    upd(&mut v, PS, &rdf, lit(fw[PS], 0));
    m.formal_seq(g.iter().zip(v).map(|(r, e)| set(r, e)).collect());
    // The tracked fields 1 to L cycles back (at the start of each cycle).
    let gcat = cat(&g.iter().map(Signal::expr).collect::<Vec<_>>());
    let mut snaps = vec![m.past("fw_1", gcat, "the tracked fields 1 cycle ago")];
    for j in 2..=l {
        let e = snaps[j as usize - 2].expr();
        snaps.push(m.past(&format!("fw_{j}"), e, &format!("the tracked fields {j} cycles ago")));
    }
    let gw: u32 = fw.iter().sum();
    let snap_f = |j: usize, k: usize| -> Expr {
        let lo = gw - fw[..=k].iter().sum::<u32>();
        snaps[j].slice(lo + fw[k] - 1, lo)
    };
    let conn_fields = [LIVE, PS];
    let stream_fields = [TAIL, MSN, RQ, HEAD, PEND];
    // The engine's side: the answer to a read of the tracked connection
    // (and stream) L cycles ago is the fields as they stood then.
    let back = &shadow[l as usize - 1];
    let rd_c = back.bit(cb + sb).logic_and(back.slice(cb + sb - 1, sb).eq(&gc));
    let rd_s = rd_c.clone().logic_and(back.slice(sb - 1, 0).eq(&gs));
    let same = |ks: &[usize]| {
        ks.iter().fold(lit(1, 1), |a, &k| a.logic_and(sg(m, FIELDS[k].1).expr().eq(snap_f(l as usize - 1, k))))
    };
    m.assume(
        "asm_s_rd_read_first",
        &format!(
            "a read answers L = {l} cycles later what the connection's context and the stream's word held at the \
             start of the read's cycle (read-first)"
        ),
        implies(rd_c, same(&conn_fields)).logic_and(implies(rd_s, same(&stream_fields))),
    );
    // Helper invariants: a stage of the tracked connection (and stream)
    // holds each field as the memory does, or, before its answer, the
    // memory still holds what the read will answer (or, a reopen's head
    // and pend, the tail the read will answer).
    for (i, r) in reqs.iter().enumerate() {
        let mine_c = f.valid[i].expr().logic_and(field_of(r, 0).eq(&gc));
        let mine_s = mine_c.clone().logic_and(field_of(r, 1).eq(&gs));
        let snap_j = |k: usize| -> Expr {
            match &f.wait[i] {
                None => snap_f(0, k),
                Some(w) => (0..l as usize).fold(lit(fw[k], 0), |a, j| {
                    mux(w.expr().eq(lit(w.width(), u64::from(l) - 1 - j as u64)), snap_f(j, k), a)
                }),
            }
        };
        let field_ok = |k: usize| -> Expr {
            let (ov, eqt, val) = &f.held[i][k];
            let eq = eqt.as_ref().map_or(lit(1, 0), Signal::expr);
            let known = f.known[i].expr();
            let kept = implies(ov.expr().logic_and(eq.clone().logic_not()), val.expr().eq(&g[k]));
            let mut fresh = implies(ov.expr().logic_not(), g[k].expr().eq(snap_j(k)));
            if eqt.is_some() {
                fresh = fresh.logic_and(implies(eq.clone(), ov.expr().logic_and(g[k].expr().eq(snap_j(TAIL)))));
            }
            kept.logic_and(mux(known, ov.expr().logic_and(eq.logic_not()), fresh))
        };
        let all = |ks: &[usize]| ks.iter().fold(lit(1, 1), |a, &k| a.logic_and(field_ok(k)));
        for (g, _, ks, _) in FW_GROUPS {
            let mine = if conn_fields.contains(&ks[0]) { mine_c.clone() } else { mine_s.clone() };
            m.assert(
                &format!("a_pp{i}_fw_{g}"),
                &format!(
                    "stage {i}, of the tracked connection (and stream), fields {}: each it holds is the memory's, \
                     and one not held yet (before its answer) is still what its read will answer",
                    names(ks)
                ),
                implies(mine, all(ks)),
            );
        }
    }
    let post_f = [live.clone(), ps.clone(), tail.clone(), msn.clone(), rq.clone(), head.clone(), pend.clone()];
    let eq_pre = |ks: &[usize]| ks.iter().fold(lit(1, 1), |a, &k| a.logic_and(post_f[k].expr().eq(&pre[k])));
    let c0 = f.try_.expr().logic_and(field_of(r0, 0).eq(&gc));
    let s0 = c0.clone().logic_and(field_of(r0, 1).eq(&gs));
    for (g, _, ks, _) in FW_GROUPS {
        let mine = if conn_fields.contains(&ks[0]) { c0.clone() } else { s0.clone() };
        m.assert(
            &format!("a_post_fw_{g}"),
            &format!(
                "the write stage acts on its connection's and stream's {} as they stand after this cycle's writes \
                 before the post (the model's order): forwarding loses no write and invents none",
                names(ks)
            ),
            implies(mine, eq_pre(ks)),
        );
    }

    // ------------------------------------------------ covers
    let past_take = m.past("post_take", f.take.expr().logic_and(rst.expr().logic_not()), "a request left last cycle");
    m.cover("c_back_to_back", "two requests are posted on consecutive cycles", wv.expr().logic_and(&past_take));
    m.cover(
        "c_hold_full",
        "the write stage holds on a full stream",
        f.try_.expr().logic_and(&live).logic_and(f.room.expr().logic_not()),
    );
    m.cover("c_flush", "a request to a connection not live is flushed", fv.expr());
    m.cover(
        "c_flush_held",
        "a flush waits for m_flush_room",
        f.try_.expr().logic_and(live.expr().logic_not()).logic_and(sg(m, "m_flush_room").expr().logic_not()),
    );
    // A commit's pend written to a stage before its read answered, from
    // the stage's read to its post.
    let cut_in = (0..l as usize)
        .map(|i| m.formal_wire(&format!("f_pp{i}_cut"), 1, "a commit wrote the stage's pend before its answer"))
        .collect::<Vec<_>>();
    let cut_at = |i: usize| -> Expr {
        Signal::new(&format!("pp{i}_fw_cut_s"), 1).expr().logic_and(f.known[i].expr().logic_not())
    };
    let in_cut = Signal::new("in_fw_cut_s", 1).expr();
    let mut seq = Vec::new();
    for i in 0..l as usize {
        let own = cut_in[i].expr().logic_or(cut_at(i));
        let next = if i + 1 < l as usize { cut_in[i + 1].expr().logic_or(cut_at(i + 1)) } else { lit(1, 0) };
        let fill = Signal::new(&format!("pp{i}_fill"), 1);
        seq.push(if_else(&fill, vec![set(&cut_in[i], in_cut.clone())], vec![set(&cut_in[i], mux(&f.take, next, own))]));
    }
    m.formal_seq(seq);
    m.cover(
        "c_post_pend_forwarded",
        "a request is posted whose pend a commit wrote while its read was in flight",
        wv.expr().logic_and(cut_in[0].expr().logic_or(cut_at(0))),
    );
    m.cover("c_wf_full", &format!("the FIFO fills to WR_FIFO = {qn}"), f.q_n.expr().eq(lit(qb, u64::from(qn))));
    m.cover(
        "c_post_tracked",
        "a request after the first leaves as tracked",
        f.take.expr().logic_and(k.expr().eq(&out)).logic_and(k.expr().ne(lit(NB, 0))),
    );
}
