//! Seeded stimulus with valid/ready discipline.
//!
//! [`Traffic`] finds the streams of a block from its port names
//! (`<prefix>valid` / `<prefix>ready` plus the other ports starting with
//! `<prefix>`), then each cycle: holds every source's valid and payload
//! stable until the handshake, inserts random idle cycles, drives random
//! backpressure on every output's ready, and checks that the block keeps
//! its outputs' valid and payload stable while stalled. A test only says
//! what its transactions look like ([`Traffic::source`]); everything else is
//! random, from one seeded [`Rng`] (no global randomness: a failure's seed
//! reproduces it).

use std::collections::VecDeque;

use mrnic_model::block::{Bits, Dir, PortDef};

use crate::axi::AxiWriteSlave;
use crate::coverage::Coverage;

/// A small, fast, seeded PRNG (xoshiro256**, seeded through splitmix64).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^ (z >> 31)
        };
        Rng { s: [next(), next(), next(), next()] }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// `true` with probability `percent`/100.
    pub fn percent(&mut self, percent: u32) -> bool {
        self.below(100) < percent as u64
    }

    /// A random value of `width` bits.
    pub fn bits(&mut self, width: u32) -> Bits {
        let mut b = Bits(Vec::new());
        self.fill(&mut b, width);
        b
    }

    /// Overwrites `b` with a random value of `width` bits, reusing its words.
    pub fn fill(&mut self, b: &mut Bits, width: u32) {
        b.0.clear();
        b.0.extend((0..width.div_ceil(64).max(1)).map(|_| self.next_u64()));
        b.truncate(width);
    }
}

/// Sets `b` to `v` (masked to `width`), reusing its words.
pub fn set_u64(b: &mut Bits, width: u32, v: u64) {
    b.0.clear();
    b.0.push(v);
    b.truncate(width);
}

/// What drives a block, cycle by cycle.
pub trait Stimulus {
    /// Sets the inputs of `cycle`. Entries of output ports are ignored (the
    /// harness may leave the last cycle's outputs there); entries of inputs
    /// hold what the last call set, masked to the port widths.
    fn drive(&mut self, cycle: u64, values: &mut [Bits]);
    /// Sees the cycle's inputs and outputs after eval, before the edge:
    /// handshakes happen here.
    fn observe(&mut self, _cycle: u64, _values: &[Bits]) {}
    /// Handshakes so far, on all streams.
    fn transactions(&self) -> u64 {
        0
    }
    /// The seed that reproduces this stimulus, printed on failure.
    fn seed(&self) -> Option<u64> {
        None
    }
    /// Functional coverage counted so far, if the stimulus counts any.
    fn coverage(&self) -> Option<&Coverage> {
        None
    }
}

/// A valid/ready stream found in a port list.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Common prefix, e.g. `s_axis_` (ports `s_axis_valid`, `s_axis_ready`).
    pub prefix: String,
    pub valid: usize,
    pub ready: usize,
    /// Payload ports, in port order.
    pub fields: Vec<usize>,
    /// `true` when the block receives on it (valid is an input).
    pub into_block: bool,
}

/// The streams of a port list: every `<p>valid` with a `<p>ready` of the
/// opposite direction. Payload fields are the other ports starting with
/// `<p>` (the longest matching prefix wins when prefixes nest).
pub fn find_streams(ports: &[PortDef]) -> Vec<Stream> {
    let mut streams: Vec<Stream> = Vec::new();
    for (v, p) in ports.iter().enumerate() {
        let Some(prefix) = p.name.strip_suffix("valid") else { continue };
        let Some(r) = ports.iter().position(|q| q.name == format!("{prefix}ready") && q.dir != p.dir) else {
            continue;
        };
        streams.push(Stream {
            prefix: prefix.to_string(),
            valid: v,
            ready: r,
            fields: Vec::new(),
            into_block: p.dir == Dir::In,
        });
    }
    for (i, p) in ports.iter().enumerate() {
        if streams.iter().any(|s| s.valid == i || s.ready == i) {
            continue;
        }
        let best = streams
            .iter_mut()
            .filter(|s| p.name.starts_with(&s.prefix))
            .filter(|s| p.dir == ports[s.valid].dir)
            .max_by_key(|s| s.prefix.len());
        if let Some(s) = best {
            s.fields.push(i);
        }
    }
    streams
}

