//! The pieces of the `tx_engine` generator built so far, the frame builder first, through
//! the real tools: for each transport header the engine sends (SACK, NACK,
//! PROBE, and the data header in both variants), a check module built from
//! `mrnic_hdl::tx_engine`'s functions registers the whole frame (Ethernet,
//! IPv4 with its checksum, UDP with its checksum, the header placed from
//! proto's field table, the ICRC); Icarus replays random field values on it
//! against the model's `build_frame` of the model's header, every byte
//! compared every cycle; a second harness streams random payloads through
//! the payload digest (8- and 64-byte beats) and compares the IPv4 header,
//! the UDP header and the ICRC with the model's frame every cycle; a third
//! replays random decisions through the path choice against the model's
//! `choose`, a fourth random SACKs through the connection congestion step
//! against the model's `conn_cc_ack`, a fifth payload ranges through the
//! AXI read master's burst length against the model's `burst`, a sixth
//! ready sets through the scheduler's round-robin connection choice
//! against the model's `rr_first`, a seventh stream heads through the
//! decision's stream choice against the model's `stream_choice`, an eighth
//! frames of every head and payload offset through the output stage's
//! beat builder against the model's `frame_beat`, a ninth the commit's
//! cut of new data against the model's `cut`, a tenth the completion
//! walk's step against the model's `walk_next`, an eleventh the post of
//! a work request against the model's `post_rule`, a twelfth a SACK's
//! first pass, slot by slot, against the model's `sack_fold`, a
//! thirteenth a SACK's window against the model's `sack_window` and
//! `sack_acks`. The check modules lint clean under
//! Verilator with every warning, compile under `iverilog -g2005` and synthesize under Yosys
//! without latches.
//!
//! The `tx_engine` block generator itself (ports from the model's
//! `ports()`, the cycle timing) is not built yet: docs/architecture.md.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use common::{
    have, iverilog_compile, replay, synth_default, synth_full, verilator_lint, yosys_no_latches, yosys_proc_no_latches,
    Rng, Scratch,
};
use mrnic_hdl::expr::{index_bits, lit, mux};
use mrnic_hdl::tx_engine::{
    data_header, frame, frame_beat, frame_bytes, nack_header, probe_header, sack_header, BeatIn, BeatSizes, CcSizes,
    ChoiceSizes, CutSizes, NetFields, WalkSizes, INFLIGHT_BITS,
};
use mrnic_hdl::{set, Expr, Header, Module, Signal};
use mrnic_model::block::{port_index, Bits, Block, PortDef};
use mrnic_model::tx_engine as model;

/// The network fields every check module takes.
const NET: &[(&str, u32)] =
    &[("src_mac", 48), ("dst_mac", 48), ("src_ip", 32), ("dst_ip", 32), ("sport", 16), ("dport", 16)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Sack,
    Nack,
    Probe,
    Data,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Sack => "tx_frame_sack",
            Kind::Nack => "tx_frame_nack",
            Kind::Probe => "tx_frame_probe",
            Kind::Data => "tx_frame_data",
        }
    }

    /// Header inputs (`h_<name>`) and their widths.
    fn fields(self) -> Vec<(&'static str, u32)> {
        match self {
            // The header's fields as proto's table has them, less the
            // version, the opcode and the reserved bits.
            Kind::Sack | Kind::Nack | Kind::Probe => {
                use mrnic_proto::field::Rule;
                use mrnic_proto::layouts::{nack, probe, sack};
                let layout = match self {
                    Kind::Sack => &sack::LAYOUT,
                    Kind::Nack => &nack::LAYOUT,
                    _ => &probe::LAYOUT,
                };
                layout
                    .fields
                    .iter()
                    .filter(|f| f.rule != Rule::Reserved && f.name != "ver" && f.name != "opcode")
                    .map(|f| (f.name, f.width))
                    .collect()
            }
            // The engine sets no SE; the two variants share one input each.
            Kind::Data => vec![
                ("opcode", 2),
                ("som", 1),
                ("eom", 1),
                ("retx", 1),
                ("ackreq", 1),
                ("payload_len", 16),
                ("dst_conn", 24),
                ("path_id", 8),
                ("path_psn", 24),
                ("path_gen", 8),
                ("stream_id", 8),
                ("msn", 24),
                ("msg_len", 32),
                ("rkey_or_rq", 32),
                ("addr_or_offset", 64),
                ("tx_ts", 16),
                ("imm", 32),
            ],
        }
    }

    fn hdr_bytes(self) -> usize {
        use mrnic_proto::layouts::{data, nack, probe, sack};
        match self {
            Kind::Sack => sack::LAYOUT.len,
            Kind::Nack => nack::LAYOUT.len,
            Kind::Probe => probe::LAYOUT.len,
            Kind::Data => data::LAYOUT.len,
        }
    }

    fn frame_bits(self) -> u32 {
        frame_bytes(self.hdr_bytes()) as u32 * 8
    }

    fn ports(self) -> Vec<PortDef> {
        let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset")];
        for (n, w) in NET {
            v.push(PortDef::input(*n, *w, "Network", "network field"));
        }
        for (n, w) in self.fields() {
            v.push(PortDef::input(format!("h_{n}"), w, "Header", "header field"));
        }
        v.push(PortDef::output("frame", self.frame_bits(), "Frame", "the frame, registered"));
        v
    }
}

/// The check module: every input into the frame builder, the frame
/// registered.
fn check_module(kind: Kind) -> Module {
    let mut m = Module::new(kind.name());
    m.describe("test harness: the tx_engine frame builder between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &kind.ports());
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Expr { sig[n].expr() };
    let field = |n: &str| -> Expr {
        match n {
            "rkey" | "rq_seq" => s("h_rkey_or_rq"),
            "addr" | "msg_offset" => s("h_addr_or_offset"),
            _ => s(&format!("h_{n}")),
        }
    };
    let hdr: Signal = match kind {
        Kind::Data => data_header(&mut m, "hdr", &field),
        _ => {
            let e = match kind {
                Kind::Sack => sack_header(&field),
                Kind::Nack => nack_header(&field),
                _ => probe_header(&field),
            };
            let w = kind.hdr_bytes() as u32 * 8;
            let h = m.wire("hdr", w, "the transport header, big-endian");
            m.assign(&h, e);
            h
        }
    };
    let net = NetFields {
        src_mac: s("src_mac"),
        dst_mac: s("dst_mac"),
        src_ip: s("src_ip"),
        dst_ip: s("dst_ip"),
        sport: s("sport"),
        dport: s("dport"),
    };
    let f = frame(&mut m, "fr", &net, &hdr, kind.hdr_bytes());
    let r = m.reg("frame_q", kind.frame_bits(), 0, "the frame of the last cycle's inputs");
    m.next(set(&r.next, &f));
    m.assign(&sig["frame"], &r.q);
    m
}

/// The model side: the frame of last cycle's inputs, from the model's
/// header and frame functions.
struct Golden {
    kind: Kind,
    ports: Vec<PortDef>,
    out: Bits,
}

impl Golden {
    fn new(kind: Kind) -> Golden {
        Golden { kind, ports: kind.ports(), out: Bits::zero(kind.frame_bits()) }
    }

    fn bytes(&self, inputs: &[Bits]) -> Vec<u8> {
        let g = |n: &str| inputs[port_index(&self.ports, n).unwrap()].as_u64();
        let h = |n: &str| g(&format!("h_{n}"));
        let net = model::Net {
            src_mac: g("src_mac"),
            dst_mac: g("dst_mac"),
            src_ip: g("src_ip") as u32,
            dst_ip: g("dst_ip") as u32,
            sport: g("sport") as u16,
            dport: g("dport") as u16,
        };
        let hdr = match self.kind {
            Kind::Sack => {
                let bm = &inputs[port_index(&self.ports, "h_bitmap").unwrap()];
                model::sack_header(&model::SackOut {
                    rate_hint: h("rate_hint") as u16,
                    dst_conn: h("dst_conn") as u32,
                    path_id: h("path_id") as u32,
                    cum_psn: h("cum_psn") as u32,
                    path_gen: h("path_gen") as u8,
                    stream_id: h("stream_id") as u32,
                    completed_msn: h("completed_msn") as u32,
                    echo_ts: h("echo_ts") as u16,
                    ecn_cnt: h("ecn_cnt") as u8,
                    bitmap: [0, 1, 2, 3].map(|i| bm.0.get(i).copied().unwrap_or(0)),
                    ..Default::default()
                })
            }
            Kind::Nack => model::nack_header(&model::NackOut {
                code: h("code") as u8,
                dst_conn: h("dst_conn") as u32,
                path_id: h("path_id") as u32,
                psn: h("path_psn") as u32,
                path_gen: h("path_gen") as u8,
                stream_id: h("stream_id") as u32,
                msn: h("msn") as u32,
                echo_ts: h("echo_ts") as u16,
                ..Default::default()
            }),
            Kind::Probe => model::probe_header(
                h("dst_conn") as u32,
                h("path_id") as u32,
                h("path_gen") as u8,
                h("path_psn") as u32,
                h("tx_ts") as u16,
            ),
            Kind::Data => model::data_header(&model::DataFields {
                op: h("opcode") as u8,
                som: h("som") == 1,
                eom: h("eom") == 1,
                retx: h("retx") == 1,
                ackreq: h("ackreq") == 1,
                payload_len: h("payload_len") as u32,
                dst_conn: h("dst_conn") as u32,
                path_id: h("path_id") as u32,
                psn: h("path_psn") as u32,
                gen: h("path_gen") as u8,
                stream: h("stream_id") as u32,
                msn: h("msn") as u32,
                msg_len: h("msg_len") as u32,
                rkey_or_rq: h("rkey_or_rq") as u32,
                addr_or_offset: h("addr_or_offset"),
                tx_ts: h("tx_ts") as u16,
                imm: h("imm") as u32,
            }),
        };
        model::build_frame(&net, &hdr, &[])
    }
}

impl Block for Golden {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let i = port_index(&self.ports, "frame").unwrap();
        outputs[i] = self.out.clone();
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let w = self.kind.frame_bits();
        self.out = Bits::zero(w);
        if inputs[0].bit(0) {
            return;
        }
        for (i, b) in self.bytes(inputs).iter().enumerate() {
            self.out.0[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
    }
}

const KINDS: [Kind; 4] = [Kind::Sack, Kind::Nack, Kind::Probe, Kind::Data];

fn write(dir: &Scratch, kind: Kind) -> std::path::PathBuf {
    let m = check_module(kind);
    let v = m.to_verilog(&Header::new("tx_engine frame builder check", "cargo test -p mrnic-hdl --test tx_engine"));
    dir.file(&format!("{}.v", kind.name()), &v.unwrap_or_else(|e| panic!("{}: {e}", kind.name())))
}

#[test]
fn frame_lengths_are_the_models() {
    for kind in KINDS {
        let g = Golden::new(kind);
        let ins = mrnic_model::block::zero_values(&g.ports);
        assert_eq!(g.bytes(&ins).len() * 8, kind.frame_bits() as usize, "{kind:?}");
    }
}

/// Runs `check` on each check module written to its own folder, when
/// `tool` is installed.
fn each_module(tool: &str, flag: &str, check: impl Fn(&std::path::Path, &str)) {
    if !have(tool, flag) {
        return;
    }
    for kind in KINDS {
        let dir = Scratch::new(&format!("txf-{tool}-{}", kind.name()));
        check(&write(&dir, kind), kind.name());
    }
}

#[test]
fn verilator_lints_clean() {
    each_module("verilator", "--version", verilator_lint);
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    each_module("iverilog", "-V", |file, _| iverilog_compile(file));
}

/// Yosys `synth_xilinx`: no latch, no undriven net, no error. The SACK
/// frame only (the longest header, the widest CRC and sums): the four
/// harnesses took about 4 minutes on 2 loaded cores, too slow for every
/// `cargo test`.
#[test]
fn yosys_synthesizes_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let dir = Scratch::new("txf-yosys");
    let file = write(&dir, Kind::Sack);
    yosys_no_latches(&file, Kind::Sack.name());
}

/// Random field values (with all-zero and all-one corners, which give the
/// checksums' 0 / 0xffff cases their chance) through the RTL and the model.
#[test]
fn icarus_frames_are_the_models() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for kind in KINDS {
        let dir = Scratch::new(&format!("txf-replay-{}", kind.name()));
        let rtl = write(&dir, kind);
        let mut dut = Golden::new(kind);
        let defs = dut.ports.clone();
        let mut rng = Rng::new(0x7e + kind as u64);
        replay(&dir, &rtl, &mut dut, &[], 400, |cycle, ins, _| {
            let corner = rng.below(8);
            for (i, d) in defs.iter().enumerate() {
                if d.dir != mrnic_model::block::Dir::In {
                    continue;
                }
                let mut b = Bits::zero(d.width);
                for w in b.0.iter_mut() {
                    *w = match corner {
                        0 => 0,
                        1 => u64::MAX,
                        _ => rng.next_u64(),
                    };
                }
                b.truncate(d.width);
                ins[i] = b;
            }
            ins[0] = Bits::from_u64(1, u64::from(cycle == 0));
        });
    }
}

