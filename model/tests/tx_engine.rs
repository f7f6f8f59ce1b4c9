//! Tests of `tx_engine`, wired as the top wires it: with the cycle models of
//! `path_telemetry` and `path_selector`, a host memory behind the AXI4 read
//! port, and random backpressure on every output. They show: frames
//! byte-identical to `proto::encode_frame` for every opcode and the
//! segmentation the reference does; back-to-back frames at one beat per
//! cycle; a SACK hole retransmitting exactly the missing packet; a full
//! retransmit ring holding new sends back and counted; completions exactly
//! once; and random work requests with backpressure and idle cycles against
//! the reference's sender. Stimulus is seeded; a failure names its seed.

use std::collections::{BTreeMap, VecDeque};

use mrnic_model::path_selector::{self as ps, PathSelector, PathSelectorParams};
use mrnic_model::path_telemetry::{self as tel, PathTelemetry, PathTelemetryParams};
use mrnic_model::tx_engine::*;
use mrnic_proto::packet::{decode_frame, encode_frame, NetHeaders, ECN_ECT0};
use mrnic_proto::{Config, DataHeader, Flags, Header, NackCode, NackHeader, Placement, ProbeHeader, SackHeader};

/// xorshift64*: deterministic stimulus without a dependency.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const SRC_MAC: u64 = 0x02_00_00_00_00_01;
const DST_MAC: u64 = 0x02_00_00_00_00_02;
const SRC_IP: u32 = 0x0a00_0001;
const DST_IP: u32 = 0x0a00_0002;
const UDP_PORT: u16 = 4797;
const REMOTE_ID: u32 = 0x00ab_cdef;
/// Host memory the work requests read from.
const MEM_BASE: u64 = 0x10_0000;
const MEM_LEN: usize = 0x4_0000;

fn small() -> Config {
    Config::builtin("small").unwrap()
}

/// A frame seen on `m_axis`: bytes, plane, cycle of its first and last beat.
#[derive(Debug, Clone)]
struct Seen {
    bytes: Vec<u8>,
    plane: u8,
    first: u64,
    last: u64,
}

/// Backpressure and idle probabilities (percent of cycles held low).
#[derive(Debug, Clone, Copy, Default)]
struct Pressure {
    axis: u64,
    cqe: u64,
    ar: u64,
    r_gap: u64,
}

/// tx_engine + path_telemetry + path_selector + host memory.
struct Rig {
    cfg: Config,
    tx: TxEngine,
    pt: PathTelemetry,
    ps: PathSelector,
    mem: Vec<u8>,
    /// Bursts accepted on AR: (address, beats left).
    bursts: VecDeque<(u64, u32)>,
    /// Addresses whose reads answer SLVERR.
    bad: Option<(u64, u64)>,
    opens: VecDeque<Open>,
    wrs: VecDeque<WorkReq>,
    sacks: VecDeque<SackIn>,
    nacks: VecDeque<NackIn>,
    csacks: VecDeque<SackOut>,
    cnacks: VecDeque<NackOut>,
    frames: Vec<Seen>,
    /// Cycle of each `s_wr` handshake.
    wr_taken: Vec<u64>,
    /// Cycle of each `s_sack` handshake.
    sack_taken: Vec<u64>,
    cur: Vec<u8>,
    cur_first: u64,
    cqes: Vec<Cqe>,
    /// Cycle of each `m_cqe` handshake.
    cqe_at: Vec<u64>,
    stats: Vec<(u64, Stats)>,
    cycle: u64,
    press: Pressure,
    /// Holds the telemetry read request (`m_trd_ready` low), so no decision
    /// completes.
    hold_reads: bool,
    /// `port_ready`: a bit per plane whose egress queue has room.
    ports: u32,
    rng: Rng,
    cycles_per_ts: u64,
}

impl Rig {
    fn new(cfg: Config, seed: u64) -> Rig {
        let tx = TxEngine::new(TxEngineParams::from_config(&cfg).unwrap());
        let pt = PathTelemetry::new(PathTelemetryParams::from_config(&cfg).unwrap());
        let ps = PathSelector::new(PathSelectorParams::from_config(&cfg).unwrap());
        let mut rng = Rng::new(seed);
        let mem = (0..MEM_LEN).map(|_| rng.below(256) as u8).collect();
        let cycles_per_ts = cfg.cycles_per_ts();
        let mut r = Rig {
            cfg,
            tx,
            pt,
            ps,
            mem,
            bursts: VecDeque::new(),
            bad: None,
            opens: VecDeque::new(),
            wrs: VecDeque::new(),
            sacks: VecDeque::new(),
            nacks: VecDeque::new(),
            csacks: VecDeque::new(),
            cnacks: VecDeque::new(),
            frames: Vec::new(),
            wr_taken: Vec::new(),
            sack_taken: Vec::new(),
            cur: Vec::new(),
            cur_first: 0,
            cqes: Vec::new(),
            cqe_at: Vec::new(),
            stats: Vec::new(),
            cycle: 0,
            press: Pressure::default(),
            hold_reads: false,
            ports: u32::MAX,
            rng,
            cycles_per_ts,
        };
        while r.tx.initializing() || r.pt.initializing() || r.ps.initializing() {
            r.step();
        }
        r
    }

    fn ts(&self) -> u32 {
        (self.cycle / self.cycles_per_ts) as u32
    }

    fn open(&mut self, conn: u32, npaths: u32, psn: u32) {
        for p in 0..npaths {
            self.opens.push_back(Open {
                conn,
                path: p,
                npaths,
                remote_id: REMOTE_ID,
                dst_mac: DST_MAC,
                dst_ip: DST_IP,
                sport: 49152 + 17 * p as u16 + conn as u16,
                plane: (p % self.cfg.transport.planes) as u8,
                psn,
            });
        }
    }

    fn step(&mut self) {
        let ot = self.tx.outputs();
        let opt = self.pt.outputs();
        let ops = self.ps.outputs();
        let ts = self.ts();
        let axis_ready = !self.rng.chance(self.press.axis);
        let cqe_ready = !self.rng.chance(self.press.cqe);
        let ar_ready = !self.rng.chance(self.press.ar);
        let bb = self.cfg.hardware.datapath_bits as u64 / 8;
        // The memory answers the oldest burst, one beat per cycle, with gaps.
        let r = match self.bursts.front() {
            Some(&(addr, left)) if !self.rng.chance(self.press.r_gap) => {
                let off = (addr - MEM_BASE) as usize;
                let data = self.mem[off..off + bb as usize].to_vec();
                let resp = self.bad.is_some_and(|(lo, hi)| addr >= lo && addr < hi) as u8 * 2;
                Some((RBeat { data, resp, last: left == 1 }, addr, left))
            }
            _ => None,
        };
        let inp = Inputs {
            rst: false,
            ts_now: ts,
            src_mac: SRC_MAC,
            src_ip: SRC_IP,
            udp_port: UDP_PORT,
            open: self.opens.front().copied(),
            wr: self.wrs.front().copied(),
            ar_ready,
            r: r.as_ref().map(|(b, _, _)| b.clone()),
            trd_ready: opt.rd_ready && !self.hold_reads,
            trd: opt.rd.as_ref().map(|d| TelView { conn: d.conn, paths: d.paths.clone() }),
            evt_ready: opt.evt_ready,
            upd: opt.upd,
            rto: opt.rto,
            psel_ready: ops.req_ready,
            psel: ops.sel_valid.then(|| (ops.sel_conn, (!ops.sel_none).then_some(ops.sel_path))),
            sack: self.sacks.front().copied(),
            nack: self.nacks.front().copied(),
            csack: self.csacks.front().copied(),
            cnack: self.cnacks.front().copied(),
            axis_ready,
            port_ready: self.ports,
            cqe_ready,
        };
        let pin = tel::Inputs {
            rst: false,
            ts_now: ts,
            evt_valid: ot.evt.is_some(),
            evt: ot.evt.unwrap_or_default(),
            upd_ready: ot.upd_ready,
            rto_ready: ot.rto_ready,
            rd_valid: ot.trd.is_some() && !self.hold_reads,
            rd_conn: ot.trd.unwrap_or(0),
            rd_resp_ready: ot.trd_resp_ready,
        };
        let q = ot.psel.clone().unwrap_or_default();
        let sin = ps::Inputs {
            rst: false,
            req_valid: ot.psel.is_some(),
            req_conn: q.conn,
            req_elig: q.elig,
            req_weight: if q.weight.is_empty() {
                vec![0; self.cfg.transport.paths_per_conn as usize]
            } else {
                q.weight
            },
            req_clr: q.clr,
            sel_ready: ot.psel_resp_ready,
        };
        // Handshakes seen by the environment.
        if ot.open_ready && inp.open.is_some() {
            self.opens.pop_front();
        }
        if ot.wr_ready && inp.wr.is_some() {
            self.wr_taken.push(self.cycle);
            self.wrs.pop_front();
        }
        if ot.sack_ready && inp.sack.is_some() {
            self.sack_taken.push(self.cycle);
            self.sacks.pop_front();
        }
        if ot.nack_ready && inp.nack.is_some() {
            self.nacks.pop_front();
        }
        if ot.csack_ready && inp.csack.is_some() {
            self.csacks.pop_front();
        }
        if ot.cnack_ready && inp.cnack.is_some() {
            self.cnacks.pop_front();
        }
        if let (Some(ar), true) = (ot.ar, ar_ready) {
            assert!(ar.addr % bb == 0, "bursts start on a beat");
            let beats = ar.len as u64 + 1;
            assert!(beats <= self.cfg.hardware.axi_max_burst as u64, "burst longer than axi_max_burst");
            assert_eq!(ar.addr / 4096, (ar.addr + beats * bb - 1) / 4096, "burst crosses 4 KiB: {ar:?}");
            self.bursts.push_back((ar.addr, beats as u32));
        }
        if let (Some((_, addr, left)), true) = (&r, ot.r_ready) {
            self.bursts.pop_front();
            if *left > 1 {
                self.bursts.push_front((addr + bb, left - 1));
            }
        }
        if let (Some(b), true) = (&ot.axis, axis_ready) {
            if self.cur.is_empty() {
                self.cur_first = self.cycle;
            }
            assert!(b.last || b.keep as u64 == bb, "tkeep holes before the last beat");
            self.cur.extend_from_slice(&b.data[..b.keep as usize]);
            if b.last {
                let bytes = std::mem::take(&mut self.cur);
                self.frames.push(Seen { bytes, plane: b.plane, first: self.cur_first, last: self.cycle });
            }
        }
        if let (Some(c), true) = (ot.cqe, cqe_ready) {
            self.cqes.push(c);
            self.cqe_at.push(self.cycle);
        }
        if ot.stats != Stats::default() {
            self.stats.push((self.cycle, ot.stats));
        }
        self.tx.clock(&inp);
        self.pt.clock(&pin);
        self.ps.clock(&sin);
        self.cycle += 1;
    }

    fn run(&mut self, cycles: u64) {
        for _ in 0..cycles {
            self.step();
        }
    }

    /// Runs until `done` holds or `limit` cycles pass.
    fn run_until(&mut self, limit: u64, done: impl Fn(&Rig) -> bool) -> bool {
        for _ in 0..limit {
            if done(self) {
                return true;
            }
            self.step();
        }
        done(self)
    }

    /// The plane each data frame left by, in order.
    fn data_planes(&self) -> Vec<u8> {
        self.frames
            .iter()
            .filter(|f| matches!(decode_frame(&f.bytes).map(|d| d.header), Ok(Header::Data(_))))
            .map(|f| f.plane)
            .collect()
    }

