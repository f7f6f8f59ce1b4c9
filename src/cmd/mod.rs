//! One module per `mrnic` subcommand.

pub mod bench;
pub mod campaign;
pub mod config;
pub mod cosim;
pub mod dissector;
pub mod gen;
pub mod nic_vectors;
pub mod pcap;
pub mod reference;
pub mod scenario;
pub mod spec;
pub mod vectors;