// ------------------------------------------------------------------ payload

/// The payload digest harness for `bb`-byte beats: a data header and
/// the network fields captured on `start`, payload beats as AXI delivers
/// them (the first from `skip`) folded into the raw ICRC register and the
/// one's-complement sum; out come the IPv4 header, the UDP header (length
/// and checksum over everything) and the ICRC of the payload so far.
fn digest_ports(bb: u32) -> Vec<PortDef> {
    use mrnic_hdl::tx_engine::count_bits;
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output");
    vec![
        i("rst", 1),
        i("src_ip", 32),
        i("dst_ip", 32),
        i("sport", 16),
        i("dport", 16),
        i("hdr", 320),
        i("start", 1),
        i("beat_valid", 1),
        i("beat", bb * 8),
        i("first", 1),
        i("skip", mrnic_hdl::index_bits(bb)),
        i("nbytes", count_bits(bb)),
        o("ip", 160),
        o("udp", 64),
        o("icrc", 32),
    ]
}

fn digest_module(bb: u32) -> Module {
    use mrnic_hdl::tx_engine::{crc32, digest_beat, ipv4_header, udp_header};
    use mrnic_hdl::{if_then, lit, mux, zext};
    let mut m = Module::new(&format!("tx_payload_digest{bb}"));
    m.describe("test harness: the tx_engine payload digest");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &digest_ports(bb));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| sig[n].clone();
    let zero_raw = mrnic_hdl::rx_parser::raw_update(!0, &[0; 40]);
    let hdr = m.reg("hdr_q", 320, 0, "the data header");
    let net_regs: Vec<_> = [("src_ip", 32), ("dst_ip", 32), ("sport", 16), ("dport", 16)]
        .iter()
        .map(|(n, w)| (s(n), m.reg(&format!("{n}_q"), *w, 0, "network field")))
        .collect();
    let raw = m.reg("raw_q", 32, u64::from(zero_raw), "raw ICRC register");
    let sum = m.reg("sum_q", 16, 0, "payload one's-complement sum");
    let len = m.reg("len_q", 16, 0, "payload bytes");
    let hcrc = crc32(&mut m, "hdr_crc", &s("hdr"), 40);
    let start = s("start");
    let base_raw = m.wire("base_raw", 32, "raw register the beat continues");
    m.assign(&base_raw, mux(&start, !hcrc.expr(), &raw.q));
    let base_sum = m.wire("base_sum", 16, "sum the beat continues");
    m.assign(&base_sum, mux(&start, lit(16, 0), &sum.q));
    let base_len = m.wire("base_len", 16, "length the beat continues");
    m.assign(&base_len, mux(&start, lit(16, 0), &len.q));
    let n = s("nbytes");
    let (raw1, sum1) = digest_beat(&mut m, "dg", &base_raw, &base_sum, &s("beat"), &s("first").expr(), &s("skip"), &n);
    let v = s("beat_valid");
    m.next(if_then(
        start.expr().logic_or(&v),
        vec![
            set(&raw.next, mux(&v, &raw1, &base_raw)),
            set(&sum.next, mux(&v, &sum1, &base_sum)),
            set(&len.next, mux(&v, base_len.expr() + zext(&n, 16), &base_len)),
        ],
    ));
    m.next(if_then(&start, vec![set(&hdr.next, s("hdr"))]));
    for (i, r) in &net_regs {
        m.next(if_then(&start, vec![set(&r.next, i)]));
    }
    let q = |k: usize| net_regs[k].1.q.expr();
    let net =
        NetFields { src_mac: lit(48, 0), dst_mac: lit(48, 0), src_ip: q(0), dst_ip: q(1), sport: q(2), dport: q(3) };
    let icrc = m.wire("icrc_w", 32, "the ICRC so far");
    m.assign(&icrc, !raw.q.expr());
    let total = lit(16, 20 + 8 + 40 + 4) + len.q.expr();
    let ip = ipv4_header(&mut m, "iph", &net, total);
    let udp = udp_header(&mut m, "udph", &net, &hdr.q, 40, len.q.expr(), sum.q.expr(), &icrc);
    m.assign(s("ip"), &ip);
    m.assign(s("udp"), &udp);
    m.assign(s("icrc"), &icrc);
    m
}

/// The model side of the digest harness: `build_frame` of the captured
/// header and network fields and the payload so far.
struct DigestGolden {
    bb: u32,
    ports: Vec<PortDef>,
    hdr: Vec<u8>,
    net: model::Net,
    payload: Vec<u8>,
}

/// Big-endian bits of `bytes` (the last byte in bits 7..0).
fn be_bits(width: u32, bytes: &[u8]) -> Bits {
    le_bits(width, &bytes.iter().rev().copied().collect::<Vec<u8>>())
}

impl Block for DigestGolden {
    fn name(&self) -> &'static str {
        if self.bb == 8 {
            "tx_payload_digest8"
        } else {
            "tx_payload_digest64"
        }
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let f = model::build_frame(&self.net, &self.hdr, &self.payload);
        let at = |n: &str| port_index(&self.ports, n).unwrap();
        outputs[at("ip")] = be_bits(160, &f[14..34]);
        outputs[at("udp")] = be_bits(64, &f[34..42]);
        outputs[at("icrc")] = be_bits(32, &f[f.len() - 4..]);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let g = |n: &str| &inputs[port_index(&self.ports, n).unwrap()];
        if g("rst").bit(0) {
            self.hdr = vec![0; 40];
            self.net = model::Net::default();
            self.payload.clear();
            return;
        }
        if g("start").bit(0) {
            let h = g("hdr");
            self.hdr = (0..40).map(|i| (h.0[(39 - i) / 8] >> (8 * ((39 - i) % 8))) as u8).collect();
            self.net = model::Net {
                src_ip: g("src_ip").as_u64() as u32,
                dst_ip: g("dst_ip").as_u64() as u32,
                sport: g("sport").as_u64() as u16,
                dport: g("dport").as_u64() as u16,
                ..Default::default()
            };
            self.payload.clear();
        }
        if g("beat_valid").bit(0) {
            let b = g("beat");
            let n = g("nbytes").as_u64() as usize;
            let skip = if g("first").bit(0) { g("skip").as_u64() as usize } else { 0 };
            self.payload.extend((skip..skip + n).map(|i| (b.0[i / 8] >> (8 * (i % 8))) as u8));
        }
    }
}

/// Payloads of random length (odd lengths included, so the ICRC lands at
/// odd offsets) from random offsets in their first beat (odd ones too, so
/// the checksum's words pair across beats), read in beats as the AXI
/// master reads them, with random idle cycles, beat widths of `small` (8
/// bytes) and `default` (64): the IPv4 header, the UDP header and the ICRC
/// match the model's frame every cycle.
#[test]
fn icarus_payload_digest_is_the_models() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    // The two widths side by side: the 64-byte one alone took most of a
    // minute in Icarus.
    let each = |bb: u32| {
        let dir = Scratch::new(&format!("txf-digest-{bb}"));
        let m = digest_module(bb);
        let text =
            m.to_verilog(&Header::new("tx_engine payload digest check", "cargo test -p mrnic-hdl --test tx_engine"));
        let rtl = dir.file(&format!("{}.v", m.name()), &text.unwrap_or_else(|e| panic!("{bb}: {e}")));
        if have("verilator", "--version") {
            verilator_lint(&rtl, m.name());
        }
        let mut dut =
            DigestGolden { bb, ports: digest_ports(bb), hdr: vec![0; 40], net: Default::default(), payload: vec![] };
        let defs = dut.ports.clone();
        let mut rng = Rng::new(0xd1 + u64::from(bb));
        // The payload in flight: (skip, bytes left), None before its first beat.
        let mut next_start = true;
        let mut cur: (u64, u64) = (0, 0);
        replay(&dir, &rtl, &mut dut, &[], 600, |cycle, ins, _| {
            let put = |ins: &mut Vec<Bits>, n: &str, v: Bits| ins[port_index(&defs, n).unwrap()] = v;
            let rand = |rng: &mut Rng, w: u32| {
                let mut b = Bits::zero(w);
                for x in b.0.iter_mut() {
                    *x = rng.next_u64();
                }
                b.truncate(w);
                b
            };
            put(ins, "rst", Bits::from_u64(1, u64::from(cycle == 0)));
            let valid = rng.below(4) != 0;
            let start = valid && next_start;
            put(ins, "start", Bits::from_u64(1, u64::from(start)));
            put(ins, "beat_valid", Bits::from_u64(1, u64::from(valid)));
            for (n, w) in [("src_ip", 32), ("dst_ip", 32), ("sport", 16), ("dport", 16), ("hdr", 320)] {
                let v = rand(&mut rng, w);
                put(ins, n, v);
            }
            let v = rand(&mut rng, bb * 8);
            put(ins, "beat", v);
            // A payload of 1..=12 beats' bytes from a random offset in the
            // first beat, read as the AXI master reads it.
            let bbu = u64::from(bb);
            if start {
                cur = (rng.below(bbu), 1 + rng.below(12 * bbu));
            }
            let (skip, left) = cur;
            let room = if start { bbu - skip } else { bbu };
            let n = room.min(left.max(1));
            put(ins, "first", Bits::from_u64(1, u64::from(start)));
            put(ins, "skip", Bits::from_u64(mrnic_hdl::index_bits(bb), skip));
            put(ins, "nbytes", Bits::from_u64(mrnic_hdl::tx_engine::count_bits(bb), n));
            if valid {
                cur.1 = left.saturating_sub(n);
                next_start = cur.1 == 0;
            }
        });
    };
    std::thread::scope(|s| {
        for bb in [8u32, 64] {
            s.spawn(move || each(bb));
        }
    });
}

// -------------------------------------------------------------- path choice

/// Field `i` of `w` bits of a packed value (field 0 in the low bits).
fn field_of(b: &Bits, i: u32, w: u32) -> u64 {
    (0..w).filter(|&k| b.bit(i * w + k)).fold(0, |v, k| v | 1 << k)
}

/// The path choice harness's per-path inputs (name, bits per path), in
/// port order after `npaths`.
const CHOICE_PATH_FIELDS: [(&str, u32); 7] =
    [("state", 2), ("plane", 3), ("timed_out", 1), ("inflight", 9), ("cwnd", 20), ("next_psn", 24), ("cum_acked", 24)];

fn choice_ports(sz: &ChoiceSizes) -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output, registered");
    let n = sz.paths;
    let mut v = vec![i("rst", 1), i("npaths", sz.path_bits() + 1)];
    v.extend(CHOICE_PATH_FIELDS.iter().map(|(f, w)| i(f, n * w)));
    v.extend([
        i("mark_valid", sz.planes),
        i("mark_until", sz.planes * 32),
        i("port_ready", sz.planes),
        i("ts", 32),
        i("conn_ok", 1),
        i("retx_path", sz.path_bits()),
        o("retx_elig", n),
        o("retx_port_wait", 1),
        o("new_elig", n),
        o("new_port_wait", 1),
        o("ring_held", 1),
        o("full_after", n),
    ]);
    v
}

/// The check module: the inputs into `path_choice`, its outputs registered.
fn choice_module(sz: &ChoiceSizes) -> Module {
    use mrnic_hdl::tx_engine::{path_choice, ChoiceIn};
    let mut m = Module::new("tx_path_choice");
    m.describe("test harness: the tx_engine decision's path choice between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &choice_ports(sz));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let inp = ChoiceIn {
        npaths: s("npaths"),
        state: s("state"),
        plane: s("plane"),
        timed_out: s("timed_out"),
        inflight: s("inflight"),
        cwnd: s("cwnd"),
        next_psn: s("next_psn"),
        cum_acked: s("cum_acked"),
        mark_valid: s("mark_valid"),
        mark_until: s("mark_until"),
        port_ready: s("port_ready"),
        ts: s("ts"),
        conn_ok: s("conn_ok"),
        retx_path: s("retx_path"),
    };
    let out = path_choice(&mut m, "pc", sz, &inp);
    for (port, v) in [
        ("retx_elig", out.retx_elig),
        ("retx_port_wait", out.retx_port_wait),
        ("new_elig", out.new_elig),
        ("new_port_wait", out.new_port_wait),
        ("ring_held", out.ring_held),
        ("full_after", out.full_after),
    ] {
        let r = m.reg(&format!("{port}_q"), v.width(), 0, "the choice of the last cycle's inputs");
        m.next(set(&r.next, &v));
        m.assign(&sig[port], &r.q);
    }
    m
}

