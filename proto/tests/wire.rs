//! Round trips, known answers and hostile input for every decoder.

use mrnic_proto::layouts::{data, sack};
use mrnic_proto::packet::{decode_datagram, decode_frame, encode_datagram, encode_frame, NetHeaders};
use mrnic_proto::{
    Bitmap256, DataHeader, Flags, Header, NackCode, NackHeader, Placement, ProbeHeader, Problem, SackHeader,
};
use proptest::prelude::*;

fn u24() -> impl Strategy<Value = u32> {
    0u32..(1 << 24)
}

fn flags() -> impl Strategy<Value = Flags> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(som, eom, retx, ackreq, se)| Flags { som, eom, retx, ackreq, se })
}

fn placement() -> impl Strategy<Value = Placement> {
    prop_oneof![
        (any::<u32>(), any::<u64>()).prop_map(|(rkey, addr)| Placement::Write { rkey, addr }),
        (u24(), any::<u32>()).prop_map(|(rq_seq, msg_offset)| Placement::Send { rq_seq, msg_offset }),
    ]
}

prop_compose! {
    fn data_header(max_payload: u16)(
        flags in flags(), payload_len in 0..=max_payload, dst_conn in u24(), path_id in any::<u8>(),
        path_psn in u24(), path_gen in any::<u8>(), stream_id in any::<u8>(), msn in u24(),
        msg_len in any::<u32>(), place in placement(), tx_ts in any::<u16>(), imm in any::<Option<u32>>(),
    ) -> DataHeader {
        DataHeader { flags, payload_len, dst_conn, path_id, path_psn, path_gen, stream_id, msn, msg_len, place, tx_ts, imm }
    }
}

fn header(max_payload: u16) -> impl Strategy<Value = Header> {
    prop_oneof![
        data_header(max_payload).prop_map(Header::Data),
        (
            any::<u16>(),
            u24(),
            any::<u8>(),
            any::<u8>(),
            u24(),
            any::<u8>(),
            u24(),
            any::<u16>(),
            any::<u8>(),
            any::<[u64; 4]>()
        )
            .prop_map(
                |(rate_hint, dst_conn, path_id, path_gen, cum_psn, stream_id, completed_msn, echo_ts, ecn_cnt, b)| {
                    Header::Sack(SackHeader {
                        rate_hint,
                        dst_conn,
                        path_id,
                        path_gen,
                        cum_psn,
                        stream_id,
                        completed_msn,
                        echo_ts,
                        ecn_cnt,
                        bitmap: Bitmap256(b),
                    })
                }
            ),
        (0usize..4, u24(), any::<u8>(), any::<u8>(), u24(), any::<u8>(), u24(), any::<u16>()).prop_map(
            |(c, dst_conn, path_id, path_gen, path_psn, stream_id, msn, echo_ts)| {
                Header::Nack(NackHeader {
                    code: NackCode::ALL[c],
                    dst_conn,
                    path_id,
                    path_gen,
                    path_psn,
                    stream_id,
                    msn,
                    echo_ts,
                })
            }
        ),
        (any::<u16>(), u24(), any::<u8>(), any::<u8>(), u24()).prop_map(
            |(tx_ts, dst_conn, path_id, path_gen, path_psn)| {
                Header::Probe(ProbeHeader { tx_ts, dst_conn, path_id, path_gen, path_psn })
            }
        ),
    ]
}

fn packet() -> impl Strategy<Value = (NetHeaders, Header, Vec<u8>)> {
    (header(300), any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u16>(), 0u8..4, any::<u64>()).prop_map(
        |(mut h, src_ip, dst_ip, src_port, ecn, seed)| {
            let n = h.payload_len();
            let payload: Vec<u8> = (0..n).map(|i| (seed >> (i % 57)) as u8 ^ i as u8).collect();
            if let Header::Data(d) = &mut h {
                d.payload_len = payload.len() as u16;
            }
            let net = NetHeaders { src_ip, dst_ip, src_port, ecn, ..NetHeaders::default() };
            (net, h, payload)
        },
    )
}

/// Bits of a frame (counted MSB first from its first byte) whose change
/// leaves the packet as it was: the IPv4 DF flag (the encoder sets it, the
/// decoder takes either), the IPv4 header checksum and the UDP checksum
/// (which may be 0, "not computed"). Two flips there can keep the IPv4 sum
/// valid (DF and the checksum's own bit in the same column), or turn the
/// UDP checksum into 0; the ICRC covers only the datagram. Found by this
/// test on 2026-12-01 (DF and the checksum's high byte, bit 6 of each).
fn content_free(bit: usize) -> bool {
    use mrnic_proto::layouts::{ipv4, udp};
    let ip = 14 * 8;
    let udp_at = ip + 20 * 8;
    let within = |base: usize, f: &mrnic_proto::field::Field| (base + f.start_bit()..base + f.end_bit()).contains(&bit);
    within(ip, &ipv4::DF) || within(ip, &ipv4::CHECKSUM) || within(udp_at, &udp::CHECKSUM)
}