/// One transaction of a source stream: payload values by field name
/// (without the stream prefix); fields left unset are random.
pub struct Txn<'a> {
    names: &'a [String],
    widths: &'a [u32],
    values: Vec<Option<Bits>>,
    skip: bool,
}

impl Txn<'_> {
    /// Offers nothing this cycle (the generator has no transaction ready:
    /// a payload stream waiting for its request, say); asked again next cycle.
    pub fn skip(&mut self) -> &mut Self {
        self.skip = true;
        self
    }

    /// Sets field `name` (e.g. `data` of `s_axis_data`).
    pub fn set(&mut self, name: &str, value: Bits) -> &mut Self {
        let i = self.index(name);
        let mut v = value;
        v.truncate(self.widths[i]);
        self.values[i] = Some(v);
        self
    }

    pub fn set_u64(&mut self, name: &str, value: u64) -> &mut Self {
        let i = self.index(name);
        self.values[i] = Some(Bits::from_u64(self.widths[i], value));
        self
    }

    pub fn width(&self, name: &str) -> u32 {
        self.widths[self.index(name)]
    }

    fn index(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("stream has no field `{name}` (fields: {})", self.names.join(", ")))
    }
}

type TxnGen = Box<dyn FnMut(&mut Rng, &mut Txn)>;
/// Drives a free input: writes the cycle's value into the port's buffer.
type InputGen = Box<dyn FnMut(&mut Rng, u64, &mut Bits)>;
/// Sees every cycle's port values after eval (and whether the cycle is a
/// reset) and counts coverage; see [`Traffic::monitor`].
pub type Monitor = Box<dyn FnMut(&[Bits], bool, &mut Coverage)>;

struct Source {
    stream: Stream,
    names: Vec<String>,
    widths: Vec<u32>,
    gen: Option<TxnGen>,
    queue: VecDeque<Vec<Bits>>,
    current: Option<Vec<Bits>>,
    idle_percent: u32,
    sent: u64,
    /// Coverage bins: handshake, and offered while the block is not ready.
    bin_handshake: usize,
    bin_stalled: usize,
}

struct Sink {
    stream: Stream,
    ready: bool,
    backpressure_percent: u32,
    /// Valid was high and ready low last cycle: valid and the payload
    /// (`held`) must hold.
    stalled: bool,
    held: Vec<Bits>,
    received: u64,
    keep: bool,
    log: Vec<Vec<Bits>>,
    /// Coverage bins: handshake, and valid held against backpressure.
    bin_handshake: usize,
    bin_backpressure: usize,
}

/// Random valid/ready traffic for any block: see the module docs.
pub struct Traffic {
    seed: u64,
    rng: Rng,
    ports: Vec<PortDef>,
    sources: Vec<Source>,
    sinks: Vec<Sink>,
    rst: Option<usize>,
    reset_cycles: u64,
    reset_percent_per_mille: u32,
    in_reset: bool,
    others: Vec<(usize, Option<InputGen>)>,
    other_change_percent: u32,
    idle_noise: bool,
    violations: Vec<String>,
    coverage: Coverage,
    monitors: Vec<Monitor>,
    axi: Option<AxiWriteSlave>,
}

