//! `sack_gen`: the per-(connection, path) receive state (cum_psn, 256-bit
//! bitmap, generation, ECN count, packets and bytes since the last SACK) in
//! a table memory, and the answers it decides: SACKs, BAD_HDR NACKs for a
//! stale generation or a psn beyond the window, and the "new bitmap bit"
//! verdict the completion stage counts bytes on.
//!
//! # Function
//! Every data packet that passed the connection and path-id checks enters on
//! `s_pkt_*` with `s_pkt_op = DATA`; PROBEs with `PROBE` (one beat per SACK
//! the probe must elicit: the stage before repeats it once per active
//! stream, `s_pkt_first` = 1 on the first beat only, the beats of one PROBE
//! back to back); a connection set-up writes an entry with `OPEN` (cum_psn =
//! `s_pkt_psn`, generation `s_pkt_gen`, everything else 0); `FLUSH` asks
//! for a SACK of a path's pending packets (below). `s_pkt_bad`
//! says that a later check (header sanity, message table, placement) refused
//! the packet; that stage sends its NACK, this block only keeps the
//! reference's order of checks around it. For a DATA beat, exactly as the
//! reference's `RxConn::on_data` (the tests run both):
//! 1. generation: a newer one (signed 8-bit distance > 0) is adopted when
//!    the psn lies within 256 of cum_psn, ahead or behind (a packet far
//!    outside the window cannot make live data stale), one behind is
//!    accepted, older is stale: NACK BAD_HDR on `m_nack_*`,
//!    `stat_stale_gen`, nothing else changes;
//! 2. a CE mark counts into `ecn_cnt` (saturating at 255), even if the
//!    packet is refused later;
//! 3. psn: `d = psn - cum_psn` (mod 2^24): `d >= 2^23` or the bit `d - 1`
//!    set is a duplicate (SACK at once, `stat_duplicate`); `d > 256` is
//!    beyond the window (NACK BAD_HDR, `stat_psn_window`);
//! 4. `s_pkt_bad`: nothing more (no bit, no count, no SACK);
//! 5. accepted: `d > 0` sets bit `d - 1`; `d = 0` advances cum_psn by one
//!    plus the run of ones at the bottom of the bitmap (a count of trailing
//!    ones and a shift, in one cycle); `m_new_*` tells the completion stage
//!    that the packet set a new bit; packets += 1, bytes += payload_len; a
//!    SACK when ACKREQ, CE, packets >= `timers.sack_every_packets` or bytes
//!    >= `timers.sack_every_bytes`.
//!
//! Every DATA beat (stale, duplicate and refused ones too) first records its
//! UDP source port and plane as the path's reply address, as the reference's
//! `rp.reply_port` / `rp.reply_plane`; an accepted one records its `tx_ts`
//! as the path's `last_ts`.
//!
//! A PROBE's first beat decides for the whole PROBE, as the reference's
//! `RxConn::admit_probe`: a psn outside `[cum_psn, cum_psn + 256]` is
//! refused (`stat_probe_psn`); otherwise the path's answer budget
//! (`PROBE_ANSWERS_PER_RTO_MIN` = 8 per `rto_min`: a 32-bit epoch stamp
//! from `ts_now` and a 4-bit count in the entry) is charged, and a PROBE
//! past it is refused (`stat_probe_limited`). The verdict is kept in a
//! register for the PROBE's other beats. An admitted beat adopts the
//! generation, records the reply address and answers with a SACK; a refused
//! one changes nothing else and answers nothing.
//!
//! `FLUSH` (the reference's `ack_clocking` rule: after a new packet with
//! ACKREQ, every other path of the connection with packets not yet
//! acknowledged is acknowledged too; the stage before sends one FLUSH beat
//! per other path, in path order, after the packet's own beat): a SACK when
//! the path's packet count is not 0, echoing the path's `last_ts`, to its
//! stored reply address, with the beat's `stream_id` and `completed_msn`;
//! otherwise nothing.
//!
//! Every SACK carries the entry after the update, goes to the path's reply
//! address and clears `ecn_cnt`, packets and bytes. `dst_conn` (the peer's id), `completed_msn` (the
//! stream's oldest incomplete msn after this packet, from the completion
//! stage) and the reply port and plane come with the packet and are passed
//! through; `rate_hint` is sampled in the update cycle.
//!
//! # Timing (read latency `L` = `hardware.table_read_latency`, 1 or 2)
//! ```text
//! cycle a       s_pkt handshake; table read at conn * PATHS + path
//! cycle a+L     read data (or forwarded entry) -> update (ts_now and
//!               rate_hint sampled here) -> table written at
//!               the edge ending this cycle; answers pushed into the FIFOs
//! cycle a+L+1   m_sack / m_nack / m_new valid; stat_* pulses
//! ```
//! Latency `L + 1`; throughput one packet per cycle, sustained, while the
//! outputs are taken.
//!
//! # Forwarding
//! A read cannot see the writes of the `L` updates made in the cycles
//! `a..a+L-1`; the block keeps those writes (index and entry) in registers
//! and the update takes the newest matching one, so back-to-back packets on
//! one (connection, path) lose nothing and never stall.
//!
//! # Backpressure
//! Each output channel has a FIFO of `FIFO_DEPTH` (power of 2 >= `L + 2`)
//! entries; a packet pushes at most one entry into each. `s_pkt_ready` is
//! high when every FIFO has room for the packets in the pipeline plus one:
//! a function of registers only.
//!
//! # Reset
//! `rst` empties the pipeline and FIFOs and starts a sweep writing a zero
//! entry per cycle (`CONNS * PATHS` cycles) with `s_pkt_ready` low.

