//! `rx_ctl` alone, its parts answered by hand: the order of its requests
//! for a WRITE (lookup, msg_check, mr_check, the sack_gen beat, the
//! placement), the SACK hold and its completed_msn, ack clocking's FLUSH
//! beats, and who NACKs a refused packet (the controller only when
//! sack_gen did not answer). The whole receive path against the reference
//! is the rx vectors on `mrnic_core` (`mrnic vectors check --target model`).

use mrnic_model::block::{port_index, zero_values, Bits, Block, PortDef};
use mrnic_model::rx_ctl::{RxCtl, RxCtlParams};
use mrnic_proto::layouts::data;
use mrnic_proto::Config;

/// The block with its inputs held by name.
struct Rig {
    b: RxCtl,
    ports: Vec<PortDef>,
    ins: Vec<Bits>,
    outs: Vec<Bits>,
}

impl Rig {
    fn new(cfg: &Config) -> Rig {
        let b = RxCtl::new(RxCtlParams::from_config(cfg).unwrap());
        let ports = b.ports().to_vec();
        let mut r = Rig { ins: zero_values(&ports), outs: zero_values(&ports), ports, b };
        // Every part takes what it is offered unless a test says otherwise.
        for p in r.ports.clone() {
            if p.dir == mrnic_model::block::Dir::In && p.name.ends_with("_ready") && p.name.starts_with("m_") {
                r.set(&p.name, 1);
            }
        }
        r
    }

    fn idx(&self, n: &str) -> usize {
        port_index(&self.ports, n).unwrap_or_else(|| panic!("no port {n}"))
    }

    fn set(&mut self, n: &str, v: u64) {
        let i = self.idx(n);
        self.ins[i] = Bits::from_u64(self.ports[i].width, v);
    }

    fn get(&self, n: &str) -> u64 {
        self.outs[self.idx(n)].as_u64()
    }

    /// One cycle: eval, then the edge. Outputs stay readable.
    fn clock(&mut self) {
        self.b.eval(&self.ins, &mut self.outs);
        self.b.tick(&self.ins);
    }

    /// Clocks until `valid` is high at eval (at most `n` cycles); the
    /// cycle it is seen in is clocked too (the handshake, if its ready is
    /// high). Returns the outputs of that cycle.
    fn until(&mut self, valid: &str, n: u32) -> Vec<Bits> {
        for _ in 0..n {
            self.b.eval(&self.ins, &mut self.outs);
            if self.get(valid) == 1 {
                let o = self.outs.clone();
                self.b.tick(&self.ins);
                return o;
            }
            self.b.tick(&self.ins);
        }
        panic!("{valid} never came");
    }

    fn field(&self, o: &[Bits], n: &str) -> u64 {
        o[self.idx(n)].as_u64()
    }

    /// Offers an answer for one cycle (its valid high, then low).
    fn answer(&mut self, prefix: &str, fields: &[(&str, u64)]) {
        for (n, v) in fields {
            self.set(&format!("{prefix}_{n}"), *v);
        }
        self.set(&format!("{prefix}_valid"), 1);
        self.clock();
        self.set(&format!("{prefix}_valid"), 0);
    }
}

/// A WRITE's header on `s_hdr` for one cycle: path 1, psn 7, stream 0,
/// msn 0, `len` bytes, ACKREQ as given.
fn write_hdr(r: &mut Rig, len: u64, ackreq: bool) {
    let mut raw = [0u8; 52];
    data::ACKREQ.set(&mut raw, ackreq as u64);
    let width = r.ports[r.idx("s_hdr_raw")].width as usize;
    let mut bits = Bits::zero(width as u32);
    for (i, b) in raw.iter().enumerate() {
        let lsb = width - 8 * (i + 1);
        bits.0[lsb / 64] |= (*b as u64) << (lsb % 64);
    }
    let i = r.idx("s_hdr_raw");
    r.ins[i] = bits;
    for (n, v) in [
        ("opcode", 0),
        ("payload_len", len),
        ("dst_conn", 3),
        ("path_id", 1),
        ("path_psn", 7),
        ("path_gen", 0),
        ("stream_id", 0),
        ("msn", 0),
        ("msg_len", len),
        ("rkey", 0x1234),
        ("addr", 0x9000),
        ("tx_ts", 55),
        ("udp_sport", 50001),
        ("ip_src", 1),
    ] {
        r.set(&format!("s_hdr_{n}"), v);
    }
    r.set("s_hdr_valid", 1);
    r.b.eval(&r.ins, &mut r.outs);
    assert_eq!(r.get("s_hdr_ready"), 1, "the controller takes a header when idle");
    r.b.tick(&r.ins);
    r.set("s_hdr_valid", 0);
}

