//! `msg_check` through its ports against the reference NIC: random
//! multi-packet WRITE, WRITE_IMM, SEND and SEND_IMM messages on several
//! streams, packets in random order, and hostile ones (msg_len, immediate
//! or kind changed mid-message, replayed payloads beyond msg_len, msns
//! beyond the message window, streams the connection lacks, lengths beyond
//! the MTU or msg_len, SEND offsets past the end, empty packets of
//! non-empty messages). Each goes to the reference (`Nic::handle_datagram`)
//! and to the block; the block's verdict must be the reference's counter
//! (`rx_bad_len`, `rx_msg_window`, `rx_msg_mismatch`, or none of them).
//! Packets the reference accepted (its SACK, every packet asks for one) are
//! recorded in the block through `s_acc`, and `completed_msn` is the one
//! the reference's SACKs report, as conn_table would give it. Random
//! answer backpressure; a reopen in the middle clears the table.

use std::collections::BTreeMap;

use mrnic_model::block::{cycle_named, port_index, Bits, PortDef};
use mrnic_model::msg_check::*;
use mrnic_proto::packet::ECN_ECT0;
use mrnic_proto::{decode_datagram, Config, DataHeader, Flags, Header, Placement};
use mrnic_reference::memory::Access;
use mrnic_reference::nic::{Nic, NicConfig};
use mrnic_reference::rng::Rng;
use mrnic_reference::verbs::{ConnParams, RecvRequest};
use mrnic_reference::wire::WirePacket;

struct Rig {
    b: MsgCheck,
    ports: Vec<PortDef>,
}

impl Rig {
    fn cycle(&mut self, set: &[(String, u64)]) -> Vec<Bits> {
        cycle_named(&mut self.b, &self.ports, set)
    }

    fn get(&self, o: &[Bits], n: &str) -> u64 {
        o[port_index(&self.ports, n).unwrap()].as_u64()
    }

    /// Offers `set` on channel `ch` until taken.
    fn offer(&mut self, ch: &str, set: Vec<(String, u64)>) {
        let mut set = set;
        set.push((format!("{ch}_valid"), 1));
        for _ in 0..1 << 17 {
            let o = self.cycle(&set);
            if self.get(&o, &format!("{ch}_ready")) == 1 {
                return;
            }
        }
        panic!("{ch} never taken");
    }

    fn fields(ch: &str, k: &Pkt) -> Vec<(String, u64)> {
        let mut v = vec![
            ("conn", k.conn as u64),
            ("stream", k.stream as u64),
            ("msn", k.msn as u64),
            ("send", k.send as u64),
            ("rq_seq", k.rq_seq as u64),
            ("msg_len", k.msg_len as u64),
            ("imm_valid", k.imm.is_some() as u64),
            ("imm", k.imm.unwrap_or(0) as u64),
            ("len", k.len as u64),
        ];
        if ch == "s_chk" {
            v.push(("msg_offset", k.msg_offset as u64));
            v.push(("completed_msn", k.completed_msn as u64));
        }
        v.into_iter().map(|(n, x)| (format!("{ch}_{n}"), x)).collect()
    }

    fn check(&mut self, rng: &mut Rng, k: &Pkt, l: u32) -> u8 {
        self.offer("s_chk", Self::fields("s_chk", k));
        for c in 1..50u32 {
            let ready = rng.below(3) != 0;
            let o = self.cycle(&[("m_chk_ready".into(), ready as u64)]);
            let valid = self.get(&o, "m_chk_valid") == 1;
            assert_eq!(valid, c >= l, "answer at cycle {c}, latency {l}");
            if valid && ready {
                return self.get(&o, "m_chk_status") as u8;
            }
        }
        panic!("no answer");
    }
}

/// Messages planned on one stream by msn, each with its packets not yet
/// accepted: (offset, length).
type Plans = BTreeMap<u32, (Msg, Vec<(u32, u32)>)>;

#[derive(Debug, Clone, Copy)]
struct Msg {
    send: bool,
    rq_seq: u32,
    msg_len: u32,
    imm: Option<u32>,
    /// Bytes the reference accepted (seen through its SACKs).
    bytes: u32,
}

