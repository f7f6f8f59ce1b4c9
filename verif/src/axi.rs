//! An AXI4 write slave standing in for host memory, for blocks with an AXI4
//! write master (`m_axi_aw*`, `m_axi_w*`, `m_axi_b*`).
//!
//! [`crate::Traffic`] drives `awready` and `wready` as it drives every
//! output's ready (random backpressure); this slave answers the B channel:
//! once a burst has both its AW and its last W beat (W may run ahead of
//! AW), its response is due after a random latency, in burst order, held
//! until `bready`. A chosen share of responses are errors (SLVERR, or a
//! `bid` other than 0). The written bytes (`wstrb` lanes) land in a sparse
//! memory the tests can read back, and the slave flags what a memory would
//! refuse: a burst across a 4 KiB boundary, a W burst whose beat count is
//! not its AW's `awlen + 1`.

use std::collections::{HashMap, VecDeque};

use mrnic_model::block::{port_index, Bits, PortDef};

use crate::coverage::Coverage;
use crate::stimulus::{set_u64, Rng};

const PAGE: u64 = 4096;

#[derive(Clone, Copy, Debug)]
struct Ports {
    awvalid: usize,
    awready: usize,
    awaddr: usize,
    awlen: usize,
    awsize: usize,
    wvalid: usize,
    wready: usize,
    wdata: usize,
    wstrb: usize,
    wlast: usize,
    bvalid: usize,
    bready: usize,
    bid: usize,
    bresp: usize,
}

#[derive(Clone, Copy, Debug)]
struct Bins {
    burst: usize,
    b_error: usize,
    b_wait: usize,
    b_latency_0: usize,
    w_ahead: usize,
    page_end: usize,
}

/// The B-channel responder and memory; see the module docs.
pub struct AxiWriteSlave {
    p: Ports,
    bid_width: u32,
    /// Responses wait `0..=max_latency` cycles after they are due.
    pub max_latency: u64,
    /// Percent of responses that are errors.
    pub error_percent: u32,
    /// AWs taken and not yet paired with a finished W burst: (addr, beats, size).
    aws: VecDeque<(u64, u32, u32)>,
    /// W bursts finished and not yet paired with an AW: their beats.
    wbursts: VecDeque<Vec<(Bits, Bits)>>,
    /// Beats of the W burst in progress.
    wcur: Vec<(Bits, Bits)>,
    /// Cycles at which the next responses may be offered, in order.
    due: VecDeque<u64>,
    /// The response on the B channel, held until bready: (bid, bresp).
    b: Option<(u64, u64)>,
    b_offered_at: u64,
    memory: HashMap<u64, Box<[u8; PAGE as usize]>>,
    pub bursts: u64,
    pub responses: u64,
    pub errors: u64,
    bins: Option<Bins>,
    /// When set, the address ranges `[base, end)` a write may touch: every
    /// byte written (strobe set) outside them is counted in `outside` and
    /// its first addresses kept in `outside_at` (the hostile tests' check
    /// that nothing lands outside a registered region).
    pub guard: Option<Vec<(u64, u64)>>,
    pub outside: u64,
    pub outside_at: Vec<u64>,
    /// Bytes written (strobe set).
    pub written: u64,
}

impl AxiWriteSlave {
    /// The slave on the AXI ports whose names start with `prefix` (`m_axi_`).
    pub fn new(ports: &[PortDef], prefix: &str) -> Result<AxiWriteSlave, String> {
        let idx = |n: &str| {
            let name = format!("{prefix}{n}");
            port_index(ports, &name).ok_or_else(|| format!("no AXI port `{name}`"))
        };
        let p = Ports {
            awvalid: idx("awvalid")?,
            awready: idx("awready")?,
            awaddr: idx("awaddr")?,
            awlen: idx("awlen")?,
            awsize: idx("awsize")?,
            wvalid: idx("wvalid")?,
            wready: idx("wready")?,
            wdata: idx("wdata")?,
            wstrb: idx("wstrb")?,
            wlast: idx("wlast")?,
            bvalid: idx("bvalid")?,
            bready: idx("bready")?,
            bid: idx("bid")?,
            bresp: idx("bresp")?,
        };
        Ok(AxiWriteSlave {
            bid_width: ports[p.bid].width,
            p,
            max_latency: 6,
            error_percent: 0,
            aws: VecDeque::new(),
            wbursts: VecDeque::new(),
            wcur: Vec::new(),
            due: VecDeque::new(),
            b: None,
            b_offered_at: 0,
            memory: HashMap::new(),
            bursts: 0,
            responses: 0,
            errors: 0,
            bins: None,
            guard: None,
            outside: 0,
            outside_at: Vec::new(),
            written: 0,
        })
    }

    /// The B channel's ports (the [`crate::Traffic`] must not drive them).
    pub fn b_ports(&self) -> [usize; 4] {
        [self.p.bvalid, self.p.bready, self.p.bid, self.p.bresp]
    }

    /// Declares the slave's coverage bins.
    pub fn declare(&mut self, cov: &mut Coverage) {
        self.bins = Some(Bins {
            burst: cov.bin("axi: burst written"),
            b_error: cov.bin("axi: error response (SLVERR or bid != 0)"),
            b_wait: cov.bin("axi: B held while bready low"),
            b_latency_0: cov.bin("axi: B in the cycle after the last W"),
            w_ahead: cov.bin("axi: W burst done before its AW"),
            page_end: cov.bin("axi: burst ends at a 4 KiB boundary"),
        });
    }

    /// Empties every queue (reset); memory keeps its contents.
    pub fn reset(&mut self) {
        self.aws.clear();
        self.wbursts.clear();
        self.wcur.clear();
        self.due.clear();
        self.b = None;
    }