use std::collections::VecDeque;
use std::fmt;

use mrnic_proto::config::Config;
use mrnic_proto::Bitmap256;

use crate::block::{Bits, Block, PortDef};

/// Module name, shared with the Verilog.
pub const NAME: &str = "sack_gen";
/// Psn width.
pub const PSN_BITS: u32 = 24;
const PSN_MASK: u32 = (1 << PSN_BITS) - 1;
const PSN_HALF: u32 = 1 << (PSN_BITS - 1);
/// NACK code BAD_HDR.
pub const NACK_BAD_HDR: u64 = 4;

/// Width of the stored PROBE answer count (0..=PROBE_ANSWERS_PER_RTO_MIN).
pub const PROBE_COUNT_BITS: u32 = 4;

/// `s_pkt_op` values.
pub const OP_DATA: u32 = 0;
pub const OP_PROBE: u32 = 1;
pub const OP_OPEN: u32 = 2;
pub const OP_FLUSH: u32 = 3;

/// PROBE answers per path per `rto_min`.
pub use mrnic_proto::config::PROBE_ANSWERS_PER_RTO_MIN;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sack_gen: {field} = {value}: {why}")]
pub struct ParamError {
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// Sizes of one `sack_gen`, derived from a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SackGenParams {
    pub conns: u32,
    pub paths: u32,
    pub conn_bits: u32,
    pub path_bits: u32,
    pub read_latency: u32,
    /// `timers.sack_every_packets`.
    pub sack_pkts: u32,
    /// `timers.sack_every_bytes`.
    pub sack_bytes: u32,
    /// Width of the stored packet count (it stays below `sack_pkts`).
    pub pkts_bits: u32,
    /// Width of the stored byte count (it stays below `sack_bytes`).
    pub bytes_bits: u32,
    /// `timers.rto_min_us` in timestamp units: the PROBE budget's period.
    pub rto_min: u32,
}

fn bits_for(max: u64) -> u32 {
    (64 - max.leading_zeros()).max(1)
}

impl SackGenParams {
    pub fn from_config(cfg: &Config) -> Result<SackGenParams, ParamError> {
        SackGenParams::new(
            cfg.transport.connections,
            cfg.transport.paths_per_conn,
            cfg.hardware.table_read_latency,
            cfg.timers.sack_every_packets,
            cfg.timers.sack_every_bytes,
            cfg.us_to_ts(cfg.timers.rto_min_us).clamp(1, u32::MAX as u64) as u32,
        )
    }

    pub fn new(
        conns: u32,
        paths: u32,
        read_latency: u32,
        pkts: u32,
        bytes: u32,
        rto_min: u32,
    ) -> Result<SackGenParams, ParamError> {
        let bad = |field, value: u32, why: &str| Err(ParamError { field, value: value as u64, why: why.into() });
        if conns < 2 || !conns.is_power_of_two() || conns > 1 << 24 {
            return bad("transport.connections", conns, "must be a power of 2 in 2..=2^24");
        }
        if paths == 0 || !paths.is_power_of_two() || paths > 256 {
            return bad("transport.paths_per_conn", paths, "must be a power of 2 in 1..=256");
        }
        if (conns as u64) * (paths as u64) > 1 << 20 {
            return bad("transport.paths_per_conn", paths, "connections x paths must be at most 2^20 table entries");
        }
        if !(1..=2).contains(&read_latency) {
            return bad("hardware.table_read_latency", read_latency, "the table memory supports 1 or 2 cycles");
        }
        if pkts == 0 || pkts > 1 << 16 {
            return bad("timers.sack_every_packets", pkts, "must be in 1..=65536");
        }
        if bytes == 0 || bytes > 1 << 24 {
            return bad("timers.sack_every_bytes", bytes, "must be in 1..=2^24");
        }
        Ok(SackGenParams {
            conns,
            paths,
            conn_bits: Config::index_bits(conns),
            path_bits: Config::index_bits(paths),
            read_latency,
            sack_pkts: pkts,
            sack_bytes: bytes,
            pkts_bits: bits_for(pkts as u64 - 1),
            bytes_bits: bits_for(bytes as u64 - 1),
            rto_min: rto_min.max(1),
        })
    }

