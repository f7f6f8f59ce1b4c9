//! The generated `sack_gen` through the real tools: Verilator lint with every
//! warning on and no waivers and Icarus in Verilog-2005 mode for `small`,
//! `default` and a sweep of path counts and read latencies; Yosys
//! `synth_xilinx` with no latches for `small`; and an Icarus replay of the
//! model's port values, every output compared every cycle.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use common::{bit, have, iverilog_compile, replay, same_ports, set, verilator_lint, yosys_no_latches, Rng, Scratch};
use mrnic_hdl::sack_gen::{generate, header, verilog, GenError};
use mrnic_hdl::Module;
use mrnic_model::block::Block;
use mrnic_model::sack_gen::{ports, SackGen, SackGenParams};
use mrnic_proto::Config;

/// Writes `cfg`'s module into `dir`.
fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("sack_gen.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

fn variant(paths: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_p{paths}_l{latency}");
    cfg.transport.paths_per_conn = paths;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(1, 1),
        variant(1, 2),
        variant(8, 2),
        variant(32, 1),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = SackGenParams::from_config(&cfg).unwrap();
        same_ports(&m.ports(), &ports(&p), &cfg.name);
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module sack_gen"));
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
        let dir = Scratch::new(&format!("sg-verilator-{}", cfg.name));
        verilator_lint(&write(&dir, &cfg), "sack_gen");
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("sg-iverilog-{}", cfg.name));
        iverilog_compile(&write(&dir, &cfg));
    }
}

/// `small` only: `default` (65536 entries) is too slow for the test suite.
#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("sg-yosys-small");
    yosys_no_latches(&write(&dir, &cfg), "sack_gen");
}

/// Icarus replays the model on the generated RTL: OPENs, DATA with psns
/// around cum_psn (accepts, holes, advances, duplicates), far psns, newer and
/// stale generations, CE, ACKREQ, refused packets, PROBEs, random idle and
/// backpressure on every output, and a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(1, 2), variant(8, 2)] {
        let dir = Scratch::new(&format!("sg-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = SackGenParams::from_config(&cfg).unwrap();
        let mut dut = SackGen::new(p);
        let defs = dut.ports().to_vec();
        let mut rng = Rng::new(777);
        let cycles = 3000u32;
        let params = [
            ("CONNS".to_string(), p.conns),
            ("PATHS".to_string(), p.paths),
            ("READ_LATENCY".to_string(), p.read_latency),
            ("SACK_PKTS".to_string(), p.sack_pkts),
            ("SACK_BYTES".to_string(), p.sack_bytes),
        ];
        replay(&dir, &rtl, &mut dut, &params, cycles, |cycle, ins, outs| {
            // AXI: a valid beat offered last cycle and not taken holds.
            let held = bit(&defs, ins, "s_pkt_valid") && !bit(&defs, outs, "s_pkt_ready") && !bit(&defs, ins, "rst");
            set(&defs, ins, "rst", (cycle == 0 || cycle == cycles / 2) as u64);
            set(&defs, ins, "rate_hint", rng.next_u64() & 0xffff);
            if !held {
                let valid = rng.below(100) < 75;
                set(&defs, ins, "s_pkt_valid", valid as u64);
                let r = rng.next_u64();
                let op = match r % 40 {
                    0 => 1,
                    1 => 2,
                    2 => 3,
                    _ => 0,
                };
                let base = u64::from(cycle % (cycles / 2)) / 6;
                let psn = match (r >> 8) % 20 {
                    0 => base + 300 + (r >> 16) % 5000,
                    1 => (base + 0xff_fff0) & 0xff_ffff,
                    _ => base + (r >> 16) % 24,
                } & 0xff_ffff;
                set(&defs, ins, "s_pkt_op", op);
                set(&defs, ins, "s_pkt_conn", (r >> 40) % 2);
                set(&defs, ins, "s_pkt_path_id", (r >> 42) % 2);
                set(&defs, ins, "s_pkt_psn", if op == 2 { 0 } else { psn });
                set(&defs, ins, "s_pkt_gen", (r >> 44) % 4);
                set(&defs, ins, "s_pkt_ce", ((r >> 46) % 7 == 0) as u64);
                set(&defs, ins, "s_pkt_ackreq", ((r >> 49) % 9 == 0) as u64);
                set(&defs, ins, "s_pkt_bad", ((r >> 52) % 11 == 0) as u64);
                let r2 = rng.next_u64();
                set(&defs, ins, "s_pkt_payload_len", r2 % 4096);
                set(&defs, ins, "s_pkt_stream_id", (r2 >> 12) & 0xff);
                set(&defs, ins, "s_pkt_msn", (r2 >> 20) & 0xff_ffff);
                set(&defs, ins, "s_pkt_tx_ts", (r2 >> 44) & 0xffff);
                let r3 = rng.next_u64();
                set(&defs, ins, "s_pkt_dst_conn", r3 & 0xff_ffff);
                set(&defs, ins, "s_pkt_completed_msn", (r3 >> 24) & 0xff_ffff);
                set(&defs, ins, "s_pkt_sport", (r3 >> 48) & 0xffff);
                set(&defs, ins, "s_pkt_plane", rng.next_u64() & 7);
            }
            for ch in ["sack", "nack", "new"] {
                set(&defs, ins, &format!("m_{ch}_ready"), (rng.below(100) < 70) as u64);
            }
        });
    }
}
