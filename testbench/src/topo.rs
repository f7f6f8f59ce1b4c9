//! Fabric topologies: two-tier leaf-spine, three-tier k-ary fat-tree, and
//! multiplane fabrics in which every NIC has one port per plane and each
//! plane is its own leaf-spine. A topology is a list of switches and
//! directed links plus, for every destination host, the hop distance from
//! every node, from which switches take their equal-cost next hops.

use serde::{Deserialize, Serialize};

use crate::{HostId, LinkId, SwitchId};

/// Which fabric to build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TopoSpec {
    /// `planes` copies of a leaf-spine; host `h` sits on leaf
    /// `h / hosts_per_leaf` of every plane. Each NIC port (and every fabric
    /// link) runs at the NIC rate divided by `planes`.
    LeafSpine { leaves: u32, hosts_per_leaf: u32, spines: u32, planes: u32 },
    /// Al-Fares k-ary fat-tree: k pods of k/2 edge and k/2 aggregation
    /// switches, (k/2)^2 cores, k^3/4 hosts, every link at the NIC rate.
    FatTree { k: u32 },
}

impl TopoSpec {
    pub fn hosts(&self) -> u32 {
        match *self {
            TopoSpec::LeafSpine { leaves, hosts_per_leaf, .. } => leaves * hosts_per_leaf,
            TopoSpec::FatTree { k } => k * k * k / 4,
        }
    }

    pub fn planes(&self) -> u32 {
        match *self {
            TopoSpec::LeafSpine { planes, .. } => planes,
            TopoSpec::FatTree { .. } => 1,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            TopoSpec::LeafSpine { leaves, hosts_per_leaf, spines, planes } => format!(
                "{planes}-plane leaf-spine: {} hosts, {leaves} leaves x {hosts_per_leaf} hosts, {spines} spines per plane",
                leaves * hosts_per_leaf
            ),
            TopoSpec::FatTree { k } => format!("{k}-ary fat-tree: {} hosts", k * k * k / 4),
        }
    }
}

/// A node of the fabric graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Node {
    Host(HostId),
    Switch(SwitchId),
}

