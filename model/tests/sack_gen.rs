//! `sack_gen` against the reference receiver (`RxConn::on_data`,
//! `admit_probe` and `on_probe`, with ack clocking): random psn sequences
//! with duplicates, holes, a full bitmap, psns beyond the window, wraparound
//! near 2^24, stale and newer generations, CE marks, refused packets,
//! ACKREQs (answered on every path with packets pending, through FLUSH
//! beats as the stage before sends them), PROBEs inside and outside the
//! window and past their budget; random idle cycles and backpressure on
//! every output. Every SACK and NACK and the final state of
//! every entry must match; plus cycle-level tests of back-to-back updates of
//! one entry and of sustained throughput.

use std::collections::VecDeque;

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_model::sack_gen::*;
use mrnic_proto::packet::{ECN_CE, ECN_ECT0};
use mrnic_proto::{decode_datagram, Config, DataHeader, Flags, Header, NackCode, Placement, ProbeHeader};
use mrnic_reference::counters::Counters;
use mrnic_reference::memory::{Access, Memory};
use mrnic_reference::nic::{Ctx, NicConfig, Params, PlaneHealth};
use mrnic_reference::receiver::RxConn;
use mrnic_reference::wire::WirePacket;
use proptest::prelude::*;

const RATE: u16 = 0x1234;
const CONNS: u32 = 2;

fn cfg(paths: u32, latency: u32, pkts: u32, bytes: u32) -> Config {
    let mut c = Config::builtin("small").unwrap();
    c.transport.paths_per_conn = paths;
    c.hardware.table_read_latency = latency;
    c.timers.sack_every_packets = pkts;
    c.timers.sack_every_bytes = bytes;
    c
}

#[derive(Debug, Clone, Copy)]
enum Psn {
    /// cum_psn + k (0 = the next expected).
    Ahead(u32),
    /// cum_psn - k (a duplicate behind the window).
    Behind(u32),
    /// Far beyond the window.
    Far(u32),
}

#[derive(Debug, Clone, Copy)]
struct Ev {
    probe: bool,
    conn: u32,
    path: u32,
    psn: Psn,
    gen_delta: i8,
    ce: bool,
    ackreq: bool,
    bad: bool,
    len: u16,
}

fn ev() -> impl Strategy<Value = Ev> {
    let psn = prop_oneof![
        6 => (0u32..4).prop_map(Psn::Ahead),
        3 => (0u32..=257).prop_map(Psn::Ahead),
        1 => (1u32..6).prop_map(Psn::Behind),
        1 => (257u32..(1 << 23)).prop_map(Psn::Far),
    ];
    let gen = prop_oneof![12 => Just(0i8), 1 => Just(1i8), 1 => Just(-1i8), 1 => Just(-2i8), 1 => any::<i8>()];
    (0u32..20, 0..CONNS, 0u32..4, psn, gen, 0u32..8, 0u32..8, 0u32..12, 0u16..=1024).prop_map(
        |(probe, conn, path, psn, gen_delta, ce, ack, bad, len)| Ev {
            probe: probe == 0,
            conn,
            path,
            psn,
            gen_delta,
            ce: ce == 0,
            ackreq: ack == 0,
            bad: bad == 0 && len > 0,
            len,
        },
    )
}

/// The reference receiver of `CONNS` connections and what it said.
struct Ref {
    params: Params,
    counters: Counters,
    cq: VecDeque<mrnic_reference::Completion>,
    out: VecDeque<WirePacket>,
    lfsr: u16,
    planes: PlaneHealth,
    mem: Memory,
    rkey: u32,
    rx: Vec<RxConn>,
    /// Accepted data packets per connection: msn of the next one-packet message.
    acc: Vec<u32>,
}

impl Ref {
    fn new(cfg: &Config, rx_psn: u32) -> Ref {
        let params = Params::new(&NicConfig::new(cfg.clone(), 1, 1));
        let mut mem = Memory::new(16);
        let rkey = mem.register(0, 1 << 20, Access::REMOTE_WRITE).unwrap();
        let rx = (0..CONNS).map(|c| RxConn::new(c, 77 + c, 2, cfg.transport.paths_per_conn as u8, rx_psn, 1)).collect();
        Ref {
            params,
            counters: Counters::default(),
            cq: VecDeque::new(),
            out: VecDeque::new(),
            lfsr: mrnic_reference::nic::LFSR_SEED,
            planes: PlaneHealth::new(cfg.transport.planes),
            mem,
            rkey,
            rx,
            acc: vec![0; CONNS as usize],
        }
    }

