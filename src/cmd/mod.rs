//! One module per `mrnic` subcommand.

pub mod campaign;
pub mod config;
pub mod cosim;
pub mod dissector;
pub mod pcap;
pub mod scenario;
pub mod spec;
pub mod vectors;
