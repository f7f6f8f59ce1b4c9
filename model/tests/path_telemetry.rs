//! Tests of `path_telemetry`: the update function against the reference's
//! `path::apply` bit for bit, back-to-back updates of one entry through the
//! forwarding, random event streams with backpressure against the
//! reference, the RTO scanner's bound, the state machine's transitions, the
//! read port, and parameter refusals. Stimulus is seeded; a failure names
//! its seed.

use std::collections::{HashMap, VecDeque};

use mrnic_model::block::{zero_values, Bits, Block};
use mrnic_model::path_telemetry::*;
use mrnic_proto::tables::path as pt;
use mrnic_proto::Config;
use mrnic_reference::path::{self as rp, PathEntry, PathEvent, PathParams, PathState};
use proptest::prelude::*;

/// xorshift64*: deterministic stimulus without a dependency.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn bits(&mut self, w: u32) -> u64 {
        if w >= 64 {
            self.next()
        } else {
            self.next() & ((1 << w) - 1)
        }
    }
}

fn cfg(name: &str) -> Config {
    Config::builtin(name).unwrap()
}

fn variant(paths: u32, latency: u32) -> Config {
    let mut c = cfg("small");
    c.name = format!("small_p{paths}_l{latency}");
    c.transport.paths_per_conn = paths;
    c.hardware.table_read_latency = latency;
    c
}

// ------------------------------------------------------------ reference side

fn to_ref(e: &Entry) -> PathEntry {
    let state = match e.state {
        GOOD => PathState::Good,
        SKIP => PathState::Skip,
        SUSPECT => PathState::Suspect,
        _ => PathState::Dead,
    };
    PathEntry {
        state,
        sport: e.sport,
        gen: e.gen,
        plane: e.plane,
        next_psn: e.next_psn,
        cum_acked: e.cum_acked,
        inflight: e.inflight,
        cwnd: e.cwnd,
        srtt: e.srtt,
        rttvar: e.rttvar,
        min_rtt: e.min_rtt,
        ecn_ewma: e.ecn_ewma,
        acked_bytes: e.acked_bytes,
        weight: e.weight,
        deficit: e.deficit as i16,
        rto_deadline: e.rto_deadline,
        retries: e.retries,
        hold_until: e.hold_until,
        probes_ok: e.probes_ok,
        probe_pending: e.probe_pending,
        probe_ts: e.probe_ts,
        tx_seq: e.tx_seq,
        probe_seq: e.probe_seq,
        acked_seq: e.acked_seq,
    }
}

fn from_ref(r: &PathEntry) -> Entry {
    Entry {
        state: r.state as u8,
        sport: r.sport,
        gen: r.gen,
        plane: r.plane,
        next_psn: r.next_psn,
        cum_acked: r.cum_acked,
        inflight: r.inflight,
        cwnd: r.cwnd,
        srtt: r.srtt,
        rttvar: r.rttvar,
        min_rtt: r.min_rtt,
        ecn_ewma: r.ecn_ewma,
        acked_bytes: r.acked_bytes,
        weight: r.weight,
        deficit: r.deficit as u16,
        rto_deadline: r.rto_deadline,
        retries: r.retries,
        hold_until: r.hold_until,
        probes_ok: r.probes_ok,
        probe_pending: r.probe_pending,
        probe_ts: r.probe_ts,
        tx_seq: r.tx_seq,
        probe_seq: r.probe_seq,
        acked_seq: r.acked_seq,
    }
}

fn act_bits(a: rp::PathAction) -> u8 {
    [(a.probe, act::PROBE), (a.all_lost, act::ALL_LOST), (a.died, act::DIED), (a.recovered, act::RECOVERED)]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit)
}

