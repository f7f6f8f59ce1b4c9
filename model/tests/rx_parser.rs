//! `rx_parser` model against proto's decoder: random valid frames with idle
//! cycles and backpressure, every drop reason with its counter, malformed
//! streams that never stall, one beat per cycle sustained. Every test prints
//! nothing on success and names its seed on failure.

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_model::rx_parser::stimulus::{self, Rng, Stim};
use mrnic_model::rx_parser::*;
use mrnic_proto::decode_frame;
use mrnic_proto::headers::{DataHeader, Header, Opcode};
use mrnic_proto::layouts::{common, data, ipv4, udp};
use mrnic_proto::packet::{encode_frame, NetHeaders};

const PORT: u16 = 4797;

fn params(bits: u32) -> RxParserParams {
    RxParserParams::new(bits, 1024).unwrap()
}

/// What came out of a run.
#[derive(Default, Debug)]
struct Seen {
    hdrs: Vec<HdrOut>,
    /// Packets: payload bytes (within tkeep) and the drop bit.
    pkts: Vec<(Vec<u8>, bool)>,
    drops: Vec<Reason>,
    cycles: u64,
    accepted: u64,
    out_beats: u64,
}

/// The plane frame `n` of a run arrives on (`s_axis_tid`).
fn plane_of(n: usize) -> u8 {
    (n * 3 + 1) as u8 % 8
}

/// Drives the frames through the parser; `p_idle`: percent of cycles with
/// tvalid low, `p_stall`: percent of cycles with each ready low.
fn run(p: RxParserParams, frames: &[Stim], seed: u64, p_idle: u64, p_stall: u64, udp_port: u16) -> Seen {
    let mut rng = Rng::new(seed);
    let mut dut = RxParser::new(p);
    // Each beat with its frame's plane on tid.
    let beats: Vec<(Beat, u8)> = frames
        .iter()
        .enumerate()
        .flat_map(|(n, s)| stimulus::beats(s, p.bytes(), &mut rng).into_iter().map(move |b| (b, plane_of(n))))
        .collect();
    let mut seen = Seen::default();
    let mut cur: Vec<u8> = Vec::new();
    let mut i = 0;
    let mut quiet = 0;
    while quiet < 20 {
        let out = dut.outputs();
        let valid = i < beats.len() && !rng.chance(p_idle);
        let inp = Inputs {
            rst: false,
            s_valid: valid,
            s_beat: if i < beats.len() { beats[i].0.clone() } else { Beat::default() },
            s_tid: if i < beats.len() { beats[i].1 } else { 0 },
            cfg_udp_port: udp_port,
            hdr_ready: !rng.chance(p_stall),
            axis_ready: !rng.chance(p_stall),
        };
        if valid && out.s_ready {
            i += 1;
            seen.accepted += 1;
        }
        if let (Some(h), true) = (&out.hdr, inp.hdr_ready) {
            seen.hdrs.push(h.clone());
        }
        if let (Some(b), true) = (&out.axis, inp.axis_ready) {
            seen.out_beats += 1;
            for lane in 0..p.bytes() {
                if b.keep >> lane & 1 == 1 {
                    cur.push(b.data[lane]);
                }
            }
            if b.keep != 0 && !b.last {
                assert_eq!(b.keep.count_ones() as usize, p.bytes(), "seed {seed}: non-last beat not full");
            }
            if b.last {
                seen.pkts.push((std::mem::take(&mut cur), b.user));
            }
        }
        for r in Reason::ALL {
            if out.stat >> r.index() & 1 == 1 {
                seen.drops.push(r);
            }
        }
        assert!(out.stat.count_ones() <= 1, "seed {seed}: two reasons in one pulse");
        dut.clock(&inp);
        seen.cycles += 1;
        let busy = i < beats.len() || out.hdr.is_some() || out.axis.is_some();
        quiet = if busy { 0 } else { quiet + 1 };
        assert!(seen.cycles < 100 * (beats.len() as u64 + 100), "seed {seed}: stalled at beat {i}");
    }
    seen
}