impl Traffic {
    /// Traffic for `ports` from `seed`: 25% idle cycles on every source,
    /// 25% backpressure on every sink, `rst` high for the first 2 cycles,
    /// other inputs random (changing in 5% of the cycles).
    pub fn new(ports: &[PortDef], seed: u64) -> Traffic {
        let streams = find_streams(ports);
        let mut coverage = Coverage::new();
        let mut sources = Vec::new();
        let mut sinks = Vec::new();
        for s in streams {
            if s.into_block {
                let names = s.fields.iter().map(|&f| ports[f].name[s.prefix.len()..].to_string()).collect();
                let widths = s.fields.iter().map(|&f| ports[f].width).collect();
                sources.push(Source {
                    names,
                    widths,
                    gen: None,
                    queue: VecDeque::new(),
                    current: None,
                    idle_percent: 25,
                    sent: 0,
                    bin_handshake: coverage.bin(format!("{}: handshake", s.prefix)),
                    bin_stalled: coverage.bin(format!("{}: offered while the block is not ready", s.prefix)),
                    stream: s,
                });
            } else {
                sinks.push(Sink {
                    bin_handshake: coverage.bin(format!("{}: handshake", s.prefix)),
                    bin_backpressure: coverage.bin(format!("{}: valid held against backpressure", s.prefix)),
                    stream: s,
                    ready: false,
                    backpressure_percent: 25,
                    stalled: false,
                    held: Vec::new(),
                    received: 0,
                    keep: false,
                    log: Vec::new(),
                });
            }
        }
        let in_stream = |i: usize| {
            sources.iter().any(|s| s.stream.valid == i || s.stream.fields.contains(&i))
                || sinks.iter().any(|s| s.stream.ready == i)
        };
        let rst = ports.iter().position(|p| p.name == "rst" && p.dir == Dir::In);
        let others = (0..ports.len())
            .filter(|&i| ports[i].dir == Dir::In && Some(i) != rst && !in_stream(i))
            .map(|i| (i, None))
            .collect();
        Traffic {
            seed,
            rng: Rng::new(seed),
            ports: ports.to_vec(),
            sources,
            sinks,
            rst,
            reset_cycles: 2,
            reset_percent_per_mille: 0,
            in_reset: false,
            others,
            other_change_percent: 5,
            idle_noise: true,
            violations: Vec::new(),
            coverage,
            monitors: Vec::new(),
            axi: None,
        }
    }

