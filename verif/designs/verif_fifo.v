// verif_fifo: the co-simulation harness's own test design. Hand-written
// fixture (not generated): a 4-entry FIFO with valid/ready on both sides,
// a Mealy input ready, and ports of every Verilator width class (1, 12, 20,
// 40 and 100 bits) so the generic port table is exercised end to end.
// Its cycle model is verif/src/designs/verif_fifo.rs.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module verif_fifo #
(
    // Payload width in bits (wider than 64 on purpose: a VlWide port)
    parameter DATA_W = 100,
    // Tag width in bits
    parameter TAG_W = 12
)
(
    input  wire              clk,
    input  wire              rst,

    /* Input stream */
    input  wire              s_axis_valid,
    output wire              s_axis_ready,
    input  wire [DATA_W-1:0] s_axis_data,
    input  wire [TAG_W-1:0]  s_axis_tag,

    /* Output stream */
    output wire              m_axis_valid,
    input  wire              m_axis_ready,
    output wire [DATA_W-1:0] m_axis_data,
    output wire [TAG_W-1:0]  m_axis_tag,
    output wire [39:0]       m_axis_sum,

    /* Status */
    output wire [19:0]       count
);

// Number of entries
localparam DEPTH = 4;

reg [DATA_W-1:0] data_mem [0:DEPTH-1];
reg [TAG_W-1:0] tag_mem [0:DEPTH-1];

reg [1:0] wr_ptr_reg = 2'd0, wr_ptr_next;
reg [1:0] rd_ptr_reg = 2'd0, rd_ptr_next;
reg [2:0] count_reg = 3'd0, count_next;

wire push = s_axis_valid && s_axis_ready;
wire pop = m_axis_valid && m_axis_ready;

assign m_axis_valid = count_reg != 3'd0;
// full, yet accepts when the head leaves in the same cycle
assign s_axis_ready = count_reg != DEPTH[2:0] || m_axis_ready;
assign m_axis_data = data_mem[rd_ptr_reg];
assign m_axis_tag = tag_mem[rd_ptr_reg];
assign m_axis_sum = m_axis_data[39:0] + {{(40-TAG_W){1'b0}}, m_axis_tag};
assign count = {17'd0, count_reg};

always @* begin
    wr_ptr_next = wr_ptr_reg;
    rd_ptr_next = rd_ptr_reg;
    count_next = count_reg;
    if (push) begin
        wr_ptr_next = wr_ptr_reg + 2'd1;
    end
    if (pop) begin
        rd_ptr_next = rd_ptr_reg + 2'd1;
    end
    if (push && !pop) begin
        count_next = count_reg + 3'd1;
    end else if (pop && !push) begin
        count_next = count_reg - 3'd1;
    end
end

always @(posedge clk) begin
    if (push) begin
        data_mem[wr_ptr_reg] <= s_axis_data;
        tag_mem[wr_ptr_reg] <= s_axis_tag;
    end
    wr_ptr_reg <= wr_ptr_next;
    rd_ptr_reg <= rd_ptr_next;
    count_reg <= count_next;
    if (rst) begin
        wr_ptr_reg <= 2'd0;
        rd_ptr_reg <= 2'd0;
        count_reg <= 3'd0;
    end
end

endmodule

`resetall
