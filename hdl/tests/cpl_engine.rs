//! The generated `cpl_engine` through the real tools: Verilator lint with
//! every warning on and no waivers and Icarus in Verilog-2005 mode for
//! `small`, `default` and a sweep of message depths and read latencies;
//! Yosys `synth_xilinx` with no latches for `small`; and an Icarus replay of
//! the model's port values, every output compared every cycle.

mod common;

use common::*;
use mrnic_hdl::cpl_engine::{generate, header, verilog, GenError};
use mrnic_model::block::{Bits, Block};
use mrnic_model::cpl_engine::{ports, CplEngine, CplEngineParams};
use mrnic_proto::Config;

fn variant(depth: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_m{depth}_l{latency}");
    cfg.hardware.msg_table_depth = depth;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![Config::builtin("small").unwrap(), Config::builtin("default").unwrap(), variant(2, 2), variant(64, 1)]
}

fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("cpl_engine.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m = generate(&cfg).unwrap();
        let p = CplEngineParams::from_config(&cfg).unwrap();
        same_ports(&m.ports(), &ports(&p), &cfg.name);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module cpl_engine"));
    assert!(a.contains(&header(&cfg).command));
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.msg_table_depth = 128;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "hardware.msg_table_depth"));
}

#[test]
fn verilator_lints_clean() {
    if !have("verilator", "--version") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("ce-verilator-{}", cfg.name));
        verilator_lint(&write(&dir, &cfg), "cpl_engine");
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("ce-iverilog-{}", cfg.name));
        iverilog_compile(&write(&dir, &cfg));
    }
}

#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("ce-yosys-small");
    let file = write(&dir, &cfg);
    yosys_no_latches(&file, "cpl_engine");
}

/// Icarus replays the model on the RTL: packets of few messages on two
/// queues (so messages complete, collide in slots and wait), DMA
/// completions with right and wrong tags and error statuses, consume
/// answers with and without a receive, posts, opens, random idle and
/// backpressure on every output, and a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(2, 2)] {
        let dir = Scratch::new(&format!("ce-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = CplEngineParams::from_config(&cfg).unwrap();
        let mut dut = CplEngine::new(p);
        let defs = dut.ports().to_vec();
        let params = vec![
            ("CONNS".to_string(), p.conns),
            ("STREAMS".to_string(), p.streams),
            ("MSG_DEPTH".to_string(), p.msg_depth),
            ("READ_LATENCY".to_string(), p.read_latency),
            ("PENDING".to_string(), p.pending),
        ];
        let mut r = Rng::new(99);
        let cycles = 4000;
        let mut held = [false; 5];
        let chans = ["s_new", "s_dma", "s_post", "s_open", "s_cons"];
        // Cycles each of these outputs was high: the stimulus must reach
        // every kind of step.
        let seen_names =
            ["stat_recv_cpl", "stat_order_err", "stat_dma_err", "stat_msg_err", "m_consume_valid", "m_st_clear"];
        let mut seen = [0u32; 6];
        replay(&dir, &rtl, &mut dut, &params, cycles, |cycle, ins: &mut Vec<Bits>, outs: &[Bits]| {
            let rst_was = bit(&defs, ins, "rst");
            for (k, n) in seen_names.iter().enumerate() {
                seen[k] += u32::from(bit(&defs, outs, n) && (*n != "m_st_clear" || bit(&defs, outs, "m_st_valid")));
            }
            for (i, ch) in chans.iter().enumerate() {
                held[i] = cycle > 0
                    && !rst_was
                    && bit(&defs, ins, &format!("{ch}_valid"))
                    && !bit(&defs, outs, &format!("{ch}_ready"));
            }
            let mut s = |n: &str, v: u64| set(&defs, ins, n, v);
            s("rst", u64::from(cycle == 0 || cycle == cycles / 2));
            if !held[0] {
                s("s_new_valid", u64::from(r.below(10) < 3));
                s("s_new_conn", r.below(2));
                s("s_new_stream", r.below(2));
                s("s_new_msn", r.below(u64::from(p.msg_depth) + 3));
                s("s_new_payload_len", [0, 8, 16][r.below(3) as usize]);
                s("s_new_tag", r.below(2));
                s("s_new_send", r.below(2));
                s("s_new_msg_len", [0, 8, 16, 24][r.below(4) as usize]);
                s("s_new_imm_valid", r.below(2));
                s("s_new_imm", r.next_u64() & 0xffff_ffff);
                s("s_new_rq_seq", r.below(8));
                s("s_new_conn_id", r.below(1 << 24));
            }
            if !held[1] {
                s("s_dma_valid", u64::from(r.below(10) < 5));
                // Tags 0 and 1 on both sides: half the completions match
                // the pending head, half are order errors.
                s("s_dma_tag", r.below(2));
                s("s_dma_status", if r.below(8) == 0 { 1 + r.below(3) } else { 0 });
            }
            if !held[2] {
                s("s_post_valid", u64::from(r.below(20) == 0));
                s("s_post_conn", r.below(2));
                s("s_post_stream", r.below(2));
            }
            if !held[3] {
                s("s_open_valid", u64::from(r.below(100) == 0));
                s("s_open_conn", r.below(2));
            }
            if !held[4] {
                s("s_cons_valid", u64::from(r.below(10) < 5));
                s("s_cons_ok", u64::from(r.below(4) != 0));
                s("s_cons_rq_seq", r.below(16));
                s("s_cons_wr_id", r.next_u64());
            }
            for ch in ["m_consume", "m_cqe", "m_st"] {
                s(&format!("{ch}_ready"), u64::from(r.below(10) < 7));
            }
        });
        for (k, n) in seen_names.iter().enumerate() {
            assert!(seen[k] >= 2, "{}: {n} seen {} times", cfg.name, seen[k]);
        }
    }
}