    /// Table entries: `conns * paths`.
    pub fn entries(&self) -> u32 {
        self.conns * self.paths
    }

    /// Width of a table word: cum_psn, bitmap, gen, ecn_cnt, packets,
    /// bytes, last_ts, reply port and plane, PROBE epoch and count.
    pub fn entry_bits(&self) -> u32 {
        PSN_BITS + 256 + 8 + 8 + self.pkts_bits + self.bytes_bits + 16 + 16 + 3 + 32 + PROBE_COUNT_BITS
    }

    pub fn fifo_depth(&self) -> u32 {
        (self.read_latency + 2).next_power_of_two()
    }

    pub fn latency(&self) -> u32 {
        self.read_latency + 1
    }

    /// Fields of the SACK channel (`m_sack_<name>`), in order.
    pub fn sack_fields(&self) -> Vec<(&'static str, u32, &'static str)> {
        vec![
            ("conn", self.conn_bits, "local connection index"),
            ("dst_conn", 24, "connection id at the SACK's receiver (the data's sender)"),
            ("path_id", self.path_bits, "path acknowledged"),
            ("path_gen", 8, "generation of the newest packet on the path"),
            ("cum_psn", PSN_BITS, "every psn before it was received"),
            ("stream_id", 8, "stream of the packet that caused the SACK"),
            ("completed_msn", 24, "the stream's oldest incomplete msn"),
            ("echo_ts", 16, "tx_ts of the packet that caused the SACK"),
            ("ecn_cnt", 8, "CE-marked packets on the path since the last SACK"),
            ("rate_hint", 16, "receiver's fair share for this sender, Q0.16"),
            ("bitmap", 256, "bit i: psn cum_psn + 1 + i received"),
            ("sport", 16, "UDP source port of the trigger (the answer's destination port)"),
            ("plane", 3, "plane the trigger arrived on"),
        ]
    }

    /// Fields of the NACK channel (`m_nack_<name>`), in order.
    pub fn nack_fields(&self) -> Vec<(&'static str, u32, &'static str)> {
        vec![
            ("conn", self.conn_bits, "local connection index"),
            ("dst_conn", 24, "connection id at the NACK's receiver"),
            ("code", 8, "NACK code (BAD_HDR = 4)"),
            ("path_id", self.path_bits, "path of the refused packet"),
            ("path_gen", 8, "its generation"),
            ("psn", PSN_BITS, "its psn"),
            ("stream_id", 8, "its stream"),
            ("msn", 24, "its msn"),
            ("echo_ts", 16, "its tx_ts"),
            ("sport", 16, "its UDP source port"),
            ("plane", 3, "its plane"),
        ]
    }

    /// Fields of the new-bit channel (`m_new_<name>`), in order.
    pub fn new_fields(&self) -> Vec<(&'static str, u32, &'static str)> {
        vec![
            ("conn", self.conn_bits, "local connection index"),
            ("path_id", self.path_bits, "path"),
            ("psn", PSN_BITS, "the psn that set a new bit"),
            ("stream_id", 8, "its stream"),
            ("msn", 24, "its message"),
            ("payload_len", 16, "its payload bytes, to count once"),
        ]
    }

    /// Fields of the input channel (`s_pkt_<name>`), in order.
    pub fn pkt_fields(&self) -> Vec<(&'static str, u32, &'static str)> {
        vec![
            ("op", 2, "0 DATA, 1 PROBE, 2 OPEN (set up the entry), 3 FLUSH (SACK the path's pending packets)"),
            ("conn", self.conn_bits, "local connection index"),
            ("path_id", self.path_bits, "path"),
            ("psn", PSN_BITS, "path_psn (OPEN: the initial cum_psn)"),
            ("gen", 8, "path_gen"),
            ("ce", 1, "the IP ECN field was CE"),
            ("ackreq", 1, "ACKREQ flag"),
            ("bad", 1, "a later check refused the packet (it sends the NACK)"),
            ("payload_len", 16, "payload bytes"),
            ("stream_id", 8, "stream"),
            ("msn", 24, "message sequence number"),
            ("tx_ts", 16, "sender timestamp, echoed"),
            ("dst_conn", 24, "the peer's connection id, from the connection table"),
            ("completed_msn", 24, "the stream's completed_msn for a SACK this packet causes"),
            ("sport", 16, "UDP source port"),
            ("plane", 3, "plane it arrived on"),
            ("first", 1, "PROBE: the first beat of the PROBE (decides for all its beats)"),
        ]
    }
}