    /// Runs one event at time `now` (timestamp units); returns the model's
    /// input beats for it (a packet, then FLUSH beats after an accepted
    /// ACKREQ), each with the `ts_now` of its update.
    fn run(&mut self, e: &Ev, now: u32) -> Vec<Beat> {
        let ts = now as u16;
        let rp = self.rx[e.conn as usize].paths[e.path as usize];
        let psn = match e.psn {
            Psn::Ahead(k) => rp.cum_psn.wrapping_add(k),
            Psn::Behind(k) => rp.cum_psn.wrapping_sub(k),
            Psn::Far(k) => rp.cum_psn.wrapping_add(k),
        } & 0xff_ffff;
        let gen = rp.gen.wrapping_add(e.gen_delta as u8);
        let meta = WirePacket {
            src: 2,
            dst: 1,
            sport: 50000 + e.path as u16,
            dport: 4797,
            plane: (e.path % 4) as u8,
            ecn: if e.ce { ECN_CE } else { ECN_ECT0 },
            bytes: vec![],
        };
        let msn = self.acc[e.conn as usize];
        let before = self.counters;
        let mut ctx = Ctx {
            p: &self.params,
            counters: &mut self.counters,
            cq: &mut self.cq,
            out: &mut self.out,
            lfsr: &mut self.lfsr,
            addr: 1,
            ts32_now: now,
            rate_hint: RATE,
            planes: &mut self.planes,
            ports: mrnic_reference::nic::ALL_PORTS,
        };
        let rx = &mut self.rx[e.conn as usize];
        let mut accepted = false;
        if e.probe {
            let h = ProbeHeader { tx_ts: ts, dst_conn: e.conn, path_id: e.path as u8, path_gen: gen, path_psn: psn };
            if rx.admit_probe(&h, &mut ctx) {
                rx.on_probe(&meta, &h, &mut ctx);
            }
        } else {
            let h = DataHeader {
                flags: Flags { som: true, eom: true, ackreq: e.ackreq, ..Flags::default() },
                payload_len: e.len,
                dst_conn: e.conn,
                path_id: e.path as u8,
                path_psn: psn,
                path_gen: gen,
                stream_id: 0,
                msn,
                msg_len: if e.bad { e.len as u32 - 1 } else { e.len as u32 },
                place: Placement::Write { rkey: self.rkey, addr: 4096 },
                tx_ts: ts,
                imm: None,
            };
            let payload = vec![0xa5u8; e.len as usize];
            rx.on_data(&meta, &h, &payload, &mut self.mem, &mut ctx);
            let c = &self.counters;
            let refused = c.rx_stale_gen != before.rx_stale_gen
                || c.rx_psn_window != before.rx_psn_window
                || c.rx_duplicate != before.rx_duplicate
                || c.rx_bad_len != before.rx_bad_len;
            if !refused {
                self.acc[e.conn as usize] += 1;
                accepted = true;
            }
            if c.rx_bad_len != before.rx_bad_len {
                // The NACK of a later check: not this block's to send.
                let p = self.out.pop_back().expect("a NACK");
                assert!(
                    matches!(decode_datagram(&p.bytes).unwrap().header, Header::Nack(n) if n.code == NackCode::BadHdr)
                );
            }
        }
        let pkt = Pkt {
            op: if e.probe { OP_PROBE } else { OP_DATA },
            conn: e.conn,
            path_id: e.path,
            psn,
            gen,
            ce: e.ce,
            ackreq: e.ackreq,
            bad: e.bad,
            payload_len: e.len,
            stream_id: 0,
            msn,
            tx_ts: ts,
            dst_conn: 77 + e.conn,
            completed_msn: self.acc[e.conn as usize],
            sport: meta.sport,
            plane: meta.plane,
            first: e.probe,
        };
        let mut beats = vec![(pkt, now)];
        if accepted && e.ackreq {
            // What the stage before sends after a new packet with ACKREQ:
            // one FLUSH per other path, in order.
            let paths = self.rx[e.conn as usize].paths.len() as u32;
            for q in (0..paths).filter(|&q| q != e.path) {
                let flush = Pkt { op: OP_FLUSH, path_id: q, tx_ts: 0, sport: 0, plane: 0, first: false, ..pkt };
                beats.push((flush, now));
            }
        }
        beats
    }
}

/// A beat and the `ts_now` the block sees when it updates.
type Beat = (Pkt, u32);