    fn data_frames(&self) -> Vec<(DataHeader, Vec<u8>, NetHeaders)> {
        self.frames
            .iter()
            .filter_map(|f| {
                let d = decode_frame(&f.bytes).expect("every frame decodes");
                match d.header {
                    Header::Data(h) => Some((h, d.payload.to_vec(), d.net)),
                    _ => None,
                }
            })
            .collect()
    }
}

fn wr(conn: u32, stream: u32, op: u8, wr_id: u64, off: u64, len: u32) -> WorkReq {
    WorkReq {
        conn,
        stream,
        op,
        wr_id,
        laddr: MEM_BASE + off,
        len,
        raddr: 0x7000_0000 + off * 3,
        rkey: 0x1234_5600 | op as u32,
        imm: 0xdead_0000 | wr_id as u32,
    }
}

/// A SACK of path `path` acknowledging every psn below `cum` and the psns in
/// `also` (each above `cum`).
fn sack_for(conn: u32, path: u32, cum: u32, also: &[u32], echo_ts: u16) -> SackIn {
    let mut bitmap = [0u64; 4];
    for &p in also {
        let i = p - cum - 1;
        bitmap[(i / 64) as usize] |= 1 << (i % 64);
    }
    SackIn {
        conn,
        path_id: path,
        cum_psn: cum,
        bitmap,
        ecn_cnt: 0,
        echo_ts,
        rate_hint: 0xffff,
        stream_id: 0,
        completed_msn: 0,
        dport: UDP_PORT,
    }
}

/// The data header the reference's sender would build for packet
/// `(offset, len)` of `w`, with the path, psn and tx_ts the engine chose.
fn expected_header(w: &WorkReq, msn: u32, rq_seq: u32, offset: u32, len: u32, got: &DataHeader) -> DataHeader {
    let place = if w.op == op::SEND || w.op == op::SEND_IMM {
        Placement::Send { rq_seq, msg_offset: offset }
    } else {
        Placement::Write { rkey: w.rkey, addr: w.raddr + offset as u64 }
    };
    let imm = (w.op == op::WRITE_IMM || w.op == op::SEND_IMM).then_some(w.imm);
    DataHeader {
        flags: Flags { som: offset == 0, eom: offset + len == w.len, retx: false, ackreq: got.flags.ackreq, se: false },
        payload_len: len as u16,
        dst_conn: REMOTE_ID,
        path_id: got.path_id,
        path_psn: got.path_psn,
        path_gen: 0,
        stream_id: w.stream as u8,
        msn,
        msg_len: w.len,
        place,
        tx_ts: got.tx_ts,
        imm,
    }
}

fn net(sport: u16, dport: u16) -> NetHeaders {
    NetHeaders {
        dst_mac: DST_MAC.to_be_bytes()[2..].try_into().unwrap(),
        src_mac: SRC_MAC.to_be_bytes()[2..].try_into().unwrap(),
        src_ip: SRC_IP.to_be_bytes(),
        dst_ip: DST_IP.to_be_bytes(),
        dscp: 0,
        ecn: ECN_ECT0,
        ident: 0,
        ttl: 64,
        src_port: sport,
        dst_port: dport,
    }
}

/// Every frame of the run against `proto::encode_frame` of the header the
/// reference would build; the payload against host memory; psns per path
/// consecutive from `first_psn`; segmentation as the reference cuts.
fn check_data_frames(rig: &Rig, wrs: &[WorkReq], first_psn: u32) {
    let mtu = rig.cfg.transport.mtu;
    // Expected packets in send order per (stream): (wr index, offset, len).
    let mut per_stream: BTreeMap<u32, VecDeque<(usize, u32, u32)>> = BTreeMap::new();
    let mut msn: BTreeMap<u32, u32> = BTreeMap::new();
    let mut rq: BTreeMap<u32, u32> = BTreeMap::new();
    let mut meta = Vec::new();
    for (i, w) in wrs.iter().enumerate() {
        let m = msn.entry(w.stream).or_default();
        let r = rq.entry(w.stream).or_default();
        meta.push((*m, *r));
        *m += 1;
        if w.op != op::WRITE {
            *r += 1;
        }
        let q = per_stream.entry(w.stream).or_default();
        let mut off = 0;
        loop {
            let len = (w.len - off).min(mtu);
            q.push_back((i, off, len));
            off += len;
            if off == w.len {
                break;
            }
        }
    }
    let mut next_psn: BTreeMap<u8, u32> = BTreeMap::new();
    let frames = rig.data_frames();
    let total: usize = per_stream.values().map(|q| q.len()).sum();
    assert_eq!(frames.len(), total, "one frame per MTU segment (zero-length messages: one)");
    for (k, (h, payload, n)) in frames.iter().enumerate() {
        let q = per_stream.get_mut(&(h.stream_id as u32)).expect("a stream we posted on");
        let (i, off, len) = q.pop_front().expect("no extra packets");
        let w = &wrs[i];
        let (m, r) = meta[i];
        let psn = next_psn.entry(h.path_id).or_insert(first_psn);
        assert_eq!(h.path_psn, *psn, "frame {k}: psns of a path are consecutive");
        *psn = (*psn + 1) & 0xff_ffff;
        let exp = expected_header(w, m, r, off, len, h);
        let mem_off = (w.laddr - MEM_BASE) as usize + off as usize;
        let exp_payload = &rig.mem[mem_off..mem_off + len as usize];
        assert_eq!(payload.as_slice(), exp_payload, "frame {k}: payload from host memory");
        let mut bytes = Vec::new();
        let sport = 49152 + 17 * h.path_id as u16;
        encode_frame(&net(sport, UDP_PORT), &Header::Data(exp), exp_payload, &mut bytes).unwrap();
        assert_eq!(n.src_port, sport, "frame {k}: the path's source port");
        assert_eq!(
            rig.frames
                .iter()
                .filter(|f| decode_frame(&f.bytes).is_ok_and(|d| matches!(d.header, Header::Data(_))))
                .nth(k)
                .unwrap()
                .bytes,
            bytes,
            "frame {k}: bytes differ from proto::encode_frame"
        );
    }
}

/// A work request posted right after a reopen's `s_open` handshake is
/// the new connection's: sent from the new psn, never flushed, although
/// the record waits for the old connection's flush walk first (its
/// outstanding requests complete WR_FLUSH) and acts `L` cycles after its
/// take (architecture.md, tx_engine item 17).
#[test]
fn a_request_posted_right_after_a_reopen_handshake_is_sent_not_flushed() {
    for l in [1u32, 2] {
        let mut cfg = small();
        cfg.hardware.table_read_latency = l;
        let mut rig = Rig::new(cfg, 5);
        rig.open(2, 1, 0);
        assert!(rig.run_until(1_000, |r| r.opens.is_empty() && !r.tx.opening()));
        // Outstanding requests: the peer never answers.
        for k in 0..4 {
            rig.wrs.push_back(wr(2, k % 2, op::WRITE, 10 + u64::from(k), 0x1000 * u64::from(k), 200));
        }
        assert!(rig.run_until(20_000, |r| r.data_frames().len() >= 4), "L = {l}: the first requests are sent");
        rig.open(2, 1, 500);
        assert!(rig.run_until(1_000, |r| r.opens.is_empty()), "L = {l}: the record is taken on s_open");
        rig.wrs.push_back(wr(2, 0, op::WRITE, 99, 0x8000, 64));
        assert!(
            rig.run_until(20_000, |r| r.data_frames().iter().any(|f| f.0.path_psn == 500)),
            "L = {l}: the request is sent on the new connection; completions {:?}",
            rig.cqes
        );
        rig.run(200);
        let got: Vec<(u64, u8)> = rig.cqes.iter().map(|c| (c.wr_id, c.status)).collect();
        assert_eq!(
            got,
            [10, 12, 11, 13].map(|id| (id, status::WR_FLUSH)),
            "L = {l}: the old requests flushed once each (stream order), the new one not"
        );
    }
}

/// A reopen waits until no frame of its connection is in the output
/// queue: a frame committed before it, held by backpressure on `m_axis`,
/// leaves before the setup acts, never after it with the old
/// connection's headers (architecture.md, tx_engine item 17).
#[test]
fn a_reopen_waits_for_the_old_connections_queued_frames() {
    let mut rig = Rig::new(small(), 9);
    rig.open(2, 1, 0);
    assert!(rig.run_until(1_000, |r| r.opens.is_empty() && !r.tx.opening()));
    rig.press.axis = 100;
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(2, 0, op::WRITE, 7, 0, 6 * mtu));
    rig.run(3_000);
    assert!(rig.frames.is_empty(), "m_axis held: nothing has left");
    rig.open(2, 1, 500);
    rig.run(3_000);
    assert!(rig.opens.is_empty(), "the record was taken on s_open");
    assert!(rig.tx.opening(), "the setup waits while frames of the old connection are queued");
    rig.press.axis = 0;
    assert!(rig.run_until(5_000, |r| !r.tx.opening()), "the setup acts once they have left");
    let old = rig.data_frames();
    assert!(!old.is_empty() && old.iter().all(|f| f.0.path_psn < 500), "the old frames left first: {}", old.len());
    rig.wrs.push_back(wr(2, 0, op::WRITE, 8, 0x8000, 64));
    assert!(rig.run_until(20_000, |r| r.data_frames().len() > old.len()), "the new connection sends");
    let new: Vec<u32> = rig.data_frames()[old.len()..].iter().map(|f| f.0.path_psn).collect();
    assert_eq!(new, [500], "after the setup, only the new connection's frames");
}

#[test]
fn frames_match_proto_encode_for_every_opcode_and_length() {
    for seed in [1u64, 2] {
        let mut rig = Rig::new(small(), seed);
        rig.press = Pressure { axis: 30, cqe: 20, ar: 30, r_gap: 20 };
        rig.open(0, 2, 100);
        let mtu = rig.cfg.transport.mtu;
        let mut wrs = Vec::new();
        let lens = [0, 1, 7, mtu - 1, mtu, mtu + 1, 3 * mtu - 5];
        let mut id = 0;
        for o in [op::WRITE, op::WRITE_IMM, op::SEND, op::SEND_IMM] {
            for &len in &lens {
                let off = 0x1000 * id + (id * 13) % 8;
                wrs.push(wr(0, (id % 4) as u32, o, id, off, len));
                id += 1;
            }
        }
        rig.wrs.extend(wrs.iter().copied());
        let n_pkts: usize = wrs.iter().map(|w| (w.len.div_ceil(mtu)).max(1) as usize).sum();
        let ok = rig.run_until(400_000, |r| r.frames.len() >= n_pkts);
        assert!(ok, "seed {seed}: {} of {n_pkts} frames left", rig.data_frames().len());
        rig.run(2000);
        check_data_frames(&rig, &wrs, 100);
        assert!(rig.cqes.is_empty(), "seed {seed}: nothing is acknowledged, nothing completes");
    }
}

/// Beats a frame of `len` bytes takes.
fn beats(rig: &Rig, len: usize) -> u64 {
    len.div_ceil(rig.cfg.hardware.datapath_bits as usize / 8) as u64
}