/// The counter pulses (name, meaning), in port order.
pub const STATS: [(&str, &str); 6] = [
    ("stat_stale_gen", "pulse: a packet of a stale generation (rx_stale_gen)"),
    ("stat_psn_window", "pulse: a psn beyond the window (rx_psn_window)"),
    ("stat_duplicate", "pulse: a duplicate psn (rx_duplicate)"),
    ("stat_sack", "pulse: a SACK was generated (sacks_sent)"),
    ("stat_probe_psn", "pulse: a PROBE with a psn outside [cum_psn, cum_psn + 256], refused (rx_probe_psn)"),
    ("stat_probe_limited", "pulse: a PROBE past its path's answer budget, refused (rx_probe_limited)"),
];

/// Port list, in declaration order: rst, rate_hint, s_pkt (valid, ready,
/// fields), m_sack, m_nack, m_new (valid, ready, fields), stat pulses.
pub fn ports(p: &SackGenParams) -> Vec<PortDef> {
    let mut v = vec![
        PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high; starts the table clear sweep"),
        PortDef::input("rate_hint", 16, "Rate hint", "fair-share hint SACKs carry, Q0.16 of line rate"),
        PortDef::input(
            "ts_now",
            32,
            "Rate hint",
            "the NIC's timestamp (timers.ts_unit_ns units): the PROBE budget's clock",
        ),
        PortDef::input("s_pkt_valid", 1, "Packet input", "a packet is offered"),
        PortDef::output("s_pkt_ready", 1, "Packet input", "packet accepted this cycle if valid"),
    ];
    for (n, w, c) in p.pkt_fields() {
        v.push(PortDef::input(format!("s_pkt_{n}"), w, "Packet input", c));
    }
    for (ch, group, fields) in [
        ("sack", "SACK output", p.sack_fields()),
        ("nack", "NACK output", p.nack_fields()),
        ("new", "New bitmap bit", p.new_fields()),
    ] {
        v.push(PortDef::output(format!("m_{ch}_valid"), 1, group, "an entry is offered"));
        v.push(PortDef::input(format!("m_{ch}_ready"), 1, group, "the entry is taken this cycle if valid"));
        for (n, w, c) in fields {
            v.push(PortDef::output(format!("m_{ch}_{n}"), w, group, c));
        }
    }
    for (n, c) in STATS {
        v.push(PortDef::output(n, 1, "Counters", c));
    }
    v
}

/// One table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entry {
    pub cum_psn: u32,
    pub bitmap: Bitmap256,
    pub gen: u8,
    pub ecn_cnt: u8,
    pub pkts: u32,
    pub bytes: u32,
    /// tx_ts of the last accepted packet (a FLUSH SACK echoes it).
    pub last_ts: u16,
    /// Where this path's answers go: the last DATA's (or admitted PROBE's)
    /// UDP source port and plane.
    pub reply_port: u16,
    pub reply_plane: u8,
    /// Start of the PROBE budget's period, and PROBEs answered in it.
    pub probe_epoch: u32,
    pub probe_answers: u8,
}

/// One input beat, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pkt {
    pub op: u32,
    pub conn: u32,
    pub path_id: u32,
    pub psn: u32,
    pub gen: u8,
    pub ce: bool,
    pub ackreq: bool,
    pub bad: bool,
    pub payload_len: u16,
    pub stream_id: u8,
    pub msn: u32,
    pub tx_ts: u16,
    pub dst_conn: u32,
    pub completed_msn: u32,
    pub sport: u16,
    pub plane: u8,
    pub first: bool,
}

impl Pkt {
    fn values(&self) -> [u64; 17] {
        [
            self.op as u64,
            self.conn as u64,
            self.path_id as u64,
            self.psn as u64,
            self.gen as u64,
            self.ce as u64,
            self.ackreq as u64,
            self.bad as u64,
            self.payload_len as u64,
            self.stream_id as u64,
            self.msn as u64,
            self.tx_ts as u64,
            self.dst_conn as u64,
            self.completed_msn as u64,
            self.sport as u64,
            self.plane as u64,
            self.first as u64,
        ]
    }
}

/// A SACK, as `m_sack_*` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sack {
    pub conn: u32,
    pub dst_conn: u32,
    pub path_id: u32,
    pub path_gen: u8,
    pub cum_psn: u32,
    pub stream_id: u8,
    pub completed_msn: u32,
    pub echo_ts: u16,
    pub ecn_cnt: u8,
    pub rate_hint: u16,
    pub bitmap: Bitmap256,
    pub sport: u16,
    pub plane: u8,
}

