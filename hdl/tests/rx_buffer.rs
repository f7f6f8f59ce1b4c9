//! The generated `rx_buffer`: the model's ports plus `clk`, silent under
//! Verilator -Wall and Icarus -g2005, Yosys without latches, and an Icarus
//! replay of the model for `small` and `default`: random headers and
//! packets of one beat, random lengths, the longest and a few beats past
//! it (oversize), a quarter dropped by `tuser`; every input channel held
//! while refused; phases where the controller's commands or the headers
//! hardly come, so the ring and the record FIFO fill; random backpressure
//! on `m_hdr` and `m_axis`; resets mid-run.

mod common;
use common::*;

use mrnic_model::block::Bits;

const BLOCK: &str = "rx_buffer";

#[test]
fn ports_are_the_models_plus_clk() {
    ports_match_model(BLOCK);
}

#[test]
fn tools_accept_it() {
    standalone_tools_accept(BLOCK);
}

fn random(r: &mut Rng, width: u32) -> Bits {
    let mut b = Bits::zero(width);
    for w in b.0.iter_mut() {
        *w = r.next_u64();
    }
    b.truncate(width);
    b
}

/// Counts per config of what the replay must have reached.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    headers: u32,
    sent: u32,
    dropped: u32,
    last_beats: u32,
    oversize: u32,
    axis_refused: u32,
    hdr_refused: u32,
    hdr_held: u32,
    out_held: u32,
}

#[test]
fn icarus_replays_model_vectors() {
    let mut held = [false; 3];
    // The packet being sent: beats left (0: none started).
    let mut left = 0u64;
    let mut seen = [Seen::default(); 2];
    replay_configs(BLOCK, 24_000, |cfg, cycle, r, defs, ins, outs| {
        let p = mrnic_model::rx_buffer::RxBufferParams::from_config(cfg).unwrap();
        let maxb = u64::from(p.max_beats);
        let s = &mut seen[usize::from(cfg.name == "default")];
        let rst_was = cycle == 0 || get(defs, ins, "rst") == 1;
        let on = |n: &str| get(defs, ins, n) == 1;
        let out = |n: &str| get(defs, outs, n) == 1;
        if !rst_was {
            s.headers += u32::from(out("m_hdr_valid") && on("m_hdr_ready"));
            s.hdr_held += u32::from(out("m_hdr_valid") && !on("m_hdr_ready"));
            s.out_held += u32::from(out("m_axis_tvalid") && !on("m_axis_tready"));
            s.last_beats += u32::from(out("m_axis_tvalid") && on("m_axis_tready") && out("m_axis_tlast"));
            s.oversize += u32::from(out("stat_oversize"));
            s.axis_refused += u32::from(on("s_axis_tvalid") && !out("s_axis_tready"));
            s.hdr_refused += u32::from(on("s_hdr_valid") && !out("s_hdr_ready"));
            if on("s_pay_valid") && out("s_pay_ready") {
                if on("s_pay_drop") {
                    s.dropped += 1;
                } else {
                    s.sent += 1;
                }
            }
        }
        let chans =
            [("s_hdr_valid", "s_hdr_ready"), ("s_axis_tvalid", "s_axis_tready"), ("s_pay_valid", "s_pay_ready")];
        for (h, (v, rdy)) in held.iter_mut().zip(chans) {
            *h = !rst_was && on(v) && !out(rdy);
        }
        if !rst_was && on("s_axis_tvalid") && out("s_axis_tready") {
            left -= 1;
        }
        let rst = cycle == 0 || cycle == 12_000 || r.below(5000) == 0;
        set(defs, ins, "rst", u64::from(rst));
        if rst {
            left = 0;
        }
        // Phases of 1500 cycles: 0 commands hardly come, 1 headers hardly
        // come (records of short packets pile up), 2 and 3 everything flows.
        let phase = cycle / 1500 % 4;
        if !held[0] {
            set(defs, ins, "s_hdr_valid", u64::from(r.below(if phase == 1 { 200 } else { 3 }) == 0));
            for d in defs.iter().filter(|d| d.name.starts_with("s_hdr_") && d.name != "s_hdr_valid") {
                let i = defs.iter().position(|e| e.name == d.name).unwrap();
                ins[i] = random(r, d.width);
            }
        }
        if !held[1] {
            if left == 0 {
                left = match r.below(8) {
                    // Short packets while headers hardly come fill the
                    // record FIFO before the ring.
                    _ if phase == 1 => 1 + r.below(3),
                    0..=2 => 1,
                    3 => maxb,
                    4 => maxb + 1 + r.below(3),
                    _ => 1 + r.below(maxb),
                };
            }
            set(defs, ins, "s_axis_tvalid", u64::from(r.below(3) != 0));
            set(defs, ins, "s_axis_tlast", u64::from(left == 1));
            set(defs, ins, "s_axis_tuser", u64::from(r.below(4) == 0));
            for n in ["s_axis_tdata", "s_axis_tkeep"] {
                let i = defs.iter().position(|e| e.name == n).unwrap();
                ins[i] = random(r, defs[i].width);
            }
        }
        if !held[2] {
            set(defs, ins, "s_pay_valid", u64::from(r.below(if phase == 0 { 100 } else { 2 }) == 0));
            set(defs, ins, "s_pay_drop", u64::from(r.below(3) == 0));
        }
        set(defs, ins, "m_hdr_ready", u64::from(r.below(10) < 6));
        set(defs, ins, "m_axis_tready", u64::from(r.below(10) < 7));
    });
    if have("iverilog", "-V") {
        for s in seen {
            let all = [s.headers, s.sent, s.dropped, s.last_beats, s.oversize, s.axis_refused, s.hdr_refused];
            assert!(all.iter().all(|&n| n >= 10) && s.hdr_held >= 10 && s.out_held >= 10, "{seen:?}");
        }
    }
}