#[test]
fn full_size_frames_leave_back_to_back_at_one_beat_per_cycle() {
    for name in ["small", "default"] {
        let mut cfg = Config::builtin(name).unwrap();
        // Fewer connections keep the clear sweep short; the datapath is the
        // config's.
        cfg.transport.connections = 4;
        let mut rig = Rig::new(cfg, 3);
        rig.open(1, 1, 0);
        // Opening a path clears its ring slots (one per cycle) first.
        rig.run(200);
        let mtu = rig.cfg.transport.mtu;
        let n = 6;
        rig.wrs.push_back(wr(1, 0, op::WRITE, 9, 0, n * mtu));
        assert!(rig.run_until(200_000, |r| r.frames.len() >= n as usize), "{name}: frames missing");
        let f = &rig.frames;
        // Latency of an idle engine, memory answering at once: post (its
        // reads L, then 1), start, telemetry read (L + 1), path decision
        // (L + 1), commit, AR, the payload beats, then the first beat.
        let l = rig.cfg.hardware.table_read_latency as u64;
        let payload_beats = beats(&rig, mtu as usize);
        eprintln!("{name}: first beat {} cycles after the request", f[0].first - rig.wr_taken[0]);
        assert_eq!(f[0].first - rig.wr_taken[0], 3 * l + 7 + payload_beats, "{name}: documented latency");
        for k in 1..f.len() {
            assert_eq!(f[k - 1].last - f[k - 1].first + 1, beats(&rig, f[k - 1].bytes.len()), "{name}: beats in a row");
            // After the first frame, the payload of the next one was read
            // while this one left: no idle cycle between frames.
            if k >= 2 {
                assert_eq!(f[k].first, f[k - 1].last + 1, "{name}: frame {k} starts right after frame {}", k - 1);
            }
        }
    }
}

#[test]
fn a_sack_hole_retransmits_exactly_the_missing_packet() {
    let mut rig = Rig::new(small(), 4);
    rig.press = Pressure { axis: 20, cqe: 20, ar: 10, r_gap: 10 };
    rig.open(2, 1, 7);
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(2, 1, op::SEND, 77, 0x100, 5 * mtu));
    assert!(rig.run_until(200_000, |r| r.frames.len() >= 5));
    rig.run(500);
    assert_eq!(rig.frames.len(), 5, "nothing more without a SACK");
    let sent = rig.data_frames();
    let ts = sent[4].0.tx_ts;
    // psn 7..=11 went out; 9 is missing at the receiver.
    rig.sacks.push_back(sack_for(2, 0, 9, &[10, 11], ts));
    assert!(rig.run_until(100_000, |r| r.frames.len() >= 6), "the hole is resent");
    rig.run(3000);
    let all = rig.data_frames();
    assert_eq!(all.len(), 6, "exactly one retransmission");
    let (h, payload, _) = &all[5];
    let (orig, orig_payload, _) = &sent[2];
    assert_eq!(h.path_psn, 9);
    assert!(h.flags.retx && h.flags.ackreq, "RETX and ACKREQ on a retransmission");
    assert_eq!(payload, orig_payload, "same bytes");
    assert_eq!(
        (h.msn, h.place, h.flags.som, h.flags.eom, h.payload_len),
        (orig.msn, orig.place, orig.flags.som, orig.flags.eom, orig.payload_len),
        "same identity"
    );
    assert!(rig.stats.iter().any(|(_, s)| s.tx_retx));
    assert!(rig.cqes.is_empty(), "psn 9 is still outstanding");
    rig.sacks.push_back(sack_for(2, 0, 12, &[], h.tx_ts));
    assert!(rig.run_until(10_000, |r| !r.cqes.is_empty()));
    rig.run(2000);
    assert_eq!(rig.cqes.len(), 1, "one completion");
    let c = rig.cqes[0];
    assert_eq!(
        (c.conn, c.stream, c.wr_id, c.status, c.opcode, c.byte_len, c.imm),
        (2, 1, 77, status::SUCCESS, 1, 5 * mtu, None)
    );
    assert_eq!(rig.tx.ring_occupancy(2, 0), 0);
    // A second SACK for the same psns acknowledges nothing new.
    rig.sacks.push_back(sack_for(2, 0, 12, &[], h.tx_ts));
    rig.run(2000);
    assert_eq!(rig.cqes.len(), 1, "never twice");
    assert_eq!(rig.frames.len(), 6);
}

/// A full ring holds new data back and is counted; the connection then
/// leaves the ready set until something that can change that happens to
/// it (no decision is wasted on it meanwhile), and the SACK that frees
/// slots brings it back.
#[test]
fn a_full_retransmit_ring_holds_new_sends_and_is_counted() {
    let mut cfg = small();
    cfg.hardware.tx_ring_depth = 4;
    let mut rig = Rig::new(cfg, 5);
    rig.open(3, 1, 0);
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(3, 0, op::WRITE, 1, 0, 10 * mtu));
    // Well inside the RTO (rto_min: 100 us = 10,000 cycles), which would
    // send a PROBE.
    rig.run(3000);
    assert_eq!(rig.frames.len(), 4, "four slots, four packets");
    assert_eq!(rig.tx.ring_occupancy(3, 0), 4);
    assert!(rig.stats.iter().any(|(_, s)| s.ring_full), "the stall is counted");
    let stalled_at = rig.tx.decisions;
    assert!(stalled_at <= 6, "{stalled_at} decisions for 4 packets and the one that found the ring full");
    rig.run(3000);
    assert_eq!(rig.tx.decisions, stalled_at, "no decision while nothing changed for the connection");
    let ts = rig.data_frames()[3].0.tx_ts;
    rig.sacks.push_back(sack_for(3, 0, 2, &[], ts));
    rig.run(2000);
    assert_eq!(rig.frames.len(), 6, "two slots freed, two more packets");
    assert!(rig.tx.decisions <= stalled_at + 4, "{} decisions", rig.tx.decisions);
    let psns: Vec<u32> = rig.data_frames().iter().map(|f| f.0.path_psn).collect();
    assert_eq!(psns, [0, 1, 2, 3, 4, 5]);
}

/// A post reads its stream's queue and its connection's context `L` cycles
/// before it writes them, and a commit may cut the stream's last byte in
/// between (architecture.md, tx_engine item 7). Swept across that moment:
/// the second request is counted as pending whatever the order (else it
/// is never sent; the model's `pend_streams` check fires first in a debug
/// build), and requests still post one per cycle.
#[test]
fn a_post_in_flight_is_not_lost_to_the_commit_of_its_streams_last_byte() {
    for d in 0..40 {
        let mut rig = Rig::new(small(), 11);
        rig.open(0, 1, 0);
        rig.run(200);
        let first = wr(0, 1, op::WRITE, 1, 0, 100);
        let second = wr(0, 1, op::SEND, 2, 512, 60);
        rig.wrs.push_back(first);
        rig.run(d);
        rig.wrs.push_back(second);
        assert!(rig.run_until(5000, |r| r.frames.len() >= 2), "d = {d}: {} of 2 frames", rig.frames.len());
        rig.run(200);
        check_data_frames(&rig, &[first, second], 0);
    }
    // Throughput: eight requests offered back to back are taken on eight
    // consecutive cycles (the FIFO and the post's reads in flight overlap).
    let mut rig = Rig::new(small(), 12);
    rig.open(0, 1, 0);
    rig.run(200);
    rig.wrs.extend((0..8).map(|i| wr(0, i % 4, op::WRITE, i as u64, 64 * i as u64, 64)));
    rig.run(40);
    let t = &rig.wr_taken;
    assert_eq!(t.len(), 8);
    assert!(t.windows(2).all(|w| w[1] == w[0] + 1), "handshakes at {t:?}");
}

/// A connection whose one path went SUSPECT (three RTOs without an
/// answer), its packets queued for retransmission and no GOOD path to take
/// them, leaves the ready set until something happens to it: no decision
/// is wasted between the path's timeouts.
#[test]
fn queued_retransmissions_with_no_path_wait_for_an_event() {
    let mut rig = Rig::new(small(), 9);
    rig.open(2, 1, 0);
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(2, 0, op::WRITE, 1, 0, 3 * mtu));
    // No answer ever comes: RTOs of 10,000, 20,000 and 40,000 cycles.
    rig.run(75_000);
    let (decisions, frames) = (rig.tx.decisions, rig.frames.len());
    rig.run(5000);
    assert!(rig.tx.decisions <= decisions + 2, "{} decisions after {decisions}", rig.tx.decisions);
    assert!(rig.frames.len() <= frames + 1, "at most a PROBE left");
}

#[test]
fn answers_are_framed_like_proto_and_go_first() {
    let mut rig = Rig::new(small(), 6);
    rig.open(4, 2, 0);
    rig.run(50);
    let mut bitmap = [0u64; 4];
    bitmap[0] = 0b1011;
    bitmap[3] = 1 << 63;
    let s = SackOut {
        conn: 4,
        path_id: 1,
        dst_conn: 0x77_0001,
        path_gen: 3,
        cum_psn: 0x12_3456,
        stream_id: 2,
        completed_msn: 0x00_0102,
        echo_ts: 0xbeef,
        ecn_cnt: 5,
        rate_hint: 0x8000,
        bitmap,
        sport: 50001,
        plane: 2,
    };
    let n = NackOut {
        conn: 4,
        path_id: 0,
        dst_conn: 0x77_0001,
        path_gen: 1,
        code: NackCode::Rnr as u8,
        psn: 99,
        stream_id: 1,
        msn: 5,
        echo_ts: 0x1234,
        sport: 50002,
        plane: 1,
        direct: false,
        dst_ip: 0,
        dst_mac: 0,
    };
    // A NO_CONN answer: no connection, its addresses given (conn 9 was
    // never opened and its context is empty).
    let d = NackOut {
        conn: 9,
        path_id: 7,
        dst_conn: 0x00_0063,
        code: NackCode::NoConn as u8,
        sport: 50003,
        plane: 3,
        direct: true,
        dst_ip: 0x0a00_0063,
        dst_mac: 0x0266_0000_0063,
        ..n
    };
    rig.csacks.push_back(s);
    rig.cnacks.push_back(n);
    rig.cnacks.push_back(d);
    rig.run(500);
    assert_eq!(rig.frames.len(), 3);
    let sh = Header::Sack(SackHeader {
        rate_hint: s.rate_hint,
        dst_conn: s.dst_conn,
        path_id: 1,
        cum_psn: s.cum_psn,
        path_gen: 3,
        stream_id: 2,
        completed_msn: s.completed_msn,
        echo_ts: s.echo_ts,
        ecn_cnt: 5,
        bitmap: mrnic_proto::headers::Bitmap256(bitmap),
    });
    let mut exp = Vec::new();
    encode_frame(&net(UDP_PORT, 50001), &sh, &[], &mut exp).unwrap();
    assert_eq!(rig.frames[0].bytes, exp, "SACK frame");
    assert_eq!(rig.frames[0].plane, 2, "leaves by the trigger's plane");
    let nack = NackHeader {
        code: NackCode::Rnr,
        dst_conn: n.dst_conn,
        path_id: 0,
        path_psn: 99,
        path_gen: 1,
        stream_id: 1,
        msn: 5,
        echo_ts: 0x1234,
    };
    let nh = Header::Nack(nack);
    let mut exp = Vec::new();
    encode_frame(&net(UDP_PORT, 50002), &nh, &[], &mut exp).unwrap();
    assert_eq!(rig.frames[1].bytes, exp, "NACK frame");
    assert_eq!(rig.frames[1].plane, 1);
    let dh = Header::Nack(NackHeader { code: NackCode::NoConn, dst_conn: 0x63, path_id: 7, ..nack });
    let to = NetHeaders {
        dst_mac: d.dst_mac.to_be_bytes()[2..].try_into().unwrap(),
        dst_ip: d.dst_ip.to_be_bytes(),
        ..net(UDP_PORT, 50003)
    };
    let mut exp = Vec::new();
    encode_frame(&to, &dh, &[], &mut exp).unwrap();
    assert_eq!(rig.frames[2].bytes, exp, "a direct NACK goes to the addresses it names");
    assert_eq!(rig.frames[2].plane, 3);
}