/// What a link connects, for accounting (per-path utilization is taken on
/// `Up` links: the ECMP choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkKind {
    /// NIC port to its first switch.
    HostUp,
    /// Last switch to a NIC port.
    HostDown,
    /// Switch to a higher tier (the hop ECMP chooses).
    Up,
    /// Switch to a lower tier.
    Down,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkDesc {
    pub from: Node,
    pub to: Node,
    pub gbps: f64,
    pub plane: u8,
    pub kind: LinkKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchDesc {
    pub plane: u8,
    /// 0 = leaf/edge, 1 = spine/aggregation, 2 = core.
    pub tier: u8,
}

/// A built fabric.
#[derive(Debug, Clone)]
pub struct Topology {
    pub spec: TopoSpec,
    pub hosts: u32,
    pub planes: u32,
    pub switches: Vec<SwitchDesc>,
    pub links: Vec<LinkDesc>,
    /// `host_ports[h][plane]`: the NIC's egress link on that plane.
    pub host_ports: Vec<Vec<LinkId>>,
    /// Egress links of each switch.
    pub switch_out: Vec<Vec<LinkId>>,
    /// `dist[d * nodes + n]`: hops from node n to host d (255: unreachable).
    dist: Vec<u8>,
    nodes: usize,
}

impl Topology {
    /// Builds `spec` with a NIC of `nic_gbps` in total.
    pub fn build(spec: &TopoSpec, nic_gbps: f64) -> Topology {
        let hosts = spec.hosts();
        let planes = spec.planes();
        let mut t = Topology {
            spec: spec.clone(),
            hosts,
            planes,
            switches: Vec::new(),
            links: Vec::new(),
            host_ports: vec![Vec::new(); hosts as usize],
            switch_out: Vec::new(),
            dist: Vec::new(),
            nodes: 0,
        };
        match *spec {
            TopoSpec::LeafSpine { leaves, hosts_per_leaf, spines, planes } => {
                let rate = nic_gbps / planes as f64;
                for p in 0..planes as u8 {
                    let leaf0 = t.switches.len() as u32;
                    for _ in 0..leaves {
                        t.add_switch(p, 0);
                    }
                    let spine0 = t.switches.len() as u32;
                    for _ in 0..spines {
                        t.add_switch(p, 1);
                    }
                    for h in 0..hosts {
                        let leaf = leaf0 + h / hosts_per_leaf;
                        t.add_host_port(h, leaf, rate, p);
                    }
                    for l in 0..leaves {
                        for s in 0..spines {
                            t.add_pair(leaf0 + l, spine0 + s, rate, p);
                        }
                    }
                }
            }
            TopoSpec::FatTree { k } => {
                assert!(k >= 2 && k % 2 == 0, "fat-tree arity must be even");
                let half = k / 2;
                let edge0 = 0;
                for _ in 0..k * half {
                    t.add_switch(0, 0);
                }
                let agg0 = t.switches.len() as u32;
                for _ in 0..k * half {
                    t.add_switch(0, 1);
                }
                let core0 = t.switches.len() as u32;
                for _ in 0..half * half {
                    t.add_switch(0, 2);
                }
                for h in 0..hosts {
                    t.add_host_port(h, edge0 + h / half, nic_gbps, 0);
                }
                for pod in 0..k {
                    for e in 0..half {
                        for a in 0..half {
                            t.add_pair(edge0 + pod * half + e, agg0 + pod * half + a, nic_gbps, 0);
                        }
                    }
                    for a in 0..half {
                        for c in 0..half {
                            t.add_pair(agg0 + pod * half + a, core0 + a * half + c, nic_gbps, 0);
                        }
                    }
                }
            }
        }
        t.compute_distances();
        t
    }

    fn add_switch(&mut self, plane: u8, tier: u8) {
        self.switches.push(SwitchDesc { plane, tier });
        self.switch_out.push(Vec::new());
    }

    fn add_host_port(&mut self, h: HostId, sw: SwitchId, gbps: f64, plane: u8) {
        let up = self.links.len() as LinkId;
        self.links.push(LinkDesc { from: Node::Host(h), to: Node::Switch(sw), gbps, plane, kind: LinkKind::HostUp });
        self.host_ports[h as usize].push(up);
        let down = self.links.len() as LinkId;
        self.links.push(LinkDesc { from: Node::Switch(sw), to: Node::Host(h), gbps, plane, kind: LinkKind::HostDown });
        self.switch_out[sw as usize].push(down);
    }

    /// A link each way between a lower-tier switch `lo` and a higher-tier `hi`.
    fn add_pair(&mut self, lo: SwitchId, hi: SwitchId, gbps: f64, plane: u8) {
        let up = self.links.len() as LinkId;
        self.links.push(LinkDesc { from: Node::Switch(lo), to: Node::Switch(hi), gbps, plane, kind: LinkKind::Up });
        self.switch_out[lo as usize].push(up);
        let down = self.links.len() as LinkId;
        self.links.push(LinkDesc { from: Node::Switch(hi), to: Node::Switch(lo), gbps, plane, kind: LinkKind::Down });
        self.switch_out[hi as usize].push(down);
    }

    fn node_index(&self, n: Node) -> usize {
        match n {
            Node::Host(h) => h as usize,
            Node::Switch(s) => self.hosts as usize + s as usize,
        }
    }

    /// Breadth-first search from every host over the reversed links, never
    /// through another host (hosts do not forward).
    fn compute_distances(&mut self) {
        let nodes = self.hosts as usize + self.switches.len();
        self.nodes = nodes;
        // Incoming links per node, to walk backwards from the destination.
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        for l in &self.links {
            incoming[self.node_index(l.to)].push(self.node_index(l.from));
        }
        let mut dist = vec![u8::MAX; self.hosts as usize * nodes];
        let mut frontier = Vec::new();
        let mut next = Vec::new();
        for d in 0..self.hosts as usize {
            let row = &mut dist[d * nodes..(d + 1) * nodes];
            row[d] = 0;
            frontier.clear();
            frontier.push(d);
            let mut hops = 0u8;
            while !frontier.is_empty() {
                hops += 1;
                next.clear();
                for &n in &frontier {
                    if n < self.hosts as usize && n != d {
                        continue;
                    }
                    for &m in &incoming[n] {
                        if row[m] == u8::MAX {
                            row[m] = hops;
                            next.push(m);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
        }
        self.dist = dist;
    }

    /// Hops from `n` to host `d`.
    pub fn dist(&self, n: Node, d: HostId) -> u8 {
        self.dist[d as usize * self.nodes + self.node_index(n)]
    }

    /// The equal-cost next hops from switch `s` toward host `d`, in port order.
    pub fn next_hops(&self, s: SwitchId, d: HostId, out: &mut Vec<LinkId>) {
        out.clear();
        let here = self.dist(Node::Switch(s), d);
        if here == u8::MAX {
            return;
        }
        for &l in &self.switch_out[s as usize] {
            if self.dist(self.links[l as usize].to, d) == here - 1 {
                out.push(l);
            }
        }
    }

    /// Switch-to-switch hops on the longest shortest path between two hosts
    /// of one plane (for RTT estimates): leaf-spine 2 links + 2 host links.
    pub fn max_hops(&self) -> u32 {
        match self.spec {
            TopoSpec::LeafSpine { .. } => 4,
            TopoSpec::FatTree { .. } => 6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_spine_counts_and_paths() {
        let t = Topology::build(&TopoSpec::LeafSpine { leaves: 4, hosts_per_leaf: 4, spines: 4, planes: 2 }, 400.0);
        assert_eq!(t.hosts, 16);
        assert_eq!(t.switches.len(), 16);
        assert_eq!(t.host_ports[5].len(), 2);
        // From host 0 to host 15: leaf 0 of plane 0 has 4 spine choices.
        let mut hops = Vec::new();
        t.next_hops(0, 15, &mut hops);
        assert_eq!(hops.len(), 4);
        // Same leaf: one choice, straight down.
        t.next_hops(0, 1, &mut hops);
        assert_eq!(hops.len(), 1);
        assert_eq!(t.links[hops[0] as usize].to, Node::Host(1));
    }

    #[test]
    fn fat_tree_counts_and_paths() {
        let t = Topology::build(&TopoSpec::FatTree { k: 4 }, 100.0);
        assert_eq!(t.hosts, 16);
        assert_eq!(t.switches.len(), 20);
        // Edge 0 toward a host in another pod: 2 aggregation choices; an
        // aggregation switch then has 2 cores.
        let mut hops = Vec::new();
        t.next_hops(0, 15, &mut hops);
        assert_eq!(hops.len(), 2);
        let agg = match t.links[hops[0] as usize].to {
            Node::Switch(s) => s,
            _ => unreachable!(),
        };
        t.next_hops(agg, 15, &mut hops);
        assert_eq!(hops.len(), 2);
        assert_eq!(t.dist(Node::Host(0), 15), 6);
    }
}
