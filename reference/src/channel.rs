//! A deterministic in-memory lossy channel. Packets travel as their encoded
//! bytes; each one is routed onto a lane (by its plane, or by hashing its
//! ports like ECMP), and the lane drops, delays (reordering by jitter),
//! duplicates, corrupts (one bit flip, which the ICRC catches) or CE-marks it
//! with seeded probabilities. Lanes go down and up at given times. All
//! probabilities are integers in parts per million: no floating point, so a
//! seed gives the same run on every machine.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use mrnic_proto::packet::{ECN_CE, ECN_ECT0};

use crate::rng::{splitmix64, Rng};
use crate::wire::WirePacket;

/// Impairments of one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lane {
    pub drop_ppm: u32,
    pub dup_ppm: u32,
    pub corrupt_ppm: u32,
    pub ce_ppm: u32,
    /// One-way delay, and extra uniform delay in `0..jitter_ns` (reorders).
    pub delay_ns: u64,
    pub jitter_ns: u64,
}

/// A lane is down during `[from, to)`: everything sent on it is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    pub lane: usize,
    pub from: u64,
    pub to: u64,
}

/// How packets map to lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Lane = plane (modulo lanes): a plane failure takes every source port
    /// of its paths down, re-entropy cannot route around it.
    ByPlane,
    /// Lane = hash of the port pair (symmetric, so answers return on their
    /// trigger's lane): re-entropy moves a path to another lane.
    ByPorts,
}

/// What the channel did, for test reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChannelStats {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub lost_to_outage: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub ce_marked: u64,
}

/// A test's hand on the wire: sees every packet as it enters the channel
/// and returns true to drop it (counted as dropped).
pub type DropFilter = Box<dyn FnMut(u64, &WirePacket) -> bool>;

pub struct Channel {
    rng: Rng,
    pub filter: Option<DropFilter>,
    pub lanes: Vec<Lane>,
    pub outages: Vec<Outage>,
    pub routing: Routing,
    /// (delivery time, sequence) ordered: equal times deliver in send order.
    queue: BinaryHeap<Reverse<(u64, u64)>>,
    packets: std::collections::HashMap<u64, WirePacket>,
    seq: u64,
    pub stats: ChannelStats,
}

impl Channel {
    pub fn new(seed: u64, lanes: Vec<Lane>, routing: Routing) -> Channel {
        assert!(!lanes.is_empty(), "a channel needs a lane");
        Channel {
            rng: Rng::new(seed),
            filter: None,
            lanes,
            outages: Vec::new(),
            routing,
            queue: BinaryHeap::new(),
            packets: Default::default(),
            seq: 0,
            stats: ChannelStats::default(),
        }
    }

    pub fn lane_of(&self, p: &WirePacket) -> usize {
        match self.routing {
            Routing::ByPlane => p.plane as usize % self.lanes.len(),
            Routing::ByPorts => {
                let mut h = (p.sport ^ p.dport) as u64;
                (splitmix64(&mut h) % self.lanes.len() as u64) as usize
            }
        }
    }

    fn down(&self, lane: usize, now: u64) -> bool {
        self.outages.iter().any(|o| o.lane == lane && o.from <= now && now < o.to)
    }

    /// A packet enters the channel at `now`.
    pub fn send(&mut self, now: u64, mut p: WirePacket) {
        self.stats.sent += 1;
        let li = self.lane_of(&p);
        let lane = self.lanes[li];
        if self.down(li, now) {
            self.stats.lost_to_outage += 1;
            return;
        }
        if self.filter.as_mut().is_some_and(|f| f(now, &p)) || self.rng.chance_ppm(lane.drop_ppm) {
            self.stats.dropped += 1;
            return;
        }
        if p.ecn == ECN_ECT0 && self.rng.chance_ppm(lane.ce_ppm) {
            p.ecn = ECN_CE;
            self.stats.ce_marked += 1;
        }
        let copies = if self.rng.chance_ppm(lane.dup_ppm) { 2 } else { 1 };
        self.stats.duplicated += copies - 1;
        for _ in 0..copies {
            let mut q = p.clone();
            if !q.bytes.is_empty() && self.rng.chance_ppm(lane.corrupt_ppm) {
                let bit = self.rng.below(q.bytes.len() as u64 * 8);
                q.bytes[(bit / 8) as usize] ^= 1 << (bit % 8);
                self.stats.corrupted += 1;
            }
            let jitter = if lane.jitter_ns > 0 { self.rng.below(lane.jitter_ns) } else { 0 };
            let at = now + lane.delay_ns + jitter;
            self.queue.push(Reverse((at, self.seq)));
            self.packets.insert(self.seq, q);
            self.seq += 1;
        }
    }

    /// When the next packet arrives, if any is in flight.
    pub fn next_delivery(&self) -> Option<u64> {
        self.queue.peek().map(|Reverse((t, _))| *t)
    }

    /// The next packet due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<WirePacket> {
        match self.queue.peek() {
            Some(Reverse((t, _))) if *t <= now => {
                let Reverse((_, s)) = self.queue.pop().expect("peeked");
                self.stats.delivered += 1;
                self.packets.remove(&s)
            }
            _ => None,
        }
    }

    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(plane: u8) -> WirePacket {
        WirePacket { src: 1, dst: 2, sport: 50000, dport: 4797, plane, ecn: ECN_ECT0, bytes: vec![0; 64] }
    }

    #[test]
    fn delivers_in_time_order_and_counts_impairments() {
        let lane = Lane {
            drop_ppm: 100_000,
            dup_ppm: 50_000,
            corrupt_ppm: 20_000,
            ce_ppm: 0,
            delay_ns: 1000,
            jitter_ns: 5000,
        };
        let mut ch = Channel::new(3, vec![lane], Routing::ByPlane);
        for i in 0..1000 {
            ch.send(i * 10, pkt(0));
        }
        let mut last = 0;
        let mut got = 0;
        while let Some(t) = ch.next_delivery() {
            assert!(t >= last);
            last = t;
            ch.pop_due(t).unwrap();
            got += 1;
        }
        let s = ch.stats;
        assert_eq!(got, 1000 - s.dropped + s.duplicated);
        assert!((50..200).contains(&s.dropped), "{s:?}");
        assert!(s.corrupted > 0 && s.duplicated > 0);
    }

    #[test]
    fn outage_drops_everything_on_its_lane_only() {
        let mut ch = Channel::new(1, vec![Lane::default(); 2], Routing::ByPlane);
        ch.outages.push(Outage { lane: 1, from: 100, to: 200 });
        ch.send(150, pkt(1));
        ch.send(150, pkt(0));
        ch.send(200, pkt(1));
        assert_eq!(ch.stats.lost_to_outage, 1);
        assert_eq!(ch.in_flight(), 2);
    }
}