/// An answer's addresses come from a table read when the answer enters
/// the output's queue, not at the frame boundary: a SACK or a NACK for a
/// connection leaves `L + 1` cycles after its handshake on an idle output,
/// a NO_CONN answer (its addresses on the port) after 1; a frame keeps the
/// addresses it was queued with when its connection is reopened meanwhile.
#[test]
fn answers_read_their_addresses_on_the_way_into_the_queue() {
    for l in [1, 2] {
        let mut cfg = small();
        cfg.hardware.table_read_latency = l;
        let mut rig = Rig::new(cfg, 7);
        rig.open(4, 2, 0);
        rig.run(50);
        let sack = SackOut { conn: 4, path_id: 1, sport: 50001, plane: 1, ..SackOut::default() };
        let direct = NackOut {
            conn: 9,
            code: NackCode::NoConn as u8,
            sport: 50002,
            direct: true,
            dst_ip: 0x0a00_0063,
            dst_mac: 0x0266_0000_0063,
            ..NackOut::default()
        };
        for (name, csack, cnack, after) in
            [("SACK", Some(sack), None, l as u64 + 1), ("NO_CONN", None, Some(direct), 1)]
        {
            rig.csacks.extend(csack);
            rig.cnacks.extend(cnack);
            assert!(rig.run_until(10, |r| r.csacks.is_empty() && r.cnacks.is_empty()));
            let taken = rig.cycle - 1;
            let seen = rig.frames.len();
            assert!(rig.run_until(200, |r| r.frames.len() > seen));
            assert_eq!(
                rig.frames[seen].first - taken,
                after,
                "L = {l}: {name} leaves {after} cycles after its handshake"
            );
        }
        // Reopened with other addresses while a SACK waits in the queue
        // behind one stalled on `m_axis`: both already hold the old ones,
        // a SACK taken after the reopen the new ones.
        rig.press.axis = 100;
        rig.csacks.extend([sack, sack]);
        assert!(rig.run_until(10, |r| r.csacks.is_empty()));
        let new_mac = DST_MAC + 0x100;
        for p in 0..2 {
            rig.opens.push_back(Open {
                conn: 4,
                path: p,
                npaths: 2,
                remote_id: REMOTE_ID,
                dst_mac: new_mac,
                dst_ip: DST_IP,
                sport: 49152 + p as u16,
                plane: p as u8,
                psn: 0,
            });
        }
        assert!(rig.run_until(500, |r| r.opens.is_empty() && !r.tx.opening()));
        rig.csacks.push_back(sack);
        rig.press.axis = 0;
        let seen = rig.frames.len();
        assert!(rig.run_until(500, |r| r.frames.len() == seen + 3));
        let mac = |f: &Seen| {
            u64::from_be_bytes([0, 0, f.bytes[0], f.bytes[1], f.bytes[2], f.bytes[3], f.bytes[4], f.bytes[5]])
        };
        let macs: Vec<u64> = rig.frames[seen..].iter().map(mac).collect();
        assert_eq!(macs, [DST_MAC, DST_MAC, new_mac], "L = {l}: two queued before the reopen, one after");
    }
}

#[test]
fn probe_header_matches_proto() {
    let h = probe_header(0x12_3456, 3, 7, 0xab_cdef, 0x4321);
    let p =
        Header::Probe(ProbeHeader { tx_ts: 0x4321, dst_conn: 0x12_3456, path_id: 3, path_gen: 7, path_psn: 0xab_cdef });
    let mut b = vec![0u8; p.len()];
    p.encode(&mut b).unwrap();
    assert_eq!(h, b);
}

// ------------------------------------------------------------ against the reference

mod against_reference {
    use super::*;
    use mrnic_proto::decode_datagram;
    use mrnic_reference::memory::Access;
    use mrnic_reference::nic::{Nic, NicConfig};
    use mrnic_reference::verbs::{ConnParams, CqOpcode, RecvRequest, Sge, Status, WorkRequest, WrOp};
    use mrnic_reference::wire::WirePacket;

    const A: u32 = 1;
    const B: u32 = 2;
    const ID_A: u32 = 5;
    const ID_B: u32 = REMOTE_ID;
    const DST: u64 = 0x4000_0000;
    const RECV: u64 = 0x5000_0000;

    fn status_code(s: Status) -> u8 {
        match s {
            Status::Success => status::SUCCESS,
            Status::LocalProtectionError => status::LOCAL_PROTECTION,
            Status::RemoteAccessError => status::REMOTE_ACCESS,
            Status::RemoteInvalidRequest => status::REMOTE_INVALID_REQUEST,
            Status::RnrRetryExceeded => status::RNR_RETRY_EXCEEDED,
            Status::TransportRetryExceeded => status::TRANSPORT_RETRY_EXCEEDED,
            Status::WrFlushError => status::WR_FLUSH,
        }
    }

    /// The datagram and addressing of a frame, as a socket would see it.
    fn wire_of(f: &Seen) -> WirePacket {
        let d = decode_frame(&f.bytes).expect("frames decode");
        let udp_len = u16::from_be_bytes([f.bytes[38], f.bytes[39]]) as usize;
        WirePacket {
            src: A,
            dst: B,
            sport: d.net.src_port,
            dport: d.net.dst_port,
            plane: f.plane,
            ecn: d.net.ecn,
            bytes: f.bytes[42..34 + udp_len].to_vec(),
        }
    }

    fn sack_in(conn: u32, p: &WirePacket) -> Option<SackIn> {
        match decode_datagram(&p.bytes).ok()?.header {
            Header::Sack(h) => Some(SackIn {
                conn,
                path_id: h.path_id as u32,
                cum_psn: h.cum_psn,
                bitmap: h.bitmap.0,
                ecn_cnt: h.ecn_cnt as u32,
                echo_ts: h.echo_ts,
                rate_hint: h.rate_hint,
                stream_id: h.stream_id as u32,
                completed_msn: h.completed_msn,
                dport: p.dport,
            }),
            _ => None,
        }
    }

    /// Random work requests on one connection of up to 4 paths, random
    /// backpressure on m_axis, the completions, AR and R; the peer is a
    /// reference NIC whose SACKs come back after a random delay. The
    /// reference sender is driven alongside: polled at each of the
    /// engine's decisions (at the same timestamp) and given each SACK when
    /// the engine applies it. Every data frame must equal its packet byte
    /// for byte, and the completions must agree. With `loss` (percent),
    /// frames to the peer and SACKs back are dropped at random: the
    /// engine's loss detection (RACK on tx_seq and across paths, silent
    /// paths' timeouts, the tail probe, retry accounting, rerouting) must
    /// then make the reference's choices too; the reference's timers run
    /// when the engine's fire (path_telemetry's scanner, the tail timer).
    /// Returns the retransmissions sent, and the PROBEs sent plus the tail
    /// timers fired.
    fn run(seed: u64, loss: u64) -> (usize, usize) {
        // The peer acknowledges every packet (even seeds) or every 8th and
        // each ACKREQ (odd seeds: the sender's ACKREQ rules then decide
        // when SACKs come).
        let mut cfg = small();
        cfg.timers.sack_every_packets = if seed % 2 == 0 { 1 } else { 8 };
        let mut rig = Rig::new(cfg.clone(), seed);
        let mut rng = Rng::new(seed ^ 0x5eed);
        rig.press = Pressure { axis: rng.below(50), cqe: rng.below(50), ar: rng.below(40), r_gap: rng.below(40) };
        let unit = cfg.timers.ts_unit_ns as u64;
        let paths = 1 + rng.below(4) as u8;
        // The reference with its default rules (ack clocking on).
        let nic = |addr, seed| Nic::new(NicConfig::new(cfg.clone(), addr, seed));
        let mut a = nic(A, seed);
        let mut b = nic(B, seed ^ 1);
        a.reg_mr(MEM_BASE, MEM_LEN as u64, Access::LOCAL).unwrap();
        a.write_mem(MEM_BASE, &rig.mem).unwrap();
        let rkey = b.reg_mr(DST, 0x10_0000, Access::REMOTE_WRITE).unwrap();
        b.reg_mr(RECV, 0x10_0000, Access::RECV).unwrap();
        let psn = rng.below(1 << 24) as u32;
        a.create_conn(ConnParams { local_id: ID_A, remote_id: ID_B, remote: B, paths, tx_psn: psn, rx_psn: 0 })
            .unwrap();
        b.create_conn(ConnParams { local_id: ID_B, remote_id: ID_A, remote: A, paths, tx_psn: 0, rx_psn: psn })
            .unwrap();
        let info = a.conn_info(ID_A).unwrap();
        let conn = 3;
        for (p, e) in info.paths.iter().enumerate() {
            rig.opens.push_back(Open {
                conn,
                path: p as u32,
                npaths: paths as u32,
                remote_id: ID_B,
                dst_mac: DST_MAC,
                dst_ip: DST_IP,
                sport: e.sport,
                plane: e.plane,
                psn,
            });
        }
        rig.run(300);
        let mtu = cfg.transport.mtu;
        let n_wr = 1 + rng.below(12);
        let mut per_stream = [0u32; 4];
        for id in 0..n_wr {
            let stream = rng.below(4) as u8;
            if per_stream[stream as usize] >= 6 {
                continue;
            }
            per_stream[stream as usize] += 1;
            let o = rng.below(4) as u8;
            let len = match rng.below(4) {
                0 => rng.below(64) as u32,
                1 => rng.below(mtu as u64 * 4) as u32,
                _ => rng.below(mtu as u64 * 12) as u32,
            };
            let off = rng.below((MEM_LEN - len as usize) as u64);
            let w = WorkReq {
                conn,
                stream: stream as u32,
                op: o,
                wr_id: 1000 + id,
                laddr: MEM_BASE + off,
                len,
                raddr: DST + rng.below(0x10_0000 - len as u64),
                rkey,
                imm: rng.next() as u32,
            };
            let op = if o == op::WRITE || o == op::WRITE_IMM {
                WrOp::Write { remote_addr: w.raddr, rkey }
            } else {
                WrOp::Send
            };
            let imm = (o == op::WRITE_IMM || o == op::SEND_IMM).then_some(w.imm);
            let ref_wr = WorkRequest { wr_id: w.wr_id, op, imm, local: Sge { addr: w.laddr, len: len as u64 } };
            a.post_send(ID_A, stream, ref_wr).unwrap();
            if o != op::WRITE {
                let r = RecvRequest { wr_id: 7000 + id, addr: RECV + 0x1_0000 * id, len: 0x1_0000 };
                b.post_recv(ID_B, stream, r).unwrap();
            }
            rig.wrs.push_back(w);
        }
        let posted = rig.wrs.len();
        // The reference has every request posted before its first poll:
        // no decision completes until the engine has taken them all.
        rig.hold_reads = true;
        rig.run_until(10_000, |r| r.wrs.is_empty());
        rig.run(4);
        rig.hold_reads = false;
        // Frames to the peer and SACKs back, each after a random delay.
        let mut to_b: VecDeque<(u64, WirePacket)> = VecDeque::new();
        let mut to_model: VecDeque<(u64, WirePacket)> = VecDeque::new();
        let mut ref_pkts: Vec<WirePacket> = Vec::new();
        let mut ref_cqes = Vec::new();
        let mut seen_frames = 0;
        let mut sacks_started = 0;
        let mut tails_fired = 0;
        let mut timers = 0;
        let mut sack_log: VecDeque<WirePacket> = VecDeque::new();
        let delay = 100 + rng.below(1500);
        for _ in 0..600_000u64 {
            if rig.cqes.len() >= posted && to_b.is_empty() && to_model.is_empty() {
                break;
            }
            let now = rig.cycle;
            let ts_ns = rig.ts() as u64 * unit;
            // Feed the model's SACK input from the delayed queue.
            while to_model.front().is_some_and(|(t, _)| *t <= now) {
                let (_, p) = to_model.pop_front().unwrap();
                if rng.chance(loss) {
                    continue;
                }
                if let Some(s) = sack_in(conn, &p) {
                    rig.sacks.push_back(s);
                    sack_log.push_back(p);
                }
            }
            while to_b.front().is_some_and(|(t, _)| *t <= now) {
                let (_, p) = to_b.pop_front().unwrap();
                if rng.chance(loss) {
                    continue;
                }
                b.handle_packet(ts_ns, &p);
                while let Some(ans) = b.poll_transmit(ts_ns) {
                    to_model.push_back((now + delay + rng.below(50), ans));
                }
            }
            rig.step();
            // Decisions made in the cycle just clocked: the reference
            // decides at the same timestamp, then takes the SACK the engine
            // started in that cycle (the engine orders them so).
            let st = rig.tx.outputs().stats;
            if st.tx_data || st.tx_retx || st.tx_probe {
                let Some(p) = a.poll_transmit(ts_ns) else {
                    panic!(
                        "seed {seed}: the engine sent packet {} at cycle {} ({st:?}); the reference has nothing: {:?}",
                        ref_pkts.len(),
                        rig.cycle,
                        a.conn_info(ID_A).map(|i| (
                            i.cc,
                            i.paths.iter().map(|p| (p.inflight, p.cwnd, p.next_psn, p.cum_acked)).collect::<Vec<_>>()
                        ))
                    );
                };
                ref_pkts.push(p);
            }
            if rig.tx.sacks_started > sacks_started {
                sacks_started = rig.tx.sacks_started;
                let p = sack_log.pop_front().expect("a SACK the engine took");
                a.handle_packet(ts_ns, &p);
                ref_cqes.extend(a.poll_cq(64));
            }
            if rig.tx.tails_fired > tails_fired || rig.pt.timers_injected > timers {
                // The engine's tail timer fired, or path_telemetry's scanner
                // found a timer due: the reference's, armed at the same
                // time, is due too.
                tails_fired = rig.tx.tails_fired;
                timers = rig.pt.timers_injected;
                a.on_timer(ts_ns);
            }
            for f in &rig.frames[seen_frames..] {
                to_b.push_back((rig.cycle + delay, wire_of(f)));
            }
            seen_frames = rig.frames.len();
        }
        assert_eq!(rig.cqes.len(), posted, "seed {seed}: every request completes");
        let frames: Vec<WirePacket> = rig.frames.iter().map(wire_of).collect();
        assert_eq!(frames.len(), ref_pkts.len(), "seed {seed}: as many packets as the reference");
        for (k, (m, r)) in frames.iter().zip(&ref_pkts).enumerate() {
            assert_eq!((m.sport, m.dport, m.plane), (r.sport, r.dport, r.plane), "seed {seed}: packet {k} addressing");
            assert_eq!(m.bytes, r.bytes, "seed {seed}: packet {k} bytes");
        }
        assert_eq!(ref_cqes.len(), posted, "seed {seed}: the reference completes every request");
        let retx = rig.stats.iter().filter(|(_, s)| s.tx_retx).count();
        let probes = rig.stats.iter().filter(|(_, s)| s.tx_probe).count();
        eprintln!(
            "seed {seed} loss {loss}%: {paths} paths, {posted} requests, {} packets ({retx} retransmitted, {probes} \
             probes), {} cycles",
            frames.len(),
            rig.cycle
        );
        for (m, r) in rig.cqes.iter().zip(&ref_cqes) {
            let op = matches!(r.opcode, CqOpcode::Send) as u8;
            assert_eq!(
                (m.wr_id, m.status, m.opcode, m.stream, m.byte_len, m.imm),
                (r.wr_id, status_code(r.status), op, r.stream as u32, r.byte_len, r.imm),
                "seed {seed}: completion"
            );
        }
        (retx, probes + rig.tx.tails_fired as usize)
    }

