//! Workloads: the collective patterns NCCL/RCCL produce (ring all-reduce,
//! all-to-all), incast, long-running streams between host pairs and a
//! many-connection closed-loop mix. A workload opens connections, posts
//! messages and reacts to completions; it keeps every message's record so
//! that metrics and the conservation check can read them.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::host::{AppEvent, ConnSpec};
use crate::rng::Rng;
use crate::{ConnId, HostId, Time};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Pattern {
    /// Ring all-reduce of `bytes_per_host`: 2(N-1) steps, each sending one
    /// chunk of bytes/N to the ring successor; step s+1 at a host starts
    /// when it has received step s's chunk from its predecessor.
    RingAllReduce { bytes_per_host: u64 },
    /// Every host sends bytes/N to every other host, all posted at once
    /// (host i starts with i+1, i+2, ..., as NCCL staggers its peers).
    AllToAll { bytes_per_host: u64 },
    /// `senders` hosts (1..=senders) each send `bytes` to host 0 at once.
    Incast { senders: u32, bytes: u64 },
    /// Host i streams to host (i + shift) mod N: `depth` messages of
    /// `msg_bytes` outstanding per connection, until `stop`.
    Stream { shift: u32, msg_bytes: u64, depth: u32, stop: Time },
    /// `conns` connections between random distinct hosts; each sends one
    /// message at a time, sizes drawn uniformly from `sizes`, until `stop`.
    Mix { conns: u32, sizes: Vec<u64>, stop: Time },
}

impl Pattern {
    /// The largest message the pattern posts on `hosts` hosts.
    pub fn max_msg_bytes(&self, hosts: u32) -> u64 {
        match self {
            Pattern::RingAllReduce { bytes_per_host } | Pattern::AllToAll { bytes_per_host } => {
                (bytes_per_host / hosts as u64).max(1)
            }
            Pattern::Incast { bytes, .. } => *bytes,
            Pattern::Stream { msg_bytes, .. } => *msg_bytes,
            Pattern::Mix { sizes, .. } => sizes.iter().copied().max().unwrap_or(1),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Pattern::RingAllReduce { bytes_per_host } => {
                format!("ring all-reduce of {} per host", mib(*bytes_per_host))
            }
            Pattern::AllToAll { bytes_per_host } => format!("all-to-all of {} per host", mib(*bytes_per_host)),
            Pattern::Incast { senders, bytes } => format!("{senders}-to-1 incast of {} each", mib(*bytes)),
            Pattern::Stream { shift, msg_bytes, depth, .. } => {
                format!("streams i -> i+{shift}, {depth} x {} messages outstanding", mib(*msg_bytes))
            }
            Pattern::Mix { conns, sizes, .. } => format!("{conns}-connection closed-loop mix, sizes {sizes:?}"),
        }
    }
}

fn mib(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    } else {
        format!("{} KiB", b / 1024)
    }
}

/// A connection, used in one direction: `src` sends, `dst` receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conn {
    pub id: ConnId,
    pub src: HostId,
    pub dst: HostId,
}

impl Conn {
    pub fn ends(&self) -> [ConnSpec; 2] {
        [
            ConnSpec { id: self.id, local: self.src, peer: self.dst },
            ConnSpec { id: self.id, local: self.dst, peer: self.src },
        ]
    }
}

/// One message's life.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Msg {
    pub conn: ConnId,
    pub bytes: u64,
    pub posted: Time,
    pub send_done: Option<Time>,
    pub recv_done: Option<Time>,
    pub failed: bool,
}

/// A message to hand to the sender's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Post {
    pub host: HostId,
    pub conn: ConnId,
    pub bytes: u64,
}

pub struct Workload {
    pub pattern: Pattern,
    pub hosts: u32,
    pub conns: Vec<Conn>,
    pub msgs: Vec<Msg>,
    /// Messages posted but not yet acknowledged, per connection.
    send_fifo: Vec<VecDeque<u32>>,
    /// Messages posted but not yet received, per connection.
    recv_fifo: Vec<VecDeque<u32>>,
    /// Ring all-reduce: steps posted and chunks received per host.
    ring_posted: Vec<u32>,
    ring_recv: Vec<u32>,
    rng: Rng,
    /// Completions that matched no outstanding message (duplicates).
    pub unmatched_completions: u64,
    /// Completions whose byte count differed from the message posted.
    pub wrong_size_completions: u64,
    /// Messages to post, drained by the simulator.
    pub outbox: Vec<Post>,
    /// Messages neither received nor failed.
    open: usize,
}

