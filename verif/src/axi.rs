//! Host memory for blocks with AXI4 masters: a write slave for
//! `m_axi_aw*`, `m_axi_w*`, `m_axi_b*` ([`AxiWriteSlave`]) and a read slave
//! for `m_axi_ar*`, `m_axi_r*` ([`AxiReadSlave`]), both on one sparse
//! [`Pages`] memory when a bench has both (the NIC top: dma_write_engine
//! writes, tx_engine reads).
//!
//! # The write slave
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
    /// What was written; never written bytes read 0.
    pub memory: Pages,
    /// When set, every burst written, in order: its first strobed address
    /// and its strobed bytes (a bench's record of the memory writes).
    pub log: Option<Vec<(u64, Vec<u8>)>>,
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
            memory: Pages::default(),
            log: None,
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
        let mut logged: Option<(u64, Vec<u8>)> = None;
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
                    self.memory.write(a, &[byte]);
                    if self.log.is_some() {
                        logged.get_or_insert((a, Vec::new())).1.push(byte);
                    }
                }
            }
        }
        if let (Some(log), Some(w)) = (self.log.as_mut(), logged) {
            log.push(w);
        }
    }

    /// `len` bytes of memory from `addr` (never written bytes read 0).
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        self.memory.read(addr, len)
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

/// Sparse byte memory in 4 KiB pages; bytes never written read 0.
#[derive(Debug, Clone, Default)]
pub struct Pages(HashMap<u64, Box<[u8; PAGE as usize]>>);

impl Pages {
    /// Writes `data` from `addr` (wrapping at 2^64).
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        for (i, b) in data.iter().enumerate() {
            let a = addr.wrapping_add(i as u64);
            self.0.entry(a / PAGE).or_insert_with(|| Box::new([0; PAGE as usize]))[(a % PAGE) as usize] = *b;
        }
    }

    /// `len` bytes from `addr`.
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                let a = addr.wrapping_add(i);
                self.0.get(&(a / PAGE)).map_or(0, |p| p[(a % PAGE) as usize])
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug)]
struct RPorts {
    arvalid: usize,
    arready: usize,
    araddr: usize,
    arlen: usize,
    arsize: usize,
    arid: usize,
    rvalid: usize,
    rready: usize,
    rdata: usize,
    rresp: usize,
    rlast: usize,
    rid: usize,
}

/// An AXI4 read slave on a [`Pages`] memory: `arready` low a chosen share
/// of cycles, each burst's first beat due a random `0..=max_latency` cycles
/// after its AR (bursts answered in order, as one ID's must be), a chosen
/// share of beat slots left empty, and a chosen share of bursts answered
/// SLVERR on every beat. Data is read when a beat is first offered and held
/// with it until `rready`. Flags what a memory would refuse: a burst across
/// a 4 KiB boundary.
pub struct AxiReadSlave {
    p: RPorts,
    data_width: u32,
    id_width: u32,
    /// Cycles a burst waits after its AR, at most.
    pub max_latency: u64,
    /// Percent of cycles `arready` is low.
    pub ar_busy_percent: u32,
    /// Percent of beat slots with no beat.
    pub r_gap_percent: u32,
    /// Percent of bursts answered SLVERR.
    pub error_percent: u32,
    /// Bursts taken: (addr, beats, size, id, cycle due, error).
    bursts: VecDeque<(u64, u32, u32, u64, u64, bool)>,
    /// Beats of the head burst already taken.
    beat: u32,
    /// The beat on the R channel, held until rready: (data, resp, last, id).
    r: Option<(Bits, u64, bool, u64)>,
    arready: bool,
    pub bursts_read: u64,
}