/// Registers each `(name, value)` of a check module onto its output port
/// `o_<name>`: the harness compares the value of the last cycle's inputs.
fn register_outputs(m: &mut Module, sig: &std::collections::HashMap<String, Signal>, outs: Vec<(&str, Signal)>) {
    for (port, v) in outs {
        let r = m.reg(&format!("{port}_q"), v.width(), 0, "the unit's answer to the last cycle's inputs");
        m.next(set(&r.next, &v));
        m.assign(&sig[&format!("o_{port}")], &r.q);
    }
}

/// A check module written to `dir` as `<module>.v`.
fn write_check(dir: &Scratch, m: &Module, what: &str) -> std::path::PathBuf {
    let text = m.to_verilog(&Header::new(what, "cargo test -p mrnic-hdl --test tx_engine"));
    dir.file(&format!("{}.v", m.name()), &text.unwrap_or_else(|e| panic!("{}: {e}", m.name())))
}

/// Replays 3000 cycles of `stimulus` (given the sizes, the ports, the
/// seeded generator, the cycle and the inputs to set) on a unit's check
/// module against its model side, for `small` and `default`, after a
/// Verilator `-Wall` lint.
fn replay_unit(
    what: &str,
    seed: u64,
    build: impl Fn(&model::TxEngineParams) -> (Module, Registered),
    mut stimulus: impl FnMut(&model::TxEngineParams, &[PortDef], &mut Rng, u32, &mut Vec<Bits>),
) {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in common::configs() {
        let p = model::TxEngineParams::from_config(&cfg).unwrap();
        let (m, mut dut) = build(&p);
        let dir = Scratch::new(&format!("txf-{}-{}", m.name(), cfg.name));
        let rtl = write_check(&dir, &m, what);
        if have("verilator", "--version") {
            verilator_lint(&rtl, m.name());
        }
        let ports = dut.ports.clone();
        let mut rng = Rng::new(seed);
        replay(&dir, &rtl, &mut dut, &[], 3000, |cycle, ins, _| stimulus(&p, &ports, &mut rng, cycle, ins));
    }
}

/// A unit's model function: the inputs by port name to the output
/// ports' values by name.
type UnitFn = dyn Fn(&dyn Fn(&str) -> Bits) -> Vec<(String, Bits)>;

/// A model function whose outputs fit 64 bits, as a [`UnitFn`].
fn narrow(f: impl Fn(&dyn Fn(&str) -> Bits) -> Vec<(String, u64)> + 'static) -> Box<UnitFn> {
    Box::new(move |g| f(g).into_iter().map(|(n, v)| (n, Bits::from_u64(64, v))).collect())
}

/// A model function between registers, the model side of a
/// combinational unit's harness: each cycle `f` maps the inputs (by port
/// name) to the output ports' values (by name) of the next cycle; `rst`
/// clears them.
struct Registered {
    name: &'static str,
    ports: Vec<PortDef>,
    f: Box<UnitFn>,
    out: Vec<(String, Bits)>,
}

impl Block for Registered {
    fn name(&self) -> &'static str {
        self.name
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        for d in self.ports.iter().filter(|d| d.dir == mrnic_model::block::Dir::Out) {
            let i = port_index(&self.ports, &d.name).unwrap();
            match self.out.iter().find(|(n, _)| *n == d.name) {
                Some((_, v)) => outputs[i].set_words(d.width, &v.0),
                None => outputs[i] = Bits::zero(d.width),
            }
        }
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ports = &self.ports;
        let g = |n: &str| inputs[port_index(ports, n).unwrap_or_else(|| panic!("no port {n}"))].clone();
        self.out = if g("rst").bit(0) { Vec::new() } else { (self.f)(&g) };
    }
}

/// The model side of the path choice: `choose` of last cycle's inputs.
fn choice_golden(p: &model::TxEngineParams, ports: Vec<PortDef>) -> Registered {
    let p = p.clone();
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let f = |n: &str, i: u32| {
            let w = CHOICE_PATH_FIELDS.iter().find(|(x, _)| *x == n).unwrap().1;
            field_of(&g(n), i, w) as u32
        };
        let paths: Vec<model::ChoicePath> = (0..g("npaths").as_u64() as u32)
            .map(|i| model::ChoicePath {
                state: f("state", i) as u8,
                plane: f("plane", i) as u8,
                timed_out: f("timed_out", i) == 1,
                inflight: f("inflight", i),
                cwnd: f("cwnd", i),
                next_psn: f("next_psn", i),
                cum_acked: f("cum_acked", i),
            })
            .collect();
        let marks: Vec<Option<u32>> = (0..p.cfg.transport.planes)
            .map(|q| g("mark_valid").bit(q).then(|| field_of(&g("mark_until"), q, 32) as u32))
            .collect();
        let ts = g("ts").as_u64() as u32;
        let ready = g("port_ready").as_u64() as u32;
        let o = model::choose(&p, &paths, &marks, ready, ts, g("conn_ok").bit(0), g("retx_path").as_u64() as u32);
        [
            ("retx_elig", o.retx_elig),
            ("retx_port_wait", u32::from(o.retx_port_wait)),
            ("new_elig", o.new_elig),
            ("new_port_wait", u32::from(o.new_port_wait)),
            ("ring_held", u32::from(o.ring_held)),
            ("full_after", o.full_after),
        ]
        .map(|(n, v)| (n.to_string(), u64::from(v)))
        .to_vec()
    };
    Registered { name: "tx_path_choice", ports, f: narrow(f), out: Vec::new() }
}

/// Random decisions around every boundary the choice has (a window one
/// packet from full, a ring one slot from full, a plane mark at its
/// deadline, a saturated inflight count, paths at and past `npaths`, a
/// retransmission's path out of range, ports all ready, one ready, none
/// or a random mask, paths on planes with no port), for `small` and `default`: every
/// output bit matches the model's `choose` every cycle under Icarus; the
/// module lints clean under Verilator `-Wall`.
#[test]
fn icarus_path_choice_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let sz = ChoiceSizes::of(p);
        (choice_module(&sz), choice_golden(p, choice_ports(&sz)))
    };
    replay_unit("tx_engine path choice check", 0xc401, build, |p, ports, rng, cycle, ins| {
        let sz = ChoiceSizes::of(p);
        let n = sz.paths;
        let put = |ins: &mut Vec<Bits>, name: &str, w: u32, vals: &[u64]| {
            let mut b = Bits::zero(w);
            b.set_packed(w, vals.iter().map(|&v| (v, w / vals.len() as u32)));
            ins[port_index(ports, name).unwrap()] = b;
        };
        put(ins, "rst", 1, &[u64::from(cycle == 0)]);
        let ts = rng.next_u64() & 0xffff_ffff;
        put(ins, "ts", 32, &[ts]);
        // npaths 1..=PATHS mostly, now and then one past the end.
        let np = if rng.below(16) == 0 { 0 } else { 1 + rng.below(u64::from(n)) };
        put(ins, "npaths", sz.path_bits() + 1, &[np]);
        let mut per: Vec<Vec<u64>> = vec![Vec::new(); CHOICE_PATH_FIELDS.len()];
        for _ in 0..n {
            let state = if rng.below(2) == 0 { 0 } else { rng.below(4) };
            let cwnd = rng.next_u64() & 0xfffff;
            let inflight = match rng.below(4) {
                0 => 511,
                1 => rng.below(512),
                _ => ((cwnd >> sz.mtu_shift) + rng.below(3)).saturating_sub(1).min(511),
            };
            let next_psn = rng.next_u64() & 0xff_ffff;
            let span = match rng.below(3) {
                0 => rng.next_u64(),
                _ => (u64::from(sz.ring_depth) + rng.below(3)).wrapping_sub(1),
            };
            let vals = [
                state,
                rng.below(8),
                rng.below(4) / 3,
                inflight,
                cwnd,
                next_psn,
                next_psn.wrapping_sub(span) & 0xff_ffff,
            ];
            for (k, v) in vals.into_iter().enumerate() {
                per[k].push(v);
            }
        }
        for ((name, w), vals) in CHOICE_PATH_FIELDS.iter().zip(&per) {
            put(ins, name, n * w, vals);
        }
        let planes = sz.planes;
        let valid = rng.next_u64() & ((1 << planes) - 1);
        put(ins, "mark_valid", planes, &[valid]);
        let until: Vec<u64> = (0..planes)
            .map(|_| match rng.below(3) {
                0 => rng.next_u64() & 0xffff_ffff,
                _ => (ts + rng.below(5)).wrapping_sub(2) & 0xffff_ffff,
            })
            .collect();
        put(ins, "mark_until", planes * 32, &until);
        // Every port ready a quarter of the time (the choice without the
        // rule), else a random mask, now and then one port alone or none.
        let all = (1 << planes) - 1;
        let ready = match rng.below(8) {
            0 | 1 => all,
            2 => 1 << rng.below(u64::from(planes)),
            3 => 0,
            _ => rng.next_u64() & all,
        };
        put(ins, "port_ready", planes, &[ready]);
        put(ins, "conn_ok", 1, &[u64::from(rng.below(4) != 0)]);
        put(ins, "retx_path", sz.path_bits(), &[rng.below(1 << sz.path_bits())]);
    });
}

// ------------------------------------------------ connection congestion

/// The congestion harness's state inputs and outputs (`o_<name>`).
const CC_STATE: [(&str, u32); 6] =
    [("cwnd", 32), ("acked_bytes", 24), ("ecn_ewma", 8), ("hold_until", 32), ("srtt", 32), ("min_rtt", 20)];

fn cc_ports(sz: &CcSizes) -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output, registered");
    let mut v = vec![i("rst", 1)];
    v.extend(CC_STATE.iter().map(|(n, w)| i(n, *w)));
    v.extend([
        i("ts", 32),
        i("pkts", sz.pkts_bits),
        i("bytes", 32),
        i("ecn_cnt", 8),
        i("rate_hint", 16),
        i("rtt_valid", 1),
        i("rtt", 16),
        i("npaths", sz.path_bits + 1),
    ]);
    v.extend(CC_STATE.iter().map(|(n, w)| o(&format!("o_{n}"), *w)));
    v.push(o("o_cap", 32));
    v
}

/// The check module: the inputs into `conn_cc`, its outputs registered.
fn cc_module(sz: &CcSizes) -> Module {
    use mrnic_hdl::tx_engine::{conn_cc, CcAckIn, CcState};
    let mut m = Module::new("tx_conn_cc");
    m.describe("test harness: the tx_engine connection-level congestion step between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &cc_ports(sz));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let st = CcState {
        cwnd: s("cwnd"),
        acked_bytes: s("acked_bytes"),
        ecn_ewma: s("ecn_ewma"),
        hold_until: s("hold_until"),
        srtt: s("srtt"),
        min_rtt: s("min_rtt"),
    };
    let a = CcAckIn {
        ts: s("ts"),
        pkts: s("pkts"),
        bytes: s("bytes"),
        ecn_cnt: s("ecn_cnt"),
        rate_hint: s("rate_hint"),
        rtt_valid: s("rtt_valid"),
        rtt: s("rtt"),
        npaths: s("npaths"),
    };
    let out = conn_cc(&mut m, "cc", sz, &st, &a);
    let o = out.state;
    register_outputs(
        &mut m,
        &sig,
        vec![
            ("cwnd", o.cwnd),
            ("acked_bytes", o.acked_bytes),
            ("ecn_ewma", o.ecn_ewma),
            ("hold_until", o.hold_until),
            ("srtt", o.srtt),
            ("min_rtt", o.min_rtt),
            ("cap", out.cap),
        ],
    );
    m
}

