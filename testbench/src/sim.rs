//! The run loop: hosts (transport + NIC ports), links and switches driven
//! by one event queue and one seeded RNG, with failures at given times.

use serde::{Deserialize, Serialize};

use crate::event::EventQueue;
use crate::host::{HostTransport, NicTiming, Packet, PortMask};
use crate::link::{Link, Offer, PktId, QueueConfig};
use crate::rng::Rng;
use crate::switch::{ecmp_hash, ecmp_pick, switch_salt};
use crate::topo::{LinkKind, Node, TopoSpec, Topology};
use crate::workload::Workload;
use crate::{HostId, LinkId, SwitchId, Time, NS};

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum FailWhat {
    /// A cable: the link and its reverse direction.
    Link(LinkId),
    /// A switch and every link touching it.
    Switch(SwitchId),
    /// Every switch and link of one plane.
    Plane(u8),
}

/// A failure at a given time. Packets on (or sent into) a failed element are
/// lost. Failures are silent: NIC ports stay up and ECMP is not
/// reconverged, so the transport must notice by itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub at: Time,
    pub what: FailWhat,
}

/// Everything that sets up a run apart from the transport and workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub seed: u64,
    pub topo: TopoSpec,
    pub nic: NicTiming,
    /// Propagation plus switch pipeline delay of every link.
    pub link_delay_ns: u64,
    pub queue: QueueConfig,
    /// Random loss on every switch-to-host link: each packet, data or
    /// control, sees it exactly once on its way.
    pub loss: f64,
    pub failures: Vec<Failure>,
    /// Width of the utilization time buckets.
    pub bucket_ns: u64,
    /// The run stops here even if the workload has not finished.
    pub max_time: Time,
}

impl SimConfig {
    pub fn new(seed: u64, topo: TopoSpec) -> SimConfig {
        SimConfig {
            seed,
            topo,
            nic: NicTiming::default(),
            link_delay_ns: 600,
            queue: QueueConfig::default(),
            loss: 0.0,
            failures: Vec::new(),
            bucket_ns: 10_000,
            max_time: 1_000_000 * NS,
        }
    }

    /// Round trip of an MTU-sized packet and its ACK over `hops` links
    /// without queueing: the yardstick for "within N RTTs".
    pub fn base_rtt(&self, hops: u32, mtu_wire: u32) -> Time {
        let port_gbps = self.nic.gbps / self.topo.planes() as f64;
        let ser = (mtu_wire as f64 * 8.0 / port_gbps * 1000.0) as Time; // ps
        let one_way = hops as Time * (self.link_delay_ns * NS + ser) + self.nic.tx_latency_ns * NS;
        2 * one_way + 2 * self.nic.rx_latency_ns * NS
    }
}

/// Drop counters by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    /// Random loss.
    pub loss: u64,
    /// Output queue full.
    pub tail: u64,
    /// A failed link or switch.
    pub failure: u64,
    /// Data payload bytes in the dropped packets.
    pub payload_bytes: u64,
}

enum Ev {
    TxDone(LinkId),
    Arrive(LinkId, PktId),
    HostRx(HostId, PktId),
    Timer(HostId),
    Fail(u32),
}

pub struct Sim {
    pub cfg: SimConfig,
    pub now: Time,
    q: EventQueue<Ev>,
    rng: Rng,
    pub topo: Topology,
    pub links: Vec<Link>,
    pub switch_failed: Vec<bool>,
    salts: Vec<u64>,
    pkts: Vec<Option<Packet>>,
    free: Vec<PktId>,
    pub nics: Vec<Box<dyn HostTransport>>,
    timer_at: Vec<Option<Time>>,
    pub wl: Workload,
    pub drops: Drops,
    /// Events processed.
    pub events: u64,
    /// Host egress wire bytes per (bucket, plane).
    pub plane_tx: Vec<Vec<u64>>,
    /// Data payload bytes arriving at hosts per bucket (duplicates included).
    pub rx_payload: Vec<u64>,
    /// Time of each failure that has happened.
    pub failed_at: Vec<Time>,
    hops: Vec<LinkId>,
    touched: Vec<HostId>,
    bucket: Time,
    /// Stop as soon as the workload has finished (default); tests that
    /// inject raw packets clear it to run until no event is left.
    pub stop_when_finished: bool,
}

