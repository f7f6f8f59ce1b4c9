//! `cpl_engine` against the reference receiver: random message sequences
//! (WRITE, WRITE_IMM, SEND, SEND_IMM, zero-length, several MTUs) on every
//! stream, sprayed over the paths, reordered, duplicated, with some
//! WRITE_IMM receives posted only at the end. The reference NIC takes the
//! packets; the block takes one `s_new` per packet that set a new bit (the
//! bench's bitmap oracle), DMA completions in order after random delays, and
//! a receive store answering its consume requests after random delays, with
//! random backpressure on every output. Every completion must come exactly
//! once, in msn order per stream, with the reference's fields.

use std::collections::{BTreeMap, HashSet, VecDeque};

use mrnic_model::cpl_engine::*;
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{Config, DataHeader, Flags, Header, Placement};
use mrnic_reference::memory::Access;
use mrnic_reference::nic::{Nic, NicConfig};
use mrnic_reference::rng::Rng;
use mrnic_reference::verbs::{ConnParams, CqOpcode, RecvRequest};
use mrnic_reference::wire::WirePacket;

const LOCAL: u32 = 2;
const SLOT: u32 = 2;

#[derive(Debug, Clone)]
struct Pkt {
    h: DataHeader,
    payload: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    WriteImm,
    Send,
    SendImm,
}

/// The receive store recv_match keeps, as the bench's stand-in.
#[derive(Default)]
struct Recvs {
    posted: BTreeMap<(u32, u32), RecvRequest>,
    next_consume: BTreeMap<u32, u32>,
}

impl Recvs {
    fn consume(&mut self, c: &Consume) -> ConsAnswer {
        let next = self.next_consume.entry(c.stream).or_insert(0);
        let seq = if c.imm { *next } else { c.rq_seq };
        match self.posted.remove(&(c.stream, seq)) {
            Some(r) => {
                *next = seq + 1;
                ConsAnswer { ok: true, rq_seq: seq, wr_id: r.wr_id }
            }
            None => ConsAnswer { ok: false, rq_seq: seq, ..ConsAnswer::default() },
        }
    }
}

/// A block past its reset sweep.
fn ready(p: CplEngineParams) -> CplEngine {
    let mut dut = CplEngine::new(p);
    while dut.initializing() {
        dut.clock(&Inputs::default());
    }
    dut
}