/// The model side of the congestion step: `conn_cc_ack` of last cycle's
/// inputs.
fn cc_golden(p: &model::TxEngineParams, ports: Vec<PortDef>) -> Registered {
    let p = p.clone();
    let k = mrnic_model::path_telemetry::Consts::from_config(&p.cfg);
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let cc = model::Cc {
            cwnd: u("cwnd"),
            acked_bytes: u("acked_bytes"),
            ecn_ewma: u("ecn_ewma") as u8,
            hold_until: u("hold_until"),
            srtt: u("srtt"),
            min_rtt: u("min_rtt"),
            ..Default::default()
        };
        let a = model::CcAck {
            ts: u("ts"),
            pkts: u("pkts"),
            bytes: u("bytes"),
            ecn_cnt: u("ecn_cnt"),
            rate_hint: u("rate_hint") as u16,
            rtt: (u("rtt_valid") == 1).then(|| u("rtt")),
            npaths: u("npaths"),
        };
        let o = model::conn_cc_ack(&p, &k, &cc, &a);
        [
            ("o_cwnd", o.cwnd),
            ("o_acked_bytes", o.acked_bytes),
            ("o_ecn_ewma", u32::from(o.ecn_ewma)),
            ("o_hold_until", o.hold_until),
            ("o_srtt", o.srtt),
            ("o_min_rtt", o.min_rtt),
            ("o_cap", o.cap),
        ]
        .map(|(n, v)| (n.to_string(), u64::from(v)))
        .to_vec()
    };
    Registered { name: "tx_conn_cc", ports, f: narrow(f), out: Vec::new() }
}

/// Random SACKs around every boundary of the step (a window of bytes one
/// short of cwnd, the acknowledged bytes at saturation, cwnd at the
/// connection maximum and the minimum, the CE hold at its deadline, no
/// RTT sample yet, a zero RTT, a zero or full rate hint), for `small` and
/// `default`: the state after the SACK and the cap match the model's
/// `conn_cc_ack` every cycle under Icarus; the module lints clean under
/// Verilator `-Wall`.
#[test]
fn icarus_conn_cc_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let sz = CcSizes::of(p);
        (cc_module(&sz), cc_golden(p, cc_ports(&sz)))
    };
    replay_unit("tx_engine congestion check", 0xcc01, build, |p, ports, rng, cycle, ins| {
        let sz = CcSizes::of(p);
        let (mtu, min_cwnd, conn_max) = (u64::from(sz.mtu), u64::from(sz.min_cwnd), u64::from(sz.conn_max));
        let mut put = |name: &str, v: u64| common::set(ports, ins, name, v);
        put("rst", u64::from(cycle == 0));
        let ts = rng.next_u64() & 0xffff_ffff;
        put("ts", ts);
        let cwnd = match rng.below(4) {
            0 => conn_max - rng.below(2 * mtu),
            1 => min_cwnd + rng.below(2 * mtu),
            2 => rng.next_u64() & 0xffff_ffff,
            _ => min_cwnd + rng.below(conn_max - min_cwnd),
        };
        put("cwnd", cwnd);
        let bytes = match rng.below(3) {
            0 => rng.next_u64() & 0xffff_ffff,
            _ => rng.below(8 * mtu),
        };
        put("bytes", bytes);
        let acked = match rng.below(3) {
            0 => (1 << 24) - 1 - rng.below(4 * mtu),
            1 => (cwnd.saturating_sub(bytes) + rng.below(3)).saturating_sub(1),
            _ => rng.below(1 << 24),
        };
        put("acked_bytes", acked.min((1 << 24) - 1));
        put("ecn_ewma", rng.below(256));
        put("hold_until", if rng.below(2) == 0 { (ts + rng.below(5)).wrapping_sub(2) } else { rng.next_u64() });
        put("srtt", if rng.below(8) == 0 { rng.below(2) } else { rng.next_u64() >> (rng.below(32) as u32) });
        let none = u64::from(mrnic_model::path_telemetry::MIN_RTT_NONE);
        put("min_rtt", if rng.below(4) == 0 { none } else { rng.below(none + 1) });
        put("pkts", if rng.below(8) == 0 { 0 } else { rng.below(1 << sz.pkts_bits) });
        put("ecn_cnt", if rng.below(2) == 0 { 0 } else { rng.below(256) });
        put("rate_hint", [0, 0xffff, rng.below(1 << 16)][rng.below(3) as usize]);
        put("rtt_valid", rng.below(2));
        put("rtt", if rng.below(8) == 0 { 0 } else { rng.below(1 << 16) });
        put("npaths", 1 + rng.below(u64::from(p.paths)));
    });
}

/// Every unit through Yosys with no latch, up to `proc` (where a latch
/// would first appear) and `check -assert`, for both configs; through
/// `synth_xilinx` as well, so each maps, for `small` with
/// `MRNIC_SYNTH_FULL=1` and for `default` (the most paths and planes, the
/// widest multipliers, 4096 connections, 64-byte beats) with
/// `MRNIC_SYNTH_DEFAULT=1`. The mappings were the longest part of CI:
/// `default`'s eleven took minutes of ABC on 2 cores, `small`'s made this
/// the slowest test of the binary (172 s of wall time at load 7, 2026-12-02).
#[test]
fn yosys_units_have_no_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let units = |p: &model::TxEngineParams| {
        vec![
            (choice_module(&ChoiceSizes::of(p)), "tx_engine path choice check"),
            (cc_module(&CcSizes::of(p)), "tx_engine congestion check"),
            (burst_module(p), "tx_engine burst check"),
            (rr_module(p), "tx_engine connection choice"),
            (stream_module(p), "tx_engine stream choice"),
            (beat_module(&BeatSizes::of(p)), "tx_engine frame beats"),
            (cut_module(&CutSizes::of(p)), "tx_engine commit cut"),
            (walk_module(&WalkSizes::of(p)), "tx_engine completion walk step"),
            (post_module(p), "tx_engine post"),
            (fold_module(p), "tx_engine SACK first pass"),
            (window_module(), "tx_engine SACK window"),
        ]
    };
    let mut jobs = vec![];
    for cfg in ["small", "default"] {
        let c = mrnic_proto::config::Config::builtin(cfg).unwrap();
        let p = model::TxEngineParams::from_config(&c).unwrap();
        let full = if cfg == "small" { synth_full() } else { synth_default() };
        jobs.extend(units(&p).into_iter().map(|(m, what)| (cfg, m, what, full)));
    }
    // Side by side: Yosys is single-threaded.
    std::thread::scope(|s| {
        for (cfg, m, what, full) in jobs {
            s.spawn(move || {
                let dir = Scratch::new(&format!("txf-yosys-{cfg}-{}", m.name()));
                let rtl = write_check(&dir, &m, what);
                if full {
                    yosys_no_latches(&rtl, m.name());
                } else {
                    yosys_proc_no_latches(&rtl, m.name());
                }
            });
        }
    });
}

// ------------------------------------------------------ AXI read bursts

fn burst_ports(p: &model::TxEngineParams) -> Vec<PortDef> {
    vec![
        PortDef::input("rst", 1, "Inputs", "harness input"),
        PortDef::input("next", p.axi_addr_bits, "Inputs", "first unread byte, beat-aligned"),
        PortDef::input("stop", p.axi_addr_bits, "Inputs", "end of the payload"),
        PortDef::output("len", 8, "Outputs", "burst length, registered"),
    ]
}

fn burst_module(p: &model::TxEngineParams) -> Module {
    let mut m = Module::new("tx_axi_burst");
    m.describe("test harness: the tx_engine read master's burst length between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &burst_ports(p));
    m.clock_domain(&clk, &sig["rst"]);
    let len = mrnic_hdl::tx_engine::axi_burst(&mut m, "ar", p, &sig["next"], &sig["stop"]);
    let r = m.reg("len_q", 8, 0, "the length of the last cycle's inputs");
    m.next(set(&r.next, &len));
    m.assign(&sig["len"], &r.q);
    m
}

/// Payloads from every offset of a page, ending before, at and past the
/// 4 KiB boundary and the longest burst, one beat long to many pages, for
/// `small` (8-byte beats) and `default` (64): the burst length matches
/// the model's `burst` every cycle under Icarus.
#[test]
fn icarus_axi_burst_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let q = p.clone();
        let f = move |g: &dyn Fn(&str) -> Bits| {
            let ar = model::burst(&q, g("next").as_u64(), g("stop").as_u64());
            vec![("len".to_string(), u64::from(ar.len))]
        };
        let dut = Registered { name: "tx_axi_burst", ports: burst_ports(p), f: narrow(f), out: Vec::new() };
        (burst_module(p), dut)
    };
    replay_unit("tx_engine burst check", 0xa4b, build, |p, ports, rng, cycle, ins| {
        let bb = u64::from(p.beat_bytes());
        let max = u64::from(p.axi_max_burst) * bb;
        // Addresses below 2^62: the model's page end must not overflow.
        let next = (rng.next_u64() >> 2) & !(bb - 1);
        let page_left = 4096 - (next & 0xfff);
        let len = match rng.below(5) {
            0 => page_left,
            1 => max,
            2 => bb * (1 + rng.below(4)),
            3 => (page_left.min(max) + rng.below(2 * bb)).saturating_sub(bb).max(1),
            _ => 1 + rng.below(3 * 4096),
        };
        common::set(ports, ins, "rst", u64::from(cycle == 0));
        common::set(ports, ins, "next", next);
        common::set(ports, ins, "stop", next + len.max(bb) + rng.below(bb) * u64::from(rng.below(2) == 0));
    });
}

// ------------------------------------------------------ the scheduler's connection choice

fn rr_ports(p: &model::TxEngineParams) -> Vec<PortDef> {
    vec![
        PortDef::input("rst", 1, "Inputs", "harness input"),
        PortDef::input("ready", p.conns, "Inputs", "the ready set, a bit per connection"),
        PortDef::input("from", p.conn_bits, "Inputs", "the round-robin start"),
        PortDef::output("found", 1, "Outputs", "a connection is ready, registered"),
        PortDef::output("pick", p.conn_bits, "Outputs", "the first ready one from the start, registered"),
    ]
}

fn rr_module(p: &model::TxEngineParams) -> Module {
    let mut m = Module::new("tx_rr_pick");
    m.describe("test harness: the tx_engine scheduler's round-robin connection choice between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &rr_ports(p));
    m.clock_domain(&clk, &sig["rst"]);
    let r = mrnic_hdl::tx_engine::rr_pick(&mut m, "rr", &sig["ready"], &sig["from"]);
    // `pick` means nothing without `found`: the harness shows 0 then, as
    // the model side does.
    let pick = mrnic_hdl::mux(&r.found, &r.pick, mrnic_hdl::lit(p.conn_bits, 0));
    for (port, v, w) in [("found", r.found.expr(), 1), ("pick", pick, p.conn_bits)] {
        let q = m.reg(&format!("{port}_q"), w, 0, "last cycle's result");
        m.next(set(&q.next, v));
        m.assign(&sig[port], &q.q);
    }
    m
}

/// Ready sets empty, full, of one bit (at, just before and just after the
/// start, in the start's word and in others), sparse and dense, from every
/// start, for `small` (16 connections, one word) and `default` (4096, 64
/// words): the choice is the model's `rr_first` every cycle under Icarus.
#[test]
fn icarus_rr_pick_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let n = p.conns;
        let f = move |g: &dyn Fn(&str) -> Bits| {
            let ready = g("ready");
            let pick = model::rr_first(n, g("from").as_u64() as u32, |c| ready.bit(c));
            vec![("found".to_string(), u64::from(pick.is_some())), ("pick".to_string(), u64::from(pick.unwrap_or(0)))]
        };
        let dut = Registered { name: "tx_rr_pick", ports: rr_ports(p), f: narrow(f), out: Vec::new() };
        (rr_module(p), dut)
    };
    replay_unit("tx_engine connection choice", 0x2c0, build, |p, ports, rng, cycle, ins| {
        let n = u64::from(p.conns);
        let from = rng.below(n);
        let near = |rng: &mut Rng| (from + n + rng.below(5) - 2) % n;
        let mut ready = Bits::zero(p.conns);
        let mut set_bit = |c: u64| ready.0[(c / 64) as usize] |= 1 << (c % 64);
        match rng.below(8) {
            0 => {}
            1 => (0..n).for_each(&mut set_bit),
            2 => set_bit(near(rng)),
            3 => set_bit(rng.below(n)),
            4 => {
                // Two bits: one in the start's word below it, one far away.
                set_bit(from & !63);
                set_bit(rng.below(n));
            }
            5 => (0..1 + rng.below(4)).for_each(|_| set_bit(near(rng))),
            6 => (0..n).filter(|_| rng.below(16) == 0).for_each(&mut set_bit),
            _ => (0..n).filter(|_| rng.below(2) == 0).for_each(&mut set_bit),
        }
        common::set(ports, ins, "rst", u64::from(cycle == 0));
        common::set(ports, ins, "from", from);
        let i = port_index(ports, "ready").unwrap();
        ins[i] = ready;
    });
}