/// The golden function: the reference's `apply` for the kinds it has,
/// `PathEntry::new` for OPEN, `on_tick` + conditional `on_timeout` for
/// TIMER, `on_timeout` of a `usable` path for SILENT (the reference
/// sender's `silent_losses`). Returns (entry, action bits, fired).
fn golden(e: &Entry, ev: &Event, lfsr: u16, p: &PathParams) -> (Entry, u8, bool) {
    let r = to_ref(e);
    let now = ev.now;
    let pe = match ev.kind {
        kind::OPEN => {
            let n = PathEntry::new(ev.sport, ev.plane, ev.cum_acked, p);
            return (from_ref(&n), 0, false);
        }
        kind::SEND => PathEvent::Send,
        kind::RETX => PathEvent::Retransmit,
        kind::PROBE_SENT => PathEvent::ProbeSent,
        kind::ACK | kind::ACK_STEER => {
            let a = rp::AckEvent {
                now,
                cum_acked: ev.cum_acked,
                acked_pkts: ev.acked_pkts,
                acked_bytes: ev.acked_bytes,
                ecn_cnt: ev.ecn_cnt,
                rtt: ev.rtt_valid.then_some(ev.rtt),
                acked_seq: ev.acked_seq,
            };
            if ev.kind == kind::ACK {
                PathEvent::Ack(a)
            } else {
                PathEvent::AckSteered(a)
            }
        }
        kind::PROBE_REPLY => PathEvent::ProbeReply,
        kind::NACK => PathEvent::Nack,
        kind::RNR => PathEvent::Rnr,
        kind::RESUME => PathEvent::Resume,
        kind::TIMEOUT => PathEvent::Timeout { fresh_sport: ev.sport },
        kind::TICK => PathEvent::Tick,
        kind::TIMER => {
            let t = rp::on_tick(&r, now);
            if t.timer_armed() && mrnic_reference::fixed::ts_reached(now, t.rto_deadline) {
                let (n, a) = rp::on_timeout(&t, now, fresh_sport(lfsr, t.sport), p);
                return (from_ref(&n), act_bits(a), true);
            }
            return (from_ref(&t), 0, false);
        }
        kind::SILENT if r.usable() => {
            let (n, a) = rp::on_timeout(&r, now, fresh_sport(lfsr, r.sport), p);
            return (from_ref(&n), act_bits(a), true);
        }
        _ => return (*e, 0, false),
    };
    let (n, a) = rp::apply(&r, now, &pe, p);
    (from_ref(&n), act_bits(a), ev.kind == kind::TIMEOUT)
}

fn random_entry(rng: &mut Rng, near: u32) -> Entry {
    let time = |rng: &mut Rng| -> u32 {
        if rng.chance(80) {
            near.wrapping_add(rng.below(4000) as u32).wrapping_sub(2000)
        } else {
            rng.next() as u32
        }
    };
    let srtt = if rng.chance(50) { rng.below(3000) as u32 } else { rng.bits(20) as u32 };
    Entry {
        state: rng.below(4) as u8,
        sport: rng.next() as u16,
        gen: rng.next() as u8,
        plane: rng.bits(3) as u8,
        next_psn: rng.bits(24) as u32,
        cum_acked: rng.bits(24) as u32,
        inflight: if rng.chance(30) { 0 } else { rng.bits(9) as u32 },
        cwnd: if rng.chance(80) { 1024 + rng.below(262144) as u32 } else { rng.bits(20) as u32 },
        srtt,
        rttvar: rng.bits(16) as u32,
        min_rtt: if rng.chance(30) { MIN_RTT_NONE } else { rng.bits(20) as u32 },
        ecn_ewma: rng.next() as u8,
        acked_bytes: rng.bits(24) as u32,
        weight: rng.next() as u8,
        deficit: rng.next() as u16,
        rto_deadline: time(rng),
        retries: rng.bits(4) as u8,
        hold_until: time(rng),
        probes_ok: rng.bits(4) as u8,
        probe_pending: rng.chance(40),
        probe_ts: rng.next() as u16,
        tx_seq: rng.next() as u32,
        probe_seq: rng.next() as u32,
        acked_seq: rng.next() as u32,
    }
}

fn random_event(rng: &mut Rng, p: &PathTelemetryParams, conns: u32, paths: u32, now: u32) -> Event {
    let kind = match rng.below(20) {
        0 => kind::OPEN,
        1..=4 => kind::SEND,
        5 => kind::RETX,
        6 => kind::PROBE_SENT,
        7..=11 => kind::ACK,
        12 => kind::PROBE_REPLY,
        13 => kind::NACK,
        14 => kind::TIMEOUT,
        15 => kind::TICK,
        16 => kind::TIMER,
        // SILENT, RNR, RESUME, ACK_STEER and the two unused codes.
        17 => 10 + rng.below(6) as u8,
        18 => kind::SILENT,
        _ => kind::ACK,
    };
    let span = if rng.chance(90) { 16 } else { 512 };
    let pkts = if rng.chance(20) { 0 } else { rng.below(span) as u32 };
    Event {
        kind,
        conn: rng.below(conns.min(p.conns) as u64) as u32,
        path: rng.below(paths.min(p.paths) as u64) as u32,
        now,
        cum_acked: rng.bits(24) as u32,
        acked_pkts: pkts,
        acked_bytes: pkts * if rng.chance(80) { 1024 } else { rng.below(8193) as u32 },
        ecn_cnt: if rng.chance(70) { 0 } else { rng.bits(8) as u32 },
        rtt_valid: rng.chance(60),
        rtt: if rng.chance(80) { 50 + rng.below(2000) as u32 } else { rng.bits(16) as u32 },
        acked_seq: rng.next() as u32,
        sport: rng.next() as u16,
        plane: rng.bits(3) as u8,
    }
}

// ------------------------------------------------------------ pure function

