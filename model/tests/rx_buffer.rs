//! `rx_buffer` through its ports: random packets (random header field
//! values, 1 to MAXB beats, a quarter dropped by `tuser` on the last beat,
//! a few longer than MAXB) with random gaps and random backpressure on
//! every output, random payload commands. Checked: exactly the good
//! packets' headers come out, in order, each after its last beat was in;
//! a packet sent (`drop = 0`) comes out beat for beat with `tlast` on its
//! last; a dropped or discarded one leaves nothing; oversize packets pulse
//! once and are dropped; the buffer never stalls (everything drains); and
//! with nothing held back one beat per cycle goes out.

use std::collections::VecDeque;

use mrnic_model::block::{port_index, zero_values, Bits, Block, PortDef};
use mrnic_model::rx_buffer::*;
use mrnic_proto::Config;
use mrnic_reference::rng::Rng;

struct Pkt {
    hdr: Vec<Bits>,
    beats: Vec<(Bits, Bits)>,
    tuser: bool,
}

fn rand_bits(rng: &mut Rng, w: u32) -> Bits {
    let mut b = Bits(vec![0; w.div_ceil(64) as usize]);
    b.0.iter_mut().for_each(|x| *x = rng.next_u64());
    b.truncate(w);
    b
}

fn run(name: &str, seed: u64, n: usize, pressure: u64) {
    let cfg = Config::builtin(name).unwrap();
    let p = RxBufferParams::from_config(&cfg).unwrap();
    let mut blk = RxBuffer::new(p);
    let ports: Vec<PortDef> = blk.ports().to_vec();
    let ix = |s: &str| port_index(&ports, s).unwrap_or_else(|| panic!("no port {s}"));
    let fields = p.hdr_fields();
    let (dw, kw) = (p.data_bits(), p.data_bits() / 8);
    let mut rng = Rng::new(seed);
    let pkts: Vec<Pkt> = (0..n)
        .map(|_| {
            let nb = match rng.below(10) {
                0 => p.max_beats,
                1 => p.max_beats + 1 + rng.below(3) as u32,
                _ => 1 + rng.below(p.max_beats as u64) as u32,
            };
            Pkt {
                hdr: fields.iter().map(|(_, w, _)| rand_bits(&mut rng, *w)).collect(),
                beats: (0..nb).map(|_| (rand_bits(&mut rng, dw), rand_bits(&mut rng, kw))).collect(),
                tuser: rng.below(4) == 0,
            }
        })
        .collect();
    let good: Vec<usize> = (0..n).filter(|&i| !pkts[i].tuser && pkts[i].beats.len() as u32 <= p.max_beats).collect();
    let oversize = pkts.iter().filter(|k| k.beats.len() as u32 > p.max_beats).count();
    // Commands chosen per good packet: send (false) or drop.
    let drops: Vec<bool> = good.iter().map(|_| rng.below(3) == 0).collect();
    let mut want_beats: VecDeque<(Bits, Bits, bool)> = VecDeque::new();
    for (k, &i) in good.iter().enumerate() {
        if !drops[k] {
            let nb = pkts[i].beats.len();
            for (j, (d, kp)) in pkts[i].beats.iter().enumerate() {
                want_beats.push_back((d.clone(), kp.clone(), j + 1 == nb));
            }
        }
    }
    let mut v = zero_values(&ports);
    v[ix("rst")] = Bits::from_u64(1, 1);
    let mut o = v.clone();
    blk.eval(&v, &mut o);
    blk.tick(&v);
    let (mut hi, mut bi, mut bj) = (0usize, 0usize, 0usize);
    let (mut got_hdr, mut cmds, mut pulses) = (0usize, 0usize, 0usize);
    // Cycle each packet's last beat went in.
    let mut last_in: Vec<Option<u64>> = vec![None; n];
    let mut out_run = 0u64;
    let mut max_run = 0u64;
    let mut cycle = 0u64;
    while cycle < 200 * n as u64 * p.max_beats as u64 {
        let mut v = zero_values(&ports);
        if hi < n && rng.below(100) >= pressure / 2 {
            v[ix("s_hdr_valid")] = Bits::from_u64(1, 1);
            for ((f, _, _), b) in fields.iter().zip(&pkts[hi].hdr) {
                v[ix(&format!("s_hdr_{f}"))] = b.clone();
            }
        }
        // A packet's beats never run ahead of its header by more than the
        // parser's FIFO would let them; here they may come first or later.
        if bi < n && bi <= hi + 1 && rng.below(100) >= pressure / 2 {
            let (d, k) = &pkts[bi].beats[bj];
            let last = bj + 1 == pkts[bi].beats.len();
            v[ix("s_axis_tvalid")] = Bits::from_u64(1, 1);
            v[ix("s_axis_tdata")] = d.clone();
            v[ix("s_axis_tkeep")] = k.clone();
            v[ix("s_axis_tlast")] = Bits::from_u64(1, last as u64);
            v[ix("s_axis_tuser")] = Bits::from_u64(1, (last && pkts[bi].tuser) as u64);
        }
        let hdr_ready = rng.below(100) >= pressure;
        let axis_ready = rng.below(100) >= pressure;
        v[ix("m_hdr_ready")] = Bits::from_u64(1, hdr_ready as u64);
        v[ix("m_axis_tready")] = Bits::from_u64(1, axis_ready as u64);
        if cmds < got_hdr && rng.below(100) >= pressure {
            v[ix("s_pay_valid")] = Bits::from_u64(1, 1);
            v[ix("s_pay_drop")] = Bits::from_u64(1, drops[cmds] as u64);
        }
        let mut o = v.clone();
        blk.eval(&v, &mut o);
        let g = |s: &str| o[ix(s)].as_u64();
        if g("stat_oversize") == 1 {
            pulses += 1;
        }
        if g("s_hdr_valid") == 1 && g("s_hdr_ready") == 1 {
            hi += 1;
        }
        if g("s_axis_tvalid") == 1 && g("s_axis_tready") == 1 {
            bj += 1;
            if bj == pkts[bi].beats.len() {
                last_in[bi] = Some(cycle);
                bi += 1;
                bj = 0;
            }
        }
        if g("m_hdr_valid") == 1 {
            assert!(got_hdr < good.len(), "{name}: a header too many");
            let i = good[got_hdr];
            for ((f, _, _), b) in fields.iter().zip(&pkts[i].hdr) {
                assert_eq!(&o[ix(&format!("m_hdr_{f}"))], b, "{name} seed {seed}: packet {i} field {f}");
            }
            assert!(last_in[i].is_some_and(|c| c + 2 <= cycle), "{name}: header {i} before its last beat + 2");
            if hdr_ready {
                got_hdr += 1;
            }
        }
        if g("s_pay_valid") == 1 && g("s_pay_ready") == 1 {
            cmds += 1;
        }
        if g("m_axis_tvalid") == 1 {
            let w = want_beats.front().expect("a beat nobody sent");
            let got = (o[ix("m_axis_tdata")].clone(), o[ix("m_axis_tkeep")].clone(), g("m_axis_tlast") == 1);
            assert_eq!(&got, w, "{name} seed {seed}: payload beat");
            if axis_ready {
                want_beats.pop_front();
                out_run += 1;
                max_run = max_run.max(out_run);
            }
        } else {
            out_run = 0;
        }
        blk.tick(&v);
        cycle += 1;
        if hi == n && bi == n && got_hdr == good.len() && cmds == good.len() && want_beats.is_empty() {
            break;
        }
    }
    assert_eq!((hi, bi), (n, n), "{name} seed {seed}: the input stalled");
    assert_eq!(got_hdr, good.len(), "{name} seed {seed}: headers missing");
    assert!(want_beats.is_empty(), "{name} seed {seed}: {} beats missing", want_beats.len());
    assert_eq!(pulses, oversize, "{name}: one pulse per oversize packet");
    for _ in 0..4 {
        let v = zero_values(&ports);
        blk.tick(&v);
    }
    assert!(blk.idle(), "{name}: something left in the buffer");
    if pressure == 0 {
        assert!(max_run >= p.max_beats as u64 / 2, "{name}: no sustained beat per cycle ({max_run})");
    }
}

#[test]
fn good_packets_pass_whole_and_in_order_small() {
    for (seed, pressure) in [(1, 0), (2, 30), (3, 60)] {
        run("small", seed, 120, pressure);
    }
}

#[test]
fn good_packets_pass_whole_and_in_order_default() {
    for (seed, pressure) in [(4, 0), (5, 40)] {
        run("default", seed, 150, pressure);
    }
}
