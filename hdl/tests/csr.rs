//! The generated `csr` through the real tools for the `small` and `default`
//! configs: ports equal to the model's, Verilator lint with every warning on
//! and no waivers, Icarus in Verilog-2005 mode, Yosys `synth_xilinx` with no
//! latches, and a replay of the model's cycle-by-cycle outputs under Icarus.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

use std::process::Command;

use mrnic_hdl::csr::{generate, header, verilog};
use mrnic_hdl::Dir;
use mrnic_model::block::Dir as ModelDir;
use mrnic_model::csr::{ports, regmap, Csr, CsrParams, Inputs, STATS};
use mrnic_proto::Config;

mod common;
use common::{configs, have, run, Scratch};

const BLOCK: &str = "csr";

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in configs() {
        let m = generate(&cfg).unwrap();
        let p = CsrParams::from_config(&cfg).unwrap();
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
    assert!(a.contains("module csr"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&cfg).command));
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

/// Icarus replays the model's outputs, every output every cycle, on random
/// AXI4-Lite traffic: mapped, unmapped and misaligned addresses, random
/// strobes and protection (so the policy bits get set and refuse), MR
/// commits against a random `m_mr_ready`, random counter events and
/// backpressure, and a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in configs() {
        let dir = Scratch::new(&format!("replay-{}", cfg.name));
        let rtl = dir.write(BLOCK, &cfg);
        let p = CsrParams::from_config(&cfg).unwrap();
        let map = regmap(&p);
        let mut dut = Csr::new(p);
        let seed = 2024u64;
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let amask = (1u64 << p.addr_bits()) - 1;
        let addr = |rnd: &mut dyn FnMut() -> u64| -> u32 {
            match rnd() % 10 {
                0 => (rnd() & amask) as u32,
                1 => map[(rnd() % map.len() as u64) as usize].offset | (1 + (rnd() % 3) as u32),
                _ => map[(rnd() % map.len() as u64) as usize].offset,
            }
        };
        let commit = map.iter().find(|r| r.name == "MR_COMMIT").unwrap().offset;
        let control = map.iter().find(|r| r.name == "CONTROL").unwrap().offset;
        let mut lines = String::new();
        let mut inp = Inputs::default();
        let cycles = 6000;
        for cycle in 0..cycles {
            let o = dut.outputs();
            if !inp.awvalid && rnd() % 4 == 0 {
                inp.awvalid = true;
                inp.awaddr = if rnd() % 6 == 0 { commit } else { addr(&mut rnd) };
                inp.awprot = if rnd() % 4 == 0 { (rnd() % 8) as u8 } else { 1 };
            }
            if !inp.wvalid && rnd() % 4 == 0 {
                inp.wvalid = true;
                inp.wdata = rnd() as u32;
                inp.wstrb = (rnd() % 16) as u8;
            }
            if inp.awvalid && inp.awaddr == control && rnd() % 2 == 0 {
                // Keep the policy mostly open so that traffic is not all refused.
                inp.wdata &= !0b1110;
            }
            if !inp.arvalid && rnd() % 3 == 0 {
                inp.arvalid = true;
                inp.araddr = addr(&mut rnd);
                inp.arprot = if rnd() % 4 == 0 { (rnd() % 8) as u8 } else { 1 };
            }
            inp.bready = rnd() % 100 < 60;
            inp.rready = rnd() % 100 < 60;
            inp.mr_ready = rnd() % 100 < 30;
            inp.stats = (rnd() as u32) & ((1 << STATS.len()) - 1);
            inp.rst = cycle == 0 || cycle == cycles / 2;
            lines += &format!(
                "{:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} \
                 {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x}\n",
                inp.rst as u8,
                inp.awaddr,
                inp.awprot,
                inp.awvalid as u8,
                inp.wdata,
                inp.wstrb,
                inp.wvalid as u8,
                inp.bready as u8,
                inp.araddr,
                inp.arprot,
                inp.arvalid as u8,
                inp.rready as u8,
                inp.mr_ready as u8,
                inp.stats,
                o.awready as u8,
                o.wready as u8,
                o.bresp,
                o.bvalid as u8,
                o.arready as u8,
                o.rdata,
                o.rresp,
                o.rvalid as u8,
                o.enable as u8,
                o.udp_port,
                o.mr_valid as u8,
                o.mr_key,
                o.mr_entry_valid as u8,
                o.mr_remote_write as u8,
                o.mr_recv as u8,
                o.mr_base,
                o.mr_len,
            );
            let applied = inp.clone();
            dut.clock(&applied);
            if applied.rst {
                inp = Inputs::default();
                continue;
            }
            if applied.awvalid && o.awready {
                inp.awvalid = false;
            }
            if applied.wvalid && o.wready {
                inp.wvalid = false;
            }
            if applied.arvalid && o.arready {
                inp.arvalid = false;
            }
        }
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, testbench(p.addr_bits())).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog")
            .args(["-g2005", "-o"])
            .arg(&sim)
            .arg(format!("-Ptb.VEC=\"{}\"", vec.display()))
            .arg(&tb)
            .arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed}):\n{text}", cfg.name);
    }
}

