//! `ts_counter`: one unit per `cycles_per_ts` cycles in both shipped
//! configs, never faster than real time, held by `ts_hold`, restarted by
//! `rst`; driven through its ports.

use mrnic_model::block::{port_index, zero_values, Bits, Block};
use mrnic_model::ts_counter::*;
use mrnic_proto::Config;

fn cycle(b: &mut TsCounter, rst: bool, hold: bool) -> u64 {
    let ports = b.ports().to_vec();
    let mut v = zero_values(&ports);
    v[port_index(&ports, "rst").unwrap()] = Bits::from_u64(1, rst as u64);
    v[port_index(&ports, "ts_hold").unwrap()] = Bits::from_u64(1, hold as u64);
    let mut out = v.clone();
    b.eval(&v, &mut out);
    b.tick(&v);
    out[port_index(&ports, "ts_now").unwrap()].as_u64()
}

#[test]
fn counts_one_unit_per_prescale_and_never_runs_ahead_of_real_time() {
    for name in ["small", "default"] {
        let cfg = Config::builtin(name).unwrap();
        let p = TsCounterParams::from_config(&cfg).unwrap();
        let n = p.cycles_per_ts;
        let mut b = TsCounter::new(p);
        cycle(&mut b, true, false);
        for c in 0..20 * n {
            let ts = cycle(&mut b, false, false);
            assert_eq!(ts, c / n, "{name}: cycle {c}");
            // Real time at this cycle, in ns, is at least the counter's.
            let ns = c * 1000 / cfg.hardware.clock_mhz as u64;
            assert!(ts * cfg.timers.ts_unit_ns as u64 <= ns + 1000 / cfg.hardware.clock_mhz as u64, "{name}");
        }
    }
    assert_eq!(TsCounterParams::from_config(&Config::builtin("small").unwrap()).unwrap().cycles_per_ts, 7);
}

#[test]
fn hold_stops_the_counter_and_its_prescaler_and_reset_restarts_it() {
    let mut b = TsCounter::new(TsCounterParams::new(3).unwrap());
    cycle(&mut b, true, false);
    let seen: Vec<u64> = (0..4).map(|_| cycle(&mut b, false, false)).collect();
    assert_eq!(seen, [0, 0, 0, 1]);
    // Mid-unit (one cycle of the prescale counted): a hold of any length
    // keeps both.
    for _ in 0..50 {
        assert_eq!(cycle(&mut b, false, true), 1);
    }
    let seen: Vec<u64> = (0..3).map(|_| cycle(&mut b, false, false)).collect();
    assert_eq!(seen, [1, 1, 2]);
    cycle(&mut b, true, false);
    assert_eq!(cycle(&mut b, false, false), 0);
}

#[test]
fn a_prescale_the_block_cannot_hold_is_refused() {
    assert!(TsCounterParams::new(0).is_err());
    assert!(TsCounterParams::new(MAX_CYCLES_PER_TS + 1).is_err());
    assert!(TsCounterParams::new(1).is_ok());
}