/// A NACK, as `m_nack_*` shows it (code is always BAD_HDR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nack {
    pub conn: u32,
    pub dst_conn: u32,
    pub path_id: u32,
    pub path_gen: u8,
    pub psn: u32,
    pub stream_id: u8,
    pub msn: u32,
    pub echo_ts: u16,
    pub sport: u16,
    pub plane: u8,
}

/// A new-bit verdict, as `m_new_*` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NewBit {
    pub conn: u32,
    pub path_id: u32,
    pub psn: u32,
    pub stream_id: u8,
    pub msn: u32,
    pub payload_len: u16,
}

/// Inputs of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    pub rst: bool,
    pub rate_hint: u16,
    pub ts_now: u32,
    pub pkt_valid: bool,
    pub pkt: Pkt,
    pub sack_ready: bool,
    pub nack_ready: bool,
    pub new_ready: bool,
}

/// Counter pulses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub stale_gen: bool,
    pub psn_window: bool,
    pub duplicate: bool,
    pub sack: bool,
    pub probe_psn: bool,
    pub probe_limited: bool,
}

/// Outputs of one cycle (a function of registers only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outputs {
    pub pkt_ready: bool,
    pub sack: Option<Sack>,
    pub nack: Option<Nack>,
    pub new: Option<NewBit>,
    pub stats: Stats,
}

/// What one update decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    pub entry: Entry,
    pub sack: Option<Sack>,
    pub nack: Option<Nack>,
    pub new: Option<NewBit>,
    pub stats: Stats,
    /// The PROBE verdict register after this beat.
    pub probe_ok: bool,
}

/// The clock-sampled levels an update uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Levels {
    pub rate_hint: u16,
    pub ts_now: u32,
    /// The PROBE verdict register (the first beat's decision).
    pub probe_ok: bool,
}

/// A PROBE's first beat: the reference's `RxConn::admit_probe` on the
/// entry (psn window, then the budget, charged when admitted).
fn admit_probe(p: &SackGenParams, e: &mut Entry, k: &Pkt, ts_now: u32, st: &mut Stats) -> bool {
    if k.psn.wrapping_sub(e.cum_psn) & PSN_MASK > Bitmap256::BITS {
        st.probe_psn = true;
        return false;
    }
    if ts_now.wrapping_sub(e.probe_epoch) >= p.rto_min {
        e.probe_epoch = ts_now;
        e.probe_answers = 0;
    }
    if e.probe_answers >= PROBE_ANSWERS_PER_RTO_MIN {
        st.probe_limited = true;
        return false;
    }
    e.probe_answers += 1;
    true
}

/// The update of one entry by one beat: the reference's receive-path rules.
pub fn update(p: &SackGenParams, e: &Entry, k: &Pkt, lv: Levels) -> Verdict {
    let mut e = *e;
    let mut v = Verdict { probe_ok: lv.probe_ok, ..Verdict::default() };
    let rate_hint = lv.rate_hint;
    let sack = |e: &mut Entry, st: &mut Stats, echo_ts: u16| {
        let s = Sack {
            conn: k.conn,
            dst_conn: k.dst_conn,
            path_id: k.path_id,
            path_gen: e.gen,
            cum_psn: e.cum_psn,
            stream_id: k.stream_id,
            completed_msn: k.completed_msn,
            echo_ts,
            ecn_cnt: e.ecn_cnt,
            rate_hint,
            bitmap: e.bitmap,
            sport: e.reply_port,
            plane: e.reply_plane,
        };
        e.ecn_cnt = 0;
        e.pkts = 0;
        e.bytes = 0;
        st.sack = true;
        Some(s)
    };
    let nack = Some(Nack {
        conn: k.conn,
        dst_conn: k.dst_conn,
        path_id: k.path_id,
        path_gen: k.gen,
        psn: k.psn,
        stream_id: k.stream_id,
        msn: k.msn,
        echo_ts: k.tx_ts,
        sport: k.sport,
        plane: k.plane,
    });
    match k.op {
        OP_OPEN => {
            e = Entry { cum_psn: k.psn & PSN_MASK, gen: k.gen, ..Entry::default() };
        }
        OP_PROBE => {
            if k.first {
                v.probe_ok = admit_probe(p, &mut e, k, lv.ts_now, &mut v.stats);
            }
            if v.probe_ok {
                e.gen = k.gen;
                e.reply_port = k.sport;
                e.reply_plane = k.plane;
                v.sack = sack(&mut e, &mut v.stats, k.tx_ts);
            }
        }
        OP_FLUSH => {
            if e.pkts > 0 {
                let ts = e.last_ts;
                v.sack = sack(&mut e, &mut v.stats, ts);
            }
        }
        _ => {
            e.reply_port = k.sport;
            e.reply_plane = k.plane;
            let g = k.gen.wrapping_sub(e.gen) as i8;
            if g < -1 {
                v.stats.stale_gen = true;
                v.nack = nack;
                v.entry = e;
                return v;
            }
            let d = k.psn.wrapping_sub(e.cum_psn) & PSN_MASK;
            let near = d <= 256 || e.cum_psn.wrapping_sub(k.psn) & PSN_MASK <= 256;
            if g > 0 && near {
                e.gen = k.gen;
            }
            if k.ce {
                e.ecn_cnt = e.ecn_cnt.saturating_add(1);
            }
            let dup = if d >= PSN_HALF {
                true
            } else if d == 0 {
                false
            } else if d <= 256 {
                e.bitmap.get(d - 1)
            } else {
                v.stats.psn_window = true;
                v.nack = nack;
                v.entry = e;
                return v;
            };
            if dup {
                v.stats.duplicate = true;
                v.sack = sack(&mut e, &mut v.stats, k.tx_ts);
            } else if !k.bad {
                if d > 0 {
                    e.bitmap.set(d - 1);
                } else {
                    let n = trailing_ones(&e.bitmap) + 1;
                    e.cum_psn = e.cum_psn.wrapping_add(n) & PSN_MASK;
                    e.bitmap = e.bitmap.shift_down(n);
                }
                v.new = Some(NewBit {
                    conn: k.conn,
                    path_id: k.path_id,
                    psn: k.psn,
                    stream_id: k.stream_id,
                    msn: k.msn,
                    payload_len: k.payload_len,
                });
                e.pkts += 1;
                e.bytes += k.payload_len as u32;
                e.last_ts = k.tx_ts;
                if k.ackreq || k.ce || e.pkts >= p.sack_pkts || e.bytes >= p.sack_bytes {
                    v.sack = sack(&mut e, &mut v.stats, k.tx_ts);
                }
            }
        }
    }
    v.entry = e;
    v
}

