//! Port readiness (`Nic::poll_transmit_ready`): data leaves only by a NIC
//! port (plane) with room, and a connection held back only by full ports
//! sends as soon as one has room again.

mod common;

use common::*;
use mrnic_proto::{decode_datagram, Header};

#[test]
fn data_leaves_only_by_ready_ports_and_waits_for_them() {
    // 4 paths on the small config's 4 planes, one message of 64 packets.
    let msgs = [Msg { stream: 0, kind: Kind::Write, len: 64 << 10 }];
    let mut r = prepare(&Setup::new(4, 3), &msgs);
    let nic = &mut r.sim.nics[A];
    let mut planes = Vec::new();
    // Only port 2 ready: every data packet takes it.
    for _ in 0..6 {
        let p = nic.poll_transmit_ready(1000, 1 << 2).expect("path 2 has window");
        assert!(matches!(decode_datagram(&p.bytes).unwrap().header, Header::Data(_)));
        planes.push(p.plane);
    }
    assert_eq!(planes, vec![2; 6]);
    // No port ready: nothing, and the connection is still ready to send.
    assert!(nic.poll_transmit_ready(1000, 0).is_none());
    let p = nic.poll_transmit_ready(1000, 1 << 1).expect("the connection waited only for a port");
    assert_eq!(p.plane, 1);
    // Every port ready: the round robin as without the rule.
    let p = nic.poll_transmit_ready(1000, u32::MAX).expect("room");
    assert!(p.plane < 4);
}
