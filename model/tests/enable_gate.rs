//! `enable_gate` through its ports, against a scoreboard of its rules: the
//! enable toggled at random (in the middle of frames and of offered
//! requests too), random MAC frames and idles, random backpressure from
//! rx_parser and tx_engine. A frame is passed or discarded whole by the
//! enable when its first beat is first offered; passed frames arrive
//! unchanged and in order; each discarded one is counted once and taken at
//! the MAC's pace; work requests are held, never lost or doubled; no valid
//! is withdrawn before its handshake.

use std::collections::VecDeque;

use mrnic_model::block::{zero_values, Block, PortMap};
use mrnic_model::enable_gate::*;
use mrnic_proto::Config;
use mrnic_reference::rng::Rng;

/// One MAC beat: the frame's number and the beat's in `tdata`.
fn beat_data(frame: u64, k: u64) -> u64 {
    frame << 8 | k
}

#[test]
fn frames_pass_or_go_whole_requests_wait_and_discards_are_counted_once() {
    for (name, seed) in [("small", 1u64), ("default", 2), ("small", 3)] {
        let cfg = Config::builtin(name).unwrap();
        let mut b = EnableGate::new(EnableGateParams::from_config(&cfg).unwrap());
        let ports = b.ports().to_vec();
        let pm = PortMap { ports: &ports };
        let mut rng = Rng::new(seed);
        let mut v = zero_values(&ports);
        pm.set(&mut v, "rst", 1);
        let mut o = zero_values(&ports);
        b.eval(&v, &mut o);
        b.tick(&v);

        // The MAC: frames of 1..=5 beats; the frame under way and its beat.
        let (mut frame, mut beat, mut len) = (0u64, 0u64, 1 + rng.below(5));
        let mut offering = false;
        // Frames as the rules decide them (frame number, passed) and the
        // beats expected on m_axis.
        let mut decided: Option<bool> = None;
        let mut expect: VecDeque<u64> = VecDeque::new();
        let (mut discarded, mut counted, mut passed_beats) = (0u64, 0u64, 0u64);
        // Work requests: ids offered in order, expected out in order.
        let (mut next_wr, mut wr_offer) = (0u64, None::<u64>);
        let mut wr_expect = 0u64;
        let mut enable = false;
        let mut last_m: Option<(u64, bool)> = None;
        let mut last_w: Option<(u64, bool)> = None;
        let mut discard_waits = 0u64;
        for cycle in 0..30_000u64 {
            if rng.below(100) < 3 {
                enable = !enable;
            }
            let mut v = zero_values(&ports);
            pm.set(&mut v, "cfg_enable", enable as u64);
            if !offering && rng.below(100) < 60 {
                offering = true;
            }
            if offering {
                pm.set(&mut v, "s_axis_tvalid", 1);
                pm.set(&mut v, "s_axis_tdata", beat_data(frame, beat));
                pm.set(&mut v, "s_axis_tlast", (beat + 1 == len) as u64);
                pm.set(&mut v, "s_axis_tkeep", 1);
                if beat == 0 && decided.is_none() {
                    decided = Some(enable);
                }
            }
            if wr_offer.is_none() && rng.below(100) < 30 {
                wr_offer = Some(next_wr);
                next_wr += 1;
            }
            if let Some(id) = wr_offer {
                pm.set(&mut v, "s_wr_valid", 1);
                pm.set(&mut v, "s_wr_wr_id", id);
            }
            pm.set(&mut v, "m_axis_tready", (rng.below(100) < 60) as u64);
            pm.set(&mut v, "m_wr_ready", (rng.below(100) < 50) as u64);
            let mut o = zero_values(&ports);
            b.eval(&v, &mut o);

            counted += pm.get(&o, "stat_rx_disabled");
            // m_axis: a valid is not withdrawn and its beat does not change.
            let m_valid = pm.get(&o, "m_axis_tvalid") == 1;
            let m_data = pm.get(&o, "m_axis_tdata");
            if let Some((d, true)) = last_m {
                assert!(m_valid && m_data == d, "{name} cycle {cycle}: m_axis beat withdrawn or changed");
            }
            if offering {
                let pass = decided.expect("decided at the first beat");
                let ready = pm.get(&o, "s_axis_tready") == 1;
                assert_eq!(m_valid, pass, "{name} cycle {cycle}: frame {frame} passed {pass}");
                if !pass {
                    // The MAC never waits behind a disabled core.
                    discard_waits += u64::from(!ready);
                }
                if ready {
                    if pass {
                        expect.push_back(beat_data(frame, beat));
                    }
                    beat += 1;
                    if beat == len {
                        discarded += u64::from(!pass);
                        frame += 1;
                        beat = 0;
                        len = 1 + rng.below(5);
                        decided = None;
                        offering = false;
                    }
                }
            } else {
                assert!(!m_valid, "{name} cycle {cycle}: a beat out of nothing");
            }

            let m_taken = m_valid && pm.get(&v, "m_axis_tready") == 1;
            last_m = m_valid.then_some((m_data, !m_taken));
            if m_taken {
                assert_eq!(Some(m_data), expect.pop_front(), "{name} cycle {cycle}: beat out of order");
                passed_beats += 1;
            }
            // Work requests.
            let w_valid = pm.get(&o, "m_wr_valid") == 1;
            let w_id = pm.get(&o, "m_wr_wr_id");
            if let Some((id, true)) = last_w {
                assert!(w_valid && w_id == id, "{name} cycle {cycle}: request withdrawn or changed");
            }
            let w_taken = w_valid && pm.get(&v, "m_wr_ready") == 1;
            last_w = w_valid.then_some((w_id, !w_taken));
            let s_ready = pm.get(&o, "s_wr_ready") == 1;
            assert_eq!(s_ready && wr_offer.is_some(), w_taken, "{name} cycle {cycle}: taken on both sides at once");
            if w_taken {
                assert_eq!(w_id, wr_expect, "{name} cycle {cycle}: requests in order, none lost");
                wr_expect += 1;
                wr_offer = None;
            }
            if !enable && !w_valid {
                assert!(!s_ready, "{name} cycle {cycle}: a request taken while disabled");
            }
            b.tick(&v);
        }
        // The last discard's pulse comes the cycle after its last beat.
        let mut v = zero_values(&ports);
        pm.set(&mut v, "cfg_enable", enable as u64);
        let mut o = zero_values(&ports);
        b.eval(&v, &mut o);
        counted += pm.get(&o, "stat_rx_disabled");
        eprintln!("{name}: {frame} frames, {discarded} discarded, {passed_beats} beats passed, {wr_expect} requests");
        assert_eq!(counted, discarded, "{name}: one count per discarded frame");
        assert_eq!(discard_waits, 0, "{name}: a discarded beat waited");
        assert!(discarded > 200 && frame - discarded > 200 && wr_expect > 1000, "{name}: traffic too thin");
    }
}