/// Checks a run against the stimulus: good frames come out with proto's
/// header and payload, in order; dropped frames pulse their reason, in order.
fn check(frames: &[Stim], seen: &Seen, seed: u64, udp_port: u16, mtu: u32) {
    assert_eq!(seen.hdrs.len(), seen.pkts.len(), "seed {seed}: one packet per header");
    let expected_drops: Vec<Reason> = frames.iter().filter_map(|s| s.expect).collect();
    assert_eq!(seen.drops, expected_drops, "seed {seed}: drop reasons");
    let good: Vec<(usize, &Stim)> = frames.iter().enumerate().filter(|(_, s)| s.expect.is_none()).collect();
    let accepted: Vec<(&HdrOut, &Vec<u8>)> =
        seen.hdrs.iter().zip(&seen.pkts).filter(|(_, (_, drop))| !drop).map(|(h, (p, _))| (h, p)).collect();
    assert_eq!(accepted.len(), good.len(), "seed {seed}: accepted frames");
    for (n, ((at, s), (h, payload))) in good.iter().zip(accepted).enumerate() {
        assert_eq!(stimulus::reference(&s.bytes, udp_port), None, "seed {seed}: frame {n} is valid");
        let f = decode_frame(&s.bytes).unwrap();
        let len = f.header.len();
        assert_eq!(&h.raw[..len], &s.bytes[HDR_AT..HDR_AT + len], "seed {seed}: frame {n} header");
        assert!(h.raw[len..].iter().all(|&b| b == 0), "seed {seed}: frame {n} raw past the header");
        assert_eq!(h.ecn, f.net.ecn, "seed {seed}: frame {n} ecn");
        assert_eq!(h.udp_sport, f.net.src_port, "seed {seed}: frame {n} sport");
        assert_eq!(h.ip_src, u32::from_be_bytes(f.net.src_ip), "seed {seed}: frame {n} ip_src");
        assert_eq!(h.plane, plane_of(*at), "seed {seed}: frame {n} plane");
        assert_eq!(h.get(&mrnic_proto::layouts::common::DST_CONN), f.header.dst_conn() as u64);
        if f.header.opcode().is_data() {
            assert_eq!(h.get(&data::PAYLOAD_LEN), f.payload.len() as u64);
        }
        let handed = mrnic_proto::drop::handed_payload(&f, mtu);
        assert_eq!(payload.as_slice(), handed, "seed {seed}: frame {n} payload");
    }
}

fn mixed(rng: &mut Rng, n: usize, p_bad: u64, bytes: usize) -> Vec<Stim> {
    (0..n)
        .map(|_| {
            if rng.chance(p_bad) {
                let r = Reason::ALL[rng.below(Reason::ALL.len() as u64) as usize];
                stimulus::faulty(rng, r, 1024, PORT, bytes)
            } else {
                stimulus::good(rng, 1024, PORT)
            }
        })
        .collect()
}

#[test]
fn round_trip_random_valid_frames_with_idle_and_backpressure() {
    for bits in [64, 128, 512, 1024] {
        for seed in 1..=6 {
            let p = params(bits);
            let mut rng = Rng::new(seed * 1000 + bits as u64);
            let frames = mixed(&mut rng, 40, 0, p.bytes());
            let seen = run(p, &frames, seed, 30, 30, PORT);
            check(&frames, &seen, seed, PORT, 1024);
        }
    }
}

#[test]
fn every_drop_reason_pulses_its_counter() {
    for bits in [64, 512] {
        let p = params(bits);
        for r in Reason::ALL {
            for seed in 0..8u64 {
                let mut rng = Rng::new(seed + 77 * r.index() as u64 + bits as u64);
                let bad = stimulus::faulty(&mut rng, r, 1024, PORT, p.bytes());
                // The fault's intended reason is proto's own, where proto has it.
                if !matches!(r, Reason::MacError | Reason::Tkeep | Reason::Oversize) {
                    assert_eq!(stimulus::reference(&bad.bytes, PORT), Some(r), "seed {seed}: {r:?}");
                }
                let frames = vec![stimulus::good(&mut rng, 1024, PORT), bad, stimulus::good(&mut rng, 1024, PORT)];
                let seen = run(p, &frames, seed, 10, 10, PORT);
                check(&frames, &seen, seed, PORT, 1024);
            }
        }
    }
}

