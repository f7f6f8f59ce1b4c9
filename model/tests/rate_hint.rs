//! `rate_hint` through its ports against the reference's rule
//! (`Nic::rate_hint`: `recip16(others + 1)`, others = the connections other
//! than the packet's with data in the last `2 x rto_min`), on random
//! connections, data and times that step across the window's end by one
//! unit either way. Between events the time holds for a full sweep, the
//! block's documented lag.

use std::collections::BTreeMap;

use mrnic_model::block::{cycle_named, port_index, PortDef};
use mrnic_model::rate_hint::*;
use mrnic_proto::Config;
use mrnic_reference::fixed::recip16;
use mrnic_reference::rng::Rng;

struct Rig {
    b: RateHint,
    ports: Vec<PortDef>,
    ts: u32,
}

impl Rig {
    fn cycle(&mut self, set: &[(&str, u64)]) -> u16 {
        let mut set = set.to_vec();
        set.push(("ts_now", self.ts as u64));
        let o = cycle_named(&mut self.b, &self.ports, &set);
        o[port_index(&self.ports, "hint").unwrap()].as_u64() as u16
    }
}

fn run(name: &str, seed: u64, events: usize) {
    let cfg = Config::builtin(name).unwrap();
    let p = RateHintParams::from_config(&cfg).unwrap();
    let (w, l, conns) = (p.window, p.read_latency, p.conns);
    let mut r = Rig { ports: ports(&p), b: RateHint::new(p), ts: 0 };
    r.cycle(&[("rst", 1)]);
    let mut rng = Rng::new(seed);
    // The reference's set: connection -> unit of its last data.
    let mut last: BTreeMap<u32, u32> = BTreeMap::new();
    // A few connections, so several are recent at once.
    let pool: Vec<u32> = (0..6u32).map(|k| (k * conns / 6 + (rng.next_u64() % 2) as u32) % conns).collect();
    let (mut counted, mut hints) = (0, std::collections::BTreeSet::new());
    for e in 0..events {
        // Mostly small steps (several connections stay recent); a quarter
        // land on one recent connection's last unit of the window or the
        // first past it (the oldest's, so the others stay).
        let edge = last.values().map(|t| t.wrapping_add(w - 1 + (rng.next_u64() % 2) as u32)).min();
        r.ts = match edge {
            Some(t) if rng.next_u64() % 4 == 0 && t >= r.ts => t,
            _ => r.ts.wrapping_add((rng.next_u64() % (w as u64 / 8)) as u32),
        };
        for _ in 0..conns + l + 1 {
            r.cycle(&[]);
        }
        let c = pool[(rng.next_u64() % pool.len() as u64) as usize];
        last.retain(|_, t| r.ts.wrapping_sub(*t) < w);
        let others = last.keys().filter(|k| **k != c).count() as u32;
        let want = recip16(others + 1).min(0xffff) as u16;
        r.cycle(&[("tap_pkt_valid", 1), ("tap_pkt_ready", 1), ("tap_pkt_conn", c as u64)]);
        for _ in 1..l {
            r.cycle(&[]);
        }
        let got = r.cycle(&[]);
        assert_eq!(got, want, "{name} seed {seed} event {e}: conn {c} at {}, recent {last:?}", r.ts);
        hints.insert(got);
        if rng.next_u64() % 3 != 0 {
            r.cycle(&[("tap_new_valid", 1), ("tap_new_ready", 0), ("tap_new_conn", c as u64)]);
            r.cycle(&[("tap_new_valid", 1), ("tap_new_ready", 1), ("tap_new_conn", c as u64)]);
            last.insert(c, r.ts);
            counted += 1;
        }
    }
    assert!(counted > events / 2 && hints.len() >= 3, "{name}: the run exercised too little: {hints:?}");
}

#[test]
fn the_hint_counts_the_other_recent_connections_like_the_reference() {
    for seed in 1..4 {
        run("small", seed, 400);
    }
    run("default", 7, 40);
}

#[test]
fn a_sweep_read_in_flight_sees_a_write_to_its_connection() {
    // L = 2: the sweep reads connection 1 two cycles before the write lands;
    // the stale word must not expire the connection just written.
    let p = RateHintParams::new(2, 2, 10).unwrap();
    let mut b = RateHint::new(p);
    b.clock(true, 0, None, None);
    b.clock(false, 0, None, Some(1));
    assert_eq!(b.count(), 1);
    for t in 0..40u32 {
        // Data again every cycle from 100 on: always recent.
        let now = 100 + t;
        b.clock(false, now, None, Some(1));
        assert_eq!(b.count(), 1, "cycle {t}");
    }
    for t in 0..20u32 {
        b.clock(false, 139 + 10 + t, None, None);
    }
    assert_eq!(b.count(), 0, "expired once quiet for the window");
    assert_eq!(hint_of(0), 0xffff);
    assert_eq!(hint_of(1), 32768);
    assert_eq!(hint_of(1000), 256);
}