    /// Counts block-specific coverage: `declare` adds the bins (and
    /// returns what the monitor needs, port indices and bin indices, so
    /// the per-cycle work is index arithmetic), `monitor` runs every cycle
    /// on all port values after eval, with `true` in reset cycles (when it
    /// should count nothing, and may forget what it tracks).
    pub fn monitor<S: 'static>(
        mut self,
        declare: impl FnOnce(&mut Coverage) -> S,
        mut monitor: impl FnMut(&mut S, &[Bits], bool, &mut Coverage) + 'static,
    ) -> Self {
        let mut state = declare(&mut self.coverage);
        self.monitors.push(Box::new(move |v, r, c| monitor(&mut state, v, r, c)));
        self
    }

    /// Answers the AXI4 write channels of ports `<prefix>aw*`, `w*`, `b*`
    /// as host memory does (see [`AxiWriteSlave`]): responses after
    /// `0..=max_latency` cycles, `error_percent` of them errors.
    pub fn axi_write_slave(mut self, prefix: &str, max_latency: u64, error_percent: u32) -> Self {
        let mut axi = AxiWriteSlave::new(&self.ports, prefix).unwrap_or_else(|e| panic!("axi_write_slave: {e}"));
        axi.max_latency = max_latency;
        axi.error_percent = error_percent;
        axi.declare(&mut self.coverage);
        // The B channel is the slave's, not a random source.
        let b = axi.b_ports();
        for s in self.sources.iter().filter(|s| b.contains(&s.stream.valid)) {
            self.coverage.retire(&format!("{}: handshake", s.stream.prefix));
            self.coverage.retire(&format!("{}: offered while the block is not ready", s.stream.prefix));
        }
        self.sources.retain(|s| !b.contains(&s.stream.valid));
        self.others.retain(|(i, _)| !b.contains(i));
        self.axi = Some(axi);
        self
    }

    /// Counts every byte the AXI write slave is asked to write outside
    /// `ranges` (`[base, end)`); see [`AxiWriteSlave::guard`].
    pub fn axi_guard(mut self, ranges: Vec<(u64, u64)>) -> Self {
        if let Some(a) = self.axi.as_mut() {
            a.guard = Some(ranges);
        }
        self
    }

    /// The AXI write slave, if [`Traffic::axi_write_slave`] set one up.
    pub fn axi(&self) -> Option<&AxiWriteSlave> {
        self.axi.as_ref()
    }

    /// Coverage counted so far.
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// Percentage of cycles each source waits before offering its next
    /// transaction (0: back to back).
    pub fn idle(mut self, percent: u32) -> Self {
        for s in &mut self.sources {
            s.idle_percent = percent;
        }
        self
    }

    /// Percentage of cycles every output's ready is low.
    pub fn backpressure(mut self, percent: u32) -> Self {
        for s in &mut self.sinks {
            s.backpressure_percent = percent;
        }
        self
    }

    /// Whether a source drives random payloads while its valid is low
    /// (default: yes, a block must ignore them); off, the last payload holds.
    pub fn idle_noise(mut self, on: bool) -> Self {
        self.idle_noise = on;
        self
    }

    /// Cycles of reset at the start.
    pub fn reset_cycles(mut self, n: u64) -> Self {
        self.reset_cycles = n;
        self
    }

    /// Per mille of cycles with a reset in the middle of traffic.
    pub fn random_resets(mut self, per_mille: u32) -> Self {
        self.reset_percent_per_mille = per_mille;
        self
    }

    /// Percentage of cycles in which each non-stream input changes.
    pub fn other_inputs_change(mut self, percent: u32) -> Self {
        self.other_change_percent = percent;
        self
    }

    /// Describes the transactions of the source stream `prefix` (as in
    /// `s_axis_`): `gen` sets the fields it cares about.
    pub fn source(mut self, prefix: &str, gen: impl FnMut(&mut Rng, &mut Txn) + 'static) -> Self {
        let s = self.source_mut(prefix);
        s.gen = Some(Box::new(gen));
        self
    }

    /// Queues explicit transactions on `prefix`, sent before any generated one.
    pub fn push(&mut self, prefix: &str, fill: impl FnOnce(&mut Txn)) {
        let s = self.source_mut(prefix);
        let mut t = Txn { names: &s.names, widths: &s.widths, values: vec![None; s.names.len()], skip: false };
        fill(&mut t);
        let values = t.values;
        let widths = s.widths.clone();
        let txn = values.into_iter().zip(widths).map(|(v, w)| v.unwrap_or_else(|| Bits::zero(w))).collect();
        s.queue.push_back(txn);
    }

    /// Drives the non-stream input `name` from `gen` every cycle.
    pub fn input(self, name: &str, mut gen: impl FnMut(&mut Rng, u64) -> Bits + 'static) -> Self {
        self.input_with(name, move |rng, cycle, b| *b = gen(rng, cycle))
    }

    /// Drives the non-stream input `name` (at most 64 bits) from `gen`
    /// every cycle, writing in place (no allocation per cycle).
    pub fn input_u64(self, name: &str, mut gen: impl FnMut(&mut Rng, u64) -> u64 + 'static) -> Self {
        self.input_with(name, move |rng, cycle, b| b.set_u64(64, gen(rng, cycle)))
    }

    fn input_with(mut self, name: &str, gen: impl FnMut(&mut Rng, u64, &mut Bits) + 'static) -> Self {
        let i = self.ports.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("no input `{name}`"));
        let slot = self
            .others
            .iter_mut()
            .find(|(o, _)| *o == i)
            .unwrap_or_else(|| panic!("`{name}` is part of a stream or is rst; not a free input"));
        slot.1 = Some(Box::new(gen));
        self
    }

    /// Keeps every transaction received on the output stream `prefix`.
    pub fn record(mut self, prefix: &str) -> Self {
        let s = self
            .sinks
            .iter_mut()
            .find(|s| s.stream.prefix == prefix)
            .unwrap_or_else(|| panic!("no output stream `{prefix}`"));
        s.keep = true;
        self
    }

    /// Transactions received on `prefix` (see [`Traffic::record`]).
    pub fn received(&self, prefix: &str) -> &[Vec<Bits>] {
        self.sinks.iter().find(|s| s.stream.prefix == prefix).map(|s| s.log.as_slice()).unwrap_or(&[])
    }

    /// Handshakes per stream: (prefix, into the block, count).
    pub fn counts(&self) -> Vec<(String, bool, u64)> {
        let mut v: Vec<_> = self.sources.iter().map(|s| (s.stream.prefix.clone(), true, s.sent)).collect();
        v.extend(self.sinks.iter().map(|s| (s.stream.prefix.clone(), false, s.received)));
        v
    }

    /// Valid/ready rule violations by the block's outputs (a valid dropped,
    /// or a payload changed, while stalled). The first few are kept.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }

    /// The streams found.
    pub fn streams(&self) -> Vec<&Stream> {
        self.sources.iter().map(|s| &s.stream).chain(self.sinks.iter().map(|s| &s.stream)).collect()
    }

    fn source_mut(&mut self, prefix: &str) -> &mut Source {
        let have = self.sources.iter().map(|s| s.stream.prefix.clone()).collect::<Vec<_>>().join(", ");
        self.sources
            .iter_mut()
            .find(|s| s.stream.prefix == prefix)
            .unwrap_or_else(|| panic!("no input stream `{prefix}` (have: {have})"))
    }
}