    #[test]
    fn random_requests_with_backpressure_match_the_reference_sender() {
        let n = std::env::var("MRNIC_TX_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(6u64);
        for seed in 1..=n {
            run(seed, 0);
        }
    }

    #[test]
    fn lossy_runs_match_the_reference_sender() {
        let n = std::env::var("MRNIC_TX_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(16u64);
        let (mut retx, mut probes) = (0, 0);
        for seed in 1..=n {
            let (r, p) = run(seed, 1 + seed % 8);
            retx += r;
            probes += p;
        }
        assert!(retx > 0 && probes > 0, "the losses reach the retransmission and tail rules: {retx}, {probes}");
    }
}

#[test]
fn the_port_interface_carries_a_request_to_a_frame() {
    use mrnic_model::block::{port_index, zero_values, Bits, Block};
    let cfg = small();
    let p = TxEngineParams::from_config(&cfg).unwrap();
    let mut tx = TxEngine::new(p);
    let ports = tx.ports().to_vec();
    let mut names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ports.len(), "port names are unique");
    let mut inp = zero_values(&ports);
    let mut out = zero_values(&ports);
    let set = |v: &mut Vec<Bits>, name: &str, x: u64| {
        let i = port_index(&ports, name).unwrap();
        v[i] = Bits::from_u64(ports[i].width, x);
    };
    while tx.initializing() {
        tx.eval(&inp, &mut out);
        tx.tick(&inp);
    }
    // A WRITE on a connection that was never opened completes at once,
    // flushed: through the ports, one completion with the request's id.
    set(&mut inp, "s_wr_valid", 1);
    set(&mut inp, "s_wr_conn", 5);
    set(&mut inp, "s_wr_wr_id", 0xfeed);
    set(&mut inp, "s_wr_len", 100);
    set(&mut inp, "m_cqe_ready", 1);
    let mut seen = Vec::new();
    for _ in 0..20 {
        tx.eval(&inp, &mut out);
        let taken = out[port_index(&ports, "s_wr_ready").unwrap()].bit(0);
        if out[port_index(&ports, "m_cqe_valid").unwrap()].bit(0) {
            seen.push((
                out[port_index(&ports, "m_cqe_wr_id").unwrap()].as_u64(),
                out[port_index(&ports, "m_cqe_status").unwrap()].as_u64(),
                out[port_index(&ports, "m_cqe_conn").unwrap()].as_u64(),
            ));
        }
        tx.tick(&inp);
        if taken {
            set(&mut inp, "s_wr_valid", 0);
        }
    }
    assert_eq!(seen, [(0xfeed, status::WR_FLUSH as u64, 5)], "one flushed completion");
}

/// RNR back-offs: the packet is resent once `rto_min` after the NACK; an
/// RNR timer entry made stale (its slot re-armed by a later RNR NACK after
/// a BAD_HDR resend) is skipped at the head by its tag, not acted on.
#[test]
fn rnr_back_offs_resend_after_rto_min_and_stale_entries_are_skipped() {
    let mut rig = Rig::new(small(), 8);
    rig.open(5, 1, 0);
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(5, 0, op::SEND, 50, 0, 3 * mtu));
    assert!(rig.run_until(50_000, |r| r.frames.len() >= 3));
    let rto_cycles = rig.cfg.timers.rto_min_us as u64 * 1000 / rig.cfg.timers.ts_unit_ns as u64 * rig.cycles_per_ts;
    let nack = |psn| NackIn { conn: 5, path_id: 0, code: NackCode::Rnr as u8, psn };
    // psn 0 and 2 acknowledged, psn 1 refused for want of a receive.
    let ts = rig.data_frames()[2].0.tx_ts;
    rig.sacks.push_back(sack_for(5, 0, 1, &[2], ts));
    rig.nacks.push_back(nack(1));
    rig.run(200);
    // A BAD_HDR NACK resends psn 1 at once; a second RNR NACK re-arms it.
    rig.nacks.push_back(NackIn { code: NackCode::BadHdr as u8, ..nack(1) });
    assert!(rig.run_until(2_000, |r| r.frames.len() >= 4), "the BAD_HDR NACK resends");
    rig.run(rto_cycles / 2);
    let rearmed = rig.cycle;
    rig.nacks.push_back(nack(1));
    // The first entry's deadline passes: stale, nothing leaves.
    rig.run(rto_cycles * 3 / 4);
    assert_eq!(rig.frames.len(), 4, "the stale RNR entry resends nothing");
    assert!(rig.run_until(rto_cycles, |r| r.frames.len() >= 5), "the live entry resends");
    let resent = rig.frames[4].first;
    assert!(
        resent >= rearmed + rto_cycles - 2 * rig.cycles_per_ts,
        "resent {} cycles after the re-arm",
        resent - rearmed
    );
    let (h, _, _) = rig.data_frames()[4];
    assert_eq!(h.path_psn, 1);
    rig.sacks.push_back(sack_for(5, 0, 3, &[], h.tx_ts));
    rig.run(2 * rto_cycles);
    // The path's timeout may send PROBEs meanwhile; data, only the two resends.
    let psns: Vec<u32> = rig.data_frames().iter().map(|f| f.0.path_psn).collect();
    assert_eq!(psns, [0, 1, 2, 1, 1], "exactly the two resends");
    assert_eq!(rig.cqes.len(), 1);
    assert_eq!(rig.cqes[0].status, status::SUCCESS);
}