/// A core leaves reset disabled (CONTROL.enable resets to 0): the first
/// frame is discarded and a request waits until the enable is written.
#[test]
fn a_core_out_of_reset_discards_until_enabled() {
    let cfg = Config::builtin("small").unwrap();
    let mut b = EnableGate::new(EnableGateParams::from_config(&cfg).unwrap());
    let ports = b.ports().to_vec();
    let pm = PortMap { ports: &ports };
    let mut v = zero_values(&ports);
    pm.set(&mut v, "rst", 1);
    let mut o = zero_values(&ports);
    b.eval(&v, &mut o);
    b.tick(&v);
    let mut v = zero_values(&ports);
    for n in ["s_axis_tvalid", "s_axis_tlast", "s_wr_valid", "m_axis_tready", "m_wr_ready"] {
        pm.set(&mut v, n, 1);
    }
    b.eval(&v, &mut o);
    assert_eq!(pm.get(&o, "m_axis_tvalid"), 0);
    assert_eq!(pm.get(&o, "s_axis_tready"), 1, "discarded at the MAC's pace");
    assert_eq!(pm.get(&o, "s_wr_ready"), 0, "held");
    b.tick(&v);
    pm.set(&mut v, "cfg_enable", 1);
    b.eval(&v, &mut o);
    assert_eq!(pm.get(&o, "stat_rx_disabled"), 1, "the discarded frame counted");
    assert_eq!(pm.get(&o, "m_axis_tvalid"), 1, "the next frame passes");
    assert_eq!(pm.get(&o, "m_wr_valid"), 1);
    assert_eq!(pm.get(&o, "s_wr_ready"), 1);
}
