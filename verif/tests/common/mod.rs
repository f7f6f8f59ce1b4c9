//! Shared by the per-block lockstep tests: running a session, the full-run
//! switch, and the proptest wrapper.
#![allow(dead_code)]

use std::path::PathBuf;

use mrnic_proto::Config;
use mrnic_verif::lockstep::{ModelFactory, Options, RunStats};
use mrnic_verif::{blocks, skip_without_verilator, Coverage, Lockstep, Stimulus, Traffic};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestCaseError, TestRunner};

/// `MRNIC_COSIM_FULL=1`: the full run (a million random cycles per block);
/// otherwise the reduced counts `cargo test` runs.
pub fn full() -> bool {
    std::env::var("MRNIC_COSIM_FULL").is_ok_and(|v| v == "1" || v == "true")
}

/// `reduced` cycles in `cargo test`, a million in the full run.
pub fn cycles(reduced: u64) -> u64 {
    if full() {
        1_000_000
    } else {
        reduced
    }
}

pub fn vcd_dir(test: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif").join(test)
}

pub fn lockstep(make: ModelFactory, config: &str, test: &str) -> Lockstep {
    lockstep_idle(make, config, test, false)
}

/// [`lockstep`], comparing idle output payloads or not (see
/// `blocks::Session::idle_payload_dont_care`).
pub fn lockstep_idle(make: ModelFactory, config: &str, test: &str, idle_dont_care: bool) -> Lockstep {
    let opts = Options { vcd_dir: Some(vcd_dir(test)), ignore_idle_payload: idle_dont_care, ..Options::default() };
    Lockstep::new(make, config, opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `traffic` in lockstep, failing with the mismatch report or the
/// first valid/ready violation; prints the counts and the coverage.
pub fn run(name: &str, ls: &mut Lockstep, traffic: &mut Traffic, cycles: u64) -> RunStats {
    let stats = ls.run(traffic, cycles).unwrap_or_else(|m| panic!("{name}: lockstep failed:\n{m}"));
    let seed = traffic.seed().unwrap_or(0);
    assert!(traffic.violations().is_empty(), "{name}, seed {seed}: {:?}", traffic.violations());
    println!(
        "{name}, seed {seed}: {} cycles, {} transactions {:?}",
        stats.cycles,
        stats.transactions,
        traffic.counts()
    );
    stats
}

/// A session of `block` on the built-in `config`, its traffic adjusted by
/// `tweak`, run for `cycles`; returns the coverage (`None`: skipped, no
/// Verilator).
pub fn session(
    test: &str,
    block: &str,
    config: &str,
    seed: u64,
    cycles: u64,
    tweak: impl FnOnce(Traffic) -> Traffic,
) -> Option<Coverage> {
    if skip_without_verilator() {
        return None;
    }
    let cfg = Config::builtin(config).unwrap();
    let s = blocks::session(block, &cfg, config, seed).unwrap_or_else(|e| panic!("{e}"));
    let mut ls = lockstep_idle(s.make_model, s.config, test, s.idle_payload_dont_care);
    let mut traffic = tweak(s.traffic);
    run(&format!("{block} ({config})"), &mut ls, &mut traffic, cycles);
    Some(traffic.coverage().clone())
}

/// Asserts that the coverage has no holes except `allowed` (printing it).
pub fn assert_covered(cov: &Coverage, allowed: &[&str]) {
    println!("{cov}");
    let holes: Vec<_> = cov.holes().into_iter().filter(|h| !allowed.contains(h)).collect();
    assert!(holes.is_empty(), "coverage holes: {holes:?}\n{cov}");
}

/// Proptest over the random sessions of `block`: the seed, the run length,
/// the idle and the backpressure percentages are drawn, and a failing case
/// shrinks toward fewer cycles and less idle and backpressure; the report
/// names the seed, and the mismatch report the cycle and the VCD window.
/// Cases: 6 of up to 8000 cycles in `cargo test`, 64 in the full run.
pub fn proptest_sessions(block: &'static str, config: &'static str) {
    if skip_without_verilator() {
        return;
    }
    let (cases, max_cycles): (u32, u64) = if full() { (64, 20_000) } else { (6, 8_000) };
    let cfg = Config::builtin(config).unwrap();
    let mut runner = TestRunner::new(PtConfig { cases, failure_persistence: None, ..PtConfig::default() });
    let strategy = (any::<u64>(), 500..max_cycles, 0u32..60, 0u32..90);
    let result = runner.run(&strategy, |(seed, cycles, idle, bp)| {
        let s = blocks::session(block, &cfg, config, seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut ls = lockstep_idle(s.make_model, s.config, &format!("proptest-{block}"), s.idle_payload_dont_care);
        let mut traffic = s.traffic.idle(idle).backpressure(bp);
        match ls.run(&mut traffic, cycles) {
            Ok(_) if traffic.violations().is_empty() => Ok(()),
            Ok(_) => Err(TestCaseError::fail(format!("seed {seed}: {:?}", traffic.violations()))),
            Err(m) => Err(TestCaseError::fail(format!("seed {seed}, idle {idle}%, backpressure {bp}%:\n{m}"))),
        }
    });
    if let Err(e) = result {
        panic!("{block} ({config}) proptest: {e}");
    }
}

/// A random session of `$block` on the `default` config, `$cycles` long
/// (the reset sweep included), with no coverage hole but `$hole`s (then
/// `$check` on the coverage).
#[macro_export]
macro_rules! default_random {
    ($block:literal, $seed:expr, $cycles:expr, [$($hole:expr),* $(,)?]) => {
        $crate::default_random!($block, $seed, $cycles, [$($hole),*], |_cov| {});
    };
    ($block:literal, $seed:expr, $cycles:expr, [$($hole:expr),* $(,)?], $check:expr) => {
        #[test]
        fn default_random() {
            let test = concat!($block, "_default_random");
            let Some(cov) = common::session(test, $block, "default", $seed, $cycles, |t| t) else {
                return;
            };
            common::assert_covered(&cov, &[$($hole),*]);
            let check: fn(&mrnic_verif::Coverage) = $check;
            check(&cov);
        }
    };
}

/// The two tests of a block whose traffic module says everything: a
/// random session of `cycles(40_000)` on `small` with no coverage hole
/// (then `$check` on the coverage, for counts a bin alone cannot state),
/// and [`proptest_sessions`].
#[macro_export]
macro_rules! random_and_proptest {
    ($block:literal, $seed:expr) => {
        $crate::random_and_proptest!($block, $seed, |_cov| {});
    };
    ($block:literal, $seed:expr, $check:expr) => {
        #[test]
        fn small_random() {
            let test = concat!($block, "_small_random");
            let Some(cov) = common::session(test, $block, "small", $seed, common::cycles(40_000), |t| t) else {
                return;
            };
            common::assert_covered(&cov, &[]);
            let check: fn(&mrnic_verif::Coverage) = $check;
            check(&cov);
        }

        #[test]
        fn small_proptest_seeds_and_rates() {
            common::proptest_sessions($block, "small");
        }
    };
}
