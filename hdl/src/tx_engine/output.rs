//! The output stage of `tx_engine` as a clocked unit (`tx_output`): the
//! frame queue, the AXI4 read master, the payload buffer and digest, the
//! answer queue, the frame-start arbitration and the `m_axis` beats, with
//! the cycle timing of the model's output ([`mrnic_model::tx_engine`]:
//! `push_frame`, `take_beat`, `next_frame`, the answer queue in `clock`,
//! the AR / R / `m_axis` handshakes and `outputs()`).
//!
//! # Interface with the rest of the engine
//! - **Frames** (`s_frame_*`): push-style, no ready. The scheduler pushes
//!   a data frame at its commit and a PROBE at its start; it already
//!   reads the queue's occupancy (`m_frames`) to decide whether it may
//!   start ([`FRAME_QUEUE`] for data, [`PROBE_ROOM`] more for a PROBE), so
//!   a push always finds room and a ready would only add a cycle of loop.
//!   A frame carries everything it needs (header, host address and length,
//!   peer MAC and IPv4 from the context the decision read, port, plane,
//!   connection, work request): the output reads no table at a frame
//!   boundary.
//! - **Answers** (`s_ans_*`): valid/ready; ready is the 2-entry queue's
//!   room, so the engine's `csack` / `cnack` registers stay full while it
//!   is full. The engine places the header (`sack_header` /
//!   `nack_header`) and issues the read of the connection's addresses
//!   with the push; that read's answer comes back on `s_ans_rd_*` `L`
//!   cycles later (the table's read latency), the cycle the entry's wait
//!   ends, and is captured then. A `direct` NACK names its addresses on
//!   `s_ans_dst_*` and may start at once.
//! - **Failed reads** (`m_fail_*`): a frame whose payload read returned an
//!   error is dropped at the boundary, and its request reported on a
//!   one-cycle `m_fail_valid` pulse unless its connection has failed
//!   already (`fail_conn_failed`, the engine's failed bit of `m_fail_conn`
//!   after this edge). The engine must be able to take it, so while the
//!   completion walk is busy (`walk_busy`, as after this edge; also high
//!   while a NACK's reads are in flight, since its answer may start a
//!   walk, architecture.md, tx_engine item 11) such a frame waits at the
//!   head. `m_fail_conn`, `_stream`, `_slot` are the head
//!   frame's, from registers, so the failed bit looked up from them does
//!   not loop back combinationally.
//!
//! # Structure
//! - The frame queue: [`QUEUE`] descriptors in registers, oldest at 0,
//!   shifting down at a pop. AR serves the oldest entry with bursts still
//!   to request ([`super::axi_burst`]); each R beat lands in the oldest one
//!   still waiting for beats: it is written to the payload buffer and
//!   folded into that entry's digest ([`super::digest_beat`]), which
//!   started from the header's raw CRC at the push.
//! - The payload buffer: one block RAM of [`SLOTS`] payloads at MTU (the
//!   queue holds at most [`FRAME_QUEUE`] frames with payload and one more
//!   is on `m_axis`), slots taken and given back in frame order.
//! - At a frame boundary (no frame on `m_axis`, or its last beat taken) an
//!   answer whose wait is over starts, else the head frame once its
//!   payload is in; the frame's head (Ethernet, IPv4, UDP with the
//!   checksum the digest completes, the transport header) and ICRC are
//!   built by one builder for the four header lengths and registered, so
//!   the next frame's first beat follows the last with no idle cycle.
//! - The beats: [`super::frame_beat`] from the registered head and two
//!   buffer beats: `hi` from the memory's registered read, issued a beat
//!   ahead, `lo` the previous `hi`.
//!
//! # Formal properties
//! Stated next to the logic (`properties`) and run by `scripts/formal`
//! as the unit `tx_output` ([`crate::proof::blocks`], [`formal_tasks`]):
//! - interfaces: `m_axis` and AR hold valid and payload until their
//!   handshakes, AR bursts are INCR, at most `axi_max_burst` beats and
//!   never cross 4 KiB ([`crate::formal::axi_read`]); assumed of the
//!   neighbours: `s_ans` valid held and payload stable (but `s_ans_rd_*`,
//!   on their own timing), R held until ready, and no R beat while no
//!   requested beat is outstanding;
//! - the push rule: assumed, a push only while `m_frames` shows room
//!   (fewer than [`QUEUE`]; a data frame fewer than [`FRAME_QUEUE`]), as
//!   the model's scheduler does; asserted, a push never finds the queue
//!   full (`a_s_frame_no_loss`);
//! - the reads: entries' addresses beat-aligned (so bursts count whole
//!   beats), and, as a bounded check, the beats the unit waits for are
//!   exactly those it requested and has not received;
//! - `m_axis` framing: a beat only inside a started frame, a frame starts
//!   only after the one before ended with its tlast taken;
//! - failed reads: such a frame leaves without starting, reported on
//!   `m_fail_valid` (unless its connection failed already) as it leaves
//!   the queue and at no other time, so once; the answer queue never
//!   overflows;
//! - covers: a data frame and an answer complete on `m_axis`, a failed read
//!   is reported.

use mrnic_model::block::PortDef;
use mrnic_model::tx_engine::{TxEngineParams, FRAME_QUEUE, PROBE_ROOM};
use mrnic_proto::layouts::{data, nack, probe, sack};
use mrnic_proto::packet::NET_OVERHEAD;

use super::{
    axi_burst, axis_order, count_bits, crc32, digest_beat, eth_header, frame_beat, gate, ipv4_header, ones_add,
    ones_sum, stream_ptr_bits, udp_header, words_of, BeatIn, BeatSizes, NetFields,
};
use crate::expr::{cat, index_bits, lit, mux, zeros, zext, Expr, Signal};
use crate::ir::{if_else, if_then, set, MemStyle, Module, Reg};

/// Module name.
pub const NAME: &str = "tx_output";
/// Frame queue entries: the model's `FRAME_QUEUE + PROBE_ROOM`.
pub const QUEUE: u32 = (FRAME_QUEUE + PROBE_ROOM) as u32;
/// Answer queue entries.
pub const ANSWERS: u32 = 2;
/// Payloads the buffer holds: the queue's frames with payload and the one
/// leaving.
pub const SLOTS: u32 = FRAME_QUEUE as u32 + 1;
/// Bits of the transport header a frame push carries (a data header; a
/// PROBE's in its top bytes).
pub const FRAME_HDR_BITS: u32 = data::LAYOUT.len as u32 * 8;
/// Bits of the transport header an answer push carries (a SACK's; a
/// NACK's in its top bytes).
pub const ANS_HDR_BITS: u32 = sack::LAYOUT.len as u32 * 8;

const RST: &str = "Clock and reset";
const FRM: &str = "Frames (from the scheduler)";
const ANS: &str = "Answers (from the engine's csack / cnack registers)";
const FAIL: &str = "Failed payload reads (to the completion walk)";

