//! Shared test scaffolding: two NICs joined by one connection over the lossy
//! channel, a workload of messages with known bytes, and the checks every
//! scenario ends with (each completion exactly once, in order per stream,
//! memory images bit exact).

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use mrnic_proto::Config;
use mrnic_reference::channel::{Channel, Lane, Routing};
use mrnic_reference::rng::Rng;
use mrnic_reference::sim::{Outcome, Sim};
use mrnic_reference::{
    Access, Completion, ConnParams, CqOpcode, Nic, NicConfig, RecvRequest, Sge, Status, WorkRequest, WrOp,
};

pub const A: usize = 0;
pub const B: usize = 1;
pub const A_ADDR: u32 = 0x0a00_0001;
pub const B_ADDR: u32 = 0x0a00_0002;
/// Connection ids differ on purpose, so a swapped id shows.
pub const A_CONN: u32 = 5;
pub const B_CONN: u32 = 0x00ab_cdef;
pub const SRC_BASE: u64 = 0x1000_0000;
pub const WRITE_BASE: u64 = 0x2000_0000;
pub const RECV_BASE: u64 = 0x3000_0000;
/// Guard regions right before and after the target regions: remote-write
/// and receive capable, so only the transport's own bookkeeping keeps
/// bytes out of them.
pub const GUARD: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Write,
    WriteImm,
    Send,
    SendImm,
}

#[derive(Debug, Clone, Copy)]
pub struct Msg {
    pub stream: u8,
    pub kind: Kind,
    pub len: u32,
}

pub struct Setup {
    pub cfg: Config,
    pub paths: u8,
    pub seed: u64,
    pub lanes: Vec<Lane>,
    pub routing: Routing,
    pub tx_psn: u32,
    /// Bytes of each target region (write, recv, source).
    pub region: u64,
    /// Post the receives only at this virtual time (RNR until then).
    pub late_recvs: Option<u64>,
    /// [`NicConfig::ce_steering`] of both NICs.
    pub ce_steering: bool,
}

impl Setup {
    pub fn new(paths: u8, seed: u64) -> Setup {
        let cfg = Config::builtin("small").unwrap();
        // Lanes keep order (no jitter) but differ in delay, so packets
        // sprayed over several paths arrive out of order overall.
        let lanes =
            (0..cfg.transport.planes as u64).map(|i| Lane { delay_ns: 2_000 + 700 * i, ..Lane::default() }).collect();
        Setup {
            lanes,
            cfg,
            paths,
            seed,
            routing: Routing::ByPlane,
            tx_psn: 0,
            region: 1 << 20,
            late_recvs: None,
            ce_steering: true,
        }
    }
}

pub struct Run {
    pub sim: Sim,
    pub write_rkey: u32,
    /// Expected contents of B's write and receive regions.
    pub expect_write: Vec<u8>,
    pub expect_recv: Vec<u8>,
    /// Per stream: wr_ids in post order (sends on A, receives on B).
    pub sends: BTreeMap<u8, Vec<u64>>,
    pub recvs: BTreeMap<u8, Vec<(u64, u32, Option<u32>)>>,
    pub msgs: Vec<Msg>,
    /// Receives still to post, and when.
    pub late: Option<(u64, Vec<(u8, RecvRequest)>)>,
}

pub fn nics(s: &Setup) -> Sim {
    let nic =
        |addr, seed| Nic::new(NicConfig { ce_steering: s.ce_steering, ..NicConfig::new(s.cfg.clone(), addr, seed) });
    let (a, b) = (nic(A_ADDR, s.seed ^ 0xa), nic(B_ADDR, s.seed ^ 0xb));
    let mut sim = Sim::new(vec![a, b], Channel::new(s.seed, s.lanes.clone(), s.routing));
    let pa = ConnParams {
        local_id: A_CONN,
        remote_id: B_CONN,
        remote: B_ADDR,
        paths: s.paths,
        tx_psn: s.tx_psn,
        rx_psn: s.tx_psn,
    };
    let pb = ConnParams { local_id: B_CONN, remote_id: A_CONN, remote: A_ADDR, ..pa };
    sim.nics[A].create_conn(pa).unwrap();
    sim.nics[B].create_conn(pb).unwrap();
    sim
}

