//! The generated `path_selector` through the real tools, for the `small` and
//! `default` configs and a sweep of path counts and read latencies:
//! Verilator lint with every warning on and no waivers, Icarus in
//! Verilog-2005 mode, and Yosys `synth_xilinx` with no latches and the credit
//! memory in block RAM.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

use std::process::Command;

use mrnic_hdl::path_selector::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::Dir as ModelDir;
use mrnic_model::path_selector::{ports, PathSelectorParams};
use mrnic_proto::Config;

mod common;
use common::{have, run, Scratch};

const BLOCK: &str = "path_selector";

/// `small` with other path counts and read latencies.
fn variant(paths: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_p{paths}_l{latency}");
    cfg.transport.paths_per_conn = paths;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    let mut out = vec![Config::builtin("small").unwrap(), Config::builtin("default").unwrap()];
    for paths in [1, 2, 8, 32] {
        for latency in [1, 2] {
            out.push(variant(paths, latency));
        }
    }
    out
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = PathSelectorParams::from_config(&cfg).unwrap();
        let rtl = m.ports();
        assert_eq!(rtl[0].name, "clk");
        let model = ports(&p);
        assert_eq!(rtl.len(), model.len() + 1, "{}", cfg.name);
        for (r, d) in rtl[1..].iter().zip(&model) {
            assert_eq!(r.name, d.name, "{}", cfg.name);
            assert_eq!(r.width, d.width, "{}: {}", cfg.name, d.name);
            let dir = match d.dir {
                ModelDir::In => Dir::Input,
                ModelDir::Out => Dir::Output,
            };
            assert_eq!(r.dir, dir, "{}: {}", cfg.name, d.name);
        }
        // Nothing reaches an output combinationally: the model's eval()
        // ignores its inputs, and so must the RTL.
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module path_selector"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&cfg).command));
    assert!(a.contains(r#"ram_style = "block""#));
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.transport.paths_per_conn = 64;
    match generate(&cfg) {
        Err(GenError::Params(e)) => assert_eq!(e.field, "transport.paths_per_conn"),
        other => panic!("expected a parameter error, got {other:?}"),
    }
    cfg.transport.paths_per_conn = 4;
    cfg.hardware.table_read_latency = 3;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "hardware.table_read_latency"));
}

#[test]
fn verilator_lints_clean() {
    common::verilator_lints_clean(BLOCK, &sweep());
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    common::iverilog_compiles(BLOCK, &sweep());
}

#[test]
fn yosys_synthesizes_without_latches_and_with_block_ram() {
    if !have("yosys", "-V") {
        return;
    }
    for (cfg, stats) in common::yosys_synthesizes_each(BLOCK) {
        assert!(
            stats.contains("RAMB18E1") || stats.contains("RAMB36E1"),
            "{}: the credit memory did not map to block RAM\n{stats}",
            cfg.name
        );
    }
}

