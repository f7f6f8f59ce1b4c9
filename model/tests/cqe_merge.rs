//! `cqe_merge` through its ports: random offers from both sides, random
//! backpressure on the host side; every completion taken comes out exactly
//! once, each side's in its order, receives renamed to the connection
//! index, and both `ready`s follow the FIFO count alone.

use std::collections::VecDeque;

use mrnic_model::block::{port_index, zero_values, Bits, Block, PortDef};
use mrnic_model::cqe_merge::*;
use mrnic_proto::Config;
use mrnic_reference::rng::Rng;

fn chance(rng: &mut Rng, pct: u64) -> bool {
    rng.below(100) < pct
}

fn set(ports: &[PortDef], v: &mut [Bits], name: &str, x: u64) {
    let i = port_index(ports, name).unwrap_or_else(|| panic!("{name}"));
    v[i] = Bits::from_u64(ports[i].width, x);
}

fn get(ports: &[PortDef], v: &[Bits], name: &str) -> u64 {
    v[port_index(ports, name).unwrap()].as_u64()
}

#[test]
fn both_sides_merge_once_each_in_order_under_backpressure() {
    for (name, seed) in [("small", 1u64), ("default", 2), ("small", 3)] {
        let cfg = Config::builtin(name).unwrap();
        let p = CqeMergeParams::from_config(&cfg).unwrap();
        let (cb, sb) = (p.conn_bits, p.stream_bits);
        let mut b = CqeMerge::new(p);
        let ports = b.ports().to_vec();
        let mut rng = Rng::new(seed);
        let (mut tx_q, mut rx_q): (VecDeque<Cqe>, VecDeque<Cqe>) = (VecDeque::new(), VecDeque::new());
        let (mut tx_offer, mut rx_offer): (Option<Cqe>, Option<Cqe>) = (None, None);
        let (mut sent, mut got, mut both) = (0u64, 0u64, 0u64);
        let mut v = zero_values(&ports);
        set(&ports, &mut v, "rst", 1);
        let mut o = v.clone();
        b.eval(&v, &mut o);
        b.tick(&v);
        for cycle in 0..20_000u64 {
            let mut v = zero_values(&ports);
            if tx_offer.is_none() && chance(&mut rng, 40) {
                let conn = rng.next_u64() & ((1 << cb) - 1);
                tx_offer = Some(Cqe {
                    conn: conn as u32,
                    stream: (rng.next_u64() & ((1 << sb) - 1)) as u32,
                    wr_id: rng.next_u64(),
                    status: (rng.next_u64() % 7) as u8,
                    opcode: (rng.next_u64() & 1) as u8,
                    byte_len: rng.next_u64() as u32,
                    imm: chance(&mut rng, 50).then(|| rng.next_u64() as u32),
                });
            }
            if rx_offer.is_none() && chance(&mut rng, 40) {
                // A 24-bit id whose low bits are the index.
                let id = rng.next_u64() & 0xff_ffff;
                rx_offer = Some(Cqe {
                    conn: id as u32,
                    stream: (rng.next_u64() & ((1 << sb) - 1)) as u32,
                    wr_id: rng.next_u64(),
                    status: 0,
                    opcode: 2 + (rng.next_u64() & 1) as u8,
                    byte_len: rng.next_u64() as u32,
                    imm: chance(&mut rng, 50).then(|| rng.next_u64() as u32),
                });
            }
            for (side, e) in [("s_tx", tx_offer), ("s_rx", rx_offer)] {
                if let Some(e) = e {
                    set(&ports, &mut v, &format!("{side}_valid"), 1);
                    set(&ports, &mut v, &format!("{side}_conn"), e.conn as u64);
                    set(&ports, &mut v, &format!("{side}_stream"), e.stream as u64);
                    set(&ports, &mut v, &format!("{side}_wr_id"), e.wr_id);
                    set(&ports, &mut v, &format!("{side}_status"), e.status as u64);
                    set(&ports, &mut v, &format!("{side}_opcode"), e.opcode as u64);
                    set(&ports, &mut v, &format!("{side}_byte_len"), e.byte_len as u64);
                    set(&ports, &mut v, &format!("{side}_imm_valid"), e.imm.is_some() as u64);
                    set(&ports, &mut v, &format!("{side}_imm"), e.imm.unwrap_or(0) as u64);
                }
            }
            let out_ready = !chance(&mut rng, 30);
            set(&ports, &mut v, "m_cqe_ready", out_ready as u64);
            let mut o = zero_values(&ports);
            b.eval(&v, &mut o);
            let ready = get(&ports, &o, "s_tx_ready") == 1;
            assert_eq!(ready, get(&ports, &o, "s_rx_ready") == 1);
            assert_eq!(ready, b.ready(), "cycle {cycle}: ready is the count's");
            if get(&ports, &o, "m_cqe_valid") == 1 && out_ready {
                let e = Cqe {
                    conn: get(&ports, &o, "m_cqe_conn") as u32,
                    stream: get(&ports, &o, "m_cqe_stream") as u32,
                    wr_id: get(&ports, &o, "m_cqe_wr_id"),
                    status: get(&ports, &o, "m_cqe_status") as u8,
                    opcode: get(&ports, &o, "m_cqe_opcode") as u8,
                    byte_len: get(&ports, &o, "m_cqe_byte_len") as u32,
                    imm: (get(&ports, &o, "m_cqe_imm_valid") == 1).then(|| get(&ports, &o, "m_cqe_imm") as u32),
                };
                let q = if e.opcode < opcode::RECV { &mut tx_q } else { &mut rx_q };
                let want = q.pop_front().unwrap_or_else(|| panic!("{name} cycle {cycle}: {e:?} was never offered"));
                assert_eq!(e, want, "{name} cycle {cycle}");
                got += 1;
            }
            if ready {
                both += (tx_offer.is_some() && rx_offer.is_some()) as u64;
                if let Some(e) = tx_offer.take() {
                    tx_q.push_back(e);
                    sent += 1;
                }
                if let Some(mut e) = rx_offer.take() {
                    e.conn &= (1 << cb) - 1;
                    rx_q.push_back(e);
                    sent += 1;
                }
            }
            b.tick(&v);
        }
        assert!(sent > 5000 && got + 4 >= sent && both > 100, "{name}: {sent} sent, {got} out, {both} together");
    }
}

#[test]
fn completions_offered_together_alternate_which_goes_first() {
    let mut b = CqeMerge::new(CqeMergeParams::from_config(&Config::builtin("small").unwrap()).unwrap());
    b.clock(true, None, None, false);
    let t = Cqe { opcode: opcode::SEND, wr_id: 1, ..Cqe::default() };
    let r = Cqe { opcode: opcode::RECV, wr_id: 2, ..Cqe::default() };
    let mut order = Vec::new();
    for _ in 0..3 {
        b.clock(false, Some(t), Some(r), false);
        while let Some(h) = b.head() {
            order.push(h.wr_id);
            b.clock(false, None, None, true);
        }
    }
    assert_eq!(order, [1, 2, 2, 1, 1, 2]);
}