/// An AXI read error fails the connection: the culprit completes with
/// LOCAL_PROTECTION, then every other request is flushed by the completion
/// walk (one per cycle into a 4-entry FIFO, held back by `m_cqe_ready`), in
/// msn order per stream, each once; a request posted after the failure is
/// flushed after the walk.
#[test]
fn an_axi_error_fails_the_connection_and_the_walk_flushes_every_request_once() {
    let mut rig = Rig::new(small(), 9);
    rig.press = Pressure { axis: 10, cqe: 60, ar: 10, r_gap: 10 };
    rig.open(6, 2, 0);
    let mtu = rig.cfg.transport.mtu;
    for s in 0..4u32 {
        for k in 0..3u64 {
            let id = s as u64 * 3 + k;
            rig.wrs.push_back(wr(6, s, op::WRITE, id, id * 0x2000, 2 * mtu));
        }
    }
    rig.bad = Some((MEM_BASE + 4 * 0x2000, MEM_BASE + 5 * 0x2000));
    assert!(rig.run_until(100_000, |r| r.cqes.len() >= 12), "every request completes: {:?}", rig.cqes);
    rig.wrs.push_back(wr(6, 2, op::SEND, 99, 0, 10));
    assert!(rig.run_until(10_000, |r| r.cqes.len() >= 13));
    rig.run(2000);
    let got: Vec<(u64, u8, u32)> = rig.cqes.iter().map(|c| (c.wr_id, c.status, c.stream)).collect();
    let mut want = vec![(4, status::LOCAL_PROTECTION, 1)];
    for id in (0..12).filter(|&id| id != 4) {
        want.push((id, status::WR_FLUSH, id as u32 / 3));
    }
    want.push((99, status::WR_FLUSH, 2));
    assert_eq!(got, want, "culprit first, then msn order per stream, each once");
    assert_eq!(rig.tx.failed(6), Some(status::LOCAL_PROTECTION));
    let r4 = 0x7000_0000 + 4 * 0x2000 * 3;
    assert!(
        rig.data_frames().iter().all(
            |(h, _, _)| !matches!(h.place, Placement::Write { addr, .. } if (r4..r4 + 2 * mtu as u64).contains(&addr))
        ),
        "the failed reads' frames are not sent"
    );

    // Opened again, with every work queue slot reused: slots whose failed
    // requests still had packets in flight complete their new requests
    // (the walk left each slot's packet counts equal).
    rig.bad = None;
    rig.open(6, 2, 0);
    rig.run(200);
    let (mut sent, mut cqes) = (rig.data_frames().len(), rig.cqes.len());
    let mut acked = [0u32; 2];
    for round in 0..rig.cfg.hardware.tx_wq_depth as u64 {
        for s in 0..4u32 {
            let id = 1000 + round * 4 + s as u64;
            rig.wrs.push_back(wr(6, s, op::WRITE, id, 64 * id, 64));
        }
        assert!(rig.run_until(20_000, |r| r.data_frames().len() >= sent + 4), "round {round}: frames");
        for (h, _, _) in &rig.data_frames()[sent..] {
            acked[h.path_id as usize] += 1;
        }
        sent += 4;
        let ts = rig.data_frames()[sent - 1].0.tx_ts;
        for path in 0..2u32 {
            rig.sacks.push_back(sack_for(6, path, acked[path as usize], &[], ts));
        }
        assert!(rig.run_until(20_000, |r| r.cqes.len() >= cqes + 4), "round {round}: {:?}", &rig.cqes[cqes..]);
        assert!(rig.cqes[cqes..].iter().all(|c| c.status == status::SUCCESS), "round {round}");
        cqes += 4;
    }
}

/// The completion walk acts on a work queue entry and its packet counts
/// read `L` cycles before (block RAM): with `m_cqe_ready` high, a
/// failure's completions leave a step every `L` cycles, for `small` and
/// `default`'s latencies. The steps: the culprit, stream 0's four
/// requests, stream 0 found empty, the culprit's own slot skipped, the
/// rest of stream 1.
#[test]
fn the_completion_walk_steps_every_table_read_latency() {
    for name in ["small", "default"] {
        let mut cfg = Config::builtin(name).unwrap();
        cfg.transport.connections = 8;
        let mut rig = Rig::new(cfg, 11);
        rig.open(5, 1, 0);
        rig.run(300);
        for s in 0..2u32 {
            for k in 0..4u64 {
                let id = s as u64 * 4 + k;
                rig.wrs.push_back(wr(5, s, op::WRITE, id, id * 0x1000, 64));
            }
        }
        // Stream 1's first request is refused by the host.
        rig.bad = Some((MEM_BASE + 4 * 0x1000, MEM_BASE + 5 * 0x1000));
        assert!(rig.run_until(20_000, |r| r.cqes.len() >= 8), "{name}: {:?}", rig.cqes);
        let got: Vec<(u64, u8)> = rig.cqes.iter().map(|c| (c.wr_id, c.status)).collect();
        let mut want = vec![(4, status::LOCAL_PROTECTION)];
        want.extend([0, 1, 2, 3, 5, 6, 7].map(|id| (id, status::WR_FLUSH)));
        assert_eq!(got, want, "{name}");
        let l = rig.cfg.hardware.table_read_latency as u64;
        let gaps: Vec<u64> = rig.cqe_at.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps, [l, l, l, l, 3 * l, l, l], "{name}: a step every L cycles: {:?}", rig.cqe_at);
    }
}

/// The acknowledgement unit reads the context and the path mirror when a
/// step starts and works `L` cycles later: SACKs naming no path of the
/// connection (dropped, `stat_sack_stale`) are taken one every `L + 2`
/// cycles, for `small` and `default`'s latencies, and each is counted when
/// its reads answer, `L` cycles after its step, as tx_sack finds it stale
/// there (the count once showed a cycle after the step whatever `L`).
#[test]
fn acknowledgement_steps_wait_the_table_read_latency() {
    let mut delays = Vec::new();
    for name in ["small", "default"] {
        let mut cfg = Config::builtin(name).unwrap();
        cfg.transport.connections = 8;
        let mut rig = Rig::new(cfg, 10);
        rig.open(7, 1, 0);
        rig.run(300);
        for _ in 0..4 {
            rig.sacks.push_back(sack_for(7, 3, 0, &[], 0));
        }
        rig.run(100);
        let at: Vec<u64> = rig.stats.iter().filter(|(_, s)| s.sack_stale).map(|(c, _)| *c).collect();
        let l = rig.cfg.hardware.table_read_latency as u64;
        assert_eq!(at.len(), 4, "{name}: four stale SACKs");
        assert!(at.windows(2).all(|w| w[1] - w[0] == l + 2), "{name}: one every L + 2 cycles: {at:?}");
        delays.push(at[0] as i64 - rig.sack_taken[0] as i64 - l as i64);
    }
    assert_eq!(delays[0], delays[1], "counted L cycles after the step on both latencies");
}

// ------------------------------------------------------- port readiness

/// `port_ready` with every plane's bit but those in `full`.
fn all_but(rig: &Rig, full: u32) -> u32 {
    ((1 << rig.cfg.transport.planes) - 1) & !full
}

/// The path choice alone (spec 5.3 "Port readiness", the reference's
/// `TxConn::poll` and `select`): new data and retransmissions take only
/// paths whose port has room; a retransmission on its own path waits for
/// that port, a rerouted one waits for another GOOD path's port and falls
/// back to its own only when no other GOOD path exists at all; full ports
/// alone, and nothing else, make a packet wait.
#[test]
fn the_path_choice_takes_only_ready_ports_and_says_when_full_ports_alone_hold_a_packet() {
    let p = TxEngineParams::from_config(&small()).unwrap();
    let good = |plane: u8| ChoicePath { state: tel::GOOD, plane, cwnd: 1 << 19, ..ChoicePath::default() };
    let marks = vec![None; 4];
    let all = 0b1111;
    let ch = |paths: &[ChoicePath], ready: u32| {
        let c = choose(&p, paths, &marks, ready, 0, true, 0);
        (c.retx_elig, c.retx_port_wait, c.new_elig, c.new_port_wait)
    };
    let paths = [good(0), good(1), good(2)];
    assert_eq!(ch(&paths, all), (0b001, false, 0b111, false), "every port ready: the choice without the rule");
    assert_eq!(ch(&paths, all & !0b010), (0b001, false, 0b101, false), "new data avoids the full port");
    assert_eq!(ch(&paths, 0b110), (0, true, 0b110, false), "its own port full: the retransmission waits");
    assert_eq!(ch(&paths, 0), (0, true, 0, true), "every port full: both wait");
    let mut rerouted = paths;
    rerouted[0].timed_out = true;
    assert_eq!(ch(&rerouted, 0b101).0, 0b100, "rerouted: only to another GOOD path with room");
    let (elig, wait, _, _) = ch(&rerouted, 0b001);
    assert_eq!((elig, wait), (0, true), "every other GOOD path full: it waits, its own port's room unused");
    let mut alone = rerouted;
    alone[1].state = tel::SUSPECT;
    alone[2].state = tel::DEAD;
    assert_eq!(ch(&alone, 0b001).0, 0b001, "no other GOOD path at all: its own path");
    let (elig, wait, _, _) = ch(&alone, 0b110);
    assert_eq!((elig, wait), (0, true), "... and then it waits for its own port");
    alone[0].state = tel::SUSPECT;
    assert_eq!(ch(&alone, 0), (0, false, 0, false), "no GOOD path at all: no port to wait for");
    // Windows full everywhere: nothing waits for a port.
    let shut = paths.map(|mut c| {
        c.inflight = 1;
        c.cwnd = p.cfg.transport.mtu;
        c
    });
    assert!(!ch(&shut, 0).3, "windows, not ports, hold new data");
    // A path held by its ring and by its port is not held by the ring alone.
    let mut ring = [good(0), good(1)];
    ring[1].next_psn = p.ring_depth;
    let held = |ready| choose(&p, &ring, &marks, ready, 0, true, 0).ring_held;
    assert!(held(all) && !held(0b01));
}

/// A full port holds new data off its plane: every packet of a message
/// leaves by the three other planes, each once, in order.
#[test]
fn a_full_port_holds_new_data_off_its_plane() {
    let mut rig = Rig::new(small(), 21);
    rig.open(0, 4, 0);
    rig.run(200);
    rig.ports = all_but(&rig, 1 << 1);
    let mtu = rig.cfg.transport.mtu;
    let w = wr(0, 0, op::WRITE, 1, 0, 12 * mtu);
    rig.wrs.push_back(w);
    assert!(rig.run_until(50_000, |r| r.frames.len() >= 12));
    rig.run(1000);
    let planes: Vec<u8> = rig.frames.iter().map(|f| f.plane).collect();
    assert!(!planes.contains(&1), "planes {planes:?}");
    assert!([0, 2, 3].iter().all(|q| planes.contains(q)), "the others share it: {planes:?}");
    check_data_frames(&rig, &[w], 0);
}

/// Every port full: no data leaves and no decision is spent on the
/// connection; an answer still leaves. A port that drains wakes it; when
/// that port fills again it waits again; with every port ready the rest
/// leaves, every packet once and in order, and the message completes.
#[test]
fn with_every_port_full_nothing_leaves_nothing_is_lost_and_a_drained_port_wakes_the_connection() {
    let mut rig = Rig::new(small(), 22);
    rig.open(0, 4, 0);
    rig.run(200);
    rig.ports = 0;
    let mtu = rig.cfg.transport.mtu;
    let w = wr(0, 0, op::SEND, 7, 0x40, 10 * mtu - 3);
    rig.wrs.push_back(w);
    rig.run(3000);
    assert!(rig.frames.is_empty(), "no port has room");
    let stalled_at = rig.tx.decisions;
    assert!(stalled_at <= 1, "{stalled_at} decisions");
    rig.csacks.push_back(SackOut { conn: 0, path_id: 2, sport: 50002, plane: 2, ..SackOut::default() });
    assert!(rig.run_until(1000, |r| r.frames.len() == 1), "answers leave regardless");
    assert!(rig.data_frames().is_empty());
    rig.run(3000);
    assert_eq!(rig.tx.decisions, stalled_at, "no decision while every port stays full");
    rig.ports = 1 << 2;
    assert!(rig.run_until(2000, |r| !r.data_frames().is_empty()), "the drained port woke the connection");
    rig.ports = 0;
    rig.run(3000);
    let early = rig.data_frames().len();
    assert!(early < 10, "{early} packets: the refilled port holds the rest");
    assert!(rig.frames.iter().skip(1).all(|f| f.plane == 2), "only by the port that had room");
    let decisions = rig.tx.decisions;
    rig.run(3000);
    assert_eq!((rig.tx.decisions, rig.data_frames().len()), (decisions, early), "waiting again");
    rig.ports = u32::MAX;
    assert!(rig.run_until(50_000, |r| r.data_frames().len() >= 10));
    rig.run(1000);
    check_data_frames(&rig, &[w], 0);
    let ts = rig.data_frames()[9].0.tx_ts;
    for p in 0..4 {
        let sent = rig.data_frames().iter().filter(|f| f.0.path_id == p).count() as u32;
        rig.sacks.push_back(sack_for(0, p as u32, sent, &[], ts));
    }
    assert!(rig.run_until(20_000, |r| !r.cqes.is_empty()));
    assert_eq!(rig.cqes[0].status, status::SUCCESS);
}

