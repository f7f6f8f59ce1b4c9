//! `probe_walk` through its ports against the reference NIC's PROBE answer
//! (`RxConn::on_probe`): data on random streams (zero-length messages that
//! complete at once and half-filled ones that hold completed_msn back), then
//! a PROBE; the reference's SACKs, in order, must be the walk's beats:
//! stream, completed_msn, dst_conn, generation, echoed tx_ts, path, port and
//! plane. The active bits and msns are what conn_table would hold (seen in
//! the reference's SACKs). Random output backpressure; the first beat is
//! marked; one beat per cycle without backpressure.

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_model::probe_walk::*;
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{decode_datagram, Config, DataHeader, Flags, Header, Placement, ProbeHeader};
use mrnic_reference::nic::{Nic, NicConfig};
use mrnic_reference::rng::Rng;
use mrnic_reference::verbs::ConnParams;
use mrnic_reference::wire::WirePacket;

fn run(name: &str, seed: u64, probes: usize) {
    let cfg = Config::builtin(name).unwrap();
    let p = ProbeWalkParams::from_config(&cfg).unwrap();
    let mut blk = ProbeWalk::new(p);
    let ports = blk.ports().to_vec();
    let ix = |s: &str| port_index(&ports, s).unwrap_or_else(|| panic!("no port {s}"));
    let mut rng = Rng::new(seed);
    let local = 7;
    let mut nic = Nic::new(NicConfig::new(cfg.clone(), local, seed));
    let (conn, remote_id, peer) = (5u32, 77u32, 41u32);
    let npaths = cfg.transport.paths_per_conn.min(4) as u8;
    let cp = ConnParams { local_id: conn, remote_id, remote: peer, paths: npaths, tx_psn: 0, rx_psn: 0 };
    nic.create_conn(cp).unwrap();
    let rkey = nic.reg_mr(0x4000, 0x1000, mrnic_reference::memory::Access::ALL).unwrap();
    let streams = p.streams as usize;
    let mut active = 0u64;
    let mut completed = vec![0u32; streams];
    let mut next_msn = vec![0u32; streams];
    let mut psn = vec![0u32; npaths as usize];
    let mut t = 0u64;
    let step = cfg.timers.rto_min_us as u64 * 1000 + 1;
    let mut beats_total = 0usize;
    let mut none_active_seen = false;
    for k in 0..probes {
        // Some data first, on few streams so some stay inactive for a while.
        let n = if k < 3 { 0 } else { rng.below(3) };
        for _ in 0..n {
            let s = rng.below(streams as u64 / 2 + 1) as usize + (k % 2) * (streams / 2 - 1);
            let s = s.min(streams - 1);
            let path = rng.below(npaths as u64) as usize;
            let half = rng.below(3) == 0;
            let h = DataHeader {
                flags: Flags { ackreq: true, ..Flags::default() },
                payload_len: if half { 50 } else { 0 },
                dst_conn: conn,
                path_id: path as u8,
                path_psn: psn[path],
                path_gen: 0,
                stream_id: s as u8,
                msn: next_msn[s],
                msg_len: if half { 100 } else { 0 },
                place: Placement::Write { rkey, addr: 0x4000 },
                tx_ts: 0,
                imm: None,
            };
            let meta =
                WirePacket { src: peer, dst: local, sport: 9, dport: 4791, plane: 0, ecn: ECN_ECT0, bytes: vec![] };
            // A half message (50 of 100 bytes) never completes: its stream's
            // completed_msn stays behind from then on.
            let payload = vec![1u8; h.payload_len as usize];
            nic.handle_datagram(t, &meta, &Header::Data(h), &payload);
            while let Some(pkt) = nic.poll_transmit(t) {
                if let Ok(d) = decode_datagram(&pkt.bytes) {
                    if let Header::Sack(sk) = d.header {
                        active |= 1 << sk.stream_id;
                        completed[sk.stream_id as usize] = sk.completed_msn;
                        psn[path] += 1;
                        next_msn[s] += 1;
                    }
                }
            }
        }
        none_active_seen |= active == 0;
        t += step;
        let path = rng.below(npaths as u64) as usize;
        let ph = ProbeHeader {
            tx_ts: rng.below(1 << 16) as u16,
            dst_conn: conn,
            path_id: path as u8,
            path_gen: rng.below(2) as u8,
            path_psn: psn[path],
        };
        let sport = 1000 + rng.below(1000) as u16;
        let plane = rng.below(4) as u8;
        let meta = WirePacket { src: peer, dst: local, sport, dport: 4791, plane, ecn: ECN_ECT0, bytes: vec![] };
        nic.handle_datagram(t, &meta, &Header::Probe(ph), &[]);
        let mut want = vec![];
        while let Some(pkt) = nic.poll_transmit(t) {
            let d = decode_datagram(&pkt.bytes).unwrap();
            let Header::Sack(sk) = d.header else { panic!("a PROBE answer that is not a SACK: {:?}", d.header) };
            assert_eq!((pkt.dport, pkt.plane), (sport, plane));
            want.push(sk);
        }
        assert!(!want.is_empty(), "{name}: the reference answered no PROBE (budget?)");
        // The walk, fed what conn_table would give.
        let mut v = zero_values(&ports);
        let mut msns = Bits::zero(24 * p.streams);
        msns.set_packed(24 * p.streams, completed.iter().map(|&m| (m as u64, 24)));
        let set = [
            ("s_probe_valid", 1u64),
            ("s_probe_conn", conn as u64),
            ("s_probe_remote_id", remote_id as u64),
            ("s_probe_active", active),
            ("s_probe_path_id", path as u64),
            ("s_probe_psn", ph.path_psn as u64),
            ("s_probe_gen", ph.path_gen as u64),
            ("s_probe_tx_ts", ph.tx_ts as u64),
            ("s_probe_sport", sport as u64),
            ("s_probe_plane", plane as u64),
        ];
        for (n, x) in set {
            v[ix(n)] = Bits::from_u64(ports[ix(n)].width, x);
        }
        v[ix("s_probe_msns")] = msns;
        let mut o = v.clone();
        blk.eval(&v, &mut o);
        assert_eq!(o[ix("s_probe_ready")].as_u64(), 1, "{name}: not ready between PROBEs");
        blk.tick(&v);
        let pressure = if k % 3 == 0 { 0 } else { 50 };
        let mut got = vec![];
        let mut cycles = 0;
        while got.len() < want.len() {
            cycles += 1;
            assert!(cycles < 1000, "{name}: the walk stalled");
            let mut v = zero_values(&ports);
            // Offered again at once: must not be taken before the walk ends.
            v[ix("s_probe_valid")] = Bits::from_u64(1, 1);
            let ready = rng.below(100) >= pressure;
            v[ix("m_pkt_ready")] = Bits::from_u64(1, ready as u64);
            let mut o = v.clone();
            blk.eval(&v, &mut o);
            let g = |s: &str| o[ix(s)].as_u64();
            assert_eq!(g("s_probe_ready"), 0, "{name}: a PROBE taken during a walk");
            if g("m_pkt_valid") == 1 && ready {
                got.push((
                    g("m_pkt_stream_id") as u8,
                    g("m_pkt_completed_msn") as u32,
                    g("m_pkt_dst_conn") as u32,
                    g("m_pkt_gen") as u8,
                    g("m_pkt_tx_ts") as u16,
                    g("m_pkt_path_id") as u8,
                    (g("m_pkt_first") == 1, g("m_pkt_op") as u32, g("m_pkt_conn") as u32),
                ));
            }
            blk.tick(&v);
        }
        if pressure == 0 {
            assert_eq!(cycles, want.len(), "{name}: one beat per cycle");
        }
        let exp: Vec<_> = want
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let first = (i == 0, mrnic_model::sack_gen::OP_PROBE, conn);
                (s.stream_id, s.completed_msn, s.dst_conn, s.path_gen, s.echo_ts, s.path_id, first)
            })
            .collect();
        assert_eq!(got, exp, "{name} seed {seed} PROBE {k}: active {active:b}");
        beats_total += got.len();
        // Nothing more comes out.
        let mut v = zero_values(&ports);
        v[ix("m_pkt_ready")] = Bits::from_u64(1, 1);
        let mut o = v.clone();
        blk.eval(&v, &mut o);
        assert_eq!(o[ix("m_pkt_valid")].as_u64(), 0, "{name}: a beat too many");
        blk.tick(&v);
    }
    assert!(none_active_seen && active.count_ones() > 1, "{name}: too little exercised");
    assert!(completed.iter().zip(&next_msn).any(|(c, n)| c < n), "{name}: no stream held back");
    assert!(beats_total > probes, "{name}: walks of more than one beat must occur");
}

#[test]
fn answers_like_the_reference_small() {
    run("small", 1, 60);
}

#[test]
fn answers_like_the_reference_default() {
    run("default", 2, 60);
}
