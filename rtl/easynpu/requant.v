// The requantizer output stage of one PE (C model: sim_pe_output in
// src/sim/easynpu/pe.c; the rule is enpu_requant, include/easynpu/numerics.h):
//   q = clamp((acc * M + 2^(S-1)) >>> S + zp, lo, hi)
// (the bias is already in the psum: the first pass starts from it), ties
// toward +infinity, no rounding term when S = 0.  Combinational: the C model
// computes the value when the final pass issues; its requant_latency is the
// psum entry's ready time (pe_array), not a pipeline of values.
module requant #(
    parameter ACC_W = 32,
    parameter MB = 20
) (
    input wire signed [ACC_W-1:0] acc,
    input wire [MB-1:0] m,
    input wire [5:0] s,
    input wire signed [7:0] zp,
    input wire signed [7:0] lo,
    input wire signed [7:0] hi,
    output wire [7:0] q
);
    localparam PW = 66;
    wire signed [ACC_W+MB:0] prod = acc * $signed({1'b0, m});
    wire signed [PW-1:0] prod_x = {{(PW - ACC_W - MB - 1) {prod[ACC_W+MB]}}, prod};
    wire signed [PW-1:0] half = (s == 6'd0) ? {PW{1'b0}} : ({{(PW - 1) {1'b0}}, 1'b1} << (s - 6'd1));
    wire signed [PW-1:0] shifted = (prod_x + half) >>> s;
    wire signed [PW-1:0] v = shifted + {{(PW - 8) {zp[7]}}, zp};
    wire signed [PW-1:0] lo_x = {{(PW - 8) {lo[7]}}, lo};
    wire signed [PW-1:0] hi_x = {{(PW - 8) {hi[7]}}, hi};
    assign q = (v < lo_x) ? lo : (v > hi_x) ? hi : v[7:0];
endmodule
