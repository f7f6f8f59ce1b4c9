//! The acknowledgement unit's timer queues and its own steps of
//! `tx_engine` (`mrnic_hdl::tx_engine::timer`, a clocked unit of the
//! engine's generator) against the cycle model, trace-driven: the model
//! `TxEngine` runs real traffic (`tx_rig`) with its `taps.timer` on; each
//! cycle records the queues' pushes and state and the step the unit
//! starts, and the answer `L` cycles later with what the step read and
//! wrote (`tx_rig::TimerRows`); Icarus replays them into the generated
//! unit, every output compared every cycle, for `small` and `default`.
//! `tx_engine_ack.rs` replays the unit on the acknowledgement control's
//! traffic too; this one drives what that traffic does not reach:
//!
//! - the RNR queue filled (more packets RNR-NACKed at once than it
//!   holds), its entries served in order through the memory;
//! - RNR entries gone stale: the slot's wait ended by a BAD_HDR
//!   retransmission, the slot waiting again under a newer tag, the slot
//!   emptied by a failure; and a live entry whose slot is queued already
//!   (BAD_HDR while no port may send);
//! - more window probes armed than the queue holds (the refusal, and the
//!   wake at the next pop).
//!
//! Tail timers, live and stale, come from the acknowledgement control's
//! traffic (`tx_engine_ack.rs`).
//!
//! Inputs the unit must not look at carry junk. A missing tool skips the
//! test with a message, except under CI=true, where it fails.

mod common;
mod tx_rig;

use common::Scratch;
use mrnic_hdl::tx_engine::timer;
use mrnic_hdl::Module;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::{Config, NackCode};
use tx_rig::{burst, replay_configs, tools_check_configs, TimerRows, Traffic};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = timer::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = tx_rig::write_unit(dir, &m, "tx_engine timer queues and steps", "tx_engine_timer");
    (m, rtl)
}

/// `cfg` as the traffic runs it: short timers so back-offs and probes
/// end within a few thousand cycles, a ring of 4 slots and at most 16
/// connections, so the queues (`rnr_depth` = max(connections, paths x
/// 4), one window probe per connection) fill with the packets and
/// connections a short run has.
fn tuned(cfg: &Config) -> Config {
    let mut cfg = tx_rig::short_timers(cfg, 20, 40);
    cfg.hardware.tx_ring_depth = 4;
    cfg.transport.connections = cfg.transport.connections.min(16);
    cfg
}

/// The engine and its peer, and the unit's rows.
struct Rig {
    t: Traffic,
    rows: TimerRows,
    /// rto_min in cycles.
    rto: u64,
}

impl Rig {
    fn new(cfg: &Config, seed: u64) -> Rig {
        let cfg = tuned(cfg);
        let rto = u64::from(tel::Consts::from_config(&cfg).rto_min) * cfg.cycles_per_ts();
        let mut t = Traffic::new(cfg, seed);
        t.e.tx.taps.timer = Some(TimerTap::default());
        let rows = TimerRows::new(t.e.tx.params());
        Rig { t, rows, rto }
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.t.clock();
            let tap = self.t.e.tx.taps.timer.clone().expect("the tap is on");
            self.rows.cycle(&tap);
        }
    }

    fn open(&mut self, conn: u32, npaths: u32) {
        let paths = self.t.e.cfg.transport.paths_per_conn;
        self.t.peer.open(&mut self.t.e, conn, npaths.min(paths), 10 * conn);
    }

    fn nack(&mut self, conn: u32, path: u32, psn: u32, code: NackCode) {
        self.t.e.nacks.push_back(NackIn { conn, path_id: path, code: code as u8, psn });
    }

    /// The outstanding packets of `conn` the quiet peer saw, oldest first
    /// per path.
    fn unanswered(&self, conn: u32) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> =
            self.t.peer.unanswered.iter().filter(|&&(c, _, _)| c == conn).map(|&(_, p, psn)| (p, psn)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn finish(mut self) -> tx_rig::Run {
        eprintln!("{} tx_timer: {} cycles; {}", self.t.e.cfg.name, self.rows.rows.len(), self.rows.bins());
        self.rows.finish(&mut self.t.e.junk)
    }
}

