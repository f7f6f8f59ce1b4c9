//! Adversarial NIC-level vectors (in the `rx` file, after the crafted and
//! recorded ones): a peer or an attacker that does not follow the protocol.
//! Every hostile packet has a stated outcome, a NACK code or a counted
//! drop, which the generator checks against the reference as it records
//! ([`generate_checked`]; a test fails on any disagreement), so the `desc`
//! of each vector is a claim that has been checked, not a comment.
//!
//! The cases the stream-level parser decides (lengths against the frame,
//! early and missing tlast, tkeep) are `rx_parser` vectors; placement
//! bounds and keys are also `dma_write` vectors. These are the rest:
//! spoofed and guessed ids, generations, psns far outside the window,
//! message headers changing mid-message, replays after completion, SENDs
//! beyond their receive, PROBE floods, SACKs and NACKs for packets never
//! sent, zero and maximum lengths.

use std::collections::BTreeMap;

use super::format::BlockKind;
use super::rx::{craft, Craft, Input, NicVector, Output, LBASE, LOCAL_B, RBASE, WBASE};
use crate::fixed::SEQ_HALF;
use crate::rng::Rng;
use crate::verbs::{Sge, WorkRequest, WrOp};
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{
    decode_datagram, Bitmap256, Config, DataHeader, Flags, Header, NackCode, NackHeader, Placement, SackHeader,
};

/// What the NIC must do with one hostile input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A NACK with this code; nothing written, nothing completed.
    Nack(NackCode),
    /// Answered with SACKs only; nothing written, nothing completed.
    Sack,
    /// Nothing at all on the wire, in memory or in the completion queue.
    Silent,
    /// The payload is written (and a SACK may follow); no NACK.
    Placed,
    /// Exactly this many completions, nothing written, no NACK.
    Completes(usize),
}

/// One data packet of a scenario.
#[derive(Debug, Clone, Copy)]
struct D {
    conn: u32,
    path: u8,
    psn: u32,
    stream: u8,
    msn: u32,
    msg_len: u32,
    place: Placement,
    imm: Option<u32>,
}

impl D {
    fn write(rkey: u32, addr: u64, psn: u32, msn: u32, msg_len: u32) -> D {
        D { conn: LOCAL_B, path: 0, psn, stream: 0, msn, msg_len, place: Placement::Write { rkey, addr }, imm: None }
    }

    fn send(rq_seq: u32, offset: u32, psn: u32, msn: u32, msg_len: u32) -> D {
        D {
            conn: LOCAL_B,
            path: 0,
            psn,
            stream: 0,
            msn,
            msg_len,
            place: Placement::Send { rq_seq, msg_offset: offset },
            imm: None,
        }
    }
}

fn counters(c: &Craft) -> BTreeMap<String, u64> {
    match serde_json::to_value(c.rec.nic.counters()) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().map(|(k, v)| (k, v.as_u64().unwrap_or(0))).collect(),
        _ => BTreeMap::new(),
    }
}

fn headers(o: &Output) -> Vec<Header> {
    o.pkts.iter().filter_map(|p| decode_datagram(&p.bytes).ok().map(|d| d.header)).collect()
}

/// Whether `o` is what `e` says, in words if not.
fn meets(e: Expect, o: &Output) -> Result<(), String> {
    let hs = headers(o);
    let nacks: Vec<NackCode> =
        hs.iter().filter_map(|h| if let Header::Nack(n) = h { Some(n.code) } else { None }).collect();
    let sacks = hs.iter().filter(|h| matches!(h, Header::Sack(_))).count();
    let quiet = o.writes.is_empty() && o.cpl.is_empty();
    let ok = match e {
        Expect::Nack(code) => quiet && nacks == [code],
        Expect::Sack => quiet && nacks.is_empty() && sacks == hs.len() && sacks > 0,
        Expect::Silent => quiet && hs.is_empty(),
        Expect::Placed => !o.writes.is_empty() && nacks.is_empty(),
        Expect::Completes(n) => o.writes.is_empty() && nacks.is_empty() && o.cpl.len() == n,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected {e:?}, got NACKs {nacks:?}, {sacks} SACKs, {} writes, {} completions",
            o.writes.len(),
            o.cpl.len()
        ))
    }
}