/// Answers the lookup: connection 3 open with `paths` paths, stream 0's
/// completed_msn 0.
fn lookup_ok(r: &mut Rig, paths: u64) {
    let o = r.until("m_lk_valid", 10);
    assert_eq!(r.field(&o, "m_lk_dst_conn"), 3);
    assert_eq!(r.field(&o, "m_lk_psn"), 7);
    assert_eq!(r.field(&o, "m_opcode"), 0);
    r.answer("s_lkr", &[("ok", 1), ("conn", 3), ("remote_id", 9), ("paths", paths)]);
}

fn l(cfg: &Config) -> u32 {
    cfg.hardware.table_read_latency
}

/// A new WRITE with ACKREQ: checked, placed, its SACK held until
/// cpl_engine is idle and then sent with the published completed_msn,
/// then a FLUSH beat for every other path.
#[test]
fn a_new_write_is_placed_and_its_sack_held_until_counted() {
    for name in ["small", "default"] {
        let cfg = Config::builtin(name).unwrap();
        let mut r = Rig::new(&cfg);
        write_hdr(&mut r, 100, true);
        lookup_ok(&mut r, 3);
        let o = r.until("m_chk_valid", 10);
        assert_eq!(r.field(&o, "m_chk_len"), 100);
        r.answer("s_chkr", &[("status", 0)]);
        let o = r.until("m_mr_valid", 10);
        assert_eq!(r.field(&o, "m_mr_rkey"), 0x1234);
        assert_eq!(r.field(&o, "m_mr_addr"), 0x9000);
        r.answer("s_mrr", &[("status", 0)]);
        let o = r.until("m_pkt_valid", 10);
        assert_eq!(r.field(&o, "m_pkt_op"), 0, "{name}: a DATA beat");
        assert_eq!(r.field(&o, "m_pkt_bad"), 0);
        assert_eq!(r.field(&o, "m_pkt_ackreq"), 1);
        assert_eq!(r.field(&o, "m_pkt_dst_conn"), 9);
        // sack_gen answers L + 1 cycles later: a new bit and a SACK.
        for _ in 0..l(&cfg) {
            r.clock();
        }
        r.set("s_gnew_valid", 1);
        r.set("s_gsack_valid", 1);
        r.set("s_gsack_completed_msn", 0);
        r.set("s_gsack_cum_psn", 8);
        r.clock();
        r.set("s_gnew_valid", 0);
        // Accepted: msg_check's s_acc and cpl_engine's s_new, then the
        // placement with its payload.
        let o = r.until("m_new_valid", 5);
        let tag = r.field(&o, "m_new_tag");
        assert_eq!(r.field(&o, "m_new_payload_len"), 100);
        assert_eq!(r.field(&o, "m_new_conn_id"), 3);
        assert_eq!(r.field(&o, "m_acc_valid"), 1);
        let o = r.until("m_req_valid", 5);
        assert_eq!(r.field(&o, "m_req_tag"), tag, "{name}: the placement's tag is cpl_engine's");
        assert_eq!((r.field(&o, "m_req_addr"), r.field(&o, "m_req_len")), (0x9000, 100));
        assert_eq!((r.field(&o, "m_pay_valid"), r.field(&o, "m_pay_drop")), (1, 0), "{name}: payload streamed");
        // cpl_engine busy: the SACK stays held.
        r.set("cpl_idle", 0);
        for _ in 0..20 {
            r.clock();
            assert_eq!(r.get("m_csack_valid"), 0, "{name}: a new packet's SACK leaves only once counted");
            assert_eq!(r.get("s_gsack_ready"), 0);
        }
        // cpl_engine publishes stream 0's completed_msn 1, then is idle.
        for (n, v) in [("valid", 1), ("ready", 1), ("conn", 3), ("stream", 0), ("clear", 0), ("completed_msn", 1)] {
            r.set(&format!("tap_st_{n}"), v);
        }
        r.clock();
        r.set("tap_st_valid", 0);
        r.set("cpl_idle", 1);
        let o = r.until("m_csack_valid", 5);
        assert_eq!(r.field(&o, "m_csack_cum_psn"), 8);
        assert_eq!(r.field(&o, "m_csack_completed_msn"), 1, "{name}: the counted completed_msn");
        assert_eq!(r.field(&o, "s_gsack_ready"), 1);
        r.set("s_gsack_valid", 0);
        // Ack clocking: FLUSH on paths 0 and 2 (the packet came on 1).
        let mut flushed = Vec::new();
        for _ in 0..2 {
            let o = r.until("m_pkt_valid", 10);
            assert_eq!(r.field(&o, "m_pkt_op"), 3, "{name}: FLUSH");
            assert_eq!(r.field(&o, "m_pkt_completed_msn"), 1);
            flushed.push(r.field(&o, "m_pkt_path_id"));
        }
        assert_eq!(flushed, vec![0, 2], "{name}");
        for _ in 0..10 {
            r.clock();
            assert_eq!(r.get("m_pkt_valid"), 0, "{name}: one FLUSH per other path");
        }
    }
}

