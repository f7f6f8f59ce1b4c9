//! `conn_table` against the reference NIC (`Nic::handle_datagram`): random
//! DATA, PROBE and SACK headers for open and unknown connection ids and for
//! paths inside and beyond each connection's path count; every NO_CONN and
//! BAD_HDR NACK the reference sends before a packet reaches its connection,
//! and its counters, must be what the table answers. Then cycle-level tests:
//! random writes, lookups and reads with random idle and backpressure
//! against the documented rule (an answer reflects every write handshaken
//! before its answer cycle), back-to-back writes and lookups of one slot at
//! every spacing, and one lookup per cycle sustained at latency `L + 1`.

use std::collections::VecDeque;

use mrnic_model::block::{zero_values, Block};
use mrnic_model::conn_table::*;
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{decode_datagram, Config, DataHeader, Flags, Header, Placement, ProbeHeader, SackHeader};
use mrnic_reference::nic::{Nic, NicConfig};
use mrnic_reference::rng::Rng;
use mrnic_reference::verbs::ConnParams;
use mrnic_reference::wire::WirePacket;

fn cfg(latency: u32) -> Config {
    let mut c = Config::builtin("small").unwrap();
    c.hardware.table_read_latency = latency;
    c
}

/// Drives the block one cycle at a time and collects its outputs.
struct Bench {
    dut: ConnTable,
    cycle: u64,
    lks: Vec<(u64, LkResult)>,
    nacks: Vec<Nack>,
    rds: Vec<(u64, RdResult)>,
    stats: Vec<Stats>,
}

impl Bench {
    fn new(p: ConnTableParams) -> Bench {
        let mut b = Bench { dut: ConnTable::new(p), cycle: 0, lks: vec![], nacks: vec![], rds: vec![], stats: vec![] };
        b.step(&Inputs { rst: true, ..Inputs::default() });
        while b.dut.initializing() {
            b.step(&Inputs::default());
        }
        b
    }

    /// One cycle; returns the outputs seen before the edge.
    fn step(&mut self, inp: &Inputs) -> Outputs {
        let o = self.dut.outputs();
        if let Some(r) = &o.lk {
            if inp.lk_ready {
                self.lks.push((self.cycle, r.clone()));
            }
        }
        if let Some(n) = o.nack {
            if inp.nack_ready {
                self.nacks.push(n);
            }
        }
        if let Some(r) = o.rd {
            if inp.rd_ready {
                self.rds.push((self.cycle, r));
            }
        }
        self.stats.push(o.stats);
        self.dut.clock(inp);
        self.cycle += 1;
        o
    }

    fn drain(&mut self) {
        let mut n = 0;
        while !self.dut.idle() {
            self.step(&Inputs { lk_ready: true, nack_ready: true, rd_ready: true, ..Inputs::default() });
            n += 1;
            assert!(n < 100, "the table does not drain");
        }
        self.step(&Inputs::default());
    }
}

fn data(dst_conn: u32, path_id: u8, r: &mut Rng) -> DataHeader {
    DataHeader {
        flags: Flags::default(),
        payload_len: 0,
        dst_conn,
        path_id,
        path_psn: r.below(1 << 24) as u32,
        path_gen: r.below(256) as u8,
        stream_id: r.below(4) as u8,
        msn: r.below(1 << 24) as u32,
        msg_len: 0,
        place: Placement::Write { rkey: 0, addr: 0 },
        tx_ts: r.below(1 << 16) as u16,
        imm: None,
    }
}

/// The header fields the receive path gives the lookup.
fn lookup_of(h: &Header, meta: &WirePacket) -> Lookup {
    let base = Lookup { sport: meta.sport, plane: meta.plane, src_addr: meta.src, ..Lookup::default() };
    match h {
        Header::Data(d) => Lookup {
            op: OP_DATA,
            dst_conn: d.dst_conn,
            path_id: d.path_id,
            path_gen: d.path_gen,
            psn: d.path_psn,
            stream_id: d.stream_id,
            msn: d.msn,
            tx_ts: d.tx_ts,
            ..base
        },
        Header::Probe(p) => Lookup {
            op: OP_PROBE,
            dst_conn: p.dst_conn,
            path_id: p.path_id,
            path_gen: p.path_gen,
            psn: p.path_psn,
            tx_ts: p.tx_ts,
            ..base
        },
        Header::Sack(s) => Lookup { op: OP_ACK, dst_conn: s.dst_conn, path_id: s.path_id, ..base },
        Header::Nack(_) => unreachable!("NACK lookups are not generated here"),
    }
}