    /// Drives `bvalid`, `bid`, `bresp` for `cycle`.
    pub fn drive(&mut self, rng: &mut Rng, cycle: u64, values: &mut [Bits], in_reset: bool) {
        if in_reset {
            self.reset();
        }
        if self.b.is_none() && self.due.front().is_some_and(|&d| d <= cycle) {
            self.due.pop_front();
            let err = rng.percent(self.error_percent);
            let (id, resp) = match (err, rng.percent(50)) {
                (false, _) => (0, 0),
                (true, true) => (0, 2 + rng.below(2)),
                (true, false) => (1 + rng.below((1u64 << self.bid_width) - 1), 0),
            };
            self.b = Some((id, resp));
            self.b_offered_at = cycle;
        }
        set_u64(&mut values[self.p.bvalid], 1, self.b.is_some() as u64);
        let (id, resp) = self.b.unwrap_or((rng.next_u64(), rng.next_u64()));
        set_u64(&mut values[self.p.bid], self.bid_width, id);
        set_u64(&mut values[self.p.bresp], 2, resp);
    }

    /// Sees the cycle's handshakes; problems go to `violations`.
    pub fn observe(
        &mut self,
        rng: &mut Rng,
        cycle: u64,
        values: &[Bits],
        in_reset: bool,
        cov: &mut Coverage,
        violations: &mut Vec<String>,
    ) {
        if in_reset {
            return;
        }
        let p = self.p;
        let bins = self.bins;
        let hs = |v: usize, r: usize| values[v].bit(0) && values[r].bit(0);
        if let Some((id, resp)) = self.b {
            if values[p.bready].bit(0) {
                self.responses += 1;
                if id != 0 || resp != 0 {
                    self.errors += 1;
                    if let Some(b) = bins {
                        cov.hit(b.b_error);
                    }
                }
                self.b = None;
            } else if let Some(b) = bins {
                cov.hit(b.b_wait);
            }
        }
        if hs(p.awvalid, p.awready) {
            let addr = values[p.awaddr].as_u64();
            let beats = values[p.awlen].as_u64() as u32 + 1;
            let size = 1u32 << values[p.awsize].as_u64();
            let first = addr & !(size as u64 - 1);
            // Wrapping: a burst may end exactly at 2^64 (a region at the top
            // of the address space).
            let end = first.wrapping_add(beats as u64 * size as u64);
            if addr / PAGE != end.wrapping_sub(1) / PAGE && violations.len() < 10 {
                violations.push(format!("cycle {cycle}: AW {addr:#x} awlen {} crosses a 4 KiB boundary", beats - 1));
            }
            if let Some(b) = bins {
                if end % PAGE == 0 {
                    cov.hit(b.page_end);
                }
            }
            self.aws.push_back((addr, beats, size));
        }
        if hs(p.wvalid, p.wready) {
            self.wcur.push((values[p.wdata].clone(), values[p.wstrb].clone()));
            if values[p.wlast].bit(0) {
                let burst = std::mem::take(&mut self.wcur);
                if self.aws.is_empty() {
                    if let Some(b) = bins {
                        cov.hit(b.w_ahead);
                    }
                }
                self.wbursts.push_back(burst);
            }
        }
        while !self.aws.is_empty() && !self.wbursts.is_empty() {
            let (addr, beats, size) = self.aws.pop_front().unwrap_or_default();
            let w = self.wbursts.pop_front().unwrap_or_default();
            if w.len() != beats as usize && violations.len() < 10 {
                violations.push(format!(
                    "cycle {cycle}: W burst of {} beats for AW {addr:#x} awlen {} ({beats} beats)",
                    w.len(),
                    beats - 1
                ));
            }
            self.store(addr, size, &w);
            self.bursts += 1;
            if let Some(b) = bins {
                cov.hit(b.burst);
            }
            let wait = if self.max_latency == 0 { 0 } else { rng.below(self.max_latency + 1) };
            if wait == 0 {
                if let Some(b) = bins {
                    cov.hit(b.b_latency_0);
                }
            }
            // Responses stay in burst order.
            let at = (cycle + 1 + wait).max(self.due.back().copied().unwrap_or(0));
            self.due.push_back(at);
        }
    }

    fn store(&mut self, addr: u64, size: u32, beats: &[(Bits, Bits)]) {
        let first = addr & !(size as u64 - 1);
        for (k, (data, strb)) in beats.iter().enumerate() {
            let base = first.wrapping_add(k as u64 * size as u64);
            for lane in 0..size {
                if strb.bit(lane) {
                    let byte = (data.0[(lane / 8) as usize] >> (8 * (lane % 8))) as u8;
                    let a = base.wrapping_add(lane as u64);
                    self.written += 1;
                    if self.guard.as_ref().is_some_and(|g| !g.iter().any(|&(lo, hi)| a >= lo && a < hi)) {
                        self.outside += 1;
                        if self.outside_at.len() < 8 {
                            self.outside_at.push(a);
                        }
                    }
                    let page = self.memory.entry(a / PAGE).or_insert_with(|| Box::new([0; PAGE as usize]));
                    page[(a % PAGE) as usize] = byte;
                }
            }
        }
    }

    /// `len` bytes of memory from `addr` (never written bytes read 0).
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                let a = addr.wrapping_add(i);
                self.memory.get(&(a / PAGE)).map_or(0, |p| p[(a % PAGE) as usize])
            })
            .collect()
    }

    /// Bursts addressed or written and not yet answered.
    pub fn outstanding(&self) -> usize {
        self.aws.len().max(self.wbursts.len()) + self.due.len() + self.b.is_some() as usize
    }

    /// The cycle the current response was first offered.
    pub fn b_offered_at(&self) -> Option<u64> {
        self.b.map(|_| self.b_offered_at)
    }
}
