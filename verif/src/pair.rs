//! Two model tops back to back: the `mrnic bench model` workload.
//!
//! NIC A (address 1) and NIC B (address 2) are each a [`NicRig`] (the
//! model's `mrnic_core` with host memory); every frame one sends enters the
//! other's MAC port on the same plane, a cycle of each per step. Both open
//! `conns` connections to each other with every path of the config, and
//! both keep every connection busy with a mix of work requests of mixed
//! sizes (64 B to three MTUs), at most `per_conn` outstanding each, on the
//! connection's streams in turn: RDMA WRITEs into the peer's region, and,
//! where the peer has a receive posted on that stream that no earlier
//! request has claimed, SENDs, SENDs with immediate data and WRITEs with
//! immediate data. Each NIC posts `min(per_conn, recv_queue_depth)`
//! receives per (connection, stream) at the start and posts each again
//! once its completion was checked, through `s_post` / `s_rpost` while the
//! clock runs. So both directions carry data and the SACKs, ACKREQs,
//! placements and completions of every opcode.
//!
//! The run checks itself: every request completes exactly once, with
//! success; every receive completes once, in the order its stream's
//! requests claimed receives, with the claiming request's length and
//! immediate, and a SEND's receive buffer then holds the sender's source
//! bytes; and [`Pair::finish`] compares what the WRITEs landed in each
//! region with the peer's source bytes (each request has its own slot until
//! it completes, and a slot's source bytes never change, so every byte a
//! slot's WRITEs covered must equal the source).

use std::collections::VecDeque;

use mrnic_model::cqe_merge::{opcode, Cqe};
use mrnic_model::tx_engine::{op, status};
use mrnic_proto::Config;

use crate::nic::{mac_of, NicRig, OpenConn, Pressure};
use crate::stimulus::Rng;

/// The region both NICs register: source bytes in its first half, the
/// peer's WRITEs land in its second.
const KEY: u32 = 16;
const BASE: u64 = 0x1000_0000;
/// Receive wr_ids: this bit, the (conn, stream) lane and the buffer.
const RECV_WR: u64 = 1 << 48;

/// Receive buffer `b` of `lane`, in the receive area at `area` (past the
/// region's two halves).
fn recv_buf(area: u64, lane: usize, b: usize, recvs: usize, slot_bytes: u64) -> u64 {
    BASE + area + (lane * recvs + b) as u64 * slot_bytes
}

fn recv_wr_id(lane: usize, b: usize) -> u64 {
    RECV_WR | (lane as u64) << 8 | b as u64
}

/// The first byte at which `a` and `b` differ (a length difference counts
/// at the shorter one's end), or `None` when they are equal.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// A request offered on `s_wr` until the NIC takes it.
struct Offer {
    conn: usize,
    /// `conn * streams + stream`: its credits and claims.
    lane: usize,
    wr_id: u64,
    flight: Flight,
    claim: Option<Claim>,
}

/// What a run did, per NIC summed over both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairStats {
    /// Cycles of each NIC (both run the same number).
    pub cycles: u64,
    /// Frames both NICs sent.
    pub frames: u64,
    /// Work requests posted and completed (successfully) by both.
    pub posted: u64,
    pub completed: u64,
    /// Payload bytes of the completed work requests.
    pub bytes: u64,
    /// Of those requests: SENDs and SENDs with immediate, WRITEs with
    /// immediate (the rest are WRITEs).
    pub sends: u64,
    pub write_imms: u64,
    /// Receive completions checked (and their receives posted again).
    pub received: u64,
    /// Frames lost, sent twice and held back (reordered) between the NICs
    /// ([`Pair::lose`], [`Pair::disturb`]).
    pub lost: u64,
    pub duplicated: u64,
    pub delayed: u64,
}

/// A work request in flight: its slot, length, opcode and immediate.
#[derive(Debug, Clone, Copy)]
struct Flight {
    slot: u64,
    len: u64,
    op: u8,
    imm: u32,
}