/// A NACK from the table as the reference would put it on the wire.
fn nack_pkt(n: &Nack, local: u32, udp_port: u16) -> (WirePacket, Header) {
    let code = match n.code {
        NACK_NO_CONN => mrnic_proto::NackCode::NoConn,
        NACK_BAD_HDR => mrnic_proto::NackCode::BadHdr,
        c => panic!("unexpected code {c}"),
    };
    let h = mrnic_reference::receiver::nack_for(
        code,
        n.dst_conn,
        n.path_id,
        n.path_gen,
        n.psn,
        n.stream_id,
        n.msn,
        n.echo_ts,
    );
    let meta = WirePacket {
        src: local,
        dst: n.dst_addr,
        sport: udp_port,
        dport: n.sport,
        plane: n.plane,
        ecn: ECN_ECT0,
        bytes: vec![],
    };
    (meta, h)
}

/// Random headers through the reference NIC and through the table: the
/// reference's NO_CONN / bad-path answers and counters are the table's.
#[test]
fn agrees_with_the_reference_before_the_connection() {
    for latency in [1, 2] {
        let cfg = cfg(latency);
        let p = ConnTableParams::from_config(&cfg).unwrap();
        let mut r = Rng::new(17 + latency as u64);
        let local_addr = 7;
        let mut nic = Nic::new(NicConfig::new(cfg.clone(), local_addr, 5));
        let mut b = Bench::new(p);
        // Connections on some slots, each with its own path count.
        let mut open = vec![];
        for slot in [1u32, 2, 5, 9, 15] {
            let paths = 1 + r.below(cfg.transport.paths_per_conn as u64) as u8;
            let cp =
                ConnParams { local_id: slot, remote_id: 100 + slot, remote: 40 + slot, paths, tx_psn: 0, rx_psn: 0 };
            nic.create_conn(cp).unwrap();
            b.step(&Inputs {
                wr: Some(Ctx { valid: true, local_id: slot, remote_id: cp.remote_id, remote_addr: cp.remote, paths }),
                ..Inputs::default()
            });
            open.push(slot);
        }
        b.drain();
        let before = *nic.counters();
        let (mut want_no_conn, mut want_bad_path, mut want_ack) = (0u64, 0u64, 0u64);
        let (mut want_bad_src, mut want_ack_bad_src) = (0u64, 0u64);
        for i in 0..600 {
            // Open ids, ids whose slot is open but whose high bits differ
            // (the tag must catch them), and free slots.
            let dst = match r.below(4) {
                0 | 1 => open[r.below(open.len() as u64) as usize],
                2 => open[r.below(open.len() as u64) as usize] + 16 * (1 + r.below(1000) as u32),
                _ => r.below(1 << 24) as u32,
            };
            let path = r.below(6) as u8;
            let h = match r.below(5) {
                0 => Header::Probe(ProbeHeader {
                    tx_ts: r.below(1 << 16) as u16,
                    dst_conn: dst,
                    path_id: path,
                    path_gen: r.below(256) as u8,
                    path_psn: r.below(1 << 24) as u32,
                }),
                1 => Header::Sack(SackHeader { dst_conn: dst, path_id: 0, ..SackHeader::default() }),
                _ => Header::Data(data(dst, path, &mut r)),
            };
            // Mostly from the peer when the id is open, sometimes from
            // another address (rx_bad_src / ack_bad_src).
            let src = match nic.conn_info(dst) {
                Some(c) if r.below(5) > 0 => c.params.remote,
                _ => 40 + r.below(30) as u32,
            };
            let meta = WirePacket {
                src,
                dst: local_addr,
                sport: 49152 + r.below(16384) as u16,
                dport: cfg.transport.udp_port,
                plane: r.below(4) as u8,
                ecn: ECN_ECT0,
                bytes: vec![],
            };
            let c0 = *nic.counters();
            nic.handle_datagram(1000 * i, &meta, &h, &[]);
            let c1 = *nic.counters();
            let mut sent = vec![];
            while let Some(pkt) = nic.poll_transmit(1000 * i) {
                sent.push(pkt);
            }
            let n0 = b.nacks.len();
            let l0 = b.lks.len();
            b.step(&Inputs { lk: Some(lookup_of(&h, &meta)), ..Inputs::default() });
            b.drain();
            assert_eq!(b.lks.len(), l0 + 1, "every lookup is answered");
            let res = &b.lks[l0].1;
            let no_conn = c1.rx_no_conn - c0.rx_no_conn;
            let bad_path = c1.rx_bad_path - c0.rx_bad_path;
            let ack = c1.ack_no_conn - c0.ack_no_conn;
            let bad_src = c1.rx_bad_src - c0.rx_bad_src;
            let ack_bad_src = c1.ack_bad_src - c0.ack_bad_src;
            want_bad_src += bad_src;
            want_ack_bad_src += ack_bad_src;
            want_no_conn += no_conn;
            want_bad_path += bad_path;
            want_ack += ack;
            assert_eq!(res.hit, nic.conn_info(dst).is_some(), "{i}: {h:?}");
            assert_eq!(res.ok, no_conn + bad_path + ack + bad_src + ack_bad_src == 0, "{i}: {h:?}");
            if res.ok || matches!(h, Header::Sack(_)) {
                assert_eq!(b.nacks.len(), n0, "{i}: no NACK from the table for {h:?}");
                continue;
            }
            // Refused here: the reference sent exactly what the table did.
            let got: Vec<(WirePacket, Header)> =
                b.nacks[n0..].iter().map(|n| nack_pkt(n, local_addr, cfg.transport.udp_port)).collect();
            assert_eq!(got.len(), sent.len(), "{i}: {h:?}");
            for ((gm, gh), s) in got.iter().zip(&sent) {
                let d = decode_datagram(&s.bytes).unwrap();
                assert_eq!(&d.header, gh, "{i}");
                assert_eq!((gm.dst, gm.dport, gm.plane, gm.sport), (s.dst, s.dport, s.plane, s.sport), "{i}");
            }
        }
        let after = nic.counters();
        assert_eq!(after.rx_no_conn - before.rx_no_conn, want_no_conn);
        assert!(want_no_conn > 50 && want_bad_path > 20 && want_ack > 10, "{want_no_conn} {want_bad_path} {want_ack}");
        assert!(want_bad_src > 20 && want_ack_bad_src > 5, "{want_bad_src} {want_ack_bad_src}");
        let count = |f: fn(&Stats) -> bool| b.stats.iter().filter(|s| f(s)).count() as u64;
        assert_eq!(count(|s| s.no_conn), want_no_conn);
        assert_eq!(count(|s| s.bad_path), want_bad_path);
        assert_eq!(count(|s| s.ack_no_conn), want_ack);
        assert_eq!(count(|s| s.bad_src), want_bad_src);
        assert_eq!(count(|s| s.ack_bad_src), want_ack_bad_src);
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Wr(Ctx),
    St(StWrite),
}

/// The documented rule, computed from a log: the state after every write
/// handshaken before `cycle`.
fn state_at(p: &ConnTableParams, log: &[(u64, Op)], cycle: u64, slot: u32) -> (Ctx, Vec<StreamState>) {
    let mut ctx = Ctx::default();
    let mut st = vec![StreamState::default(); p.streams as usize];
    for (_, op) in log.iter().filter(|(c, _)| *c < cycle) {
        match op {
            Op::Wr(w) if w.local_id % p.conns == slot => ctx = *w,
            Op::St(s) if s.conn == slot => {
                for (i, e) in st.iter_mut().enumerate() {
                    if s.clear {
                        *e = StreamState::default();
                    } else if i as u32 == s.stream {
                        *e = s.state;
                    }
                }
            }
            _ => {}
        }
    }
    (ctx, st)
}

/// Random traffic on few slots so that writes and lookups of one slot meet
/// at every spacing, with random idle and backpressure.
#[test]
fn answers_reflect_every_earlier_write_under_backpressure() {
    for latency in [1, 2] {
        for seed in 0..4u64 {
            let p = ConnTableParams::from_config(&cfg(latency)).unwrap();
            let l = p.read_latency as u64;
            let mut r = Rng::new(seed * 31 + latency as u64);
            let mut b = Bench::new(p);
            let mut log = vec![];
            let mut issued: VecDeque<(u64, Lookup)> = VecDeque::new();
            let mut rd_issued: VecDeque<(u64, u32)> = VecDeque::new();
            let (mut lk, mut rd): (Option<Lookup>, Option<u32>) = (None, None);
            for _ in 0..4000 {
                let slot = r.below(3) as u32;
                if lk.is_none() && r.below(10) < 7 {
                    lk = Some(Lookup {
                        op: r.below(4) as u32,
                        dst_conn: slot + 16 * r.below(2) as u32,
                        path_id: r.below(5) as u8,
                        ..Lookup::default()
                    });
                }
                if rd.is_none() && r.below(10) < 5 {
                    rd = Some(r.below(3) as u32);
                }
                let wr = (r.below(10) < 3).then(|| Ctx {
                    valid: r.below(4) != 0,
                    local_id: slot + 16 * r.below(2) as u32,
                    remote_id: r.below(1 << 24) as u32,
                    remote_addr: r.next_u64() as u32,
                    paths: 1 + r.below(4) as u8,
                });
                let st = (r.below(10) < 4).then(|| StWrite {
                    conn: r.below(3) as u32,
                    stream: r.below(4) as u32,
                    clear: r.below(8) == 0,
                    state: StreamState { completed_msn: r.below(1 << 24) as u32, active: r.below(2) == 1 },
                });
                let inp = Inputs {
                    rst: false,
                    wr,
                    st,
                    lk,
                    lk_ready: r.below(10) < 6,
                    nack_ready: r.below(10) < 6,
                    rd,
                    rd_ready: r.below(10) < 6,
                };
                let cycle = b.cycle;
                let o = b.step(&inp);
                assert!(o.wr_ready && o.st_ready);
                if let Some(w) = wr {
                    log.push((cycle, Op::Wr(w)));
                }
                if let Some(s) = st {
                    log.push((cycle, Op::St(s)));
                }
                if o.lk_ready {
                    if let Some(k) = lk.take() {
                        issued.push_back((cycle, k));
                    }
                }
                if o.rd_ready {
                    if let Some(c) = rd.take() {
                        rd_issued.push_back((cycle, c));
                    }
                }
            }
            b.drain();
            assert_eq!(b.lks.len(), issued.len());
            assert_eq!(b.rds.len(), rd_issued.len());
            for ((a, k), (seen, res)) in issued.iter().zip(&b.lks) {
                assert!(*seen > a + l, "answer before its latency");
                let (ctx, st) = state_at(&p, &log, a + l, k.dst_conn % p.conns);
                let (want, _, _) = decide(&p, &ctx, &st, k);
                assert_eq!(res, &want, "seed {seed} L {latency}: lookup at {a}");
            }
            for ((a, c), (seen, res)) in rd_issued.iter().zip(&b.rds) {
                assert!(*seen > a + l);
                let (ctx, _) = state_at(&p, &log, a + l, *c);
                assert_eq!(res, &RdResult { conn: *c, ctx }, "seed {seed} L {latency}: read at {a}");
            }
            // The memories hold the last write of every slot.
            for slot in 0..3 {
                let (ctx, st) = state_at(&p, &log, u64::MAX, slot);
                assert_eq!(*b.dut.ctx(slot), ctx);
                for (s, e) in st.iter().enumerate() {
                    assert_eq!(b.dut.stream(slot, s as u32), e);
                }
            }
        }
    }
}

/// A write in the cycle before, of, or after a lookup of the same slot, at
/// every spacing up to `L + 2`: the answer has it exactly when the write was
/// handshaken before the answer cycle.
#[test]
fn back_to_back_writes_and_lookups_of_one_slot() {
    for latency in [1, 2] {
        let p = ConnTableParams::from_config(&cfg(latency)).unwrap();
        let l = p.read_latency as i64;
        for offset in -2..=l + 2 {
            let mut b = Bench::new(p);
            let old = Ctx { valid: true, local_id: 3, remote_id: 10, remote_addr: 2, paths: 2 };
            let new = Ctx { remote_id: 11, remote_addr: 2, paths: 4, ..old };
            b.step(&Inputs { wr: Some(old), ..Inputs::default() });
            b.drain();
            let lk = Lookup { op: OP_DATA, dst_conn: 3, path_id: 3, src_addr: 2, ..Lookup::default() };
            let start = b.cycle as i64;
            let lk_at = start + 2;
            for c in start..start + 2 * l + 8 {
                let inp = Inputs {
                    wr: (c == lk_at + offset).then_some(new),
                    st: (c == lk_at + offset).then_some(StWrite {
                        conn: 3,
                        stream: 1,
                        clear: false,
                        state: StreamState { completed_msn: 9, active: true },
                    }),
                    lk: (c == lk_at).then_some(lk),
                    lk_ready: true,
                    nack_ready: true,
                    rd_ready: true,
                    ..Inputs::default()
                };
                b.step(&inp);
            }
            let (seen, res) = &b.lks[0];
            assert_eq!(*seen as i64, lk_at + l + 1, "latency L + 1");
            let sees = offset < l;
            assert_eq!(res.remote_id, if sees { 11 } else { 10 }, "L {latency} offset {offset}");
            // path 3 is beyond 2 paths but inside 4.
            assert_eq!(res.ok, sees, "L {latency} offset {offset}");
            assert_eq!(res.streams[1].active, sees);
            assert_eq!(b.nacks.len(), usize::from(!sees));
        }
    }
}

/// One lookup and one read per cycle, sustained, while the outputs are
/// taken; every answer exactly `L + 1` cycles after its handshake.
#[test]
fn sustains_one_lookup_and_one_read_per_cycle() {
    for latency in [1, 2] {
        let p = ConnTableParams::from_config(&cfg(latency)).unwrap();
        let mut b = Bench::new(p);
        let start = b.cycle;
        let n = 500u64;
        for i in 0..n {
            let o = b.step(&Inputs {
                lk: Some(Lookup { op: OP_DATA, dst_conn: (i % 16) as u32, ..Lookup::default() }),
                rd: Some((i % 16) as u32),
                lk_ready: true,
                nack_ready: true,
                rd_ready: true,
                ..Inputs::default()
            });
            assert!(o.lk_ready && o.rd_ready, "stalled at {i}");
        }
        b.drain();
        assert_eq!(b.lks.len() as u64, n);
        for (i, (seen, r)) in b.lks.iter().enumerate() {
            assert_eq!(*seen, start + i as u64 + p.latency() as u64);
            assert_eq!(r.conn, (i % 16) as u32);
        }
        // Every lookup missed (nothing open): one NO_CONN NACK each.
        assert_eq!(b.nacks.len() as u64, n);
        for (i, (seen, _)) in b.rds.iter().enumerate() {
            assert_eq!(*seen, start + i as u64 + p.latency() as u64);
        }
    }
}

/// Reset mid-traffic empties the table and the pipeline; ready is low for
/// the whole sweep.
#[test]
fn reset_clears_every_slot() {
    let p = ConnTableParams::from_config(&cfg(2)).unwrap();
    let mut b = Bench::new(p);
    for s in 0..16 {
        b.step(&Inputs {
            wr: Some(Ctx { valid: true, local_id: s, remote_id: 1, remote_addr: 1, paths: 1 }),
            st: Some(StWrite {
                conn: s,
                stream: 0,
                clear: false,
                state: StreamState { completed_msn: 5, active: true },
            }),
            lk: Some(Lookup { dst_conn: s, ..Lookup::default() }),
            ..Inputs::default()
        });
    }
    b.step(&Inputs { rst: true, ..Inputs::default() });
    let mut sweep = 0;
    while b.dut.initializing() {
        let o = b.step(&Inputs::default());
        assert!(!o.lk_ready && !o.wr_ready && !o.st_ready && !o.rd_ready);
        assert!(o.lk.is_none() && o.nack.is_none());
        sweep += 1;
    }
    assert_eq!(sweep, 16);
    for s in 0..16 {
        assert_eq!(*b.dut.ctx(s), Ctx::default());
        assert_eq!(*b.dut.stream(s, 0), StreamState::default());
    }
}

#[test]
fn refuses_unbuildable_configs() {
    let mut c = cfg(1);
    c.hardware.table_read_latency = 3;
    assert_eq!(ConnTableParams::from_config(&c).unwrap_err().field, "hardware.table_read_latency");
    c = cfg(1);
    c.transport.streams_per_conn = 128;
    assert_eq!(ConnTableParams::from_config(&c).unwrap_err().field, "transport.streams_per_conn");
}

/// The port-level interface drives the same block as the typed one.
#[test]
fn ports_cover_every_channel() {
    let p = ConnTableParams::from_config(&cfg(1)).unwrap();
    let mut dut = ConnTable::new(p);
    let defs = dut.ports().to_vec();
    for ch in ["s_wr", "s_st", "s_lk", "m_lk", "m_nack", "s_rd", "m_rd"] {
        assert!(defs.iter().any(|d| d.name == format!("{ch}_valid")), "{ch}");
    }
    let w: u32 = defs.iter().filter(|d| d.name == "m_lk_msns").map(|d| d.width).sum();
    assert_eq!(w, 24 * p.streams);
    let ins = zero_values(&defs);
    let mut outs = zero_values(&defs);
    dut.eval(&ins, &mut outs);
    dut.tick(&ins);
}
