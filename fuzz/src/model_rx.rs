//! The `model_rx` target: the cycle model's `rx_parser` fed runs of random
//! and mutated Ethernet frames (with `tkeep` holes, `tuser`, early and
//! missing ends, oversize frames) through the port-level bench
//! (`mrnic_model::bench::rx_parser`, the same driver `vectors check`
//! uses) with random idle cycles and backpressure on both outputs.
//!
//! Checks, per run: no panic; the block drains once input stops (the bench
//! fails after `bench::PATIENCE` cycles without progress); every frame has
//! exactly one outcome, a clean packet or one drop pulse (a frame dropped
//! after its header was handed on ends its packet with `tuser`, and still
//! has one pulse); never two pulses in one cycle (the bench); the clean
//! packets are exactly the frames `proto::drop::stream_verdict` accepts,
//! with their headers and payloads, in order. A drop's reason must be the
//! verdict's for a frame as recorded in the corpus (one fault each); a
//! mutated frame often has several faults, where the block's order (the
//! header decided at byte 93, before the frame's end is known) and
//! proto's decoder order legitimately name different ones
//! (docs/robustness.md, "Reason order"), so there the differences are
//! counted, not failed.

use mrnic_model::bench::{self, Pace, RxRun, StreamIn};
use mrnic_model::rx_parser::{RxParser, RxParserParams};
use mrnic_proto::drop::{stream_verdict, StreamFrame};
use mrnic_proto::packet::{encode_frame, ipv4_checksum, NetHeaders};
use mrnic_proto::{decode_frame, encode_datagram, Config, Header, ProbeHeader};
use mrnic_reference::rng::Rng;

use crate::{fix_icrc, mutate_bytes, mutate_datagram};

/// Bytes before the transport datagram: Ethernet, IPv4, UDP.
const NET: usize = 42;

/// What one run saw, for the figures.
#[derive(Debug, Default)]
pub struct Seen {
    pub frames: u64,
    pub accepted: u64,
    /// Dropped after the header was handed on (packet ended with tuser).
    pub late_drops: u64,
    pub drops: u64,
    /// Drops whose reason is another fault of the same frame than the
    /// verdict's first (allowed by the block's decision order).
    pub reason_order: u64,
}

/// Frames of the `rx_parser` golden vectors: the seed corpus.
pub fn vector_frames(text: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        for f in v.get("frames").and_then(|f| f.as_array()).into_iter().flatten() {
            if let Some(b) = f.get("bytes").and_then(|b| b.as_str()).and_then(crate::unhex) {
                out.push(b);
            }
        }
    }
    out
}

