//! Cycle-accurate model of the mrnic NIC transport pipeline. Each block is a
//! file named like its Verilog module, with the same ports (see
//! [`block::Block`]) and the same cycle timing as the generated RTL.

pub mod bench;
pub mod block;
pub mod conn_search;
pub mod conn_table;
pub mod cpl_engine;
pub mod cqe_merge;
pub mod csr;
pub mod dma_write_engine;
pub mod enable_gate;
pub mod mr_check;
pub mod mrnic_core;
pub mod msg_check;
pub mod netlist;
pub mod op_map;
pub mod path_selector;
pub mod path_telemetry;
pub mod probe_walk;
pub mod rate_hint;
pub mod recv_match;
pub mod rx_buffer;
pub mod rx_ctl;
pub mod rx_drop_or;
pub mod rx_parser;
pub mod sack_gen;
pub mod ts_counter;
pub mod tx_engine;
