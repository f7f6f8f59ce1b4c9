//! The generated `path_telemetry` through the real tools for `small`,
//! `default` and a sweep of path counts and read latencies: Verilator lint
//! with every warning on and no waivers, Icarus in Verilog-2005 mode, Yosys
//! `synth_xilinx` without latches, and a replay of the model's
//! cycle-by-cycle outputs under Icarus (random events and reads, random
//! backpressure on every output, ts_now running so the scanner fires).
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

use std::process::Command;

use mrnic_hdl::path_telemetry::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::Dir as ModelDir;
use mrnic_model::path_telemetry::{kind, ports, Event, Inputs, PathTelemetry, PathTelemetryParams};
use mrnic_proto::Config;

mod common;
use common::{have, run, Scratch};

const BLOCK: &str = "path_telemetry";

fn variant(paths: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_p{paths}_l{latency}");
    cfg.transport.paths_per_conn = paths;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    let mut out = vec![Config::builtin("small").unwrap(), Config::builtin("default").unwrap()];
    for (paths, latency) in [(1, 1), (1, 2), (2, 2), (8, 1), (32, 2)] {
        out.push(variant(paths, latency));
    }
    out
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = PathTelemetryParams::from_config(&cfg).unwrap();
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
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module path_telemetry"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&cfg).command));
    assert!(a.contains(r#"ram_style = "block""#));
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.transport.paths_per_conn = 64;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "transport.paths_per_conn"));
    let mut cfg = Config::builtin("small").unwrap();
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
fn yosys_synthesizes_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    for (cfg, stats) in common::yosys_synthesizes_each(BLOCK) {
        assert!(
            stats.contains("RAMB18E1") || stats.contains("RAMB36E1"),
            "{}: the tables did not map to block RAM\n{stats}",
            cfg.name
        );
    }
}

/// Input fields in vector order: (name, width).
fn input_fields(p: &PathTelemetryParams) -> Vec<(&'static str, u32)> {
    vec![
        ("rst", 1),
        ("ts_now", 32),
        ("s_evt_valid", 1),
        ("s_evt_kind", 4),
        ("s_evt_conn", p.conn_bits),
        ("s_evt_path", p.path_bits),
        ("s_evt_now", 32),
        ("s_evt_cum_acked", 24),
        ("s_evt_acked_pkts", 9),
        ("s_evt_acked_bytes", 24),
        ("s_evt_ecn_cnt", 8),
        ("s_evt_rtt_valid", 1),
        ("s_evt_rtt", 16),
        ("s_evt_acked_seq", 32),
        ("s_evt_sport", 16),
        ("s_evt_plane", 3),
        ("m_upd_ready", 1),
        ("m_rto_ready", 1),
        ("s_rd_valid", 1),
        ("s_rd_conn", p.conn_bits),
        ("m_rd_ready", 1),
    ]
}

/// xorshift64 stimulus.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Icarus replays the model's outputs, cycle by cycle, on the generated RTL.
#[test]
fn icarus_replays_model_vectors() {
    use mrnic_model::block::{zero_values, Block};
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(4, 2), variant(1, 2), variant(8, 1)] {
        let dir = Scratch::new(&format!("replay-{}", cfg.name));
        let rtl = dir.write(BLOCK, &cfg);
        let p = PathTelemetryParams::from_config(&cfg).unwrap();
        let mut dut = PathTelemetry::new(p);
        let defs = ports(&p);
        let seed = 777u64;
        let mut rng = Rng(seed);
        let fields = input_fields(&p);
        let outs: Vec<_> = defs.iter().filter(|d| d.dir == ModelDir::Out).cloned().collect();
        let mut lines = String::new();
        let mut offered: Option<Event> = None;
        let mut rd: Option<u32> = None;
        let mut ts = 3000u32;
        let mut now = 1000u32;
        let cycles = 6000u32;
        let sweep_end = p.entries() + 2;
        let mut opened = 0u32;
        let (mut n_upd, mut n_rto, mut n_rd) = (0, 0, 0);
        for cycle in 0..cycles {
            if cycle % 3 == 0 {
                ts = ts.wrapping_add(1);
            }
            if offered.is_none() && cycle > sweep_end && rng.below(100) < 70 {
                now = now.wrapping_add(rng.below(3) as u32);
                let (conn, path) = (rng.below(3.min(p.conns as u64)) as u32, rng.below(3.min(p.paths as u64)) as u32);
                let k = if opened < 9 {
                    opened += 1;
                    kind::OPEN
                } else {
                    [1, 1, 1, 2, 3, 4, 4, 4, 4, 5, 6, 7, 8, 9, 12][rng.below(15) as usize]
                };
                let pkts = rng.below(12) as u32;
                offered = Some(Event {
                    kind: k,
                    conn,
                    path,
                    now,
                    cum_acked: rng.next() as u32 & 0xFF_FFFF,
                    acked_pkts: pkts,
                    acked_bytes: pkts * 1024,
                    ecn_cnt: if rng.below(4) == 0 { rng.below(256) as u32 } else { 0 },
                    rtt_valid: rng.below(2) == 0,
                    rtt: 50 + rng.below(3000) as u32,
                    acked_seq: rng.next() as u32,
                    sport: rng.next() as u16,
                    plane: rng.below(8) as u8,
                });
            }
            if rd.is_none() && rng.below(100) < 40 {
                rd = Some(rng.below(p.conns as u64) as u32);
            }
            let inp = Inputs {
                rst: cycle == 0 || cycle == cycles / 2,
                ts_now: ts,
                evt_valid: offered.is_some(),
                evt: offered.unwrap_or_default(),
                upd_ready: rng.below(100) < 70,
                rto_ready: rng.below(100) < 60,
                rd_valid: rd.is_some(),
                rd_conn: rd.unwrap_or(0),
                rd_resp_ready: rng.below(100) < 70,
            };
            if inp.rst && cycle > 0 {
                opened = 0;
            }
            let ev = inp.evt;
            let vals: Vec<u64> = vec![
                inp.rst as u64,
                inp.ts_now as u64,
                inp.evt_valid as u64,
                ev.kind as u64,
                ev.conn as u64,
                ev.path as u64,
                ev.now as u64,
                ev.cum_acked as u64,
                ev.acked_pkts as u64,
                ev.acked_bytes as u64,
                ev.ecn_cnt as u64,
                ev.rtt_valid as u64,
                ev.rtt as u64,
                ev.acked_seq as u64,
                ev.sport as u64,
                ev.plane as u64,
                inp.upd_ready as u64,
                inp.rto_ready as u64,
                inp.rd_valid as u64,
                inp.rd_conn as u64,
                inp.rd_resp_ready as u64,
            ];
            assert_eq!(vals.len(), fields.len());
            let mut o = zero_values(&defs);
            dut.eval(&[], &mut o);
            let mut line: Vec<String> = vals.iter().map(|v| format!("{v:x}")).collect();
            for d in &outs {
                let i = defs.iter().position(|x| x.name == d.name).unwrap();
                line.push(hex(&o[i], d.width));
            }
            lines += &line.join(" ");
            lines.push('\n');
            let out = dut.outputs();
            n_upd += out.upd.is_some() as u32;
            n_rto += out.rto.is_some() as u32;
            n_rd += out.rd.is_some() as u32;
            if inp.evt_valid && out.evt_ready {
                offered = None;
            }
            if inp.rd_valid && out.rd_ready {
                rd = None;
            }
            if inp.rst {
                offered = None;
                rd = None;
            }
            dut.clock(&inp);
        }
        assert!(n_upd > 0 && n_rto > 0 && n_rd > 0, "{}: the stimulus misses an output", cfg.name);
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, testbench(&p, &fields, &outs, &vec)).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&sim).arg(&tb).arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed}):\n{text}", cfg.name);
    }
}

