//! The generated `rx_parser` through the real tools for `small` (64-bit) and
//! `default` (512-bit): Verilator lint with every warning and no waivers,
//! Icarus in Verilog-2005 mode, Yosys `synth_xilinx` with no latches, and a
//! replay of the model's cycle-by-cycle vectors (random frames, bad ones
//! included, idles and backpressure) on Icarus, every output compared every
//! cycle. Plus the CRC arithmetic the RTL relies on, checked against the
//! `crc` crate.
//!
//! A missing tool skips the test with a message, except under CI=true.

use std::fmt::Write as _;
use std::process::Command;

use mrnic_hdl::rx_parser::{crc_equations, generate, raw_update, unfeed_zeros};
use mrnic_hdl::Dir;
use mrnic_model::block::{zero_values, Bits, Block, Dir as ModelDir};
use mrnic_model::rx_parser::stimulus::{self, Rng};
use mrnic_model::rx_parser::{port, ports, Reason, RxParser, RxParserParams};
use mrnic_proto::packet::ICRC;
use mrnic_proto::Config;

mod common;
use common::{configs, have, run, Scratch};

const BLOCK: &str = "rx_parser";

#[test]
fn crc_arithmetic_matches_the_crc_crate() {
    let mut rng = Rng::new(11);
    for _ in 0..200 {
        let n = 1 + rng.below(300) as usize;
        let msg: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        // Initial value as the first four bytes inverted.
        let mut m2 = msg.clone();
        for b in m2.iter_mut().take(4) {
            *b ^= 0xff;
        }
        let mut padded = vec![0u8; rng.below(9) as usize];
        padded.extend_from_slice(&m2);
        let z = rng.below(64) as usize;
        padded.extend(std::iter::repeat_n(0, z));
        let raw = unfeed_zeros(raw_update(0, &padded), z);
        if n >= 4 {
            assert_eq!(!raw, ICRC.checksum(&msg), "{n} bytes, {z} zeros");
        }
    }
    // The parallel equations are the serial update.
    for bytes in [8usize, 64] {
        let eq = crc_equations(bytes);
        for _ in 0..20 {
            let r = rng.next_u64() as u32;
            let d: Vec<u8> = (0..bytes).map(|_| rng.next_u64() as u8).collect();
            let mut out = 0u32;
            for (j, (st, dd)) in eq.iter().enumerate() {
                let mut v = st.iter().fold(0, |a, &i| a ^ (r >> i & 1));
                v ^= dd.iter().fold(0, |a, &i| a ^ (d[i as usize / 8] as u32 >> (i % 8) & 1));
                out |= v << j;
            }
            assert_eq!(out, raw_update(r, &d));
        }
    }
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in configs() {
        let m = generate(&cfg).unwrap();
        let p = RxParserParams::from_config(&cfg).unwrap();
        let rtl = m.ports();
        assert_eq!(rtl[0].name, "clk");
        let model = ports(&p);
        assert_eq!(rtl.len(), model.len() + 1);
        for (r, d) in rtl[1..].iter().zip(&model) {
            assert_eq!(r.name, d.name);
            assert_eq!(r.width, d.width, "{}", d.name);
            let dir = if d.dir == ModelDir::In { Dir::Input } else { Dir::Output };
            assert_eq!(r.dir, dir, "{}", d.name);
        }
        assert!(m.signature().comb_paths.is_empty(), "{:?}", m.signature().comb_paths);
    }
}

#[test]
fn verilator_lints_clean() {
    common::verilator_lints_clean(BLOCK, &configs());
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    common::iverilog_compiles(BLOCK, &configs());
}

#[test]
fn yosys_synthesizes_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    common::yosys_synthesizes_each(BLOCK);
}

/// Runs the model on random traffic and records every port every cycle.
fn vectors(p: RxParserParams, seed: u64, frames: usize) -> (Vec<Vec<Bits>>, Vec<Vec<Bits>>) {
    let mut rng = Rng::new(seed);
    let mut dut = RxParser::new(p);
    let defs = dut.ports().to_vec();
    let mut stims = Vec::new();
    for _ in 0..frames {
        if rng.chance(35) {
            let r = Reason::ALL[rng.below(Reason::ALL.len() as u64) as usize];
            stims.push(stimulus::faulty(&mut rng, r, p.mtu, 4797, p.bytes()));
        } else {
            stims.push(stimulus::good(&mut rng, p.mtu, 4797));
        }
    }
    let beats: Vec<_> = stims.iter().flat_map(|s| stimulus::beats(s, p.bytes(), &mut rng)).collect();
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    let mut i = 0;
    let mut cycle = 0;
    while i < beats.len() || cycle < 3 || ins.len() < beats.len() + 40 {
        let mut inp = zero_values(&defs);
        inp[port::RST] = Bits::from_u64(1, (cycle < 2) as u64);
        inp[port::CFG_UDP_PORT] = Bits::from_u64(16, 4797);
        inp[port::M_HDR_READY] = Bits::from_u64(1, !rng.chance(25) as u64);
        inp[port::M_TREADY] = Bits::from_u64(1, !rng.chance(25) as u64);
        let valid = cycle >= 2 && i < beats.len() && !rng.chance(20);
        if i < beats.len() {
            let b = &beats[i];
            let mut d = Bits::zero(p.data_bits);
            for (n, &x) in b.data.iter().enumerate() {
                d.0[n / 8] |= (x as u64) << (8 * (n % 8));
            }
            inp[port::S_TDATA] = d;
            let mut k = Bits::zero(p.bytes() as u32);
            k.0[0] = b.keep as u64;
            if k.0.len() > 1 {
                k.0[1] = (b.keep >> 64) as u64;
            }
            inp[port::S_TKEEP] = k;
            inp[port::S_TLAST] = Bits::from_u64(1, b.last as u64);
            inp[port::S_TUSER] = Bits::from_u64(1, b.user as u64);
            // Any plane, changing per beat: only the deciding beat's is kept.
            inp[port::S_TID] = Bits::from_u64(3, rng.below(8));
        }
        inp[port::S_TVALID] = Bits::from_u64(1, valid as u64);
        let mut out = zero_values(&defs);
        dut.eval(&inp, &mut out);
        if valid && out[port::S_TREADY].bit(0) {
            i += 1;
        }
        dut.tick(&inp);
        ins.push(inp);
        outs.push(out);
        cycle += 1;
    }
    (ins, outs)
}

