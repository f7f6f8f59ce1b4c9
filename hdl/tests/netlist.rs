//! A model netlist printed as Verilog (`mrnic_hdl::netlist`): `rx_front`
//! (csr + rx_parser, the netlist tests' real pair) passes the IR's checks,
//! lints clean under Verilator -Wall, compiles under Icarus, and replays the
//! model's netlist simulation cycle by cycle on Icarus with every top output
//! compared. A netlist whose module has other ports than the model is
//! refused.
//!
//! A missing tool skips the test with a message, except under CI=true.

use std::process::Command;

use mrnic_hdl::gen::BLOCKS;
use mrnic_hdl::{Header, ModuleSig};
use mrnic_model::block::{Bits, Block};
use mrnic_model::netlist::{model_block, rx_front, Netlist, Sim};
use mrnic_model::rx_parser::stimulus::{self, Rng as FrameRng};
use mrnic_model::rx_parser::RxParserParams;
use mrnic_proto::Config;

mod common;
use common::{have, run, set, Rng, Scratch};

/// Each instance's generated module, in instance order.
fn children(net: &Netlist<&'static str>, cfg: &Config) -> Vec<mrnic_hdl::Module> {
    net.insts
        .iter()
        .map(|i| {
            let row = BLOCKS.iter().find(|b| b.name == i.kind).unwrap();
            (row.generate)(cfg).unwrap()
        })
        .collect()
}

#[test]
fn a_module_with_other_ports_is_refused() {
    let cfg = Config::builtin("small").unwrap();
    let net = rx_front(&cfg).unwrap();
    let mut sigs: Vec<ModuleSig> = children(&net, &cfg).iter().map(|m| m.signature()).collect();
    sigs.swap(0, 1);
    let e = mrnic_hdl::netlist::build(&net, &sigs).unwrap_err();
    assert!(e.to_string().contains("has other ports than the model"), "{e}");
}

#[test]
fn rx_front_lints_compiles_and_replays_the_model_netlist() {
    let cfg = Config::builtin("small").unwrap();
    let net = rx_front(&cfg).unwrap();
    let header = Header::new(&format!("mrnic-hdl rx_front, config {}", cfg.name), "cargo test --test netlist");
    let modules = mrnic_hdl::netlist::files(&net, &cfg, &header).unwrap();
    if !have("verilator", "--version") || !have("iverilog", "-V") {
        return;
    }
    let dir = Scratch::new("netlist-rx_front");
    let files: Vec<_> = modules.iter().map(|(name, text)| dir.file(name, text)).collect();
    let out = run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", "rx_front"]).args(&files));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "{stderr}");
    // The bench takes one file.
    let all: String = modules.iter().map(|(_, t)| t.as_str()).collect();
    let file = dir.file("all.v", &all);
    let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null", "-s", "rx_front"]).arg(&file));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "{stderr}");

    let mut sim = Sim::new(&net, |i| model_block(i.kind, &cfg).unwrap()).unwrap();
    let defs = sim.ports().to_vec();
    let rp = RxParserParams::from_config(&cfg).unwrap();
    let mut frames = FrameRng::new(5);
    let mut rng = Rng::new(5);
    let mut beats = std::collections::VecDeque::new();
    let mut offered = false;
    common::replay(&dir, &file, &mut sim, &[], 2500, |cycle, ins, outs| {
        // The beat offered last cycle was taken if tready was high.
        if offered && common::bit(&defs, outs, "s_axis_tready") {
            beats.pop_front();
        }
        if beats.is_empty() {
            let s = if frames.chance(30) {
                let r = mrnic_model::rx_parser::Reason::Icrc;
                stimulus::faulty(&mut frames, r, rp.mtu, 4797, rp.bytes())
            } else {
                stimulus::good(&mut frames, rp.mtu, 4797)
            };
            beats.extend(stimulus::beats(&s, rp.bytes(), &mut frames));
        }
        let b: &mrnic_model::rx_parser::Beat = beats.front().unwrap();
        let rst = cycle < 2;
        offered = !rst && rng.below(5) != 0;
        set(&defs, ins, "rst", rst as u64);
        set(&defs, ins, "s_axis_tvalid", offered as u64);
        let mut d = Bits::zero(rp.data_bits);
        for (n, &x) in b.data.iter().enumerate() {
            d.0[n / 8] |= (x as u64) << (8 * (n % 8));
        }
        ins[defs.iter().position(|p| p.name == "s_axis_tdata").unwrap()] = d;
        set(&defs, ins, "s_axis_tkeep", b.keep as u64);
        set(&defs, ins, "s_axis_tlast", b.last as u64);
        set(&defs, ins, "s_axis_tuser", b.user as u64);
        set(&defs, ins, "s_axis_tid", rng.below(8));
        set(&defs, ins, "m_hdr_ready", (rng.below(4) != 0) as u64);
        set(&defs, ins, "m_axis_tready", (rng.below(4) != 0) as u64);
        set(&defs, ins, "s_axil_bready", 1);
        set(&defs, ins, "s_axil_rready", 1);
        // Reads of every counter now and then, through the top's AXI4-Lite port.
        let read = cycle % 50 == 7;
        set(&defs, ins, "s_axil_arvalid", read as u64);
        set(&defs, ins, "s_axil_araddr", 0x80 + 4 * (cycle as u64 / 50 % 6));
    });
}

#[test]
fn the_receive_side_and_the_whole_top_lint_and_compile() {
    // Each part's module with every module under it; the lockstep with the
    // model is verif/tests/mrnic_rx_core.rs and verif/tests/mrnic_core.rs.
    let cfg = Config::builtin("small").unwrap();
    let parts = [
        (mrnic_hdl::mrnic_core::rx_verilog(&cfg).unwrap(), mrnic_model::mrnic_core::RX_NAME),
        (mrnic_hdl::mrnic_core::verilog(&cfg).unwrap(), mrnic_model::mrnic_core::NAME),
    ];
    if !have("verilator", "--version") || !have("iverilog", "-V") {
        return;
    }
    for (modules, top) in parts {
        assert_eq!(modules[0].0, format!("{top}.v"));
        let dir = Scratch::new(&format!("netlist-{top}"));
        let files: Vec<_> = modules.iter().map(|(name, text)| dir.file(name, text)).collect();
        let out = run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", top]).args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{top}: {stderr}");
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null", "-s", top]).args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{top}: {stderr}");
    }
}