impl Sim {
    /// Builds the fabric and opens the workload's connections. `nics[h]` is
    /// host h's transport.
    pub fn new(cfg: SimConfig, nics: Vec<Box<dyn HostTransport>>, wl: Workload) -> Sim {
        let topo = Topology::build(&cfg.topo, cfg.nic.gbps);
        assert_eq!(nics.len(), topo.hosts as usize, "one transport per host");
        let links: Vec<Link> = topo
            .links
            .iter()
            .map(|d| {
                let mut prop = cfg.link_delay_ns * NS;
                if d.kind == LinkKind::HostUp {
                    prop += cfg.nic.tx_latency_ns * NS;
                }
                let mut l = Link::new(d, prop, cfg.queue);
                if d.kind == LinkKind::HostDown {
                    l.loss = cfg.loss;
                }
                if d.kind == LinkKind::HostUp {
                    // The NIC's own port queue: it pulls only when there is room.
                    l.queue_cfg.buffer_bytes = u64::MAX;
                    l.queue_cfg.ecn_threshold_bytes = u64::MAX;
                }
                l
            })
            .collect();
        let salts = (0..topo.switches.len() as SwitchId).map(switch_salt).collect();
        let mut rng = Rng::new(cfg.seed);
        // The workload draws from its own stream, split off the run's seed,
        // so that adding a loss draw does not change the workload's pairs.
        let _ = rng.next_u64();
        let mut sim = Sim {
            now: 0,
            q: EventQueue::default(),
            switch_failed: vec![false; topo.switches.len()],
            salts,
            pkts: Vec::new(),
            free: Vec::new(),
            timer_at: vec![None; topo.hosts as usize],
            drops: Drops::default(),
            events: 0,
            plane_tx: Vec::new(),
            rx_payload: Vec::new(),
            failed_at: Vec::new(),
            hops: Vec::new(),
            touched: Vec::new(),
            bucket: cfg.bucket_ns.max(1) * NS,
            stop_when_finished: true,
            rng,
            topo,
            links,
            nics,
            wl,
            cfg,
        };
        for c in sim.wl.conns.clone() {
            for end in c.ends() {
                sim.nics[end.local as usize].connect(end);
            }
        }
        sim
    }