/// Ones at the bottom of the bitmap (0..=256).
pub fn trailing_ones(b: &Bitmap256) -> u32 {
    let mut n = 0;
    for w in b.0 {
        let t = w.trailing_ones();
        n += t;
        if t < 64 {
            break;
        }
    }
    n
}

#[derive(Debug, Clone, Copy)]
struct Req {
    pkt: Pkt,
    index: u32,
}

/// The cycle-accurate `sack_gen`. See the module docs.
pub struct SackGen {
    p: SackGenParams,
    ports: Vec<PortDef>,
    mem: Vec<Entry>,
    rd: Vec<Entry>,
    stage: Vec<Option<Req>>,
    hist: Vec<Option<(u32, Entry)>>,
    sacks: VecDeque<Sack>,
    nacks: VecDeque<Nack>,
    news: VecDeque<NewBit>,
    stats: Stats,
    init: bool,
    init_addr: u32,
    /// The PROBE verdict register: the first beat's decision, for the rest.
    probe_ok: bool,
    ix: PortIx,
}

impl fmt::Debug for SackGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SackGen").field("p", &self.p).field("init", &self.init).finish_non_exhaustive()
    }
}

impl SackGen {
    /// A block in the state `rst` leaves it in (clear sweep pending).
    pub fn new(p: SackGenParams) -> SackGen {
        let l = p.read_latency as usize;
        let ports = ports(&p);
        SackGen {
            ix: PortIx::of(&p, &ports),
            ports,
            mem: vec![Entry::default(); p.entries() as usize],
            rd: vec![Entry::default(); l],
            stage: vec![None; l],
            hist: vec![None; l],
            sacks: VecDeque::new(),
            nacks: VecDeque::new(),
            news: VecDeque::new(),
            stats: Stats::default(),
            init: true,
            init_addr: 0,
            probe_ok: false,
            p,
        }
    }

    pub fn params(&self) -> &SackGenParams {
        &self.p
    }

    /// The stored entry of (conn, path) (every update is written at once;
    /// forwarding only hides the read latency).
    pub fn entry(&self, conn: u32, path: u32) -> &Entry {
        &self.mem[(conn * self.p.paths + path) as usize]
    }

    pub fn initializing(&self) -> bool {
        self.init
    }

    /// True when nothing is in the pipeline or the FIFOs.
    pub fn idle(&self) -> bool {
        self.stage.iter().all(Option::is_none) && self.sacks.is_empty() && self.nacks.is_empty() && self.news.is_empty()
    }