fn frame_of(net: &NetHeaders, h: &Header, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_frame(net, h, payload, &mut out).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_packet_type_round_trips((net, h, payload) in packet()) {
        let bytes = frame_of(&net, &h, &payload);
        let f = decode_frame(&bytes).unwrap();
        prop_assert_eq!(f.header, h);
        prop_assert_eq!(f.payload, &payload[..]);
        prop_assert_eq!(f.net.src_ip, net.src_ip);
        prop_assert_eq!(f.net.src_port, net.src_port);
        prop_assert_eq!(f.net.ecn, net.ecn);
        // The datagram alone round-trips too (what the UDP-socket wire carries).
        let mut d = Vec::new();
        encode_datagram(&h, &payload, &mut d).unwrap();
        prop_assert_eq!(&bytes[42..], &d[..]);
        prop_assert_eq!(decode_datagram(&d).unwrap().header, h);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_frame(&bytes);
        let _ = decode_datagram(&bytes);
        let _ = Header::decode(&bytes);
    }

    #[test]
    fn mutated_packets_never_panic_and_flips_are_caught(
        (net, h, payload) in packet(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let good = frame_of(&net, &h, &payload);
        let mut bad = good.clone();
        for (at, bit) in &flips {
            let i = at.index(bad.len());
            bad[i] ^= 1 << bit;
        }
        // Any change the flips made is covered by a checksum or CRC, or
        // lands in a field a decoder checks: a changed frame decodes to the
        // same packet only when every changed bit is in a field that carries
        // nothing the decoder reports (see `content_free`).
        if bad != good {
            if let Ok(f) = decode_frame(&bad) {
                let same = f.header == h && f.payload == &payload[..] && f.net == decode_frame(&good).unwrap().net;
                if same {
                    let changed: Vec<usize> =
                        (0..good.len() * 8).filter(|&b| (good[b / 8] ^ bad[b / 8]) >> (7 - b % 8) & 1 == 1).collect();
                    prop_assert!(changed.iter().all(|&b| content_free(b)), "changed bits {:?}", changed);
                }
            }
        }
        let _ = decode_frame(&good[..cut.index(good.len())]);
    }
}

fn write_header() -> DataHeader {
    DataHeader {
        flags: Flags { som: true, eom: false, retx: false, ackreq: true, se: false },
        payload_len: 0x0400,
        dst_conn: 0x123456,
        path_id: 0x78,
        path_psn: 0x9abcde,
        path_gen: 0xf1,
        stream_id: 0x02,
        msn: 0x030405,
        msg_len: 0x0607_0809,
        place: Placement::Write { rkey: 0x0a0b_0c0d, addr: 0x1122_3344_5566_7788 },
        tx_ts: 0x99aa,
        imm: Some(0xdead_beef),
    }
}

#[test]
fn data_header_known_answer() {
    let mut b = [0u8; 40];
    Header::Data(write_header()).encode(&mut b).unwrap();
    let expect: [u8; 40] = [
        0x01, 0x90, 0x04, 0x00, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf1, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
        0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0, 0, 0xde,
        0xad, 0xbe, 0xef,
    ];
    assert_eq!(b, expect);
}

#[test]
fn sack_bitmap_is_a_big_endian_256_bit_number() {
    let mut bm = Bitmap256::default();
    bm.set(0);
    bm.set(9);
    bm.set(255);
    let h = Header::Sack(SackHeader { cum_psn: 7, bitmap: bm, ..SackHeader::default() });
    let mut b = [0u8; 52];
    h.encode(&mut b).unwrap();
    let at = sack::BITMAP.offset;
    assert_eq!(b[at], 0x80, "bit 255 is the top bit of the first bitmap byte");
    assert_eq!(b[at + 31], 0x01, "bit 0 is the low bit of the last byte");
    assert_eq!(b[at + 30], 0x02, "bit 9");
    assert_eq!(Header::decode(&b).unwrap(), h);
    assert_eq!(bm.shift_down(9).0[0] & 1, 1);
    assert_eq!(bm.highest(), Some(255));
    assert_eq!(bm.ones().collect::<Vec<_>>(), [0, 9, 255]);
    assert_eq!(Bitmap256::default().ones().count(), 0);
    let all = Bitmap256([u64::MAX; 4]);
    assert!(all.ones().eq(0..256));
}

fn datagram(h: Header, payload: &[u8]) -> Vec<u8> {
    let mut d = Vec::new();
    encode_datagram(&h, payload, &mut d).unwrap();
    d
}

fn refresh_icrc(d: &mut [u8]) {
    let n = d.len() - 4;
    let crc = mrnic_proto::packet::ICRC.checksum(&d[..n]);
    d[n..].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn each_bad_input_names_its_field_and_offset() {
    let mut h = write_header();
    h.payload_len = 8;
    let good = datagram(Header::Data(h), &[7; 8]);

    let e = decode_datagram(&good[..20]).unwrap_err();
    assert_eq!((e.layout, e.field, e.offset), ("data", "rkey", 20));
    assert!(matches!(e.problem, Problem::Truncated { need: 40, have: 20 }));

    let mut d = good.clone();
    d[0] |= 0x10;
    refresh_icrc(&mut d);
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("ver", 0));
    assert!(matches!(e.problem, Problem::Unsupported { value: 1 }));

    let mut d = good.clone();
    d[0] = 0x05;
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.problem), ("opcode", Problem::UnknownOpcode { value: 5 }));

    let mut d = good.clone();
    d[1] |= 0x01;
    refresh_icrc(&mut d);
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("flags_reserved", 1));

    let mut d = good.clone();
    d[34] = 1;
    refresh_icrc(&mut d);
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("reserved", 34));

    let mut d = good.clone();
    data::PAYLOAD_LEN.set(&mut d, 9);
    refresh_icrc(&mut d);
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("payload_len", 2));
    assert_eq!(e.problem, Problem::LengthMismatch { value: 9, actual: 8 });

    let mut d = good.clone();
    d[45] ^= 1;
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("icrc", 48));
    assert!(matches!(e.problem, Problem::BadChecksum { .. }));

    // SEND views the upper address bytes as reserved.
    let mut s = write_header();
    s.payload_len = 0;
    s.place = Placement::Send { rq_seq: 5, msg_offset: 64 };
    let mut d = datagram(Header::Data(s), &[]);
    d[24] = 1;
    refresh_icrc(&mut d);
    let e = decode_datagram(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("offset_reserved", 24));

    // Immediate data on a plain WRITE.
    let mut w = write_header();
    w.payload_len = 0;
    w.imm = None;
    let mut d = datagram(Header::Data(w), &[]);
    d[39] = 1;
    refresh_icrc(&mut d);
    assert_eq!(decode_datagram(&d).unwrap_err().field, "imm");

    // An error message a person can act on.
    assert_eq!(
        decode_datagram(&good[..20]).unwrap_err().to_string(),
        "data.rkey at byte 20: truncated: needs 40 bytes, frame has 20"
    );
}