/// Control frames take every fault: for each reason, faulty frames are
/// drawn until six carry a control opcode (SACK, NACK, PROBE or an
/// unassigned one), each judged by proto as the generator says where proto
/// sees the fault, and dropped by the parser for it between two valid
/// frames. A control datagram longer than its opcode's header is dropped
/// for its `length`, a shorter one as `truncated`.
#[test]
fn control_frames_take_every_fault() {
    let control = |s: &Stim| s.bytes.len() > HDR_AT && common::OPCODE.get(&s.bytes[HDR_AT..]) >= Opcode::Sack as u64;
    for bits in [64, 512] {
        let p = params(bits);
        let mut rng = Rng::new(0xc0 + bits as u64);
        for r in Reason::ALL {
            let mut n = 0;
            while n < 6 {
                let bad = stimulus::faulty(&mut rng, r, 1024, PORT, p.bytes());
                if !control(&bad) {
                    continue;
                }
                if !matches!(r, Reason::MacError | Reason::Tkeep | Reason::Oversize) {
                    assert_eq!(stimulus::reference(&bad.bytes, PORT), Some(r), "{bits}-bit: {r:?} {n}");
                }
                let frames = vec![stimulus::good(&mut rng, 1024, PORT), bad, stimulus::good(&mut rng, 1024, PORT)];
                let seen = run(p, &frames, n, 10, 10, PORT);
                check(&frames, &seen, n, PORT, 1024);
                n += 1;
            }
        }
        for (longer, r) in [(true, Reason::Length), (false, Reason::Truncated)] {
            for n in 0..20 {
                let bytes = stimulus::misfit_control(&mut rng, PORT, longer);
                assert_eq!(stimulus::reference(&bytes, PORT), Some(r), "{bits}-bit: {r:?} {n}");
                let bad =
                    Stim { bytes, expect: Some(r), mac_error_beat: None, keep_hole: None, no_tlast_until_end: false };
                let frames = vec![stimulus::good(&mut rng, 1024, PORT), bad, stimulus::good(&mut rng, 1024, PORT)];
                let seen = run(p, &frames, n, 10, 10, PORT);
                check(&frames, &seen, n, PORT, 1024);
            }
        }
    }
}

#[test]
fn malformed_streams_never_stall_and_the_next_frame_parses() {
    for bits in [64, 256, 512] {
        let p = params(bits);
        for seed in 1..=10 {
            let mut rng = Rng::new(seed + bits as u64);
            let frames = mixed(&mut rng, 60, 50, p.bytes());
            // Outputs always ready: the input must never be refused.
            let seen = run(p, &frames, seed, 0, 0, PORT);
            check(&frames, &seen, seed, PORT, 1024);
            let beats: u64 = frames.iter().map(|s| s.bytes.len().div_ceil(p.bytes()) as u64).sum();
            assert_eq!(seen.accepted, beats);
            assert!(seen.cycles <= beats + 25, "seed {seed}: {} cycles for {beats} beats", seen.cycles);
            // And with backpressure and idles.
            let seen = run(p, &frames, seed, 25, 40, PORT);
            check(&frames, &seen, seed, PORT, 1024);
        }
    }
}

#[test]
fn configured_udp_port_is_the_one_checked() {
    let p = params(64);
    let mut rng = Rng::new(5);
    let frames: Vec<Stim> = (0..5).map(|_| stimulus::good(&mut rng, 1024, 9000)).collect();
    let seen = run(p, &frames, 5, 0, 0, 9000);
    check(&frames, &seen, 5, 9000, 1024);
    let seen = run(p, &frames, 5, 0, 0, PORT);
    assert_eq!(seen.drops, vec![Reason::UdpPort; 5]);
    assert!(seen.hdrs.is_empty());
}

#[test]
fn one_beat_per_cycle_sustained() {
    for bits in [64, 512, 1024] {
        let p = params(bits);
        let mut rng = Rng::new(bits as u64);
        let frames: Vec<Stim> = (0..200).map(|_| stimulus::good(&mut rng, 1024, PORT)).collect();
        let mut rng2 = Rng::new(1);
        let beats: u64 = frames.iter().map(|s| stimulus::beats(s, p.bytes(), &mut rng2).len() as u64).sum();
        let seen = run(p, &frames, 3, 0, 0, PORT);
        check(&frames, &seen, 3, PORT, 1024);
        // Every input beat accepted back to back; the run ends 3 cycles after
        // the last beat plus the 20 quiet cycles the harness waits.
        assert_eq!(seen.cycles, beats + 3 + 20, "{bits}-bit");
        let payload_beats: u64 = frames
            .iter()
            .map(|s| {
                let f = decode_frame(&s.bytes).unwrap();
                (mrnic_proto::drop::handed_payload(&f, 1024).len().div_ceil(p.bytes()) as u64).max(1)
            })
            .sum();
        assert_eq!(seen.out_beats, payload_beats, "{bits}-bit: payload beats");
    }
}

#[test]
fn icrc_position_follows_total_len_and_padding_is_ignored() {
    let p = params(64);
    let mut rng = Rng::new(9);
    let mut s = stimulus::good(&mut rng, 1024, PORT);
    s.bytes.extend_from_slice(&[0xAA; 11]);
    let frames = vec![s];
    assert_eq!(stimulus::reference(&frames[0].bytes, PORT), None);
    let seen = run(p, &frames, 9, 0, 0, PORT);
    check(&frames, &seen, 9, PORT, 1024);
}

