//! Deliberately broken copies of the generated blocks, each of which a
//! named assertion must catch: regression tests that the formal properties
//! are not vacuous.
//!
//! A property that passes on the real design proves nothing if it would
//! pass on a broken one too. Each [`Mutant`] is one small breakage of one
//! block (the kind of bug the property is there for), a bounded check of
//! the block's properties on the broken copy, and the assertion that must
//! fail; [`run`] says whether it did, with a counterexample VCD.
//!
//! The breakage is an exact-text substitution on the printed Verilog, not
//! an edit of the IR: the IR's expressions are built by Rust code, so a
//! breakage there would be code per mutant, where this table is data. Text
//! is fragile in one way, which [`Mutant::apply`] turns into a failure:
//! each substitution must match exactly once in the design (before
//! `` `ifdef FORMAL ``, so a mutant never edits a property), else the
//! generator's output changed and the mutant says so by name; a mutant can
//! never silently run as the unmodified design. The generators' own output
//! and `hdl/generated/` are never touched: the broken copy is written
//! only into the mutant's work folder.
//!
//! `scripts/formal --mutants` runs them all and prints a table;
//! `hdl/tests/formal.rs` runs the quick ones (rx_ctl's) on every `cargo test`.

use std::path::{Path, PathBuf};

use mrnic_proto::Config;

use crate::proof::{asserts, header, run_task, text_table, write_task_verilog, Mode, Outcome, Status, Task, Tools};
use crate::Module;

/// One deliberately broken copy of a block and the assertion that must
/// catch it.
#[derive(Clone, Copy, Debug)]
pub struct Mutant {
    /// The block, as [`crate::proof::blocks`] names it.
    pub block: &'static str,
    /// The built-in config it is generated for (the text it edits is
    /// that config's).
    pub config: &'static str,
    /// Generated instead for that config's proof configuration with this
    /// many connections ([`crate::proof::proof_config`]): a breakage a
    /// power-of-two count hides.
    pub connections: Option<u32>,
    /// Short name, unique within the block; `<block>_<name>` names its
    /// work folder and `--only` takes it.
    pub name: &'static str,
    /// The breakage in one line: the bug it stands for.
    pub what: &'static str,
    /// Exact-text substitutions `(from, to)` on the printed Verilog, each
    /// `from` found exactly once in the design part. Usually one; more
    /// where the generator prints one rule on several lines (a helper
    /// called for each path or each pass).
    pub edits: &'static [(&'static str, &'static str)],
    /// Assumptions removed for the run ([`Task::without`]): the design
    /// left whole and its environment freed, to show the assumption is
    /// needed (an edit or a removal, or both, makes a mutant).
    pub removes: &'static [&'static str],
    /// Bounded model check to this many cycles.
    pub depth: u32,
    /// The SMT solver (see [`Task::solver`]); `None` is the machine's.
    pub solver: Option<&'static str>,
    /// The assertions checked; `None` checks every assertion of the block.
    /// The others are removed, not assumed, as in a [`Task`].
    pub checks: Option<&'static [&'static str]>,
    /// Assertions taken out of `checks`: one that catches the breakage
    /// sooner than the one this mutant is for.
    pub unchecked: &'static [&'static str],
    /// The assertion that must fail.
    pub fails: &'static str,
}

/// rx_ctl's packet-sequencing rules (its `prove_pkt` task without the
/// strengthening `a_inv_*` and the channel rules): what its breakages
/// below are checked against, as docs/verification.md describes them.
const RX_CTL_PKT: &[&str] = &[
    "a_hdr_after_packet",
    "a_open_between_packets",
    "a_pay_once_per_hdr",
    "a_req_only_new",
    "a_req_not_refused",
    "a_req_once",
    "a_beat_bad_is_refusal",
    "a_pay_refused_drops",
    "a_pay_kept_with_req",
    "a_sack_held_until_idle",
    "a_sack_unheld_otherwise",
    "a_flush_after_placed_ackreq",
    "a_flush_other_paths",
    "a_open_beats_in_order",
    "a_own_nack_refused_once",
];

/// A breakage of `block` on `small`, checked as docs/verification.md ran
/// these: bmc to `depth` with boolector (yices got tx_output's 64-bit sums
/// wrong) over every assertion.
const fn small(
    block: &'static str,
    depth: u32,
    (name, what): (&'static str, &'static str),
    edits: &'static [(&'static str, &'static str)],
    fails: &'static str,
) -> Mutant {
    Mutant {
        block,
        config: "small",
        connections: None,
        name,
        what,
        edits,
        removes: &[],
        depth,
        solver: Some("boolector"),
        checks: None,
        unchecked: &[],
        fails,
    }
}

/// An rx_ctl breakage: depth 20 over [`RX_CTL_PKT`].
const fn rx_ctl(
    name: &'static str,
    what: &'static str,
    edits: &'static [(&'static str, &'static str)],
    fails: &'static str,
) -> Mutant {
    Mutant { checks: Some(RX_CTL_PKT), ..small("rx_ctl", 20, (name, what), edits, fails) }
}