// ------------------------------------------------------ the decision's stream choice

fn stream_ports(p: &model::TxEngineParams) -> Vec<PortDef> {
    let s = p.streams;
    let pb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
    vec![
        PortDef::input("rst", 1, "Inputs", "harness input"),
        PortDef::input("pend", pb * s, "Inputs", "per stream: the first request with bytes to cut"),
        PortDef::input("tail", pb * s, "Inputs", "per stream: where the next request is posted"),
        PortDef::input("next_msn", 24 * s, "Inputs", "per stream: the next msn to post"),
        PortDef::input("pend_started", s, "Inputs", "per stream: the request at pend has started"),
        PortDef::input("remote_completed", 24 * s, "Inputs", "per stream: the peer's completed_msn"),
        PortDef::input("from", p.stream_bits, "Inputs", "the round-robin start"),
        PortDef::output("found", 1, "Outputs", "a stream may send, registered"),
        PortDef::output("pick", p.stream_bits, "Outputs", "the first from the start, registered"),
        PortDef::output("blocked", 1, "Outputs", "pending streams, none may send, registered"),
    ]
}

fn stream_module(p: &model::TxEngineParams) -> Module {
    let mut m = Module::new("tx_stream_pick");
    m.describe("test harness: the tx_engine decision's stream choice from the streams' words, between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &stream_ports(p));
    m.clock_domain(&clk, &sig["rst"]);
    let words = mrnic_hdl::tx_engine::StreamWords {
        pend: sig["pend"].clone(),
        tail: sig["tail"].clone(),
        next_msn: sig["next_msn"].clone(),
        pend_started: sig["pend_started"].clone(),
        remote_completed: sig["remote_completed"].clone(),
    };
    let heads = mrnic_hdl::tx_engine::stream_heads(&mut m, "sw", &words);
    let depth = p.cfg.hardware.msg_table_depth;
    let r = mrnic_hdl::tx_engine::stream_pick(&mut m, "st", depth, &heads, &sig["from"]);
    let pick = mrnic_hdl::mux(&r.found, &r.pick, mrnic_hdl::lit(p.stream_bits, 0));
    for (port, v, w) in [("found", r.found.expr(), 1), ("pick", pick, p.stream_bits), ("blocked", r.blocked.expr(), 1)]
    {
        let q = m.reg(&format!("{port}_q"), w, 0, "last cycle's result");
        m.next(set(&q.next, v));
        m.assign(&sig[port], &q.q);
    }
    m
}

/// Streams' words with requests queued (none, some, the whole depth) and
/// pointers around their wrap, started or not, head msns (by position)
/// behind, at, one short of and past the peer's table window, around the
/// 24-bit wrap, from every start, for `small` (4 streams) and `default`
/// (16): the choice and the blocked flag are the model's `stream_choice` of
/// its `stream_head`s every cycle.
#[test]
fn icarus_stream_pick_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let (s, depth) = (p.streams, p.cfg.hardware.msg_table_depth);
        let pb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
        let f = move |g: &dyn Fn(&str) -> Bits| {
            let lane = |b: &Bits, i: u32, w: u32| mrnic_model::netlist::slice_bits(b, w * i, w).as_u64() as u32;
            let (pend, tail, next, started, rc) =
                (g("pend"), g("tail"), g("next_msn"), g("pend_started"), g("remote_completed"));
            let heads: Vec<model::StreamHead> = (0..s)
                .map(|i| {
                    // The model's pointers are free-running; the RTL's keep
                    // `pb` bits: the same head whenever tail - pend <= depth.
                    model::stream_head(&model::StreamWord {
                        pend: lane(&pend, i, pb),
                        tail: lane(&tail, i, pb) | ((lane(&tail, i, pb) < lane(&pend, i, pb)) as u32) << pb,
                        next_msn: lane(&next, i, 24),
                        pend_started: started.bit(i),
                        remote_completed: lane(&rc, i, 24),
                    })
                })
                .collect();
            let pick = model::stream_choice(&heads, g("from").as_u64() as u32, depth);
            let blocked = pick.is_none() && heads.iter().any(|h| h.pending);
            vec![
                ("found".to_string(), u64::from(pick.is_some())),
                ("pick".to_string(), u64::from(pick.unwrap_or(0))),
                ("blocked".to_string(), u64::from(blocked)),
            ]
        };
        let dut = Registered { name: "tx_stream_pick", ports: stream_ports(p), f: narrow(f), out: Vec::new() };
        (stream_module(p), dut)
    };
    replay_unit("tx_engine stream choice", 0x57e, build, |p, ports, rng, cycle, ins| {
        let (s, depth, wq) = (p.streams, u64::from(p.cfg.hardware.msg_table_depth), u64::from(p.wq_depth));
        let pb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
        let dense = rng.below(3);
        let (mut pends, mut tails, mut nexts, mut rcs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..s {
            let c = if rng.below(4) == 0 { 0xff_ffff - rng.below(4) } else { rng.below(1 << 24) };
            let ahead = match rng.below(5) {
                0 => 0,
                1 => depth - 1,
                2 => depth,
                3 => (1 << 24) - 1 - rng.below(4),
                _ => rng.below(2 * depth),
            };
            // Requests queued from pend: none, some or the whole depth.
            let queued = if rng.below(4) > dense { 0 } else { [1, wq, 1 + rng.below(wq)][rng.below(3) as usize] };
            let pend = if rng.below(3) == 0 { (1 << pb) - 1 - rng.below(2) } else { rng.below(1 << pb) };
            let msn = (c + ahead) & 0xff_ffff;
            pends.push((pend, pb));
            tails.push(((pend + queued) & ((1 << pb) - 1), pb));
            nexts.push(((msn + queued) & 0xff_ffff, 24));
            rcs.push((c, 24));
        }
        let packed = |v: Vec<(u64, u32)>, w: u32| {
            let mut b = Bits::zero(w * s);
            b.set_packed(w * s, v);
            b
        };
        let started = (0..s).fold(0u64, |a, i| a | (u64::from(rng.below(4) == 0) << i));
        common::set(ports, ins, "rst", u64::from(cycle == 0));
        common::set(ports, ins, "pend_started", started);
        common::set(ports, ins, "from", rng.below(u64::from(s)));
        ins[port_index(ports, "pend").unwrap()] = packed(pends, pb);
        ins[port_index(ports, "tail").unwrap()] = packed(tails, pb);
        ins[port_index(ports, "next_msn").unwrap()] = packed(nexts, 24);
        ins[port_index(ports, "remote_completed").unwrap()] = packed(rcs, 24);
    });
}

// ------------------------------------------------------ the output stage's beats

fn beat_ports(sz: &BeatSizes) -> Vec<PortDef> {
    let cw = mrnic_hdl::tx_engine::count_bits(sz.bb);
    vec![
        PortDef::input("rst", 1, "Inputs", "harness input"),
        PortDef::input("k", sz.beat_bits(), "Inputs", "beat index"),
        PortDef::input("head", 8 * sz.head_max, "Inputs", "frame head, m_axis byte order"),
        PortDef::input("head_len", sz.head_len_bits(), "Inputs", "head bytes"),
        PortDef::input("skip", index_bits(sz.bb), "Inputs", "payload offset in its first buffer beat"),
        PortDef::input("payload_len", sz.payload_len_bits(), "Inputs", "payload bytes"),
        PortDef::input("icrc", 32, "Inputs", "ICRC"),
        PortDef::input("lo", 8 * sz.bb, "Inputs", "buffer beat hi_beat - 1"),
        PortDef::input("hi", 8 * sz.bb, "Inputs", "buffer beat hi_beat"),
        PortDef::output("data", 8 * sz.bb, "Outputs", "the beat, registered"),
        PortDef::output("keep", cw, "Outputs", "valid bytes, registered"),
        PortDef::output("last", 1, "Outputs", "last beat, registered"),
        PortDef::output("hi_beat", sz.buf_bits(), "Outputs", "buffer beat wanted as hi, registered"),
    ]
}

fn beat_module(sz: &BeatSizes) -> Module {
    let mut m = Module::new("tx_frame_beat");
    m.describe("test harness: the tx_engine output stage's beat builder between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &beat_ports(sz));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| sig[n].clone();
    let inp = BeatIn {
        k: s("k"),
        head: s("head"),
        head_len: s("head_len"),
        skip: s("skip"),
        payload_len: s("payload_len"),
        icrc: s("icrc"),
        lo: s("lo"),
        hi: s("hi"),
    };
    let o = frame_beat(&mut m, "fb", sz, &inp);
    for (port, v) in [("data", &o.data), ("keep", &o.keep), ("last", &o.last), ("hi_beat", &o.hi_beat)] {
        let r = m.reg(&format!("{port}_q"), v.width(), 0, "last cycle's value");
        m.next(set(&r.next, v));
        m.assign(&sig[port], &r.q);
    }
    m
}

/// Little-endian bits of `bytes` (byte 0 in bits 7..0), `width` wide.
fn le_bits(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, x) in bytes.iter().enumerate() {
        b.0[i / 8] |= u64::from(*x) << (8 * (i % 8));
    }
    b
}

/// Frames of every head the engine sends (data, SACK, NACK, PROBE), data
/// payloads of 0, 1, random, MTU - 1 and MTU bytes from every offset of
/// the host's first beat, beats drawn around the head's end, the payload's
/// end and the ICRC's, for `small` (8-byte beats) and `default` (64): the
/// beat's bytes, keep and last are the model's `frame_beat` of the model's
/// frame every cycle under Icarus, with the buffer beats outside the
/// payload random, so a lane that read them would show.
#[test]
fn icarus_frame_beats_are_the_models() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let shared: Rc<RefCell<(Vec<u8>, u64, u64)>> = Rc::new(RefCell::new((Vec::new(), 0, 0)));
    let golden = shared.clone();
    let build = move |p: &model::TxEngineParams| {
        let sz = BeatSizes::of(p);
        let g = golden.clone();
        let bb = sz.bb as usize;
        let f = move |_: &dyn Fn(&str) -> Bits| {
            let (frame, k, hi_beat) = g.borrow().clone();
            let (data, keep, last) = model::frame_beat(&frame, k as usize, bb);
            vec![
                ("data".to_string(), le_bits(8 * bb as u32, &data)),
                ("keep".to_string(), Bits::from_u64(64, u64::from(keep))),
                ("last".to_string(), Bits::from_u64(64, u64::from(last))),
                ("hi_beat".to_string(), Bits::from_u64(64, hi_beat)),
            ]
        };
        let dut = Registered { name: "tx_frame_beat", ports: beat_ports(&sz), f: Box::new(f), out: Vec::new() };
        (beat_module(&sz), dut)
    };
    replay_unit("tx_engine frame beats", 0xbea7, build, move |p, ports, rng, cycle, ins| {
        use mrnic_proto::layouts::{data, nack, probe, sack};
        let sz = BeatSizes::of(p);
        let (bb, mtu) = (u64::from(sz.bb), u64::from(sz.payload_max));
        let hdr = [data::LAYOUT.len, sack::LAYOUT.len, nack::LAYOUT.len, probe::LAYOUT.len][rng.below(4) as usize];
        let hlen = (mrnic_proto::packet::NET_OVERHEAD + hdr) as u64;
        let plen = if hdr != data::LAYOUT.len {
            0
        } else {
            match rng.below(6) {
                0 => 0,
                1 => 1,
                2 => mtu,
                3 => mtu - 1,
                _ => 1 + rng.below(mtu),
            }
        };
        let skip = rng.below(bb);
        let mut byte = || rng.next_u64() as u8;
        let head: Vec<u8> = (0..hlen).map(|_| byte()).collect();
        let payload: Vec<u8> = (0..plen).map(|_| byte()).collect();
        let icrc = rng.next_u64() as u32;
        let mut frame = head.clone();
        frame.extend_from_slice(&payload);
        frame.extend_from_slice(&icrc.to_be_bytes());
        let beats = (frame.len() as u64).div_ceil(bb);
        let k = match rng.below(5) {
            0 => hlen / bb,
            1 => beats - 1,
            2 => (hlen + plen) / bb,
            3 => ((hlen + plen) / bb).saturating_sub(1),
            _ => rng.below(beats),
        }
        .min(beats - 1);
        // The buffer as the host's beats filled it: payload from `skip`,
        // random bytes around it.
        let nbuf = u64::from(sz.buf_beats()) + 2;
        let mut buf: Vec<u8> = (0..nbuf * bb).map(|_| rng.next_u64() as u8).collect();
        buf[skip as usize..(skip + plen) as usize].copy_from_slice(&payload);
        let pos = skip + k * bb + bb;
        let hi_beat = if pos < hlen { 0 } else { (pos - hlen) / bb };
        let beat = |i: u64| le_bits(8 * sz.bb, &buf[(i * bb) as usize..((i + 1) * bb) as usize]);
        let junk = |rng: &mut Rng| {
            let v: Vec<u8> = (0..bb).map(|_| rng.next_u64() as u8).collect();
            le_bits(8 * sz.bb, &v)
        };
        let lo = if hi_beat == 0 { junk(rng) } else { beat(hi_beat - 1) };
        let hi = beat(hi_beat.min(nbuf - 1));
        let mut hd = head.clone();
        hd.resize(sz.head_max as usize, rng.next_u64() as u8);
        common::set(ports, ins, "rst", u64::from(cycle == 0));
        common::set(ports, ins, "k", k);
        ins[port_index(ports, "head").unwrap()] = le_bits(8 * sz.head_max, &hd);
        common::set(ports, ins, "head_len", hlen);
        common::set(ports, ins, "skip", skip);
        common::set(ports, ins, "payload_len", plen);
        common::set(ports, ins, "icrc", u64::from(icrc));
        ins[port_index(ports, "lo").unwrap()] = lo;
        ins[port_index(ports, "hi").unwrap()] = hi;
        *shared.borrow_mut() = if cycle == 0 { (Vec::new(), 0, 0) } else { (frame, k, hi_beat) };
    });
}

