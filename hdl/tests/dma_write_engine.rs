//! The generated `dma_write_engine` through the real tools, for the `small`
//! and `default` configs and a sweep of read latencies, burst limits and
//! table depths: Verilator lint with every warning on and no waivers, Icarus
//! in Verilog-2005 mode, and Yosys `synth_xilinx` with no latches and the MR
//! table in the RAM resource the params choose.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

use std::process::Command;

use mrnic_hdl::dma_write_engine::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::Dir as ModelDir;
use mrnic_model::dma_write_engine::{ports, DmaWriteEngineParams};
use mrnic_proto::Config;

mod common;
use common::{have, run, Scratch};

const BLOCK: &str = "dma_write_engine";

/// `small` with another read latency, burst limit and datapath.
fn variant(latency: u32, burst: u32, data_bits: u32, outstanding: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_l{latency}_b{burst}_d{data_bits}_o{outstanding}");
    cfg.hardware.table_read_latency = latency;
    cfg.hardware.axi_max_burst = burst;
    cfg.hardware.datapath_bits = data_bits;
    cfg.hardware.axi_outstanding = outstanding;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(2, 1, 64, 2),
        variant(1, 256, 128, 16),
        variant(2, 32, 1024, 4),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = DmaWriteEngineParams::from_config(&cfg).unwrap();
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
        // Every output is a register or a function of registers, as the
        // model's eval() ignoring its inputs says.
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header_and_the_chosen_ram() {
    let small = Config::builtin("small").unwrap();
    let a = verilog(&small).unwrap();
    assert_eq!(a, verilog(&small).unwrap());
    assert!(a.contains("module dma_write_engine"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&small).command));
    assert!(a.contains(r#"ram_style = "distributed""#), "16 MR entries go to LUT RAM");
    let default = verilog(&Config::builtin("default").unwrap()).unwrap();
    assert!(default.contains(r#"ram_style = "block""#), "1024 MR entries go to block RAM");
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.axi_outstanding = 6;
    match generate(&cfg) {
        Err(GenError::Params(e)) => assert_eq!(e.field, "hardware.axi_outstanding"),
        other => panic!("expected a parameter error, got {other:?}"),
    }
    cfg.hardware.axi_outstanding = 8;
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
fn yosys_synthesizes_without_latches_in_the_chosen_ram() {
    if !have("yosys", "-V") {
        return;
    }
    for (cfg, stats) in common::yosys_synthesizes_each(BLOCK) {
        let p = DmaWriteEngineParams::from_config(&cfg).unwrap();
        let bram = stats.contains("RAMB18E1") || stats.contains("RAMB36E1");
        let lutram = stats.contains("RAM32M") || stats.contains("RAM64M") || stats.contains("RAM32X1D");
        if p.mr_block_ram() {
            assert!(bram, "{}: the MR table did not map to block RAM\n{stats}", cfg.name);
        } else {
            assert!(lutram && !bram, "{}: the MR table did not map to LUT RAM\n{stats}", cfg.name);
        }
    }
}

/// Icarus replays the model's cycle-by-cycle outputs on the generated RTL,
/// every output compared every cycle: table writes (valid, freed, wrong
/// access), placements that hit, miss and straddle their region, random
/// lengths and offsets, random valid gaps and backpressure on every channel,
/// error responses, a reset mid-run. A quick equivalence guard that needs
/// only iverilog; the lockstep co-simulation in `verif/` goes further.
#[test]
fn icarus_replays_model_vectors() {
    use mrnic_model::block::{Bits, Block};
    use mrnic_model::dma_write_engine::{port, DmaWriteEngine};
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(2, 4, 128, 4), Config::builtin("default").unwrap()] {
        let p = DmaWriteEngineParams::from_config(&cfg).unwrap();
        let defs = ports(&p);
        let dir = Scratch::new(&format!("replay-{}", cfg.name));
        let rtl = dir.write(BLOCK, &cfg);
        let mut dut = DmaWriteEngine::new(p);
        let seed = 0xd3a_5eedu64 ^ u64::from(p.data_bits);
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let b = p.bytes() as usize;
        let bits = |w: u32, v: u64| Bits::from_u64(w, v);
        let mut inp: Vec<Bits> = defs.iter().map(|d| Bits::zero(d.width)).collect();
        let mut out: Vec<Bits> = inp.clone();
        let keys = [0x100u32 | 3, 0x200 | 5, 0x300 | 9];
        let bases = [0x1_0000u64, 0x2_0f00, u64::MAX - 0x3ff];
        // Pending stimulus: requests (tag, key, addr, len, recv) and payload beats.
        let mut reqs: std::collections::VecDeque<(u64, u64, u64, u64, bool)> = Default::default();
        let mut beats: std::collections::VecDeque<(Bits, u64, bool)> = Default::default();
        let mut lines = String::new();
        let (mut req_on, mut beat_on, mut b_pending, mut b_on) = (false, false, 0u32, false);
        // W beats, completions OK / ACCESS / AXI error: the traffic must reach every outcome.
        let mut seen = [0u32; 4];
        let cycles = 6000u64;
        for cycle in 0..cycles {
            for v in inp.iter_mut() {
                v.0.iter_mut().for_each(|w| *w = 0);
            }
            inp[port::RST] = bits(1, (cycle == 0 || cycle == cycles / 2) as u64);
            let after_reset = if cycle >= cycles / 2 { cycle - cycles / 2 } else { cycle };
            // Table writes right after each sweep: three regions, one freed later.
            let k = after_reset as i64 - i64::from(p.mr_entries) - 2;
            if (0..3).contains(&k) {
                let k = k as usize;
                inp[port::S_MR_VALID] = bits(1, 1);
                inp[port::S_MR_KEY] = bits(32, u64::from(keys[k]));
                inp[port::S_MR_ENTRY_VALID] = bits(1, 1);
                inp[port::S_MR_REMOTE_WRITE] = bits(1, (k != 1 || cycle > cycles / 2) as u64);
                // Receive buffers: regions 0 and 1, region 2 in the second half.
                inp[port::S_MR_RECV] = bits(1, (k != 2 || cycle > cycles / 2) as u64);
                inp[port::S_MR_BASE] = bits(64, bases[k]);
                inp[port::S_MR_LEN] = bits(64, 0x2000);
            }
            if reqs.len() < 4 && rnd() % 100 < 30 {
                let r = (rnd() % 4) as usize;
                let key = if r == 3 { u64::from(rnd() as u32) } else { u64::from(keys[r]) };
                let base = bases[r.min(2)];
                let addr = base.wrapping_add(rnd() % 0x2200).wrapping_sub(0x100);
                let len = if rnd() % 10 == 0 { 0 } else { rnd() % 700 };
                reqs.push_back((rnd() & 0xffff, key, addr, len, rnd() % 4 == 0));
                let n = (len as usize).div_ceil(b);
                for i in 0..n {
                    let mut d = Bits::zero(p.data_bits);
                    d.0.iter_mut().for_each(|w| *w = rnd());
                    let valid = (len as usize - i * b).min(b);
                    let keep = if valid >= 64 { u64::MAX } else { (1u64 << valid) - 1 };
                    // tlast wrong now and then: stat_frame_err.
                    beats.push_back((d, keep, (i == n - 1) ^ (rnd() % 50 == 0)));
                }
            }
            req_on = req_on || (!reqs.is_empty() && rnd() % 100 < 70);
            if let (true, Some(&(tag, key, addr, len, recv))) = (req_on, reqs.front()) {
                inp[port::S_REQ_VALID] = bits(1, 1);
                inp[port::S_REQ_TAG] = bits(16, tag);
                inp[port::S_REQ_RKEY] = bits(32, key);
                inp[port::S_REQ_ADDR] = bits(64, addr);
                inp[port::S_REQ_LEN] = bits(16, len);
                inp[port::S_REQ_RECV] = bits(1, recv as u64);
            }
            beat_on = beat_on || (!beats.is_empty() && rnd() % 100 < 80);
            if let (true, Some((d, keep, last))) = (beat_on, beats.front()) {
                inp[port::S_AXIS_TVALID] = bits(1, 1);
                inp[port::S_AXIS_TDATA] = d.clone();
                // Only the low 64 lanes are ever partial; wider keeps are all ones above.
                inp[port::S_AXIS_TKEEP] = bits(p.bytes(), *keep);
                inp[port::S_AXIS_TLAST] = bits(1, *last as u64);
            }
            inp[port::M_AXI_AWREADY] = bits(1, (rnd() % 100 < 70) as u64);
            inp[port::M_AXI_WREADY] = bits(1, (rnd() % 100 < 75) as u64);
            inp[port::M_CPL_READY] = bits(1, (rnd() % 100 < 70) as u64);
            b_on = b_on || (b_pending > 0 && rnd() % 100 < 60);
            if b_on {
                inp[port::M_AXI_BVALID] = bits(1, 1);
                let resp = if rnd() % 10 == 0 { 2 } else { 0 };
                inp[port::M_AXI_BRESP] = bits(2, resp);
                inp[port::M_AXI_BID] = bits(p.id_bits, (rnd() % 100 == 0) as u64);
            }
            dut.eval(&inp, &mut out);
            let fire = |v: usize, r: usize| inp[v].bit(0) && out[r].bit(0);
            if fire(port::S_REQ_VALID, port::S_REQ_READY) {
                reqs.pop_front();
                req_on = false;
            }
            if fire(port::S_AXIS_TVALID, port::S_AXIS_TREADY) {
                beats.pop_front();
                beat_on = false;
            }
            if out[port::M_AXI_WVALID].bit(0) && inp[port::M_AXI_WREADY].bit(0) && out[port::M_AXI_WLAST].bit(0) {
                b_pending += 1;
            }
            if fire(port::M_AXI_WREADY, port::M_AXI_WVALID) {
                seen[0] += 1;
            }
            if fire(port::M_CPL_READY, port::M_CPL_VALID) {
                seen[1 + out[port::M_CPL_STATUS].as_u64() as usize] += 1;
            }
            if fire(port::M_AXI_BVALID, port::M_AXI_BREADY) {
                b_pending -= 1;
                b_on = false;
            }
            if inp[port::RST].bit(0) {
                reqs.clear();
                beats.clear();
                (req_on, beat_on, b_pending, b_on) = (false, false, 0, false);
                inp[port::M_AXI_BVALID] = bits(1, 0);
            }
            let hex = |v: &Bits| v.0.iter().rev().map(|w| format!("{w:016x}")).collect::<String>();
            let fields: Vec<String> = defs
                .iter()
                .enumerate()
                .map(|(i, d)| match d.dir {
                    ModelDir::In => hex(&inp[i]),
                    ModelDir::Out => hex(&out[i]),
                })
                .collect();
            lines += &fields.join(" ");
            lines.push('\n');
            dut.tick(&inp);
        }
        println!("{}: W beats, completions OK / ACCESS / AXI: {seen:?}", cfg.name);
        assert!(seen.iter().all(|&n| n > 3), "{}: too little of some outcome: {seen:?}", cfg.name);
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, testbench(&defs, &vec)).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&sim).arg(&tb).arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed:#x}):\n{text}", cfg.name);
    }
}

/// A testbench that applies one vector line per cycle (every port in
/// declaration order: inputs to drive, outputs to expect) and compares
/// every output before the edge (cycle 0 is the reset from X).
fn testbench(defs: &[mrnic_model::block::PortDef], vec: &std::path::Path) -> String {
    let mut s = String::from("`timescale 1ns/1ps\nmodule tb;\n  reg clk = 0;\n");
    for d in defs {
        let w = d.width;
        match d.dir {
            ModelDir::In => s += &format!("  reg [{}:0] {};\n", w - 1, d.name),
            ModelDir::Out => {
                s += &format!("  wire [{}:0] {};\n  reg [{}:0] e_{};\n", w - 1, d.name, w - 1, d.name);
            }
        }
    }
    s += "  dma_write_engine dut (.clk(clk)";
    for d in defs {
        s += &format!(", .{0}({0})", d.name);
    }
    s += ");\n  integer f, r, cycle, errors;\n  initial begin\n";
    s += &format!("    f = $fopen(\"{}\", \"r\"); cycle = 0; errors = 0;\n", vec.display());
    s += "    while (!$feof(f)) begin\n      r = $fscanf(f, \"";
    s += &vec!["%h"; defs.len()].join(" ");
    s += "\\n\"";
    for d in defs {
        match d.dir {
            ModelDir::In => s += &format!(", {}", d.name),
            ModelDir::Out => s += &format!(", e_{}", d.name),
        }
    }
    s += ");\n      #1;\n";
    for d in defs.iter().filter(|d| d.dir == ModelDir::Out) {
        s += &format!(
            "      if (cycle > 0 && {0} !== e_{0}) begin errors = errors + 1; if (errors < 10) \
             $display(\"cycle %0d: {0} rtl %h model %h\", cycle, {0}, e_{0}); end\n",
            d.name
        );
    }
    s += "      clk = 1; #1; clk = 0; cycle = cycle + 1;\n    end\n";
    s += "    $display(\"%0d cycles, %0d mismatches\", cycle, errors);\n    $finish;\n  end\nendmodule\n";
    s
}
