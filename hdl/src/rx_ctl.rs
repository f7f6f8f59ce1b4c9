//! `rx_ctl` RTL: the generator of the receive controller
//! [`mrnic_model::rx_ctl`], with the same ports (the model's list plus
//! `clk`) and the same cycle timing. The model's doc comment is the
//! specification: one packet at a time through conn_table, msg_check,
//! mr_check or recv_match, sack_gen, cpl_engine and the DMA engine.
//!
//! Structure: a state register (one state per step of the model's `St`)
//! with `step_idx` for the states that count (the OPEN beat's path, the
//! verdict's countdown, the FLUSH beat's path); the header in hand and the
//! lookup's answer in registers; one registered entry per output channel
//! (`<channel>_on` and a register per field), loaded whole when the step
//! offers it (fields it does not name are 0) and cleared when taken. The
//! pass-through channels (`m_pkt` from `s_walk` during a PROBE walk,
//! `m_cnack` from `s_gnack`, `m_nack` from `s_found`, `m_csack` from
//! `s_gsack`) are muxes in front of those registers. The next-state block
//! keeps the model's order within a cycle: entries taken, then the step,
//! then the stream's completed_msn as cpl_engine publishes it.

use mrnic_model::block::PortDef;
use mrnic_model::rx_ctl::{
    self as model, RxCtlParams, ECN_CE, NACK_ACCESS, NACK_BAD_HDR, NACK_NO_CONN, NACK_RNR, OPC_NACK, OPC_PROBE,
    OPC_SACK, OPC_SEND, OPC_SEND_IMM, OPC_WRITE_IMM,
};
use mrnic_model::sack_gen::{OP_DATA, OP_FLUSH, OP_OPEN, OP_PROBE};
use mrnic_proto::field::Field;
use mrnic_proto::layouts::{common, data, nack, probe, sack};
use mrnic_proto::Config;

