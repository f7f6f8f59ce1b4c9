//! `telemetry` vectors: one path-table entry and a sequence of timestamped
//! events (SACK, NACK, timeout, probe, send, tick) -> the entry after each
//! event and the action it asks of the transmit side, from
//! [`crate::path::apply`].
//!
//! Each step gives the expected entry as the fields that changed (by name,
//! as in [`PathEntry`]); every other field keeps its value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::format::{changes, vector_seed, BlockKind};
use super::Outcome;
use crate::fixed::SEQ_MASK;
use crate::path::{apply, AckEvent, PathAction, PathEntry, PathEvent, PathParams, PathState};
use crate::rng::Rng;
use mrnic_proto::Config;

/// One event and its expected effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryStep {
    /// 32-bit timestamp counter when the event is applied.
    pub now: u32,
    pub event: PathEvent,
    /// The bench must let the block empty before this step.
    pub drain: bool,
    /// Expected: the entry's fields that changed, with their new values.
    pub changes: BTreeMap<String, serde_json::Value>,
    /// Expected: the action flags raised (`probe`, `all_lost`, `died`,
    /// `recovered`), in that order.
    pub action: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryVector {
    pub id: String,
    pub desc: String,
    pub seed: u64,
    /// The entry before the first event.
    pub entry: PathEntry,
    pub steps: Vec<TelemetryStep>,
}

/// The raised flags of an action, by name.
pub fn action_flags(a: &PathAction) -> Vec<String> {
    [("probe", a.probe), ("all_lost", a.all_lost), ("died", a.died), ("recovered", a.recovered)]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n.to_string())
        .collect()
}

/// `entry` with `changes` applied (the expected entry of a step).
pub fn with_changes(entry: &PathEntry, ch: &BTreeMap<String, serde_json::Value>) -> Result<PathEntry, String> {
    let mut v = serde_json::to_value(entry).expect("serializes");
    let obj = v.as_object_mut().expect("an object");
    for (k, val) in ch {
        if !obj.contains_key(k) {
            return Err(format!("no field {k:?} in a path entry"));
        }
        obj.insert(k.clone(), val.clone());
    }
    serde_json::from_value(v).map_err(|e| format!("changes do not make an entry: {e}"))
}

/// Re-runs the reference on a vector.
pub fn check(cfg: &Config, v: &TelemetryVector) -> Outcome {
    let p = PathParams::from_config(cfg);
    let mut e = v.entry;
    for (k, s) in v.steps.iter().enumerate() {
        let (n, a) = apply(&e, s.now, &s.event, &p);
        let got = changes(&e, &n);
        let flags = action_flags(&a);
        if got != s.changes || flags != s.action {
            return Outcome::Fail(format!(
                "step {k} ({:?} at {}): reference changed {} and raised {:?}; the vector expects {} and {:?}",
                s.event,
                s.now,
                serde_json::to_string(&got).unwrap_or_default(),
                flags,
                serde_json::to_string(&s.changes).unwrap_or_default(),
                s.action
            ));
        }
        e = n;
    }
    Outcome::Pass
}

struct Run {
    p: PathParams,
    entry: PathEntry,
    cur: PathEntry,
    now: u32,
    steps: Vec<TelemetryStep>,
}

impl Run {
    fn new(p: PathParams, entry: PathEntry, now: u32) -> Run {
        Run { p, entry, cur: entry, now, steps: Vec::new() }
    }

    /// Applies one event. The scenario may set up `cur` before the first
    /// event only: later changes would not be in the vector.
    fn at(&mut self, dt: u32, ev: PathEvent) -> PathAction {
        if self.steps.is_empty() {
            // Whatever the scenario set up before its first event is the
            // vector's starting entry.
            self.entry = self.cur;
        }
        self.now = self.now.wrapping_add(dt);
        let ev = match ev {
            PathEvent::Ack(a) => PathEvent::Ack(AckEvent { now: self.now, ..a }),
            PathEvent::AckSteered(a) => PathEvent::AckSteered(AckEvent { now: self.now, ..a }),
            e => e,
        };
        let (n, a) = apply(&self.cur, self.now, &ev, &self.p);
        self.steps.push(TelemetryStep {
            now: self.now,
            event: ev,
            drain: false,
            changes: changes(&self.cur, &n),
            action: action_flags(&a),
        });
        self.cur = n;
        a
    }

