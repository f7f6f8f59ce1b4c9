//! Whole runs: determinism, conservation, and the RoCEv2 baseline's
//! go-back-N collapse under loss. Small fabrics and short runs.

mod common;

use common::{run, small_cfg};
use mrnic_testbench::scenario::TransportKind;
use mrnic_testbench::sim::{FailWhat, Failure, SimConfig};
use mrnic_testbench::workload::Pattern;
use mrnic_testbench::{MS, US};

fn stream(stop_us: u64, msg: u64) -> Pattern {
    Pattern::Stream { shift: 2, msg_bytes: msg, depth: 2, stop: stop_us * US }
}

#[test]
fn same_seed_same_result_roce() {
    let (a, _) = run(TransportKind::Roce, small_cfg(11, 0.02), stream(200, 256 << 10), None);
    let (b, _) = run(TransportKind::Roce, small_cfg(11, 0.02), stream(200, 256 << 10), None);
    assert_eq!(a, b);
    let (c, _) = run(TransportKind::Roce, small_cfg(12, 0.02), stream(200, 256 << 10), None);
    assert_ne!(a.events, c.events, "another seed draws other losses");
}

#[test]
fn same_seed_same_result_mrnic() {
    let (a, _) = run(TransportKind::Mrnic, small_cfg(3, 0.01), stream(40, 64 << 10), None);
    let (b, _) = run(TransportKind::Mrnic, small_cfg(3, 0.01), stream(40, 64 << 10), None);
    assert_eq!(a, b);
    assert!(a.ledger.msgs_received > 0);
}

#[test]
fn conservation_under_loss_both_transports() {
    for kind in [TransportKind::Roce, TransportKind::Mrnic] {
        let (r, sim) = run(kind, small_cfg(5, 0.02), Pattern::AllToAll { bytes_per_host: 256 << 10 }, None);
        let l = r.ledger;
        assert!(l.balanced(), "{kind:?}: {l:?}");
        assert!(r.finished, "{kind:?}: every message delivered: {l:?}");
        assert_eq!(l.bytes_received, l.bytes_posted, "{kind:?}");
        assert!(r.drops.loss > 0, "{kind:?}: the run saw loss");
        assert_eq!(sim.wl.outstanding(), 0);
    }
}

#[test]
fn conservation_reports_what_a_dead_plane_loses() {
    // RoCE pins each QP to a plane: the QPs on the failed plane exhaust their
    // retries and report their messages lost; every byte is still accounted.
    let mut cfg = SimConfig::new(2, common::leaf_spine(2, 2, 2, 2));
    cfg.failures = vec![Failure { at: 20 * US, what: FailWhat::Plane(0) }];
    cfg.max_time = 20 * MS;
    let (r, _) = run(TransportKind::Roce, cfg, stream(100, 128 << 10), None);
    let l = r.ledger;
    assert!(l.balanced(), "{l:?}");
    assert!(l.msgs_failed > 0, "{l:?}");
    assert!(r.drops.failure > 0);
}

#[test]
fn roce_go_back_n_collapses_under_loss() {
    let window = Some((100 * US, 500 * US));
    let (clean, _) = run(TransportKind::Roce, small_cfg(9, 0.0), stream(500, 1 << 20), window);
    let (lossy, _) = run(TransportKind::Roce, small_cfg(9, 0.05), stream(500, 1 << 20), window);
    assert!(clean.goodput.mean > 50.0, "clean {:?}", clean.goodput);
    assert!(
        lossy.goodput.mean < 0.3 * clean.goodput.mean,
        "5% loss {:?} against 0% {:?}",
        lossy.goodput,
        clean.goodput
    );
    assert!(lossy.transport_stats.retx_pkts > lossy.transport_stats.data_pkts / 3, "go-back-N resends whole windows");
}
