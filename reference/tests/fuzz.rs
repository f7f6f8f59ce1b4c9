//! Hostile input never panics: random headers (near-valid and extreme
//! values) and random bytes are thrown at both NICs in the middle of a
//! transfer. Afterwards no completion has been raised twice.

mod common;

use std::collections::BTreeSet;

use common::*;
use mrnic_proto::packet::ECN_CE;
use mrnic_proto::{
    encode_datagram, Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Placement, ProbeHeader, SackHeader,
};
use mrnic_reference::WirePacket;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("MRNIC_PROPTEST_CASES").ok().and_then(|v| v.parse::<u32>().ok()).map_or(300, |c| (c / 4).max(50))
}

fn conn() -> impl Strategy<Value = u32> {
    prop_oneof![Just(A_CONN), Just(B_CONN), 0u32..(1 << 24)]
}

fn psn() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..300, (1u32 << 24) - 300..(1 << 24), 0u32..(1 << 24)]
}

fn addr() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(WRITE_BASE),
        WRITE_BASE - 8..WRITE_BASE + 8,
        WRITE_BASE + (1 << 20) - 8..WRITE_BASE + (1 << 20) + 8,
        u64::MAX - 2000..=u64::MAX,
        any::<u64>()
    ]
}

fn header() -> impl Strategy<Value = (Header, usize)> {
    let data = (
        (conn(), 0u8..6, psn(), any::<u8>(), 0u8..6, 0u32..12),
        (prop_oneof![0u32..5000, Just(u32::MAX), any::<u32>()], any::<bool>(), any::<u32>(), addr()),
        (0usize..1100, any::<u16>(), proptest::option::of(any::<u32>()), any::<[bool; 5]>()),
    )
        .prop_map(
            |(
                (dst_conn, path_id, path_psn, path_gen, stream_id, msn),
                (msg_len, write, key, a),
                (len, tx_ts, imm, f),
            )| {
                let place = if write {
                    Placement::Write { rkey: key, addr: a }
                } else {
                    Placement::Send { rq_seq: key & 0xff_ffff, msg_offset: a as u32 }
                };
                let flags = Flags { som: f[0], eom: f[1], retx: f[2], ackreq: f[3], se: f[4] };
                let h = DataHeader {
                    flags,
                    payload_len: len as u16,
                    dst_conn,
                    path_id,
                    path_psn,
                    path_gen,
                    stream_id,
                    msn,
                    msg_len,
                    place,
                    tx_ts,
                    imm,
                };
                (Header::Data(h), len)
            },
        );
    let sack = (conn(), 0u8..6, psn(), any::<[u64; 4]>(), any::<u8>(), any::<u16>(), 0u8..6, 0u32..12).prop_map(
        |(dst_conn, path_id, cum_psn, bits, ecn_cnt, rate_hint, stream_id, completed_msn)| {
            let h = SackHeader {
                rate_hint,
                dst_conn,
                path_id,
                path_gen: 0,
                cum_psn,
                stream_id,
                completed_msn,
                echo_ts: 0,
                ecn_cnt,
                bitmap: Bitmap256(bits),
            };
            (Header::Sack(h), 0)
        },
    );
    let nack = (conn(), 0u8..6, psn(), 0usize..4).prop_map(|(dst_conn, path_id, path_psn, code)| {
        let h = NackHeader {
            code: NackCode::ALL[code],
            dst_conn,
            path_id,
            path_gen: 0,
            path_psn,
            stream_id: 0,
            msn: 0,
            echo_ts: 0,
        };
        (Header::Nack(h), 0)
    });
    let probe = (conn(), 0u8..6, psn(), any::<u8>()).prop_map(|(dst_conn, path_id, path_psn, path_gen)| {
        (Header::Probe(ProbeHeader { tx_ts: 0, dst_conn, path_id, path_gen, path_psn }), 0)
    });
    prop_oneof![4 => data, 2 => sack, 1 => nack, 1 => probe]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_packets_never_panic_or_complete_twice(
        seed in any::<u64>(),
        junk in proptest::collection::vec((header(), any::<bool>(), any::<bool>(), any::<u64>()), 1..40),
        raw in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 0..5),
    ) {
        let s = Setup::new(2, seed);
        let msgs = [
            Msg { stream: 0, kind: Kind::Write, len: 5000 },
            Msg { stream: 1, kind: Kind::Send, len: 3000 },
            Msg { stream: 0, kind: Kind::WriteImm, len: 10 },
        ];
        let mut r = prepare(&s, &msgs);
        r.sim.run_until(3_000, 1000, |_| false);
        for ((h, len), to_a, ce, flip) in &junk {
            let mut bytes = Vec::new();
            if encode_datagram(h, &vec![0x5a; *len], &mut bytes).is_err() {
                continue;
            }
            if flip % 7 == 0 {
                let i = (*flip as usize / 7) % bytes.len();
                bytes[i] ^= 1 << (flip % 8);
            }
            let (nic, src) = if *to_a { (A, B_ADDR) } else { (B, A_ADDR) };
            let dst = r.sim.nics[nic].addr();
            let ecn = if *ce { ECN_CE } else { 2 };
            let p = WirePacket { src, dst, sport: 50000, dport: 4797, plane: 0, ecn, bytes };
            let now = r.sim.now;
            r.sim.nics[nic].handle_packet(now, &p);
        }
        for bytes in raw {
            let now = r.sim.now;
            r.sim.nics[B].handle_packet(now, &WirePacket { src: A_ADDR, dst: B_ADDR, sport: 1, dport: 4797, plane: 0, ecn: 2, bytes });
        }
        r.sim.run_until(r.sim.now + 50_000_000, 200_000, |_| false);
        for nic in [A, B] {
            let mut seen = BTreeSet::new();
            for c in &r.sim.completions[nic] {
                prop_assert!(seen.insert(c.wr_id), "completion {} twice on nic {}", c.wr_id, nic);
            }
        }
    }
}
