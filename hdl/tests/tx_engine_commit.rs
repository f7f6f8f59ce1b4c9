//! The commit of `tx_engine`'s decided packets (`mrnic_hdl::tx_engine::commit`,
//! a unit of the engine's generator) against the cycle model,
//! trace-driven: the model `TxEngine` runs real traffic, wired as its tests
//! wire it (`tx_rig`), with a peer that SACKs the data frames it sees and
//! the model's `taps.commit` on. Each cycle records the decided packet, the
//! stores the commit read (as the model's commit found them: for new data
//! what the cut reads, for a retransmission its ring slot and request) and
//! what it wrote (ring slot, mirror, stream word, context, issued count,
//! event, frame record with its header, the retry limit's failure);
//! Icarus replays the inputs into the generated unit and compares every
//! output every cycle, for `small` and `default`. The ring slot's fields
//! that have no port (phys, sent, tx_ts, the flags cleared, those a
//! retransmission keeps) are checked against the model's write here.
//!
//! The traffic: several connections, every op, lengths from none to a few
//! MTUs across streams (multi-packet messages; the ACKREQ rules: end of
//! message, a path or the connection window filled, nothing left to cut,
//! the oldest unrequested packet's wait), under loss (retransmissions
//! charged, some resent again), one stream's work queue pointers wrapping
//! and a connection's psns wrapping; a muted connection whose packets are
//! NACKed RNR (resent after the back-off: RESUME), then left muted until
//! a path times out to SUSPECT (its packets resent uncharged); a route
//! black-holed until its path times out and takes a fresh port (resent
//! uncharged, rerouted to the other path); and one connection whose
//! packet is NACKed BAD_HDR until the retry limit fails it. Inputs the
//! unit must not look at carry junk: every level outside a commit, the
//! cut's stores in a retransmission's cycle and the slot's in new data's,
//! everything but the slot in the retry limit's cycle, the tail deadline
//! when the timer is not armed (the unit carries it through while it
//! stays unarmed).
//!
//! Not reached by this traffic (each is logic of the unit, not replayed):
//! a commit to a connection that failed while its decision waited for the
//! path answer (`s_ctx_failed`; the model's walk holds that answer, and
//! failing a connection's own pending decision needs timing this rig does
//! not arrange), and ACKREQ by `sack_every_packets` alone (the peer's
//! answers keep srtt so short that the unrequested packet's wait always
//! comes first); the shared [`cut`](mrnic_hdl::tx_engine::cut) has that
//! rule's boundary in `hdl/tests/tx_engine.rs`.
//!
//! A missing tool skips the test with a message, except under CI=true,
//! where it fails.

mod common;
mod tx_rig;

use std::collections::HashMap;

use common::Scratch;
use mrnic_hdl::tx_engine::{commit, stream_ptr_bits, CutSizes};
use mrnic_hdl::Module;
use mrnic_model::block::{port_index, Bits, PortDef};
use mrnic_model::path_telemetry as tel;
use mrnic_model::tx_engine::*;
use mrnic_proto::layouts::data;
use mrnic_proto::{Config, NackCode};
use tx_rig::{
    be_bits, burst, mask, port_row, replay_configs, tools_check_configs, write_unit, Engine, Peer, Pressure, Run,
};

fn write(dir: &Scratch, p: &TxEngineParams) -> (Module, std::path::PathBuf) {
    let m = commit::build(&TxEngineParams::from_config(&tuned(&p.cfg)).unwrap());
    let rtl = write_unit(dir, &m, "tx_engine commit", "tx_engine_commit");
    (m, rtl)
}

