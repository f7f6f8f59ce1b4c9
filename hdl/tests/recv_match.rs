//! The generated `recv_match` through the real tools: Verilator lint with
//! every warning on and no waivers and Icarus in Verilog-2005 mode for
//! `small`, `default` and a sweep of ring depths and read latencies; Yosys
//! `synth_xilinx` with no latches for `small`; and an Icarus replay of the
//! model's port values, every output compared every cycle.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use common::{have, iverilog_compile, replay, same_ports, set, verilator_lint, yosys_no_latches, Rng, Scratch};
use mrnic_hdl::recv_match::{generate, header, verilog, GenError};
use mrnic_hdl::Module;
use mrnic_model::block::Block;
use mrnic_model::recv_match::{ports, RecvMatch, RecvMatchParams};
use mrnic_proto::Config;

/// Writes `cfg`'s module into `dir`.
fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("recv_match.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

fn variant(depth: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_d{depth}_l{latency}");
    cfg.hardware.recv_queue_depth = depth;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(2, 1),
        variant(2, 2),
        variant(64, 2),
        variant(256, 1),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = RecvMatchParams::from_config(&cfg).unwrap();
        same_ports(&m.ports(), &ports(&p), &cfg.name);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module recv_match"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&cfg).command));
    assert!(a.contains(r#"ram_style = "block""#));
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.table_read_latency = 3;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "hardware.table_read_latency"));
}

#[test]
fn verilator_lints_clean() {
    if !have("verilator", "--version") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("rm-verilator-{}", cfg.name));
        verilator_lint(&write(&dir, &cfg), "recv_match");
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("rm-iverilog-{}", cfg.name));
        iverilog_compile(&write(&dir, &cfg));
    }
}

/// `small` only: `default` (65536 rings) is too slow for the test suite.
#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("rm-yosys-small");
    yosys_no_latches(&write(&dir, &cfg), "recv_match");
}

/// Icarus replays the model on the generated RTL: all three channels valid
/// at random (arbitration), posts filling rings, lookups and consumes around
/// the posted range, random backpressure, a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(2, 2), variant(4, 1)] {
        let dir = Scratch::new(&format!("rm-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = RecvMatchParams::from_config(&cfg).unwrap();
        let mut dut = RecvMatch::new(p);
        let defs = dut.ports().to_vec();
        let mut rng = Rng::new(4242);
        let cycles = 3000u32;
        let params = [
            ("CONNS".to_string(), p.conns),
            ("STREAMS".to_string(), p.streams),
            ("RQ_DEPTH".to_string(), p.depth),
            ("READ_LATENCY".to_string(), p.read_latency),
        ];
        replay(&dir, &rtl, &mut dut, &params, cycles, |cycle, ins, _| {
            set(&defs, ins, "rst", (cycle == 0 || cycle == cycles / 2) as u64);
            let base = u64::from(cycle % (cycles / 2)) / 12;
            for ch in ["s_post", "s_lookup", "s_consume"] {
                set(&defs, ins, &format!("{ch}_valid"), (rng.below(100) < 40) as u64);
                set(&defs, ins, &format!("{ch}_conn"), rng.below(2));
                set(&defs, ins, &format!("{ch}_stream"), rng.below(2));
            }
            set(&defs, ins, "s_post_addr", rng.next_u64());
            set(&defs, ins, "s_post_len", rng.below(3000));
            set(&defs, ins, "s_post_wr_id", rng.next_u64());
            set(&defs, ins, "s_post_lkey", rng.next_u64() & 0xffff_ffff);
            set(&defs, ins, "s_lookup_rq_seq", (base + rng.below(8)) & 0xff_ffff);
            set(&defs, ins, "s_lookup_msg_offset", rng.below(2000));
            set(&defs, ins, "s_lookup_payload_len", rng.below(2000));
            set(&defs, ins, "s_lookup_msg_len", rng.below(4000));
            set(&defs, ins, "s_consume_imm", rng.below(2));
            set(&defs, ins, "s_consume_rq_seq", (base + rng.below(6)) & 0xff_ffff);
            for ch in ["post", "match", "cons"] {
                set(&defs, ins, &format!("m_{ch}_ready"), (rng.below(100) < 70) as u64);
            }
        });
    }
}
