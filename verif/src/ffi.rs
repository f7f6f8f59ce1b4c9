//! The `cxx` bridge to the generic C++ shim (`verif/shim/sim.h`). The only
//! `unsafe` of the crate is the `extern "C++"` block `cxx` checks.

#[cxx::bridge(namespace = "mrnic_verif")]
pub(crate) mod bridge {
    unsafe extern "C++" {
        include!("mrnic-verif/shim/sim.h");

        /// One Verilated design behind a port table.
        type Sim;

        /// The design whose Verilated class is `prefix` (`V<block>_<config>`).
        fn new_sim(prefix: &str) -> Result<UniquePtr<Sim>>;

        fn set_input(self: Pin<&mut Sim>, idx: usize, words: &[u64]) -> Result<()>;
        fn get_output(self: &Sim, idx: usize, words: &mut [u64]) -> Result<()>;
        fn set_inputs(self: Pin<&mut Sim>, words: &[u64]) -> Result<()>;
        fn get_outputs(self: &Sim, words: &mut [u64]) -> Result<()>;
        fn eval(self: Pin<&mut Sim>);
        fn clock(self: Pin<&mut Sim>, level: bool);
        fn comb(self: Pin<&mut Sim>, inputs: &[u64], outputs: &mut [u64]) -> Result<()>;
        fn posedge(self: Pin<&mut Sim>);
        fn trace_open(self: Pin<&mut Sim>, path: &str) -> Result<()>;
        fn trace_dump(self: Pin<&mut Sim>, time: u64);
        fn trace_close(self: Pin<&mut Sim>);
        fn finish(self: Pin<&mut Sim>);
        fn time_precision(self: &Sim) -> i32;
        fn port_count(self: &Sim) -> usize;
    }
}