/// Builds the two NICs, registers memory, fills sources with seeded bytes,
/// posts every receive and every send.
pub fn prepare(s: &Setup, msgs: &[Msg]) -> Run {
    let mut sim = nics(s);
    let mut rng = Rng::new(s.seed ^ 0x5eed);
    let total: u64 = msgs.iter().map(|m| m.len as u64).sum();
    let region = s.region.max(total.max(1));
    sim.nics[A].reg_mr(SRC_BASE, region, Access::LOCAL).unwrap();
    let b = &mut sim.nics[B];
    b.reg_mr(WRITE_BASE - GUARD, GUARD, Access::ALL).unwrap();
    let write_rkey = b.reg_mr(WRITE_BASE, region, Access::REMOTE_WRITE).unwrap();
    b.reg_mr(WRITE_BASE + region, GUARD, Access::ALL).unwrap();
    b.reg_mr(RECV_BASE - GUARD, GUARD, Access::ALL).unwrap();
    b.reg_mr(RECV_BASE, region, Access::RECV).unwrap();
    b.reg_mr(RECV_BASE + region, GUARD, Access::ALL).unwrap();
    let mut expect_write = vec![0u8; region as usize];
    let mut expect_recv = vec![0u8; region as usize];
    let (mut sends, mut recvs) = (BTreeMap::<u8, Vec<u64>>::new(), BTreeMap::<u8, Vec<(u64, u32, Option<u32>)>>::new());
    let mut off = 0u64;
    let mut late = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let data: Vec<u8> = (0..m.len).map(|_| rng.next_u64() as u8).collect();
        if m.len > 0 {
            sim.nics[A].write_mem(SRC_BASE + off, &data).unwrap();
        }
        let imm = matches!(m.kind, Kind::WriteImm | Kind::SendImm).then_some(0x1000_0000 | i as u32);
        let op = match m.kind {
            Kind::Write | Kind::WriteImm => {
                expect_write[off as usize..off as usize + m.len as usize].copy_from_slice(&data);
                WrOp::Write { remote_addr: WRITE_BASE + off, rkey: write_rkey }
            }
            Kind::Send | Kind::SendImm => {
                expect_recv[off as usize..off as usize + m.len as usize].copy_from_slice(&data);
                WrOp::Send
            }
        };
        if m.kind != Kind::Write {
            let rid = 1_000_000 + i as u64;
            // Receives for SENDs are as long as the message; WRITE_IMM's
            // receive gets no data.
            let len = if matches!(m.kind, Kind::Send | Kind::SendImm) { m.len } else { 0 };
            let r = RecvRequest { wr_id: rid, addr: RECV_BASE + off, len };
            if s.late_recvs.is_some() {
                late.push((m.stream, r));
            } else {
                sim.nics[B].post_recv(B_CONN, m.stream, r).unwrap();
            }
            recvs.entry(m.stream).or_default().push((rid, m.len, imm));
        }
        let wr = WorkRequest { wr_id: i as u64, op, imm, local: Sge { addr: SRC_BASE + off, len: m.len as u64 } };
        sim.nics[A].post_send(A_CONN, m.stream, wr).unwrap();
        sends.entry(m.stream).or_default().push(i as u64);
        off += m.len as u64;
    }
    let late = s.late_recvs.map(|t| (t, late));
    Run { sim, write_rkey, expect_write, expect_recv, sends, recvs, msgs: msgs.to_vec(), late }
}

impl Run {
    pub fn expected_completions(&self) -> (usize, usize) {
        (self.sends.values().map(Vec::len).sum(), self.recvs.values().map(Vec::len).sum())
    }

    /// Runs until every expected completion is in (or the deadline).
    pub fn run(&mut self, deadline_ns: u64) -> Outcome {
        let (na, nb) = self.expected_completions();
        if let Some((at, recvs)) = self.late.take() {
            self.sim.run_until(at, 2_000_000, |_| false);
            for (stream, r) in recvs {
                self.sim.nics[B].post_recv(B_CONN, stream, r).unwrap();
            }
        }
        self.sim.run_until(deadline_ns, 2_000_000, |s| s.completions[A].len() >= na && s.completions[B].len() >= nb)
    }

    /// Lets the wire drain after completion (late duplicates and answers
    /// arrive) so that no late packet writes or completes anything.
    pub fn settle(&mut self, extra_ns: u64) {
        let until = self.sim.now + extra_ns;
        self.sim.run_until(until, 200_000, |_| false);
    }

    /// The end-of-run checks. Returns a description of the first failure.
    pub fn check(&self) -> Result<(), String> {
        let ctx = |what: &str| format!("seed run: {what}");
        // Sender: each work request exactly once, Success, in order per stream.
        let mut seen = BTreeSet::new();
        let mut per_stream: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
        for c in &self.sim.completions[A] {
            if !seen.insert(c.wr_id) {
                return Err(ctx(&format!("send completion {} raised twice", c.wr_id)));
            }
            if c.status != Status::Success {
                return Err(ctx(&format!("send {} completed with {:?}", c.wr_id, c.status)));
            }
            per_stream.entry(c.stream).or_default().push(c.wr_id);
        }
        if per_stream != self.sends {
            return Err(ctx(&format!("send completions {per_stream:?}, expected {:?}", self.sends)));
        }
        // Receiver: each receive exactly once, in posting order, right length
        // and immediate.
        let mut per_stream: BTreeMap<u8, Vec<(u64, u32, Option<u32>)>> = BTreeMap::new();
        for c in &self.sim.completions[B] {
            if c.status != Status::Success {
                return Err(ctx(&format!("receive {} completed with {:?}", c.wr_id, c.status)));
            }
            let want = if c.imm.is_some() && self.msgs[(c.wr_id - 1_000_000) as usize].kind == Kind::WriteImm {
                CqOpcode::RecvRdmaWithImm
            } else {
                CqOpcode::Recv
            };
            if c.opcode != want {
                return Err(ctx(&format!("receive {} has opcode {:?}", c.wr_id, c.opcode)));
            }
            per_stream.entry(c.stream).or_default().push((c.wr_id, c.byte_len, c.imm));
        }
        if per_stream != self.recvs {
            return Err(ctx(&format!("receive completions {per_stream:?}, expected {:?}", self.recvs)));
        }
        // Memory: bit exact, guards untouched.
        let b = &self.sim.nics[B];
        let region = self.expect_write.len() as u64;
        if b.read_mem(WRITE_BASE, region).unwrap() != &self.expect_write[..] {
            return Err(ctx("write region differs from what was sent"));
        }
        if b.read_mem(RECV_BASE, region).unwrap() != &self.expect_recv[..] {
            return Err(ctx("receive region differs from what was sent"));
        }
        for g in [WRITE_BASE - GUARD, WRITE_BASE + region, RECV_BASE - GUARD, RECV_BASE + region] {
            if b.read_mem(g, GUARD).unwrap().iter().any(|&x| x != 0) {
                return Err(ctx(&format!("guard region at {g:#x} was written")));
            }
        }
        Ok(())
    }
}

pub fn completions_of(sim: &Sim, nic: usize) -> &[Completion] {
    &sim.completions[nic]
}