    pub fn outputs(&self) -> Outputs {
        let inflight = self.stage.iter().filter(|s| s.is_some()).count();
        let room = |n: usize| n + inflight < self.p.fifo_depth() as usize;
        Outputs {
            pkt_ready: !self.init && room(self.sacks.len()) && room(self.nacks.len()) && room(self.news.len()),
            sack: self.sacks.front().copied(),
            nack: self.nacks.front().copied(),
            new: self.news.front().copied(),
            stats: self.stats,
        }
    }

    /// The rising clock edge.
    pub fn clock(&mut self, inp: &Inputs) {
        let out = self.outputs();
        let l = self.p.read_latency as usize;
        let mut write = None;
        let mut verdict = None;
        if let Some(req) = &self.stage[l - 1] {
            let e = match self.hist.iter().flatten().find(|(i, _)| *i == req.index) {
                Some((_, e)) => *e,
                None => self.rd[l - 1],
            };
            let lv = Levels { rate_hint: inp.rate_hint, ts_now: inp.ts_now, probe_ok: self.probe_ok };
            let v = update(&self.p, &e, &req.pkt, lv);
            write = Some((req.index, v.entry));
            verdict = Some(v);
        }
        let fire = inp.pkt_valid && out.pkt_ready;
        if l == 2 {
            self.rd[1] = self.rd[0];
        }
        let mut k = inp.pkt;
        k.conn &= self.p.conns - 1;
        // With one path the 1-bit path_id port is passed through, not used.
        k.path_id &= (1 << self.p.path_bits) - 1;
        let index = k.conn * self.p.paths + (k.path_id & (self.p.paths - 1));
        if fire {
            self.rd[0] = self.mem[index as usize];
        }
        if self.init {
            self.mem[self.init_addr as usize] = Entry::default();
        } else if let Some((i, e)) = write {
            self.mem[i as usize] = e;
        }
        if inp.rst {
            self.stage.iter_mut().for_each(|s| *s = None);
            self.hist.iter_mut().for_each(|h| *h = None);
            self.sacks.clear();
            self.nacks.clear();
            self.news.clear();
            self.stats = Stats::default();
            self.init = true;
            self.init_addr = 0;
            self.probe_ok = false;
            return;
        }
        if self.init {
            if self.init_addr == self.p.entries() - 1 {
                self.init = false;
            }
            self.init_addr = (self.init_addr + 1) & (self.p.entries() - 1);
        }
        self.hist.rotate_right(1);
        self.hist[0] = write;
        if out.sack.is_some() && inp.sack_ready {
            self.sacks.pop_front();
        }
        if out.nack.is_some() && inp.nack_ready {
            self.nacks.pop_front();
        }
        if out.new.is_some() && inp.new_ready {
            self.news.pop_front();
        }
        self.stats = Stats::default();
        if let Some(v) = verdict {
            self.probe_ok = v.probe_ok;
            self.sacks.extend(v.sack);
            self.nacks.extend(v.nack);
            self.news.extend(v.new);
            self.stats = v.stats;
        }
        let depth = self.p.fifo_depth() as usize;
        debug_assert!(self.sacks.len() <= depth && self.nacks.len() <= depth && self.news.len() <= depth);
        self.stage.rotate_right(1);
        self.stage[0] = fire.then_some(Req { pkt: k, index });
    }
}

fn field(b: &Bits, width: u32) -> u64 {
    let v = b.as_u64();
    if width >= 64 {
        v
    } else {
        v & ((1 << width) - 1)
    }
}

/// Port indices of [`ports`], by role, resolved once so the per-cycle
/// `Block` calls do no name lookups.
#[derive(Debug, Clone)]
struct PortIx {
    rst: usize,
    rate_hint: usize,
    ts_now: usize,
    pkt_valid: usize,
    pkt_ready: usize,
    /// `s_pkt_*` in [`SackGenParams::pkt_fields`] order.
    pkt: [usize; 17],
    /// m_sack_ready, m_nack_ready, m_new_ready.
    ready: [usize; 3],
    sack_valid: usize,
    /// `m_sack_*` in [`SackGenParams::sack_fields`] order (the bitmap's
    /// slot is written apart, see `bitmap`).
    sack: [usize; 13],
    bitmap: usize,
    nack_valid: usize,
    nack: [usize; 11],
    new_valid: usize,
    new: [usize; 6],
    stats: [usize; 6],
}