use crate::expr::{fit, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{case, if_else, if_then, set, Module, Reg, Stmt};
use crate::ports::{declare, ConfigError};

/// The model's sizes, refused in the shape `gen::BLOCKS` reports (the
/// reason names the part whose sizes the config breaks).
pub struct Params(RxCtlParams);

impl Params {
    pub fn from_config(cfg: &Config) -> Result<Params, ConfigError> {
        RxCtlParams::from_config(cfg).map(Params).map_err(|e| ConfigError {
            field: e.field,
            value: e.value,
            why: e.why,
        })
    }
}

crate::block_api!(mrnic_model::rx_ctl, Params, ConfigError);

/// States, one per step of the model's `St`.
const IDLE: u64 = 0;
const OPEN: u64 = 1;
const LOOKUP: u64 = 2;
const NC: u64 = 3;
const ACK: u64 = 4;
const PROBE: u64 = 5;
const WALK: u64 = 6;
const MSG_CHK: u64 = 7;
const MR_CHK: u64 = 8;
const MATCH: u64 = 9;
const BEAT: u64 = 10;
const VERDICT: u64 = 11;
const ACCEPT: u64 = 12;
const PLACE: u64 = 13;
const HOLD: u64 = 14;
const RELEASE: u64 = 15;
const FLUSH: u64 = 16;
const PAY: u64 = 17;
const STATE_BITS: u32 = 5;
/// `step_idx` bits: an OPEN beat's path runs to 256 (`s_open_paths` is 8
/// bits), a FLUSH beat's to 64.
const IDX_BITS: u32 = 9;
/// `since_pkt` saturates here: it is only compared with the read latency
/// (1 or 2).
const SINCE_MAX: u64 = 3;

/// `code` register bits: NACK codes 0..4.
const CODE_BITS: u32 = 3;

/// The output channels with a registered entry: port prefix, the short
/// name of their registers, and the steps in which the entry can be on
/// (each step offers only entries that are not, so none is overwritten
/// while stalled; asserted, they are the invariants induction needs).
const OFFERS: [(&str, &str, &[u64]); 16] = [
    ("m_pay", "pay", &[PAY, PLACE]),
    ("m_lk", "lk", &[LOOKUP]),
    ("m_nc", "nc", &[NC]),
    ("m_probe", "probe", &[PROBE]),
    ("m_chk", "chk", &[MSG_CHK]),
    ("m_acc", "acc", &[ACCEPT]),
    ("m_mopen", "mopen", &[OPEN]),
    ("m_mr", "mr", &[MR_CHK]),
    ("m_lookup", "lookup", &[MATCH]),
    ("m_pkt", "pkt", &[OPEN, BEAT, FLUSH]),
    ("m_req", "req", &[PLACE]),
    ("m_new", "new", &[ACCEPT]),
    ("m_copen", "copen", &[OPEN]),
    ("m_sack", "sack", &[ACK]),
    ("m_nack", "nack", &[ACK]),
    ("m_cnack", "cnack", &[PAY, IDLE]),
];

/// The fields of `prefix`'s channel in `defs`, valid and ready left out:
/// (field, width).
fn fields(defs: &[PortDef], prefix: &str) -> Vec<(String, u32)> {
    model::channel_fields(defs, prefix).into_iter().map(|(f, w, _)| (f, w)).collect()
}

/// An output channel's registered entry.
struct Offer {
    prefix: &'static str,
    short: &'static str,
    steps: &'static [u64],
    on: Reg,
    fields: Vec<(String, Reg)>,
}

impl Offer {
    fn field(&self, name: &str) -> &Reg {
        let f = self.fields.iter().find(|(n, _)| n == name);
        &f.unwrap_or_else(|| panic!("rx_ctl: {} has no field {name}", self.prefix)).1
    }

    /// Offers an entry: every field 0 but those `set` names.
    fn offer(&self, set_to: &[(&str, Expr)]) -> Vec<Stmt> {
        for (n, _) in set_to {
            self.field(n);
        }
        let mut v = vec![set(&self.on.next, lit(1, 1))];
        for (n, r) in &self.fields {
            let w = r.q.width();
            let e = set_to.iter().find(|(m, _)| m == n).map_or_else(|| zeros(w), |(_, e)| fit(e.clone(), w));
            v.push(set(&r.next, e));
        }
        v
    }
}

/// A pass-through channel: the part's entry goes first on `ch` unless the
/// own entry is `shown` (presented and stalled).
struct Pass {
    ch: &'static str,
    src: &'static str,
    /// The channel is open to `src` this cycle.
    open: Signal,
    /// `src`'s entry is on the channel.
    pass: Signal,
    shown: Reg,
}

/// A 24-bit completed_msn of stream `stream` in `msns` (stream i at bits
/// 24i+23..24i), 0 for a stream the connection does not have.
fn msn_of(stream: &Signal, msns: &Signal, streams: u32) -> Expr {
    let sw = stream.width();
    let mut e = lit(24, 0);
    for s in (0..streams).rev() {
        e = mux(stream.expr().eq(lit(sw, u64::from(s))), msns.slice(24 * s + 23, 24 * s), e);
    }
    e
}

fn build(p: &Params) -> Module {
    let p = &p.0;
    let defs = model::ports(p);
    let l = p.read_latency;
    let mut m = Module::new(model::NAME);
    m.describe(
        "the receive controller: each header to its end through conn_table, msg_check, mr_check or recv_match, \
         sack_gen, cpl_engine and the DMA engine, one packet at a time",
    );
    let (clk, sig) = declare(&mut m, &defs);
    let port = |n: &str| sig[n].clone();
    let rst = port("rst");
    m.clock_domain(&clk, &rst);
    let raw_bytes = (port("s_hdr_raw").width() / 8) as usize;
    let slice_of = |s: &Signal, f: &Field| {
        let (hi, lo) = f.vector_range(raw_bytes);
        s.slice(hi as u32, lo as u32)
    };

    // ---- state ----
    let st = m.reg("state", STATE_BITS, IDLE, "the step of the packet in hand (the model's St)");
    let idx = m.reg("step_idx", IDX_BITS, 0, "OPEN: the next path; VERDICT: cycles left; FLUSH: the path");
    // The header in hand: every s_hdr field, reset so that a reset
    // mid-packet leaves what the model's reset leaves (all zero).
    let h: Vec<(String, Reg)> = fields(&defs, "s_hdr")
        .into_iter()
        .map(|(f, w)| {
            let r = m.reg(&format!("hdr_{f}"), w, 0, "the header in hand");
            (f, r)
        })
        .collect();
    let hq = |n: &str| -> Signal {
        h.iter().find(|(f, _)| f == n).unwrap_or_else(|| panic!("rx_ctl: no s_hdr_{n}")).1.q.clone()
    };
    // A register per named field of an input channel, as wide as its port.
    let keep = |m: &mut Module, ch: &str, names: &[&str], base: &str, comment: &str| -> Vec<(String, Reg)> {
        let regs = names.iter().map(|f| {
            let w = port(&format!("{ch}_{f}")).width();
            (f.to_string(), m.reg(&format!("{base}_{f}"), w, 0, comment))
        });
        regs.collect()
    };
    let lk = keep(&mut m, "s_lkr", &["conn", "remote_id", "paths", "active", "msns"], "lkr", "the lookup's answer");
    let lkq = |n: &str| lk.iter().find(|(f, _)| f == n).expect("a lookup field").1.q.clone();
    let open = keep(&mut m, "s_open", &["conn", "paths", "psn"], "open", "the open being applied");
    let code = m.reg("code", CODE_BITS, 0, "the refusal's NACK code (0: none)");
    let place_addr = m.reg("place_addr", 64, 0, "the placement's address (the WRITE's, or the SEND's receive's)");
    let place_key = m.reg("place_key", 32, 0, "the placement's key (the WRITE's rkey, or the receive's lkey)");
    let answered = m.reg("answered", 1, 0, "sack_gen answered the beat (a stale, window or duplicate pulse)");
    let new = m.reg("new", 1, 0, "sack_gen's m_new came for the beat");
    let held = m.reg("held", 1, 0, "a SACK of sack_gen's was waiting at the verdict");
    let cmsn = m.reg("cmsn", 24, 0, "the stream's completed_msn as last published");
    let hold = m.reg("hold", 1, 0, "sack_gen's SACKs are held");
    let replace_v = m.reg("replace_v", 1, 0, "the next SACK's completed_msn is replaced");
    let replace = m.reg("replace", 24, 0, "its replacement");
    let since = m.reg("since_pkt", 2, SINCE_MAX, "cycles since the last beat to sack_gen (saturating)");
    let tag = m.reg("tag", 16, 0, "the last placement's tag");
    let bad_hdr = m.reg("bad_hdr", 1, 0, "pulse: the controller's BAD_HDR NACK");
    let access = m.reg("access", 1, 0, "pulse: the controller's ACCESS NACK");
    let offers: Vec<Offer> = OFFERS
        .iter()
        .map(|&(prefix, short, steps)| {
            let on = m.reg(&format!("{short}_on"), 1, 0, &format!("an entry is offered on {prefix}"));
            let fields = fields(&defs, prefix)
                .into_iter()
                .map(|(f, w)| {
                    let r = m.reg(&format!("{short}_{f}"), w, 0, &format!("{prefix}_{f} of the entry"));
                    (f, r)
                })
                .collect();
            Offer { prefix, short, steps, on, fields }
        })
        .collect();
    let o = |prefix: &str| offers.iter().find(|x| x.prefix == prefix).expect("an offer");

    // ---- this cycle's handshakes ----
    let is = |s: u64| st.q.expr().eq(lit(STATE_BITS, s));
    let walking = m.wire_from("walking", 1, "probe_walk's beats pass to sack_gen", is(WALK));
    let free = m.wire_from(
        "free",
        1,
        "nothing of the previous packet is still offered on a shared channel",
        (o("m_cnack").on.q.expr() | &o("m_nack").on.q | &o("m_sack").on.q | &o("m_pkt").on.q | &o("m_pay").on.q)
            .logic_not(),
    );
    let idle = m.wire_from("idle", 1, "a header or an open may be taken", rst.expr().logic_not() & is(IDLE) & &free);
    let open_v = port("s_open_valid");
    m.assign(port("s_open_ready"), &idle);
    m.assign(port("s_hdr_ready"), idle.expr() & open_v.expr().logic_not());
    for ch in ["s_lkr", "s_tnack", "s_chkr", "s_mrr", "s_match", "s_gnew"] {
        m.assign(port(&format!("{ch}_ready")), rst.expr().logic_not());
    }
    // The pass-through channels: a part's valid entry goes first, unless
    // the controller's own entry is already presented and stalled (AXI: a
    // presented entry stays until taken). (channel, source, open to it).
    let pass_chans =
        [("m_pkt", "s_walk", Some(walking.expr())), ("m_cnack", "s_gnack", None), ("m_nack", "s_found", None)];
    // In a fixed order: the next-state block is printed from it.
    let mut passes: Vec<Pass> = Vec::new();
    for (ch, src, when) in pass_chans {
        let x = o(ch);
        let shown = m.reg(&format!("{}_shown", x.short), 1, 0, &format!("{ch}'s own entry was presented and stalled"));
        let open = m.wire_from(
            &format!("{}_open", x.short),
            1,
            &format!("{ch} is open to {src}"),
            match when {
                Some(w) => w & shown.q.expr().logic_not(),
                None => shown.q.expr().logic_not(),
            },
        );
        let pass = m.wire_from(
            &format!("{}_pass", x.short),
            1,
            &format!("{src}'s entry is on {ch}"),
            open.expr() & &port(&format!("{src}_valid")),
        );
        passes.push(Pass { ch, src, open, pass, shown });
    }
    let pass_of = |ch: &str| passes.iter().find(|ps| ps.ch == ch);
    // Entries taken this cycle.
    let mut left = std::collections::HashMap::new();
    for x in &offers {
        let ready = port(&format!("{}_ready", x.prefix));
        let taken = match pass_of(x.prefix) {
            Some(ps) => ps.pass.expr().logic_not() & &ready,
            None => ready.expr(),
        };
        let l = m.wire_from(
            &format!("{}_left", x.short),
            1,
            &format!("{}'s entry is still offered after this edge", x.prefix),
            x.on.q.expr() & taken.logic_not(),
        );
        left.insert(x.prefix, l);
    }
    let lft = |prefix: &str| left[prefix].expr();
    let pkt_fired = m.wire_from(
        "pkt_fired",
        1,
        "a beat to sack_gen is taken",
        mux(
            &pass_of("m_pkt").expect("m_pkt passes").pass,
            port("m_pkt_ready"),
            o("m_pkt").on.q.expr() & lft("m_pkt").logic_not(),
        ),
    );
    // sack_gen's SACKs: held, except one already presented.
    let gsack_v = port("s_gsack_valid");
    let csack_shown = m.reg("csack_shown", 1, 0, "a SACK on m_csack was presented and stalled");
    let csack_on =
        m.wire_from("csack_on", 1, "sack_gen's SACKs pass to tx_engine", hold.q.expr().logic_not() | &csack_shown.q);
    let csack_presented =
        m.wire_from("csack_presented", 1, "a SACK is on m_csack this cycle", csack_on.expr() & &gsack_v);
    let replace_clear = m.wire_from(
        "replace_clear",
        1,
        "the SACK whose completed_msn is replaced is taken",
        replace_v.q.expr() & &csack_presented & &port("m_csack_ready"),
    );
    let since_next = m.wire_from(
        "since_next",
        2,
        "since_pkt after this edge",
        mux(&pkt_fired, lit(2, 0), mux(since.q.expr().eq(lit(2, SINCE_MAX)), &since.q, since.q.expr() + lit(2, 1))),
    );
    let take_open = m.wire_from("take_open", 1, "an open is taken", is(IDLE) & &free & &open_v);
    let take_hdr = m.wire_from(
        "take_hdr",
        1,
        "a header is taken",
        is(IDLE) & &free & open_v.expr().logic_not() & &port("s_hdr_valid"),
    );
    let lookup_done = m.wire_from(
        "lookup_done",
        1,
        "conn_table answered the lookup",
        is(LOOKUP) & lft("m_lk").logic_not() & &port("s_lkr_valid"),
    );
    let lkr_msn = m.wire_from(
        "lkr_msn",
        24,
        "the stream's completed_msn in the lookup's answer",
        msn_of(&hq("stream_id"), &port("s_lkr_msns"), p.streams),
    );
    let held_msn = m.wire_from(
        "held_msn",
        24,
        "the stream's completed_msn in the held answer",
        msn_of(&hq("stream_id"), &lkq("msns"), p.streams),
    );
    let taps = port("tap_stale_gen").expr() | &port("tap_psn_window") | &port("tap_duplicate");
    let answered_now = m.wire_from("answered_now", 1, "sack_gen has answered the beat", answered.q.expr() | taps);
    let new_now = m.wire_from("new_now", 1, "sack_gen's m_new has come", new.q.expr() | &port("s_gnew_valid"));

    // The header in hand's fields, and its raw views.
    let opc = hq("opcode");
    let opw = opc.width();
    let op_is = |v: u64| opc.expr().eq(lit(opw, v));
    let send = m.wire_from("hdr_send", 1, "SEND or SEND_IMM", op_is(OPC_SEND) | op_is(OPC_SEND_IMM));
    let imm_valid =
        m.wire_from("hdr_imm_valid", 1, "WRITE_IMM or SEND_IMM", op_is(OPC_WRITE_IMM) | op_is(OPC_SEND_IMM));
    let raw = hq("raw");
    let hraw = |f: &Field| slice_of(&raw, f);
    let h_e = |n: &str| hq(n).expr();

    // ---- next state ----
    let mut nx: Vec<Stmt> = vec![set(&bad_hdr.next, lit(1, 0)), set(&access.next, lit(1, 0))];
    for x in &offers {
        nx.push(set(&x.on.next, &left[x.prefix]));
    }
    nx.push(if_then(&replace_clear, vec![set(&replace_v.next, lit(1, 0))]));
    for ps in &passes {
        let on = &o(ps.ch).on.q;
        let stalled = on.expr() & ps.pass.expr().logic_not() & port(&format!("{}_ready", ps.ch)).expr().logic_not();
        nx.push(set(&ps.shown.next, stalled));
    }
    nx.push(set(&csack_shown.next, csack_presented.expr() & port("m_csack_ready").expr().logic_not()));
    nx.push(set(&since.next, &since_next));
    let go = |s: u64| set(&st.next, lit(STATE_BITS, s));
    let pay = |drop: Expr| -> Vec<Stmt> { o("m_pay").offer(&[("drop", drop)]) };
    // The packet ends: its payload dropped, then back to IDLE.
    let pay_drop = || -> Vec<Stmt> {
        let mut v = pay(lit(1, 1));
        v.push(go(PAY));
        v
    };
    let idx_set = |e: Expr| set(&idx.next, fit(e, IDX_BITS));

    // IDLE: an open, else a header.
    let in_hdr = |n: &str| port(&format!("s_hdr_{n}")).expr();
    let in_raw = |f: &Field| slice_of(&port("s_hdr_raw"), f);
    let in_op_is = |v: u64| port("s_hdr_opcode").expr().eq(lit(port("s_hdr_opcode").width(), v));
    let mut take_open_s: Vec<Stmt> = open.iter().map(|(f, r)| set(&r.next, port(&format!("s_open_{f}")))).collect();
    take_open_s.extend(o("m_copen").offer(&[("conn", port("s_open_conn").expr())]));
    take_open_s.extend(o("m_mopen").offer(&[("conn", port("s_open_conn").expr())]));
    take_open_s.extend([go(OPEN), idx_set(lit(1, 0))]);
    let mut take_hdr_s: Vec<Stmt> = h.iter().map(|(f, r)| set(&r.next, port(&format!("s_hdr_{f}")))).collect();
    take_hdr_s.extend([
        set(&code.next, lit(CODE_BITS, 0)),
        set(&answered.next, lit(1, 0)),
        set(&new.next, lit(1, 0)),
        set(&held.next, lit(1, 0)),
    ]);
    let no_conn_nack = m.wire_from(
        "in_no_conn_nack",
        1,
        "the header taken is a NO_CONN NACK (for conn_search)",
        in_op_is(OPC_NACK) & in_raw(&nack::CODE).eq(lit(nack::CODE.width, NACK_NO_CONN)),
    );
    let mut nc_s = o("m_nc").offer(&[
        ("dst_conn", in_hdr("dst_conn")),
        ("src_addr", in_hdr("ip_src")),
        ("path_id", in_hdr("path_id")),
        ("code", lit(8, NACK_NO_CONN)),
        ("psn", in_raw(&nack::PATH_PSN)),
    ]);
    nc_s.push(go(NC));
    let in_probe = m.wire_from("in_probe", 1, "the header taken is a PROBE", in_op_is(OPC_PROBE));
    let zero_if_probe = |e: Expr| mux(&in_probe, lit(e.width().expect("width"), 0), e);
    let mut lk_s = o("m_lk").offer(&[
        ("dst_conn", in_hdr("dst_conn")),
        ("path_id", in_hdr("path_id")),
        ("path_gen", in_hdr("path_gen")),
        ("psn", in_hdr("path_psn")),
        ("stream_id", zero_if_probe(in_hdr("stream_id"))),
        ("msn", zero_if_probe(in_hdr("msn"))),
        ("tx_ts", mux(&in_probe, in_raw(&probe::TX_TS), in_hdr("tx_ts"))),
        ("sport", in_hdr("udp_sport")),
        ("plane", in_hdr("plane")),
        ("src_addr", in_hdr("ip_src")),
    ]);
    lk_s.push(go(LOOKUP));
    take_hdr_s.push(if_else(&no_conn_nack, nc_s, lk_s));
    let idle_s = vec![if_then(&take_open, take_open_s), if_then(&take_hdr, take_hdr_s)];

    // OPEN: the opens taken, then one OPEN beat per path.
    let open_q = |n: &str| open.iter().find(|(f, _)| f == n).expect("an open field").1.q.clone();
    let paths9 = zext(open_q("paths"), IDX_BITS);
    let mut beat_open = o("m_pkt").offer(&[
        ("op", lit(8, u64::from(OP_OPEN))),
        ("conn", open_q("conn").expr()),
        ("path_id", idx.q.expr()),
        ("psn", open_q("psn").expr()),
    ]);
    beat_open.push(idx_set(idx.q.expr() + lit(IDX_BITS, 1)));
    let open_s = vec![if_then(
        (lft("m_copen") | lft("m_mopen") | lft("m_pkt")).logic_not(),
        vec![if_else(idx.q.expr().lt(paths9), beat_open, vec![go(IDLE)])],
    )];

    // LOOKUP: where the packet goes.
    let tn = |n: &str| port(&format!("s_tnack_{n}")).expr();
    let tnack_code = port("s_tnack_code");
    let tn_no_conn =
        m.wire_from("tnack_no_conn", 1, "conn_table's NACK is NO_CONN", tnack_code.expr().eq(lit(8, NACK_NO_CONN)));
    let tn_common: Vec<(&str, Expr)> =
        ["dst_conn", "path_id", "path_gen", "psn", "stream_id", "msn", "echo_ts", "sport", "plane", "code"]
            .iter()
            .map(|n| (*n, tn(n)))
            .collect();
    let mut tn_direct = tn_common.clone();
    tn_direct.extend([("direct", lit(1, 1)), ("dst_ip", tn("dst_addr")), ("dst_mac", h_e("eth_src"))]);
    let mut tn_conn = tn_common;
    tn_conn.push(("conn", port("s_lkr_conn").expr()));
    let mut lookup_s: Vec<Stmt> = lk.iter().map(|(f, r)| set(&r.next, port(&format!("s_lkr_{f}")))).collect();
    // Only with a refusal (conn_table sends none otherwise): the NACK
    // channel is then free, and the packet ends here.
    lookup_s.push(if_then(
        port("s_tnack_valid").expr() & port("s_lkr_ok").expr().logic_not(),
        vec![if_else(&tn_no_conn, o("m_cnack").offer(&tn_direct), o("m_cnack").offer(&tn_conn))],
    ));
    lookup_s.push(set(&cmsn.next, &lkr_msn));
    let lconn = port("s_lkr_conn").expr();
    let mut sack_s = o("m_sack").offer(&[
        ("conn", lconn.clone()),
        ("path_id", h_e("path_id")),
        ("cum_psn", hraw(&sack::CUM_PSN)),
        ("ecn_cnt", hraw(&sack::ECN_CNT)),
        ("echo_ts", hraw(&sack::ECHO_TS)),
        ("rate_hint", hraw(&sack::RATE_HINT)),
        ("stream_id", hraw(&common::STREAM_ID)),
        ("completed_msn", hraw(&sack::COMPLETED_MSN)),
        ("dport", h_e("udp_dport")),
        ("bitmap", hraw(&sack::BITMAP)),
    ]);
    sack_s.push(go(ACK));
    let mut nack_s = o("m_nack").offer(&[
        ("conn", lconn.clone()),
        ("path_id", h_e("path_id")),
        ("code", hraw(&nack::CODE)),
        ("psn", hraw(&nack::PATH_PSN)),
    ]);
    nack_s.push(go(ACK));
    let mut probe_s = o("m_probe").offer(&[
        ("conn", lconn.clone()),
        ("remote_id", port("s_lkr_remote_id").expr()),
        ("path_id", h_e("path_id")),
        ("psn", hraw(&probe::PATH_PSN)),
        ("gen", h_e("path_gen")),
        ("tx_ts", hraw(&probe::TX_TS)),
        ("sport", h_e("udp_sport")),
        ("plane", h_e("plane")),
        ("active", port("s_lkr_active").expr()),
        ("msns", port("s_lkr_msns").expr()),
    ]);
    probe_s.push(go(PROBE));
    // A data packet's message fields, as msg_check and cpl_engine take them.
    let msg = |conn: Expr, extra: &[(&'static str, Expr)]| -> Vec<(&'static str, Expr)> {
        let mut v = vec![
            ("conn", conn),
            ("stream", h_e("stream_id")),
            ("msn", h_e("msn")),
            ("send", send.expr()),
            ("msg_len", h_e("msg_len")),
            ("imm_valid", imm_valid.expr()),
            ("imm", h_e("imm")),
            ("rq_seq", hraw(&data::RQ_SEQ)),
        ];
        v.extend(extra.iter().cloned());
        v
    };
    let mut chk_s = o("m_chk").offer(&msg(
        lconn,
        &[("len", h_e("payload_len")), ("msg_offset", hraw(&data::MSG_OFFSET)), ("completed_msn", lkr_msn.expr())],
    ));
    chk_s.push(go(MSG_CHK));
    let ops = |v: &[u64]| v.iter().map(|&x| lit(opw, x)).collect::<Vec<_>>();
    let by_opcode = case(
        &opc,
        vec![
            (ops(&[OPC_SACK]), sack_s),
            (ops(&[OPC_NACK]), nack_s),
            (ops(&[OPC_PROBE]), probe_s),
            // The data opcodes: WRITE, WRITE_IMM, SEND, SEND_IMM.
            (ops(&[0, OPC_WRITE_IMM, OPC_SEND, OPC_SEND_IMM]), chk_s),
        ],
        Some(pay_drop()),
    );
    let route = if_else(port("s_lkr_ok").expr().logic_not(), pay_drop(), vec![by_opcode]);
    lookup_s.push(route);
    let lookup_st = vec![if_then(&lookup_done, lookup_s)];

    let nc_st = vec![if_then(lft("m_nc").logic_not(), pay_drop())];
    let ack_st = vec![if_then((lft("m_sack") | lft("m_nack")).logic_not(), pay_drop())];
    let probe_st = vec![if_then(lft("m_probe").logic_not(), vec![go(WALK)])];
    // probe_walk is ready again once its last beat is taken.
    let walk_st = vec![if_then(port("m_probe_ready").expr() & port("s_walk_valid").expr().logic_not(), pay_drop())];

    // MSG_CHK: the placement check, or straight to the beat.
    let pay_len = hq("payload_len");
    let has_payload = m.wire_from("has_payload", 1, "the packet carries payload", pay_len.expr().ne(lit(16, 0)));
    let place_write = vec![set(&place_addr.next, h_e("addr")), set(&place_key.next, h_e("rkey"))];
    let mut to_lookup = o("m_lookup").offer(&[
        ("conn", lkq("conn").expr()),
        ("stream", h_e("stream_id")),
        ("rq_seq", hraw(&data::RQ_SEQ)),
        ("msg_offset", hraw(&data::MSG_OFFSET)),
        ("payload_len", h_e("payload_len")),
        ("msg_len", h_e("msg_len")),
    ]);
    to_lookup.push(go(MATCH));
    let mut to_mr = o("m_mr").offer(&[
        ("rkey", h_e("rkey")),
        ("addr", h_e("addr")),
        ("len", h_e("payload_len")),
        ("msg_len", h_e("msg_len")),
        ("recv", lit(1, 0)),
    ]);
    to_mr.extend(place_write.clone());
    to_mr.push(go(MR_CHK));
    let mut to_beat = place_write;
    to_beat.push(go(BEAT));
    let after_chk = if_else(&send, to_lookup, vec![if_else(&has_payload, to_mr, to_beat)]);
    let chk_st = vec![if_then(
        lft("m_chk").logic_not() & &port("s_chkr_valid"),
        vec![if_else(
            port("s_chkr_status").expr().ne(lit(port("s_chkr_status").width(), 0)),
            vec![set(&code.next, lit(CODE_BITS, NACK_BAD_HDR)), go(BEAT)],
            vec![after_chk],
        )],
    )];
    let mrr_st = vec![if_then(
        lft("m_mr").logic_not() & &port("s_mrr_valid"),
        vec![
            if_then(
                port("s_mrr_status").expr().ne(lit(port("s_mrr_status").width(), 0)),
                vec![set(&code.next, lit(CODE_BITS, NACK_ACCESS))],
            ),
            go(BEAT),
        ],
    )];

    // MATCH: recv_match's answer; a hit with payload checks the receive's
    // region again by its key.
    let mcode = port("s_match_code");
    let mw = mcode.width();
    let mut recheck = o("m_mr").offer(&[
        ("rkey", port("s_match_lkey").expr()),
        ("addr", port("s_match_addr").expr()),
        ("len", h_e("payload_len")),
        ("msg_len", h_e("msg_len")),
        ("recv", lit(1, 1)),
    ]);
    recheck.push(go(MR_CHK));
    let match_st = vec![if_then(
        lft("m_lookup").logic_not() & &port("s_match_valid"),
        vec![
            if_then(
                mcode.expr().ne(lit(mw, 0)),
                vec![set(
                    &code.next,
                    mux(
                        mcode.expr().eq(lit(mw, NACK_RNR)) | mcode.expr().eq(lit(mw, NACK_ACCESS)),
                        fit(mcode.expr(), CODE_BITS),
                        lit(CODE_BITS, NACK_BAD_HDR),
                    ),
                )],
            ),
            set(&place_addr.next, port("s_match_addr")),
            set(&place_key.next, port("s_match_lkey")),
            if_else(mcode.expr().eq(lit(mw, 0)) & &has_payload, recheck, vec![go(BEAT)]),
        ],
    )];

    // BEAT: the packet's sack_gen beat, once the previous beat's answers
    // are in and no SACK is waiting.
    let beat = |op: u32, path: Expr, msn: Expr, data: bool| -> Vec<Stmt> {
        let mut set_to = vec![
            ("op", lit(8, u64::from(op))),
            ("conn", lkq("conn").expr()),
            ("path_id", path),
            ("stream_id", h_e("stream_id")),
            ("dst_conn", lkq("remote_id").expr()),
            ("completed_msn", msn),
        ];
        if data {
            set_to.extend([
                ("psn", h_e("path_psn")),
                ("gen", h_e("path_gen")),
                ("ce", h_e("ecn").eq(lit(2, ECN_CE))),
                ("ackreq", hraw(&data::ACKREQ)),
                ("bad", code.q.expr().ne(lit(CODE_BITS, 0))),
                ("payload_len", h_e("payload_len")),
                ("msn", h_e("msn")),
                ("tx_ts", h_e("tx_ts")),
                ("sport", h_e("udp_sport")),
                ("plane", h_e("plane")),
            ]);
        }
        o("m_pkt").offer(&set_to)
    };
    let beat_st = vec![if_else(
        &pkt_fired,
        vec![set(&hold.next, lit(1, 1)), go(VERDICT), idx_set(lit(IDX_BITS, u64::from(l) + 1))],
        vec![if_then(
            lft("m_pkt").logic_not() & since_next.expr().gt(lit(2, u64::from(l))) & gsack_v.expr().logic_not(),
            beat(OP_DATA, h_e("path_id"), held_msn.expr(), true),
        )],
    )];

    // VERDICT: what becomes of the packet, L + 1 cycles after its beat.
    let mut refuse = o("m_cnack").offer(&[
        ("conn", lkq("conn").expr()),
        ("path_id", h_e("path_id")),
        ("dst_conn", lkq("remote_id").expr()),
        ("path_gen", h_e("path_gen")),
        ("code", code.q.expr()),
        ("psn", h_e("path_psn")),
        ("stream_id", h_e("stream_id")),
        ("msn", h_e("msn")),
        ("echo_ts", h_e("tx_ts")),
        ("sport", h_e("udp_sport")),
        ("plane", h_e("plane")),
    ]);
    refuse.extend([
        set(&bad_hdr.next, code.q.expr().eq(lit(CODE_BITS, NACK_BAD_HDR))),
        set(&access.next, code.q.expr().eq(lit(CODE_BITS, NACK_ACCESS))),
        set(&hold.next, lit(1, 0)),
    ]);
    refuse.extend(pay_drop());
    let next_tag = tag.q.expr() + lit(16, 1);
    let mut accept = vec![set(&tag.next, next_tag.clone())];
    accept.extend(o("m_acc").offer(&msg(lkq("conn").expr(), &[("len", h_e("payload_len"))])));
    accept.extend(o("m_new").offer(&msg(
        lkq("conn").expr(),
        &[("payload_len", h_e("payload_len")), ("tag", next_tag), ("conn_id", h_e("dst_conn"))],
    )));
    accept.push(go(ACCEPT));
    let mut quiet = vec![set(&hold.next, lit(1, 0))];
    quiet.extend(pay_drop());
    let verdict = if_else(
        code.q.expr().ne(lit(CODE_BITS, 0)) & answered_now.expr().logic_not(),
        refuse,
        vec![if_else(&new_now, accept, quiet)],
    );
    let verdict_st = vec![
        set(&answered.next, &answered_now),
        set(&new.next, &new_now),
        if_else(
            idx.q.expr().le(lit(IDX_BITS, 1)),
            // A SACK already presented is an earlier packet's.
            vec![set(&held.next, gsack_v.expr() & csack_shown.q.expr().logic_not()), verdict],
            vec![idx_set(idx.q.expr() - lit(IDX_BITS, 1))],
        ),
    ];

    // ACCEPT .. PAY: the placement, the hold, the ack clocking.
    let mut place = o("m_req").offer(&[
        ("tag", tag.q.expr()),
        ("rkey", place_key.q.expr()),
        ("addr", place_addr.q.expr()),
        ("len", h_e("payload_len")),
        ("recv", send.expr()),
    ]);
    place.extend(pay(has_payload.expr().logic_not()));
    place.push(go(PLACE));
    let accept_st = vec![if_then((lft("m_acc") | lft("m_new")).logic_not(), place)];
    let place_st = vec![if_then((lft("m_req") | lft("m_pay")).logic_not(), vec![go(HOLD)])];
    // Not while a SACK is presented: the replacement starts on a SACK not
    // yet shown, so it never changes one stalled.
    let hold_st = vec![if_then(
        port("cpl_idle").expr() & csack_presented.expr().logic_not(),
        vec![
            set(&hold.next, lit(1, 0)),
            if_then(&held.q, vec![set(&replace_v.next, lit(1, 1)), set(&replace.next, &cmsn.q)]),
            go(RELEASE),
        ],
    )];
    // The FLUSH beats: from path `from`, skipping the packet's own, while
    // the packet asked for a SACK and the connection has the path.
    let hpath9 = zext(hq("path_id"), IDX_BITS);
    let lpaths9 = zext(lkq("paths"), IDX_BITS);
    let ackreq = m.wire_from("hdr_ackreq", 1, "the packet asked for a SACK", hraw(&data::ACKREQ));
    let flush_from = |m: &mut Module, name: &str, from: Expr| -> Vec<Stmt> {
        let from_w = m.wire_from(&format!("{name}_from"), IDX_BITS, "the first path this step may FLUSH", from);
        let p = m.wire_from(
            &format!("{name}_path"),
            IDX_BITS,
            "the path it FLUSHes: the packet's own skipped",
            mux(from_w.expr().eq(hpath9.clone()), from_w.expr() + lit(IDX_BITS, 1), &from_w),
        );
        let mut b = beat(OP_FLUSH, p.expr(), cmsn.q.expr(), false);
        b.extend([go(FLUSH), idx_set(p.expr())]);
        vec![if_else(ackreq.expr() & p.expr().lt(lpaths9.clone()), b, vec![go(IDLE)])]
    };
    let release_st = vec![if_then(
        (replace_v.q.expr() & replace_clear.expr().logic_not()).logic_not(),
        flush_from(&mut m, "release", lit(IDX_BITS, 0)),
    )];
    let flush_st =
        vec![if_then(lft("m_pkt").logic_not(), flush_from(&mut m, "flush", idx.q.expr() + lit(IDX_BITS, 1)))];
    let pay_st = vec![if_then(lft("m_pay").logic_not(), vec![go(IDLE)])];

    let arm = |s: u64, body: Vec<Stmt>| (vec![lit(STATE_BITS, s)], body);
    nx.push(case(
        &st.q,
        vec![
            arm(IDLE, idle_s),
            arm(OPEN, open_s),
            arm(LOOKUP, lookup_st),
            arm(NC, nc_st),
            arm(ACK, ack_st),
            arm(PROBE, probe_st),
            arm(WALK, walk_st),
            arm(MSG_CHK, chk_st),
            arm(MR_CHK, mrr_st),
            arm(MATCH, match_st),
            arm(BEAT, beat_st),
            arm(VERDICT, verdict_st),
            arm(ACCEPT, accept_st),
            arm(PLACE, place_st),
            arm(HOLD, hold_st),
            arm(RELEASE, release_st),
            arm(FLUSH, flush_st),
            arm(PAY, pay_st),
        ],
        Some(vec![]),
    ));
    // The stream's completed_msn as cpl_engine publishes it, newer than
    // the lookup's: compared with the connection and stream as this edge
    // leaves them.
    let conn_now = m.wire_from(
        "conn_now",
        lkq("conn").width(),
        "the connection in hand after this edge",
        mux(&lookup_done, port("s_lkr_conn"), lkq("conn")),
    );
    let stream_now = m.wire_from(
        "stream_now",
        hq("stream_id").width(),
        "the stream in hand after this edge",
        mux(&take_hdr, port("s_hdr_stream_id"), hq("stream_id")),
    );
    let sw = stream_now.width();
    nx.push(if_then(
        port("tap_st_valid").expr()
            & &port("tap_st_ready")
            & port("tap_st_clear").expr().logic_not()
            & port("tap_st_conn").expr().eq(&conn_now)
            & fit(port("tap_st_stream").expr(), sw).eq(&stream_now),
        vec![set(&cmsn.next, port("tap_st_completed_msn"))],
    ));
    for s in nx {
        m.next(s);
    }

    // ---- outputs ----
    for x in &offers {
        let valid = port(&format!("{}_valid", x.prefix));
        match pass_of(x.prefix) {
            None => {
                m.assign(&valid, &x.on.q);
                for (f, r) in &x.fields {
                    m.assign(port(&format!("{}_{f}", x.prefix)), &r.q);
                }
            }
            Some(Pass { src, open, pass, .. }) => {
                m.assign(&valid, pass.expr() | &x.on.q);
                let src_fields = fields(&defs, src);
                for (f, r) in &x.fields {
                    let w = r.q.width();
                    // A field the part does not have is 0 (tx_engine's
                    // `s_cnack_direct` for sack_gen's NACKs).
                    let from = match src_fields.iter().find(|(n, _)| n == f) {
                        Some(_) => fit(port(&format!("{src}_{f}")).expr(), w),
                        None => zeros(w),
                    };
                    m.assign(port(&format!("{}_{f}", x.prefix)), mux(pass, from, &r.q));
                }
                m.assign(port(&format!("{src}_ready")), open.expr() & &port(&format!("{}_ready", x.prefix)));
            }
        }
    }
    // sack_gen's SACKs: held, or passed with completed_msn replaced.
    m.assign(port("m_csack_valid"), csack_on.expr() & &gsack_v);
    m.assign(port("s_gsack_ready"), csack_on.expr() & &port("m_csack_ready"));
    for (f, w) in fields(&defs, "m_csack") {
        let src = fit(port(&format!("s_gsack_{f}")).expr(), w);
        let v = if f == "completed_msn" { mux(&replace_v.q, &replace.q, src) } else { src };
        m.assign(port(&format!("m_csack_{f}")), v);
    }
    m.assign(port("m_opcode"), fit(opc.expr(), port("m_opcode").width()));
    m.assign(port("stat_rx_bad_hdr"), &bad_hdr.q);
    m.assign(port("stat_rx_access"), &access.q);
    m.assign(port("stat_ack_no_conn"), port("tap_ack_no_conn_table").expr() | &port("tap_ack_no_conn_search"));
    // Interface rules: assumed on the inputs, asserted on the outputs.
    crate::formal::every_channel(&mut m, &rst);
    // Where each entry can be on (OFFERS).
    for x in &offers {
        let mut within = lit(1, 0);
        for &s in x.steps {
            within = within | st.q.expr().eq(lit(STATE_BITS, s));
        }
        m.assert(
            &format!("a_{}_on_in_step", x.short),
            &format!("{}'s own entry is on only in the steps that wait for it", x.prefix),
            crate::formal::implies(&x.on.q, within),
        );
    }
    for ps in &passes {
        let x = o(ps.ch);
        m.assert(
            &format!("a_{}_shown_on", x.short),
            &format!("{}: an own entry marked presented is still on", ps.ch),
            crate::formal::implies(&ps.shown.q, &x.on.q),
        );
    }
    let cnack_pass = pass_of("m_cnack").expect("m_cnack passes").pass.clone();
    let mut regs: Vec<(&str, Signal)> = vec![
        ("state", st.q.clone()),
        ("idx", idx.q.clone()),
        ("code", code.q.clone()),
        ("new", new.q.clone()),
        ("answered", answered.q.clone()),
        ("hold", hold.q.clone()),
        ("csack_shown", csack_shown.q.clone()),
        ("hdr_path", hq("path_id")),
        ("hdr_ackreq", ackreq.clone()),
        ("lkr_paths", lkq("paths")),
        ("open_paths", open_q("paths")),
        ("pay_drop", o("m_pay").field("drop").q.clone()),
        ("pkt_op", o("m_pkt").field("op").q.clone()),
        ("pkt_path", o("m_pkt").field("path_id").q.clone()),
        ("pkt_bad", o("m_pkt").field("bad").q.clone()),
    ];
    for x in &offers {
        regs.push((x.prefix, x.on.q.clone()));
    }
    properties(&mut m, p, &Inner { cnack_own: o("m_cnack").on.q.expr() & cnack_pass.expr().logic_not(), regs });
    m
}

/// The internal signals [`properties`] reads: the registers its
/// invariants tie the ghosts to, by short name (an output channel's entry
/// by its port prefix: `m_pay` is `pay_on`).
struct Inner {
    /// The controller's own entry (not a part's) is on `m_cnack`.
    cnack_own: Expr,
    regs: Vec<(&'static str, Signal)>,
}

impl Inner {
    fn r(&self, name: &str) -> Expr {
        let f = self.regs.iter().find(|(n, _)| *n == name);
        f.unwrap_or_else(|| panic!("rx_ctl: no register {name} for the properties")).1.expr()
    }
}

/// The controller's safety properties: what a packet, an open and the
/// SACK hold may do, stated on the ports with ghost registers that follow
/// the handshakes (the latest header's story, cleared when the next header
/// is taken), and the parts' obligations they rely on assumed (`asm_env_*`:
/// each part answers only a request it was given, sack_gen calls no
/// refused or answered beat new, probe_walk's beats are PROBE beats, and
/// conn_table's and the open's path counts fit the config).
fn properties(m: &mut Module, p: &RxCtlParams, inner: &Inner) {
    use crate::formal::{ghost, implies, port};
    let l = u64::from(p.read_latency);
    let sg = |m: &Module, n: &str| port(m, n);
    let rst = sg(m, "rst");
    let hs = |m: &Module, ch: &str| sg(m, &format!("{ch}_valid")).expr() & sg(m, &format!("{ch}_ready"));
    let hdr_hs = hs(m, "s_hdr");
    let open_hs = hs(m, "s_open");
    let pay_hs = hs(m, "m_pay");
    let req_hs = hs(m, "m_req");
    let pkt_hs = hs(m, "m_pkt");
    let csack_hs = hs(m, "m_csack");
    let pw = sg(m, "m_pkt_path_id").width();
    let paths = 1u64 << pw;
    let op = sg(m, "m_pkt_op");
    let op_is = |v: u32| op.expr().eq(lit(op.width(), u64::from(v)));
    let data_hs = pkt_hs.clone() & op_is(OP_DATA);
    // A ghost flag of the latest header: cleared when a header is taken,
    // then set by `set_when`.
    let sticky = |m: &mut Module, name: &str, comment: &str, set_when: Expr| -> Signal {
        ghost(m, (name, 1), comment, &rst, |g| mux(&hdr_hs, lit(1, 0), g.expr() | set_when), lit(1, 0))
    };
    // A value of the latest header (or open), loaded when `when`.
    let keep = |m: &mut Module, name: &str, comment: &str, when: &Expr, e: Expr| -> Signal {
        let w = e.width().expect("a sized value");
        ghost(m, (name, w), comment, &rst, |g| mux(when, e, g), zeros(w))
    };

    // ------------------------------------------------ the parts' answers
    // (request channel, answer channel, the answer refuses the packet)
    let answers = [
        ("m_lk", "s_lkr", sg(m, "s_lkr_ok").expr().logic_not()),
        ("m_chk", "s_chkr", sg(m, "s_chkr_status").expr().reduce_or()),
        ("m_mr", "s_mrr", sg(m, "s_mrr_status").expr().reduce_or()),
        ("m_lookup", "s_match", sg(m, "s_match_code").expr().reduce_or()),
    ];
    let mut refusal = lit(1, 0);
    let mut waits: Vec<(&str, &str, Signal)> = Vec::new();
    for (req, ans, refuses) in answers {
        let ans_v = sg(m, &format!("{ans}_valid"));
        let asked = hs(m, req);
        let out = ghost(
            m,
            (&format!("f_{req}_out"), 1),
            &format!("a request on {req} was taken and {ans} has not answered it yet"),
            &rst,
            |g| mux(&asked, lit(1, 1), mux(&ans_v, lit(1, 0), g)),
            lit(1, 0),
        );
        m.assume(
            &format!("asm_env_{ans}_answers_a_request"),
            &format!("{ans} answers only a request taken on {req} in an earlier cycle, once"),
            implies(&ans_v, &out),
        );
        if req != "m_lk" {
            refusal = refusal | (ans_v.expr() & refuses);
        }
        waits.push((req, ans, out));
    }
    let lk_bad = sticky(
        m,
        "f_lk_bad",
        "conn_table refused the latest header (lookup not ok)",
        sg(m, "s_lkr_valid").expr() & sg(m, "s_lkr_ok").expr().logic_not(),
    );
    let refused = sticky(m, "f_refused", "msg_check, mr_check or recv_match refused the latest header", refusal);
    let walk_op = sg(m, "s_walk_op");
    m.assume(
        "asm_env_walk_is_probe",
        "probe_walk's beats are PROBE beats",
        implies(sg(m, "s_walk_valid"), walk_op.expr().eq(lit(walk_op.width(), u64::from(OP_PROBE)))),
    );
    let lpw = sg(m, "s_lkr_paths").width();
    m.assume(
        "asm_env_lkr_paths",
        &format!("conn_table's path count of a connection is at most paths_per_conn = {paths}"),
        implies(sg(m, "s_lkr_valid"), sg(m, "s_lkr_paths").expr().le(lit(lpw, paths))),
    );
    let opw = sg(m, "s_open_paths").width();
    m.assume(
        "asm_env_open_paths",
        &format!("an open's path count is at most paths_per_conn = {paths}"),
        implies(sg(m, "s_open_valid"), sg(m, "s_open_paths").expr().le(lit(opw, paths))),
    );

    // ------------------------------------------------ the packet's beat
    let aw = 4;
    let amax = lit(aw, (1 << aw) - 1);
    let age = ghost(
        m,
        ("f_age", aw),
        "cycles since the latest header's DATA beat was taken (0: none yet), saturating",
        &rst,
        |a| {
            mux(
                &hdr_hs,
                lit(aw, 0),
                mux(
                    &data_hs,
                    lit(aw, 1),
                    mux(a.expr().ne(lit(aw, 0)) & a.expr().ne(amax.clone()), a.expr() + lit(aw, 1), a.expr()),
                ),
            )
        },
        lit(aw, 0),
    );
    let window = m.formal_wire("f_window", 1, "sack_gen's answer window of the beat: 1 to L + 1 cycles after it");
    m.formal_assign(&window, age.expr().ne(lit(aw, 0)) & age.expr().le(lit(aw, l + 1)));
    let beat_bad = keep(m, "f_beat_bad", "the beat's bad bit", &data_hs, sg(m, "m_pkt_bad").expr());
    let taps = sg(m, "tap_stale_gen").expr() | &sg(m, "tap_psn_window") | &sg(m, "tap_duplicate");
    let gnew_v = sg(m, "s_gnew_valid");
    let gnew = sticky(m, "f_gnew", "sack_gen called the latest header's beat new", gnew_v.expr() & &window);
    let ans = sticky(m, "f_ans", "sack_gen answered the beat (stale, window or duplicate)", taps.clone() & &window);
    m.assume(
        "asm_env_gnew_only_accepted",
        "sack_gen's m_new comes only for a beat it accepted: not refused (bad), not answered stale, window or \
         duplicate",
        implies(
            gnew_v.expr() & &window,
            beat_bad.expr().logic_not() & ans.expr().logic_not() & taps.clone().logic_not(),
        ),
    );
    m.assume(
        "asm_env_no_answer_after_new",
        "sack_gen does not answer a beat it called new",
        implies(taps & &window, gnew.expr().logic_not()),
    );

    // ------------------------------------------------ what the packet did
    let pkt = ghost(
        m,
        ("f_pkt", 1),
        "a header was taken and its payload command (m_pay) not yet",
        &rst,
        |g| mux(&hdr_hs, lit(1, 1), mux(&pay_hs, lit(1, 0), g)),
        lit(1, 0),
    );
    let req = sticky(m, "f_req", "the latest header's DMA request (m_req) was taken", req_hs.clone());
    let idle = sticky(
        m,
        "f_idle",
        "cpl_engine was idle in a cycle after the packet's m_req was taken",
        req.expr() & &sg(m, "cpl_idle"),
    );
    let hdr_in = |m: &Module, n: &str| sg(m, &format!("s_hdr_{n}"));
    let raw = hdr_in(m, "raw");
    let (hi, lo) = data::ACKREQ.vector_range((raw.width() / 8) as usize);
    let ackreq = keep(m, "f_ackreq", "the latest header's ACKREQ", &hdr_hs, raw.slice(hi as u32, lo as u32));
    let hpath = keep(m, "f_hpath", "the latest header's path", &hdr_hs, zext(hdr_in(m, "path_id"), IDX_BITS));
    let lk_taken = sg(m, "s_lkr_valid").expr();
    let lpaths = keep(m, "f_lpaths", "the lookup's path count", &lk_taken, zext(sg(m, "s_lkr_paths"), IDX_BITS));
    let flush_hs = pkt_hs.clone() & op_is(OP_FLUSH);
    let flush_path = zext(sg(m, "m_pkt_path_id"), IDX_BITS);
    // Events `inc` counted since the latest `clear`.
    let count = |m: &mut Module, name: &str, comment: &str, clear: &Expr, inc: &Expr| -> Signal {
        let w = IDX_BITS;
        ghost(m, (name, w), comment, &rst, |g| mux(clear, zeros(w), mux(inc, g.expr() + lit(w, 1), g)), zeros(w))
    };
    let flushes = count(m, "f_flushes", "FLUSH beats taken for the latest header", &hdr_hs, &flush_hs);
    let last_flush = keep(m, "f_last_flush", "the path of the latest FLUSH beat", &flush_hs, flush_path.clone());
    let own_in = mux(hpath.expr().lt(&lpaths), lit(IDX_BITS, 1), lit(IDX_BITS, 0));
    let flushes_due = m.formal_wire("f_flushes_due", IDX_BITS, "the other paths of the connection: one FLUSH each");
    m.formal_assign(&flushes_due, lpaths.expr() - own_in);
    // The open's beats.
    let open_paths =
        keep(m, "f_open_paths", "the latest open's path count", &open_hs, zext(sg(m, "s_open_paths"), IDX_BITS));
    let open_beat_hs = pkt_hs.clone() & op_is(OP_OPEN);
    let open_beats = count(m, "f_open_beats", "OPEN beats taken for the latest open", &open_hs, &open_beat_hs);
    let own_hs = inner.cnack_own.clone() & &sg(m, "m_cnack_ready");
    let nacked = sticky(m, "f_nacked", "the controller's own NACK for the latest header was taken", own_hs.clone());
    let last_data = ghost(
        m,
        ("f_last_data", 1),
        "the latest beat taken by sack_gen was a DATA beat",
        &rst,
        |g| mux(&pkt_hs, op_is(OP_DATA), g),
        lit(1, 0),
    );
    let csack_v = sg(m, "m_csack_valid");
    let csack_stalled = csack_v.expr() & sg(m, "m_csack_ready").expr().logic_not();
    let old = ghost(
        m,
        ("f_old_sack", 1),
        "a SACK presented (and stalled) when the latest DATA beat was taken is still on m_csack",
        &rst,
        |g| mux(&hdr_hs, lit(1, 0), mux(&data_hs, csack_stalled, g.expr() & csack_hs.clone().logic_not())),
        lit(1, 0),
    );

    // ------------------------------------------------ one packet at a time
    let done = m.formal_wire("f_done", 1, "the latest header and open are done with");
    m.formal_assign(
        &done,
        pkt.expr().logic_not()
            & sg(m, "m_req_valid").expr().logic_not()
            & open_beats.expr().eq(&open_paths)
            & implies(&req, idle.expr() & implies(&ackreq, flushes.expr().eq(&flushes_due))),
    );
    m.assert(
        "a_hdr_after_packet",
        "a header is taken only when the one before is done: its payload command taken, and a placed packet's DMA \
         request taken, cpl_engine idle after it (the SACK hold released) and its FLUSH beats sent; and the open \
         before it has sent its OPEN beats",
        implies(&hdr_hs, &done),
    );
    m.assert(
        "a_open_between_packets",
        "an open is taken only between packets (the same rule as a header)",
        implies(&open_hs, &done),
    );
    m.assert(
        "a_pay_once_per_hdr",
        "a payload command is taken only for a header taken and not yet commanded: exactly one per header",
        implies(&pay_hs, &pkt),
    );

    // ------------------------------------------------ placement
    let req_v = sg(m, "m_req_valid");
    m.assert(
        "a_req_only_new",
        "a DMA request only for a packet whose beat sack_gen called new (s_gnew in its window)",
        implies(&req_v, &gnew),
    );
    m.assert(
        "a_req_not_refused",
        "no DMA request for a packet conn_table, msg_check, mr_check or recv_match refused",
        implies(&req_v, refused.expr().logic_not() & lk_bad.expr().logic_not()),
    );
    m.assert("a_req_once", "at most one DMA request per packet", implies(&req_v, req.expr().logic_not()));
    m.assert(
        "a_beat_bad_is_refusal",
        "a DATA beat tells sack_gen bad = 1 exactly when msg_check, mr_check or recv_match refused the packet (so \
         sack_gen neither marks a refused packet received nor SACKs it)",
        implies(sg(m, "m_pkt_valid").expr() & op_is(OP_DATA), sg(m, "m_pkt_bad").expr().eq(&refused)),
    );
    let pay_v = sg(m, "m_pay_valid");
    let drop = sg(m, "m_pay_drop");
    m.assert(
        "a_pay_refused_drops",
        "a refused packet's payload is dropped",
        implies(pay_v.expr() & (refused.expr() | &lk_bad), &drop),
    );
    m.assert(
        "a_pay_kept_with_req",
        "a payload is kept (drop = 0) only with or after the packet's DMA request",
        implies(pay_v.expr() & drop.expr().logic_not(), req_v.expr() | &req),
    );

    // ------------------------------------------------ the SACK hold
    m.assert(
        "a_sack_held_until_idle",
        "after a DATA beat, sack_gen's SACKs (other than one already presented) wait for the verdict, and a new \
         packet's until cpl_engine was idle after its DMA request",
        implies(
            csack_v.expr() & &last_data & age.expr().ne(lit(aw, 0)) & old.expr().logic_not(),
            age.expr().gt(lit(aw, l + 1)) & implies(&gnew, &idle),
        ),
    );
    m.assert(
        "a_sack_unheld_otherwise",
        "sack_gen's SACKs after a PROBE, OPEN or FLUSH beat (or none) pass at once: only a DATA beat holds them",
        implies(sg(m, "s_gsack_valid").expr() & last_data.expr().logic_not(), &csack_v),
    );

    // ------------------------------------------------ FLUSH and OPEN beats
    let pkt_v = sg(m, "m_pkt_valid");
    let flush_v = pkt_v.expr() & op_is(OP_FLUSH);
    m.assert(
        "a_flush_after_placed_ackreq",
        "a FLUSH beat only after a placed packet with ACKREQ, its SACK hold released (cpl_engine idle after the \
         request)",
        implies(flush_v.clone(), req.expr() & &idle & &ackreq),
    );
    m.assert(
        "a_flush_other_paths",
        "a FLUSH beat names another path of the connection (not the packet's own, below its path count), in \
         path order, each once",
        implies(
            flush_v,
            flush_path.clone().ne(&hpath)
                & flush_path.clone().lt(&lpaths)
                & (flushes.expr().eq(zeros(IDX_BITS)) | flush_path.gt(&last_flush)),
        ),
    );
    let open_v = pkt_v.expr() & op_is(OP_OPEN);
    m.assert(
        "a_open_beats_in_order",
        "an OPEN beat names the open's next path, below its path count",
        implies(open_v, zext(sg(m, "m_pkt_path_id"), IDX_BITS).eq(&open_beats) & open_beats.expr().lt(&open_paths)),
    );

    // ------------------------------------------------ the controller's NACKs
    m.assert(
        "a_own_nack_refused_once",
        "the controller's own NACK only for a refused packet that sack_gen did not answer, at most one per packet",
        implies(
            inner.cnack_own.clone(),
            (refused.expr() | &lk_bad) & ans.expr().logic_not() & nacked.expr().logic_not(),
        ),
    );

    // ------------------------------------------------ invariants
    // What the ghosts are in each step: the strengthening k-induction needs
    // (a trace may stall any step for ever, so no bounded look-back
    // reaches the header).
    let r = |n: &str| inner.r(n);
    let st = r("state");
    let st_in = |ss: &[u64]| ss.iter().fold(lit(1, 0), |e, &x| e | st.clone().eq(lit(STATE_BITS, x)));
    let before_beat = [LOOKUP, NC, ACK, PROBE, WALK, MSG_CHK, MR_CHK, MATCH, BEAT];
    let placing = [ACCEPT, PLACE, HOLD, RELEASE, FLUSH];
    let between = st_in(&[IDLE, OPEN]);
    let mut in_pkt = before_beat.to_vec();
    in_pkt.extend([VERDICT, ACCEPT]);
    m.assert(
        "a_inv_pkt",
        "a header is in hand without its payload command taken exactly in the steps up to ACCEPT, or while the \
         command is offered",
        pkt.expr().eq(r("m_pay") | st_in(&in_pkt)),
    );
    for (req, ans, out) in waits {
        let step = match req {
            "m_lk" => LOOKUP,
            "m_chk" => MSG_CHK,
            "m_mr" => MR_CHK,
            _ => MATCH,
        };
        m.assert(
            &format!("a_inv_{req}_out"),
            &format!("a {req} request waits for {ans} exactly in its step, once taken"),
            out.expr().eq(st.clone().eq(lit(STATE_BITS, step)) & r(req).logic_not()),
        );
    }
    let agew = |x: Expr| zext(x, IDX_BITS);
    m.assert(
        "a_inv_age",
        "the beat's age: none before the beat, L + 2 - step_idx in the verdict, past the window after it",
        implies(st_in(&before_beat), age.expr().eq(lit(aw, 0)))
            & implies(
                st.clone().eq(lit(STATE_BITS, VERDICT)),
                (agew(age.expr()) + r("idx")).eq(lit(IDX_BITS, l + 2))
                    & r("idx").ge(lit(IDX_BITS, 1))
                    & r("idx").le(lit(IDX_BITS, l + 1)),
            )
            & implies(st_in(&placing), age.expr().gt(lit(aw, l + 1)))
            & implies(
                st_in(&before_beat).logic_not() & st.clone().ne(lit(STATE_BITS, VERDICT)),
                age.expr().eq(lit(aw, 0)) | age.expr().gt(lit(aw, l + 1)),
            ),
    );
    let coded = r("code").ne(lit(CODE_BITS, 0));
    m.assert(
        "a_inv_refused",
        "the ghost refusal is the NACK code; the beat carried it as bad",
        refused.expr().eq(coded.clone())
            & implies(st_in(&[LOOKUP, NC, ACK, PROBE, WALK, MSG_CHK]), coded.clone().logic_not())
            & implies(age.expr().ne(lit(aw, 0)), beat_bad.expr().eq(coded.clone()))
            & implies(
                st.clone().eq(lit(STATE_BITS, BEAT)) & r("m_pkt"),
                r("pkt_bad").eq(coded.clone()) & r("pkt_op").eq(lit(op.width(), u64::from(OP_DATA))),
            ),
    );
    m.assert(
        "a_inv_lk_bad",
        "a packet conn_table refused ends without a beat",
        implies(&lk_bad, st_in(&[PAY, IDLE, OPEN]) & age.expr().eq(lit(aw, 0)) & refused.expr().logic_not()),
    );
    m.assert(
        "a_inv_new",
        "sack_gen's verdict registers are the ghosts'; a new packet is not refused and was not answered",
        r("new").eq(&gnew)
            & r("answered").eq(&ans)
            & implies(age.expr().eq(lit(aw, 0)), gnew.expr().logic_not() & ans.expr().logic_not())
            & implies(&gnew, refused.expr().logic_not() & lk_bad.expr().logic_not())
            & implies(st_in(&placing), &gnew),
    );
    m.assert(
        "a_inv_req",
        "the DMA request is offered in PLACE and taken before HOLD; none before; cpl_engine's idle counts after it",
        implies(st.clone().eq(lit(STATE_BITS, PLACE)), req.expr().ne(r("m_req")))
            & implies(st_in(&[HOLD, RELEASE, FLUSH]), req.expr())
            & implies(st_in(&[PLACE, HOLD, RELEASE, FLUSH, IDLE, OPEN]).logic_not(), req.expr().logic_not())
            & implies(&req, &gnew)
            & implies(&idle, &req),
    );
    m.assert(
        "a_inv_hold",
        "the SACK hold is on from the beat to the release; a SACK shown through it is the one shown at the beat",
        st.clone().le(lit(STATE_BITS, PAY))
            & r("hold").eq(st_in(&[VERDICT, ACCEPT, PLACE, HOLD]))
            & implies(gnew.expr() & r("hold").logic_not(), &idle)
            & implies(st_in(&[VERDICT, ACCEPT, PLACE, HOLD, RELEASE]), &last_data)
            & implies(r("hold") & r("csack_shown"), &old)
            & implies(st_in(&[RELEASE, FLUSH]), &idle)
            & implies(between.clone() & &req, idle.expr() & implies(&ackreq, flushes.expr().eq(&flushes_due))),
    );
    let idx = r("idx");
    let others_below = idx.clone() - mux(hpath.expr().lt(idx.clone()), lit(IDX_BITS, 1), lit(IDX_BITS, 0));
    let in_flush = st.clone().eq(lit(STATE_BITS, FLUSH));
    let pkt_on = r("m_pkt");
    m.assert(
        "a_inv_flush",
        "the FLUSH step: step_idx is the path offered or just taken, every other path below it FLUSHed once",
        hpath.expr().eq(zext(r("hdr_path"), IDX_BITS))
            & lpaths.expr().eq(zext(r("lkr_paths"), IDX_BITS))
            & lpaths.expr().le(lit(IDX_BITS, paths))
            & ackreq.expr().eq(r("hdr_ackreq"))
            & implies(st_in(&[FLUSH, IDLE, OPEN]).logic_not(), flushes.expr().eq(zeros(IDX_BITS)))
            & implies(
                in_flush.clone(),
                ackreq.expr()
                    & idx.clone().lt(&lpaths)
                    & idx.clone().ne(&hpath)
                    & flushes.expr().eq(others_below + mux(pkt_on.clone(), lit(IDX_BITS, 0), lit(IDX_BITS, 1)))
                    & implies(
                        pkt_on.clone(),
                        r("pkt_op").eq(lit(op.width(), u64::from(OP_FLUSH)))
                            & zext(r("pkt_path"), IDX_BITS).eq(idx.clone())
                            & implies(flushes.expr().ne(zeros(IDX_BITS)), last_flush.expr().lt(idx.clone())),
                    )
                    & implies(pkt_on.clone().logic_not(), last_flush.expr().eq(idx.clone())),
            ),
    );
    let in_open = st.clone().eq(lit(STATE_BITS, OPEN));
    m.assert(
        "a_inv_open",
        "the OPEN step: step_idx is the next path, the beats before it taken or the last one offered",
        open_paths.expr().eq(zext(r("open_paths"), IDX_BITS))
            & open_paths.expr().le(lit(IDX_BITS, paths))
            & implies(in_open.clone().logic_not(), open_beats.expr().eq(&open_paths))
            & implies(
                in_open,
                (open_beats.expr() + zext(pkt_on.clone(), IDX_BITS)).eq(idx.clone())
                    & idx.clone().le(&open_paths)
                    & implies(
                        pkt_on.clone(),
                        r("pkt_op").eq(lit(op.width(), u64::from(OP_OPEN)))
                            & zext(r("pkt_path"), IDX_BITS).eq(&open_beats),
                    ),
            ),
    );
    m.assert(
        "a_inv_nack",
        "the own NACK entry is a refused packet's, not answered by sack_gen, not yet sent; a dropped payload's \
         command says drop",
        implies(r("m_cnack"), (refused.expr() | &lk_bad) & ans.expr().logic_not() & nacked.expr().logic_not())
            & implies(st_in(&[PAY, IDLE, OPEN]).logic_not(), nacked.expr().logic_not())
            & implies(st.clone().eq(lit(STATE_BITS, PAY)) & r("m_pay"), r("pay_drop")),
    );

    // ------------------------------------------------ covers
    m.cover(
        "c_write_placed",
        "a WRITE with payload reaches its DMA request",
        req_hs.clone() & sg(m, "m_req_recv").expr().logic_not() & sg(m, "m_req_len").expr().reduce_or(),
    );
    let waited = sticky(
        m,
        "f_sack_waited",
        "a SACK of sack_gen's was held back (not passed to m_csack) for the latest header",
        sg(m, "s_gsack_valid").expr() & csack_v.expr().logic_not(),
    );
    m.cover(
        "c_held_sack_released",
        "a new packet's SACK, held back, leaves after cpl_engine was idle",
        csack_hs & &waited & &last_data & &gnew & &idle & age.expr().ne(lit(aw, 0)),
    );
    m.cover("c_flush_beat", "a FLUSH beat of ack clocking is taken", flush_hs);
    m.cover("c_own_nack", "the controller's own NACK for a refused packet is taken", own_hs);
}

/// The channel rules and where each entry can be on (the glue block's
/// rules, [`crate::proof::handshake_tasks`]), as opposed to the safety
/// properties of [`properties`].
fn channel_rule(label: &str) -> bool {
    label.starts_with("a_m_")
        || label.starts_with("a_s_")
        || label.ends_with("_on_in_step")
        || label.ends_with("_shown_on")
}

/// How the properties of [`generate`]'s module are checked: the channel
/// rules by 4-induction without the parts' obligations (`prove`, any
/// neighbour), the safety properties by k-induction with them, leaning on
/// the channel rules (`prove_pkt`), and the covers to 30 cycles.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::Mode;
    let mut tasks = crate::proof::prove_split_and_cover(asserts, 4, 30, |l| !channel_rule(l));
    tasks[0].without = &["asm_env_*"];
    tasks[1].name = "prove_pkt";
    tasks[1].mode = Mode::Prove(2);
    tasks
}