/// Applies one vector line per cycle and compares every output before the
/// edge (cycle 0 is the reset from X).
fn testbench(a: u32) -> String {
    let n = STATS.len();
    let stats: String = STATS.iter().enumerate().map(|(i, (port, _, _))| format!(", .{port}(stats[{i}])")).collect();
    format!(
        r#"`timescale 1ns/1ps
module tb;
  parameter VEC = "vectors.txt";
  reg clk = 0, rst, awvalid, wvalid, bready, arvalid, rready, mr_ready;
  reg [{am}:0] awaddr, araddr; reg [2:0] awprot, arprot; reg [31:0] wdata; reg [3:0] wstrb; reg [{sm}:0] stats;
  reg e_awready, e_wready, e_bvalid, e_arready, e_rvalid, e_enable, e_mr_valid, e_mr_ev, e_mr_rw, e_mr_rc;
  reg [1:0] e_bresp, e_rresp; reg [31:0] e_rdata, e_mr_key; reg [15:0] e_udp; reg [63:0] e_mr_base, e_mr_len;
  wire awready, wready, bvalid, arready, rvalid, enable, mr_valid, mr_ev, mr_rw, mr_rc;
  wire [1:0] bresp, rresp; wire [31:0] rdata, mr_key; wire [15:0] udp; wire [63:0] mr_base, mr_len;
  csr dut (.clk(clk), .rst(rst), .s_axil_awaddr(awaddr), .s_axil_awprot(awprot), .s_axil_awvalid(awvalid),
    .s_axil_awready(awready), .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(wready),
    .s_axil_bresp(bresp), .s_axil_bvalid(bvalid), .s_axil_bready(bready), .s_axil_araddr(araddr), .s_axil_arprot(arprot),
    .s_axil_arvalid(arvalid), .s_axil_arready(arready), .s_axil_rdata(rdata), .s_axil_rresp(rresp), .s_axil_rvalid(rvalid),
    .s_axil_rready(rready), .cfg_enable(enable), .cfg_udp_port(udp), .m_mr_valid(mr_valid), .m_mr_ready(mr_ready),
    .m_mr_key(mr_key), .m_mr_entry_valid(mr_ev), .m_mr_remote_write(mr_rw), .m_mr_recv(mr_rc), .m_mr_base(mr_base), .m_mr_len(mr_len){stats});
  integer f, r, cycle, errors;
  initial begin
    f = $fopen(VEC, "r"); cycle = 0; errors = 0;
    while (!$feof(f)) begin
      r = $fscanf(f, "%h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h %h\n",
        rst, awaddr, awprot, awvalid, wdata, wstrb, wvalid, bready, araddr, arprot, arvalid, rready, mr_ready, stats,
        e_awready, e_wready, e_bresp, e_bvalid, e_arready, e_rdata, e_rresp, e_rvalid, e_enable, e_udp, e_mr_valid,
        e_mr_key, e_mr_ev, e_mr_rw, e_mr_rc, e_mr_base, e_mr_len);
      #1;
      if (cycle > 0 && ({{awready, wready, bresp, bvalid, arready, rdata, rresp, rvalid, enable, udp, mr_valid, mr_key, mr_ev, mr_rw, mr_rc, mr_base, mr_len}}
          !== {{e_awready, e_wready, e_bresp, e_bvalid, e_arready, e_rdata, e_rresp, e_rvalid, e_enable, e_udp, e_mr_valid, e_mr_key, e_mr_ev, e_mr_rw, e_mr_rc, e_mr_base, e_mr_len}})) begin
        errors = errors + 1;
        if (errors < 10) $display("cycle %0d: rtl aw %b w %b b %b/%h ar %b r %b/%h/%h en %b udp %h mr %b %h %b %b %h %h; model aw %b w %b b %b/%h ar %b r %b/%h/%h en %b udp %h mr %b %h %b %b %h %h",
          cycle, awready, wready, bvalid, bresp, arready, rvalid, rdata, rresp, enable, udp, mr_valid, mr_key, mr_ev, mr_rw, mr_base, mr_len,
          e_awready, e_wready, e_bvalid, e_bresp, e_arready, e_rvalid, e_rdata, e_rresp, e_enable, e_udp, e_mr_valid, e_mr_key, e_mr_ev, e_mr_rw, e_mr_base, e_mr_len);
      end
      clk = 1; #1; clk = 0; cycle = cycle + 1;
    end
    $display("%s: %0d cycles, %0d mismatches", VEC, cycle, errors);
    $finish;
  end
endmodule
"#,
        am = a - 1,
        sm = n - 1,
    )
}
