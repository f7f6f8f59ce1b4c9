//! `rx_parser` (small, 64-bit): the cycle model and the generated RTL in
//! lockstep over seeded random frames (valid ones of every opcode, data and
//! control, and every kind of bad one: header faults, ICRC errors,
//! truncation, tkeep holes, MAC errors, oversize frames, control frames
//! whose length disagrees with their opcode), with idle input cycles,
//! random backpressure on both outputs and mid-run resets. Every output is
//! compared every cycle. The hostile run (issue 8) mutates those frames
//! further, several faults per frame: bit flips and overwrites anywhere,
//! cuts and random tails, several `tkeep` holes, `tuser` on any beat.

use std::path::PathBuf;

use mrnic_model::block::Bits;
use mrnic_model::rx_parser::stimulus::{self, Rng};
use mrnic_model::rx_parser::{port, Beat, Reason, RxParser, RxParserParams};
use mrnic_proto::Config;
use mrnic_verif::lockstep::Options;
use mrnic_verif::stimulus::Stimulus;
use mrnic_verif::{skip_without_verilator, Lockstep};

/// Frames as beats, offered with idles; both outputs randomly stalled.
struct Frames {
    p: RxParserParams,
    rng: Rng,
    seed: u64,
    beats: Vec<Beat>,
    next: usize,
    idle: u64,
    stall: u64,
    p_bad: u64,
    valid: bool,
    handshakes: u64,
    resets: bool,
    /// Percent of frames mutated further (the hostile run).
    hostile: u64,
}

/// Several faults in one frame: what a fuzzer's frames look like, not the
/// one-fault frames of the generator.
fn mutate(rng: &mut Rng, s: &mut stimulus::Stim, beat_bytes: usize) {
    for _ in 0..1 + rng.below(4) {
        let n = s.bytes.len() as u64;
        match rng.below(5) {
            0 => {
                let i = rng.below(n * 8);
                s.bytes[(i / 8) as usize] ^= 1 << (i % 8);
            }
            1 => {
                let i = rng.below(n) as usize;
                s.bytes[i] = rng.next_u64() as u8;
            }
            2 => s.bytes.truncate(1 + rng.below(n) as usize),
            3 => {
                let most = if rng.chance(10) { 3000 } else { 64 };
                let k = rng.below(most);
                s.bytes.extend((0..k).map(|_| rng.next_u64() as u8));
            }
            _ => {
                // Bytes from the header area, where the checks look.
                let i = rng.below(n.min(94)) as usize;
                s.bytes[i] = [0, 0xff, 0x80, 0x7f][rng.below(4) as usize];
            }
        }
    }
    let beats = s.bytes.len().div_ceil(beat_bytes);
    if rng.chance(15) {
        s.mac_error_beat = Some(rng.below(beats as u64) as usize);
    }
    if rng.chance(15) {
        s.keep_hole = Some((rng.below(beats as u64) as usize, rng.below(beat_bytes as u64) as usize));
    }
}

impl Frames {
    fn refill(&mut self) {
        let mut v = Vec::new();
        for _ in 0..16 {
            let mut s = if self.rng.chance(self.p_bad) {
                let r = Reason::ALL[self.rng.below(Reason::ALL.len() as u64) as usize];
                stimulus::faulty(&mut self.rng, r, self.p.mtu, 4797, self.p.bytes())
            } else {
                stimulus::good(&mut self.rng, self.p.mtu, 4797)
            };
            if self.hostile > 0 && self.rng.chance(self.hostile) && !s.bytes.is_empty() {
                mutate(&mut self.rng, &mut s, self.p.bytes());
            }
            v.extend(stimulus::beats(&s, self.p.bytes(), &mut self.rng));
        }
        self.beats = v;
        self.next = 0;
    }
}

impl Stimulus for Frames {
    fn drive(&mut self, cycle: u64, values: &mut [Bits]) {
        if self.next >= self.beats.len() {
            self.refill();
        }
        // A reset now and then, only between frames (a mid-frame reset is
        // legal too, but the next beats would then start mid-frame).
        let rst = cycle < 2 || (self.resets && self.next == 0 && self.rng.chance(2));
        values[port::RST] = Bits::from_u64(1, rst as u64);
        values[port::CFG_UDP_PORT] = Bits::from_u64(16, 4797);
        values[port::M_HDR_READY] = Bits::from_u64(1, !self.rng.chance(self.stall) as u64);
        values[port::M_TREADY] = Bits::from_u64(1, !self.rng.chance(self.stall) as u64);
        self.valid = !rst && !self.rng.chance(self.idle);
        let b = &self.beats[self.next];
        let mut d = Bits::zero(self.p.data_bits);
        for (n, &x) in b.data.iter().enumerate() {
            d.0[n / 8] |= (x as u64) << (8 * (n % 8));
        }
        values[port::S_TDATA] = d;
        values[port::S_TKEEP] = Bits::from_u64(self.p.bytes() as u32, b.keep as u64);
        values[port::S_TLAST] = Bits::from_u64(1, b.last as u64);
        values[port::S_TUSER] = Bits::from_u64(1, b.user as u64);
        values[port::S_TID] = Bits::from_u64(3, self.rng.below(8));
        values[port::S_TVALID] = Bits::from_u64(1, self.valid as u64);
    }