impl Stimulus for Traffic {
    fn drive(&mut self, cycle: u64, values: &mut [Bits]) {
        let rng = &mut self.rng;
        self.in_reset = cycle < self.reset_cycles
            || (self.reset_percent_per_mille > 0 && rng.below(1000) < self.reset_percent_per_mille as u64);
        if let Some(r) = self.rst {
            set_u64(&mut values[r], 1, self.in_reset as u64);
        }
        for s in &mut self.sources {
            if s.current.is_none() && !self.in_reset && !rng.percent(s.idle_percent) {
                s.current = match s.queue.pop_front() {
                    Some(t) => Some(t),
                    None => {
                        let mut t =
                            Txn { names: &s.names, widths: &s.widths, values: vec![None; s.names.len()], skip: false };
                        if let Some(g) = &mut s.gen {
                            g(rng, &mut t);
                        }
                        let (values, skip) = (t.values, t.skip);
                        (!skip).then(|| {
                            values.into_iter().zip(&s.widths).map(|(v, &w)| v.unwrap_or_else(|| rng.bits(w))).collect()
                        })
                    }
                };
            }
            set_u64(&mut values[s.stream.valid], 1, s.current.is_some() as u64);
            match &s.current {
                Some(t) => {
                    for (f, v) in s.stream.fields.iter().zip(t) {
                        values[*f].clone_from(v);
                    }
                }
                // Idle: the payload is don't-care, so make it noise
                // (or hold the last one, see `idle_noise`).
                None => {
                    if self.idle_noise {
                        for (f, w) in s.stream.fields.iter().zip(&s.widths) {
                            rng.fill(&mut values[*f], *w);
                        }
                    }
                }
            }
        }
        for s in &mut self.sinks {
            s.ready = !rng.percent(s.backpressure_percent);
            set_u64(&mut values[s.stream.ready], 1, s.ready as u64);
        }
        if let Some(a) = &mut self.axi {
            a.drive(rng, cycle, values, self.in_reset);
        }
        for (i, gen) in &mut self.others {
            let w = self.ports[*i].width;
            match gen {
                Some(g) => {
                    g(rng, cycle, &mut values[*i]);
                    values[*i].truncate(w);
                }
                None => {
                    if cycle == 0 || rng.percent(self.other_change_percent) {
                        rng.fill(&mut values[*i], w);
                    }
                }
            }
        }
    }

    fn observe(&mut self, cycle: u64, values: &[Bits]) {
        for s in &mut self.sources {
            if s.current.is_some() && values[s.stream.ready].bit(0) {
                if !self.in_reset {
                    s.sent += 1;
                    self.coverage.hit(s.bin_handshake);
                }
                s.current = None;
            } else if s.current.is_some() && !self.in_reset {
                self.coverage.hit(s.bin_stalled);
            }
            if self.in_reset {
                s.current = None;
            }
        }
        for s in &mut self.sinks {
            let valid = values[s.stream.valid].bit(0);
            if s.stalled && !self.in_reset && self.violations.len() < 10 {
                if !valid {
                    self.violations.push(format!("cycle {cycle}: {}valid dropped while stalled", s.stream.prefix));
                } else if s.stream.fields.iter().zip(&s.held).any(|(&f, h)| values[f] != *h) {
                    self.violations.push(format!("cycle {cycle}: {} payload changed while stalled", s.stream.prefix));
                }
            }
            s.stalled = false;
            if valid && !self.in_reset {
                if s.ready {
                    s.received += 1;
                    self.coverage.hit(s.bin_handshake);
                    if s.keep {
                        s.log.push(s.stream.fields.iter().map(|&f| values[f].clone()).collect());
                    }
                } else {
                    // Remember the payload (reusing the buffers) to check it holds.
                    self.coverage.hit(s.bin_backpressure);
                    s.stalled = true;
                    s.held.resize(s.stream.fields.len(), Bits::default());
                    for (h, &f) in s.held.iter_mut().zip(&s.stream.fields) {
                        h.clone_from(&values[f]);
                    }
                }
            }
        }
        if let Some(a) = &mut self.axi {
            a.observe(&mut self.rng, cycle, values, self.in_reset, &mut self.coverage, &mut self.violations);
        }
        for m in &mut self.monitors {
            m(values, self.in_reset, &mut self.coverage);
        }
    }

