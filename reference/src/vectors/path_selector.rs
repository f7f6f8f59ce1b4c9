//! `path_selector` vectors: a connection's path table and a request ->
//! the chosen path and the credits after the decision, from
//! [`crate::selector::select`].
//!
//! A vector is a run of decisions on one connection whose credits start at
//! 0 (as after reset). Between steps the generator changes the table as
//! the transport would (packets in flight, states, weights, windows); where
//! the reference resets a path's credit (entering SUSPECT, returning to
//! GOOD) the step's `clr` bit says so, which is the model's `s_req_clr`.

use serde::{Deserialize, Serialize};

use super::format::{vector_seed, BlockKind};
use super::Outcome;
use crate::fixed::{seq_add, SEQ_MASK};
use crate::path::{PathEntry, PathParams, PathState};
use crate::rng::Rng;
use crate::selector::{eligible, select, Request};
use mrnic_proto::Config;

/// The fields of a path entry the selector reads (the rest of the entry is
/// as [`PathEntry::new`] makes it and does not matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelPath {
    pub state: PathState,
    pub inflight: u32,
    pub cwnd: u32,
    pub next_psn: u32,
    pub cum_acked: u32,
    pub weight: u8,
    /// Credit before the decision.
    pub deficit: i16,
}

impl SelPath {
    fn entry(&self, p: &PathParams) -> PathEntry {
        let mut e = PathEntry::new(0, 0, 0, p);
        e.state = self.state;
        e.inflight = self.inflight;
        e.cwnd = self.cwnd;
        e.next_psn = self.next_psn;
        e.cum_acked = self.cum_acked;
        e.weight = self.weight;
        e.deficit = self.deficit;
        e
    }
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorStep {
    /// The table as the request sees it, one entry per path.
    pub paths: Vec<SelPath>,
    pub req: Request,
    /// Derived input: bit i = path i eligible (`selector::eligible`).
    pub elig: u32,
    /// Input: bit i = path i's credit was reset to 0 since the previous
    /// decision (its `deficit` here is 0).
    pub clr: u32,
    /// The bench must let the block empty before this step.
    pub drain: bool,
    /// Expected: the chosen path (`null`: none eligible).
    pub chosen: Option<u8>,
    /// Expected: every path's credit after the decision.
    pub deficits: Vec<i16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorVector {
    pub id: String,
    pub desc: String,
    pub seed: u64,
    /// Connection index (the model's `s_req_conn`).
    pub conn: u32,
    pub steps: Vec<SelectorStep>,
}

fn mask(paths: &[PathEntry], req: &Request, p: &PathParams) -> u32 {
    paths
        .iter()
        .enumerate()
        .filter(|(i, e)| eligible(e, *i, req, p.mtu_shift, p.window))
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// Re-runs the reference on a vector.
pub fn check(cfg: &Config, v: &SelectorVector) -> Outcome {
    let p = PathParams::from_config(cfg);
    let n = cfg.transport.paths_per_conn as usize;
    let mut credits = vec![0i16; n];
    for (k, s) in v.steps.iter().enumerate() {
        if s.paths.len() != n || s.deficits.len() != n {
            return Outcome::Fail(format!("step {k}: {} paths, the config has {n}", s.paths.len()));
        }
        for (i, sp) in s.paths.iter().enumerate() {
            let want = if s.clr >> i & 1 == 1 { 0 } else { credits[i] };
            if sp.deficit != want {
                return Outcome::Fail(format!(
                    "step {k}: path {i} deficit {} is neither the previous credit {} nor a cleared 0",
                    sp.deficit, credits[i]
                ));
            }
        }
        let table: Vec<PathEntry> = s.paths.iter().map(|sp| sp.entry(&p)).collect();
        let elig = mask(&table, &s.req, &p);
        if elig != s.elig {
            return Outcome::Fail(format!("step {k}: eligible mask {elig:#b}, the vector says {:#b}", s.elig));
        }
        let sel = select(&table, &s.req, p.mtu_shift, p.window);
        if sel.chosen != s.chosen || sel.deficits != s.deficits {
            return Outcome::Fail(format!(
                "step {k}: reference chose {:?} with credits {:?}, the vector expects {:?} with {:?}",
                sel.chosen, sel.deficits, s.chosen, s.deficits
            ));
        }
        credits = sel.deficits;
    }
    Outcome::Pass
}

/// A table being driven through a run of decisions.
struct Run {
    p: PathParams,
    paths: Vec<SelPath>,
    steps: Vec<SelectorStep>,
}

impl Run {
    fn new(p: PathParams, n: usize) -> Run {
        let e = PathEntry::new(0, 0, 0, &p);
        let sp = SelPath {
            state: PathState::Good,
            inflight: 0,
            cwnd: e.cwnd,
            next_psn: 0,
            cum_acked: 0,
            weight: e.weight,
            deficit: 0,
        };
        Run { p, paths: vec![sp; n], steps: Vec::new() }
    }

    /// Sets a path's state; the reference clears the credit on entering
    /// SUSPECT and on returning to GOOD from SUSPECT/DEAD.
    fn set_state(&mut self, i: usize, s: PathState, clr: &mut u32) {
        let old = self.paths[i].state;
        let reset = (s == PathState::Suspect && old != PathState::Suspect)
            || (s == PathState::Good && matches!(old, PathState::Suspect | PathState::Dead));
        self.paths[i].state = s;
        if reset {
            self.paths[i].deficit = 0;
            *clr |= 1 << i;
        }
    }

    /// One decision; a chosen path takes a packet (new data: in flight
    /// and next psn move, as the transport does after the pick).
    fn step(&mut self, req: Request, clr: u32) -> Option<u8> {
        let table: Vec<PathEntry> = self.paths.iter().map(|sp| sp.entry(&self.p)).collect();
        let elig = mask(&table, &req, &self.p);
        let sel = select(&table, &req, self.p.mtu_shift, self.p.window);
        self.steps.push(SelectorStep {
            paths: self.paths.clone(),
            req,
            elig,
            clr,
            drain: false,
            chosen: sel.chosen,
            deficits: sel.deficits.clone(),
        });
        for (sp, d) in self.paths.iter_mut().zip(&sel.deficits) {
            sp.deficit = *d;
        }
        if let (Some(c), Request::New { .. }) = (sel.chosen, req) {
            let sp = &mut self.paths[c as usize];
            sp.inflight += 1;
            sp.next_psn = seq_add(sp.next_psn, 1);
        }
        sel.chosen
    }

    fn set_weights(&mut self, w: &[u8]) {
        for (sp, &w) in self.paths.iter_mut().zip(w) {
            sp.weight = w;
        }
    }
}

const NEW: Request = Request::New { conn_ok: true };

/// The vectors for `cfg` and `seed`.
pub fn generate(cfg: &Config, seed: u64) -> Vec<SelectorVector> {
    let p = PathParams::from_config(cfg);
    let n = cfg.transport.paths_per_conn as usize;
    let conns = cfg.transport.connections;
    let mut out = Vec::new();
    let mut push = |desc: &str, f: &dyn Fn(&mut Run, &mut Rng)| {
        let index = out.len();
        let vseed = vector_seed(seed, BlockKind::PathSelector, index);
        let mut rng = Rng::new(vseed);
        let mut run = Run::new(p, n);
        f(&mut run, &mut rng);
        out.push(SelectorVector {
            id: format!("path_selector-{index:03}"),
            desc: desc.to_string(),
            seed: vseed,
            conn: (index as u32 * 5 + 1) % conns,
            steps: run.steps,
        });
    };
    let pkt_per_cwnd = |cwnd: u32| cwnd >> p.mtu_shift;

    push("equal weights: the tie goes to the lowest index, then rotation", &|r, _| {
        r.set_weights(&vec![7; n]);
        for _ in 0..2 * n + 1 {
            r.step(NEW, 0);
        }
    });
    push("weights 5:1:1...: the smooth WRR interleaving", &|r, _| {
        let mut w = vec![1; n];
        w[0] = 5;
        r.set_weights(&w);
        for _ in 0..12 {
            r.step(NEW, 0);
        }
    });
    push("zero weights count as 1, beside 255", &|r, _| {
        let w: Vec<u8> = (0..n).map(|i| if i % 2 == 0 { 0 } else { 255 }).collect();
        r.set_weights(&w);
        for _ in 0..10 {
            r.step(NEW, 0);
        }
        r.set_weights(&vec![0; n]);
        for _ in 0..n + 1 {
            r.step(NEW, 0);
        }
    });
    push("every weight 255: the largest sum of weights", &|r, _| {
        r.set_weights(&vec![255; n]);
        for _ in 0..2 * n {
            r.step(NEW, 0);
        }
    });
    push("a path at its window: inflight << mtu_shift == cwnd is full, one less is not", &|r, _| {
        let full = pkt_per_cwnd(r.paths[0].cwnd);
        r.paths[0].inflight = full - 2;
        for _ in 0..6 {
            r.step(NEW, 0);
        }
        r.paths[0].inflight = full - 1;
        r.step(NEW, 0);
        r.paths[0].inflight = full - 1;
        r.paths[0].cwnd = (full - 1) << r.p.mtu_shift;
        r.step(NEW, 0);
        r.paths[0].cwnd += 1;
        r.step(NEW, 0);
    });
    push("psn window: window-1 outstanding is eligible, window is not, across the 24-bit wrap", &|r, _| {
        let w = r.p.window;
        for (i, sp) in r.paths.iter_mut().enumerate() {
            sp.cum_acked = SEQ_MASK - i as u32;
            sp.next_psn = seq_add(sp.cum_acked, w - 1 - (i as u32 % 2));
        }
        for _ in 0..6 {
            r.step(NEW, 0);
        }
    });
    push("the connection at its cap: no path for new data, credits unchanged", &|r, _| {
        r.set_weights(&vec![3; n]);
        r.step(NEW, 0);
        r.step(Request::New { conn_ok: false }, 0);
        r.step(Request::New { conn_ok: false }, 0);
        r.step(NEW, 0);
    });
    push("retransmissions avoid their own path and ignore windows", &|r, _| {
        for sp in r.paths.iter_mut() {
            sp.inflight = pkt_per_cwnd(sp.cwnd);
        }
        r.step(NEW, 0);
        for k in 0..2 * n {
            r.step(Request::Retx { avoid: (k % n) as u8 }, 0);
        }
        // An `avoid` outside the table avoids nothing.
        r.step(Request::Retx { avoid: 255 }, 0);
    });
    push("SKIP, SUSPECT and DEAD paths are skipped and keep their credit; recovery clears it", &|r, _| {
        r.set_weights(&(1..=n as u8).collect::<Vec<_>>());
        for _ in 0..5 {
            r.step(NEW, 0);
        }
        let mut clr = 0;
        r.set_state(n - 1, PathState::Skip, &mut clr);
        for _ in 0..3 {
            r.step(NEW, 0);
        }
        r.set_state(n - 1, PathState::Good, &mut clr);
        r.set_state(0, PathState::Suspect, &mut clr);
        r.step(NEW, clr);
        clr = 0;
        for _ in 0..3 {
            r.step(NEW, 0);
        }
        r.set_state(0, PathState::Dead, &mut clr);
        r.step(NEW, 0);
        r.set_state(0, PathState::Suspect, &mut clr);
        r.set_state(0, PathState::Good, &mut clr);
        r.step(NEW, clr);
        for _ in 0..4 {
            r.step(NEW, 0);
        }
    });
    push("nothing eligible: no path, every credit kept", &|r, _| {
        r.step(NEW, 0);
        r.step(NEW, 0);
        let mut clr = 0;
        for i in 0..n {
            r.set_state(i, PathState::Dead, &mut clr);
        }
        r.step(NEW, 0);
        r.step(Request::Retx { avoid: 0 }, 0);
    });
    push("one eligible path takes every decision", &|r, _| {
        let mut clr = 0;
        for i in 1..n {
            r.set_state(i, PathState::Skip, &mut clr);
        }
        for _ in 0..4 {
            r.step(NEW, 0);
        }
    });
    for k in 0..2 {
        push(&format!("random table changes between decisions ({k})"), &|r, rng| {
            let states = [
                PathState::Good,
                PathState::Good,
                PathState::Good,
                PathState::Skip,
                PathState::Suspect,
                PathState::Dead,
            ];
            for sp in r.paths.iter_mut() {
                sp.weight = rng.below(256) as u8;
                let base = rng.below(1 << 24) as u32;
                sp.cum_acked = base;
                sp.next_psn = base;
            }
            for _ in 0..20 {
                let mut clr = 0;
                for i in 0..n {
                    match rng.below(10) {
                        0 => {
                            let s = states[rng.below(states.len() as u64) as usize];
                            r.set_state(i, s, &mut clr);
                        }
                        1 => r.paths[i].weight = rng.below(256) as u8,
                        2 => {
                            // Acknowledgements drain the path.
                            let sp = &mut r.paths[i];
                            let a = rng.below(sp.inflight as u64 + 1) as u32;
                            sp.inflight -= a;
                            sp.cum_acked = seq_add(sp.cum_acked, a);
                        }
                        3 => r.paths[i].cwnd = (1 + rng.below(8) as u32) << r.p.mtu_shift,
                        _ => {}
                    }
                }
                let req = match rng.below(8) {
                    0 => Request::Retx { avoid: rng.below(n as u64) as u8 },
                    1 => Request::New { conn_ok: false },
                    _ => NEW,
                };
                r.step(req, clr);
            }
        });
    }
    out
}
