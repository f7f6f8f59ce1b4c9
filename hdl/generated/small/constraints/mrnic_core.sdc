# mrnic_core timing constraints for Intel Quartus (Agilex / Stratix 10).
#
# Clock: one clock, `clk`, at 322.265625 MHz (period 3.103 ns), the E-tile /
# F-tile 100G Ethernet user clock, so the core shares the MAC's domain.
# Reset `rst` is synchronous and active high, held for at least 2 cycles.
# The core's ports connect to logic in the same clock domain: no I/O delays.

create_clock -name clk -period 3.103 [get_ports {clk}]
derive_clock_uncertainty

set_multicycle_path -setup -end 2 -from [get_ports {rst}]
set_multicycle_path -hold -end 1 -from [get_ports {rst}]