fn hex_of(values: &[Bits], widths: &[u32]) -> String {
    let mut bits: Vec<bool> = Vec::new();
    for (v, &w) in values.iter().zip(widths) {
        for i in (0..w).rev() {
            bits.push(v.bit(i));
        }
    }
    while bits.len() % 4 != 0 {
        bits.insert(0, false);
    }
    bits.chunks(4).map(|c| format!("{:x}", c.iter().fold(0, |a, &b| (a << 1) | b as u8))).collect()
}

fn replay(cfg: &Config, seed: u64, frames: usize) {
    let p = RxParserParams::from_config(cfg).unwrap();
    let defs = ports(&p);
    let (ins, outs) = vectors(p, seed, frames);
    let in_idx: Vec<usize> = (0..defs.len()).filter(|&i| defs[i].dir == ModelDir::In).collect();
    let out_idx: Vec<usize> = (0..defs.len()).filter(|&i| defs[i].dir == ModelDir::Out).collect();
    let in_w: u32 = in_idx.iter().map(|&i| defs[i].width).sum();
    let out_w: u32 = out_idx.iter().map(|&i| defs[i].width).sum();
    let dir = Scratch::new(&format!("replay-{}-{seed}", cfg.name));
    let file = dir.write(BLOCK, cfg);
    let mut vin = String::new();
    let mut vout = String::new();
    for (a, b) in ins.iter().zip(&outs) {
        let iv: Vec<Bits> = in_idx.iter().map(|&i| a[i].clone()).collect();
        let ov: Vec<Bits> = out_idx.iter().map(|&i| b[i].clone()).collect();
        writeln!(vin, "{}", hex_of(&iv, &in_idx.iter().map(|&i| defs[i].width).collect::<Vec<_>>())).unwrap();
        writeln!(vout, "{}", hex_of(&ov, &out_idx.iter().map(|&i| defs[i].width).collect::<Vec<_>>())).unwrap();
    }
    std::fs::write(dir.0.join("in.hex"), vin).unwrap();
    std::fs::write(dir.0.join("out.hex"), vout).unwrap();
    let n = ins.len();
    let mut tb = String::new();
    writeln!(tb, "`timescale 1ns/1ps\nmodule tb;").unwrap();
    writeln!(tb, "reg clk = 1'b0;\nreg [{}:0] vin [0:{}];\nreg [{}:0] vout [0:{}];", in_w - 1, n - 1, out_w - 1, n - 1)
        .unwrap();
    writeln!(tb, "reg [{}:0] inr;\nwire [{}:0] outw;\ninteger i, errors;", in_w - 1, out_w - 1).unwrap();
    let mut conns = vec![".clk(clk)".to_string()];
    let mut at = in_w;
    for &i in &in_idx {
        let w = defs[i].width;
        conns.push(format!(".{}(inr[{}:{}])", defs[i].name, at - 1, at - w));
        at -= w;
    }
    let mut at = out_w;
    for &i in &out_idx {
        let w = defs[i].width;
        conns.push(format!(".{}(outw[{}:{}])", defs[i].name, at - 1, at - w));
        at -= w;
    }
    writeln!(tb, "rx_parser dut ({});", conns.join(", ")).unwrap();
    writeln!(
        tb,
        "initial begin\n  $readmemh(\"{}\", vin);\n  $readmemh(\"{}\", vout);\n  errors = 0;\n  for (i = 0; i < {n}; i = i + 1) begin\n    inr = vin[i];\n    #1;\n    if (i > 0 && outw !== vout[i]) begin\n      errors = errors + 1;\n      if (errors < 4) $display(\"MISMATCH cycle %0d\\n rtl   %h\\n model %h\", i, outw, vout[i]);\n    end\n    clk = 1'b1; #1; clk = 1'b0; #1;\n  end\n  if (errors == 0) $display(\"PASS\"); else $display(\"FAIL %0d\", errors);\n  $finish;\nend\nendmodule",
        dir.0.join("in.hex").display(),
        dir.0.join("out.hex").display()
    )
    .unwrap();
    let tbf = dir.0.join("tb.v");
    std::fs::write(&tbf, tb).unwrap();
    let exe = dir.0.join("sim");
    run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&exe).arg(&tbf).arg(&file));
    let out = run(Command::new("vvp").arg("-n").arg(&exe));
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(log.contains("PASS"), "{} seed {seed}: {log}", cfg.name);
}

#[test]
fn icarus_replays_model_vectors_small() {
    if !have("iverilog", "-V") {
        return;
    }
    for seed in 1..=3 {
        replay(&Config::builtin("small").unwrap(), seed, 40);
    }
}

#[test]
fn icarus_replays_model_vectors_default() {
    if !have("iverilog", "-V") {
        return;
    }
    replay(&Config::builtin("default").unwrap(), 7, 40);
}