/// `$name(name, what, edits, fails)`: a breakage of the unit `$name` on
/// `small`, checked by [`small`] to `$depth` cycles.
macro_rules! unit_mutants {
    ($($(#[$doc:meta])* $name:ident: $depth:literal;)*) => {$(
        $(#[$doc])*
        const fn $name(
            name: &'static str,
            what: &'static str,
            edits: &'static [(&'static str, &'static str)],
            fails: &'static str,
        ) -> Mutant {
            small(stringify!($name), $depth, (name, what), edits, fails)
        }
    )*};
}

unit_mutants! {
    /// A tx_output breakage: depth 8, the first failure named.
    tx_output: 8;
    /// A tx_walk breakage: depth 10.
    tx_walk: 10;
    /// A tx_post breakage: depth 10, every assertion and assumption.
    tx_post: 10;
    /// A tx_nack breakage: its prove task's `.sby` as a bmc to depth 10.
    tx_nack: 10;
    /// A tx_commit breakage: combinational, so one instant (bmc depth 1, as
    /// its 1-induction's base case found them).
    tx_commit: 1;
    /// A tx_rto breakage: its prove task's `.sby` as a bmc to depth 10.
    tx_rto: 10;
    /// A tx_ack breakage: a bmc to depth 6, every assertion and assumption.
    tx_ack: 6;
    /// A tx_sched breakage: a bmc to depth 8, every assertion and assumption.
    tx_sched: 8;
    /// A tx_sack breakage: its prove task's `.sby` as a bmc to depth 12,
    /// with `prove_acks`' four assertions too unless taken out.
    tx_sack: 12;
    /// A tx_stage breakage: its prove task's `.sby` as a bmc to depth 14.
    tx_stage: 14;
    /// A tx_timer breakage: a bmc to depth 10, every assertion and
    /// assumption.
    tx_timer: 10;
    /// A tx_probe breakage: a bmc to depth 10.
    tx_probe: 10;
    /// A tx_open breakage: a bmc to depth 10, every assertion and
    /// assumption (the ring clear's end is further: its mutant says so).
    tx_open: 10;
}

/// Every mutant: docs/verification.md's tables of breakages, by block.
/// tx_sack's and tx_stage's SILENT count (`silent_cap`, printed alike in
/// both) with path 0's increment dropped.
const SILENT_UNCOUNTED: &[(&str, &str)] =
    &[(", silent_counts_cur[1:0] + {1'b0, silent_send && (s_ring_phys == 2'd0)}};", ", silent_counts_cur[1:0]};")];

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        // a_beat_bad_is_refusal, added after this breakage was first tried,
        // catches it sooner (step 8: the beat is not marked bad); unchecked
        // here so a_req_not_refused is seen to catch it too.
        unchecked: &["a_beat_bad_is_refusal"],
        ..rx_ctl(
            "chk_refusal_ok",
            "msg_check's bad length and window answers taken as OK (a refused packet goes on)",
            &[("if (s_chkr_status != 2'd0) begin", "if (s_chkr_status == 2'd3) begin")],
            "a_req_not_refused",
        )
    },
    rx_ctl(
        "hold_released_on_sack",
        "the SACK hold released when a SACK waits, not when cpl_engine is idle",
        &[("if (cpl_idle & !csack_presented) begin", "if (s_gsack_valid & !csack_presented) begin")],
        "a_sack_held_until_idle",
    ),
    rx_ctl(
        "flush_own_path",
        "the FLUSH beats do not skip the packet's own path",
        &[
            (
                "assign release_path = release_from == {1'b0, hdr_path_id_reg} ? release_from + 9'd1 : release_from;",
                "assign release_path = release_from;",
            ),
            (
                "assign flush_path = flush_from == {1'b0, hdr_path_id_reg} ? flush_from + 9'd1 : flush_from;",
                "assign flush_path = flush_from;",
            ),
        ],
        "a_flush_other_paths",
    ),
    rx_ctl(
        "flush_past_paths",
        "a FLUSH beat for path = npaths (`<=` for `<`)",
        &[
            ("(release_path < {3'd0, lkr_paths_reg})", "(release_path <= {3'd0, lkr_paths_reg})"),
            ("(flush_path < {3'd0, lkr_paths_reg})", "(flush_path <= {3'd0, lkr_paths_reg})"),
        ],
        "a_flush_other_paths",
    ),
    rx_ctl(
        "nack_though_answered",
        "the own NACK sent though sack_gen answered the beat",
        &[("if ((code_reg != 3'd0) & !answered_now) begin", "if (code_reg != 3'd0) begin")],
        "a_own_nack_refused_once",
    ),
    rx_ctl(
        "open_mid_packet",
        "s_open_ready in any step with nothing offered (an open taken mid-packet)",
        &[("assign s_open_ready = idle;", "assign s_open_ready = free;")],
        "a_open_between_packets",
    ),
    rx_ctl(
        "bad_only_access",
        "the beat's bad only for an ACCESS refusal (the verdict still refuses the packet)",
        &[("pkt_bad_next = code_reg != 3'd0;", "pkt_bad_next = code_reg == 3'd2;")],
        "a_beat_bad_is_refusal",
    ),
    tx_output(
        "start_mid_frame",
        "a frame may start on any beat taken, not only after tlast",
        &[(
            "assign boundary = !cur_valid_reg || (axis_hs && fb_last_q);",
            "assign boundary = !cur_valid_reg || axis_hs;",
        )],
        "a_m_axis_frame_ends",
    ),
    tx_output(
        "tvalid_dropped",
        "m_axis_tvalid dropped while m_axi_rvalid",
        &[("assign m_axis_tvalid = cur_valid_reg;", "assign m_axis_tvalid = cur_valid_reg && !m_axi_rvalid;")],
        "a_m_axis_valid_held",
    ),
    tx_output(
        "tuser_toggled",
        "m_axis_tuser toggled by arready",
        &[(
            "assign m_axis_tuser = cur_valid_reg ? cur_plane_reg : 3'd0;",
            "assign m_axis_tuser = cur_valid_reg ? cur_plane_reg ^ {2'd0, m_axi_arready} : 3'd0;",
        )],
        "a_m_axis_payload_stable",
    ),
    tx_output("arvalid_dropped", "m_axi_arvalid dropped while s_ans_valid", ARVALID_DROPPED, "a_m_axi_r_awaited"),
    Mutant {
        checks: Some(&["a_m_axi_ar_valid_held"]),
        ..tx_output(
            "arvalid_dropped_alone",
            "m_axi_arvalid dropped while s_ans_valid, the AR handshake rule alone",
            ARVALID_DROPPED,
            "a_m_axi_ar_valid_held",
        )
    },
    tx_output(
        "araddr_moves",
        "m_axi_araddr + tready",
        &[(
            "assign m_axi_araddr = ar_any ? ar_next : 64'd0;",
            "assign m_axi_araddr = ar_any ? ar_next + {63'd0, m_axis_tready} : 64'd0;",
        )],
        "a_m_axi_ar_payload_stable",
    ),
    tx_output(
        "arburst_wrap",
        "arburst WRAP",
        &[("assign m_axi_arburst = ar_any ? 2'd1 : 2'd0;", "assign m_axi_arburst = ar_any ? 2'd2 : 2'd0;")],
        "a_m_axi_arburst_incr",
    ),
    tx_output(
        "burst_cap_65",
        "burst cap 65 beats",
        &[(
            "assign ar_len_cap = ar_len_to_page < 10'd64 ? ar_len_to_page : 10'd64;",
            "assign ar_len_cap = ar_len_to_page < 10'd65 ? ar_len_to_page : 10'd65;",
        )],
        "a_m_axi_arlen_max",
    ),
    tx_output(
        "page_one_beat_longer",
        "page one beat longer",
        &[(
            "assign ar_len_to_page = 10'd512 - {1'b0, ar_next[11:3]};",
            "assign ar_len_to_page = 10'd513 - {1'b0, ar_next[11:3]};",
        )],
        "a_m_axi_ar_4k",
    ),
    tx_output(
        "first_addr_unaligned",
        "a frame's first address not beat-aligned",
        &[(
            "assign pf_ar_next = !pf_zero ? s_frame_addr & 64'hfffffffffffffff8 : 64'd0;",
            "assign pf_ar_next = !pf_zero ? s_frame_addr : 64'd0;",
        )],
        "a_fq0_aligned",
    ),
    // docs/verification.md had a_fq0_read_state failing first; today's
    // trace fails the read accounting at the same step.
    tx_output("burst_one_beat_far", "a burst advances one beat too far", BURST_ONE_BEAT_FAR, "a_m_axi_r_awaited"),
    Mutant {
        checks: Some(&["a_fq0_read_state"]),
        ..tx_output(
            "burst_one_beat_far_alone",
            "a burst advances one beat too far, the entry's read state alone",
            BURST_ONE_BEAT_FAR,
            "a_fq0_read_state",
        )
    },
    tx_output("answer_into_full_queue", "an answer taken with the queue full", ANSWER_INTO_FULL, "a_s_ans_no_overflow"),
    Mutant {
        checks: Some(&["a_aq_count"]),
        ..tx_output(
            "answer_into_full_queue_alone",
            "an answer taken with the queue full, the queue's count alone",
            ANSWER_INTO_FULL,
            "a_aq_count",
        )
    },
    tx_output(
        "failed_frame_starts",
        "a failed frame starts",
        &[("assign f_go = f_pop && !fh_err;", "assign f_go = f_pop;")],
        "a_fail_never_starts",
    ),
    tx_output(
        "fail_without_pop",
        "m_fail_valid without the pop",
        &[(
            "assign m_fail_valid = (f_pop && fh_err) && !fail_conn_failed;",
            "assign m_fail_valid = fh_err && !fail_conn_failed;",
        )],
        "a_fail_once",
    ),
    Mutant {
        // No frame is shorter: the hidden tlast shows 11 cycles in. With
        // every assertion checked step 7 alone took minutes.
        depth: 14,
        checks: Some(&["a_m_axis_in_frame"]),
        ..tx_output(
            "tlast_hidden",
            "tlast hidden while arready (the frame ends inside, unseen outside)",
            &[(
                "assign m_axis_tlast = cur_valid_reg && fb_last;",
                "assign m_axis_tlast = (cur_valid_reg && fb_last) && !m_axi_arready;",
            )],
            "a_m_axis_in_frame",
        )
    },
    tx_walk(
        "cqe_valid_dropped",
        "m_cqe_valid dropped while a flush is pushed",
        &[("assign m_cqe_valid = cq_n_reg != 3'd0;", "assign m_cqe_valid = (cq_n_reg != 3'd0) && !s_flush_valid;")],
        "a_m_cqe_valid_held",
    ),
    tx_walk("cqe_status_toggled", "m_cqe_status toggled by ack_free", CQE_STATUS_TOGGLED, "a_cq_leaves_in_order"),
    Mutant {
        checks: Some(&["a_m_cqe_payload_stable"]),
        ..tx_walk(
            "cqe_status_toggled_alone",
            "m_cqe_status toggled by ack_free, the payload rule alone",
            CQE_STATUS_TOGGLED,
            "a_m_cqe_payload_stable",
        )
    },
    tx_walk(
        "step_without_room",
        "a step without room in the FIFO",
        &[(
            "assign step = ((walk_active_reg && rd_answered) && ack_free) && (cq_after_pop < 3'd4);",
            "assign step = (walk_active_reg && rd_answered) && ack_free;",
        )],
        "a_cq_walk_fits",
    ),
    tx_walk(
        "pop_when_empty",
        "a pop with the FIFO empty",
        &[("assign cq_pop = (cq_n_reg != 3'd0) && m_cqe_ready;", "assign cq_pop = m_cqe_ready;")],
        "a_cq_count",
    ),
    tx_walk(
        "head_not_shifting",
        "the head not shifting on a pop (the connection field)",
        &[("(cq_pop ? cq1_conn_reg : cq0_conn_reg)", "cq0_conn_reg")],
        "a_cq_tracked_in_place",
    ),
    tx_walk(
        "flush_status_5",
        "a flush's status 5 instead of WR_FLUSH in slot 1",
        FLUSH_STATUS_5,
        "a_cq_tracked_in_place",
    ),
    Mutant {
        checks: Some(&["a_cq_leaves_in_order"]),
        ..tx_walk(
            "flush_status_5_alone",
            "a flush's status 5 instead of WR_FLUSH in slot 1, the order rule alone",
            FLUSH_STATUS_5,
            "a_cq_leaves_in_order",
        )
    },
    tx_walk(
        "head_write_idle",
        "a head write while no walk runs",
        &[(
            "assign step = ((walk_active_reg && rd_answered) && ack_free) && (cq_after_pop < 3'd4);",
            "assign step = (rd_answered && ack_free) && (cq_after_pop < 3'd4);",
        )],
        "a_quiet_when_idle",
    ),
    tx_walk(
        "step_without_ack_free",
        "a step without ack_free",
        &[(
            "assign step = ((walk_active_reg && rd_answered) && ack_free) && (cq_after_pop < 3'd4);",
            "assign step = (walk_active_reg && rd_answered) && (cq_after_pop < 3'd4);",
        )],
        "a_step_gated",
    ),
    tx_walk(
        "rd_on_flush",
        "m_wq_rd_valid on a flush push",
        &[("assign m_wq_rd_valid = rd_valid;", "assign m_wq_rd_valid = rd_valid || s_flush_valid;")],
        "a_wq_rd_in_walk",
    ),
    tx_walk(
        "sw_conn_off_by_one_bit",
        "m_sw_conn off by one bit",
        &[(
            "assign m_sw_conn = sw_write ? walk_conn_reg : 4'd0;",
            "assign m_sw_conn = sw_write ? walk_conn_reg ^ 4'd1 : 4'd0;",
        )],
        "a_writes_name_the_walk",
    ),
    tx_walk(
        "sack_cqe_status_1",
        "a SACK's completion with status 1",
        &[(
            "(walk_cul_valid_reg ? 4'd6 : walk_status_reg)) : 4'd0;",
            "(walk_cul_valid_reg ? 4'd6 : walk_status_reg)) : 4'd1;",
        )],
        "a_sack_cqe_success",
    ),
    tx_walk(
        "flushed_status_success",
        "a flushed request's status SUCCESS instead of WR_FLUSH",
        &[("(walk_cul_valid_reg ? 4'd6 : walk_status_reg)", "(walk_cul_valid_reg ? 4'd0 : walk_status_reg)")],
        "a_fail_cqe_status",
    ),
    tx_walk(
        "acked_in_sack_walk",
        "the acked count written in a SACK's walk",
        &[(
            "assign ws_equalize = (walk_fail_reg && !walk_cul_pending_reg) && !ws_empty;",
            "assign ws_equalize = !walk_cul_pending_reg && !ws_empty;",
        )],
        "a_fail_only_writes",
    ),
    tx_walk(
        "sack_walk_from_stream_0",
        "a SACK's walk starting at stream 0, not its lowest touched",
        &[("assign done_first = {", "assign done_first = 2'd0 & {")],
        "a_walk_touched",
    ),
    tx_walk(
        "read_names_old_head",
        "the read after an advance names the old head",
        &[("(step && ws_advance ? head_inc[2:0] :", "(step && ws_advance ? head_s[2:0] :")],
        "a_rd_shown",
    ),
    Mutant {
        edits: &[],
        removes: &["asm_s_flush_room"],
        ..tx_walk("without_flush_room", "asm_s_flush_room removed", &[], "a_cq_flush_fits")
    },
    Mutant {
        edits: &[],
        removes: &["asm_s_fail_status"],
        ..tx_walk("without_fail_status", "asm_s_fail_status removed", &[], "a_walk_status")
    },
    tx_post(
        "wr_ready_when_full",
        "s_wr_ready high with the FIFO full while s_wr_valid",
        &[(
            "assign s_wr_ready = (en && !s_open_busy) && (wf_n_reg < 2'd2);",
            "assign s_wr_ready = (en && !s_open_busy) && ((wf_n_reg < 2'd2) || s_wr_valid);",
        )],
        "a_s_wr_ready",
    ),
    tx_post(
        "read_from_empty",
        "a read issued with the FIFO empty and nothing taken",
        &[(
            "assign pipe_pop = (en && (wf_some || wr_accept)) && (!pp0_valid_reg || post_take);",
            "assign pipe_pop = en && (!pp0_valid_reg || post_take);",
        )],
        "a_wf_never_empty_pop",
    ),
    tx_post(
        "head_not_shifting",
        "the FIFO's head not shifting on a pop (the connection field)",
        &[("(wf_pop ? wf1_conn_reg : wf0_conn_reg)", "wf0_conn_reg")],
        "a_wf_tracked_in_place",
    ),
    tx_post(
        "bypass_stale_slot",
        "the bypass reading the FIFO's stale slot instead of s_wr",
        &[("assign head_conn = wf_some ? wf0_conn_reg : s_wr_conn;", "assign head_conn = wf0_conn_reg;")],
        "a_rd_in_order",
    ),
    tx_post(
        "flush_live_too",
        "a flush also for a live connection (post and flush at once)",
        FLUSH_LIVE_TOO,
        "a_flush_room",
    ),
    Mutant {
        checks: Some(&["a_post_one"]),
        ..tx_post(
            "flush_live_too_alone",
            "a flush also for a live connection (post and flush at once), the one-action rule alone",
            FLUSH_LIVE_TOO,
            "a_post_one",
        )
    },
    tx_post(
        "held_request_leaves",
        "a held request leaving (take without a post or flush)",
        &[("assign pr_take = pr_write || pr_flush;", "assign pr_take = 1'b1;")],
        "a_post_one",
    ),
    tx_post(
        "post_held_for_flush_room",
        "a post held for flush room (not a full stream)",
        &[("assign pr_write = post_live && pr_room;", "assign pr_write = (post_live && pr_room) && m_flush_room;")],
        "a_post_hold",
    ),
    tx_post(
        "post_to_full_stream",
        "a post to a full stream (room at 9 of 8)",
        &[("assign pr_room = (post_tail - post_head) < 4'd8;", "assign pr_room = (post_tail - post_head) <= 4'd8;")],
        "a_post_write_room",
    ),
    tx_post(
        "flush_without_room",
        "a flush without m_flush_room",
        &[("assign pr_flush = !post_live && m_flush_room;", "assign pr_flush = !post_live;")],
        "a_flush_room",
    ),
    tx_post(
        "wr_conn_from_head",
        "m_wq_wr_conn from the FIFO's head, not the write stage",
        &[(
            "assign m_wq_wr_conn = post_write ? pp0_conn_reg : 4'd0;",
            "assign m_wq_wr_conn = post_write ? head_conn : 4'd0;",
        )],
        "a_post_names_the_request",
    ),
    tx_post(
        "wr_slot_from_head",
        "m_wq_wr_slot from the head, not the tail",
        &[(
            "assign m_wq_wr_slot = post_write ? post_tail[2:0] : 3'd0;",
            "assign m_wq_wr_slot = post_write ? post_head[2:0] : 3'd0;",
        )],
        "a_post_names_the_request",
    ),
    tx_post(
        "pend_streams_always_up",
        "pend_streams always counted up",
        &[(
            "assign pr_pend_streams = post_pend_streams + {2'd0, post_pend == post_tail};",
            "assign pr_pend_streams = post_pend_streams + 3'd1;",
        )],
        "a_post_pend_streams",
    ),
    tx_post(
        "flush_conn_without_flush",
        "m_flush_conn not 0 without a flush",
        &[("assign m_flush_conn = post_flush ? pp0_conn_reg : 4'd0;", "assign m_flush_conn = pp0_conn_reg;")],
        "a_outputs_zero",
    ),
    tx_post(
        "read_into_full_stage",
        "a read issued with the stage full and not leaving",
        &[(
            "assign pipe_pop = (en && (wf_some || wr_accept)) && (!pp0_valid_reg || post_take);",
            "assign pipe_pop = en && (wf_some || wr_accept);",
        )],
        "a_pp_count",
    ),
    tx_post(
        "commit_pend_not_forwarded",
        "the commit's pend not forwarded to the stage",
        &[("(pp0_fw_cut_s ? s_cut_pend : pp0_pend_cur)", "pp0_pend_cur")],
        "a_post_fw_pend",
    ),
    tx_post(
        "post_tail_not_forwarded",
        "the post's tail not forwarded to the request entering",
        &[(
            "pp0_tail_next = pp0_fill ? (in_nx_post_s ? pr_tail : in_fw_tail_v)",
            "pp0_tail_next = pp0_fill ? in_fw_tail_v",
        )],
        "a_pp0_fw_head",
    ),
    tx_post(
        "reopen_tail_mode_ignored",
        "the reopen's \"answer's tail\" mode bit ignored (head as held)",
        &[(
            "assign pp0_head_cur = pp0_head_ov_reg ? (pp0_head_eqt_reg ? s_rd_tail : pp0_head_reg) : s_rd_head;",
            "assign pp0_head_cur = pp0_head_ov_reg ? pp0_head_reg : s_rd_head;",
        )],
        "a_post_fw_head",
    ),
    tx_post(
        "failed_read_not_forwarded",
        "the failed read not forwarded to the stage",
        &[(": (pp0_nx_rdfail ? 1'b0 : pp0_fw_live_v);", ": pp0_fw_live_v;")],
        "a_pp0_fw_live",
    ),
    tx_nack(
        "rnr_limit_one_lower",
        "the RNR retry limit one lower (rnr_count < RNR_RETRY - 1)",
        RNR_LIMIT_ONE_LOWER,
        "a_evt_record",
    ),
    Mutant {
        checks: Some(&["a_fail_when"]),
        ..tx_nack(
            "rnr_limit_one_lower_alone",
            "the RNR retry limit one lower, the failure's timing alone",
            RNR_LIMIT_ONE_LOWER,
            "a_fail_when",
        )
    },
    tx_nack("answer_cycle_late", "the answer a cycle late (the read pipe one stage longer)", ANSWER_LATE, "a_evt_when"),
    Mutant {
        checks: Some(&["a_act_at_answer"]),
        ..tx_nack(
            "answer_cycle_late_alone",
            "the answer a cycle late, the actions' timing alone",
            ANSWER_LATE,
            "a_act_at_answer",
        )
    },
    tx_nack(
        "psn_check_dropped",
        "the psn check dropped (any psn of a valid slot is outstanding)",
        &[("assign slot_ok = s_ring_valid && (psn_off < span);", "assign slot_ok = s_ring_valid;")],
        "a_evt_when",
    ),
    tx_nack(
        "window_not_serial",
        "the window compared without serial arithmetic (cum_acked <= psn < next_psn)",
        &[(
            "assign slot_ok = s_ring_valid && (psn_off < span);",
            "assign slot_ok = (s_ring_valid && (s_pm_cum_acked <= rec_psn_reg)) && (rec_psn_reg < s_pm_next_psn);",
        )],
        "a_evt_when",
    ),
    tx_nack(
        "failed_conn_unchecked",
        "a failed connection not checked (s_rd_failed ignored)",
        &[("assign live = (answer && s_rd_open) && !s_rd_failed;", "assign live = answer && s_rd_open;")],
        "a_dead_conn_quiet",
    ),
    tx_nack(
        "rnr_on_waiting_slot",
        "an RNR back-off on a slot already waiting",
        &[
            (
                "assign rnr_room = ((on_packet && (rec_code_reg == 8'd1)) && !s_ring_rnr_wait) && rnr_below;",
                "assign rnr_room = (on_packet && (rec_code_reg == 8'd1)) && rnr_below;",
            ),
            (
                "assign rnr_fail = ((on_packet && (rec_code_reg == 8'd1)) && !s_ring_rnr_wait) && !rnr_below;",
                "assign rnr_fail = (on_packet && (rec_code_reg == 8'd1)) && !rnr_below;",
            ),
        ],
        "a_fail_when",
    ),
    tx_nack(
        "bad_hdr_requeues",
        "BAD_HDR queuing a slot queued already",
        &[(
            "assign bad_hdr_queue = (on_packet && (rec_code_reg == 8'd4)) && !s_ring_queued;",
            "assign bad_hdr_queue = on_packet && (rec_code_reg == 8'd4);",
        )],
        "a_retx_when",
    ),
    tx_nack(
        "rnr_deadline_from_answer",
        "the RNR deadline from the answer's ts_now instead of the step's",
        &[(
            "assign m_rnr_until = rnr_push ? rec_ts_reg + 32'd1562 : 32'd0;",
            "assign m_rnr_until = rnr_push ? ts_now + 32'd1562 : 32'd0;",
        )],
        "a_rnr_record",
    ),
    tx_nack(
        "rnr_count_unchanged",
        "the back-off writing rnr_count unchanged",
        &[(
            "assign m_ring_wr_rnr_count = rnr_push ? s_ring_rnr_count + 3'd1 : 3'd0;",
            "assign m_ring_wr_rnr_count = rnr_push ? s_ring_rnr_count : 3'd0;",
        )],
        "a_rnr_record",
    ),
    tx_nack(
        "evt_kind_ignores_resend",
        "the event's kind ignoring rnr_resend",
        &[("(((rec_code_reg == 8'd1) && !s_ring_rnr_resend) && rnr_below)", "((rec_code_reg == 8'd1) && rnr_below)")],
        "a_evt_record",
    ),
    tx_nack(
        "no_conn_with_culprit",
        "NO_CONN's failure with a culprit",
        &[("assign culprit = rnr_fail || access_fail;", "assign culprit = (rnr_fail || access_fail) || no_conn;")],
        "a_fail_record",
    ),
    tx_nack(
        "busy_1",
        "m_busy 1",
        &[("assign m_busy = s_go_nack ? 9'd2 : 9'd0;", "assign m_busy = s_go_nack ? 9'd1 : 9'd0;")],
        "a_busy_count",
    ),
    tx_nack(
        "no_conn_stale_path",
        "NO_CONN failing for a stale path_id too",
        &[(
            "assign no_conn = (live && path_ok) && (rec_code_reg == 8'd3);",
            "assign no_conn = live && (rec_code_reg == 8'd3);",
        )],
        "a_fail_alone",
    ),
    tx_nack(
        "rnr_until_ungated",
        "m_rnr_until not gated by its valid",
        &[(
            "assign m_rnr_until = rnr_push ? rec_ts_reg + 32'd1562 : 32'd0;",
            "assign m_rnr_until = rec_ts_reg + 32'd1562;",
        )],
        "a_quiet_without_rnr_valid",
    ),
    tx_nack(
        "access_writes_slot",
        "ACCESS also writing the slot",
        &[(
            "assign ring_write = rnr_push || bad_hdr_queue;",
            "assign ring_write = (rnr_push || bad_hdr_queue) || access_fail;",
        )],
        "a_fail_alone",
    ),
    tx_nack(
        "rnr_limit_dropped",
        "the RNR limit dropped (rnr_count <= RNR_RETRY, always true in 3 bits)",
        RNR_LIMIT_DROPPED,
        "a_evt_record",
    ),
    Mutant {
        checks: Some(&["a_rnr_count_within_retry"]),
        ..tx_nack(
            "rnr_limit_dropped_alone",
            "the RNR limit dropped, the count's range alone (a back-off at 7 writes 0)",
            RNR_LIMIT_DROPPED,
            "a_rnr_count_within_retry",
        )
    },
    tx_nack(
        "read_path_high_bits",
        "the read's path from path_id's bits 2..1",
        &[(
            "assign m_rd_path = s_go_nack ? s_nack_path_id[1:0] : 2'd0;",
            "assign m_rd_path = s_go_nack ? s_nack_path_id[2:1] : 2'd0;",
        )],
        "a_step_reads",
    ),
    tx_nack(
        "retx_psn_from_input",
        "BAD_HDR's push with the psn on s_nack_psn now instead of the record's",
        &[(
            "assign m_retx_psn = bad_hdr_queue ? rec_psn_reg : 24'd0;",
            "assign m_retx_psn = bad_hdr_queue ? s_nack_psn : 24'd0;",
        )],
        "a_retx_record",
    ),
    tx_nack(
        "culprit_slot_gated_by_fail",
        "the culprit's slot gated by the failure instead of the culprit",
        &[(
            "assign m_fail_culprit_slot = culprit ? s_ring_wq : 4'd0;",
            "assign m_fail_culprit_slot = fail ? s_ring_wq : 4'd0;",
        )],
        "a_quiet_without_fail_culprit_valid",
    ),
    tx_commit(
        "failed_retx_committed",
        "a failed connection's retransmission still committed (live ignores s_ctx_failed when s_commit_retx)",
        &[(
            "assign live = s_commit_valid && !s_ctx_failed;",
            "assign live = s_commit_valid && (!s_ctx_failed || s_commit_retx);",
        )],
        "a_no_write_without_commit",
    ),
    tx_commit(
        "retry_limit_gt",
        "the retry limit checked with > instead of >=",
        &[("(s_ring_retx_count >= 4'd15)", "(s_ring_retx_count > 4'd15)")],
        "a_limit_writes_only_pop",
    ),
    tx_commit(
        "retx_ackreq_from_cut",
        "a retransmission's ACKREQ from the cut instead of always set",
        &[("assign ackreq = s_commit_retx ? 1'b1 : cut_ackreq;", "assign ackreq = cut_ackreq;")],
        "a_retx_header",
    ),
    tx_commit(
        "retx_count_uncharged",
        "retx_count incremented uncharged too",
        &[("(charged ? s_ring_retx_count + 4'd1 : s_ring_retx_count)", "s_ring_retx_count + 4'd1")],
        "a_retx_count_by_one",
    ),
    tx_commit(
        "retx_resume_swapped",
        "RETX and RESUME swapped",
        &[("(s_ring_rnr_resend ? 4'd12 : 4'd2)", "(s_ring_rnr_resend ? 4'd2 : 4'd12)")],
        "a_event_kind",
    ),
    tx_commit(
        "cut_mtu_plus_one",
        "the cut's MTU one byte larger",
        &[
            ("assign cut_eom = cut_rest <= 32'd1024;", "assign cut_eom = cut_rest <= 32'd1025;"),
            ("assign cut_len = cut_eom ? cut_rest : 32'd1024;", "assign cut_len = cut_eom ? cut_rest : 32'd1025;"),
        ],
        "a_cut_len",
    ),
    tx_commit(
        "frame_addr_without_offset",
        "the frame's address without the offset",
        &[("assign m_frame_addr = valid ? s_wr_laddr + {32'd0, offset} : 64'd0;", "assign m_frame_addr = valid ? s_wr_laddr : 64'd0;")],
        "a_frame_addr",
    ),
    tx_commit(
        "cut_write_gated_by_valid",
        "a cut's write (m_sw_pend) gated by m_valid instead of m_cut_valid",
        &[("assign m_sw_pend = cut_valid ? cut_pend : 4'd0;", "assign m_sw_pend = valid ? cut_pend : 4'd0;")],
        "a_quiet_without_cut_valid",
    ),
    tx_rto(
        "busy_ring_depth",
        "m_busy tx_ring_depth instead of 1 + tx_ring_depth",
        &[("(s_rto_act[1] && s_go_rto ? 9'd65 : 9'd1)", "(s_rto_act[1] && s_go_rto ? 9'd64 : 9'd1)")],
        "a_busy_count",
    ),
    tx_rto(
        "mark_any_connection",
        "the plane mark on a timeout's answer whatever the connection (rto_live replaced by the answer and the record's kind)",
        &[("assign mark_write = ((rto_live && suspect_or_dead)", "assign mark_write = (((answer && rec_rto_reg) && suspect_or_dead)")],
        "a_mark_only",
    ),
    tx_rto(
        "mark_over_later",
        "a mark written over a later one (the serial comparison's half-range dropped)",
        &[("((mark_diff != 32'd0) && (mark_diff < 32'h80000000))", "(mark_diff != 32'd0)")],
        "a_mark_never_earlier",
    ),
    tx_rto("walk_span_plus_one", "the walk's span one more than next_psn - cum_acked", WALK_SPAN_PLUS_ONE, "a_walk_reads"),
    Mutant {
        // The reads' own rules fail first; without them, the 65th read of
        // a full ring shows (39 s on 2026-12-02).
        depth: 72,
        unchecked: &["a_walk_reads", "a_inv_walk", "a_inv_ring_rd0"],
        ..tx_rto(
            "walk_span_plus_one_ring",
            "the walk's span one more, the reads' rules unchecked: a read past the ring",
            WALK_SPAN_PLUS_ONE,
            "a_walk_within_ring",
        )
    },
    tx_rto(
        "walk_from_cum_plus_one",
        "the walk from cum_acked + 1",
        &[(
            "assign walk_cur_psn = walk_start ? s_pm_cum_acked : walk_psn_reg;",
            "assign walk_cur_psn = walk_start ? s_pm_cum_acked + 24'd1 : walk_psn_reg;",
        )],
        "a_walk_order",
    ),
    tx_rto(
        "odd_queued_pushed",
        "a queued slot at an odd psn pushed again",
        &[(
            "assign retx_push = (ring_rd0_valid_reg && s_ring_valid) && !s_ring_queued;",
            "assign retx_push = (ring_rd0_valid_reg && s_ring_valid) && (!s_ring_queued || ring_rd0_psn_reg[0]);",
        )],
        "a_retx_push",
    ),
    tx_rto(
        "probe_while_queued",
        "a PROBE pushed by a timeout while one is queued",
        &[("&& !s_rd_probe_q[rec_path_reg])", "&& (!s_rd_probe_q[rec_path_reg] || rto_live))")],
        "a_probe_only",
    ),
    tx_rto(
        "pm_conn_from_update",
        "the mirror write's connection from the update input instead of the record",
        &[("assign m_pm_conn = pm_write ? rec_conn_reg : 4'd0;", "assign m_pm_conn = pm_write ? s_upd_conn : 4'd0;")],
        "a_pm_at_answer",
    ),
    tx_rto(
        "probe_path_ungated",
        "m_probe_path not gated by its valid",
        &[("assign m_probe_path = probe_push ? rec_path_reg : 2'd0;", "assign m_probe_path = rec_path_reg;")],
        "a_quiet_without_probe_valid",
    ),
    tx_ack(
        "rnr_not_held_by_nack",
        "the RNR head's step not held by a waiting NACK (|| s_nack dropped from go_rnr)",
        &[(
            "!(((((1'b0 || s_rto) || s_upd) || s_cont_valid) || s_sack) || s_nack)) && rnr_due)",
            "!((((1'b0 || s_rto) || s_upd) || s_cont_valid) || s_sack)) && rnr_due)",
        )],
        "a_go_one",
    ),
    tx_ack(
        "busy_down_by_2",
        "the count counted down by 2",
        &[("busy_turn != 9'd0 ? busy_turn - 9'd1 :", "busy_turn != 9'd0 ? busy_turn - 9'd2 :")],
        "a_busy_hold_pre",
    ),
    Mutant {
        // On a power-of-two count the counter's end is the last connection,
        // so the breakage is the unmodified design there.
        connections: Some(crate::tx_engine::ack::ODD_CONNECTIONS),
        ..tx_ack(
            "scan_wraps_past_last",
            "the scanner wraps at its counter's end (3), not at the last connection (2): it scans a connection \
             that does not exist",
            &[(
                "(tail_scan_reg == 2'd2 ? 2'd0 : tail_scan_reg + 2'd1)",
                "(tail_scan_reg == 2'd3 ? 2'd0 : tail_scan_reg + 2'd1)",
            )],
            "a_scan_in_range",
        )
    },
    tx_sched(
        "psel_ready_in_walk",
        "s_psel_ready not gated by walk_running",
        &[("assign s_psel_ready = sel_wait;", "assign s_psel_ready = in_select && sched_issued_reg;")],
        "a_psel_ready_no_walk",
    ),
    // docs/verification.md had a_inv_outstanding first; today the m_psel
    // handshake rule breaks in the same step.
    tx_sched("psel_valid_dropped", "m_psel_valid dropped while walk_running", PSEL_VALID_DROPPED, "a_m_psel_valid_held"),
    Mutant {
        checks: Some(&["a_inv_outstanding"]),
        ..tx_sched(
            "psel_valid_dropped_alone",
            "m_psel_valid dropped while walk_running, the outstanding count alone",
            PSEL_VALID_DROPPED,
            "a_inv_outstanding",
        )
    },
    tx_sack(
        "busy_2",
        "m_busy 2",
        &[("assign m_busy = s_go_sack ? 9'd1 : 9'd0;", "assign m_busy = s_go_sack ? 9'd2 : 9'd0;")],
        "a_busy_count",
    ),
    tx_sack(
        "hold_one_short",
        "the hold 1 + 2 x span",
        &[(
            "assign m_hold_cnt = sack_ok ? 9'd2 + ({1'b0, span} << 1'b1) : 9'd0;",
            "assign m_hold_cnt = sack_ok ? 9'd1 + ({1'b0, span} << 1'b1) : 9'd0;",
        )],
        "a_hold_when",
    ),
    tx_sack(
        "failed_live_when_open",
        "a failed connection live when open (live takes !failed || open)",
        &[("assign live = (answer && s_rd_open) && !s_rd_failed;", "assign live = answer && (!s_rd_failed || s_rd_open);")],
        "a_dead_conn_quiet",
    ),
    tx_sack(
        "stale_ignored_on_path",
        "sack_window's staleness ignored on a path of the connection (sack_ok takes !stale || path_ok)",
        &[("assign sack_ok = (live && path_ok) && !win_stale;", "assign sack_ok = live && (!win_stale || path_ok);")],
        "a_stale_when",
    ),
    Mutant {
        unchecked: SACK_ACKS,
        ..tx_sack(
            "reply_cycle_late",
            "PROBE_REPLY a cycle late (k = L + span + 1)",
            &[(
                "assign reply_event = (active && reply) && (k_now == (8'd1 + span));",
                "assign reply_event = (active && reply) && (k_now == ((8'd1 + span) + 8'd1));",
            )],
            "a_reply_when",
        )
    },
    Mutant {
        unchecked: SACK_ACKS,
        ..tx_sack(
            "only_charged_pushed",
            "only charged losses pushed into the retransmit queue",
            &[("assign m_retx_valid = lost;", "assign m_retx_valid = lost && charge;")],
            "a_lost_with_push",
        )
    },
    tx_sack(
        "pass1_clears_unacked",
        "pass 1 empties every slot holding a packet, acknowledged or not",
        &[(
            "assign p1_acked = ((running_now && p1_answer) && win_acks) && s_ring_valid;",
            "assign p1_acked = (running_now && p1_answer) && s_ring_valid;",
        )],
        "a_clear_when",
    ),
    tx_sack(
        "pass2_loses_acked",
        "pass 2 marks acknowledged slots lost too",
        &[("(((((running_now && p2_answer) && !win_acks) && s_ring_valid)", "((((running_now && p2_answer) && s_ring_valid)")],
        "a_lost_only",
    ),
    Mutant {
        unchecked: SACK_ACKS,
        ..tx_sack(
            "pass2_reads_one_on",
            "pass 2 reads offset k - span (one slot on)",
            &[("assign rd2_off = (k_now - span) - 8'd1;", "assign rd2_off = k_now - span;")],
            "a_ring_reads",
        )
    },
    tx_sack(
        "cont_cycle_early",
        "the continuation a cycle early (k = L + 2 x span - 1)",
        &[(
            "assign cont = active && (k_now == (8'd1 + (span << 1'b1)));",
            "assign cont = active && (k_now == ((8'd1 + (span << 1'b1)) - 8'd1));",
        )],
        "a_cont_once",
    ),
    tx_sack(
        "wq_inc_wq_ungated",
        "m_wq_inc_wq not gated by its valid",
        &[("assign m_wq_inc_wq = p1_acked ? s_ring_wq : 4'd0;", "assign m_wq_inc_wq = s_ring_wq;")],
        "a_quiet_without_wq_inc_valid",
    ),
    tx_sack(
        "silent_uncounted",
        "path 0's SILENT events not counted (its cap never reached)",
        SILENT_UNCOUNTED,
        "a_inv_silent",
    ),
    tx_stage(
        "busy_2",
        "m_busy 2",
        &[("assign m_busy = s_go_stage ? 9'd1 : 9'd0;", "assign m_busy = s_go_stage ? 9'd2 : 9'd0;")],
        "a_busy_count",
    ),
    tx_stage(
        "hold_1",
        "the hold 1",
        &[("assign m_hold_cnt = issue ? 9'd2 : 9'd0;", "assign m_hold_cnt = issue ? 9'd1 : 9'd0;")],
        "a_ring_hold",
    ),
    tx_stage(
        "read_past_stop",
        "reads issued past a stop (issue ignores it)",
        &[(
            "assign issue = (active_now && eff_iv) && !(stop_now && (eff_ip > stop_path));",
            "assign issue = active_now && eff_iv;",
        )],
        "a_no_read_past_stop",
    ),
    tx_stage(
        "silent_for_charged",
        "SILENT for a charged loss instead of an uncharged one",
        &[("assign uncharged = lost && !charge;", "assign uncharged = lost && charge;")],
        "a_silent_when",
    ),
    tx_stage(
        "silent_uncapped",
        "a SILENT event for every uncharged loss, past suspect_after_rtos of a path",
        &[("assign silent_send = uncharged && (silent_count_at < 2'd3);", "assign silent_send = uncharged;")],
        "a_silent_when",
    ),
    tx_stage(
        "silent_uncounted",
        "path 0's SILENT events not counted (its cap never reached)",
        SILENT_UNCOUNTED,
        "a_inv_silent",
    ),
    tx_stage(
        "tail_every_cycle",
        "the tail timer written in every cycle of the arm's walk, not at its end",
        &[("assign tail_write = fin && k_arm_reg;", "assign tail_write = active_now && k_arm_reg;")],
        "a_tail_when",
    ),
    tx_stage(
        "arm_again",
        "the arm followed by the tail timer again, not the finish",
        &[("(k_arm_reg ? 2'd2 :", "(k_arm_reg ? 2'd1 :")],
        "a_inv_cont",
    ),
    tx_stage(
        "rc_past_streams",
        "remote_completed moved for a stream_id past the streams",
        &[("(((answer && k_finish_reg) && (cont_stream_id_reg < 8'd4))", "(((answer && k_finish_reg) && 1'b1)")],
        "a_rc_when",
    ),
    tx_stage(
        "paths_past_npaths",
        "paths at or past npaths walked",
        &[
            ("((3'd1 < s_rd_npaths) && (span_1 != 7'd0))", "(span_1 != 7'd0)"),
            ("((3'd2 < s_rd_npaths) && (span_2 != 7'd0))", "(span_2 != 7'd0)"),
            ("((3'd3 < s_rd_npaths) && (span_3 != 7'd0))", "(span_3 != 7'd0)"),
        ],
        "a_ring_in_paths",
    ),
    tx_stage(
        "retx_psn_ungated",
        "m_retx_psn not gated by its valid",
        &[("assign m_retx_psn = lost ? a_psn : 24'd0;", "assign m_retx_psn = a_psn;")],
        "a_quiet_without_retx_valid",
    ),
    tx_stage(
        "walk_from_dead_cont",
        "the completion walk started by a dead continuation's finish",
        &[(
            "assign done = ((s_go_stage && !cont_dead_reg) && (cont_stage_reg == 2'd2)) && (|cont_touched_reg);",
            "assign done = (s_go_stage && (cont_stage_reg == 2'd2)) && (|cont_touched_reg);",
        )],
        "a_done_when",
    ),
    tx_stage(
        "overdue_strictly_past",
        "overdue only strictly past overdue_wait",
        &[(
            "assign overdue = (age ^ 32'h80000000) >= (overdue_wait ^ 32'h80000000);",
            "assign overdue = (age ^ 32'h80000000) > (overdue_wait ^ 32'h80000000);",
        )],
        "a_lost_when",
    ),
    tx_stage(
        "rack_broken_by_resent",
        "RACK's walk broken by a resent packet too",
        &[(
            "assign brk = k_probe_reg ? slot_live && overdue : (slot_live && !s_ring_resent) && !lost;",
            "assign brk = k_probe_reg ? slot_live && overdue : slot_live && !lost;",
        )],
        "a_ring_reads",
    ),
    tx_stage(
        "rack_resumed_at_stop",
        "RACK resumed at the stop's path, not the one after",
        &[("assign stop_next = {1'b0, stop_path} + 3'd1;", "assign stop_next = {1'b0, stop_path};")],
        "a_inv_cont",
    ),
    tx_stage(
        "cont_never_waits",
        "the continuation never waits after silent losses",
        &[("k_overdue_reg && stop_now : cont_wait_reg)", "1'b0 : cont_wait_reg)")],
        "a_cont",
    ),
    tx_timer(
        "rnr_tag_ignored",
        "an RNR entry acted on whatever its slot's tag",
        &[(" && (s_ring_rnr_tag == rec_tag_reg);", ";")],
        "a_rnr_when",
    ),
    tx_timer(
        "retx_though_queued",
        "the retransmit push made for a slot queued already",
        &[("assign rnr_retx = rnr_live && ~s_ring_queued;", "assign rnr_retx = rnr_live;")],
        "a_retx_when",
    ),
    tx_timer(
        "tail_compare_inverted",
        "the tail timer taken before its deadline",
        &[("((rec_ts_reg - s_rd_tail_at) < 32'h80000000)", "((rec_ts_reg - s_rd_tail_at) >= 32'h80000000)")],
        "a_tail_when",
    ),
    tx_timer(
        "probe_q_ignored",
        "a window probe PROBEs a path whose PROBE is queued already",
        &[("&& !wp_probe_busy[wp_path];", "&& !s_pm_probe_pending[wp_path];")],
        "a_probe_when",
    ),
    tx_timer(
        "refusal_in_pop_cycle_lost",
        "a refusal in the pop's own cycle does not wake the stalled connections",
        &[("assign m_unstall_all = s_go_wp && wp_refused_now;", "assign m_unstall_all = s_go_wp && wp_refused_reg;")],
        "a_unstall_all",
    ),
    tx_probe(
        "tx_seq_not_moved",
        "the path's tx_seq not moved on by the PROBE",
        &[("assign m_pm_tx_seq = answer ? s_pm_tx_seq + 32'd1 : 32'd0;", "assign m_pm_tx_seq = answer ? s_pm_tx_seq : 32'd0;")],
        "a_pm_seq",
    ),
    tx_probe(
        "evt_now_ungated",
        "the event's time shown without its valid",
        &[("assign m_evt_now = answer ? rec_ts_reg : 32'd0;", "assign m_evt_now = rec_ts_reg;")],
        "a_quiet_without_evt_valid",
    ),
    tx_probe(
        "busy_drops_at_answer",
        "m_busy low in the answer's cycle (on small, L = 1: every cycle after the start)",
        &[("assign m_busy = s_probe_valid || (|rd_pipe_reg);", "assign m_busy = s_probe_valid;")],
        "a_busy",
    ),
    tx_open(
        "dead_bit_kept",
        "the set-up path's DEAD bit not cleared (the answered bits written back as they were)",
        &[(
            "assign m_ctx_dead = answer ? (act_path0 ? 4'd0 : s_rd_dead & ~path_bit) : 4'd0;",
            "assign m_ctx_dead = answer ? (act_path0 ? 4'd0 : s_rd_dead) : 4'd0;",
        )],
        "a_ctx_dead",
    ),
    tx_open(
        "act_a_cycle_early",
        "the act in the take's cycle (on small, L = 1: a cycle early), on the registers the take has not loaded yet",
        &[("assign answer = rd_pipe_reg;", "assign answer = take;")],
        "a_pm_at_act",
    ),
    tx_open(
        "take_while_running",
        "a record taken while the setup before it runs (its reads, act or ring clear)",
        &[("assign take = try_take && !flush;", "assign take = (rec_has && s_free) && !flush;")],
        "a_take_when_free",
    ),
    Mutant {
        // The clear's last slot is L + 63 cycles after the take.
        depth: 70,
        ..tx_open(
            "clear_one_slot_short",
            "the ring clear stops a slot short (slot 63 never emptied)",
            &[(
                "clr_on_next = answer || (clr_on_reg && (clr_slot_reg != 6'd63));",
                "clr_on_next = answer || (clr_on_reg && (clr_slot_reg != 6'd62));",
            )],
            "a_ring_clr",
        )
    },
    tx_open(
        "flush_path_1_too",
        "path 1 of a live connection flushed too (only path 0 restarts the connection)",
        &[(
            "assign flush = (try_take && (rec_path == 2'd0)) && s_live;",
            "assign flush = (try_take && (rec_path <= 2'd1)) && s_live;",
        )],
        "a_flush_exact",
    ),
    tx_open(
        "npaths_clamped_past_paths",
        "the record's path count clamped at PATHS + 1, not PATHS",
        &[(
            "(act_npaths_reg > 3'd4 ? 3'd4 : act_npaths_reg)",
            "(act_npaths_reg > 3'd5 ? 3'd5 : act_npaths_reg)",
        )],
        "a_ctx",
    ),
    tx_open(
        "wr_hold_without_record",
        "m_wr_hold low while a record waits in the register (tx_post may take a request the setup overtakes)",
        &[("assign m_wr_hold = rec_valid_reg || (|rd_pipe_reg);", "assign m_wr_hold = |rd_pipe_reg;")],
        "a_wr_hold",
    ),
    // OPEN's kind is 0, the value of a payload without its valid: these two
    // show the kind is still pinned in every cycle, at the act and off it.
    tx_open(
        "evt_kind_send",
        "the OPEN event sent with kind SEND (1)",
        &[("assign m_evt_kind = answer ? 4'd0 : 4'd0;", "assign m_evt_kind = answer ? 4'd1 : 4'd0;")],
        "a_evt",
    ),
    tx_open(
        "evt_kind_without_valid",
        "a kind (SEND, 1) on m_evt_kind while no event is valid",
        &[("assign m_evt_kind = answer ? 4'd0 : 4'd0;", "assign m_evt_kind = answer ? 4'd0 : 4'd1;")],
        "a_quiet_without_evt_valid",
    ),
];