/// The engine, a peer SACKing its data frames, and the commit's ports
/// recorded each cycle.
struct Rig {
    e: Engine,
    defs: Vec<PortDef>,
    rows: Vec<Vec<Bits>>,
    peer: Peer,
    seen: HashMap<&'static str, u32>,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let p = TxEngineParams::from_config(&cfg).unwrap();
        let defs = commit::ports(&p);
        let mut e = Engine::new(cfg, seed);
        e.tx.taps.commit = Some(CommitTap::default());
        let mut r = Rig { e, defs, rows: Vec::new(), peer: Peer::default(), seen: HashMap::new() };
        r.step(true);
        r.e.sweep(&mut r.peer);
        r
    }

    fn step(&mut self, rst: bool) {
        let (inp, ot) = self.e.clock(rst);
        self.peer.beat(&mut self.e, &inp, &ot);
        let rec = self.e.tx.taps.commit.as_ref().expect("the tap is on").commit.clone();
        self.row(rec.as_ref());
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step(false);
        }
    }

    /// Runs until the coverage bin `bin` is hit, at most `cycles`.
    fn run_until(&mut self, cycles: u64, what: &str, bin: &str) {
        for _ in 0..cycles {
            if self.seen.contains_key(bin) {
                return;
            }
            self.step(false);
        }
        panic!("{}: no {what} within {cycles} cycles", self.e.cfg.name);
    }

    /// The in-flight data packets of `conn` the muted peer has not
    /// answered: (path, psn).
    fn unanswered(&self, conn: u32) -> Vec<(u32, u32)> {
        self.peer.unanswered.iter().filter(|&&(c, _, _)| c == conn).map(|&(_, p, psn)| (p, psn)).collect()
    }

    fn nack(&mut self, conn: u32, path: u32, psn: u32, code: NackCode) {
        self.e.nacks.push_back(NackIn { conn, path_id: path, code: code as u8, psn });
    }

    /// The unit's ports this cycle.
    fn row(&mut self, rec: Option<&CommitRec>) {
        let defs = self.defs.clone();
        let ins_all: Vec<&str> =
            defs.iter().filter(|d| d.dir == mrnic_model::block::Dir::In).map(|d| d.name.as_str()).collect();
        let mut vals: Vec<(&str, u64)> = Vec::new();
        let mut wide: Vec<(&str, Bits)> = Vec::new();
        let mut bins: Vec<&'static str> = Vec::new();
        match rec {
            Some(r) => {
                vals.extend([
                    ("s_commit_valid", 1),
                    ("s_commit_retx", u64::from(r.retx.is_some())),
                    ("s_commit_phys", u64::from(r.phys)),
                    ("s_ctx_failed", u64::from(r.failed)),
                ]);
                match r.retx {
                    Some((path, psn)) => {
                        vals.extend([("s_commit_path", u64::from(path)), ("s_commit_psn", u64::from(psn))])
                    }
                    None => vals.extend([
                        ("s_commit_stream", u64::from(r.stream)),
                        ("s_commit_full_after", u64::from(r.full_after)),
                    ]),
                }
                if r.failed {
                    bins.push("failed_conn");
                } else if r.retx.is_some() {
                    self.retx_ports(r, &mut vals, &mut bins);
                } else {
                    self.new_ports(r, &mut vals, &mut bins);
                }
                if r.fail.is_none() && !r.failed {
                    self.written_ports(r, &mut vals, &mut wide);
                }
            }
            None => vals.push(("s_commit_valid", 0)),
        }
        let given: Vec<&str> = vals.iter().map(|(n, _)| *n).filter(|n| n.starts_with('s') || *n == "ts_now").collect();
        let junked: Vec<&str> = ins_all.into_iter().filter(|n| !given.contains(n)).collect();
        let mut v = port_row(&mut self.e.junk, &defs, &junked, vals);
        for (nm, b) in wide {
            let i = port_index(&defs, nm).unwrap_or_else(|| panic!("no port {nm}"));
            v[i] = b;
        }
        self.rows.push(v);
        for b in bins {
            *self.seen.entry(b).or_default() += 1;
        }
    }

    /// New data of a live connection: the stores the cut reads and what
    /// only new data writes (stream word, context, issued count, mirror).
    fn new_ports(&mut self, r: &CommitRec, vals: &mut Vec<(&'static str, u64)>, bins: &mut Vec<&'static str>) {
        let p = self.e.tx.params().clone();
        let qb = stream_ptr_bits(p.wq_depth);
        let cz = CutSizes::of(&p);
        let a = &r.cut_in;
        let o = r.cut.expect("a live connection's packet is cut");
        let w = &r.wr;
        vals.extend([
            ("s_ctx_inflight", a.inflight),
            ("s_ctx_cap", u64::from(a.cap)),
            ("s_ctx_pend_streams", u64::from(a.pend_streams)),
            ("s_ctx_since_ackreq", u64::from(a.since_ackreq)),
            ("s_ctx_unreq_since", u64::from(a.unreq_since)),
            ("s_ctx_tail_valid", u64::from(a.tail_at.is_some())),
            ("s_ctx_rack_rtt", u64::from(a.rack_rtt)),
            ("s_sw_pend", u64::from(a.pend)),
            ("s_sw_tail", u64::from(a.tail)),
            ("s_sw_pend_sent", u64::from(a.pend_sent)),
            ("s_wq_issued", u64::from(r.issued)),
            ("s_pm_next_psn", u64::from(a.next_psn)),
            ("s_pm_cum_acked", u64::from(a.cum_acked)),
            ("s_pm_last_progress", u64::from(a.last_progress)),
            ("s_pm_srtt", u64::from(a.srtt)),
            ("s_pm_rttvar", u64::from(a.rttvar)),
        ]);
        assert_eq!((a.ts, a.tx_seq, a.req_len), (r.ts, r.tx_seq, w.len), "the cut read the stores the commit read");
        // An unarmed tail timer's deadline is junk, which the unit carries
        // through while it stays unarmed.
        let tail_in = a.tail_at.map(u64::from).unwrap_or_else(|| self.e.junk.next_u64() & mask(32));
        vals.push(("s_ctx_tail_at", tail_in));
        let tail_out = o.tail_at.map(u64::from).unwrap_or(tail_in);
        vals.extend([
            ("m_cut_valid", 1),
            ("m_pm_next_psn", u64::from(o.next_psn)),
            ("m_pm_last_progress", u64::from(o.last_progress)),
            ("m_sw_pend", u64::from(o.pend)),
            ("m_sw_pend_sent", u64::from(o.pend_sent)),
            ("m_ctx_rr_stream", u64::from((r.stream + 1) % p.streams)),
            ("m_ctx_pend_streams", u64::from(o.pend_streams)),
            ("m_ctx_inflight", o.inflight),
            ("m_ctx_since_ackreq", u64::from(o.since_ackreq)),
            ("m_ctx_unreq_since", u64::from(o.unreq_since)),
            ("m_ctx_tail_valid", u64::from(o.tail_at.is_some())),
            ("m_ctx_tail_at", tail_out),
            ("m_wq_issued", u64::from(r.issued.wrapping_add(1))),
        ]);
        let s = r.slot_out.expect("new data writes its ring slot");
        assert_eq!((s.stream, s.wq, s.offset, s.len), (r.stream, a.pend, o.offset, o.len), "the slot is the cut's");
        assert_eq!((s.rnr_count, s.rnr_tag, s.retx_count, s.resent), (0, 0, 0, false), "new data's slot starts afresh");
        bins.extend(self.bins(r, &o, &cz, qb));
    }

    /// A retransmission of a live connection: its ring slot as read, the
    /// queue's pop, and either the retry limit's failure or the slot's
    /// write-back (checked here for the fields that have no port).
    fn retx_ports(&mut self, r: &CommitRec, vals: &mut Vec<(&'static str, u64)>, bins: &mut Vec<&'static str>) {
        let (path, _) = r.retx.expect("a retransmission");
        let s = r.slot_in.expect("a live connection's queued slot is in the ring");
        assert!(u64::from(s.retx_count) <= mask(commit::RETX_COUNT_BITS), "retx_count {} fits its port", s.retx_count);
        vals.extend([
            ("s_ring_stream", u64::from(s.stream)),
            ("s_ring_wq", u64::from(s.wq)),
            ("s_ring_offset", u64::from(s.offset)),
            ("s_ring_len", u64::from(s.len)),
            ("s_ring_retx_count", u64::from(s.retx_count)),
            ("s_ring_rnr_resend", u64::from(s.rnr_resend)),
            ("s_ring_charge", u64::from(s.charge)),
            ("s_ring_resent", u64::from(s.resent)),
            ("m_pop_valid", 1),
        ]);
        let charged = !s.rnr_resend && s.charge;
        if let Some((stream, slot, st)) = r.fail {
            assert!(charged && s.retx_count == RETRY_LIMIT, "the retry limit fails only a charged slot at the limit");
            vals.extend([
                ("m_fail_valid", 1),
                ("m_fail_culprit_valid", 1),
                ("m_fail_culprit_stream", u64::from(stream)),
                ("m_fail_culprit_slot", u64::from(slot)),
                ("m_fail_status", u64::from(st)),
            ]);
            bins.push("retry_exceeded");
            return;
        }
        let o = r.slot_out.expect("a retransmission writes its slot back");
        let kept = (o.stream, o.wq, o.offset, o.len, o.rnr_count, o.rnr_tag);
        assert_eq!(kept, (s.stream, s.wq, s.offset, s.len, s.rnr_count, s.rnr_tag), "a retransmission keeps these");
        bins.push(if r.evt_kind == tel::kind::RESUME { "rnr_resume" } else { "retx" });
        if path != r.phys {
            bins.push("retx_rerouted");
        }
        if charged {
            bins.push("retx_charged");
        } else if !s.rnr_resend {
            bins.push("retx_uncharged");
        }
        if s.resent {
            bins.push("retx_again");
        }
    }

    /// A committed packet of either kind: the stores the header, the
    /// event and the frame read, and what both kinds write.
    fn written_ports(
        &mut self,
        r: &CommitRec,
        vals: &mut Vec<(&'static str, u64)>,
        wide: &mut Vec<(&'static str, Bits)>,
    ) {
        let ab = self.e.tx.params().axi_addr_bits;
        let w = &r.wr;
        vals.extend([
            ("ts_now", u64::from(r.ts)),
            ("s_ctx_remote_id", u64::from(r.remote_id)),
            ("s_ctx_dst_mac", r.dst_mac),
            ("s_ctx_dst_ip", u64::from(r.dst_ip)),
            ("s_wr_op", u64::from(w.op)),
            ("s_wr_laddr", w.laddr),
            ("s_wr_len", u64::from(w.len)),
            ("s_wr_raddr", w.raddr),
            ("s_wr_rkey", u64::from(w.rkey)),
            ("s_wr_imm", u64::from(w.imm)),
            ("s_wr_msn", u64::from(r.msn)),
            ("s_wr_rq_seq", u64::from(r.rq_seq)),
            ("s_pm_tx_seq", u64::from(r.tx_seq)),
            ("s_pm_gen", u64::from(r.gen)),
            ("s_phys_sport", u64::from(r.sport)),
            ("s_phys_plane", u64::from(r.plane)),
        ]);
        let s = r.slot_out.expect("a commit writes its ring slot");
        let (path, psn) = r.retx.unwrap_or_else(|| (r.phys, r.cut.expect("new data is cut").psn));
        // The fields the assembly writes without a port.
        assert_eq!((s.phys, s.sent, s.tx_ts), (r.phys, r.ts, r.ts as u16), "the slot leaves by phys now");
        assert!(!(s.queued || s.rnr_wait || s.rnr_resend || s.charge), "a sent slot waits for nothing");
        vals.extend([
            ("m_valid", 1),
            ("m_path", u64::from(path)),
            ("m_ring_psn", u64::from(psn)),
            ("m_ring_stream", u64::from(s.stream)),
            ("m_ring_wq", u64::from(s.wq)),
            ("m_ring_offset", u64::from(s.offset)),
            ("m_ring_len", u64::from(s.len)),
            ("m_ring_tx_seq", u64::from(s.tx_seq)),
            ("m_ring_retx_count", u64::from(s.retx_count)),
            ("m_ring_resent", u64::from(s.resent)),
            ("m_pm_tx_seq", u64::from(r.tx_seq_out)),
            ("m_evt_kind", u64::from(r.evt_kind)),
            ("m_evt_now", u64::from(r.ts)),
            ("m_frame_addr", r.addr & mask(ab)),
            ("m_frame_len", u64::from(r.len)),
            ("m_frame_dst_mac", r.dst_mac),
            ("m_frame_dst_ip", u64::from(r.dst_ip)),
            ("m_frame_sport", u64::from(r.sport)),
            ("m_frame_plane", u64::from(r.plane)),
        ]);
        wide.push(("m_frame_hdr", be_bits(data::LAYOUT.len as u32 * 8, &r.hdr)));
    }
    /// The coverage bins of a live connection's commit.
    fn bins(&self, r: &CommitRec, o: &CutOut, cz: &CutSizes, qb: u32) -> Vec<&'static str> {
        let a = &r.cut_in;
        let mut b = vec![match r.wr.op {
            op::WRITE => "op_write",
            op::WRITE_IMM => "op_write_imm",
            op::SEND => "op_send",
            _ => "op_send_imm",
        }];
        if a.req_len == 0 {
            b.push("len_zero");
        }
        if !o.eom {
            b.push("cut_mtu");
        } else if o.offset > 0 {
            b.push("cut_last_of_many");
        }
        if a.next_psn == mask(24) as u32 {
            b.push("psn_wrap");
        }
        if o.eom && a.pend & mask(qb) as u32 == mask(qb) as u32 {
            b.push("wq_ptr_wrap");
        }
        if r.stream == self.e.tx.params().streams - 1 {
            b.push("rr_stream_wrap");
        }
        if a.next_psn == a.cum_acked {
            b.push("path_was_empty");
        }
        if a.tail_at.is_none() && o.tail_at.is_some() {
            b.push("tail_armed");
        }
        if !o.ackreq {
            b.push("no_ackreq");
        } else {
            let since = a.since_ackreq + 1;
            let unreq = if a.since_ackreq == 0 { a.ts } else { a.unreq_since };
            let wait = (cz.unreq_wait).min(a.srtt / 4);
            for (hit, bin) in [
                (o.eom, "ackreq_eom"),
                (a.full_after, "ackreq_full_after"),
                (o.inflight >= u64::from(a.cap), "ackreq_cap"),
                (o.pend_streams == 0, "ackreq_drained"),
                (since >= cz.sack_every, "ackreq_count"),
                (a.ts.wrapping_sub(unreq) >= wait, "ackreq_wait"),
            ] {
                if hit {
                    b.push(bin);
                }
            }
        }
        b
    }
}

/// `cfg` as the traffic runs it: short timers (losses are retransmitted
/// within a replay), paths starting with a window of two packets (a second
/// packet in flight fills it).
fn tuned(cfg: &Config) -> Config {
    let mut cfg = cfg.clone();
    cfg.timers.rto_min_us = 10;
    cfg.timers.rto_max_us = 40;
    cfg.cc.init_cwnd_bytes = 2 * cfg.transport.mtu;
    cfg
}

/// The traffic of one run (see the module doc).
fn traffic(cfg: &Config, seed: u64) -> Rig {
    let cfg = tuned(cfg);
    let mut rig = Rig::new(cfg.clone(), seed);
    let streams = cfg.transport.streams_per_conn.min(4);
    let paths = cfg.transport.paths_per_conn;
    let depth = cfg.hardware.tx_wq_depth;
    let mut off = 0u64;
    // The peer's SACKs name each packet's stream and msn, so a stream
    // sends past the peer's message table and its pointers wrap.
    rig.peer.window = true;
    let peer = &mut rig.peer;
    peer.open(&mut rig.e, 1, 2.min(paths), 0);
    peer.open(&mut rig.e, 2, 3.min(paths), 100);
    peer.open(&mut rig.e, 3, 1, 0);
    peer.open(&mut rig.e, 4, 4.min(paths), 7);
    rig.run(300);

    // Every op and length across streams, under loss now and then; enough
    // requests per stream that the work queue pointers wrap.
    rig.e.press = Pressure { axis: 20, ar: 10, r_gap: 10, cqe: 10 };
    rig.e.psel_hold = 20;
    rig.peer.loss = 5;
    for k in 0..4 {
        for c in 1..=4 {
            burst(&mut rig.e, c, streams, 2, u64::from(100 * c + 1000 * k), &mut off);
        }
        rig.run(3_000);
    }
    rig.peer.loss = 0;
    rig.run(3_000);

    // One stream of connection 1, a few requests at a time, until its work
    // queue pointers have wrapped (more than twice the queue's depth).
    for k in 0..(2 * depth + 4) / 4 {
        burst(&mut rig.e, 1, 1, 4, u64::from(2000 + 10 * k), &mut off);
        rig.run(1_500);
    }

    // Every stream of connection 2: its round robin wraps past the last.
    burst(&mut rig.e, 2, cfg.transport.streams_per_conn, 1, 4000, &mut off);
    rig.run(3_000);

    // psns wrapping: a fresh connection whose paths start just below 2^24
    // (the peer follows the wrap, `tx_rig_peer.rs`).
    let peer = &mut rig.peer;
    peer.open(&mut rig.e, 6, 2.min(paths), (1 << 24) - 3);
    rig.run(300);
    burst(&mut rig.e, 6, streams, 2, 5000, &mut off);
    rig.run(3_000);

    // RNR resends: connection 7 muted, three of its packets NACKed RNR;
    // after the back-off each comes back as the queue's head and is resent
    // (RESUME, uncharged); a path timeout then queues the rest, uncharged.
    // Then the peer answers again (the retransmissions reach it).
    rig.peer.mute.insert(7);
    let peer = &mut rig.peer;
    peer.open(&mut rig.e, 7, 2.min(paths), 300);
    rig.run(300);
    burst(&mut rig.e, 7, 1, 2, 6000, &mut off);
    rig.run(1_500);
    for (path, psn) in rig.unanswered(7).into_iter().take(3) {
        rig.nack(7, path, psn, NackCode::Rnr);
    }
    rig.run_until(40_000, "an RNR resend", "rnr_resume");
    // Still muted until a path times out to SUSPECT (its PROBEs unanswered)
    // and declares its packets lost, charged to the path, not the packet;
    // answered again, the path recovers and they are resent uncharged.
    // (Muted for good, every path goes DEAD and nothing is resent.)
    let suspect = |rig: &Rig| (0..2.min(paths)).any(|p| rig.e.pt.entry(7, p).state == tel::SUSPECT);
    for _ in 0..200_000 {
        if suspect(&rig) {
            break;
        }
        rig.step(false);
    }
    assert!(suspect(&rig), "{}: no path of connection 7 timed out to SUSPECT", cfg.name);
    rig.peer.mute.remove(&7);
    rig.run_until(100_000, "a timeout's uncharged retransmission", "retx_uncharged");
    rig.run(3_000);

    // A black-holed route: path 0 of connection 9 loses every frame until
    // it times out to SUSPECT and takes a fresh port; its packets declared
    // lost are resent uncharged, on path 1 while path 0 is held.
    let peer = &mut rig.peer;
    peer.open(&mut rig.e, 9, 2.min(paths), 0);
    rig.run(300);
    burst(&mut rig.e, 9, 1, 1, 6500, &mut off);
    rig.run(1_000);
    let route = rig.peer.sports.get(&(9, 0)).copied().expect("connection 9 sent on path 0");
    rig.peer.blackhole.insert(route);
    burst(&mut rig.e, 9, streams, 2, 6600, &mut off);
    rig.run_until(200_000, "a rerouted retransmission", "retx_rerouted");
    rig.peer.blackhole.clear();
    rig.run(3_000);

    // The retry limit: connection 8 muted, one packet NACKed BAD_HDR again
    // and again, each retransmission charged, until the commit fails the
    // connection.
    rig.peer.mute.insert(8);
    let peer = &mut rig.peer;
    peer.open(&mut rig.e, 8, 1, 0);
    rig.run(300);
    rig.e.wrs.push_back(tx_rig::wr(8, 0, op::WRITE, 7000, off % 0x2_0000, 64));
    rig.run(500);
    let &(path, psn) = rig.unanswered(8).first().expect("connection 8 sent a packet");
    for _ in 0..4 * RETRY_LIMIT {
        if rig.seen.contains_key("retry_exceeded") {
            break;
        }
        rig.nack(8, path, psn, NackCode::BadHdr);
        rig.run(300);
    }
    rig.peer.mute.remove(&8);
    rig.run(1_000);

    rig.e.press = Pressure::default();
    rig.e.psel_hold = 0;

    rig
}

fn replay_config(cfg: &Config) -> Run {
    let rig = traffic(cfg, 0xc0317);
    Run { defs: rig.defs, rows: rig.rows, seen: rig.seen }
}

/// The model's commit (new data and retransmissions) and the unit, cycle
/// by cycle, both configs: every output equal every cycle, and the run covered what it is
/// meant to.
#[test]
fn icarus_commit_is_the_models() {
    replay_configs(
        "tx-commit",
        commit::NAME,
        write,
        replay_config,
        &[
            "op_write",
            "op_write_imm",
            "op_send",
            "op_send_imm",
            "len_zero",
            "cut_mtu",
            "cut_last_of_many",
            "psn_wrap",
            "wq_ptr_wrap",
            "rr_stream_wrap",
            "path_was_empty",
            "tail_armed",
            "no_ackreq",
            "ackreq_eom",
            "ackreq_full_after",
            "ackreq_cap",
            "ackreq_drained",
            "ackreq_wait",
            "retx",
            "retx_charged",
            "retx_uncharged",
            "retx_again",
            "retx_rerouted",
            "rnr_resume",
            "retry_exceeded",
        ],
    );
}

/// Verilator `-Wall` with no waivers and `iverilog -g2005 -Wall` silent,
/// for both configs; Yosys: no latch after `proc` and `check -assert`.
#[test]
fn tools_accept_the_commit() {
    tools_check_configs("tx-commit", write);
}