impl Workload {
    /// Sets up connections for `pattern` on `hosts` hosts. `rng` is the
    /// run's generator, forked for the workload's draws.
    pub fn new(pattern: Pattern, hosts: u32, rng: Rng) -> Workload {
        let n = hosts;
        let mut rng = rng;
        let mut conns = Vec::new();
        let mut add = |src: HostId, dst: HostId| {
            let id = conns.len() as ConnId;
            conns.push(Conn { id, src, dst });
        };
        match &pattern {
            Pattern::RingAllReduce { .. } => (0..n).for_each(|i| add(i, (i + 1) % n)),
            Pattern::AllToAll { .. } => {
                for i in 0..n {
                    for k in 1..n {
                        add(i, (i + k) % n);
                    }
                }
            }
            Pattern::Incast { senders, .. } => (1..=*senders).for_each(|s| add(s, 0)),
            Pattern::Stream { shift, .. } => (0..n).for_each(|i| add(i, (i + shift) % n)),
            Pattern::Mix { conns: c, .. } => {
                for _ in 0..*c {
                    let src = rng.below(n as u64) as u32;
                    let dst = (src + 1 + rng.below(n as u64 - 1) as u32) % n;
                    add(src, dst);
                }
            }
        }
        let nc = conns.len();
        Workload {
            pattern,
            hosts,
            conns,
            msgs: Vec::new(),
            send_fifo: vec![VecDeque::new(); nc],
            recv_fifo: vec![VecDeque::new(); nc],
            ring_posted: vec![0; n as usize],
            ring_recv: vec![0; n as usize],
            rng,
            unmatched_completions: 0,
            wrong_size_completions: 0,
            outbox: Vec::new(),
            open: 0,
        }
    }

    fn post(&mut self, now: Time, conn: ConnId, bytes: u64) {
        let idx = self.msgs.len() as u32;
        self.msgs.push(Msg { conn, bytes, posted: now, send_done: None, recv_done: None, failed: false });
        self.send_fifo[conn as usize].push_back(idx);
        self.recv_fifo[conn as usize].push_back(idx);
        self.open += 1;
        self.outbox.push(Post { host: self.conns[conn as usize].src, conn, bytes });
    }

    fn mix_size(&mut self) -> u64 {
        match &self.pattern {
            Pattern::Mix { sizes, .. } => {
                let i = self.rng.below(sizes.len() as u64) as usize;
                sizes[i]
            }
            _ => 0,
        }
    }

    /// Posts the initial messages.
    pub fn start(&mut self, now: Time) {
        let n = self.hosts as u64;
        match self.pattern.clone() {
            Pattern::RingAllReduce { bytes_per_host } => {
                for i in 0..self.hosts {
                    self.ring_posted[i as usize] = 1;
                    self.post(now, i, (bytes_per_host / n).max(1));
                }
            }
            Pattern::AllToAll { bytes_per_host } => {
                for c in 0..self.conns.len() as ConnId {
                    self.post(now, c, (bytes_per_host / n).max(1));
                }
            }
            Pattern::Incast { bytes, .. } => {
                for c in 0..self.conns.len() as ConnId {
                    self.post(now, c, bytes);
                }
            }
            Pattern::Stream { msg_bytes, depth, .. } => {
                for c in 0..self.conns.len() as ConnId {
                    for _ in 0..depth {
                        self.post(now, c, msg_bytes);
                    }
                }
            }
            Pattern::Mix { .. } => {
                for c in 0..self.conns.len() as ConnId {
                    let b = self.mix_size();
                    self.post(now, c, b);
                }
            }
        }
    }

    /// Feeds one completion from `host`'s transport.
    pub fn on_event(&mut self, now: Time, ev: AppEvent) {
        match ev {
            AppEvent::Received { conn, bytes } => {
                let Some(m) = self.recv_fifo[conn as usize].pop_front() else {
                    self.unmatched_completions += 1;
                    return;
                };
                let msg = &mut self.msgs[m as usize];
                if msg.bytes != bytes {
                    self.wrong_size_completions += 1;
                }
                if !msg.failed {
                    self.open -= 1;
                }
                msg.recv_done = Some(now);
                if let Pattern::RingAllReduce { bytes_per_host } = self.pattern {
                    let dst = self.conns[conn as usize].dst as usize;
                    self.ring_recv[dst] += 1;
                    let steps = 2 * (self.hosts - 1);
                    if self.ring_posted[dst] < steps && self.ring_recv[dst] >= self.ring_posted[dst] {
                        self.ring_posted[dst] += 1;
                        // Host dst sends on its own outgoing ring connection, id dst.
                        self.post(now, dst as ConnId, (bytes_per_host / self.hosts as u64).max(1));
                    }
                }
            }
            AppEvent::SendDone { conn } => {
                let Some(m) = self.send_fifo[conn as usize].pop_front() else {
                    self.unmatched_completions += 1;
                    return;
                };
                self.msgs[m as usize].send_done = Some(now);
                match self.pattern {
                    Pattern::Stream { msg_bytes, stop, .. } if now < stop => self.post(now, conn, msg_bytes),
                    Pattern::Mix { stop, .. } if now < stop => {
                        let b = self.mix_size();
                        self.post(now, conn, b);
                    }
                    _ => {}
                }
            }
            AppEvent::SendFailed { conn } => {
                let Some(m) = self.send_fifo[conn as usize].pop_front() else {
                    self.unmatched_completions += 1;
                    return;
                };
                let msg = &mut self.msgs[m as usize];
                if msg.recv_done.is_none() && !msg.failed {
                    self.open -= 1;
                }
                msg.failed = true;
            }
        }
    }

    /// Every message posted is received or failed, and no more will come.
    pub fn finished(&self) -> bool {
        self.outbox.is_empty()
            && self.open == 0
            && match self.pattern {
                Pattern::RingAllReduce { .. } => self.ring_posted.iter().all(|&p| p == 2 * (self.hosts - 1)),
                _ => true,
            }
    }

    /// Messages neither received nor failed yet.
    pub fn outstanding(&self) -> usize {
        self.open
    }
}