/// tx_sack's four rules over which slots a SACK acknowledges
/// (`prove_acks`), taken out where docs/verification.md says "without the
/// four": a bounded run to a loss took minutes with them.
const SACK_ACKS: &[&str] = &["a_clear_when", "a_lost_only", "a_not_cleared_and_lost", "a_inv_cleared"];

/// tx_sched: `m_psel_valid` dropped while `walk_running`.
const PSEL_VALID_DROPPED: &[(&str, &str)] =
    &[("assign m_psel_valid = sel_offer;", "assign m_psel_valid = sel_offer && !walk_running;")];

/// tx_rto: the walk's span one more than `next_psn - cum_acked`.
const WALK_SPAN_PLUS_ONE: &[(&str, &str)] = &[(
    "assign walk_cur_left = walk_start ? s_pm_next_psn - s_pm_cum_acked : walk_left_reg;",
    "assign walk_cur_left = walk_start ? (s_pm_next_psn - s_pm_cum_acked) + 24'd1 : walk_left_reg;",
)];

/// tx_nack: the answer a cycle late: a register of its own behind the
/// read pipe (declared where it is used, which Verilog allows).
const ANSWER_LATE: &[(&str, &str)] = &[(
    "assign answer = rd_pipe_reg;",
    "reg rd_pipe_late = 1'b0;\n  always @(posedge clk) rd_pipe_late <= rst ? 1'b0 : rd_pipe_reg;\n  assign answer = rd_pipe_late;",
)];

