//! `path_telemetry` (small): the cycle model and the generated RTL in
//! lockstep over random events and reads with idle cycles, backpressure on
//! all three outputs and the RTO scanner firing (`ts_now` runs), a proptest
//! over seeds and rates, and the directed cases: back-to-back updates of one
//! entry, and every path of a connection driven DEAD.

mod common;

use common::{assert_covered, cycles, lockstep_idle, proptest_sessions, run, session};
use mrnic_model::path_telemetry::{kind, PathTelemetry, PathTelemetryParams, DEAD};
use mrnic_proto::Config;
use mrnic_verif::blocks::path_telemetry as blk;
use mrnic_verif::{skip_without_verilator, Traffic};

const BLOCK: &str = "path_telemetry";

#[test]
fn small_random_events_idle_and_backpressure() {
    let Some(cov) = session("pt_small_random", BLOCK, "small", 0x7e1e_0001, cycles(60_000), |t| t) else { return };
    // Reaching DEAD on every path of one connection takes a directed run
    // (below); random traffic re-opens paths long before.
    assert_covered(&cov, &["all paths of a connection DEAD", blk::IMPOSSIBLE]);
    assert_eq!(cov.count(blk::IMPOSSIBLE), 0);
}

#[test]
fn small_proptest_seeds_and_rates() {
    proptest_sessions(BLOCK, "small");
}

fn params() -> PathTelemetryParams {
    PathTelemetryParams::from_config(&Config::builtin("small").unwrap()).unwrap()
}

#[test]
fn small_back_to_back_updates_of_one_entry() {
    // Every event on entry (0, 0), one per cycle, outputs always ready:
    // each execute reads the entry the previous cycle's wrote (forwarding).
    let p = params();
    let clock = std::rc::Rc::new(std::cell::Cell::new(5000u32));
    let c = clock.clone();
    let Some(cov) = session("pt_small_b2b", BLOCK, "small", 0xb2b, cycles(20_000), move |t: Traffic| {
        t.idle(0)
            .backpressure(0)
            .input_u64("ts_now", move |_, _| {
                c.set(c.get().wrapping_add(2));
                c.get() as u64
            })
            .source("s_evt_", move |rng, t| {
                blk::random_event(&p, rng, t, clock.get());
                t.set_u64("conn", 0).set_u64("path", 0);
            })
    }) else {
        return;
    };
    let b2b = cov.count("event: same entry as the previous cycle's");
    println!("{cov}");
    assert!(b2b > cycles(20_000) / 2, "only {b2b} back-to-back events");
}

#[test]
fn small_every_path_of_a_connection_dies() {
    if skip_without_verilator() {
        return;
    }
    let p = params();
    let (conn, paths) = (3u64, p.paths as u64);
    let mut t = blk::traffic(&p, 0xdead).idle(10).backpressure(30).record("m_rd_").source("s_evt_", |_, t| {
        t.skip();
    });
    let t = {
        let mut now = 2000u64;
        let mut ev = |t: &mut Traffic, k: u8, path: u64| {
            now += 1;
            t.push("s_evt_", |x| {
                x.set_u64("kind", k as u64).set_u64("conn", conn).set_u64("path", path).set_u64("now", now);
                x.set_u64("sport", 0xc000 + path).set_u64("cum_acked", 100);
            });
        };
        for path in 0..paths {
            ev(&mut t, kind::OPEN, path);
            ev(&mut t, kind::SEND, path);
        }
        // GOOD -> SUSPECT after 3 timeouts, SUSPECT -> DEAD after 4 more.
        for _ in 0..10 {
            for path in 0..paths {
                ev(&mut t, kind::TIMEOUT, path);
            }
        }
        t
    };
    // The read comes later than every event (reads have no priority).
    let mut t = t.source("s_rd_", move |rng, x| {
        if rng.percent(2) {
            x.set_u64("conn", conn);
        } else {
            x.skip();
        }
    });
    let mut ls = lockstep_idle(Box::new(move || Box::new(PathTelemetry::new(p))), "small", "pt_small_dead", true);
    run("path_telemetry all dead", &mut ls, &mut t, 3_000);
    let cov = t.coverage();
    println!("{cov}");
    assert!(cov.count("all paths of a connection DEAD") >= 1, "{cov}");
    let last = t.received("m_rd_").last().expect("a read answered").clone();
    // Fields: conn, state, inflight, cwnd, weight.
    assert_eq!(last[0].as_u64(), conn);
    let states = last[1].as_u64();
    for path in 0..paths {
        assert_eq!(states >> (2 * path) & 3, DEAD as u64, "path {path} (states {states:#x})");
    }
}

#[test]
fn default_random_events() {
    // The sweep of 65,536 entries takes the first 65,536 cycles.
    let Some(cov) = session("pt_default_random", BLOCK, "default", 0x7e1e_1001, 160_000, |t| t) else { return };
    // As on small: every path of a connection dead takes a directed run.
    assert_covered(&cov, &["all paths of a connection DEAD", blk::IMPOSSIBLE]);
    assert_eq!(cov.count(blk::IMPOSSIBLE), 0);
}
