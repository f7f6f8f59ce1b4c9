//! The reference over real UDP sockets on 127.0.0.1: both ends in one
//! process (`transfer::loopback`), with loss injected at the sender, and the
//! receiver's memory checked byte for byte.

use std::time::Duration;

use mrnic_reference::transfer::{self, SendOpts};

fn opts(bytes: u64, paths: u8, streams: u8, seed: u64) -> SendOpts {
    SendOpts { bytes, msg_size: 256 << 10, paths, streams, seed, timeout: Duration::from_secs(120) }
}

fn run(o: &SendOpts, drop_ppm: u32) {
    let cfg = transfer::udp_config();
    let (sent, served) = transfer::loopback(&cfg, o, drop_ppm, None).expect("the transfer completes");
    let served = served.expect("the server finishes");
    eprintln!("{sent}{served}");
    assert!(served.verdict.matched, "seed {}: {:?}", o.seed, served.verdict);
    assert_eq!(sent.verdict, Some(served.verdict));
    assert_eq!(served.verdict.placed, o.bytes, "every byte placed once");
    if drop_ppm > 0 {
        assert!(sent.injected_drops > 0 && sent.retransmits >= sent.injected_drops / 2, "{sent}");
    }
}

#[test]
fn loopback_one_percent_loss_verifies() {
    run(&opts(4 << 20, 4, 2, 11), 10_000);
}

#[test]
fn loopback_five_percent_loss_verifies() {
    run(&opts(4 << 20, 8, 3, 12), 50_000);
}

#[test]
fn loopback_reports_a_mismatch_against_another_seed() {
    let cfg = transfer::udp_config();
    let (sent, served) = transfer::loopback(&cfg, &opts(1 << 20, 2, 1, 13), 0, Some(14)).expect("completes");
    let v = served.expect("the server finishes").verdict;
    assert!(!v.matched && v.mismatched > 0);
    assert_eq!(sent.verdict, Some(v));
}

/// `mrnic bench udp` without the binary, for profiling: run with
/// `cargo test --release -p mrnic-reference --test udp bench -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_reference_against_blast() {
    let bytes = std::env::var("MRNIC_BENCH_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(64 << 20);
    let o = SendOpts { bytes, msg_size: 1 << 20, paths: 4, streams: 1, seed: 1, timeout: Duration::from_secs(300) };
    let runs = std::env::var("MRNIC_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let c = mrnic_reference::blast::compare(&transfer::udp_config(), &o, runs).expect("runs");
    eprint!("{c}");
}
