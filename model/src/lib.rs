//! Cycle-accurate model of the mrnic NIC transport pipeline. Each block is a
//! file named like its Verilog module, with the same ports (see
//! [`block::Block`]) and the same cycle timing as the generated RTL.

pub mod bench;
pub mod block;
pub mod conn_table;
pub mod cpl_engine;
pub mod csr;
pub mod dma_write_engine;
pub mod netlist;
pub mod path_selector;
pub mod path_telemetry;
pub mod recv_match;
pub mod rx_parser;
pub mod sack_gen;
pub mod tx_engine;
