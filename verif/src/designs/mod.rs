//! Designs that exist only for verification.

pub mod verif_fifo;