fn run(seed: u64) {
    let cfg = Config::builtin("small").unwrap();
    let mut r = Rng::new(seed);
    let mtu = cfg.transport.mtu as usize;
    let streams = cfg.transport.streams_per_conn;
    let paths = cfg.transport.paths_per_conn as u8;
    let mut nic = Nic::new(NicConfig::new(cfg.clone(), 9, seed));
    let wkey = nic.reg_mr(0x10000, 1 << 20, Access::REMOTE_WRITE).unwrap();
    nic.reg_mr(0x200000, 1 << 20, Access::RECV).unwrap();
    nic.create_conn(ConnParams { local_id: LOCAL, remote_id: 1, remote: 1, paths, tx_psn: 0, rx_psn: 0 }).unwrap();

    // Messages per stream; receives for every consuming message, some
    // WRITE_IMM ones held back to the end.
    let mut pkts = vec![];
    let mut late: Vec<(u32, RecvRequest)> = vec![];
    let mut early: Vec<(u32, u32, RecvRequest)> = vec![];
    let mut next_psn = vec![0u32; paths as usize];
    let mut wr_id = 1000u64;
    for s in 0..streams {
        let n = 3 + r.below(6) as u32;
        let kinds: Vec<Kind> =
            (0..n).map(|_| [Kind::Write, Kind::WriteImm, Kind::Send, Kind::SendImm][r.below(4) as usize]).collect();
        let last_send = kinds.iter().rposition(|k| matches!(k, Kind::Send | Kind::SendImm));
        let mut rq_seq = 0u32;
        let mut going_late = false;
        for (msn, k) in kinds.iter().enumerate() {
            let len = match r.below(5) {
                0 => 0,
                1 => mtu * (1 + r.below(3) as usize),
                _ => 1 + r.below(3 * mtu as u64) as usize,
            };
            let consumes = *k != Kind::Write;
            let seq = rq_seq;
            if consumes {
                let rr = RecvRequest { wr_id, addr: 0x200000 + 0x4000 * u64::from(s * 16 + seq), len: len as u32 };
                wr_id += 1;
                // WRITE_IMMs take receives in posting order: the late ones
                // are a suffix of the stream's.
                going_late |= *k == Kind::WriteImm && last_send.is_none_or(|l| msn > l) && r.below(2) == 0;
                if going_late {
                    late.push((s, rr));
                } else {
                    early.push((s, seq, rr));
                }
                rq_seq += 1;
            }
            let imm = matches!(k, Kind::WriteImm | Kind::SendImm).then(|| r.next_u64() as u32);
            let npk = len.div_ceil(mtu).max(1);
            for i in 0..npk {
                let off = i * mtu;
                let plen = (len - off).min(mtu);
                let path = r.below(u64::from(paths)) as u8;
                let psn = next_psn[path as usize];
                next_psn[path as usize] += 1;
                let place = match k {
                    Kind::Write | Kind::WriteImm => Placement::Write {
                        rkey: wkey,
                        addr: 0x10000 + 0x4000 * u64::from(s * 16 + msn as u32) + off as u64,
                    },
                    _ => Placement::Send { rq_seq: seq, msg_offset: off as u32 },
                };
                let h = DataHeader {
                    flags: Flags { som: i == 0, eom: i + 1 == npk, ..Flags::default() },
                    payload_len: plen as u16,
                    dst_conn: LOCAL,
                    path_id: path,
                    path_psn: psn,
                    path_gen: 0,
                    stream_id: s as u8,
                    msn: msn as u32,
                    msg_len: len as u32,
                    place,
                    tx_ts: 0,
                    imm,
                };
                pkts.push(Pkt { h, payload: (0..plen).map(|_| r.next_u64() as u8).collect() });
            }
        }
    }
    // The wire: bounded reordering and duplicates.
    let mut wire = vec![];
    for (i, p) in pkts.iter().enumerate() {
        wire.push((i as f64 + r.below(12) as f64, p.clone()));
        if r.below(6) == 0 {
            wire.push((i as f64 + r.below(30) as f64, p.clone()));
        }
    }
    wire.sort_by(|a, b| a.0.total_cmp(&b.0));

    // Reference.
    for (s, seq, rr) in &early {
        // Receives are numbered in posting order per stream.
        let _ = seq;
        nic.post_recv(LOCAL, *s as u8, *rr).unwrap();
    }
    let meta = WirePacket { src: 1, dst: 9, sport: 50000, dport: 4797, plane: 0, ecn: ECN_ECT0, bytes: vec![] };
    for (t, (_, p)) in wire.iter().enumerate() {
        nic.handle_datagram(1000 * t as u64, &meta, &Header::Data(p.h), &p.payload);
    }
    for (s, rr) in &late {
        nic.post_recv(LOCAL, *s as u8, *rr).unwrap();
    }
    let want = nic.poll_cq(usize::MAX);
    assert_eq!(nic.counters().rx_rnr, 0, "the bench posts every SEND's receive first");

    // The block.
    let p = CplEngineParams::from_config(&cfg).unwrap();
    let mut dut = ready(p);
    let mut recvs = Recvs::default();
    for (s, seq, rr) in &early {
        recvs.posted.insert((*s, *seq), *rr);
    }
    let mut late_seq: BTreeMap<u32, u32> = BTreeMap::new();
    for (s, _, _) in &early {
        *late_seq.entry(*s).or_insert(0) += 1;
    }
    let mut seen = HashSet::new();
    let mut news: VecDeque<NewPkt> = VecDeque::new();
    for (_, pk) in &wire {
        if seen.insert((pk.h.path_id, pk.h.path_psn)) {
            let tag = news.len() as u16;
            let (send, rq_seq) = match pk.h.place {
                Placement::Send { rq_seq, .. } => (true, rq_seq),
                Placement::Write { .. } => (false, 0),
            };
            news.push_back(NewPkt {
                conn: SLOT,
                stream: u32::from(pk.h.stream_id),
                msn: pk.h.msn,
                payload_len: pk.h.payload_len,
                tag,
                send,
                msg_len: pk.h.msg_len,
                imm: pk.h.imm,
                rq_seq,
                conn_id: LOCAL,
            });
        }
    }
    let total = news.len();
    let mut dma_q: VecDeque<(u64, u16)> = VecDeque::new();
    let mut cons_q: VecDeque<(u64, ConsAnswer)> = VecDeque::new();
    let mut got = vec![];
    let mut sts = vec![];
    let mut posts: VecDeque<(u32, u32)> = VecDeque::new();
    let mut posted_late = false;
    let mut cycle = 0u64;
    let mut stalls = 0;
    let mut idle_seen = 0;
    loop {
        let new = news.front().copied().filter(|_| r.below(4) != 0);
        let dma = dma_q.front().filter(|(t, _)| *t <= cycle).map(|(_, tag)| (*tag, DMA_OK));
        let cons = cons_q.front().filter(|(t, _)| *t <= cycle).map(|(_, a)| *a);
        let inp = Inputs {
            rst: false,
            new,
            dma,
            post: posts.front().copied(),
            open: None,
            cons,
            consume_ready: r.below(3) != 0,
            cqe_ready: r.below(3) != 0,
            st_ready: r.below(3) != 0,
        };
        let o = dut.outputs(dma.is_some(), inp.post.is_some());
        if o.idle {
            // What a held SACK may report: every packet handed over has its
            // DMA answer counted, and the stream state published so far is
            // the stored one.
            idle_seen += 1;
            assert!(dma_q.is_empty(), "seed {seed}: idle with a packet not counted");
            for s in 0..streams {
                let last = sts.iter().rev().find(|p: &&StPub| p.stream == s && !p.clear).map_or(0, |p| p.completed_msn);
                assert_eq!(last, dut.completed_msn(SLOT, s), "seed {seed}: idle before stream {s} was published");
            }
        }
        if new.is_some() && o.new_ready {
            let k = news.pop_front().unwrap();
            dma_q.push_back((cycle + 1 + r.below(20), k.tag));
        }
        if dma.is_some() && o.dma_ready {
            dma_q.pop_front();
        }
        if cons.is_some() && o.cons_ready {
            cons_q.pop_front();
        }
        if inp.post.is_some() && o.post_ready {
            posts.pop_front();
        }
        if let (Some(c), true) = (o.consume, inp.consume_ready) {
            let a = recvs.consume(&c);
            cons_q.push_back((cycle + 2 + r.below(6), a));
        }
        if let (Some(c), true) = (o.cqe, inp.cqe_ready) {
            got.push(c);
        }
        if let (Some(s), true) = (o.st, inp.st_ready) {
            sts.push(s);
        }
        assert!(!o.stats.order_err && !o.stats.dma_err && !o.stats.msg_err, "seed {seed}: {:?}", o.stats);
        dut.clock(&inp);
        cycle += 1;
        let quiet = news.is_empty() && dma_q.is_empty() && cons_q.is_empty() && posts.is_empty() && dut.idle();
        if quiet && !posted_late {
            posted_late = true;
            for (s, rr) in &late {
                let seq = late_seq.entry(*s).or_insert(0);
                recvs.posted.insert((*s, *seq), *rr);
                *seq += 1;
                posts.push_back((SLOT, *s));
            }
        } else if quiet {
            break;
        }
        stalls += 1;
        assert!(stalls < 200_000, "seed {seed}: the block does not finish");
    }
    assert!(total > pkts.len() / 2);
    assert!(idle_seen > 0, "seed {seed}: never idle");

    // Exactly once, msn order per stream, the reference's fields.
    let key = |wr_id: u64, op: CqOpcode, conn: u32, stream: u8, len: u32, imm: Option<u32>| {
        (stream, wr_id, op, conn, len, imm)
    };
    let want: Vec<_> = want.iter().map(|c| key(c.wr_id, c.opcode, c.conn, c.stream, c.byte_len, c.imm)).collect();
    let got: Vec<_> = got
        .iter()
        .map(|c| {
            let op = if c.opcode == OPCODE_RECV { CqOpcode::Recv } else { CqOpcode::RecvRdmaWithImm };
            key(c.wr_id, op, c.conn, c.stream, c.byte_len, c.imm)
        })
        .collect();
    for s in 0..streams as u8 {
        let w: Vec<_> = want.iter().filter(|k| k.0 == s).collect();
        let g: Vec<_> = got.iter().filter(|k| k.0 == s).collect();
        assert_eq!(g, w, "seed {seed}: stream {s}");
    }
    assert_eq!(got.len(), want.len(), "seed {seed}");
    let ids: HashSet<u64> = got.iter().map(|k| k.1).collect();
    assert_eq!(ids.len(), got.len(), "seed {seed}: a completion raised twice");
    // Every stream completed every message and published it, in order.
    for s in 0..streams {
        let last = sts.iter().filter(|p| p.stream == s && !p.clear).map(|p| p.completed_msn).collect::<Vec<_>>();
        assert!(last.windows(2).all(|w| w[1] >= w[0]), "seed {seed}: completed_msn goes back");
        assert_eq!(last.last().copied(), Some(dut.completed_msn(SLOT, s)));
    }
}

