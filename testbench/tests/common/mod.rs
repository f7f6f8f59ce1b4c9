//! Helpers shared by the testbench tests: small fabrics, a packet sink
//! transport and raw test packets.

#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use mrnic_testbench::host::{AppEvent, Body, ConnSpec, HostTransport, Packet, PortMask, TransportStats, ECN_ECT0};
use mrnic_testbench::metrics::{collect, RunResult};
use mrnic_testbench::rng::Rng;
use mrnic_testbench::scenario::{make_transports, TransportKind};
use mrnic_testbench::sim::{Sim, SimConfig};
use mrnic_testbench::topo::TopoSpec;
use mrnic_testbench::workload::{Pattern, Workload};
use mrnic_testbench::{ConnId, HostId, Time, US, WIRE_OVERHEAD};

/// A transport that sends nothing and records what arrives.
pub struct Sink {
    pub got: Rc<RefCell<Vec<(HostId, Packet)>>>,
    pub host: HostId,
}

impl HostTransport for Sink {
    fn name(&self) -> &'static str {
        "sink"
    }
    fn connect(&mut self, _: ConnSpec) {}
    fn post_send(&mut self, _: Time, _: ConnId, _: u64) {}
    fn handle_packet(&mut self, _: Time, pkt: Packet) {
        self.got.borrow_mut().push((self.host, pkt));
    }
    fn poll_transmit(&mut self, _: Time, _: PortMask) -> Option<Packet> {
        None
    }
    fn on_timer(&mut self, _: Time) {}
    fn next_deadline(&mut self) -> Option<Time> {
        None
    }
    fn poll_event(&mut self) -> Option<AppEvent> {
        None
    }
    fn stats(&self) -> TransportStats {
        TransportStats::default()
    }
}

pub type Got = Rc<RefCell<Vec<(HostId, Packet)>>>;

/// A simulator over `topo` whose hosts are sinks, with no workload.
pub fn sink_sim(cfg: SimConfig) -> (Sim, Got) {
    let got: Got = Rc::new(RefCell::new(Vec::new()));
    let hosts = cfg.topo.hosts();
    let nics: Vec<Box<dyn HostTransport>> =
        (0..hosts).map(|h| Box::new(Sink { got: got.clone(), host: h }) as Box<dyn HostTransport>).collect();
    let wl = Workload::new(Pattern::Incast { senders: 0, bytes: 0 }, hosts, Rng::new(0));
    let mut sim = Sim::new(cfg, nics, wl);
    sim.stop_when_finished = false;
    (sim, got)
}

pub fn raw(src: HostId, dst: HostId, sport: u16, plane: u8, id: u64) -> Packet {
    Packet {
        src,
        dst,
        sport,
        dport: 4797,
        plane,
        ecn: ECN_ECT0,
        wire_bytes: 4096 + WIRE_OVERHEAD + 40,
        payload: 4096,
        body: Body::Raw(id),
    }
}

pub fn leaf_spine(leaves: u32, per_leaf: u32, spines: u32, planes: u32) -> TopoSpec {
    TopoSpec::LeafSpine { leaves, hosts_per_leaf: per_leaf, spines, planes }
}

/// Runs a workload with a transport to completion (or `max`).
pub fn run(kind: TransportKind, cfg: SimConfig, pattern: Pattern, window: Option<(Time, Time)>) -> (RunResult, Sim) {
    let hosts = cfg.topo.hosts();
    let nics = make_transports(kind, "default", &cfg, pattern.max_msg_bytes(hosts), None).expect("transport available");
    let wl = Workload::new(pattern, hosts, Rng::new(cfg.seed ^ 0x776f_726b_6c6f_6164));
    let mut sim = Sim::new(cfg, nics, wl);
    sim.run(&mut |_| {});
    (collect(&sim, window), sim)
}

pub fn small_cfg(seed: u64, loss: f64) -> SimConfig {
    let mut c = SimConfig::new(seed, leaf_spine(2, 2, 2, 1));
    c.loss = loss;
    c.max_time = 20_000 * US;
    c
}