    fn observe(&mut self, _cycle: u64, values: &[Bits]) {
        if self.valid && values[port::S_TREADY].bit(0) {
            self.next += 1;
            self.handshakes += 1;
        }
        for i in [port::M_HDR_VALID, port::M_TVALID] {
            if values[i].bit(0) && values[i + 1].bit(0) {
                self.handshakes += 1;
            }
        }
    }

    fn transactions(&self) -> u64 {
        self.handshakes
    }

    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }
}

#[allow(clippy::too_many_arguments)]
fn run(test: &str, seed: u64, cycles: u64, idle: u64, stall: u64, p_bad: u64, resets: bool, hostile: u64) {
    if skip_without_verilator() {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let p = RxParserParams::from_config(&cfg).unwrap();
    let vcd_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif").join(test);
    let opts = Options { vcd_dir: Some(vcd_dir), ..Options::default() };
    let mut ls =
        Lockstep::new(Box::new(move || Box::new(RxParser::new(p))), "small", opts).unwrap_or_else(|e| panic!("{e}"));
    let mut stim = Frames {
        p,
        rng: Rng::new(seed),
        seed,
        beats: Vec::new(),
        next: 0,
        idle,
        stall,
        p_bad,
        valid: false,
        handshakes: 0,
        resets,
        hostile,
    };
    let stats = ls.run(&mut stim, cycles).unwrap_or_else(|m| panic!("rx_parser (small) lockstep failed:\n{m}"));
    println!("rx_parser (small), seed {seed}: {} cycles, {} transactions", stats.cycles, stats.transactions);
    assert!(stats.transactions > cycles / 4, "seed {seed}: too little traffic");
}

#[test]
fn small_random_frames_idle_and_backpressure() {
    run("rx_small_random", 0x5eed_0001, 100_000, 20, 30, 30, true, 0);
}

#[test]
fn small_back_to_back_without_backpressure() {
    run("rx_small_b2b", 0x5eed_0002, 50_000, 0, 0, 20, false, 0);
}

#[test]
fn small_heavy_backpressure() {
    run("rx_small_bp", 0x5eed_0003, 50_000, 0, 85, 30, false, 0);
}

/// Issue 8, RTL under attack at block level: 70% of the frames carry
/// several faults at once, with idles, backpressure and resets; the RTL
/// must match the model on every output every cycle.
#[test]
fn small_hostile_multi_fault_frames() {
    let cycles = if std::env::var("MRNIC_COSIM_FULL").is_ok_and(|v| v == "1") { 2_000_000 } else { 200_000 };
    run("rx_small_hostile", 0x5eed_0666, cycles, 10, 40, 50, true, 70);
}

/// The `mrnic cosim` session of the block (frames from the same generator,
/// one beat per transaction), with its coverage: every opcode, every NACK
/// code, empty and full SACK bitmaps, every drop reason, and every drop
/// reason on a frame of the control range.
#[test]
fn small_session_covers_every_opcode_and_drop_reason() {
    if skip_without_verilator() {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let s = mrnic_verif::blocks::session("rx_parser", &cfg, "small", 0x5eed_0004).unwrap();
    let vcd_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verif").join("rx_small_session");
    let opts = Options { vcd_dir: Some(vcd_dir), ..Options::default() };
    let mut ls = Lockstep::new(s.make_model, s.config, opts).unwrap_or_else(|e| panic!("{e}"));
    let mut t = s.traffic;
    let cycles = if std::env::var("MRNIC_COSIM_FULL").is_ok_and(|v| v == "1") { 1_000_000 } else { 60_000 };
    ls.run(&mut t, cycles).unwrap_or_else(|m| panic!("rx_parser session lockstep failed:\n{m}"));
    assert!(t.violations().is_empty(), "{:?}", t.violations());
    let cov = t.coverage();
    println!("{cov}");
    let holes = cov.holes();
    assert!(holes.is_empty(), "{holes:?}\n{cov}");
}