impl AxiReadSlave {
    /// The slave on the AXI read ports whose names start with `prefix`.
    pub fn new(ports: &[PortDef], prefix: &str) -> Result<AxiReadSlave, String> {
        let idx = |n: &str| {
            let name = format!("{prefix}{n}");
            port_index(ports, &name).ok_or_else(|| format!("no AXI port `{name}`"))
        };
        let p = RPorts {
            arvalid: idx("arvalid")?,
            arready: idx("arready")?,
            araddr: idx("araddr")?,
            arlen: idx("arlen")?,
            arsize: idx("arsize")?,
            arid: idx("arid")?,
            rvalid: idx("rvalid")?,
            rready: idx("rready")?,
            rdata: idx("rdata")?,
            rresp: idx("rresp")?,
            rlast: idx("rlast")?,
            rid: idx("rid")?,
        };
        Ok(AxiReadSlave {
            data_width: ports[p.rdata].width,
            id_width: ports[p.rid].width,
            p,
            max_latency: 4,
            ar_busy_percent: 0,
            r_gap_percent: 0,
            error_percent: 0,
            bursts: VecDeque::new(),
            beat: 0,
            r: None,
            arready: true,
            bursts_read: 0,
        })
    }

    /// Empties every queue (reset).
    pub fn reset(&mut self) {
        self.bursts.clear();
        self.beat = 0;
        self.r = None;
    }

    /// Bursts requested and not yet read to their last beat.
    pub fn outstanding(&self) -> usize {
        self.bursts.len()
    }

    /// Drives `arready` and the R channel for `cycle` from `mem`.
    pub fn drive(&mut self, rng: &mut Rng, cycle: u64, values: &mut [Bits], mem: &Pages) {
        self.arready = !rng.percent(self.ar_busy_percent);
        if self.r.is_none() {
            if let Some(&(addr, beats, size, id, due, err)) = self.bursts.front() {
                if due <= cycle && !rng.percent(self.r_gap_percent) {
                    let first = addr & !(size as u64 - 1);
                    let at = first.wrapping_add(self.beat as u64 * size as u64);
                    let mut data = Bits::zero(self.data_width);
                    for (k, byte) in mem.read(at, size as usize).into_iter().enumerate() {
                        data.0[k / 8] |= (byte as u64) << (8 * (k % 8));
                    }
                    self.r = Some((data, if err { 2 } else { 0 }, self.beat + 1 == beats, id));
                }
            }
        }
        set_u64(&mut values[self.p.arready], 1, self.arready as u64);
        set_u64(&mut values[self.p.rvalid], 1, self.r.is_some() as u64);
        let (data, resp, last, id) = self.r.clone().unwrap_or((Bits::zero(self.data_width), 0, false, 0));
        values[self.p.rdata] = data;
        set_u64(&mut values[self.p.rresp], 2, resp);
        set_u64(&mut values[self.p.rlast], 1, last as u64);
        set_u64(&mut values[self.p.rid], self.id_width, id);
    }