/// A scenario being recorded, with the claims it has broken.
struct Adv<'a> {
    c: &'a mut Craft,
    problems: Vec<String>,
}

impl Adv<'_> {
    /// Records one input and checks its outcome, and that of the drop and
    /// NACK reason counters exactly the named ones moved, by the amounts
    /// given.
    fn expect(&mut self, what: &str, e: Expect, counter: &[(&str, u64)], input: Input, dt: u64) {
        let before = counters(self.c);
        self.c.t += dt;
        let t = self.c.t;
        self.c.rec.event(t, input);
        let out = self.c.rec.vector.steps.last().map(|s| s.out.clone()).unwrap_or_default();
        if let Err(why) = meets(e, &out) {
            self.problems.push(format!("{}: {what}: {why}", self.c.rec.vector.id));
        }
        let after = counters(self.c);
        // Reasons: the rx_* drop counters and the sender's ack drops.
        let reason = |k: &str| {
            (k.starts_with("rx_") && !matches!(k, "rx_packets" | "rx_placed_bytes"))
                || matches!(k, "ack_no_conn" | "ack_bad_src" | "ack_bad_path" | "sack_beyond_sent" | "nack_stale")
        };
        let moved: Vec<(String, u64)> = after
            .iter()
            .filter(|(k, v)| reason(k) && **v != before.get(*k).copied().unwrap_or(0))
            .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
            .collect();
        let mut want: Vec<(String, u64)> = counter.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        want.sort();
        if moved != want {
            self.problems
                .push(format!("{}: {what}: counters moved {moved:?}, expected {want:?}", self.c.rec.vector.id));
        }
    }

    fn pkt(&mut self, d: &D, payload: &[u8]) -> Input {
        self.c.tx_ts = self.c.tx_ts.wrapping_add(7);
        let h = DataHeader {
            flags: Flags { som: false, eom: false, retx: false, ackreq: true, se: false },
            payload_len: payload.len() as u16,
            dst_conn: d.conn,
            path_id: d.path,
            path_psn: d.psn & crate::fixed::SEQ_MASK,
            path_gen: self.c.gen,
            stream_id: d.stream,
            msn: d.msn,
            msg_len: d.msg_len,
            place: d.place,
            tx_ts: self.c.tx_ts,
            imm: d.imm,
        };
        Input::Packet(self.c.pkt(Header::Data(h), payload, 50000 + d.path as u16, d.path % 4, ECN_ECT0))
    }

    fn data(&mut self, what: &str, e: Expect, counter: &[(&str, u64)], d: D, payload: &[u8]) {
        let i = self.pkt(&d, payload);
        self.expect(what, e, counter, i, 500);
    }

    fn control(&mut self, what: &str, e: Expect, counter: &[(&str, u64)], h: Header) {
        self.control_after(what, e, counter, h, 500);
    }

    /// A SACK, NACK or PROBE `dt` nanoseconds after the previous input.
    fn control_after(&mut self, what: &str, e: Expect, counter: &[(&str, u64)], h: Header, dt: u64) {
        let i = Input::Packet(self.c.pkt(h, &[], 50000, 0, ECN_ECT0));
        self.expect(what, e, counter, i, dt);
    }

    /// `h` from an IPv4 source that is not the connection's peer: dropped
    /// with `counter`, nothing answered.
    fn spoofed(&mut self, what: &str, counter: &[(&str, u64)], h: Header, payload: &[u8]) {
        let mut p = self.c.pkt(h, payload, 50000, 0, ECN_ECT0);
        p.src = SPOOFED_SRC;
        self.expect(what, Expect::Silent, counter, Input::Packet(p), 500);
    }

    fn recv(&mut self, stream: u8, wr_id: u64, addr: u64, len: u32) {
        let r = crate::verbs::RecvRequest { wr_id, addr, len };
        self.expect("post_recv", Expect::Silent, &[], Input::PostRecv { conn: LOCAL_B, stream, recv: r }, 100);
    }
}