/// The unit's ports, in declaration order.
pub fn ports(p: &TxEngineParams) -> Vec<PortDef> {
    let sz = BeatSizes::of(p);
    let (cb, sb) = (p.conn_bits, p.stream_bits);
    let i = |n: &str, w: u32, g: &'static str, c: &str| PortDef::input(n, w, g, c);
    let o = |n: &str, w: u32, g: &'static str, c: &str| PortDef::output(n, w, g, c);
    let lb = sz.payload_len_bits();
    let wait_note = "the addresses table's answer to the read issued with the answer's push L cycles ago";
    // The ports the unit shares with the engine come from the engine's
    // list, one definition; `rid` and `rlast` are left out (beats are
    // counted).
    let shared = |names: &[&str]| super::engine_ports(p, names);
    let mut v = vec![
        i("rst", 1, RST, "synchronous reset, active high"),
        i("en", 1, RST, "the engine runs (its clear sweep is over): R beats are taken"),
    ];
    v.extend(shared(&["cfg_src_mac", "cfg_src_ip", "cfg_udp_port"]));
    v.extend([
        i("s_frame_valid", 1, FRM, "a data or PROBE frame is queued (no ready: the scheduler reads m_frames)"),
        i("s_frame_probe", 1, FRM, "a PROBE: 16 header bytes, no payload"),
        i("s_frame_hdr", FRAME_HDR_BITS, FRM, "transport header, big-endian (a PROBE's in the top bytes)"),
        i("s_frame_addr", p.axi_addr_bits, FRM, "host address of the payload"),
        i("s_frame_len", lb, FRM, "payload bytes (0..=MTU)"),
        i("s_frame_dst_mac", 48, FRM, "the peer's MAC, from the context the decision read"),
        i("s_frame_dst_ip", 32, FRM, "the peer's IPv4 address"),
        i("s_frame_sport", 16, FRM, "UDP source port of the physical path"),
        i("s_frame_plane", 3, FRM, "plane of the physical path (m_axis_tuser)"),
        i("s_frame_conn", cb, FRM, "connection"),
        i("s_frame_stream", sb, FRM, "stream of the work request (data)"),
        i("s_frame_slot", stream_ptr_bits(p.wq_depth), FRM, "work queue slot of the request (data)"),
        o("m_frames", index_bits(QUEUE + 1), FRM, "frames queued (the scheduler's may_start and start)"),
        i("s_ans_valid", 1, ANS, "an answer is offered"),
        o("s_ans_ready", 1, ANS, "the answer queue has room"),
        i("s_ans_nack", 1, ANS, "a NACK (20 header bytes), else a SACK (52)"),
        i("s_ans_hdr", ANS_HDR_BITS, ANS, "transport header, big-endian (a NACK's in the top bytes)"),
        i("s_ans_sport", 16, ANS, "the answered packet's source port: the answer's destination port"),
        i("s_ans_plane", 3, ANS, "plane the answer leaves by"),
        i("s_ans_direct", 1, ANS, "a NACK to a packet of no connection: s_ans_dst_* name the peer"),
        i("s_ans_dst_mac", 48, ANS, "the peer's MAC (direct)"),
        i("s_ans_dst_ip", 32, ANS, "the peer's IPv4 address (direct)"),
        i("s_ans_rd_mac", 48, ANS, wait_note),
        i("s_ans_rd_ip", 32, ANS, wait_note),
        i("walk_busy", 1, FAIL, "the completion walk is busy after this edge: a failed read's frame waits"),
        i("fail_conn_failed", 1, FAIL, "m_fail_conn's connection has failed after this edge: no report"),
        o("m_fail_valid", 1, FAIL, "the head frame's read failed and it is dropped: fail its request"),
        o("m_fail_conn", cb, FAIL, "the head frame's connection (0 with the queue empty)"),
        o("m_fail_stream", sb, FAIL, "its work request's stream"),
        o("m_fail_slot", stream_ptr_bits(p.wq_depth), FAIL, "its work request's slot"),
        o("m_stat_tx_answer", 1, FAIL, "an answer starts on m_axis (stat_tx_answer)"),
        i("s_qry_conn", cb, FAIL, "a connection the engine asks about (a setup record's)"),
        o("m_qry_queued", 1, FAIL, "a frame of s_qry_conn is queued, the one pushed this cycle included"),
    ]);
    v.extend(shared(&[
        "m_axi_arid",
        "m_axi_araddr",
        "m_axi_arlen",
        "m_axi_arsize",
        "m_axi_arburst",
        "m_axi_arvalid",
        "m_axi_arready",
        "m_axi_rdata",
        "m_axi_rresp",
        "m_axi_rvalid",
        "m_axi_rready",
        "m_axis_tdata",
        "m_axis_tkeep",
        "m_axis_tvalid",
        "m_axis_tready",
        "m_axis_tlast",
        "m_axis_tuser",
    ]));
    v
}

/// The first of `xs` whose flag is set, in order (0 when none is).
fn first_of(flags: &[Expr], xs: &[Expr], w: u32) -> Expr {
    flags.iter().zip(xs).rev().fold(zeros(w), |acc, (f, x)| mux(f.clone(), x.clone(), acc))
}

/// A frame queue entry's registers.
struct Entry {
    hdr: Reg,
    probe: Reg,
    len: Reg,
    mac: Reg,
    ip: Reg,
    sport: Reg,
    plane: Reg,
    conn: Reg,
    stream: Reg,
    slot: Reg,
    ar_next: Reg,
    ar_end: Reg,
    r_left: Reg,
    r_got: Reg,
    want: Reg,
    skip: Reg,
    err: Reg,
    raw: Reg,
    sum: Reg,
    buf: Reg,
}

/// An entry's value as an expression per field, in [`Entry`]'s order.
type Fields = Vec<Expr>;

impl Entry {
    fn regs(&self) -> [&Reg; 20] {
        [
            &self.hdr,
            &self.probe,
            &self.len,
            &self.mac,
            &self.ip,
            &self.sport,
            &self.plane,
            &self.conn,
            &self.stream,
            &self.slot,
            &self.ar_next,
            &self.ar_end,
            &self.r_left,
            &self.r_got,
            &self.want,
            &self.skip,
            &self.err,
            &self.raw,
            &self.sum,
            &self.buf,
        ]
    }
}

/// An answer queue entry's registers.
struct AnsEntry {
    hdr: Reg,
    nack: Reg,
    sport: Reg,
    plane: Reg,
    mac: Reg,
    ip: Reg,
    wait: Reg,
}

impl AnsEntry {
    fn regs(&self) -> [&Reg; 7] {
        [&self.hdr, &self.nack, &self.sport, &self.plane, &self.mac, &self.ip, &self.wait]
    }
}

/// The `tx_output` module for `cfg`'s engine parameters, for the proofs
/// ([`crate::proof::blocks`]).
pub fn generate(cfg: &mrnic_proto::Config) -> Result<Module, String> {
    let p = TxEngineParams::from_config(cfg).map_err(|e| e.to_string())?;
    Ok(build(&p))
}

/// Depth of the bounded check of the read accounting ([`formal_tasks`]):
/// steps 0 to 6 took 6.3 minutes with boolector (load 7); step 7 did not
/// finish in 8 more.
pub const BMC_DEPTH: u32 = 7;

/// The read accounting's assertions: per entry, its addresses in order
/// and its unrequested beats among those to come; AR's order between
/// entries; the beats awaited against the ghost count of beats asked for.
fn accounting(label: &str) -> bool {
    label.ends_with("_read_state") || label.contains("_before_fq") || label == "a_m_axi_r_awaited"
}

/// The unit's proof tasks (the payload buffer as an SMT array
/// throughout): every assertion but the read accounting by k-induction
/// (`prove`, k = 2); the read accounting to [`BMC_DEPTH`] cycles from
/// reset (`bmc`); the covers to 30 cycles.
pub fn formal_tasks(asserts: &[String]) -> Vec<crate::proof::Task> {
    use crate::proof::{prove_and_cover, Mode, Task};
    let mut tasks = prove_and_cover(2, 30, true);
    for t in tasks.iter_mut() {
        t.solver = Some("boolector");
    }
    tasks[0].arrays = true;
    tasks[0].asserts = Some(asserts.iter().filter(|l| !accounting(l)).cloned().collect());
    tasks.insert(
        1,
        Task {
            name: "bmc",
            mode: Mode::Bmc(BMC_DEPTH),
            asserts: Some(asserts.iter().filter(|l| accounting(l)).cloned().collect()),
            why_bounded: "the induction step over four entries' 64-bit address differences and their sum did not \
                          finish in 10 minutes (boolector); yices 2.6.5 answered it with a wrong model",
            arrays: true,
            without: &[],
            lean_on_proven: false,
            connections: None,
            solver: Some("boolector"),
        },
    );
    tasks
}