/// The frame around a datagram (which may be malformed): Ethernet, IPv4
/// and UDP headers with consistent lengths and a valid IPv4 checksum.
fn wrap(net: &NetHeaders, dgram: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    let probe = Header::Probe(ProbeHeader { tx_ts: 0, dst_conn: 0, path_id: 0, path_gen: 0, path_psn: 0 });
    encode_frame(net, &probe, &[], &mut f).expect("a PROBE encodes");
    f.truncate(NET);
    let ip_len = (28 + dgram.len()).min(0xffff) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[24..26].fill(0);
    let sum = ipv4_checksum(&f[14..34]);
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    f[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f[40..42].fill(0);
    f.extend_from_slice(dgram);
    f
}

/// One mutated frame with its stream damage, and whether it is a corpus
/// frame left as recorded.
fn frame(rng: &mut Rng, corpus: &[Vec<u8>], udp_port: u16) -> (StreamIn, bool) {
    let base = &corpus[rng.below(corpus.len() as u64) as usize];
    let mut bytes = base.clone();
    if rng.below(8) == 0 {
        return (StreamIn { bytes, ..StreamIn::default() }, true);
    }
    match rng.below(7) {
        // Through the datagram mutator (fields re-encoded, ICRC re-sealed
        // mostly), wrapped in consistent outer headers.
        1..=4 => {
            if let Ok(f) = decode_frame(base) {
                let mut d = Vec::new();
                if encode_datagram(&f.header, f.payload, &mut d).is_ok() {
                    let mut net = f.net;
                    match rng.below(8) {
                        0 => net.dst_port = rng.next_u64() as u16,
                        1 => net.dst_port = udp_port ^ 1,
                        2 => net.ecn = rng.below(4) as u8,
                        _ => {}
                    }
                    bytes = wrap(&net, &mutate_datagram(rng, &d, corpus));
                }
            }
        }
        // Raw bytes anywhere in the frame; the ICRC re-sealed or not.
        _ => {
            mutate_bytes(rng, &mut bytes, corpus, false);
            if rng.below(2) == 0 && bytes.len() >= 18 {
                let end = (14 + u16::from_be_bytes([bytes[16], bytes[17]]) as usize).min(bytes.len());
                if end > NET + 4 {
                    fix_icrc(&mut bytes[NET..end]);
                }
            }
        }
    }
    // Oversize: a frame that runs on past the longest accepted one.
    if rng.below(30) == 0 {
        let n = 1100 + rng.below(4000) as usize;
        bytes.extend((0..n).map(|_| rng.next_u64() as u8));
    }
    let mut keep_holes = Vec::new();
    if rng.below(12) == 0 && !bytes.is_empty() {
        for _ in 0..1 + rng.below(2) {
            keep_holes.push(rng.below(bytes.len() as u64) as u32);
        }
    }
    let tuser_byte = (rng.below(20) == 0).then(|| rng.below(bytes.len() as u64 + 8) as u32);
    (StreamIn { bytes, keep_holes, tuser_byte }, false)
}

/// A run of 1-6 frames through a fresh `rx_parser` of `small` or `default`.
pub fn one(rng: &mut Rng, corpus: &[Vec<u8>], seen: &mut Seen) -> Result<(), String> {
    let cfg = Config::builtin(if rng.below(4) == 0 { "default" } else { "small" }).expect("builtin config");
    let p = RxParserParams::from_config(&cfg).map_err(|e| e.to_string())?;
    let (port, mtu, beat) = (cfg.transport.udp_port, cfg.transport.mtu, p.bytes());
    let (frames, recorded): (Vec<StreamIn>, Vec<bool>) =
        (0..1 + rng.below(6)).map(|_| frame(rng, corpus, port)).unzip();
    let pace = Pace { idle: rng.below(60), stall: [0, 10, 50, 90][rng.below(4) as usize], seed: rng.next_u64() };
    let mut dut = RxParser::new(p);
    let run: RxRun = bench::rx_parser(&mut dut, &frames, port, pace).map_err(|e| {
        let what: Vec<String> = frames
            .iter()
            .map(|f| format!("{} bytes, holes {:?}, tuser {:?}", f.bytes.len(), f.keep_holes, f.tuser_byte))
            .collect();
        format!("{e} ({} config, {pace:?}; frames: {})", cfg.name, what.join("; "))
    })?;
    let mut s = Seen::default();
    check(&frames, &recorded, &run, (beat, port, mtu), &mut s)?;
    seen.frames += s.frames;
    seen.accepted += s.accepted;
    seen.drops += s.drops;
    seen.late_drops += s.late_drops;
    seen.reason_order += s.reason_order;
    Ok(())
}

fn check(
    frames: &[StreamIn],
    recorded: &[bool],
    run: &RxRun,
    (beat, port, mtu): (usize, u16, u32),
    seen: &mut Seen,
) -> Result<(), String> {
    let clean: Vec<_> = run.packets.iter().filter(|p| !p.dropped).collect();
    let late = run.packets.len() - clean.len();
    if clean.len() + run.drops.len() != frames.len() {
        return Err(format!(
            "{} frames, but {} clean packets and {} drop pulses",
            frames.len(),
            clean.len(),
            run.drops.len()
        ));
    }
    if late > run.drops.len() {
        return Err(format!("{late} packets ended with tuser but only {} drop pulses", run.drops.len()));
    }
    let (mut ci, mut di) = (0, 0);
    for (i, f) in frames.iter().enumerate() {
        let s = StreamFrame { bytes: &f.bytes, keep_holes: &f.keep_holes, tuser_byte: f.tuser_byte };
        let mut scratch = Vec::new();
        match stream_verdict(&s, beat, port, mtu, &mut scratch) {
            Ok(fr) => {
                let got = clean.get(ci).ok_or(format!("frame {i}: accepted by the verdict, not handed on"))?;
                ci += 1;
                let mut hdr = Vec::new();
                encode_datagram(&fr.header, fr.payload, &mut hdr).map_err(|e| e.to_string())?;
                hdr.truncate(fr.header.opcode().layout().len);
                hdr.resize(got.raw.len(), 0);
                let payload = mrnic_proto::drop::handed_payload(&fr, mtu);
                if got.raw != hdr || got.payload != payload || got.ecn != fr.net.ecn || got.udp_sport != fr.net.src_port
                {
                    return Err(format!("frame {i}: handed on with another header, payload, ECN or port"));
                }
                seen.accepted += 1;
            }
            Err(want) => {
                let got = *run.drops.get(di).ok_or(format!("frame {i}: dropped by the verdict ({want}), no pulse"))?;
                di += 1;
                seen.drops += 1;
                if got != want {
                    if recorded[i] {
                        return Err(format!("frame {i} (as recorded): dropped as {got}, the verdict says {want}"));
                    }
                    seen.reason_order += 1;
                }
            }
        }
    }
    seen.frames += frames.len() as u64;
    seen.late_drops += late as u64;
    Ok(())
}