/// What a NIC was given, in the order its handshakes took it: the same
/// work replayed on the reference must end the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    /// A work request (`s_wr`); `imm` is meaningful for the `_IMM` opcodes.
    Request { conn: u32, stream: u32, op: u8, wr_id: u64, laddr: u64, len: u64, raddr: u64, imm: u32 },
    /// A receive posted (`s_post`, then `s_rpost`).
    Recv { conn: u32, stream: u32, addr: u64, len: u64, wr_id: u64 },
}

/// What the receive a request claimed must complete with: the request's
/// opcode, length, immediate and source offset.
#[derive(Debug, Clone, Copy)]
struct Claim {
    op: u8,
    len: u64,
    imm: u32,
    src: u64,
}

/// A receive post crossing `s_post`, `m_post` and `s_rpost` while the
/// clock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Post {
    Idle,
    /// `s_post_valid` is up for (conn, stream, buffer).
    Offered(usize, usize, usize),
    /// Taken; recv_match's answer is due.
    Answer(usize, usize, usize),
    /// `s_rpost_valid` is up.
    Wake(usize, usize, usize),
}

struct Side {
    rig: NicRig,
    /// Per connection: outstanding requests by wr_id.
    flights: Vec<Vec<(u64, Flight)>>,
    /// Per connection: its free slots.
    free_slots: Vec<Vec<u64>>,
    /// Per connection and slot: the longest WRITE (or WRITE_IMM) it completed.
    covered: Vec<Vec<u64>>,
    next_wr: u64,
    /// The request being offered on `s_wr`.
    offer: Option<Offer>,
    rr: usize,
    /// Per (conn, stream), `conn * streams + stream`: receives the peer
    /// has posted that no request of ours has claimed yet.
    credits: Vec<u32>,
    /// Per (conn, stream): what our posted receives must complete with,
    /// in the order the peer's requests claimed them.
    claims: Vec<VecDeque<Claim>>,
    /// Per (conn, stream): our posted receives' buffers, in rq order.
    posted: Vec<VecDeque<usize>>,
    /// Receives to post again: (conn, stream, buffer).
    reposts: VecDeque<(usize, usize, usize)>,
    post: Post,
    given: Vec<Given>,
}

/// What runs a NIC's top in a [`Pair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopKind {
    /// The model's netlist simulation.
    Model,
    /// The model and the Verilated RTL in lockstep.
    Lockstep,
    /// The Verilated RTL alone (benches).
    Rtl,
}

/// The back-to-back pair.
pub struct Pair {
    cfg: Config,
    sides: [Side; 2],
    conns: usize,
    per_conn: usize,
    streams: usize,
    /// Receive buffers per (conn, stream).
    recvs: usize,
    slot_bytes: u64,
    rng: Rng,
    /// Frames lost between the NICs, per million, and the draw for it
    /// (its own generator, so a loss rate leaves the work unchanged).
    loss_ppm: u32,
    loss_rng: Rng,
    /// Frames sent twice, and held back up to `DELAY_MAX` cycles, per
    /// million; the frames held back: (cycle due, to side, bytes, plane).
    dup_ppm: u32,
    delay_ppm: u32,
    held: Vec<(u64, usize, Vec<u8>, u8)>,
    pub stats: PairStats,
}

/// The longest a frame is held back between the NICs ([`Pair::disturb`]):
/// about a frame time of a full packet many times over, so later frames of
/// the same path overtake it.
const DELAY_MAX: u64 = 2000;
impl Pair {
    /// Both NICs, reset, with their region registered, the source half
    /// filled and `conns` connections open between them.
    pub fn new(cfg: &Config, conns: u32, per_conn: u32, seed: u64) -> Result<Pair, String> {
        Pair::with_rtl(cfg, conns, per_conn, seed, [false, false])
    }

    /// As [`Pair::new`], with NIC A (`rtl[0]`) and/or B (`rtl[1]`) the
    /// model and the Verilated top in lockstep ([`NicRig::twin`]): the
    /// first output that differs ends the run with an error naming the
    /// cycle, the port and both values. The traffic and the checks are the
    /// same, so a run is also the whole top's end-to-end test on the RTL.
    pub fn with_rtl(cfg: &Config, conns: u32, per_conn: u32, seed: u64, rtl: [bool; 2]) -> Result<Pair, String> {
        Pair::with_tops(cfg, conns, per_conn, seed, rtl.map(|r| if r { TopKind::Lockstep } else { TopKind::Model }))
    }

