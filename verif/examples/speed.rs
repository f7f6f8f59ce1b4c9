//! Cycles per second of the `verif_fifo` test design: the Verilated RTL
//! alone (raw, and under random traffic), the model alone, and both in
//! lockstep; then the same for `path_selector` (small).
//! `cargo run --release -p mrnic-verif --example speed [CYCLES]`

use std::time::Instant;

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_verif::designs::verif_fifo::{self, VerifFifo};
use mrnic_verif::lockstep::{run_alone, ModelDut, Options};
use mrnic_verif::stimulus::Stimulus;
use mrnic_verif::{skip_without_verilator, Lockstep, Rtl, Traffic};

/// Time this thread spent on a CPU (Linux), so other processes competing
/// for the cores do not skew the numbers; wall time where unavailable.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse::<f64>().ok()))
        .map(|ns| ns / 1e9)
        .unwrap_or_else(|| START.with(|t| t.elapsed().as_secs_f64()))
}

thread_local! {
    static START: Instant = Instant::now();
}

/// Runs `f` and returns M cycles/s of CPU time.
fn measure(cycles: u64, f: impl FnOnce()) -> f64 {
    let t = cpu_seconds();
    f();
    cycles as f64 / (cpu_seconds() - t) / 1e6
}

fn traffic() -> Traffic {
    Traffic::new(&verif_fifo::ports(), 11).idle(30).backpressure(40)
}

fn main() {
    if skip_without_verilator() {
        return;
    }
    let cycles: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let ports = verif_fifo::ports();

    // The RTL with fixed inputs (valid and ready toggling): the bridge and
    // Verilator only.
    let mut rtl = Rtl::open("verif_fifo", "test").unwrap();
    let mut v = zero_values(&ports);
    let (sv, mr) = (port_index(&ports, "s_axis_valid").unwrap(), port_index(&ports, "m_axis_ready").unwrap());
    v[port_index(&ports, "s_axis_data").unwrap()] = Bits(vec![u64::MAX, 0xf_ffff_ffff]);
    let raw = measure(cycles, || {
        for c in 0..cycles {
            v[sv].0[0] = c & 1;
            v[mr].0[0] = (c >> 1) & 1;
            rtl.comb(&mut v);
            rtl.posedge();
        }
    });

    // The stimulus alone, to see what it costs.
    let mut stim = traffic();
    let mut v = zero_values(&ports);
    let stim_only = measure(cycles, || {
        for c in 0..cycles {
            stim.drive(c, &mut v);
            stim.observe(c, &v);
        }
    });

    let mut rtl = Rtl::open("verif_fifo", "test").unwrap();
    let rtl_t = measure(cycles, || {
        run_alone(&mut rtl, &ports, &mut traffic(), cycles);
    });
    let mut model = ModelDut::new(Box::new(VerifFifo::new()));
    let model_t = measure(cycles, || {
        run_alone(&mut model, &ports, &mut traffic(), cycles);
    });
    let mut ls =
        Lockstep::new(Box::new(|| -> Box<dyn Block> { Box::new(VerifFifo::new()) }), "test", Options::default())
            .unwrap();
    let lock = measure(cycles, || {
        ls.run(&mut traffic(), cycles).unwrap_or_else(|m| panic!("{m}"));
    });

    println!("verif_fifo, {cycles} cycles, M cycles per CPU second:");
    println!("  RTL alone, fixed inputs:      {raw:6.2}");
    println!("  stimulus alone (no design):   {stim_only:6.2}");
    println!("  RTL alone, random traffic:    {rtl_t:6.2}");
    println!("  model alone, random traffic:  {model_t:6.2}");
    println!("  lockstep, random traffic:     {lock:6.2}");
    println!("  lockstep / RTL alone (same traffic): {:.2}x the time", rtl_t / lock);

    // path_selector (small), idle payloads don't-care (see verif/README.md).
    let cfg = mrnic_proto::Config::builtin("small").unwrap();
    let session = || mrnic_verif::blocks::session("path_selector", &cfg, "small", 11).unwrap();
    let s = session();
    let ports = (s.make_model)().ports().to_vec();
    let cycles = cycles / 2;
    let mut rtl = Rtl::open("path_selector", "small").unwrap();
    let rtl_t = measure(cycles, || {
        run_alone(&mut rtl, &ports, &mut session().traffic, cycles);
    });
    let mut model = ModelDut::new((s.make_model)());
    let model_t = measure(cycles, || {
        run_alone(&mut model, &ports, &mut session().traffic, cycles);
    });
    let opts = Options { ignore_idle_payload: true, ..Options::default() };
    let mut ls = Lockstep::new(s.make_model, "small", opts).unwrap();
    let lock = measure(cycles, || {
        ls.run(&mut session().traffic, cycles).unwrap_or_else(|m| panic!("{m}"));
    });
    println!("path_selector (small), {cycles} cycles, M cycles per CPU second:");
    println!("  RTL alone, random traffic:    {rtl_t:6.2}");
    println!("  model alone, random traffic:  {model_t:6.2}");
    println!("  lockstep, random traffic:     {lock:6.2}");
    println!("  lockstep / RTL alone (same traffic): {:.2}x the time", rtl_t / lock);
}