/// Scenario 1: the RNR queue. Connections 1..=6 muted with a few
/// requests each in flight; every outstanding packet RNR-NACKed at once
/// (more than the queue holds: the rest are refused); then packets whose
/// entries go stale in each way, and one live entry on a queued slot.
fn rnr(cfg: &Config, seed: u64) -> tx_rig::Run {
    let mut rig = Rig::new(cfg, seed);
    let streams = rig.t.e.cfg.transport.streams_per_conn.min(4);
    for c in 1..=6 {
        rig.open(c, 4);
    }
    rig.run(300);
    rig.t.peer.mute.extend(1..=6);
    let mut off = 0;
    for c in 1..=6 {
        burst(&mut rig.t.e, c, streams, 4, u64::from(1000 * c), &mut off);
    }
    rig.run(6_000);
    let mut all: Vec<(u32, u32, u32)> =
        (1..=6).flat_map(|c| rig.unanswered(c).into_iter().map(move |(p, s)| (c, p, s))).collect();
    let depth = rig.t.e.tx.params().rnr_depth as usize;
    assert!(all.len() > depth, "{} packets outstanding for an RNR queue of {depth}", all.len());
    all.truncate(depth + 4);
    for &(c, p, psn) in &all {
        rig.nack(c, p, psn, NackCode::Rnr);
    }
    let rto = rig.rto;
    rig.run(2 * rto);

    // Stale by retransmission: an RNR back-off, then BAD_HDR queues the
    // packet, which is resent at once (its wait ends with the resend).
    // Stale by a newer tag: the same, then the resend RNR-NACKed again.
    // Live on a queued slot: BAD_HDR while no port may send.
    // Stale by a failure: NO_CONN fails the connection.
    let u = |rig: &Rig, c: u32| rig.unanswered(c).first().copied().unwrap_or_else(|| panic!("{c} has a packet out"));
    let (p1, s1) = u(&rig, 1);
    let (p2, s2) = u(&rig, 2);
    let (p3, s3) = u(&rig, 3);
    let (p4, s4) = u(&rig, 4);
    rig.nack(1, p1, s1, NackCode::Rnr);
    rig.nack(2, p2, s2, NackCode::Rnr);
    rig.nack(4, p4, s4, NackCode::Rnr);
    rig.run(100);
    rig.nack(1, p1, s1, NackCode::BadHdr);
    rig.nack(2, p2, s2, NackCode::BadHdr);
    rig.nack(4, 0, 0, NackCode::NoConn);
    rig.run(600);
    rig.nack(2, p2, s2, NackCode::Rnr);
    rig.t.e.port_ready = 0;
    rig.nack(3, p3, s3, NackCode::Rnr);
    rig.run(100);
    rig.nack(3, p3, s3, NackCode::BadHdr);
    rig.run(2 * rto);
    rig.t.e.port_ready = u32::MAX;
    rig.run(2_000);
    rig.finish()
}

/// Scenario 2: window probes. With a message table of two messages, the
/// peer naming no stream in its SACKs, a stream blocks after two messages
/// and a probe is armed once its connection is quiet. Every connection
/// arms one (the queue is then full); the peer then answers connection
/// 1's other stream, which moves its completed count (its entry goes
/// stale) and lets it block and arm again: refused for the full queue, so
/// the next pop wakes every stalled connection. The probes fire, each on
/// path 0, and the stale one does nothing.
fn wprobe(cfg: &Config, seed: u64) -> tx_rig::Run {
    let mut cfg = cfg.clone();
    cfg.hardware.msg_table_depth = 2;
    let mut rig = Rig::new(&cfg, seed);
    let conns = rig.t.e.cfg.transport.connections;
    let rto = rig.rto;
    for c in 0..conns {
        rig.open(c, 2);
    }
    rig.run(300);
    let mut off = 0u64;
    let mut post = |rig: &mut Rig, c: u32, s: u32, n: u32, id: u64| {
        for k in 0..n {
            rig.t.e.wrs.push_back(tx_rig::wr(c, s, op::WRITE, id + u64::from(k), off % 0x2_0000, 64));
            off += 128;
        }
    };
    for c in 0..conns {
        post(&mut rig, c, 0, 3, 100 * u64::from(c));
    }
    rig.run(rto / 2);
    rig.t.peer.window = true;
    // Two messages: the second's msn is past the peer's completed count.
    post(&mut rig, 1, 1, 2, 5_000);
    rig.run(3 * rto);
    rig.finish()
}

fn replay_config(cfg: &Config) -> tx_rig::Run {
    const SEED: u64 = 0x71e4;
    tx_rig::scenarios(cfg, &[("rnr", &|c| rnr(c, SEED)), ("wprobe", &|c| wprobe(c, SEED))])
}

/// The model's timer queues and steps and `tx_timer`, cycle by cycle,
/// both configs: every output equal every cycle, the answers `L` cycles
/// after the steps, and the run covered the queues' paths through their
/// memories and every outcome of each step.
#[test]
fn icarus_timer_queues_and_steps_are_the_models() {
    replay_configs(
        "tx-timer",
        timer::NAME,
        write,
        replay_config,
        &[
            "rnr_push_empty",
            "rnr_push_behind",
            "rnr_stored",
            "rnr_pop_stored",
            "rnr_full",
            "rnr_live_retx",
            "rnr_live_queued_already",
            "rnr_stale_slot",
            "rnr_stale_tag",
            "rnr_stale_empty",
            "wp_push",
            "wp_stored",
            "wp_probe_path0",
            "wp_stale",
            "wp_full",
            "wp_refused",
            "unstall_all",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_timer() {
    tools_check_configs("tx-timer", write);
}
