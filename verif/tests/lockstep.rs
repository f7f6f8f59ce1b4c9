//! The harness on its own test design, `verif_fifo`: lockstep over random
//! traffic, a deliberately broken model caught with a VCD window, run-time
//! tracing, the port-by-port API, and the speed of each side.

use std::path::PathBuf;

use mrnic_model::block::{port_index, zero_values, Bits, Block, PortDef};
use mrnic_verif::designs::verif_fifo::{self, VerifFifo};
use mrnic_verif::lockstep::{run_alone, FlipBit, ModelDut, Options, TraceWindow};
use mrnic_verif::{skip_without_verilator, Lockstep, Rtl, Traffic};

const CONFIG: &str = "test";

fn out_dir(test: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif").join(test);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn fifo() -> Box<dyn Block> {
    Box::new(VerifFifo::new())
}

fn traffic(seed: u64) -> Traffic {
    Traffic::new(&verif_fifo::ports(), seed).idle(30).backpressure(40).random_resets(1).record("m_axis_")
}

#[test]
fn verif_fifo_lockstep_100k_random_cycles() {
    if skip_without_verilator() {
        return;
    }
    let seed = 0x5eed_0001;
    let mut ls = Lockstep::new(Box::new(fifo), CONFIG, Options::default()).unwrap();
    let mut stim = traffic(seed);
    let stats = ls.run(&mut stim, 100_000).unwrap_or_else(|m| panic!("{m}"));
    assert!(stim.violations().is_empty(), "seed {seed}: {:?}", stim.violations());
    let counts = stim.counts();
    println!(
        "verif_fifo: {} cycles, {} transactions {counts:?}, {:.0} cycles/s",
        stats.cycles,
        stats.transactions,
        stats.cycles_per_second()
    );
    // Both streams moved, and the FIFO was full with backpressure at times.
    assert!(counts.iter().all(|(_, _, n)| *n > 20_000), "seed {seed}: too little traffic: {counts:?}");
}

#[test]
fn broken_model_is_caught_with_cycle_port_and_vcd_window() {
    if skip_without_verilator() {
        return;
    }
    let at = 4321;
    let port = port_index(&verif_fifo::ports(), "m_axis_data").unwrap();
    let make = move || -> Box<dyn Block> { Box::new(FlipBit::new(fifo(), port, 70, at)) };
    let dir = out_dir("broken_model");
    let opts = Options { vcd_dir: Some(dir.clone()), window_before: 20, ..Options::default() };
    let mut ls = Lockstep::new(Box::new(make), CONFIG, opts).unwrap();
    let mut stim = traffic(7);
    let m = ls.run(&mut stim, 10_000).expect_err("the flipped bit must be caught");
    println!("{m}");
    assert_eq!(m.cycle, at);
    assert_eq!(m.port, "m_axis_data");
    assert_eq!(m.seed, Some(7));
    let xor: Vec<u64> = m.expected.0.iter().zip(&m.actual.0).map(|(a, b)| a ^ b).collect();
    assert_eq!(xor, vec![0, 1 << 6], "exactly bit 70 differs");
    assert_eq!(m.history.len(), 8);
    assert_eq!(m.history.last().unwrap().0, at);
    let text = m.to_string();
    for needle in ["cycle 4321", "m_axis_data", "expected (model)", "actual   (RTL)", "seed: 7", "s_axis_tag="] {
        assert!(text.contains(needle), "report lacks `{needle}`:\n{text}");
    }
    let w = m.vcd.as_ref().unwrap_or_else(|| panic!("no VCD: {:?}", m.vcd_error));
    assert_eq!((w.start, w.end), (at - 20, at));
    for path in [&w.rtl, &w.model] {
        let vcd = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for p in verif_fifo::ports() {
            let declared = vcd
                .lines()
                .filter(|l| l.trim_start().starts_with("$var"))
                .any(|l| l.contains(&format!(" {} ", p.name)));
            assert!(declared, "{} lacks `{}`", path.display(), p.name);
        }
        assert!(vcd.contains("$scope module verif_fifo $end"), "{} lacks the module scope", path.display());
        assert!(vcd.contains(" clk $end"));
        assert!(vcd.contains(" m_axis_data [99:0] $end"));
    }
}

#[test]
fn trace_window_is_a_run_time_switch() {
    if skip_without_verilator() {
        return;
    }
    let dir = out_dir("trace_window");
    let rtl = dir.join("fifo.vcd");
    let trace = TraceWindow { start: 100, end: 119, rtl: rtl.clone() };
    let opts = Options { trace: Some(trace.clone()), ..Options::default() };
    let mut ls = Lockstep::new(Box::new(fifo), CONFIG, opts).unwrap();
    ls.run(&mut traffic(3), 300).unwrap_or_else(|m| panic!("{m}"));
    ls.finish().unwrap();
    let rtl_text = std::fs::read_to_string(&rtl).unwrap();
    let model_text = std::fs::read_to_string(trace.model_path()).unwrap();
    // Cycle c at 10c ns: the window is 1000..=1195 ns, nothing else.
    for text in [&rtl_text, &model_text] {
        let times: Vec<u64> =
            text.lines().filter_map(|l| l.strip_prefix('#')).filter_map(|t| t.trim().parse().ok()).collect();
        assert!(!times.is_empty());
        let per_ns = if text.contains("1ps") || text.contains("1 ps") { 1000 } else { 1 };
        assert_eq!(times.first().copied(), Some(1000 * per_ns), "first timestamp");
        assert_eq!(times.last().copied(), Some(1195 * per_ns), "last timestamp");
        assert!(text.contains(" s_axis_data [99:0] $end"));
    }
}

