//! One module per `mrnic` subcommand.

pub mod config;
pub mod cosim;