    /// As [`Pair::new`], with each NIC's top as `kinds` says.
    pub fn with_tops(cfg: &Config, conns: u32, per_conn: u32, seed: u64, kinds: [TopKind; 2]) -> Result<Pair, String> {
        Pair::pressed(cfg, conns, per_conn, seed, kinds, Pressure::default())
    }

    /// As [`Pair::with_tops`], both NICs' hosts holding their outputs and
    /// answering memory as `press` says.
    pub fn pressed(
        cfg: &Config,
        conns: u32,
        per_conn: u32,
        seed: u64,
        kinds: [TopKind; 2],
        press: Pressure,
    ) -> Result<Pair, String> {
        let t = &cfg.transport;
        if conns == 0 || conns > t.connections {
            return Err(format!("conns: {conns} is not within 1..={}", t.connections));
        }
        if per_conn == 0 {
            return Err("per_conn: at least one WRITE per connection".into());
        }
        let slot_bytes = 3 * t.mtu as u64;
        let half = conns as u64 * per_conn as u64 * slot_bytes;
        let streams = t.streams_per_conn as usize;
        let recvs = (per_conn as usize).min(cfg.hardware.recv_queue_depth as usize);
        let lanes = conns as usize * streams;
        let recv_area = (lanes * recvs) as u64 * slot_bytes;
        let mut rng = Rng::new(seed);
        let mut sides = Vec::new();
        for addr in [1u32, 2] {
            let peer = 3 - addr;
            let (s, p) = (seed ^ addr as u64, press);
            let mut rig = match kinds[addr as usize - 1] {
                TopKind::Model => NicRig::new(cfg, s, p)?,
                TopKind::Lockstep => NicRig::twin(cfg, s, p)?,
                TopKind::Rtl => NicRig::rtl(cfg, s, p)?,
            };
            // The write log would grow with every burst of a long run.
            rig.wmem.log = None;
            rig.set("cfg_src_ip", addr as u64)?;
            rig.set("cfg_src_mac", mac_of(addr))?;
            rig.register_mr(
                cfg,
                KEY,
                BASE,
                2 * half + recv_area,
                mrnic_model::dma_write_engine::ACCESS_REMOTE_WRITE | mrnic_model::dma_write_engine::ACCESS_RECV,
            )?;
            let src: Vec<u8> = (0..half).map(|_| rng.next_u64() as u8).collect();
            rig.memory().write(BASE, &src);
            for c in 0..conns {
                // Entropy ports above the transport's, distinct per path.
                let paths = (0..t.paths_per_conn)
                    .map(|p| (0xC000 + ((c * t.paths_per_conn + p) % 0x3000) as u16, (p % t.planes) as u8))
                    .collect();
                let open = OpenConn { local_id: c, remote_id: c, remote: peer, tx_psn: 0, rx_psn: 0, paths };
                rig.open_conn(c, &open)?;
            }
            let mut posted = vec![VecDeque::new(); lanes];
            let mut given = Vec::new();
            for (lane, q) in posted.iter_mut().enumerate() {
                for b in 0..recvs {
                    let (at, wr_id) = (recv_buf(2 * half, lane, b, recvs, slot_bytes), recv_wr_id(lane, b));
                    let (c, st) = ((lane / streams) as u32, (lane % streams) as u32);
                    if !rig.post_recv(c, st, (at, slot_bytes), wr_id, KEY)? {
                        return Err(format!("NIC {addr}: receive {b} of conn {c}, stream {st} refused"));
                    }
                    q.push_back(b);
                    given.push(Given::Recv { conn: c, stream: st, addr: at, len: slot_bytes, wr_id });
                }
            }
            let n = conns as usize;
            let free_slots = (0..n).map(|_| (0..per_conn as u64).rev().collect()).collect();
            sides.push(Side {
                rig,
                flights: vec![Vec::new(); n],
                free_slots,
                covered: vec![vec![0; per_conn as usize]; n],
                next_wr: 1,
                offer: None,
                rr: 0,
                credits: vec![recvs as u32; lanes],
                claims: vec![VecDeque::new(); lanes],
                posted,
                reposts: VecDeque::new(),
                post: Post::Idle,
                given,
            });
        }
        let [a, b]: [Side; 2] = sides.try_into().map_err(|_| "two sides".to_string())?;
        Ok(Pair {
            cfg: cfg.clone(),
            sides: [a, b],
            conns: conns as usize,
            per_conn: per_conn as usize,
            streams,
            recvs,
            slot_bytes,
            rng,
            loss_ppm: 0,
            loss_rng: Rng::new(0),
            dup_ppm: 0,
            delay_ppm: 0,
            held: Vec::new(),
            stats: PairStats::default(),
        })
    }

