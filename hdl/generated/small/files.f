rx_parser.v
conn_table.v
path_telemetry.v
path_selector.v
dma_write_engine.v
recv_match.v
sack_gen.v
csr.v