/// tx_nack: the RNR retry limit one lower.
const RNR_LIMIT_ONE_LOWER: &[(&str, &str)] =
    &[("assign rnr_below = s_ring_rnr_count < 3'd7;", "assign rnr_below = s_ring_rnr_count < 3'd6;")];

/// tx_nack: the RNR limit dropped.
const RNR_LIMIT_DROPPED: &[(&str, &str)] =
    &[("assign rnr_below = s_ring_rnr_count < 3'd7;", "assign rnr_below = s_ring_rnr_count <= 3'd7;")];

/// tx_output: `m_axi_arvalid` dropped while `s_ans_valid`.
const ARVALID_DROPPED: &[(&str, &str)] =
    &[("assign m_axi_arvalid = ar_any;", "assign m_axi_arvalid = ar_any && !s_ans_valid;")];

/// tx_output: a burst advances one beat too far.
const BURST_ONE_BEAT_FAR: &[(&str, &str)] =
    &[("assign ar_step = ({56'd0, ar_len} + 64'd1) << 4'd3;", "assign ar_step = ({56'd0, ar_len} + 64'd2) << 4'd3;")];

/// tx_output: an answer taken with the queue full.
const ANSWER_INTO_FULL: &[(&str, &str)] = &[
    ("assign ans_push = s_ans_valid && (aq_n_reg < 2'd2);", "assign ans_push = s_ans_valid;"),
    ("assign s_ans_ready = aq_n_reg < 2'd2;", "assign s_ans_ready = 1'b1;"),
];

