# mrnic_core timing constraints for AMD/Xilinx UltraScale+ (Vivado).
#
# Clock: one clock, `clk`, at 322.265625 MHz (period 3.103 ns): the 100G/400G
# Ethernet MAC user clock of UltraScale+ CMAC/DCMAC designs, so the core runs
# in the MAC's domain with no clock crossing. Reset `rst` is synchronous and
# active high; drive it from a register in this clock domain.
#
# The core is an IP block inside a larger design: its AXI4-Stream, AXI4 and
# AXI4-Lite ports connect to other logic in the same clock domain, so no I/O
# delays are set here. When you synthesize mrnic_core out of context
# (`synth_design -mode out_of_context`) this file is all it needs.

create_clock -name clk -period 3.103 [get_ports clk]

# The reset fans out to every register of the core; give it two cycles so the
# place-and-route tool may replicate its driver without failing timing on a
# single long net. Keep this only if your reset driver is held for >= 2 cycles
# (the core requires that anyway: see docs/architecture.md).
set_multicycle_path -setup 2 -from [get_ports rst]
set_multicycle_path -hold 1 -from [get_ports rst]
