//! A directed link and the output queue in front of it: serialization at the
//! link rate, propagation delay, ECN CE marking above a queue threshold,
//! tail drop when the buffer is full, and random loss.

use std::collections::VecDeque;

use crate::host::{ECN_CE, ECN_NOT_ECT};
use crate::topo::{LinkDesc, LinkKind, Node};
use crate::Time;

/// A packet slot in the simulator's packet store.
pub type PktId = u32;

/// What happened to a packet offered to an output queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Queued; `marked` when this enqueue set CE.
    Queued { marked: bool },
    /// The buffer was full: the packet is dropped.
    TailDrop,
}

/// Queue settings of a switch output port.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueConfig {
    /// CE-mark ECN-capable packets that find at least this many bytes queued.
    pub ecn_threshold_bytes: u64,
    /// Tail-drop a packet that would take the queue past this many bytes.
    pub buffer_bytes: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        // At 400 Gbit/s, 100 KB is 2 us of queue; 1 MB of buffer per port.
        QueueConfig { ecn_threshold_bytes: 100_000, buffer_bytes: 1_000_000 }
    }
}

#[derive(Debug, Clone)]
pub struct Link {
    pub from: Node,
    pub to: Node,
    pub plane: u8,
    pub kind: LinkKind,
    pub gbps: f64,
    /// Serialization cost in ps per byte, Q16 fixed point (exact for the
    /// usual rates, and integer so runs are reproducible everywhere).
    ps_per_byte_q16: u64,
    /// Propagation (plus fixed pipeline) delay.
    pub prop: Time,
    /// Probability that a packet crossing this link is lost.
    pub loss: f64,
    pub queue_cfg: QueueConfig,
    pub queue: VecDeque<PktId>,
    /// Bytes waiting, not counting the packet on the wire.
    pub queued_bytes: u64,
    pub busy: bool,
    pub failed: bool,
    pub tx_bytes: u64,
    pub tx_pkts: u64,
    pub max_queued_bytes: u64,
    pub ce_marks: u64,
    pub tail_drops: u64,
}

impl Link {
    pub fn new(d: &LinkDesc, prop: Time, queue_cfg: QueueConfig) -> Link {
        Link {
            from: d.from,
            to: d.to,
            plane: d.plane,
            kind: d.kind,
            gbps: d.gbps,
            ps_per_byte_q16: ((8000.0 / d.gbps) * 65536.0).round() as u64,
            prop,
            loss: 0.0,
            queue_cfg,
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy: false,
            failed: false,
            tx_bytes: 0,
            tx_pkts: 0,
            max_queued_bytes: 0,
            ce_marks: 0,
            tail_drops: 0,
        }
    }

    /// Time to put `bytes` on the wire.
    pub fn ser_time(&self, bytes: u32) -> Time {
        (bytes as u64 * self.ps_per_byte_q16) >> 16
    }

    /// Offers a packet to the output queue: tail drop when it does not fit,
    /// else CE-mark it (if ECN-capable) when the queue is at or above the
    /// threshold, and queue it.
    pub fn offer(&mut self, id: PktId, bytes: u32, ecn: &mut u8) -> Offer {
        if self.queued_bytes + bytes as u64 > self.queue_cfg.buffer_bytes {
            self.tail_drops += 1;
            return Offer::TailDrop;
        }
        let marked = *ecn != ECN_NOT_ECT && *ecn != ECN_CE && self.queued_bytes >= self.queue_cfg.ecn_threshold_bytes;
        if marked {
            *ecn = ECN_CE;
            self.ce_marks += 1;
        }
        self.push(id, bytes);
        Offer::Queued { marked }
    }

    /// Queues without buffer or ECN checks (a NIC's own port queue).
    pub fn push(&mut self, id: PktId, bytes: u32) {
        self.queue.push_back(id);
        self.queued_bytes += bytes as u64;
        self.max_queued_bytes = self.max_queued_bytes.max(self.queued_bytes);
    }

    /// Packets held, including the one on the wire.
    pub fn occupancy(&self) -> usize {
        self.queue.len() + self.busy as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::ECN_ECT0;

    fn link(cfg: QueueConfig) -> Link {
        let d = LinkDesc { from: Node::Switch(0), to: Node::Switch(1), gbps: 400.0, plane: 0, kind: LinkKind::Up };
        Link::new(&d, 0, cfg)
    }

    #[test]
    fn serialization_at_rate() {
        let l = link(QueueConfig::default());
        assert_eq!(l.ser_time(4096), 4096 * 20); // 20 ps per byte at 400G
    }

    #[test]
    fn marks_above_threshold_and_tail_drops_when_full() {
        let mut l = link(QueueConfig { ecn_threshold_bytes: 2000, buffer_bytes: 4000 });
        let mut e = ECN_ECT0;
        assert_eq!(l.offer(0, 1000, &mut e), Offer::Queued { marked: false });
        assert_eq!(l.offer(1, 1000, &mut e), Offer::Queued { marked: false });
        assert_eq!(e, ECN_ECT0);
        assert_eq!(l.offer(2, 1000, &mut e), Offer::Queued { marked: true });
        assert_eq!(e, ECN_CE);
        let mut n = ECN_NOT_ECT;
        assert_eq!(l.offer(3, 1000, &mut n), Offer::Queued { marked: false });
        assert_eq!(l.offer(4, 1000, &mut n), Offer::TailDrop);
        assert_eq!(l.queue.len(), 4);
    }
}