/// tx_post: a flush also for a live connection.
const FLUSH_LIVE_TOO: &[(&str, &str)] =
    &[("assign pr_flush = !post_live && m_flush_room;", "assign pr_flush = m_flush_room;")];

/// tx_walk: `m_cqe_status` toggled by `ack_free`.
const CQE_STATUS_TOGGLED: &[(&str, &str)] = &[(
    "assign m_cqe_status = cq_n_reg != 3'd0 ? cq0_status_reg : 4'd0;",
    "assign m_cqe_status = cq_n_reg != 3'd0 ? cq0_status_reg ^ {3'd0, ack_free} : 4'd0;",
)];

/// tx_walk: a flush pushed into slot 1 with status 5, not WR_FLUSH (6).
const FLUSH_STATUS_5: &[(&str, &str)] =
    &[("(s_flush_valid && (cq_flush_pos == 3'd1) ? 4'd6 :", "(s_flush_valid && (cq_flush_pos == 3'd1) ? 4'd5 :")];

impl Mutant {
    /// `<block>_<name>`: the work folder's name, and what `--only` takes.
    pub fn id(&self) -> String {
        format!("{}_{}", self.block, self.name)
    }

    /// The config the block is generated for: [`Mutant::config`], with
    /// [`Mutant::connections`] when it names a count.
    pub fn cfg(&self) -> Result<Config, String> {
        let c = Config::builtin(self.config).map_err(|e| format!("{}: {e}", self.id()))?;
        Ok(match self.connections {
            Some(n) => crate::proof::proof_config(&c, n),
            None => c,
        })
    }

