//! `recv_match` against the reference receiver's rules for posted receives
//! (`RxStream`: receives by rq_seq, `next_post`, `next_consume`; `check`'s
//! SEND placement order BAD_HDR -> RNR -> ACCESS; `drain`'s consumption, a
//! WRITE_IMM taking the next receive in order and waiting when none is
//! posted; `post_recv`'s depth limit), mirrored here since those types are
//! private to the reference. Random requests on all three channels at once,
//! random idle and backpressure, every result compared; plus the cases one
//! by one and one request per cycle sustained.

use std::collections::{BTreeMap, VecDeque};

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_model::recv_match::*;
use mrnic_proto::Config;
use proptest::prelude::*;

const CONNS: u32 = 2;
const STREAMS: u32 = 2;

fn cfg(latency: u32, depth: u32) -> Config {
    let mut c = Config::builtin("small").unwrap();
    c.hardware.table_read_latency = latency;
    c.hardware.recv_queue_depth = depth;
    c
}

/// The reference's per-stream receive state.
#[derive(Default, Clone)]
struct RefQ {
    /// addr, len, wr_id, lkey.
    recvs: BTreeMap<u32, (u64, u32, u64, u32)>,
    next_post: u32,
    next_consume: u32,
}

struct Mirror {
    depth: u32,
    q: Vec<RefQ>,
}

impl Mirror {
    fn q(&mut self, conn: u32, stream: u32) -> &mut RefQ {
        &mut self.q[(conn * STREAMS + stream) as usize]
    }

    fn post(&mut self, conn: u32, stream: u32, addr: u64, len: u32, wr_id: u64, lkey: u32) -> PostResult {
        let depth = self.depth as usize;
        let q = self.q(conn, stream);
        if q.recvs.len() >= depth {
            return PostResult { ok: false, rq_seq: q.next_post };
        }
        let seq = q.next_post;
        q.recvs.insert(seq, (addr, len, wr_id, lkey));
        q.next_post = (seq + 1) & 0xff_ffff;
        PostResult { ok: true, rq_seq: seq }
    }

    fn lookup(&mut self, conn: u32, stream: u32, rq: u32, off: u32, plen: u16, msg_len: u32) -> MatchResult {
        if off as u64 + plen as u64 > msg_len as u64 {
            return MatchResult { code: CODE_BAD_HDR, ..MatchResult::default() };
        }
        let Some(&(addr, len, _, lkey)) = self.q(conn, stream).recvs.get(&rq) else {
            return MatchResult { code: CODE_RNR, ..MatchResult::default() };
        };
        if msg_len > len {
            return MatchResult { code: CODE_ACCESS, ..MatchResult::default() };
        }
        // A hit names the receive's region by the key it was posted with.
        MatchResult { code: CODE_HIT, addr: addr.wrapping_add(off as u64), lkey }
    }

    fn consume(&mut self, conn: u32, stream: u32, imm: bool, rq: u32) -> ConsResult {
        let q = self.q(conn, stream);
        let seq = if imm { q.next_consume } else { rq };
        match q.recvs.remove(&seq) {
            Some((_, len, wr_id, _)) => {
                q.next_consume = (seq + 1) & 0xff_ffff;
                ConsResult { ok: true, rq_seq: seq, wr_id, len }
            }
            None => ConsResult { ok: false, rq_seq: seq, ..ConsResult::default() },
        }
    }

    fn apply(&mut self, r: &Req) -> (Option<PostResult>, Option<MatchResult>, Option<ConsResult>) {
        match *r {
            Req::Post { conn, stream, addr, len, wr_id, lkey } => {
                (Some(self.post(conn, stream, addr, len, wr_id, lkey)), None, None)
            }
            Req::Lookup { conn, stream, rq_seq, msg_offset, payload_len, msg_len } => {
                (None, Some(self.lookup(conn, stream, rq_seq, msg_offset, payload_len, msg_len)), None)
            }
            Req::Consume { conn, stream, imm, rq_seq } => (None, None, Some(self.consume(conn, stream, imm, rq_seq))),
        }
    }
}