// ------------------------------------------------------ the commit's cut

/// The cut harness's inputs (name, width) for `sz`.
fn cut_inputs(sz: &CutSizes) -> Vec<(&'static str, u32)> {
    vec![
        ("ts", 32),
        ("req_len", 32),
        ("pend_sent", 32),
        ("pend", sz.ptr_bits),
        ("tail", sz.ptr_bits),
        ("next_psn", 24),
        ("cum_acked", 24),
        ("tx_seq", 32),
        ("last_progress", 32),
        ("srtt", 20),
        ("rttvar", 16),
        ("inflight", INFLIGHT_BITS),
        ("cap", 32),
        ("pend_streams", sz.streams_bits),
        ("since_ackreq", sz.since_bits),
        ("unreq_since", 32),
        ("tail_valid", 1),
        ("tail_at", 32),
        ("rack_rtt", 32),
        ("full_after", 1),
    ]
}

/// The cut harness's outputs (`o_<name>`, width) for `sz`.
fn cut_outputs(sz: &CutSizes) -> Vec<(&'static str, u32)> {
    vec![
        ("len", 32),
        ("eom", 1),
        ("ackreq", 1),
        ("pend", sz.ptr_bits),
        ("pend_sent", 32),
        ("pend_streams", sz.streams_bits),
        ("next_psn", 24),
        ("tx_seq", 32),
        ("last_progress", 32),
        ("inflight", INFLIGHT_BITS),
        ("since_ackreq", sz.since_bits),
        ("unreq_since", 32),
        ("tail_valid", 1),
        ("tail_at", 32),
    ]
}

fn cut_ports(sz: &CutSizes) -> Vec<PortDef> {
    let mut v = vec![PortDef::input("rst", 1, "Inputs", "harness input")];
    v.extend(cut_inputs(sz).into_iter().map(|(n, w)| PortDef::input(n, w, "Inputs", "harness input")));
    v.extend(
        cut_outputs(sz)
            .into_iter()
            .map(|(n, w)| PortDef::output(format!("o_{n}"), w, "Outputs", "harness output, registered")),
    );
    v
}

/// The check module: the inputs into `cut`, its outputs registered.
fn cut_module(sz: &CutSizes) -> Module {
    use mrnic_hdl::tx_engine::{cut, CutNets};
    let mut m = Module::new("tx_cut");
    m.describe("test harness: the tx_engine commit's cut of new data between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &cut_ports(sz));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let a = CutNets {
        ts: s("ts"),
        req_len: s("req_len"),
        pend_sent: s("pend_sent"),
        pend: s("pend"),
        tail: s("tail"),
        next_psn: s("next_psn"),
        cum_acked: s("cum_acked"),
        tx_seq: s("tx_seq"),
        last_progress: s("last_progress"),
        srtt: s("srtt"),
        rttvar: s("rttvar"),
        inflight: s("inflight"),
        cap: s("cap"),
        pend_streams: s("pend_streams"),
        since_ackreq: s("since_ackreq"),
        unreq_since: s("unreq_since"),
        tail_valid: s("tail_valid"),
        tail_at: s("tail_at"),
        rack_rtt: s("rack_rtt"),
        full_after: s("full_after"),
    };
    let o = cut(&mut m, "cut", sz, &a);
    let tail_at = m.wire_from(
        "tail_at_shown",
        32,
        "the deadline while armed",
        mux(o.tail_valid.expr(), o.tail_at.expr(), lit(32, 0)),
    );
    register_outputs(
        &mut m,
        &sig,
        vec![
            ("len", o.len),
            ("eom", o.eom),
            ("ackreq", o.ackreq),
            ("pend", o.pend),
            ("pend_sent", o.pend_sent),
            ("pend_streams", o.pend_streams),
            ("next_psn", o.next_psn),
            ("tx_seq", o.tx_seq),
            ("last_progress", o.last_progress),
            ("inflight", o.inflight),
            ("since_ackreq", o.since_ackreq),
            ("unreq_since", o.unreq_since),
            ("tail_valid", o.tail_valid.clone()),
            ("tail_at", tail_at),
        ],
    );
    m
}

/// The model side of the cut: `cut` of last cycle's inputs. The pointers
/// are the harness's `ptr_bits` wide; the model's are free-running, so
/// its `tail` is `pend` plus their distance, and its new `pend` is
/// compared modulo that width. The tail timer's deadline is compared
/// while it is armed (the harness shows 0 otherwise).
fn cut_golden(p: &model::TxEngineParams, ports: Vec<PortDef>) -> Registered {
    let p = p.clone();
    let k = mrnic_model::path_telemetry::Consts::from_config(&p.cfg);
    let pmask = (1u64 << CutSizes::of(&p).ptr_bits) - 1;
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let a = model::CutIn {
            ts: u("ts"),
            req_len: u("req_len"),
            pend: u("pend"),
            tail: u("pend") + ((u("tail").wrapping_sub(u("pend"))) & pmask as u32),
            pend_sent: u("pend_sent"),
            next_psn: u("next_psn"),
            cum_acked: u("cum_acked"),
            tx_seq: u("tx_seq"),
            last_progress: u("last_progress"),
            srtt: u("srtt"),
            rttvar: u("rttvar"),
            inflight: g("inflight").as_u64(),
            cap: u("cap"),
            pend_streams: u("pend_streams"),
            since_ackreq: u("since_ackreq"),
            unreq_since: u("unreq_since"),
            tail_at: (u("tail_valid") == 1).then(|| u("tail_at")),
            rack_rtt: u("rack_rtt"),
            full_after: u("full_after") == 1,
        };
        let o = model::cut(&p, &k, &a);
        vec![
            ("o_len", u64::from(o.len)),
            ("o_eom", u64::from(o.eom)),
            ("o_ackreq", u64::from(o.ackreq)),
            ("o_pend", u64::from(o.pend) & pmask),
            ("o_pend_sent", u64::from(o.pend_sent)),
            ("o_pend_streams", u64::from(o.pend_streams)),
            ("o_next_psn", u64::from(o.next_psn)),
            ("o_tx_seq", u64::from(o.tx_seq)),
            ("o_last_progress", u64::from(o.last_progress)),
            ("o_inflight", o.inflight),
            ("o_since_ackreq", u64::from(o.since_ackreq)),
            ("o_unreq_since", u64::from(o.unreq_since)),
            ("o_tail_valid", u64::from(o.tail_at.is_some())),
            ("o_tail_at", u64::from(o.tail_at.unwrap_or(0))),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
    };
    Registered { name: "tx_cut", ports, f: narrow(f), out: Vec::new() }
}

/// Random cuts around every boundary (the request's rest at, one under
/// and one over the MTU, zero-length requests, the last request of the
/// last stream with bytes to cut, pointers around their wrap, bytes in
/// flight one packet short of the cap, `since_ackreq` one short of
/// `sack_every_packets`, the oldest unrequested packet at its wait, an
/// empty path, the tail timer armed or not, wrapping timestamps and
/// sequence numbers), for `small` and `default`: every output matches
/// the model's `cut` every cycle under Icarus; the module lints clean
/// under Verilator `-Wall`.
#[test]
fn icarus_cut_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let sz = CutSizes::of(p);
        (cut_module(&sz), cut_golden(p, cut_ports(&sz)))
    };
    replay_unit("tx_engine commit cut check", 0xc07, build, |p, ports, rng, cycle, ins| {
        let sz = CutSizes::of(p);
        let mtu = u64::from(sz.mtu);
        // One of the choices, by a random draw taken first.
        let pick = |draw: u64, choices: &[u64]| choices[(draw % choices.len() as u64) as usize];
        let mut put = |name: &str, v: u64| common::set(ports, ins, name, v);
        put("rst", u64::from(cycle == 0));
        let ts = rng.next_u64() & 0xffff_ffff;
        put("ts", ts);
        // The request's rest: at, around and far from the MTU, or nothing.
        let rest = match rng.below(5) {
            0 => 0,
            1 => mtu + rng.below(3) - 1,
            2 => rng.below(mtu),
            3 => rng.below(1 << 32),
            _ => 1 + rng.below(4 * mtu),
        };
        let sent = if rest == 0 { 0 } else { rng.below((1u64 << 32) - rest) };
        put("req_len", (sent + rest) & 0xffff_ffff);
        put("pend_sent", sent);
        // Pointers: tail is pend plus 1..=depth requests, around the wrap.
        let pw = sz.ptr_bits;
        let pend = pick(rng.next_u64(), &[(1 << pw) - 1, 0, rng.below(1 << pw)]);
        let depth = u64::from(p.wq_depth);
        let ahead = pick(rng.next_u64(), &[1, 1, depth, 1 + rng.below(depth)]);
        put("pend", pend);
        put("tail", (pend + ahead) & ((1 << pw) - 1));
        let next_psn = pick(rng.next_u64(), &[0xff_ffff, 0, rng.below(1 << 24)]);
        put("next_psn", next_psn);
        put("cum_acked", if rng.below(2) == 0 { next_psn } else { rng.below(1 << 24) });
        put("tx_seq", pick(rng.next_u64(), &[0xffff_ffff, rng.next_u64() & 0xffff_ffff]));
        put("last_progress", rng.next_u64() & 0xffff_ffff);
        // Often small enough that srtt / 4 bounds ACKREQ's wait below rto_min / 4.
        let srtt =
            pick(rng.next_u64(), &[0, (1 << 20) - 1, rng.below(1 << 20), rng.below(4 * u64::from(sz.unreq_wait) + 8)]);
        put("srtt", srtt);
        put("rttvar", pick(rng.next_u64(), &[0, (1 << 16) - 1, rng.below(1 << 16)]));
        put("rack_rtt", pick(rng.next_u64(), &[0, 0xffff_ffff, rng.below(1 << 21), rng.next_u64() & 0xffff_ffff]));
        // In flight below the cap, often within a packet of it.
        let cap = pick(rng.next_u64(), &[mtu, 0xffff_ffff, mtu + rng.below(1 << 24)]);
        let inflight = match rng.below(3) {
            0 => cap - 1 - rng.below(cap.min(2 * mtu)),
            1 => 0,
            _ => rng.below(cap),
        };
        put("cap", cap);
        put("inflight", inflight);
        let streams = u64::from(p.streams);
        put("pend_streams", pick(rng.next_u64(), &[1, streams, 1 + rng.below(streams)]));
        let every = u64::from(sz.sack_every);
        put("since_ackreq", pick(rng.next_u64(), &[0, every - 1, rng.below(every)]));
        let wait = u64::from(sz.unreq_wait).min(srtt / 4);
        let unreq = match rng.below(3) {
            0 => (ts + 1 + rng.below(3)).wrapping_sub(wait + 2),
            1 => rng.next_u64(),
            _ => ts,
        } & 0xffff_ffff;
        put("unreq_since", unreq);
        put("tail_valid", rng.below(2));
        put("tail_at", rng.next_u64() & 0xffff_ffff);
        put("full_after", u64::from(rng.below(4) == 0));
    });
}

// ------------------------------------------------------ the completion walk