#[test]
fn block_interface_matches_the_typed_one() {
    let p = params(128);
    let mut dut = RxParser::new(p);
    let ports = dut.ports().to_vec();
    assert_eq!(port_index(&ports, "s_axis_tready"), Some(port::S_TREADY));
    assert_eq!(port_index(&ports, "m_hdr_raw"), Some(port::M_HDR_RAW));
    assert_eq!(port_index(&ports, "m_hdr_imm"), Some(port::M_HDR_IMM));
    assert_eq!(port_index(&ports, "m_axis_tdata"), Some(port::M_TDATA));
    assert_eq!(port_index(&ports, "stat_drop_mac_error"), Some(port::STAT));
    assert_eq!(ports.len(), port::STAT + Reason::ALL.len());
    let mut rng = Rng::new(4);
    let s = stimulus::good(&mut rng, 1024, PORT);
    let beats = stimulus::beats(&s, p.bytes(), &mut rng);
    let mut inputs = zero_values(&ports);
    let mut outputs = zero_values(&ports);
    inputs[port::CFG_UDP_PORT] = Bits::from_u64(16, PORT as u64);
    inputs[port::M_HDR_READY] = Bits::from_u64(1, 0);
    let mut got_hdr = None;
    for cycle in 0..beats.len() + 6 {
        if let Some(b) = beats.get(cycle) {
            let mut d = Bits::zero(128);
            for (i, &x) in b.data.iter().enumerate() {
                d.0[i / 8] |= (x as u64) << (8 * (i % 8));
            }
            inputs[port::S_TDATA] = d;
            inputs[port::S_TKEEP] = Bits::from_u64(16, b.keep as u64);
            inputs[port::S_TVALID] = Bits::from_u64(1, 1);
            inputs[port::S_TLAST] = Bits::from_u64(1, b.last as u64);
        } else {
            inputs[port::S_TVALID] = Bits::from_u64(1, 0);
        }
        dut.eval(&inputs, &mut outputs);
        if outputs[port::M_HDR_VALID].bit(0) && got_hdr.is_none() {
            got_hdr = Some(outputs[port::M_HDR_FIELDS + 12].as_u64());
            let sport = outputs[port::M_HDR_SPORT].as_u64();
            assert_eq!(sport, udp::SRC_PORT.get(&s.bytes[UDP_AT..]));
            assert_eq!(outputs[port::M_HDR_IP_SRC].as_u64(), ipv4::SRC_IP.get(&s.bytes[IP_AT..]));
        }
        dut.tick(&inputs);
    }
    let f = decode_frame(&s.bytes).unwrap();
    let tx_ts = if f.header.opcode().is_data() { data::TX_TS.get(&s.bytes[HDR_AT..]) } else { got_hdr.unwrap() };
    assert_eq!(got_hdr, Some(tx_ts));
}

#[test]
fn refuses_unsupported_widths() {
    assert_eq!(RxParserParams::new(48, 1024).unwrap_err().field, "hardware.datapath_bits");
    assert_eq!(RxParserParams::new(64, 1000).unwrap_err().field, "transport.mtu");
}

#[test]
fn an_mtu_overrun_hands_on_its_header_and_no_payload() {
    // payload_len = MTU + 1 with every length consistent: not a frame fault
    // (the receiver answers BAD_HDR), so the header goes on, with a last
    // beat that keeps nothing, and no drop is counted. An MTU payload
    // around it comes out whole.
    for bits in [64, 512] {
        let p = params(bits);
        let mut rng = Rng::new(bits as u64 + 5);
        let mut frames = Vec::new();
        for n in [1024, 1025, 1024] {
            let mut s = stimulus::good(&mut rng, 1024, PORT);
            while decode_frame(&s.bytes).map_or(true, |f| !f.header.opcode().is_data()) {
                s = stimulus::good(&mut rng, 1024, PORT);
            }
            let f = decode_frame(&s.bytes).unwrap();
            let Header::Data(d) = f.header else { unreachable!() };
            let h = Header::Data(DataHeader { payload_len: n as u16, ..d });
            let payload: Vec<u8> = (0..n).map(|i| i as u8).collect();
            s.bytes.clear();
            encode_frame(&NetHeaders { dst_port: PORT, ..NetHeaders::default() }, &h, &payload, &mut s.bytes).unwrap();
            s.bytes[UDP_AT + 6..UDP_AT + 8].fill(0);
            frames.push(s);
        }
        let seen = run(p, &frames, 5, 10, 10, PORT);
        check(&frames, &seen, 5, PORT, 1024);
        assert!(seen.drops.is_empty(), "{bits}-bit: {:?}", seen.drops);
        let lens: Vec<usize> = seen.pkts.iter().map(|(b, d)| if *d { usize::MAX } else { b.len() }).collect();
        assert_eq!(lens, [1024, 0, 1024], "{bits}-bit");
        assert_eq!(seen.hdrs[1].get(&data::PAYLOAD_LEN), 1025, "{bits}-bit");
    }
}
