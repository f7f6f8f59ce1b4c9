//! `path_selector`: the cycle model and the generated RTL in lockstep over
//! seeded random traffic with idle cycles, backpressure, credit clears and
//! mid-run resets. A mismatch fails with the full report (cycle, port, both
//! values, the last inputs, the seed and the VCD window of both sides).
//!
//! Every output is compared every cycle, idle payloads included: the RTL
//! zeroes `m_sel_*` while `m_sel_valid` is low, as the model does.

use std::path::PathBuf;

use mrnic_proto::Config;
use mrnic_verif::lockstep::Options;
use mrnic_verif::{blocks, skip_without_verilator, Lockstep};

struct Run {
    config: &'static str,
    seed: u64,
    cycles: u64,
    idle: u32,
    backpressure: u32,
}

fn run(test: &str, r: Run) {
    if skip_without_verilator() {
        return;
    }
    let cfg = Config::builtin(r.config).unwrap();
    let s = blocks::session("path_selector", &cfg, r.config, r.seed).unwrap_or_else(|e| panic!("{e}"));
    let vcd_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif").join(test);
    let opts = Options { vcd_dir: Some(vcd_dir), ..Options::default() };
    let mut ls = Lockstep::new(s.make_model, s.config, opts).unwrap_or_else(|e| panic!("{e}"));
    let mut traffic = s.traffic.idle(r.idle).backpressure(r.backpressure);
    let stats =
        ls.run(&mut traffic, r.cycles).unwrap_or_else(|m| panic!("path_selector ({}) lockstep failed:\n{m}", r.config));
    assert!(traffic.violations().is_empty(), "seed {}: {:?}", r.seed, traffic.violations());
    let counts = traffic.counts();
    println!(
        "path_selector ({}), seed {}: {} cycles, {} transactions {counts:?}",
        r.config, r.seed, stats.cycles, stats.transactions
    );
    assert!(counts.iter().all(|(_, _, n)| *n > r.cycles / 20), "seed {}: too little traffic: {counts:?}", r.seed);
}

#[test]
fn small_random_traffic_idle_and_backpressure() {
    let r = Run { config: "small", seed: 0x9a7e_5e1e, cycles: 200_000, idle: 20, backpressure: 30 };
    run("ps_small_random", r);
}

#[test]
fn small_back_to_back_without_backpressure() {
    // A request every cycle, every decision taken at once: the forwarding
    // registers carry most picks.
    let r = Run { config: "small", seed: 0xb2b, cycles: 50_000, idle: 0, backpressure: 0 };
    run("ps_small_back_to_back", r);
}

#[test]
fn small_heavy_backpressure() {
    // The output FIFO fills, and s_req_ready must throttle the requests.
    let r = Run { config: "small", seed: 0xbac4, cycles: 50_000, idle: 0, backpressure: 85 };
    run("ps_small_backpressure", r);
}

#[test]
fn default_config_random_traffic() {
    let r = Run { config: "default", seed: 0xdef, cycles: 50_000, idle: 20, backpressure: 30 };
    run("ps_default_random", r);
}