/// The `tx_output` module for `p`.
pub fn build(p: &TxEngineParams) -> Module {
    let sz = BeatSizes::of(p);
    let bb = p.beat_bytes();
    let lb = bb.trailing_zeros();
    let dw = p.data_bits;
    let ab = p.axi_addr_bits;
    let plb = sz.payload_len_bits();
    let bbeats = sz.buf_beats();
    let rb = index_bits(bbeats + 1);
    let aw = index_bits(SLOTS * bbeats);
    let l = p.read_latency;
    let wb = index_bits(l + 1);
    let nb = index_bits(QUEUE + 1);
    let cw = count_bits(bb);
    let (cb, sb, spb) = (p.conn_bits, p.stream_bits, stream_ptr_bits(p.wq_depth));
    assert!(l >= 1, "an addresses table answers a cycle after its read at the earliest");
    // A data frame's first beat is all head, so its first buffer beat is
    // read at the start and `lo` is never needed before a `hi` was read.
    assert!(bb as usize <= NET_OVERHEAD + data::LAYOUT.len, "a beat no longer than a data frame's head");

    let mut m = Module::new(NAME);
    m.describe("tx_engine output stage: frame and answer queues, AXI4 read master, payload buffer, m_axis beats");
    let (clk, sig) = crate::ports::declare(&mut m, &ports(p));
    let s = |n: &str| sig[n].clone();
    m.clock_domain(&clk, &s("rst"));
    let w = |m: &mut Module, n: &str, width: u32, c: &str, e: Expr| m.wire_from(n, width, c, e);

    // ------------------------------------------------------------ state
    let fq_n = m.reg("fq_n", nb, 0, "frames queued");
    let alloc = m.reg("alloc", 2, 0, "the payload slot the next frame with payload takes");
    let aq_n = m.reg("aq_n", 2, 0, "answers queued");
    let cur_valid = m.reg("cur_valid", 1, 0, "a frame is on m_axis");
    let widths: [(&str, u32, &str); 20] = [
        ("hdr", FRAME_HDR_BITS, "transport header"),
        ("probe", 1, "a PROBE"),
        ("len", plb, "payload bytes"),
        ("mac", 48, "peer MAC"),
        ("ip", 32, "peer IPv4"),
        ("sport", 16, "UDP source port"),
        ("plane", 3, "plane"),
        ("conn", cb, "connection"),
        ("stream", sb, "work request's stream"),
        ("slot", spb, "work request's slot"),
        ("ar_next", ab, "next address to request"),
        ("ar_end", ab, "beat-aligned end of the payload"),
        ("r_left", rb, "read beats still to come"),
        ("r_got", rb, "read beats taken"),
        ("want", plb, "payload bytes still to come"),
        ("skip", lb, "payload's first byte in its first beat"),
        ("err", 1, "a read beat came back with an error"),
        ("raw", 32, "raw ICRC register over the header and the payload so far"),
        ("sum", 16, "one's-complement sum of the payload so far"),
        ("buf", 2, "payload buffer slot"),
    ];
    let fq: Vec<Entry> = (0..QUEUE)
        .map(|i| {
            let r: Vec<Reg> = widths.iter().map(|(n, wd, c)| m.reg_no_reset(&format!("fq{i}_{n}"), *wd, c)).collect();
            let mut it = r.into_iter();
            let mut nx = || it.next().expect("20 fields");
            Entry {
                hdr: nx(),
                probe: nx(),
                len: nx(),
                mac: nx(),
                ip: nx(),
                sport: nx(),
                plane: nx(),
                conn: nx(),
                stream: nx(),
                slot: nx(),
                ar_next: nx(),
                ar_end: nx(),
                r_left: nx(),
                r_got: nx(),
                want: nx(),
                skip: nx(),
                err: nx(),
                raw: nx(),
                sum: nx(),
                buf: nx(),
            }
        })
        .collect();
    let aq: Vec<AnsEntry> = (0..ANSWERS)
        .map(|j| {
            let r = |m: &mut Module, n: &str, wd: u32, c: &str| m.reg_no_reset(&format!("aq{j}_{n}"), wd, c);
            AnsEntry {
                hdr: r(&mut m, "hdr", ANS_HDR_BITS, "transport header"),
                nack: r(&mut m, "nack", 1, "a NACK"),
                sport: r(&mut m, "sport", 16, "destination port"),
                plane: r(&mut m, "plane", 3, "plane"),
                mac: r(&mut m, "mac", 48, "peer MAC, once read"),
                ip: r(&mut m, "ip", 32, "peer IPv4, once read"),
                wait: r(&mut m, "wait", wb, "edges until the addresses are in hand"),
            }
        })
        .collect();

    let valid: Vec<Expr> = (0..QUEUE).map(|i| lit(nb, u64::from(i)).lt(&fq_n.q)).collect();

    // ------------------------------------------------------------ AR
    let need: Vec<Expr> =
        fq.iter().zip(&valid).map(|(e, v)| v.clone().logic_and(e.ar_next.q.expr().lt(&e.ar_end.q))).collect();
    let need_w = w(&mut m, "ar_need", QUEUE, "per entry: bursts still to request", cat(&rev(&need)));
    let ar_any = w(&mut m, "ar_any", 1, "a burst to request", need_w.expr().reduce_or());
    let ar_sel: Vec<Expr> = first_flags(&need_w, QUEUE);
    let ar_next = w(
        &mut m,
        "ar_next",
        ab,
        "the oldest such entry's next address",
        first_of(&ar_sel, &fq.iter().map(|e| e.ar_next.q.expr()).collect::<Vec<_>>(), ab),
    );
    let ar_end = w(
        &mut m,
        "ar_end",
        ab,
        "and its end",
        first_of(&ar_sel, &fq.iter().map(|e| e.ar_end.q.expr()).collect::<Vec<_>>(), ab),
    );
    let arlen = axi_burst(&mut m, "ar_len", p, &ar_next, &ar_end);
    m.assign(s("m_axi_arid"), zeros(p.axi_id_bits));
    m.assign(s("m_axi_araddr"), gate(&ar_any, &ar_next, ab));
    m.assign(s("m_axi_arlen"), gate(&ar_any, &arlen, 8));
    m.assign(s("m_axi_arsize"), gate(&ar_any, lit(3, u64::from(lb)), 3));
    m.assign(s("m_axi_arburst"), gate(&ar_any, lit(2, 1), 2));
    m.assign(s("m_axi_arvalid"), &ar_any);
    let ar_hs = w(&mut m, "ar_hs", 1, "a burst requested at this edge", ar_any.expr().logic_and(s("m_axi_arready")));
    let ar_step =
        w(&mut m, "ar_step", ab, "bytes the burst covers", (zext(&arlen, ab) + lit(ab, 1)) << lit(4, u64::from(lb)));

    // ------------------------------------------------------------ R
    m.assign(s("m_axi_rready"), s("en"));
    let rneed: Vec<Expr> =
        fq.iter().zip(&valid).map(|(e, v)| v.clone().logic_and(e.r_left.q.expr().ne(lit(rb, 0)))).collect();
    let rneed_w = w(&mut m, "r_need", QUEUE, "per entry: read beats still to come", cat(&rev(&rneed)));
    let r_sel = first_flags(&rneed_w, QUEUE);
    let r_hit = w(
        &mut m,
        "r_hit",
        1,
        "a read beat lands in the oldest entry waiting for one (a beat for none is dropped)",
        s("m_axi_rvalid").expr().logic_and(s("en")).logic_and(rneed_w.expr().reduce_or()),
    );
    let pick = |m: &mut Module, n: &str, wd: u32, f: &dyn Fn(&Entry) -> Expr| {
        let xs: Vec<Expr> = fq.iter().map(f).collect();
        m.wire_from(&format!("r_{n}"), wd, "of the entry the read beat lands in", first_of(&r_sel, &xs, wd))
    };
    let r_got = pick(&mut m, "got", rb, &|e| e.r_got.q.expr());
    let r_want = pick(&mut m, "want", plb, &|e| e.want.q.expr());
    let r_skip = pick(&mut m, "skip", lb, &|e| e.skip.q.expr());
    let r_raw = pick(&mut m, "raw", 32, &|e| e.raw.q.expr());
    let r_sum = pick(&mut m, "sum", 16, &|e| e.sum.q.expr());
    let r_buf = pick(&mut m, "buf", 2, &|e| e.buf.q.expr());
    let r_first = w(&mut m, "r_first", 1, "the payload's first beat", r_got.expr().eq(lit(rb, 0)));
    let room = w(
        &mut m,
        "r_room",
        cw,
        "payload bytes the beat can hold",
        mux(&r_first, lit(cw, u64::from(bb)) - zext(&r_skip, cw), lit(cw, u64::from(bb))),
    );
    let r_n = w(
        &mut m,
        "r_n",
        cw,
        "payload bytes in the beat",
        mux(r_want.expr().lt(zext(&room, plb)), r_want.slice(cw - 1, 0), &room),
    );
    let (raw1, sum1) = digest_beat(&mut m, "dg", &r_raw, &r_sum, &s("m_axi_rdata"), &r_first.expr(), &r_skip, &r_n);
    let r_err = w(&mut m, "r_err", 1, "the beat is an error", s("m_axi_rresp").expr().ne(lit(2, 0)));

    // The payload buffer.
    let base = |slot: Expr| -> Expr {
        (0..SLOTS)
            .rev()
            .fold(lit(aw, 0), |acc, k| mux(slot.clone().eq(lit(2, u64::from(k))), lit(aw, u64::from(k * bbeats)), acc))
    };
    let pbuf = m.memory("pbuf", dw, SLOTS * bbeats, MemStyle::Block, "payloads as the read beats brought them");
    let wr_addr = w(&mut m, "pbuf_waddr", aw, "the beat's place in its slot", base(r_buf.expr()) + zext(&r_got, aw));
    m.mem_write(&pbuf, &r_hit, &wr_addr, s("m_axi_rdata"));

    // ------------------------------------------------------------ entries after AR and R
    let mut upd: Vec<Fields> = Vec::new();
    let mut ready_u: Vec<Signal> = Vec::new();
    for (i, e) in fq.iter().enumerate() {
        let n = |x: &str| format!("fq{i}_{x}_u");
        let arh = ar_sel[i].clone().logic_and(&ar_hs);
        let hit = r_sel[i].clone().logic_and(&r_hit);
        let hit = w(&mut m, &n("hit"), 1, "the read beat lands here", hit);
        let ar_next_u = w(
            &mut m,
            &n("ar_next"),
            ab,
            "after this edge's burst",
            mux(arh, e.ar_next.q.expr() + &ar_step, &e.ar_next.q),
        );
        let r_left_u = w(
            &mut m,
            &n("r_left"),
            rb,
            "after this edge's beat",
            mux(&hit, e.r_left.q.expr() - lit(rb, 1), &e.r_left.q),
        );
        let r_got_u = mux(&hit, e.r_got.q.expr() + lit(rb, 1), &e.r_got.q);
        let want_u = mux(&hit, e.want.q.expr() - zext(&r_n, plb), &e.want.q);
        let err_u =
            w(&mut m, &n("err"), 1, "after this edge's beat", e.err.q.expr().logic_or(hit.expr().logic_and(&r_err)));
        let raw_u = w(&mut m, &n("raw"), 32, "after this edge's beat", mux(&hit, &raw1, &e.raw.q));
        let sum_u = w(&mut m, &n("sum"), 16, "after this edge's beat", mux(&hit, &sum1, &e.sum.q));
        // Only the head may start.
        if i == 0 {
            let ready = w(
                &mut m,
                &n("ready"),
                1,
                "every burst requested and every beat in (the model's Frame::ready)",
                ar_next_u.expr().ge(&e.ar_end.q).logic_and(r_left_u.expr().eq(lit(rb, 0))),
            );
            ready_u.push(ready);
        }
        upd.push(vec![
            e.hdr.q.expr(),
            e.probe.q.expr(),
            e.len.q.expr(),
            e.mac.q.expr(),
            e.ip.q.expr(),
            e.sport.q.expr(),
            e.plane.q.expr(),
            e.conn.q.expr(),
            e.stream.q.expr(),
            e.slot.q.expr(),
            ar_next_u.expr(),
            e.ar_end.q.expr(),
            r_left_u.expr(),
            r_got_u,
            want_u,
            e.skip.q.expr(),
            err_u.expr(),
            raw_u.expr(),
            sum_u.expr(),
            e.buf.q.expr(),
        ]);
    }

    // ------------------------------------------------------------ the pushed frame
    let addr = s("s_frame_addr");
    let flen = s("s_frame_len");
    let fzero = w(&mut m, "pf_zero", 1, "a frame without payload", flen.expr().eq(lit(plb, 0)));
    let fend = w(
        &mut m,
        "pf_end",
        ab,
        "one past the payload's last byte plus a beat less one: its beat rounds the end up",
        addr.expr() + zext(&flen, ab) + lit(ab, u64::from(bb - 1)),
    );
    let beat_mask = lit(ab, !u64::from(bb - 1) & if ab >= 64 { u64::MAX } else { (1 << ab) - 1 });
    let pf_next = w(
        &mut m,
        "pf_ar_next",
        ab,
        "the first beat's address",
        gate(fzero.expr().logic_not(), addr.expr() & beat_mask.clone(), ab),
    );
    let pf_end =
        w(&mut m, "pf_ar_end", ab, "the beat-aligned end", gate(fzero.expr().logic_not(), fend.expr() & beat_mask, ab));
    let pf_beats =
        w(&mut m, "pf_beats", rb, "beats to read", pf_end.slice(lb + rb - 1, lb) - pf_next.slice(lb + rb - 1, lb));
    let hdr = s("s_frame_hdr");
    let crc40 = crc32(&mut m, "pf_crc40", &hdr, data::LAYOUT.len);
    let probe_bits = probe::LAYOUT.len as u32 * 8;
    let phdr = w(
        &mut m,
        "pf_probe_hdr",
        probe_bits,
        "a PROBE's header",
        hdr.slice(FRAME_HDR_BITS - 1, FRAME_HDR_BITS - probe_bits),
    );
    let crc16 = crc32(&mut m, "pf_crc16", &phdr, probe::LAYOUT.len);
    let pf: Fields = vec![
        hdr.expr(),
        s("s_frame_probe").expr(),
        flen.expr(),
        s("s_frame_dst_mac").expr(),
        s("s_frame_dst_ip").expr(),
        s("s_frame_sport").expr(),
        s("s_frame_plane").expr(),
        s("s_frame_conn").expr(),
        s("s_frame_stream").expr(),
        s("s_frame_slot").expr(),
        pf_next.expr(),
        pf_end.expr(),
        pf_beats.expr(),
        lit(rb, 0),
        flen.expr(),
        addr.slice(lb - 1, 0),
        lit(1, 0),
        // The digest goes on from the raw CRC register after the header.
        !mux(s("s_frame_probe"), &crc16, &crc40),
        lit(16, 0),
        alloc.q.expr(),
    ];

    // ------------------------------------------------------------ answers
    let ans_push = w(
        &mut m,
        "ans_push",
        1,
        "an answer enters the queue",
        s("s_ans_valid").expr().logic_and(aq_n.q.expr().lt(lit(2, u64::from(ANSWERS)))),
    );
    m.assign(s("s_ans_ready"), aq_n.q.expr().lt(lit(2, u64::from(ANSWERS))));
    let mut aupd: Vec<Fields> = Vec::new();
    for (j, a) in aq.iter().enumerate() {
        let n = |x: &str| format!("aq{j}_{x}_u");
        // The addresses arrive the cycle the wait ends.
        let arrive = w(&mut m, &n("arrive"), 1, "the addresses table answers now", a.wait.q.expr().eq(lit(wb, 1)));
        let wait_u = w(
            &mut m,
            &n("wait"),
            wb,
            "after this edge",
            mux(a.wait.q.expr().eq(lit(wb, 0)), lit(wb, 0), a.wait.q.expr() - lit(wb, 1)),
        );
        aupd.push(vec![
            a.hdr.q.expr(),
            a.nack.q.expr(),
            a.sport.q.expr(),
            a.plane.q.expr(),
            mux(&arrive, s("s_ans_rd_mac"), &a.mac.q),
            mux(&arrive, s("s_ans_rd_ip"), &a.ip.q),
            wait_u.expr(),
        ]);
    }
    let pa: Fields = vec![
        s("s_ans_hdr").expr(),
        s("s_ans_nack").expr(),
        s("s_ans_sport").expr(),
        s("s_ans_plane").expr(),
        s("s_ans_dst_mac").expr(),
        s("s_ans_dst_ip").expr(),
        mux(s("s_ans_direct"), lit(wb, 0), lit(wb, u64::from(l))),
    ];
    let av0 = w(&mut m, "aq_any", 1, "an answer is queued", aq_n.q.expr().ne(lit(2, 0)));
    // The head answer: the oldest queued, or a direct NACK entering an
    // empty queue (its wait is 0: it may start at this edge).
    let ah_ok = w(
        &mut m,
        "ah_ok",
        1,
        "the head answer's addresses are in hand",
        mux(&av0, aupd[0][6].clone().eq(lit(wb, 0)), ans_push.expr().logic_and(s("s_ans_direct"))),
    );
    let ahs = |m: &mut Module, k: usize, n: &str, wd: u32| {
        m.wire_from(&format!("ah_{n}"), wd, "of the head answer", mux(&av0, aupd[0][k].clone(), pa[k].clone()))
    };
    let ah_hdr = ahs(&mut m, 0, "hdr", ANS_HDR_BITS);
    let ah_nack = ahs(&mut m, 1, "nack", 1);
    let ah_sport = ahs(&mut m, 2, "sport", 16);
    let ah_plane = ahs(&mut m, 3, "plane", 3);
    let ah_mac = ahs(&mut m, 4, "mac", 48);
    let ah_ip = ahs(&mut m, 5, "ip", 32);
    let nack_bits = nack::LAYOUT.len as u32 * 8;
    let ah_nhdr = w(
        &mut m,
        "ah_nack_hdr",
        nack_bits,
        "a NACK's header",
        ah_hdr.slice(ANS_HDR_BITS - 1, ANS_HDR_BITS - nack_bits),
    );
    let sack_crc = crc32(&mut m, "ah_crc52", &ah_hdr, sack::LAYOUT.len);
    let nack_crc = crc32(&mut m, "ah_crc20", &ah_nhdr, nack::LAYOUT.len);

    // ------------------------------------------------------------ the frame boundary
    let tready = s("m_axis_tready");
    let hs = w(&mut m, "axis_hs", 1, "a beat taken", cur_valid.q.expr().logic_and(&tready));
    // `frame_beat`'s outputs, declared below, are read here.
    let fb_last = m.wire("fb_last_q", 1, "the beat on m_axis is its frame's last");
    let bd = w(
        &mut m,
        "boundary",
        1,
        "no frame on m_axis after this edge but for a new one",
        cur_valid.q.expr().logic_not().logic_or(hs.expr().logic_and(&fb_last)),
    );
    let ans_go = w(&mut m, "ans_go", 1, "an answer starts", bd.expr().logic_and(&ah_ok));
    let v0 = valid[0].clone();
    let fh = |m: &mut Module, k: usize, n: &str, wd: u32| {
        m.wire_from(&format!("fh_{n}"), wd, "of the head frame", mux(v0.clone(), upd[0][k].clone(), pf[k].clone()))
    };
    let fh_hdr = fh(&mut m, 0, "hdr", FRAME_HDR_BITS);
    let fh_probe = fh(&mut m, 1, "probe", 1);
    let fh_len = fh(&mut m, 2, "len", plb);
    let fh_mac = fh(&mut m, 3, "mac", 48);
    let fh_ip = fh(&mut m, 4, "ip", 32);
    let fh_sport = fh(&mut m, 5, "sport", 16);
    let fh_plane = fh(&mut m, 6, "plane", 3);
    let fh_skip = fh(&mut m, 15, "skip", lb);
    let fh_raw = fh(&mut m, 17, "raw", 32);
    let fh_sum = fh(&mut m, 18, "sum", 16);
    let fh_buf = fh(&mut m, 19, "buf", 2);
    let fh_v = w(&mut m, "fh_v", 1, "a head frame", v0.clone().logic_or(s("s_frame_valid")));
    let fh_ready = w(
        &mut m,
        "fh_ready",
        1,
        "its payload is in (a frame pushed now: it has none)",
        mux(v0.clone(), &ready_u[0], &fzero),
    );
    let fh_err = w(&mut m, "fh_err", 1, "its read failed", v0.clone().logic_and(upd[0][16].clone()));
    let failed = s("fail_conn_failed");
    let hold = w(
        &mut m,
        "fh_hold",
        1,
        "its failure needs the completion walk, busy",
        fh_err.expr().logic_and(s("walk_busy")).logic_and(failed.expr().logic_not()),
    );
    let f_pop = w(
        &mut m,
        "f_pop",
        1,
        "the head frame leaves the queue",
        bd.expr()
            .logic_and(ah_ok.expr().logic_not())
            .logic_and(&fh_v)
            .logic_and(&fh_ready)
            .logic_and(hold.expr().logic_not()),
    );
    let f_go = w(&mut m, "f_go", 1, "the head frame starts", f_pop.expr().logic_and(fh_err.expr().logic_not()));
    let fail_v = f_pop.expr().logic_and(&fh_err).logic_and(failed.expr().logic_not());
    m.assign(s("m_fail_valid"), fail_v);
    m.assign(s("m_fail_conn"), gate(v0.clone(), &fq[0].conn.q, cb));
    m.assign(s("m_fail_stream"), gate(v0.clone(), &fq[0].stream.q, sb));
    m.assign(s("m_fail_slot"), gate(v0.clone(), &fq[0].slot.q, spb));
    let start = w(&mut m, "start", 1, "a frame starts on m_axis", ans_go.expr().logic_or(&f_go));
    m.assign(s("m_stat_tx_answer"), &ans_go);
    // A setup waits until no frame of its connection is queued (one
    // committed before it would leave after it with the old headers).
    let q = s("s_qry_conn");
    let mut queued = s("s_frame_valid").expr().logic_and(s("s_frame_conn").expr().eq(&q));
    for i in 0..QUEUE as usize {
        queued = queued.logic_or(valid[i].clone().logic_and(fq[i].conn.q.expr().eq(&q)));
    }
    m.assign(s("m_qry_queued"), queued);

    // ------------------------------------------------------------ the frame queue's next state
    let q_pop = w(&mut m, "fq_pop", 1, "entry 0 leaves", f_pop.expr().logic_and(v0.clone()));
    let f_store = w(
        &mut m,
        "fq_store",
        1,
        "the pushed frame is stored (not started at once)",
        s("s_frame_valid").expr().logic_and(f_pop.expr().logic_and(v0.clone().logic_not()).logic_not()),
    );
    let f_pos = w(&mut m, "fq_pos", nb, "where it goes", fq_n.q.expr() - zext(&q_pop, nb));
    for i in 0..QUEUE as usize {
        let here = f_store.expr().logic_and(f_pos.expr().eq(lit(nb, i as u64)));
        for (k, r) in fq[i].regs().iter().enumerate() {
            let shifted = if i + 1 < QUEUE as usize {
                mux(&q_pop, upd[i + 1][k].clone(), upd[i][k].clone())
            } else {
                upd[i][k].clone()
            };
            m.next(set(&r.next, mux(here.clone(), pf[k].clone(), shifted)));
        }
    }
    m.next(set(&fq_n.next, fq_n.q.expr() - zext(&q_pop, nb) + zext(&f_store, nb)));
    m.assign(s("m_frames"), &fq_n.q);
    let takes = f_store.expr().logic_and(fzero.expr().logic_not());
    let last_slot = alloc.q.expr().eq(lit(2, u64::from(SLOTS - 1)));
    m.next(if_then(takes, vec![set(&alloc.next, mux(last_slot, lit(2, 0), alloc.q.expr() + lit(2, 1)))]));

    // ------------------------------------------------------------ the answer queue's next state
    let a_pop = w(&mut m, "aq_pop", 1, "answer 0 leaves", ans_go.expr().logic_and(&av0));
    let a_store = w(
        &mut m,
        "aq_store",
        1,
        "the pushed answer is stored (not started at once)",
        ans_push.expr().logic_and(ans_go.expr().logic_and(av0.expr().logic_not()).logic_not()),
    );
    let a_pos = w(&mut m, "aq_pos", 2, "where it goes", aq_n.q.expr() - zext(&a_pop, 2));
    for j in 0..ANSWERS as usize {
        let here = a_store.expr().logic_and(a_pos.expr().eq(lit(2, j as u64)));
        for (k, r) in aq[j].regs().iter().enumerate() {
            let shifted = if j + 1 < ANSWERS as usize {
                mux(&a_pop, aupd[j + 1][k].clone(), aupd[j][k].clone())
            } else {
                aupd[j][k].clone()
            };
            m.next(set(&r.next, mux(here.clone(), pa[k].clone(), shifted)));
        }
    }
    m.next(set(&aq_n.next, aq_n.q.expr() - zext(&a_pop, 2) + zext(&a_store, 2)));

    // ------------------------------------------------------------ the head builder
    // One builder for the four headers: the UDP and IPv4 lengths and the
    // checksum take every header byte past the 16 all of them have as if
    // it were payload (the lengths are even, so the words pair the same),
    // and the bytes past a header's end are zero.
    let hlen = w(
        &mut m,
        "b_hlen",
        7,
        "transport header bytes",
        mux(
            &ans_go,
            mux(&ah_nack, lit(7, nack::LAYOUT.len as u64), lit(7, sack::LAYOUT.len as u64)),
            mux(&fh_probe, lit(7, probe::LAYOUT.len as u64), lit(7, data::LAYOUT.len as u64)),
        ),
    );
    let b_hdr = w(
        &mut m,
        "b_hdr",
        ANS_HDR_BITS,
        "transport header, big-endian, zero past its end",
        mux(&ans_go, &ah_hdr, cat(&[fh_hdr.expr(), zeros(ANS_HDR_BITS - FRAME_HDR_BITS)])),
    );
    let b_plen = w(&mut m, "b_plen", plb, "payload bytes", gate(ans_go.expr().logic_not(), &fh_len, plb));
    let b_icrc = w(&mut m, "b_icrc", 32, "the ICRC", mux(&ans_go, mux(&ah_nack, &nack_crc, &sack_crc), !fh_raw.expr()));
    let common = probe::LAYOUT.len as u32;
    let b_front = w(
        &mut m,
        "b_front",
        common * 8,
        "the header bytes every header has",
        b_hdr.slice(ANS_HDR_BITS - 1, ANS_HDR_BITS - common * 8),
    );
    let b_tail = w(
        &mut m,
        "b_tail",
        ANS_HDR_BITS - common * 8,
        "the rest, zero past the header's end",
        b_hdr.slice(ANS_HDR_BITS - common * 8 - 1, 0),
    );
    let tail_sum = ones_sum(&mut m, "b_tail_sum", &words_of(&b_tail, sack::LAYOUT.len - common as usize));
    let b_psum = gate(ans_go.expr().logic_not(), &fh_sum, 16);
    let ext_sum = ones_add(&mut m, "b_ext_sum", tail_sum.expr(), b_psum);
    let ext_len = w(
        &mut m,
        "b_ext_len",
        16,
        "bytes after the common header bytes: the rest of the header and the payload",
        zext(&hlen, 16) - lit(16, u64::from(common)) + zext(&b_plen, 16),
    );
    let net = NetFields {
        src_mac: s("cfg_src_mac").expr(),
        dst_mac: mux(&ans_go, &ah_mac, &fh_mac),
        src_ip: s("cfg_src_ip").expr(),
        dst_ip: mux(&ans_go, &ah_ip, &fh_ip),
        sport: mux(&ans_go, s("cfg_udp_port"), &fh_sport),
        dport: mux(&ans_go, &ah_sport, s("cfg_udp_port")),
    };
    let ip_fixed = (mrnic_proto::layouts::ipv4::LAYOUT.len + mrnic_proto::layouts::udp::LAYOUT.len) as u64;
    let ip_h = ipv4_header(
        &mut m,
        "b_ip",
        &net,
        lit(16, ip_fixed + u64::from(common) + mrnic_proto::layouts::ICRC_LEN as u64) + &ext_len,
    );
    let udp_h = udp_header(&mut m, "b_udp", &net, &b_front, common as usize, ext_len.expr(), ext_sum.expr(), &b_icrc);
    let eth_h = eth_header(&mut m, "b_eth", &net);
    let head_bytes = sz.head_max as usize;
    let b_be = w(
        &mut m,
        "b_be",
        sz.head_max * 8,
        "the head, byte 0 in the top bits",
        cat(&[eth_h.expr(), ip_h.expr(), udp_h.expr(), b_hdr.expr()]),
    );
    let b_head = axis_order(&b_be, head_bytes);

    // ------------------------------------------------------------ the frame on m_axis
    let hlb = sz.head_len_bits();
    let kb = sz.beat_bits();
    let cur_head = m.reg_no_reset("cur_head", sz.head_max * 8, "the frame's head, m_axis byte order");
    let cur_hlen = m.reg_no_reset("cur_hlen", hlb, "its length");
    let cur_plen = m.reg_no_reset("cur_plen", plb, "payload bytes");
    let cur_skip = m.reg_no_reset("cur_skip", lb, "the payload's first byte in its first buffer beat");
    let cur_icrc = m.reg_no_reset("cur_icrc", 32, "the ICRC");
    let cur_plane = m.reg_no_reset("cur_plane", 3, "plane");
    let cur_buf = m.reg_no_reset("cur_buf", 2, "payload buffer slot");
    let k = m.reg_no_reset("beat", kb, "the beat on m_axis");
    let lo = m.reg_no_reset("lo", dw, "the buffer beat before hi");
    let byp = m.reg("byp", 1, 0, "the read raced the write of its word: hi is byp_data");
    let byp_data = m.reg_no_reset("byp_data", dw, "the word written as it was read");
    let hi = m.wire("hi", dw, "the buffer beat the memory read, or the one written as it was read");

    let beat = frame_beat(
        &mut m,
        "fb",
        &sz,
        &BeatIn {
            k: k.q.clone(),
            head: cur_head.q.clone(),
            head_len: cur_hlen.q.clone(),
            skip: cur_skip.q.clone(),
            payload_len: cur_plen.q.clone(),
            icrc: cur_icrc.q.clone(),
            lo: lo.q.clone(),
            hi: hi.clone(),
        },
    );
    m.assign(&fb_last, &beat.last);
    let cv = cur_valid.q.expr();
    m.assign(s("m_axis_tdata"), gate(cv.clone(), &beat.data, dw));
    let keep: Vec<Expr> = (0..bb).rev().map(|j| cv.clone().logic_and(lit(cw, u64::from(j)).lt(&beat.keep))).collect();
    m.assign(s("m_axis_tkeep"), cat(&keep));
    m.assign(s("m_axis_tvalid"), cv.clone());
    m.assign(s("m_axis_tlast"), cv.clone().logic_and(&beat.last));
    m.assign(s("m_axis_tuser"), gate(cv.clone(), &cur_plane.q, 3));

    // The next beat's `hi`, read a beat ahead: before the payload (the
    // beat's `hi` forced to 0 by frame_beat) the next is buffer beat 0,
    // from then on one more each beat (`lo` is then the one before).
    let ow = sz.offset_bits();
    let before = w(
        &mut m,
        "fb_before",
        1,
        "the beat's hi is forced to 0: the payload is not reached",
        (zext(&cur_skip.q, ow) + zext(cat(&[k.q.expr(), zeros(lb)]), ow) + lit(ow, u64::from(bb)))
            .lt(zext(&cur_hlen.q, ow)),
    );
    let bw = sz.buf_bits();
    let hi_next =
        w(&mut m, "hi_next", bw, "the next beat's hi", mux(&before, lit(bw, 0), beat.hi_beat.expr() + lit(bw, 1)));
    let advance =
        w(&mut m, "advance", 1, "the next beat of the same frame", hs.expr().logic_and(beat.last.expr().logic_not()));
    let rd_en = w(&mut m, "pbuf_ren", 1, "a new hi is read", start.expr().logic_or(&advance));
    // A frame starts with buffer beat 0 (its first beats are all head).
    let rd_addr = w(
        &mut m,
        "pbuf_raddr",
        aw,
        "the word read",
        mux(&start, base(fh_buf.expr()), base(cur_buf.q.expr()) + zext(&hi_next, aw)),
    );
    let rd = m.mem_read(&pbuf, "pbuf_rd", &rd_en, &rd_addr);
    m.assign(&hi, mux(&byp.q, &byp_data.q, &rd));
    // The only word read as it is written is a payload's single beat,
    // arriving at the edge its frame starts.
    m.next(if_then(
        &rd_en,
        vec![
            set(&byp.next, r_hit.expr().logic_and(wr_addr.expr().eq(&rd_addr))),
            set(&byp_data.next, s("m_axi_rdata")),
        ],
    ));
    m.next(if_then(&advance, vec![set(&lo.next, &hi), set(&k.next, k.q.expr() + lit(kb, 1))]));
    m.next(if_then(hs.expr().logic_and(&beat.last), vec![set(&cur_valid.next, lit(1, 0))]));
    m.next(if_then(
        &start,
        vec![
            set(&cur_valid.next, lit(1, 1)),
            set(&k.next, lit(kb, 0)),
            set(&cur_head.next, b_head),
            set(&cur_hlen.next, zext(lit(7, NET_OVERHEAD as u64) + &hlen, hlb)),
            set(&cur_plen.next, &b_plen),
            set(&cur_skip.next, &fh_skip),
            set(&cur_icrc.next, &b_icrc),
            set(&cur_plane.next, mux(&ans_go, &ah_plane, &fh_plane)),
            set(&cur_buf.next, &fh_buf),
        ],
    ));

    let inner = Inner {
        fq_n: fq_n.q.clone(),
        aq_n: aq_n.q.clone(),
        cur_valid: cur_valid.q.clone(),
        cur_plen: cur_plen.q.clone(),
        valid,
        ar: fq.iter().map(|e| (e.ar_next.q.clone(), e.ar_end.q.clone(), e.r_left.q.clone())).collect(),
        f_store,
        f_pos,
        q_pop,
        f_pop,
        f_go,
        fh_err,
        a_store,
        a_pos,
        ans_go,
        start,
        hs,
    };
    properties(&mut m, p, &inner);
    m
}