    /// The offset of connection `c`'s slot `s` within a half.
    fn slot_at(&self, c: usize, s: u64) -> u64 {
        (c as u64 * self.per_conn as u64 + s) * self.slot_bytes
    }

    /// A WRITE length: mostly small and MTU-sized, some of several packets.
    fn length(&mut self) -> u64 {
        let mtu = self.cfg.transport.mtu as u64;
        match self.rng.below(8) {
            0 | 1 => 64,
            2 => 1 + self.rng.below(mtu),
            3 | 4 => mtu,
            5 => 2 * mtu,
            _ => 1 + self.rng.below(self.slot_bytes),
        }
    }

    /// What NIC `side` was given so far, in order.
    /// A frame from side `me` to the other, through the faults asked for.
    fn cross(&mut self, me: usize, bytes: Vec<u8>, plane: u8) {
        let mut hit = |ppm: u32| ppm > 0 && self.loss_rng.below(1_000_000) < u64::from(ppm);
        if hit(self.loss_ppm) {
            self.stats.lost += 1;
            return;
        }
        if hit(self.dup_ppm) {
            self.stats.duplicated += 1;
            self.sides[1 - me].rig.queue_frame(bytes.clone(), plane);
        }
        if hit(self.delay_ppm) {
            self.stats.delayed += 1;
            let due = self.stats.cycles + 1 + self.loss_rng.below(DELAY_MAX);
            self.held.push((due, 1 - me, bytes, plane));
            return;
        }
        self.sides[1 - me].rig.queue_frame(bytes, plane);
    }

    /// Besides [`Pair::lose`]: sends frames twice with probability
    /// `dup_ppm` per million, and holds frames back up to 2,000 cycles
    /// (later ones overtake them) with probability `delay_ppm`, from the
    /// same draw as the losses.
    pub fn disturb(&mut self, dup_ppm: u32, delay_ppm: u32) {
        self.dup_ppm = dup_ppm.min(1_000_000);
        self.delay_ppm = delay_ppm.min(1_000_000);
    }

    /// Loses each frame between the NICs (data, SACKs, NACKs, PROBEs, both
    /// ways) with probability `ppm` per million, drawn from `seed`: the
    /// transport's recovery at the model's top (SACK holes, RACK, RTOs,
    /// tail PROBEs) must still complete everything once.
    pub fn lose(&mut self, ppm: u32, seed: u64) {
        self.loss_ppm = ppm.min(1_000_000);
        self.loss_rng = Rng::new(seed);
    }

    pub fn given(&self, side: usize) -> &[Given] {
        &self.sides[side].given
    }

    /// The region both NICs register with remote write and receive
    /// access: (base, length). Source bytes in the first half, the peer's
    /// WRITEs in the second, receive buffers after.
    pub fn region(&self) -> (u64, u64) {
        let lanes = (self.conns * self.streams * self.recvs) as u64;
        (BASE, 2 * self.half() + lanes * self.slot_bytes)
    }

    /// NIC A (0) or B (1), for a look inside.
    pub fn rig(&mut self, side: usize) -> &mut NicRig {
        &mut self.sides[side].rig
    }

    /// Where NIC `side`'s connection `c`, slot `s` lands in its peer's
    /// memory, and the longest WRITE of it completed so far.
    pub fn landing(&self, side: usize, c: usize, s: usize) -> (u64, u64) {
        (BASE + self.half() + self.slot_at(c, s as u64), self.sides[side].covered[c][s])
    }