#[test]
fn completes_like_the_reference_exactly_once_in_msn_order() {
    for seed in 1..=24 {
        run(seed);
    }
}

/// An open restarts every stream of the connection and says so once.
#[test]
fn open_resets_the_connections_streams() {
    let cfg = Config::builtin("small").unwrap();
    let p = CplEngineParams::from_config(&cfg).unwrap();
    let mut dut = ready(p);
    let k = NewPkt { conn: 1, stream: 2, msn: 0, payload_len: 8, tag: 0, msg_len: 8, ..NewPkt::default() };
    let all = Inputs { consume_ready: true, cqe_ready: true, st_ready: true, ..Inputs::default() };
    dut.clock(&Inputs { new: Some(k), ..all });
    dut.clock(&Inputs { dma: Some((0, DMA_OK)), ..all });
    for _ in 0..10 {
        dut.clock(&all);
    }
    assert_eq!(dut.completed_msn(1, 2), 1);
    dut.clock(&Inputs { open: Some(1), ..all });
    let mut clears = 0;
    for _ in 0..8 {
        if dut.outputs(false, false).st.is_some_and(|s| s.clear) {
            clears += 1;
        }
        dut.clock(&all);
    }
    assert_eq!(clears, 1);
    assert_eq!(dut.completed_msn(1, 2), 0);
    assert!(dut.idle());
}