/// Connection 0 on two paths (planes 0 and 1), a WRITE of `packets` MTUs
/// sent.
fn two_paths_sent(seed: u64, packets: u32) -> Rig {
    let mut rig = Rig::new(small(), seed);
    rig.open(0, 2, 0);
    rig.run(200);
    let mtu = rig.cfg.transport.mtu;
    rig.wrs.push_back(wr(0, 0, op::WRITE, 1, 0, packets * mtu));
    assert!(rig.run_until(50_000, |r| r.frames.len() >= packets as usize));
    rig
}

/// Two paths on planes 0 and 1, six packets out and acknowledged but for
/// a hole on path 0; plane 0's port full. The retransmission waits for it
/// although path 1's port has room, and a new message does not overtake
/// it; when the port drains the retransmission leaves first, on its path.
#[test]
fn a_retransmission_waits_for_its_own_full_port_and_nothing_overtakes_it() {
    let mut rig = two_paths_sent(23, 6);
    let mtu = rig.cfg.transport.mtu;
    rig.run(500);
    let sent = rig.data_frames();
    let n0 = sent.iter().filter(|f| f.0.path_id == 0).count() as u32;
    assert!(n0 >= 3, "{n0} packets on path 0");
    let ts = sent[5].0.tx_ts;
    rig.ports = all_but(&rig, 1 << 0);
    // psn 1 of path 0 is missing.
    rig.sacks.push_back(sack_for(0, 0, 1, &(2..n0).collect::<Vec<_>>(), ts));
    rig.sacks.push_back(sack_for(0, 1, 6 - n0, &[], ts));
    let second = wr(0, 0, op::WRITE, 2, 0x2000, 2 * mtu);
    rig.wrs.push_back(second);
    rig.run(3000);
    assert_eq!(rig.data_frames().len(), 6, "the retransmission waits for its port, the new message behind it");
    let decisions = rig.tx.decisions;
    rig.run(3000);
    assert_eq!(rig.tx.decisions, decisions, "no decision while its port stays full");
    rig.ports = u32::MAX;
    assert!(rig.run_until(20_000, |r| r.data_frames().len() >= 9));
    let all = rig.data_frames();
    let (h, _, _) = &all[6];
    assert!(h.flags.retx && (h.path_id, h.path_psn) == (0, 1), "the retransmission first: {h:?}");
    let planes = rig.data_planes();
    assert_eq!(planes[6], 0, "on its own path's port");
    assert!(all[7..].iter().all(|f| !f.0.flags.retx), "then the new message");
}

/// Two paths on planes 0 and 1; path 1's packets acknowledged, path 0's
/// never: at path 0's first timeout its oldest packet is retransmitted,
/// rerouted (its own path has timed out), but path 1's port is full. It
/// waits, though path 0's port has room; when path 1's port drains it
/// leaves by it.
#[test]
fn a_rerouted_retransmission_waits_for_another_paths_port() {
    let mut rig = two_paths_sent(24, 4);
    let sent = rig.data_frames();
    let n1 = sent.iter().filter(|f| f.0.path_id == 1).count() as u32;
    assert!((1..4).contains(&n1), "{n1} packets on path 1");
    rig.sacks.push_back(sack_for(0, 1, n1, &[], sent[3].0.tx_ts));
    rig.ports = all_but(&rig, 1 << 1);
    // Past path 0's first timeout (rto_min: 10,000 cycles after its
    // packets left), before its second.
    rig.run(15_000);
    let retx = |r: &Rig| r.data_frames().iter().filter(|f| f.0.flags.retx).count();
    assert_eq!(rig.data_frames().len(), 4, "the rerouted retransmission waits for path 1's port");
    assert!(rig.frames.len() > 4, "the timeout's PROBE left by path 0");
    rig.ports = u32::MAX;
    assert!(rig.run_until(2000, |r| retx(r) == 1), "the drained port woke the connection");
    let (h, _, _) = &rig.data_frames()[4];
    assert_eq!((h.path_id, h.path_psn), (0, 0));
    assert_eq!(rig.data_planes()[4], 1, "by path 1's port");
}

/// The reference's `TxConn::on_timer` fails a connection with
/// TransportRetryExceeded once every one of its paths is DEAD (spec: "the
/// connection fails only when every path is DEAD"). Connection 1 sends
/// into a silent peer (no SACK, no PROBE answered) on two of the NIC's
/// paths; its paths time out, go SUSPECT, then DEAD. It fails in the step
/// of the timeout that leaves its last path DEAD, not before (its paths
/// past `npaths` count for nothing), and every request, in flight or not
/// yet sent, completes once with TRANSPORT_RETRY_EXCEEDED, in msn order
/// per stream. Connection 2, open and idle meanwhile, is unaffected: its
/// requests after the failure complete with SUCCESS once SACKed. Both
/// configs' read latencies.
#[test]
fn a_connection_whose_every_path_is_dead_fails_and_flushes_every_request_once() {
    for name in ["small", "default"] {
        let mut cfg = Config::builtin(name).unwrap();
        cfg.transport.connections = 8;
        cfg.timers.rto_min_us = 10;
        cfg.timers.rto_max_us = 40;
        cfg.timers.dead_probe_interval_us = 60;
        cfg.hardware.tx_ring_depth = 4;
        let npaths = 2;
        assert!(cfg.transport.paths_per_conn > npaths, "{name}: a path past npaths exists");
        let mut rig = Rig::new(cfg, 23);
        rig.tx.taps.rto = Some(RtoTap::default());
        rig.open(1, npaths, 0);
        rig.open(2, npaths, 0);
        rig.run(300);
        let mtu = rig.cfg.transport.mtu;
        let mut ids = Vec::new();
        for s in 0..2u32 {
            for k in 0..3u64 {
                let id = u64::from(s) * 3 + k;
                ids.push((id, s));
                rig.wrs.push_back(wr(1, s, op::WRITE, id, id * 0x2000, 2 * mtu));
            }
        }
        // The paths' states as the handlers wrote them.
        let mut state = [tel::GOOD; 8];
        let mut failed_at = None;
        for cycle in 0..3_000_000u64 {
            rig.step();
            if let Some(r) = rig.tx.taps.rto.as_ref().and_then(|t| t.step.clone()) {
                let (c, p, st) = match (r.rto, r.upd) {
                    (Some(x), _) => (x.conn, x.path, x.state),
                    (None, Some(u)) => (u.conn, u.path, u.state),
                    _ => unreachable!("a step has a record"),
                };
                assert!(c == 1, "{name}: only connection 1 has timers running: {c}");
                if !r.failed {
                    state[p as usize] = st;
                }
            }
            let all_dead = state[..npaths as usize].iter().all(|&s| s == tel::DEAD);
            match rig.tx.failed(1) {
                None => assert!(!all_dead, "{name}: every path DEAD at cycle {cycle}, and no failure"),
                Some(st) => {
                    assert_eq!(st, status::TRANSPORT_RETRY_EXCEEDED, "{name}");
                    assert!(all_dead, "{name}: failed at cycle {cycle} with paths {state:?}");
                    failed_at = Some(cycle);
                    break;
                }
            }
        }
        assert!(failed_at.is_some(), "{name}: every path of connection 1 went DEAD and it never failed: {state:?}");
        assert!(
            rig.run_until(50_000, |r| r.cqes.len() >= ids.len()),
            "{name}: every request completes: {:?}",
            rig.cqes
        );
        rig.run(2_000);
        let got: Vec<(u64, u32, u8)> = rig.cqes.iter().map(|c| (c.wr_id, c.stream, c.status)).collect();
        let want: Vec<(u64, u32, u8)> = ids.iter().map(|&(id, s)| (id, s, status::TRANSPORT_RETRY_EXCEEDED)).collect();
        assert_eq!(got, want, "{name}: each once, in msn order per stream, with the failure's status");
        assert!(rig.data_frames().len() >= 2, "{name}: some requests were in flight");

        // Connection 2 is unaffected.
        assert_eq!(rig.tx.failed(2), None, "{name}");
        let sent = rig.data_frames().len();
        for s in 0..2u32 {
            rig.wrs.push_back(wr(2, s, op::WRITE, 100 + u64::from(s), 0x100 * u64::from(s), 64));
        }
        assert!(rig.run_until(20_000, |r| r.data_frames().len() >= sent + 2), "{name}: connection 2 sends");
        let mut acked = [0u32; 2];
        for (h, _, _) in &rig.data_frames()[sent..] {
            acked[h.path_id as usize] += 1;
        }
        let ts = rig.data_frames().last().expect("sent").0.tx_ts;
        for path in 0..2u32 {
            if acked[path as usize] > 0 {
                rig.sacks.push_back(sack_for(2, path, acked[path as usize], &[], ts));
            }
        }
        let n = rig.cqes.len();
        assert!(rig.run_until(20_000, |r| r.cqes.len() >= n + 2), "{name}: {:?}", &rig.cqes[n..]);
        assert!(
            rig.cqes[n..].iter().all(|c| c.conn == 2 && c.status == status::SUCCESS),
            "{name}: {:?}",
            &rig.cqes[n..]
        );
    }
}

/// Timer FIFOs of 4 entries: 4 connections of one path and a ring of 4
/// (`rnr_depth = max(4, 1 x 4)`, `wprobe_depth = 4`), and a message table
/// of 1, so a second message waits for the first's completion.
fn tiny_fifos() -> Config {
    let mut cfg = small();
    cfg.transport.connections = 4;
    cfg.transport.paths_per_conn = 1;
    cfg.hardware.tx_ring_depth = 4;
    cfg.hardware.msg_table_depth = 1;
    cfg
}

fn pulses(rig: &Rig, of: impl Fn(&Stats) -> bool) -> usize {
    rig.stats.iter().filter(|(_, s)| of(s)).count()
}

fn rto_cycles(rig: &Rig) -> u64 {
    rig.cfg.timers.rto_min_us as u64 * 1000 / rig.cfg.timers.ts_unit_ns as u64 * rig.cycles_per_ts
}