fn plain(pkts: Vec<Pkt>) -> Vec<Beat> {
    pkts.into_iter().map(|p| (p, 0)).collect()
}

#[derive(Default)]
struct Seen {
    sacks: Vec<Sack>,
    nacks: Vec<Nack>,
    news: Vec<NewBit>,
    stale: u32,
    window: u32,
    dup: u32,
    sack_pulses: u32,
    probe_psn: u32,
    probe_limited: u32,
}

impl Seen {
    fn count(&mut self, st: &Stats) {
        self.stale += st.stale_gen as u32;
        self.window += st.psn_window as u32;
        self.dup += st.duplicate as u32;
        self.sack_pulses += st.sack as u32;
        self.probe_psn += st.probe_psn as u32;
        self.probe_limited += st.probe_limited as u32;
    }
}

/// Drives `beats` through a fresh block with the given idle and
/// backpressure percentages; runs until drained.
fn drive(p: SackGenParams, beats: &[Beat], seed: u64, idle: u64, ready: u64) -> (SackGen, Seen) {
    let mut dut = SackGen::new(p);
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % 100
    };
    let mut seen = Seen::default();
    let mut next = 0;
    let mut cycle = 0;
    // (cycle of the update, ts_now it must see), in handshake order.
    let mut updates: VecDeque<(usize, u32)> = VecDeque::new();
    while next < beats.len() || !dut.idle() {
        cycle += 1;
        assert!(cycle < 100_000 + 20 * beats.len(), "stuck");
        let o = dut.outputs();
        let valid = next < beats.len() && rnd() >= idle;
        let ts_now = match updates.front() {
            Some(&(c, ts)) if c == cycle => {
                updates.pop_front();
                ts
            }
            _ => 0,
        };
        let inp = Inputs {
            rst: cycle == 1,
            rate_hint: RATE,
            ts_now,
            pkt_valid: valid,
            pkt: if valid { beats[next].0 } else { Pkt::default() },
            sack_ready: rnd() < ready,
            nack_ready: rnd() < ready,
            new_ready: rnd() < ready,
        };
        if inp.sack_ready {
            seen.sacks.extend(o.sack);
        }
        if inp.nack_ready {
            seen.nacks.extend(o.nack);
        }
        if inp.new_ready {
            seen.news.extend(o.new);
        }
        seen.count(&o.stats);
        if valid && o.pkt_ready && !inp.rst {
            updates.push_back((cycle + p.read_latency as usize, beats[next].1));
            next += 1;
        }
        dut.clock(&inp);
    }
    // The last cycle's pulses.
    seen.count(&dut.outputs().stats);
    (dut, seen)
}

fn opens(p: &SackGenParams, rx_psn: u32) -> Vec<Pkt> {
    let mut v = Vec::new();
    for conn in 0..CONNS {
        for path in 0..p.paths {
            v.push(Pkt { op: OP_OPEN, conn, path_id: path, psn: rx_psn, ..Pkt::default() });
        }
    }
    v
}