fn walk_ports(sz: &WalkSizes) -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output, registered");
    let (sb, pb, cb) = (sz.stream_bits, sz.ptr_bits, sz.count_bits);
    vec![
        i("rst", 1),
        i("fail", 1),
        i("touched", sz.streams),
        i("stream", sb),
        i("culprit_valid", 1),
        i("culprit_stream", sb),
        i("culprit_slot", pb),
        i("culprit_pending", 1),
        i("st", 4),
        i("head", pb),
        i("pend", pb),
        i("tail", pb),
        i("issued", cb),
        i("acked", cb),
        o("o_more", 1),
        o("o_touched", sz.streams),
        o("o_stream", sb),
        o("o_cqe_valid", 1),
        o("o_cqe_status", 4),
        o("o_advance", 1),
        o("o_drain", 1),
        o("o_equalize", 1),
    ]
}

/// The check module: the inputs into `walk_step`, its outputs registered;
/// the next state shown only while the walk goes on, and `touched` only
/// for a SACK's walk (else they mean nothing).
fn walk_module(sz: &WalkSizes) -> Module {
    use mrnic_hdl::tx_engine::{walk_step, WalkNets};
    let mut m = Module::new("tx_walk");
    m.describe("test harness: the tx_engine completion walk's step between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &walk_ports(sz));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let a = WalkNets {
        fail: s("fail"),
        touched: s("touched"),
        stream: s("stream"),
        culprit_valid: s("culprit_valid"),
        culprit_stream: s("culprit_stream"),
        culprit_slot: s("culprit_slot"),
        culprit_pending: s("culprit_pending"),
        st: s("st"),
        head: s("head"),
        pend: s("pend"),
        tail: s("tail"),
        issued: s("issued"),
        acked: s("acked"),
    };
    let o = walk_step(&mut m, "walk", sz, &a);
    let shown = |m: &mut Module, n: &str, v: &Signal, when: Expr| {
        m.wire_from(&format!("{n}_shown"), v.width(), "shown when meaningful", mux(when, v.expr(), lit(v.width(), 0)))
    };
    let sack_more = o.more.expr().logic_and(sig["fail"].expr().logic_not());
    let touched = shown(&mut m, "touched", &o.touched, sack_more);
    let stream = shown(&mut m, "stream", &o.stream, o.more.expr());
    let status = shown(&mut m, "cqe_status", &o.cqe_status, o.cqe_valid.expr());
    register_outputs(
        &mut m,
        &sig,
        vec![
            ("more", o.more),
            ("touched", touched),
            ("stream", stream),
            ("cqe_valid", o.cqe_valid),
            ("cqe_status", status),
            ("advance", o.advance),
            ("drain", o.drain),
            ("equalize", o.equalize),
        ],
    );
    m
}

/// The model side of the walk's step: `walk_next` of last cycle's inputs.
/// The pointers and counts are the harness's widths; the model compares
/// them only for equality, which their free-running values keep modulo
/// those widths.
fn walk_golden(p: &model::TxEngineParams, ports: Vec<PortDef>) -> Registered {
    let streams = p.streams;
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let stream = u("stream");
        let w = if u("fail") == 1 {
            model::Walk::Fail {
                conn: 0,
                culprit: (u("culprit_valid") == 1).then(|| (u("culprit_stream"), u("culprit_slot"))),
                culprit_pending: u("culprit_pending") == 1,
                st: u("st") as u8,
                stream,
            }
        } else {
            model::Walk::Done { conn: 0, touched: (0..streams).map(|i| g("touched").bit(i)).collect(), stream }
        };
        let r = model::WalkRead {
            head: u("head"),
            pend: u("pend"),
            tail: u("tail"),
            issued: u("issued"),
            acked: u("acked"),
        };
        let (next, act) = model::walk_next(&w, &r, streams);
        let (touched, stream) = match &next {
            Some(model::Walk::Done { touched, stream, .. }) => {
                (touched.iter().enumerate().map(|(i, &t)| u64::from(t) << i).sum(), u64::from(*stream))
            }
            Some(model::Walk::Fail { stream, .. }) => (0, u64::from(*stream)),
            None => (0, 0),
        };
        vec![
            ("o_more", u64::from(next.is_some())),
            ("o_touched", touched),
            ("o_stream", stream),
            ("o_cqe_valid", u64::from(act.cqe.is_some())),
            ("o_cqe_status", u64::from(act.cqe.unwrap_or(0))),
            ("o_advance", u64::from(act.advance)),
            ("o_drain", u64::from(act.drain)),
            ("o_equalize", u64::from(act.equalize)),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
    };
    Registered { name: "tx_walk", ports, f: narrow(f), out: Vec::new() }
}

/// Random walk steps of both kinds (a SACK's walk with its looked-at
/// stream among the touched ones and bits below it cleared, as the walk
/// keeps them; the head at, before and past `pend`; counts equal or not,
/// around their wrap; a failure's walk with and without a culprit, the
/// culprit pending or done, the looked-at slot the culprit's or not, the
/// stream empty or not, the last stream), for `small` and `default`:
/// every output matches the model's `walk_next` every cycle under
/// Icarus; the module lints clean under Verilator `-Wall`.
#[test]
fn icarus_walk_step_is_the_models() {
    let build = |p: &model::TxEngineParams| {
        let sz = WalkSizes::of(p);
        (walk_module(&sz), walk_golden(p, walk_ports(&sz)))
    };
    replay_unit("tx_engine completion walk step check", 0xa1c, build, |p, ports, rng, cycle, ins| {
        let sz = WalkSizes::of(p);
        let n = u64::from(sz.streams);
        let mut put = |name: &str, v: u64| common::set(ports, ins, name, v);
        put("rst", u64::from(cycle == 0));
        let fail = rng.below(2);
        put("fail", fail);
        let stream = if rng.below(4) == 0 { n - 1 } else { rng.below(n) };
        put("stream", stream);
        // Touched: the looked-at stream and random ones above it.
        let above = if rng.below(3) == 0 { 0 } else { rng.next_u64() };
        let mask = if n == 64 { u64::MAX } else { (1 << n) - 1 };
        put("touched", ((above << stream) | (1 << stream)) & mask);
        let pw = sz.ptr_bits;
        let pm = (1u64 << pw) - 1;
        let head = if rng.below(3) == 0 { pm } else { rng.below(1 << pw) };
        let pend = (head + [0, 1, rng.below(u64::from(p.wq_depth) + 1)][rng.below(3) as usize]) & pm;
        let tail = if rng.below(3) == 0 { head } else { (pend + rng.below(u64::from(p.wq_depth) + 1)) & pm };
        put("head", head);
        put("pend", pend);
        put("tail", tail);
        let cm = (1u64 << sz.count_bits) - 1;
        let issued = if rng.below(3) == 0 { cm } else { rng.next_u64() & cm };
        put("issued", issued);
        put("acked", if rng.below(2) == 0 { issued } else { (issued + 1 + rng.below(cm)) & cm });
        let culprit = rng.below(4) != 0;
        put("culprit_valid", u64::from(culprit));
        put("culprit_stream", if rng.below(2) == 0 { stream } else { rng.below(n) });
        put("culprit_slot", if rng.below(2) == 0 { head } else { rng.below(1 << pw) });
        put("culprit_pending", u64::from(culprit && rng.below(3) == 0));
        put("st", 1 + rng.below(6));
    });
}

// ------------------------------------------------------ the post

fn post_ports(p: &model::TxEngineParams) -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output, registered");
    let pb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
    let sb = CutSizes::of(p).streams_bits;
    vec![
        i("rst", 1),
        i("consumes", 1),
        i("live", 1),
        i("flush_room", 1),
        i("head", pb),
        i("pend", pb),
        i("tail", pb),
        i("next_msn", 24),
        i("next_rq_seq", 24),
        i("pend_streams", sb),
        o("o_take", 1),
        o("o_flush", 1),
        o("o_write", 1),
        o("o_msn", 24),
        o("o_rq_seq", 24),
        o("o_tail", pb),
        o("o_next_msn", 24),
        o("o_next_rq_seq", 24),
        o("o_pend_streams", sb),
    ]
}

/// The check module: the inputs into `post_rule`, its outputs registered,
/// the values written shown only with `write`.
fn post_module(p: &model::TxEngineParams) -> Module {
    use mrnic_hdl::tx_engine::{post_rule, PostNets};
    let mut m = Module::new("tx_post");
    m.describe("test harness: the tx_engine post of a work request between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &post_ports(p));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let a = PostNets {
        consumes: s("consumes"),
        live: s("live"),
        flush_room: s("flush_room"),
        head: s("head"),
        pend: s("pend"),
        tail: s("tail"),
        next_msn: s("next_msn"),
        next_rq_seq: s("next_rq_seq"),
        pend_streams: s("pend_streams"),
    };
    let o = post_rule(&mut m, "post", p.wq_depth, &a);
    let mut outs = vec![("take", o.take), ("flush", o.flush), ("write", o.write.clone())];
    for (port, v) in [
        ("msn", o.msn),
        ("rq_seq", o.rq_seq),
        ("tail", o.tail),
        ("next_msn", o.next_msn),
        ("next_rq_seq", o.next_rq_seq),
        ("pend_streams", o.pend_streams),
    ] {
        let e = mux(o.write.expr(), v.expr(), lit(v.width(), 0));
        outs.push((port, m.wire_from(&format!("{port}_shown"), v.width(), "shown with write", e)));
    }
    register_outputs(&mut m, &sig, outs);
    m
}

/// The model side of the post: `post_rule` of last cycle's inputs; the
/// model's free-running pointers are `head` plus the harness's distances.
fn post_golden(p: &model::TxEngineParams, ports: Vec<PortDef>) -> Registered {
    let depth = p.wq_depth;
    let pm = (1u32 << mrnic_hdl::tx_engine::stream_ptr_bits(depth)) - 1;
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let head = u("head");
        let a = model::PostIn {
            consumes: u("consumes") == 1,
            live: u("live") == 1,
            flush_room: u("flush_room") == 1,
            head,
            pend: head + (u("pend").wrapping_sub(head) & pm),
            tail: head + (u("tail").wrapping_sub(head) & pm),
            next_msn: u("next_msn"),
            next_rq_seq: u("next_rq_seq"),
            pend_streams: u("pend_streams"),
        };
        let o = model::post_rule(depth, &a);
        let shown = |v: u32| if o.write { u64::from(v) } else { 0 };
        vec![
            ("o_take", u64::from(o.take)),
            ("o_flush", u64::from(o.flush)),
            ("o_write", u64::from(o.write)),
            ("o_msn", shown(o.msn)),
            ("o_rq_seq", shown(o.rq_seq)),
            ("o_tail", shown(o.tail & pm)),
            ("o_next_msn", shown(o.next_msn)),
            ("o_next_rq_seq", shown(o.next_rq_seq)),
            ("o_pend_streams", shown(o.pend_streams)),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
    };
    Registered { name: "tx_post", ports, f: narrow(f), out: Vec::new() }
}

/// Random posts (a connection live or not, a completion with room or
/// not, queues empty, one short of full and full with pointers around
/// their wrap, `pend` at and before `tail`, sequence numbers at their
/// wrap, requests that consume a receive or not), for `small` and
/// `default`: every output matches the model's `post_rule` every cycle
/// under Icarus; the module lints clean under Verilator `-Wall`.
#[test]
fn icarus_post_is_the_models() {
    let build = |p: &model::TxEngineParams| (post_module(p), post_golden(p, post_ports(p)));
    replay_unit("tx_engine post check", 0x9057, build, |p, ports, rng, cycle, ins| {
        let depth = u64::from(p.wq_depth);
        let pb = mrnic_hdl::tx_engine::stream_ptr_bits(p.wq_depth);
        let pm = (1u64 << pb) - 1;
        let mut put = |name: &str, v: u64| common::set(ports, ins, name, v);
        put("rst", u64::from(cycle == 0));
        put("consumes", rng.below(2));
        put("live", u64::from(rng.below(4) != 0));
        put("flush_room", rng.below(2));
        let head = if rng.below(3) == 0 { pm - rng.below(2) } else { rng.below(pm + 1) };
        let used = [0, depth - 1, depth, rng.below(depth + 1)][rng.below(4) as usize];
        let cut = if rng.below(2) == 0 { used } else { rng.below(used + 1) };
        put("head", head);
        put("tail", (head + used) & pm);
        put("pend", (head + cut) & pm);
        put("next_msn", if rng.below(3) == 0 { 0xff_ffff } else { rng.below(1 << 24) });
        put("next_rq_seq", if rng.below(3) == 0 { 0xff_ffff } else { rng.below(1 << 24) });
        let streams = u64::from(p.streams);
        put("pend_streams", rng.below(streams));
    });
}