#[test]
fn consts_equal_the_references_path_params() {
    for name in ["small", "default"] {
        let c = cfg(name);
        let k = Consts::from_config(&c);
        let r = PathParams::from_config(&c);
        assert_eq!(
            (k.mtu, k.min_cwnd, k.max_cwnd, k.init_cwnd, k.srtt_shift, k.rttvar_shift, k.ecn_shift),
            (r.mtu, r.min_cwnd, r.max_cwnd, r.init_cwnd, r.srtt_shift, r.rttvar_shift, r.ecn_shift)
        );
        assert_eq!(
            (k.initial_rtt, k.rto_min, k.rto_max, k.dead_probe_interval, k.weight_shift),
            (r.initial_rtt, r.rto_min, r.rto_max, r.dead_probe_interval, r.weight_shift)
        );
        assert_eq!(
            (k.suspect_after_rtos, k.good_after_probes, k.dead_after_failures),
            (r.suspect_after_rtos, r.good_after_probes, r.dead_after_failures)
        );
    }
}

#[test]
fn entry_layout_is_the_table_then_the_extensions() {
    assert_eq!(entry_bits(), pt::TABLE.width() + 149);
    assert_eq!(entry_bits(), 403);
    for f in pt::TABLE.fields {
        assert_eq!(field_pos(f.name).0, pt::TABLE.lsb(f.name).unwrap());
    }
    let mut rng = Rng::new(5);
    for _ in 0..500 {
        let e = random_entry(&mut rng, 1000);
        let b = pack(&e);
        assert_eq!(unpack(&b), e);
        assert_eq!(entry_field(&b, "cwnd"), e.cwnd as u64);
        assert_eq!(entry_field(&b, "acked_seq"), e.acked_seq as u64);
    }
}