    /// A SACK newly acknowledging `pkts` full packets of this path, with an
    /// RTT sample and `ce` marks.
    fn ack(&mut self, dt: u32, pkts: u32, rtt: Option<u32>, ce: u32) -> PathAction {
        let e = self.cur;
        let ev = AckEvent {
            now: 0,
            cum_acked: (e.cum_acked + pkts) & SEQ_MASK,
            acked_pkts: pkts,
            acked_bytes: pkts * self.p.mtu,
            ecn_cnt: ce,
            rtt,
            acked_seq: e.acked_seq.wrapping_add(pkts),
        };
        self.at(dt, PathEvent::Ack(ev))
    }

    fn sends(&mut self, dt: u32, n: u32) {
        for _ in 0..n {
            self.at(dt, PathEvent::Send);
        }
    }

    /// Timeouts at the entry's own deadline.
    fn timeout(&mut self, sport: u16) -> PathAction {
        let dt = self.cur.rto_deadline.wrapping_sub(self.now);
        let dt = if (dt as i32) < 0 { 0 } else { dt };
        self.at(dt, PathEvent::Timeout { fresh_sport: sport })
    }
}

/// The vectors for `cfg` and `seed`.
pub fn generate(cfg: &Config, seed: u64) -> Vec<TelemetryVector> {
    let p = PathParams::from_config(cfg);
    let mut out = Vec::new();
    let mut push = |desc: &str, start: u32, f: &dyn Fn(&mut Run, &mut Rng)| {
        let index = out.len();
        let vseed = vector_seed(seed, BlockKind::Telemetry, index);
        let mut rng = Rng::new(vseed);
        let sport = 49152 + rng.below(16384) as u16;
        let entry = PathEntry::new(sport, (index % 4) as u8, rng.below(1 << 24) as u32, &p);
        let mut run = Run::new(p, entry, start);
        f(&mut run, &mut rng);
        out.push(TelemetryVector {
            id: format!("telemetry-{index:03}"),
            desc: desc.to_string(),
            seed: vseed,
            entry: run.entry,
            steps: run.steps,
        });
    };

    push("first RTT sample seeds srtt/rttvar/min_rtt, later samples move them by EWMA", 1000, &|r, _| {
        r.sends(1, 4);
        r.ack(200, 1, Some(200), 0);
        r.ack(10, 1, Some(280), 0);
        r.ack(10, 1, Some(90), 0);
        r.ack(10, 1, None, 0);
    });
    // A sample is `(now - echo_ts) mod 2^16` (spec 1, timestamps): 2^16 - 1
    // is the largest there is, so srtt (20 bits) and rttvar (16 bits) never
    // saturate from samples.
    push("the largest RTT sample (2^16 - 1) seeds srtt and rttvar, a 1 after it moves them by EWMA", 5, &|r, _| {
        r.sends(1, 2);
        r.ack(3, 1, Some(0xffff), 0);
        r.ack(3, 1, Some(1), 0);
    });
    push("CE: one cut per srtt, GOOD -> SKIP until hold_until, then GOOD on a tick", 100, &|r, _| {
        r.sends(1, 8);
        r.ack(50, 2, Some(50), 1);
        r.ack(5, 2, None, 2);
        r.at(1, PathEvent::Tick);
        let hold = r.cur.hold_until;
        r.at(hold.wrapping_sub(r.now).wrapping_sub(1), PathEvent::Tick);
        r.at(1, PathEvent::Tick);
        r.ack(1, 2, Some(60), 2);
    });
    // Every vector starts from the entry an OPEN makes (the hardware's table
    // is written only by events) and reaches its state through events.
    push("CE at the smallest window: the cut is floored at min_cwnd", 7, &|r, _| {
        r.sends(1, 3);
        r.ack(20, 1, Some(20), 1);
        // Fully marked SACKs, one per hold: ecn_ewma climbs, each cut is
        // deeper, until the window sits on the floor.
        for _ in 0..400 {
            if r.cur.cwnd == r.p.min_cwnd {
                break;
            }
            let dt = r.cur.hold_until.wrapping_sub(r.now).max(1);
            r.ack(dt, 4, None, 4);
        }
        let hold = r.cur.hold_until;
        r.at(hold.wrapping_sub(r.now), PathEvent::Tick);
        r.ack(1, 1, None, 1);
    });
    push("additive increase: one MTU per window of acked bytes, capped at max_cwnd", 9, &|r, _| {
        // SACKs of up to a window each (at most 511 packets: the 9-bit
        // port), until the cap; then the cap holds.
        let mut capped = 0;
        for _ in 0..4000 {
            if r.cur.cwnd == r.p.max_cwnd {
                capped += 1;
                if capped > 3 {
                    break;
                }
            }
            let pkts = r.cur.cwnd.div_ceil(r.p.mtu).clamp(1, 511);
            r.ack(4, pkts, None, 0);
        }
    });
    push("RTO walk: GOOD timeouts -> SUSPECT (re-entropy, all lost) -> DEAD -> probes bring it back", 2000, &|r, _| {
        r.sends(1, 3);
        for k in 0..r.p.suspect_after_rtos {
            let a = r.timeout(50000 + k as u16);
            if a.probe {
                r.at(0, PathEvent::ProbeSent);
            }
        }
        for k in 0..r.p.dead_after_failures {
            let a = r.timeout(51000 + k as u16);
            if a.probe {
                r.at(0, PathEvent::ProbeSent);
            }
        }
        let a = r.timeout(52000);
        if a.probe {
            r.at(0, PathEvent::ProbeSent);
        }
        for _ in 0..r.p.good_after_probes + 1 {
            let a = r.at(30, PathEvent::ProbeReply);
            if a.probe {
                r.at(0, PathEvent::ProbeSent);
            }
        }
        r.ack(5, 3, None, 0);
    });
    push(
        "a SUSPECT path that stays silent dies; a reply on a DEAD path makes it SUSPECT with one probe counted",
        77,
        &|r, _| {
            r.sends(2, 1);
            for k in 0..r.p.suspect_after_rtos + r.p.dead_after_failures {
                r.timeout(60000 + k as u16);
            }
            r.at(0, PathEvent::ProbeSent);
            r.at(40, PathEvent::ProbeReply);
            r.at(0, PathEvent::ProbeSent);
            r.timeout(61000);
        },
    );
    push("a NACK on a GOOD path ends the timeout run and restarts the RTO", 300, &|r, _| {
        r.sends(1, 2);
        r.timeout(49999);
        r.at(0, PathEvent::ProbeSent);
        r.timeout(49998);
        r.at(10, PathEvent::Nack);
        r.ack(10, 2, None, 0);
    });
    push("timestamps wrap at 2^32: deadlines and holds across the wrap", u32::MAX - 40, &|r, _| {
        r.sends(1, 2);
        r.ack(10, 1, Some(30), 1);
        r.at(20, PathEvent::Tick);
        let hold = r.cur.hold_until;
        r.at(hold.wrapping_sub(r.now), PathEvent::Tick);
        r.timeout(50500);
    });
    push("psn wraps at 2^24 on send; inflight saturates at 9 bits", 0, &|r, _| {
        // Opened just below the wrap; 513 sends cross it and fill inflight.
        r.cur = PathEntry::new(r.cur.sport, r.cur.plane, SEQ_MASK - 508, &r.p);
        r.sends(1, 513);
    });
    push("a retransmission starts the RTO only when it is not running", 50, &|r, _| {
        r.at(3, PathEvent::Retransmit);
        r.at(3, PathEvent::Send);
        r.at(3, PathEvent::Retransmit);
        r.ack(10, 1, None, 0);
    });
    push("a SACK with an older acked_seq and nothing new acked changes no estimator", 400, &|r, _| {
        r.sends(1, 4);
        r.ack(20, 2, Some(20), 0);
        let mut e = r.cur;
        e.acked_seq = e.acked_seq.wrapping_sub(1);
        let ev = AckEvent {
            now: 0,
            cum_acked: e.cum_acked,
            acked_pkts: 0,
            acked_bytes: 0,
            ecn_cnt: 3,
            rtt: None,
            acked_seq: e.acked_seq,
        };
        r.at(5, PathEvent::Ack(ev));
    });
    for k in 0..6 {
        push(&format!("random events on one entry ({k})"), 0, &|r, rng| {
            r.now = rng.next_u64() as u32;
            if rng.below(2) == 0 {
                // A first RTT sample seeds the estimators.
                r.ack(1, 0, Some(50 + rng.below(500) as u32), 0);
            }
            for _ in 0..20 {
                let dt = rng.below(300) as u32;
                match rng.below(12) {
                    0..=3 => r.at(dt, PathEvent::Send),
                    4..=6 if r.cur.inflight > 0 => {
                        let pk = 1 + rng.below(r.cur.inflight.min(8) as u64) as u32;
                        let rtt = (rng.below(3) > 0).then(|| 20 + rng.below(400) as u32);
                        let ce = if rng.below(4) == 0 { rng.below(pk as u64 + 1) as u32 } else { 0 };
                        r.ack(dt, pk, rtt, ce)
                    }
                    7 => r.at(dt, PathEvent::Nack),
                    8 => r.timeout(49152 + rng.below(16384) as u16),
                    9 if r.cur.state != PathState::Good && !r.cur.probe_pending => r.at(dt, PathEvent::ProbeSent),
                    9 | 10 if r.cur.probe_pending => r.at(dt, PathEvent::ProbeReply),
                    _ => r.at(dt, PathEvent::Tick),
                };
            }
        });
    }
    // Appended after the random ones so that the earlier ids keep their
    // contents.
    push("an RNR NACK takes its packet out of inflight, its resend puts it back and starts the RTO", 700, &|r, _| {
        r.sends(1, 2);
        r.at(10, PathEvent::Rnr);
        // The other packet is acknowledged: nothing is in flight, the
        // timer stops while the refused one backs off.
        r.ack(10, 1, Some(20), 0);
        r.at(100, PathEvent::Resume);
        r.ack(20, 1, None, 0);
        // inflight saturates at 0 (an RNR the sender never sends).
        r.at(5, PathEvent::Rnr);
    });
    push(
        "CE steering: a steered SACK's CE cut shrinks the window, the path stays GOOD; a plain one's pauses it \
         (SKIP); a steered SACK then makes it GOOD",
        800,
        &|r, _| {
            r.sends(1, 8);
            r.ack(50, 2, Some(50), 0);
            let (e, mtu) = (r.cur, r.p.mtu);
            let steered = |pkts: u32, ce: u32| AckEvent {
                now: 0,
                cum_acked: (e.cum_acked + pkts) & SEQ_MASK,
                acked_pkts: pkts,
                acked_bytes: pkts * mtu,
                ecn_cnt: ce,
                rtt: None,
                acked_seq: e.acked_seq.wrapping_add(pkts),
            };
            r.at(5, PathEvent::AckSteered(steered(2, 2)));
            // The plain ACK of the same marks pauses the path (SKIP).
            let f = r.cur;
            let plain = AckEvent {
                cum_acked: (f.cum_acked + 2) & SEQ_MASK,
                acked_seq: f.acked_seq.wrapping_add(2),
                ..steered(2, 2)
            };
            let hold = f.hold_until;
            r.at(hold.wrapping_sub(r.now).wrapping_add(1), PathEvent::Ack(plain));
            // A steered SACK finds it SKIP: GOOD again.
            let g = r.cur;
            let again = AckEvent {
                cum_acked: (g.cum_acked + 1) & SEQ_MASK,
                acked_seq: g.acked_seq.wrapping_add(1),
                ..steered(1, 0)
            };
            r.at(1, PathEvent::AckSteered(again));
        },
    );
    out
}