#[test]
fn port_by_port_access_round_trips_every_width_class() {
    if skip_without_verilator() {
        return;
    }
    let ports = verif_fifo::ports();
    let idx = |n: &str| port_index(&ports, n).unwrap();
    let mut rtl = Rtl::open("verif_fifo", CONFIG).unwrap();
    let data = Bits(vec![0x0123_4567_89ab_cdef, 0xf_edcb_a987]); // 100 bits
    let set = |rtl: &mut Rtl, n: &str, v: Bits| rtl.set_input(idx(n), &v);
    set(&mut rtl, "rst", Bits::from_u64(1, 1));
    rtl.clock(false);
    rtl.eval();
    rtl.clock(true);
    rtl.eval();
    set(&mut rtl, "rst", Bits::from_u64(1, 0));
    set(&mut rtl, "s_axis_valid", Bits::from_u64(1, 1));
    set(&mut rtl, "s_axis_data", data.clone());
    set(&mut rtl, "s_axis_tag", Bits::from_u64(12, 0xabc));
    set(&mut rtl, "m_axis_ready", Bits::from_u64(1, 0));
    rtl.clock(false);
    rtl.eval();
    assert_eq!(rtl.output(idx("s_axis_ready")), Bits::from_u64(1, 1));
    assert_eq!(rtl.output(idx("m_axis_valid")), Bits::from_u64(1, 0));
    rtl.clock(true);
    rtl.eval();
    set(&mut rtl, "s_axis_valid", Bits::from_u64(1, 0));
    rtl.clock(false);
    rtl.eval();
    assert_eq!(rtl.output(idx("m_axis_valid")), Bits::from_u64(1, 1));
    assert_eq!(rtl.output(idx("m_axis_data")), data);
    assert_eq!(rtl.output(idx("m_axis_tag")), Bits::from_u64(12, 0xabc));
    let sum = (0x0123_4567_89ab_cdef_u64 & ((1 << 40) - 1)) + 0xabc;
    assert_eq!(rtl.output(idx("m_axis_sum")), Bits::from_u64(40, sum));
    assert_eq!(rtl.output(idx("count")), Bits::from_u64(20, 1));
    // The batch calls agree with the per-port ones.
    let mut values = zero_values(&ports);
    rtl.get_outputs(&mut values);
    assert_eq!(values[idx("m_axis_data")], data);
    // A value wider than its port is masked, as in Verilog.
    set(&mut rtl, "s_axis_tag", Bits::from_u64(64, u64::MAX));
    assert_eq!(rtl.output(idx("s_axis_tag")), Bits::from_u64(12, 0xfff));
    rtl.finish();
}

#[test]
fn a_model_with_other_ports_is_refused() {
    if skip_without_verilator() {
        return;
    }
    struct Renamed(VerifFifo, Vec<PortDef>);
    impl Block for Renamed {
        fn name(&self) -> &'static str {
            "verif_fifo"
        }
        fn ports(&self) -> &[PortDef] {
            &self.1
        }
        fn eval(&mut self, i: &[Bits], o: &mut [Bits]) {
            self.0.eval(i, o)
        }
        fn tick(&mut self, i: &[Bits]) {
            self.0.tick(i)
        }
    }
    let make = || -> Box<dyn Block> {
        let mut ports = verif_fifo::ports();
        ports[4].width = 13;
        Box::new(Renamed(VerifFifo::new(), ports))
    };
    let err = Lockstep::new(Box::new(make), CONFIG, Options::default()).err().expect("must refuse");
    assert!(err.to_string().contains("s_axis_tag"), "{err}");
    let err = Rtl::open("verif_fifo", "no_such_config").err().expect("must refuse");
    assert!(err.to_string().contains("verif/build.rs"), "{err}");
}

/// Speed of each side on the same stimulus (printed, not asserted: run
/// with `--release --nocapture` for meaningful numbers).
#[test]
fn speed_model_rtl_lockstep() {
    if skip_without_verilator() {
        return;
    }
    let cycles = 200_000;
    let ports = verif_fifo::ports();
    let model = run_alone(&mut ModelDut::new(fifo()), &ports, &mut traffic(11), cycles);
    let rtl = run_alone(&mut Rtl::open("verif_fifo", CONFIG).unwrap(), &ports, &mut traffic(11), cycles);
    let mut ls = Lockstep::new(Box::new(fifo), CONFIG, Options::default()).unwrap();
    let lock = ls.run(&mut traffic(11), cycles).unwrap_or_else(|m| panic!("{m}"));
    assert_eq!(model.transactions, rtl.transactions);
    assert_eq!(rtl.transactions, lock.transactions);
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!(
        "verif_fifo speed ({profile}, {cycles} cycles incl. stimulus): model {:.2} M/s, RTL {:.2} M/s, lockstep {:.2} M/s (lockstep costs {:.2}x the RTL alone)",
        model.cycles_per_second() / 1e6,
        rtl.cycles_per_second() / 1e6,
        lock.cycles_per_second() / 1e6,
        rtl.cycles_per_second() / lock.cycles_per_second()
    );
}