#[test]
fn frame_checks_name_their_field() {
    let mut h = write_header();
    h.payload_len = 4;
    let net = NetHeaders::default();
    let good = frame_of(&net, &Header::Data(h), &[1, 2, 3, 4]);
    assert!(decode_frame(&good).is_ok());

    let mut f = good.clone();
    f[12] = 0x86;
    f[13] = 0xdd;
    assert_eq!(decode_frame(&f).unwrap_err().field, "ethertype");

    let mut f = good.clone();
    f[14 + 10] ^= 0xff;
    let e = decode_frame(&f).unwrap_err();
    assert_eq!((e.layout, e.field, e.offset), ("ipv4", "checksum", 24));

    let mut f = good.clone();
    let n = f.len();
    f[n - 10] ^= 0x40;
    let e = decode_frame(&f).unwrap_err();
    assert_eq!((e.layout, e.field), ("udp", "checksum"));

    // Trailing Ethernet padding is not part of the packet.
    let mut f = good.clone();
    f.extend_from_slice(&[0; 6]);
    assert_eq!(decode_frame(&f).unwrap().payload, &[1, 2, 3, 4]);

    // A datagram error is reported at its offset in the frame.
    let mut f = good.clone();
    let n = f.len();
    f.truncate(n - 2);
    let e = decode_frame(&f).unwrap_err();
    assert_eq!((e.layout, e.field), ("ipv4", "total_len"));
}

#[test]
fn encoder_refuses_values_wider_than_their_field() {
    let mut h = write_header();
    h.dst_conn = 1 << 24;
    h.payload_len = 0;
    let e = Header::Data(h).encode(&mut [0u8; 40]).unwrap_err();
    assert_eq!(e.field, "dst_conn");
}

/// The case the proptest found: the DF flag cleared and the IPv4
/// checksum's high byte changed in the same bit column keep the IPv4 sum
/// valid, and neither field carries content, so the frame decodes to the
/// same packet; DF alone breaks the checksum and is refused.
#[test]
fn df_and_checksum_flipped_together_are_the_same_packet() {
    use mrnic_proto::layouts::ipv4;
    let net = NetHeaders { src_ip: [36, 31, 100, 193], dst_ip: [34, 9, 79, 211], ecn: 2, ..NetHeaders::default() };
    let h = Header::Probe(ProbeHeader { tx_ts: 0, dst_conn: 0, path_id: 0, path_gen: 0, path_psn: 0 });
    let good = frame_of(&net, &h, &[]);
    let (df, sum) = (14 + ipv4::DF.offset, 14 + ipv4::CHECKSUM.offset);
    let mask = 0x80 >> ipv4::DF.bit;
    let mut only_df = good.clone();
    only_df[df] ^= mask;
    assert!(decode_frame(&only_df).is_err(), "DF alone must break the IPv4 checksum");
    let mut both = only_df.clone();
    both[sum] ^= mask;
    let f = decode_frame(&both).expect("the two flips keep the IPv4 sum");
    assert_eq!((f.header, f.payload, f.net), (h, &[][..], decode_frame(&good).unwrap().net));
    assert!(content_free(df * 8 + ipv4::DF.bit as usize) && content_free(sum * 8 + ipv4::DF.bit as usize));
    // A content field is not content-free.
    assert!(!content_free((14 + ipv4::TTL.offset) * 8));
}