/// A data header of message `m`: `(off, len)` is the payload's place in it.
#[allow(clippy::too_many_arguments)]
fn header(conn: u32, psn: u32, stream: u8, msn: u32, m: &Msg, off: u32, len: u32, base: u64, rkey: u32) -> DataHeader {
    DataHeader {
        flags: Flags { ackreq: true, ..Flags::default() },
        payload_len: len as u16,
        dst_conn: conn,
        path_id: 0,
        path_psn: psn,
        path_gen: 0,
        stream_id: stream,
        msn,
        msg_len: m.msg_len,
        place: if m.send {
            Placement::Send { rq_seq: m.rq_seq, msg_offset: off }
        } else {
            Placement::Write { rkey, addr: base + 8192 * (msn as u64 % 4) + off as u64 }
        },
        tx_ts: 0,
        imm: m.imm,
    }
}

fn run(name: &str, seed: u64, pkts: usize) {
    let cfg = Config::builtin(name).unwrap();
    let p = MsgCheckParams::from_config(&cfg).unwrap();
    let l = p.read_latency + 1;
    let mut rig = Rig { ports: ports(&p), b: MsgCheck::new(p) };
    rig.cycle(&[("rst".into(), 1)]);
    let mut rng = Rng::new(seed);
    let local = 7;
    let mut nic = Nic::new(NicConfig::new(cfg.clone(), local, seed));
    let base = 0x10_0000u64;
    let rkey = nic.reg_mr(base, 1 << 16, Access::ALL).unwrap();
    let conn = 3u32;
    // Receives, kept posted to the queue's depth as messages consume them.
    let top_up = |nic: &mut Nic| {
        for s in 0..p.streams as u8 {
            let r = RecvRequest { wr_id: 9, addr: base + 0x8000, len: 0x4000 };
            while nic.post_recv(conn, s, r).is_ok() {}
        }
    };
    let open = |nic: &mut Nic, rig: &mut Rig| {
        let cp = ConnParams { local_id: conn, remote_id: 50, remote: 41, paths: 1, tx_psn: 0, rx_psn: 0 };
        nic.create_conn(cp).unwrap();
        top_up(nic);
        rig.offer("s_open", vec![("s_open_conn".into(), conn as u64)]);
    };
    open(&mut nic, &mut rig);
    let mut psn = 0u32;
    // Per stream: completed_msn (from the SACKs), planned messages, the
    // next msn to plan and the rq_seq the next consuming message takes.
    let s_n = p.streams as usize;
    let mut completed = vec![0u32; s_n];
    let mut msgs: Vec<Plans> = vec![BTreeMap::new(); s_n];
    let mut next_msn = vec![0u32; s_n];
    let mut next_rq = vec![0u32; s_n];
    let mut seen = [0u32; 4];
    let mtu = cfg.transport.mtu;
    for i in 0..pkts {
        if i == pkts / 2 {
            // Reopen: both sides forget every message.
            // A fresh reference NIC (it has no close); same region, same key.
            nic = Nic::new(NicConfig::new(cfg.clone(), local, seed));
            assert_eq!(nic.reg_mr(base, 1 << 16, Access::ALL).unwrap(), rkey);
            open(&mut nic, &mut rig);
            psn = 0;
            completed.iter_mut().for_each(|c| *c = 0);
            msgs.iter_mut().for_each(|m| m.clear());
            next_msn.iter_mut().for_each(|m| *m = 0);
            next_rq.iter_mut().for_each(|m| *m = 0);
        }
        let s = rng.below(s_n as u64) as usize;
        // Plan messages up to one past the window.
        while next_msn[s].wrapping_sub(completed[s]) < p.depth + 1 {
            let kind = rng.below(4);
            let msg_len = match rng.below(8) {
                0 => 0,
                1 => mtu,
                _ => 1 + rng.below(3 * mtu as u64) as u32,
            };
            let (send, imm) = (kind >= 2, (kind % 2 == 1).then(|| rng.next_u64() as u32));
            let consumes = send || imm.is_some();
            let m = Msg { send, rq_seq: next_rq[s], msg_len, imm, bytes: 0 };
            next_rq[s] += consumes as u32;
            let mut parts = vec![];
            let mut off = 0;
            loop {
                let len = (msg_len - off).min(mtu);
                parts.push((off, len));
                off += len;
                if off >= msg_len {
                    break;
                }
            }
            msgs[s].insert(next_msn[s], (m, parts));
            next_msn[s] += 1;
        }
        // A planned packet (of a message in the window when possible).
        let live: Vec<u32> = msgs[s].iter().filter(|(_, (_, v))| !v.is_empty()).map(|(k, _)| *k).collect();
        if live.is_empty() {
            continue;
        }
        let msn = live[rng.below(live.len() as u64) as usize];
        let (m, parts) = msgs[s].get(&msn).cloned().unwrap();
        let pi = rng.below(parts.len() as u64) as usize;
        let (mut off, mut len) = parts[pi];
        let (mut hm, mut hs, mut hmsn) = (m, s as u8, msn);
        match rng.below(14) {
            0 if m.bytes > 0 => hm.msg_len ^= 1 << rng.below(4),
            1 if m.bytes > 0 => hm.imm = if m.imm.is_some() { None } else { Some(5) },
            2 if m.bytes > 0 => hm.send = !m.send,
            3 if m.bytes > 0 && m.send => hm.rq_seq += 1,
            // A replay: one byte more than the message has left.
            4 if m.bytes > 0 && m.msg_len - m.bytes < mtu => (off, len) = (0, m.msg_len - m.bytes + 1),
            5 => hmsn = completed[s].wrapping_add(p.depth + rng.below(3) as u32) & 0xff_ffff,
            6 => hmsn = completed[s].wrapping_sub(1 + rng.below(3) as u32) & 0xff_ffff,
            7 => hs = (p.streams + rng.below(4) as u32) as u8,
            8 => len = mtu + 1 + rng.below(8) as u32,
            9 if m.msg_len > 0 => len = 0,
            10 if m.send => off = m.msg_len - len + 1 + rng.below(4) as u32,
            11 => len = hm.msg_len + 1,
            _ => {}
        }
        let h = header(conn, psn, hs, hmsn, &hm, off, len, base, rkey);
        let meta = WirePacket {
            src: 41,
            dst: local,
            sport: 5000,
            dport: cfg.transport.udp_port,
            plane: 0,
            ecn: ECN_ECT0,
            bytes: vec![],
        };
        let payload = vec![0xa5u8; len as usize];
        let cm_before = completed.get(hs as usize).copied().unwrap_or(0);
        let c0 = *nic.counters();
        nic.handle_datagram(1000 * i as u64, &meta, &Header::Data(h), &payload);
        let c1 = *nic.counters();
        let mut accepted = false;
        while let Some(pkt) = nic.poll_transmit(1000 * i as u64) {
            if let Ok(d) = decode_datagram(&pkt.bytes) {
                if let Header::Sack(sk) = d.header {
                    accepted = true;
                    completed[sk.stream_id as usize] = sk.completed_msn;
                }
            }
        }
        top_up(&mut nic);
        // Only an accepted packet uses its psn up: every packet reaches the
        // message checks (no duplicate, never beyond the psn window).
        assert_eq!((c1.rx_psn_window, c1.rx_duplicate), (c0.rx_psn_window, c0.rx_duplicate), "{i}");
        psn += accepted as u32;
        let want = if c1.rx_bad_len > c0.rx_bad_len {
            status::BAD_LEN
        } else if c1.rx_msg_window > c0.rx_msg_window {
            status::WINDOW
        } else if c1.rx_msg_mismatch > c0.rx_msg_mismatch {
            status::MISMATCH
        } else {
            status::OK
        };
        let k = Pkt {
            conn,
            stream: hs,
            msn: hmsn,
            send: hm.send,
            rq_seq: hm.rq_seq,
            msg_len: hm.msg_len,
            imm: hm.imm,
            len: len as u16,
            msg_offset: off,
            // As conn_table gives it: the stream's before this packet.
            completed_msn: cm_before,
        };
        let got = rig.check(&mut rng, &k, l);
        assert_eq!(got, want, "{name} seed {seed} packet {i}: {k:?} ({h:?})");
        seen[got as usize] += 1;
        if accepted {
            assert_eq!(got, status::OK, "{name} {i}: accepted, so every check passed");
            rig.offer("s_acc", Rig::fields("s_acc", &k));
            let e = msgs[s].get_mut(&msn).expect("planned");
            if hs as usize == s && hmsn == msn {
                e.0.bytes += len;
                if (off, len) == parts[pi] {
                    e.1.remove(pi);
                }
            }
        }
        for st in 0..s_n {
            let c = completed[st];
            msgs[st].retain(|k, _| k.wrapping_sub(c) & 0xff_ffff < p.depth + 1);
        }
    }
    assert!(seen.iter().all(|&n| n as usize > pkts / 50), "{name}: every verdict must occur: {seen:?}");
    assert!(completed.iter().any(|&c| c > 2), "{name}: messages must complete: {completed:?}");
}

#[test]
fn verdicts_match_the_reference_small() {
    run("small", 1, 4000);
    run("small", 2, 2000);
}

#[test]
fn verdicts_match_the_reference_default() {
    run("default", 3, 3000);
}