/// A request generator that keeps consumption in rq_seq order (as the
/// protocol does) and looks up around the posted range.
#[derive(Debug, Clone, Copy)]
struct Choice {
    kind: u8,
    conn: u32,
    stream: u32,
    imm: bool,
    near: i32,
    off: u32,
    plen: u16,
    msg_len: u32,
    len: u32,
    x: u64,
}

fn choice() -> impl Strategy<Value = Choice> {
    (
        0u8..3,
        0..CONNS,
        0..STREAMS,
        any::<bool>(),
        -3i32..12,
        0u32..5000,
        0u16..2000,
        0u32..6000,
        0u32..6000,
        any::<u64>(),
    )
        .prop_map(|(kind, conn, stream, imm, near, off, plen, msg_len, len, x)| Choice {
            kind,
            conn,
            stream,
            imm,
            near,
            off,
            plen,
            msg_len,
            len,
            x,
        })
}

fn make(c: &Choice, m: &Mirror, kind: u8) -> Req {
    let q = &m.q[(c.conn * STREAMS + c.stream) as usize];
    let around = (q.next_consume as i64 + c.near as i64).rem_euclid(1 << 24) as u32;
    match kind {
        0 => Req::Post {
            conn: c.conn,
            stream: c.stream,
            addr: c.x,
            len: c.len,
            wr_id: c.x.rotate_left(7),
            lkey: c.x.rotate_left(29) as u32,
        },
        1 => Req::Lookup {
            conn: c.conn,
            stream: c.stream,
            rq_seq: around,
            msg_offset: c.off,
            payload_len: c.plen,
            msg_len: c.msg_len,
        },
        // In order: the next receive (a SEND names it, a WRITE_IMM takes it).
        _ => Req::Consume { conn: c.conn, stream: c.stream, imm: c.imm, rq_seq: q.next_consume },
    }
}

#[derive(Default, Debug, PartialEq)]
struct Seen {
    posts: Vec<PostResult>,
    matches: Vec<MatchResult>,
    conses: Vec<ConsResult>,
}

/// Offers requests on all three channels (each held until taken), applies
/// each to the mirror in handshake order, and compares every result.
fn run(cfg: &Config, choices: &[Choice], seed: u64, idle: u64, ready: u64) {
    let p = RecvMatchParams::from_config(cfg).unwrap();
    let mut dut = RecvMatch::new(p);
    let mut mirror = Mirror { depth: p.depth, q: vec![RefQ::default(); (CONNS * STREAMS) as usize] };
    let mut want = Seen::default();
    let mut got = Seen::default();
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % 100
    };
    let mut held: [Option<Choice>; 3] = [None; 3];
    let mut next = 0;
    let mut cycle = 0u64;
    let mut inp = Inputs { rst: true, ..Inputs::default() };
    dut.clock(&inp);
    inp.rst = false;
    while next < choices.len() || held.iter().any(Option::is_some) || !dut.idle() {
        cycle += 1;
        assert!(cycle < 100_000, "stuck (seed {seed})");
        if next < choices.len() && rnd() >= idle {
            // Each request waits for the channel of its kind.
            let c = choices[next];
            if held[c.kind as usize].is_none() {
                held[c.kind as usize] = Some(c);
                next += 1;
            }
        }
        // Requests are built from the mirror's state when offered, so an
        // in-order consume names the receive that is next when it is taken.
        let o = dut.outputs();
        inp.post = held[0].map(|c| make(&c, &mirror, 0));
        inp.lookup = held[1].map(|c| make(&c, &mirror, 1));
        inp.consume = held[2].map(|c| make(&c, &mirror, 2));
        inp.post_ready = rnd() < ready;
        inp.match_ready = rnd() < ready;
        inp.cons_ready = rnd() < ready;
        if inp.post_ready {
            got.posts.extend(o.post);
        }
        if inp.match_ready {
            got.matches.extend(o.matched);
        }
        if inp.cons_ready {
            got.conses.extend(o.cons);
        }
        let (cv, lv) = (inp.consume.is_some(), inp.lookup.is_some());
        let fired = if cv && o.consume_ready() {
            Some(2)
        } else if lv && o.lookup_ready(cv) {
            Some(1)
        } else if inp.post.is_some() && o.post_ready(cv, lv) {
            Some(0)
        } else {
            None
        };
        if let Some(k) = fired {
            let r = [inp.post, inp.lookup, inp.consume][k].unwrap();
            let (a, b, c) = mirror.apply(&r);
            want.posts.extend(a);
            want.matches.extend(b);
            want.conses.extend(c);
            held[k] = None;
        }
        dut.clock(&inp);
    }
    assert_eq!(got, want, "seed {seed}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn matches_the_reference_rules(
        choices in prop::collection::vec(choice(), 1..300),
        latency in 1u32..=2,
        depth in prop_oneof![Just(2u32), Just(8u32)],
        seed in any::<u64>(),
        idle in 0u64..40,
        ready in 30u64..=100,
    ) {
        run(&cfg(latency, depth), &choices, seed, idle, ready);
    }
}