#[test]
fn lfsr_is_maximal_and_fresh_ports_stay_in_range() {
    let mut s = LFSR_SEED;
    let mut n = 0u32;
    loop {
        s = lfsr_step(s);
        n += 1;
        if s == LFSR_SEED {
            break;
        }
        assert_ne!(s, 0);
    }
    assert_eq!(n, 65535);
    for (l, old) in [(0u16, 0xC000u16), (0x3FFF, 0xFFFF), (0x1234, 80)] {
        let f = fresh_sport(l, old);
        assert!(f >= 0xC000 && f != old);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The block's update function is the reference's, bit for bit, on
    /// random entries and events of every kind, for both configs.
    #[test]
    fn execute_matches_the_reference(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        for name in ["small", "default"] {
            let c = cfg(name);
            let p = PathTelemetryParams::from_config(&c).unwrap();
            let rp = PathParams::from_config(&c);
            for _ in 0..40 {
                let now = rng.next() as u32;
                let e = random_entry(&mut rng, now);
                let ev = random_event(&mut rng, &p, 1, 1, now);
                let lfsr = rng.next() as u16;
                let o = execute(&e, &ev, lfsr, &p.k);
                let (n, a, fired) = golden(&e, &ev, lfsr, &rp);
                prop_assert_eq!(o.entry, n, "seed {} kind {} entry {:?} event {:?}", seed, ev.kind, e, ev);
                prop_assert_eq!(o.act, a, "seed {} kind {}", seed, ev.kind);
                prop_assert_eq!(o.fired, fired, "seed {} kind {}", seed, ev.kind);
            }
        }
    }

    /// Over random event sequences on one path, the state changes only along
    /// the edges of the spec, by the events that may take them, and the
    /// generation moves (by one) exactly when a timeout re-entropies.
    #[test]
    fn state_machine_takes_only_spec_transitions(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let c = cfg("small");
        let p = PathTelemetryParams::from_config(&c).unwrap();
        let mut now = 1000u32;
        let mut e = execute(&Entry::default(), &Event { kind: kind::OPEN, sport: 50000, ..Event::default() }, 0, &p.k).entry;
        let mut lfsr = LFSR_SEED;
        for _ in 0..300 {
            now = now.wrapping_add(rng.below(3000) as u32);
            let mut ev = random_event(&mut rng, &p, 1, 1, now);
            if ev.kind == kind::OPEN && rng.chance(80) {
                ev.kind = kind::TIMER;
            }
            let o = execute(&e, &ev, lfsr, &p.k);
            let (from, to, k) = (e.state, o.entry.state, ev.kind);
            let ok = from == to
                || k == kind::OPEN && to == GOOD
                || (from, to) == (GOOD, SKIP) && k == kind::ACK
                || (from, to) == (SKIP, GOOD) && (k == kind::TICK || k == kind::TIMER || k == kind::ACK_STEER)
                || (from == GOOD || from == SKIP) && to == SUSPECT && (k == kind::TIMEOUT || k == kind::TIMER)
                || (from, to) == (GOOD, SUSPECT) && k == kind::SILENT
                || (from, to) == (SUSPECT, DEAD) && (k == kind::TIMEOUT || k == kind::TIMER)
                || (from, to) == (SUSPECT, GOOD) && k == kind::PROBE_REPLY
                || from == DEAD && (to == SUSPECT || to == GOOD) && k == kind::PROBE_REPLY;
            prop_assert!(ok, "seed {}: {} -> {} by kind {}", seed, from, to, k);
            if k != kind::OPEN {
                let moved = o.entry.gen != e.gen;
                if moved {
                    prop_assert!(o.fired, "seed {}: gen moved without a timeout", seed);
                    prop_assert_eq!(o.entry.gen, e.gen.wrapping_add(1));
                    prop_assert!(o.entry.state != GOOD && o.entry.state != SKIP);
                }
            }
            if o.fired && (ev.kind == kind::TIMER || ev.kind == kind::SILENT) {
                lfsr = lfsr_step(lfsr);
            }
            e = o.entry;
        }
    }
}

// ------------------------------------------------------------ cycle model

fn ready_dut(p: PathTelemetryParams) -> PathTelemetry {
    let mut dut = PathTelemetry::new(p);
    dut.clock(&Inputs { rst: true, ..Inputs::default() });
    let mut n = 0;
    while !dut.outputs().evt_ready {
        dut.clock(&Inputs::default());
        n += 1;
        assert!(n <= p.entries() + 1, "sweep did not end");
    }
    assert_eq!(n, p.entries(), "the clear sweep takes one cycle per entry");
    dut
}

fn open_event(conn: u32, path: u32) -> Event {
    Event { kind: kind::OPEN, conn, path, sport: 49152 + (conn * 32 + path) as u16, plane: 1, ..Event::default() }
}

/// The golden run: every accepted event applied in order to a table by the
/// reference, with the records it must produce and the table as the read
/// port must see it.
struct Golden {
    p: PathTelemetryParams,
    rp: PathParams,
    table: HashMap<u32, Entry>,
    lfsr: u16,
    upd: VecDeque<Upd>,
    rto: VecDeque<Rto>,
    /// (execute cycle, address, entry) not yet visible to reads.
    pending: VecDeque<(u64, u32, Entry)>,
    committed: HashMap<u32, Entry>,
}

impl Golden {
    fn new(p: PathTelemetryParams, c: &Config) -> Golden {
        Golden {
            p,
            rp: PathParams::from_config(c),
            table: HashMap::new(),
            lfsr: LFSR_SEED,
            upd: VecDeque::new(),
            rto: VecDeque::new(),
            pending: VecDeque::new(),
            committed: HashMap::new(),
        }
    }

    fn apply(&mut self, ev: &Event, cycle: u64) {
        let a = self.p.addr(ev.conn, ev.path);
        let e = self.table.get(&a).copied().unwrap_or_default();
        let (n, act, fired) = golden(&e, ev, self.lfsr, &self.rp);
        // The reference zeroes the deficit on these; the block says so on m_upd.
        let clr = ev.kind == kind::OPEN
            || act & act::RECOVERED != 0
            || fired && n.state == SUSPECT && (e.state == GOOD || e.state == SKIP);
        if ev.kind == kind::OPEN || n.state != e.state || n.weight != e.weight || clr || act != 0 {
            self.upd.push_back(Upd { conn: ev.conn, path: ev.path, state: n.state, weight: n.weight, clr, act });
        }
        if fired {
            self.rto.push_back(Rto { conn: ev.conn, path: ev.path, state: n.state, sport: n.sport, gen: n.gen, act });
            if ev.kind == kind::TIMER || ev.kind == kind::SILENT {
                self.lfsr = lfsr_step(self.lfsr);
            }
        }
        self.table.insert(a, n);
        self.pending.push_back((cycle + self.p.read_latency as u64, a, n));
    }

    /// The view a read handshaken in `cycle` returns.
    fn read(&mut self, conn: u32, cycle: u64) -> RdResp {
        while self.pending.front().is_some_and(|(c, _, _)| *c < cycle) {
            let (_, a, n) = self.pending.pop_front().unwrap();
            self.committed.insert(a, n);
        }
        RdResp {
            conn,
            paths: (0..self.p.paths)
                .map(|i| View::of(&self.committed.get(&self.p.addr(conn, i)).copied().unwrap_or_default()))
                .collect(),
        }
    }
}

struct Drive {
    p_valid: u64,
    p_upd_ready: u64,
    p_rto_ready: u64,
    p_rd: u64,
    p_rd_ready: u64,
    conns: u32,
    paths: u32,
    /// ts_now advances by one every this many cycles (0: stays 0).
    ts_every: u64,
}

/// Drives `n` random events plus random reads, checks every record on the
/// three outputs against [`Golden`] and the AXI rules, and the table at the
/// end. Returns (cycles, TIMERs injected).
fn drive(c: &Config, seed: u64, n: usize, d: &Drive) -> (u64, u64) {
    let p = PathTelemetryParams::from_config(c).unwrap();
    let mut dut = ready_dut(p);
    let mut g = Golden::new(p, c);
    let mut rng = Rng::new(seed);
    let mut sent = 0;
    let mut offered: Option<Event> = None;
    let mut rd_offered: Option<u32> = None;
    let mut rd_expect: VecDeque<RdResp> = VecDeque::new();
    // Outputs of the previous cycle and which of m_upd, m_rto, m_rd were taken.
    let mut prev: Option<(Outputs, [bool; 3])> = None;
    let mut cycle = 0u64;
    let mut now = 1000u32;
    // Ahead of the events' clock, so deadlines fall due during the run.
    let mut ts_now = if d.ts_every > 0 { 3500u32 } else { 0 };
    let mut last_accept = 0u64;
    // Open every path used first, in order.
    let mut opens: VecDeque<Event> =
        (0..d.conns.min(p.conns)).flat_map(|cn| (0..d.paths.min(p.paths)).map(move |pa| open_event(cn, pa))).collect();
    loop {
        cycle += 1;
        assert!(cycle < 200 * n as u64 + 10_000, "seed {seed}: stuck after {sent} events");
        if d.ts_every > 0 && cycle % d.ts_every == 0 {
            ts_now = ts_now.wrapping_add(1);
        }
        let done = sent >= n && opens.is_empty();
        if offered.is_none() && !done && rng.chance(d.p_valid) {
            now = now.wrapping_add(rng.below(3) as u32);
            offered = Some(opens.pop_front().unwrap_or_else(|| {
                sent += 1;
                let mut e = random_event(&mut rng, &p, d.conns, d.paths, now);
                if e.kind == kind::OPEN {
                    e.kind = kind::SEND;
                }
                e
            }));
        }
        if rd_offered.is_none() && !done && rng.chance(d.p_rd) {
            rd_offered = Some(rng.below(d.conns.min(p.conns) as u64) as u32);
        }
        let inp = Inputs {
            rst: false,
            ts_now,
            evt_valid: offered.is_some(),
            evt: offered.unwrap_or_default(),
            upd_ready: rng.chance(d.p_upd_ready),
            rto_ready: rng.chance(d.p_rto_ready),
            rd_valid: rd_offered.is_some(),
            rd_conn: rd_offered.unwrap_or(0),
            rd_resp_ready: rng.chance(d.p_rd_ready),
        };
        let o = dut.outputs();
        if let Some((po, taken)) = &prev {
            // Valid holds until the handshake, payload stable meanwhile.
            if po.upd.is_some() && !taken[0] {
                assert_eq!(o.upd, po.upd, "seed {seed} cycle {cycle}: m_upd changed while waiting");
            }
            if po.rto.is_some() && !taken[1] {
                assert_eq!(o.rto, po.rto, "seed {seed} cycle {cycle}: m_rto changed while waiting");
            }
            if po.rd.is_some() && !taken[2] {
                assert_eq!(o.rd, po.rd, "seed {seed} cycle {cycle}: m_rd changed while waiting");
            }
        }
        let mut taken = [false; 3];
        if let (Some(u), true) = (o.upd, inp.upd_ready) {
            assert_eq!(Some(u), g.upd.pop_front(), "seed {seed} cycle {cycle}: m_upd record");
            taken[0] = true;
        }
        if let (Some(r), true) = (o.rto, inp.rto_ready) {
            assert_eq!(Some(r), g.rto.pop_front(), "seed {seed} cycle {cycle}: m_rto record");
            taken[1] = true;
        }
        if let (Some(r), true) = (&o.rd, inp.rd_resp_ready) {
            assert_eq!(Some(r.clone()), rd_expect.pop_front(), "seed {seed} cycle {cycle}: m_rd record");
            taken[2] = true;
        }
        if inp.rd_valid && o.rd_ready {
            rd_expect.push_back(g.read(inp.rd_conn, cycle));
            rd_offered = None;
        }
        if inp.evt_valid && o.evt_ready {
            offered = None;
        }
        dut.clock(&inp);
        if let Some(ev) = dut.accepted().copied() {
            g.apply(&ev, cycle);
            last_accept = cycle;
        }
        prev = Some((o.clone(), taken));
        let quiet = cycle > last_accept + p.read_latency as u64 + 2;
        let o = dut.outputs();
        if done
            && quiet
            && offered.is_none()
            && rd_offered.is_none()
            && g.upd.is_empty()
            && g.rto.is_empty()
            && rd_expect.is_empty()
            && o.upd.is_none()
            && o.rto.is_none()
            && o.rd.is_none()
        {
            break;
        }
    }
    for (&a, e) in &g.table {
        let (conn, path) = (a / p.paths, a % p.paths);
        assert_eq!(dut.entry(conn, path), *e, "seed {seed}: entry ({conn}, {path})");
    }
    (cycle, dut.timers_injected)
}

#[test]
fn back_to_back_updates_of_one_entry_are_all_applied() {
    for l in [1, 2] {
        let c = variant(4, l);
        let p = PathTelemetryParams::from_config(&c).unwrap();
        let rp = PathParams::from_config(&c);
        for pattern in [vec![(3, 1)], vec![(3, 1), (5, 2)], vec![(3, 1), (3, 1), (5, 2)], vec![(3, 1), (5, 2), (7, 0)]]
        {
            let mut dut = ready_dut(p);
            let mut rng = Rng::new(l as u64 * 100 + pattern.len() as u64);
            let mut expect: HashMap<(u32, u32), Entry> = HashMap::new();
            let mut lfsr = LFSR_SEED;
            let mut evs = Vec::new();
            for &(cn, pa) in &pattern {
                if !evs.iter().any(|e: &Event| e.conn == cn && e.path == pa) {
                    evs.push(open_event(cn, pa));
                }
            }
            for i in 0..300u32 {
                let (cn, pa) = pattern[i as usize % pattern.len()];
                let mut e = random_event(&mut rng, &p, 1, 1, 1000 + i);
                if e.kind == kind::OPEN {
                    e.kind = kind::SEND;
                }
                e.conn = cn;
                e.path = pa;
                evs.push(e);
            }
            for (cycle, ev) in evs.iter().enumerate() {
                let o = dut.outputs();
                assert!(o.evt_ready, "L {l} {pattern:?}: stalled at event {cycle}");
                dut.clock(&Inputs {
                    evt_valid: true,
                    evt: *ev,
                    upd_ready: true,
                    rto_ready: true,
                    rd_resp_ready: true,
                    ..Inputs::default()
                });
                let cur = expect.get(&(ev.conn, ev.path)).copied().unwrap_or_default();
                let (n, _, fired) = golden(&cur, ev, lfsr, &rp);
                if fired && (ev.kind == kind::TIMER || ev.kind == kind::SILENT) {
                    lfsr = lfsr_step(lfsr);
                }
                expect.insert((ev.conn, ev.path), n);
            }
            for _ in 0..4 {
                dut.clock(&Inputs { upd_ready: true, rto_ready: true, ..Inputs::default() });
            }
            for (&(cn, pa), e) in &expect {
                assert_eq!(dut.entry(cn, pa), *e, "L {l} {pattern:?}: ({cn}, {pa})");
            }
        }
    }
}

#[test]
fn latency_is_l_plus_1_and_one_event_per_cycle_sustained() {
    for c in [cfg("small"), variant(4, 2), variant(32, 1)] {
        let p = PathTelemetryParams::from_config(&c).unwrap();
        let mut dut = ready_dut(p);
        let n = 100u32;
        let mut first = None;
        let mut got = 0;
        for cycle in 0..n + 10 {
            let o = dut.outputs();
            if let Some(u) = o.upd {
                first.get_or_insert(cycle);
                assert_eq!(u.conn * p.paths + u.path, got % p.entries());
                got += 1;
            }
            let ev = (cycle < n).then(|| open_event(cycle % p.entries() / p.paths, cycle % p.paths));
            if ev.is_some() {
                assert!(o.evt_ready, "{}: not ready at {cycle}", c.name);
            }
            dut.clock(&Inputs {
                evt_valid: ev.is_some(),
                evt: ev.unwrap_or_default(),
                upd_ready: true,
                rto_ready: true,
                rd_valid: true,
                rd_conn: cycle % p.conns,
                rd_resp_ready: true,
                ..Inputs::default()
            });
            assert!(cycle < 2 || dut.outputs().rd_ready, "{}: read port stalls", c.name);
        }
        assert_eq!(first, Some(p.latency()), "{}", c.name);
        assert_eq!(got, n, "{}", c.name);
    }
}

#[test]
fn random_streams_with_backpressure_match_the_reference() {
    let mut timers = 0;
    for (i, c) in [cfg("small"), variant(4, 2), variant(1, 2), variant(8, 1)].iter().enumerate() {
        for seed in 0..6u64 {
            let seed = seed + 100 * i as u64;
            let d = Drive {
                p_valid: [90, 50, 100][seed as usize % 3],
                p_upd_ready: [100, 50, 20][seed as usize % 3],
                p_rto_ready: [100, 30, 60][seed as usize % 3],
                p_rd: 40,
                p_rd_ready: [100, 40, 70][seed as usize % 3],
                conns: 3,
                paths: 3,
                ts_every: [0, 7, 3][seed as usize % 3],
            };
            timers += drive(c, seed, 1500, &d).1;
        }
    }
    assert!(timers > 0, "the scanner never injected a TIMER: the streams miss the timeout path");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random event streams with random gaps and backpressure on every
    /// output, ts_now running so the scanner injects TIMERs: every record
    /// and the final table agree with the reference applied in order.
    #[test]
    fn random_streams_agree_with_the_reference(seed in any::<u64>(), l in 1u32..=2, paths_log in 0u32..=3,
                                               p_valid in 30u64..=100, p_ready in 20u64..=100, ts_every in 1u64..8) {
        let c = variant(1 << paths_log, l);
        let d = Drive { p_valid, p_upd_ready: p_ready, p_rto_ready: p_ready, p_rd: 30, p_rd_ready: p_ready,
                        conns: 2, paths: 3, ts_every };
        drive(&c, seed, 600, &d);
    }
}

#[test]
fn scanner_finds_every_expired_entry_within_its_bound() {
    for c in [cfg("small"), variant(4, 2), variant(2, 1)] {
        let p = PathTelemetryParams::from_config(&c).unwrap();
        let n_entries = p.entries();
        let l = p.read_latency as u64;
        let mut dut = ready_dut(p);
        let mut rng = Rng::new(n_entries as u64 + l);
        // Open every entry, then send one packet on about half of them at
        // different times so their deadlines differ.
        let mut evs: Vec<Event> = (0..n_entries).map(|a| open_event(a / p.paths, a % p.paths)).collect();
        let mut armed: HashMap<u32, u32> = HashMap::new();
        for a in 0..n_entries {
            if rng.chance(50) {
                let now = 100 + rng.below(400) as u32;
                evs.push(Event { kind: kind::SEND, conn: a / p.paths, path: a % p.paths, now, ..Event::default() });
                let e = execute(
                    &execute(&Entry::default(), &open_event(a / p.paths, a % p.paths), 0, &p.k).entry,
                    evs.last().unwrap(),
                    0,
                    &p.k,
                )
                .entry;
                armed.insert(a, e.rto_deadline);
            }
        }
        assert!(!armed.is_empty());
        let ts0 = 0u32;
        for ev in &evs {
            assert!(dut.outputs().evt_ready);
            dut.clock(&Inputs {
                ts_now: ts0,
                evt_valid: true,
                evt: *ev,
                upd_ready: true,
                rto_ready: true,
                ..Inputs::default()
            });
        }
        // Time runs: ts_now + 1 every cycle. Record the first m_rto per entry.
        let mut due_at: HashMap<u32, u64> = HashMap::new();
        let mut found: HashMap<u32, u64> = HashMap::new();
        let mut injected_at: Vec<u64> = Vec::new();
        let max_deadline = armed.values().copied().max().unwrap_or(0) as u64;
        let mut ts = ts0;
        for cycle in 0..max_deadline + 4 * n_entries as u64 * (l + 2) + 100 {
            ts = ts.wrapping_add(1);
            for (&a, &dl) in &armed {
                if ts == dl {
                    due_at.insert(a, cycle);
                }
            }
            if let Some(r) = dut.outputs().rto {
                let a = p.addr(r.conn, r.path);
                assert!(armed.contains_key(&a), "{}: timeout of an entry with no timer running ({a})", c.name);
                assert!(due_at.contains_key(&a), "{}: timeout before the deadline ({a})", c.name);
                found.entry(a).or_insert(cycle);
            }
            dut.clock(&Inputs { ts_now: ts, upd_ready: true, rto_ready: true, ..Inputs::default() });
            if dut.accepted().is_some() {
                injected_at.push(cycle);
            }
        }
        for (&a, &t) in &due_at {
            let f = *found.get(&a).unwrap_or_else(|| panic!("{}: entry {a} due at {t} never timed out", c.name));
            // Hits between due and found delay the sweep by L + 1 each.
            let h = injected_at.iter().filter(|&&x| x >= t && x <= f).count() as u64;
            let bound = n_entries as u64 + h * (l + 1) + l + 1 + (l + 1);
            assert!(
                f - t <= bound,
                "{}: entry {a} due at {t} found at {f}: {} > bound {bound} (hits {h})",
                c.name,
                f - t
            );
        }
        assert_eq!(due_at.len(), armed.len(), "{}: every armed deadline passed", c.name);
    }
}

#[test]
fn held_outputs_stop_intake_without_losing_records() {
    let c = cfg("small");
    let p = PathTelemetryParams::from_config(&c).unwrap();
    let mut dut = ready_dut(p);
    let mut accepted = 0;
    for cycle in 0..40u32 {
        let ev = open_event(cycle % p.conns, 0);
        let o = dut.outputs();
        if o.evt_ready {
            accepted += 1;
        }
        dut.clock(&Inputs { evt_valid: true, evt: ev, ..Inputs::default() });
    }
    assert_eq!(accepted, p.fifo_depth(), "intake stops once the m_upd FIFO is committed");
    let mut got = Vec::new();
    for _ in 0..20 {
        if let Some(u) = dut.outputs().upd {
            got.push(u.conn);
        }
        dut.clock(&Inputs { upd_ready: true, rto_ready: true, ..Inputs::default() });
    }
    assert_eq!(got, (0..p.fifo_depth()).collect::<Vec<_>>());
}

#[test]
fn block_interface_matches_the_typed_one() {
    let c = cfg("small");
    let p = PathTelemetryParams::from_config(&c).unwrap();
    let mut a = ready_dut(p);
    let mut b = ready_dut(p);
    let ports = b.ports().to_vec();
    let mut rng = Rng::new(9);
    let mut outs = zero_values(&ports);
    for cycle in 0..2000u32 {
        let ev = random_event(&mut rng, &p, 4, 4, 1000 + cycle);
        let inp = Inputs {
            rst: false,
            ts_now: cycle / 3,
            evt_valid: rng.chance(70),
            evt: ev,
            upd_ready: rng.chance(70),
            rto_ready: rng.chance(70),
            rd_valid: rng.chance(50),
            rd_conn: rng.below(p.conns as u64) as u32,
            rd_resp_ready: rng.chance(70),
        };
        let mut bits = zero_values(&ports);
        let vals: [(usize, u64); 20] = [
            (port::TS_NOW, inp.ts_now as u64),
            (port::S_EVT_VALID, inp.evt_valid as u64),
            (port::S_EVT_KIND, ev.kind as u64),
            (port::S_EVT_CONN, ev.conn as u64),
            (port::S_EVT_PATH, ev.path as u64),
            (port::S_EVT_NOW, ev.now as u64),
            (port::S_EVT_CUM_ACKED, ev.cum_acked as u64),
            (port::S_EVT_ACKED_PKTS, ev.acked_pkts as u64),
            (port::S_EVT_ACKED_BYTES, ev.acked_bytes as u64),
            (port::S_EVT_ECN_CNT, ev.ecn_cnt as u64),
            (port::S_EVT_RTT_VALID, ev.rtt_valid as u64),
            (port::S_EVT_RTT, ev.rtt as u64),
            (port::S_EVT_ACKED_SEQ, ev.acked_seq as u64),
            (port::S_EVT_SPORT, ev.sport as u64),
            (port::S_EVT_PLANE, ev.plane as u64),
            (port::M_UPD_READY, inp.upd_ready as u64),
            (port::M_RTO_READY, inp.rto_ready as u64),
            (port::S_RD_VALID, inp.rd_valid as u64),
            (port::S_RD_CONN, inp.rd_conn as u64),
            (port::M_RD_READY, inp.rd_resp_ready as u64),
        ];
        for (i, v) in vals {
            bits[i] = Bits::from_u64(ports[i].width, v);
        }
        assert_eq!(b.decode(&bits), inp);
        b.eval(&bits, &mut outs);
        let o = a.outputs();
        assert_eq!(outs[port::S_EVT_READY].bit(0), o.evt_ready);
        assert_eq!(outs[port::M_UPD_VALID].bit(0), o.upd.is_some());
        assert_eq!(outs[port::M_UPD_WEIGHT].as_u64(), o.upd.map_or(0, |u| u.weight as u64));
        assert_eq!(outs[port::M_RTO_SPORT].as_u64(), o.rto.map_or(0, |r| r.sport as u64));
        assert_eq!(outs[port::M_RD_VALID].bit(0), o.rd.is_some());
        if let Some(r) = &o.rd {
            for (i, v) in r.paths.iter().enumerate() {
                let i = i as u32;
                let cwnd: u64 = (0..20).map(|j| (outs[port::M_RD_CWND].bit(20 * i + j) as u64) << j).sum();
                assert_eq!(cwnd, v.cwnd as u64);
            }
        }
        a.clock(&inp);
        b.tick(&bits);
    }
}

#[test]
fn refuses_configs_it_cannot_build() {
    let mut c = cfg("small");
    c.transport.paths_per_conn = 64;
    assert_eq!(PathTelemetryParams::from_config(&c).unwrap_err().field, "transport.paths_per_conn");
    let mut c = cfg("small");
    c.hardware.table_read_latency = 3;
    assert_eq!(PathTelemetryParams::from_config(&c).unwrap_err().field, "hardware.table_read_latency");
    let mut c = cfg("small");
    c.transport.connections = 1;
    assert_eq!(PathTelemetryParams::from_config(&c).unwrap_err().field, "transport.connections");
    let mut c = cfg("small");
    c.timers.dead_after_failures = 16;
    let e = PathTelemetryParams::from_config(&c).unwrap_err();
    assert_eq!(e.field, "timers.dead_after_failures");
    assert!(e.to_string().contains("4-bit"), "{e}");
}

#[test]
fn the_reference_steps_the_same_re_entropy_lfsr() {
    use mrnic_reference::nic as rn;
    assert_eq!((rn::LFSR_SEED, rn::LFSR_TAPS), (LFSR_SEED, LFSR_TAPS));
    let (mut a, mut b) = (LFSR_SEED, rn::LFSR_SEED);
    for _ in 0..70_000 {
        a = lfsr_step(a);
        b = rn::lfsr_step(b);
        assert_eq!(a, b);
    }
}
