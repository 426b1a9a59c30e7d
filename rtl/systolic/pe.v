// One processing element of the output-stationary array (C model:
// src/sim/systolic/pe.c).  An activation register fed from the west, a
// weight register fed from the north, a signed accumulator of ACC_W bits.
// The operands are registered as they pass (the east / south neighbours read
// a_*/w_*), inside the unit's span only: an activation stops after the
// unit's last column, a weight after its last row; the accumulator takes the product of the operands arriving this
// cycle, so that a PE's registers after a clock edge are the C model's PE
// state after the same cycle.  `done` and `nacc` are combinational: the row's
// output MUX registers the finished dot product in the same edge (the C
// model's PE hands it to the MUX's pending register in the cycle it
// finishes).
module pe #(
    parameter ACC_W = 26,
    parameter TW = 7
) (
    input wire clk,
    input wire rst,
    input wire in_a_vld,
    input wire [7:0] in_a_v,
    input wire in_a_first,  // step 0 of the unit: the accumulator restarts
    input wire in_a_last,   // step K - 1: the dot product is finished
    input wire [TW-1:0] in_a_tag,
    input wire in_w_vld,
    input wire [7:0] in_w_v,
    output reg a_vld,
    output reg [7:0] a_v,
    output reg a_first,
    output reg a_last,
    output reg [TW-1:0] a_tag,
    output reg w_vld,
    output reg [7:0] w_v,
    output reg signed [ACC_W-1:0] acc,
    output wire done,
    output wire signed [ACC_W-1:0] nacc
);
    // both operands of the same step arrive together (the skew guarantees it)
    wire fire = in_a_vld & in_w_vld;
    wire signed [15:0] prod = $signed(in_a_v) * $signed(in_w_v);
    wire signed [ACC_W-1:0] prod_x = {{(ACC_W - 16) {prod[15]}}, prod};
    assign nacc = in_a_first ? prod_x : acc + prod_x;
    assign done = fire & in_a_last;

    always @(posedge clk) begin
        if (rst) begin
            a_vld <= 1'b0;
            w_vld <= 1'b0;
            acc <= {ACC_W{1'b0}};
        end else begin
            // an operand is latched only inside its unit's rows and columns
            // (the configuration enables the registers; C: pe_row.c's span):
            // there, and only there, both operands of a step arrive together
            a_vld <= fire;
            w_vld <= fire;
            if (fire) acc <= nacc;
        end
        // operand values need no reset: they are only read when valid
        a_v <= in_a_v;
        a_first <= in_a_first;
        a_last <= in_a_last;
        a_tag <= in_a_tag;
        w_v <= in_w_v;
    end
endmodule