/// One request at a time, each case named.
fn one(dut: &mut RecvMatch, r: Req) -> (Option<PostResult>, Option<MatchResult>, Option<ConsResult>) {
    let mut inp = Inputs { post_ready: true, match_ready: true, cons_ready: true, ..Inputs::default() };
    match r {
        Req::Post { .. } => inp.post = Some(r),
        Req::Lookup { .. } => inp.lookup = Some(r),
        Req::Consume { .. } => inp.consume = Some(r),
    }
    while !dut.outputs().room {
        dut.clock(&Inputs::default());
    }
    dut.clock(&inp);
    let idle = Inputs { post_ready: true, match_ready: true, cons_ready: true, ..Inputs::default() };
    for _ in 0..10 {
        let o = dut.outputs();
        if o.post.is_some() || o.matched.is_some() || o.cons.is_some() {
            dut.clock(&idle);
            return (o.post, o.matched, o.cons);
        }
        dut.clock(&idle);
    }
    panic!("no result");
}

#[test]
fn cases_one_by_one() {
    let p = RecvMatchParams::from_config(&cfg(2, 4)).unwrap();
    let mut dut = RecvMatch::new(p);
    let lk = |rq, off, plen, msg_len| Req::Lookup {
        conn: 1,
        stream: 1,
        rq_seq: rq,
        msg_offset: off,
        payload_len: plen,
        msg_len,
    };
    let cons = |imm, rq| Req::Consume { conn: 1, stream: 1, imm, rq_seq: rq };
    // Nothing posted: RNR; a WRITE_IMM waits.
    assert_eq!(one(&mut dut, lk(0, 0, 10, 10)).1.unwrap().code, CODE_RNR);
    assert!(!one(&mut dut, cons(true, 0)).2.unwrap().ok);
    let post = |addr, len, wr_id| Req::Post { conn: 1, stream: 1, addr, len, wr_id, lkey: 0x5a00 + wr_id as u32 };
    assert_eq!(one(&mut dut, post(0x1000, 100, 7)).0.unwrap(), PostResult { ok: true, rq_seq: 0 });
    assert_eq!(one(&mut dut, post(0x2000, 50, 8)).0.unwrap(), PostResult { ok: true, rq_seq: 1 });
    // Hit, ACCESS (message longer than the receive), BAD_HDR (beyond msg_len), RNR (not yet posted).
    assert_eq!(
        one(&mut dut, lk(0, 40, 60, 100)).1.unwrap(),
        MatchResult { code: CODE_HIT, addr: 0x1028, lkey: 0x5a07 }
    );
    assert_eq!(one(&mut dut, lk(1, 0, 10, 51)).1.unwrap().code, CODE_ACCESS);
    assert_eq!(one(&mut dut, lk(1, 45, 10, 50)).1.unwrap().code, CODE_BAD_HDR);
    assert_eq!(one(&mut dut, lk(2, 0, 10, 50)).1.unwrap().code, CODE_RNR);
    // The WRITE_IMM takes receive 0; a SEND consumes 1; each exactly once.
    assert_eq!(one(&mut dut, cons(true, 99)).2.unwrap(), ConsResult { ok: true, rq_seq: 0, wr_id: 7, len: 100 });
    assert_eq!(one(&mut dut, cons(false, 1)).2.unwrap(), ConsResult { ok: true, rq_seq: 1, wr_id: 8, len: 50 });
    assert!(!one(&mut dut, cons(false, 1)).2.unwrap().ok);
    assert_eq!(one(&mut dut, lk(1, 0, 10, 50)).1.unwrap().code, CODE_RNR);
    // Ring full at depth 4.
    for i in 0..4 {
        assert_eq!(one(&mut dut, post(i, 1, i)).0.unwrap(), PostResult { ok: true, rq_seq: 2 + i as u32 });
    }
    assert_eq!(one(&mut dut, post(9, 1, 9)).0.unwrap(), PostResult { ok: false, rq_seq: 6 });
    // Other queues are untouched.
    assert_eq!(dut.queue(0, 1).next_post, 0);
    assert_eq!(dut.queue(1, 1).next_consume, 2);
}