    /// Sees the cycle's handshakes; problems go to `violations`.
    pub fn observe(&mut self, rng: &mut Rng, cycle: u64, values: &[Bits], violations: &mut Vec<String>) {
        let p = self.p;
        if self.r.is_some() && values[p.rready].bit(0) {
            let (_, _, last, _) = self.r.take().unwrap_or((Bits::default(), 0, false, 0));
            self.beat += 1;
            if last {
                self.bursts.pop_front();
                self.beat = 0;
                self.bursts_read += 1;
            }
        }
        if self.arready && values[p.arvalid].bit(0) {
            let addr = values[p.araddr].as_u64();
            let beats = values[p.arlen].as_u64() as u32 + 1;
            let size = 1u32 << values[p.arsize].as_u64();
            let first = addr & !(size as u64 - 1);
            let end = first.wrapping_add(beats as u64 * size as u64);
            if addr / PAGE != end.wrapping_sub(1) / PAGE && violations.len() < 10 {
                violations.push(format!("cycle {cycle}: AR {addr:#x} arlen {} crosses a 4 KiB boundary", beats - 1));
            }
            let wait = if self.max_latency == 0 { 0 } else { rng.below(self.max_latency + 1) };
            let due = (cycle + 1 + wait).max(self.bursts.back().map_or(0, |b| b.4));
            let err = rng.percent(self.error_percent);
            self.bursts.push_back((addr, beats, size, values[p.arid].as_u64(), due, err));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mrnic_model::block::{zero_values, PortDef};

    fn read_ports() -> Vec<PortDef> {
        let (i, o) = (PortDef::input, PortDef::output);
        vec![
            o("m_axi_arid", 4, "", ""),
            o("m_axi_araddr", 64, "", ""),
            o("m_axi_arlen", 8, "", ""),
            o("m_axi_arsize", 3, "", ""),
            o("m_axi_arvalid", 1, "", ""),
            i("m_axi_arready", 1, "", ""),
            i("m_axi_rid", 4, "", ""),
            i("m_axi_rdata", 64, "", ""),
            i("m_axi_rresp", 2, "", ""),
            i("m_axi_rlast", 1, "", ""),
            i("m_axi_rvalid", 1, "", ""),
            o("m_axi_rready", 1, "", ""),
        ]
    }

    /// A master issuing random bursts under random rready gets every beat
    /// of each, in order, with the memory's bytes and rlast on the last,
    /// whatever the latency, arready and gap settings.
    #[test]
    fn bursts_come_back_in_order_with_the_memory_bytes() {
        let ports = read_ports();
        let ix = |n: &str| port_index(&ports, n).unwrap();
        let mut mem = Pages::default();
        let image: Vec<u8> = (0..8192u32).map(|k| (k * 7 + k / 256) as u8).collect();
        mem.write(0x1_0000, &image);
        for seed in 1..5u64 {
            let mut rng = Rng::new(seed);
            let mut s = AxiReadSlave::new(&ports, "m_axi_").unwrap();
            (s.max_latency, s.ar_busy_percent, s.r_gap_percent) = (seed * 3, 30, 25);
            let mut want: VecDeque<(u64, bool)> = VecDeque::new();
            let mut ar: Option<(u64, u32)> = None;
            let (mut issued, mut beats_seen, mut violations) = (0, 0, Vec::new());
            for cycle in 0..20_000u64 {
                let mut v = zero_values(&ports);
                if ar.is_none() && issued < 200 {
                    let beats = 1 + rng.below(8) as u32;
                    // Inside one of the image's two pages.
                    let addr = 0x1_0000 + 4096 * rng.below(2) + 8 * rng.below(512 - beats as u64);
                    ar = Some((addr, beats));
                }
                if let Some((addr, beats)) = ar {
                    v[ix("m_axi_arvalid")] = Bits::from_u64(1, 1);
                    v[ix("m_axi_araddr")] = Bits::from_u64(64, addr);
                    v[ix("m_axi_arlen")] = Bits::from_u64(8, beats as u64 - 1);
                    v[ix("m_axi_arsize")] = Bits::from_u64(3, 3);
                }
                let rready = rng.percent(70);
                v[ix("m_axi_rready")] = Bits::from_u64(1, rready as u64);
                s.drive(&mut rng, cycle, &mut v, &mem);
                if v[ix("m_axi_rvalid")].bit(0) && rready {
                    let (addr, last) = want.pop_front().expect("a beat nobody asked for");
                    let got = v[ix("m_axi_rdata")].as_u64().to_le_bytes();
                    assert_eq!(got.to_vec(), mem.read(addr, 8), "seed {seed} beat at {addr:#x}");
                    assert_eq!(v[ix("m_axi_rlast")].bit(0), last);
                    beats_seen += 1;
                }
                if let (Some((addr, beats)), true) = (ar, v[ix("m_axi_arready")].bit(0)) {
                    for k in 0..beats {
                        want.push_back((addr + 8 * k as u64, k + 1 == beats));
                    }
                    issued += 1;
                    ar = None;
                }
                s.observe(&mut rng, cycle, &v, &mut violations);
            }
            assert!(
                want.is_empty() && issued == 200 && beats_seen > 200,
                "seed {seed}: {issued} bursts, {beats_seen} beats"
            );
            assert!(violations.is_empty(), "{violations:?}");
            assert_eq!(s.outstanding(), 0);
        }
    }
}
