//! `rx_drop_or`: its inputs are exactly rx_parser's drop outputs other than
//! the ICRC's (so the top wires them by name), and any one of them pulses
//! `stat_rx_decode_error`.

use mrnic_model::block::{zero_values, Bits, Block, Dir};
use mrnic_model::rx_drop_or::*;
use mrnic_model::rx_parser::{Reason, RxParser, RxParserParams};
use mrnic_proto::Config;

#[test]
fn every_reason_but_the_icrc_counts_as_a_decode_error() {
    let parser = RxParser::new(RxParserParams::from_config(&Config::builtin("small").unwrap()).unwrap());
    let drops: Vec<String> = parser
        .ports()
        .iter()
        .filter(|p| p.name.starts_with("stat_drop_") && p.name != "stat_drop_icrc")
        .map(|p| p.name.clone())
        .collect();
    let mut b = RxDropOr::default();
    let ports = b.ports().to_vec();
    let ins: Vec<String> = ports.iter().filter(|p| p.dir == Dir::In).map(|p| p.name.clone()).collect();
    assert_eq!(ins, drops);
    assert_eq!(ins.len(), Reason::ALL.len() - 1);
    let out = ports.len() - 1;
    assert_eq!(ports[out].name, "stat_rx_decode_error");
    let mut v = zero_values(&ports);
    let mut o = v.clone();
    b.eval(&v, &mut o);
    assert!(!o[out].bit(0), "no pulse, no count");
    for k in 0..ins.len() {
        v = zero_values(&ports);
        v[k] = Bits::from_u64(1, 1);
        b.eval(&v, &mut o);
        assert!(o[out].bit(0), "{}", ins[k]);
    }
}