    /// Bytes per half of a region.
    pub fn half(&self) -> u64 {
        self.conns as u64 * self.per_conn as u64 * self.slot_bytes
    }

    /// Receive buffer `b` of `lane` (`conn * streams + stream`).
    fn recv_at(&self, lane: usize, b: usize) -> u64 {
        recv_buf(2 * self.half(), lane, b, self.recvs, self.slot_bytes)
    }

    /// One cycle of each NIC: with `offer`, a new request offered where a
    /// connection has room; receives posted again; frames crossed over,
    /// completions taken.
    pub fn step(&mut self, offer: bool) -> Result<(), String> {
        for me in 0..2 {
            if offer && self.sides[me].offer.is_none() {
                self.pick(me)?;
            }
            self.offer_post(me)?;
            let side = &mut self.sides[me];
            side.rig.clock();
            if side.offer.is_some() && side.rig.get("s_wr_ready")? == 1 {
                let Offer { conn: c, lane, wr_id, flight: f, claim } = side.offer.take().expect("offered");
                side.flights[c].push((wr_id, f));
                side.rig.set("s_wr_valid", 0)?;
                self.stats.posted += 1;
                let at = self.slot_at(c, f.slot);
                let stream = (lane % self.streams) as u32;
                let (laddr, raddr) = (BASE + at, BASE + self.half() + at);
                let g =
                    Given::Request { conn: c as u32, stream, op: f.op, wr_id, laddr, len: f.len, raddr, imm: f.imm };
                self.sides[me].given.push(g);
                if let Some(cl) = claim {
                    self.sides[1 - me].claims[lane].push_back(cl);
                }
            }
            self.advance_post(me)?;
            let side = &mut self.sides[me];
            if let Some(m) = side.rig.mismatch() {
                return Err(format!("NIC {}: the RTL and the model differ: {m}", me + 1));
            }
            if !side.rig.violations.is_empty() {
                return Err(format!("NIC {}: host memory: {}", me + 1, side.rig.violations.join("; ")));
            }
            for f in std::mem::take(&mut side.rig.frames) {
                self.stats.frames += 1;
                self.cross(me, f.bytes, f.plane);
            }
            let now = self.stats.cycles;
            let (due, wait): (Vec<_>, Vec<_>) =
                std::mem::take(&mut self.held).into_iter().partition(|h| h.0 <= now && h.1 == 1 - me);
            self.held = wait;
            for (_, to, bytes, plane) in due {
                self.sides[to].rig.queue_frame(bytes, plane);
            }
            self.completions(me)?;
        }
        self.stats.cycles += 1;
        Ok(())
    }

    /// Before the clock: a receive waiting to be posted again goes on
    /// `s_post` when no post is under way.
    fn offer_post(&mut self, me: usize) -> Result<(), String> {
        let side = &mut self.sides[me];
        if side.post != Post::Idle {
            return Ok(());
        }
        let Some((c, st, b)) = side.reposts.pop_front() else { return Ok(()) };
        let lane = c * self.streams + st;
        let addr = self.recv_at(lane, b);
        let side = &mut self.sides[me];
        let f = [
            ("conn", c as u64),
            ("stream", st as u64),
            ("addr", addr),
            ("len", self.slot_bytes),
            ("wr_id", recv_wr_id(lane, b)),
            ("lkey", KEY as u64),
        ];
        for (n, v) in f {
            side.rig.set(&format!("s_post_{n}"), v)?;
        }
        side.rig.set("s_post_valid", 1)?;
        side.post = Post::Offered(c, st, b);
        Ok(())
    }

