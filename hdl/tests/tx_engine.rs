//! The first piece of the `tx_engine` generator, the frame builder, through
//! the real tools: for each transport header the engine sends (SACK, NACK,
//! PROBE, and the data header in both variants), a check module built from
//! `mrnic_hdl::tx_engine`'s functions registers the whole frame (Ethernet,
//! IPv4 with its checksum, UDP with its checksum, the header placed from
//! proto's field table, the ICRC); Icarus replays random field values on it
//! against the model's `build_frame` of the model's header, every byte
//! compared every cycle; a second harness streams random payloads through
//! the payload digest (8- and 64-byte beats) and compares the IPv4 header,
//! the UDP header and the ICRC with the model's frame every cycle. The
//! check modules lint clean under Verilator with
//! every warning, compile under `iverilog -g2005` and synthesize under Yosys
//! without latches.
//!
//! The `tx_engine` block generator itself (ports from the model's
//! `ports()`, the cycle timing) is not built yet: docs/architecture.md.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use common::{have, iverilog_compile, replay, verilator_lint, yosys_no_latches, Rng, Scratch};
use mrnic_hdl::tx_engine::{data_header, frame, frame_bytes, nack_header, probe_header, sack_header, NetFields};
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
    yosys_no_latches(&dir, &file, Kind::Sack.name());
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

fn be_bits(width: u32, bytes: &[u8]) -> Bits {
    let mut b = Bits::zero(width);
    for (i, &x) in bytes.iter().rev().enumerate() {
        b.0[i / 8] |= u64::from(x) << (8 * (i % 8));
    }
    b
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
    for bb in [8u32, 64] {
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
    }
}