/// Back-to-back requests to one queue, one per cycle: post, lookup and
/// consume interleaved, every result right (forwarding), no stall.
#[test]
fn one_request_per_cycle_same_queue() {
    for latency in [1, 2] {
        let p = RecvMatchParams::from_config(&cfg(latency, 8)).unwrap();
        let mut dut = RecvMatch::new(p);
        let mut inp = Inputs { rst: true, post_ready: true, match_ready: true, cons_ready: true, ..Inputs::default() };
        dut.clock(&inp);
        inp.rst = false;
        while !dut.outputs().room {
            dut.clock(&inp);
        }
        let mut results = 0;
        let n = 300u32;
        for i in 0..n + 10 {
            let o = dut.outputs();
            results += o.post.is_some() as u32 + o.matched.is_some() as u32 + o.cons.is_some() as u32;
            if let Some(m) = o.matched {
                assert_eq!(m.code, CODE_HIT, "latency {latency} cycle {i}");
            }
            if let Some(c) = o.cons {
                assert!(c.ok, "latency {latency} cycle {i}");
            }
            if let Some(pr) = o.post {
                assert!(pr.ok);
            }
            inp.post = None;
            inp.lookup = None;
            inp.consume = None;
            if i < n {
                assert!(o.room, "latency {latency}: stalled at {i}");
                let k = i / 3;
                match i % 3 {
                    0 => {
                        inp.post = Some(Req::Post {
                            conn: 0,
                            stream: 1,
                            addr: k as u64 * 100,
                            len: 64,
                            wr_id: k as u64,
                            lkey: k,
                        })
                    }
                    1 => {
                        inp.lookup = Some(Req::Lookup {
                            conn: 0,
                            stream: 1,
                            rq_seq: k,
                            msg_offset: 0,
                            payload_len: 64,
                            msg_len: 64,
                        })
                    }
                    _ => inp.consume = Some(Req::Consume { conn: 0, stream: 1, imm: k % 2 == 0, rq_seq: k }),
                }
            }
            dut.clock(&inp);
        }
        assert_eq!(results, n, "latency {latency}");
    }
}