/// Runs `events` `step` timestamp units apart through the reference and
/// the block; every answer, counter and entry must agree.
fn check_against_reference(cfg: &Config, rx_psn: u32, events: &[Ev], step: u32, seed: u64, idle: u64, ready: u64) {
    let p = SackGenParams::from_config(cfg).unwrap();
    let mut r = Ref::new(cfg, rx_psn);
    let mut beats = plain(opens(&p, rx_psn));
    for (i, e) in events.iter().enumerate() {
        let mut e = *e;
        e.path %= p.paths;
        beats.extend(r.run(&e, i as u32 * step));
    }
    let (dut, seen) = drive(p, &beats, seed, idle, ready);
    let mut want_sacks = Vec::new();
    let mut want_nacks = Vec::new();
    for pkt in &r.out {
        match decode_datagram(&pkt.bytes).unwrap().header {
            Header::Sack(s) => want_sacks.push(Sack {
                conn: s.dst_conn - 77,
                dst_conn: s.dst_conn,
                path_id: s.path_id as u32,
                path_gen: s.path_gen,
                cum_psn: s.cum_psn,
                stream_id: s.stream_id,
                completed_msn: s.completed_msn,
                echo_ts: s.echo_ts,
                ecn_cnt: s.ecn_cnt,
                rate_hint: s.rate_hint,
                bitmap: s.bitmap,
                sport: pkt.dport,
                plane: pkt.plane,
            }),
            Header::Nack(n) => {
                assert_eq!(n.code, NackCode::BadHdr);
                want_nacks.push(Nack {
                    conn: n.dst_conn - 77,
                    dst_conn: n.dst_conn,
                    path_id: n.path_id as u32,
                    path_gen: n.path_gen,
                    psn: n.path_psn,
                    stream_id: n.stream_id,
                    msn: n.msn,
                    echo_ts: n.echo_ts,
                    sport: pkt.dport,
                    plane: pkt.plane,
                })
            }
            h => panic!("unexpected answer {h:?}"),
        }
    }
    assert_eq!(seen.sacks.len(), want_sacks.len(), "SACK count (seed {seed})");
    for (i, (a, b)) in seen.sacks.iter().zip(&want_sacks).enumerate() {
        assert_eq!(a, b, "SACK {i} (seed {seed})");
    }
    assert_eq!(seen.nacks, want_nacks, "NACKs (seed {seed})");
    assert_eq!(seen.news.len() as u32, r.acc.iter().sum::<u32>(), "new bits (seed {seed})");
    assert_eq!(seen.stale as u64, r.counters.rx_stale_gen);
    assert_eq!(seen.window as u64, r.counters.rx_psn_window);
    assert_eq!(seen.dup as u64, r.counters.rx_duplicate);
    assert_eq!(seen.sack_pulses as u64, r.counters.sacks_sent);
    assert_eq!(seen.probe_psn as u64, r.counters.rx_probe_psn);
    assert_eq!(seen.probe_limited as u64, r.counters.rx_probe_limited);
    for conn in 0..CONNS {
        for path in 0..p.paths {
            let e = dut.entry(conn, path);
            let rp = &r.rx[conn as usize].paths[path as usize];
            let want = Entry {
                cum_psn: rp.cum_psn,
                bitmap: rp.bitmap,
                gen: rp.gen,
                ecn_cnt: rp.ecn_cnt,
                pkts: rp.pkts,
                bytes: rp.bytes,
                last_ts: rp.last_ts,
                reply_port: rp.reply_port,
                reply_plane: rp.reply_plane,
                probe_epoch: rp.probe_epoch,
                probe_answers: rp.probe_answers,
            };
            assert_eq!(*e, want, "entry ({conn}, {path}) (seed {seed})");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn matches_the_reference(
        events in prop::collection::vec(ev(), 1..400),
        rx_psn in prop_oneof![Just(0u32), Just(0xff_ff80u32), 0u32..0x100_0000],
        latency in 1u32..=2,
        paths in prop_oneof![Just(1u32), Just(4u32)],
        sack in prop_oneof![Just((8u32, 16384u32)), Just((64, 4096)), Just((1, 1))],
        step in prop_oneof![Just(1u32), 0u32..2000],
        seed in any::<u64>(),
        idle in 0u64..50,
        ready in 30u64..=100,
    ) {
        check_against_reference(&cfg(paths, latency, sack.0, sack.1), rx_psn, &events, step, seed, idle, ready);
    }
}

/// A PROBE flood on one path: the first `PROBE_ANSWERS_PER_RTO_MIN` in an
/// `rto_min` are answered, the rest refused until the period ends; PROBEs
/// outside `[cum_psn, cum_psn + 256]` are refused without charging the
/// budget; every beat of a refused PROBE is silent.
#[test]
fn probe_budget_and_window_match_the_reference() {
    let c = cfg(4, 2, 8, 16384);
    let p = SackGenParams::from_config(&c).unwrap();
    let probe =
        |psn| Ev { probe: true, conn: 0, path: 1, psn, gen_delta: 0, ce: false, ackreq: false, bad: false, len: 0 };
    let mut events = vec![];
    for k in 0..40u32 {
        events.push(probe(if k % 7 == 3 { Psn::Far(300 + k) } else { Psn::Ahead(k % 5) }));
    }
    // 40 events 50 units apart span about 1.3 rto_min (1562 units on small).
    for (seed, idle, ready) in [(1, 0, 100), (2, 30, 40)] {
        check_against_reference(&c, 77, &events, 50, seed, idle, ready);
    }
    let mut r = Ref::new(&c, 77);
    let mut beats = plain(opens(&p, 77));
    for (i, e) in events.iter().enumerate() {
        beats.extend(r.run(e, i as u32 * 50));
    }
    assert!(r.counters.rx_probe_limited >= 10, "{:?}", r.counters);
    assert!(r.counters.rx_probe_psn >= 5, "{:?}", r.counters);
    let (_, seen) = drive(p, &beats, 3, 0, 100);
    assert_eq!(seen.probe_limited as u64, r.counters.rx_probe_limited);
    // A repeated beat of a refused PROBE (first = 0) stays silent; one of
    // an admitted PROBE answers.
    let mut twice: Vec<Beat> = vec![];
    for (k, &(b, ts)) in beats.iter().enumerate() {
        twice.push((b, ts));
        if b.op == OP_PROBE && k % 2 == 0 {
            twice.push((Pkt { first: false, stream_id: 1, ..b }, ts));
        }
    }
    let (_, seen2) = drive(p, &twice, 4, 10, 90);
    let extra = seen2.sacks.len() - seen.sacks.len();
    assert!(extra > 0 && extra < twice.len() - beats.len(), "{extra}");
}

/// After a new packet with ACKREQ, FLUSH beats SACK the other paths with
/// packets pending, echoing each path's last tx_ts, to each path's own
/// reply port; paths with nothing pending stay silent.
#[test]
fn ackreq_flushes_the_other_paths() {
    let c = cfg(4, 1, 64, 1 << 20);
    let data = |path, k, ackreq| Ev {
        probe: false,
        conn: 1,
        path,
        psn: Psn::Ahead(k),
        gen_delta: 0,
        ce: false,
        ackreq,
        bad: false,
        len: 100,
    };
    let events = vec![data(0, 0, false), data(2, 0, false), data(2, 0, false), data(1, 0, true), data(3, 0, true)];
    for (seed, idle, ready) in [(1, 0, 100), (2, 40, 50)] {
        check_against_reference(&c, 9, &events, 3, seed, idle, ready);
    }
}

/// Every psn of a 256-wide window but the first, then the first: the bitmap
/// fills completely and cum_psn jumps 257 in one update; across 2^24.
#[test]
fn full_bitmap_advances_in_one_step_across_the_wrap() {
    let c = cfg(4, 2, 1000, 1 << 24);
    let mut events: Vec<Ev> = (1..=256)
        .map(|k| Ev {
            probe: false,
            conn: 1,
            path: 3,
            psn: Psn::Ahead(k),
            gen_delta: 0,
            ce: false,
            ackreq: false,
            bad: false,
            len: 7,
        })
        .collect();
    events.push(Ev { psn: Psn::Ahead(257), ..events[0] }); // beyond the window
    events.push(Ev { psn: Psn::Ahead(0), ackreq: true, ..events[0] });
    events.push(Ev { psn: Psn::Behind(1), ..events[0] }); // duplicate
    for (seed, idle, ready) in [(1, 0, 100), (2, 30, 40)] {
        check_against_reference(&c, 0xff_ff00, &events, 1, seed, idle, ready);
    }
    let p = SackGenParams::from_config(&c).unwrap();
    let mut r = Ref::new(&c, 0xff_ff00);
    let mut beats = plain(opens(&p, 0xff_ff00));
    for (i, e) in events.iter().enumerate() {
        beats.extend(r.run(e, i as u32));
    }
    let (dut, _) = drive(p, &beats, 3, 0, 100);
    assert_eq!(dut.entry(1, 3).cum_psn, (0xff_ff00 + 257) & 0xff_ffff);
    assert!(dut.entry(1, 3).bitmap.is_empty());
}

/// Back-to-back packets to one entry, every cycle, in order and out of
/// order: nothing lost (forwarding), one packet per cycle.
#[test]
fn back_to_back_same_entry_one_per_cycle() {
    for latency in [1, 2] {
        let c = cfg(4, latency, 1000, 1 << 24);
        let p = SackGenParams::from_config(&c).unwrap();
        let mut dut = SackGen::new(p);
        let mut inp = Inputs { rst: true, sack_ready: true, nack_ready: true, new_ready: true, ..Inputs::default() };
        dut.clock(&inp);
        inp.rst = false;
        while !dut.outputs().pkt_ready {
            dut.clock(&inp);
        }
        // psns 1, 0, 3, 2, 5, 4, ...: every other one advances cum over a set bit.
        let n = 200u32;
        let mut news = 0;
        for i in 0..n + 8 {
            let o = dut.outputs();
            news += o.new.is_some() as u32;
            if i < n {
                assert!(o.pkt_ready, "latency {latency}: not ready at beat {i}");
                inp.pkt_valid = true;
                inp.pkt = Pkt { conn: 1, path_id: 2, psn: i ^ 1, payload_len: 1, ..Pkt::default() };
            } else {
                inp.pkt_valid = false;
            }
            dut.clock(&inp);
        }
        assert_eq!(news, n, "latency {latency}");
        assert_eq!(dut.entry(1, 2).cum_psn, n);
        assert!(dut.entry(1, 2).bitmap.is_empty());
        assert_eq!(dut.entry(1, 2).pkts, n);
    }
}

/// Backpressure changes timing only: the answers are the same as with every
/// output always ready, and nothing overflows.
#[test]
fn backpressure_changes_nothing_but_timing() {
    let c = cfg(4, 2, 4, 3000);
    let p = SackGenParams::from_config(&c).unwrap();
    let mut beats = plain(opens(&p, 5));
    let mut x = 99u32;
    for i in 0..600u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        beats.push((
            Pkt {
                conn: (x >> 8) % CONNS,
                path_id: (x >> 12) % 4,
                psn: 5 + (i / 3) + ((x >> 16) % 5),
                ce: (x >> 20) % 9 == 0,
                ackreq: (x >> 24) % 11 == 0,
                payload_len: ((x >> 4) % 1500) as u16,
                tx_ts: i as u16,
                ..Pkt::default()
            },
            0,
        ));
    }
    let (_, free) = drive(p, &beats, 7, 0, 100);
    for seed in 1..5 {
        let (_, tight) = drive(p, &beats, seed, 20, 25);
        assert_eq!(tight.sacks, free.sacks);
        assert_eq!(tight.nacks, free.nacks);
        assert_eq!(tight.news, free.news);
    }
}

/// The Block interface (ports and Bits) drives the same block as the typed
/// methods.
#[test]
fn block_interface_matches_typed() {
    let c = cfg(4, 1, 8, 16384);
    let p = SackGenParams::from_config(&c).unwrap();
    let mut a = SackGen::new(p);
    let mut b = SackGen::new(p);
    let ports = b.ports().to_vec();
    let mut ins = zero_values(&ports);
    let mut outs = zero_values(&ports);
    let set = |ins: &mut Vec<Bits>, n: &str, v: u64| {
        let i = port_index(&ports, n).unwrap();
        ins[i] = Bits::from_u64(ports[i].width, v);
    };
    for cycle in 0..200u32 {
        let pkt =
            Pkt { conn: 1, path_id: cycle % 2, psn: cycle / 3, ce: cycle % 5 == 0, payload_len: 100, ..Pkt::default() };
        let inp = Inputs {
            rst: cycle == 0,
            rate_hint: 9,
            ts_now: 0,
            pkt_valid: cycle % 3 != 2,
            pkt,
            sack_ready: cycle % 4 != 0,
            nack_ready: true,
            new_ready: cycle % 2 == 0,
        };
        set(&mut ins, "rst", inp.rst as u64);
        set(&mut ins, "rate_hint", 9);
        set(&mut ins, "s_pkt_valid", inp.pkt_valid as u64);
        for ((n, _, _), v) in p.pkt_fields().iter().zip(pkt_values(&pkt)) {
            set(&mut ins, &format!("s_pkt_{n}"), v);
        }
        set(&mut ins, "m_sack_ready", inp.sack_ready as u64);
        set(&mut ins, "m_nack_ready", 1);
        set(&mut ins, "m_new_ready", inp.new_ready as u64);
        b.eval(&ins, &mut outs);
        let o = a.outputs();
        let get = |n: &str| outs[port_index(&ports, n).unwrap()].as_u64();
        assert_eq!(get("s_pkt_ready"), o.pkt_ready as u64);
        assert_eq!(get("m_sack_valid"), o.sack.is_some() as u64);
        assert_eq!(get("m_sack_cum_psn"), o.sack.map_or(0, |s| s.cum_psn as u64));
        assert_eq!(get("m_new_valid"), o.new.is_some() as u64);
        assert_eq!(outs[port_index(&ports, "m_sack_bitmap").unwrap()].0, o.sack.unwrap_or_default().bitmap.0.to_vec());
        a.clock(&inp);
        b.tick(&ins);
    }
}

#[test]
fn refuses_unbuildable_configs() {
    let mut c = cfg(4, 3, 8, 16384);
    assert_eq!(SackGenParams::from_config(&c).unwrap_err().field, "hardware.table_read_latency");
    c.hardware.table_read_latency = 1;
    c.transport.paths_per_conn = 3;
    assert_eq!(SackGenParams::from_config(&c).unwrap_err().field, "transport.paths_per_conn");
}