    /// After the clock: the post's handshakes. Once `s_rpost` is taken the
    /// receive is posted, and the peer may claim it.
    fn advance_post(&mut self, me: usize) -> Result<(), String> {
        let side = &mut self.sides[me];
        match side.post {
            Post::Idle => {}
            Post::Offered(c, st, b) => {
                if side.rig.get("s_post_ready")? == 1 {
                    side.rig.set("s_post_valid", 0)?;
                    side.post = Post::Answer(c, st, b);
                }
            }
            Post::Answer(c, st, b) => {
                if side.rig.get("m_post_valid")? == 1 {
                    if side.rig.get("m_post_ok")? != 1 {
                        return Err(format!("NIC {}: receive {b} of conn {c}, stream {st} refused", me + 1));
                    }
                    side.rig.set("s_rpost_conn", c as u64)?;
                    side.rig.set("s_rpost_stream", st as u64)?;
                    side.rig.set("s_rpost_valid", 1)?;
                    side.post = Post::Wake(c, st, b);
                }
            }
            Post::Wake(c, st, b) => {
                if side.rig.get("s_rpost_ready")? == 1 {
                    side.rig.set("s_rpost_valid", 0)?;
                    side.post = Post::Idle;
                    let lane = c * self.streams + st;
                    side.posted[lane].push_back(b);
                    let at = self.recv_at(lane, b);
                    let (conn, stream, wr_id) = (c as u32, st as u32, recv_wr_id(lane, b));
                    let side = &mut self.sides[me];
                    side.given.push(Given::Recv { conn, stream, addr: at, len: self.slot_bytes, wr_id });
                    self.sides[1 - me].credits[lane] += 1;
                }
            }
        }
        Ok(())
    }

    /// Side `me`'s completions. A request's must end one in flight, with
    /// success; its slot is free again. A receive's must be the next one
    /// its stream's claims expect, and a SEND's bytes must be the
    /// sender's; the receive is posted again.
    fn completions(&mut self, me: usize) -> Result<(), String> {
        for q in std::mem::take(&mut self.sides[me].rig.cqes) {
            if q.opcode == opcode::RECV || q.opcode == opcode::RECV_RDMA_WITH_IMM {
                self.received(me, &q)?;
                continue;
            }
            let side = &mut self.sides[me];
            let c = q.conn as usize;
            let pos = side.flights.get(c).and_then(|v| v.iter().position(|(id, _)| *id == q.wr_id));
            let Some(pos) = pos else {
                return Err(format!("NIC {}: a completion for no request in flight: {q:?}", me + 1));
            };
            if q.status != status::SUCCESS {
                return Err(format!("NIC {}: request {} completed with status {}", me + 1, q.wr_id, q.status));
            }
            let (_, f) = side.flights[c].remove(pos);
            match f.op {
                op::SEND | op::SEND_IMM => self.stats.sends += 1,
                _ => {
                    let cov = &mut side.covered[c][f.slot as usize];
                    *cov = (*cov).max(f.len);
                    self.stats.write_imms += u64::from(f.op == op::WRITE_IMM);
                }
            }
            side.free_slots[c].push(f.slot);
            self.stats.completed += 1;
            self.stats.bytes += f.len;
        }
        Ok(())
    }

    /// A receive completion of side `me`.
    fn received(&mut self, me: usize, q: &Cqe) -> Result<(), String> {
        let who = format!("NIC {}: receive completion {q:?}", me + 1);
        let (c, st) = (q.conn as usize, q.stream as usize);
        if c >= self.conns || st >= self.streams {
            return Err(format!("{who}: no such connection or stream"));
        }
        let lane = c * self.streams + st;
        let side = &mut self.sides[me];
        let (Some(b), Some(cl)) = (side.posted[lane].pop_front(), side.claims[lane].pop_front()) else {
            return Err(format!("{who}: no receive posted or claimed"));
        };
        let want_op = if cl.op == op::WRITE_IMM { opcode::RECV_RDMA_WITH_IMM } else { opcode::RECV };
        let want_imm = (cl.op != op::SEND).then_some(cl.imm);
        if q.status != status::SUCCESS
            || q.wr_id != recv_wr_id(lane, b)
            || q.opcode != want_op
            || q.byte_len as u64 != cl.len
            || q.imm != want_imm
        {
            return Err(format!("{who}: expected receive {b} for {cl:?}"));
        }
        if cl.op != op::WRITE_IMM {
            let at = self.recv_at(lane, b);
            let got = self.sides[me].rig.memory().read(at, cl.len as usize);
            let src = self.sides[1 - me].rig.memory().read(BASE + cl.src, cl.len as usize);
            if let Some(first) = first_difference(&got, &src) {
                return Err(format!("{who}: byte {first} of {} differs from the sender's", cl.len));
            }
        }
        self.sides[me].reposts.push_back((c, st, b));
        self.stats.received += 1;
        Ok(())
    }

