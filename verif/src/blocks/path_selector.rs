//! `path_selector` traffic and coverage.

use mrnic_model::path_selector::{self, PathSelectorParams};

use super::{hs, idx};
use crate::stimulus::Traffic;

/// Requests that stress the selector: half of them on connections 0 and 1
/// (back-to-back picks on one connection exercise the forwarding), one in
/// eight with no eligible path, weights from 0 to 255, one in twenty
/// clearing a random path's credit, and (small tables only) a reset in one
/// cycle of a thousand.
pub fn traffic(p: &PathSelectorParams, seed: u64) -> Traffic {
    let (conns, paths) = (p.conns as u64, p.paths);
    let ports = path_selector::ports(p);
    // A reset restarts the clear sweep (one cycle per connection).
    let resets = super::sweep_resets(conns);
    let (req_v, req_r, conn) = (idx(&ports, "s_req_valid"), idx(&ports, "s_req_ready"), idx(&ports, "s_req_conn"));
    let clr = idx(&ports, "s_req_clr");
    let (sel_v, sel_r, none, path) =
        (idx(&ports, "m_sel_valid"), idx(&ports, "m_sel_ready"), idx(&ports, "m_sel_none"), idx(&ports, "m_sel_path"));
    Traffic::new(&ports, seed)
        .idle(20)
        .backpressure(30)
        .random_resets(resets)
        .source("s_req_", move |rng, t| {
            let conn = if rng.percent(50) { rng.below(2.min(conns)) } else { rng.below(conns) };
            t.set_u64("conn", conn);
            let elig = if rng.percent(12) { 0 } else { rng.next_u64() };
            t.set_u64("elig", elig & ((1u64 << paths) - 1));
            let clr = if rng.percent(5) { 1u64 << rng.below(paths as u64) } else { 0 };
            t.set_u64("clr", clr);
            // Weights stay random bits (the field is left unset).
        })
        .monitor(
            move |c| {
                let paths: Vec<usize> = (0..p.paths).map(|i| c.bin(format!("decision: path {i}"))).collect();
                let b = [
                    c.bin("decision: no eligible path"),
                    c.bin("request: credit clear"),
                    c.bin("request: same connection as the previous cycle's (forwarding)"),
                ];
                (paths, b, None::<u64>)
            },
            move |(paths, b, last), v, rst, c| {
                if rst {
                    *last = None;
                    return;
                }
                if hs(v, sel_v, sel_r) {
                    if v[none].bit(0) {
                        c.hit(b[0]);
                    } else {
                        c.hit(paths[v[path].as_u64() as usize]);
                    }
                }
                if hs(v, req_v, req_r) {
                    if v[clr].as_u64() != 0 {
                        c.hit(b[1]);
                    }
                    let k = v[conn].as_u64();
                    if *last == Some(k) {
                        c.hit(b[2]);
                    }
                    *last = Some(k);
                } else {
                    *last = None;
                }
            },
        )
}
