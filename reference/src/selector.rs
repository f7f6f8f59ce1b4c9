//! The path selector: one pure decision over the path table of a
//! connection, smooth weighted round robin among the eligible paths
//! (protocol draft, "Path selection"). The `path_selector` golden vectors
//! are generated from [`select`]; the hardware makes the same decision in one
//! cycle with a comparison tree over the credits.

use serde::{Deserialize, Serialize};

use crate::fixed::seq_diff;
use crate::path::{PathEntry, PathState};

/// What the transmit side asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// A new data packet: the path must be GOOD, below its window
    /// (`inflight << mtu_shift < cwnd`, and fewer than `window` psns
    /// outstanding), and the connection below its own limit (`conn_ok`).
    New { conn_ok: bool },
    /// A retransmission that cannot go on its own path: any GOOD path other
    /// than `avoid` (windows are not checked: one packet, sent at once).
    Retx { avoid: u8 },
}

/// The decision and the credits after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    pub chosen: Option<u8>,
    /// New `deficit` of every path, in table order.
    pub deficits: Vec<i16>,
}

/// Whether path `i` may carry the request.
pub fn eligible(e: &PathEntry, i: usize, req: &Request, mtu_shift: u32, window: u32) -> bool {
    if e.state != PathState::Good {
        return false;
    }
    match *req {
        Request::New { conn_ok } => {
            let outstanding = seq_diff(e.next_psn, e.cum_acked);
            conn_ok && ((e.inflight as u64) << mtu_shift) < e.cwnd as u64 && outstanding < window
        }
        Request::Retx { avoid } => i != avoid as usize,
    }
}

/// Smooth weighted round robin: every eligible path adds its weight to its
/// credit; the largest credit wins (ties: lowest index) and loses the sum
/// of the eligible weights. Ineligible paths keep their credit. Credits
/// saturate at the 16-bit limits (they stay within +-sum of weights while
/// the eligible set is stable; saturation only guards set changes).
pub fn select(paths: &[PathEntry], req: &Request, mtu_shift: u32, window: u32) -> Selection {
    select_among(paths, req, mtu_shift, window, |_| true)
}

/// [`select`] among the paths `allowed` also lets through (the NIC's plane
/// health: an AND on the eligibility vector).
pub fn select_among(
    paths: &[PathEntry],
    req: &Request,
    mtu_shift: u32,
    window: u32,
    allowed: impl Fn(usize) -> bool,
) -> Selection {
    let mut deficits: Vec<i16> = paths.iter().map(|p| p.deficit).collect();
    let mask: Vec<bool> =
        paths.iter().enumerate().map(|(i, p)| allowed(i) && eligible(p, i, req, mtu_shift, window)).collect();
    let total: i32 = paths.iter().zip(&mask).filter(|(_, &m)| m).map(|(p, _)| p.weight.max(1) as i32).sum();
    if total == 0 {
        return Selection { chosen: None, deficits };
    }
    let mut best: Option<usize> = None;
    for (i, p) in paths.iter().enumerate() {
        if !mask[i] {
            continue;
        }
        deficits[i] = deficits[i].saturating_add(p.weight.max(1) as i16);
        if best.is_none_or(|b| deficits[i] > deficits[b]) {
            best = Some(i);
        }
    }
    let b = best.expect("total > 0 means one eligible path");
    deficits[b] = (deficits[b] as i32 - total).clamp(i16::MIN as i32, i16::MAX as i32) as i16;
    Selection { chosen: Some(b as u8), deficits }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::PathParams;

    fn table(weights: &[u8]) -> Vec<PathEntry> {
        let p = PathParams::from_config(&mrnic_proto::Config::builtin("small").unwrap());
        weights
            .iter()
            .map(|&w| {
                let mut e = PathEntry::new(1000, 0, 0, &p);
                e.weight = w;
                e
            })
            .collect()
    }

    fn run(paths: &mut [PathEntry], n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let s = select(paths, &Request::New { conn_ok: true }, 10, 256);
                for (p, d) in paths.iter_mut().zip(&s.deficits) {
                    p.deficit = *d;
                }
                s.chosen.unwrap()
            })
            .collect()
    }

    #[test]
    fn smooth_wrr_interleaves_in_proportion() {
        let mut t = table(&[5, 1, 1]);
        let picks = run(&mut t, 7);
        // The classic nginx sequence for 5:1:1.
        assert_eq!(picks, vec![0, 0, 1, 0, 2, 0, 0]);
        assert!(t.iter().all(|p| p.deficit == 0));
    }

    #[test]
    fn equal_weights_rotate_from_the_lowest_index() {
        let mut t = table(&[7, 7, 7, 7]);
        assert_eq!(run(&mut t, 8), vec![0, 1, 2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn ineligible_paths_are_skipped_and_keep_credit() {
        let mut t = table(&[1, 1, 1]);
        t[1].state = PathState::Dead;
        t[1].deficit = 5;
        let picks = run(&mut t, 4);
        assert_eq!(picks, vec![0, 2, 0, 2]);
        assert_eq!(t[1].deficit, 5);
        t[0].inflight = 64; // 64 << 10 = cwnd: full
        assert_eq!(run(&mut t, 2), vec![2, 2]);
        let s = select(&t, &Request::New { conn_ok: false }, 10, 256);
        assert_eq!(s.chosen, None);
        let s = select(&t, &Request::Retx { avoid: 2 }, 10, 256);
        assert_eq!(s.chosen, Some(0));
    }

    #[test]
    fn psn_window_limits_a_path() {
        let mut t = table(&[1]);
        t[0].next_psn = 300;
        t[0].cum_acked = 44;
        assert_eq!(select(&t, &Request::New { conn_ok: true }, 10, 256).chosen, None);
    }
}