/// The Block interface drives the same block as the typed methods.
#[test]
fn block_interface_matches_typed() {
    let p = RecvMatchParams::from_config(&cfg(1, 4)).unwrap();
    let mut a = RecvMatch::new(p);
    let mut b = RecvMatch::new(p);
    let ports = b.ports().to_vec();
    let mut ins = zero_values(&ports);
    let mut outs = zero_values(&ports);
    let set = |ins: &mut Vec<Bits>, n: &str, v: u64| {
        let i = port_index(&ports, n).unwrap();
        ins[i] = Bits::from_u64(ports[i].width, v);
    };
    let mut q = VecDeque::new();
    for cycle in 0..120u32 {
        let post = Req::Post { conn: 1, stream: 0, addr: cycle as u64, len: 10, wr_id: 5, lkey: 3 };
        let rq = a.queue(1, 0).next_consume + cycle % 2;
        let lookup = Req::Lookup { conn: 1, stream: 0, rq_seq: rq, msg_offset: 1, payload_len: 2, msg_len: 9 };
        let consume = Req::Consume { conn: 1, stream: 0, imm: true, rq_seq: 0 };
        let inp = Inputs {
            rst: cycle == 0,
            post: (cycle % 2 == 0).then_some(post),
            lookup: (cycle % 3 == 0).then_some(lookup),
            consume: (cycle % 5 == 0).then_some(consume),
            post_ready: true,
            match_ready: cycle % 4 != 1,
            cons_ready: true,
        };
        set(&mut ins, "rst", inp.rst as u64);
        set(&mut ins, "s_post_valid", inp.post.is_some() as u64);
        set(&mut ins, "s_post_conn", 1);
        set(&mut ins, "s_post_stream", 0);
        set(&mut ins, "s_post_addr", cycle as u64);
        set(&mut ins, "s_post_len", 10);
        set(&mut ins, "s_post_wr_id", 5);
        set(&mut ins, "s_post_lkey", 3);
        set(&mut ins, "s_lookup_valid", inp.lookup.is_some() as u64);
        set(&mut ins, "s_lookup_conn", 1);
        set(&mut ins, "s_lookup_stream", 0);
        set(&mut ins, "s_lookup_rq_seq", rq as u64);
        set(&mut ins, "s_lookup_msg_offset", 1);
        set(&mut ins, "s_lookup_payload_len", 2);
        set(&mut ins, "s_lookup_msg_len", 9);
        set(&mut ins, "s_consume_valid", inp.consume.is_some() as u64);
        set(&mut ins, "s_consume_conn", 1);
        set(&mut ins, "s_consume_stream", 0);
        set(&mut ins, "s_consume_imm", 1);
        set(&mut ins, "s_consume_rq_seq", 0);
        set(&mut ins, "m_post_ready", 1);
        set(&mut ins, "m_match_ready", inp.match_ready as u64);
        set(&mut ins, "m_cons_ready", 1);
        b.eval(&ins, &mut outs);
        let o = a.outputs();
        let get = |n: &str| outs[port_index(&ports, n).unwrap()].as_u64();
        assert_eq!(get("s_consume_ready"), o.consume_ready() as u64);
        assert_eq!(get("s_lookup_ready"), o.lookup_ready(inp.consume.is_some()) as u64);
        assert_eq!(get("m_match_valid"), o.matched.is_some() as u64);
        assert_eq!(get("m_match_addr"), o.matched.map_or(0, |m| m.addr));
        assert_eq!(get("m_match_lkey"), o.matched.map_or(0, |m| m.lkey as u64));
        assert_eq!(get("m_cons_wr_id"), o.cons.map_or(0, |c| c.wr_id));
        q.push_back(o);
        a.clock(&inp);
        b.tick(&ins);
    }
    assert!(q.iter().any(|o| o.matched.is_some_and(|m| m.code == CODE_HIT && m.lkey == 3)));
}

#[test]
fn refuses_unbuildable_configs() {
    let mut c = cfg(1, 3);
    assert_eq!(RecvMatchParams::from_config(&c).unwrap_err().field, "hardware.recv_queue_depth");
    c.hardware.recv_queue_depth = 8;
    c.hardware.table_read_latency = 0;
    assert_eq!(RecvMatchParams::from_config(&c).unwrap_err().field, "hardware.table_read_latency");
}
