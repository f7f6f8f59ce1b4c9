//! The cycle model's NIC top in the fabric simulator
//! (`mrnic_verif::fabric`): the `model-crosscheck` scenario at its CI size
//! meets its targets, and a message whose bytes differ from what its
//! receiver expects is not delivered; the same ring all-reduce with the
//! Verilated top in lockstep behind every host, through loss and through a
//! plane failing mid-run.

mod common;

use mrnic_testbench::host::HostTransport;
use mrnic_testbench::scenario::{self, ModelFactory, Options, TransportKind};
use mrnic_testbench::sim::{FailWhat, Failure, SimConfig};
use mrnic_testbench::workload::Pattern;
use mrnic_testbench::US;
use mrnic_verif::fabric::{self, pattern, ModelNic, SEND_AREA};

#[test]
fn the_model_delivers_what_the_reference_delivers_within_the_tolerance() {
    let opts =
        Options { quick: true, verbose: false, model: Some(fabric::transports as ModelFactory), ..Options::default() };
    let res = scenario::run("model-crosscheck", &opts).unwrap();
    for p in &res.points {
        assert!(p.skipped.is_none(), "{}: {:?}", p.label, p.skipped);
        let r = p.result.as_ref().unwrap();
        assert!(r.finished, "{}: the workload finished", p.label);
    }
    let model = res.points.iter().find(|p| p.transport == TransportKind::Model).unwrap();
    assert!(model.figure("bytes_received").unwrap() > 0.0);
    let targets = scenario::targets(&res);
    assert_eq!(targets.len(), 2);
    for t in targets {
        assert_eq!(t.met, Some(true), "{t:?}");
    }
}

/// Host 0 sends one byte that is not the pattern's.
fn one_wrong_byte(sim: &SimConfig, cfg: &mrnic_proto::Config, max: u64) -> Result<Vec<Box<dyn HostTransport>>, String> {
    let mut out: Vec<Box<dyn HostTransport>> = Vec::new();
    for h in 0..sim.topo.hosts() {
        let mut n = ModelNic::new(cfg, h, sim.seed, max)?;
        if h == 0 {
            n.rig_mut().memory().write(SEND_AREA + 100, &[!pattern(100)]);
        }
        out.push(Box::new(n));
    }
    Ok(out)
}

#[test]
fn a_message_without_the_senders_bytes_is_not_delivered() {
    let mut spec = scenario::points("model-crosscheck", true, 1)
        .unwrap()
        .into_iter()
        .find(|p| p.transport == TransportKind::Model)
        .unwrap();
    // The ring stalls at the message host 1 refuses: stop soon after.
    spec.sim.max_time = 400 * US;
    let (r, _) = scenario::run_spec(&spec, Some(one_wrong_byte), &mut |_, _| {}).unwrap();
    assert!(!r.finished);
    assert!(r.ledger.msgs_incomplete >= 1, "{:?}", r.ledger);
    assert!(r.ledger.bytes_received < r.ledger.bytes_posted, "{:?}", r.ledger);
}

/// The crosscheck's 2-host, 4-plane ring all-reduce (256 KiB a host) with
/// every host's top the model and the Verilated RTL in lockstep: at 1% loss
/// on every link, with plane 2 failing a third of the way in (silently:
/// the transport finds it by timeouts and PROBEs and moves its paths), and
/// both at once (seed 2, 2% loss, the failure at 130 us: it once overflowed
/// tx_state's pending event list, a SACK stage finding more silent losses
/// than the list held; now a path sends at most suspect_after_rtos SILENT
/// events a step). The full run (`MRNIC_COSIM_FULL=1`) sweeps 24 seeds,
/// 0 to 5% loss, a plane failing in every other one. Every message
/// arrives once with the sender's bytes and no output of either top
/// differs from its model on any cycle.
#[test]
fn the_rtl_runs_the_all_reduce_through_loss_and_a_plane_failure() {
    if mrnic_verif::skip_without_verilator() {
        return;
    }
    let mut cases =
        vec![(1, 0.01, None), (1, 0.0, Some((150, FailWhat::Plane(2)))), (2, 0.02, Some((130, FailWhat::Plane(2))))];
    if common::full() {
        for seed in 3..=24u64 {
            let loss = [0.0, 0.005, 0.01, 0.02, 0.05][seed as usize % 5];
            let fail = (seed % 2 == 0).then(|| (80 + 10 * (seed % 12), FailWhat::Plane((seed / 2 % 4) as u8)));
            cases.push((seed, loss, fail));
        }
    }
    for (seed, loss, fail) in cases {
        let mut spec = scenario::points("model-crosscheck", true, seed)
            .unwrap()
            .into_iter()
            .find(|p| p.transport == TransportKind::Model)
            .unwrap();
        // The RTL is built for `small` as it is: its line rate (10 Gb/s)
        // is what the scenario derives the NIC's config from.
        spec.sim.nic.gbps = 10.0;
        spec.pattern = Pattern::RingAllReduce { bytes_per_host: 256 << 10 };
        spec.sim.loss = loss;
        if let Some((at, what)) = fail {
            spec.sim.failures.push(Failure { at: at * US, what });
        }
        let what = format!("seed {seed}, {}% loss, failure {fail:?}", loss * 100.0);
        let (r, _) = scenario::run_spec(&spec, Some(fabric::rtl_transports), &mut |_, _| {}).unwrap();
        assert!(r.finished, "{what}: the workload finished: {:?}", r.ledger);
        assert_eq!(r.ledger.msgs_received, r.ledger.msgs_posted, "{what}: {:?}", r.ledger);
        assert_eq!(r.ledger.bytes_received, r.ledger.bytes_posted, "{what}: {:?}", r.ledger);
        println!("{what}: {:?}, completion {:?} us", r.ledger, r.completion_us);
    }
}
