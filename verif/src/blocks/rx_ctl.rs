//! `rx_ctl` traffic and coverage: the receive controller alone, the parts
//! around it played by random answers, as in the Icarus replay of
//! `hdl/tests/rx_ctl.rs` but under Verilator, with the harness's
//! valid/ready checks on every channel and its per-channel coverage.
//!
//! Headers of every opcode (NO_CONN NACKs, unknown opcodes, streams and
//! paths the connection lacks, payload or none) and opens of up to 9
//! paths; the parts' answers (lookups that pass or fail, conn_table's
//! NACK, msg_check, mr_check and recv_match verdicts of every kind,
//! sack_gen's pulses) arrive at random, whatever the controller is doing,
//! so answers it does not wait for are offered too; the pass-through
//! channels (`s_walk`, `s_gsack`, `s_gnack`, `s_found`) at the rates the
//! parts would send. Random backpressure on every output, resets mid-packet.

use mrnic_model::block::Bits;
use mrnic_model::rx_ctl::{self as rc, RxCtlParams, NACK_BAD_HDR, NACK_NO_CONN, OPC_NACK};
use mrnic_proto::layouts::nack;

use super::{at_rate, idx};
use crate::coverage::Coverage;
use crate::stimulus::{Rng, Traffic, Txn};

/// Opcodes of the headers, weighted: data (WRITE 0, WRITE_IMM 1, SEND 2,
/// SEND_IMM 3), SACK 8, NACK 9, PROBE 10 and an unknown one (6).
const OPCODES: [u64; 12] = [0, 0, 1, 2, 2, 3, 8, 9, 9, 10, 10, 6];

/// The parts' answers, taken the cycle they arrive.
const ANSWERS: [&str; 6] = ["s_lkr_", "s_tnack_", "s_chkr_", "s_mrr_", "s_match_", "s_gnew_"];

pub fn traffic(p: &RxCtlParams, seed: u64) -> Traffic {
    let ports = rc::ports(p);
    let raw_bytes = (ports[idx(&ports, "s_hdr_raw")].width / 8) as usize;
    Traffic::new(&ports, seed)
        .idle(0)
        .backpressure(25)
        .random_resets(1)
        .source("s_hdr_", at_rate(30, move |rng, t| header(rng, t, raw_bytes)))
        .source(
            "s_open_",
            at_rate(1, |rng, t| {
                t.set_u64("paths", rng.below(10));
            }),
        )
        .source(
            "s_walk_",
            at_rate(6, |_, t| {
                t.set_u64("op", 1);
            }),
        )
        .source("s_gsack_", at_rate(4, |_, _| {}))
        .source("s_gnack_", at_rate(2, |_, _| {}))
        .source("s_found_", at_rate(1, |_, _| {}))
        // The parts' answers.
        .source(
            "s_lkr_",
            at_rate(30, |rng, t| {
                t.set_u64("ok", u64::from(rng.below(5) != 0)).set_u64("paths", rng.below(6));
            }),
        )
        .source(
            "s_tnack_",
            at_rate(10, |rng, t| {
                t.set_u64("code", [NACK_NO_CONN, NACK_BAD_HDR, NACK_NO_CONN][rng.below(3) as usize]);
            }),
        )
        .source(
            "s_chkr_",
            at_rate(30, |rng, t| {
                t.set_u64("status", if rng.below(4) == 0 { 1 + rng.below(3) } else { 0 });
            }),
        )
        .source(
            "s_mrr_",
            at_rate(30, |rng, t| {
                t.set_u64("status", if rng.below(4) == 0 { 1 + rng.below(7) } else { 0 });
            }),
        )
        .source(
            "s_match_",
            at_rate(30, |rng, t| {
                t.set_u64("code", if rng.below(3) == 0 { 1 + rng.below(7) } else { 0 });
            }),
        )
        .source("s_gnew_", at_rate(15, |_, _| {}))
        // sack_gen's and conn_table's counter taps, and cpl_engine's state.
        .input_u64("tap_stale_gen", |rng, _| u64::from(rng.below(40) == 0))
        .input_u64("tap_psn_window", |rng, _| u64::from(rng.below(40) == 0))
        .input_u64("tap_duplicate", |rng, _| u64::from(rng.below(40) == 0))
        .input_u64("tap_ack_no_conn_table", |rng, _| u64::from(rng.below(40) == 0))
        .input_u64("tap_ack_no_conn_search", |rng, _| u64::from(rng.below(40) == 0))
        .input_u64("cpl_idle", |rng, _| u64::from(rng.below(4) != 0))
        .input_u64("tap_st_valid", |rng, _| rng.below(2))
        .input_u64("tap_st_ready", |rng, _| rng.below(2))
        .input_u64("tap_st_clear", |rng, _| rng.below(2))
        .input_u64("tap_st_conn", |rng, _| rng.below(4))
        .input_u64("tap_st_stream", |rng, _| rng.below(4))
        .monitor(move |c| Monitor::declare(&ports, c), Monitor::observe)
}