/// A DMA error counts nothing: the message never completes from it.
#[test]
fn a_failed_placement_counts_nothing() {
    let cfg = Config::builtin("small").unwrap();
    let p = CplEngineParams::from_config(&cfg).unwrap();
    let mut dut = ready(p);
    let all = Inputs { consume_ready: true, cqe_ready: true, st_ready: true, ..Inputs::default() };
    let k = NewPkt { conn: 0, stream: 0, msn: 0, payload_len: 8, tag: 5, msg_len: 8, ..NewPkt::default() };
    dut.clock(&Inputs { new: Some(k), ..all });
    let o = dut.outputs(true, false);
    assert!(o.dma_ready);
    dut.clock(&Inputs { dma: Some((5, 2)), ..all });
    dut.clock(&all);
    assert!(dut.outputs(false, false).stats.dma_err);
    for _ in 0..10 {
        dut.clock(&all);
    }
    assert_eq!(dut.completed_msn(0, 0), 0);
}

/// Under a DMA answer offered every cycle the block could take one, a post
/// and an open offered alongside are still taken within a few operations
/// (before the turn rule they waited for as long as the traffic lasted),
/// and the DMA answers keep flowing around them.
#[test]
fn posts_and_opens_are_not_starved_by_dma_answers() {
    let cfg = Config::builtin("small").unwrap();
    let p = CplEngineParams::from_config(&cfg).unwrap();
    let mut dut = ready(p);
    let all = Inputs { consume_ready: true, cqe_ready: true, st_ready: true, ..Inputs::default() };
    let mut tags: VecDeque<u16> = VecDeque::new();
    let (mut msn, mut answers) = (0u32, 0u32);
    let (mut post_at, mut open_at) = (None, None);
    for cycle in 0..400u32 {
        let new = NewPkt {
            conn: 0,
            stream: 0,
            msn,
            payload_len: 8,
            tag: (msn & 0xff) as u16,
            msg_len: 8,
            ..NewPkt::default()
        };
        let post = post_at.is_none().then_some((1, 1));
        let open = open_at.is_none().then_some(1);
        let dma = tags.front().map(|&t| (t, DMA_OK));
        let o = dut.outputs(dma.is_some(), post.is_some());
        if o.new_ready {
            tags.push_back(new.tag);
            msn += 1;
        }
        if dma.is_some() && o.dma_ready {
            tags.pop_front();
            answers += 1;
        }
        if post.is_some() && o.post_ready {
            post_at = Some(cycle);
        }
        if open.is_some() && o.open_ready {
            open_at = Some(cycle);
        }
        dut.clock(&Inputs { new: Some(new), dma, post, open, ..all });
    }
    let (post_at, open_at) = (post_at.expect("post never taken"), open_at.expect("open never taken"));
    assert!(post_at < 40 && open_at < 40, "post taken at {post_at}, open at {open_at}");
    assert!(answers > 20, "only {answers} DMA answers taken");
}