/// Icarus replays the model's cycle-by-cycle outputs on the generated RTL:
/// random valid gaps and backpressure, repeated connections (forwarding),
/// credit clears, no-eligible requests and a reset mid-run. Not the lockstep
/// co-simulation (that is `verif/`), a quick guard that needs only iverilog.
#[test]
fn icarus_replays_model_vectors() {
    use mrnic_model::path_selector::{Inputs, PathSelector};
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(1, 2), variant(8, 2), variant(32, 1)] {
        let dir = Scratch::new(&format!("replay-{}", cfg.name));
        let rtl = dir.write(BLOCK, &cfg);
        let p = PathSelectorParams::from_config(&cfg).unwrap();
        let mut dut = PathSelector::new(p);
        let seed = 12345u64;
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut lines = String::new();
        let mut offered: Option<Inputs> = None;
        let paths_mask = if p.paths == 32 { u32::MAX } else { (1 << p.paths) - 1 };
        let cycles = 4000;
        for cycle in 0..cycles {
            let o = dut.outputs();
            if offered.is_none() && rnd() % 100 < 80 {
                offered = Some(Inputs {
                    req_valid: true,
                    req_conn: (rnd() % 3) as u32,
                    req_elig: if rnd() % 8 == 0 { 0 } else { rnd() as u32 & paths_mask },
                    req_weight: (0..p.paths).map(|_| rnd() as u8).collect(),
                    req_clr: if rnd() % 10 == 0 { 1 << (rnd() % u64::from(p.paths)) } else { 0 },
                    ..Inputs::default()
                });
            }
            let mut inp =
                offered.clone().unwrap_or(Inputs { req_weight: vec![0; p.paths as usize], ..Inputs::default() });
            inp.rst = cycle == 0 || cycle == cycles / 2;
            inp.sel_ready = rnd() % 100 < 70;
            let w: String = inp.req_weight.iter().rev().map(|b| format!("{b:02x}")).collect();
            lines += &format!(
                "{:x} {:x} {:x} {:x} {w} {:x} {:x} {:x} {:x} {:x} {:x} {:x}\n",
                inp.rst as u8,
                inp.req_valid as u8,
                inp.req_conn,
                inp.req_elig,
                inp.req_clr,
                inp.sel_ready as u8,
                o.req_ready as u8,
                o.sel_valid as u8,
                o.sel_conn,
                o.sel_path,
                o.sel_none as u8
            );
            if inp.req_valid && o.req_ready {
                offered = None;
            }
            dut.clock(&inp);
        }
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, TB).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog")
            .args(["-g2005", "-o"])
            .arg(&sim)
            .arg(format!("-Ptb.CONNS={}", p.conns))
            .arg(format!("-Ptb.PATHS={}", p.paths))
            .arg(format!("-Ptb.RL={}", p.read_latency))
            .arg(format!("-Ptb.CW={}", p.conn_bits))
            .arg(format!("-Ptb.PW={}", p.path_bits))
            .arg(format!("-Ptb.VEC=\"{}\"", vec.display()))
            .arg(&tb)
            .arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed}):\n{text}", cfg.name);
    }
}

/// Applies one vector line per cycle, compares the outputs before the edge
/// (payload only while m_sel_valid; cycle 0 is the reset from X).
const TB: &str = r#"`timescale 1ns/1ps
module tb;
  parameter CONNS = 16, PATHS = 4, RL = 1, CW = 4, PW = 2;
  parameter VEC = "small.vec";
  reg clk = 0, rst = 0, v = 0, sready = 0;
  reg [CW-1:0] conn; reg [PATHS-1:0] elig, clr; reg [PATHS*8-1:0] weight;
  reg e_rready, e_mvalid, e_none; reg [CW-1:0] e_conn; reg [PW-1:0] e_path;
  wire rready, mvalid, none; wire [CW-1:0] mconn; wire [PW-1:0] mpath;
  path_selector #(.CONNS(CONNS), .PATHS(PATHS), .READ_LATENCY(RL)) dut (.clk(clk), .rst(rst), .s_req_valid(v), .s_req_ready(rready),
    .s_req_conn(conn), .s_req_elig(elig), .s_req_weight(weight), .s_req_clr(clr), .m_sel_valid(mvalid), .m_sel_ready(sready),
    .m_sel_conn(mconn), .m_sel_path(mpath), .m_sel_none(none));
  integer f, r, cycle, errors;
  initial begin
    f = $fopen(VEC, "r"); cycle = 0; errors = 0;
    while (!$feof(f)) begin
      r = $fscanf(f, "%h %h %h %h %h %h %h %h %h %h %h %h\n", rst, v, conn, elig, weight, clr, sready, e_rready, e_mvalid, e_conn, e_path, e_none);
      #1;
      if (cycle > 0 && (rready !== e_rready || mvalid !== e_mvalid || (e_mvalid && (mconn !== e_conn || mpath !== e_path || none !== e_none)))) begin
        errors = errors + 1;
        if (errors < 10) $display("cycle %0d: rtl rready %b valid %b conn %h path %h none %b; model %b %b %h %h %b", cycle, rready, mvalid, mconn, mpath, none, e_rready, e_mvalid, e_conn, e_path, e_none);
      end
      clk = 1; #1; clk = 0; cycle = cycle + 1;
    end
    $display("%s: %0d cycles, %0d mismatches", VEC, cycle, errors);
    $finish;
  end
endmodule
"#;