fn hex(b: &mrnic_model::block::Bits, width: u32) -> String {
    let digits = width.div_ceil(4) as usize;
    let mut s = String::new();
    for i in (0..digits).rev() {
        let mut d = 0;
        for j in 0..4 {
            let bit = i as u32 * 4 + j;
            if bit < width && b.bit(bit) {
                d |= 1 << j;
            }
        }
        s.push(char::from_digit(d, 16).unwrap());
    }
    s
}

/// A bench that applies one vector line per cycle and compares every output
/// before the edge (payloads only while their valid is high; cycle 0 is the
/// reset from X).
fn testbench(
    p: &PathTelemetryParams,
    fields: &[(&str, u32)],
    outs: &[mrnic_model::block::PortDef],
    vec: &std::path::Path,
) -> String {
    let mut s = String::from("`timescale 1ns/1ps\nmodule tb;\n  reg clk = 0;\n");
    for (n, w) in fields {
        s += &format!("  reg [{}:0] {n};\n", w - 1);
    }
    for d in outs {
        s += &format!("  wire [{}:0] {};\n  reg [{}:0] e_{};\n", d.width - 1, d.name, d.width - 1, d.name);
    }
    s += &format!(
        "  path_telemetry #(.CONNS({}), .PATHS({}), .READ_LATENCY({})) dut (.clk(clk)",
        p.conns, p.paths, p.read_latency
    );
    for (n, _) in fields {
        s += &format!(", .{n}({n})");
    }
    for d in outs {
        s += &format!(", .{0}({0})", d.name);
    }
    s += ");\n  integer f, r, cycle, errors;\n  initial begin\n";
    s += &format!("    f = $fopen(\"{}\", \"r\"); cycle = 0; errors = 0;\n", vec.display());
    s += "    while (!$feof(f)) begin\n      r = $fscanf(f, \"";
    let n = fields.len() + outs.len();
    s += &vec!["%h"; n].join(" ");
    s += "\\n\"";
    for (nm, _) in fields {
        s += &format!(", {nm}");
    }
    for d in outs {
        s += &format!(", e_{}", d.name);
    }
    s += ");\n      #1;\n      if (cycle > 0) begin\n";
    for d in outs {
        let guard = match d.name.split('_').nth(1) {
            Some("upd") if d.name != "m_upd_valid" => "e_m_upd_valid && ",
            Some("rto") if d.name != "m_rto_valid" => "e_m_rto_valid && ",
            Some("rd") if d.name.starts_with("m_rd") && d.name != "m_rd_valid" => "e_m_rd_valid && ",
            _ => "",
        };
        s += &format!(
            "        if ({guard}{0} !== e_{0}) begin errors = errors + 1; if (errors < 10) $display(\"cycle %0d: {0} rtl %h model %h\", cycle, {0}, e_{0}); end\n",
            d.name
        );
    }
    s += "      end\n      clk = 1; #1; clk = 0; cycle = cycle + 1;\n    end\n";
    s += "    $display(\"%0d cycles, %0d mismatches\", cycle, errors);\n    $finish;\n  end\nendmodule\n";
    s
}
