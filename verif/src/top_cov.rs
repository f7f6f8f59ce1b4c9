//! Functional coverage of the whole top (`mrnic_core`), counted while a
//! [`crate::nic::NicRig`] runs it: what left and entered it (every opcode,
//! SACKs with a full bitmap, every NACK code, PROBEs, retransmissions),
//! every completion's opcode and status, backpressure on each output, and,
//! from the model's netlist simulation, the events inside it that no port
//! shows (timeouts, each path state a path moves to). While a lockstep run
//! has no mismatch the RTL did the same, so the bins count for both.

use mrnic_model::block::Bits;
use mrnic_model::cqe_merge::opcode;
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::status;
use mrnic_proto::packet::decode_frame;
use mrnic_proto::{Header, NackCode, Placement};

use crate::coverage::Coverage;

/// The bins, resolved once.
pub(crate) struct TopCov {
    tx_data: [usize; 4],
    tx_retx: usize,
    tx_sack: usize,
    tx_sack_full: usize,
    tx_nack: [usize; 4],
    tx_probe: usize,
    rx_data: usize,
    rx_sack: usize,
    rx_nack: [usize; 4],
    rx_probe: usize,
    rx_bad: usize,
    cqe: Vec<(u8, bool, usize)>,
    held: Vec<(usize, usize, usize)>,
    rto: usize,
    states: [usize; 4],
}

const OPS: [&str; 4] = ["WRITE", "WRITE_IMM", "SEND", "SEND_IMM"];
const STATES: [&str; 4] = ["GOOD", "SKIP", "SUSPECT", "DEAD"];

fn nack_name(c: NackCode) -> &'static str {
    match c {
        NackCode::Rnr => "RNR",
        NackCode::Access => "ACCESS",
        NackCode::NoConn => "NO_CONN",
        NackCode::BadHdr => "BAD_HDR",
    }
}

impl TopCov {
    /// Declares every bin in `cov`; `held` names the outputs whose
    /// backpressure counts, as (valid, ready, name) port indices.
    pub(crate) fn declare(cov: &mut Coverage, held: &[(usize, usize, &str)]) -> TopCov {
        let per_code =
            |cov: &mut Coverage, dir: &str| NackCode::ALL.map(|c| cov.bin(format!("{dir} NACK {}", nack_name(c))));
        let mut cqe = Vec::new();
        for (op, name) in [
            (opcode::WRITE, "WRITE"),
            (opcode::SEND, "SEND"),
            (opcode::RECV, "RECV"),
            (opcode::RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM"),
        ] {
            for ok in [true, false] {
                // A receive fails only with the connection; so does a
                // request, which a lossless run never sees.
                let what = if ok { "success" } else { "error" };
                cqe.push((op, ok, cov.bin(format!("completion {name}: {what}"))));
            }
        }
        TopCov {
            tx_data: OPS.map(|o| cov.bin(format!("tx DATA {o}"))),
            tx_retx: cov.bin("tx DATA retransmission"),
            tx_sack: cov.bin("tx SACK"),
            tx_sack_full: cov.bin("tx SACK, bitmap full"),
            tx_nack: per_code(cov, "tx"),
            tx_probe: cov.bin("tx PROBE"),
            rx_data: cov.bin("rx DATA"),
            rx_sack: cov.bin("rx SACK"),
            rx_nack: per_code(cov, "rx"),
            rx_probe: cov.bin("rx PROBE"),
            rx_bad: cov.bin("rx frame that does not decode"),
            cqe,
            held: held.iter().map(|&(v, r, n)| (v, r, cov.bin(format!("{n}: held by backpressure")))).collect(),
            rto: cov.bin("path timeout (RTO)"),
            states: STATES.map(|s| cov.bin(format!("path state -> {s}"))),
        }
    }

    /// A frame the top sent.
    pub(crate) fn frame_out(&self, cov: &mut Coverage, bytes: &[u8]) {
        match decode_frame(bytes).map(|d| d.header) {
            Ok(Header::Data(h)) => {
                let send = matches!(h.place, Placement::Send { .. });
                cov.hit(self.tx_data[2 * send as usize + h.imm.is_some() as usize]);
                if h.flags.retx {
                    cov.hit(self.tx_retx);
                }
            }
            Ok(Header::Sack(h)) => {
                cov.hit(self.tx_sack);
                if h.bitmap.0.iter().all(|w| *w == u64::MAX) {
                    cov.hit(self.tx_sack_full);
                }
            }
            Ok(Header::Nack(h)) => cov.hit(self.tx_nack[h.code as usize - 1]),
            Ok(Header::Probe(_)) => cov.hit(self.tx_probe),
            // The lockstep compares every byte; a frame of ours that does
            // not decode is the vector checks' to report.
            Err(_) => {}
        }
    }

    /// A frame queued to enter the top.
    pub(crate) fn frame_in(&self, cov: &mut Coverage, bytes: &[u8]) {
        let bin = match decode_frame(bytes).map(|d| d.header) {
            Ok(Header::Data(_)) => self.rx_data,
            Ok(Header::Sack(_)) => self.rx_sack,
            Ok(Header::Nack(h)) => self.rx_nack[h.code as usize - 1],
            Ok(Header::Probe(_)) => self.rx_probe,
            Err(_) => self.rx_bad,
        };
        cov.hit(bin);
    }

    /// A completion the top gave.
    pub(crate) fn completion(&self, cov: &mut Coverage, op: u8, st: u8) {
        let ok = st == status::SUCCESS;
        if let Some(&(_, _, b)) = self.cqe.iter().find(|(o, k, _)| *o == op && *k == ok) {
            cov.hit(b);
        }
    }

    /// Every cycle: the outputs held, and the model's timeouts and path
    /// state updates (`probe` reads an instance's port).
    pub(crate) fn cycle<'a>(&self, cov: &mut Coverage, v: &[Bits], probe: impl Fn(&str) -> Option<&'a Bits>) {
        for &(valid, ready, b) in &self.held {
            if v[valid].bit(0) && !v[ready].bit(0) {
                cov.hit(b);
            }
        }
        let on = |n: &str| probe(n).is_some_and(|b| b.bit(0));
        if on("m_rto_valid") && on("m_rto_ready") {
            cov.hit(self.rto);
            if let Some(s) = probe("m_rto_state") {
                cov.hit(self.states[(s.as_u64() & 3) as usize]);
            }
        }
        if on("m_upd_valid") && on("m_upd_ready") {
            if let Some(s) = probe("m_upd_state") {
                cov.hit(self.states[(s.as_u64() & 3) as usize]);
            }
        }
    }
}

// The path states the bins name are path_telemetry's.
const _: () = assert!(tel::GOOD == 0 && tel::SKIP == 1 && tel::SUSPECT == 2 && tel::DEAD == 3);