    /// `verilog` (the block as printed) with the edits made. Each `from`
    /// must occur exactly once before `` `ifdef FORMAL ``: zero or several
    /// matches mean the generator's output changed, and running anyway
    /// could check the unmodified design or break the wrong line.
    pub fn apply(&self, verilog: &str) -> Result<String, String> {
        let (mut design, formal) = match verilog.find("`ifdef FORMAL") {
            Some(i) => (verilog[..i].to_string(), &verilog[i..]),
            None => return Err(format!("{}: the generated {} has no formal section", self.id(), self.block)),
        };
        for (from, to) in self.edits {
            if from == to {
                return Err(format!("{}: the edit of `{from}` changes nothing", self.id()));
            }
            let n = design.matches(from).count();
            if n != 1 {
                return Err(format!(
                    "{}: `{from}` occurs {n} times in the generated {} (exactly once expected): the generator \
                     changed; update this mutant in hdl/src/mutants.rs",
                    self.id(),
                    self.block
                ));
            }
            design = design.replacen(from, to, 1);
        }
        if self.edits.is_empty() && self.removes.is_empty() {
            return Err(format!("{}: no edit and no assumption removed, so no breakage", self.id()));
        }
        Ok(design + formal)
    }

    /// The assertions checked on `module`: [`Mutant::checks`] without
    /// [`Mutant::unchecked`]. Every label named must be one of the block's
    /// assertions, and [`Mutant::fails`] among those checked, so a renamed
    /// property fails the mutant instead of leaving it checking nothing.
    pub fn checked(&self, module: &Module) -> Result<Vec<String>, String> {
        let all = asserts(module);
        let named = self.checks.unwrap_or_default().iter().chain(self.unchecked).chain([&self.fails]);
        if let Some(l) = named.into_iter().find(|l| !all.iter().any(|a| a == *l)) {
            return Err(format!("{}: {} has no assertion {l}; update this mutant", self.id(), self.block));
        }
        let assumed = |l: &str| module.properties().iter().any(|p| p.kind == crate::PropKind::Assume && p.label == l);
        if let Some(l) = self.removes.iter().find(|l| !assumed(l)) {
            return Err(format!("{}: {} has no assumption {l}; update this mutant", self.id(), self.block));
        }
        let checked: Vec<String> = all
            .into_iter()
            .filter(|a| self.checks.is_none_or(|c| c.contains(&a.as_str())))
            .filter(|a| !self.unchecked.contains(&a.as_str()))
            .collect();
        if !checked.iter().any(|a| a == self.fails) {
            return Err(format!("{}: {} is not among the assertions checked", self.id(), self.fails));
        }
        Ok(checked)
    }

