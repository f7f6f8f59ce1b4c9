//! Switch and link behaviour with raw packets: ECMP pins a flow to one path
//! and spreads source ports, ECN marks above the threshold, tail drop at a
//! full queue, and a failed plane loses everything sent on it.

mod common;

use common::{leaf_spine, raw, sink_sim};
use mrnic_testbench::host::{ECN_CE, ECN_ECT0};
use mrnic_testbench::link::QueueConfig;
use mrnic_testbench::sim::{FailWhat, Failure, SimConfig};
use mrnic_testbench::topo::LinkKind;

#[test]
fn ecmp_pins_a_flow_and_spreads_source_ports() {
    let (mut sim, got) = sink_sim(SimConfig::new(1, leaf_spine(2, 4, 8, 1)));
    // One flow (fixed ports): every packet takes the same uplink.
    for i in 0..50 {
        sim.inject(0, raw(0, 5, 50_000, 0, i));
    }
    sim.run(&mut |_| {});
    assert_eq!(got.borrow().len(), 50);
    let used: Vec<u64> = sim.links.iter().filter(|l| l.kind == LinkKind::Up).map(|l| l.tx_pkts).collect();
    assert_eq!(used.iter().filter(|&&n| n > 0).count(), 1, "{used:?}");
    assert_eq!(used.iter().sum::<u64>(), 50);
    let path = sim.route_of(&raw(0, 5, 50_000, 0, 0));
    assert_eq!(path.len(), 4, "host -> leaf -> spine -> leaf -> host is four links");

    // Many source ports: the 8 uplinks of leaf 0 all carry some.
    let (mut sim, _) = sink_sim(SimConfig::new(1, leaf_spine(2, 4, 8, 1)));
    for sport in 0..256u16 {
        sim.inject(0, raw(0, 5, 49152 + sport, 0, sport as u64));
    }
    sim.run(&mut |_| {});
    let used: Vec<u64> = sim
        .links
        .iter()
        .filter(|l| l.kind == LinkKind::Up && l.from == mrnic_testbench::topo::Node::Switch(0))
        .map(|l| l.tx_pkts)
        .collect();
    assert_eq!(used.len(), 8);
    assert!(used.iter().all(|&n| n >= 10), "source ports should spread over every spine: {used:?}");
}

#[test]
fn ecn_marks_above_threshold_only() {
    // Three senders into one receiver: the receiver's downlink queues up.
    let mut cfg = SimConfig::new(1, leaf_spine(1, 4, 1, 1));
    cfg.queue = QueueConfig { ecn_threshold_bytes: 3 * 4206, buffer_bytes: 10_000_000 };
    let (mut sim, got) = sink_sim(cfg);
    for i in 0..20 {
        for s in 1..4 {
            sim.inject(s, raw(s, 0, 50_000 + s as u16, 0, i));
        }
    }
    sim.run(&mut |_| {});
    let got = got.borrow();
    assert_eq!(got.len(), 60);
    let marked = got.iter().filter(|(_, p)| p.ecn == ECN_CE).count();
    assert!(marked > 0, "a queue past the threshold marks");
    assert!(got[..3].iter().all(|(_, p)| p.ecn == ECN_ECT0), "the first arrivals found an empty queue");
    assert_eq!(marked as u64, sim.ce_marks());
}

#[test]
fn tail_drop_at_full_queue() {
    let mut cfg = SimConfig::new(1, leaf_spine(1, 4, 1, 1));
    cfg.queue = QueueConfig { ecn_threshold_bytes: u64::MAX, buffer_bytes: 5 * 4206 };
    let (mut sim, got) = sink_sim(cfg);
    for i in 0..30 {
        for s in 1..4 {
            sim.inject(s, raw(s, 0, 50_000, 0, i));
        }
    }
    sim.run(&mut |_| {});
    let delivered = got.borrow().len() as u64;
    assert!(sim.drops.tail > 0, "a full buffer drops");
    assert_eq!(delivered + sim.drops.tail, 90, "every packet is delivered or counted as dropped");
    let down = sim.links.iter().find(|l| l.kind == LinkKind::HostDown && l.to == mrnic_testbench::topo::Node::Host(0));
    assert!(down.expect("host 0 downlink").max_queued_bytes <= 5 * 4206);
}

#[test]
fn plane_failure_drops_everything_on_that_plane() {
    let mut cfg = SimConfig::new(1, leaf_spine(2, 2, 2, 4));
    cfg.failures = vec![Failure { at: 0, what: FailWhat::Plane(2) }];
    let (mut sim, got) = sink_sim(cfg);
    for i in 0..40u64 {
        sim.inject(0, raw(0, 3, 50_000 + i as u16, (i % 4) as u8, i));
    }
    sim.run(&mut |_| {});
    let got = got.borrow();
    assert_eq!(got.len(), 30);
    assert!(got.iter().all(|(_, p)| p.plane != 2));
    assert_eq!(sim.drops.failure, 10);
}

#[test]
fn random_loss_rate_is_close_to_configured() {
    let mut cfg = SimConfig::new(7, leaf_spine(1, 2, 1, 1));
    cfg.loss = 0.1;
    let (mut sim, got) = sink_sim(cfg);
    for i in 0..2000 {
        sim.inject(0, raw(0, 1, 50_000, 0, i));
    }
    sim.run(&mut |_| {});
    let lost = sim.drops.loss as f64 / 2000.0;
    assert!((0.07..0.13).contains(&lost), "loss {lost}");
    assert_eq!(got.borrow().len() as u64 + sim.drops.loss, 2000);
}