/// A header: its opcode, payload length, stream and path shaped so that
/// every step and every verdict is reached; the rest random.
fn header(rng: &mut Rng, t: &mut Txn, raw_bytes: usize) {
    let op = OPCODES[rng.below(OPCODES.len() as u64) as usize];
    t.set_u64("opcode", op)
        .set_u64("payload_len", [0, 0, 1, 64, 1024, rng.below(1 << 16)][rng.below(6) as usize])
        .set_u64("stream_id", if rng.below(10) == 0 { rng.below(256) } else { rng.below(4) })
        .set_u64("path_id", if rng.below(10) == 0 { rng.below(256) } else { rng.below(4) });
    if op == OPC_NACK && rng.below(3) == 0 {
        // A NO_CONN NACK: the code byte of the raw header says so.
        let mut raw = rng.bits(raw_bytes as u32 * 8);
        let (hi, lo) = nack::CODE.vector_range(raw_bytes);
        for b in lo..=hi {
            let bit = (NACK_NO_CONN >> (b - lo)) & 1;
            let w = &mut raw.0[b / 64];
            *w = (*w & !(1 << (b % 64))) | (bit << (b % 64));
        }
        t.set("raw", raw);
    }
}

/// What the controller did: the kinds of beats it sent sack_gen, the
/// NACKs it raised itself, the NACKs it passed on.
pub struct Monitor {
    pkt: [usize; 3],
    cnack: [usize; 3],
    pay: [usize; 3],
    stats: [usize; 3],
    tnack: [usize; 3],
    beat_bins: [usize; 4],
    cnack_bins: [usize; 2],
    pay_bins: [usize; 2],
    stat_bins: [usize; 3],
    tnack_bins: [usize; 2],
}

impl Monitor {
    fn declare(ports: &[mrnic_model::block::PortDef], c: &mut Coverage) -> Monitor {
        let i = |n: &str| idx(ports, n);
        // The controller takes every answer the cycle it comes (its ready
        // is high out of reset): the parts' answer ports do not hold.
        for ch in ANSWERS {
            c.retire(&format!("{ch}: offered while the block is not ready"));
        }
        Monitor {
            pkt: ["m_pkt_valid", "m_pkt_ready", "m_pkt_op"].map(i),
            cnack: ["m_cnack_valid", "m_cnack_ready", "m_cnack_direct"].map(i),
            pay: ["m_pay_valid", "m_pay_ready", "m_pay_drop"].map(i),
            stats: ["stat_rx_bad_hdr", "stat_rx_access", "stat_ack_no_conn"].map(i),
            tnack: ["s_tnack_valid", "s_tnack_ready", "s_tnack_code"].map(i),
            beat_bins: [
                c.bin("to sack_gen: a data beat"),
                c.bin("to sack_gen: a PROBE walk beat"),
                c.bin("to sack_gen: an OPEN beat"),
                c.bin("to sack_gen: a FLUSH"),
            ],
            cnack_bins: [c.bin("NACK out: for a connection"), c.bin("NACK out: direct (NO_CONN)")],
            pay_bins: [c.bin("payload: kept"), c.bin("payload: dropped")],
            stat_bins: [
                c.bin("own NACK: BAD_HDR (stat_rx_bad_hdr)"),
                c.bin("own NACK: ACCESS (stat_rx_access)"),
                c.bin("acknowledgement for no connection (stat_ack_no_conn)"),
            ],
            tnack_bins: [c.bin("conn_table NACK taken: NO_CONN"), c.bin("conn_table NACK taken: BAD_HDR")],
        }
    }

    fn observe(&mut self, v: &[Bits], in_reset: bool, c: &mut Coverage) {
        if in_reset {
            return;
        }
        let hs = |ch: &[usize; 3]| v[ch[0]].bit(0) && v[ch[1]].bit(0);
        if hs(&self.pkt) {
            // m_pkt_op: 0 data, 1 walk, 2 open, 3 flush (sack_gen's OP_*).
            c.hit(self.beat_bins[(v[self.pkt[2]].as_u64() & 3) as usize]);
        }
        if hs(&self.cnack) {
            c.hit(self.cnack_bins[usize::from(v[self.cnack[2]].bit(0))]);
        }
        if hs(&self.pay) {
            c.hit(self.pay_bins[usize::from(v[self.pay[2]].bit(0))]);
        }
        for k in 0..3 {
            if v[self.stats[k]].bit(0) {
                c.hit(self.stat_bins[k]);
            }
        }
        if hs(&self.tnack) {
            match v[self.tnack[2]].as_u64() {
                NACK_NO_CONN => c.hit(self.tnack_bins[0]),
                NACK_BAD_HDR => c.hit(self.tnack_bins[1]),
                _ => {}
            }
        }
    }
}
