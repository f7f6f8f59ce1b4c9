//! The generated `conn_table` through the real tools: Verilator lint with
//! every warning on and no waivers and Icarus in Verilog-2005 mode for
//! `small`, `default` and a sweep of stream counts and read latencies;
//! Yosys `synth_xilinx` with no latches for `small`; and an Icarus replay of
//! the model's port values, every output compared every cycle.

mod common;

use common::*;
use mrnic_hdl::conn_table::{generate, header, verilog, GenError};
use mrnic_model::block::{Bits, Block};
use mrnic_model::conn_table::{ports, ConnTable, ConnTableParams};
use mrnic_proto::Config;

fn variant(streams: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_s{streams}_l{latency}");
    cfg.transport.streams_per_conn = streams;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(1, 1),
        variant(2, 2),
        variant(8, 1),
    ]
}

fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("conn_table.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m = generate(&cfg).unwrap();
        let p = ConnTableParams::from_config(&cfg).unwrap();
        same_ports(&m.ports(), &ports(&p), &cfg.name);
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module conn_table"));
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
        let dir = Scratch::new(&format!("ct-verilator-{}", cfg.name));
        verilator_lint(&write(&dir, &cfg), "conn_table");
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("ct-iverilog-{}", cfg.name));
        iverilog_compile(&write(&dir, &cfg));
    }
}

#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("ct-yosys-small");
    let file = write(&dir, &cfg);
    yosys_no_latches(&file, "conn_table");
}

/// Icarus replays the model on the RTL: opens and closes on three slots
/// (ids with equal low bits and different tags), stream writes and clears,
/// DATA / PROBE / ACK lookups on every path, reads, random idle and
/// backpressure on every output, and a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(2, 2), variant(1, 1)] {
        let seed = 4242;
        let dir = Scratch::new(&format!("ct-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = ConnTableParams::from_config(&cfg).unwrap();
        let mut dut = ConnTable::new(p);
        let defs = dut.ports().to_vec();
        let params = vec![
            ("CONNS".to_string(), p.conns),
            ("STREAMS".to_string(), p.streams),
            ("READ_LATENCY".to_string(), p.read_latency),
        ];
        let mut r = Rng::new(seed);
        let cycles = 3000;
        let (mut lk_held, mut rd_held) = (false, false);
        replay(&dir, &rtl, &mut dut, &params, cycles, |cycle, ins: &mut Vec<Bits>, outs: &[Bits]| {
            // AXI: a valid request holds until taken.
            let rst_was = bit(&defs, ins, "rst");
            if cycle > 0 && !rst_was {
                lk_held = bit(&defs, ins, "s_lk_valid") && !bit(&defs, outs, "s_lk_ready");
                rd_held = bit(&defs, ins, "s_rd_valid") && !bit(&defs, outs, "s_rd_ready");
            } else {
                (lk_held, rd_held) = (false, false);
            }
            let mut s = |n: &str, v: u64| set(&defs, ins, n, v);
            s("rst", u64::from(cycle == 0 || cycle == cycles / 2));
            let slot = r.below(3);
            s("s_wr_valid", u64::from(r.below(10) < 2));
            s("s_wr_entry_valid", u64::from(r.below(5) != 0));
            s("s_wr_local_id", slot + 16 * r.below(2));
            s("s_wr_remote_id", r.below(1 << 24));
            s("s_wr_remote_addr", r.next_u64() & 0xffff_ffff);
            s("s_wr_paths", r.below(64));
            s("s_st_valid", u64::from(r.below(10) < 3));
            s("s_st_conn", r.below(3));
            s("s_st_stream", r.below(u64::from(p.streams) * 2));
            s("s_st_clear", u64::from(r.below(8) == 0));
            s("s_st_completed_msn", r.below(1 << 24));
            s("s_st_active", r.below(2));
            if !lk_held {
                s("s_lk_valid", u64::from(r.below(10) < 7));
                s("s_lk_op", r.below(4));
                s("s_lk_dst_conn", r.below(3) + 16 * r.below(2));
                s("s_lk_path_id", r.below(6));
                for (n, w) in [
                    ("path_gen", 8),
                    ("psn", 24),
                    ("stream_id", 8),
                    ("msn", 24),
                    ("tx_ts", 16),
                    ("sport", 16),
                    ("plane", 3),
                    ("src_addr", 32),
                ] {
                    s(&format!("s_lk_{n}"), r.next_u64() & ((1 << w) - 1));
                }
            }
            if !rd_held {
                s("s_rd_valid", u64::from(r.below(10) < 5));
                s("s_rd_conn", r.below(16));
            }
            for ch in ["lk", "nack", "rd"] {
                s(&format!("m_{ch}_ready"), u64::from(r.below(10) < 7));
            }
        });
    }
}