// ------------------------------------------------------ a SACK's first pass

/// The fold harness's state fields (name, width): inputs, and outputs as
/// `o_<name>`.
fn fold_state(p: &model::TxEngineParams) -> Vec<(&'static str, u32)> {
    vec![
        ("pkts", CcSizes::of(p).pkts_bits),
        ("bytes", 32),
        ("rtt_ok", 1),
        ("rack_valid", 1),
        ("rack_sent", 32),
        ("rack_rtt", 32),
        ("delivered", p.paths),
        ("max_seq", 32),
    ]
}

fn fold_ports(p: &model::TxEngineParams) -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let mut v = vec![i("rst", 1)];
    v.extend(fold_state(p).into_iter().map(|(n, w)| i(n, w)));
    v.extend([
        i("len", 32),
        i("tx_ts", 16),
        i("sent", 32),
        i("tx_seq", 32),
        i("phys", p.path_bits),
        i("rnr_resend", 1),
        i("resent", 1),
        i("rnr_backed_off", 1),
        i("echo_ts", 16),
        i("ts", 32),
    ]);
    v.extend(
        fold_state(p)
            .into_iter()
            .map(|(n, w)| PortDef::output(format!("o_{n}"), w, "Outputs", "harness output, registered")),
    );
    v
}

/// The check module: the inputs into `sack_fold`, its outputs registered,
/// RACK's send shown only while it has one.
fn fold_module(p: &model::TxEngineParams) -> Module {
    use mrnic_hdl::tx_engine::{sack_fold, AckedSlotNets, SackFoldNets};
    let mut m = Module::new("tx_sack_fold");
    m.describe("test harness: a tx_engine SACK's first pass, one slot, between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &fold_ports(p));
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let f = SackFoldNets {
        pkts: s("pkts"),
        bytes: s("bytes"),
        rtt_ok: s("rtt_ok"),
        rack_valid: s("rack_valid"),
        rack_sent: s("rack_sent"),
        rack_rtt: s("rack_rtt"),
        delivered: s("delivered"),
        max_seq: s("max_seq"),
    };
    let slot = AckedSlotNets {
        len: s("len"),
        tx_ts: s("tx_ts"),
        sent: s("sent"),
        tx_seq: s("tx_seq"),
        phys: s("phys"),
        rnr_resend: s("rnr_resend"),
        resent: s("resent"),
        rnr_backed_off: s("rnr_backed_off"),
    };
    let o = sack_fold(&mut m, "fold", &f, &slot, &s("echo_ts"), &s("ts"));
    let shown = |m: &mut Module, n: &str, v: &Signal| {
        m.wire_from(
            &format!("{n}_shown"),
            v.width(),
            "shown while valid",
            mux(o.rack_valid.expr(), v.expr(), lit(v.width(), 0)),
        )
    };
    let (sent, rtt) = (shown(&mut m, "rack_sent", &o.rack_sent), shown(&mut m, "rack_rtt", &o.rack_rtt));
    let outs = vec![
        ("pkts", o.pkts),
        ("bytes", o.bytes),
        ("rtt_ok", o.rtt_ok),
        ("rack_valid", o.rack_valid),
        ("rack_sent", sent),
        ("rack_rtt", rtt),
        ("delivered", o.delivered),
        ("max_seq", o.max_seq),
    ];
    register_outputs(&mut m, &sig, outs);
    m
}

/// The model side of the first pass: `sack_fold` of last cycle's inputs.
fn fold_golden(ports: Vec<PortDef>) -> Registered {
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let f = model::SackFold {
            pkts: u("pkts"),
            bytes: u("bytes"),
            rtt_ok: u("rtt_ok") == 1,
            rack_sent: (u("rack_valid") == 1).then(|| u("rack_sent")),
            rack_rtt: u("rack_rtt"),
            delivered: u("delivered"),
            max_seq: u("max_seq"),
        };
        let slot = model::AckedSlot {
            len: u("len"),
            tx_ts: u("tx_ts") as u16,
            sent: u("sent"),
            tx_seq: u("tx_seq"),
            phys: u("phys"),
            rnr_resend: u("rnr_resend") == 1,
            resent: u("resent") == 1,
            rnr_backed_off: u("rnr_backed_off") == 1,
        };
        let o = model::sack_fold(&f, &slot, u("echo_ts") as u16, u("ts"));
        let valid = o.rack_sent.is_some();
        vec![
            ("o_pkts", u64::from(o.pkts)),
            ("o_bytes", u64::from(o.bytes)),
            ("o_rtt_ok", u64::from(o.rtt_ok)),
            ("o_rack_valid", u64::from(valid)),
            ("o_rack_sent", u64::from(o.rack_sent.unwrap_or(0))),
            ("o_rack_rtt", if valid { u64::from(o.rack_rtt) } else { 0 }),
            ("o_delivered", u64::from(o.delivered)),
            ("o_max_seq", u64::from(o.max_seq)),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
    };
    Registered { name: "tx_sack_fold", ports, f: narrow(f), out: Vec::new() }
}

/// Random slots folded into random passes (the echoed timestamp the
/// slot's or not, first transmissions and retransmissions, RNR resends
/// and back-offs, sends and tx_seqs at, just before and after RACK's and
/// acked_seq's around the 32-bit wrap, no RACK send yet, every physical
/// path), for `small` and `default`: every output matches the model's
/// `sack_fold` every cycle under Icarus; the module lints clean under
/// Verilator `-Wall`.
#[test]
fn icarus_sack_fold_is_the_models() {
    let build = |p: &model::TxEngineParams| (fold_module(p), fold_golden(fold_ports(p)));
    replay_unit("tx_engine SACK first pass check", 0x5ac, build, |p, ports, rng, cycle, ins| {
        let pkb = CcSizes::of(p).pkts_bits;
        let mut put = |name: &str, v: u64| common::set(ports, ins, name, v);
        put("rst", u64::from(cycle == 0));
        // Counts below what a pass can reach.
        put("pkts", rng.below((1 << pkb) - 1));
        put("bytes", rng.below(1 << 24));
        put("rtt_ok", rng.below(2));
        put("rack_valid", u64::from(rng.below(4) != 0));
        let rack = rng.next_u64() & 0xffff_ffff;
        put("rack_sent", rack);
        put("rack_rtt", rng.next_u64() & 0xffff_ffff);
        put("delivered", rng.below(1 << p.paths));
        let max_seq = rng.next_u64() & 0xffff_ffff;
        put("max_seq", max_seq);
        put("len", rng.below(u64::from(p.cfg.transport.mtu) + 1));
        let tx_ts = rng.below(1 << 16);
        put("tx_ts", tx_ts);
        put("echo_ts", if rng.below(2) == 0 { tx_ts } else { rng.below(1 << 16) });
        // Around RACK's send and acked_seq, and half the space away.
        let near = |rng: &mut Rng, x: u64| match rng.below(4) {
            0 => (x + rng.below(5)).wrapping_sub(2) & 0xffff_ffff,
            1 => (x + (1 << 31) + rng.below(3)).wrapping_sub(1) & 0xffff_ffff,
            _ => rng.next_u64() & 0xffff_ffff,
        };
        let sent = near(rng, rack);
        put("sent", sent);
        put("tx_seq", near(rng, max_seq.wrapping_sub(1)));
        put("phys", rng.below(u64::from(p.paths)));
        put("rnr_resend", u64::from(rng.below(4) == 0));
        put("resent", rng.below(2));
        put("rnr_backed_off", u64::from(rng.below(4) == 0));
        put("ts", (sent + rng.below(1 << 20)) & 0xffff_ffff);
    });
}

// ------------------------------------------------------ a SACK's window

fn window_ports() -> Vec<PortDef> {
    let i = |n: &str, w: u32| PortDef::input(n, w, "Inputs", "harness input");
    let o = |n: &str, w: u32| PortDef::output(n, w, "Outputs", "harness output, registered");
    vec![
        i("rst", 1),
        i("next_psn", 24),
        i("cum_acked", 24),
        i("cum_psn", 24),
        i("bitmap", 256),
        i("d", 24),
        o("o_stale", 1),
        o("o_acks", 1),
    ]
}

/// The check module: the inputs into `sack_window`, its outputs
/// registered, `acks` shown only for a SACK that is not stale.
fn window_module() -> Module {
    use mrnic_hdl::tx_engine::sack_window;
    let mut m = Module::new("tx_sack_window");
    m.describe("test harness: a tx_engine SACK's window between registers");
    let (clk, sig) = mrnic_hdl::ports::declare(&mut m, &window_ports());
    m.clock_domain(&clk, &sig["rst"]);
    let s = |n: &str| -> Signal { sig[n].clone() };
    let o = sack_window(&mut m, "win", &s("next_psn"), &s("cum_acked"), &s("cum_psn"), &s("bitmap"), &s("d"));
    let acks =
        m.wire_from("acks_shown", 1, "shown when not stale", o.acks.expr().logic_and(o.stale.expr().logic_not()));
    register_outputs(&mut m, &sig, vec![("stale", o.stale), ("acks", acks)]);
    m
}

/// The model side: `sack_window`, then `sack_acks` at the asked offset.
fn window_golden(ports: Vec<PortDef>) -> Registered {
    let f = move |g: &dyn Fn(&str) -> Bits| {
        let u = |n: &str| g(n).as_u64() as u32;
        let b = g("bitmap");
        let bitmap = [0, 1, 2, 3].map(|k| b.0.get(k).copied().unwrap_or(0));
        let rel = model::sack_window(u("next_psn"), u("cum_acked"), u("cum_psn"), bitmap);
        vec![
            ("o_stale".to_string(), u64::from(rel.is_none())),
            ("o_acks".to_string(), u64::from(rel.is_some_and(|r| model::sack_acks(r, bitmap, u("d"))))),
        ]
    };
    Registered { name: "tx_sack_window", ports, f: narrow(f), out: Vec::new() }
}

/// Random SACKs against random windows (spans up to 300 psns; the
/// cumulative psn before, at, inside, at the end of and past the window,
/// across the 24-bit wrap; empty, sparse and full bitmaps, the highest
/// bit landing at and around the window's end; offsets around the
/// cumulative psn and the bitmap's ends), for `small` and `default`:
/// both outputs match the model's `sack_window` and `sack_acks` every
/// cycle under Icarus; the module lints clean under Verilator `-Wall`.
#[test]
fn icarus_sack_window_is_the_models() {
    let build = |_: &model::TxEngineParams| (window_module(), window_golden(window_ports()));
    replay_unit("tx_engine SACK window check", 0x5ac2, build, |_, ports, rng, cycle, ins| {
        let m24 = (1u64 << 24) - 1;
        let set = |ins: &mut Vec<Bits>, name: &str, v: u64| common::set(ports, ins, name, v);
        set(ins, "rst", u64::from(cycle == 0));
        let cum_acked = if rng.below(3) == 0 { m24 - rng.below(300) } else { rng.below(1 << 24) };
        let span = [0, 1, 256, 257, rng.below(300)][rng.below(5) as usize];
        set(ins, "cum_acked", cum_acked);
        set(ins, "next_psn", (cum_acked + span) & m24);
        let rel: i64 = match rng.below(5) {
            0 => -(1 + rng.below(300) as i64),
            1 => span as i64,
            2 => span as i64 + 1 + rng.below(3) as i64,
            3 => rng.below(1 << 24) as i64,
            _ => rng.below(span + 1) as i64,
        };
        set(ins, "cum_psn", (cum_acked as i64 + rel) as u64 & m24);
        let mut words = [0u64; 4];
        match rng.below(4) {
            0 => {}
            1 => words = [u64::MAX; 4],
            2 => {
                // The highest bit at, just before or just after the end.
                let end = span as i64 - rel - 1 + rng.below(3) as i64 - 1;
                if (0..256).contains(&end) {
                    words[(end / 64) as usize] |= 1 << (end % 64);
                }
                words[0] |= rng.next_u64() & rng.next_u64();
            }
            _ => words = [0; 4].map(|_| rng.next_u64() & rng.next_u64()),
        }
        let idx = port_index(ports, "bitmap").unwrap();
        ins[idx] = Bits::zero(256);
        ins[idx].set_words(256, &words);
        let d = match rng.below(3) {
            0 => (rel + rng.below(5) as i64 - 2).max(0) as u64,
            1 => (rel + 256 + rng.below(5) as i64 - 2).max(0) as u64,
            _ => rng.below(span.max(1)),
        };
        set(ins, "d", d & m24);
    });
}
