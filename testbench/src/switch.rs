//! Switches: ECMP on the 5-tuple. Each switch hashes (source IP, destination
//! IP, protocol, source port, destination port) with its own salt and picks
//! one of the equal-cost next hops; a flow (fixed source port) stays on one
//! path, and a different source port is a fresh draw.

use crate::rng::mix64;
use crate::{HostId, SwitchId};

/// IP protocol number of UDP.
const IPPROTO_UDP: u64 = 17;

/// The host's IPv4 address in the simulator (10.x.y.z from the host index).
pub fn host_ip(h: HostId) -> u32 {
    0x0a00_0000 | (h & 0x00ff_ffff)
}

/// The per-switch salt (switches hash differently, as deployed, so that
/// choices at successive tiers are not correlated).
pub fn switch_salt(s: SwitchId) -> u64 {
    mix64(0x5157_1c4e_0000_0000 ^ s as u64)
}

/// ECMP hash of the 5-tuple.
pub fn ecmp_hash(salt: u64, src: HostId, dst: HostId, sport: u16, dport: u16) -> u64 {
    let ips = ((host_ip(src) as u64) << 32) | host_ip(dst) as u64;
    let ports = ((sport as u64) << 32) | ((dport as u64) << 8) | IPPROTO_UDP;
    mix64(mix64(ips ^ salt) ^ ports)
}

/// Index among `n` equal-cost next hops.
pub fn ecmp_pick(hash: u64, n: usize) -> usize {
    (((hash >> 32) * n as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_tuple_same_choice_and_ports_spread() {
        let salt = switch_salt(3);
        let a = ecmp_pick(ecmp_hash(salt, 1, 9, 50000, 4797), 8);
        assert!((0..100).all(|_| ecmp_pick(ecmp_hash(salt, 1, 9, 50000, 4797), 8) == a));
        let mut seen = [0u32; 8];
        for sport in 49152..49152 + 800 {
            seen[ecmp_pick(ecmp_hash(salt, 1, 9, sport, 4797), 8)] += 1;
        }
        assert!(seen.iter().all(|&c| c > 60), "{seen:?}");
    }
}