/// A WRITE mr_check refuses: the controller NACKs ACCESS and counts it
/// when sack_gen did not answer; when sack_gen answered (a stale
/// generation, say), it sends nothing. Either way the payload is dropped
/// and nothing is placed.
#[test]
fn a_refused_write_is_nacked_once() {
    for sack_gen_answers in [false, true] {
        let cfg = Config::builtin("small").unwrap();
        let mut r = Rig::new(&cfg);
        write_hdr(&mut r, 64, false);
        lookup_ok(&mut r, 2);
        r.until("m_chk_valid", 10);
        r.answer("s_chkr", &[("status", 0)]);
        r.until("m_mr_valid", 10);
        r.answer("s_mrr", &[("status", 1)]);
        let o = r.until("m_pkt_valid", 10);
        assert_eq!(r.field(&o, "m_pkt_bad"), 1, "a refused packet's beat is bad");
        for _ in 0..l(&cfg) {
            r.clock();
        }
        r.set("tap_stale_gen", sack_gen_answers as u64);
        r.clock();
        r.set("tap_stale_gen", 0);
        let mut nacks = 0;
        let mut access = 0;
        for _ in 0..30 {
            r.clock();
            if r.get("m_cnack_valid") == 1 {
                nacks += 1;
                assert_eq!(r.get("m_cnack_code"), 2);
                assert_eq!(r.get("m_cnack_conn"), 3);
                assert_eq!(r.get("m_cnack_psn"), 7);
            }
            access += r.get("stat_rx_access");
            assert_eq!(r.get("m_req_valid"), 0, "nothing placed");
            assert_eq!(r.get("m_new_valid"), 0);
            if r.get("m_pay_valid") == 1 {
                assert_eq!(r.get("m_pay_drop"), 1, "the payload is dropped");
            }
        }
        let want = (!sack_gen_answers) as u64;
        assert_eq!((nacks, access), (want, want), "sack_gen answered: {sack_gen_answers}");
    }
}

/// conn_table's and conn_search's ack_no_conn pulses reach one counter.
#[test]
fn ack_no_conn_pulses_are_ored() {
    let cfg = Config::builtin("small").unwrap();
    let mut r = Rig::new(&cfg);
    for (a, b) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        r.set("tap_ack_no_conn_table", a);
        r.set("tap_ack_no_conn_search", b);
        r.clock();
        assert_eq!(r.get("stat_ack_no_conn"), a | b);
    }
}