    /// The bounded task that checks the broken copy.
    pub fn task(&self, checked: Vec<String>) -> Task {
        Task {
            name: self.name,
            mode: Mode::Bmc(self.depth),
            asserts: Some(checked),
            why_bounded: "a mutant: a bounded run finds its counterexample",
            arrays: false,
            without: self.removes,
            lean_on_proven: false,
            connections: None,
            solver: self.solver,
        }
    }
}

/// What became of a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The expected assertion failed, with a counterexample VCD.
    Killed,
    /// The broken copy got through: the text says how (no counterexample
    /// to the depth, another assertion failed, no VCD).
    Survived(String),
    /// No verdict: the edit no longer matches, a label is gone, or the
    /// tools failed.
    Error(String),
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct MutantOutcome {
    pub mutant: Mutant,
    pub verdict: Verdict,
    /// SymbiYosys's run, when it ran.
    pub run: Option<Outcome>,
}

impl MutantOutcome {
    /// The counterexample VCD, when there is one.
    pub fn vcd(&self) -> Option<&PathBuf> {
        self.run.as_ref()?.traces.iter().find(|t| t.extension().is_some_and(|e| e == "vcd"))
    }
}

/// Generates `mutant`'s block for its config, breaks it, writes the task
/// under `out/<config>/mutants/` and runs it.
pub fn run(mutant: &Mutant, out: &Path, tools: &Tools) -> MutantOutcome {
    let error = |why: String| MutantOutcome { mutant: *mutant, verdict: Verdict::Error(why), run: None };
    let cfg = match mutant.cfg() {
        Ok(c) => c,
        Err(e) => return error(e),
    };
    let module = match crate::proof::block(&cfg, mutant.block) {
        Ok(b) => b.module,
        Err(e) => return error(format!("{}: {e}", mutant.id())),
    };
    run_on(mutant, &cfg, &module, out, tools)
}