    /// Chooses the next request of side `me`: the next connection, round
    /// robin, with a free slot; a WRITE, or, when the peer has a receive
    /// for it to claim, any opcode.
    fn pick(&mut self, me: usize) -> Result<(), String> {
        for k in 0..self.conns {
            let c = (self.sides[me].rr + k) % self.conns;
            let Some(slot) = self.sides[me].free_slots[c].pop() else { continue };
            let len = self.length();
            let (at, half, streams) = (self.slot_at(c, slot), self.half(), self.streams as u64);
            let wr_id = self.sides[me].next_wr;
            let lane = c * self.streams + (wr_id % streams) as usize;
            let kind = if self.sides[me].credits[lane] > 0 { self.rng.below(20) } else { 0 };
            let opc = match kind {
                0..=7 => op::WRITE,
                8..=10 => op::WRITE_IMM,
                11..=16 => op::SEND,
                _ => op::SEND_IMM,
            };
            let imm = (self.rng.next_u64() as u32) | 1;
            let side = &mut self.sides[me];
            side.rr = (c + 1) % self.conns;
            side.next_wr += 1;
            let claim = (opc != op::WRITE).then_some(Claim { op: opc, len, imm, src: at });
            if claim.is_some() {
                side.credits[lane] -= 1;
            }
            side.offer = Some(Offer { conn: c, lane, wr_id, flight: Flight { slot, len, op: opc, imm }, claim });
            for (n, v) in [
                ("conn", c as u64),
                ("stream", wr_id % streams),
                ("op", opc as u64),
                ("wr_id", wr_id),
                ("laddr", BASE + at),
                ("len", len),
                ("raddr", BASE + half + at),
                ("rkey", KEY as u64),
                ("imm", imm as u64),
            ] {
                side.rig.set(&format!("s_wr_{n}"), v)?;
            }
            side.rig.set("s_wr_valid", 1)?;
            return Ok(());
        }
        Ok(())
    }

    /// Stops offering and runs until both NICs have completed every
    /// request and every claimed receive (at most `limit` cycles); then
    /// checks that every byte the WRITEs covered in each region is the
    /// peer's source byte.
    pub fn finish(&mut self, limit: u64) -> Result<(), String> {
        for me in 0..2 {
            if let Some(o) = self.sides[me].offer.take() {
                let s = &mut self.sides[me];
                s.free_slots[o.conn].push(o.flight.slot);
                s.rig.set("s_wr_valid", 0)?;
                if o.claim.is_some() {
                    s.credits[o.lane] += 1;
                }
            }
        }
        let start = self.stats.cycles;
        let left = |p: &Pair| -> usize {
            p.sides
                .iter()
                .map(|s| {
                    s.flights.iter().map(Vec::len).sum::<usize>() + s.claims.iter().map(VecDeque::len).sum::<usize>()
                })
                .sum()
        };
        while left(self) > 0 {
            if self.stats.cycles - start > limit {
                return Err(format!(
                    "{} requests and claimed receives not complete {limit} cycles after the last was posted",
                    left(self)
                ));
            }
            self.step(false)?;
        }
        self.check_landed()
    }

    /// Every byte the completed WRITEs covered in each region is the peer's
    /// source byte.
    pub fn check_landed(&mut self) -> Result<(), String> {
        let half = self.half();
        for me in 0..2 {
            for c in 0..self.conns {
                for s in 0..self.per_conn {
                    let len = self.sides[me].covered[c][s] as usize;
                    let at = self.slot_at(c, s as u64);
                    let src = self.sides[me].rig.memory().read(BASE + at, len);
                    let dst = self.sides[1 - me].rig.memory().read(BASE + half + at, len);
                    if let Some(first) = first_difference(&src, &dst) {
                        return Err(format!(
                            "NIC {}'s WRITEs on conn {c}, slot {s}: byte {first} of {len} differs at NIC {}",
                            me + 1,
                            2 - me
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