impl PortIx {
    fn of(p: &SackGenParams, ports: &[PortDef]) -> PortIx {
        let i = |n: &str| crate::block::port_index(ports, n).expect("port exists");
        let list = |prefix: &str, fields: Vec<(&'static str, u32, &'static str)>| -> Vec<usize> {
            fields.iter().map(|(n, _, _)| i(&format!("{prefix}{n}"))).collect()
        };
        fn arr<const N: usize>(v: Vec<usize>) -> [usize; N] {
            v.try_into().expect("field count")
        }
        PortIx {
            rst: i("rst"),
            rate_hint: i("rate_hint"),
            ts_now: i("ts_now"),
            pkt_valid: i("s_pkt_valid"),
            pkt_ready: i("s_pkt_ready"),
            pkt: arr(list("s_pkt_", p.pkt_fields())),
            ready: ["m_sack_ready", "m_nack_ready", "m_new_ready"].map(i),
            sack_valid: i("m_sack_valid"),
            sack: arr(list("m_sack_", p.sack_fields())),
            bitmap: i("m_sack_bitmap"),
            nack_valid: i("m_nack_valid"),
            nack: arr(list("m_nack_", p.nack_fields())),
            new_valid: i("m_new_valid"),
            new: arr(list("m_new_", p.new_fields())),
            stats: STATS.map(|(n, _)| i(n)),
        }
    }
}

impl Block for SackGen {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, _inputs: &[Bits], outputs: &mut [Bits]) {
        let o = self.outputs();
        let s = o.sack.unwrap_or_default();
        let n = o.nack.unwrap_or_default();
        let w = o.new.unwrap_or_default();
        let ix = &self.ix;
        let mut set = |i: usize, v: u64| outputs[i].set_u64(self.ports[i].width, v);
        set(ix.pkt_ready, o.pkt_ready as u64);
        let sv: [u64; 13] = [
            s.conn as u64,
            s.dst_conn as u64,
            s.path_id as u64,
            s.path_gen as u64,
            s.cum_psn as u64,
            s.stream_id as u64,
            s.completed_msn as u64,
            s.echo_ts as u64,
            s.ecn_cnt as u64,
            s.rate_hint as u64,
            0,
            s.sport as u64,
            s.plane as u64,
        ];
        set(ix.sack_valid, o.sack.is_some() as u64);
        for (&i, v) in ix.sack.iter().zip(sv) {
            set(i, v);
        }
        let nv: [u64; 11] = [
            n.conn as u64,
            n.dst_conn as u64,
            if o.nack.is_some() { NACK_BAD_HDR } else { 0 },
            n.path_id as u64,
            n.path_gen as u64,
            n.psn as u64,
            n.stream_id as u64,
            n.msn as u64,
            n.echo_ts as u64,
            n.sport as u64,
            n.plane as u64,
        ];
        set(ix.nack_valid, o.nack.is_some() as u64);
        for (&i, v) in ix.nack.iter().zip(nv) {
            set(i, v);
        }
        let wv: [u64; 6] =
            [w.conn as u64, w.path_id as u64, w.psn as u64, w.stream_id as u64, w.msn as u64, w.payload_len as u64];
        set(ix.new_valid, o.new.is_some() as u64);
        for (&i, v) in ix.new.iter().zip(wv) {
            set(i, v);
        }
        let st = [
            o.stats.stale_gen,
            o.stats.psn_window,
            o.stats.duplicate,
            o.stats.sack,
            o.stats.probe_psn,
            o.stats.probe_limited,
        ];
        for (&i, v) in ix.stats.iter().zip(st) {
            set(i, v as u64);
        }
        outputs[ix.bitmap].set_words(256, &s.bitmap.0);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        let ix = &self.ix;
        let get = |i: usize| field(&inputs[i], self.ports[i].width);
        let mut f = [0u64; 17];
        for (v, &i) in f.iter_mut().zip(&ix.pkt) {
            *v = get(i);
        }
        let inp = Inputs {
            rst: get(ix.rst) == 1,
            rate_hint: get(ix.rate_hint) as u16,
            ts_now: get(ix.ts_now) as u32,
            pkt_valid: get(ix.pkt_valid) == 1,
            pkt: Pkt {
                op: f[0] as u32,
                conn: f[1] as u32,
                path_id: f[2] as u32,
                psn: f[3] as u32,
                gen: f[4] as u8,
                ce: f[5] == 1,
                ackreq: f[6] == 1,
                bad: f[7] == 1,
                payload_len: f[8] as u16,
                stream_id: f[9] as u8,
                msn: f[10] as u32,
                tx_ts: f[11] as u16,
                dst_conn: f[12] as u32,
                completed_msn: f[13] as u32,
                sport: f[14] as u16,
                plane: f[15] as u8,
                first: f[16] == 1,
            },
            sack_ready: get(ix.ready[0]) == 1,
            nack_ready: get(ix.ready[1]) == 1,
            new_ready: get(ix.ready[2]) == 1,
        };
        self.clock(&inp);
    }
}

/// The input field values of a beat, in [`SackGenParams::pkt_fields`] order
/// (for vector files and the RTL bench).
pub fn pkt_values(k: &Pkt) -> [u64; 17] {
    k.values()
}