    /// Runs until the workload finishes or `max_time`. `progress` is called
    /// now and then with the simulated time.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time)) {
        for (i, f) in self.cfg.failures.clone().iter().enumerate() {
            self.q.push(f.at, Ev::Fail(i as u32));
        }
        self.wl.start(0);
        for h in 0..self.topo.hosts {
            self.touched.push(h);
        }
        self.settle();
        while let Some((t, ev)) = self.q.pop() {
            if t > self.cfg.max_time {
                self.now = self.cfg.max_time;
                break;
            }
            self.now = t;
            self.events += 1;
            if self.events & 0xffff == 0 {
                progress(t);
            }
            match ev {
                Ev::TxDone(l) => self.tx_done(l),
                Ev::Arrive(l, id) => self.arrive(l, id),
                Ev::HostRx(h, id) => {
                    let pkt = self.pkts[id as usize].take().expect("live packet");
                    self.free.push(id);
                    self.nics[h as usize].handle_packet(t, pkt);
                    self.touched.push(h);
                    self.settle();
                }
                Ev::Timer(h) => {
                    if self.timer_at[h as usize] == Some(t) {
                        self.timer_at[h as usize] = None;
                        self.nics[h as usize].on_timer(t);
                        self.touched.push(h);
                        self.settle();
                    }
                }
                Ev::Fail(i) => self.fail(self.cfg.failures[i as usize].what),
            }
            if self.stop_when_finished && self.wl.finished() {
                break;
            }
        }
        progress(self.now);
    }

    /// After a transport was called: hands its completions to the workload,
    /// the workload's new messages to their senders, lets every touched host
    /// transmit, and re-arms its timer.
    fn settle(&mut self) {
        while let Some(h) = self.touched.pop() {
            while let Some(ev) = self.nics[h as usize].poll_event() {
                self.wl.on_event(self.now, ev);
            }
            let posts = std::mem::take(&mut self.wl.outbox);
            for p in &posts {
                self.nics[p.host as usize].post_send(self.now, p.conn, p.bytes);
                if p.host != h && !self.touched.contains(&p.host) {
                    self.touched.push(p.host);
                }
            }
            self.wl.outbox = posts;
            self.wl.outbox.clear();
            self.pump(h);
            self.rearm(h);
        }
    }

    fn ready_ports(&self, h: HostId) -> PortMask {
        let mut mask = 0;
        for (p, &l) in self.topo.host_ports[h as usize].iter().enumerate() {
            if self.links[l as usize].occupancy() < self.cfg.nic.port_queue_pkts as usize {
                mask |= 1 << p;
            }
        }
        mask
    }

    /// Pulls packets from host h's transport while a port has room.
    fn pump(&mut self, h: HostId) {
        loop {
            let ready = self.ready_ports(h);
            if ready == 0 {
                break;
            }
            let Some(pkt) = self.nics[h as usize].poll_transmit(self.now, ready) else { break };
            let planes = self.topo.planes as usize;
            let plane = pkt.plane as usize % planes;
            let l = self.topo.host_ports[h as usize][plane];
            let bytes = pkt.wire_bytes;
            let id = self.alloc(pkt);
            self.links[l as usize].push(id, bytes);
            if !self.links[l as usize].busy {
                self.start_tx(l);
            }
            if ready & (1 << plane) == 0 {
                // The transport chose a port that was already full: stop
                // pulling until a port drains.
                break;
            }
        }
    }

    fn rearm(&mut self, h: HostId) {
        match self.nics[h as usize].next_deadline() {
            Some(d) => {
                // Never re-enter a host at the instant it was just served.
                let d = d.max(self.now + 1);
                if self.timer_at[h as usize] != Some(d) {
                    self.timer_at[h as usize] = Some(d);
                    self.q.push(d, Ev::Timer(h));
                }
            }
            None => self.timer_at[h as usize] = None,
        }
    }

    fn alloc(&mut self, pkt: Packet) -> PktId {
        match self.free.pop() {
            Some(id) => {
                self.pkts[id as usize] = Some(pkt);
                id
            }
            None => {
                self.pkts.push(Some(pkt));
                (self.pkts.len() - 1) as PktId
            }
        }
    }

    fn drop_pkt(&mut self, id: PktId, cause: fn(&mut Drops) -> &mut u64) {
        let pkt = self.pkts[id as usize].take().expect("live packet");
        self.free.push(id);
        *cause(&mut self.drops) += 1;
        self.drops.payload_bytes += pkt.payload as u64;
    }

    fn start_tx(&mut self, l: LinkId) {
        let link = &mut self.links[l as usize];
        let Some(id) = link.queue.pop_front() else { return };
        let bytes = self.pkts[id as usize].as_ref().expect("live packet").wire_bytes;
        link.queued_bytes -= bytes as u64;
        link.busy = true;
        link.tx_bytes += bytes as u64;
        link.tx_pkts += 1;
        let ser = link.ser_time(bytes);
        let prop = link.prop;
        if link.kind == LinkKind::HostUp {
            // NIC egress per plane, charged when serialization starts.
            let (plane, planes) = (link.plane as usize, self.topo.planes as usize);
            let b = (self.now / self.bucket) as usize;
            if self.plane_tx.len() <= b {
                self.plane_tx.resize(b + 1, vec![0; planes]);
            }
            self.plane_tx[b][plane] += bytes as u64;
        }
        self.q.push(self.now + ser, Ev::TxDone(l));
        self.q.push(self.now + ser + prop, Ev::Arrive(l, id));
    }

    fn tx_done(&mut self, l: LinkId) {
        self.links[l as usize].busy = false;
        if !self.links[l as usize].queue.is_empty() {
            self.start_tx(l);
        }
        if let Node::Host(h) = self.links[l as usize].from {
            self.touched.push(h);
            self.settle();
        }
    }

    fn arrive(&mut self, l: LinkId, id: PktId) {
        let link = &self.links[l as usize];
        if link.failed {
            return self.drop_pkt(id, |d| &mut d.failure);
        }
        if link.loss > 0.0 && self.rng.chance(link.loss) {
            return self.drop_pkt(id, |d| &mut d.loss);
        }
        match link.to {
            Node::Host(h) => {
                let pkt = self.pkts[id as usize].as_ref().expect("live packet");
                if pkt.payload > 0 {
                    let b = (self.now / self.bucket) as usize;
                    if self.rx_payload.len() <= b {
                        self.rx_payload.resize(b + 1, 0);
                    }
                    self.rx_payload[b] += pkt.payload as u64;
                }
                self.q.push(self.now + self.cfg.nic.rx_latency_ns * NS, Ev::HostRx(h, id));
            }
            Node::Switch(s) => {
                if self.switch_failed[s as usize] {
                    return self.drop_pkt(id, |d| &mut d.failure);
                }
                let pkt = self.pkts[id as usize].as_mut().expect("live packet");
                let mut hops = std::mem::take(&mut self.hops);
                self.topo.next_hops(s, pkt.dst, &mut hops);
                if hops.is_empty() {
                    self.hops = hops;
                    return self.drop_pkt(id, |d| &mut d.failure);
                }
                let pick = if hops.len() == 1 {
                    0
                } else {
                    ecmp_pick(ecmp_hash(self.salts[s as usize], pkt.src, pkt.dst, pkt.sport, pkt.dport), hops.len())
                };
                let out = hops[pick];
                self.hops = hops;
                let bytes = pkt.wire_bytes;
                match self.links[out as usize].offer(id, bytes, &mut pkt.ecn) {
                    Offer::TailDrop => self.drop_pkt(id, |d| &mut d.tail),
                    Offer::Queued { .. } => {
                        if !self.links[out as usize].busy {
                            self.start_tx(out);
                        }
                    }
                }
            }
        }
    }

    fn fail(&mut self, what: FailWhat) {
        self.failed_at.push(self.now);
        match what {
            FailWhat::Link(l) => {
                // Links are built in pairs: 2k one way, 2k+1 back.
                self.links[l as usize].failed = true;
                self.links[(l ^ 1) as usize].failed = true;
            }
            FailWhat::Switch(s) => {
                self.switch_failed[s as usize] = true;
                for link in &mut self.links {
                    if link.from == Node::Switch(s) || link.to == Node::Switch(s) {
                        link.failed = true;
                    }
                }
            }
            FailWhat::Plane(p) => {
                for (s, d) in self.topo.switches.iter().enumerate() {
                    if d.plane == p {
                        self.switch_failed[s] = true;
                    }
                }
                for link in &mut self.links {
                    if link.plane == p {
                        link.failed = true;
                    }
                }
            }
        }
    }

    /// Packets still in the fabric or NIC queues (for conservation checks).
    pub fn packets_in_flight(&self) -> usize {
        self.pkts.iter().filter(|p| p.is_some()).count()
    }

    /// Total CE marks set by switches.
    pub fn ce_marks(&self) -> u64 {
        self.links.iter().map(|l| l.ce_marks).sum()
    }

    /// Injects a test packet at host `h`'s port as if its transport sent it.
    pub fn inject(&mut self, h: HostId, pkt: Packet) {
        let l = self.topo.host_ports[h as usize][pkt.plane as usize];
        let bytes = pkt.wire_bytes;
        let id = self.alloc(pkt);
        self.links[l as usize].push(id, bytes);
        if !self.links[l as usize].busy {
            self.start_tx(l);
        }
    }

    /// The links a packet with these addresses and ports takes (ECMP
    /// resolved at every switch), for tests and path accounting.
    pub fn route_of(&self, pkt: &Packet) -> Vec<LinkId> {
        let mut path = vec![self.topo.host_ports[pkt.src as usize][pkt.plane as usize]];
        let mut hops = Vec::new();
        while let Node::Switch(s) = self.links[*path.last().expect("non-empty") as usize].to {
            self.topo.next_hops(s, pkt.dst, &mut hops);
            if hops.is_empty() {
                break;
            }
            let pick = ecmp_pick(ecmp_hash(self.salts[s as usize], pkt.src, pkt.dst, pkt.sport, pkt.dport), hops.len());
            path.push(if hops.len() == 1 { hops[0] } else { hops[pick] });
        }
        path
    }
}