/// The RNR FIFO full: RNR NACKs past its depth start no back-off and are
/// counted, once each; their packets stay outstanding, a SACK of a later
/// packet resends them (as for a NACK lost on the wire), the back-offs
/// resend theirs, and every message completes exactly once.
#[test]
fn rnr_nacks_past_the_fifo_depth_start_no_back_off_and_their_packets_are_resent() {
    let mut rig = Rig::new(tiny_fifos(), 31);
    let p = rig.tx.params().clone();
    assert_eq!((p.rnr_depth, p.wprobe_depth), (4, 4));
    rig.open(0, 1, 0);
    rig.open(1, 1, 0);
    let mtu = rig.cfg.transport.mtu;
    // Told apart by their lengths: 4 packets on connection 0, 3 on 1.
    let (len0, len1) = (4 * mtu, 3 * mtu - 5);
    rig.wrs.push_back(wr(0, 0, op::SEND, 70, 0, len0));
    rig.wrs.push_back(wr(1, 0, op::SEND, 71, 0x8000, len1));
    assert!(rig.run_until(50_000, |r| r.frames.len() >= 7));
    let rnr = |conn, psn| NackIn { conn, path_id: 0, code: NackCode::Rnr as u8, psn };
    for psn in 0..4 {
        rig.nacks.push_back(rnr(0, psn));
    }
    rig.nacks.push_back(rnr(1, 0));
    rig.nacks.push_back(rnr(1, 1));
    rig.run(200);
    assert_eq!(pulses(&rig, |s| s.rnr_full), 2, "connection 1's two NACKs found the FIFO full");
    // The peer acknowledges connection 1's third packet: the two before
    // it are lost and resent at once.
    let psns = |r: &Rig, len| -> Vec<u32> {
        r.data_frames().iter().filter(|f| f.0.msg_len == len).map(|f| f.0.path_psn).collect()
    };
    let ts = rig.data_frames().iter().rfind(|f| f.0.msg_len == len1).unwrap().0.tx_ts;
    rig.sacks.push_back(sack_for(1, 0, 0, &[2], ts));
    assert!(rig.run_until(5_000, |r| r.frames.len() >= 9), "the SACK resends the refused packets");
    assert_eq!(psns(&rig, len1), [0, 1, 2, 0, 1], "connection 1: the two refused packets resent, once each");
    assert_eq!(psns(&rig, len0), [0, 1, 2, 3], "connection 0's back-offs still run");
    // The back-offs end rto_min after their NACKs and resend the rest.
    let rto = rto_cycles(&rig);
    assert!(rig.run_until(2 * rto, |r| psns(r, len0).len() >= 8), "the back-offs resend");
    assert_eq!(psns(&rig, len0), [0, 1, 2, 3, 0, 1, 2, 3]);
    for (conn, len) in [(0, len0), (1, len1)] {
        let ts = rig.data_frames().iter().rfind(|f| f.0.msg_len == len).unwrap().0.tx_ts;
        rig.sacks.push_back(sack_for(conn, 0, len.div_ceil(mtu), &[], ts));
    }
    assert!(rig.run_until(20_000, |r| r.cqes.len() >= 2), "both messages complete");
    rig.run(4 * rto);
    let mut done: Vec<(u64, u8)> = rig.cqes.iter().map(|c| (c.wr_id, c.status)).collect();
    done.sort_unstable();
    assert_eq!(done, [(70, status::SUCCESS), (71, status::SUCCESS)], "each once, successful");
    assert_eq!(pulses(&rig, |s| s.rnr_full), 2, "no later refusal");
    assert_eq!(rig.data_frames().len(), 13, "nothing else resent");
}

/// RNR tags are `log2(rnr_depth)` bits and wrap (2 bits here): after the
/// counter has gone round, a stale entry is still told from its slot's
/// later back-off two tags on, which a 1-bit tag would confuse with it.
#[test]
fn rnr_tags_wrap_and_a_stale_entry_two_tags_back_is_still_skipped() {
    let mut rig = Rig::new(tiny_fifos(), 33);
    assert_eq!(rig.tx.params().rnr_tag_bits, 2);
    rig.open(0, 1, 0);
    rig.open(1, 1, 0);
    let mtu = rig.cfg.transport.mtu;
    let rto = rto_cycles(&rig);
    let rnr = |conn, psn| NackIn { conn, path_id: 0, code: NackCode::Rnr as u8, psn };
    // Told apart by their lengths.
    let (len0, len1) = (4 * mtu, 2 * mtu - 7);
    let psns = |r: &Rig, conn: u32| -> Vec<u32> {
        let len = if conn == 0 { len0 } else { len1 };
        r.data_frames().iter().filter(|f| f.0.msg_len == len).map(|f| f.0.path_psn).collect()
    };
    // Four back-offs on connection 0 (tags 0..=3) take the counter round.
    rig.wrs.push_back(wr(0, 0, op::SEND, 80, 0, len0));
    assert!(rig.run_until(50_000, |r| r.frames.len() >= 4));
    for psn in 0..4 {
        rig.nacks.push_back(rnr(0, psn));
    }
    assert!(rig.run_until(2 * rto, |r| psns(r, 0).len() >= 8), "the four back-offs resend");
    let ts = rig.data_frames()[7].0.tx_ts;
    rig.sacks.push_back(sack_for(0, 0, 4, &[], ts));
    assert!(rig.run_until(20_000, |r| !r.cqes.is_empty()));
    // Connection 1's psn 0 backs off (tag 0, wrapped), is resent by a
    // BAD_HDR NACK, its psn 1 backs off (tag 1) and psn 0 again (tag 2):
    // the FIFO's head (tag 0) is stale.
    rig.wrs.push_back(wr(1, 0, op::SEND, 81, 0x4000, len1));
    assert!(rig.run_until(50_000, |r| psns(r, 1).len() >= 2));
    let first = rig.cycle;
    rig.nacks.push_back(rnr(1, 0));
    rig.run(200);
    rig.nacks.push_back(NackIn { code: NackCode::BadHdr as u8, ..rnr(1, 0) });
    assert!(rig.run_until(2_000, |r| psns(r, 1).len() >= 3), "the BAD_HDR NACK resends psn 0");
    rig.nacks.push_back(rnr(1, 1));
    rig.run(rto / 2 - (rig.cycle - first));
    rig.nacks.push_back(rnr(1, 0));
    // Past the stale entry's deadline and psn 1's: only psn 1 leaves.
    rig.run(rto * 3 / 4);
    assert_eq!(psns(&rig, 1), [0, 1, 0, 1], "the stale head resends nothing; psn 1's back-off resends it");
    assert!(rig.run_until(rto, |r| psns(r, 1).len() >= 5), "the live re-arm resends psn 0");
    assert_eq!(psns(&rig, 1)[4], 0);
    let ts = rig.data_frames().last().unwrap().0.tx_ts;
    rig.sacks.push_back(sack_for(1, 0, 2, &[], ts));
    assert!(rig.run_until(20_000, |r| r.cqes.len() >= 2));
    rig.run(2 * rto);
    let done: Vec<(u64, u8)> = rig.cqes.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(done, [(80, status::SUCCESS), (81, status::SUCCESS)], "each once, successful");
    assert_eq!(psns(&rig, 1).len(), 5, "nothing else resent");
}

/// The window-probe FIFO full of probes, one of them stale: a connection
/// blocked on the peer's message table with nothing in flight arms no
/// probe (counted once) and stalls; the FIFO's next pop wakes it, it arms
/// one then, and its PROBE leaves.
#[test]
fn a_window_probe_refused_for_the_full_fifo_is_armed_after_the_next_pop() {
    let mut rig = Rig::new(tiny_fifos(), 32);
    let rto = rto_cycles(&rig);
    for c in 0..4 {
        rig.open(c, 1, 0);
    }
    // Connection 0 has three one-packet messages, the others two: with a
    // message table of 1, the second waits for the first's completion.
    for c in 0..4u32 {
        for k in 0..if c == 0 { 3 } else { 2 } {
            rig.wrs.push_back(wr(c, 0, op::SEND, u64::from(10 * c + k), u64::from(0x400 * (4 * c + k)), 100));
        }
    }
    assert!(rig.run_until(20_000, |r| r.data_frames().len() >= 4), "each first message sent");
    // PROBEs by connection: path 0's source port (no path here times out
    // often enough to be given a fresh one).
    let probes_of = |r: &Rig, c: u32| -> Vec<u64> {
        r.frames
            .iter()
            .filter_map(|f| decode_frame(&f.bytes).ok().map(|d| (d, f.first)))
            .filter(|(d, _)| matches!(d.header, Header::Probe(_)) && d.net.src_port == 49152 + c as u16)
            .map(|(_, at)| at)
            .collect()
    };
    let ack = |conn, cum, completed, ts| SackIn { completed_msn: completed, ..sack_for(conn, 0, cum, &[], ts) };
    let ts = rig.data_frames()[3].0.tx_ts;
    // Every first packet acknowledged, no message completed: four
    // connections blocked and quiet, four live probes fill the FIFO.
    for c in 0..4 {
        rig.sacks.push_back(ack(c, 1, 0, ts));
    }
    rig.run(2_000);
    assert_eq!(pulses(&rig, |s| s.wprobe_full), 0, "four live probes fit");
    // Connection 0's first message completes: its probe goes stale in
    // the FIFO, its second message leaves, is acknowledged, and the third
    // blocks it again with the FIFO still full.
    rig.sacks.push_back(ack(0, 1, 1, ts));
    assert!(rig.run_until(5_000, |r| r.data_frames().len() >= 5), "the second message leaves");
    let ts = rig.data_frames()[4].0.tx_ts;
    rig.sacks.push_back(ack(0, 2, 1, ts));
    rig.run(2_000);
    assert_eq!(pulses(&rig, |s| s.wprobe_full), 1, "connection 0's probe refused, once");
    assert!((0..4).all(|c| probes_of(&rig, c).is_empty()), "no probe due yet");
    let refused = rig.cycle;
    // The stale head pops at its deadline and wakes connection 0, which
    // arms its probe then; the other three PROBEs leave at their
    // deadlines, connection 0's rto_min later.
    assert!(rig.run_until(3 * rto, |r| !probes_of(r, 0).is_empty()), "connection 0's PROBE left after all");
    let first = (1..4).map(|c| probes_of(&rig, c)[0]).min().unwrap();
    let own = probes_of(&rig, 0)[0];
    assert!(own > first + rto / 2 && own > refused + rto, "connection 0's PROBE is the re-armed one");
    assert_eq!(pulses(&rig, |s| s.wprobe_full), 1, "armed at the first try after the pop");
    // Every message completes, exactly once.
    for c in 0..4 {
        rig.sacks.push_back(ack(c, if c == 0 { 2 } else { 1 }, if c == 0 { 2 } else { 1 }, 0));
    }
    assert!(rig.run_until(10_000, |r| r.data_frames().len() >= 9), "the waiting messages leave");
    let frames = rig.data_frames();
    for c in 0..4u32 {
        let n = frames.iter().filter(|f| f.2.src_port == 49152 + c as u16).count() as u32;
        let last = if c == 0 { 3 } else { 2 };
        assert_eq!(n, last, "connection {c}: each message's one packet once");
        rig.sacks.push_back(ack(c, last, last, 0));
    }
    assert!(rig.run_until(10_000, |r| r.cqes.len() >= 9));
    rig.run(2 * rto);
    let mut ids: Vec<u64> = rig.cqes.iter().map(|c| c.wr_id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 10, 11, 20, 21, 30, 31]);
    assert!(rig.cqes.iter().all(|c| c.status == status::SUCCESS));
}

#[test]
fn a_step_sends_at_most_suspect_after_rtos_silent_events_per_path() {
    // Walk order kept, each path's first three only: the rest would meet a
    // path already SUSPECT (path_telemetry ignores them there).
    let lost = [2, 2, 0, 2, 2, 1, 2, 0, 0, 0, 0];
    let sent: Vec<u32> = silent_events(&lost, 3).collect();
    assert_eq!(sent, [2, 2, 0, 2, 1, 0, 0]);
    assert_eq!(silent_events(&lost, 1).collect::<Vec<_>>(), [2, 0, 1]);
    // The pending list holds one step's events at most.
    let p = TxEngineParams::from_config(&small()).unwrap();
    // small: 4 paths, suspect_after_rtos 3 (docs/architecture.md: 14).
    let most = 14;
    assert_eq!(p.evt_pend, most);
    let many: Vec<u32> = (0..4 * p.ring_depth).map(|i| i % p.paths).collect();
    assert_eq!(silent_events(&many, p.cfg.timers.suspect_after_rtos as u8).count() as u32 + 2, most);
}