/// The unit's registers and decisions its formal properties read.
struct Inner {
    fq_n: Signal,
    aq_n: Signal,
    cur_valid: Signal,
    cur_plen: Signal,
    /// Per frame queue entry: it holds a frame.
    valid: Vec<Expr>,
    /// Per entry: `ar_next`, `ar_end`, `r_left`.
    ar: Vec<(Signal, Signal, Signal)>,
    f_store: Signal,
    f_pos: Signal,
    q_pop: Signal,
    f_pop: Signal,
    f_go: Signal,
    fh_err: Signal,
    a_store: Signal,
    a_pos: Signal,
    ans_go: Signal,
    start: Signal,
    hs: Signal,
}

/// Width of the ghost count of read beats outstanding: the queue's
/// payloads at most.
fn open_bits() -> u32 {
    12
}

/// The unit's formal properties (see the module's `# Formal properties`).
fn properties(m: &mut Module, p: &TxEngineParams, f: &Inner) {
    use crate::formal::{axi_read, axis, implies, port, valid_ready, Side};
    let sz = BeatSizes::of(p);
    let bb = p.beat_bytes();
    let lb = bb.trailing_zeros();
    let ab = p.axi_addr_bits;
    let plb = sz.payload_len_bits();
    let nb = f.fq_n.width();
    let s = |m: &Module, n: &str| port(m, n);
    let rst = s(m, "rst");
    let live = rst.expr().logic_not();

    // ------------------------------------------------ interfaces
    axis(m, "m_axis", &rst);
    // The answer's payload, without `s_ans_rd_*`: those carry the
    // addresses table's answer to an earlier push, on their own timing.
    let ans_payload: Vec<Signal> = ["nack", "hdr", "sport", "plane", "direct", "dst_mac", "dst_ip"]
        .iter()
        .map(|n| s(m, &format!("s_ans_{n}")))
        .collect();
    let (av, ar) = (s(m, "s_ans_valid"), s(m, "s_ans_ready"));
    valid_ready(m, "s_ans", Side::Sink, &av, &ar, &ans_payload, &rst);
    let ob = open_bits();
    let r_open = axi_read(m, "m_axi", &rst, p.axi_max_burst, bb, ob);

    // ------------------------------------------------ the push rule
    // The model's scheduler (mrnic_model::tx_engine) pushes only into
    // room it saw on m_frames: `may_start` needs `frames.len() <
    // FRAME_QUEUE + PROBE_ROOM`, and `start` lets only a PROBE start once
    // FRAME_QUEUE frames are queued; a PROBE is pushed in its start cycle,
    // a data frame at its decision's commit, and no other decision starts
    // in between (the scheduler is busy) while pops only shrink the queue.
    // `clock` runs `start` before `next_frame`, so the count it reads is
    // the one before this edge: m_frames. hdl/tests/tx_engine_output.rs
    // checks every push of its replay against these two rules.
    let fv = s(m, "s_frame_valid");
    let probe = s(m, "s_frame_probe");
    let frames = s(m, "m_frames");
    m.assume(
        "asm_s_frame_room",
        &format!("a frame is pushed only while m_frames shows room (fewer than QUEUE = {QUEUE})"),
        implies(&fv, frames.expr().lt(lit(nb, u64::from(QUEUE)))),
    );
    m.assume(
        "asm_s_frame_data_room",
        &format!("a data frame is pushed only while fewer than FRAME_QUEUE = {FRAME_QUEUE} frames are queued"),
        implies(fv.expr().logic_and(probe.expr().logic_not()), frames.expr().lt(lit(nb, FRAME_QUEUE as u64))),
    );
    let flen = s(m, "s_frame_len");
    let faddr = s(m, "s_frame_addr");
    m.assume(
        "asm_s_frame_len",
        &format!("a pushed payload is at most {} bytes, and a PROBE has none", sz.payload_max),
        implies(
            &fv,
            flen.expr().le(lit(plb, u64::from(sz.payload_max))).logic_and(implies(&probe, flen.expr().eq(lit(plb, 0)))),
        ),
    );
    let top = if ab >= 64 { u64::MAX } else { (1 << ab) - 1 };
    m.assume(
        "asm_s_frame_no_wrap",
        "a payload's beats end below the top of the address space",
        implies(&fv, faddr.expr().le(lit(ab, top) - zext(&flen, ab) - lit(ab, u64::from(bb - 1)))),
    );
    m.assert(
        "a_fq_count",
        &format!("the frame queue holds at most its {QUEUE} entries"),
        f.fq_n.expr().le(lit(nb, u64::from(QUEUE))),
    );
    m.assert(
        "a_s_frame_no_loss",
        "a pushed frame that does not start at once always finds a free entry (no push is lost)",
        implies(&f.f_store, f.f_pos.expr().lt(lit(nb, u64::from(QUEUE)))),
    );

    // ------------------------------------------------ reads: what was asked, what is awaited
    // Per entry: its next and end addresses are beat-aligned, next <= end,
    // and the beats not yet requested are among those still to come; an
    // entry with beats not yet requested has every later one untouched
    // (AR serves the oldest); and the beats the unit still waits for on
    // bursts it requested are exactly the bursts' beats not yet taken.
    let low = |x: &Signal| x.slice(lb - 1, 0).eq(lit(lb, 0));
    let unreqs: Vec<Expr> =
        f.ar.iter()
            .enumerate()
            .map(|(i, (next, end, _))| {
                let u = m.formal_wire(&format!("f_fq{i}_unreq"), ab, "beats the entry has not requested yet");
                m.formal_assign(&u, (end.expr() - next) >> lit(7, u64::from(lb)));
                u.slice(ob - 1, 0)
            })
            .collect();
    let unreq_fits: Vec<Expr> = (0..f.ar.len())
        .map(|i| Signal::new(&format!("f_fq{i}_unreq"), ab).slice(ab - 1, ob).eq(lit(ab - ob, 0)))
        .collect();
    let unreq = |e: &(Signal, Signal, Signal)| -> Expr {
        let i = f.ar.iter().position(|x| std::ptr::eq(x, e)).expect("an entry");
        unreqs[i].clone()
    };
    let mut awaited = lit(ob, 0);
    for (i, e) in f.ar.iter().enumerate() {
        let (next, end, left) = e;
        m.assert(
            &format!("a_fq{i}_aligned"),
            "an entry's next and end read addresses are beat-aligned (so a burst's length counts whole beats)",
            implies(f.valid[i].clone(), low(next).logic_and(low(end))),
        );
        m.assert(
            &format!("a_fq{i}_read_state"),
            "an entry's next read address is at most its end, and its unrequested beats are still to come",
            implies(
                f.valid[i].clone(),
                next.expr().le(end).logic_and(unreq_fits[i].clone()).logic_and(unreq(e).le(zext(left, ob))),
            ),
        );
        for (j, later) in f.ar.iter().enumerate().skip(i + 1) {
            m.assert(
                &format!("a_fq{i}_before_fq{j}"),
                "while an entry has bursts to request, no later entry has requested any",
                implies(f.valid[j].clone().logic_and(next.expr().lt(end)), unreq(later).eq(zext(&later.2, ob))),
            );
        }
        awaited = awaited + mux(f.valid[i].clone(), zext(left, ob) - unreq(e), lit(ob, 0));
    }
    m.assert(
        "a_m_axi_r_awaited",
        "the read beats the unit waits for are exactly those requested and not yet taken (never more than it asked for)",
        implies(live.clone(), awaited.eq(&r_open)),
    );

    // ------------------------------------------------ the answer queue
    m.assert(
        "a_aq_count",
        &format!("the answer queue holds at most its {ANSWERS} entries"),
        f.aq_n.expr().le(lit(2, u64::from(ANSWERS))),
    );
    m.assert(
        "a_s_ans_no_overflow",
        "an answer taken and not started at once always finds a free entry",
        implies(&f.a_store, f.a_pos.expr().lt(lit(2, u64::from(ANSWERS)))),
    );

    // ------------------------------------------------ frames on m_axis
    let tlast = s(m, "m_axis_tlast");
    let open = m.formal_wire("f_axis_open", 1, "a frame started on m_axis and its tlast not yet taken");
    m.formal_seq(vec![if_else(
        &rst,
        vec![set(&open, lit(1, 0))],
        vec![
            if_then(f.hs.expr().logic_and(&tlast), vec![set(&open, lit(1, 0))]),
            if_then(&f.start, vec![set(&open, lit(1, 1))]),
        ],
    )]);
    m.assert(
        "a_m_axis_in_frame",
        "a beat is offered only inside a started frame",
        implies(live.clone(), open.expr().eq(&f.cur_valid)),
    );
    m.assert(
        "a_m_axis_frame_ends",
        "a frame starts only once the one before has ended with tlast taken",
        implies(&f.start, open.expr().logic_not().logic_or(f.hs.expr().logic_and(&tlast))),
    );

    // ------------------------------------------------ failed reads
    let fail = s(m, "m_fail_valid");
    let conn_failed = s(m, "fail_conn_failed");
    m.assert(
        "a_fail_never_starts",
        "the head frame whose read failed leaves the queue without starting on m_axis, reported unless its \
         connection has failed already",
        implies(
            f.f_pop.expr().logic_and(&f.fh_err),
            f.start.expr().logic_not().logic_and(fail.expr().eq(conn_failed.expr().logic_not())),
        ),
    );
    m.assert(
        "a_fail_once",
        "a failed read is reported only as its frame leaves the queue (once: a frame leaves once) and never for a \
         frame that starts",
        implies(&fail, f.q_pop.expr().logic_and(&f.fh_err).logic_and(f.f_go.expr().logic_not())),
    );

    // ------------------------------------------------ covers
    let ghost_ans = m.formal_wire("f_cur_answer", 1, "the frame on m_axis is an answer");
    m.formal_seq(vec![if_then(&f.start, vec![set(&ghost_ans, &f.ans_go)])]);
    let done = f.hs.expr().logic_and(&tlast);
    m.cover(
        "c_data_frame_done",
        "a data frame with payload leaves on m_axis to its tlast",
        done.clone().logic_and(ghost_ans.expr().logic_not()).logic_and(f.cur_plen.expr().ne(lit(plb, 0))),
    );
    m.cover("c_answer_done", "an answer frame leaves on m_axis to its tlast", done.logic_and(&ghost_ans));
    m.cover("c_read_failed", "a failed payload read is reported", fail.expr());
}

/// `xs` most significant first, for a bit vector with element 0 lowest.
fn rev(xs: &[Expr]) -> Vec<Expr> {
    xs.iter().rev().cloned().collect()
}

/// One-hot flags of the lowest set bit of `v` (`n` bits).
fn first_flags(v: &Signal, n: u32) -> Vec<Expr> {
    (0..n)
        .map(|i| {
            let below = if i == 0 { lit(1, 1) } else { v.slice(i - 1, 0).eq(lit(i, 0)) };
            v.bit(i).logic_and(below)
        })
        .collect()
}
