//! The simulation driver: NICs over a [`Channel`] with a virtual clock. Each
//! step moves time to the earliest event (a packet arriving, a NIC timer),
//! delivers or fires it, then lets every NIC transmit all it can.

use crate::channel::Channel;
use crate::nic::Nic;
use crate::verbs::Completion;

pub struct Sim {
    pub now: u64,
    pub nics: Vec<Nic>,
    pub channel: Channel,
    /// Completions taken from the NICs' queues, per NIC, in order.
    pub completions: Vec<Vec<Completion>>,
    /// Events processed (a guard against livelock in tests).
    pub steps: u64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The stop condition held.
    Done,
    /// Nothing left to happen, condition not met.
    Quiet,
    /// Virtual deadline or step limit reached.
    Timeout,
}

impl Sim {
    pub fn new(nics: Vec<Nic>, channel: Channel) -> Sim {
        let n = nics.len();
        Sim { now: 0, nics, channel, completions: vec![Vec::new(); n], steps: 0 }
    }

    fn nic_index(&self, addr: u32) -> Option<usize> {
        self.nics.iter().position(|n| n.addr() == addr)
    }

    /// Every NIC sends all it can now; completions are collected.
    fn flush(&mut self) {
        for i in 0..self.nics.len() {
            while let Some(p) = self.nics[i].poll_transmit(self.now) {
                self.channel.send(self.now, p);
            }
            let c = self.nics[i].poll_cq(usize::MAX);
            self.completions[i].extend(c);
        }
    }

    /// Runs until `done(self)` holds, nothing is left to happen, the virtual
    /// time passes `deadline` or `max_steps` events have run.
    pub fn run_until(&mut self, deadline: u64, max_steps: u64, mut done: impl FnMut(&Sim) -> bool) -> Outcome {
        self.flush();
        loop {
            if done(self) {
                return Outcome::Done;
            }
            let timer = self.nics.iter().filter_map(|n| n.next_deadline()).min();
            let next = match (self.channel.next_delivery(), timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => return Outcome::Quiet,
                },
            };
            if next > deadline || self.steps >= max_steps {
                return Outcome::Timeout;
            }
            self.steps += 1;
            self.now = self.now.max(next);
            while let Some(p) = self.channel.pop_due(self.now) {
                if let Some(i) = self.nic_index(p.dst) {
                    self.nics[i].handle_packet(self.now, &p);
                }
            }
            for n in &mut self.nics {
                if n.next_deadline().is_some_and(|d| d <= self.now) {
                    n.on_timer(self.now);
                }
            }
            self.flush();
        }
    }
}