/// An IPv4 source that is not the peer's (`rx::ADDR_A`).
const SPOOFED_SRC: u32 = 9;

/// A PROBE for the connection under test.
fn probe(path: u8, gen: u8, psn: u32) -> Header {
    Header::Probe(mrnic_proto::ProbeHeader { tx_ts: 0, dst_conn: LOCAL_B, path_id: path, path_gen: gen, path_psn: psn })
}

/// A NACK on path 0, generation 0, stream 0, msn 0.
pub(super) fn nack(code: NackCode, dst_conn: u32, path_psn: u32) -> Header {
    Header::Nack(NackHeader { code, dst_conn, path_id: 0, path_gen: 0, path_psn, stream_id: 0, msn: 0, echo_ts: 0 })
}

fn sack(cum_psn: u32, path: u8, bitmap: Bitmap256) -> Header {
    Header::Sack(SackHeader {
        rate_hint: 0xffff,
        dst_conn: LOCAL_B,
        path_id: path,
        path_gen: 0,
        cum_psn,
        stream_id: 0,
        completed_msn: 0,
        echo_ts: 0,
        ecn_cnt: 0,
        bitmap,
    })
}

/// The adversarial vectors and the claims of theirs the reference broke
/// (none when the generator and the reference agree).
pub fn generate_checked(cfg: &Config, seed: u64, first_index: usize) -> (Vec<NicVector>, Vec<String>) {
    let mtu = cfg.transport.mtu;
    let window = cfg.transport.window;
    let mr_entries = cfg.hardware.mr_entries;
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut push = |desc: &str, rx_psn: u32, f: &dyn Fn(&mut Adv, &mut Rng, u32)| {
        let found = std::cell::RefCell::new(Vec::new());
        let v = craft(cfg, BlockKind::Rx, seed, first_index + out.len(), desc, rx_psn, &|c, rng, k| {
            let mut a = Adv { c, problems: Vec::new() };
            f(&mut a, rng, k);
            found.borrow_mut().extend(a.problems);
        });
        problems.extend(found.into_inner());
        out.push(v);
    };
    let bytes = |rng: &mut Rng, n: u32| -> Vec<u8> { (0..n).map(|_| rng.below(256) as u8).collect() };

    push(
        "spoofed and unknown ids: data and PROBE for connections that do not exist (NACK NO_CONN, rx_no_conn); \
         SACK and NACK for them (dropped, ack_no_conn); data and PROBE for the right connection from an IPv4 \
         source that is not its peer (dropped unanswered, rx_bad_src); a SACK and a NACK from such a source \
         (dropped, ack_bad_src); the same data from the peer is placed",
        0,
        &|a, rng, k| {
            let d = bytes(rng, 16);
            for conn in [0xff_ffff, 0, LOCAL_B + 1] {
                let x = D { conn, ..D::write(k, WBASE, 0, 0, 16) };
                a.data("data to an unknown connection", Expect::Nack(NackCode::NoConn), &[("rx_no_conn", 1)], x, &d);
            }
            let unknown =
                mrnic_proto::ProbeHeader { tx_ts: 0, dst_conn: 0x12_3456, path_id: 0, path_gen: 0, path_psn: 0 };
            a.control(
                "PROBE to an unknown connection",
                Expect::Nack(NackCode::NoConn),
                &[("rx_no_conn", 1)],
                Header::Probe(unknown),
            );
            let s = sack(0, 0, Bitmap256::default());
            let Header::Sack(mut sh) = s else { unreachable!() };
            sh.dst_conn = 77;
            a.control("SACK to an unknown connection", Expect::Silent, &[("ack_no_conn", 1)], Header::Sack(sh));
            let n = nack(NackCode::Access, 78, 0);
            a.control("NACK to an unknown connection", Expect::Silent, &[("ack_no_conn", 1)], n);
            let Input::Packet(p) = a.pkt(&D::write(k, WBASE, 0, 0, 16), &d) else { unreachable!() };
            let h = decode_datagram(&p.bytes).expect("crafted").header;
            a.spoofed("data from a spoofed source", &[("rx_bad_src", 1)], h, &d);
            a.spoofed("PROBE from a spoofed source", &[("rx_bad_src", 1), ("rx_probes", 1)], probe(0, 0, 0), &[]);
            let s = sack(0, 0, Bitmap256::default());
            a.spoofed("SACK from a spoofed source", &[("ack_bad_src", 1)], s, &[]);
            let n = nack(NackCode::Access, LOCAL_B, 0);
            a.spoofed("NACK from a spoofed source", &[("ack_bad_src", 1)], n, &[]);
            a.data("the same data from the peer", Expect::Placed, &[], D::write(k, WBASE, 0, 0, 16), &d);
        },
    );
    push(
        "guessed rkeys (NACK ACCESS each): right slot with a wrong tag, an empty slot (rx_bad_rkey); the receive \
         region's and the local region's keys (rx_no_access); placements wrapping past 2^64, one byte past the \
         region's end, one byte before its base (rx_out_of_bounds); then exactly to the last byte is placed",
        0,
        &|a, rng, k| {
            let d = bytes(rng, 16);
            let access = Expect::Nack(NackCode::Access);
            let (recv_key, local_key) = (a.c.rec.vector.regions[1].key, a.c.rec.vector.regions[2].key);
            let cases: [(&str, u32, u64, &str); 7] = [
                ("wrong tag", k ^ (1 << 16), WBASE, "rx_bad_rkey"),
                ("empty slot", mr_entries - 1, WBASE, "rx_bad_rkey"),
                ("receive region's key", recv_key, RBASE, "rx_no_access"),
                ("local region's key", local_key, LBASE, "rx_no_access"),
                ("wrapping 2^64", k, u64::MAX - 7, "rx_out_of_bounds"),
                ("one byte past the end", k, WBASE + 0x4000 - 15, "rx_out_of_bounds"),
                ("one byte before the base", k, WBASE - 1, "rx_out_of_bounds"),
            ];
            for (what, key, addr, counter) in cases {
                a.data(what, access, &[(counter, 1)], D::write(key, addr, 0, 0, 16), &d);
            }
            a.data("to the last byte", Expect::Placed, &[], D::write(k, WBASE + 0x4000 - 16, 0, 0, 16), &d);
        },
    );
    push(
        "path generations: one behind is accepted; two behind is stale (NACK BAD_HDR, rx_stale_gen); a far \
         newer one (127 ahead) is adopted, after which the old one is stale; a PROBE two generations ahead from a \
         source that is not the peer (rx_bad_src) or with a psn outside [cum_psn, cum_psn + 256] (rx_probe_psn) \
         is dropped unanswered and its generation is not adopted (live data still lands); one from the peer's \
         address with a psn inside the window is adopted and makes the live generation stale (what remains open \
         to an attacker who sees the path's psns, docs/robustness.md)",
        0,
        &|a, rng, k| {
            let d = bytes(rng, 80);
            let bad = Expect::Nack(NackCode::BadHdr);
            a.c.gen = 10;
            a.data("newer generation", Expect::Placed, &[], D::write(k, WBASE, 0, 0, 80), &d[..16]);
            a.c.gen = 9;
            a.data("one behind", Expect::Placed, &[], D::write(k, WBASE + 16, 1, 0, 80), &d[16..32]);
            a.c.gen = 8;
            a.data("two behind", bad, &[("rx_stale_gen", 1)], D::write(k, WBASE + 32, 2, 0, 80), &d[32..48]);
            a.c.gen = 137;
            a.data("far newer", Expect::Placed, &[], D::write(k, WBASE + 32, 2, 0, 80), &d[32..48]);
            a.c.gen = 10;
            a.data("the old one now", bad, &[("rx_stale_gen", 1)], D::write(k, WBASE + 48, 3, 0, 80), &d[48..64]);
            let refused = |c: &'static str| [(c, 1), ("rx_probes", 1)];
            a.spoofed("spoofed PROBE two generations ahead", &refused("rx_bad_src"), probe(0, 139, 3), &[]);
            let (beyond, behind) = (probe(0, 139, 3 + 257), probe(0, 139, 2));
            a.control("PROBE past the window", Expect::Silent, &refused("rx_probe_psn"), beyond);
            a.control("PROBE behind cum_psn", Expect::Silent, &refused("rx_probe_psn"), behind);
            a.c.gen = 137;
            let live = D::write(k, WBASE + 48, 3, 0, 80);
            a.data("the live generation after them", Expect::Placed, &[], live, &d[48..64]);
            let peer = probe(0, 139, 4);
            a.control("peer's PROBE two generations ahead", Expect::Sack, &[("rx_probes", 1)], peer);
            let after = D::write(k, WBASE + 64, 4, 0, 80);
            a.data("the live generation after it", bad, &[("rx_stale_gen", 1)], after, &d[64..]);
        },
    );
    push(
        "psns far outside the window (rx_psn 1000): window + 1 ahead and 2^23 - 1 ahead (NACK BAD_HDR, \
         rx_psn_window); the same and 2^23 behind with a newer generation are refused or duplicates and do not \
         move the path's generation (the live one is not made stale); exactly the window ahead is placed; 2^23 \
         behind and one behind are duplicates (SACK, rx_duplicate), nothing placed",
        1000,
        &|a, rng, k| {
            let d = bytes(rng, 8);
            let bad = Expect::Nack(NackCode::BadHdr);
            let w = |psn: u32| D::write(k, WBASE, psn, 0, 8);
            a.data("window + 1 ahead", bad, &[("rx_psn_window", 1)], w(1000 + window + 1), &d);
            a.data("2^23 - 1 ahead", bad, &[("rx_psn_window", 1)], w(1000 + SEQ_HALF - 1), &d);
            let live = a.c.gen;
            a.c.gen = live.wrapping_add(5);
            a.data("far ahead, newer generation", bad, &[("rx_psn_window", 1)], w(1000 + window + 1), &d);
            let behind = w(1000u32.wrapping_sub(SEQ_HALF));
            a.data("far behind, newer generation", Expect::Sack, &[("rx_duplicate", 1)], behind, &d);
            a.c.gen = live;
            a.data("window ahead", Expect::Placed, &[], w(1000 + window), &d);
            a.data("2^23 behind", Expect::Sack, &[("rx_duplicate", 1)], w(1000u32.wrapping_sub(SEQ_HALF)), &d);
            a.data("one behind", Expect::Sack, &[("rx_duplicate", 1)], w(999), &d);
        },
    );
    push(
        "message headers changing mid-message: msg_len, opcode (WRITE -> WRITE_IMM) and immediate differing from \
         the first packet (NACK BAD_HDR, rx_msg_mismatch); payload past msg_len (rx_bad_len); a stream beyond the \
         connection's (rx_bad_len); an msn past the message table (rx_msg_window); the consistent packet completes \
         the message",
        0,
        &|a, rng, k| {
            let d = bytes(rng, 64);
            let bad = Expect::Nack(NackCode::BadHdr);
            a.data("first half", Expect::Placed, &[], D::write(k, WBASE, 0, 0, 64), &d[..32]);
            let second = D::write(k, WBASE + 32, 1, 0, 64);
            a.data("msg_len changed", bad, &[("rx_msg_mismatch", 1)], D { msg_len: 128, ..second }, &d[32..]);
            a.data("opcode changed", bad, &[("rx_msg_mismatch", 1)], D { imm: Some(5), ..second }, &d[32..]);
            a.data("past msg_len", bad, &[("rx_bad_len", 1)], D { msg_len: 16, ..second }, &d[32..]);
            a.data("stream 200", bad, &[("rx_bad_len", 1)], D { stream: 200, ..second }, &d[32..]);
            let depth = a.c.rec.nic.params().msg_depth;
            a.data("msn past the table", bad, &[("rx_msg_window", 1)], D { msn: depth, ..second }, &d[32..]);
            a.data("second half", Expect::Placed, &[], second, &d[32..]);
        },
    );
    push(
        "duplicates and replays after completion: a two-packet SEND_IMM completes once; both packets replayed \
         (SACK, rx_duplicate), no second completion; the message replayed on fresh psns (NACK BAD_HDR, \
         rx_msg_window: its msn is behind the stream)",
        0,
        &|a, rng, _| {
            let d = bytes(rng, 100);
            a.recv(0, 41, RBASE, 128);
            let p0 = D { imm: Some(9), ..D::send(0, 0, 0, 0, 100) };
            let p1 = D { imm: Some(9), ..D::send(0, 60, 1, 0, 100) };
            a.data("first packet", Expect::Placed, &[], p0, &d[..60]);
            a.data("last packet", Expect::Placed, &[], p1, &d[60..]);
            for (what, p, r) in [("replay of the first", p0, &d[..60]), ("replay of the last", p1, &d[60..])] {
                a.data(what, Expect::Sack, &[("rx_duplicate", 1)], p, r);
            }
            let bad = Expect::Nack(NackCode::BadHdr);
            a.data("replay on a fresh psn", bad, &[("rx_msg_window", 1)], D { psn: 2, ..p0 }, &d[..60]);
        },
    );
    push(
        "SENDs against the receive queue: longer than the posted receive (NACK ACCESS, rx_recv_too_short); an \
         offset past msg_len (NACK BAD_HDR, rx_bad_len); an rq_seq never posted (NACK RNR, rx_rnr); one that \
         fits completes once",
        0,
        &|a, rng, _| {
            let d = bytes(rng, 64);
            a.recv(0, 51, RBASE, 64);
            let fits = D::send(0, 0, 0, 0, 64);
            a.data(
                "65 into 64",
                Expect::Nack(NackCode::Access),
                &[("rx_recv_too_short", 1)],
                D { msg_len: 65, ..fits },
                &d,
            );
            let past = D::send(0, 60, 0, 0, 64);
            a.data("offset past msg_len", Expect::Nack(NackCode::BadHdr), &[("rx_bad_len", 1)], past, &d[..8]);
            a.data("rq_seq never posted", Expect::Nack(NackCode::Rnr), &[("rx_rnr", 1)], D::send(5, 0, 0, 0, 64), &d);
            a.data("fits", Expect::Placed, &[], fits, &d);
        },
    );
    push(
        "a PROBE flood: 100 PROBEs on a live path within 10 us: the first PROBE_ANSWERS_PER_RTO_MIN (8) are \
         answered with SACKs only, the rest dropped unanswered (rx_probe_limited), nothing placed or completed \
         (rx_probes each); PROBEs naming a path the connection lacks are dropped (rx_bad_path); data still lands \
         afterwards; an rto_min later the path answers a PROBE again",
        0,
        &|a, rng, k| {
            let rto_min_ns = a.c.rec.nic.config().proto.timers.rto_min_us as u64 * 1000;
            // Start the flood on a fresh budget epoch.
            a.c.t += rto_min_ns;
            for i in 0..100u32 {
                let (e, c) = if i < crate::receiver::PROBE_ANSWERS_PER_RTO_MIN as u32 {
                    (Expect::Sack, &[("rx_probes", 1)][..])
                } else {
                    (Expect::Silent, &[("rx_probe_limited", 1), ("rx_probes", 1)][..])
                };
                a.control_after("PROBE", e, c, probe(1, 0, i % 2), 100);
            }
            for _ in 0..20 {
                a.control("PROBE on path 99", Expect::Silent, &[("rx_bad_path", 1), ("rx_probes", 1)], probe(99, 0, 0));
            }
            let d = bytes(rng, 32);
            a.data("data after the flood", Expect::Placed, &[], D { path: 1, ..D::write(k, WBASE, 0, 0, 32) }, &d);
            let later = probe(1, 0, 1);
            a.control_after("PROBE an rto_min later", Expect::Sack, &[("rx_probes", 1)], later, rto_min_ns);
        },
    );
    push(
        "zero-length and maximum-length messages: a zero-length SEND consumes its receive and completes with no \
         write; a WRITE declaring msg_len 2^32 - 1 into a 16 KiB region (NACK ACCESS, rx_msg_too_long: it could \
         never complete and would hold a message-table slot), on each of its packets; an empty packet declaring \
         2^32 - 1 (NACK BAD_HDR, rx_bad_len); a SEND declaring 2^32 - 1 into a 64-byte receive (NACK ACCESS, \
         rx_recv_too_short); a WRITE of exactly the region's length is placed",
        0,
        &|a, rng, k| {
            a.recv(0, 61, RBASE, 0);
            a.data("zero-length SEND", Expect::Completes(1), &[], D::send(0, 0, 0, 0, 0), &[]);
            let d = bytes(rng, mtu);
            let access = Expect::Nack(NackCode::Access);
            let big = D { stream: 1, ..D::write(k, WBASE, 1, 0, u32::MAX) };
            a.data("max-length WRITE, first packet", access, &[("rx_msg_too_long", 1)], big, &d);
            let next = D { psn: 2, place: Placement::Write { rkey: k, addr: WBASE + mtu as u64 }, ..big };
            a.data("max-length WRITE, second packet", access, &[("rx_msg_too_long", 1)], next, &d);
            let empty = D { psn: 3, ..big };
            a.data(
                "empty packet of a max-length WRITE",
                Expect::Nack(NackCode::BadHdr),
                &[("rx_bad_len", 1)],
                empty,
                &[],
            );
            a.recv(2, 62, RBASE, 64);
            let s = D { stream: 2, ..D::send(0, 0, 4, 0, u32::MAX) };
            a.data("max-length SEND", access, &[("rx_recv_too_short", 1)], s, &d[..64]);
            let whole = D { stream: 1, ..D::write(k, WBASE, 5, 0, 0x4000) };
            a.data("a WRITE of the region's length", Expect::Placed, &[], whole, &d);
        },
    );
    push(
        "SACKs and NACKs for packets never sent: the NIC sends a 4 KiB WRITE; a SACK whose cum_psn passes what was \
         sent and one whose bitmap does are dropped whole (sack_beyond_sent); a NACK for a psn never sent \
         (nack_stale); a SACK for a path the connection lacks (ack_bad_path); none of them completes the WRITE",
        0,
        &|a, _, _| {
            let wr = WorkRequest {
                wr_id: 71,
                op: WrOp::Write { remote_addr: 0x9000, rkey: 0x4d52_0001 },
                imm: None,
                local: Sge { addr: LBASE, len: 0x1000 },
            };
            a.c.t += 100;
            let t = a.c.t;
            let sent = a.c.rec.event(t, Input::PostSend { conn: LOCAL_B, stream: 0, wr }).len();
            if sent == 0 {
                a.problems.push("the WRITE sent nothing".into());
            }
            let mut far = Bitmap256::default();
            far.0[3] = 1 << 63;
            a.control(
                "cum_psn past the sent",
                Expect::Silent,
                &[("sack_beyond_sent", 1)],
                sack(100, 0, Bitmap256::default()),
            );
            a.control("bitmap past the sent", Expect::Silent, &[("sack_beyond_sent", 1)], sack(0, 0, far));
            let n = nack(NackCode::Access, LOCAL_B, 50);
            a.control("NACK for a psn never sent", Expect::Silent, &[("nack_stale", 1)], n);
            a.control("SACK for path 99", Expect::Silent, &[("ack_bad_path", 1)], sack(1, 99, Bitmap256::default()));
        },
    );
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stated outcome holds on the reference, for both configs.
    #[test]
    fn every_claim_holds_on_the_reference() {
        for name in ["small", "default"] {
            let cfg = Config::builtin(name).unwrap();
            let (v, problems) = generate_checked(&cfg, 1, 0);
            assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
            assert_eq!(v.len(), 10);
            for x in &v {
                assert_eq!(super::super::rx::check(&cfg, x), super::super::Outcome::Pass, "{}", x.id);
            }
        }
    }
}