    fn transactions(&self) -> u64 {
        self.sources.iter().map(|s| s.sent).sum::<u64>()
            + self.sinks.iter().map(|s| s.received).sum::<u64>()
            + self.axi.as_ref().map_or(0, |a| a.responses)
    }

    fn seed(&self) -> Option<u64> {
        Some(self.seed)
    }

    fn coverage(&self) -> Option<&Coverage> {
        Some(&self.coverage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports() -> Vec<PortDef> {
        vec![
            PortDef::input("rst", 1, "", ""),
            PortDef::input("s_axis_tvalid", 1, "", ""),
            PortDef::output("s_axis_tready", 1, "", ""),
            PortDef::input("s_axis_tdata", 70, "", ""),
            PortDef::input("s_req_valid", 1, "", ""),
            PortDef::output("s_req_ready", 1, "", ""),
            PortDef::input("s_req_conn", 4, "", ""),
            PortDef::output("m_sel_valid", 1, "", ""),
            PortDef::input("m_sel_ready", 1, "", ""),
            PortDef::output("m_sel_path", 2, "", ""),
            PortDef::input("enable", 3, "", ""),
        ]
    }

    #[test]
    fn streams_are_found_by_name() {
        let s = find_streams(&ports());
        let summary: Vec<_> =
            s.iter().map(|s| (s.prefix.as_str(), s.valid, s.ready, s.fields.clone(), s.into_block)).collect();
        assert_eq!(
            summary,
            [("s_axis_t", 1, 2, vec![3], true), ("s_req_", 4, 5, vec![6], true), ("m_sel_", 7, 8, vec![9], false)]
        );
    }

    #[test]
    fn rng_is_deterministic_per_seed() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(42);
                move |_| r.next_u64()
            })
            .collect();
        let mut r = Rng::new(42);
        assert_eq!(a, (0..4).map(|_| r.next_u64()).collect::<Vec<_>>());
        assert_ne!(Rng::new(43).next_u64(), a[0]);
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(10) < 10));
        let b = r.bits(70);
        assert_eq!(b.0.len(), 2);
        assert_eq!(b.0[1] >> 6, 0);
    }

    #[test]
    fn a_source_holds_valid_and_payload_until_ready() {
        let ports = ports();
        let mut t = Traffic::new(&ports, 9).idle(0).reset_cycles(0).source("s_req_", |_, t| {
            t.set_u64("conn", 5);
        });
        let mut v = mrnic_model::block::zero_values(&ports);
        // Never ready: the same request stays offered.
        for c in 0..5 {
            t.drive(c, &mut v);
            assert!(v[4].bit(0));
            assert_eq!(v[6].as_u64(), 5);
            t.observe(c, &v);
        }
        assert_eq!(t.counts()[1], ("s_req_".to_string(), true, 0));
        // Ready: it is taken.
        t.drive(5, &mut v);
        v[5] = Bits::from_u64(1, 1);
        t.observe(5, &v);
        assert_eq!(t.counts()[1], ("s_req_".to_string(), true, 1));
    }

    #[test]
    fn an_output_dropping_valid_while_stalled_is_flagged() {
        let ports = ports();
        let mut t = Traffic::new(&ports, 3).reset_cycles(0).backpressure(100);
        let mut v = mrnic_model::block::zero_values(&ports);
        t.drive(0, &mut v);
        v[7] = Bits::from_u64(1, 1);
        t.observe(0, &v);
        t.drive(1, &mut v);
        v[7] = Bits::from_u64(1, 0);
        t.observe(1, &v);
        assert_eq!(t.violations().len(), 1, "{:?}", t.violations());
        assert!(t.violations()[0].contains("m_sel_valid dropped"));
    }
}