/// [`run`] on the block already generated (`module`, for `cfg`).
pub fn run_on(mutant: &Mutant, cfg: &Config, module: &Module, out: &Path, tools: &Tools) -> MutantOutcome {
    let error = |why: String| MutantOutcome { mutant: *mutant, verdict: Verdict::Error(why), run: None };
    let verilog = match module.to_verilog(&header(cfg, module.name())) {
        Ok(v) => v,
        Err(e) => return error(format!("{}: {e}", mutant.id())),
    };
    let broken = match mutant.apply(&verilog) {
        Ok(v) => v,
        Err(e) => return error(e),
    };
    let task = match mutant.checked(module) {
        Ok(c) => mutant.task(c),
        Err(e) => return error(e),
    };
    let dir = out.join(&cfg.name).join("mutants").join(mutant.id());
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = write_task_verilog(&dir, module, &broken, &task, tools) {
        return error(format!("{}: writing {}: {e}", mutant.id(), dir.display()));
    }
    let o = run_task(&dir, module, &task);
    let vcd = o.traces.iter().any(|t| t.extension().is_some_and(|e| e == "vcd") && t.is_file());
    let verdict = match &o.status {
        Status::Error(why) => Verdict::Error(why.clone()),
        Status::Fail if o.failed.iter().any(|f| f == mutant.fails) && vcd => Verdict::Killed,
        Status::Fail if o.failed.iter().any(|f| f == mutant.fails) => {
            Verdict::Survived("it failed, but no counterexample VCD was written".into())
        }
        Status::Fail => Verdict::Survived(format!("{} failed instead", o.failed.join(", "))),
        Status::Pass => Verdict::Survived(format!("no counterexample to depth {}", mutant.depth)),
        Status::Unknown => Verdict::Survived("no verdict (UNKNOWN)".into()),
    };
    MutantOutcome { mutant: *mutant, verdict, run: Some(o) }
}

/// The mutants `only` selects: all, or those of a block, or one by
/// [`Mutant::id`]. `None` when `only` names neither.
pub fn select(only: Option<&str>) -> Option<Vec<&'static Mutant>> {
    let picked: Vec<&Mutant> = MUTANTS.iter().filter(|m| only.is_none_or(|o| o == m.block || o == m.id())).collect();
    (!picked.is_empty()).then_some(picked)
}

/// One row per mutant: block, mutant, the assertion that must fail, the
/// result (with the failure's step) and the run's time.
pub fn table(outcomes: &[MutantOutcome]) -> String {
    let rows: Vec<[String; 5]> = outcomes
        .iter()
        .map(|o| {
            let step = o.run.as_ref().and_then(|r| r.fail_step).map(|s| format!(" (step {s})")).unwrap_or_default();
            let result = match &o.verdict {
                Verdict::Killed => format!("killed{step}"),
                Verdict::Survived(why) => format!("SURVIVED: {why}"),
                Verdict::Error(_) => "ERROR (below)".to_string(),
            };
            let time = o.run.as_ref().map(|r| format!("{:.1} s", r.seconds)).unwrap_or_else(|| "-".into());
            [o.mutant.block.to_string(), o.mutant.name.to_string(), o.mutant.fails.to_string(), result, time]
        })
        .collect();
    text_table(&["block", "mutant", "must fail", "result", "time"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_edit_breaks_something() {
        let mut ids: Vec<String> = MUTANTS.iter().map(Mutant::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), MUTANTS.len(), "two mutants share a name");
        for m in MUTANTS {
            assert!(!m.edits.is_empty() || !m.removes.is_empty(), "{}", m.id());
            assert!(m.edits.iter().all(|(a, b)| a != b), "{}", m.id());
        }
    }

    #[test]
    fn an_edit_must_match_exactly_once_in_the_design() {
        let m = Mutant { edits: &[("x = 1;", "x = 0;")], ..MUTANTS[0] };
        let once = "assign x = 1;\n`ifdef FORMAL\na: assert (x = 1;);\n`endif\n";
        let broken = m.apply(once).unwrap();
        assert!(broken.starts_with("assign x = 0;\n`ifdef FORMAL\na: assert (x = 1;)"), "{broken}");
        for text in ["assign y;\n`ifdef FORMAL\nx = 1;\n", "x = 1; x = 1;\n`ifdef FORMAL\n"] {
            let e = m.apply(text).unwrap_err();
            assert!(e.contains(&m.id()) && e.contains("the generator changed"), "{e}");
        }
    }
}
